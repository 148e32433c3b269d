//! `memstore remote` against the real server: the sequences of the Tkrzw-RPC
//! sharding article (shared/seeds/002) with only the program name changed
//! (the address comes from `MEMSTORE_ADDRESS`), on a 10-shard tree store.

mod common;

use common::{fails, ok, Server};
use std::path::Path;

fn backups(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".backup."))
        .collect();
    v.sort();
    v
}

#[test]
fn sharding_article_sequences() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let srv = Server::start(d, "casket.tkt#num_shards=10,num_buckets=1M", &[]);
    let a = &srv.address();

    // 200 records 00000000..00000199, through the load tool.
    let out = ok(
        d,
        a,
        &[
            "bench",
            "--protocol",
            "rpc",
            "--set_only",
            "--multi",
            "50",
            "--threads",
            "2",
            "--iter",
            "100",
        ],
    );
    assert!(out.contains("Setting done:"), "{out}");

    // As in the article, word for word after the program name.
    let v = ok(d, a, &["remote", "get", "00000001"]);
    assert_eq!(v.trim_end().len(), 8, "{v:?}");
    ok(
        d,
        a,
        &[
            "remote", "set", "--multi", "00000001", "yuutei", "00000002", "miyaou", "00000003",
            "kimukou",
        ],
    );
    assert_eq!(
        ok(
            d,
            a,
            &["remote", "get", "--multi", "00000001", "00000002", "00000003"]
        ),
        "00000001\tyuutei\n00000002\tmiyaou\n00000003\tkimukou\n"
    );
    assert_eq!(ok(d, a, &["remote", "get", "00000002"]), "miyaou\n");

    let listed = ok(
        d,
        a,
        &[
            "remote",
            "list",
            "--move",
            "jumplowerinc",
            "--jump_key",
            "00000100",
            "--items",
            "20",
        ],
    );
    let keys: Vec<&str> = listed
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    let want: Vec<String> = (100..120).map(|i| format!("{i:08}")).collect();
    assert_eq!(keys, want, "{listed}");
    assert!(listed
        .lines()
        .all(|l| l.split('\t').nth(1).is_some_and(|v| v.len() == 8)));

    assert!(backups(d).is_empty());
    ok(d, a, &["remote", "sync", "--hard"]);
    ok(d, a, &["remote", "sync", "make_backup="]);
    let b = backups(d);
    assert_eq!(b.len(), 10, "one backup file per shard: {b:?}");
    assert!(b[0].starts_with("casket.tkt.backup.2"), "{b:?}");
    ok(d, a, &["remote", "sync", "make_backup=mine"]);
    assert!(backups(d).iter().any(|n| n.contains(".backup.mine")));
    ok(d, a, &["remote", "rebuild"]);

    // Still all there, in order, after the rebuild.
    assert_eq!(ok(d, a, &["remote", "get", "00000003"]), "kimukou\n");
    let all = ok(d, a, &["remote", "list", "--keys"]);
    assert_eq!(all.lines().count(), 200);
    assert_eq!(all.lines().next(), Some("00000000"));
    let info = ok(d, a, &["remote", "inspect"]);
    assert!(info.contains("Number of Records: 200"), "{info}");
    assert_eq!(ok(d, a, &["remote", "inspect", "num_shards"]), "10\n");
}

