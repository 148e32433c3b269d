//! `DBM`: tkrzw-python's database class over a memstored `Db`, plus the
//! mapping protocol and a context manager.
//!
//! The GIL: long calls (open, close, sync, rebuild, clear, search, hash
//! iterator moves, values of `RELEASE_AT` bytes or more) release it. Tiny gets and sets keep
//! it: handing the GIL over costs more than the engine call itself, and
//! holding it is what keeps 4 threads as fast as 1 (numbers in the commit
//! that set `RELEASE_AT`; `scripts/bench-bindings/perf.py` with 1 and 4
//! threads measures them again).

use crate::convert::{data, is_str, to_py, to_str};
use crate::file::File;
use crate::iter::DbIter;
use crate::ops::{self, Want};
use crate::params;
use crate::process;
use crate::status::{settle, Status, NOT_IMPLEMENTED_ERROR, PRECONDITION_ERROR};
use crate::tkops;
use memstored_engine::{restore_database, Db, SearchMode};
use parking_lot::RwLock;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::borrow::Cow;
use std::sync::Arc;

/// Values at least this long are copied with the GIL released.
const RELEASE_AT: usize = 64 * 1024;

#[pyclass(module = "memstored", name = "DBM", frozen)]
pub struct Dbm {
    /// The open database; `Close` takes it out. Calls hold the read lock, so
    /// `Close` waits for calls under way.
    db: RwLock<Option<Arc<Db>>>,
}

fn not_open() -> Status {
    Status::new(PRECONDITION_ERROR, "the database is not open")
}

type Res<T> = Result<T, Status>;

impl Dbm {
    /// A share of the open database, for calls that outlive the lock
    /// (AsyncDBM, Export, Python callbacks).
    pub fn arc(&self) -> Result<Arc<Db>, Status> {
        self.db.read().clone().ok_or_else(not_open)
    }

    fn with<T>(&self, f: impl FnOnce(&Db) -> Res<T>) -> Res<T> {
        match self.db.read().as_deref() {
            Some(db) => f(db),
            None => Err(not_open()),
        }
    }

    /// `with`, with the GIL released when `release`.
    fn call<T: Send>(
        &self,
        py: Python<'_>,
        release: bool,
        f: impl FnOnce(&Db) -> Res<T> + Send,
    ) -> Res<T> {
        if release {
            py.detach(|| self.with(f))
        } else {
            self.with(f)
        }
    }

    /// Like `call`, raising `StatusException` on failure: for methods that
    /// return a value rather than a status.
    fn value<T: Send>(
        &self,
        py: Python<'_>,
        release: bool,
        f: impl FnOnce(&Db) -> Res<T> + Send,
    ) -> PyResult<T> {
        self.call(py, release, f).map_err(Status::into_err)
    }

    fn open_impl(
        &self,
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        writable: bool,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Status> {
        let path = String::from_utf8_lossy(&data(path)?).into_owned();
        let spec = match params::open_spec(&path, params)? {
            Ok(s) => s,
            Err(st) => return Ok(st),
        };
        Ok(Status::of(py.detach(|| {
            let mut slot = self.db.write();
            if slot.is_some() {
                return Err(Status::new(
                    PRECONDITION_ERROR,
                    "the database is already open",
                ));
            }
            let db = spec.open(writable)?;
            *slot = Some(Arc::new(db));
            Ok(())
        })))
    }

    fn get_as<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        status: Option<Bound<'py, Status>>,
        as_str: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let k = data(key)?;
        let got = self.call(py, false, |db| Ok(db.get(&k)?));
        Ok(settle(status.as_ref(), got)?.map(|v| to_py(py, &v, as_str)))
    }

    fn pop_as<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
        as_str: bool,
    ) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        let r = self.call(py, false, tkops::pop_first);
        Ok(
            settle(status.as_ref(), r)?
                .map(|(k, v)| (to_py(py, &k, as_str), to_py(py, &v, as_str))),
        )
    }

    fn get_multi_as<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyTuple>,
        as_str: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let items = flatten(keys)?;
        let owned = items.iter().map(data).collect::<PyResult<Vec<_>>>()?;
        let refs: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
        let found = self.value(py, refs.len() > 64, |db| Ok(db.get_multi(&refs)?))?;
        let out = PyDict::new(py);
        for (k, v) in found {
            out.set_item(to_py(py, &k, as_str), to_py(py, &v, as_str))?;
        }
        Ok(out)
    }
}

