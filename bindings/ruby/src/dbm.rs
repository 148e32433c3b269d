//! `Memstored::DBM`: one open database, shared by any number of Ruby
//! threads. Methods named `*_native` take arguments already shaped by
//! lib/memstored/dbm.rb (keyword parameters, hashes, splats).

use crate::convert::{self, out, owned, rstring, status, with_bytes};
use crate::gvl;
use bytes::Bytes;
use magnus::encoding::Index;
use magnus::{prelude::*, Error, RArray, RHash, RString, Ruby, Value};
use memstored_c::dbm::{increment_or_read, set_and_get};
use memstored_c::status::Failure;
use memstored_engine::name::with_params;
use memstored_engine::Db;
use parking_lot::RwLock;
use std::sync::Arc;

/// Values at least this large are stored with the GVL released: copying
/// them takes long enough that other threads should run meanwhile.
const LARGE_VALUE: usize = 1 << 20;

#[derive(Clone)]
pub struct Open {
    pub db: Arc<Db>,
    /// The encoding of result strings; None for binary.
    pub enc: Option<Index>,
}

/// A value read by `get` when it is small: copied onto the stack under the
/// shard's lock (no heap copy to make and free per get, as the engine's
/// `get` makes one); Ruby's string is made once the lock is released, since
/// allocating it may run the GC.
struct SmallValue {
    buf: [u8; SMALL_VALUE],
    len: usize,
}

/// Values up to this size are copied through a `SmallValue`.
const SMALL_VALUE: usize = 128;

impl Default for SmallValue {
    fn default() -> Self {
        SmallValue {
            buf: [0; SMALL_VALUE],
            len: 0,
        }
    }
}

