//! Opening a log after a crash: which segment bytes are records, which are
//! a torn tail to cut, and which are damage that refuses the open
//! (docs/format.md, "Update log" / "Recovery").

use super::record::SEGMENT_HEADER_LEN;
use super::segment::{self, read_header, segment_header, segment_path, SegmentHeader};
use crate::io::{DataFile, FileSystem};
use crate::status::{Error, Result};
use std::path::Path;
use std::sync::Arc;

/// One segment as found on opening.
pub(super) struct Found {
    pub num: u64,
    pub file: Arc<dyn DataFile>,
    /// `None`: the file is shorter than a header (a crash while the
    /// segment was being created).
    pub header: Option<SegmentHeader>,
    pub len: u64,
    /// The end of its last valid record.
    pub end: u64,
    pub records: u64,
    pub last_ts: u64,
}

/// Opens segment `num` and reads its records up to the first bytes that are
/// not one; bytes that are not a record but are followed by a valid one are
/// damage.
pub(super) fn scan_segment(fs: &dyn FileSystem, dir: &Path, num: u64) -> Result<Found> {
    let path = segment_path(dir, num);
    let file = fs.open(&path, true, false)?;
    let len = file.len()?;
    let header = if len < SEGMENT_HEADER_LEN as u64 && !looks_like_old_format(&*file, len)? {
        None
    } else {
        Some(read_header(&*file, len, &path)?)
    };
    let mut end = SEGMENT_HEADER_LEN as u64;
    let (mut records, mut last_ts) = (0, 0);
    if header.is_some() {
        while let Some((u, next)) = segment::read_record(&*file, len, end)? {
            end = next;
            records += 1;
            last_ts = last_ts.max(u.timestamp);
        }
        if end < len {
            if let Some(next) = segment::valid_record_after(&*file, len, end)? {
                return Err(segment::damaged(&path, end, next));
            }
        }
    }
    Ok(Found {
        num,
        file,
        header,
        len,
        end,
        records,
        last_ts,
    })
}

fn looks_like_old_format(file: &dyn DataFile, len: u64) -> Result<bool> {
    if len < 8 {
        return Ok(false);
    }
    let mut m = [0u8; 8];
    file.read_at(&mut m, 0)?;
    Ok(&m == super::record::OLD_MAGIC)
}

/// Applies the recovery rule to the scanned segments, oldest first,
/// cutting and removing files as it says; afterwards every segment but the
/// last ends exactly where the next one's header says, and the last one at
/// its last record.
pub(super) fn recover_last_segments(
    fs: &dyn FileSystem,
    dir: &Path,
    found: &mut Vec<Found>,
) -> Result<()> {
    drop_unborn_newest(fs, dir, found)?;
    check_seals(fs, dir, found)?;
    cut_torn_tail(dir, found)
}

/// A newest segment without its header holds no record: a crash while it
/// was being created. Drops it (its predecessor becomes the newest again),
/// unless it is the only one, whose number must be kept (it is after every
/// segment retention removed): then writes its header again.
fn drop_unborn_newest(fs: &dyn FileSystem, dir: &Path, found: &mut Vec<Found>) -> Result<()> {
    if found.last().is_some_and(|f| f.header.is_none()) {
        let f = found.pop().unwrap_or_else(|| unreachable!());
        let path = segment_path(dir, f.num);
        if found.is_empty() {
            f.file.set_len(0)?;
            let header = SegmentHeader {
                num: f.num,
                prev_end: 0,
            };
            f.file.write_at(&segment_header(header), 0)?;
            f.file.sync()?;
            found.push(Found {
                header: Some(header),
                len: SEGMENT_HEADER_LEN as u64,
                end: SEGMENT_HEADER_LEN as u64,
                ..f
            });
        } else {
            tracing::warn!(
                "{}: removed a segment whose creation a crash interrupted",
                path.display()
            );
            fs.remove(&path)?;
            fs.sync_dir(&path)?;
        }
    }
    Ok(())
}

/// Every segment but the newest must end where the next one's header says
/// it was sealed; the one exception (a seal's unsynced bytes lost with
/// power) drops the newest segment.
fn check_seals(fs: &dyn FileSystem, dir: &Path, found: &mut Vec<Found>) -> Result<()> {
    let n = found.len();
    for i in 0..n.saturating_sub(1) {
        let sealed_end = found[i + 1].header.map_or(0, |h| h.prev_end);
        let f = &found[i];
        let path = segment_path(dir, f.num);
        if f.header.is_none() {
            return Err(Error::BrokenData(format!(
                "{}: a sealed update-log segment shorter than its header",
                path.display()
            )));
        }
        if f.end == sealed_end && f.len == sealed_end {
            continue;
        }
        // The one case that is not damage: the segment before the newest
        // lost bytes its seal had not fsynced yet (one seal is pending at
        // most). What the newest holds came after them: dropping it keeps
        // the log a prefix of what was written.
        if i + 2 == n && f.end < sealed_end {
            let newest = &found[i + 1];
            tracing::warn!(
                "{}: a power loss cut this sealed segment at {} of {} bytes; removed {} records \
                 of the segment after it to keep the log a prefix",
                path.display(),
                f.end,
                sealed_end,
                newest.records
            );
            let newest_path = segment_path(dir, newest.num);
            fs.remove(&newest_path)?;
            fs.sync_dir(&newest_path)?;
            found.truncate(i + 1);
            return Ok(());
        }
        return Err(Error::BrokenData(format!(
            "{}: a sealed update-log segment holds records up to byte {} of {}, but the next \
             segment says it ends at byte {}",
            path.display(),
            f.end,
            f.len,
            sealed_end
        )));
    }
    Ok(())
}

/// Cuts the newest segment after its last whole record.
fn cut_torn_tail(dir: &Path, found: &[Found]) -> Result<()> {
    if let Some(f) = found.last() {
        if f.end < f.len {
            tracing::warn!(
                "{}: cut a torn tail of {} bytes (a crash in the middle of a write)",
                segment_path(dir, f.num).display(),
                f.len - f.end
            );
            f.file.set_len(f.end)?;
            f.file.sync()?;
        }
    }
    Ok(())
}
