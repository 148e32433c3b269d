//! Hint files: a snapshot of a log file's index written at clean close, so
//! that reopening reads one entry per key instead of every record's bytes.
//! A hint is only trusted when its generation matches the data file's, its
//! covered length fits the file and its CRC is right; otherwise the log is scanned.

use super::loc::Loc;
use crate::format::{read_u32, read_u64, Codec, FILE_HEADER_SIZE, HINT_MAGIC};
use crate::io::{DataFile, FileSystem};
use crate::record::Meta;
use crate::status::Result;
use crate::tmpfile::{self, TmpFile};
use std::path::Path;
use std::sync::Arc;

const HINT_HEADER: usize = 64;
/// Fixed bytes per entry before the key.
const ENTRY_FIXED: usize = 4 + 8 + 4 + 1 + 4 + 8 + 8;

pub use crate::paths::hint_path;

/// A loaded hint: its header's figures, and its file, whose entries are
/// read a chunk at a time (`for_each`) instead of held in memory.
pub(crate) struct Hint {
    /// The data file length the hint describes; records after it are replayed.
    pub(crate) data_len: u64,
    pub(crate) max_cas: u64,
    pub(crate) live_bytes: u64,
    count: u64,
    file: Arc<dyn DataFile>,
    /// Bytes of entries: from the header to the CRC.
    entries_len: u64,
}

/// A walk over an index's entries, handing each to the visitor given.
pub(crate) type EachEntry<'a> = &'a mut dyn FnMut(&mut dyn FnMut(&[u8], Loc));

/// What a hint says of its data file besides the entries.
pub struct Covered {
    pub generation: u64,
    /// Bytes of the data file the entries describe.
    pub data_len: u64,
    pub max_cas: u64,
    pub live_bytes: u64,
}

/// Bytes of entries gathered before they are written: a hint is streamed to
/// its file, never held whole (10M entries of 8-byte keys make ~450 MB, which
/// closing a store used to allocate on top of its index).
const WRITE_CHUNK: usize = 1 << 20;

/// Writes a hint atomically (temporary file, sync, rename, directory sync),
/// `WRITE_CHUNK` bytes of entries at a time.
pub(crate) fn save(
    fs: &dyn FileSystem,
    path: &Path,
    covered: &Covered,
    each: EachEntry<'_>,
) -> Result<()> {
    save_in_chunks(fs, path, covered, each, WRITE_CHUNK)
}

fn save_in_chunks(
    fs: &dyn FileSystem,
    path: &Path,
    covered: &Covered,
    each: EachEntry<'_>,
    chunk: usize,
) -> Result<()> {
    let Covered {
        generation,
        data_len,
        max_cas,
        live_bytes,
    } = *covered;
    // Removed again if any step fails: a hint is written at close, often
    // on the very disk that filled up.
    let (mut tmp, f) = TmpFile::create(fs, path, tmpfile::PLAIN)?;
    // The header holds the number of entries, known after the walk: it is
    // written last, and the CRC (header first, then entries) is joined from
    // the CRCs of the two parts.
    f.write_at(&[0; HINT_HEADER], 0)?;
    let mut out = Entries {
        file: &*f,
        at: HINT_HEADER as u64,
        buf: Vec::with_capacity(chunk + ENTRY_FIXED + 64),
        chunk,
        crc: 0,
        count: 0,
        failed: None,
    };
    each(&mut |key, loc| out.push(key, loc));
    out.flush();
    if let Some(e) = out.failed {
        return Err(e);
    }
    let mut head = Vec::with_capacity(HINT_HEADER);
    head.extend_from_slice(HINT_MAGIC);
    for n in [generation, data_len, out.count, max_cas, live_bytes] {
        head.extend_from_slice(&n.to_le_bytes());
    }
    head.resize(HINT_HEADER, 0);
    let entries_len = (out.at - HINT_HEADER as u64) as usize;
    let crc = crc32c::crc32c_combine(crc32c::crc32c(&head), out.crc, entries_len);
    f.write_at(&head, 0)?;
    f.write_at(&crc.to_le_bytes(), out.at)?;
    f.sync()?;
    drop(f);
    tmp.rename_over(path)?
}

/// A hint's entries on their way to its file: buffered up to a chunk,
/// CRC'd as they are written. The walk that feeds it cannot fail, so the
/// first write error is kept and the rest of the entries are dropped.
struct Entries<'f> {
    file: &'f dyn DataFile,
    /// File offset of the next write: the entries written so far end there.
    at: u64,
    buf: Vec<u8>,
    chunk: usize,
    /// CRC of the entries written so far.
    crc: u32,
    count: u64,
    failed: Option<crate::status::Error>,
}

