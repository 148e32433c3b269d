//! `memstore bench`'s command line: the arguments, the protocols and the phases.

use clap::{Args, ValueEnum};

pub const LONG_ABOUT: &str = "\
Network load against a memcached or memstored server: the same client for both.

Each thread opens --connections connections and, per phase, moves --iter records in
batches of --multi, one batch in flight per connection:

  binary  multi 1: SET / GET;      multi N: N x SETQ + NOOP / N x GETKQ + NOOP
  text    multi 1: set / get k;    multi N: N-1 x 'set .. noreply' + 'set' / 'get k1 .. kN'
  rpc     multi 1: set / get;      multi N: set_bulk / get_bulk (MessagePack-RPC)

Keys are %08d numbers (thread t of T uses i*T+t; --random_key: random below iter*T).
Prints one line per phase: records/s (qps=), requests/s, and latency per request
(one batch's round trip) p50/p99/p99.9/max in microseconds; --json prints one JSON
object instead. A progress bar goes to stderr when it is a terminal.

Examples:
  memstore bench --address 127.0.0.1:11211 --protocol binary --threads 4 --iter 250000 --multi 100
  memstore bench --protocol rpc --set_only --multi 100 --threads 4 --iter 250000
  memstore bench --protocol text --get_only --iter 100000 --json";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    /// memcached binary protocol.
    Binary,
    /// memcached text protocol.
    Text,
    /// MessagePack-RPC (memstored; Kyoto Tycoon's kt-msgpack procedures).
    Rpc,
}

impl Protocol {
    pub(super) fn name(self) -> &'static str {
        match self {
            Protocol::Binary => "binary",
            Protocol::Text => "text",
            Protocol::Rpc => "rpc",
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// The server: HOST:PORT (default: $MEMSTORE_ADDRESS, else 127.0.0.1:11211).
    #[arg(long)]
    pub address: Option<String>,
    /// Wire protocol.
    #[arg(long, value_enum, default_value = "binary")]
    pub protocol: Protocol,
    /// Client threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Connections per thread (each has one batch in flight).
    #[arg(long, default_value_t = 1)]
    pub connections: usize,
    /// Records per thread and phase.
    #[arg(long, default_value_t = 10000)]
    pub iter: u64,
    /// Records per request (bulk size): pipelined quiet commands + NOOP on
    /// binary, multi-key get / noreply sets on text, set_bulk / get_bulk on RPC.
    #[arg(long, default_value_t = 1)]
    pub multi: usize,
    /// Value size in bytes.
    #[arg(long, default_value_t = 8)]
    pub size: usize,
    /// Random keys below iter * threads instead of each record once.
    #[arg(long = "random_key", alias = "random-key")]
    pub random_key: bool,
    /// Random keys are drawn below this (default: iter * threads).
    #[arg(long = "key_space", alias = "key-space", value_name = "N")]
    pub key_space: Option<u64>,
    /// Seed of the random keys.
    #[arg(long = "random_seed", alias = "random-seed", default_value_t = 0)]
    pub random_seed: u64,
    /// Only the set phase.
    #[arg(long = "set_only", alias = "set-only", conflicts_with = "get_only")]
    pub set_only: bool,
    /// Only the get phase (load the records first).
    #[arg(long = "get_only", alias = "get-only")]
    pub get_only: bool,
    /// Prints one JSON object (phases, rates, latency) instead of text lines.
    #[arg(long)]
    pub json: bool,
    /// Ends each phase after this many seconds even if --iter is not done
    /// (0 = no limit); the counts are of what was done.
    #[arg(long, default_value_t = 0.0)]
    pub duration: f64,
    /// Ends the phase early once this file exists (for scripts that run a
    /// load alongside other work and stop it when that work is done).
    #[arg(long = "stop_file", alias = "stop-file", value_name = "PATH")]
    pub stop_file: Option<std::path::PathBuf>,
    /// Seconds to wait for a reply before failing (default 60).
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Paces the load to this many records per second over all threads
    /// (0 = as fast as the server answers): a steady load at which to
    /// measure something else, such as replication lag.
    #[arg(long, default_value_t = 0.0)]
    pub rate: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Set,
    Get,
}

impl Phase {
    /// The phase's name in the progress bar and the JSON output.
    pub(super) fn label(self) -> &'static str {
        match self {
            Phase::Set => "set",
            Phase::Get => "get",
        }
    }
}
