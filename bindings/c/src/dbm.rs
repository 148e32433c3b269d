//! The database calls: `memstored_dbm_*`, one per `tkrzw_dbm_*` the Go
//! binding needs. Each returns true / a pointer on success and false / NULL
//! on failure, and sets the thread-local last status either way.

use crate::handle;
use crate::mem::{
    array, bytes, copy_to, give_bytes, give_pairs, give_strs, opt_bytes, text,
    MemstoredKeyValuePair, MemstoredStr,
};
use crate::status::{guard, Failure, Outcome, MEMSTORED_STATUS_DUPLICATION_ERROR};
use bytes::Bytes;
use memstored_engine::name::with_params_text;
use memstored_engine::{Action, CasValue, Db, SearchMode};
use std::ffi::c_char;
use std::ptr::null_mut;
use std::sync::Arc;

/// An open database. Opaque; share one handle between threads freely.
/// Iterators keep the database alive, so it may be closed before them.
pub struct MemstoredDBM {
    pub(crate) db: Arc<Db>,
}

/// The database behind a handle.
///
/// # Safety
/// `dbm` is NULL or a live handle from `memstored_dbm_open`.
pub(crate) unsafe fn db<'a>(dbm: *const MemstoredDBM) -> Outcome<&'a Arc<Db>> {
    // SAFETY: the caller's contract.
    unsafe { handle::live(dbm, "database") }.map(|h| &h.db)
}

/// Opens a database. `path` picks the engine as in memstored's names
/// (`casket.tkh` hash file, `casket.tkt` ordered file, `*` in-memory hash,
/// `+` in-memory ordered); `params` is `"k=v,k=v"` (e.g.
/// `"truncate=true,num_buckets=100"`) or NULL. Returns the handle, to be
/// released by `memstored_dbm_close`, or NULL on failure.
///
/// # Safety
/// `path` and `params` are NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_open(
    path: *const c_char,
    writable: bool,
    params: *const c_char,
) -> *mut MemstoredDBM {
    guard(null_mut(), || {
        // SAFETY: the caller's contract.
        let (path, params) = unsafe { (text(path)?, text(params)?) };
        let db = Db::open(&with_params_text(path, params), writable)?;
        Ok(handle::give(MemstoredDBM { db: Arc::new(db) }))
    })
}

/// Closes the database and releases the handle (even when closing fails).
///
/// # Safety
/// `dbm` is a live handle; it is dangling afterwards.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_close(dbm: *mut MemstoredDBM) -> bool {
    guard(false, || {
        // SAFETY: the caller hands the handle back exactly once.
        unsafe { handle::take(dbm, "database") }?.db.close()?;
        Ok(true)
    })
}

/// The value of a key, NUL-terminated; its size goes to `value_size`.
/// NULL with NOT_FOUND_ERROR when absent.
///
/// # Safety
/// `dbm` is live; `key_ptr`/`key_size` as everywhere; `value_size` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_get(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
    value_size: *mut i32,
) -> *mut c_char {
    // SAFETY: forwarded contract; the copy is made while the store lends
    // the value (no intermediate `Bytes`).
    guard(null_mut(), || unsafe {
        let key = bytes(key_ptr, key_size)?;
        db(dbm)?.get_with(key, |v| give_bytes(v, value_size))?
    })
}

/// The value of a key copied into the caller's buffer (`buf_size` bytes;
/// no NUL added): returns the value's size, or -1 with NOT_FOUND_ERROR when
/// absent. A size above `buf_size` means only the first `buf_size` bytes
/// were copied; call again with a larger buffer (or use `memstored_dbm_get`).
/// For tiny values this saves `memstored_dbm_get`'s allocation and the
/// second call to `memstored_free` (the Go binding's gets use it).
///
/// # Safety
/// `dbm` is live; the key as everywhere; `buf` NULL with `buf_size` 0, or
/// `buf_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_get_to(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
    buf: *mut c_char,
    buf_size: i32,
) -> i32 {
    guard(-1, || unsafe {
        let key = bytes(key_ptr, key_size)?;
        db(dbm)?.get_with(key, |v| copy_to(v, buf, buf_size))?
    })
}

