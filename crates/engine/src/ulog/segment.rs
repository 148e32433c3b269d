//! Segment files: naming, listing, and reading records one at a time.

use super::record::{Header, Update, HEADER_LEN, MAGIC, OLD_MAGIC, SEGMENT_HEADER_LEN};
use crate::io::{DataFile, FileSystem};
use crate::status::{Error, Result};
use std::path::{Path, PathBuf};

/// `DIR/ulog-NNNNNNNNNN.log`: ten digits, so names sort as numbers.
pub(super) fn segment_path(dir: &Path, num: u64) -> PathBuf {
    dir.join(format!("ulog-{num:010}.log"))
}

fn segment_number(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("ulog-")?.strip_suffix(".log")?;
    if digits.len() != 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The segment numbers in `dir`, oldest first.
pub(super) fn list_segments(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<u64>> {
    let mut nums: Vec<u64> = fs
        .list_dir(dir)?
        .iter()
        .filter_map(|p| p.file_name()?.to_str().and_then(segment_number))
        .collect();
    nums.sort_unstable();
    Ok(nums)
}

/// What a segment's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SegmentHeader {
    pub num: u64,
    /// The length the previous segment had when this one was started (0 for
    /// the first): the previous one's seal is fsynced after this segment is
    /// created, so after a power loss this is how recovery tells a sealed
    /// segment that lost its tail from a whole one.
    pub prev_end: u64,
}

/// The bytes every segment starts with.
pub(super) fn segment_header(h: SegmentHeader) -> [u8; SEGMENT_HEADER_LEN] {
    let mut b = [0u8; SEGMENT_HEADER_LEN];
    b[..8].copy_from_slice(MAGIC);
    b[8..16].copy_from_slice(&h.num.to_le_bytes());
    b[16..24].copy_from_slice(&h.prev_end.to_le_bytes());
    let crc = crc32c::crc32c(&b[..24]);
    b[24..28].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Reads and checks a segment's header (`len` is the file's length).
pub(super) fn read_header(file: &dyn DataFile, len: u64, path: &Path) -> Result<SegmentHeader> {
    let not_one = |why: &str| {
        Error::BrokenData(format!(
            "{}: not an update-log segment ({why})",
            path.display()
        ))
    };
    if len < SEGMENT_HEADER_LEN as u64 {
        if len >= OLD_MAGIC.len() as u64 {
            let mut m = [0u8; 8];
            file.read_at(&mut m, 0)?;
            if &m == OLD_MAGIC {
                return Err(old_format(path));
            }
        }
        return Err(not_one("shorter than its header"));
    }
    let mut b = [0u8; SEGMENT_HEADER_LEN];
    file.read_at(&mut b, 0)?;
    if &b[..8] == OLD_MAGIC {
        return Err(old_format(path));
    }
    if &b[..8] != MAGIC {
        return Err(not_one("wrong magic"));
    }
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[24..28]);
    if u32::from_le_bytes(w) != crc32c::crc32c(&b[..24]) || b[28..] != [0u8; 4] {
        return Err(not_one("header checksum mismatch"));
    }
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(w)
    };
    Ok(SegmentHeader {
        num: word(8),
        prev_end: word(16),
    })
}

fn old_format(path: &Path) -> Error {
    Error::BrokenData(format!(
        "{}: an update-log segment of the first format (MSTULOG1, before memstored 0.2); \
         move the log directory aside and let replicas copy the store afresh",
        path.display()
    ))
}

/// The complete, CRC-valid record at `offset`, with the offset after it;
/// `None` when the bytes there are not one (end of file, torn or damaged).
pub(super) fn read_record(
    file: &dyn DataFile,
    len: u64,
    offset: u64,
) -> Result<Option<(Update, u64)>> {
    if len.saturating_sub(offset) < HEADER_LEN as u64 {
        return Ok(None);
    }
    let mut hb = [0u8; HEADER_LEN];
    file.read_at(&mut hb, offset)?;
    let Some(h) = Header::parse(&hb) else {
        return Ok(None);
    };
    let end = offset + h.total_len();
    if end > len {
        return Ok(None);
    }
    let mut body = vec![0u8; (h.total_len() - HEADER_LEN as u64) as usize];
    file.read_at(&mut body, offset + HEADER_LEN as u64)?;
    Ok(h.finish(&hb, body).map(|u| (u, end)))
}

/// The first offset after `bad` where a valid record starts: the store's
/// rule (docs/format.md "Recovery rule") that tells a torn tail (none)
/// from damage in the middle (some).
pub(super) fn valid_record_after(file: &dyn DataFile, len: u64, bad: u64) -> Result<Option<u64>> {
    let view = crate::io::ReadAheadFile::new(file, len);
    for at in bad + 1..len {
        if read_record(&view, len, at)?.is_some() {
            return Ok(Some(at));
        }
    }
    Ok(None)
}

/// The error for bytes that are not a record with valid records after them.
pub(super) fn damaged(path: &Path, at: u64, next: u64) -> Error {
    Error::BrokenData(format!(
        "{}: update log damaged at offset {at}, with valid records after it (from offset {next})",
        path.display()
    ))
}

/// Where a reader is in the log: a segment and how many of its records it
/// has passed (`Updates::position`), for counting what is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    pub segment: u64,
    pub records: u64,
}
