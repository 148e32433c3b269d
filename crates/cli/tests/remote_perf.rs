//! `memstore remote perf sequence` with tkrzw_dbm_remote_perf's flags
//! against the real server: seed 002's `tkrzw_dbm_remote_perf sequence
//! --set_only --multi 100 --threads 4 --iter N` with only the program name
//! changed (smaller N), on the seed's sharded store.

mod common;

use common::{fails, ok, Server};

/// The `num_records=` of the `LABEL done:` line.
fn records_after(out: &str, label: &str) -> u64 {
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{label} done:")))
        .unwrap_or_else(|| panic!("no {label} line in {out}"));
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("num_records="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no num_records in {line:?}"))
}

/// `remote perf sequence` and the flags, written as on a command line.
fn seq(flags: &str) -> Vec<&str> {
    let mut args = vec!["remote", "perf", "sequence"];
    args.extend(flags.split_whitespace());
    args
}

#[test]
fn seed_002_remote_perf_command_line() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let srv = Server::start(
        d,
        "casket.tkh#num_shards=100,num_buckets=1M,update_mode=appending",
        &[],
    );
    let a = &srv.address();

    let out = ok(d, a, &seq("--set_only --multi 100 --threads 4 --iter 500"));
    assert!(
        out.starts_with("Setting: num_iterations=500 value_size=8 num_threads=4\n"),
        "{out}"
    );
    assert_eq!(records_after(&out, "Setting"), 2000, "{out}");
    assert!(
        !out.contains("Getting"),
        "--set_only ran other phases: {out}"
    );
    // Thread t of T wrote keys i*T+t, %08d, values of --size bytes.
    for k in ["00000000", "00000001", "00001999"] {
        assert_eq!(ok(d, a, &["remote", "get", k]).trim_end().len(), 8, "{k}");
    }
    assert!(fails(d, a, &["remote", "get", "00002000"]).contains("NOT_FOUND"));

    // Every run clears the database first, as tkrzw-rpc 0.9.10's does, so
    // getting goes with setting in one run.
    let out = ok(
        d,
        a,
        &seq("--set_only --get_only --multi 100 --threads 4 --iter 500"),
    );
    assert_eq!(records_after(&out, "Setting"), 2000, "{out}");
    assert_eq!(records_after(&out, "Getting"), 2000, "{out}");

    // A batch size that does not divide --iter: the last batch runs past
    // it, as Tkrzw's (72 batches of 7 per thread); removing takes them all.
    let out = ok(
        d,
        a,
        &seq("--set_only --remove_only --multi 7 --threads 4 --iter 500"),
    );
    assert_eq!(records_after(&out, "Setting"), 4 * 72 * 7, "{out}");
    assert_eq!(records_after(&out, "Removing"), 0, "{out}");

    // Getting what is not there is a failure, as in Tkrzw (sequential keys).
    let err = fails(d, a, &seq("--get_only --iter 10"));
    assert!(
        err.contains("Get failed") && err.contains("NOT_FOUND"),
        "{err}"
    );

    // No --*_only: all five phases; the other flags are accepted.
    let out = ok(
        d,
        a,
        &seq("--iter 300 --threads 2 --size 16 --separate --random_key --random_value --random_seed -1 --stream --ignore_result"),
    );
    for label in ["Echoing", "Setting", "Getting", "Iterating", "Removing"] {
        assert!(out.contains(&format!("{label} done:")), "{label}: {out}");
    }
    // --ignore_result sends sets as notifications: all were applied before
    // the phase's closing round trip (the count is read after it).
    assert!(records_after(&out, "Setting") > 0, "{out}");

    assert!(fails(d, a, &seq("--iter 0")).contains("--iter"));
}

/// `--index N` addresses the server's N-th database (`memstored -s A B`):
/// the Tkrzw tools' flag, sent as each call's `DB` option.
#[test]
fn index_selects_the_database() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let srv = Server::start(d, "first.tkh", &["second.kct"]);
    let a = &srv.address();
    ok(d, a, &["remote", "set", "k", "one"]);
    ok(d, a, &["remote", "--index", "1", "set", "k", "two"]);
    assert_eq!(ok(d, a, &["remote", "get", "k"]), "one\n");
    assert_eq!(ok(d, a, &["remote", "get", "k", "--index", "1"]), "two\n");
    ok(
        d,
        a,
        &[
            "remote", "--index", "1", "set", "--multi", "a", "1", "b", "2",
        ],
    );
    assert_eq!(
        ok(
            d,
            a,
            &["remote", "--index", "1", "get", "--multi", "a", "b", "k"]
        ),
        "a\t1\nb\t2\nk\ttwo\n"
    );
    let out = ok(
        d,
        a,
        &[
            "remote",
            "--index",
            "1",
            "perf",
            "sequence",
            "--set_only",
            "--iter",
            "50",
            "--threads",
            "2",
            "--multi",
            "10",
        ],
    );
    // Cleared first (the three records set above are gone).
    assert_eq!(records_after(&out, "Setting"), 100, "{out}");
    assert_eq!(ok(d, a, &["remote", "inspect", "count"]), "1\n");
    assert!(fails(d, a, &["remote", "--index", "2", "get", "k"]).contains("no such database"));
}

/// The listing of seed 002, byte for byte: after `tkrzw_dbm_remote_perf
/// sequence --set_only --multi 100 --threads 4 --iter 25000000` into
/// `casket.tkt#num_shards=10,num_buckets=1M`, the real
/// `tkrzw_dbm_remote_util list --move jumplowerinc --jump_key 00000100
/// --items 20` prints these lines. Keys 100..119 are written by operations
/// 25..29 of the four threads, so 30 operations per thread (400 records:
/// the one batch of 100 runs past --iter, as Tkrzw's) write the same
/// values. The flags come in another order than the article's and after the
/// server's address: they go anywhere.
#[test]
fn seed_002_listing_byte_for_byte() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let srv = Server::start(d, "casket.tkt#num_shards=10,num_buckets=1M", &[]);
    let a = &srv.address();
    ok(d, a, &["remote", "set", "stale", "gone after the clear"]);
    let out = ok(
        d,
        a,
        &seq("--threads 4 --multi 100 --iter 30 --set_only --address")
            .into_iter()
            .chain([a.as_str()])
            .collect::<Vec<_>>(),
    );
    assert_eq!(records_after(&out, "Setting"), 400, "{out}");
    let list = "remote list --move jumplowerinc --jump_key 00000100 --items 20";
    let listed = ok(d, a, &list.split(' ').collect::<Vec<_>>());
    let want = "\
00000100\tcbedgfah\n00000101\tdcfehgbi\n00000102\tedgfahcj\n00000103\tfehgbidk\n\
00000104\tgbadcfeh\n00000105\thcbedgfi\n00000106\tadcfehgj\n00000107\tbedgfihk\n\
00000108\tedgfahcj\n00000109\tfehgbidk\n00000110\tgfahcjel\n00000111\thgbidkfm\n\
00000112\tehgjalcn\n00000113\tfihkbmdo\n00000114\tgjalcnep\n00000115\thkbmdofq\n\
00000116\tgnapcret\n00000117\thobqdsfu\n00000118\tapcretgv\n00000119\tbqdsfuhw\n";
    assert_eq!(listed, want);
    // The article's get --multi, sorted by key whatever the order asked.
    assert_eq!(
        ok(
            d,
            a,
            &["remote", "get", "00000119", "--multi", "00000100", "stale", "00000119"]
        ),
        "00000100\tcbedgfah\n00000119\tbqdsfuhw\n"
    );
}
