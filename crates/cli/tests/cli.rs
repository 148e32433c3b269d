//! Drives the real `memstore` binary in a temporary directory.

use memstored_engine::Db;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn memstore(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memstore"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run memstore")
}

/// Runs and demands success; returns stdout.
fn ok(dir: &Path, args: &[&str]) -> String {
    let out = memstore(dir, args);
    assert!(
        out.status.success(),
        "memstore {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// Runs and demands failure; returns stderr.
fn fails(dir: &Path, args: &[&str]) -> String {
    let out = memstore(dir, args);
    assert!(!out.status.success(), "memstore {args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn set_get_remove_list() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    for db in ["c.tkt", "c.tkh#num_shards=3"] {
        ok(d, &["set", db, "b", "2"]);
        ok(d, &["set", db, "a", "1"]);
        ok(d, &["set", db, "c", "x\ty"]);
        assert_eq!(ok(d, &["get", db, "a"]), "1\n");
        let e = fails(d, &["set", db, "a", "9", "--no_overwrite"]);
        assert!(e.contains("duplication"), "{e}");
        ok(d, &["set", db, "a", "z", "--append", ","]);
        assert_eq!(ok(d, &["get", db, "a"]), "1,z\n");
        assert_eq!(ok(d, &["set", db, "n", "5", "--incr", "10"]), "15\n");
        assert_eq!(ok(d, &["set", db, "n", "-1", "--incr", "10"]), "14\n");
        ok(d, &["remove", db, "n"]);
        let e = fails(d, &["remove", db, "n"]);
        assert!(e.contains("not found"), "{e}");
        let e = fails(d, &["get", db, "n"]);
        assert!(e.contains("not found"), "{e}");
        let mut lines: Vec<String> = ok(d, &["list", db]).lines().map(String::from).collect();
        lines.sort();
        assert_eq!(lines, ["a\t1,z", "b\t2", "c\tx\\ty"]);
        let info = ok(d, &["inspect", db]);
        assert!(info.contains("num_records=3"), "{info}");
    }
    // Ordered moves.
    let db = "c.tkt";
    assert_eq!(
        ok(d, &["list", db, "--move", "jump", "--jump_key", "b"]),
        "b\t2\nc\tx\\ty\n"
    );
    assert_eq!(
        ok(d, &["list", db, "--move", "jumplower", "--jump_key", "b"]),
        "a\t1,z\nb\t2\nc\tx\\ty\n"
    );
    assert_eq!(
        ok(
            d,
            &[
                "list",
                db,
                "--move",
                "jumpupper",
                "--jump_key",
                "b",
                "--items",
                "5"
            ]
        ),
        "c\tx\\ty\nb\t2\na\t1,z\n"
    );
    assert_eq!(
        ok(
            d,
            &[
                "list",
                db,
                "--move",
                "jumpupperinc",
                "--jump_key",
                "b",
                "--keys"
            ]
        ),
        "b\na\n"
    );
    assert_eq!(ok(d, &["search", db, "b", "--mode", "begin"]), "b\t2\n");
    assert_eq!(
        ok(d, &["search", db, "b", "--mode", "upper", "--keys"]),
        "c\n"
    );
    assert!(fails(d, &["search", db, "b", "--mode", "nope"]).contains("search mode"));
    // Bad names explain themselves.
    assert!(fails(d, &["get", "x.unknown", "k"]).contains("cannot open database"));
    assert!(fails(d, &["get", "c.tkt#colour=red", "k"]).contains("unknown database parameter"));
}

#[test]
fn export_import_round_trips_binary_data() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let src = memstored_engine::Db::open(&format!("{}/src.tkh", d.display()), true).unwrap();
    let mut records: Vec<(Vec<u8>, Vec<u8>)> = vec![
        (b"tab\tkey".to_vec(), b"line\nfeed".to_vec()),
        (b"nul\0key".to_vec(), b"\xff\xfe\x00\x01".to_vec()),
        (b"back\\slash".to_vec(), b"\\x41 is not A".to_vec()),
        (b"".to_vec(), b"empty key".to_vec()),
        (b"empty value".to_vec(), b"".to_vec()),
        ("日本語".as_bytes().to_vec(), b"\r\n\t".to_vec()),
        ((0..=255u8).collect(), (0..=255u8).rev().collect()),
    ];
    for (k, v) in &records {
        src.set(k, v, true).unwrap();
    }
    src.close().unwrap();
    drop(src);
    ok(d, &["export", "src.tkh", "dump.tsv"]);
    let text = std::fs::read(d.join("dump.tsv")).unwrap();
    assert_eq!(text.iter().filter(|&&b| b == b'\n').count(), records.len());
    ok(d, &["import", "dst.tkt", "dump.tsv"]);
    let dst = memstored_engine::Db::open(&format!("{}/dst.tkt", d.display()), false).unwrap();
    assert_eq!(dst.count(), records.len() as u64);
    for (k, v) in &records {
        assert_eq!(&dst.get(k).unwrap()[..], &v[..], "key {k:?}");
    }
    // And a second export of the copy is byte-identical once sorted.
    drop(dst);
    ok(d, &["export", "dst.tkt", "dump2.tsv"]);
    let sorted = |p: &str| {
        let mut l: Vec<Vec<u8>> = std::fs::read(d.join(p))
            .unwrap()
            .split(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        l.sort();
        l
    };
    assert_eq!(sorted("dump.tsv"), sorted("dump2.tsv"));
    records.clear();
}

#[test]
fn import_reports_bad_lines_and_keeps_the_rest() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(
        d.join("in.tsv"),
        b"k1\tv1\nno tab here\nk2\tv\\x322\nk3\tbad\\qescape\n\nk4\ta\tb\nk5\tv5\r\nk6\tlast-no-newline",
    )
    .unwrap();
    let out = memstore(d, &["import", "db.tkh", "in.tsv"]);
    assert!(!out.status.success(), "bad lines must make import fail");
    let err = String::from_utf8_lossy(&out.stderr);
    for n in [2, 4, 6] {
        assert!(
            err.contains(&format!("in.tsv:{n}:")),
            "line {n} not reported: {err}"
        );
    }
    for n in [1, 3, 7, 8] {
        assert!(
            !err.contains(&format!("in.tsv:{n}:")),
            "line {n} wrongly reported: {err}"
        );
    }
    let listed = ok(d, &["list", "db.tkh"]);
    let mut lines: Vec<&str> = listed.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        ["k1\tv1", "k2\tv22", "k5\tv5", "k6\tlast-no-newline"]
    );
}

