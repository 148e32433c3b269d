//! Record processors: `memstored_dbm_process`, `_process_multi`,
//! `_process_first`, `_process_each` with C callbacks shaped as Tkrzw's
//! `tkrzw_record_processor`, and the special pointers a callback returns
//! (`MEMSTORED_REC_PROC_NOOP`, `MEMSTORED_REC_PROC_REMOVE`) or a
//! compare-exchange takes (`MEMSTORED_ANY_DATA`). Each special value is a
//! static one-byte array: C compares its address, never its contents.

use crate::dbm::{db, MemstoredDBM};
use crate::mem::{array, bytes};
use crate::status::{guard, Failure, Outcome};
use bytes::Bytes;
use memstored_engine::{Action, Record};
use std::ffi::{c_char, c_void};
use std::ptr::null;

/// Returned by a record processor: keep the record as it is.
#[no_mangle]
pub static MEMSTORED_REC_PROC_NOOP: [c_char; 1] = [0];

/// Returned by a record processor: remove the record.
#[no_mangle]
pub static MEMSTORED_REC_PROC_REMOVE: [c_char; 1] = [0];

/// Given as an expected value: a record with any value. Given as a desired
/// value: no change.
#[no_mangle]
pub static MEMSTORED_ANY_DATA: [c_char; 1] = [0];

/// A record processor, as Tkrzw's `tkrzw_record_processor`: called with
/// the caller's argument, the key (NULL and -1 in `process_each`'s calls
/// before and after the records), the value (NULL and -1 when there is no
/// record) and where to put the size of a new value. Returns
/// `MEMSTORED_REC_PROC_NOOP`, `MEMSTORED_REC_PROC_REMOVE`, or a new value
/// (not taken over: copied before the call returns).
pub type MemstoredRecordProcessor = Option<
    unsafe extern "C" fn(
        arg: *mut c_void,
        key_ptr: *const c_char,
        key_size: i32,
        value_ptr: *const c_char,
        value_size: i32,
        new_value_size: *mut i32,
    ) -> *const c_char,
>;

/// A key and its processor, as Tkrzw's `TkrzwKeyProcPair`.
#[repr(C)]
pub struct MemstoredKeyProcPair {
    pub key_ptr: *const c_char,
    pub key_size: i32,
    pub proc_: MemstoredRecordProcessor,
    pub proc_arg: *mut c_void,
}

/// The `MEMSTORED_ANY_DATA` pointer.
pub(crate) fn any_data() -> *const c_char {
    MEMSTORED_ANY_DATA.as_ptr()
}

/// A processor and its argument, callable on records.
#[derive(Clone, Copy)]
struct Callback {
    f: unsafe extern "C" fn(
        *mut c_void,
        *const c_char,
        i32,
        *const c_char,
        i32,
        *mut i32,
    ) -> *const c_char,
    arg: *mut c_void,
}

/// A pointer and size for the callback (NULL and -1 for "none").
fn raw(b: Option<&[u8]>) -> Outcome<(*const c_char, i32)> {
    match b {
        Some(b) => Ok((b.as_ptr().cast(), crate::mem::size32(b.len())?)),
        None => Ok((null(), -1)),
    }
}

impl Callback {
    fn new(f: MemstoredRecordProcessor, arg: *mut c_void) -> Outcome<Callback> {
        let f = f.ok_or_else(|| Failure::invalid("the record processor is NULL"))?;
        Ok(Callback { f, arg })
    }

    /// Calls the processor and turns its answer into an action; a new
    /// value keeps the record's flags (and, for a present record, expiry).
    ///
    /// # Safety
    /// The processor follows the contract of `MemstoredRecordProcessor`.
    unsafe fn call(&self, key: Option<&[u8]>, rec: Option<&Record>) -> Outcome<Action> {
        let (kp, ks) = raw(key)?;
        let (vp, vs) = raw(rec.map(|r| &r.value[..]))?;
        let mut size = 0i32;
        // SAFETY: the caller's contract; every pointer lives for the call.
        let out = unsafe { (self.f)(self.arg, kp, ks, vp, vs, &mut size) };
        if out.is_null() || out == MEMSTORED_REC_PROC_NOOP.as_ptr() {
            return Ok(Action::Keep);
        }
        if out == MEMSTORED_REC_PROC_REMOVE.as_ptr() {
            return Ok(if rec.is_some() {
                Action::Remove
            } else {
                Action::Keep
            });
        }
        // SAFETY: the processor returned `size` readable bytes (or a
        // NUL-terminated string with a negative size).
        let value = Bytes::copy_from_slice(unsafe { bytes(out, size) }?);
        Ok(Action::Put {
            value,
            flags: rec.map_or(0, |r| r.meta.flags),
            expires_at: rec.map_or(0, |r| r.meta.expires_at),
        })
    }
}

