//! memstored's C ABI, shaped after Tkrzw's C API (`tkrzw_langc.h`) so that
//! bindings written against it (Go through cgo first) port with renames:
//! opaque handles for the database and its iterators, Tkrzw's status codes,
//! a thread-local last status, `"k=v,k=v"` open parameters, and results
//! allocated by the library and released by `memstored_free`.
//!
//! Every entry point runs inside `status::guard`, which records the last
//! status and catches panics: none unwinds into the caller.
//! The header `include/memstored.h` is generated from this crate by cbindgen
//! (`tests/header.rs` fails when it is stale).

pub mod dbm;
pub mod dbm_more;
pub mod file;
mod handle;
pub mod index;
pub mod iter;
pub mod mem;
pub mod process;
pub mod status;
