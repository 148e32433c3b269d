//! Iterators: `memstored_dbm_iter_*`, over the engine's cursors. An iterator
//! is used by one thread at a time; other threads may write meanwhile.

use crate::dbm::{db, MemstoredDBM};
use crate::handle;
use crate::mem::{bytes, give_bytes, give_record};
use crate::status::{guard, Failure, Outcome, MEMSTORED_STATUS_NOT_FOUND_ERROR};
use memstored_engine::{Cursor, Db};
use std::ffi::c_char;
use std::ptr::null_mut;
use std::sync::Arc;

/// An iterator over a database's records. Opaque.
pub struct MemstoredDBMIter {
    /// Borrows the database `_db` keeps alive; declared first so that it is
    /// dropped first.
    cursor: Cursor<'static>,
    _db: Arc<Db>,
}

/// The cursor behind a handle.
///
/// # Safety
/// `iter` is NULL or a live handle from `memstored_dbm_make_iterator`, not
/// used by another thread at the same time.
unsafe fn cursor<'a>(iter: *mut MemstoredDBMIter) -> Outcome<&'a mut Cursor<'static>> {
    // SAFETY: the caller's contract.
    unsafe { handle::live_mut(iter, "iterator") }.map(|h| &mut h.cursor)
}

/// A new iterator, on no record until `first`, `last` or a jump; release it
/// with `memstored_dbm_iter_free`. NULL on failure.
///
/// # Safety
/// `dbm` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_make_iterator(
    dbm: *mut MemstoredDBM,
) -> *mut MemstoredDBMIter {
    guard(null_mut(), || {
        // SAFETY: the caller's contract.
        let db = unsafe { db(dbm) }?.clone();
        // SAFETY: the cursor borrows the `Db` inside the `Arc`, whose heap
        // place never moves and which the handle keeps alive for as long as
        // the cursor (dropped first, see the struct).
        let cursor = unsafe { std::mem::transmute::<Cursor<'_>, Cursor<'static>>(db.cursor()) };
        Ok(handle::give(MemstoredDBMIter { cursor, _db: db }))
    })
}

/// Releases an iterator. NULL is a no-op.
///
/// # Safety
/// `iter` is NULL or a live handle; it is dangling afterwards.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_free(iter: *mut MemstoredDBMIter) {
    guard((), || {
        // SAFETY: the caller hands the handle back exactly once.
        unsafe { handle::free(iter) };
        Ok(())
    })
}

/// Runs a move of the cursor.
unsafe fn moved(
    iter: *mut MemstoredDBMIter,
    f: impl FnOnce(&mut Cursor<'static>) -> memstored_engine::Result<()>,
) -> bool {
    // SAFETY: forwarded contract.
    guard(false, || unsafe {
        f(cursor(iter)?)?;
        Ok(true)
    })
}

/// Moves to the first record (in key order on ordered databases); succeeds
/// on an empty database too.
///
/// # Safety
/// `iter` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_first(iter: *mut MemstoredDBMIter) -> bool {
    unsafe { moved(iter, |c| c.first()) }
}

/// Moves to the last record (ordered databases; NOT_IMPLEMENTED_ERROR else).
///
/// # Safety
/// `iter` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_last(iter: *mut MemstoredDBMIter) -> bool {
    unsafe { moved(iter, |c| c.last()) }
}

/// Runs a move of the cursor to a key.
unsafe fn jumped(
    iter: *mut MemstoredDBMIter,
    key_ptr: *const c_char,
    key_size: i32,
    f: impl FnOnce(&mut Cursor<'static>, &[u8]) -> memstored_engine::Result<()>,
) -> bool {
    // SAFETY: forwarded contract.
    guard(false, || unsafe {
        f(cursor(iter)?, bytes(key_ptr, key_size)?)?;
        Ok(true)
    })
}

/// Moves to the record of the key; on ordered databases to the first key at
/// or after it. On hash databases NOT_FOUND_ERROR when the key is absent.
///
/// # Safety
/// `iter` is live; the key as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_jump(
    iter: *mut MemstoredDBMIter,
    key_ptr: *const c_char,
    key_size: i32,
) -> bool {
    unsafe { jumped(iter, key_ptr, key_size, |c, k| c.jump(k)) }
}

