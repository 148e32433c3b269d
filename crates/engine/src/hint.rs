//! Hint files: a snapshot of a log file's index written at clean close, so
//! that reopening reads one entry per key instead of every record's bytes.
//! A hint is only trusted when its generation matches the data file's, its
//! covered length fits the file and its CRC is right; otherwise the log is scanned.

use crate::format::{read_u32, read_u64, Codec, FILE_HEADER_SIZE, HINT_MAGIC};
use crate::io::FileSystem;
use crate::record::Meta;
use crate::status::Result;
use crate::store::log::Loc;
use std::path::{Path, PathBuf};

const HINT_HEADER: usize = 64;
/// Fixed bytes per entry before the key.
const ENTRY_FIXED: usize = 4 + 8 + 4 + 1 + 4 + 8 + 8;

/// `casket.tkh` -> `casket.tkh.hint`.
pub fn hint_path(data: &Path) -> PathBuf {
    let mut s = data.as_os_str().to_owned();
    s.push(".hint");
    PathBuf::from(s)
}

/// A loaded hint.
pub struct Hint {
    /// The data file length the hint describes; records after it are replayed.
    pub data_len: u64,
    pub max_cas: u64,
    pub live_bytes: u64,
    /// The hint's bytes without its CRC; entries are read from it in place
    /// (one allocation, where a vector of keys took one per key).
    body: Vec<u8>,
}

/// A walk over an index's entries, handing each to the visitor given.
pub type EachEntry<'a> = &'a mut dyn FnMut(&mut dyn FnMut(&[u8], Loc));

/// What a hint says of its data file besides the entries.
pub struct Covered {
    pub generation: u64,
    /// Bytes of the data file the entries describe.
    pub data_len: u64,
    pub max_cas: u64,
    pub live_bytes: u64,
}

