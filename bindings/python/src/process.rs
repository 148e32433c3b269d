//! tkrzw-python's Process, ProcessMulti and ProcessEach: a Python function
//! per record, whose result says what becomes of it (None: leave it,
//! False: remove it, anything else: store it, as bytes, str or `str()`).
//!
//! The function never runs under an engine lock. Python may hand the GIL to
//! another thread in the middle of any Python code, and that thread's `Set`
//! (which keeps the GIL, see dbm.rs) would wait for the lock while the
//! holder waits for the GIL. So each call reads the record, runs the
//! function, and stores its result only if the record is still the one it
//! read (same CAS; for ProcessMulti, same values); otherwise it reads again
//! and calls the function again. Under contention a function may therefore
//! run more than once for one call; the result applied is that of a run
//! over the record as it was when applied, which is what a lock gives.

use crate::convert::data;
use crate::status::Status;
use bytes::Bytes;
use memstored_engine::{Action, Db, Error, Record};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes};

/// What the function's result asks for.
enum Outcome {
    Keep,
    Remove,
    Put(Bytes),
}

fn outcome(r: &Bound<'_, PyAny>) -> PyResult<Outcome> {
    if r.is_none() {
        return Ok(Outcome::Keep);
    }
    if let Ok(b) = r.cast::<PyBool>() {
        if !b.is_true() {
            return Ok(Outcome::Remove);
        }
    }
    Ok(Outcome::Put(Bytes::copy_from_slice(&data(r)?)))
}

/// Calls `func(key, value)`; `None` for absent parts.
fn call(func: &Bound<'_, PyAny>, key: Option<&[u8]>, value: Option<&[u8]>) -> PyResult<Outcome> {
    let py = func.py();
    let k = key.map(|k| PyBytes::new(py, k));
    let v = value.map(|v| PyBytes::new(py, v));
    outcome(&func.call1((k, v))?)
}

/// Failures of the engine are a status; a Python exception from the
/// function propagates.
pub enum Failure {
    Status(Status),
    Py(PyErr),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Status(e.into())
    }
}

impl From<PyErr> for Failure {
    fn from(e: PyErr) -> Failure {
        Failure::Py(e)
    }
}

/// The status of a processing call, or the function's exception.
pub fn settle(r: Result<(), Failure>) -> PyResult<Status> {
    match r {
        Ok(()) => Ok(Status::ok()),
        Err(Failure::Status(st)) => Ok(st),
        Err(Failure::Py(e)) => Err(e),
    }
}

fn action(o: Outcome, cur: Option<&Record>) -> Action {
    match o {
        Outcome::Keep => Action::Keep,
        Outcome::Remove if cur.is_none() => Action::Keep,
        Outcome::Remove => Action::Remove,
        Outcome::Put(value) => Action::Put {
            value,
            flags: cur.map_or(0, |r| r.meta.flags),
            expires_at: cur.map_or(0, |r| r.meta.expires_at),
        },
    }
}

/// Applies `o` if the record of `key` still has the CAS `seen` (None:
/// still absent). Returns whether it did.
fn apply_if_unchanged(db: &Db, key: &[u8], seen: Option<u64>, o: Outcome) -> Result<bool, Error> {
    let (applied, _) = db.process(key, |cur| {
        if cur.map(|r| r.meta.cas) != seen {
            return Ok((Action::Keep, false));
        }
        Ok((action(o, cur), true))
    })?;
    Ok(applied)
}

/// Process: `func` over the record of `key`; with `writable` false its
/// result is ignored.
pub fn process(
    db: &Db,
    key: &[u8],
    func: &Bound<'_, PyAny>,
    writable: bool,
) -> Result<(), Failure> {
    loop {
        let cur = db.get_record(key)?;
        let o = call(func, Some(key), cur.as_ref().map(|r| &r.value[..]))?;
        if !writable || matches!(o, Outcome::Keep) {
            return Ok(());
        }
        if apply_if_unchanged(db, key, cur.map(|r| r.meta.cas), o)? {
            return Ok(());
        }
    }
}

/// ProcessEach: `func(None, None)`, then `func` over every record, then
/// `func(None, None)` again, as Tkrzw calls it.
pub fn process_each(db: &Db, func: &Bound<'_, PyAny>, writable: bool) -> Result<(), Failure> {
    call(func, None, None)?;
    let mut c = db.cursor();
    c.first()?;
    loop {
        let key = match c.key() {
            Ok(k) => k,
            Err(Error::NotFound(_)) => break,
            Err(e) => return Err(e.into()),
        };
        let rec = db.get_record(&key)?;
        c.next()?;
        let Some(rec) = rec else { continue };
        let o = call(func, Some(&key), Some(&rec.value))?;
        let write = writable && !matches!(o, Outcome::Keep);
        if write && !apply_if_unchanged(db, &key, Some(rec.meta.cas), o)? {
            // Changed since it was read: once more, as Process does.
            process(db, &key, func, writable)?;
        }
    }
    call(func, None, None)?;
    Ok(())
}

/// ProcessMulti: each `(key, func)` in order, a later function of a key
/// seeing what an earlier one left; all results stored at once, atomically.
pub fn process_multi(
    db: &Db,
    ops: &[(Vec<u8>, Bound<'_, PyAny>)],
    writable: bool,
) -> Result<(), Failure> {
    loop {
        // Each distinct key: the value read, and the value after the functions.
        let mut seen: Vec<(Vec<u8>, Option<Bytes>, Option<Bytes>)> = Vec::new();
        for (key, func) in ops {
            let i = match seen.iter().position(|(k, _, _)| k == key) {
                Some(i) => i,
                None => {
                    let v = db.get_record(key)?.map(|r| r.value);
                    seen.push((key.clone(), v.clone(), v));
                    seen.len() - 1
                }
            };
            let now = seen[i].2.clone();
            match call(func, Some(key), now.as_deref())? {
                Outcome::Keep => {}
                Outcome::Remove => seen[i].2 = None,
                Outcome::Put(v) => seen[i].2 = Some(v),
            }
        }
        if !writable {
            return Ok(());
        }
        let expected: Vec<(&[u8], Option<&[u8]>)> = seen
            .iter()
            .map(|(k, v, _)| (&k[..], v.as_deref()))
            .collect();
        let desired: Vec<(&[u8], Option<&[u8]>)> = seen
            .iter()
            .filter(|(_, old, new)| old != new)
            .map(|(k, _, v)| (&k[..], v.as_deref()))
            .collect();
        if desired.is_empty() {
            return Ok(());
        }
        match db.compare_exchange_multi(&expected, &desired) {
            Err(Error::ValueMismatch(_)) => continue,
            r => return Ok(r?),
        }
    }
}
