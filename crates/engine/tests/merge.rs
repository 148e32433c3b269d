//! Sharded ordered databases iterate in one global order (heap merge): random
//! cursor moves, in both directions and with every kind of jump, against a
//! cursor over a sorted model.

use memstored_engine::Db;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::ops::Bound;

#[derive(Debug, Clone)]
enum Move {
    First,
    Last,
    Jump(u16),
    JumpLower(u16, bool),
    JumpUpper(u16, bool),
    Next,
    Previous,
}

fn key(n: u16) -> Vec<u8> {
    format!("{n:05}").into_bytes()
}

fn moves() -> impl Strategy<Value = Move> {
    prop_oneof![
        1 => Just(Move::First),
        1 => Just(Move::Last),
        2 => (0u16..400).prop_map(Move::Jump),
        2 => (0u16..400, any::<bool>()).prop_map(|(k, i)| Move::JumpLower(k, i)),
        2 => (0u16..400, any::<bool>()).prop_map(|(k, i)| Move::JumpUpper(k, i)),
        6 => Just(Move::Next),
        4 => Just(Move::Previous),
    ]
}

/// Where the model cursor lands after `m`, from `at`.
fn model_move(set: &BTreeSet<Vec<u8>>, at: &Option<Vec<u8>>, m: &Move) -> Option<Vec<u8>> {
    let after = |b: Bound<Vec<u8>>| set.range((b, Bound::Unbounded)).next().cloned();
    let before = |b: Bound<Vec<u8>>| set.range((Bound::Unbounded, b)).next_back().cloned();
    let incl = |k: Vec<u8>, i: bool| {
        if i {
            Bound::Included(k)
        } else {
            Bound::Excluded(k)
        }
    };
    match m {
        Move::First => set.first().cloned(),
        Move::Last => set.last().cloned(),
        Move::Jump(k) => after(Bound::Included(key(*k))),
        Move::JumpLower(k, i) => before(incl(key(*k), *i)),
        Move::JumpUpper(k, i) => after(incl(key(*k), *i)),
        Move::Next => after(Bound::Excluded(at.clone()?)),
        Move::Previous => before(Bound::Excluded(at.clone()?)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn sharded_cursor_matches_sorted_model(
        keys in proptest::collection::btree_set(0u16..400, 0..120),
        shards in 1usize..8,
        ms in proptest::collection::vec(moves(), 1..80),
    ) {
        let db = Db::open(&format!("+#num_shards={shards}"), true).unwrap();
        let set: BTreeSet<Vec<u8>> = keys.iter().map(|k| key(*k)).collect();
        for k in &set {
            db.set(k, k, true).unwrap();
        }
        let mut c = db.cursor();
        let mut at: Option<Vec<u8>> = None;
        for m in &ms {
            if at.is_none() && matches!(m, Move::Next | Move::Previous) {
                prop_assert!(c.next().is_err() || c.key().is_err());
                continue;
            }
            match m {
                Move::First => c.first().unwrap(),
                Move::Last => c.last().unwrap(),
                Move::Jump(k) => c.jump(&key(*k)).unwrap(),
                Move::JumpLower(k, i) => c.jump_lower(&key(*k), *i).unwrap(),
                Move::JumpUpper(k, i) => c.jump_upper(&key(*k), *i).unwrap(),
                Move::Next => c.next().unwrap(),
                Move::Previous => c.previous().unwrap(),
            }
            at = model_move(&set, &at, m);
            prop_assert_eq!(c.key().ok(), at.clone(), "after {:?}", m);
            if let Some(k) = &at {
                prop_assert_eq!(&c.get().unwrap().1[..], &k[..]);
            }
        }
    }
}

#[test]
fn ten_shard_tree_lists_the_articles_range() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        &format!("{}/casket.tkt#num_shards=10", dir.path().display()),
        true,
    )
    .unwrap();
    for i in 0..10_000u32 {
        let k = format!("{i:08}");
        db.set(k.as_bytes(), k.as_bytes(), true).unwrap();
    }
    let mut c = db.cursor();
    c.jump_lower(b"00000100", true).unwrap();
    let mut got = Vec::new();
    for _ in 0..20 {
        got.push(String::from_utf8(c.key().unwrap()).unwrap());
        c.next().unwrap();
    }
    let want: Vec<String> = (100..120).map(|i| format!("{i:08}")).collect();
    assert_eq!(got, want);
}
