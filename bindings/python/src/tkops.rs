//! tkrzw-python's DBM calls that the engine has no one method for, built on
//! its atomic primitives (`process`, `compare_exchange(_multi)`): Increment
//! with `INT64MIN`, SetAndGet, CompareExchangeAndGet, Rekey, PopFirst,
//! PushLast, AppendMulti and Export. `DBM` and `AsyncDBM` both call these.

use crate::ops::Want;
use crate::status::{Status, DUPLICATION_ERROR, NOT_FOUND_ERROR};
use bytes::Bytes;
use memstored_engine::{Action, Db, Error};

type Res<T> = Result<T, Status>;

/// The value of `key`, or None; a read error is the status.
fn current(db: &Db, key: &[u8]) -> Res<Option<Bytes>> {
    Ok(db.get_record(key)?.map(|r| r.value))
}

/// tkrzw's Increment: adds `inc` (stored as decimal text here, where Tkrzw
/// stores 8 big-endian bytes). `i64::MIN` reads the current value (or
/// `init` when absent) and changes nothing, as Tkrzw's does.
pub fn increment(db: &Db, key: &[u8], inc: i64, init: i64) -> Res<i64> {
    if inc != i64::MIN {
        return Ok(db.increment(key, inc, init)?);
    }
    match current(db, key)? {
        None => Ok(init),
        Some(v) => std::str::from_utf8(&v)
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .ok_or_else(|| Status::from(Error::NotNumeric)),
    }
}

/// tkrzw's SetAndGet: stores `value` (unless the record exists and not
/// `overwrite`: DUPLICATION_ERROR) and gives the old value either way.
pub fn set_and_get(db: &Db, key: &[u8], value: &[u8], overwrite: bool) -> (Status, Option<Bytes>) {
    let v = Bytes::copy_from_slice(value);
    let r = db.process(key, |cur| {
        let old = cur.map(|r| r.value.clone());
        let action = match cur {
            Some(_) if !overwrite => Action::Keep,
            _ => Action::Put {
                value: v,
                flags: cur.map_or(0, |r| r.meta.flags),
                expires_at: cur.map_or(0, |r| r.meta.expires_at),
            },
        };
        Ok((action, old))
    });
    match r {
        Ok((Some(old), _)) if !overwrite => (
            Status::new(DUPLICATION_ERROR, "the record exists"),
            Some(old),
        ),
        Ok((old, _)) => (Status::ok(), old),
        Err(e) => (Status::from(e), None),
    }
}

/// tkrzw's CompareExchangeAndGet: the exchange, and the value the record
/// held before it (None when absent), whether the exchange happened or not.
pub fn compare_exchange_and_get(
    db: &Db,
    key: &[u8],
    expected: Want,
    desired: Want,
) -> (Status, Option<Bytes>) {
    let r = db.process(key, |cur| {
        let matched = match (expected, cur) {
            (Want::Absent, None) | (Want::Any, Some(_)) => true,
            (Want::Value(v), Some(r)) => &r.value[..] == v,
            _ => false,
        };
        let action = match (matched, desired, cur) {
            (false, _, _) | (true, Want::Any, _) | (true, Want::Absent, None) => Action::Keep,
            (true, Want::Absent, Some(_)) => Action::Remove,
            (true, Want::Value(v), _) => Action::Put {
                value: Bytes::copy_from_slice(v),
                flags: cur.map_or(0, |r| r.meta.flags),
                expires_at: cur.map_or(0, |r| r.meta.expires_at),
            },
        };
        Ok((action, (matched, cur.map(|r| r.value.clone()))))
    });
    match r {
        Ok(((true, old), _)) => (Status::ok(), old),
        Ok(((false, old), _)) => (crate::ops::mismatch(), old),
        Err(e) => (Status::from(e), None),
    }
}

/// Whether a failed multi-record exchange lost a race (retry) rather than
/// found a real mismatch.
fn raced(e: &Error) -> bool {
    matches!(e, Error::ValueMismatch(_))
}

