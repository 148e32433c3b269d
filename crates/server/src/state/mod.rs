//! Shared data and atomics; no runtime, ring or task.

pub mod ascii_auth;
pub mod budget;
pub mod conns;
pub mod counters;
pub mod databases;
pub mod detail;
pub mod marks;
pub mod replication;
pub mod sasl;
pub mod server;
pub mod size;
pub mod slow;
pub mod tls;
pub mod watch;