#[test]
fn perf_sequence_prints_three_phases() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    for args in [
        vec!["--dbm", "hash", "--iter", "2000", "--threads", "2"],
        vec!["--dbm", "baby", "--iter", "2000", "--random_key"],
        vec![
            "--dbm",
            "tree",
            "--path",
            "x.tkt",
            "--params",
            "num_shards=3",
            "--iter",
            "500",
            "--size",
            "100",
        ],
    ] {
        let mut full = vec!["perf", "sequence"];
        full.extend(args.iter().copied());
        let out = ok(d, &full);
        for phase in ["Setting done:", "Getting done:", "Removing done:"] {
            let line = out
                .lines()
                .find(|l| l.starts_with(phase))
                .unwrap_or_else(|| panic!("no {phase} line in {out}"));
            assert!(line.contains(" elapsed_time="), "{line}");
            assert!(line.contains(" qps="), "{line}");
            assert!(line.contains(" mem="), "{line}");
        }
        let set_line = out
            .lines()
            .find(|l| l.starts_with("Setting done:"))
            .unwrap();
        let iters: u64 = args[args.iter().position(|a| *a == "--iter").unwrap() + 1]
            .parse()
            .unwrap();
        let threads: u64 = if args.contains(&"--threads") { 2 } else { 1 };
        if !args.contains(&"--random_key") {
            assert!(
                set_line.contains(&format!("num_records={} ", iters * threads)),
                "{set_line}"
            );
        }
        assert!(
            out.contains("Removing done:") && out.contains("num_records=0 "),
            "{out}"
        );
    }
    // Phases one at a time, over the same file.
    let out = ok(
        d,
        &[
            "perf",
            "sequence",
            "--dbm",
            "hash",
            "--path",
            "p.tkh",
            "--iter",
            "1000",
            "--set_only",
        ],
    );
    assert!(out.contains("Setting done:") && !out.contains("Getting done:"));
    let out = ok(
        d,
        &[
            "perf",
            "sequence",
            "--dbm",
            "hash",
            "--path",
            "p.tkh",
            "--iter",
            "1000",
            "--get_only",
        ],
    );
    assert!(
        out.contains("Getting done:") && out.contains("num_records=1000 "),
        "{out}"
    );
    let out = ok(
        d,
        &[
            "perf",
            "sequence",
            "--dbm",
            "hash",
            "--path",
            "p.tkh",
            "--iter",
            "1000",
            "--remove_only",
        ],
    );
    assert!(
        out.contains("Removing done:") && out.contains("num_records=0 "),
        "{out}"
    );
    assert!(fails(d, &["perf", "sequence", "--dbm", "nosuch"]).contains("unknown --dbm"));
    assert!(fails(d, &["perf", "sequence", "--iter", "0"]).contains("--iter"));
}

