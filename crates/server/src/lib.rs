//! memstored's server as a library: the memcached protocols (binary, text,
//! meta), MessagePack-RPC and Kyoto Tycoon's binary protocol over one [`server::Server`], so handlers can be
//! tested and fuzzed in-process. `main.rs` only parses flags and starts it.
//!
//! The request path (docs/design.md, "Server"):
//! socket → `connection` (one loop per client) → protocol session
//! (`binary`, `text` + `meta`, `rpc_conn`, `kt_conn`) → `command` (one file per verb,
//! protocol-neutral, counts stats) → engine → `command::Outcome` → the
//! protocol's reply table.

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
