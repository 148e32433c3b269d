//! What memstored-engine must do with hostile input: a store name of any
//! bytes parses or is refused with `InvalidArgument`; a database file of any
//! bytes opens (recovering what it can) or is refused with a typed error,
//! never a panic or an allocation sized by a corrupt length field; and what a
//! writable open leaves behind opens again.
//!
//! Shared by the cargo-fuzz targets (`fuzz/fuzz_targets/db_*.rs`) and the
//! stable proptests (`crates/engine/tests/fuzz_smoke.rs` includes this file
//! with `#[path]`).

use memstored_engine::format::{
    FileHeader, FileKind, RecordHeader, FILE_HEADER_SIZE, HINT_MAGIC, MAGIC,
};
use memstored_engine::io::{FileSystem, SimFs};
use memstored_engine::{restore, Db, DbName, EngineKind, Error};
use std::path::Path;
use std::sync::Arc;

/// Most records iterated per open, so one input stays cheap.
const MAX_RECORDS: usize = 10_000;

/// `DbName::parse` on any string; in-memory names are opened too.
pub fn db_name(data: &[u8]) {
    let name = String::from_utf8_lossy(data);
    let parsed = DbName::parse(&name);
    match &parsed {
        Ok(n) => {
            // 0: Tkrzw's "as many as the files have", resolved at open
            // (file engines only; an in-memory name says 1).
            assert!(n.num_shards >= 1 || (n.kind.has_file() && n.names_shards()));
            assert!(!n.kind.has_file() || !n.path.is_empty());
            assert!(name.starts_with(&n.path), "{:?} is not a prefix", n.path);
            assert!(!n.path.contains('#'));
            for word in &n.ignored {
                let key = word.split('=').next().unwrap_or_default();
                // A cap on an engine without caps is reported by its
                // canonical name, whichever alias (Tkrzw's or KC's) gave it.
                let aliases: &[&str] = match key {
                    "cap_mem_size" => &["cap_mem_size", "capsiz"],
                    "cap_rec_num" => &["cap_rec_num", "capnum", "capcnt"],
                    k => &[k][..],
                };
                assert!(
                    aliases.iter().any(|a| name.contains(a)),
                    "{word} ignored but not given"
                );
            }
        }
        Err(Error::InvalidArgument(msg)) => assert!(!msg.is_empty()),
        Err(e) => panic!("DbName::parse({name:?}) failed with {e:?}"),
    }
    // Parsing is a function of the text alone.
    assert_eq!(parsed, DbName::parse(&name));
    let Ok(n) = parsed else { return };
    if matches!(n.kind, EngineKind::MemHash | EngineKind::MemTree) {
        // Nothing on disk: any name that parses must open and work.
        let db = match Db::open(&name, true) {
            Ok(db) => db,
            Err(Error::InvalidArgument(_)) => return,
            Err(e) => panic!("Db::open({name:?}) failed with {e:?}"),
        };
        match db.set(b"k", b"v", true) {
            Ok(()) => assert_eq!(db.get(b"k").as_deref().ok(), Some(&b"v"[..])),
            // A cache too small for even one record refuses it.
            Err(Error::TooLarge { .. }) => {}
            Err(e) => panic!("set on {name:?} failed with {e:?}"),
        }
        let _ = db.close();
    }
}

/// How the first byte of a `db_file_open` input shapes the file.
struct Mode {
    /// `.tkh`, `.tkt` or `.tkmt`.
    ext: &'static str,
    file_kind: FileKind,
    /// Prepend a valid file header: the rest of the input is records.
    valid_header: bool,
    /// Recompute the CRC of every plausible record, so damage goes past
    /// the checksums into the lengths, codecs and compressed values.
    fix_crcs: bool,
    /// Split a hint file off the end of the input (logs only).
    hint: bool,
    writable: bool,
}

impl Mode {
    fn new(b: u8) -> Mode {
        let (ext, file_kind) = match b % 3 {
            0 => ("tkh", FileKind::HashLog),
            1 => ("tkt", FileKind::TreeLog),
            _ => ("tkmt", FileKind::MemSnapshot),
        };
        let b = b / 3;
        Mode {
            ext,
            file_kind,
            valid_header: b & 1 != 0,
            fix_crcs: b & 2 != 0,
            hint: b & 4 != 0 && file_kind != FileKind::MemSnapshot,
            writable: b & 8 != 0,
        }
    }
}

/// Bytes of a hint entry before its key: key length, offset, stored
/// length, codec, flags, expires_at, cas.
const HINT_ENTRY_FIXED: usize = 4 + 8 + 4 + 1 + 4 + 8 + 8;

/// Name parameters for every database the target opens.
const SMALL: &str = "#num_buckets=16";

const GENERATION: u64 = 0x0123_4567_89ab_cdef;

