//! The rest of Tkrzw's `tkrzw_dbm_*` calls: rekey, the queue (pop_first,
//! push_last), compare_exchange_and_get, append_multi, export and the
//! flat records, the file's size, path and copy, timestamp, health, check
//! and restore_database.

use crate::dbm::{cas_value, db, MemstoredDBM};
use crate::file::{file, MemstoredFile};
use crate::mem::{bytes, give_bytes, give_record, text, MemstoredKeyValuePair};
use crate::status::{guard, set_failure, MEMSTORED_STATUS_INFEASIBLE_ERROR};
use memstored_engine::Db;
use std::ffi::c_char;
use std::ptr::null_mut;

/// Changes the key of a record: moves it (`copying`: copies it) to the new
/// key, atomically. NOT_FOUND_ERROR without a record of the old key;
/// DUPLICATION_ERROR when the new key has one and `overwrite` is false.
///
/// # Safety
/// `dbm` is live; the keys as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_rekey(
    dbm: *mut MemstoredDBM,
    old_key_ptr: *const c_char,
    old_key_size: i32,
    new_key_ptr: *const c_char,
    new_key_size: i32,
    overwrite: bool,
    copying: bool,
) -> bool {
    guard(false, || unsafe {
        let old = bytes(old_key_ptr, old_key_size)?;
        let new = bytes(new_key_ptr, new_key_size)?;
        db(dbm)?.rekey(old, new, overwrite, copying)?;
        Ok(true)
    })
}

/// Takes the first record away and hands out its key and value (each
/// released with `memstored_free`; NULL out-pointers: not wanted).
/// NOT_FOUND_ERROR when there is none.
///
/// # Safety
/// `dbm` is live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_pop_first(
    dbm: *mut MemstoredDBM,
    key_ptr: *mut *mut c_char,
    key_size: *mut i32,
    value_ptr: *mut *mut c_char,
    value_size: *mut i32,
) -> bool {
    unsafe { memstored_dbm_pop_first_wait(dbm, key_ptr, key_size, value_ptr, value_size, 0.0) }
}

/// `memstored_dbm_pop_first` that, when there is no record, waits up to
/// `retry_wait` seconds (infinity: for ever) for a `memstored_dbm_push_last`
/// (Tkrzw-RPC's PopFirst with `retry_wait`).
///
/// # Safety
/// As `memstored_dbm_pop_first`.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_pop_first_wait(
    dbm: *mut MemstoredDBM,
    key_ptr: *mut *mut c_char,
    key_size: *mut i32,
    value_ptr: *mut *mut c_char,
    value_size: *mut i32,
    retry_wait: f64,
) -> bool {
    guard(false, || unsafe {
        let rec = db(dbm)?.pop_first(retry_wait)?;
        let (k, v) = rec;
        give_record(&k, &v, key_ptr, key_size, value_ptr, value_size)?;
        Ok(true)
    })
}

/// Stores a value under a key made of the time `wtime` (seconds; the
/// system clock when negative): 8 big-endian bytes, as Tkrzw makes them.
/// Wakes the `memstored_dbm_pop_first_wait` calls waiting on the database.
///
/// # Safety
/// `dbm` is live; the value as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_push_last(
    dbm: *mut MemstoredDBM,
    value_ptr: *const c_char,
    value_size: i32,
    wtime: f64,
) -> bool {
    guard(false, || unsafe {
        db(dbm)?.push_last(bytes(value_ptr, value_size)?, wtime, true)?;
        Ok(true)
    })
}

/// Replaces the record when it holds `expected` (NULL: no record;
/// `MEMSTORED_ANY_DATA`: any value) with `desired` (NULL: removes it;
/// `MEMSTORED_ANY_DATA`: no change), atomically, and returns the value it
/// held (NULL when none; its size to `actual_size`). INFEASIBLE_ERROR
/// (still with the value) when it did not hold `expected`.
///
/// # Safety
/// `dbm` is live; the byte arguments as everywhere; `actual_size` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_compare_exchange_and_get(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
    expected_ptr: *const c_char,
    expected_size: i32,
    desired_ptr: *const c_char,
    desired_size: i32,
    actual_size: *mut i32,
) -> *mut c_char {
    let mut mismatch = false;
    let out = guard(null_mut(), || unsafe {
        let key = bytes(key_ptr, key_size)?;
        let expected = cas_value(expected_ptr, expected_size)?;
        let desired = cas_value(desired_ptr, desired_size)?;
        let (done, actual) = db(dbm)?.compare_exchange_and_get(key, expected, desired)?;
        mismatch = !done;
        match actual {
            Some(v) => give_bytes(&v, actual_size),
            None => Ok(null_mut()),
        }
    });
    if mismatch {
        set_failure(
            MEMSTORED_STATUS_INFEASIBLE_ERROR,
            "the record does not hold the expected value",
        );
    }
    out
}

