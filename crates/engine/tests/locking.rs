//! Store locking across processes: while this process has a store open, a
//! child process (this test binary, re-run as `child_opener`) tries to open
//! it. One writer or any number of readers; a refused open names the lock
//! file and the holder, and changes nothing.

use memstored_engine::Db;
use std::path::Path;
use std::process::Command;

/// The child: opens `MEMSTORED_LOCK_DB` (writable when `MEMSTORED_LOCK_RW`
/// is 1), writes a record when writable, and prints `verdict: ok` or
/// `verdict: error: ...` on a line of its own (libtest writes on the same stdout).
#[test]
#[ignore = "child process of the locking tests"]
fn child_opener() {
    let Ok(name) = std::env::var("MEMSTORED_LOCK_DB") else {
        return;
    };
    let writable = std::env::var("MEMSTORED_LOCK_RW").as_deref() == Ok("1");
    let result = Db::open(&name, writable).and_then(|db| {
        if writable {
            db.set(b"child", b"wrote", true)?;
        }
        db.close()
    });
    match result {
        Ok(()) => println!("\nverdict: ok"),
        Err(e) => println!("\nverdict: error: {} {e}", e.status_name()),
    }
}

/// Runs `child_opener` on `name` in another process; returns its verdict
/// (`ok` or `error: STATUS message`).
fn open_in_child(name: &str, writable: bool) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_opener",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("MEMSTORED_LOCK_DB", name)
        .env("MEMSTORED_LOCK_RW", if writable { "1" } else { "0" })
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("verdict: "))
        .unwrap_or_else(|| panic!("child printed no verdict: {stdout}"))
        .to_string()
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_second_writer_in_another_process_is_refused_and_readers_share() {
    for store in ["w.tkh", "w.tkt#num_shards=10", "w.tkmt", "w.mem"] {
        let dir = tempfile::tempdir().unwrap();
        let name = format!("{}/{store}", dir.path().display());
        let base = name.split('#').next().unwrap().to_string();
        let lock_file = format!("{base}.lock");

        // A writer here: another writer, and a reader, are refused.
        let db = Db::open(&name, true).unwrap();
        db.set(b"parent", b"1", true).unwrap();
        db.synchronize(true).unwrap();
        let before = files(dir.path());
        for writable in [true, false] {
            let verdict = open_in_child(&name, writable);
            assert!(
                verdict.starts_with("error: PRECONDITION_ERROR"),
                "{store} writable={writable}: {verdict}"
            );
            assert!(
                verdict.contains(&lock_file),
                "{store}: names the lock file: {verdict}"
            );
            let pid = format!("pid {}", std::process::id());
            assert!(
                verdict.contains(&pid),
                "{store}: names the holder: {verdict}"
            );
        }
        assert_eq!(
            files(dir.path()),
            before,
            "{store}: a refused open changed files"
        );
        drop(db);

        // A reader here: other readers share it, a writer is refused.
        let db = Db::open(&name, false).unwrap();
        assert_eq!(open_in_child(&name, false), "ok", "{store}: two readers");
        let verdict = open_in_child(&name, true);
        assert!(
            verdict.starts_with("error: PRECONDITION_ERROR") && verdict.contains("read-only"),
            "{store}: a writer beside a reader: {verdict}"
        );
        drop(db);

        // Closed here: the child may write.
        assert_eq!(open_in_child(&name, true), "ok", "{store}");
        let db = Db::open(&name, false).unwrap();
        assert_eq!(&db.get(b"child").unwrap()[..], b"wrote", "{store}");
        assert_eq!(&db.get(b"parent").unwrap()[..], b"1", "{store}");
    }
}

#[test]
fn one_process_cannot_open_a_store_twice_for_writing() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("{}/twice.tkh", dir.path().display());
    let db = Db::open(&name, true).unwrap();
    let e = Db::open(&name, true)
        .err()
        .expect("the second open is refused");
    assert_eq!(e.status_name(), "PRECONDITION_ERROR", "{e}");
    drop(db);
    Db::open(&name, true).expect("free again once the first is dropped");
}

#[test]
fn a_refused_open_leaves_no_lock_file_behind() {
    let dir = tempfile::tempdir().unwrap();
    let missing = format!("{}/missing.tkh", dir.path().display());
    assert!(Db::open(&missing, false).err().unwrap().is_not_found());
    let no_dir = format!("{}/no/such/dir.tkh", dir.path().display());
    assert!(Db::open(&no_dir, false).err().unwrap().is_not_found());
    std::fs::write(dir.path().join("foreign.tkh"), b"TkrzwHDB and more bytes").unwrap();
    let foreign = format!("{}/foreign.tkh", dir.path().display());
    assert!(Db::open(&foreign, true).is_err());
    let left: Vec<String> = files(dir.path()).into_iter().map(|(n, _)| n).collect();
    assert_eq!(left, ["foreign.tkh"]);
}

/// A restore takes its source's lock (shared) before reading the headers;
/// a refused source used to leave the lock file that lock made.
#[test]
fn a_failed_restore_leaves_no_lock_file_behind() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("foreign.tkh"), b"not a store, some bytes").unwrap();
    let src = format!("{}/foreign.tkh", dir.path().display());
    let dst = format!("{}/new.tkh", dir.path().display());
    assert!(memstored_engine::restore::restore(&src, &dst).is_err());
    let left: Vec<String> = files(dir.path()).into_iter().map(|(n, _)| n).collect();
    assert_eq!(left, ["foreign.tkh"]);
}

/// `open_existing` refuses a missing store even for writing, making
/// nothing, and names the shard files of another shard count.
#[test]
fn open_existing_makes_nothing_and_names_shard_files() {
    let dir = tempfile::tempdir().unwrap();
    let base = format!("{}/big.tkh", dir.path().display());
    let e = Db::open_existing(&base, true).err().unwrap();
    assert!(e.is_not_found(), "{e}");
    assert!(files(dir.path()).is_empty());
    Db::open(&format!("{base}#num_shards=3"), true)
        .unwrap()
        .close()
        .unwrap();
    let e = Db::open_existing(&base, true).err().unwrap().to_string();
    assert!(
        e.contains("big.tkh-00000-of-00003 .. ")
            && e.contains(&format!("open it as {base}#num_shards=3")),
        "{e}"
    );
    Db::open_existing(&format!("{base}#num_shards=3"), true).unwrap();
}
