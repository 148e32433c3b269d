//! Which database a call runs on: its `DB` option, an index (an integer, or
//! decimal text) or a name (`state::databases` says which names match).

use super::{code, RpcError, Value};
use crate::state::server::Server;
use memstored_protocol::rpc::{value_bytes, value_str};
use std::sync::Arc;

/// The `DB` option of a call: in the map that is its last parameter (the
/// options map; for kt-msgpack's bulk calls, the one map).
fn db_option(params: &[Value]) -> Option<&Value> {
    let Some(Value::Map(m)) = params.last() else {
        return None;
    };
    m.iter()
        .find(|(k, _)| value_str(k) == Some("DB"))
        .map(|(_, v)| v)
}

/// The server whose database the call's `DB` option names (`srv` itself
/// without one); error 34 when no database has that index or name.
pub fn select<'a>(srv: &'a Arc<Server>, params: &[Value]) -> Result<&'a Arc<Server>, RpcError> {
    let Some(v) = db_option(params) else {
        return Ok(srv);
    };
    let missing =
        |what: String| RpcError::new(code::NO_DATABASE, format!("no such database: {what}"));
    let by_index = |i: u64| {
        usize::try_from(i)
            .ok()
            .and_then(|i| crate::state::databases::nth(srv, i))
            .ok_or_else(|| missing(i.to_string()))
    };
    if let Some(i) = v.as_u64() {
        return by_index(i);
    }
    let text = value_bytes(v)
        .and_then(|b| std::str::from_utf8(b).ok())
        .ok_or_else(|| missing(v.to_string()))?;
    if let Ok(i) = text.trim().parse::<u64>() {
        return by_index(i);
    }
    std::iter::once(srv)
        .chain(&srv.others)
        .find(|s| crate::state::databases::names(&s.cfg.store, text))
        .ok_or_else(|| missing(format!("{text:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::rpc::call;
    use crate::state::databases::*;
    use crate::state::server::Config;
    use memstored_engine::Db;

    /// A server over `*` (first) with `+` and `x/casket.kct#bnum=1k` (an
    /// in-memory ordered database named like a file) after it.
    fn three() -> Arc<Server> {
        let (_stop, rx) = tokio::sync::watch::channel(false);
        let open = |name: &str, engine: &str| {
            let db = Arc::new(Db::open(engine, true).unwrap());
            Server::new(db, Config::defaults(name), None, rx.clone())
        };
        let others = vec![
            Arc::new(open("+", "+")),
            Arc::new(open("x/casket.kct#bnum=1k", "+")),
        ];
        Arc::new(open("*", "*").with_others(others))
    }

    fn with_db(params: Vec<Value>, db: Value) -> Vec<Value> {
        let mut p = params;
        p.push(Value::Map(vec![(Value::from("DB"), db)]));
        p
    }

    fn bin(s: &str) -> Value {
        Value::Binary(s.as_bytes().to_vec())
    }

    #[test]
    fn db_option_picks_the_database_by_index_or_name() {
        let srv = three();
        let set = |db: Option<Value>, v: &str| {
            let p = vec![bin("k"), bin(v)];
            let p = match db {
                Some(db) => with_db(p, db),
                None => p,
            };
            call(&srv, "set", &p).unwrap();
        };
        set(None, "first");
        set(Some(Value::from(1u64)), "second");
        set(Some(Value::from("2")), "third");
        let dbs = all(&srv);
        let got: Vec<Vec<u8>> = dbs.iter().map(|d| d.get(b"k").unwrap().to_vec()).collect();
        assert_eq!(
            got,
            [b"first".to_vec(), b"second".to_vec(), b"third".to_vec()]
        );
        // By name: as given, its path, its file name; and index 0 / `*` is the first.
        for (name, which) in [
            ("x/casket.kct#bnum=1k", 2),
            ("x/casket.kct", 2),
            ("casket.kct", 2),
            ("+", 1),
            ("*", 0),
            ("0", 0),
        ] {
            let v = call(&srv, "get", &with_db(vec![bin("k")], bin(name))).unwrap();
            let Value::Map(m) = &v else {
                panic!("{name}: {v}")
            };
            let got = memstored_protocol::rpc::map_get(m, "value").and_then(value_bytes);
            let want = ["first", "second", "third"][which];
            assert_eq!(got, Some(want.as_bytes()), "{name}");
        }
        // The DB option in a bulk call's one map, as kt-msgpack sends it
        // (what set_bulk makes of the map's other keys is its own business).
        let bulk = vec![Value::Map(vec![
            (bin("_b"), bin("1")),
            (bin("DB"), bin("1")),
        ])];
        call(&srv, "set_bulk", &bulk).unwrap();
        assert_eq!(dbs[0].count(), 1, "only k");
        assert!(dbs[1].count() > 1, "k and the bulk's record");
    }

    #[test]
    fn an_unknown_database_is_error_34() {
        let srv = three();
        for db in [
            Value::from(3u64),
            Value::from("9"),
            Value::from("nope.kch"),
            Value::Nil,
        ] {
            let e = call(&srv, "get", &with_db(vec![bin("k")], db.clone())).unwrap_err();
            assert_eq!(e.code, code::NO_DATABASE, "{db}: {e}");
        }
        assert!(all(&srv).iter().all(|d| d.count() == 0));
    }

    #[test]
    fn stats_list_each_database() {
        let srv = three();
        call(
            &srv,
            "set",
            &with_db(vec![bin("a"), bin("b")], Value::from(2u64)),
        )
        .unwrap();
        let st: std::collections::HashMap<String, String> = stats(&srv).into_iter().collect();
        assert_eq!(st["db_2_store"], "x/casket.kct#bnum=1k");
        assert_eq!(st["db_2_count"], "1");
        assert_eq!(st["db_0_count"], "0");
        assert_eq!(st["db_1_engine"], "mem_tree");
    }

    /// ktserver's report covers every database whatever `DB` says: a
    /// `db_N` line each, totals and counters summed over them.
    #[test]
    fn report_lists_every_database() {
        let srv = three();
        call(&srv, "set", &[bin("a"), bin("1")]).unwrap();
        for (k, db) in [("b", 2u64), ("c", 2)] {
            call(
                &srv,
                "set",
                &with_db(vec![bin(k), bin("2")], Value::from(db)),
            )
            .unwrap();
        }
        for db in [None, Some(Value::from(1u64))] {
            let p = db.map_or_else(Vec::new, |db| with_db(Vec::new(), db));
            let r = call(&srv, "report", &p).unwrap();
            let Value::Map(m) = &r else { panic!("{r}") };
            let field = |k: &str| {
                memstored_protocol::rpc::map_get(m, k)
                    .and_then(value_str)
                    .unwrap_or_else(|| panic!("{k} missing from {r}"))
                    .to_string()
            };
            assert!(field("db_0").starts_with("count=1 "), "{r}");
            assert!(field("db_1").starts_with("count=0 "), "{r}");
            assert!(field("db_2").starts_with("count=2 "), "{r}");
            assert!(field("db_0").ends_with(" path=*"), "{r}");
            assert_eq!(field("db_total_count"), "3");
            assert_eq!(field("cnt_set"), "3", "every database's sets");
        }
    }

    #[test]
    fn a_database_answers_to_its_name_path_and_file_name() {
        let n = "/data/casket.kct#bnum=1m";
        for w in [n, "/data/casket.kct", "casket.kct"] {
            assert!(names(n, w), "{w}");
        }
        for w in ["casket", "/data/casket.kch", "bnum=1m"] {
            assert!(!names(n, w), "{w}");
        }
    }
}