#[test]
fn other_subcommands() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let srv = Server::start(d, "+", &[]);
    let a = &srv.address();
    // --address works as well as MEMSTORE_ADDRESS, before or after the subcommand.
    let bad = "127.0.0.1:1";
    assert_eq!(
        ok(
            d,
            bad,
            &["remote", "--address", a, "echo", "hello", "world"]
        ),
        "hello world\n"
    );
    assert_eq!(
        ok(d, bad, &["remote", "echo", "--address", a, "hi"]),
        "hi\n"
    );
    let e = fails(d, bad, &["remote", "echo", "x"]);
    assert!(e.contains("cannot connect"), "{e}");

    ok(d, a, &["remote", "set", "k", "v1"]);
    let e = fails(d, a, &["remote", "set", "--no_overwrite", "k", "v2"]);
    assert!(e.contains("DUPLICATION"), "{e}");
    ok(d, a, &["remote", "set", "--append", ",", "k", "v2"]);
    ok(d, a, &["remote", "set", "--append", ",", "fresh", "x"]);
    assert_eq!(ok(d, a, &["remote", "get", "k"]), "v1,v2\n");
    assert_eq!(ok(d, a, &["remote", "get", "fresh"]), "x\n");
    assert_eq!(
        ok(d, a, &["remote", "set", "--incr", "10", "n", "5"]),
        "15\n"
    );
    assert_eq!(
        ok(d, a, &["remote", "set", "--incr", "10", "n", "-20"]),
        "-5\n"
    );
    let e = fails(d, a, &["remote", "get", "nope"]);
    assert!(e.contains("NOT_FOUND"), "{e}");
    assert_eq!(
        ok(d, a, &["remote", "get", "--multi", "nope", "k"]),
        "k\tv1,v2\n"
    );
    ok(d, a, &["remote", "set", "tab", "a\tb"]);
    assert_eq!(
        ok(d, a, &["remote", "get", "--multi", "tab"]),
        "tab\ta\\tb\n"
    );

    assert_eq!(
        ok(d, a, &["remote", "search", "--mode", "begin", "f"]),
        "fresh\tx\n"
    );
    assert_eq!(
        ok(
            d,
            a,
            &["remote", "search", "--mode", "contain", "e", "--keys"]
        ),
        "fresh\n"
    );
    assert_eq!(
        ok(
            d,
            a,
            &[
                "remote",
                "list",
                "--move",
                "jump",
                "--jump_key",
                "k",
                "--keys"
            ]
        ),
        "k\nn\ntab\n"
    );
    assert_eq!(
        ok(
            d,
            a,
            &[
                "remote",
                "list",
                "--move",
                "jumpupper",
                "--jump_key",
                "k",
                "--keys"
            ]
        ),
        "n\ntab\n"
    );
    ok(d, a, &["remote", "remove", "fresh"]);
    let e = fails(d, a, &["remote", "remove", "fresh"]);
    assert!(e.contains("NOT_FOUND"), "{e}");
    ok(d, a, &["remote", "remove", "--multi", "k", "n", "absent"]);
    assert_eq!(ok(d, a, &["remote", "list"]), "tab\ta\\tb\n");
    ok(d, a, &["remote", "clear"]);
    assert_eq!(ok(d, a, &["remote", "list"]), "");
    let e = fails(d, a, &["remote", "set", "--multi", "a", "1", "b"]);
    assert!(e.contains("pairs"), "{e}");
}

#[test]
fn auth() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(d.join("users"), "alice:secret\n").unwrap();
    let srv = Server::start(d, "*", &["--sasl-file", "users"]);
    let a = &srv.address();
    let e = fails(d, a, &["remote", "set", "k", "v"]);
    assert!(e.contains("authentication required"), "{e}");
    let e = fails(d, a, &["remote", "--auth", "alice:wrong", "get", "k"]);
    assert!(e.contains("authentication"), "{e}");
    ok(d, a, &["remote", "--auth", "alice:secret", "set", "k", "v"]);
    assert_eq!(
        ok(d, a, &["remote", "get", "k", "--auth", "alice:secret"]),
        "v\n"
    );
}

/// `remote changemaster`: without a master it promotes a replica (writes
/// accepted), with one it makes it follow that master again (writes
/// refused); on a server that is no replica it fails and says why.
#[test]
fn changemaster_promotes_and_demotes_a_replica() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let master = Server::start(d, "m.tkh", &["--ulog-dir", "m-ulog", "--server-id", "1"]);
    let m = &master.address();
    let replica = Server::start(
        d,
        "r.tkh",
        &[
            "--ulog-dir",
            "r-ulog",
            "--server-id",
            "2",
            "--replicate-from",
            m,
        ],
    );
    let r = &replica.address();
    assert!(fails(d, r, &["remote", "set", "k", "v"]).contains("read-only"));
    ok(d, r, &["remote", "changemaster"]);
    ok(d, r, &["remote", "set", "k", "v"]);
    ok(d, r, &["remote", "changemaster", m, "--ts_skew", "10"]);
    assert!(fails(d, r, &["remote", "set", "k", "w"]).contains("read-only"));
    assert_eq!(ok(d, r, &["remote", "get", "k"]).trim_end(), "v");
    let e = fails(d, m, &["remote", "changemaster", r]);
    assert!(e.contains("not a replica"), "{e}");
}

