//! What the hostile-client tests share: a server with a small connection
//! memory budget and a sentinel record, and the checks that an attack left
//! it alive, responsive and within a memory bound.

use super::{Server, Text};
use std::time::{Duration, Instant};

/// The connection memory budget these tests give the server.
pub const BUDGET_MIB: u64 = 32;
/// What the server may grow by beyond the budget (allocator slack, runtime,
/// per-connection state of a few hundred connections).
pub const SLACK_MIB: u64 = 48;

/// A well-behaved client: the sentinel reads back and 50 set+get round
/// trips each take under 100 ms.
pub fn assert_unharmed(server: &Server, what: &str) {
    let mut t = Text::new(server.connect());
    assert_eq!(t.cmd("get sentinel\r\n"), "VALUE sentinel 7 5", "{what}");
    assert_eq!(t.line(), "alive");
    assert_eq!(t.line(), "END");
    let mut worst = Duration::ZERO;
    for i in 0..50 {
        let start = Instant::now();
        assert_eq!(t.cmd(&format!("set probe 0 0 3\r\n{i:03}\r\n")), "STORED");
        assert_eq!(t.cmd("get probe\r\n"), "VALUE probe 0 3", "{what}");
        assert_eq!(t.line(), format!("{i:03}"));
        assert_eq!(t.line(), "END");
        worst = worst.max(start.elapsed());
    }
    assert!(
        worst < Duration::from_millis(100),
        "{what}: a well-behaved client waited {worst:?}"
    );
}

pub fn start_with_sentinel(extra: &[&str]) -> Server {
    let args = hostile_args(extra);
    let server = Server::start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    set_sentinel(&server);
    server
}

/// The budget and item size of these tests, then `extra`.
pub fn hostile_args(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["--conn-memory", &format!("{BUDGET_MIB}m"), "-I", "2m"]
        .map(String::from)
        .to_vec();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// The record `assert_unharmed` reads back.
pub fn set_sentinel(server: &Server) {
    let mut t = Text::new(server.connect());
    assert_eq!(t.cmd("set sentinel 7 0 5\r\nalive\r\n"), "STORED");
}

pub fn assert_grew_at_most(server: &Server, before_kib: u64, bound_mib: u64, what: &str) {
    let grew = server.rss_kib().saturating_sub(before_kib);
    assert!(
        grew < bound_mib * 1024,
        "{what}: the server grew by {grew} KiB (bound {bound_mib} MiB)"
    );
}
