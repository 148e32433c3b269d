//! `memstore remote rebuild` against a server whose disk is full (issue 40,
//! finding 2): the failure says why, the rebuild's temporary file is gone,
//! and the server serves on. The disk is a 12 MiB tmpfs (root only).

mod common;
#[path = "../../server/tests/common/tmpfs.rs"]
mod tmpfs;

use common::{fails, ok, Server};
use memstored_engine::Db;
use tmpfs::Tmpfs;

/// Regression: the CLI reported `UNKNOWN_ERROR (32): 32` (its call carried
/// no bin, so the server answered kt-msgpack's bare code) and the server
/// left `c.tkh.rebuild.tmp` on the full disk.
#[test]
fn a_remote_rebuild_out_of_space_says_why_and_leaves_no_temporary_file() {
    let Some(disk) = Tmpfs::mount("12m") else {
        return;
    };
    {
        let db = Db::open(&disk.join("c.tkh").display().to_string(), true).unwrap();
        for i in 0..250 {
            db.set(format!("k{i}").as_bytes(), &[b'v'; 20 << 10], true)
                .unwrap();
        }
        db.close().unwrap();
    }
    let srv = Server::start(disk.path(), "c.tkh", &[]);
    let a = &srv.address();
    disk.fill(1 << 20);

    let e = fails(disk.path(), a, &["remote", "rebuild"]);
    assert!(e.contains("No space left on device"), "{e}");
    let names = disk.names();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    assert_eq!(
        ok(disk.path(), a, &["remote", "get", "k7"])
            .trim_end()
            .len(),
        20 << 10
    );
    disk.make_room();
    ok(disk.path(), a, &["remote", "rebuild"]);
}
