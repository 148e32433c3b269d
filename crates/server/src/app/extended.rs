//! memcached's `-o` options (`--extended`, a comma-separated list), read
//! as the database name's parameters are: those with a meaning here act,
//! those that tune memcached's own machinery (slabs, its LRU maintainer,
//! hash table, log buffers) are accepted and logged as ignored, and those
//! that ask for something memstored does not do (extstore, the proxy,
//! TLS it cannot honour) or that nobody defined are an error
//! saying so, so that a memcached command line either starts as meant or
//! not at all. The `ssl_*` options are `-Z`'s (`tls_option`).

use crate::state::tls::{KeyFormat, TlsSettings, VerifyMode};

/// What `-o` asks of memstored.
#[derive(Debug, Default, PartialEq)]
pub struct Extended {
    /// `lru_crawler` / `no_lru_crawler`: the crawler's state at start
    /// (`lru_crawler enable|disable` changes it later).
    pub lru_crawler: Option<bool>,
    /// `slab_automove=N`, reported in `stats settings`.
    pub slab_automove: Option<u32>,
    /// `idle_timeout=N`: close connections idle more than N seconds
    /// (`net::idle`); 0 is memcached's default, never.
    pub idle_timeout: Option<u32>,
    /// `watcher_logbuf_size=KiB`: each log watcher's buffer (`watch`).
    pub watcher_logbuf: Option<usize>,
    /// `-W` / `--disable-watch` (not an `-o` option; set beside them).
    pub watch_disabled: bool,
    /// Options accepted and ignored, as given.
    pub ignored: Vec<String>,
    /// The `ssl_*` options (used with `-Z`, ignored without, as memcached).
    pub tls: TlsSettings,
    /// Whether any `ssl_*` option was given.
    pub tls_given: bool,
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
            "idle_timeout" => {
                // memcached reads it with atoi; a number is asked for here.
                let n = value.ok_or("Missing numeric argument for idle_timeout")?;
                let secs = n
                    .parse::<u32>()
                    .map_err(|_| format!("-o idle_timeout={n}: expected a number of seconds"))?;
                out.idle_timeout = (secs > 0).then_some(secs);
            }
            "watcher_logbuf_size" => {
                let n = value.ok_or("Missing watcher_logbuf_size argument")?;
                let kib = n
                    .parse::<usize>()
                    .ok()
                    .filter(|k| *k > 0 && *k <= 1 << 20)
                    .ok_or_else(|| {
                        format!("-o watcher_logbuf_size={n}: expected KiB, from 1 to 1048576")
                    })?;
                out.watcher_logbuf = Some(kib << 10);
            }
            _ if IGNORED.contains(&key) => out.ignored.push(item.to_string()),
            _ if key.starts_with("ssl_") && tls_option(&mut out.tls, key, value)? => {
                out.tls_given = true
            }
            _ => return Err(refusal(key)),
        }
    }
    Ok(out)
}