/// Appends each value after the delimiter to its record (storing the value
/// when the record is absent).
///
/// # Safety
/// `records` holds `num_records` pairs with non-NULL values.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_append_multi(
    dbm: *mut MemstoredDBM,
    records: *const MemstoredKeyValuePair,
    num_records: i32,
    delim_ptr: *const c_char,
    delim_size: i32,
) -> bool {
    guard(false, || unsafe {
        let recs = crate::dbm::pairs_of(records, num_records)?;
        db(dbm)?.append_multi(&recs, bytes(delim_ptr, delim_size)?)?;
        Ok(true)
    })
}

/// True when a record of the key exists.
///
/// # Safety
/// `dbm` is live; the key as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_check(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
) -> bool {
    guard(false, || unsafe {
        Ok(db(dbm)?.get_record(bytes(key_ptr, key_size)?)?.is_some())
    })
}

/// Stores every record of the database in `dest_dbm`.
///
/// # Safety
/// Both handles are live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_export(
    dbm: *mut MemstoredDBM,
    dest_dbm: *mut MemstoredDBM,
) -> bool {
    guard(false, || unsafe {
        db(dbm)?.export_to(db(dest_dbm)?)?;
        Ok(true)
    })
}

/// Runs a call that takes the database and a file.
unsafe fn with_file(
    dbm: *mut MemstoredDBM,
    f: *mut MemstoredFile,
    call: impl FnOnce(&Db, &memstored_engine::File) -> memstored_engine::Result<()>,
) -> bool {
    guard(false, || unsafe {
        call(db(dbm)?, file(f)?)?;
        Ok(true)
    })
}

/// Empties the file and writes every record to it as Tkrzw's flat records.
///
/// # Safety
/// `dbm` is live; `dest_file` is a live, writable file handle.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_export_to_flat_records(
    dbm: *mut MemstoredDBM,
    dest_file: *mut MemstoredFile,
) -> bool {
    unsafe { with_file(dbm, dest_file, Db::export_to_flat_records) }
}

/// Stores every record of a file of Tkrzw's flat records, read from its start.
///
/// # Safety
/// `dbm` is live; `src_file` is a live file handle.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_import_from_flat_records(
    dbm: *mut MemstoredDBM,
    src_file: *mut MemstoredFile,
) -> bool {
    unsafe { with_file(dbm, src_file, Db::import_from_flat_records) }
}

/// Empties the file and writes every key to it, one a line.
///
/// # Safety
/// `dbm` is live; `dest_file` is a live, writable file handle.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_export_keys_as_lines(
    dbm: *mut MemstoredDBM,
    dest_file: *mut MemstoredFile,
) -> bool {
    unsafe { with_file(dbm, dest_file, Db::export_keys_as_lines) }
}

/// The bytes of the database's files (in memory: of its records); -1 on failure.
///
/// # Safety
/// `dbm` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_get_file_size(dbm: *mut MemstoredDBM) -> i64 {
    guard(-1, || unsafe { Ok(db(dbm)?.file_size() as i64) })
}

/// The path the database was opened with ("" in memory), NUL-terminated,
/// released with `memstored_free`; NULL on failure.
///
/// # Safety
/// `dbm` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_get_file_path(dbm: *mut MemstoredDBM) -> *mut c_char {
    guard(null_mut(), || unsafe {
        give_bytes(db(dbm)?.file_path().as_bytes(), null_mut())
    })
}

/// Seconds since the epoch of the open or the last synchronize; NaN on failure.
///
/// # Safety
/// `dbm` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_get_timestamp(dbm: *mut MemstoredDBM) -> f64 {
    guard(f64::NAN, || unsafe { Ok(db(dbm)?.timestamp()) })
}

/// True when the database is healthy (an open memstored database is).
///
/// # Safety
/// `dbm` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_is_healthy(dbm: *mut MemstoredDBM) -> bool {
    guard(false, || unsafe { Ok(db(dbm)?.is_healthy()) })
}

/// Writes a consistent copy of the database's files to `dest_path` (shard
/// files get their suffixes), which opens as the database does.
/// PRECONDITION_ERROR for an in-memory database.
///
/// # Safety
/// `dbm` is live; `dest_path` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_copy_file_data(
    dbm: *mut MemstoredDBM,
    dest_path: *const c_char,
    sync_hard: bool,
) -> bool {
    guard(false, || unsafe {
        db(dbm)?.copy_file_data(text(dest_path)?, sync_hard)?;
        Ok(true)
    })
}

/// Salvages every intact record of a damaged database file into a new one.
/// `class_name` "HashDBM" or "TreeDBM" (NULL or "": by the extension);
/// `end_offset` other than 0 or negative is NOT_IMPLEMENTED_ERROR;
/// `cipher_key` is not used (memstored does not encrypt).
///
/// # Safety
/// The strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_restore_database(
    old_file_path: *const c_char,
    new_file_path: *const c_char,
    class_name: *const c_char,
    end_offset: i64,
    _cipher_key: *const c_char,
) -> bool {
    guard(false, || unsafe {
        let (old, new) = (text(old_file_path)?, text(new_file_path)?);
        memstored_engine::restore_database(old, new, text(class_name)?, end_offset)?;
        Ok(true)
    })
}
