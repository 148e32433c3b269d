//! Engine calls that need more than one engine method: compare-exchange with
//! tkrzw's `ANY_DATA`, and the multi-record pairs of tkrzw-python.

use crate::status::{Status, INFEASIBLE_ERROR};
use bytes::Bytes;
use memstored_engine::{CasValue, Db};

/// tkrzw's marker for "any value" (expected) or "leave as is" (desired).
pub const ANY_DATA: &[u8] = b"\x00[ANY]\x00";

/// What a compare-exchange argument asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want<'a> {
    /// `None` in Python: no record (expected) or remove it (desired).
    Absent,
    /// `ANY_DATA`: any record (expected) or no change (desired).
    Any,
    Value(&'a [u8]),
}

impl<'a> Want<'a> {
    pub fn of(v: Option<&'a [u8]>) -> Want<'a> {
        match v {
            None => Want::Absent,
            Some(ANY_DATA) => Want::Any,
            Some(v) => Want::Value(v),
        }
    }

    /// The engine's form of the same wish.
    pub fn cas(self) -> CasValue<'a> {
        match self {
            Want::Absent => CasValue::Absent,
            Want::Any => CasValue::Any,
            Want::Value(v) => CasValue::Value(v),
        }
    }
}

pub(crate) fn mismatch() -> Status {
    Status::new(
        INFEASIBLE_ERROR,
        "the record does not hold the expected value",
    )
}

/// tkrzw's CompareExchange, `ANY_DATA` included (the engine's
/// `compare_exchange_and_get`, atomic under the record's lock).
pub fn compare_exchange(db: &Db, key: &[u8], expected: Want, desired: Want) -> Result<(), Status> {
    match db.compare_exchange_and_get(key, expected.cas(), desired.cas())? {
        (true, _) => Ok(()),
        (false, _) => Err(mismatch()),
    }
}

/// A key and its expected or desired value, as the engine takes them.
type Pair<'a> = (&'a [u8], Option<&'a [u8]>);

/// A key and an owned value (None: absent).
type Owned = (Vec<u8>, Option<Bytes>);

fn value_of(db: &Db, key: &[u8]) -> Result<Option<Bytes>, Status> {
    Ok(db.get_record(key)?.map(|r| r.value))
}

/// The pairs with every `ANY_DATA` replaced by the value the record holds
/// now: an expected `ANY_DATA` of an absent record fails at once, and a
/// desired one keeps the value the exchange expects (or reads).
fn resolve(
    db: &Db,
    expected: &[(Vec<u8>, Want)],
    desired: &[(Vec<u8>, Want)],
) -> Result<(Vec<Owned>, Vec<Owned>), Status> {
    let mut exp = Vec::with_capacity(expected.len());
    for (k, w) in expected {
        let v = match w {
            Want::Absent => None,
            Want::Value(v) => Some(Bytes::copy_from_slice(v)),
            Want::Any => Some(value_of(db, k)?.ok_or_else(mismatch)?),
        };
        exp.push((k.clone(), v));
    }
    let mut des = Vec::with_capacity(desired.len());
    for (k, w) in desired {
        let v = match w {
            Want::Absent => None,
            Want::Value(v) => Some(Bytes::copy_from_slice(v)),
            Want::Any => match exp.iter().find(|(e, _)| e == k) {
                Some((_, v)) => v.clone(),
                None => {
                    let v = value_of(db, k)?;
                    exp.push((k.clone(), v.clone()));
                    v
                }
            },
        };
        des.push((k.clone(), v));
    }
    Ok((exp, des))
}

fn borrowed(pairs: &[Owned]) -> Vec<Pair<'_>> {
    pairs.iter().map(|(k, v)| (&k[..], v.as_deref())).collect()
}

/// Whether every expectation that is not `ANY_DATA` holds now.
fn literals_hold(db: &Db, expected: &[(Vec<u8>, Want)]) -> Result<bool, Status> {
    for (k, w) in expected {
        let now = value_of(db, k)?;
        let holds = match w {
            Want::Absent => now.is_none(),
            Want::Value(v) => now.as_deref() == Some(*v),
            Want::Any => now.is_some(),
        };
        if !holds {
            return Ok(false);
        }
    }
    Ok(true)
}

/// tkrzw's CompareExchangeMulti over the engine's atomic multi-shard call.
/// The engine has no `ANY_DATA`: it is replaced by the value read, and a
/// mismatch that only a write in between caused is tried again.
pub fn compare_exchange_multi(
    db: &Db,
    expected: &[(Vec<u8>, Want)],
    desired: &[(Vec<u8>, Want)],
) -> Result<(), Status> {
    loop {
        let (exp, des) = resolve(db, expected, desired)?;
        match db.compare_exchange_multi(&borrowed(&exp), &borrowed(&des)) {
            Err(memstored_engine::Error::ValueMismatch(_)) => {
                if !literals_hold(db, expected)? {
                    return Err(mismatch());
                }
            }
            r => return r.map_err(Status::from),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_data_matches_any_record_and_keeps_it() {
        let db = Db::open("*", true).unwrap();
        let code = |r: Result<(), Status>| Status::of(r).code();
        assert_eq!(
            code(compare_exchange(&db, b"k", Want::Any, Want::Value(b"v"))),
            INFEASIBLE_ERROR
        );
        db.set(b"k", b"old", true).unwrap();
        assert_eq!(
            code(compare_exchange(&db, b"k", Want::Any, Want::Value(b"new"))),
            0
        );
        assert_eq!(&db.get(b"k").unwrap()[..], b"new");
        assert_eq!(
            code(compare_exchange(&db, b"k", Want::Value(b"new"), Want::Any)),
            0
        );
        assert_eq!(&db.get(b"k").unwrap()[..], b"new");
        assert_eq!(
            code(compare_exchange(&db, b"k", Want::Any, Want::Absent)),
            0
        );
        assert!(db.get(b"k").is_err());
        assert_eq!(Want::of(Some(ANY_DATA)), Want::Any);
    }
}
