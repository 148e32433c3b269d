//! Cursors: ordered engines against a sorted model, hash engines for coverage
//! and for the calls they refuse.

use memstored_engine::{now_secs, Cursor, Db, Error, StoreMode, StoreOptions};
use std::collections::{BTreeMap, BTreeSet};
use tempfile::TempDir;

fn ordered(dir: &TempDir) -> Vec<String> {
    vec![
        "+".into(),
        "+#num_shards=4".into(),
        format!("{}/t.tkt#num_shards=3", dir.path().display()),
    ]
}

fn hashed(dir: &TempDir) -> Vec<String> {
    let d = dir.path().display();
    vec![
        "*".into(),
        "*#num_shards=3".into(),
        "*#capsiz=64m".into(),
        "*#capsiz=64m,cache_kind=segments".into(),
        format!("{d}/h.tkh#num_shards=3"),
        format!("{d}/h.tkmt"),
    ]
}

/// Keys k010, k020, ... k500: gaps let probes fall between records.
fn fill(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut model = BTreeMap::new();
    for i in (10..=500).step_by(10) {
        let k = format!("k{i:03}").into_bytes();
        let v = format!("value-{i}").into_bytes();
        db.set(&k, &v, true).unwrap();
        model.insert(k, v);
    }
    model
}

fn key_of(c: &Cursor<'_>) -> Option<Vec<u8>> {
    match c.key() {
        Ok(k) => Some(k),
        Err(Error::NotFound(_)) => None,
        Err(e) => panic!("{e}"),
    }
}

fn probes() -> Vec<Vec<u8>> {
    let mut p: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"a".to_vec(),
        b"k".to_vec(),
        b"k0".to_vec(),
        b"k010".to_vec(),
        b"k0100".to_vec(),
        b"k499".to_vec(),
        b"k500".to_vec(),
        b"k5000".to_vec(),
        b"z".to_vec(),
        vec![0xff; 3],
    ];
    for i in (5..=505).step_by(15) {
        p.push(format!("k{i:03}").into_bytes());
    }
    p
}

#[test]
fn ordered_walks_match_the_model() {
    let dir = TempDir::new().unwrap();
    for name in ordered(&dir) {
        let db = Db::open(&name, true).unwrap();
        assert!(db.is_ordered(), "{name}");
        // Empty database: first and last land nowhere; moving is NotFound.
        let mut c = db.cursor();
        assert!(
            matches!(c.next(), Err(Error::NotFound(_))),
            "{name}: next before positioning"
        );
        c.first().unwrap();
        assert_eq!(key_of(&c), None, "{name}");
        c.last().unwrap();
        assert_eq!(key_of(&c), None, "{name}");

        let model = fill(&db);
        let keys: Vec<Vec<u8>> = model.keys().cloned().collect();

        let mut c = db.cursor();
        c.first().unwrap();
        let mut seen = Vec::new();
        while let Some(k) = key_of(&c) {
            let (k2, v) = c.get().unwrap();
            assert_eq!(k, k2, "{name}");
            assert_eq!(&v[..], &model[&k][..], "{name}");
            seen.push(k);
            c.next().unwrap();
        }
        assert_eq!(seen, keys, "{name}: forward");
        assert!(matches!(c.next(), Err(Error::NotFound(_))), "{name}");

        c.last().unwrap();
        let mut back = Vec::new();
        while let Some(k) = key_of(&c) {
            back.push(k);
            c.previous().unwrap();
        }
        back.reverse();
        assert_eq!(back, keys, "{name}: backward");

        // step() yields the same sequence.
        c.first().unwrap();
        let mut stepped = Vec::new();
        while let Some((k, _)) = c.step().unwrap() {
            stepped.push(k);
        }
        assert_eq!(stepped, keys, "{name}: step");

        // Direction changes in the middle.
        c.jump(b"k250").unwrap();
        c.next().unwrap();
        c.next().unwrap();
        c.previous().unwrap();
        assert_eq!(key_of(&c).as_deref(), Some(&b"k260"[..]), "{name}");
    }
}

