//! Tkrzw's Index (a secondary index: an ordered set of key-value pairs):
//! `memstored_index_*` and its iterators, over the engine's `Index`.

use crate::handle;
use crate::mem::{bytes, give_bytes, give_record, give_strs, text, MemstoredStr};
use crate::status::{guard, Outcome};
use memstored_engine::{Index, IndexIter};
use std::ffi::c_char;
use std::ptr::null_mut;

/// An open index. Opaque; share one handle between threads freely.
pub struct MemstoredIndex {
    index: Index,
}

/// An iterator over an index's pairs. Opaque; one thread at a time. It
/// keeps the index's data alive, so the index may be closed before it.
pub struct MemstoredIndexIter {
    iter: IndexIter,
}

unsafe fn index<'a>(index: *const MemstoredIndex) -> Outcome<&'a Index> {
    // SAFETY: the caller's contract.
    unsafe { handle::live(index, "index") }.map(|h| &h.index)
}

unsafe fn iter<'a>(iter: *mut MemstoredIndexIter) -> Outcome<&'a mut IndexIter> {
    // SAFETY: the caller's contract.
    unsafe { handle::live_mut(iter, "iterator") }.map(|h| &mut h.iter)
}

/// Opens an index: a tree file when `path` ends in `.tkt`, else in memory
/// (as Tkrzw's PolyIndex); `params` `"k=v,k=v"` as `memstored_dbm_open`
/// takes them (`truncate=true`, ...) or NULL. Returns the handle, released
/// by `memstored_index_close`, or NULL on failure.
///
/// # Safety
/// `path` and `params` are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_open(
    path: *const c_char,
    writable: bool,
    params: *const c_char,
) -> *mut MemstoredIndex {
    guard(null_mut(), || unsafe {
        let index = Index::new();
        index.open(text(path)?, writable, text(params)?)?;
        Ok(handle::give(MemstoredIndex { index }))
    })
}

/// Closes the index and releases the handle (even when closing fails).
///
/// # Safety
/// `idx` is a live handle; it is dangling afterwards.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_close(idx: *mut MemstoredIndex) -> bool {
    guard(false, || {
        // SAFETY: the caller hands the handle back exactly once.
        unsafe { handle::take(idx, "index") }?.index.close()?;
        Ok(true)
    })
}

/// Runs a call on a key and value.
unsafe fn pair_call<T>(
    idx: *mut MemstoredIndex,
    fail: T,
    (key_ptr, key_size, value_ptr, value_size): (*const c_char, i32, *const c_char, i32),
    f: impl FnOnce(&Index, &[u8], &[u8]) -> memstored_engine::Result<T>,
) -> T {
    guard(fail, || unsafe {
        let (k, v) = (bytes(key_ptr, key_size)?, bytes(value_ptr, value_size)?);
        Ok(f(index(idx)?, k, v)?)
    })
}

/// True when the pair is in the index.
///
/// # Safety
/// `idx` is live; the byte arguments as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_check(
    idx: *mut MemstoredIndex,
    key_ptr: *const c_char,
    key_size: i32,
    value_ptr: *const c_char,
    value_size: i32,
) -> bool {
    let args = (key_ptr, key_size, value_ptr, value_size);
    unsafe { pair_call(idx, false, args, Index::contains) }
}

/// The values of a key in order, at most `max` (0: all), in one
/// allocation; their number goes to `num_elems`.
///
/// # Safety
/// `idx` is live; the key as everywhere; `num_elems` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_get_values(
    idx: *mut MemstoredIndex,
    key_ptr: *const c_char,
    key_size: i32,
    max: i32,
    num_elems: *mut i32,
) -> *mut MemstoredStr {
    guard(null_mut(), || unsafe {
        let max = usize::try_from(max).unwrap_or(0);
        let values = index(idx)?.get_values(bytes(key_ptr, key_size)?, max)?;
        give_strs(&values, num_elems)
    })
}

/// Adds a pair.
///
/// # Safety
/// As `memstored_index_check`.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_add(
    idx: *mut MemstoredIndex,
    key_ptr: *const c_char,
    key_size: i32,
    value_ptr: *const c_char,
    value_size: i32,
) -> bool {
    let args = (key_ptr, key_size, value_ptr, value_size);
    unsafe { pair_call(idx, false, args, |i, k, v| i.add(k, v).map(|()| true)) }
}

/// Removes a pair; NOT_FOUND_ERROR when it is not there.
///
/// # Safety
/// As `memstored_index_check`.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_remove(
    idx: *mut MemstoredIndex,
    key_ptr: *const c_char,
    key_size: i32,
    value_ptr: *const c_char,
    value_size: i32,
) -> bool {
    let args = (key_ptr, key_size, value_ptr, value_size);
    unsafe { pair_call(idx, false, args, |i, k, v| i.remove(k, v).map(|()| true)) }
}

