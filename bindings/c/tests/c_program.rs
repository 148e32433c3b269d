//! Builds `tests/c/test_memstored.c` (and `test_tkrzw_calls.c`) with the machine's `cc` against the
//! static library cargo built for this test run, and runs it: the C API as a
//! C program sees it (header, linking, thread-local status, threads).

use std::path::PathBuf;
use std::process::Command;

/// `target/<profile>`, where cargo leaves `libmemstored.a`: this test binary
/// lives in its `deps/` folder.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .and_then(|deps| deps.parent())
        .unwrap()
        .to_path_buf()
}

#[test]
fn c_program_passes_its_checks() {
    run_c_program("test_memstored");
}

/// The Tkrzw calls beyond the basic records (tests/c/test_tkrzw_calls.c).
#[test]
fn tkrzw_calls_program_passes_its_checks() {
    run_c_program("test_tkrzw_calls");
}

/// Builds `tests/c/NAME.c` and runs it on an empty directory.
fn run_c_program(name: &str) {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let lib = profile_dir().join("libmemstored.a");
    assert!(
        lib.exists(),
        "{} missing: run `cargo build -p memstored-c` first (test.sh does)",
        lib.display()
    );
    let work = tempfile::tempdir().unwrap();
    let exe = work.path().join(name);
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join(format!("tests/c/{name}.c")))
        .arg(&lib)
        .args(["-lpthread", "-lm", "-ldl", "-lrt", "-lutil", "-o"])
        .arg(&exe)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc failed: {status}");
    let data = work.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = Command::new(&exe).arg(&data).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "C checks failed:\n{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "all checks passed\n");
}
