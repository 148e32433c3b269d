//! Reading the update log from a timestamp on, across segments: what a
//! replica streams.

use super::record::{Update, SEGMENT_HEADER_LEN};
use super::segment::Position;
use super::segment::{self, list_segments, segment_path};
use crate::io::{DataFile, FileSystem};
use crate::status::Result;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Updates with `timestamp >= from`, oldest first. Not fused: after `None`
/// (the end of what is written so far) a later `next` returns records
/// appended since, so a replica can follow the log by polling.
pub struct Updates {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    from: u64,
    /// The segment being read, its file and the offset of the next record.
    seg: Option<(u64, Arc<dyn DataFile>, u64)>,
    /// Records of the current segment passed so far (`position`).
    passed: u64,
    failed: bool,
}

/// Reads the log in `dir` from timestamp `from` (0 = everything kept).
pub fn read_dir(fs: Arc<dyn FileSystem>, dir: &Path, from: u64) -> Result<Updates> {
    let nums = list_segments(&*fs, dir)?;
    // Start in the newest segment whose first record is not after `from`:
    // timestamps increase through the log, so nothing older is wanted.
    let mut start = nums.first().copied();
    for &n in nums.iter().rev() {
        let path = segment_path(dir, n);
        let file = match fs.open(&path, false, false) {
            Ok(f) => f,
            // Removed by retention since it was listed (`Seal`, after the
            // log's lock): nothing in it is wanted (see `enter`).
            Err(_) if !fs.exists(&path) => continue,
            Err(e) => return Err(e),
        };
        let len = file.len()?;
        if let Some((u, _)) = segment::read_record(&*file, len, SEGMENT_HEADER_LEN as u64)? {
            if u.timestamp <= from {
                start = Some(n);
                break;
            }
        }
    }
    let mut it = Updates {
        fs,
        dir: dir.to_path_buf(),
        from,
        seg: None,
        passed: 0,
        failed: false,
    };
    if let Some(n) = start {
        it.enter(n)?;
    }
    Ok(it)
}

impl Updates {
    /// Moves to segment `num`; `false` (staying put) when it is the newest
    /// and its header is not written yet: the writer creates the file and
    /// then writes the header, and a reader may list it in between.
    fn enter(&mut self, num: u64) -> Result<bool> {
        let path = segment_path(&self.dir, num);
        let file = match self.fs.open(&path, false, false) {
            Ok(f) => f,
            // Removed by retention since it was listed: retention removes
            // segments on the rotation's seal thread, after it has raised
            // the log's dropped timestamp, and a reader whose start is at
            // or before that is refused (`has_gap_before`), so none of a
            // removed segment's records is one it wants. Go on with the next.
            Err(_) if !self.fs.exists(&path) => {
                return match self.next_segment(num)? {
                    Some(n) => self.enter(n),
                    None => Ok(false),
                };
            }
            Err(e) => return Err(e),
        };
        let len = file.len()?;
        if len < SEGMENT_HEADER_LEN as u64 && self.next_segment(num)?.is_none() {
            return Ok(false);
        }
        segment::read_header(&*file, len, &path)?;
        self.seg = Some((num, file, SEGMENT_HEADER_LEN as u64));
        self.passed = 0;
        Ok(true)
    }

    /// Where the reader is: for `UpdateLog::pending_after`.
    pub fn position(&self) -> Position {
        Position {
            segment: self.seg.as_ref().map_or(0, |s| s.0),
            records: self.passed,
        }
    }

    /// The segment after `num`, if one exists now.
    fn next_segment(&self, num: u64) -> Result<Option<u64>> {
        Ok(list_segments(&*self.fs, &self.dir)?
            .into_iter()
            .find(|&n| n > num))
    }

    fn step(&mut self) -> Result<Option<Update>> {
        loop {
            let Some((num, file, offset)) = &mut self.seg else {
                // The log was empty when opened: look again.
                match self.next_segment(0)? {
                    Some(n) if self.enter(n)? => continue,
                    _ => return Ok(None),
                }
            };
            let len = file.len()?;
            if let Some((u, end)) = segment::read_record(&**file, len, *offset)? {
                *offset = end;
                self.passed += 1;
                if u.timestamp >= self.from {
                    return Ok(Some(u));
                }
                continue;
            }
            let (num, at) = (*num, *offset);
            let path = segment_path(&self.dir, num);
            if at < len {
                // Not a record: a torn or unfinished tail if nothing valid
                // follows, else damage (never skipped silently).
                if let Some(next) = segment::valid_record_after(&**file, len, at)? {
                    return Err(segment::damaged(&path, at, next));
                }
            }
            match self.next_segment(num)? {
                // A sealed segment ends exactly at its last record.
                Some(_) if at < len => {
                    return Err(crate::status::Error::BrokenData(format!(
                        "{}: update log segment ends with {} bytes that are not a record",
                        path.display(),
                        len - at
                    )))
                }
                Some(n) if self.enter(n)? => {}
                _ => return Ok(None),
            }
        }
    }
}

impl Iterator for Updates {
    type Item = Result<Update>;

    fn next(&mut self) -> Option<Result<Update>> {
        if self.failed {
            return None;
        }
        match self.step() {
            Ok(u) => u.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}