/// The number of pairs, or -1 on failure.
///
/// # Safety
/// `idx` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_count(idx: *mut MemstoredIndex) -> i32 {
    guard(-1, || unsafe {
        Ok(i32::try_from(index(idx)?.count()?).unwrap_or(i32::MAX))
    })
}

/// The path of the index file ("" in memory), released with `memstored_free`.
///
/// # Safety
/// `idx` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_get_file_path(idx: *mut MemstoredIndex) -> *mut c_char {
    guard(null_mut(), || unsafe {
        give_bytes(index(idx)?.file_path()?.as_bytes(), null_mut())
    })
}

/// Runs a call on the index that returns nothing.
unsafe fn done(
    idx: *mut MemstoredIndex,
    f: impl FnOnce(&Index) -> memstored_engine::Result<()>,
) -> bool {
    guard(false, || unsafe {
        f(index(idx)?)?;
        Ok(true)
    })
}

/// Removes every pair.
///
/// # Safety
/// `idx` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_clear(idx: *mut MemstoredIndex) -> bool {
    unsafe { done(idx, Index::clear) }
}

/// Compacts the index file.
///
/// # Safety
/// `idx` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_rebuild(idx: *mut MemstoredIndex) -> bool {
    unsafe { done(idx, Index::rebuild) }
}

/// Writes buffered pairs to the OS; with `hard`, to the device.
///
/// # Safety
/// `idx` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_synchronize(idx: *mut MemstoredIndex, hard: bool) -> bool {
    unsafe { done(idx, |i| i.synchronize(hard)) }
}

/// True when the index is open writable.
///
/// # Safety
/// `idx` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_is_writable(idx: *mut MemstoredIndex) -> bool {
    guard(false, || unsafe { Ok(index(idx)?.is_writable()) })
}

/// A new iterator, on no pair until first, last or jump; released with
/// `memstored_index_iter_free`. NULL on failure.
///
/// # Safety
/// `idx` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_make_iterator(
    idx: *mut MemstoredIndex,
) -> *mut MemstoredIndexIter {
    guard(null_mut(), || unsafe {
        let iter = index(idx)?.iter()?;
        Ok(handle::give(MemstoredIndexIter { iter }))
    })
}

/// Releases an iterator. NULL is a no-op.
///
/// # Safety
/// `it` is NULL or a live handle; it is dangling afterwards.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_iter_free(it: *mut MemstoredIndexIter) {
    // SAFETY: the caller hands the handle back exactly once.
    unsafe { handle::free(it) }
}

/// Runs a move; the outcome is the last status (Tkrzw's moves return nothing).
unsafe fn moved(
    it: *mut MemstoredIndexIter,
    f: impl FnOnce(&mut IndexIter) -> memstored_engine::Result<()>,
) {
    guard((), || unsafe {
        f(iter(it)?)?;
        Ok(())
    })
}

/// To the first pair.
///
/// # Safety
/// `it` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_iter_first(it: *mut MemstoredIndexIter) {
    unsafe { moved(it, IndexIter::first) }
}

/// To the last pair.
///
/// # Safety
/// `it` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_iter_last(it: *mut MemstoredIndexIter) {
    unsafe { moved(it, IndexIter::last) }
}

/// To the first pair at or after (key, value).
///
/// # Safety
/// `it` is live; the byte arguments as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_iter_jump(
    it: *mut MemstoredIndexIter,
    key_ptr: *const c_char,
    key_size: i32,
    value_ptr: *const c_char,
    value_size: i32,
) {
    guard((), || unsafe {
        let (k, v) = (bytes(key_ptr, key_size)?, bytes(value_ptr, value_size)?);
        iter(it)?.jump(k, v)?;
        Ok(())
    })
}

/// To the next pair.
///
/// # Safety
/// `it` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_iter_next(it: *mut MemstoredIndexIter) {
    unsafe { moved(it, IndexIter::next) }
}

/// To the previous pair.
///
/// # Safety
/// `it` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_iter_previous(it: *mut MemstoredIndexIter) {
    unsafe { moved(it, IndexIter::previous) }
}

/// The current pair through the out-pointers (each NULL: not wanted; each
/// given one released with `memstored_free`); false with NOT_FOUND_ERROR
/// when on none.
///
/// # Safety
/// `it` is live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memstored_index_iter_get(
    it: *mut MemstoredIndexIter,
    key_ptr: *mut *mut c_char,
    key_size: *mut i32,
    value_ptr: *mut *mut c_char,
    value_size: *mut i32,
) -> bool {
    guard(false, || unsafe {
        let (k, v) = iter(it)?.get()?;
        give_record(&k, &v, key_ptr, key_size, value_ptr, value_size)?;
        Ok(true)
    })
}
