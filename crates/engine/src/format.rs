//! Byte layout of memstored files: a 64-byte file header, then records.
//! `docs/format.md` documents the same tables; keep them in step.

use crate::name::Compression;
use crate::record::Meta;
use crate::status::{Error, Result};

/// First 8 bytes of every memstored data file.
pub const MAGIC: &[u8; 8] = b"MEMSTOR\x1a";
/// First 8 bytes of a hint (index snapshot) file.
pub const HINT_MAGIC: &[u8; 8] = b"MSTHINT\x1a";
pub const FORMAT_VERSION: u16 = 1;
pub const FILE_HEADER_SIZE: usize = 64;
pub const RECORD_HEADER_SIZE: usize = 36;

/// What a file holds; stored in the header so a hash file is not opened as a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    HashLog = 1,
    TreeLog = 2,
    MemSnapshot = 3,
}

/// The decoded file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    pub kind: FileKind,
    /// Random per file; a hint file names the generation it indexes, so a hint
    /// left over from an older file (before a rebuild) is never applied.
    pub generation: u64,
    pub created_at: u64,
    /// Snapshots (`.tkmt`): the highest CAS ever handed out, which may belong
    /// to a record removed before the snapshot, so a reopened shard never
    /// reuses it. Zero in logs, whose records carry every CAS.
    pub max_cas: u64,
}

impl FileHeader {
    pub fn encode(&self) -> [u8; FILE_HEADER_SIZE] {
        let mut b = [0u8; FILE_HEADER_SIZE];
        b[0..8].copy_from_slice(MAGIC);
        b[8..10].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        b[10] = self.kind as u8;
        b[16..24].copy_from_slice(&self.generation.to_le_bytes());
        b[24..32].copy_from_slice(&self.created_at.to_le_bytes());
        b[32..40].copy_from_slice(&self.max_cas.to_le_bytes());
        let crc = crc32c::crc32c(&b[..60]);
        b[60..64].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes a header; anything that is not a memstored header is a clear error.
    pub fn decode(b: &[u8], path: &str) -> Result<FileHeader> {
        let not_ours =
            |why: &str| Error::BrokenData(format!("{path} is not a memstored file: {why}"));
        // The magic first: a short foreign file is still named for what it is.
        if !b.starts_with(MAGIC) {
            return Err(not_ours(&foreign_magic(b)));
        }
        if b.len() < FILE_HEADER_SIZE {
            return Err(not_ours("shorter than the 64-byte header"));
        }
        let crc = u32::from_le_bytes([b[60], b[61], b[62], b[63]]);
        if crc != crc32c::crc32c(&b[..60]) {
            return Err(Error::BrokenData(format!(
                "{path}: the file header fails its checksum"
            )));
        }
        let version = u16::from_le_bytes([b[8], b[9]]);
        if version != FORMAT_VERSION {
            return Err(Error::BrokenData(format!(
                "{path}: format version {version} is not supported"
            )));
        }
        let kind = match b[10] {
            1 => FileKind::HashLog,
            2 => FileKind::TreeLog,
            3 => FileKind::MemSnapshot,
            k => return Err(Error::BrokenData(format!("{path}: unknown file kind {k}"))),
        };
        Ok(FileHeader {
            kind,
            generation: read_u64(b, 16),
            created_at: read_u64(b, 24),
            max_cas: read_u64(b, 32),
        })
    }
}

/// Says what a foreign file is, naming well-known formats, for the error message.
fn foreign_magic(b: &[u8]) -> String {
    let head = &b[..b.len().min(16)];
    if head.is_empty() {
        return "it is empty".into();
    }
    if head.starts_with(b"Tkrzw") {
        return "it has a Tkrzw header (TkrzwHDB/TkrzwTDB)".into();
    }
    if head.starts_with(b"ToKyO CaBiNeT") {
        return "it has a Tokyo Cabinet header".into();
    }
    if head.starts_with(b"KC\n") || head.starts_with(b"Kyoto") {
        return "it has a Kyoto Cabinet header".into();
    }
    format!(
        "it starts with {:?}",
        String::from_utf8_lossy(&head[..head.len().min(8)])
    )
}

pub fn read_u32(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

pub fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// What a log record does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Put = 1,
    Remove = 2,
    /// Every record before this one is void (`clear`).
    Clear = 3,
}

/// Stored value encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    Raw = 0,
    Lz4 = 1,
    Zstd = 2,
}

