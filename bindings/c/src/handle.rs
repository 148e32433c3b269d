//! The opaque handles every object of the C API is passed as (database,
//! iterators, file, index): made by boxing, checked for NULL on every call,
//! and handed back once to close or free.

use crate::status::{Failure, Outcome};

/// A new handle owning `value`, released by [`take`] or [`free`].
pub(crate) fn give<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// The object behind a handle; `what` names it in the NULL failure ("the
/// database handle is NULL").
///
/// # Safety
/// `handle` is NULL or a live handle from [`give`].
pub(crate) unsafe fn live<'a, T>(handle: *const T, what: &str) -> Outcome<&'a T> {
    // SAFETY: the caller's contract.
    unsafe { handle.as_ref() }.ok_or_else(|| null(what))
}

/// [`live`] for an object used by one thread at a time (an iterator).
///
/// # Safety
/// As [`live`], and no other thread uses the handle meanwhile.
pub(crate) unsafe fn live_mut<'a, T>(handle: *mut T, what: &str) -> Outcome<&'a mut T> {
    // SAFETY: the caller's contract.
    unsafe { handle.as_mut() }.ok_or_else(|| null(what))
}

/// Takes back the object of a handle being closed; NULL is a failure.
///
/// # Safety
/// `handle` is NULL or a live handle from [`give`], handed back exactly
/// once: it is dangling afterwards.
pub(crate) unsafe fn take<T>(handle: *mut T, what: &str) -> Outcome<Box<T>> {
    if handle.is_null() {
        return Err(null(what));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { Box::from_raw(handle) })
}

/// Releases a handle; NULL is a no-op.
///
/// # Safety
/// As [`take`].
pub(crate) unsafe fn free<T>(handle: *mut T) {
    if !handle.is_null() {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(handle) });
    }
}

fn null(what: &str) -> Failure {
    Failure::invalid(format!("the {what} handle is NULL"))
}
