//! Data written to a persistent sharded store survives SIGTERM and restart;
//! a `.tkmt` snapshot is written back then, not after every reply.

mod common;
use common::*;

#[test]
fn data_survives_sigterm_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("{}/db.tkh#num_shards=4", dir.path().display());
    let srv = Server::start(&["-s", &store]);
    let mut t = Text::new(srv.connect());
    for i in 0..100 {
        assert_eq!(
            t.cmd(&format!("set key{i} {i} 0 6\r\nval{i:03}\r\n")),
            "STORED"
        );
    }
    assert_eq!(t.cmd("delete key5\r\n"), "DELETED");
    let mut b = srv.connect();
    assert_eq!(
        call(&mut b, SET, b"bin", &set_extras(9, 0), b"binary", 0).status,
        0
    );
    let st = srv.terminate();
    assert!(st.success(), "exit status {st:?}");
    drop(srv);

    let srv = Server::start(&["-s", &store]);
    let mut t = Text::new(srv.connect());
    for i in [0, 1, 50, 99] {
        assert_eq!(
            t.cmd(&format!("get key{i}\r\n")),
            format!("VALUE key{i} {i} 6")
        );
        assert_eq!(t.line(), format!("val{i:03}"));
        assert_eq!(t.line(), "END");
    }
    assert_eq!(t.cmd("get key5\r\n"), "END");
    let mut b = srv.connect();
    let r = call(&mut b, GET, b"bin", &[], &[], 0);
    assert_eq!(
        (r.value, r.extras),
        (b"binary".to_vec(), 9u32.to_be_bytes().to_vec())
    );
}

/// A `.tkmt` store is not rewritten after every reply (issue 12: 3,000 sets
/// rewrote the whole snapshot 3,000 times), and SIGTERM writes it back.
#[test]
fn tkmt_is_written_back_at_sigterm_not_after_every_reply() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("snap.tkmt");
    let store = path.display().to_string();
    // A rewrite renames a new file over the old one: a new inode (it is
    // created while the old one still exists) and a new mtime.
    let version = || {
        let m = std::fs::metadata(&path).unwrap();
        (m.ino(), m.mtime(), m.mtime_nsec())
    };
    let srv = Server::start(&["-s", &store]);
    let created = version();
    let mut t = Text::new(srv.connect());
    for i in 0..200 {
        assert_eq!(
            t.cmd(&format!("set key{i} 0 0 6\r\nval{i:03}\r\n")),
            "STORED"
        );
    }
    assert_eq!(
        version(),
        created,
        "the snapshot was rewritten while serving"
    );
    assert!(srv.terminate().success());
    assert_ne!(version(), created, "SIGTERM writes the snapshot back");

    let srv = Server::start(&["-s", &store]);
    let mut t = Text::new(srv.connect());
    for i in [0, 199] {
        assert_eq!(
            t.cmd(&format!("get key{i}\r\n")),
            format!("VALUE key{i} 0 6")
        );
        assert_eq!(t.line(), format!("val{i:03}"));
        assert_eq!(t.line(), "END");
    }
}
