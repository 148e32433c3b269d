//! Reading a log file front to back: the recovery rule lives here.
//! Records are read in order until the end of the file or the first record
//! that is incomplete or fails its CRC; everything from there on is a torn
//! tail, never served.

use crate::format::{RecordHeader, MAX_RECORD_HEADER, MIN_RECORD_HEADER};
use crate::io::{DataFile, ReadAheadFile};
use crate::status::Result;

/// Chunk size for streaming a value through the CRC without holding it whole.
const CHUNK: usize = 1 << 20;

/// How a scan ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScanEnd {
    /// Offset just past the last valid record.
    pub valid_end: u64,
    /// True when bytes after `valid_end` were ignored (a torn or corrupt tail).
    pub torn: bool,
}

/// One valid record met by a scan.
pub(crate) struct Scanned<'a> {
    pub offset: u64,
    pub header: RecordHeader,
    pub key: &'a [u8],
    /// The stored value bytes, present only when the scan was asked to keep values.
    pub stored_value: Option<&'a [u8]>,
}

/// Reads and checks the record at `offset`; `None` when it is incomplete,
/// implausible or fails its CRC. `body` receives the key (and the stored value
/// when `keep_values`); a value not kept is streamed through the CRC in chunks.
pub(crate) fn read_record(
    file: &dyn DataFile,
    offset: u64,
    file_len: u64,
    keep_values: bool,
    body: &mut Vec<u8>,
) -> Result<Option<RecordHeader>> {
    let mut head = [0u8; MAX_RECORD_HEADER];
    let left = file_len.saturating_sub(offset);
    if left < MIN_RECORD_HEADER as u64 {
        return Ok(None);
    }
    let head = &mut head[..left.min(MAX_RECORD_HEADER as u64) as usize];
    file.read_at(head, offset)?;
    let Some(h) = RecordHeader::decode(head) else {
        return Ok(None);
    };
    if h.total_len() > left {
        return Ok(None);
    }
    let head_len = h.head_len();
    let mut crc = crc32c::crc32c(&head[4..head_len as usize]);
    let body_len = h.key_len as u64 + h.stored_len as u64;
    let held = if keep_values {
        body_len
    } else {
        h.key_len as u64
    };
    body.clear();
    body.resize(held as usize, 0);
    file.read_at(body, offset + head_len)?;
    crc = crc32c::crc32c_append(crc, body);
    let mut pos = offset + head_len + held;
    let end = offset + h.total_len();
    let mut chunk = Vec::new();
    while pos < end {
        let n = ((end - pos) as usize).min(CHUNK);
        chunk.resize(n, 0);
        file.read_at(&mut chunk, pos)?;
        crc = crc32c::crc32c_append(crc, &chunk);
        pos += n as u64;
    }
    Ok((crc == h.crc).then_some(h))
}

/// Scans records from `start` to `file_len`, calling `f` for each valid one.
pub(crate) fn scan(
    file: &dyn DataFile,
    start: u64,
    file_len: u64,
    keep_values: bool,
    f: &mut dyn FnMut(Scanned<'_>) -> Result<()>,
) -> Result<ScanEnd> {
    let file = &ReadAheadFile::new(file, file_len);
    let mut offset = start;
    let mut body = Vec::new();
    while offset < file_len {
        let Some(h) = read_record(file, offset, file_len, keep_values, &mut body)? else {
            return Ok(ScanEnd {
                valid_end: offset,
                torn: true,
            });
        };
        let (key, value) = body.split_at(h.key_len as usize);
        f(Scanned {
            offset,
            header: h,
            key,
            stored_value: keep_values.then_some(value),
        })?;
        offset += h.total_len();
    }
    Ok(ScanEnd {
        valid_end: offset,
        torn: false,
    })
}

/// The offset of the first valid record at or after `from`, searching byte
/// by byte; `None` when there is none before `file_len`. What tells a torn
/// tail (nothing valid after the damage) from damage in the middle of a file.
pub(crate) fn next_valid(file: &dyn DataFile, from: u64, file_len: u64) -> Result<Option<u64>> {
    let file = &ReadAheadFile::new(file, file_len);
    let mut body = Vec::new();
    for offset in from..file_len {
        if read_record(file, offset, file_len, false, &mut body)?.is_some() {
            return Ok(Some(offset));
        }
    }
    Ok(None)
}

/// Like `scan`, but after a bad record it searches forward byte by byte for
/// the next valid one instead of stopping: the salvage pass of `restore`,
/// and what a read-only open of a file damaged in the middle serves.
/// Returns the number of bytes skipped.
pub(crate) fn scan_salvage(
    file: &dyn DataFile,
    start: u64,
    file_len: u64,
    keep_values: bool,
    f: &mut dyn FnMut(Scanned<'_>) -> Result<()>,
) -> Result<u64> {
    let mut offset = start;
    let mut skipped = 0;
    while offset < file_len {
        let end = scan(file, offset, file_len, keep_values, f)?;
        if !end.torn {
            break;
        }
        offset = next_valid(file, end.valid_end + 1, file_len)?.unwrap_or(file_len);
        skipped += offset - end.valid_end;
    }
    Ok(skipped)
}
