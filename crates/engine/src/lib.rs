//! memstored's storage engine: records with flags, expiry and CAS, kept by an
//! engine chosen by a name string such as `*#capsiz=64m`, `+`,
//! `casket.tkh#num_shards=10` or `db.tcb#opts=d`.
//!
//! ```
//! let db = memstored_engine::Db::open("*", true).unwrap();
//! db.set(b"key", b"value", true).unwrap();
//! assert_eq!(&db.get(b"key").unwrap()[..], b"value");
//! ```

pub mod access;
pub mod activity;
mod ancestors;
mod arith;
pub mod backup;
pub mod db;
mod existing;
pub mod format;
pub mod io;
pub mod iter;
pub mod lock;
mod maintenance;
mod multi;
pub mod name;
mod ops;
mod paths;
pub mod record;
mod replicated;
pub mod restore;
pub mod scan;
pub mod search;
pub mod shard;
pub mod snapshot;
pub mod status;
pub mod store;
pub mod tmpfile;
pub mod ulog;

/// Hint files of the log engines, for the tools that read or remove them.
pub use store::log::hint;

pub use access::Access;
pub use arith::Origin;
pub use db::Db;
pub use iter::{Cursor, CursorPlace};
pub use name::{Compression, DbName, EngineKind, SyncMode};
pub use ops::{Lookup, StoreMode, StoreOptions};
pub use record::{now_secs, Meta, Record};
pub use search::SearchMode;
pub use shard::Action;
pub use status::{Error, Result};
pub use store::StoreStats;