/// One `ssl_*` option into `tls`, with memcached's meaning (its tls.c);
/// false: no such `ssl_` option (refused by the caller). What rustls
/// cannot do is refused with the reason: TLS 1.0 and 1.1, OpenSSL engine
/// keys, kernel TLS.
fn tls_option(tls: &mut TlsSettings, key: &str, value: Option<&str>) -> Result<bool, String> {
    let arg = || value.ok_or_else(|| format!("Missing {key} argument"));
    let number = |max: u32| {
        arg()?
            .parse::<u32>()
            .ok()
            .filter(|n| *n <= max)
            .ok_or_else(|| format!("-o {key}={}: could not parse argument", value.unwrap_or("")))
    };
    match key {
        "ssl_chain_cert" => tls.chain_cert = Some(arg()?.into()),
        "ssl_key" => tls.key = Some(arg()?.into()),
        "ssl_ca_cert" => tls.ca_cert = Some(arg()?.into()),
        "ssl_ciphers" => tls.ciphers = Some(arg()?.to_string()),
        "ssl_session_cache" => tls.session_cache = true,
        "ssl_wbuf_size" => tls.wbuf_size = number(u32::MAX >> 10)?.max(1) << 10,
        "ssl_verify_mode" => {
            let modes = [VerifyMode::None, VerifyMode::Request, VerifyMode::Require, VerifyMode::Once];
            tls.verify_mode = modes[number(3).map_err(|_| {
                "Invalid ssl_verify_mode: 0 (none), 1 (request), 2 (require) or 3 (once)".to_string()
            })? as usize];
        }
        "ssl_keyformat" => {
            tls.keyformat = match number(u32::MAX)? {
                1 => KeyFormat::Pem,
                2 => KeyFormat::Der,
                n => return Err(format!("-o ssl_keyformat={n}: memstored reads PEM (1) or DER (2) keys; OpenSSL engine keys are not available with rustls")),
            }
        }
        "ssl_min_version" => {
            tls.min_version = match number(u32::MAX)? {
                n @ (0 | 1) => return Err(format!("-o ssl_min_version={n}: memstored's TLS (rustls) speaks TLS 1.2 and 1.3 only; use 2 (tlsv1.2, memcached's default) or 3 (tlsv1.3)")),
                2 => 2,
                3 => 3,
                n => return Err(format!("-o ssl_min_version={n}: Invalid ssl_min_version; 2 (tlsv1.2) or 3 (tlsv1.3)")),
            }
        }
        "ssl_kernel_tls" => {
            return Err("-o ssl_kernel_tls: memstored's TLS (rustls) does not hand connections to kernel TLS".into())
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Why an `-o` option memstored does not ignore is refused.
fn refusal(key: &str) -> String {
    let why = if key.starts_with("ext_") {
        "memstored has no extstore; for data that outgrows memory, serve a persistent store (e.g. -s 'casket.tkh#num_shards=8')"
    } else if key.starts_with("ssl_") {
        "memcached 1.6 has no such TLS option either (see -h)"
    } else if key.starts_with("proxy") {
        "memstored is not a proxy"
    } else {
        let known = [
            "lru_crawler",
            "no_lru_crawler",
            "slab_automove",
            "idle_timeout",
        ];
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
        assert!(of("ssl_bogus=a").unwrap_err().contains("TLS option"));
        assert_eq!(of("idle_timeout=30").unwrap().idle_timeout, Some(30));
        assert_eq!(of("idle_timeout=0").unwrap().idle_timeout, None);
        assert!(of("idle_timeout").unwrap_err().contains("Missing numeric"));
        assert!(of("idle_timeout=x").unwrap_err().contains("seconds"));
        assert!(of("bogus").unwrap_err().contains("no such option"));
        assert_eq!(
            of("lru_crawlr").unwrap_err(),
            "-o lru_crawlr: no such option; did you mean \"lru_crawler\"?"
        );
        assert!(of("slab_automove=7").unwrap_err().contains("0, 1 or 2"));
        let two = parse(&["modern".into(), "no_lru_crawler".into()]).unwrap();
        assert!(!two.tls_given);
        assert_eq!(two.lru_crawler, Some(false));
    }

    #[test]
    fn ssl_options_read_as_memcached_reads_them() {
        let e = of(
            "ssl_chain_cert=/c.pem,ssl_key=/k.pem,ssl_ca_cert=/ca.pem,ssl_verify_mode=2,\
                    ssl_keyformat=2,ssl_wbuf_size=64,ssl_session_cache,ssl_min_version=3,\
                    ssl_ciphers=ECDHE-RSA-AES128-GCM-SHA256",
        )
        .unwrap();
        assert!(e.tls_given);
        let t = e.tls;
        assert_eq!(
            t.chain_cert.as_deref(),
            Some(std::path::Path::new("/c.pem"))
        );
        assert_eq!(t.key.as_deref(), Some(std::path::Path::new("/k.pem")));
        assert_eq!(t.ca_cert.as_deref(), Some(std::path::Path::new("/ca.pem")));
        assert_eq!(t.verify_mode, VerifyMode::Require);
        assert_eq!(t.verify_mode.openssl_flags(), 3);
        assert_eq!(t.keyformat, KeyFormat::Der);
        assert_eq!(t.wbuf_size, 65536);
        assert!(t.session_cache);
        assert_eq!(t.min_version_text(), "tlsv1.3");
        assert_eq!(t.ciphers.as_deref(), Some("ECDHE-RSA-AES128-GCM-SHA256"));
        for (bad, why) in [
            ("ssl_min_version=0", "TLS 1.2 and 1.3 only"),
            ("ssl_min_version=1", "TLS 1.2 and 1.3 only"),
            ("ssl_min_version=9", "Invalid"),
            ("ssl_verify_mode=4", "Invalid ssl_verify_mode"),
            ("ssl_keyformat=3", "engine"),
            ("ssl_kernel_tls", "kernel TLS"),
            ("ssl_chain_cert", "Missing ssl_chain_cert"),
        ] {
            assert!(of(bad).unwrap_err().contains(why), "{bad}");
        }
    }
}