/// Runs a call that takes a key and returns a value, handed out as
/// `memstored_dbm_get` does.
unsafe fn valued(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
    value_size: *mut i32,
    f: impl FnOnce(&Db, &[u8]) -> memstored_engine::Result<Bytes>,
) -> *mut c_char {
    // SAFETY: forwarded contract.
    guard(null_mut(), || unsafe {
        let v = f(db(dbm)?, bytes(key_ptr, key_size)?)?;
        give_bytes(&v, value_size)
    })
}

/// The keys of a `MemstoredStr` array, borrowed.
///
/// # Safety
/// `keys` holds `num_keys` strings, alive for `'a`.
unsafe fn keys_of<'a>(keys: *const MemstoredStr, num_keys: i32) -> Outcome<Vec<&'a [u8]>> {
    // SAFETY: the caller's contract.
    unsafe {
        array(keys, num_keys)?
            .iter()
            .map(|k| bytes(k.ptr, k.size))
            .collect()
    }
}

/// The records of the keys that exist, in one allocation; their number goes
/// to `num_matched`. NOT_FOUND_ERROR (with the array) when some are missing.
///
/// # Safety
/// `keys` holds `num_keys` strings; `num_matched` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_get_multi(
    dbm: *mut MemstoredDBM,
    keys: *const MemstoredStr,
    num_keys: i32,
    num_matched: *mut i32,
) -> *mut MemstoredKeyValuePair {
    let mut missing = false;
    let out = guard(null_mut(), || unsafe {
        let keys = keys_of(keys, num_keys)?;
        let found = db(dbm)?.get_multi(&keys)?;
        missing = found.len() < keys.len();
        give_pairs(&found, num_matched)
    });
    if missing {
        crate::status::set_failure(
            crate::status::MEMSTORED_STATUS_NOT_FOUND_ERROR,
            "some keys are missing",
        );
    }
    out
}

/// Stores a record; with `overwrite` false an existing record is kept and
/// DUPLICATION_ERROR set.
///
/// # Safety
/// `dbm` is live; the byte arguments as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_set(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
    value_ptr: *const c_char,
    value_size: i32,
    overwrite: bool,
) -> bool {
    guard(false, || unsafe {
        db(dbm)?.set(
            bytes(key_ptr, key_size)?,
            bytes(value_ptr, value_size)?,
            overwrite,
        )?;
        Ok(true)
    })
}

/// Stores a record and returns the old value (NULL when there was none).
/// With `overwrite` false and a record present, nothing changes, the old
/// value is returned and DUPLICATION_ERROR set. Atomic.
///
/// # Safety
/// As `memstored_dbm_set`; `old_value_size` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_set_and_get(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
    value_ptr: *const c_char,
    value_size: i32,
    overwrite: bool,
    old_value_size: *mut i32,
) -> *mut c_char {
    let mut kept = false;
    let out = guard(null_mut(), || unsafe {
        let value = Bytes::copy_from_slice(bytes(value_ptr, value_size)?);
        let old;
        (old, kept) = set_and_get(db(dbm)?, bytes(key_ptr, key_size)?, value, overwrite)?;
        match old {
            Some(v) => give_bytes(&v, old_value_size),
            None => Ok(null_mut()),
        }
    });
    if kept {
        crate::status::set_failure(MEMSTORED_STATUS_DUPLICATION_ERROR, "the record exists");
    }
    out
}

/// Tkrzw's SetAndGet: stores the record unless `overwrite` is false and one
/// exists; returns the old value and whether the existing record was kept
/// (which Tkrzw reports as DUPLICATION_ERROR). Shared with the Ruby binding.
pub fn set_and_get(
    db: &Db,
    key: &[u8],
    value: Bytes,
    overwrite: bool,
) -> Outcome<(Option<Bytes>, bool)> {
    let (old, _) = db.process(key, |cur| {
        let old = cur.map(|r| r.value.clone());
        let action = match cur {
            Some(_) if !overwrite => Action::Keep,
            _ => Action::Put {
                value,
                flags: cur.map_or(0, |r| r.meta.flags),
                expires_at: 0,
            },
        };
        Ok((action, old))
    })?;
    let kept = old.is_some() && !overwrite;
    Ok((old, kept))
}

