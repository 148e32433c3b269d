//! Status codes, the thread-local last status, and `guard`, the wrapper of
//! every entry point: it sets the last status and keeps panics on this side.
//!
//! Tkrzw's table of codes and names is the engine's
//! (`memstored_engine::status::code`); the `MEMSTORED_STATUS_*` constants
//! below are its numbers spelled out for the C header, which cbindgen
//! writes from literals only (tests/header.rs checks them against it).

use memstored_engine::status::{code_name_c, code_of_name};
use std::cell::RefCell;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Success.
pub const MEMSTORED_STATUS_SUCCESS: i32 = 0;
/// Generic error whose cause is unknown (also: a panic caught at the boundary).
pub const MEMSTORED_STATUS_UNKNOWN_ERROR: i32 = 1;
/// Generic error from the operating system.
pub const MEMSTORED_STATUS_SYSTEM_ERROR: i32 = 2;
/// The feature is not implemented (e.g. `last` on a hash database).
pub const MEMSTORED_STATUS_NOT_IMPLEMENTED_ERROR: i32 = 3;
/// A precondition is not met (e.g. writing to a read-only database).
pub const MEMSTORED_STATUS_PRECONDITION_ERROR: i32 = 4;
/// A given argument is invalid.
pub const MEMSTORED_STATUS_INVALID_ARGUMENT_ERROR: i32 = 5;
/// The operation was canceled.
pub const MEMSTORED_STATUS_CANCELED_ERROR: i32 = 6;
/// The record does not exist.
pub const MEMSTORED_STATUS_NOT_FOUND_ERROR: i32 = 7;
/// The operation is not permitted.
pub const MEMSTORED_STATUS_PERMISSION_ERROR: i32 = 8;
/// The operation is infeasible (e.g. a compare-exchange whose expectation failed).
pub const MEMSTORED_STATUS_INFEASIBLE_ERROR: i32 = 9;
/// The record exists already (a set without overwrite).
pub const MEMSTORED_STATUS_DUPLICATION_ERROR: i32 = 10;
/// Data on disk failed its checks.
pub const MEMSTORED_STATUS_BROKEN_DATA_ERROR: i32 = 11;
/// Error caused by networking failure.
pub const MEMSTORED_STATUS_NETWORK_ERROR: i32 = 12;
/// Generic error caused by the application logic.
pub const MEMSTORED_STATUS_APPLICATION_ERROR: i32 = 13;

/// A status code with its message.
#[repr(C)]
pub struct MemstoredStatus {
    /// The status code, one of `MEMSTORED_STATUS_*`.
    pub code: i32,
    /// The message; valid until the next status call of this thread.
    pub message: *const c_char,
}

/// A failed call: the code and message that become the last status.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    pub fn new(code: i32, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure::new(MEMSTORED_STATUS_INVALID_ARGUMENT_ERROR, message)
    }
}

impl From<memstored_engine::Error> for Failure {
    /// By the status name only: the engine's error enum grows variants, and
    /// each one names the Tkrzw status it stands for.
    fn from(e: memstored_engine::Error) -> Failure {
        Failure::new(code_of_name(e.status_name()), e.to_string())
    }
}

pub type Outcome<T> = Result<T, Failure>;

/// The last status of this thread. The message is kept NUL-terminated so
/// that `memstored_get_last_status_message` can hand out its pointer; a
/// success only clears it, so the fast path allocates nothing.
struct Last {
    code: i32,
    message: Vec<u8>,
}

thread_local! {
    static LAST: RefCell<Last> = const { RefCell::new(Last { code: 0, message: Vec::new() }) };
}

fn set_last(code: i32, message: &[u8]) {
    LAST.with(|l| {
        let mut l = l.borrow_mut();
        l.code = code;
        l.message.clear();
        // An interior NUL would cut the C string short; the message stays readable.
        l.message
            .extend(message.iter().map(|&b| if b == 0 { b' ' } else { b }));
        l.message.push(0);
    });
}