impl Entries<'_> {
    fn push(&mut self, key: &[u8], loc: Loc) {
        let b = &mut self.buf;
        b.extend_from_slice(&(key.len() as u32).to_le_bytes());
        b.extend_from_slice(&loc.offset.to_le_bytes());
        b.extend_from_slice(&loc.stored_len.to_le_bytes());
        b.push(loc.codec as u8);
        b.extend_from_slice(&loc.meta.flags.to_le_bytes());
        b.extend_from_slice(&loc.meta.expires_at.to_le_bytes());
        b.extend_from_slice(&loc.meta.cas.to_le_bytes());
        b.extend_from_slice(key);
        self.count += 1;
        if self.buf.len() >= self.chunk {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.buf.is_empty() || self.failed.is_some() {
            self.buf.clear();
            return;
        }
        match self.file.write_at(&self.buf, self.at) {
            Ok(()) => {
                self.crc = crc32c::crc32c_append(self.crc, &self.buf);
                self.at += self.buf.len() as u64;
            }
            Err(e) => self.failed = Some(e),
        }
        self.buf.clear();
    }
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
    save(fs, path, covered, &mut each)
}

/// Loads a hint if present and valid for the data file of `generation` and
/// `file_len`. It is read twice, a chunk at a time: once for its CRC, once
/// to check every entry, so that it is used whole or not at all.
pub(crate) fn load(
    fs: &dyn FileSystem,
    path: &Path,
    generation: u64,
    file_len: u64,
) -> Option<Hint> {
    load_in_chunks(fs, path, generation, file_len, READ_CHUNK)
}

/// Bytes of a hint read at a time.
const READ_CHUNK: usize = 1 << 20;

