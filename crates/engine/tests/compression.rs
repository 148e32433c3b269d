//! Acceptance: "a file of 100k compressible 1 KiB values is at least 3x
//! smaller with zstd than without, and reads back identical".

use memstored_engine::{Compression, Db, Error};
use std::path::Path;
use std::sync::OnceLock;
use tempfile::TempDir;

const PHRASES: &[&str] = &[
    "the quick brown fox jumps over the lazy dog; ",
    "memstored keeps records with flags, expiry and cas; ",
    "lorem ipsum dolor sit amet, consectetur adipiscing elit; ",
    "a log-structured file of crc-checked records; ",
];

/// 2 KiB of text made of the phrases, built once.
fn base_text() -> &'static [u8] {
    static TEXT: OnceLock<Vec<u8>> = OnceLock::new();
    TEXT.get_or_init(|| {
        let mut t = Vec::new();
        let mut p = 0usize;
        while t.len() < 2048 {
            t.extend_from_slice(PHRASES[p % PHRASES.len()].as_bytes());
            t.extend_from_slice(format!("{} ", p % 7).as_bytes());
            p += 1;
        }
        t
    })
}

/// A compressible 1 KiB value: the record's own numbers, then text taken
/// from a position that depends on the record.
fn value(i: usize) -> Vec<u8> {
    let mut v = format!("{{\"id\":{i},\"owner\":\"user{}\",\"text\":\"", i % 977).into_bytes();
    let at = i * 13 % 1000;
    let need = 1024 - v.len();
    v.extend_from_slice(&base_text()[at..at + need]);
    v
}

fn key(i: usize) -> Vec<u8> {
    format!("rec:{i:06}").into_bytes()
}

fn file_size(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().len()
}

fn write(name: &str, n: usize) {
    let db = Db::open(name, true).unwrap();
    for i in 0..n {
        db.set(&key(i), &value(i), true).unwrap();
    }
    db.close().unwrap();
}

fn check_all(name: &str, n: usize) {
    check_every(name, n, 1)
}

/// Checks every `step`-th record (and the count).
fn check_every(name: &str, n: usize, step: usize) {
    let db = Db::open(name, false).unwrap();
    assert_eq!(db.count(), n as u64, "{name}");
    for i in (0..n).step_by(step) {
        let got = db.get(&key(i)).unwrap();
        assert!(got[..] == value(i)[..], "{name}: record {i} differs");
    }
    assert!(matches!(db.get(&key(n)), Err(Error::NotFound(_))));
}

#[test]
fn zstd_file_is_three_times_smaller_and_identical() {
    const N: usize = 100_000;
    let dir = TempDir::new().unwrap();
    let plain = dir.path().join("plain.tkh");
    let z = dir.path().join("z.tkh");
    let plain_name = plain.display().to_string();
    let z_name = format!("{}#compression=zstd", z.display());
    write(&plain_name, N);
    write(&z_name, N);
    let (ps, zs) = (file_size(&plain), file_size(&z));
    assert!(ps >= (N * 1024) as u64, "plain file of {ps} bytes");
    assert!(
        zs * 3 <= ps,
        "zstd file {zs} bytes vs plain {ps}: only {:.2}x smaller",
        ps as f64 / zs as f64
    );
    // Reopened (with or without the parameter: the codec is per record),
    // every value reads back identical.
    check_all(&z_name, N);
    check_every(&z.display().to_string(), N, 97);
    check_every(&plain_name, N, 10);
}

#[test]
fn tokyo_cabinet_opts_d_compresses() {
    const N: usize = 2000;
    let dir = TempDir::new().unwrap();
    let plain = dir.path().join("plain.tcb");
    let d = dir.path().join("db.tcb");
    let d_name = format!("{}#opts=d", d.display());
    let db = Db::open(&d_name, true).unwrap();
    assert_eq!(db.name().compression, Compression::Zstd);
    assert!(db.is_ordered());
    drop(db);
    write(&plain.display().to_string(), N);
    write(&d_name, N);
    let (ps, ds) = (file_size(&plain), file_size(&d));
    assert!(ds * 3 <= ps, "opts=d file {ds} bytes vs plain {ps}");
    check_all(&d_name, N);
}

#[test]
fn lz4_roundtrip_and_mixed_codecs() {
    const N: usize = 2000;
    let dir = TempDir::new().unwrap();
    let p = dir.path().join("l.tkt");
    let lz = format!("{}#compression=lz4", p.display());
    write(&lz, N);
    let size = file_size(&p);
    assert!(
        size * 2 <= (N * 1024) as u64,
        "lz4 file of {size} bytes for {N} KiB"
    );
    check_all(&lz, N);
    // The same file written on with zstd and then without compression:
    // every record keeps its own codec and all read back.
    {
        let db = Db::open(&format!("{}#compression=zstd", p.display()), true).unwrap();
        for i in 0..100 {
            db.set(&key(i), &value(i + 5000), true).unwrap();
        }
        drop(db);
        let db = Db::open(&p.display().to_string(), true).unwrap();
        for i in 100..200 {
            db.set(&key(i), &value(i + 5000), true).unwrap();
        }
        // Short, incompressible and empty values stay raw.
        db.set(b"short", b"tiny", true).unwrap();
        db.set(b"empty", b"", true).unwrap();
        let noise: Vec<u8> = (0..4096u32)
            .map(|x| (x.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        db.set(b"noise", &noise, true).unwrap();
    }
    let db = Db::open(&lz, false).unwrap();
    for i in 0..N {
        let want = if i < 200 { value(i + 5000) } else { value(i) };
        assert!(db.get(&key(i)).unwrap()[..] == want[..], "record {i}");
    }
    assert_eq!(&db.get(b"short").unwrap()[..], b"tiny");
    assert_eq!(&db.get(b"empty").unwrap()[..], b"");
    assert_eq!(db.get(b"noise").unwrap().len(), 4096);
}

#[test]
fn compressed_memory_snapshot_roundtrip() {
    let dir = TempDir::new().unwrap();
    let p = dir.path().join("m.tkmt");
    let name = format!("{}#compression=zstd", p.display());
    write(&name, 1000);
    assert!(file_size(&p) * 3 <= 1000 * 1024, "{}", file_size(&p));
    check_all(&name, 1000);
}
