//! Third-party memcached clients against the real server: libmemcached's
//! conformance suite (`memccapable`) and the Rust `memcache` crate.

mod common;
use common::Server;
use std::process::Command;

/// The stores every client test runs against: the default cache and a
/// persistent sharded hash.
fn stores(dir: &std::path::Path) -> Vec<String> {
    vec![
        "*#capsiz=64m".to_string(),
        format!("{}/casket.tkh#num_shards=4", dir.display()),
    ]
}

#[test]
fn memccapable_passes_every_ascii_and_binary_test() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()) {
        let server = Server::start(&["-s", &store]);
        let out = Command::new("memccapable")
            .args(["-h", "127.0.0.1", "-p", &server.port.to_string()])
            .output()
            .expect("memccapable not installed: apt-get install libmemcached-tools (.ci/run does)");
        let text = String::from_utf8_lossy(&out.stdout);
        let passed = text.lines().filter(|l| l.ends_with("[pass]")).count();
        let failed: Vec<&str> = text.lines().filter(|l| l.contains("[FAIL]")).collect();
        assert!(
            out.status.success() && failed.is_empty(),
            "{store}: failed {failed:?}\n{text}"
        );
        // 27 ascii + 27 binary tests in libmemcached 1.x (54 with memcached).
        assert!(passed >= 54, "{store}: only {passed} tests passed\n{text}");
    }
}

#[test]
fn rust_memcache_crate_stores_reads_increments_cas_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()) {
        let server = Server::start(&["-s", &store]);
        for proto in ["ascii", "binary"] {
            let url = format!(
                "memcache://127.0.0.1:{}?timeout=10&tcp_nodelay=true&protocol={proto}",
                server.port
            );
            let c = memcache::Client::connect(url).unwrap();
            c.set("rs:key", "hello", 0).unwrap();
            assert_eq!(
                c.get::<String>("rs:key").unwrap().as_deref(),
                Some("hello"),
                "{store} {proto}"
            );
            // The crate reports NOT_STORED as success; the value must be untouched.
            let _ = c.add("rs:key", "again", 0);
            assert_eq!(
                c.get::<String>("rs:key").unwrap().as_deref(),
                Some("hello"),
                "add kept the value"
            );
            c.set("rs:n", 10u64, 0).unwrap();
            assert_eq!(c.increment("rs:n", 5).unwrap(), 15);
            assert_eq!(c.decrement("rs:n", 20).unwrap(), 0, "decr floors at 0");
            c.append("rs:key", " world").unwrap();
            assert_eq!(
                c.get::<String>("rs:key").unwrap().as_deref(),
                Some("hello world")
            );
            if proto == "ascii" {
                // The crate's CAS calls are ascii-only.
                let got: std::collections::HashMap<String, (Vec<u8>, u32, Option<u64>)> =
                    c.gets(&["rs:key"]).unwrap();
                let cas = got["rs:key"].2.expect("gets returns a CAS");
                assert!(c.cas("rs:key", "swapped", 0, cas).unwrap());
                assert!(
                    !c.cas("rs:key", "stale", 0, cas).unwrap(),
                    "an old CAS is refused"
                );
                assert_eq!(
                    c.get::<String>("rs:key").unwrap().as_deref(),
                    Some("swapped")
                );
            }
            assert!(c.delete("rs:key").unwrap());
            assert!(!c.delete("rs:key").unwrap());
            assert_eq!(c.get::<String>("rs:key").unwrap(), None);
        }
    }
}
