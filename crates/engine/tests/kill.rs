//! A writer process killed with SIGKILL in the middle of writing leaves a
//! database that opens with every record synced before the kill, and no
//! record whose value is corrupted.

use memstored_engine::Db;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn key(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    format!("value-{i}-")
        .repeat(1 + (i % 7) as usize)
        .into_bytes()
}

/// The child: writes forever (bounded by time), syncing every 250 records and
/// reporting the synced count on stdout. Run only by the test below.
#[test]
#[ignore = "child process of killed_writer_loses_nothing_synced"]
fn child_writer() {
    let Ok(name) = std::env::var("MEMSTORED_KILL_DB") else {
        return;
    };
    let start: u64 = std::env::var("MEMSTORED_KILL_START")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let db = Db::open(&name, true).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut out = std::io::stdout();
    let mut i = start;
    while Instant::now() < deadline {
        db.set(&key(i), &value(i), true).unwrap();
        i += 1;
        if i.is_multiple_of(250) {
            db.synchronize(true).unwrap();
            writeln!(out, "synced {i}").unwrap();
            out.flush().unwrap();
        }
    }
}

/// Starts the child, lets it sync past `at_least` records, kills it, and
/// returns the last count it reported as synced.
fn run_and_kill(name: &str, start: u64, at_least: u64) -> u64 {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_writer",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("MEMSTORED_KILL_DB", name)
        .env("MEMSTORED_KILL_START", start.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut synced = 0;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while let Some(Ok(line)) = lines.next() {
        if let Some(n) = line.strip_prefix("synced ") {
            synced = n.trim().parse().unwrap();
            if synced >= at_least {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no close, no hint.
    child.wait().unwrap();
    assert!(synced >= at_least, "the child stopped early at {synced}");
    synced
}

fn check(name: &str, synced: u64) -> u64 {
    let db = Db::open(name, true).unwrap();
    for i in 0..synced {
        let v = db
            .get(&key(i))
            .unwrap_or_else(|e| panic!("{name}: synced key {i} lost: {e}"));
        assert_eq!(&v[..], &value(i)[..], "{name}: key {i}");
    }
    // Records written after the last sync may or may not be there (each
    // shard loses its own unsynced tail), but any that is there is whole.
    let mut c = db.cursor();
    c.first().unwrap();
    let mut present = 0;
    while let Some((k, v)) = c.step().unwrap() {
        let i: u64 = std::str::from_utf8(&k[3..]).unwrap().parse().unwrap();
        assert_eq!(&v[..], &value(i)[..], "{name}: key {i} corrupted");
        present += 1;
    }
    assert!(present >= synced);
    synced
}

#[test]
fn killed_writer_loses_nothing_synced() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["k.tkh", "k.tkt#num_shards=4", "k.tkh#compression=zstd"] {
        let name = format!("{}/{file}", dir.path().display());
        let mut next = 0;
        for round in 0..3u64 {
            let synced = run_and_kill(&name, next, next + 1000 + round * 777);
            next = check(&name, synced);
        }
    }
}