/// Stores every record; with `overwrite` false, existing ones are kept and
/// DUPLICATION_ERROR set after the others are stored.
///
/// # Safety
/// `records` holds `num_records` pairs with non-NULL values.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_set_multi(
    dbm: *mut MemstoredDBM,
    records: *const MemstoredKeyValuePair,
    num_records: i32,
    overwrite: bool,
) -> bool {
    guard(false, || unsafe {
        db(dbm)?.set_multi(&pairs_of(records, num_records)?, overwrite)?;
        Ok(true)
    })
}

/// The key-value pairs of an array argument, borrowed (values non-NULL).
///
/// # Safety
/// `records` holds `num_records` pairs, alive for `'a`.
pub(crate) unsafe fn pairs_of<'a>(
    records: *const MemstoredKeyValuePair,
    num_records: i32,
) -> Outcome<Vec<(&'a [u8], &'a [u8])>> {
    // SAFETY: the caller's contract.
    unsafe {
        array(records, num_records)?
            .iter()
            .map(|r| {
                Ok((
                    bytes(r.key_ptr, r.key_size)?,
                    bytes(r.value_ptr, r.value_size)?,
                ))
            })
            .collect()
    }
}

/// Removes a record; NOT_FOUND_ERROR when absent.
///
/// # Safety
/// `dbm` is live; the key as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_remove(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
) -> bool {
    guard(false, || unsafe {
        db(dbm)?.remove(bytes(key_ptr, key_size)?)?;
        Ok(true)
    })
}

/// Removes a record and returns its value; NULL and NOT_FOUND_ERROR when absent.
///
/// # Safety
/// As `memstored_dbm_get`.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_remove_and_get(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
    value_size: *mut i32,
) -> *mut c_char {
    unsafe { valued(dbm, key_ptr, key_size, value_size, Db::remove_and_get) }
}

/// Removes every key; NOT_FOUND_ERROR when some were absent (the rest are removed).
///
/// # Safety
/// `keys` holds `num_keys` strings.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_remove_multi(
    dbm: *mut MemstoredDBM,
    keys: *const MemstoredStr,
    num_keys: i32,
) -> bool {
    guard(false, || unsafe {
        let keys = keys_of(keys, num_keys)?;
        db(dbm)?.remove_multi(&keys)?;
        Ok(true)
    })
}

/// Appends the value after the delimiter to the record, or stores the value
/// when the record is absent.
///
/// # Safety
/// `dbm` is live; the byte arguments as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_append(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
    value_ptr: *const c_char,
    value_size: i32,
    delim_ptr: *const c_char,
    delim_size: i32,
) -> bool {
    guard(false, || unsafe {
        let (k, v) = (bytes(key_ptr, key_size)?, bytes(value_ptr, value_size)?);
        db(dbm)?.append(k, v, bytes(delim_ptr, delim_size)?)?;
        Ok(true)
    })
}

/// Replaces the record when it holds `expected` (NULL: must be absent;
/// `MEMSTORED_ANY_DATA`: any value) with `desired` (NULL: remove it;
/// `MEMSTORED_ANY_DATA`: no change); INFEASIBLE_ERROR otherwise.
///
/// # Safety
/// `dbm` is live; the byte arguments as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_compare_exchange(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
    expected_ptr: *const c_char,
    expected_size: i32,
    desired_ptr: *const c_char,
    desired_size: i32,
) -> bool {
    guard(false, || unsafe {
        let key = bytes(key_ptr, key_size)?;
        let any = crate::process::any_data();
        if expected_ptr == any || desired_ptr == any {
            let expected = cas_value(expected_ptr, expected_size)?;
            let desired = cas_value(desired_ptr, desired_size)?;
            let (done, _) = db(dbm)?.compare_exchange_and_get(key, expected, desired)?;
            return match done {
                true => Ok(true),
                false => Err(Failure::new(
                    crate::status::MEMSTORED_STATUS_INFEASIBLE_ERROR,
                    "the record does not hold the expected value",
                )),
            };
        }
        let expected = opt_bytes(expected_ptr, expected_size)?;
        let desired = opt_bytes(desired_ptr, desired_size)?;
        db(dbm)?.compare_exchange(key, expected, desired)?;
        Ok(true)
    })
}