impl SmallValue {
    /// Keeps `v` when it fits; else returns a copy of it.
    fn take(&mut self, v: &[u8]) -> Option<Vec<u8>> {
        if v.len() > SMALL_VALUE {
            return Some(v.to_vec());
        }
        self.buf[..v.len()].copy_from_slice(v);
        self.len = v.len();
        None
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

#[derive(Default)]
#[magnus::wrap(class = "Memstored::DBM", free_immediately, size)]
pub struct Dbm {
    state: RwLock<Option<Open>>,
}

type Res<T> = Result<T, Error>;

impl Dbm {
    /// The open database; raises StatusException (PRECONDITION_ERROR) when closed.
    pub fn open(&self, ruby: &Ruby) -> Res<Open> {
        self.state
            .read()
            .clone()
            .ok_or_else(|| convert::not_open(ruby, "not opened database"))
    }

    /// Runs a tiny call on the database with the GVL held.
    fn with<R>(&self, ruby: &Ruby, f: impl FnOnce(&Open) -> R) -> Res<R> {
        let guard = self.state.read();
        let open = guard
            .as_ref()
            .ok_or_else(|| convert::not_open(ruby, "not opened database"))?;
        Ok(f(open))
    }

    pub fn open_native(
        ruby: &Ruby,
        rb_self: &Self,
        path: String,
        writable: bool,
        params: Vec<(String, String)>,
        encoding: Option<String>,
    ) -> Res<Value> {
        let name = match with_params(&path, params) {
            Ok(name) => name,
            Err(bad) => return status(ruby, Err(Failure::invalid(bad.to_string()))),
        };
        if rb_self.state.read().is_some() {
            return status(ruby, Err(Failure::new(4, "opened database")));
        }
        let enc = convert::encoding(ruby, encoding)?;
        match gvl::without(|| Db::open(&name, writable)) {
            Ok(db) => {
                *rb_self.state.write() = Some(Open {
                    db: Arc::new(db),
                    enc,
                });
                status(ruby, Ok(()))
            }
            Err(e) => status(ruby, Err(e.into())),
        }
    }

    /// Closes the database and releases its files; iterators made from it
    /// then answer PRECONDITION_ERROR (the engine's close).
    pub fn close(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        let open = rb_self
            .state
            .write()
            .take()
            .ok_or_else(|| convert::not_open(ruby, "not opened database"))?;
        let result = gvl::without(|| open.db.close());
        status(ruby, result.map_err(Failure::from))
    }

    pub fn is_open(&self) -> bool {
        self.state.read().is_some()
    }

    /// get(key, status = nil): the value or nil.
    pub fn get(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Res<Option<RString>> {
        let (key, target) = match *args {
            [k] => (k, None),
            [k, s] => (k, Some(s)),
            _ => return Err(convert::arity(ruby, args.len(), 1, 2)),
        };
        let key = rstring(key)?;
        let mut small = SmallValue::default();
        let (result, enc) = rb_self.with(ruby, |o| {
            let got = with_bytes(key, |k| o.db.get_with(k, |v| small.take(v)));
            (got, o.enc)
        })?;
        match result {
            Ok(large) => {
                convert::report(ruby, target, Ok(()))?;
                let v = large.as_deref().unwrap_or(small.bytes());
                Ok(Some(out(ruby, v, enc)?))
            }
            Err(e) => {
                convert::report(ruby, target, Err(&e.into()))?;
                Ok(None)
            }
        }
    }

    pub fn get_multi_native(ruby: &Ruby, rb_self: &Self, keys: RArray) -> Res<RHash> {
        let keys: Vec<Vec<u8>> = keys.into_iter().map(owned).collect::<Res<_>>()?;
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let open = rb_self.open(ruby)?;
        let found = open
            .db
            .get_multi(&refs)
            .map_err(|e| convert::exception(ruby, e.into()))?;
        let hash = RHash::new();
        for (k, v) in found {
            hash.aset(out(ruby, &k, open.enc)?, out(ruby, &v, open.enc)?)?;
        }
        Ok(hash)
    }

    /// set(key, value, overwrite = true) -> Status.
    pub fn set(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Res<Value> {
        let (key, value, overwrite) = match *args {
            [k, v] => (k, v, true),
            [k, v, o] => (k, v, o.to_bool()),
            _ => return Err(convert::arity(ruby, args.len(), 2, 3)),
        };
        let (key, value) = (rstring(key)?, rstring(value)?);
        let result = if value.len() < LARGE_VALUE {
            rb_self.with(ruby, |o| {
                with_bytes(key, |k| with_bytes(value, |v| o.db.set(k, v, overwrite)))
            })?
        } else {
            let open = rb_self.open(ruby)?;
            let (k, v) = (owned(key.as_value())?, owned(value.as_value())?);
            gvl::without(|| open.db.set(&k, &v, overwrite))
        };
        status(ruby, result.map_err(Failure::from))
    }

    pub fn set_multi_native(
        ruby: &Ruby,
        rb_self: &Self,
        records: RArray,
        overwrite: bool,
    ) -> Res<Value> {
        let pairs = owned_pairs(records)?;
        let refs: Vec<(&[u8], &[u8])> = pairs
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_deref().unwrap_or_default()))
            .collect();
        let open = rb_self.open(ruby)?;
        let large = refs.iter().map(|(_, v)| v.len()).sum::<usize>() >= LARGE_VALUE;
        let result = if large {
            gvl::without(|| open.db.set_multi(&refs, overwrite))
        } else {
            open.db.set_multi(&refs, overwrite)
        };
        status(ruby, result.map_err(Failure::from))
    }

    /// set_and_get(key, value, overwrite = true) -> [Status, old value or nil].
    pub fn set_and_get(
        ruby: &Ruby,
        rb_self: &Self,
        args: &[Value],
    ) -> Res<(Value, Option<RString>)> {
        let (key, value, overwrite) = match *args {
            [k, v] => (k, v, true),
            [k, v, o] => (k, v, o.to_bool()),
            _ => return Err(convert::arity(ruby, args.len(), 2, 3)),
        };
        let (key, value) = (owned(key)?, Bytes::from(owned(value)?));
        let open = rb_self.open(ruby)?;
        let (st, old) = match set_and_get(&open.db, &key, value, overwrite) {
            Ok((old, false)) => (status(ruby, Ok(()))?, old),
            Ok((old, true)) => (
                status(ruby, Err(Failure::new(10, "the record exists")))?,
                old,
            ),
            Err(f) => (status(ruby, Err(f))?, None),
        };
        let old = old.map(|v| out(ruby, &v, open.enc)).transpose()?;
        Ok((st, old))
    }

    pub fn remove(ruby: &Ruby, rb_self: &Self, key: Value) -> Res<Value> {
        let key = rstring(key)?;
        let result = rb_self.with(ruby, |o| with_bytes(key, |k| o.db.remove(k)))?;
        status(ruby, result.map_err(Failure::from))
    }

    pub fn remove_multi_native(ruby: &Ruby, rb_self: &Self, keys: RArray) -> Res<Value> {
        let keys: Vec<Vec<u8>> = keys.into_iter().map(owned).collect::<Res<_>>()?;
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let result = rb_self.with(ruby, |o| o.db.remove_multi(&refs))?;
        status(ruby, result.map_err(Failure::from))
    }

    /// remove_and_get(key) -> [Status, value or nil].
    pub fn remove_and_get(
        ruby: &Ruby,
        rb_self: &Self,
        key: Value,
    ) -> Res<(Value, Option<RString>)> {
        let key = rstring(key)?;
        let (result, enc) = rb_self.with(ruby, |o| {
            (with_bytes(key, |k| o.db.remove_and_get(k)), o.enc)
        })?;
        Ok(match result {
            Ok(v) => (status(ruby, Ok(()))?, Some(out(ruby, &v, enc)?)),
            Err(e) => (status(ruby, Err(e.into()))?, None),
        })
    }

    /// append(key, value, delim = "") -> Status.
    pub fn append(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Res<Value> {
        let (key, value, delim) = match *args {
            [k, v] => (k, v, None),
            [k, v, d] => (k, v, Some(d)),
            _ => return Err(convert::arity(ruby, args.len(), 2, 3)),
        };
        let key = owned(key)?;
        let value = owned(value)?;
        let delim = delim.map(owned).transpose()?.unwrap_or_default();
        let open = rb_self.open(ruby)?;
        let run = || open.db.append(&key, &value, &delim);
        let result = if value.len() < LARGE_VALUE {
            run()
        } else {
            gvl::without(run)
        };
        status(ruby, result.map_err(Failure::from))
    }

    pub fn compare_exchange(
        ruby: &Ruby,
        rb_self: &Self,
        key: Value,
        expected: Value,
        desired: Value,
    ) -> Res<Value> {
        let key = owned(key)?;
        let expected = optional(expected)?;
        let desired = optional(desired)?;
        let result = rb_self.with(ruby, |o| {
            o.db.compare_exchange(&key, expected.as_deref(), desired.as_deref())
        })?;
        status(ruby, result.map_err(Failure::from))
    }

    /// increment(key, inc = 1, init = 0, status = nil) -> the new number or nil.
    pub fn increment(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Res<Option<i64>> {
        if args.is_empty() || args.len() > 4 {
            return Err(convert::arity(ruby, args.len(), 1, 4));
        }
        let key = owned(args[0])?;
        let inc = args
            .get(1)
            .map(|v| i64::try_convert(*v))
            .transpose()?
            .unwrap_or(1);
        let init = args
            .get(2)
            .map(|v| i64::try_convert(*v))
            .transpose()?
            .unwrap_or(0);
        let result = rb_self.with(ruby, |o| increment_or_read(&o.db, &key, inc, init))?;
        convert::report(ruby, args.get(3).copied(), result.as_ref().map(|_| ()))?;
        Ok(result.ok())
    }

    pub fn compare_exchange_multi_native(
        ruby: &Ruby,
        rb_self: &Self,
        expected: RArray,
        desired: RArray,
    ) -> Res<Value> {
        let expected = owned_pairs(expected)?;
        let desired = owned_pairs(desired)?;
        let exp: Vec<(&[u8], Option<&[u8]>)> = expected
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_deref()))
            .collect();
        let des: Vec<(&[u8], Option<&[u8]>)> = desired
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_deref()))
            .collect();
        let result = rb_self.with(ruby, |o| o.db.compare_exchange_multi(&exp, &des))?;
        status(ruby, result.map_err(Failure::from))
    }

