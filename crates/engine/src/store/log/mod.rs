//! The log-structured engines (`.hash`/`.tkh`/`.tch`, `.tree`/`.tkt`/`.tcb`):
//! an append-only file of CRC-checked records and an in-memory index
//! pointing at the newest record of each key (Bitcask, Tkrzw's appending
//! mode). Layered bottom-up, each file importing only those above it in
//! this list:
//!
//! - `loc`: `Loc`, where a record lives (the family's shared leaf type);
//!   `file`: a log file's header, its generation and its opening.
//! - `index`: what the store needs of its index, the hash engine's
//!   `CompactHash`, and `replay_into`; `offset_tree`: the tree engine's.
//! - `hint`: the index saved at close and loaded at open.
//! - `rebuild`: online compaction into a new file.
//! - `log_store`: `LogStore`, the `Store` over all of them.

pub(crate) mod file;
pub mod hint;
pub(crate) mod index;
pub(crate) mod loc;
pub(crate) mod log_store;
pub(crate) mod offset_tree;
pub(crate) mod rebuild;

pub use loc::Loc;
