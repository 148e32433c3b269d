//! The protocol-neutral command layer: one file per verb, each a plain struct
//! with `apply(&self, &Server) -> Outcome`.
//!
//! Why a layer of its own: memcached's semantics (what counts as a hit, when a
//! CAS is checked, what a failed `set` over `-I` does, which counter moves) are
//! the same whichever wire they arrive on. Protocol files decode their request
//! into one of these structs and turn the [`Outcome`] into their reply with one
//! table each (`reply` functions in `binary.rs`, `text.rs`, `meta.rs`, `rpc/`);
//! they never call the engine for a record operation or bump a counter.
//! Counters are bumped here, inside `apply`, once per operation.
//!
//! This is the only code that reads or writes records and bumps the
//! per-request counters (`state::counters::RequestCounters`, but for the bytes
//! a connection reads and writes); the one other writer is replication
//! applying a master's changes (`replication::replica`). Commands that answer
//! more than one record return more than an `Outcome`: [`List`] a page of
//! records, [`Scan`] a cursor place to go on from, [`Search`] the keys found
//! (the engine's result, so a slow call can tell "out of time"), [`ReadAll`]
//! the values. Text and binary requests wrap `Get`, `Store` and `Delete` in
//! [`Detailed`], which counts them in `stats detail`.
//!
//! Compound operations (meta `ma` with a TTL, `md I`, `ms I`, RPC `seize` and
//! `cas`) are one `Db::process` call, so they are atomic like memcached's
//! item-locked paths.

mod access;
mod admin;
mod arith;
mod auth;
mod batch;
mod bulk;
mod crawl;
mod delete;
mod detail;
mod flush;
mod get;
mod iterate;
mod list;
pub mod memory_file;
mod queue;
mod search;
pub mod store;
mod swap;
mod tkrzw;
mod touch;

pub use access::{Inspect, LastAccess};
pub use admin::ChangeMaster;
pub use arith::{Arith, Increment, IncrementDouble, Origin};
pub use auth::{authenticate, AuthState, MAX_FAILED_ATTEMPTS};
pub use batch::{DeleteMany, GetMany, StoreEach, StoreMany};
pub use bulk::{ReadAll, StoreAll};
pub use crawl::{crawler_stats, start_vacuum};
pub use delete::{Delete, Invalidate, RemoveValue};
pub use detail::Detailed;
pub use flush::Flush;
pub use get::{Get, Peek};
pub use iterate::{IterOp, Iterate, Iterated};
pub use list::{List, Listing, Move, Scan, ScanFrom};
pub use memstored_engine::time_key;
pub use queue::{PopFirst, PushLast};
pub use search::Search;
pub use store::{Store, StoreKind};
pub use swap::{CompareExchange, CompareExchangeMulti, Seize};
pub use tkrzw::{int_of_big_endian, Desire, Exchanged, Expect, IncrementBigEndian};
pub use tkrzw::{Rekey, TkrzwCompareExchange, TkrzwCompareExchangeMulti};
pub use touch::Touch;

use memstored_engine::{Error, Meta, Record};

/// Why a store did not happen although nothing went wrong
/// (memcached's `NOT_STORED`; the binary protocol tells the two apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absence {
    /// `add` met a live record.
    Present,
    /// `replace`/`append`/`prepend` met no record.
    Absent,
}

/// A number an arithmetic command produced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// memcached's incr/decr: unsigned, wrapping up, stopping at 0 down.
    Unsigned(u64),
    /// Kyoto Tycoon's / Tkrzw's `increment`.
    Signed(i64),
    /// Kyoto Tycoon's `increment_double`.
    Float(f64),
}

/// What a command did, in the spirit of memcached's `store_item_type`:
/// a closed set every protocol maps onto its own replies in one table.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A live record (get, gat, touch, seize).
    Found(Record),
    /// No live record (a get miss, a delete/touch/incr of an absent key, a
    /// CAS store of an absent key).
    NotFound,
    /// Stored; the record's new CAS.
    Stored { cas: u64 },
    /// Removed (or, for `md I`, marked stale).
    Deleted,
    /// Not stored for a reason that is not an error.
    NotStored(Absence),
    /// The CAS (or the expected value) did not match.
    Exists,
    /// The new value of an arithmetic command and the record's metadata after it.
    Counted { value: Number, meta: Meta },
    /// The value to increment is not a number.
    NonNumeric,
    /// The result of an increment does not fit.
    Overflow,
    /// A value larger than the item limit (`-I`) or than the cache can hold.
    TooLarge { size: u64, cap: u64 },
    /// A capped cache with evictions disabled (`-M`) is full.
    NoMemory,
    /// A write on a read-only server.
    ReadOnly,
    /// A flush on a server started with `-F` (`--disable-flush-all`).
    FlushDisabled,
    /// Done, nothing to report (flush).
    Done,
    /// The engine failed (I/O, broken data, a bad argument).
    Failed(Error),
}

impl Outcome {
    /// The one place engine errors become outcomes. `NotFound` and
    /// `Duplication` depend on the command and are mapped by callers first.
    pub fn from_error(e: Error) -> Outcome {
        match e {
            Error::NotFound(_) => Outcome::NotFound,
            Error::Duplication(_) => Outcome::NotStored(Absence::Present),
            Error::CasMismatch | Error::ValueMismatch(_) => Outcome::Exists,
            Error::NotNumeric => Outcome::NonNumeric,
            Error::Overflow => Outcome::Overflow,
            Error::TooLarge { size, cap } => Outcome::TooLarge { size, cap },
            Error::NoMemory { .. } => Outcome::NoMemory,
            Error::Precondition(_) => Outcome::ReadOnly,
            e => Outcome::Failed(e),
        }
    }
}

/// Turns an engine result into an outcome with `ok` for success.
pub(crate) fn outcome<T>(r: memstored_engine::Result<T>, ok: impl FnOnce(T) -> Outcome) -> Outcome {
    match r {
        Ok(v) => ok(v),
        Err(e) => Outcome::from_error(e),
    }
}

/// Refuses a value over the item limit before anything is stored.
pub(crate) fn check_size(len: usize, cap: u64) -> Result<(), Outcome> {
    let size = len as u64;
    if size > cap {
        return Err(Outcome::TooLarge { size, cap });
    }
    Ok(())
}
