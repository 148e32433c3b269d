//! Running Rust code with the GVL released, so that other Ruby threads run
//! meanwhile. The closure must not touch Ruby objects: callers copy keys
//! and values out of Ruby strings first.

use std::ffi::c_void;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr::null_mut;

struct Call<F, R> {
    f: Option<F>,
    out: Option<std::thread::Result<R>>,
}

unsafe extern "C" fn trampoline<F: FnOnce() -> R, R>(data: *mut c_void) -> *mut c_void {
    // SAFETY: `data` is the `Call` that `without` passes and keeps alive for
    // the whole (synchronous) call.
    let call = unsafe { &mut *data.cast::<Call<F, R>>() };
    if let Some(f) = call.f.take() {
        // A panic must not unwind through Ruby's C frames: carried back instead.
        call.out = Some(catch_unwind(AssertUnwindSafe(f)));
    }
    null_mut()
}

/// Runs `f` without the GVL and returns its result; a panic in `f` is
/// resumed here, where magnus turns it into a Ruby exception.
pub fn without<F: FnOnce() -> R, R>(f: F) -> R {
    let mut call = Call {
        f: Some(f),
        out: None,
    };
    // SAFETY: the trampoline matches `Call<F, R>`; no unblocking function is
    // given, so Ruby waits for the call to finish (it cannot be interrupted).
    unsafe {
        rb_sys::rb_thread_call_without_gvl(
            Some(trampoline::<F, R>),
            (&mut call as *mut Call<F, R>).cast(),
            None,
            null_mut(),
        );
    }
    match call.out {
        Some(Ok(r)) => r,
        Some(Err(panic)) => resume_unwind(panic),
        // Ruby always runs the function; this arm only keeps the match total.
        None => resume_unwind(Box::new("rb_thread_call_without_gvl did not call")),
    }
}
