use super::*;
use crate::protocols::rpc::call;
use crate::state::server::Config;
use memstored_engine::Db;
use memstored_protocol::rpc::Value;
use std::sync::Arc;

/// A two-shard hash file first, an in-memory tree second.
fn server(dir: &std::path::Path) -> Arc<Server> {
    let (_stop, rx) = tokio::sync::watch::channel(false);
    let open = |name: &str| {
        let db = Arc::new(Db::open(name, true).unwrap());
        Server::new(db, Config::defaults(name), None, rx.clone())
    };
    let first = format!("{}/m.tkh#num_shards=2", dir.display());
    Arc::new(open(&first).with_others(vec![Arc::new(open("+"))]))
}

fn bin(s: &str) -> Value {
    Value::Binary(s.as_bytes().to_vec())
}

/// `name{labels}` → value, from the exposition's sample lines.
fn samples(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

fn stat(srv: &Server, name: &str) -> f64 {
    let all = crate::protocols::stats::listing(srv, None).unwrap();
    all.iter()
        .find(|(k, _)| k == name)
        .unwrap()
        .1
        .parse()
        .unwrap()
}

#[test]
fn memcached_series_agree_with_stats() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server(dir.path());
    for k in ["a", "b", "c"] {
        call(&srv, "set", &[bin(k), bin("v")]).unwrap();
    }
    call(&srv, "get", &[bin("a")]).unwrap();
    let _ = call(&srv, "get", &[bin("nope")]);
    let text = render(&srv);
    assert!(text.ends_with("# EOF\n"), "OpenMetrics ends with # EOF");
    let m = samples(&text);
    assert_eq!(m["memcached_up"], 1.0);
    let steady = GAUGES.iter().chain(COUNTERS).filter(|(stat, _, _)| {
        !matches!(*stat, "uptime" | "time" | "rusage_user" | "rusage_system")
    });
    for (stat_name, metric, _) in steady {
        let key = if COUNTERS.iter().any(|(s, _, _)| s == stat_name) {
            format!("{metric}_total")
        } else {
            metric.to_string()
        };
        let got = m
            .get(&key)
            .unwrap_or_else(|| panic!("{key} missing:\n{text}"));
        assert_eq!(*got, stat(&srv, stat_name), "{key} vs stats {stat_name}");
    }
    assert_eq!(m["memcached_current_items"], 3.0);
    let cmd = |c: &str, s: &str| {
        m[&format!("memcached_commands_total{{command=\"{c}\",status=\"{s}\"}}")]
    };
    assert_eq!(cmd("get", "hit"), stat(&srv, "get_hits"));
    assert_eq!(cmd("get", "hit"), 1.0);
    assert_eq!(cmd("get", "miss"), 1.0);
    assert_eq!(cmd("set", "hit"), 3.0);
    assert!(text.contains("memcached_version{version=\""), "{text}");
}

#[test]
fn shards_report_records_and_maintenance() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server(dir.path());
    for i in 0..20 {
        call(&srv, "set", &[bin(&format!("k{i}")), bin("v")]).unwrap();
    }
    let before = samples(&render(&srv));
    let records: f64 = (0..2)
        .map(|s| before[&format!("memstored_shard_records{{db=\"0\",shard=\"{s}\"}}")])
        .sum();
    assert_eq!(records, 20.0);
    assert!(before["memstored_shard_file_bytes{db=\"0\",shard=\"1\"}"] > 0.0);
    assert_eq!(before["memstored_shard_records{db=\"1\",shard=\"0\"}"], 0.0);
    let last_sync = "memstored_shard_last_sync_timestamp_seconds{db=\"0\",shard=\"0\"}";
    assert!(!before.contains_key(last_sync), "no sync yet");

    let opts = Value::Map(vec![(Value::from("make_backup"), Value::from("t1"))]);
    call(&srv, "synchronize", &[Value::Boolean(true), opts]).unwrap();
    let after = samples(&render(&srv));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    for work in ["sync", "backup"] {
        for shard in 0..2 {
            let at = after[&format!(
                "memstored_shard_last_{work}_timestamp_seconds{{db=\"0\",shard=\"{shard}\"}}"
            )];
            assert!(
                (now - at).abs() < 60.0,
                "{work} shard {shard} at {at}, now {now}"
            );
            let took = after[&format!(
                "memstored_shard_last_{work}_duration_seconds{{db=\"0\",shard=\"{shard}\"}}"
            )];
            assert!((0.0..60.0).contains(&took));
        }
    }
    assert!(
        !after.contains_key("memstored_shard_last_rebuild_timestamp_seconds{db=\"0\",shard=\"0\"}")
    );
    let info = "memstored_database_info{db=\"1\",store=\"+\",engine=\"";
    assert!(render(&srv).contains(info));
}

#[test]
fn classic_text_names_counter_families_with_total() {
    let om = "# HELP a_total_bytes x\n# TYPE a_total_bytes gauge\na_total_bytes 1.0\n\
              # HELP c Things.\n# TYPE c counter\n# UNIT c seconds\nc_total{k=\"v\"} 2\n# EOF\n";
    assert_eq!(
        classic_text(om),
        "# HELP a_total_bytes x\n# TYPE a_total_bytes gauge\na_total_bytes 1.0\n\
         # HELP c_total Things.\n# TYPE c_total counter\nc_total{k=\"v\"} 2\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let srv = server(dir.path());
    let (ct, body) = scrape(
        &srv,
        Some("application/openmetrics-text;version=1.0.0,text/plain;q=0.5"),
    );
    assert_eq!(ct, CONTENT_TYPE);
    assert!(body.ends_with("# EOF\n"));
    let (ct, body) = scrape(&srv, None);
    assert_eq!(ct, CLASSIC_CONTENT_TYPE);
    assert!(
        body.contains("# TYPE memcached_commands_total counter\n"),
        "{body}"
    );
    let steady = |text: &str| {
        let mut m = samples(text);
        m.retain(|k, _| !k.contains("cpu_seconds") && !k.starts_with("memcached_time"));
        m
    };
    assert_eq!(
        steady(&body),
        steady(&render(&srv)),
        "the same samples either way"
    );
}