/// Sets the last status to a failure after an entry point that succeeded
/// partly (Tkrzw's get_multi returns the found records with NOT_FOUND_ERROR).
pub(crate) fn set_failure(code: i32, message: &str) {
    set_last(code, message.as_bytes());
}

/// Runs an entry point: records its outcome as the last status and returns
/// its value, or `fail` on error. A panic is caught here (unwinding into C
/// is undefined behaviour) and reported as UNKNOWN_ERROR.
pub(crate) fn guard<T>(fail: T, f: impl FnOnce() -> Outcome<T>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => {
            LAST.with(|l| {
                let mut l = l.borrow_mut();
                if l.code != MEMSTORED_STATUS_SUCCESS || l.message.len() > 1 {
                    l.code = MEMSTORED_STATUS_SUCCESS;
                    l.message.clear();
                }
            });
            v
        }
        Ok(Err(e)) => {
            set_last(e.code, e.message.as_bytes());
            fail
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            set_last(
                MEMSTORED_STATUS_UNKNOWN_ERROR,
                format!("panic in memstored: {what}").as_bytes(),
            );
            fail
        }
    }
}

/// Sets the last status of this thread, as if a call had ended with it.
/// `message` may be NULL (no message).
///
/// # Safety
/// `message` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn memstored_set_last_status(code: i32, message: *const c_char) {
    let bytes = if message.is_null() {
        &[][..]
    } else {
        // SAFETY: the caller passes a NUL-terminated string.
        unsafe { CStr::from_ptr(message) }.to_bytes()
    };
    set_last(code, bytes);
}

/// The code of this thread's last call.
#[no_mangle]
pub extern "C" fn memstored_get_last_status_code() -> i32 {
    LAST.with(|l| l.borrow().code)
}

/// The message of this thread's last call ("" when none); valid until this
/// thread's next call into the library.
#[no_mangle]
pub extern "C" fn memstored_get_last_status_message() -> *const c_char {
    LAST.with(|l| {
        let mut l = l.borrow_mut();
        if l.message.is_empty() {
            l.message.push(0);
        }
        l.message.as_ptr().cast()
    })
}

/// The code and message of this thread's last call (see
/// `memstored_get_last_status_message` for the message's lifetime).
#[no_mangle]
pub extern "C" fn memstored_get_last_status() -> MemstoredStatus {
    MemstoredStatus {
        code: memstored_get_last_status_code(),
        message: memstored_get_last_status_message(),
    }
}

/// The name of a status code, e.g. "NOT_FOUND_ERROR"; "INVALID_CODE" for an
/// unknown one. The string is static.
#[no_mangle]
pub extern "C" fn memstored_status_code_name(code: i32) -> *const c_char {
    code_name_c(code).map_or(c"INVALID_CODE".as_ptr(), CStr::as_ptr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_errors_map_by_status_name() {
        let cases = [
            (memstored_engine::Error::NotFound("x".into()), 7),
            (memstored_engine::Error::Duplication("x".into()), 10),
            (memstored_engine::Error::InvalidArgument("x".into()), 5),
            (memstored_engine::Error::Precondition("x".into()), 4),
            (memstored_engine::Error::System("x".into()), 2),
        ];
        for (e, code) in cases {
            assert_eq!(Failure::from(e).code, code);
        }
    }

    #[test]
    fn a_panic_becomes_unknown_error() {
        let got: i32 = guard(-1, || panic!("boom"));
        assert_eq!(got, -1);
        assert_eq!(memstored_get_last_status_code(), 1);
        let msg = unsafe { CStr::from_ptr(memstored_get_last_status_message()) };
        assert!(msg.to_str().unwrap().contains("boom"), "{msg:?}");
        assert_eq!(guard(0, || Ok(5)), 5);
        assert_eq!(memstored_get_last_status_code(), 0);
        let msg = unsafe { CStr::from_ptr(memstored_get_last_status_message()) };
        assert!(msg.is_empty());
    }
}