/// A compare-exchange argument: NULL is "no record", `MEMSTORED_ANY_DATA`
/// "any value" (expected) or "no change" (desired).
///
/// # Safety
/// As `bytes`.
pub(crate) unsafe fn cas_value<'a>(ptr: *const c_char, size: i32) -> Outcome<CasValue<'a>> {
    Ok(if ptr.is_null() {
        CasValue::Absent
    } else if ptr == crate::process::any_data() {
        CasValue::Any
    } else {
        // SAFETY: forwarded contract.
        CasValue::Value(unsafe { bytes(ptr, size) }?)
    })
}

/// Adds `increment` to the record's decimal value (an absent record counts
/// as `initial`) and returns the new value; INT64_MIN on failure. With
/// `increment` INT64_MIN, returns the current value and changes nothing.
///
/// # Safety
/// `dbm` is live; the key as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_increment(
    dbm: *mut MemstoredDBM,
    key_ptr: *const c_char,
    key_size: i32,
    increment: i64,
    initial: i64,
) -> i64 {
    guard(i64::MIN, || unsafe {
        increment_or_read(db(dbm)?, bytes(key_ptr, key_size)?, increment, initial)
    })
}

/// Tkrzw's Increment on decimal text: adds `increment` (an absent record
/// counts as `initial`); with `increment` i64::MIN only reads the number.
/// Shared with the Ruby binding.
pub fn increment_or_read(db: &Db, key: &[u8], increment: i64, initial: i64) -> Outcome<i64> {
    if increment != i64::MIN {
        return Ok(db.increment(key, increment, initial)?);
    }
    match db.get(key) {
        Ok(v) => std::str::from_utf8(&v)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| {
                Failure::new(
                    crate::status::MEMSTORED_STATUS_INFEASIBLE_ERROR,
                    "the value is not a decimal number",
                )
            }),
        Err(e) if e.is_not_found() => Ok(initial),
        Err(e) => Err(e.into()),
    }
}

/// A key with its value or "no record", as compare-exchange-multi takes them.
type OptPair<'a> = (&'a [u8], Option<&'a [u8]>);

/// The pairs of a compare-exchange-multi argument.
unsafe fn opt_pairs<'a>(ptr: *const MemstoredKeyValuePair, n: i32) -> Outcome<Vec<OptPair<'a>>> {
    // SAFETY: forwarded contract.
    unsafe {
        array(ptr, n)?
            .iter()
            .map(|r| {
                Ok((
                    bytes(r.key_ptr, r.key_size)?,
                    opt_bytes(r.value_ptr, r.value_size)?,
                ))
            })
            .collect()
    }
}

/// Atomically: when every expected record holds its value (NULL value: is
/// absent; `MEMSTORED_ANY_DATA`: exists), stores every desired one (NULL value: removes it); else
/// INFEASIBLE_ERROR and nothing changes.
///
/// # Safety
/// The arrays hold the given numbers of pairs.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_compare_exchange_multi(
    dbm: *mut MemstoredDBM,
    expected: *const MemstoredKeyValuePair,
    num_expected: i32,
    desired: *const MemstoredKeyValuePair,
    num_desired: i32,
) -> bool {
    guard(false, || unsafe {
        let any = crate::process::any_data();
        let wants_any: Vec<bool> = array(expected, num_expected)?
            .iter()
            .map(|r| r.value_ptr == any)
            .collect();
        let expected = opt_pairs(expected, num_expected)?;
        let desired = opt_pairs(desired, num_desired)?;
        let db = db(dbm)?;
        // "Any value": the value read now is expected; a change between
        // the read and the locked check is retried.
        for _ in 0..ANY_RETRIES {
            let mut held = Vec::with_capacity(expected.len());
            for ((key, _), any) in expected.iter().zip(&wants_any) {
                held.push(match any {
                    true => Some(db.get_record(key)?.ok_or_else(no_record)?.value),
                    false => None,
                });
            }
            let now: Vec<OptPair<'_>> = expected
                .iter()
                .zip(&held)
                .map(|((k, want), v)| (*k, v.as_deref().or(*want)))
                .collect();
            match db.compare_exchange_multi(&now, &desired) {
                Err(memstored_engine::Error::ValueMismatch(_)) if wants_any.contains(&true) => {}
                r => return r.map(|()| true).map_err(Into::into),
            }
        }
        Err(no_record())
    })
}

/// Rounds of `memstored_dbm_compare_exchange_multi` with "any value"
/// expectations whose records kept changing.
const ANY_RETRIES: usize = 1000;

