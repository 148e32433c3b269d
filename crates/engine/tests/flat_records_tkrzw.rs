//! The flat records of `Db::export_to_flat_records` and Tkrzw's are one
//! format: a file `tkrzw_dbm_util export` writes imports here, and a file
//! exported here imports into Tkrzw with the same records (issue 44).
//! Needs the Debian package tkrzw-utils (the CI installs it).

use memstored_engine::{Db, File, FileOptions};
use std::path::Path;
use std::process::Command;

/// Runs `tkrzw_dbm_util ARGS` in `dir` and demands success.
fn tkrzw(dir: &Path, args: &[&str]) -> String {
    let out = match Command::new("tkrzw_dbm_util")
        .current_dir(dir)
        .args(args)
        .output()
    {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "tkrzw_dbm_util is not installed: this test needs the Debian package \
             tkrzw-utils (apt-get install -y tkrzw-utils; .ci/run installs it)"
        ),
        Err(e) => panic!("running tkrzw_dbm_util: {e}"),
    };
    assert!(
        out.status.success(),
        "tkrzw_dbm_util {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn open_file(path: &Path, writable: bool) -> File {
    let f = File::new();
    f.open(path.to_str().unwrap(), writable, FileOptions::default())
        .unwrap();
    f
}

/// Records with the bytes a format can get wrong: empty values, lengths
/// that take two varint bytes, a long value.
fn records() -> Vec<(String, String)> {
    let mut r: Vec<(String, String)> = (0..300)
        .map(|i| (format!("key{i:04}"), "v".repeat(i)))
        .collect();
    r.push(("empty".into(), String::new()));
    r.push(("long".into(), "x".repeat(70_000)));
    r
}

#[test]
fn tkrzw_exports_import_here_and_ours_import_there() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    tkrzw(dir, &["create", "--dbm", "tree", "theirs.tkt"]);
    for (k, v) in records().iter().take(5) {
        tkrzw(dir, &["set", "theirs.tkt", k, v]);
    }
    tkrzw(dir, &["export", "theirs.tkt", "theirs.flat"]);
    let db = Db::open("+", true).unwrap();
    db.import_from_flat_records(&open_file(&dir.join("theirs.flat"), false))
        .unwrap();
    assert_eq!(db.count(), 5);
    assert_eq!(&db.get(b"key0003").unwrap()[..], b"vvv");
    assert!(db.get(b"key0000").unwrap().is_empty());

    let ours = Db::open("+", true).unwrap();
    for (k, v) in records() {
        ours.set(k.as_bytes(), v.as_bytes(), true).unwrap();
    }
    ours.export_to_flat_records(&open_file(&dir.join("ours.flat"), true))
        .unwrap();
    tkrzw(dir, &["create", "--dbm", "tree", "back.tkt"]);
    tkrzw(dir, &["import", "back.tkt", "ours.flat"]);
    let count = tkrzw(dir, &["inspect", "back.tkt", "num_records"]);
    assert_eq!(count.trim(), records().len().to_string());
    assert_eq!(
        tkrzw(dir, &["get", "back.tkt", "key0299"]),
        format!("{}\n", "v".repeat(299))
    );
    // Exported the same records in the same order, Tkrzw writes our bytes.
    tkrzw(dir, &["export", "back.tkt", "again.flat"]);
    assert_eq!(
        std::fs::read(dir.join("again.flat")).unwrap(),
        std::fs::read(dir.join("ours.flat")).unwrap()
    );
}