/// The article's sharding sequence on a 10-shard tree: load records with the
/// perf tool, then list 20 keys from 00000100 through the heap merge.
/// 1M records, as in the article (a few seconds in the dev profile).
#[test]
fn sharded_tree_lists_in_global_order() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    ok(
        d,
        &[
            "perf",
            "sequence",
            "--set_only",
            "--dbm",
            "tree",
            "--path",
            "casket.tkt",
            "--params",
            "num_shards=10",
            "--iter",
            "1000000",
        ],
    );
    let shards = std::fs::read_dir(d)
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name().into_string().unwrap();
            n.starts_with("casket.tkt-") && n.ends_with("-of-00010")
        })
        .count();
    assert_eq!(shards, 10);
    let out = ok(
        d,
        &[
            "list",
            "casket.tkt#num_shards=10,num_buckets=1M",
            "--move",
            "jumplowerinc",
            "--jump_key",
            "00000100",
            "--items",
            "20",
        ],
    );
    let keys: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    let want: Vec<String> = (100..120).map(|i| format!("{i:08}")).collect();
    assert_eq!(keys, want);
    assert!(out
        .lines()
        .all(|l| l.split('\t').nth(1).is_some_and(|v| v.len() == 8)));
}

fn write_tsv(path: &Path, range: std::ops::Range<u32>, tag: &str) {
    let mut s = String::new();
    for i in range {
        s.push_str(&format!("{i:08}\t{tag}-{i}\n"));
    }
    std::fs::write(path, s).unwrap();
}

fn sorted_export(d: &Path, name: &str, file: &str) -> Vec<String> {
    ok(d, &["export", name, file]);
    let mut lines: Vec<String> = std::fs::read_to_string(d.join(file))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    lines
}

fn inspect_value(d: &Path, name: &str, field: &str) -> String {
    let out = ok(d, &["inspect", name]);
    out.lines()
        .find_map(|l| l.trim().strip_prefix(field))
        .unwrap_or_else(|| panic!("no {field} in {out}"))
        .trim()
        .to_string()
}

#[test]
fn rebuild_compacts_and_keeps_every_record() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let db = "r.tkh#num_shards=2";
    for tag in ["a", "b", "c"] {
        write_tsv(&d.join("in.tsv"), 0..2000, tag);
        ok(d, &["import", db, "in.tsv"]);
    }
    let before = sorted_export(d, db, "before.tsv");
    assert_eq!(before.len(), 2000);
    assert_eq!(inspect_value(d, db, "Should be Rebuilt:"), "true");
    let size_before: u64 = inspect_value(d, db, "file_size=").parse().unwrap();
    let out = ok(d, &["rebuild", db]);
    assert!(out.contains("ok (elapsed="), "{out}");
    assert_eq!(sorted_export(d, db, "after.tsv"), before);
    assert_eq!(inspect_value(d, db, "Should be Rebuilt:"), "false");
    let size_after: u64 = inspect_value(d, db, "file_size=").parse().unwrap();
    assert!(
        size_after * 2 < size_before,
        "{size_before} -> {size_after}"
    );
}

#[test]
fn backup_opens_as_a_database_with_the_same_records() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_tsv(&d.join("in.tsv"), 0..3000, "v");
    for (db, suffix) in [("b.tkt", "mine"), ("s.tkh#num_shards=3", "")] {
        ok(d, &["import", db, "in.tsv"]);
        ok(d, &["remove", db, "00000007"]);
        let mut args = vec!["backup", db];
        if !suffix.is_empty() {
            args.push(suffix);
        }
        let name = ok(d, &args).trim().to_string();
        let path = db.split('#').next().unwrap();
        if suffix.is_empty() {
            let stamp = name
                .strip_prefix(&format!("{path}.backup."))
                .and_then(|s| s.split('#').next())
                .unwrap_or_else(|| panic!("backup name {name}"));
            assert!(
                stamp.len() == 14 && stamp.bytes().all(|b| b.is_ascii_digit()),
                "{name}"
            );
            assert!(name.ends_with("#num_shards=3"), "{name}");
        } else {
            assert_eq!(name, format!("{path}.backup.{suffix}"));
        }
        // Writes after the backup do not reach it.
        ok(d, &["set", db, "later", "x"]);
        let original = sorted_export(d, db, "orig.tsv");
        let copy = sorted_export(d, &name, "copy.tsv");
        assert_eq!(copy.len(), 2999);
        assert_eq!(original.len(), 3000);
        assert!(original
            .iter()
            .filter(|l| !l.starts_with("later\t"))
            .eq(copy.iter()));
    }
    assert!(fails(d, &["backup", "*"]).contains("backing up"));
}

