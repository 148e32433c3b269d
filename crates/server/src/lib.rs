//! memstored's server as a library: the memcached protocols (binary, text,
//! meta), MessagePack-RPC and Kyoto Tycoon's protocols over one
//! [`state::server::Server`], so handlers can be tested and fuzzed
//! in-process. `main.rs` only parses flags and starts it.
//!
//! The crate is a stack of layers, one folder each; a layer imports only
//! those below it (`scripts/check-layers.py`, run by test.sh, fails
//! otherwise; docs/design.md "Server: layers"):
//!
//! ```text
//!   app/          cli, config file, startup, signals, privileges      nothing imports it
//!    │
//!   net/          sockets and drivers: one connection core (core.rs),  names no wire but
//!    │            epoll, io_uring, accept loops, the KT port's server   through protocols::any
//!   replication/  master streams, the replica thread, the update log
//!    │
//!   protocols/    bytes <-> commands: session, out, any (the sniff),   no sockets; one wire
//!    │            binary, text/, kt, rpc/, stats/                     never imports another
//!   command/      one file per verb -> Outcome                         the only way to records
//!    │                                                                 and request counters
//!   exec/         where slow work runs (slow calls, block_here)
//!    │
//!   state/        Server, counters, budget, replication state         data only: no runtime
//! ```
//!
//! A request: socket -> `net` (`ConnCore`) -> `protocols::any` picks the
//! session -> the session decodes a `command` -> `command::*::apply` calls
//! the engine and returns an `Outcome` -> the wire's reply table.

pub mod app;
pub mod command;
pub mod exec;
pub mod net;
pub mod protocols;
pub mod replication;
pub mod state;

/// Reported by `version` / VERSION / `stats version`: the memcached protocol
/// level memstored speaks, not memstored's own version. libmemcached (and so
/// memcstat, memcping, memcdump, php-memcached, pylibmc) refuses a server whose
/// major version is 0, and some clients enable features by version; see
/// docs/memcached-compat.md "VERSION".
pub const VERSION: &str = "1.6.0";

/// memstored's own version: `--version`, the start-up log, `stats memstored_version`.
pub const MEMSTORED_VERSION: &str = env!("CARGO_PKG_VERSION");
