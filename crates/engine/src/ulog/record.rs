//! One update-log record, byte by byte (docs/format.md, "Update log").

use super::change::{Change, UlogOp};
use crate::status::{Error, Result};

/// The first 8 bytes of every segment file.
pub(crate) const MAGIC: &[u8; 8] = b"MSTULOG2";
/// The magic of the first format (a 16-byte header without `prev_end`),
/// recognised only to name it in the error.
pub(super) const OLD_MAGIC: &[u8; 8] = b"MSTULOG1";
/// Segment header: magic, the segment's number, the previous segment's end
/// (u64 LE each), a CRC-32C of those 24 bytes and 4 zero bytes.
pub(super) const SEGMENT_HEADER_LEN: usize = 32;
/// Fixed part of a record before key and value.
pub(crate) const HEADER_LEN: usize = 40;

/// One logged change, owned (what a reader yields).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// Microseconds since the Unix epoch, strictly increasing per server.
    pub timestamp: u64,
    pub server_id: u16,
    /// Which of the server's databases (`-s` order, from 0).
    pub dbm_index: u32,
    pub op: UlogOp,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
    pub flags: u32,
    /// Unix seconds, 0 = never, as the store keeps it.
    pub expires_at: u64,
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Appends the encoding of one record to `out`.
pub(super) fn encode(
    out: &mut Vec<u8>,
    u: &Change<'_>,
    ts: u64,
    server_id: u16,
    dbm: u32,
) -> Result<()> {
    let too_long =
        || Error::InvalidArgument("a key or value of 4 GiB or more cannot be logged".into());
    let klen = u32::try_from(u.key.len()).map_err(|_| too_long())?;
    let vlen = u32::try_from(u.value.len()).map_err(|_| too_long())?;
    let start = out.len();
    out.extend_from_slice(&[0u8; 4]);
    out.push(u.op as u8);
    out.push(0);
    out.extend_from_slice(&server_id.to_le_bytes());
    out.extend_from_slice(&dbm.to_le_bytes());
    out.extend_from_slice(&klen.to_le_bytes());
    out.extend_from_slice(&vlen.to_le_bytes());
    out.extend_from_slice(&u.flags.to_le_bytes());
    out.extend_from_slice(&u.expires_at.to_le_bytes());
    out.extend_from_slice(&ts.to_le_bytes());
    out.extend_from_slice(u.key);
    out.extend_from_slice(u.value);
    let crc = crc32c::crc32c(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// The fixed fields of a record header, before its CRC is checked.
pub(super) struct Header {
    pub crc: u32,
    pub op: UlogOp,
    pub server_id: u16,
    pub dbm_index: u32,
    pub key_len: u32,
    pub value_len: u32,
    pub flags: u32,
    pub expires_at: u64,
    pub timestamp: u64,
}

impl Header {
    /// `None` for an unknown op or a nonzero reserved byte: not a record.
    pub(super) fn parse(b: &[u8; HEADER_LEN]) -> Option<Header> {
        if b[5] != 0 {
            return None;
        }
        Some(Header {
            crc: le_u32(b, 0),
            op: UlogOp::from_byte(b[4])?,
            server_id: u16::from_le_bytes([b[6], b[7]]),
            dbm_index: le_u32(b, 8),
            key_len: le_u32(b, 12),
            value_len: le_u32(b, 16),
            flags: le_u32(b, 20),
            expires_at: le_u64(b, 24),
            timestamp: le_u64(b, 32),
        })
    }

    /// Bytes of the whole record.
    pub(super) fn total_len(&self) -> u64 {
        HEADER_LEN as u64 + u64::from(self.key_len) + u64::from(self.value_len)
    }

    /// Checks the CRC over header rest + `body` (key and value) and builds the update.
    pub(super) fn finish(self, header: &[u8; HEADER_LEN], body: Vec<u8>) -> Option<Update> {
        let mut h = crc32c::crc32c(&header[4..]);
        h = crc32c::crc32c_append(h, &body);
        if h != self.crc {
            return None;
        }
        let mut key = body;
        let value = key.split_off(self.key_len as usize);
        Some(Update {
            timestamp: self.timestamp,
            server_id: self.server_id,
            dbm_index: self.dbm_index,
            op: self.op,
            key,
            value,
            flags: self.flags,
            expires_at: self.expires_at,
        })
    }
}
