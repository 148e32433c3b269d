//! A hook that hears of each item a cache evicts, for memcached's
//! `watch evictions` (the server's log watchers).
//!
//! Why a hook and not a counter: a watcher prints the item (key, whether it
//! was fetched, its TTL and idle time, its size), which only the pass that
//! evicts it still has. The pass calls the hook under its shard's lock, so
//! a hook only copies what it needs and never calls back into the engine.

/// What a watcher hears of an evicted item.
#[derive(Debug, Clone, Copy)]
pub struct Evicted<'a> {
    pub key: &'a [u8],
    /// Fetched since it was stored (memcached's `fetch=yes`).
    pub fetched: bool,
    /// Absolute expiry in Unix seconds (0: never).
    pub expires_at: u64,
    /// Seconds since it was stored or last fetched (`la=`).
    pub idle_secs: u32,
    /// The value's length in bytes.
    pub size: usize,
}

/// Hears of evictions (`Db::set_eviction_watch`).
pub trait EvictionWatch: Send + Sync {
    /// Whether anyone listens now: when not, an eviction costs one call
    /// to this and nothing more.
    fn watching(&self) -> bool;
    /// One item was evicted (not expired: memcached logs only evictions).
    fn evicted(&self, item: &Evicted<'_>);
}
