//! `stats items`, `stats slabs` and `stats sizes`: memcached's per-class
//! listings, with every item in one class (memstored has no slabs).

use crate::command::crawler_stats;
use crate::state::server::Server;

/// The slab class every item is reported under (memstored has no slabs;
/// `stats cachedump` uses the same class, see cachedump.rs).
pub const THE_CLASS: u32 = 1;

/// `stats items`: every item is in class 1; nothing when empty (as
/// memcached with no items). Counters memstored does not keep (LRU
/// segments) are 0.
pub fn items(srv: &Server) -> Vec<(String, String)> {
    let n = srv.db.count();
    if n == 0 {
        return Vec::new();
    }
    let st = srv.db.stats();
    let mut v = vec![
        ("number", n.to_string()),
        ("number_hot", "0".into()),
        ("number_warm", "0".into()),
        ("number_cold", n.to_string()),
        ("age_hot", "0".into()),
        ("age_warm", "0".into()),
        ("age", "0".into()),
        ("mem_requested", st.bytes.to_string()),
        ("evicted", st.evictions.to_string()),
    ];
    let unfetched = [
        ("expired_unfetched", st.expired_unfetched.to_string()),
        ("evicted_unfetched", st.evicted_unfetched.to_string()),
    ];
    for zero in [
        "evicted_nonzero",
        "evicted_time",
        "outofmemory",
        "tailrepairs",
        "reclaimed",
    ] {
        v.push((zero, "0".into()));
    }
    v.extend(unfetched);
    v.push(("evicted_active", "0".into()));
    // Every record is in the one class, so the crawls' totals are its own.
    let [_, _, reclaimed, checked] = crawler_stats();
    v.extend([reclaimed, checked]);
    for zero in [
        "lrutail_reflocked",
        "moves_to_cold",
        "moves_to_warm",
        "moves_within_lru",
        "direct_reclaims",
        "hits_to_hot",
        "hits_to_warm",
        "hits_to_cold",
        "hits_to_temp",
    ] {
        v.push((zero, "0".into()));
    }
    v.into_iter()
        .map(|(k, val)| (format!("items:{THE_CLASS}:{k}"), val))
        .collect()
}

/// `stats slabs`: class 1's counters when there are items, then
/// `active_slabs` and `total_malloced` (the store's bytes).
pub fn slabs(srv: &Server) -> Vec<(String, String)> {
    let n = srv.db.count();
    let c = &srv.counters;
    let mut v = Vec::new();
    if n > 0 {
        for (k, val) in [
            ("used_chunks", n),
            ("get_hits", c.sum(|r| &r.get_hits)),
            ("cmd_set", c.sum(|r| &r.cmd_set)),
            ("delete_hits", c.sum(|r| &r.delete_hits)),
            ("incr_hits", c.sum(|r| &r.incr_hits)),
            ("decr_hits", c.sum(|r| &r.decr_hits)),
            ("cas_hits", c.sum(|r| &r.cas_hits)),
            ("cas_badval", c.sum(|r| &r.cas_badval)),
            ("touch_hits", c.sum(|r| &r.touch_hits)),
        ] {
            v.push((format!("{THE_CLASS}:{k}"), val.to_string()));
        }
    }
    v.push(("active_slabs".into(), u64::from(n > 0).to_string()));
    let bytes = if n > 0 { srv.db.stats().bytes } else { 0 };
    v.push(("total_malloced".into(), bytes.to_string()));
    v
}

/// `stats sizes`: memcached answers `sizes_status disabled` unless started
/// with `-o track_sizes`; memstored does not track sizes.
pub fn sizes() -> Vec<(String, String)> {
    vec![("sizes_status".into(), "disabled".into())]
}