    pub fn count(ruby: &Ruby, rb_self: &Self) -> Res<u64> {
        rb_self.with(ruby, |o| o.db.count())
    }

    pub fn clear(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        let open = rb_self.open(ruby)?;
        status(
            ruby,
            gvl::without(|| open.db.clear()).map_err(Failure::from),
        )
    }

    pub fn rebuild_native(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        let open = rb_self.open(ruby)?;
        status(
            ruby,
            gvl::without(|| open.db.rebuild()).map_err(Failure::from),
        )
    }

    pub fn should_be_rebuilt(ruby: &Ruby, rb_self: &Self) -> Res<bool> {
        rb_self.with(ruby, |o| o.db.should_be_rebuilt())
    }

    pub fn synchronize_native(ruby: &Ruby, rb_self: &Self, hard: bool) -> Res<Value> {
        let open = rb_self.open(ruby)?;
        status(
            ruby,
            gvl::without(|| open.db.synchronize(hard)).map_err(Failure::from),
        )
    }

    pub fn inspect_details(ruby: &Ruby, rb_self: &Self) -> Res<RHash> {
        let details = rb_self.with(ruby, |o| o.db.inspect())?;
        let hash = RHash::new();
        for (k, v) in details {
            hash.aset(k, v)?;
        }
        Ok(hash)
    }

