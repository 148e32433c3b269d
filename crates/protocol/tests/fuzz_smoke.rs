//! Stable-toolchain smoke of the cargo-fuzz targets in `fuzz/`: the same
//! checks (`fuzz/src/protocol_checks.rs`, included below) over arbitrary
//! bytes and over valid frames with random mutations, so CI exercises every
//! parser's failure paths without nightly. See docs/fuzzing.md.

#[path = "../../../fuzz/src/protocol_checks.rs"]
mod checks;

use bytes::BytesMut;
use memstored_protocol::binary::Opcode;
use memstored_protocol::rpc::{self, Value};
use proptest::prelude::*;

/// One edit of a valid input.
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

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 5000,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---- binary ----

/// A well-formed request frame (for a random opcode the lengths may still be
/// ones memcached refuses; the checks cover both).
fn binary_frame() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![
            3 => prop::sample::select(Opcode::ALL.to_vec()).prop_map(|o| o as u8),
            1 => any::<u8>(),
        ],
        prop::sample::select(vec![0u8, 4, 8, 20]),
        prop::collection::vec(any::<u8>(), 0..12),
        prop::collection::vec(any::<u8>(), 0..24),
        any::<u32>(),
        any::<u64>(),
    )
        .prop_map(|(opcode, extras, key, value, opaque, cas)| {
            let body = usize::from(extras) + key.len() + value.len();
            let mut f = vec![0x80, opcode];
            f.extend_from_slice(&(key.len() as u16).to_be_bytes());
            f.push(extras);
            f.extend_from_slice(&[0, 0, 0]);
            f.extend_from_slice(&(body as u32).to_be_bytes());
            f.extend_from_slice(&opaque.to_be_bytes());
            f.extend_from_slice(&cas.to_be_bytes());
            f.extend(std::iter::repeat_n(0xab, usize::from(extras)));
            f.extend_from_slice(&key);
            f.extend_from_slice(&value);
            f
        })
}

// ---- text and meta ----

const TEXT_WORDS: &[&str] = &[
    "set",
    "add",
    "replace",
    "append",
    "prepend",
    "cas",
    "get",
    "gets",
    "gat",
    "gats",
    "delete",
    "incr",
    "decr",
    "touch",
    "flush_all",
    "version",
    "verbosity",
    "stats",
    "quit",
    "mg",
    "ms",
    "md",
    "ma",
    "mn",
    "me",
    "noreply",
    "key",
    "k",
    "0",
    "1",
    "5",
    "100",
    "-1",
    "18446744073709551615",
    "4294967296",
    "b",
    "c",
    "f",
    "h",
    "k",
    "l",
    "O123",
    "q",
    "s",
    "t",
    "v",
    "T30",
    "N30",
    "MS",
    "ME",
    "MA",
    "MI",
    "MD",
    "M+",
    "M-",
    "D5",
    "J10",
    "C99",
    "E7",
    "I",
    "S5",
    "F7",
    "x",
    "a2V5",
];

fn text_line() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(prop::sample::select(TEXT_WORDS), 0..7),
        prop::sample::select(vec!["\r\n", "\n", "\r\n", "", " \r\n"]),
        prop::option::weighted(0.5, prop::collection::vec(any::<u8>(), 0..8)),
    )
        .prop_map(|(words, end, block)| {
            let mut line = words.join(" ").into_bytes();
            line.extend_from_slice(end.as_bytes());
            if let Some(b) = block {
                // A data block the line may announce, or not.
                line.extend_from_slice(&b);
                line.extend_from_slice(b"\r\n");
            }
            line
        })
}

