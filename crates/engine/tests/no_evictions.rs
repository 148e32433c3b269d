//! `disable_evictions=true` (memcached's `-M`) through the public API: a
//! full capped cache refuses writes with `Error::NoMemory` (Tkrzw's
//! INFEASIBLE_ERROR) and keeps every record.

use memstored_engine::{Db, Error};

fn key(i: usize) -> Vec<u8> {
    format!("key-{i:08}").into_bytes()
}

#[test]
fn a_full_cache_refuses_and_keeps_every_record() {
    for name in [
        "*#capsiz=2m,disable_evictions=true",
        "*#capsiz=2m,num_shards=4,disable_evictions=true",
        "casket.kcc#capsiz=2m#disable_evictions=yes",
    ] {
        let db = Db::open(name, true).unwrap();
        let value = vec![b'v'; 300];
        let mut n = 0;
        let refusal = loop {
            match db.set(&key(n), &value, true) {
                Ok(()) => n += 1,
                Err(e) => break e,
            }
        };
        assert!(
            matches!(refusal, Error::NoMemory { .. }),
            "{name}: {refusal}"
        );
        assert_eq!(refusal.status_name(), "INFEASIBLE_ERROR");
        assert!(n > 3000, "{name}: {n} stored");
        assert_eq!(db.count(), n as u64, "{name}");
        for i in 0..n {
            assert_eq!(db.get(&key(i)).unwrap(), value, "{name}: record {i}");
        }
        assert_eq!(db.stats().evictions, 0, "{name}");
        let inspect = db.inspect();
        assert!(inspect.contains(&("disable_evictions".into(), "true".into())));
    }
}

#[test]
fn a_cache_with_evictions_never_refuses() {
    let db = Db::open("*#capsiz=2m,disable_evictions=false", true).unwrap();
    for i in 0..20_000 {
        db.set(&key(i), &[b'v'; 300], true).unwrap();
    }
    assert!(db.stats().evictions > 0);
}

#[test]
fn the_clock_cache_cannot_disable_evictions() {
    let e = Db::open("*#capsiz=2m,cache_kind=clock,disable_evictions=true", true);
    match e {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("segment cache"), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}
