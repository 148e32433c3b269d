//! memcached's restartable cache (`-e FILE`, `--memory-file`): stopped
//! gracefully (SIGUSR1, or `shutdown graceful`), the server writes every
//! live record to FILE and its summary to `FILE.meta`; started again with
//! the same `-e`, it reads them back before it serves, so a restart (an
//! upgrade) does not empty the cache. memcached keeps its items in a
//! memory-mapped FILE all along; memstored's cache lives in its own
//! segments, so it writes FILE once, at the stop.
//!
//! Why `.meta` last: it is written (and renamed into place) only after
//! FILE is complete and synced, so its presence says FILE is whole. It is
//! removed once read, as memcached invalidates its own: a server that dies
//! later without a graceful stop starts cold, never from an old FILE. A
//! `.meta` that cannot be read refuses the start, as memcached's does.
//!
//! FILE, byte by byte: the line `memstored memory file 1\n`, then per
//! record its key length, value length and flags (u32 each, little-endian),
//! its expiry (u64, Unix seconds, 0: never) and CAS (u64), the key, the
//! value. Nothing is written through a symlink, and neither file replaces
//! one memstored did not write (FILE must begin with that line).

use crate::state::server::Server;
use memstored_engine::{StoreMode, StoreOptions};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

const MAGIC: &[u8] = b"memstored memory file 1\n";
const META_HEAD: &str = "memstored_memory_file 1";
/// A record's fixed part: key and value lengths, flags, expiry, CAS.
const HEAD: usize = 4 + 4 + 4 + 8 + 8;

/// Why a memory file was not read or written.
#[derive(Debug, thiserror::Error)]
pub enum MemoryFileError {
    #[error("memory file {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("memory file {path}: {why}")]
    Invalid { path: String, why: String },
}

/// What a restart read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loaded {
    pub records: u64,
    /// Records left out: expired while the server was stopped, or too
    /// large for this start's cache.
    pub dropped: u64,
    /// memcached's `hash_power_level` when the file was written.
    pub hash_power: u32,
}

fn meta_path(path: &Path) -> PathBuf {
    with_suffix(path, ".meta")
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> MemoryFileError + '_ {
    move |source| MemoryFileError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn invalid(path: &Path, why: impl Into<String>) -> MemoryFileError {
    MemoryFileError::Invalid {
        path: path.display().to_string(),
        why: why.into(),
    }
}

/// Reads back what a graceful stop wrote to `path`, if its `.meta` is
/// there (`None`: a cold start). A `.meta` or file that does not read
/// whole is an error: the start is refused.
pub fn load(srv: &Server, path: &Path) -> Result<Option<Loaded>, MemoryFileError> {
    let meta = meta_path(path);
    let text = match std::fs::read_to_string(&meta) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(&meta)(e)),
    };
    let summary = Summary::parse(&text).ok_or_else(|| {
        invalid(
            &meta,
            "not a memstored memory file summary (written by another program, or cut short)",
        )
    })?;
    let file = File::open(path).map_err(io_err(path))?;
    let len = file.metadata().map_err(io_err(path))?.len();
    if len != summary.bytes {
        return Err(invalid(
            path,
            format!("{len} bytes where its summary says {}", summary.bytes),
        ));
    }
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut magic = [0u8; MAGIC.len()];
    r.read_exact(&mut magic).map_err(io_err(path))?;
    if magic != MAGIC {
        return Err(invalid(path, "not a memstored memory file"));
    }
    let now = memstored_engine::now_secs();
    let mut loaded = Loaded {
        records: 0,
        dropped: 0,
        hash_power: summary.hash_power,
    };
    let mut head = [0u8; HEAD];
    // What the file has left after the magic line: no record may claim more
    // (a damaged length must not make the start allocate gigabytes).
    let mut left = len.saturating_sub(MAGIC.len() as u64);
    for _ in 0..summary.records {
        r.read_exact(&mut head).map_err(io_err(path))?;
        let u32_at =
            |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
        let u64_at = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&head[i..i + 8]);
            u64::from_le_bytes(w)
        };
        let (klen, vlen, flags) = (u32_at(0) as usize, u32_at(4) as usize, u32_at(8));
        let (expires_at, cas) = (u64_at(12), u64_at(20));
        let size = (HEAD + klen) as u64 + vlen as u64;
        if size > left {
            return Err(invalid(path, "a record runs past the end of the file"));
        }
        left -= size;
        let mut key = vec![0u8; klen];
        r.read_exact(&mut key).map_err(io_err(path))?;
        let mut value = vec![0u8; vlen];
        r.read_exact(&mut value).map_err(io_err(path))?;
        if expires_at != 0 && expires_at <= now {
            loaded.dropped += 1;
            continue;
        }
        let opts = StoreOptions {
            flags,
            expires_at,
            cas: None,
        };
        let cap = srv.cfg.max_item_size;
        match srv
            .db
            .store_capped(&key, value.into(), StoreMode::Set, opts, cap, Some(cas))
        {
            Ok(_) => loaded.records += 1,
            Err(e) => {
                tracing::debug!("memory file: a record left out: {e}");
                loaded.dropped += 1;
            }
        }
    }
    // Read: a later start without a graceful stop first must not use it.
    std::fs::remove_file(&meta).map_err(io_err(&meta))?;
    Ok(Some(loaded))
}

