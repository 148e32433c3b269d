//! Stable-toolchain smoke of the `db_name` and `db_file_open` cargo-fuzz
//! targets in `fuzz/`: the same checks (`fuzz/src/engine_checks.rs`,
//! included below) over arbitrary bytes and over valid names and files with
//! random mutations. See docs/fuzzing.md.

#[path = "../../../fuzz/src/engine_checks.rs"]
mod checks;

use memstored_engine::format::{encode_record, FileHeader, FileKind, Op};
use memstored_engine::{Compression, Meta};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        2 => any::<usize>().prop_map(Mutation::Remove),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn mutate(mut v: Vec<u8>, edits: &[Mutation]) -> Vec<u8> {
    for m in edits {
        let n = v.len();
        match *m {
            Mutation::Set(i, b) if n > 0 => v[i % n] = b,
            Mutation::Insert(i, b) => v.insert(i % (n + 1), b),
            Mutation::Remove(i) if n > 0 => {
                v.remove(i % n);
            }
            Mutation::Truncate(i) => v.truncate(i % (n + 1)),
            _ => {}
        }
    }
    v
}

// ---- names ----

const PATHS: &[&str] = &[
    "*",
    "+",
    ":memory:",
    "",
    "x.tkh",
    "x.tkt",
    "x.tkmt",
    "x.tch",
    "x.tcb",
    "x.mem",
    "x.hash",
    "x.tree",
    "x.dat",
    "x.tkh.backup.20261121000000",
];
const PARAMS: &[&str] = &[
    "num_shards",
    "num_buckets",
    "bnum",
    "cap_rec_num",
    "capnum",
    "cap_mem_size",
    "capsiz",
    "compression",
    "record_comp_mode",
    "opts",
    "update_mode",
    "sync",
    "dbm",
    "apow",
    "fpow",
    "colour",
];
const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "16",
    "1k",
    "64m",
    "1g",
    "2Ki",
    "3t",
    "99999999999999999999",
    "-1",
    "lz4",
    "zstd",
    "none",
    "d",
    "l",
    "dbx",
    "q",
    "appending",
    "in_place",
    "always",
    "interval",
    "hash",
    "tree",
    "mem",
    "memtree",
    "memfile",
    "",
    " 7 ",
];

fn name() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(PATHS),
        prop::collection::vec(
            (
                prop::sample::select(vec!["#", ","]),
                prop::sample::select(PARAMS),
                prop::sample::select(VALUES),
            ),
            0..4,
        ),
        prop::collection::vec(mutation(), 0..2),
    )
        .prop_map(|(path, params, edits)| {
            let mut s = path.to_string();
            for (i, (sep, k, v)) in params.iter().enumerate() {
                s.push_str(if i == 0 { "#" } else { sep });
                s.push_str(&format!("{k}={v}"));
            }
            mutate(s.into_bytes(), &edits)
        })
}

// ---- database files ----

/// A valid file of the kind the mode byte selects, with a few records.
fn db_file() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<u8>(),
        prop::collection::vec(
            (
                prop::sample::select(vec![Op::Put, Op::Put, Op::Remove, Op::Clear]),
                prop::collection::vec(any::<u8>(), 0..6),
                prop_oneof![
                    prop::collection::vec(any::<u8>(), 0..8),
                    // Long and repetitive: stored compressed.
                    (1usize..200).prop_map(|n| vec![b'a'; n]),
                ],
                prop::sample::select(vec![Compression::None, Compression::Lz4, Compression::Zstd]),
            ),
            0..6,
        ),
        prop::collection::vec(mutation(), 0..3),
    )
        .prop_map(|(sel, records, edits)| {
            let kind = match sel % 3 {
                0 => FileKind::HashLog,
                1 => FileKind::TreeLog,
                _ => FileKind::MemSnapshot,
            };
            // The header is written here, so clear the "valid header" bit.
            let sel = sel - ((sel / 3) & 1) * 3;
            let mut file = FileHeader {
                kind,
                generation: 1,
                created_at: 0,
                max_cas: 0,
            }
            .encode()
            .to_vec();
            for (i, (op, key, value, comp)) in records.into_iter().enumerate() {
                let meta = Meta {
                    flags: 0,
                    expires_at: 0,
                    cas: i as u64 + 1,
                };
                let value = if op == Op::Put { value } else { Vec::new() };
                let _ = encode_record(&mut file, op, &key, &value, meta, comp);
            }
            let mut out = vec![sel];
            out.extend(mutate(file, &edits));
            out
        })
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(4000))]

    #[test]
    fn name_arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..64)) {
        checks::db_name(&data);
    }

    #[test]
    fn name_mutated(data in name()) {
        checks::db_name(&data);
    }

    #[test]
    fn db_file_arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..300)) {
        checks::db_file_open(&data);
    }

    #[test]
    fn db_file_mutated(data in db_file()) {
        checks::db_file_open(&data);
    }
}