/// Writes a hint atomically (temporary file, sync, rename, directory sync);
/// `count` entries are expected (it sizes the buffer).
pub fn save(
    fs: &dyn FileSystem,
    path: &Path,
    covered: &Covered,
    count: usize,
    each: EachEntry<'_>,
) -> Result<()> {
    let Covered {
        generation,
        data_len,
        max_cas,
        live_bytes,
    } = *covered;
    let mut b = Vec::with_capacity(HINT_HEADER + count * (ENTRY_FIXED + 16) + 4);
    b.extend_from_slice(HINT_MAGIC);
    let count_at = b.len() + 16;
    for n in [generation, data_len, count as u64, max_cas, live_bytes] {
        b.extend_from_slice(&n.to_le_bytes());
    }
    b.resize(HINT_HEADER, 0);
    // `count` is what the index says it holds; the entries written are
    // what its walk hands out, and the header gets that number.
    let mut written = 0u64;
    each(&mut |key, loc| {
        written += 1;
        b.extend_from_slice(&(key.len() as u32).to_le_bytes());
        b.extend_from_slice(&loc.offset.to_le_bytes());
        b.extend_from_slice(&loc.stored_len.to_le_bytes());
        b.push(loc.codec as u8);
        b.extend_from_slice(&loc.meta.flags.to_le_bytes());
        b.extend_from_slice(&loc.meta.expires_at.to_le_bytes());
        b.extend_from_slice(&loc.meta.cas.to_le_bytes());
        b.extend_from_slice(key);
    });
    b[count_at..count_at + 8].copy_from_slice(&written.to_le_bytes());
    let crc = crc32c::crc32c(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    fs.remove(&tmp)?;
    let f = fs.open(&tmp, true, true)?;
    f.write_at(&b, 0)?;
    f.sync()?;
    drop(f);
    fs.rename(&tmp, path)?;
    fs.sync_dir(path)
}

/// `save` of a list of entries (tests and fuzz targets build hints so).
pub fn save_entries(
    fs: &dyn FileSystem,
    path: &Path,
    covered: &Covered,
    entries: &[(&[u8], Loc)],
) -> Result<()> {
    let mut each = |f: &mut dyn FnMut(&[u8], Loc)| {
        for (k, l) in entries {
            f(k, *l);
        }
    };
    save(fs, path, covered, entries.len(), &mut each)
}

/// Loads a hint if present and valid for the data file of `generation` and `file_len`.
pub fn load(fs: &dyn FileSystem, path: &Path, generation: u64, file_len: u64) -> Option<Hint> {
    if !fs.exists(path) {
        return None;
    }
    let f = fs.open(path, false, false).ok()?;
    let len = usize::try_from(f.len().ok()?).ok()?;
    if len < HINT_HEADER + 4 {
        return None;
    }
    let mut b = vec![0u8; len];
    f.read_at(&mut b, 0).ok()?;
    let (body, crc) = b.split_at(len - 4);
    if read_u32(crc, 0) != crc32c::crc32c(body) || &body[..8] != HINT_MAGIC {
        return None;
    }
    if read_u64(body, 8) != generation {
        return None;
    }
    let data_len = read_u64(body, 16);
    // Replay starts at `data_len`: below the file header it would read the
    // header as a torn record and truncate the whole file (fuzz: db_file_open).
    if data_len > file_len || data_len < FILE_HEADER_SIZE as u64 {
        return None;
    }
    let count = read_u64(body, 24);
    // Every entry is checked before any is handed out: a hint is used whole
    // or not at all.
    let mut at = HINT_HEADER;
    for _ in 0..count {
        at = parse_entry(body, at, data_len)?.2;
    }
    if at != body.len() {
        return None;
    }
    b.truncate(len - 4);
    Some(Hint {
        data_len,
        max_cas: read_u64(&b, 32),
        live_bytes: read_u64(&b, 40),
        body: b,
    })
}

/// The entry at `at` of a hint's body, and where the next one starts.
fn parse_entry(body: &[u8], at: usize, data_len: u64) -> Option<(&[u8], Loc, usize)> {
    let fixed = body.get(at..at.checked_add(ENTRY_FIXED)?)?;
    let key_len = read_u32(fixed, 0);
    let codec = match fixed[16] {
        0 => Codec::Raw,
        1 => Codec::Lz4,
        2 => Codec::Zstd,
        _ => return None,
    };
    let (stored_len, meta) = (
        read_u32(fixed, 12),
        Meta {
            flags: read_u32(fixed, 17),
            expires_at: read_u64(fixed, 21),
            cas: read_u64(fixed, 29),
        },
    );
    let loc = Loc {
        offset: read_u64(fixed, 4),
        key_len,
        stored_len,
        codec,
        meta,
        header_len: crate::format::head_len(key_len, stored_len, &meta) as u8,
    };
    // Every entry must point inside the covered data: reads trust it
    // for offsets and buffer sizes (fuzz: db_file_open overflowed on one).
    let end = loc.offset.checked_add(loc.total_len())?;
    if loc.offset < FILE_HEADER_SIZE as u64 || end > data_len {
        return None;
    }
    let key_at = at + ENTRY_FIXED;
    let next = key_at.checked_add(key_len as usize)?;
    Some((body.get(key_at..next)?, loc, next))
}

impl Hint {
    /// Number of entries.
    pub fn len(&self) -> usize {
        read_u64(&self.body, 24) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries, keys borrowed from the hint (checked by `load`).
    pub fn entries(&self) -> impl Iterator<Item = (&[u8], Loc)> + '_ {
        let mut at = HINT_HEADER;
        (0..self.len()).map_while(move |_| {
            let (key, loc, next) = parse_entry(&self.body, at, self.data_len)?;
            at = next;
            Some((key, loc))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::SimFs;

    fn covered(data_len: u64) -> Covered {
        Covered {
            generation: 7,
            data_len,
            max_cas: 1,
            live_bytes: 0,
        }
    }

    /// Regression (found by the `db_file_open` fuzz target): a CRC-valid hint
    /// claiming to cover fewer bytes than the file header made a writable
    /// open replay from offset 0, take the header for a torn record and
    /// truncate the file to nothing.
    #[test]
    fn hint_covering_less_than_the_file_header_is_ignored() {
        let fs = SimFs::new();
        let path = Path::new("x.tkh.hint");
        save_entries(&*fs, path, &covered(0), &[]).unwrap();
        assert!(load(&*fs, path, 7, 64).is_none());
        save_entries(&*fs, path, &covered(64), &[]).unwrap();
        assert_eq!(load(&*fs, path, 7, 64).map(|h| h.data_len), Some(64));
    }

    /// Regression (fuzz target `db_file_open`): a CRC-valid hint entry
    /// pointing past the data made reads overflow the offset arithmetic (and
    /// size a buffer by its lengths); such a hint is now ignored.
    #[test]
    fn hint_entry_pointing_past_the_covered_data_is_ignored() {
        let fs = SimFs::new();
        let path = Path::new("x.tkh.hint");
        let loc = |offset, stored_len| Loc {
            offset,
            key_len: 1,
            stored_len,
            codec: Codec::Raw,
            meta: Meta::default(),
            header_len: crate::format::head_len(1, stored_len, &Meta::default()) as u8,
        };
        let save_one = |l: Loc| save_entries(&*fs, path, &covered(200), &[(&b"k"[..], l)]).unwrap();
        save_one(loc(64, 1));
        assert_eq!(load(&*fs, path, 7, 200).map(|h| h.len()), Some(1));
        for bad in [
            loc(u64::MAX - 8, 1),
            loc(64, u32::MAX),
            loc(0, 1),
            loc(195, 1), // 8-byte header, key and value: ends at 205
        ] {
            save_one(bad);
            assert!(load(&*fs, path, 7, 200).is_none());
        }
    }
}
