//! Crossing the boundary with bytes: reading the caller's (pointer, size)
//! pairs, and results allocated with `malloc` so that `memstored_free` (or
//! plain `free`) releases them. An array result is one allocation holding
//! the array and then the bytes its entries point to, so one free releases all.

use crate::status::{Failure, Outcome};
use std::ffi::{c_char, c_void, CStr};

/// A byte string given to or returned by the library.
#[repr(C)]
pub struct MemstoredStr {
    /// The bytes; a result's are followed by a NUL not counted in `size`.
    pub ptr: *const c_char,
    /// The number of bytes; -1 in an argument means strlen(ptr).
    pub size: i32,
}

/// A key and its value. In an argument a NULL `value_ptr` means "no record"
/// (compare-exchange: expected absent, or desired removed).
#[repr(C)]
pub struct MemstoredKeyValuePair {
    pub key_ptr: *const c_char,
    pub key_size: i32,
    pub value_ptr: *const c_char,
    pub value_size: i32,
}

/// The caller's bytes. A negative size means a NUL-terminated string; NULL
/// with size 0 is the empty string.
///
/// # Safety
/// `ptr` points to `size` readable bytes (or a NUL-terminated string when
/// `size` < 0) that outlive `'a`.
pub(crate) unsafe fn bytes<'a>(ptr: *const c_char, size: i32) -> Outcome<&'a [u8]> {
    match (ptr.is_null(), size) {
        (true, 0) => Ok(&[]),
        (true, _) => Err(Failure::invalid("a NULL pointer with a nonzero size")),
        // SAFETY: the caller's contract above.
        (false, s) if s < 0 => Ok(unsafe { CStr::from_ptr(ptr) }.to_bytes()),
        // SAFETY: the caller's contract above.
        (false, s) => Ok(unsafe { std::slice::from_raw_parts(ptr.cast(), s as usize) }),
    }
}

/// Like `bytes`, but NULL means "no value".
///
/// # Safety
/// As `bytes`.
pub(crate) unsafe fn opt_bytes<'a>(ptr: *const c_char, size: i32) -> Outcome<Option<&'a [u8]>> {
    if ptr.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded contract.
        unsafe { bytes(ptr, size) }.map(Some)
    }
}

/// A NUL-terminated argument as text (NULL is the empty string).
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string.
pub(crate) unsafe fn text<'a>(ptr: *const c_char) -> Outcome<&'a str> {
    if ptr.is_null() {
        return Ok("");
    }
    // SAFETY: forwarded contract.
    let b = unsafe { bytes(ptr, -1) }?;
    std::str::from_utf8(b).map_err(|_| Failure::invalid("a string argument is not UTF-8"))
}

/// The caller's array of `n` elements.
///
/// # Safety
/// `ptr` points to `n` initialized elements (or `n` is 0).
pub(crate) unsafe fn array<'a, T>(ptr: *const T, n: i32) -> Outcome<&'a [T]> {
    match (ptr.is_null(), n) {
        (_, 0) => Ok(&[]),
        (_, n) if n < 0 => Err(Failure::invalid("a negative array length")),
        (true, _) => Err(Failure::invalid("a NULL array with a nonzero length")),
        // SAFETY: the caller's contract above.
        (false, n) => Ok(unsafe { std::slice::from_raw_parts(ptr, n as usize) }),
    }
}

/// A size as the API's int32.
pub(crate) fn size32(n: usize) -> Outcome<i32> {
    i32::try_from(n).map_err(|_| {
        Failure::new(
            crate::status::MEMSTORED_STATUS_INFEASIBLE_ERROR,
            format!("{n} bytes do not fit the C API's 32-bit sizes"),
        )
    })
}

fn malloc(n: usize) -> Outcome<*mut u8> {
    // SAFETY: malloc has no preconditions; the result is checked.
    let p = unsafe { libc::malloc(n.max(1)) }.cast::<u8>();
    if p.is_null() {
        Err(Failure::new(
            crate::status::MEMSTORED_STATUS_SYSTEM_ERROR,
            format!("out of memory allocating {n} bytes"),
        ))
    } else {
        Ok(p)
    }
}

/// A malloc'ed NUL-terminated copy of `data`; its size goes to `size_out` when not NULL.
///
/// # Safety
/// `size_out` is NULL or writable.
pub(crate) unsafe fn give_bytes(data: &[u8], size_out: *mut i32) -> Outcome<*mut c_char> {
    let size = size32(data.len())?;
    let p = malloc(data.len() + 1)?;
    // SAFETY: `p` holds len + 1 bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len());
        *p.add(data.len()) = 0;
        if !size_out.is_null() {
            *size_out = size;
        }
    }
    Ok(p.cast())
}

