//! A rebuild on a full disk, asked over MessagePack-RPC and over the Kyoto
//! Tycoon port (issue 40, finding 2): each answer carries the OS's reason,
//! no temporary file is left, and the server serves on. 12 MiB tmpfs (root).

mod common;
#[path = "common/tmpfs.rs"]
mod tmpfs;

use common::kt_http::{start_kt, Http};
use common::{rpc_request, rpc_response};
use memstored_engine::Db;
use memstored_protocol::rpc::Value;
use std::io::Write;
use tmpfs::Tmpfs;

const NO_SPACE: &str = "No space left on device";

#[test]
fn a_rebuild_out_of_space_is_answered_with_the_reason_on_every_port() {
    let Some(disk) = Tmpfs::mount("12m") else {
        return;
    };
    let store = disk.join("c.tkh").display().to_string();
    {
        let db = Db::open(&store, true).unwrap();
        for i in 0..250 {
            db.set(format!("k{i}").as_bytes(), &[b'v'; 20 << 10], true)
                .unwrap();
        }
        db.close().unwrap();
    }
    let (srv, kt_port) = start_kt(&["-s", &store]);
    disk.fill(1 << 20);
    let no_temporaries = || {
        let names = disk.names();
        assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    };

    // MessagePack-RPC, a client of today (bin): `[code, message]`.
    let mut s = srv.connect();
    let opts = Value::Map(vec![(Value::Binary(b"DB".to_vec()), Value::from(0))]);
    s.write_all(&rpc_request(1, "rebuild", &[opts])).unwrap();
    let e = rpc_response(&mut s).unwrap_err();
    let Value::Array(a) = &e else {
        panic!("not [code, message]: {e}")
    };
    assert!(
        a.first().and_then(Value::as_i64) == Some(32) && e.to_string().contains(NO_SPACE),
        "{e}"
    );
    no_temporaries();
    // kt-msgpack's dialect (no bin) still gets the bare code its clients compare.
    s.write_all(&rpc_request(2, "rebuild", &[])).unwrap();
    assert_eq!(rpc_response(&mut s).unwrap_err(), Value::from(32));
    no_temporaries();

    // The Kyoto Tycoon port's TSV-RPC: the ERROR column says why.
    let mut http = Http::connect(kt_port);
    let r = http.rpc("rebuild", &[], None);
    let error = r.field("ERROR").unwrap_or_default();
    assert!(r.status >= 400 && error.contains(NO_SPACE), "{r:?}");
    no_temporaries();

    // Still serving, and it rebuilds once there is room.
    let mut s = srv.connect();
    s.write_all(b"get k7\r\n").unwrap();
    let mut t = common::Text::new(s);
    assert!(t.line().starts_with("VALUE k7 0 20480"));
    disk.make_room();
    assert_eq!(http.rpc("rebuild", &[], None).status, 200);
    no_temporaries();
}
