//! Stable twin of the `kt_frame` cargo-fuzz target: the same checks
//! (`fuzz/src/kt_checks.rs`, included below) over arbitrary bytes and over
//! streams of valid Kyoto Tycoon requests with random edits, at random limits
//! and piece sizes. See docs/fuzzing.md.

#[path = "../../../fuzz/src/kt_checks.rs"]
mod checks;

use proptest::prelude::*;

/// One request as spex.html lays it out: magic, flags, then its records
/// (sizes always honest here; edits make them lie).
fn request() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(vec![0xB8u8, 0xB9, 0xBA, 0xB4, 0xB1]),
        prop::sample::select(vec![0u32, 1, 0xffff_ffff]),
        prop::collection::vec(
            (
                any::<u16>(),
                prop::collection::vec(any::<u8>(), 0..12),
                prop::collection::vec(any::<u8>(), 0..40),
                any::<i64>(),
            ),
            0..6,
        ),
    )
        .prop_map(|(magic, flags, recs)| {
            let mut v = vec![magic];
            v.extend(flags.to_be_bytes());
            if magic == 0xB1 {
                v.extend(7u64.to_be_bytes());
                v.extend(3u16.to_be_bytes());
                return v;
            }
            if magic == 0xB4 {
                v.extend(4u32.to_be_bytes());
            }
            v.extend((recs.len() as u32).to_be_bytes());
            if magic == 0xB4 {
                v.extend(b"echo");
            }
            for (db, k, val, xt) in recs {
                if magic != 0xB4 {
                    v.extend(db.to_be_bytes());
                }
                v.extend((k.len() as u32).to_be_bytes());
                if magic == 0xB8 || magic == 0xB4 {
                    v.extend((val.len() as u32).to_be_bytes());
                }
                if magic == 0xB8 {
                    v.extend(xt.to_be_bytes());
                }
                v.extend(k);
                if magic == 0xB8 || magic == 0xB4 {
                    v.extend(val);
                }
            }
            v
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..2048)) {
        checks::kt_frame(&data);
    }

    #[test]
    fn edited_request_streams(
        limits in any::<u8>(),
        piece in any::<u8>(),
        reqs in prop::collection::vec(request(), 1..6),
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 0..3),
        cut in any::<usize>(),
    ) {
        let mut stream = reqs.concat();
        for (i, b) in edits {
            let n = stream.len();
            stream[i % n] = b;
        }
        stream.truncate(stream.len() - cut % (stream.len() / 4 + 1));
        checks::kt_stream(limits, piece, &stream);
    }
}

/// The fuzzer's seeds pass the checks and frame real requests.
#[test]
fn seeds_pass() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/seeds/kt_frame");
    let mut n = 0;
    for e in std::fs::read_dir(dir).expect("seeds") {
        let data = std::fs::read(e.expect("entry").path()).expect("seed");
        checks::kt_frame(&data);
        n += 1;
    }
    assert!(n >= 3, "{n} seeds");
}