#[test]
fn ordered_jumps_match_the_model() {
    let dir = TempDir::new().unwrap();
    for name in ordered(&dir) {
        let db = Db::open(&name, true).unwrap();
        let model = fill(&db);
        let set: BTreeSet<Vec<u8>> = model.keys().cloned().collect();
        let mut c = db.cursor();
        for p in probes() {
            let ge = set.range(p.clone()..).next().cloned();
            let gt = set
                .range((
                    std::ops::Bound::Excluded(p.clone()),
                    std::ops::Bound::Unbounded,
                ))
                .next()
                .cloned();
            let le = set.range(..=p.clone()).next_back().cloned();
            let lt = set.range(..p.clone()).next_back().cloned();
            let show = String::from_utf8_lossy(&p).to_string();

            c.jump(&p).unwrap();
            assert_eq!(key_of(&c), ge, "{name}: jump {show}");
            c.jump_upper(&p, true).unwrap();
            assert_eq!(key_of(&c), ge, "{name}: jump_upper inclusive {show}");
            c.jump_upper(&p, false).unwrap();
            assert_eq!(key_of(&c), gt, "{name}: jump_upper {show}");
            c.jump_lower(&p, true).unwrap();
            assert_eq!(key_of(&c), le, "{name}: jump_lower inclusive {show}");
            c.jump_lower(&p, false).unwrap();
            assert_eq!(key_of(&c), lt, "{name}: jump_lower {show}");

            // From a jump, next and previous continue in order.
            c.jump(&p).unwrap();
            if ge.is_some() {
                c.next().unwrap();
                let after = ge
                    .as_ref()
                    .and_then(|g| {
                        set.range((
                            std::ops::Bound::Excluded(g.clone()),
                            std::ops::Bound::Unbounded,
                        ))
                        .next()
                    })
                    .cloned();
                assert_eq!(key_of(&c), after, "{name}: jump {show} then next");
            }
            c.jump_lower(&p, true).unwrap();
            if le.is_some() {
                c.previous().unwrap();
                let before = le
                    .as_ref()
                    .and_then(|l| set.range(..l.clone()).next_back())
                    .cloned();
                assert_eq!(
                    key_of(&c),
                    before,
                    "{name}: jump_lower {show} then previous"
                );
            }
        }
    }
}

#[test]
fn ordered_cursor_set_and_remove() {
    let dir = TempDir::new().unwrap();
    for name in ordered(&dir) {
        let db = Db::open(&name, true).unwrap();
        let mut model = fill(&db);
        let far = now_secs() + 1000;
        db.store(
            b"k100",
            "flagged".into(),
            StoreMode::Set,
            StoreOptions {
                flags: 12,
                expires_at: far,
                cas: None,
            },
        )
        .unwrap();
        model.insert(b"k100".to_vec(), b"flagged".to_vec());

        let mut c = db.cursor();
        c.jump(b"k100").unwrap();
        c.set(b"changed").unwrap();
        let r = db.get_record(b"k100").unwrap().unwrap();
        assert_eq!(&r.value[..], b"changed", "{name}");
        assert_eq!((r.meta.flags, r.meta.expires_at), (12, far), "{name}: kept");
        assert_eq!(key_of(&c).as_deref(), Some(&b"k100"[..]), "{name}: stays");
        model.insert(b"k100".to_vec(), b"changed".to_vec());

        // Remove moves to the next record.
        c.remove().unwrap();
        model.remove(&b"k100"[..]);
        assert_eq!(key_of(&c).as_deref(), Some(&b"k110"[..]), "{name}");
        assert!(matches!(db.get(b"k100"), Err(Error::NotFound(_))), "{name}");
        // Removing the last record leaves the cursor nowhere.
        c.last().unwrap();
        c.remove().unwrap();
        model.remove(&b"k500"[..]);
        assert_eq!(key_of(&c), None, "{name}");
        assert!(matches!(c.remove(), Err(Error::NotFound(_))), "{name}");

        // Remove every other record through the cursor.
        c.first().unwrap();
        while key_of(&c).is_some() {
            let k = key_of(&c).unwrap();
            c.remove().unwrap();
            model.remove(&k);
            if key_of(&c).is_some() {
                c.next().unwrap();
            }
        }
        let left: Vec<Vec<u8>> = {
            let mut c = db.cursor();
            c.first().unwrap();
            let mut out = Vec::new();
            while let Some((k, _)) = c.step().unwrap() {
                out.push(k);
            }
            out
        };
        assert_eq!(left, model.keys().cloned().collect::<Vec<_>>(), "{name}");
        assert_eq!(db.count(), model.len() as u64, "{name}");
    }
}

