//! Byte layout of memstored files: a 64-byte file header, then records.
//! `docs/format.md` documents the same tables; keep them in step.

use crate::name::Compression;
use crate::record::Meta;
use crate::status::{Error, Result};

/// First 8 bytes of every memstored data file.
pub const MAGIC: &[u8; 8] = b"MEMSTOR\x1a";
/// First 8 bytes of a hint (index snapshot) file.
pub const HINT_MAGIC: &[u8; 8] = b"MSTHINT\x1a";
/// 2: records with a varint header (1: a fixed 36-byte header, refused).
pub(crate) const FORMAT_VERSION: u16 = 2;
pub const FILE_HEADER_SIZE: usize = 64;
/// How much of a file's start an open reads to decode its header: the
/// header, and enough of a foreign file to tell which ancestor's it is (a
/// Tkrzw tree's mark is at byte 62).
pub(crate) const HEAD_READ: usize = 128;
/// The shortest a record header can be: CRC, lead byte, and one byte for
/// each of key length, stored length and CAS.
pub(crate) const MIN_RECORD_HEADER: usize = 8;
/// The longest: CRC, lead byte, two u32 and a u32 flags as 5-byte varints,
/// expiry and CAS as 10-byte ones.
pub(crate) const MAX_RECORD_HEADER: usize = 4 + 1 + 5 + 5 + 5 + 10 + 10;

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

    /// Whether `b` starts with a whole header that passes its checksum (of
    /// whatever version or kind).
    pub fn is_intact(b: &[u8]) -> bool {
        b.starts_with(MAGIC)
            && b.len() >= FILE_HEADER_SIZE
            && read_u32(b, 60) == crc32c::crc32c(&b[..60])
    }

    /// Decodes a header; anything that is not a memstored header is a clear error.
    pub fn decode(b: &[u8], path: &str) -> Result<FileHeader> {
        let not_ours =
            |why: &str| Error::BrokenData(format!("{path} is not a memstored file: {why}"));
        // The magic first: a short foreign file is still named for what it is.
        if !b.starts_with(MAGIC) {
            // An ancestor's file is named with the commands that migrate it.
            if let Some(msg) = crate::ancestors::explain(b, path) {
                return Err(Error::BrokenData(msg));
            }
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
        if version == 1 {
            return Err(Error::BrokenData(format!(
                "{path}: format version 1 (fixed 36-byte record headers, written \
                 by builds before the varint header of commit 383d092) is not read \
                 by this build, which writes version \
                 {FORMAT_VERSION}: `memstore export` it with the build that wrote \
                 it, then `memstore import` the export with this one"
            )));
        }
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

/// Says what a foreign file that is no ancestor's starts with, for the error message.
fn foreign_magic(b: &[u8]) -> String {
    let head = &b[..b.len().min(16)];
    if head.is_empty() {
        return "it is empty".into();
    }
    format!(
        "it starts with {:?}",
        String::from_utf8_lossy(&head[..head.len().min(8)])
    )
}

pub(crate) fn read_u32(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

pub(crate) fn read_u64(b: &[u8], at: usize) -> u64 {
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
///
/// On disk (docs/format.md "Record"): the CRC, a lead byte (bits 0-1 the
/// op, bits 2-3 the codec, bit 4 flags follow, bit 5 an expiry follows,
/// bits 6-7 zero), then LEB128 varints of the key length, the stored
/// length, the flags and the expiry (each only if its bit says so) and the
/// CAS. Why varints: the fixed header took 36 bytes, more than the key and
/// value of a small record (8-byte key and value: 52 bytes a record, 26
/// now), and every byte is written, synced, mapped and read back. Only the
/// shortest encoding of each field is accepted, so the header's length
/// follows from its fields (`head_len`): hint entries, which hold only the
/// fields, compute it; decoded headers and locations keep it for reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    pub crc: u32,
    pub op: Op,
    pub codec: Codec,
    pub key_len: u32,
    /// Length of the value as stored (after compression).
    pub stored_len: u32,
    pub meta: Meta,
    /// Bytes of the header (what `head_len` computes from the fields,
    /// kept because reads need it more than once).
    pub header_len: u8,
}

/// Lead byte: flags follow.
const LEAD_FLAGS: u8 = 0x10;
/// Lead byte: an expiry follows.
const LEAD_EXPIRY: u8 = 0x20;

/// Bytes of `v` as a LEB128 varint (also the segment cache's items').
#[inline]
pub(crate) fn varint_len(v: u64) -> usize {
    // 1 byte per 7 bits, at least one.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends `v` as a LEB128 varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at `b[*at..]`, advancing `at`; `None` past the end, beyond
/// `max_len` bytes, or not in its shortest form (a trailing zero byte).
#[inline]
fn get_varint(b: &[u8], at: &mut usize, max_len: usize) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..max_len {
        let byte = *b.get(*at + i)?;
        v |= u64::from(byte & 0x7f).checked_shl(7 * i as u32)?;
        if byte < 0x80 {
            if byte == 0 && i > 0 {
                return None;
            }
            if i == 9 && byte > 1 {
                return None; // beyond 64 bits
            }
            *at += i + 1;
            return Some(v);
        }
    }
    None
}

/// Bytes of the header of a record with these fields.
#[inline]
pub fn head_len(key_len: u32, stored_len: u32, meta: &Meta) -> u64 {
    let opt = |v: u64| if v == 0 { 0 } else { varint_len(v) };
    (4 + 1
        + varint_len(u64::from(key_len))
        + varint_len(u64::from(stored_len))
        + opt(u64::from(meta.flags))
        + opt(meta.expires_at)
        + varint_len(meta.cas)) as u64
}

impl RecordHeader {
    /// Bytes of this header on disk.
    #[inline]
    pub fn head_len(&self) -> u64 {
        u64::from(self.header_len)
    }

    pub fn total_len(&self) -> u64 {
        self.head_len() + self.key_len as u64 + self.stored_len as u64
    }

    /// Decodes a header from the start of `b` (which may run on into the
    /// key); `None` when the bytes are not a plausible header or `b` ends
    /// inside it.
    #[inline]
    pub fn decode(b: &[u8]) -> Option<RecordHeader> {
        let lead = *b.get(4)?;
        let op = match lead & 3 {
            1 => Op::Put,
            2 => Op::Remove,
            3 => Op::Clear,
            _ => return None,
        };
        let codec = match (lead >> 2) & 3 {
            0 => Codec::Raw,
            1 => Codec::Lz4,
            2 => Codec::Zstd,
            _ => return None,
        };
        if lead & 0xc0 != 0 {
            return None;
        }
        let mut at = 5;
        // The common case first: lengths below 128, one byte each.
        let (key_len, stored_len) = match b.get(5..7) {
            Some(&[k, s]) if k < 0x80 && s < 0x80 => {
                at = 7;
                (u32::from(k), u32::from(s))
            }
            _ => (
                u32::try_from(get_varint(b, &mut at, 5)?).ok()?,
                u32::try_from(get_varint(b, &mut at, 5)?).ok()?,
            ),
        };
        let flags = if lead & LEAD_FLAGS != 0 {
            match u32::try_from(get_varint(b, &mut at, 5)?).ok()? {
                0 => return None, // not the shortest form: the bit would be clear
                f => f,
            }
        } else {
            0
        };
        let expires_at = if lead & LEAD_EXPIRY != 0 {
            match get_varint(b, &mut at, 10)? {
                0 => return None,
                e => e,
            }
        } else {
            0
        };
        let cas = get_varint(b, &mut at, 10)?;
        Some(RecordHeader {
            crc: read_u32(b, 0),
            op,
            codec,
            key_len,
            stored_len,
            meta: Meta {
                flags,
                expires_at,
                cas,
            },
            // At most MAX_RECORD_HEADER (40): each field's length is bounded.
            header_len: at as u8,
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
pub(crate) fn encode_stored(
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
    let mut lead = op as u8 | (codec as u8) << 2;
    if meta.flags != 0 {
        lead |= LEAD_FLAGS;
    }
    if meta.expires_at != 0 {
        lead |= LEAD_EXPIRY;
    }
    // The header is built on the stack and appended once: a `push` per
    // varint byte (each with its capacity check) cost ~100 instructions a
    // record on the bulk-set path (callgrind).
    let mut head = [0u8; MAX_RECORD_HEADER];
    head[4] = lead;
    let mut n = 5;
    let mut put = |mut v: u64| {
        while v >= 0x80 {
            head[n] = (v as u8) | 0x80;
            n += 1;
            v >>= 7;
        }
        head[n] = v as u8;
        n += 1;
    };
    put(u64::from(key_len));
    put(u64::from(stored_len));
    if meta.flags != 0 {
        put(u64::from(meta.flags));
    }
    if meta.expires_at != 0 {
        put(meta.expires_at);
    }
    put(meta.cas);
    let header_len = n as u8;
    out.reserve(n + key.len() + stored.len());
    out.extend_from_slice(&head[..n]);
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
        header_len,
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
pub(crate) fn decompress(codec: Codec, stored: &[u8]) -> Result<Vec<u8>> {
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
pub(crate) fn crc_ok(record: &[u8]) -> bool {
    record.len() >= MIN_RECORD_HEADER && read_u32(record, 0) == crc32c::crc32c(&record[4..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_headers_round_trip_at_their_shortest() {
        let metas = [
            Meta::default(),
            Meta {
                flags: 7,
                ..Meta::default()
            },
            Meta {
                expires_at: 1_800_000_000,
                cas: 300,
                ..Meta::default()
            },
            Meta {
                flags: u32::MAX,
                expires_at: u64::MAX,
                cas: u64::MAX,
            },
        ];
        for meta in metas {
            for (klen, vlen) in [(0, 0), (1, 1), (127, 128), (300, 20_000)] {
                for (op, codec) in [(Op::Put, Codec::Raw), (Op::Remove, Codec::Zstd)] {
                    let (key, value) = (vec![b'k'; klen], vec![b'v'; vlen]);
                    let mut out = vec![];
                    let h = encode_stored(&mut out, op, codec, &key, &value, meta).unwrap();
                    assert_eq!(out.len() as u64, h.total_len());
                    // What a hint entry computes from the fields alone.
                    assert_eq!(h.head_len(), head_len(h.key_len, h.stored_len, &h.meta));
                    assert_eq!(RecordHeader::decode(&out), Some(h));
                    assert!(crc_ok(&out));
                    // A header cut short is no header.
                    let head = h.head_len() as usize;
                    assert!((MIN_RECORD_HEADER..=MAX_RECORD_HEADER).contains(&head));
                    assert_eq!(RecordHeader::decode(&out[..head - 1]), None);
                    assert_eq!(RecordHeader::decode(&out[..head]), Some(h));
                }
            }
        }
        // Seed 004's record: 8-byte key and value, a CAS past a million.
        let mut out = vec![];
        let meta = Meta {
            cas: 1_500_000,
            ..Meta::default()
        };
        encode_record(
            &mut out,
            Op::Put,
            b"00000001",
            b"00000001",
            meta,
            Compression::None,
        )
        .unwrap();
        assert_eq!(out.len(), 26, "was 52 with the fixed header");
    }

    /// Only the shortest encoding of each field is a header, so its length
    /// follows from its fields (a location computes it instead of storing it).
    #[test]
    fn longer_encodings_and_stray_bits_are_not_headers() {
        let mut out = vec![];
        encode_record(
            &mut out,
            Op::Put,
            b"k",
            b"v",
            Meta::default(),
            Compression::None,
        )
        .unwrap();
        assert!(RecordHeader::decode(&out).is_some());
        let with = |at: usize, bytes: &[u8]| {
            let mut b = out[..at].to_vec();
            b.extend_from_slice(bytes);
            b.extend_from_slice(&out[at + 1..]);
            b
        };
        // Key length 1 as two bytes (0x81 0x00).
        assert_eq!(RecordHeader::decode(&with(5, &[0x81, 0x00])), None);
        // Reserved lead bits, op 0, codec 3.
        for lead in [0x41, 0x81, 0x00, 0x0d] {
            assert_eq!(RecordHeader::decode(&with(4, &[lead])), None, "{lead:#x}");
        }
        // Flags said to follow, but zero.
        let mut b = with(4, &[out[4] | LEAD_FLAGS]);
        b.insert(7, 0);
        assert_eq!(RecordHeader::decode(&b), None);
        // A 10-byte varint beyond 64 bits.
        let mut b = out[..7].to_vec();
        b.extend_from_slice(&[0xff; 9]);
        b.push(0x02);
        assert_eq!(RecordHeader::decode(&b), None);
    }

    #[test]
    fn a_version_1_file_is_refused_with_the_way_to_convert_it() {
        let mut b = FileHeader {
            kind: FileKind::HashLog,
            generation: 1,
            created_at: 2,
            max_cas: 0,
        }
        .encode();
        b[8..10].copy_from_slice(&1u16.to_le_bytes());
        let crc = crc32c::crc32c(&b[..60]);
        b[60..64].copy_from_slice(&crc.to_le_bytes());
        let e = FileHeader::decode(&b, "old.tkh").unwrap_err().to_string();
        assert!(e.contains("format version 1"), "{e}");
        assert!(
            e.contains("memstore export") && e.contains("memstore import"),
            "{e}"
        );
    }

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
