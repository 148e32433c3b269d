//! Starts the real `memstored` binary for the CLI's network tests.
//!
//! Cargo builds a package's own binaries for its tests, not another
//! package's, so the server is found next to `memstore` (`<target>/debug/`)
//! and built there first with `cargo build -p memstored-server` (once per
//! test process; a no-op when it is up to date, and it keeps a stale server
//! from being tested after a change to crates/server).
#![allow(dead_code)]

#[path = "../../../server/tests/common/spawn.rs"]
mod spawn;
pub use spawn::{as_caller, Announce, Spawned};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// `memstored`, built if needed.
pub fn memstored_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_memstore"));
        let dir = exe
            .parent()
            .expect("memstore has a directory")
            .to_path_buf();
        let bin = dir.join(format!("memstored{}", std::env::consts::EXE_SUFFIX));
        // <target>/debug or <target>/release (or <target>/<triple>/<profile>).
        let profile = dir.file_name().and_then(|n| n.to_str()).unwrap_or("debug");
        let mut target = dir.parent().expect("a target directory").to_path_buf();
        if target
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains('-'))
            && !target.join("CACHEDIR.TAG").exists()
        {
            target = target.parent().unwrap_or(&target).to_path_buf(); // a target triple
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let mut cmd = Command::new(&cargo);
        cmd.args([
            "build",
            "--quiet",
            "-p",
            "memstored-server",
            "--bin",
            "memstored",
        ])
        .arg("--target-dir")
        .arg(&target)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
        match profile {
            "debug" => {}
            "release" => {
                cmd.arg("--release");
            }
            p => {
                cmd.args(["--profile", p]);
            }
        }
        let status = cmd.status();
        match status {
            Ok(s) if s.success() => {}
            other => {
                assert!(
                    bin.exists(),
                    "could not build memstored ({cargo} build -p memstored-server: {other:?}) \
                     and {} does not exist; build it with `cargo build -p memstored-server`",
                    bin.display()
                );
                eprintln!(
                    "warning: `cargo build -p memstored-server` failed ({other:?}); using {}",
                    bin.display()
                );
            }
        }
        assert!(bin.exists(), "{} missing after the build", bin.display());
        bin
    })
    .clone()
}

/// A running server (memstored or memcached); killed on drop.
pub type Server = Spawned;

impl Spawned {
    /// `memstored [-u root] -s STORE -l 127.0.0.1:0 -R 2 EXTRA...` in `dir`.
    pub fn start(dir: &Path, store: &str, extra: &[&str]) -> Server {
        let mut cmd = Command::new(memstored_bin());
        as_caller(&mut cmd);
        cmd.args(["-s", store, "-l", "127.0.0.1:0", "-R", "2"])
            .args(extra)
            .current_dir(dir);
        Spawned::launch(&mut cmd, "memstored", Announce::Stdout)
    }

    /// memcached, if installed (None otherwise), on a port it picks (`-p -1`)
    /// and reports in its port file.
    pub fn memcached(dir: &Path) -> Option<Server> {
        let found = Command::new("memcached")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return None;
        }
        let mut cmd = Command::new("memcached");
        // memcached writes its port file after dropping privileges to `-u`,
        // and the file is in our private temp dir: stay the same user (as
        // root, `-u root`; as anyone else `-u` is ignored).
        cmd.args(["-u", "root", "-l", "127.0.0.1", "-p", "-1", "-U", "0"])
            .args(["-m", "64", "-t", "2"])
            .current_dir(dir);
        Some(Spawned::launch(
            &mut cmd,
            "memcached",
            Announce::MemcachedPortFile,
        ))
    }
}

/// Runs `memstore ARGS` in `dir` with `MEMSTORE_ADDRESS=address`.
pub fn memstore(dir: &Path, address: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memstore"))
        .current_dir(dir)
        .env("MEMSTORE_ADDRESS", address)
        .args(args)
        .output()
        .expect("run memstore")
}

/// Runs and demands success; returns stdout.
pub fn ok(dir: &Path, address: &str, args: &[&str]) -> String {
    let out = memstore(dir, address, args);
    assert!(
        out.status.success(),
        "memstore {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// Runs and demands failure; returns stderr.
pub fn fails(dir: &Path, address: &str, args: &[&str]) -> String {
    let out = memstore(dir, address, args);
    assert!(
        !out.status.success(),
        "memstore {args:?} should fail: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}