/// The items of `*args`, or of the one list or tuple passed as the only
/// argument (tkrzw-python documents `RemoveMulti(keys)` but takes `*keys`).
pub(crate) fn flatten<'py>(args: &Bound<'py, PyTuple>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if args.len() == 1 {
        let first = args.get_item(0)?;
        if first.is_instance_of::<PyList>() || first.is_instance_of::<PyTuple>() {
            return first.try_iter()?.collect();
        }
    }
    Ok(args.iter().collect())
}

/// A key and its expected or desired value (None: absent).
pub(crate) type OwnedPair = (Vec<u8>, Option<Vec<u8>>);

/// The `**records` of SetMulti and AppendMulti as owned pairs.
pub(crate) fn records(records: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut owned = Vec::new();
    for (k, v) in records.into_iter().flat_map(|r| r.iter()) {
        owned.push((data(&k)?.into_owned(), data(&v)?.into_owned()));
    }
    Ok(owned)
}

/// `(key, value)` pairs of a compare-exchange-multi argument; a value of
/// None means absent.
pub(crate) fn owned_pairs(seq: &Bound<'_, PyAny>) -> PyResult<Vec<OwnedPair>> {
    let mut out = Vec::new();
    for item in seq.try_iter()? {
        let item = item?;
        let (k, v) = (item.get_item(0)?, item.get_item(1)?);
        let v = if v.is_none() {
            None
        } else {
            Some(data(&v)?.into_owned())
        };
        out.push((data(&k)?.into_owned(), v));
    }
    Ok(out)
}

pub(crate) fn wants(pairs: &[OwnedPair]) -> Vec<(Vec<u8>, Want<'_>)> {
    pairs
        .iter()
        .map(|(k, v)| (k.clone(), Want::of(v.as_deref())))
        .collect()
}

fn optional<'a>(v: &'a Option<Cow<'a, [u8]>>) -> Want<'a> {
    Want::of(v.as_deref())
}

#[pymethods]
impl Dbm {
    #[classattr]
    const ANY_DATA: &'static [u8] = ops::ANY_DATA;

    /// `DBM()` as in tkrzw-python; `DBM(path, writable, **params)` also opens,
    /// raising `StatusException` on failure.
    #[new]
    #[pyo3(signature = (path = None, writable = true, **params))]
    fn py_new(
        py: Python<'_>,
        path: Option<&Bound<'_, PyAny>>,
        writable: bool,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Dbm> {
        let dbm = Dbm {
            db: RwLock::new(None),
        };
        if let Some(path) = path {
            dbm.open_impl(py, path, writable, params)?.check()?;
        }
        Ok(dbm)
    }

    #[pyo3(name = "Open", signature = (path, writable, **params))]
    fn open(
        &self,
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        writable: bool,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Status> {
        self.open_impl(py, path, writable, params)
    }

    #[pyo3(name = "Close")]
    fn close(&self, py: Python<'_>) -> Status {
        Status::of(py.detach(|| {
            let db = self.db.write().take().ok_or_else(not_open)?;
            Ok(db.close()?)
        }))
    }

    #[pyo3(name = "Get", signature = (key, status = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.get_as(py, key, status, false)
    }

    #[pyo3(name = "GetStr", signature = (key, status = None))]
    fn get_str<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.get_as(py, key, status, true)
    }