/// tkrzw's Rekey: moves (or with `copying`, copies) the record of `old` to
/// `new`, atomically over both keys. DUPLICATION_ERROR when `new` exists
/// and not `overwrite`; NOT_FOUND_ERROR when `old` is absent.
pub fn rekey(db: &Db, old: &[u8], new: &[u8], overwrite: bool, copying: bool) -> Res<()> {
    loop {
        let Some(value) = current(db, old)? else {
            return Err(Status::new(NOT_FOUND_ERROR, "no record of the old key"));
        };
        if old == new {
            return Ok(());
        }
        let there = current(db, new)?;
        if there.is_some() && !overwrite {
            return Err(Status::new(DUPLICATION_ERROR, "the new key exists"));
        }
        let expected = [(old, Some(&value[..])), (new, there.as_deref())];
        let mut desired = vec![(new, Some(&value[..]))];
        if !copying {
            desired.push((old, None));
        }
        match db.compare_exchange_multi(&expected, &desired) {
            Err(e) if raced(&e) => continue,
            r => return Ok(r?),
        }
    }
}

/// tkrzw's PopFirst: removes the first record (any record of a hash
/// database) and returns it; NOT_FOUND_ERROR when there is none. A record
/// another thread changed meanwhile is retried, so each pop takes a record once.
pub fn pop_first(db: &Db) -> Res<(Vec<u8>, Bytes)> {
    loop {
        let mut c = db.cursor();
        c.first()?;
        let k = match c.key() {
            Err(Error::NotFound(_)) => return Err(Status::new(NOT_FOUND_ERROR, "no record")),
            r => r?,
        };
        let Some(v) = current(db, &k)? else { continue };
        drop(c);
        match db.compare_exchange(&k, Some(&v), None) {
            Ok(()) => return Ok((k, v)),
            Err(e) if raced(&e) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// tkrzw's PushLast: stores `value` under the 8-byte big-endian key of
/// `wtime` (seconds; negative: now) times 10^8, the next free number if taken.
pub fn push_last(db: &Db, value: &[u8], wtime: f64) -> Res<Vec<u8>> {
    let wtime = if wtime < 0.0 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    } else {
        wtime
    };
    let base = (wtime * 100_000_000.0) as i64;
    for seq in 0.. {
        let key = base.wrapping_add(seq).to_be_bytes();
        match db.set(&key, value, false) {
            Err(Error::Duplication(_)) => continue,
            r => return r.map(|()| key.to_vec()).map_err(Status::from),
        }
    }
    unreachable!("an i64 sequence does not end")
}

/// tkrzw's AppendMulti: `Append` of each record (not atomic across keys,
/// as in Tkrzw); the first failure is the status.
pub fn append_multi(db: &Db, delim: &[u8], records: &[(Vec<u8>, Vec<u8>)]) -> Res<()> {
    for (k, v) in records {
        db.append(k, v, delim)?;
    }
    Ok(())
}

/// tkrzw's Export: every record of `src` stored into `dest` (overwriting).
pub fn export(src: &Db, dest: &Db) -> Res<()> {
    let mut c = src.cursor();
    c.first()?;
    while let Some((k, v)) = c.step()? {
        dest.set(&k, &v, true)?;
    }
    Ok(())
}

/// `PATH-00003-of-00010` for shard 3 of 10, `PATH` for a single shard:
/// the engine's (and Tkrzw's) names of shard files.
fn shard_file(path: &str, i: usize, n: usize) -> String {
    if n == 1 {
        path.to_string()
    } else {
        format!("{path}-{i:05}-of-{n:05}")
    }
}

/// tkrzw's CopyFileData: a consistent copy of the database's files at
/// `dest` (shards: `dest-0000i-of-0000n`), which opens as the database
/// does. Written as the engine's online backup beside the database, then
/// moved into place (copied where `dest` is on another file system).
pub fn copy_file_data(db: &Db, dest: &str, sync_hard: bool) -> Res<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let suffix = format!(
        "copy-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let name = db.backup(&suffix)?;
    let base = name.split('#').next().unwrap_or(&name);
    let n = db.shard_count();
    for i in 0..n {
        let (from, to) = (shard_file(base, i, n), shard_file(dest, i, n));
        let moved = std::fs::rename(&from, &to).or_else(|_| {
            std::fs::copy(&from, &to)?;
            std::fs::remove_file(&from)
        });
        let synced = moved.and_then(|()| match sync_hard {
            true => std::fs::File::open(&to)?.sync_all(),
            false => Ok(()),
        });
        synced.map_err(|e| Status::from(Error::System(format!("{to}: {e}"))))?;
    }
    Ok(())
}

/// tkrzw's GetFileSize: the engine's figure for its log files, else (an
/// in-memory engine saved to a path, as Tkrzw's TinyDBM is) the size of
/// its files on disk as last saved; 0 without files.
pub fn file_size(db: &Db) -> u64 {
    let live = db.stats().file_size;
    if live > 0 || !db.name().kind.has_file() {
        return live;
    }
    let n = db.shard_count();
    (0..n)
        .filter_map(|i| std::fs::metadata(shard_file(&db.name().path, i, n)).ok())
        .map(|m| m.len())
        .sum()
}

/// tkrzw's GetTimestamp: when the database's (first) file was last
/// written, in seconds since the epoch; now for a database without a file.
pub fn timestamp(db: &Db) -> f64 {
    let file = shard_file(&db.name().path, 0, db.shard_count());
    let when = std::fs::metadata(file)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| std::time::SystemTime::now());
    when.duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `code`, for tests.
#[cfg(test)]
fn code<T>(r: &Res<T>) -> i32 {
    r.as_ref().err().map_or(0, Status::code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::INFEASIBLE_ERROR;

    #[test]
    fn increment_by_int64min_reads_without_storing() {
        let db = Db::open("*", true).unwrap();
        assert_eq!(increment(&db, b"n", i64::MIN, 7).unwrap(), 7);
        assert!(db.get_record(b"n").unwrap().is_none());
        assert_eq!(increment(&db, b"n", 2, 10000).unwrap(), 10002);
        assert_eq!(increment(&db, b"n", i64::MIN, 0).unwrap(), 10002);
        assert_eq!(increment(&db, b"n", 2, 0).unwrap(), 10004);
    }

    #[test]
    fn rekey_moves_copies_and_refuses() {
        let db = Db::open("+", true).unwrap();
        db.set(b"a", b"1", true).unwrap();
        db.set(b"b", b"2", true).unwrap();
        assert_eq!(
            code(&rekey(&db, b"a", b"b", false, false)),
            DUPLICATION_ERROR
        );
        assert_eq!(code(&rekey(&db, b"zz", b"y", true, false)), NOT_FOUND_ERROR);
        rekey(&db, b"a", b"c", true, true).unwrap();
        assert_eq!(&db.get(b"a").unwrap()[..], b"1");
        rekey(&db, b"a", b"b", true, false).unwrap();
        assert!(db.get_record(b"a").unwrap().is_none());
        assert_eq!(&db.get(b"b").unwrap()[..], b"1");
    }

    #[test]
    fn queue_pops_in_push_order() {
        let db = Db::open("+", true).unwrap();
        assert_eq!(push_last(&db, b"x", 0.0).unwrap(), vec![0u8; 8]);
        assert_eq!(push_last(&db, b"y", 0.0).unwrap(), 1i64.to_be_bytes());
        assert_eq!(pop_first(&db).unwrap().1, Bytes::from_static(b"x"));
        assert_eq!(pop_first(&db).unwrap().1, Bytes::from_static(b"y"));
        assert_eq!(code(&pop_first(&db)), NOT_FOUND_ERROR);
    }

    #[test]
    fn set_and_get_and_compare_exchange_and_get_give_the_old_value() {
        let db = Db::open("*", true).unwrap();
        let (st, old) = set_and_get(&db, b"k", b"a", false);
        assert!(st.code() == 0 && old.is_none());
        let (st, old) = set_and_get(&db, b"k", b"b", false);
        assert_eq!(
            (st.code(), old.as_deref()),
            (DUPLICATION_ERROR, Some(&b"a"[..]))
        );
        let (st, old) = compare_exchange_and_get(&db, b"k", Want::Value(b"x"), Want::Absent);
        assert_eq!(
            (st.code(), old.as_deref()),
            (INFEASIBLE_ERROR, Some(&b"a"[..]))
        );
        let (st, old) = compare_exchange_and_get(&db, b"k", Want::Any, Want::Absent);
        assert_eq!((st.code(), old.as_deref()), (0, Some(&b"a"[..])));
        assert!(db.get_record(b"k").unwrap().is_none());
    }
}