fn load_in_chunks(
    fs: &dyn FileSystem,
    path: &Path,
    generation: u64,
    file_len: u64,
    chunk: usize,
) -> Option<Hint> {
    if !fs.exists(path) {
        return None;
    }
    let file = fs.open(path, false, false).ok()?;
    let len = file.len().ok()?;
    let crc_at = len.checked_sub(4).filter(|&at| at >= HINT_HEADER as u64)?;
    let mut head = [0u8; HINT_HEADER];
    file.read_at(&mut head, 0).ok()?;
    let mut crc = [0u8; 4];
    file.read_at(&mut crc, crc_at).ok()?;
    let mut computed = crc32c::crc32c(&head);
    let mut buf = vec![0u8; chunk];
    let mut at = HINT_HEADER as u64;
    while at < crc_at {
        let n = (crc_at - at).min(chunk as u64) as usize;
        file.read_at(&mut buf[..n], at).ok()?;
        computed = crc32c::crc32c_append(computed, &buf[..n]);
        at += n as u64;
    }
    if read_u32(&crc, 0) != computed || &head[..8] != HINT_MAGIC {
        return None;
    }
    if read_u64(&head, 8) != generation {
        return None;
    }
    let data_len = read_u64(&head, 16);
    // Replay starts at `data_len`: below the file header it would read the
    // header as a torn record and truncate the whole file (fuzz: db_file_open).
    if data_len > file_len || data_len < FILE_HEADER_SIZE as u64 {
        return None;
    }
    let hint = Hint {
        data_len,
        max_cas: read_u64(&head, 32),
        live_bytes: read_u64(&head, 40),
        count: read_u64(&head, 24),
        file,
        entries_len: crc_at - HINT_HEADER as u64,
    };
    // Every entry is checked before any is handed out.
    hint.walk(chunk, &mut |_, _| {})?;
    Some(hint)
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
    /// Number of entries (as the header says, and no more than its
    /// entries' bytes can hold: it sizes an index before they are read).
    pub(crate) fn len(&self) -> usize {
        let most = self.entries_len / ENTRY_FIXED as u64;
        usize::try_from(self.count.min(most)).unwrap_or(usize::MAX)
    }

    /// Hands every entry to `f`, keys borrowed from a chunk of the file.
    /// `load` checked them all; false if the file could not be read again
    /// whole (an I/O error, or the file changed since), after `f` has seen
    /// the entries before that point.
    pub(crate) fn for_each(&self, f: &mut dyn FnMut(&[u8], Loc)) -> bool {
        self.walk(READ_CHUNK, f).is_some()
    }

    /// `for_each`, reading `chunk` bytes at a time; `None` when an entry is
    /// bad or the entries do not end exactly where the CRC starts.
    fn walk(&self, chunk: usize, f: &mut dyn FnMut(&[u8], Loc)) -> Option<()> {
        let end = HINT_HEADER as u64 + self.entries_len;
        let mut next_read = HINT_HEADER as u64;
        let mut buf: Vec<u8> = Vec::with_capacity(chunk);
        let mut at = 0;
        for _ in 0..self.count {
            // Read until the buffer holds the whole entry at `at`: its
            // fixed part, then its key (a key longer than a chunk grows the
            // buffer, up to what is left of the file).
            loop {
                let have = buf.len() - at;
                let need = match buf.get(at..at + ENTRY_FIXED) {
                    Some(fixed) => ENTRY_FIXED + read_u32(fixed, 0) as usize,
                    None => ENTRY_FIXED,
                };
                if have >= need {
                    break;
                }
                if next_read >= end {
                    return None;
                }
                buf.drain(..at);
                at = 0;
                let n = (end - next_read).min(chunk.max(need - have) as u64) as usize;
                let old = buf.len();
                buf.resize(old + n, 0);
                self.file.read_at(&mut buf[old..], next_read).ok()?;
                next_read += n as u64;
            }
            let (key, loc, next) = parse_entry(&buf, at, self.data_len)?;
            f(key, loc);
            at = next;
        }
        (at == buf.len() && next_read == end).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::SimFs;

    /// The location of a record of a 1-byte key, no metadata.
    fn loc(offset: u64, stored_len: u32) -> Loc {
        Loc {
            offset,
            key_len: 1,
            stored_len,
            codec: Codec::Raw,
            meta: Meta::default(),
            header_len: crate::format::head_len(1, stored_len, &Meta::default()) as u8,
        }
    }

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

    /// A hint written and read a few entries at a time (chunks far smaller
    /// than the hint) loads whole, with every entry and the header's
    /// figures; one flipped byte anywhere still makes it refused.
    #[test]
    fn a_hint_written_in_many_chunks_loads_whole() {
        let fs = SimFs::new();
        let path = Path::new("x.tkh.hint");
        let keys: Vec<Vec<u8>> = (0..1000u32)
            .map(|i| format!("key{i}").into_bytes())
            .collect();
        let loc_of = |i: usize| {
            let meta = Meta {
                flags: i as u32,
                expires_at: 0,
                cas: i as u64 + 1,
            };
            Loc {
                offset: 64 + 100 * i as u64,
                key_len: keys[i].len() as u32,
                stored_len: 8,
                codec: Codec::Raw,
                meta,
                header_len: crate::format::head_len(keys[i].len() as u32, 8, &meta) as u8,
            }
        };
        let mut each = |f: &mut dyn FnMut(&[u8], Loc)| {
            for (i, k) in keys.iter().enumerate() {
                f(k, loc_of(i));
            }
        };
        let cov = Covered {
            generation: 7,
            data_len: 200_000,
            max_cas: 1000,
            live_bytes: 42,
        };
        save_in_chunks(&*fs, path, &cov, &mut each, 100).unwrap();
        let want: Vec<(Vec<u8>, u64, u64)> = (0..1000)
            .map(|i| (keys[i].clone(), loc_of(i).offset, loc_of(i).meta.cas))
            .collect();
        // Read back in chunks smaller than an entry, of a few entries, and
        // of the whole file.
        for chunk in [7, 100, READ_CHUNK] {
            let hint = load_in_chunks(&*fs, path, 7, 200_000, chunk).expect("the hint loads");
            assert_eq!(
                (hint.len(), hint.max_cas, hint.live_bytes),
                (1000, 1000, 42)
            );
            let mut got = Vec::new();
            hint.walk(chunk, &mut |k, l| {
                got.push((k.to_vec(), l.offset, l.meta.cas))
            })
            .expect("a whole walk");
            assert_eq!(got, want, "chunk {chunk}");
        }

        let f = fs.open(path, true, false).unwrap();
        let mut byte = [0u8];
        f.read_at(&mut byte, 5000).unwrap();
        f.write_at(&[byte[0] ^ 1], 5000).unwrap();
        assert!(load(&*fs, path, 7, 200_000).is_none());
    }

    /// A hint whose CRC is right but whose entry claims a 4 GiB key is
    /// refused (the walk reads what is left of the file, finds it short
    /// of the key, and stops).
    #[test]
    fn a_valid_crc_over_an_entry_claiming_a_huge_key_is_refused() {
        let fs = SimFs::new();
        let path = Path::new("x.tkh.hint");
        save_entries(&*fs, path, &covered(200), &[(&b"k"[..], loc(64, 1))]).unwrap();
        assert!(load(&*fs, path, 7, 200).is_some());
        let mut b = fs.contents(path).unwrap();
        b[HINT_HEADER..HINT_HEADER + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let body = b.len() - 4;
        let crc = crc32c::crc32c(&b[..body]);
        b[body..].copy_from_slice(&crc.to_le_bytes());
        fs.put_contents(path, b);
        assert!(load(&*fs, path, 7, 200).is_none());
    }
}