/// Writes every live record to `path`, then its `.meta` (module doc).
/// Returns how many records were written.
pub fn save(srv: &Server, path: &Path, hash_power: u32) -> Result<u64, MemoryFileError> {
    ensure_ours(path, |head| head.starts_with(MAGIC))?;
    ensure_ours(&meta_path(path), |head| {
        head.starts_with(META_HEAD.as_bytes())
    })?;
    let tmp = with_suffix(path, ".tmp");
    // A write cut short (a full disk) leaves nothing behind to fill it.
    let (records, bytes) = write_records(srv, &tmp).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    std::fs::rename(&tmp, path).map_err(io_err(path))?;
    let summary = Summary {
        records,
        bytes,
        hash_power,
    };
    let meta = meta_path(path);
    let meta_tmp = with_suffix(&meta, ".tmp");
    let mut f = create_new(&meta_tmp)?;
    f.write_all(summary.to_text().as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(io_err(&meta_tmp))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&meta_tmp);
        })?;
    std::fs::rename(&meta_tmp, &meta).map_err(io_err(&meta))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(records)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// Refuses to replace `path` unless it is absent or a regular file whose
/// start `ours` recognizes (one memstored wrote).
fn ensure_ours(path: &Path, ours: impl Fn(&[u8]) -> bool) -> Result<(), MemoryFileError> {
    let md = match std::fs::symlink_metadata(path) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(path)(e)),
    };
    if !md.file_type().is_file() {
        return Err(invalid(path, "not a regular file; left as it is"));
    }
    let mut head = vec![0u8; 64];
    let n = File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(io_err(path))?;
    if !ours(&head[..n]) {
        return Err(invalid(
            path,
            "not written by memstored; left as it is (move it away to use this path)",
        ));
    }
    Ok(())
}

/// A new file at `path`, never through a symlink; a stale one of ours
/// (a stop cut short) is replaced.
fn create_new(path: &Path) -> Result<File, MemoryFileError> {
    ensure_ours(path, |head| {
        head.starts_with(MAGIC) || head.starts_with(META_HEAD.as_bytes()) || head.is_empty()
    })?;
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(path)(e)),
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io_err(path))
}

/// Writes the live records to `tmp`, synced: their count and the file's bytes.
fn write_records(srv: &Server, tmp: &Path) -> Result<(u64, u64), MemoryFileError> {
    let file = create_new(tmp)?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let err = io_err(tmp);
    w.write_all(MAGIC).map_err(&err)?;
    let (mut records, mut bytes) = (0u64, MAGIC.len() as u64);
    let mut c = srv.db.cursor();
    let walk = c.first();
    let now = memstored_engine::now_secs();
    if walk.is_ok() {
        loop {
            // Expired ones, and ones removed since the cursor listed them, are left out.
            if let Ok((key, r)) = c.record() {
                let live = r.meta.expires_at == 0 || r.meta.expires_at > now;
                if let (true, Ok(klen), Ok(vlen)) =
                    (live, u32::try_from(key.len()), u32::try_from(r.value.len()))
                {
                    w.write_all(&klen.to_le_bytes())
                        .and_then(|()| w.write_all(&vlen.to_le_bytes()))
                        .and_then(|()| w.write_all(&r.meta.flags.to_le_bytes()))
                        .and_then(|()| w.write_all(&r.meta.expires_at.to_le_bytes()))
                        .and_then(|()| w.write_all(&r.meta.cas.to_le_bytes()))
                        .and_then(|()| w.write_all(&key))
                        .and_then(|()| w.write_all(&r.value))
                        .map_err(&err)?;
                    records += 1;
                    bytes += (HEAD + key.len() + r.value.len()) as u64;
                }
            }
            if c.next().is_err() {
                break;
            }
        }
    }
    let file = w.into_inner().map_err(|e| err(e.into_error()))?;
    file.sync_all().map_err(&err)?;
    Ok((records, bytes))
}

/// `FILE.meta`'s lines.
struct Summary {
    records: u64,
    bytes: u64,
    hash_power: u32,
}

impl Summary {
    fn to_text(&self) -> String {
        format!(
            "{META_HEAD}\nrecords {}\nbytes {}\nhash_power_level {}\n",
            self.records, self.bytes, self.hash_power
        )
    }

    fn parse(text: &str) -> Option<Summary> {
        let mut lines = text.lines();
        if lines.next()? != META_HEAD {
            return None;
        }
        let mut field = |name: &str| -> Option<u64> {
            let line = lines.next()?;
            line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok()
        };
        Some(Summary {
            records: field("records")?,
            bytes: field("bytes")?,
            hash_power: u32::try_from(field("hash_power_level")?).ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_read_back_and_others_do_not() {
        let s = Summary {
            records: 3,
            bytes: 99,
            hash_power: 17,
        };
        let back = Summary::parse(&s.to_text()).unwrap();
        assert_eq!((back.records, back.bytes, back.hash_power), (3, 99, 17));
        assert!(Summary::parse("").is_none());
        assert!(Summary::parse("restart_version 1\n").is_none());
        assert!(Summary::parse(&s.to_text().replace("bytes 99", "bytes x")).is_none());
    }
}