/// Runs `f` with the engine's processor errors carried as `Failure`s: the
/// engine's closures return engine errors, so a callback's own failure
/// (a bad size) is kept aside and returned instead.
fn run(
    f: impl FnOnce(
        &mut dyn FnMut(Option<&[u8]>, Option<&Record>, Callback) -> memstored_engine::ProcessResult,
    ) -> memstored_engine::Result<()>,
) -> Outcome<bool> {
    let mut failed: Option<Failure> = None;
    let mut call = |key: Option<&[u8]>, rec: Option<&Record>, cb: Callback| {
        // SAFETY: the entry points' callers vouch for their processors.
        unsafe { cb.call(key, rec) }.map_err(|e| {
            let msg = e.message.clone();
            failed = Some(e);
            memstored_engine::Error::InvalidArgument(msg)
        })
    };
    let r = f(&mut call);
    match (r, failed) {
        (_, Some(e)) => Err(e),
        (Err(e), None) => Err(e.into()),
        (Ok(()), None) => Ok(true),
    }
}

/// Processes the record of a key with a callback: it sees the value (NULL
/// when there is no record) and returns what to do. With `writable` the
/// call is atomic (under the record's lock: the callback must not call
/// into the same database); without, what it returns is ignored.
///
/// # Safety
/// `dbm` is live; the key as everywhere; `proc_` follows
/// `MemstoredRecordProcessor`'s contract.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_process(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
    proc_: MemstoredRecordProcessor,
    proc_arg: *mut c_void,
    writable: bool,
) -> bool {
    guard(false, || unsafe {
        let (db, key) = (db(dbm)?, bytes(key_ptr, key_size)?);
        let cb = Callback::new(proc_, proc_arg)?;
        run(|call| db.process_multi(&[key], writable, |_, k, r| call(Some(k), r, cb)))
    })
}

/// Processes several records with their callbacks, in the order given,
/// atomically (every involved shard locked throughout) with `writable`.
///
/// # Safety
/// `key_proc_pairs` holds `num_pairs` pairs with keys and processors as
/// `memstored_dbm_process` takes them.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_process_multi(
    dbm: *mut MemstoredDBM,
    key_proc_pairs: *const MemstoredKeyProcPair,
    num_pairs: i32,
    writable: bool,
) -> bool {
    guard(false, || unsafe {
        let pairs = array(key_proc_pairs, num_pairs)?;
        let mut keys = Vec::with_capacity(pairs.len());
        let mut cbs = Vec::with_capacity(pairs.len());
        for p in pairs {
            keys.push(bytes(p.key_ptr, p.key_size)?);
            cbs.push(Callback::new(p.proc_, p.proc_arg)?);
        }
        let db = db(dbm)?;
        run(|call| db.process_multi(&keys, writable, |i, k, r| call(Some(k), r, cbs[i])))
    })
}

/// Processes the first record (as the iterator orders them) with a
/// callback; NOT_FOUND_ERROR, without calling it, when there is none.
///
/// # Safety
/// As `memstored_dbm_process`.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_process_first(
    dbm: *mut MemstoredDBM,
    proc_: MemstoredRecordProcessor,
    proc_arg: *mut c_void,
    writable: bool,
) -> bool {
    guard(false, || unsafe {
        let (db, cb) = (db(dbm)?, Callback::new(proc_, proc_arg)?);
        run(|call| db.process_first(writable, |k, r| call(Some(k), Some(r), cb)))
    })
}

/// Processes every record with a callback, each atomically on its own;
/// the callback is also called once before and once after the records,
/// with NULL key and value (as Tkrzw does).
///
/// # Safety
/// As `memstored_dbm_process`.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_process_each(
    dbm: *mut MemstoredDBM,
    proc_: MemstoredRecordProcessor,
    proc_arg: *mut c_void,
    writable: bool,
) -> bool {
    guard(false, || unsafe {
        let (db, cb) = (db(dbm)?, Callback::new(proc_, proc_arg)?);
        run(|call| {
            call(None, None, cb)?;
            db.process_each(writable, |k, r| call(Some(k), Some(r), cb))?;
            call(None, None, cb).map(|_| ())
        })
    })
}
