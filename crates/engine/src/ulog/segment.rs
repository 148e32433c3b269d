//! Segment files: naming, listing, and reading records one at a time.

use super::record::{Header, Update, HEADER_LEN, MAGIC, SEGMENT_HEADER_LEN};
use crate::io::{DataFile, FileSystem};
use crate::status::{Error, Result};
use std::path::{Path, PathBuf};

/// `DIR/ulog-NNNNNNNNNN.log`: ten digits, so names sort as numbers.
pub fn segment_path(dir: &Path, num: u64) -> PathBuf {
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
pub fn list_segments(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<u64>> {
    let mut nums: Vec<u64> = fs
        .list_dir(dir)?
        .iter()
        .filter_map(|p| p.file_name()?.to_str().and_then(segment_number))
        .collect();
    nums.sort_unstable();
    Ok(nums)
}

/// The 16 bytes every segment starts with.
pub fn segment_header(num: u64) -> [u8; SEGMENT_HEADER_LEN] {
    let mut h = [0u8; SEGMENT_HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8..].copy_from_slice(&num.to_le_bytes());
    h
}

/// Checks a segment's header (`len` is the file's length).
pub fn check_header(file: &dyn DataFile, len: u64, path: &Path) -> Result<()> {
    let mut h = [0u8; SEGMENT_HEADER_LEN];
    if len < SEGMENT_HEADER_LEN as u64 || {
        file.read_at(&mut h, 0)?;
        &h[..8] != MAGIC
    } {
        return Err(Error::BrokenData(format!(
            "{}: not an update-log segment",
            path.display()
        )));
    }
    Ok(())
}

/// The complete, CRC-valid record at `offset`, with the offset after it;
/// `None` when the bytes there are not one (end of file, torn or damaged).
pub fn read_record(file: &dyn DataFile, len: u64, offset: u64) -> Result<Option<(Update, u64)>> {
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
pub fn valid_record_after(file: &dyn DataFile, len: u64, bad: u64) -> Result<Option<u64>> {
    let view = crate::io::ReadAheadFile::new(file, len);
    for at in bad + 1..len {
        if read_record(&view, len, at)?.is_some() {
            return Ok(Some(at));
        }
    }
    Ok(None)
}

/// The error for bytes that are not a record with valid records after them.
pub fn damaged(path: &Path, at: u64, next: u64) -> Error {
    Error::BrokenData(format!(
        "{}: update log damaged at offset {at}, with valid records after it (from offset {next})",
        path.display()
    ))
}
