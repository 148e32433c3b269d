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

    let out = ok(d, a, &seq("--get_only --multi 100 --threads 4 --iter 500"));
    assert_eq!(records_after(&out, "Getting"), 2000, "{out}");

    // A batch size that does not divide --iter; removing leaves nothing.
    let out = ok(d, a, &seq("--remove_only --multi 7 --threads 4 --iter 500"));
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
    assert_eq!(records_after(&out, "Setting"), 103, "{out}");
    assert_eq!(ok(d, a, &["remote", "inspect", "count"]), "1\n");
    assert!(fails(d, a, &["remote", "--index", "2", "get", "k"]).contains("no such database"));
}
