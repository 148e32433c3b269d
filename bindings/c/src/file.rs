//! Tkrzw's File class: `memstored_file_*`, over the engine's `File` (a
//! writable open never follows a symlink).

use crate::dbm::search_mode;
use crate::handle;
use crate::mem::{bytes, give_bytes, give_strs, text};
use crate::status::{guard, Failure, Outcome};
use memstored_engine::{File, FileOptions};
use std::ffi::{c_char, c_void};
use std::ptr::null_mut;

/// An open file. Opaque; share one handle between threads freely.
pub struct MemstoredFile {
    pub(crate) file: File,
}

/// The file behind a handle.
///
/// # Safety
/// `f` is NULL or a live handle from `memstored_file_open`.
pub(crate) unsafe fn file<'a>(f: *const MemstoredFile) -> Outcome<&'a File> {
    // SAFETY: the caller's contract.
    unsafe { handle::live(f, "file") }.map(|h| &h.file)
}

/// The `k=v,k=v` pairs of a parameter string.
pub(crate) fn params_of(params: &str) -> Outcome<Vec<(&str, &str)>> {
    params
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| Failure::invalid(format!("parameter {p:?} is not key=value")))
        })
        .collect()
}

/// Opens a file: `params` is `"k=v,k=v"` (`truncate`, `no_create`,
/// `sync_hard`; Tkrzw's `no_wait`, `no_lock`, `file`, `block_size`,
/// `access_options`, `alloc_*` are accepted and ignored) or NULL. Returns
/// the handle, released by `memstored_file_close`, or NULL on failure.
///
/// # Safety
/// `path` and `params` are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn memstored_file_open(
    path: *const c_char,
    writable: bool,
    params: *const c_char,
) -> *mut MemstoredFile {
    guard(null_mut(), || unsafe {
        let opts = FileOptions::from_params(params_of(text(params)?)?)?;
        let file = File::new();
        file.open(text(path)?, writable, opts)?;
        Ok(handle::give(MemstoredFile { file }))
    })
}

/// Closes the file and releases the handle (even when closing fails).
///
/// # Safety
/// `f` is a live handle; it is dangling afterwards.
#[no_mangle]
pub unsafe extern "C" fn memstored_file_close(f: *mut MemstoredFile) -> bool {
    guard(false, || {
        // SAFETY: the caller hands the handle back exactly once.
        unsafe { handle::take(f, "file") }?.file.close()?;
        Ok(true)
    })
}

/// Reads `size` bytes at `off` into `buf`; INFEASIBLE_ERROR past the end.
///
/// # Safety
/// `f` is live; `buf` holds `size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn memstored_file_read(
    f: *mut MemstoredFile,
    off: i64,
    buf: *mut c_void,
    size: usize,
) -> bool {
    guard(false, || unsafe {
        let off = u64::try_from(off).map_err(|_| Failure::invalid("a negative offset"))?;
        let data = file(f)?.read(off, size)?;
        if size > 0 {
            if buf.is_null() {
                return Err(Failure::invalid("a NULL buffer with a nonzero size"));
            }
            std::ptr::copy_nonoverlapping(data.as_ptr(), buf.cast::<u8>(), size);
        }
        Ok(true)
    })
}

/// The caller's buffer as bytes.
unsafe fn buffer<'a>(buf: *const c_void, size: usize) -> Outcome<&'a [u8]> {
    let size = i32::try_from(size).map_err(|_| Failure::invalid("a buffer over 2 GiB"))?;
    // SAFETY: forwarded contract.
    unsafe { bytes(buf.cast(), size) }
}

/// Writes `size` bytes of `buf` at `off`, growing the file past its end.
///
/// # Safety
/// `f` is live; `buf` holds `size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn memstored_file_write(
    f: *mut MemstoredFile,
    off: i64,
    buf: *const c_void,
    size: usize,
) -> bool {
    guard(false, || unsafe {
        let off = u64::try_from(off).map_err(|_| Failure::invalid("a negative offset"))?;
        file(f)?.write(off, buffer(buf, size)?)?;
        Ok(true)
    })
}

/// Appends `size` bytes of `buf` at the end; where they went goes to `off`
/// (when not NULL).
///
/// # Safety
/// `f` is live; `buf` holds `size` readable bytes; `off` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memstored_file_append(
    f: *mut MemstoredFile,
    buf: *const c_void,
    size: usize,
    off: *mut i64,
) -> bool {
    guard(false, || unsafe {
        let at = file(f)?.append(buffer(buf, size)?)?;
        if !off.is_null() {
            *off = at as i64;
        }
        Ok(true)
    })
}

/// Cuts (or extends with zeros) the file to `size` bytes.
///
/// # Safety
/// `f` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_file_truncate(f: *mut MemstoredFile, size: i64) -> bool {
    guard(false, || unsafe {
        let size = u64::try_from(size).map_err(|_| Failure::invalid("a negative size"))?;
        file(f)?.truncate(size)?;
        Ok(true)
    })
}

/// With `hard`, makes the file durable (fsync); `off` and `size` are
/// accepted for Tkrzw's signature: the whole file is synchronized.
///
/// # Safety
/// `f` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_file_synchronize(
    f: *mut MemstoredFile,
    hard: bool,
    _off: i64,
    _size: i64,
) -> bool {
    guard(false, || unsafe {
        file(f)?.synchronize(hard)?;
        Ok(true)
    })
}

/// The file's size, or -1 on failure.
///
/// # Safety
/// `f` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_file_get_size(f: *mut MemstoredFile) -> i64 {
    guard(-1, || unsafe { Ok(file(f)?.size()? as i64) })
}

/// The path opened, NUL-terminated, released with `memstored_free`; NULL on failure.
///
/// # Safety
/// `f` is live.
#[no_mangle]
pub unsafe extern "C" fn memstored_file_get_path(f: *mut MemstoredFile) -> *mut c_char {
    guard(null_mut(), || unsafe {
        give_bytes(file(f)?.path()?.as_bytes(), null_mut())
    })
}

/// Lines of the file matching a pattern: `mode` is contain, containcase,
/// containword, containcaseword (each also with `*`: several patterns, one
/// a line), begin, end, regex, edit or editbin (any other:
/// INVALID_ARGUMENT_ERROR).
/// At most `capacity` lines (0: all), in one allocation; their number goes
/// to `num_matched`.
///
/// # Safety
/// `f` is live; `mode` NUL-terminated; the pattern as everywhere.
#[no_mangle]
pub unsafe extern "C" fn memstored_file_search(
    f: *mut MemstoredFile,
    mode: *const c_char,
    pattern_ptr: *const c_char,
    pattern_size: i32,
    capacity: i32,
    num_matched: *mut i32,
) -> *mut crate::mem::MemstoredStr {
    guard(null_mut(), || unsafe {
        let mode = search_mode(text(mode)?)?;
        let cap = usize::try_from(capacity).unwrap_or(0);
        let lines = file(f)?.search(mode, bytes(pattern_ptr, pattern_size)?, cap)?;
        give_strs(&lines, num_matched)
    })
}