#[test]
fn ordered_cursor_survives_removal_of_its_record() {
    let dir = TempDir::new().unwrap();
    for name in ordered(&dir) {
        let db = Db::open(&name, true).unwrap();
        fill(&db);
        let mut c = db.cursor();
        c.jump(b"k200").unwrap();
        db.remove(b"k200").unwrap();
        db.remove(b"k210").unwrap();
        assert!(matches!(c.get(), Err(Error::NotFound(_))), "{name}");
        assert_eq!(key_of(&c).as_deref(), Some(&b"k200"[..]), "{name}");
        c.next().unwrap();
        assert_eq!(key_of(&c).as_deref(), Some(&b"k220"[..]), "{name}");
        c.previous().unwrap();
        assert_eq!(key_of(&c).as_deref(), Some(&b"k190"[..]), "{name}");
        // A key inserted behind the cursor's back is seen by the next move.
        db.set(b"k195", b"new", true).unwrap();
        c.next().unwrap();
        assert_eq!(key_of(&c).as_deref(), Some(&b"k195"[..]), "{name}");
        // Expired records are skipped.
        db.store(
            b"k196",
            "old".into(),
            StoreMode::Set,
            StoreOptions {
                expires_at: now_secs() - 5,
                ..Default::default()
            },
        )
        .unwrap();
        c.next().unwrap();
        assert_eq!(key_of(&c).as_deref(), Some(&b"k220"[..]), "{name}");
    }
}

#[test]
fn ordered_cursor_walks_while_another_thread_removes() {
    let dir = TempDir::new().unwrap();
    for name in ordered(&dir) {
        let db = Db::open(&name, true).unwrap();
        for i in 0..2000 {
            db.set(format!("{i:05}").as_bytes(), b"v", true).unwrap();
        }
        let seen = std::thread::scope(|s| {
            s.spawn(|| {
                for i in (1..2000).step_by(2) {
                    db.remove(format!("{i:05}").as_bytes()).unwrap();
                }
            });
            let mut c = db.cursor();
            c.first().unwrap();
            let mut seen = Vec::new();
            while let Some(k) = key_of(&c) {
                seen.push(k);
                c.next().unwrap();
            }
            seen
        });
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{name}: ascending");
        for i in (0..2000).step_by(2) {
            let k = format!("{i:05}").into_bytes();
            assert!(seen.binary_search(&k).is_ok(), "{name}: missed {i}");
        }
        assert_eq!(db.count(), 1000, "{name}");
    }
}

#[test]
fn hash_cursor_visits_every_key_once() {
    let dir = TempDir::new().unwrap();
    for name in hashed(&dir) {
        let db = Db::open(&name, true).unwrap();
        assert!(!db.is_ordered(), "{name}");
        let mut c = db.cursor();
        c.first().unwrap();
        assert_eq!(key_of(&c), None, "{name}: empty");

        let model = fill(&db);
        c.first().unwrap();
        let mut seen = Vec::new();
        while let Some(k) = key_of(&c) {
            let (_, v) = c.get().unwrap();
            assert_eq!(&v[..], &model[&k][..], "{name}");
            seen.push(k);
            c.next().unwrap();
        }
        let n = seen.len();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), n, "{name}: a key was visited twice");
        assert_eq!(seen, model.keys().cloned().collect::<Vec<_>>(), "{name}");
    }
}

#[test]
fn hash_cursor_refuses_ordered_moves() {
    let dir = TempDir::new().unwrap();
    for name in hashed(&dir) {
        let db = Db::open(&name, true).unwrap();
        fill(&db);
        let mut c = db.cursor();
        assert!(
            matches!(c.last(), Err(Error::NotImplemented(_))),
            "{name}: last"
        );
        assert!(
            matches!(c.jump_lower(b"k100", true), Err(Error::NotImplemented(_))),
            "{name}: jump_lower"
        );
        assert!(
            matches!(c.jump_lower(b"k100", false), Err(Error::NotImplemented(_))),
            "{name}: jump_lower"
        );
        c.first().unwrap();
        let at = key_of(&c).unwrap();
        assert!(
            matches!(c.previous(), Err(Error::NotImplemented(_))),
            "{name}: previous"
        );
        // A refused move leaves the cursor where it was.
        assert_eq!(key_of(&c), Some(at.clone()), "{name}: position kept");
        c.next().unwrap();
        assert_ne!(key_of(&c), Some(at), "{name}: next still works");
    }
}