/// Moves to the last record before the key (`inclusive`: at or before).
/// Ordered databases only.
///
/// # Safety
/// `iter` is live; the key as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_jump_lower(
    iter: *mut MemstoredDBMIter,
    key_ptr: *const c_char,
    key_size: i32,
    inclusive: bool,
) -> bool {
    unsafe { jumped(iter, key_ptr, key_size, |c, k| c.jump_lower(k, inclusive)) }
}

/// Moves to the first record after the key (`inclusive`: at or after).
/// Ordered databases only.
///
/// # Safety
/// `iter` is live; the key as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_jump_upper(
    iter: *mut MemstoredDBMIter,
    key_ptr: *const c_char,
    key_size: i32,
    inclusive: bool,
) -> bool {
    unsafe { jumped(iter, key_ptr, key_size, |c, k| c.jump_upper(k, inclusive)) }
}

/// Moves to the next record; past the last one the iterator is on no record
/// (and the call still succeeds). NOT_FOUND_ERROR when on no record.
///
/// # Safety
/// `iter` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_next(iter: *mut MemstoredDBMIter) -> bool {
    unsafe { moved(iter, |c| c.next()) }
}

/// Moves to the previous record (ordered databases).
///
/// # Safety
/// `iter` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_previous(iter: *mut MemstoredDBMIter) -> bool {
    unsafe { moved(iter, |c| c.previous()) }
}

/// The current record: its key and value, each NUL-terminated and released
/// with `memstored_free`, through the out-pointers that are not NULL.
/// NOT_FOUND_ERROR when on no record.
///
/// # Safety
/// `iter` is live; each out-pointer NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_get(
    iter: *mut MemstoredDBMIter,
    key_ptr: *mut *mut c_char,
    key_size: *mut i32,
    value_ptr: *mut *mut c_char,
    value_size: *mut i32,
) -> bool {
    guard(false, || unsafe {
        let (k, v) = cursor(iter)?.get()?;
        give_record(&k, &v, key_ptr, key_size, value_ptr, value_size)?;
        Ok(true)
    })
}

/// The current key (released with `memstored_free`), or NULL.
///
/// # Safety
/// `iter` is live; `key_size` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_get_key(
    iter: *mut MemstoredDBMIter,
    key_size: *mut i32,
) -> *mut c_char {
    guard(null_mut(), || unsafe {
        give_bytes(&cursor(iter)?.key()?, key_size)
    })
}

/// The current value (released with `memstored_free`), or NULL.
///
/// # Safety
/// `iter` is live; `value_size` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_get_value(
    iter: *mut MemstoredDBMIter,
    value_size: *mut i32,
) -> *mut c_char {
    guard(null_mut(), || unsafe {
        give_bytes(&cursor(iter)?.get()?.1, value_size)
    })
}

/// Replaces the value of the current record.
///
/// # Safety
/// `iter` is live; the value as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_set(
    iter: *mut MemstoredDBMIter,
    value_ptr: *const c_char,
    value_size: i32,
) -> bool {
    guard(false, || unsafe {
        cursor(iter)?.set(bytes(value_ptr, value_size)?)?;
        Ok(true)
    })
}

/// Removes the current record and moves to the next one.
///
/// # Safety
/// `iter` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_remove(iter: *mut MemstoredDBMIter) -> bool {
    unsafe { moved(iter, |c| c.remove()) }
}

/// The current record, as `memstored_dbm_iter_get`, then moves to the next
/// one. NOT_FOUND_ERROR past the end.
///
/// # Safety
/// As `memstored_dbm_iter_get`.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_iter_step(
    iter: *mut MemstoredDBMIter,
    key_ptr: *mut *mut c_char,
    key_size: *mut i32,
    value_ptr: *mut *mut c_char,
    value_size: *mut i32,
) -> bool {
    guard(false, || unsafe {
        let (k, v) = cursor(iter)?.step()?.ok_or_else(|| {
            Failure::new(
                MEMSTORED_STATUS_NOT_FOUND_ERROR,
                "the iterator is past the end",
            )
        })?;
        give_record(&k, &v, key_ptr, key_size, value_ptr, value_size)?;
        Ok(true)
    })
}