/// Builds a database file (and maybe its hint) from fuzz bytes, opens it,
/// reads every record, writes if writable, reopens, and salvages it.
pub fn db_file_open(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let mode = Mode::new(sel);
    let (mut file, mut hint) = if mode.hint && rest.len() >= 2 {
        let hint_len = usize::from(u16::from_le_bytes([rest[0], rest[1]]));
        let body = &rest[2..];
        let cut = body.len().saturating_sub(hint_len);
        (body[..cut].to_vec(), Some(body[cut..].to_vec()))
    } else {
        (rest.to_vec(), None)
    };
    if mode.valid_header {
        let header = FileHeader {
            kind: mode.file_kind,
            generation: GENERATION,
            created_at: 0,
            max_cas: 0,
        };
        file.splice(0..0, header.encode());
    }
    if mode.fix_crcs {
        fix_record_crcs(&mut file);
    }
    if let (Some(h), true) = (hint.as_mut(), mode.valid_header) {
        fix_hint(h, file.len() as u64);
    }

    let fs = SimFs::new();
    let path = format!("x.{}", mode.ext);
    fs.put_contents(Path::new(&path), file.clone());
    if let Some(h) = &hint {
        fs.put_contents(Path::new(&format!("{path}.hint")), h.clone());
    }
    let dynfs: Arc<dyn FileSystem> = fs.clone();
    // A small index pre-size: the default (1M buckets) costs ~200 ms per
    // open under AddressSanitizer and would leave the fuzzer at ~40 exec/s.
    let name = format!("{path}{SMALL}");

    let keys = match Db::open_with_fs(&name, mode.writable, dynfs.clone()) {
        Ok(db) => {
            let keys = read_all(&db);
            if mode.writable {
                // Recovery truncated any torn tail; what is left takes writes
                // and, once closed, opens again with the new record in it.
                let wrote = db.set(b"fuzz-key", b"fuzz-value", true).is_ok();
                let closed = db.close().is_ok();
                drop(db);
                if wrote && closed {
                    let db = Db::open_with_fs(&name, false, dynfs.clone())
                        .unwrap_or_else(|e| panic!("reopen after a clean close failed: {e}"));
                    assert_eq!(
                        db.get(b"fuzz-key").as_deref().ok(),
                        Some(&b"fuzz-value"[..]),
                        "a record written and closed is lost"
                    );
                    read_all(&db);
                }
            }
            Some(keys)
        }
        Err(e) => {
            typed(&e);
            None
        }
    };
    let _ = keys;

    // Salvage the original bytes into a fresh database.
    let src = format!("s.{}", mode.ext);
    fs.put_contents(Path::new(&src), file);
    let dst = format!("d.tkt{SMALL}");
    match restore::restore_with_fs(&src, &dst, dynfs.clone()) {
        Ok(_) => {
            let db = Db::open_with_fs(&dst, false, dynfs)
                .unwrap_or_else(|e| panic!("a restored database does not open: {e}"));
            read_all(&db);
        }
        Err(e) => typed(&e),
    }
}

/// Every error out of a damaged file says what it is (and is not a panic).
fn typed(e: &Error) {
    assert!(!e.to_string().is_empty());
    assert!(!e.status_name().is_empty());
}

/// Iterates every record and reads each key back; returns the key count.
fn read_all(db: &Db) -> usize {
    let mut cursor = db.cursor();
    let mut n = 0;
    if cursor.first().is_err() {
        return 0;
    }
    while n < MAX_RECORDS {
        match cursor.step() {
            Ok(Some((key, _value))) => {
                let _ = db.get_record(&key);
                n += 1;
            }
            Ok(None) => break,
            Err(e) => {
                typed(&e);
                break;
            }
        }
    }
    let _ = db.count();
    let _ = db.inspect();
    n
}

/// Recomputes the CRC of each record whose header is plausible and fits.
fn fix_record_crcs(file: &mut [u8]) {
    let mut at = FILE_HEADER_SIZE.min(file.len());
    // Skip a leading file header only if there is one.
    if !file.starts_with(MAGIC) {
        at = 0;
    }
    while let Some(h) = RecordHeader::decode(&file[at..]) {
        let total = h.total_len() as usize;
        if total > file.len() - at {
            return;
        }
        let crc = crc32c::crc32c(&file[at + 4..at + total]);
        file[at..at + 4].copy_from_slice(&crc.to_le_bytes());
        at += total;
    }
}

/// Gives a hint the magic, the data file's generation, a covered length that
/// fits, a true entry count and a correct CRC, so its entries are what gets tested.
fn fix_hint(hint: &mut Vec<u8>, file_len: u64) {
    if hint.len() < 64 + 4 {
        hint.resize(64 + 4, 0);
    }
    hint[..8].copy_from_slice(HINT_MAGIC);
    hint[8..16].copy_from_slice(&GENERATION.to_le_bytes());
    let covered = u64::from_le_bytes(hint[16..24].try_into().unwrap_or_default());
    let covered = if file_len == 0 {
        0
    } else {
        covered % (file_len + 1)
    };
    hint[16..24].copy_from_slice(&covered.to_le_bytes());
    // Count the whole entries (26 fixed bytes + key) and drop the rest.
    let mut at = 64;
    let mut count = 0u64;
    let end = hint.len() - 4;
    while end - at >= HINT_ENTRY_FIXED {
        let key_len = u32::from_le_bytes(hint[at..at + 4].try_into().unwrap_or_default());
        let next = at + HINT_ENTRY_FIXED + key_len as usize;
        if next > end {
            break;
        }
        at = next;
        count += 1;
    }
    hint.truncate(at + 4);
    hint[24..32].copy_from_slice(&count.to_le_bytes());
    let body = hint.len() - 4;
    let crc = crc32c::crc32c(&hint[..body]);
    hint[body..].copy_from_slice(&crc.to_le_bytes());
}
