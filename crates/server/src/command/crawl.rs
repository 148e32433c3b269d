//! memcached's LRU crawler, as memstored runs it: a pass that frees expired
//! records (the engine's vacuum) on a blocking thread, and the process-wide
//! counters `stats` shows.

use crate::state::server::Server;
use std::sync::atomic::Ordering::Relaxed;

/// One crawl at a time in the process, as memcached runs one crawler.
pub(crate) static CRAWLING: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// memcached's crawler counters, process-wide as the crawl is: crawls
/// started, records they looked at, expired records they removed.
static CRAWLS: [std::sync::atomic::AtomicU64; 3] =
    [const { std::sync::atomic::AtomicU64::new(0) }; 3];

/// `stats`' crawler lines, memcached's names: `lru_crawler_running`,
/// `lru_crawler_starts`, then `crawler_reclaimed`, `crawler_items_checked`.
pub fn crawler_stats() -> [(&'static str, String); 4] {
    let [starts, checked, reclaimed] = &CRAWLS;
    [
        (
            "lru_crawler_running",
            u8::from(CRAWLING.load(Relaxed)).to_string(),
        ),
        ("lru_crawler_starts", starts.load(Relaxed).to_string()),
        ("crawler_reclaimed", reclaimed.load(Relaxed).to_string()),
        ("crawler_items_checked", checked.load(Relaxed).to_string()),
    ]
}

/// Starts freeing expired records on a blocking thread; false when a pass
/// is already running.
pub fn start_vacuum(srv: &Server) -> bool {
    if CRAWLING.swap(true, Relaxed) {
        return false;
    }
    let db = srv.db.clone();
    let [starts, checked, reclaimed] = &CRAWLS;
    starts.fetch_add(1, Relaxed);
    let pass = move || {
        // The pass looks at every record there is when it starts.
        checked.fetch_add(db.count(), Relaxed);
        match db.vacuum() {
            Ok(n) => {
                reclaimed.fetch_add(n, Relaxed);
                tracing::debug!("lru_crawler crawl: {n} expired records removed");
            }
            // A read-only server has nothing to free.
            Err(e) => tracing::debug!("lru_crawler crawl: {e}"),
        }
        CRAWLING.store(false, Relaxed);
    };
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => drop(rt.spawn_blocking(pass)),
        Err(_) => pass(),
    }
    true
}