/// A storage command whose block length matches its data.
fn store_command() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(vec![
            "set k 0 0",
            "add k 1 2",
            "replace k 0 0",
            "append k 0 0",
            "prepend k 0 0",
            "cas k 0 0",
        ]),
        prop::collection::vec(any::<u8>(), 0..16),
        prop::sample::select(vec!["", " 5", " noreply", " 5 noreply"]),
        any::<bool>(),
        prop::sample::select(vec!["", " T0", " F5 c", " q MS", " I MA k O1 b", " S3"]),
    )
        .prop_map(|(head, data, tail, meta, flags)| {
            let mut out = if meta {
                format!("ms k {}{flags}\r\n", data.len()).into_bytes()
            } else {
                format!("{head} {}{tail}\r\n", data.len()).into_bytes()
            };
            out.extend_from_slice(&data);
            out.extend_from_slice(b"\r\n");
            out
        })
}

fn text_stream() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<u8>(),
        prop::collection::vec(prop_oneof![text_line(), store_command()], 1..5),
        prop::collection::vec(mutation(), 0..3),
    )
        .prop_map(|(sel, lines, edits)| {
            let mut out = vec![sel];
            out.extend(mutate(lines.concat(), &edits));
            out
        })
}

// ---- MessagePack-RPC ----

const METHODS: &[&str] = &[
    "ping",
    "echo",
    "status",
    "report",
    "set",
    "add",
    "replace",
    "append",
    "get",
    "check",
    "remove",
    "seize",
    "clear",
    "cas",
    "increment",
    "increment_double",
    "match_prefix",
    "match_regex",
    "match_similar",
    "set_bulk",
    "remove_bulk",
    "get_bulk",
    "vacuum",
    "synchronize",
    "compare_exchange_multi",
    "list",
    "count",
    "rebuild",
    "search",
];

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[a-z]{0,6}".prop_map(Value::from),
        prop::collection::vec(any::<u8>(), 0..8).prop_map(Value::from),
        (any::<i8>(), prop::collection::vec(any::<u8>(), 0..4)).prop_map(|(t, d)| Value::Ext(t, d)),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((inner.clone(), inner), 0..3).prop_map(Value::Map),
        ]
    })
}

fn rpc_message() -> impl Strategy<Value = Vec<u8>> {
    (
        0..3u8,
        any::<u32>(),
        prop::sample::select(METHODS),
        prop::collection::vec(value(), 0..4),
    )
        .prop_map(|(kind, msgid, method, params)| {
            let mut out = BytesMut::new();
            match kind {
                0 => rpc::encode_request(msgid, method, &params, &mut out),
                1 => rpc::encode_notification(method, &params, &mut out),
                _ => rpc::encode_response(msgid, Ok(&Value::Array(params)), &mut out),
            }
            out.to_vec()
        })
}

fn rpc_stream() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<[u8; 2]>(),
        prop::collection::vec(rpc_message(), 1..4),
        prop::collection::vec(mutation(), 0..3),
    )
        .prop_map(|(limits, msgs, edits)| {
            let mut out = limits.to_vec();
            out.extend(mutate(msgs.concat(), &edits));
            out
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn binary_arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..256)) {
        checks::binary_request(&data);
    }

    #[test]
    fn binary_arbitrary_after_magic(data in prop::collection::vec(any::<u8>(), 0..256)) {
        let mut framed = vec![0x80];
        framed.extend(data);
        checks::binary_request(&framed);
    }

    #[test]
    fn binary_mutated_frames(
        frames in prop::collection::vec(binary_frame(), 1..4),
        edits in prop::collection::vec(mutation(), 0..3),
    ) {
        checks::binary_request(&mutate(frames.concat(), &edits));
    }

    #[test]
    fn text_arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..256)) {
        checks::text_request(&data);
    }

    #[test]
    fn text_mutated_commands(data in text_stream()) {
        checks::text_request(&data);
    }

    #[test]
    fn rpc_arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..256)) {
        checks::rpc_frame(&data);
    }

    #[test]
    fn rpc_arbitrary_after_fixarray(data in prop::collection::vec(any::<u8>(), 0..256)) {
        let mut framed = vec![0, 0, 0x94];
        framed.extend(data);
        checks::rpc_frame(&framed);
    }

    #[test]
    fn rpc_mutated_messages(data in rpc_stream()) {
        checks::rpc_frame(&data);
    }
}
