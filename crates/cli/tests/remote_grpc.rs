//! `memstore remote --protocol grpc` against `memstored --grpc-listen`:
//! the same commands over both wires print the same, so one tool compares
//! memstored's MessagePack-RPC and Tkrzw-RPC's gRPC (issue 43).

mod common;

use common::{fails, ok, Server};
use std::path::Path;

/// Runs `memstore remote ARGS` over MessagePack-RPC (the default, at
/// `MEMSTORE_ADDRESS`) and over gRPC (`--protocol grpc --address G`, the
/// flags after the others), and demands the same output; returns it.
fn both(d: &Path, rpc: &str, grpc: &str, args: &str) -> String {
    let mut v: Vec<&str> = vec!["remote"];
    v.extend(args.split_whitespace());
    let over_rpc = ok(d, rpc, &v);
    v.extend(["--protocol", "grpc", "--address", grpc]);
    let over_grpc = ok(d, rpc, &v);
    assert_eq!(over_grpc, over_rpc, "memstore remote {args}");
    over_rpc
}

fn grpc_address(srv: &Server) -> String {
    let line = srv.stdout_line();
    assert!(line.contains("grpc"), "{line}");
    format!("127.0.0.1:{}", line.trim().rsplit(':').next().unwrap())
}

#[test]
fn both_wires_print_the_same() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let srv = Server::start(
        d,
        "casket.tkt#num_shards=10,num_buckets=1M",
        &["--grpc-listen", "127.0.0.1:0"],
    );
    let (a, g) = (&srv.address(), &grpc_address(&srv));

    // Seed 002's perf run over gRPC: Tkrzw's SetMulti batches, the same
    // records as over MessagePack-RPC (and as tkrzw_dbm_remote_perf's).
    let perf = "perf sequence --set_only --multi 100 --threads 4 --iter 30";
    let mut v: Vec<&str> = vec!["remote"];
    v.extend(perf.split_whitespace());
    v.extend(["--protocol", "grpc", "--address", g]);
    let out = ok(d, a, &v);
    assert!(
        out.contains("Setting done:") && out.contains("num_records=400"),
        "{out}"
    );
    for k in ["00000100", "00000113", "00000119", "00000399"] {
        let got = both(d, a, g, &format!("get {k}"));
        assert_eq!(got.trim_end().len(), 8, "{k}");
    }
    assert_eq!(both(d, a, g, "get 00000100"), "cbedgfah\n");
    assert_eq!(
        both(d, a, g, "get --multi 00000119 00000100 absent 00000119"),
        "00000100\tcbedgfah\n00000119\tbqdsfuhw\n"
    );

    both(d, a, g, "set k1 v1");
    assert_eq!(both(d, a, g, "get k1"), "v1\n");
    ok(
        d,
        a,
        &[
            "remote",
            "set",
            "--multi",
            "m1",
            "x",
            "m2",
            "y",
            "--protocol",
            "grpc",
            "--address",
            g,
        ],
    );
    assert_eq!(both(d, a, g, "get m2 --multi m1"), "m1\tx\nm2\ty\n");
    ok(
        d,
        a,
        &[
            "remote",
            "remove",
            "--multi",
            "m1",
            "m2",
            "--protocol",
            "grpc",
            "--address",
            g,
        ],
    );
    assert_eq!(both(d, a, g, "get --multi m1 m2"), "");
    let e = fails(
        d,
        a,
        &["remote", "get", "m1", "--protocol", "grpc", "--address", g],
    );
    assert!(e.contains("NOT_FOUND_ERROR"), "{e}");
    let e = fails(
        d,
        a,
        &[
            "remote",
            "set",
            "k1",
            "v2",
            "--no_overwrite",
            "--protocol",
            "grpc",
            "--address",
            g,
        ],
    );
    assert!(e.contains("DUPLICATION_ERROR"), "{e}");
    ok(
        d,
        a,
        &[
            "remote",
            "set",
            "n",
            "5",
            "--incr",
            "10",
            "--protocol",
            "grpc",
            "--address",
            g,
        ],
    );
    both(d, a, g, "get n");
    ok(
        d,
        a,
        &[
            "remote",
            "remove",
            "n",
            "--protocol",
            "grpc",
            "--address",
            g,
        ],
    );

    // The counts agree; inspect over gRPC prints Tkrzw's properties.
    let count_rpc = ok(d, a, &["remote", "inspect", "count"]);
    let count_grpc = ok(
        d,
        a,
        &[
            "remote",
            "inspect",
            "num_records",
            "--protocol",
            "grpc",
            "--address",
            g,
        ],
    );
    assert_eq!(count_rpc, count_grpc);
    assert_eq!(count_rpc, "401\n");

    both(d, a, g, "sync --hard");
    both(d, a, g, "rebuild");
    assert_eq!(both(d, a, g, "echo hello there"), "hello there\n");
    both(d, a, g, "search --mode begin 0000011 --max 3");

    // list over gRPC is Tkrzw's Iterate stream; memstored may not serve it
    // yet (UNIMPLEMENTED), which is then the error.
    let list = "list --move jumplowerinc --jump_key 00000100 --items 20";
    let mut v: Vec<&str> = vec!["remote"];
    v.extend(list.split_whitespace());
    v.extend(["--protocol", "grpc", "--address", g]);
    let out = common::memstore(d, a, &v);
    if out.status.success() {
        assert_eq!(String::from_utf8(out.stdout).unwrap(), both(d, a, g, list));
        both(d, a, g, "list --keys");
        // Backward after jumpupper[inc], as Tkrzw's tool walks (the
        // MessagePack-RPC `list` procedure lists forward only).
        let mut v: Vec<&str> = vec!["remote"];
        v.extend("list --move jumpupperinc --jump_key 00000110 --items 3".split(' '));
        v.extend(["--protocol", "grpc", "--address", g]);
        assert_eq!(
            ok(d, a, &v),
            "00000110\tgfahcjel\n00000109\tfehgbidk\n00000108\tedgfahcj\n"
        );
    } else {
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains("Iterate") && e.contains("Unimplemented"), "{e}");
        eprintln!("note: list over gRPC not served yet: {e}");
    }

    both(d, a, g, "clear");
    assert_eq!(ok(d, a, &["remote", "inspect", "count"]), "0\n");
}