fn no_record() -> Failure {
    Failure::new(
        crate::status::MEMSTORED_STATUS_INFEASIBLE_ERROR,
        "a record does not hold the expected value",
    )
}

/// The number of records, or -1 on failure.
///
/// # Safety
/// `dbm` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_count(dbm: *mut MemstoredDBM) -> i64 {
    guard(-1, || unsafe { Ok(db(dbm)?.count() as i64) })
}

/// Removes every record.
///
/// # Safety
/// `dbm` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_clear(dbm: *mut MemstoredDBM) -> bool {
    guard(false, || unsafe {
        db(dbm)?.clear()?;
        Ok(true)
    })
}

/// Compacts the database's files while other threads keep using it.
/// `params` is accepted for Tkrzw's signature and not used: the rebuilt
/// files keep the settings the database was opened with.
///
/// # Safety
/// `dbm` is live; `params` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_rebuild(
    dbm: *mut MemstoredDBM,
    _params: *const c_char,
) -> bool {
    guard(false, || unsafe {
        db(dbm)?.rebuild()?;
        Ok(true)
    })
}

/// True when dead records take more than half of a file.
///
/// # Safety
/// `dbm` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_should_be_rebuilt(dbm: *mut MemstoredDBM) -> bool {
    guard(false, || unsafe { Ok(db(dbm)?.should_be_rebuilt()) })
}

/// Writes buffered data to the OS; with `hard`, to the device (fsync).
/// `params` is accepted for Tkrzw's signature and not used.
///
/// # Safety
/// `dbm` is live; `params` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_synchronize(
    dbm: *mut MemstoredDBM,
    hard: bool,
    _params: *const c_char,
) -> bool {
    guard(false, || unsafe {
        db(dbm)?.synchronize(hard)?;
        Ok(true)
    })
}

/// The database's properties as name/value pairs in one allocation; their
/// number goes to `num_records`.
///
/// # Safety
/// `dbm` is live; `num_records` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_inspect(
    dbm: *mut MemstoredDBM,
    num_records: *mut i32,
) -> *mut MemstoredKeyValuePair {
    guard(null_mut(), || unsafe {
        give_pairs(&db(dbm)?.inspect(), num_records)
    })
}

/// True when the database was opened writable.
///
/// # Safety
/// `dbm` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_is_writable(dbm: *mut MemstoredDBM) -> bool {
    guard(false, || unsafe { Ok(db(dbm)?.is_writable()) })
}

/// True when iteration visits keys in order.
///
/// # Safety
/// `dbm` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_is_ordered(dbm: *mut MemstoredDBM) -> bool {
    guard(false, || unsafe { Ok(db(dbm)?.is_ordered()) })
}

/// Tkrzw's mode words: its "upper"/"lower" include the pattern and
/// "upperex"/"lowerex" exclude it; other words as memstored's search.
/// Shared with the Ruby binding.
pub fn search_mode(mode: &str) -> Outcome<SearchMode> {
    Ok(match mode {
        "upper" => SearchMode::Upper { inclusive: true },
        "upperex" => SearchMode::Upper { inclusive: false },
        "lower" => SearchMode::Lower { inclusive: true },
        "lowerex" => SearchMode::Lower { inclusive: false },
        other => SearchMode::parse(other)?,
    })
}

/// Keys matching a pattern: `mode` is contain, containcase, containword,
/// containcaseword (each also with `*`: several patterns, one a line),
/// begin, end, regex, edit, editbin, and on ordered databases upper,
/// upperex, lower, lowerex. At most `capacity` keys (0: all), in one allocation; their number
/// goes to `num_matched`.
///
/// # Safety
/// `dbm` is live; `mode` NUL-terminated; the pattern as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_dbm_search(
    dbm: *mut MemstoredDBM,
    mode: *const c_char,
    pattern_ptr: *const c_char,
    pattern_size: i32,
    capacity: i32,
    num_matched: *mut i32,
) -> *mut MemstoredStr {
    guard(null_mut(), || unsafe {
        let mode = search_mode(text(mode)?)?;
        let cap = usize::try_from(capacity).unwrap_or(0);
        let keys = db(dbm)?.search(mode, bytes(pattern_ptr, pattern_size)?, cap)?;
        give_strs(&keys, num_matched)
    })
}