/// Copies as much of `data` as fits into the caller's buffer (no NUL) and
/// returns its whole size, as snprintf does: a size above `buf_size` tells
/// the caller to call again with a larger buffer.
///
/// # Safety
/// `buf` is NULL with `buf_size` <= 0, or holds `buf_size` writable bytes.
pub(crate) unsafe fn copy_to(data: &[u8], buf: *mut c_char, buf_size: i32) -> Outcome<i32> {
    let size = size32(data.len())?;
    let n = data.len().min(usize::try_from(buf_size).unwrap_or(0));
    if n > 0 {
        if buf.is_null() {
            return Err(Failure::invalid("a NULL buffer with a nonzero size"));
        }
        // SAFETY: the caller's contract; n <= buf_size.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buf.cast(), n) };
    }
    Ok(size)
}

/// Copies `data` with a NUL after it at `*at`, advancing `at`; returns where it went.
///
/// # Safety
/// `*at` has room for `data.len() + 1` bytes.
unsafe fn place(at: &mut *mut u8, data: &[u8]) -> *const c_char {
    let start = *at;
    // SAFETY: the caller sized the block.
    unsafe {
        std::ptr::copy_nonoverlapping(data.as_ptr(), start, data.len());
        *start.add(data.len()) = 0;
        *at = start.add(data.len() + 1);
    }
    start.cast()
}

/// One allocation: `items.len()` structs, then every byte string they point to.
fn block<T>(items: usize, bytes: usize) -> Outcome<(*mut T, *mut u8)> {
    let head = std::mem::size_of::<T>() * items;
    let p = malloc(head + bytes)?;
    // SAFETY: `head` bytes of `p` are the array; malloc aligns for any struct.
    Ok((p.cast(), unsafe { p.add(head) }))
}

/// An array of strings in one allocation (sizes are checked before it is
/// made, so nothing leaks on error); its length goes to `n_out`.
///
/// # Safety
/// `n_out` is NULL or writable.
pub(crate) unsafe fn give_strs<S: AsRef<[u8]>>(
    items: &[S],
    n_out: *mut i32,
) -> Outcome<*mut MemstoredStr> {
    let n = size32(items.len())?;
    for s in items {
        size32(s.as_ref().len())?;
    }
    let total: usize = items.iter().map(|s| s.as_ref().len() + 1).sum();
    let (array, mut at) = block::<MemstoredStr>(items.len(), total)?;
    for (i, s) in items.iter().enumerate() {
        let s = s.as_ref();
        let entry = MemstoredStr {
            // SAFETY: the block has room for every string and its NUL.
            ptr: unsafe { place(&mut at, s) },
            size: s.len() as i32,
        };
        // SAFETY: `i` < items, the array's length.
        unsafe { array.add(i).write(entry) };
    }
    if !n_out.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *n_out = n };
    }
    Ok(array)
}

/// An array of key-value pairs in one allocation; its length goes to `n_out`.
///
/// # Safety
/// `n_out` is NULL or writable.
pub(crate) unsafe fn give_pairs<K: AsRef<[u8]>, V: AsRef<[u8]>>(
    items: &[(K, V)],
    n_out: *mut i32,
) -> Outcome<*mut MemstoredKeyValuePair> {
    let n = size32(items.len())?;
    for (k, v) in items {
        size32(k.as_ref().len())?;
        size32(v.as_ref().len())?;
    }
    let total: usize = items
        .iter()
        .map(|(k, v)| k.as_ref().len() + v.as_ref().len() + 2)
        .sum();
    let (array, mut at) = block::<MemstoredKeyValuePair>(items.len(), total)?;
    for (i, (k, v)) in items.iter().enumerate() {
        let (k, v) = (k.as_ref(), v.as_ref());
        // SAFETY: the block has room for every key, value and their NULs.
        let entry = unsafe {
            MemstoredKeyValuePair {
                key_ptr: place(&mut at, k),
                key_size: k.len() as i32,
                value_ptr: place(&mut at, v),
                value_size: v.len() as i32,
            }
        };
        // SAFETY: `i` < items, the array's length.
        unsafe { array.add(i).write(entry) };
    }
    if !n_out.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *n_out = n };
    }
    Ok(array)
}

/// Releases anything the library returned: a value, a key, an array (with
/// its strings). NULL is a no-op.
///
/// # Safety
/// `ptr` is NULL or came from this library and was not released before.
#[no_mangle]
pub unsafe extern "C" fn memstored_free(ptr: *mut c_void) {
    // SAFETY: every result is allocated by `malloc` above.
    unsafe { libc::free(ptr) }
}

/// Hands a key and value out through optional out-pointers; on error
/// nothing stays allocated.
pub(crate) unsafe fn give_record(
    key: &[u8],
    value: &[u8],
    key_ptr: *mut *mut c_char,
    key_size: *mut i32,
    value_ptr: *mut *mut c_char,
    value_size: *mut i32,
) -> Outcome<()> {
    // SAFETY: the out-pointers are NULL or writable (the callers' contracts).
    unsafe {
        let k = if key_ptr.is_null() {
            std::ptr::null_mut()
        } else {
            give_bytes(key, key_size)?
        };
        if !value_ptr.is_null() {
            match give_bytes(value, value_size) {
                Ok(v) => *value_ptr = v,
                Err(e) => {
                    memstored_free(k.cast());
                    return Err(e);
                }
            }
        }
        if !key_ptr.is_null() {
            *key_ptr = k;
        }
    }
    Ok(())
}
