//! memstored's server as a library: the memcached protocols (binary, text,
//! meta), MessagePack-RPC and Kyoto Tycoon's binary protocol over one [`server::Server`], so handlers can be
//! tested and fuzzed in-process. `main.rs` only parses flags and starts it.
//!
//! The request path (docs/design.md, "Server"):
//! socket → `connection` (one loop per client) → protocol session
//! (`binary`, `text` + `meta`, `rpc_conn`, `kt_conn`) → `command` (one file per verb,
//! protocol-neutral, counts stats) → engine → `command::Outcome` → the
//! protocol's reply table.

pub mod admin;
pub mod binary;
pub mod budget;
pub mod cachedump;
pub mod cli;
pub mod command;
pub mod config;
pub mod connection;
pub mod conns;
pub mod databases;
pub mod detail;
pub mod extended;
pub mod kt_conn;
pub mod kt_port;
pub mod listener;
pub mod marks;
pub mod meta;
pub mod metrics;
pub mod out;
pub mod privileges;
pub mod replay;
pub mod replication;
pub mod rpc;
pub mod rpc_conn;
pub mod runfiles;
pub mod sasl;
pub mod server;
pub mod session;
pub mod settings;
pub mod signals;
pub mod slow;
pub mod socket;
pub mod startup;
pub mod stats;
pub mod text;
pub mod ulog;
pub mod uring;
pub mod workers;

/// Reported by `version` / VERSION / `stats version`: the memcached protocol
/// level memstored speaks, not memstored's own version. libmemcached (and so
/// memcstat, memcping, memcdump, php-memcached, pylibmc) refuses a server whose
/// major version is 0, and some clients enable features by version; see
/// docs/memcached-compat.md "VERSION".
pub const VERSION: &str = "1.6.0";

/// memstored's own version: `--version`, the start-up log, `stats memstored_version`.
pub const MEMSTORED_VERSION: &str = env!("CARGO_PKG_VERSION");
