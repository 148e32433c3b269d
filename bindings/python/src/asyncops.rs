//! `AsyncDBM`'s methods: each takes tkrzw-python's arguments, copies them
//! and queues the same engine call `DBM` makes (asyncdbm.rs runs it).

use crate::asyncdbm::{AsyncDbm, Future, Outcome};
use crate::convert::data;
use crate::dbm::{flatten, owned_pairs, records, wants, Dbm};
use crate::file::File;
use crate::ops::{self, Want};
use crate::status::{Status, NOT_FOUND_ERROR};
use crate::tkops;
use memstored_engine::{Db, SearchMode};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

fn st<T>(r: Result<T, Status>) -> Outcome {
    Outcome::Status(Status::of(r))
}

fn bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    Ok(data(obj)?.into_owned())
}

fn opt_bytes(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<u8>>> {
    obj.map(bytes).transpose()
}

fn get(db: &Db, key: &[u8]) -> Outcome {
    match db.get(key) {
        Ok(v) => Outcome::Value(Status::ok(), v.to_vec()),
        Err(e) => Outcome::Value(e.into(), Vec::new()),
    }
}

/// The records found, with NOT_FOUND_ERROR when some key had none.
fn get_multi(db: &Db, keys: &[Vec<u8>]) -> Outcome {
    let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    match db.get_multi(&refs) {
        Ok(found) => {
            let mut distinct = refs.clone();
            distinct.sort();
            distinct.dedup();
            let st = if found.len() < distinct.len() {
                Status::new(NOT_FOUND_ERROR, "some records are missing")
            } else {
                Status::ok()
            };
            Outcome::Map(st, found)
        }
        Err(e) => Outcome::Map(e.into(), Vec::new()),
    }
}

fn pop(db: &Db) -> Outcome {
    match tkops::pop_first(db) {
        Ok((k, v)) => Outcome::Pair(Status::ok(), k, v.to_vec()),
        Err(s) => Outcome::Pair(s, Vec::new(), Vec::new()),
    }
}

fn key_list(keys: &Bound<'_, PyTuple>) -> PyResult<Vec<Vec<u8>>> {
    flatten(keys)?.iter().map(bytes).collect()
}

#[pymethods]
impl AsyncDbm {
    /// Runs `dbm`'s calls on `num_worker_threads` threads.
    #[new]
    fn py_new(dbm: &Bound<'_, Dbm>, num_worker_threads: usize) -> PyResult<AsyncDbm> {
        let db = dbm.get().arc().map_err(Status::into_err)?;
        Ok(AsyncDbm::new(db, num_worker_threads))
    }

    /// Waits for the queued calls and ends the threads; later calls give
    /// PRECONDITION_ERROR.
    #[pyo3(name = "Destruct")]
    fn destruct_py(&self, py: Python<'_>) {
        self.destruct(py)
    }

    #[pyo3(name = "Get")]
    fn get_py(&self, key: &Bound<'_, PyAny>) -> PyResult<Future> {
        let k = bytes(key)?;
        Ok(self.submit(false, move |db| get(db, &k)))
    }

    #[pyo3(name = "GetStr")]
    fn get_str(&self, key: &Bound<'_, PyAny>) -> PyResult<Future> {
        let k = bytes(key)?;
        Ok(self.submit(true, move |db| get(db, &k)))
    }

    #[pyo3(name = "GetMulti", signature = (*keys))]
    fn get_multi_py(&self, keys: &Bound<'_, PyTuple>) -> PyResult<Future> {
        let ks = key_list(keys)?;
        Ok(self.submit(false, move |db| get_multi(db, &ks)))
    }

    #[pyo3(name = "GetMultiStr", signature = (*keys))]
    fn get_multi_str(&self, keys: &Bound<'_, PyTuple>) -> PyResult<Future> {
        let ks = key_list(keys)?;
        Ok(self.submit(true, move |db| get_multi(db, &ks)))
    }

    #[pyo3(name = "Set", signature = (key, value, overwrite = true))]
    fn set(
        &self,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        overwrite: bool,
    ) -> PyResult<Future> {
        let (k, v) = (bytes(key)?, bytes(value)?);
        Ok(self.submit(false, move |db| {
            st(db.set(&k, &v, overwrite).map_err(Status::from))
        }))
    }

    #[pyo3(name = "SetMulti", signature = (overwrite = true, **records))]
    fn set_multi(&self, overwrite: bool, records: Option<&Bound<'_, PyDict>>) -> PyResult<Future> {
        let recs = self::records(records)?;
        Ok(self.submit(false, move |db| {
            let refs: Vec<(&[u8], &[u8])> = recs.iter().map(|(k, v)| (&k[..], &v[..])).collect();
            st(db.set_multi(&refs, overwrite).map_err(Status::from))
        }))
    }

    #[pyo3(name = "Remove")]
    fn remove(&self, key: &Bound<'_, PyAny>) -> PyResult<Future> {
        let k = bytes(key)?;
        Ok(self.submit(false, move |db| st(db.remove(&k).map_err(Status::from))))
    }

    #[pyo3(name = "RemoveMulti", signature = (*keys))]
    fn remove_multi(&self, keys: &Bound<'_, PyTuple>) -> PyResult<Future> {
        let ks = key_list(keys)?;
        Ok(self.submit(false, move |db| {
            let refs: Vec<&[u8]> = ks.iter().map(|k| &k[..]).collect();
            st(db.remove_multi(&refs).map_err(Status::from))
        }))
    }

    #[pyo3(name = "Append", signature = (key, value, delim = None))]
    fn append(
        &self,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        delim: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Future> {
        let (k, v, d) = (
            bytes(key)?,
            bytes(value)?,
            opt_bytes(delim)?.unwrap_or_default(),
        );
        Ok(self.submit(false, move |db| {
            st(db.append(&k, &v, &d).map_err(Status::from))
        }))
    }

    #[pyo3(name = "AppendMulti", signature = (delim = None, **records))]
    fn append_multi(
        &self,
        delim: Option<&Bound<'_, PyAny>>,
        records: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Future> {
        let (d, recs) = (
            opt_bytes(delim)?.unwrap_or_default(),
            self::records(records)?,
        );
        Ok(self.submit(false, move |db| st(tkops::append_multi(db, &d, &recs))))
    }

    #[pyo3(name = "CompareExchange")]
    fn compare_exchange(
        &self,
        key: &Bound<'_, PyAny>,
        expected: Option<&Bound<'_, PyAny>>,
        desired: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Future> {
        let (k, e, d) = (bytes(key)?, opt_bytes(expected)?, opt_bytes(desired)?);
        Ok(self.submit(false, move |db| {
            let (e, d) = (Want::of(e.as_deref()), Want::of(d.as_deref()));
            st(ops::compare_exchange(db, &k, e, d))
        }))
    }

    #[pyo3(name = "Increment", signature = (key, inc = 1, init = 0))]
    fn increment(&self, key: &Bound<'_, PyAny>, inc: i64, init: i64) -> PyResult<Future> {
        let k = bytes(key)?;
        Ok(
            self.submit(false, move |db| match tkops::increment(db, &k, inc, init) {
                Ok(n) => Outcome::Int(Status::ok(), n),
                Err(s) => Outcome::Int(s, 0),
            }),
        )
    }

    #[pyo3(name = "CompareExchangeMulti")]
    fn compare_exchange_multi(
        &self,
        expected: &Bound<'_, PyAny>,
        desired: &Bound<'_, PyAny>,
    ) -> PyResult<Future> {
        let (e, d) = (owned_pairs(expected)?, owned_pairs(desired)?);
        Ok(self.submit(false, move |db| {
            st(ops::compare_exchange_multi(db, &wants(&e), &wants(&d)))
        }))
    }

    #[pyo3(name = "Rekey", signature = (old_key, new_key, overwrite = true, copying = false))]
    fn rekey(
        &self,
        old_key: &Bound<'_, PyAny>,
        new_key: &Bound<'_, PyAny>,
        overwrite: bool,
        copying: bool,
    ) -> PyResult<Future> {
        let (o, n) = (bytes(old_key)?, bytes(new_key)?);
        Ok(self.submit(false, move |db| {
            st(db.rekey(&o, &n, overwrite, copying).map_err(Status::from))
        }))
    }

    #[pyo3(name = "PopFirst")]
    fn pop_first(&self) -> Future {
        self.submit(false, pop)
    }

    #[pyo3(name = "PopFirstStr")]
    fn pop_first_str(&self) -> Future {
        self.submit(true, pop)
    }

    #[pyo3(name = "PushLast", signature = (value, wtime = -1.0))]
    fn push_last(&self, value: &Bound<'_, PyAny>, wtime: f64) -> PyResult<Future> {
        let v = bytes(value)?;
        Ok(self.submit(false, move |db| {
            st(db.push_last(&v, wtime, false).map_err(Status::from))
        }))
    }

    #[pyo3(name = "Clear")]
    fn clear(&self) -> Future {
        self.submit(false, |db| st(db.clear().map_err(Status::from)))
    }

    #[pyo3(name = "Rebuild", signature = (**_params))]
    fn rebuild(&self, _params: Option<&Bound<'_, PyDict>>) -> Future {
        self.submit(false, |db| st(db.rebuild().map_err(Status::from)))
    }

    #[pyo3(name = "Synchronize", signature = (hard, **_params))]
    fn synchronize(&self, hard: bool, _params: Option<&Bound<'_, PyDict>>) -> Future {
        self.submit(false, move |db| {
            st(db.synchronize(hard).map_err(Status::from))
        })
    }

    #[pyo3(name = "CopyFileData", signature = (dest_path, sync_hard = false))]
    fn copy_file_data(&self, dest_path: String, sync_hard: bool) -> Future {
        self.submit(false, move |db| {
            st(db
                .copy_file_data(&dest_path, sync_hard)
                .map_err(Status::from))
        })
    }

    #[pyo3(name = "Export")]
    fn export(&self, dest_dbm: &Bound<'_, Dbm>) -> PyResult<Future> {
        let dest = dest_dbm.get().arc().map_err(Status::into_err)?;
        Ok(self.submit(false, move |db| {
            st(db.export_to(&dest).map_err(Status::from))
        }))
    }

    #[pyo3(name = "ExportToFlatRecords")]
    fn export_to_flat_records(&self, dest_file: &Bound<'_, File>) -> Future {
        let f = dest_file.get().shared.clone();
        self.submit(false, move |db| {
            st(db.export_to_flat_records(&f).map_err(Status::from))
        })
    }

    #[pyo3(name = "ImportFromFlatRecords")]
    fn import_from_flat_records(&self, src_file: &Bound<'_, File>) -> Future {
        let f = src_file.get().shared.clone();
        self.submit(false, move |db| {
            st(db.import_from_flat_records(&f).map_err(Status::from))
        })
    }

    /// Keys matching `pattern` under `mode` (DBM.Search's), as str.
    #[pyo3(name = "Search", signature = (mode, pattern, capacity = 0))]
    fn search(
        &self,
        mode: String,
        pattern: &Bound<'_, PyAny>,
        capacity: usize,
    ) -> PyResult<Future> {
        let p = bytes(pattern)?;
        Ok(self.submit(true, move |db| {
            let found = SearchMode::parse(&mode).and_then(|m| db.search(m, &p, capacity));
            match found {
                Ok(keys) => Outcome::List(Status::ok(), keys),
                Err(e) => Outcome::List(e.into(), Vec::new()),
            }
        }))
    }

    fn __repr__(&self) -> String {
        self.describe()
    }

    fn __str__(&self) -> String {
        self.describe()
    }
}