#[test]
fn restore_salvages_records_on_both_sides_of_damage() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_tsv(&d.join("in.tsv"), 0..2000, "value");
    ok(d, &["import", "broken.tkh", "in.tsv"]);
    let file = d.join("broken.tkh");
    let mut bytes = std::fs::read(&file).unwrap();
    let mid = bytes.len() / 2;
    for (i, b) in bytes[mid..mid + 300].iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(37) ^ 0xa5;
    }
    std::fs::write(&file, &bytes).unwrap();
    // The hint no longer matches; drop it so nothing trusts it.
    let _ = std::fs::remove_file(d.join("broken.tkh.hint"));
    let out = ok(d, &["restore", "broken.tkh", "fixed.tkt"]);
    let skipped: u64 = out
        .split("skipped_bytes=")
        .nth(1)
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(skipped >= 300, "{out}");
    let restored = sorted_export(d, "fixed.tkt", "fixed.tsv");
    assert!(
        restored.len() >= 1980 && restored.len() < 2000,
        "{}",
        restored.len()
    );
    assert_eq!(restored.first().unwrap(), "00000000\tvalue-0");
    assert_eq!(restored.last().unwrap(), "00001999\tvalue-1999");
    assert!(restored.iter().all(|l| {
        let (k, v) = l.split_once('\t').unwrap();
        v == format!("value-{}", k.parse::<u32>().unwrap())
    }));
    let e = fails(d, &["restore", "missing.tkh", "x.tkh"]);
    assert!(e.contains("restoring"), "{e}");
}

/// The files in `d`, sorted by name.
fn names_in(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Issue 41: a mistyped name used to become an empty store, and the tool
/// reported success on it ("backup of 0 records done").
#[test]
fn tools_refuse_a_store_that_does_not_exist_and_make_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    for args in [
        &["rebuild", "typo.tkh"][..],
        &["backup", "typo.tkh"],
        &["export", "typo.tkh", "out.tsv"],
        &["inspect", "typo.tkh"],
        &["restore", "typo.tkh", "new.tkh"],
        &["remove", "typo.tkh", "k"],
        &["get", "typo.tkt", "k"],
        &["list", "typo.tkmt"],
    ] {
        let e = fails(d, args);
        assert!(
            e.contains("typo.tk") && e.contains("does not exist"),
            "{args:?}: {e}"
        );
        assert_eq!(names_in(d), Vec::<String>::new(), "{args:?} left files");
    }
}

/// clap's suggestions (its default `suggestions` feature) answer a
/// mistyped subcommand or flag.
#[test]
fn a_mistyped_subcommand_or_flag_gets_the_closest_one() {
    let t = tempfile::tempdir().unwrap();
    let e = fails(t.path(), &["rebuil", "x.tkh"]);
    assert!(e.contains("similar subcommand exists: 'rebuild'"), "{e}");
    let e = fails(t.path(), &["list", "--item", "3", "x.tkh"]);
    assert!(e.contains("similar argument exists: '--items'"), "{e}");
}

/// The shard count is part of the name, not of the files: a name without it
/// beside shard files is told the name that opens them.
#[test]
fn a_missing_store_beside_shard_files_names_them() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    ok(d, &["set", "big.tkt#num_shards=10", "k", "v"]);
    let before = names_in(d);
    for args in [
        &["list", "big.tkt"][..],
        &["get", "big.tkt", "k"],
        &["rebuild", "big.tkt"],
        &["backup", "big.tkt"],
        &["inspect", "big.tkt#num_shards=4"],
    ] {
        let e = fails(d, args);
        assert!(
            e.contains("big.tkt-00000-of-00010 .. big.tkt-00009-of-00010")
                && e.contains("open it as big.tkt#num_shards=10"),
            "{args:?}: {e}"
        );
        assert_eq!(names_in(d), before, "{args:?} changed the directory");
    }
}