    pub fn is_writable(ruby: &Ruby, rb_self: &Self) -> Res<bool> {
        rb_self.with(ruby, |o| o.db.is_writable())
    }

    pub fn is_ordered(ruby: &Ruby, rb_self: &Self) -> Res<bool> {
        rb_self.with(ruby, |o| o.db.is_ordered())
    }

    /// search(mode, pattern, capacity = 0) -> keys; raises StatusException
    /// for a bad mode or pattern.
    pub fn search(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Res<RArray> {
        let (mode, pattern, capacity) = match *args {
            [m, p] => (m, p, 0),
            [m, p, c] => (m, p, usize::try_convert(c)?),
            _ => return Err(convert::arity(ruby, args.len(), 2, 3)),
        };
        let mode = rstring(mode)?.to_string()?;
        let pattern = owned(pattern)?;
        let open = rb_self.open(ruby)?;
        convert::search_results(ruby, &mode, open.enc, |mode| {
            open.db.search(mode, &pattern, capacity)
        })
    }
}

/// DBM.restore_native(old_path, new_path, class_name, end_offset) ->
/// Status: the engine's `restore_database` (a sharded source found by its
/// files, as Tkrzw's ShardDBM finds it).
pub fn restore(ruby: &Ruby, old: String, new: String, class: String, end: i64) -> Res<Value> {
    let result = gvl::without(|| memstored_engine::restore_database(&old, &new, &class, end));
    status(ruby, result.map_err(Failure::from))
}

/// nil as None, anything else as its bytes.
fn optional(v: Value) -> Res<Option<Vec<u8>>> {
    if v.is_nil() {
        Ok(None)
    } else {
        owned(v).map(Some)
    }
}

/// A record given to a multi call: key and value bytes, None meaning "no record".
type OwnedPair = (Vec<u8>, Option<Vec<u8>>);

/// An array of [key, value] pairs (a nil value meaning "no record") as bytes.
fn owned_pairs(records: RArray) -> Res<Vec<OwnedPair>> {
    records
        .into_iter()
        .map(|pair| {
            let pair = RArray::try_convert(pair)?;
            Ok((owned(pair.entry(0)?)?, optional(pair.entry(1)?)?))
        })
        .collect()
}