/// A decoded record header; key and value follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    pub crc: u32,
    pub op: Op,
    pub codec: Codec,
    pub key_len: u32,
    /// Length of the value as stored (after compression).
    pub stored_len: u32,
    pub meta: Meta,
}

impl RecordHeader {
    pub fn total_len(&self) -> u64 {
        RECORD_HEADER_SIZE as u64 + self.key_len as u64 + self.stored_len as u64
    }

    /// Decodes the fixed part; `None` when the bytes are not a plausible header.
    pub fn decode(b: &[u8]) -> Option<RecordHeader> {
        if b.len() < RECORD_HEADER_SIZE {
            return None;
        }
        let op = match b[4] {
            1 => Op::Put,
            2 => Op::Remove,
            3 => Op::Clear,
            _ => return None,
        };
        let codec = match b[5] {
            0 => Codec::Raw,
            1 => Codec::Lz4,
            2 => Codec::Zstd,
            _ => return None,
        };
        Some(RecordHeader {
            crc: read_u32(b, 0),
            op,
            codec,
            key_len: read_u32(b, 8),
            stored_len: read_u32(b, 12),
            meta: Meta {
                flags: read_u32(b, 16),
                expires_at: read_u64(b, 20),
                cas: read_u64(b, 28),
            },
        })
    }
}

/// Appends one record to `out`. The value is compressed when that pays.
pub fn encode_record(
    out: &mut Vec<u8>,
    op: Op,
    key: &[u8],
    value: &[u8],
    meta: Meta,
    comp: Compression,
) -> Result<RecordHeader> {
    let compressed = compress(value, comp);
    let (codec, stored): (Codec, &[u8]) = match &compressed {
        Some((c, v)) => (*c, v),
        None => (Codec::Raw, value),
    };
    encode_stored(out, op, codec, key, stored, meta)
}

/// Appends one record whose value is already encoded with `codec` (copying
/// records during rebuild without recompressing them).
pub fn encode_stored(
    out: &mut Vec<u8>,
    op: Op,
    codec: Codec,
    key: &[u8],
    stored: &[u8],
    meta: Meta,
) -> Result<RecordHeader> {
    let key_len = u32::try_from(key.len())
        .map_err(|_| Error::InvalidArgument("key longer than 4 GiB".into()))?;
    let stored_len = u32::try_from(stored.len())
        .map_err(|_| Error::InvalidArgument("value longer than 4 GiB - 1".into()))?;
    let start = out.len();
    out.extend_from_slice(&[0u8; 4]);
    out.push(op as u8);
    out.push(codec as u8);
    out.extend_from_slice(&[0u8; 2]);
    out.extend_from_slice(&key_len.to_le_bytes());
    out.extend_from_slice(&stored_len.to_le_bytes());
    out.extend_from_slice(&meta.flags.to_le_bytes());
    out.extend_from_slice(&meta.expires_at.to_le_bytes());
    out.extend_from_slice(&meta.cas.to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(stored);
    let crc = crc32c::crc32c(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&crc.to_le_bytes());
    Ok(RecordHeader {
        crc,
        op,
        codec,
        key_len,
        stored_len,
        meta,
    })
}

/// Values shorter than this are stored raw: compression would not pay.
const MIN_COMPRESS_LEN: usize = 32;

/// zstd level for values: fast, and most of the gain on small values.
const ZSTD_LEVEL: i32 = 3;

// zstd contexts are costly to create (each creation probes the CPU with
// `cpuid`, which traps to the hypervisor on virtual machines and dominated
// compressed reads and writes), so each thread keeps one of each.
thread_local! {
    static ZSTD_COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
    static ZSTD_DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

fn zstd_compress(value: &[u8]) -> Option<Vec<u8>> {
    ZSTD_COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = Some(zstd::bulk::Compressor::new(ZSTD_LEVEL).ok()?);
        }
        c.as_mut()?.compress(value).ok()
    })
}

fn zstd_decompress(stored: &[u8]) -> std::io::Result<Vec<u8>> {
    // Frames written by `zstd_compress` state their content size.
    let size = zstd::zstd_safe::get_frame_content_size(stored)
        .ok()
        .flatten()
        .filter(|&n| n <= u32::MAX as u64 && n <= max_expansion(stored, ZSTD_MAX_RATIO));
    let Some(size) = size else {
        return zstd::stream::decode_all(stored);
    };
    ZSTD_DECOMPRESSOR.with(|d| {
        let mut d = d.borrow_mut();
        if d.is_none() {
            *d = Some(zstd::bulk::Decompressor::new()?);
        }
        match d.as_mut() {
            Some(d) => d.decompress(stored, size as usize),
            None => zstd::stream::decode_all(stored),
        }
    })
}