/// A restore from a file that is not a store fails, and leaves no
/// `damaged.tkh.lock` beside it (its shared lock made one and kept it).
#[test]
fn a_failed_restore_leaves_no_lock_file() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(
        d.join("damaged.tkh"),
        b"not a store at all, just some bytes",
    )
    .unwrap();
    let e = fails(d, &["restore", "damaged.tkh", "new.tkh"]);
    assert!(e.contains("restoring"), "{e}");
    assert_eq!(names_in(d), ["damaged.tkh"]);
}

// Writes that report failure have changed nothing, and a store another
// process has open is refused with the lock file named (issue 12).

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Gives the directory back its write permission when the test ends, so the
/// temporary directory can be removed even after a failed assertion.
struct Writable(PathBuf);

impl Drop for Writable {
    fn drop(&mut self) {
        chmod(&self.0, 0o755);
    }
}

/// `memstore ARGS` run in `dir` by a user who cannot write `dir`: this
/// user when not root (the directory is made read-only), else `nobody`
/// (root ignores permissions), with a copy of the binary it can execute.
fn memstore_without_dir_write(tmp: &Path, dir: &Path, args: &[&str]) -> Output {
    let root = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(1)
        == 0;
    let mut cmd = if root {
        let exe = tmp.join("memstore");
        if !exe.exists() {
            std::fs::copy(env!("CARGO_BIN_EXE_memstore"), &exe).unwrap();
            chmod(&exe, 0o755);
        }
        let mut c = Command::new(exe);
        c.uid(65534).gid(65534);
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_memstore"))
    };
    cmd.current_dir(dir).args(args);
    // The copy's write descriptor may live on for a moment in a child that
    // another test's spawn forked while it was open (until that child's
    // exec closes it); exec then fails with ETXTBSY. Only that is retried.
    let mut busy = 0;
    loop {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && busy < 200 => {
                busy += 1;
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            r => return r.expect("run memstore"),
        }
    }
}

#[test]
fn a_write_in_a_read_only_directory_fails_only_when_it_changed_nothing() {
    let t = tempfile::tempdir().unwrap();
    let tmp = t.path();
    chmod(tmp, 0o755);
    let dir = tmp.join("ro");
    std::fs::create_dir(&dir).unwrap();
    for db in ["a.tkh", "b.tkmt"] {
        let out = memstore(&dir, &["set", db, "k1", "v1"]);
        assert!(out.status.success(), "{db}: {out:?}");
    }
    for f in std::fs::read_dir(&dir).unwrap() {
        chmod(&f.unwrap().path(), 0o666);
    }
    chmod(&dir, 0o555);
    let _restore = Writable(dir.clone());
    let before = std::fs::read(dir.join("b.tkmt")).unwrap();

    // A log: the record is appended and fsynced; only the hint cannot be
    // written, which must not turn a stored write into a reported failure
    // (it did: exit 1 with the record stored).
    let out = memstore_without_dir_write(tmp, &dir, &["set", "a.tkh", "k2", "v2"]);
    assert!(out.status.success(), "a.tkh: {out:?}");
    assert_eq!(memstore(&dir, &["get", "a.tkh", "k2"]).stdout, b"v2\n");

    // A snapshot store cannot write its new snapshot: it fails, and the
    // file is as it was.
    let out = memstore_without_dir_write(tmp, &dir, &["set", "b.tkmt", "k2", "v2"]);
    assert!(!out.status.success(), "b.tkmt: {out:?}");
    assert_eq!(std::fs::read(dir.join("b.tkmt")).unwrap(), before);
    assert!(!memstore(&dir, &["get", "b.tkmt", "k2"]).status.success());

    // A new store cannot even be created (nor locked): nothing is left.
    let out = memstore_without_dir_write(tmp, &dir, &["set", "c.tkh", "k", "v"]);
    assert!(!out.status.success(), "c.tkh: {out:?}");
    assert!(!dir.join("c.tkh").exists());
}

#[test]
fn set_and_get_are_refused_while_another_process_writes_the_store() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let name = "held.tkh#num_shards=3";
    let db = Db::open(&format!("{}/{name}", d.display()), true).unwrap();
    db.set(b"k", b"from the holder", true).unwrap();
    for args in [vec!["set", name, "k", "other"], vec!["get", name, "k"]] {
        let out = memstore(d, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded beside a writer");
        assert!(err.contains("held.tkh.lock"), "{args:?}: {err}");
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{args:?}: {err}"
        );
    }
    drop(db);
    let out = memstore(d, &["get", name, "k"]);
    assert_eq!(out.stdout, b"from the holder\n", "{out:?}");
}