/// Flags go anywhere, as Tkrzw's tools take them (issue 40, finding 9):
/// `--address` after a `--multi` list is the address, not two more items of
/// the list. The default address (`MEMSTORE_ADDRESS`) is a second server
/// here, which must get nothing.
#[test]
fn flags_after_a_list_are_flags() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let right = Server::start(d, "*", &[]);
    let wrong = Server::start(d, "*", &[]);
    let (r, w) = (&right.address(), &wrong.address());
    let set = [
        "remote",
        "set",
        "--multi",
        "k1",
        "v1",
        "k2",
        "-5",
        "--address",
        r,
    ];
    ok(d, w, &set);
    let get = ["remote", "get", "--multi", "k1", "k2", "--address", r];
    assert_eq!(ok(d, w, &get), "k1\tv1\nk2\t-5\n");
    assert_eq!(
        ok(d, w, &["remote", "list"]),
        "",
        "nothing went to the default"
    );
    // The same for a single set, the other flags and a list of keys.
    ok(
        d,
        w,
        &[
            "remote",
            "set",
            "k3",
            "v3",
            "--no_overwrite",
            "--address",
            r,
        ],
    );
    assert_eq!(ok(d, w, &["remote", "get", "k3", "--address", r]), "v3\n");
    ok(
        d,
        w,
        &["remote", "remove", "--multi", "k1", "k3", "--address", r],
    );
    assert_eq!(ok(d, r, &["remote", "list", "--keys"]), "k2\n");
    // A value beginning with `-` that is not a number goes after `--`; an
    // unknown flag is refused, never stored.
    let e = fails(d, r, &["remote", "set", "k4", "--verbose"]);
    assert!(e.contains("--verbose"), "{e}");
    ok(
        d,
        w,
        &["remote", "set", "--address", r, "--", "k4", "-dash"],
    );
    assert_eq!(ok(d, r, &["remote", "get", "k4"]), "-dash\n");
    assert_eq!(ok(d, w, &["remote", "list"]), "");
}

/// Every subcommand takes its flags after its arguments too (Tkrzw's tools
/// take them anywhere), the common ones included: `--address` last sends
/// the call to that server, not the default one.
#[test]
fn options_anywhere_for_every_subcommand() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let right = Server::start(d, "casket.tkt", &[]);
    let wrong = Server::start(d, "*", &[]);
    let (r, w) = (&right.address(), &wrong.address());
    let run = |line: &str| {
        let mut v: Vec<&str> = vec!["remote"];
        v.extend(line.split_whitespace());
        v.extend(["--address", r]);
        ok(d, w, &v)
    };
    assert_eq!(run("echo a b --times 2"), "a b\na b\n");
    run("perf sequence --iter 5 --set_only --threads 2 --multi 3");
    assert_eq!(run("inspect count --index 0"), "12\n");
    assert_eq!(
        run("list --items 2 --keys --move jumplowerinc --jump_key 00000003"),
        "00000003\n00000004\n"
    );
    assert_eq!(
        run("search 0000001 --mode begin --max 2 --keys"),
        "00000010\n00000011\n"
    );
    assert_eq!(run("get 00000001 --multi 00000000").lines().count(), 2);
    run("set k 1 --incr 0 --timeout 5");
    run("remove k --timeout 5");
    run("sync make_backup=mine --hard");
    run("rebuild --timeout 30");
    run("clear --index 0");
    assert_eq!(ok(d, r, &["remote", "inspect", "count"]), "0\n");
    assert_eq!(ok(d, w, &["remote", "inspect", "count"]), "0\n");
}