fn compress(value: &[u8], comp: Compression) -> Option<(Codec, Vec<u8>)> {
    if value.len() < MIN_COMPRESS_LEN {
        return None;
    }
    let out = match comp {
        Compression::None => return None,
        Compression::Lz4 => (Codec::Lz4, lz4_flex::compress_prepend_size(value)),
        Compression::Zstd => (Codec::Zstd, zstd_compress(value)?),
    };
    (out.1.len() < value.len()).then_some(out)
}

/// Most bytes one lz4 input byte can stand for (a match-length byte of 255).
const LZ4_MAX_RATIO: u64 = 255;
/// Most bytes one zstd input byte can stand for: a 4-byte RLE block makes 128 KiB.
const ZSTD_MAX_RATIO: u64 = 1 << 15;

/// The largest value `stored` could decompress to at `ratio`, plus slack.
fn max_expansion(stored: &[u8], ratio: u64) -> u64 {
    (stored.len() as u64).saturating_mul(ratio) + (1 << 17)
}

/// Restores a stored value.
///
/// A declared size is trusted for preallocation only when the stored bytes
/// could produce it: a corrupt (or hostile) record claiming 3 GB from a few
/// bytes used to allocate it up front (found by the `db_file_open` fuzz target).
pub fn decompress(codec: Codec, stored: &[u8]) -> Result<Vec<u8>> {
    match codec {
        Codec::Raw => Ok(stored.to_vec()),
        Codec::Lz4 => {
            let declared = stored
                .first_chunk::<4>()
                .map_or(0, |b| u64::from(u32::from_le_bytes(*b)));
            if declared > max_expansion(stored, LZ4_MAX_RATIO) {
                return Err(Error::BrokenData(format!(
                    "lz4 value claims {declared} bytes from {} stored",
                    stored.len()
                )));
            }
            lz4_flex::decompress_size_prepended(stored)
                .map_err(|e| Error::BrokenData(format!("lz4 value does not decompress: {e}")))
        }
        Codec::Zstd => zstd_decompress(stored)
            .map_err(|e| Error::BrokenData(format!("zstd value does not decompress: {e}"))),
    }
}

/// Checks a whole record (header, key, value bytes) against its CRC.
pub fn crc_ok(record: &[u8]) -> bool {
    record.len() >= RECORD_HEADER_SIZE && read_u32(record, 0) == crc32c::crc32c(&record[4..])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (fuzz target `db_file_open`): an lz4 value whose size
    /// prefix claimed 3 GB made `decompress` allocate 3 GB before failing.
    #[test]
    fn lz4_value_claiming_an_impossible_size_is_broken_data() {
        let mut stored = 3_217_014_719u32.to_le_bytes().to_vec();
        stored.extend_from_slice(&[0x1f, b'a', 1, 0, 0xff, 0x0a, b'a', b'a']);
        assert!(matches!(
            decompress(Codec::Lz4, &stored),
            Err(Error::BrokenData(m)) if m.contains("claims")
        ));
        let value = vec![b'a'; 100_000];
        let stored = lz4_flex::compress_prepend_size(&value);
        assert_eq!(decompress(Codec::Lz4, &stored).unwrap(), value);
    }

    /// Same bug for zstd (found reviewing the lz4 one): a frame header
    /// declaring 4 GB of content was trusted for preallocation.
    #[test]
    fn zstd_frame_claiming_an_impossible_size_is_not_preallocated() {
        let value = vec![7u8; 1 << 20];
        let mut stored = zstd::bulk::compress(&value, 3).unwrap();
        assert_eq!(decompress(Codec::Zstd, &stored).unwrap(), value);
        // Frame header: magic, descriptor 0xa0 (single segment, 4-byte content
        // size), content size 0xffff_fff0, then a raw block of 1 byte.
        stored = vec![
            0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0xf0, 0xff, 0xff, 0xff, 0x09, 0, 0, b'x',
        ];
        assert!(matches!(
            decompress(Codec::Zstd, &stored),
            Err(Error::BrokenData(_))
        ));
    }
}