/// `perf sequence` over either wire stores the same records (random keys and
/// sizes included: both draw from Tkrzw's generators), and its phases run
/// over gRPC with and without `--multi`.
#[test]
fn perf_over_both_wires_stores_the_same() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let srv = Server::start(d, "casket.tkt", &["--grpc-listen", "127.0.0.1:0"]);
    let (a, g) = (&srv.address(), &grpc_address(&srv));
    let perf = |flags: &str, grpc: bool| {
        let mut v: Vec<&str> = vec!["remote", "perf", "sequence"];
        v.extend(flags.split_whitespace());
        if grpc {
            v.extend(["--protocol", "grpc", "--address", g]);
        }
        ok(d, a, &v)
    };
    for flags in [
        "--set_only --threads 3 --iter 50 --multi 7 --size 12",
        // One thread: two would race on the keys both draw.
        "--set_only --threads 1 --iter 80 --random_key --random_value --random_seed 5",
    ] {
        perf(flags, false);
        let over_rpc = ok(d, a, &["remote", "list"]);
        perf(flags, true);
        assert_eq!(ok(d, a, &["remote", "list"]), over_rpc, "{flags}");
    }
    for flags in [
        "--echo_only --set_only --get_only --remove_only --threads 2 --iter 30",
        "--echo_only --set_only --get_only --remove_only --threads 2 --iter 30 --multi 8",
        "--echo_only --set_only --get_only --remove_only --threads 2 --iter 250 --stream",
    ] {
        let out = perf(flags, true);
        for label in ["Echoing", "Setting", "Getting", "Removing"] {
            assert!(out.contains(&format!("{label} done:")), "{label}: {out}");
        }
        assert!(out.contains("Removing done: elapsed_time="), "{out}");
    }
    // --ignore_result: sets unanswered on the Stream call, all done by the
    // time the stream is closed and the records counted.
    let out = perf(
        "--set_only --threads 2 --iter 250 --stream --ignore_result",
        true,
    );
    assert!(out.contains("num_records=500"), "{out}");
    let e = fails(
        d,
        a,
        &[
            "remote",
            "perf",
            "sequence",
            "--get_only",
            "--iter",
            "5",
            "--protocol",
            "grpc",
            "--address",
            g,
        ],
    );
    assert!(e.contains("Get failed: NOT_FOUND_ERROR"), "{e}");
}
