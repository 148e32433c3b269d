//! memcached's `-o` options (`--extended`, a comma-separated list), read
//! as the database name's parameters are: those with a meaning here act,
//! those that tune memcached's own machinery (slabs, its LRU maintainer,
//! hash table, log buffers) are accepted and logged as ignored, and those
//! that ask for something memstored does not do (extstore, TLS, the
//! proxy, idle timeouts) or that nobody defined are an error saying so,
//! so that a memcached command line either starts as meant or not at all.

/// What `-o` asks of memstored.
#[derive(Debug, Default, PartialEq)]
pub struct Extended {
    /// `lru_crawler` / `no_lru_crawler`: the crawler's state at start
    /// (`lru_crawler enable|disable` changes it later).
    pub lru_crawler: Option<bool>,
    /// `slab_automove=N`, reported in `stats settings`.
    pub slab_automove: Option<u32>,
    /// Options accepted and ignored, as given.
    pub ignored: Vec<String>,
}

/// Tuning of memcached internals memstored does not have.
const IGNORED: &[&str] = &[
    "maxconns_fast",
    "no_maxconns_fast",
    "hashpower",
    "tail_repair_time",
    "hash_algorithm",
    "lru_crawler_sleep",
    "lru_crawler_tocrawl",
    "read_buf_mem_limit",
    "resp_obj_mem_limit",
    "lru_maintainer",
    "no_lru_maintainer",
    "lru_segmented",
    "hot_lru_pct",
    "warm_lru_pct",
    "hot_max_factor",
    "warm_max_factor",
    "temporary_ttl",
    "slab_chunk_max",
    "slab_reassign",
    "no_slab_reassign",
    "slab_automove_ratio",
    "slab_automove_freeratio",
    "slab_automove_window",
    "watcher_logbuf_size",
    "worker_logbuf_size",
    "track_sizes",
    "no_hashexpand",
    "modern",
    "no_modern",
    "inline_ascii_resp",
    "no_inline_ascii_resp",
    "drop_privileges",
    "no_drop_privileges",
    "sock_cookie_id",
    "slab_sizes",
    "no_chunked_items",
    // memcached's own test suite passes it to every server it starts.
    "relaxed_privileges",
];

/// Parses the `-o` lists given (each `a,b=c,...`).
pub fn parse(lists: &[String]) -> Result<Extended, String> {
    let mut out = Extended::default();
    for item in lists.iter().flat_map(|l| l.split(',')).map(str::trim) {
        if item.is_empty() {
            continue;
        }
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (item, None),
        };
        match key {
            "lru_crawler" => out.lru_crawler = Some(true),
            "no_lru_crawler" => out.lru_crawler = Some(false),
            "no_slab_automove" => out.slab_automove = Some(0),
            "slab_automove" => {
                let n = value.unwrap_or("1");
                let level = n.parse().ok().filter(|l| *l <= 2);
                out.slab_automove = Some(level.ok_or_else(|| {
                    format!("-o slab_automove={n}: expected 0, 1 or 2, as memcached")
                })?);
            }
            _ if IGNORED.contains(&key) => out.ignored.push(item.to_string()),
            _ => return Err(refusal(key)),
        }
    }
    Ok(out)
}

/// Why an `-o` option memstored does not ignore is refused.
fn refusal(key: &str) -> String {
    let why = if key.starts_with("ext_") {
        "memstored has no extstore; for data that outgrows memory, serve a persistent store (e.g. -s 'casket.tkh#num_shards=8')"
    } else if key.starts_with("ssl_") {
        "memstored does not serve TLS"
    } else if key.starts_with("proxy") {
        "memstored is not a proxy"
    } else if key == "idle_timeout" {
        "memstored does not close idle connections; -c bounds how many there are"
    } else {
        let known = ["lru_crawler", "no_lru_crawler", "slab_automove"];
        return match memstored_engine::name::closest(
            key,
            known.into_iter().chain(IGNORED.iter().copied()),
        ) {
            Some(word) => format!("-o {key}: no such option; did you mean {word:?}?"),
            None => format!("-o {key}: memcached 1.6 has no such option either"),
        };
    };
    format!("-o {key}: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(list: &str) -> Result<Extended, String> {
        parse(&[list.to_string()])
    }

    #[test]
    fn options_act_are_ignored_or_are_refused() {
        let e = of("modern,no_lru_crawler,slab_automove=2,hashpower=20").unwrap();
        assert_eq!(e.lru_crawler, Some(false));
        assert_eq!(e.slab_automove, Some(2));
        assert_eq!(e.ignored, ["modern", "hashpower=20"]);
        assert_eq!(of("lru_crawler").unwrap().lru_crawler, Some(true));
        assert!(of("ext_path=/tmp/x:1G").unwrap_err().contains("extstore"));
        assert!(of("ssl_chain_cert=a").unwrap_err().contains("TLS"));
        assert!(of("idle_timeout=30").unwrap_err().contains("idle"));
        assert!(of("bogus").unwrap_err().contains("no such option"));
        assert_eq!(
            of("lru_crawlr").unwrap_err(),
            "-o lru_crawlr: no such option; did you mean \"lru_crawler\"?"
        );
        assert!(of("slab_automove=7").unwrap_err().contains("0, 1 or 2"));
        let two = parse(&["modern".into(), "no_lru_crawler".into()]).unwrap();
        assert_eq!(two.lru_crawler, Some(false));
    }
}