#[test]
fn hash_cursor_jump_and_remove() {
    let dir = TempDir::new().unwrap();
    for name in hashed(&dir) {
        let db = Db::open(&name, true).unwrap();
        let model = fill(&db);
        let mut c = db.cursor();
        for k in model.keys() {
            c.jump(k).unwrap();
            assert_eq!(key_of(&c).as_ref(), Some(k), "{name}");
            assert_eq!(&c.get().unwrap().1[..], &model[k][..], "{name}");
        }
        assert!(
            matches!(c.jump(b"k015"), Err(Error::NotFound(_))),
            "{name}: absent"
        );

        // set keeps the position; remove moves on; removing everything
        // through the cursor empties the database and visits each key once.
        c.first().unwrap();
        c.set(b"rewritten").unwrap();
        let k = key_of(&c).unwrap();
        assert_eq!(&db.get(&k).unwrap()[..], b"rewritten", "{name}");
        let mut removed = Vec::new();
        while let Some(k) = key_of(&c) {
            c.remove().unwrap();
            assert!(matches!(db.get(&k), Err(Error::NotFound(_))), "{name}");
            removed.push(k);
        }
        removed.sort();
        assert_eq!(removed, model.keys().cloned().collect::<Vec<_>>(), "{name}");
        assert_eq!(db.count(), 0, "{name}");
    }
}

#[test]
fn hash_cursor_survives_removal_of_its_record() {
    let dir = TempDir::new().unwrap();
    for name in hashed(&dir) {
        let db = Db::open(&name, true).unwrap();
        let model = fill(&db);
        let mut c = db.cursor();
        c.first().unwrap();
        let mut seen = vec![key_of(&c).unwrap()];
        db.remove(&seen[0]).unwrap();
        assert!(matches!(c.get(), Err(Error::NotFound(_))), "{name}");
        c.next().unwrap();
        while let Some(k) = key_of(&c) {
            seen.push(k);
            c.next().unwrap();
        }
        seen.sort();
        assert_eq!(seen, model.keys().cloned().collect::<Vec<_>>(), "{name}");
    }
}

/// A hash cursor takes a shard's keys a window at a time (the cache's
/// and the file hash's table, 1,024 groups per lock): over 100,000
/// records it still visits each live one exactly once, skips those
/// removed meanwhile, and a jump goes on from the jumped key's window.
#[test]
fn hash_cursors_walk_large_shards_window_by_window() {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("{}/w.tkh#num_shards=2", dir.path().display());
    for name in ["*#capsiz=256m", "*#num_shards=2", &file] {
        let db = Db::open(name, true).unwrap();
        let n = 100_000;
        for i in 0..n {
            db.set(format!("key{i:06}").as_bytes(), b"v", true).unwrap();
        }
        let mut c = db.cursor();
        c.first().unwrap();
        let mut seen = BTreeSet::new();
        while let Some(k) = key_of(&c) {
            // Removing a record ahead of the cursor: it is skipped if its
            // window has not been taken yet, seen otherwise.
            if seen.is_empty() {
                db.remove(b"key099999").unwrap();
            }
            assert!(seen.insert(k.clone()), "{name}: {k:?} twice");
            c.next().unwrap();
        }
        assert!(
            seen.len() == n - 1 || seen.len() == n,
            "{name}: {}",
            seen.len()
        );
        let mut c = db.cursor();
        c.jump(b"key050000").unwrap();
        assert_eq!(key_of(&c).as_deref(), Some(&b"key050000"[..]));
        let mut after = 0;
        while key_of(&c).is_some() {
            after += 1;
            c.next().unwrap();
        }
        assert!(after >= 1 && after < n, "{name}: {after} after the jump");
    }
}

/// A walk detached after every step (`Cursor::detach`, `Db::resume_cursor`)
/// visits every record once, as one cursor kept whole does: the server's
/// metadump goes on this way across the batches of its connection.
#[test]
fn a_detached_cursor_resumes_where_it_was() {
    let dir = TempDir::new().unwrap();
    for name in ordered(&dir).into_iter().chain(hashed(&dir)) {
        let db = Db::open(&name, true).unwrap();
        let model = fill(&db);
        let mut c = db.cursor();
        c.first().unwrap();
        let mut place = c.detach();
        let mut seen = Vec::new();
        loop {
            let mut c = db.resume_cursor(place);
            let Some(k) = key_of(&c) else { break };
            seen.push(k);
            if c.next().is_err() {
                break;
            }
            place = c.detach();
        }
        let mut sorted = seen.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), seen.len(), "{name}: a key seen twice");
        assert_eq!(sorted, model.keys().cloned().collect::<Vec<_>>(), "{name}");
        if !name.contains('*') && !name.contains(".tkh") && !name.contains(".tkmt") {
            assert_eq!(seen, sorted, "{name}: in key order");
        }
        db.close().unwrap();
    }
}
