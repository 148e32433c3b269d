//! The update log: every change a database applies, in apply order, so that
//! a replica can replay it (issue 18; Tkrzw-RPC's `--ulog_prefix`).
//!
//! The hook is in the engine, not in the server's commands: `ShardState`
//! calls its `UpdateListener` after each successful change, under the
//! shard's write lock, so no protocol can change data without a log entry
//! and the log holds the changes of one key in the order they were applied.
//! Expired records reclaimed by vacuum are not changes and are not logged
//! (a replica expires them itself from the logged expiry).
//!
//! Layered bottom-up (each file imports only those before it): `change`
//! (what is logged, the listener trait, the thread's origin), `record`,
//! `segment`, `dropped`, `recent`, `seal`, `recovery`, `reader`, `writer`;
//! this file only declares them and re-exports the public names.

mod change;
mod dropped;
mod reader;
mod recent;
mod record;
mod recovery;
mod seal;
mod segment;
mod writer;

pub(crate) use change::with_origin;
pub use change::{take_last_appended, Change, UlogOp, UpdateListener};
pub use reader::{read_dir, Updates};
pub use record::Update;
pub use segment::Position;
pub use writer::{UlogOptions, UlogStats, UpdateLog};
