//! A capped in-memory store fed four times its cap keeps the process's RSS
//! within the cap plus the overhead documented in docs/reliability.md.

mod common;
use common::*;
use std::io::Write;

/// Process memory allowed beyond the cap: the server's own footprint
/// (runtime, buffers, ~10 MiB) plus allocator slack (freed values not yet
/// returned to the OS), stated in docs/reliability.md.
const OVERHEAD_KIB: u64 = 24 * 1024 + 32 * 1024 * 25 / 100;

#[test]
fn rss_stays_within_cap_plus_overhead_when_fed_four_times_the_cap() {
    let cap_mib = 32u64;
    for value_size in [100usize, 4000] {
        let server = Server::start(&["-s", &format!("*#capsiz={cap_mib}m")]);
        let idle = server.rss_kib();
        let mut s = server.connect();
        let value = vec![b'x'; value_size];
        let total = 4 * cap_mib * 1024 * 1024;
        let records = total / value_size as u64;
        let mut batch = Vec::new();
        let mut peak = 0;
        for i in 0..records {
            batch.extend_from_slice(&req(
                0x11,
                format!("key{i:010}").as_bytes(),
                &set_extras(0, 0),
                &value,
                0,
                0,
            ));
            if batch.len() > 256 * 1024 || i + 1 == records {
                batch.extend_from_slice(&req(NOOP, b"", &[], &[], 7, 0));
                s.write_all(&batch).unwrap();
                batch.clear();
                loop {
                    let r = read_resp(&mut s);
                    assert_eq!(r.status, 0, "{r:?}");
                    if r.opcode == NOOP {
                        break;
                    }
                }
                peak = peak.max(server.rss_kib());
            }
        }
        let limit = cap_mib * 1024 + OVERHEAD_KIB;
        eprintln!("values of {value_size} B: idle {idle} KiB, peak {peak} KiB, limit {limit} KiB");
        assert!(
            peak <= limit,
            "values of {value_size} B: peak RSS {peak} KiB > {limit} KiB"
        );
    }
}
