//! memstored's storage engine: records with flags, expiry and CAS, kept by an
//! engine chosen by a name string such as `*#capsiz=64m`, `+`,
//! `casket.tkh#num_shards=10` or `db.tcb#opts=d`.
//!
//! ```
//! let db = memstored_engine::Db::open("*", true).unwrap();
//! db.set(b"key", b"value", true).unwrap();
//! assert_eq!(&db.get(b"key").unwrap()[..], b"value");
//! ```

#![warn(unreachable_pub)]

// The public surface, as redb keeps it: the types callers use are
// re-exported below; every other item is `pub(crate)` (`unreachable_pub`
// keeps it so). The modules that stay `pub` are those other crates name by
// path (`ulog::UpdateLog`, `io::SimFs`, `format::FileHeader`, ...), and in
// them only what those crates use is `pub`.
pub mod access;
pub mod activity;
pub mod db;
pub mod evictions;
pub mod format;
pub mod io;
pub mod lock;
pub mod name;
pub mod restore;
pub mod search;
/// Tkrzw's status codes and names, which the bindings share.
pub mod status;
pub mod store;
pub mod ulog;

mod ancestors;
mod arith;
mod backup;
mod existing;
mod flat;
mod index;
mod iter;
mod maintenance;
mod multi;
mod ops;
mod paths;
mod queue;
mod record;
mod replicated;
mod scan;
mod shard;
mod snapshot;
mod tfile;
mod tkrzw_ops;
mod tkrzw_state;
mod tmpfile;

/// Hint files of the log engines, for the tools that read or remove them.
pub use store::log::hint;

pub use access::Access;
pub use arith::Origin;
pub use db::Db;
pub use index::{Index, IndexIter};
pub use iter::{Cursor, CursorPlace};
pub use multi::{BatchError, BatchPut};
pub use name::{Compression, DbName, EngineKind, SyncMode};
pub use ops::{Lookup, LookupRef, StoreMode, StoreOptions};
pub use queue::{push_at, time_key, wall_time};
pub use record::{now_secs, Meta, Record};
pub use search::SearchMode;
pub use shard::Action;
pub use status::{Error, Result};
pub use store::StoreStats;
pub use tfile::{File, FileOptions};
pub use tkrzw_ops::{restore_database, CasValue, ProcessResult};
