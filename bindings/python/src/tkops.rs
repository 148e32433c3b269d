//! tkrzw-python's DBM calls as tkrzw-python shapes them over the engine's:
//! Increment with `INT64MIN`, SetAndGet, CompareExchangeAndGet, PopFirst
//! and AppendMulti. `DBM` and `AsyncDBM` both call these.

use crate::ops::Want;
use crate::status::{Status, DUPLICATION_ERROR};
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

/// tkrzw's CompareExchangeAndGet (the engine's): the exchange, and the
/// value the record held before it (None when absent) either way.
pub fn compare_exchange_and_get(
    db: &Db,
    key: &[u8],
    expected: Want,
    desired: Want,
) -> (Status, Option<Bytes>) {
    match db.compare_exchange_and_get(key, expected.cas(), desired.cas()) {
        Ok((true, old)) => (Status::ok(), old),
        Ok((false, old)) => (crate::ops::mismatch(), old),
        Err(e) => (Status::from(e), None),
    }
}

/// tkrzw's PopFirst (the engine's, without waiting): the first record
/// (any of a hash database) taken away; NOT_FOUND_ERROR when there is none.
pub fn pop_first(db: &Db) -> Res<(Vec<u8>, Bytes)> {
    Ok(db.pop_first(0.0)?)
}

/// tkrzw's AppendMulti over owned records.
pub fn append_multi(db: &Db, delim: &[u8], records: &[(Vec<u8>, Vec<u8>)]) -> Res<()> {
    let refs: Vec<(&[u8], &[u8])> = records.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    Ok(db.append_multi(&refs, delim)?)
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
