//! `memstore bench`: network load against a memcached or memstored server,
//! over the memcached binary or text protocol or MessagePack-RPC, so both
//! servers are measured by one client.
//!
//! Each of `--threads` threads opens `--connections` blocking connections and
//! does `--iter` records per phase (set, then get). Records go in batches of
//! `--multi`: one batch per request round trip, one batch in flight per
//! connection (a thread with several connections sends a batch on each, then
//! reads each reply). A batch is
//!
//! | protocol | set | get |
//! |---|---|---|
//! | binary, multi 1 | SET | GET |
//! | binary, multi N | N × SETQ + NOOP | N × GETKQ + NOOP |
//! | text, multi 1 | `set` | `get k` |
//! | text, multi N | N-1 × `set ... noreply` + one `set` (its STORED ends the batch) | `get k1 ... kN` |
//! | rpc, multi 1 | `set(key, value)` | `get(key)` |
//! | rpc, multi N | `set_bulk({_k: v, ...})` | `get_bulk({_k: "", ...})` |
//!
//! Thread `t` of `T` uses keys `i * T + t` (or random keys below
//! `iter * T` with `--random_key`), written `%08d` like `tkrzw_dbm_perf`;
//! values are `--size` bytes cut from a letter pattern. Latency is measured
//! per request (one batch's round trip) into an HDR histogram.
//!
//! One file per part: `options` (the command line), `conn` (a connection and
//! its buffers), one load generator per protocol (`binary`, `text`, `rpc`),
//! `load` (which generator a connection uses), `report` (totals, text and
//! JSON output) and `driver` (threads, phases, pacing). Each imports only
//! files listed before it.

mod binary;
mod conn;
mod driver;
mod load;
mod options;
mod report;
mod rpc;
mod text;

pub use driver::run;
pub use options::{BenchArgs, LONG_ABOUT};
