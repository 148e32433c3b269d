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
    name: Vec<u8>,
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

#[derive(Debug, Default)]
struct Table {
    /// `BUCKETS` lists once something was recorded, newest first.
    buckets: Vec<Vec<Prefix>>,
    count: usize,
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
        let bucket = murmur3_32(name) as usize % BUCKETS;
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if t.buckets.is_empty() {
            t.buckets = vec![Vec::new(); BUCKETS];
        }
        let full = t.count >= MAX_PREFIXES;
        let Some(list) = t.buckets.get_mut(bucket) else {
            return;
        };
        match list.iter_mut().find(|p| p.name == name) {
            Some(p) => count(p),
            None if !full => {
                let mut p = Prefix {
                    name: name.to_vec(),
                    ..Prefix::default()
                };
                count(&mut p);
                list.insert(0, p);
                t.count += 1;
            }
            None => {}
        }
    }

    /// `stats detail dump`: `PREFIX <p> get <n> hit <n> set <n> del <n>`
    /// lines and `END`, with `\r\n`.
    pub fn dump(&self) -> Vec<u8> {
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        for p in t.buckets.iter().flatten() {
            out.extend_from_slice(b"PREFIX ");
            out.extend_from_slice(&p.name);
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
}