    #[pyo3(name = "GetMulti", signature = (*keys))]
    fn get_multi<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.get_multi_as(py, keys, false)
    }

    #[pyo3(name = "GetMultiStr", signature = (*keys))]
    fn get_multi_str<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.get_multi_as(py, keys, true)
    }

    #[pyo3(name = "Set", signature = (key, value, overwrite = true))]
    fn set(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        overwrite: bool,
    ) -> PyResult<Status> {
        let (k, v) = (data(key)?, data(value)?);
        let big = v.len() >= RELEASE_AT;
        Ok(Status::of(
            self.call(py, big, |db| Ok(db.set(&k, &v, overwrite)?)),
        ))
    }

    #[pyo3(name = "SetMulti", signature = (overwrite = true, **records))]
    fn set_multi(
        &self,
        py: Python<'_>,
        overwrite: bool,
        records: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Status> {
        let owned = self::records(records)?;
        let refs: Vec<(&[u8], &[u8])> = owned.iter().map(|(k, v)| (&k[..], &v[..])).collect();
        Ok(Status::of(self.call(py, refs.len() > 64, |db| {
            Ok(db.set_multi(&refs, overwrite)?)
        })))
    }

    #[pyo3(name = "Remove")]
    fn remove(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Status> {
        let k = data(key)?;
        Ok(Status::of(self.call(py, false, |db| Ok(db.remove(&k)?))))
    }

    #[pyo3(name = "RemoveMulti", signature = (*keys))]
    fn remove_multi(&self, py: Python<'_>, keys: &Bound<'_, PyTuple>) -> PyResult<Status> {
        let items = flatten(keys)?;
        let owned = items.iter().map(data).collect::<PyResult<Vec<_>>>()?;
        let refs: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
        Ok(Status::of(self.call(py, refs.len() > 64, |db| {
            Ok(db.remove_multi(&refs)?)
        })))
    }

    /// Appends `value` after `delim`, or stores it when the record is absent.
    #[pyo3(name = "Append", signature = (key, value, delim = None))]
    fn append(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        delim: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Status> {
        let (k, v) = (data(key)?, data(value)?);
        let d = match delim {
            Some(d) => data(d)?,
            None => Cow::Borrowed(&b""[..]),
        };
        let big = v.len() >= RELEASE_AT;
        Ok(Status::of(
            self.call(py, big, |db| Ok(db.append(&k, &v, &d)?)),
        ))
    }

    /// Adds `inc` to the record's decimal value (`init` when absent) and
    /// returns the result, or None on failure (see `status`).
    #[pyo3(name = "Increment", signature = (key, inc = 1, init = 0, status = None))]
    fn increment(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        inc: i64,
        init: i64,
        status: Option<Bound<'_, Status>>,
    ) -> PyResult<Option<i64>> {
        let k = data(key)?;
        let r = self.call(py, false, |db| tkops::increment(db, &k, inc, init));
        settle(status.as_ref(), r)
    }

    #[pyo3(name = "CompareExchange")]
    fn compare_exchange(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        expected: Option<&Bound<'_, PyAny>>,
        desired: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Status> {
        let k = data(key)?;
        let e = expected.map(data).transpose()?;
        let d = desired.map(data).transpose()?;
        let (e, d) = (optional(&e), optional(&d));
        Ok(Status::of(
            self.call(py, false, |db| ops::compare_exchange(db, &k, e, d)),
        ))
    }

    #[pyo3(name = "CompareExchangeMulti")]
    fn compare_exchange_multi(
        &self,
        py: Python<'_>,
        expected: &Bound<'_, PyAny>,
        desired: &Bound<'_, PyAny>,
    ) -> PyResult<Status> {
        let (e, d) = (owned_pairs(expected)?, owned_pairs(desired)?);
        let (e, d) = (wants(&e), wants(&d));
        Ok(Status::of(self.call(py, false, |db| {
            ops::compare_exchange_multi(db, &e, &d)
        })))
    }

    #[pyo3(name = "Count")]
    fn count(&self, py: Python<'_>) -> PyResult<u64> {
        self.value(py, false, |db| Ok(db.count()))
    }

    #[pyo3(name = "Clear")]
    fn clear(&self, py: Python<'_>) -> Status {
        Status::of(self.call(py, true, |db| Ok(db.clear()?)))
    }

    /// Hands written data to the OS; with `hard`, to the disk. Keyword
    /// parameters are accepted for tkrzw-python compatibility and unused.
    #[pyo3(name = "Synchronize", signature = (hard, **_params))]
    fn synchronize(
        &self,
        py: Python<'_>,
        hard: bool,
        _params: Option<&Bound<'_, PyDict>>,
    ) -> Status {
        Status::of(self.call(py, true, |db| Ok(db.synchronize(hard)?)))
    }

    /// Compacts the files while reads and writes go on. Keyword parameters
    /// are accepted for tkrzw-python compatibility and unused.
    #[pyo3(name = "Rebuild", signature = (**_params))]
    fn rebuild(&self, py: Python<'_>, _params: Option<&Bound<'_, PyDict>>) -> Status {
        Status::of(self.call(py, true, |db| Ok(db.rebuild()?)))
    }

    #[pyo3(name = "ShouldBeRebuilt")]
    fn should_be_rebuilt(&self, py: Python<'_>) -> PyResult<bool> {
        self.value(py, false, |db| Ok(db.should_be_rebuilt()))
    }

    #[pyo3(name = "Inspect")]
    fn inspect<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let props = self.value(py, false, |db| Ok(db.inspect()))?;
        let out = PyDict::new(py);
        for (k, v) in props {
            out.set_item(k, v)?;
        }
        Ok(out)
    }

    #[pyo3(name = "IsOpen")]
    fn is_open(&self) -> bool {
        self.db.read().is_some()
    }

    #[pyo3(name = "IsWritable")]
    fn is_writable(&self, py: Python<'_>) -> PyResult<bool> {
        self.value(py, false, |db| Ok(db.is_writable()))
    }

    #[pyo3(name = "IsOrdered")]
    fn is_ordered(&self, py: Python<'_>) -> PyResult<bool> {
        self.value(py, false, |db| Ok(db.is_ordered()))
    }

    #[pyo3(name = "GetFilePath")]
    fn get_file_path(&self, py: Python<'_>) -> PyResult<String> {
        self.value(py, false, |db| Ok(db.name().path.clone()))
    }

    /// Bytes in the database's files; in memory, the bytes the records take.
    #[pyo3(name = "GetFileSize")]
    fn get_file_size(&self, py: Python<'_>) -> PyResult<u64> {
        self.value(py, false, |db| Ok(db.file_size()))
    }

    /// Keys matching `pattern` under `mode` (begin, contain, containcase,
    /// end, regex, edit, editbin, upper, upperinc, lower, lowerinc), as str.
    #[pyo3(name = "Search", signature = (mode, pattern, capacity = 0))]
    fn search<'py>(
        &self,
        py: Python<'py>,
        mode: &str,
        pattern: &Bound<'py, PyAny>,
        capacity: usize,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let p = data(pattern)?;
        let keys = self.value(py, true, |db| {
            let mode = SearchMode::parse(mode)?;
            Ok(db.search(mode, &p, capacity)?)
        })?;
        Ok(keys.iter().map(|k| to_str(py, k)).collect())
    }

    #[pyo3(name = "MakeIterator")]
    fn make_iterator(&self) -> PyResult<DbIter> {
        let db = self.db.read().clone().ok_or_else(not_open);
        Ok(DbIter::new(db.map_err(Status::into_err)?))
    }

    /// Stores `value` and returns `(status, old value or None)`; the old
    /// value is a str when `value` is one. With `overwrite` false an
    /// existing record stays, with DUPLICATION_ERROR.
    #[pyo3(name = "SetAndGet", signature = (key, value, overwrite = true))]
    fn set_and_get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
        overwrite: bool,
    ) -> PyResult<(Status, Option<Bound<'py, PyAny>>)> {
        let (k, v) = (data(key)?, data(value)?);
        let (st, old) = match self.arc() {
            Ok(db) => tkops::set_and_get(&db, &k, &v, overwrite),
            Err(st) => (st, None),
        };
        Ok((st, old.map(|o| to_py(py, &o, is_str(value)))))
    }

    /// Removes the record and returns `(status, its value or None)`, a str
    /// when `key` is one.
    #[pyo3(name = "RemoveAndGet")]
    fn remove_and_get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<(Status, Option<Bound<'py, PyAny>>)> {
        let k = data(key)?;
        let r = self.call(py, false, |db| Ok(db.remove_and_get(&k)?));
        Ok(match r {
            Ok(v) => (Status::ok(), Some(to_py(py, &v, is_str(key)))),
            Err(st) => (st, None),
        })
    }

    /// `Append` of each record.
    #[pyo3(name = "AppendMulti", signature = (delim = None, **records))]
    fn append_multi(
        &self,
        py: Python<'_>,
        delim: Option<&Bound<'_, PyAny>>,
        records: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Status> {
        let d = delim.map(data).transpose()?.unwrap_or_default();
        let recs = self::records(records)?;
        Ok(Status::of(self.call(py, recs.len() > 64, |db| {
            tkops::append_multi(db, &d, &recs)
        })))
    }

    /// CompareExchange, returning `(status, the value before or None)`; a
    /// str when `expected` or `desired` is one.
    #[pyo3(name = "CompareExchangeAndGet")]
    fn compare_exchange_and_get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        expected: Option<&Bound<'py, PyAny>>,
        desired: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(Status, Option<Bound<'py, PyAny>>)> {
        let k = data(key)?;
        let e = expected.map(data).transpose()?;
        let d = desired.map(data).transpose()?;
        let as_str = expected.is_some_and(is_str) || desired.is_some_and(is_str);
        let (st, old) = match self.arc() {
            Ok(db) => tkops::compare_exchange_and_get(&db, &k, optional(&e), optional(&d)),
            Err(st) => (st, None),
        };
        Ok((st, old.map(|o| to_py(py, &o, as_str))))
    }

    /// Calls `func(key, value)` (bytes; value None when absent). Its result
    /// None leaves the record, False removes it, anything else is stored
    /// (with `writable`). See process.rs: it may run again under contention.
    #[pyo3(name = "Process")]
    fn process(
        &self,
        key: &Bound<'_, PyAny>,
        func: &Bound<'_, PyAny>,
        writable: bool,
    ) -> PyResult<Status> {
        let k = data(key)?;
        let r = self.arc().map_err(process::Failure::Status);
        process::settle(r.and_then(|db| process::process(&db, &k, func, writable)))
    }

    /// `Process` of each `(key, func)` of `key_func_pairs` in order,
    /// stored together atomically.
    #[pyo3(name = "ProcessMulti")]
    fn process_multi(&self, key_func_pairs: &Bound<'_, PyAny>, writable: bool) -> PyResult<Status> {
        let mut ops = Vec::new();
        for item in key_func_pairs.try_iter()? {
            let item = item?;
            ops.push((data(&item.get_item(0)?)?.into_owned(), item.get_item(1)?));
        }
        let r = self.arc().map_err(process::Failure::Status);
        process::settle(r.and_then(|db| process::process_multi(&db, &ops, writable)))
    }

    /// `func` over every record, and `func(None, None)` before and after.
    #[pyo3(name = "ProcessEach")]
    fn process_each(&self, func: &Bound<'_, PyAny>, writable: bool) -> PyResult<Status> {
        let r = self.arc().map_err(process::Failure::Status);
        process::settle(r.and_then(|db| process::process_each(&db, func, writable)))
    }

    /// Moves the record of `old_key` to `new_key` (keeps it too with `copying`).
    #[pyo3(name = "Rekey", signature = (old_key, new_key, overwrite = true, copying = false))]
    fn rekey(
        &self,
        py: Python<'_>,
        old_key: &Bound<'_, PyAny>,
        new_key: &Bound<'_, PyAny>,
        overwrite: bool,
        copying: bool,
    ) -> PyResult<Status> {
        let (o, n) = (data(old_key)?, data(new_key)?);
        Ok(Status::of(self.call(py, false, |db| {
            Ok(db.rekey(&o, &n, overwrite, copying)?)
        })))
    }

    /// Removes the first record and returns `(key, value)` as bytes, or None.
    #[pyo3(name = "PopFirst", signature = (status = None))]
    fn pop_first<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        self.pop_as(py, status, false)
    }

    #[pyo3(name = "PopFirstStr", signature = (status = None))]
    fn pop_first_str<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        self.pop_as(py, status, true)
    }

    /// Stores `value` under the 8-byte big-endian key of the time `wtime`
    /// (seconds; negative: now) times 10^8, or the next free one.
    #[pyo3(name = "PushLast", signature = (value, wtime = -1.0))]
    fn push_last(&self, py: Python<'_>, value: &Bound<'_, PyAny>, wtime: f64) -> PyResult<Status> {
        let v = data(value)?;
        Ok(Status::of(
            self.call(py, false, |db| Ok(db.push_last(&v, wtime, false)?)),
        ))
    }

    /// When the database was opened or last synchronized (seconds since the epoch).
    #[pyo3(name = "GetTimestamp")]
    fn get_timestamp(&self, py: Python<'_>) -> PyResult<f64> {
        self.value(py, false, |db| Ok(db.timestamp()))
    }

    /// The engine's health while open; false when not open.
    #[pyo3(name = "IsHealthy")]
    fn is_healthy(&self) -> bool {
        self.db.read().as_ref().is_some_and(|db| db.is_healthy())
    }

    /// Writes a consistent copy of the database's files at `dest_path`.
    #[pyo3(name = "CopyFileData", signature = (dest_path, sync_hard = false))]
    fn copy_file_data(&self, py: Python<'_>, dest_path: &str, sync_hard: bool) -> Status {
        Status::of(self.call(py, true, |db| Ok(db.copy_file_data(dest_path, sync_hard)?)))
    }

    /// Stores every record into `dest_dbm`.
    #[pyo3(name = "Export")]
    fn export(&self, py: Python<'_>, dest_dbm: &Bound<'_, Dbm>) -> Status {
        let dest = match dest_dbm.get().arc() {
            Ok(d) => d,
            Err(st) => return st,
        };
        Status::of(self.call(py, true, |db| Ok(db.export_to(&dest)?)))
    }

    /// Writes the records to `dest_file` in Tkrzw's flat-record format.
    #[pyo3(name = "ExportToFlatRecords")]
    fn export_to_flat_records(&self, py: Python<'_>, dest_file: &Bound<'_, File>) -> Status {
        let f = dest_file.get().shared.clone();
        Status::of(self.call(py, true, |db| Ok(db.export_to_flat_records(&f)?)))
    }

    /// Stores the records of a flat-record file.
    #[pyo3(name = "ImportFromFlatRecords")]
    fn import_from_flat_records(&self, py: Python<'_>, src_file: &Bound<'_, File>) -> Status {
        let f = src_file.get().shared.clone();
        Status::of(self.call(py, true, |db| Ok(db.import_from_flat_records(&f)?)))
    }

    /// Writes each key and a line feed to `dest_file`.
    #[pyo3(name = "ExportKeysAsLines")]
    fn export_keys_as_lines(&self, py: Python<'_>, dest_file: &Bound<'_, File>) -> Status {
        let f = dest_file.get().shared.clone();
        Status::of(self.call(py, true, |db| Ok(db.export_keys_as_lines(&f)?)))
    }

    /// Salvages the intact records of a damaged database into a new one:
    /// the engine's `restore_database` (`class_name` Tkrzw's, e.g.
    /// HashDBM; a sharded source found by its files and restored into as
    /// many shards). `end_offset` other than -1 or 0 and `cipher_key` are
    /// NOT_IMPLEMENTED_ERROR.
    #[staticmethod]
    #[pyo3(name = "RestoreDatabase", signature = (old_file_path, new_file_path, class_name = "", end_offset = -1, cipher_key = None))]
    fn restore_database(
        py: Python<'_>,
        old_file_path: &str,
        new_file_path: &str,
        class_name: &str,
        end_offset: i64,
        cipher_key: Option<&Bound<'_, PyAny>>,
    ) -> Status {
        if cipher_key.is_some_and(|c| !c.is_none()) {
            return Status::new(
                NOT_IMPLEMENTED_ERROR,
                "RestoreDatabase: cipher_key is not implemented",
            );
        }
        Status::of(py.detach(|| {
            let r = restore_database(old_file_path, new_file_path, class_name, end_offset);
            Ok(r?)
        }))
    }

    /// The number of records; 0 before Open, as in tkrzw-python.
    fn __len__(&self) -> usize {
        self.db.read().as_ref().map_or(0, |db| db.count() as usize)
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = data(key)?;
        self.value(py, false, |db| Ok(db.get_record(&k)?.is_some()))
    }

    /// The value as str when the key is a str, else bytes; raises
    /// `StatusException` (NOT_FOUND_ERROR) when absent.
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let k = data(key)?;
        let v = self.value(py, false, |db| Ok(db.get(&k)?))?;
        Ok(to_py(py, &v, is_str(key)))
    }

    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.set(py, key, value, true)?.check()
    }

    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.remove(py, key)?.check()
    }

    /// An iterator from the first record, yielding `(key, value)` bytes.
    fn __iter__(&self, py: Python<'_>) -> PyResult<DbIter> {
        let it = self.make_iterator()?;
        it.rewind(py).check()?;
        Ok(it)
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// Closes the database if it is open; exceptions propagate.
    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if self.is_open() {
            self.close(py).check()?;
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!("<memstored.DBM: {}>", self.__str__())
    }

    /// The class in Tkrzw's words, the path and the record count.
    fn __str__(&self) -> String {
        match self.db.read().as_deref() {
            Some(db) => format!(
                "class={} path={:?} num_records={}",
                db.name().tkrzw_class(),
                db.name().path,
                db.count()
            ),
            None => "class=unknown path=- num_records=-1".into(),
        }
    }
}
