//! Stable-toolchain twin of the `session` cargo-fuzz target: the same checks
//! (`fuzz/src/session_checks.rs`, included below) over arbitrary bytes,
//! over mutated valid pipelines, and over structured pipelines whose replies
//! must come back in request order. See docs/fuzzing.md.

#[path = "../../../fuzz/src/session_checks.rs"]
mod checks;

use proptest::prelude::*;

/// Valid starts for mutation: one per protocol.
const SEEDS: &[&[u8]] = &[
    b"set k 0 0 1\r\nv\r\nget k k k\r\nmg k v t c\r\nma n N0 D5\r\nflush_all\r\n",
    b"\x80\x01\x00\x01\x08\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00kv\x80\x0c\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00k",
    b"\x94\x00\x01\xa3set\x92\xa1k\xa1v\x94\x00\x02\xa3get\x91\xa1k",
    // Kyoto Tycoon binary: set_bulk {k: v}, get_bulk [k], remove_bulk [k] with no reply.
    b"\xb8\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x7f\xff\xff\xff\xff\xff\xff\xffkv\xba\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x01k\xb9\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x01k",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..4096)) {
        checks::session_bytes(&data);
    }

    #[test]
    fn mutated_pipelines(
        seed in 0..SEEDS.len(),
        cut in 1u8..=255,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
    ) {
        let mut data = SEEDS[seed].to_vec();
        for (i, b) in edits {
            let n = data.len();
            data[i % n] = b;
        }
        data.insert(0, cut);
        checks::session_bytes(&data);
    }

    #[test]
    fn binary_replies_in_request_order(
        ops in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u16>()), 1..64),
        cut in 1usize..512,
    ) {
        checks::binary_in_order(&ops, cut);
    }

    #[test]
    fn meta_replies_in_request_order(
        ops in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u16>()), 1..64),
        cut in 1usize..512,
    ) {
        checks::meta_in_order(&ops, cut);
    }
}
