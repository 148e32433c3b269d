//! `stats detail on|off|dump`: memcached's per-prefix counters.
//!
//! With detail on, every text `get`/`gets`/`gat`/`gats` key, storage command
//! and `delete` (and their binary counterparts) counts against the key's
//! prefix — the part before the first `:` — as memcached's `stats_prefix.c`
//! does; keys without a `:` are not counted, nor are meta commands (memcached
//! does not count them either). `dump` lists the prefixes in memcached's
//! order: its table has 256 buckets chosen by MurmurHash3 of the prefix
//! (memcached 1.6's default hash), newest prefix first within a bucket.
//! `stats reset` forgets them all. Off (the default), recording is one
//! relaxed atomic load.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;

/// memcached's `PREFIX_HASH_SIZE`.
const BUCKETS: usize = 256;
/// memcached's default `-D` delimiter.
const DELIMITER: u8 = b':';
/// Distinct prefixes kept; past this new ones are not counted, so a client
/// inventing prefixes cannot grow the table without bound.
const MAX_PREFIXES: usize = 65_536;

#[derive(Debug, Default, Clone)]
struct Prefix {
    gets: u64,
    hits: u64,
    sets: u64,
    deletes: u64,
}

/// The switch and the table.
#[derive(Debug, Default)]
pub struct Detail {
    enabled: AtomicBool,
    table: Mutex<Table>,
}

/// The counters by prefix, found by a hash map; the buckets keep
/// memcached's listing order only. A lookup used to search its bucket's
/// list under the table's lock: with prefixes chosen to share a bucket
/// (murmur3 is unseeded), every counted command scanned up to 65,536 names.
#[derive(Debug, Default)]
struct Table {
    counts: std::collections::HashMap<Vec<u8>, Prefix>,
    /// `BUCKETS` lists of names once something was recorded, oldest first.
    buckets: Vec<Vec<Vec<u8>>>,
}

impl Detail {
    /// `stats detail on` / `off`.
    pub fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Relaxed);
    }

    pub fn enabled(&self) -> bool {
        self.enabled.load(Relaxed)
    }

    /// A `get` of `key`; `hit` if it was found.
    #[inline]
    pub fn get(&self, key: &[u8], hit: bool) {
        if self.enabled() {
            self.record(key, |p| {
                p.gets += 1;
                p.hits += u64::from(hit);
            });
        }
    }

    /// A storage command for `key` (counted whatever its outcome).
    #[inline]
    pub fn set(&self, key: &[u8]) {
        if self.enabled() {
            self.record(key, |p| p.sets += 1);
        }
    }

    /// A `delete` of `key` (counted whatever its outcome).
    #[inline]
    pub fn delete(&self, key: &[u8]) {
        if self.enabled() {
            self.record(key, |p| p.deletes += 1);
        }
    }

    fn record(&self, key: &[u8], count: impl FnOnce(&mut Prefix)) {
        let Some(end) = key.iter().position(|&b| b == DELIMITER) else {
            return;
        };
        let name = key.get(..end).unwrap_or_default();
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = t.counts.get_mut(name) {
            return count(p);
        }
        if t.counts.len() >= MAX_PREFIXES {
            return;
        }
        if t.buckets.is_empty() {
            t.buckets = vec![Vec::new(); BUCKETS];
        }
        let bucket = murmur3_32(name) as usize % BUCKETS;
        if let Some(list) = t.buckets.get_mut(bucket) {
            list.push(name.to_vec());
        }
        let mut p = Prefix::default();
        count(&mut p);
        t.counts.insert(name.to_vec(), p);
    }

    /// `stats detail dump`: `PREFIX <p> get <n> hit <n> set <n> del <n>`
    /// lines and `END`, with `\r\n`.
    pub fn dump(&self) -> Vec<u8> {
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        // Newest first within a bucket, as memcached inserts at the head.
        for name in t.buckets.iter().flat_map(|list| list.iter().rev()) {
            let Some(p) = t.counts.get(name) else {
                continue;
            };
            out.extend_from_slice(b"PREFIX ");
            out.extend_from_slice(name);
            out.extend_from_slice(
                format!(
                    " get {} hit {} set {} del {}\r\n",
                    p.gets, p.hits, p.sets, p.deletes
                )
                .as_bytes(),
            );
        }
        out.extend_from_slice(b"END\r\n");
        out
    }

    /// `stats reset`.
    pub fn clear(&self) {
        *self.table.lock().unwrap_or_else(|e| e.into_inner()) = Table::default();
    }
}

/// MurmurHash3 x86 32-bit, seed 0: memcached 1.6's default `hash()`, used
/// here only to list prefixes in the order memcached does.
fn murmur3_32(data: &[u8]) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h: u32 = 0;
    let mut blocks = data.chunks_exact(4);
    for b in &mut blocks {
        let mut k = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    let mut k: u32 = 0;
    for (i, &b) in tail.iter().enumerate().rev() {
        k ^= u32::from(b) << (8 * i);
    }
    if !tail.is_empty() {
        h ^= k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_known_values() {
        // Reference values of MurmurHash3_x86_32 with seed 0.
        assert_eq!(murmur3_32(b""), 0);
        assert_eq!(murmur3_32(b"hello"), 0x248b_fa47);
        assert_eq!(murmur3_32(b"Hello, world!"), 0xc036_3e43);
    }

    #[test]
    fn counts_by_prefix_only_when_on() {
        let d = Detail::default();
        d.get(b"foo:a", true);
        assert_eq!(d.dump(), b"END\r\n");
        d.set_enabled(true);
        d.get(b"foo:a", true);
        d.get(b"foo:b", false);
        d.set(b"foo:c");
        d.delete(b"nocolon");
        d.delete(b"bar:x");
        let dump = String::from_utf8(d.dump()).unwrap();
        assert!(
            dump.contains("PREFIX foo get 2 hit 1 set 1 del 0\r\n"),
            "{dump}"
        );
        assert!(
            dump.contains("PREFIX bar get 0 hit 0 set 0 del 1\r\n"),
            "{dump}"
        );
        assert!(
            dump.ends_with("END\r\n") && dump.lines().count() == 3,
            "{dump}"
        );
        d.clear();
        assert_eq!(d.dump(), b"END\r\n");
    }

    /// Prefixes past `MAX_PREFIXES` are not counted; those kept are found
    /// by the map and listed bucket by bucket, newest first in a bucket.
    #[test]
    fn many_prefixes_are_capped_and_listed_in_memcached_order() {
        let d = Detail::default();
        d.set_enabled(true);
        for i in 0..MAX_PREFIXES + 10 {
            d.set(format!("p{i}:k").as_bytes());
        }
        d.set(b"p0:k");
        let dump = String::from_utf8(d.dump()).unwrap();
        assert_eq!(dump.lines().count(), MAX_PREFIXES + 1);
        assert!(dump.contains("PREFIX p0 get 0 hit 0 set 2 del 0\r\n"));
        assert!(!dump.contains(&format!("PREFIX p{} ", MAX_PREFIXES)));
        let listed: Vec<&str> = dump
            .lines()
            .filter_map(|l| l.strip_prefix("PREFIX ")?.split(' ').next())
            .collect();
        let key = |name: &str| {
            let n: usize = name[1..].parse().unwrap();
            (
                murmur3_32(name.as_bytes()) as usize % BUCKETS,
                std::cmp::Reverse(n),
            )
        };
        assert!(listed.windows(2).all(|w| key(w[0]) < key(w[1])));
    }
}