/// Regression (fuzz target `db_file_open`): a record stored with CAS
/// u64::MAX made the next write overflow the shard's CAS counter (a panic
/// with overflow checks, CAS 0 without). The write is now refused.
#[test]
fn cas_counter_at_u64_max_refuses_the_next_write() {
    use memstored_engine::io::{FileSystem, SimFs};
    use memstored_engine::{Db, Error};
    use std::path::Path;
    use std::sync::Arc;

    let mut file = FileHeader {
        kind: FileKind::HashLog,
        generation: 1,
        created_at: 0,
        max_cas: 0,
    }
    .encode()
    .to_vec();
    let meta = Meta {
        flags: 0,
        expires_at: 0,
        cas: u64::MAX,
    };
    encode_record(&mut file, Op::Put, b"k", b"v", meta, Compression::None).unwrap();
    let fs = SimFs::new();
    fs.put_contents(Path::new("x.tkh"), file);
    let fs: Arc<dyn FileSystem> = fs;
    let db = Db::open_with_fs("x.tkh", true, fs).unwrap();
    assert_eq!(&db.get(b"k").unwrap()[..], b"v");
    assert!(matches!(
        db.set(b"k2", b"v2", true),
        Err(Error::BrokenData(_))
    ));
}

/// Regression (fuzz target `db_file_open`): a CRC-valid hint whose
/// live-bytes figure was near u64::MAX (or below its own entries' sizes)
/// made the next write overflow (underflow) the live-bytes counter.
#[test]
fn hint_live_bytes_out_of_range_does_not_overflow() {
    use memstored_engine::format::Codec;
    use memstored_engine::hint;
    use memstored_engine::io::{FileSystem, SimFs};
    use memstored_engine::store::log::Loc;
    use memstored_engine::Db;
    use std::path::Path;
    use std::sync::Arc;

    for live_bytes in [u64::MAX - 10, 0] {
        let mut file = FileHeader {
            kind: FileKind::HashLog,
            generation: 9,
            created_at: 0,
            max_cas: 0,
        }
        .encode()
        .to_vec();
        let meta = Meta {
            flags: 0,
            expires_at: 0,
            cas: 1,
        };
        encode_record(&mut file, Op::Put, b"k", b"v", meta, Compression::None).unwrap();
        let loc = Loc {
            offset: 64,
            key_len: 1,
            stored_len: 1,
            codec: Codec::Raw,
            meta,
            header_len: memstored_engine::format::head_len(1, 1, &meta) as u8,
        };
        let fs = SimFs::new();
        let len = file.len() as u64;
        fs.put_contents(Path::new("x.tkh"), file);
        let entries: &[(&[u8], Loc)] = &[(b"k", loc)];
        hint::save_entries(
            &*fs,
            Path::new("x.tkh.hint"),
            &hint::Covered {
                generation: 9,
                data_len: len,
                max_cas: 1,
                live_bytes,
            },
            entries,
        )
        .unwrap();
        let fs: Arc<dyn FileSystem> = fs;
        let db = Db::open_with_fs("x.tkh", true, fs).unwrap();
        db.set(b"k", b"w", true).unwrap();
        db.set(b"k2", b"w", true).unwrap();
        db.remove(b"k").unwrap();
        assert_eq!(&db.get(b"k2").unwrap()[..], b"w");
        db.close().unwrap();
    }
}
