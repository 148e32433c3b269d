//! `memstore` writes that report failure have changed nothing, and a store
//! another process has open is refused with the lock file named.

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
    cmd.current_dir(dir)
        .args(args)
        .output()
        .expect("run memstore")
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
