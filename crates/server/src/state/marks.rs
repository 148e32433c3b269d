//! memcached's per-item `ITEM_STALE` and `ITEM_TOKEN_SENT` bits, which the
//! meta protocol's anti-dogpiling rests on: `md <key> I` marks an item stale
//! instead of removing it, `mg` then serves the stale value with `X` and hands
//! one client — and only one — the `W` ("you won: recache it") flag, every
//! later fetch gets `Z` ("somebody else is on it"); `mg N<ttl>` (vivify on
//! miss) and `mg R<ttl>` (TTL below the threshold) win the same token.
//!
//! Why beside the store and not in it: the stores are shared with the
//! embedded library and some are files, and these bits are a cache's
//! ephemeral state (memcached loses them on restart too). A mark is tied to
//! the CAS of the item version it was made for: every write gives the item a
//! new CAS, so a mark whose CAS no longer matches belongs to an older version
//! and is void — exactly memcached's behaviour, where a new item starts with
//! no flags. Only keys that took part in the protocol above have a mark.
//!
//! Bounded: at most `STRIPES * PER_STRIPE` marks. When a stripe is full, an
//! arbitrary mark is forgotten; the worst that does is hand out one more `W`
//! for that key (a second client recaches too), never lose data.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const STRIPES: usize = 16;
const PER_STRIPE: usize = 4096;

/// What memcached keeps in an item's flags, for one item version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mark {
    /// The CAS of the item version this mark is about.
    pub cas: u64,
    /// `ITEM_STALE`: invalidated by `md I` (or written by `ms I` with an
    /// older CAS); served with `X` until rewritten.
    pub stale: bool,
    /// `ITEM_TOKEN_SENT`: a client already got `W` for this version.
    pub token_sent: bool,
}

/// The flags an `mg` adds after the ones the client asked for, in
/// memcached's order: `Z`, then `X`, then `W`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tokens {
    pub already_sent: bool,
    pub stale: bool,
    pub won: bool,
}

/// One lock stripe: key to the mark of its current (or an older) version.
type Stripe = Mutex<HashMap<Box<[u8]>, Mark>>;

pub struct Marks {
    stripes: Box<[Stripe]>,
    hasher: RandomState,
    /// How many marks are held, so that a fetch with nothing to look for
    /// skips the stripe lock entirely (the common case by far).
    live: AtomicUsize,
}

impl Default for Marks {
    fn default() -> Self {
        Marks {
            stripes: (0..STRIPES).map(|_| Mutex::new(HashMap::new())).collect(),
            hasher: RandomState::new(),
            live: AtomicUsize::new(0),
        }
    }
}

impl Marks {
    fn stripe(&self, key: &[u8]) -> std::sync::MutexGuard<'_, HashMap<Box<[u8]>, Mark>> {
        let i = (self.hasher.hash_one(key) as usize) % STRIPES;
        // A poisoned stripe only means another thread panicked mid-update of
        // a plain map of flags; its content is still usable.
        self.stripes[i].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The mark of the item version with `cas`, if any. Drops a mark left by
    /// an older version.
    pub fn get(&self, key: &[u8], cas: u64) -> Mark {
        if self.is_empty() {
            return Mark::default();
        }
        let mut map = self.stripe(key);
        match map.get(key) {
            Some(m) if m.cas == cas => *m,
            Some(_) => {
                map.remove(key);
                self.live.fetch_sub(1, Ordering::Relaxed);
                Mark::default()
            }
            None => Mark::default(),
        }
    }

    /// True when no key has a mark.
    pub fn is_empty(&self) -> bool {
        self.live.load(Ordering::Relaxed) == 0
    }

    /// What an `mg` of the version with `cas` reports, and the token it wins:
    /// `recache_due` (`R` threshold passed) wins unless a token was sent; a
    /// stale item without a sent token always wins (a vivified item got its
    /// token from `vivify`). Granting is atomic per key, so of concurrent
    /// fetches exactly one gets `W`.
    pub fn fetch(&self, key: &[u8], cas: u64, recache_due: bool) -> Tokens {
        if !recache_due && self.is_empty() {
            return Tokens::default();
        }
        let mut map = self.stripe(key);
        let mark = match map.get(key) {
            Some(m) if m.cas == cas => *m,
            _ => Mark::default(),
        };
        let won = !mark.token_sent && (recache_due || mark.stale);
        if won {
            self.insert(
                &mut map,
                key,
                Mark {
                    cas,
                    stale: mark.stale,
                    token_sent: true,
                },
            );
        }
        Tokens {
            already_sent: mark.token_sent,
            stale: mark.stale,
            won,
        }
    }

    /// Runs `create` (an add of the empty placeholder for `mg N`) with the
    /// key's stripe locked, and on success marks the new version as having
    /// sent its token. Holding the lock closes the window in which a second
    /// client's add fails but its fetch would not yet see the token: it now
    /// sees `Z`, as with memcached, which does both under the item lock.
    pub fn vivify<E>(&self, key: &[u8], create: impl FnOnce() -> Result<u64, E>) -> Result<u64, E> {
        let mut map = self.stripe(key);
        let cas = create()?;
        self.insert(
            &mut map,
            key,
            Mark {
                cas,
                stale: false,
                token_sent: true,
            },
        );
        Ok(cas)
    }

    /// Records the mark of a new item version.
    pub fn set(&self, key: &[u8], mark: Mark) {
        self.insert(&mut self.stripe(key), key, mark);
    }

    /// Forgets every mark (`flush_all`).
    pub fn clear(&self) {
        for s in self.stripes.iter() {
            let mut map = s.lock().unwrap_or_else(|e| e.into_inner());
            self.live.fetch_sub(map.len(), Ordering::Relaxed);
            map.clear();
        }
    }

    fn insert(&self, map: &mut HashMap<Box<[u8]>, Mark>, key: &[u8], mark: Mark) {
        if let Some(m) = map.get_mut(key) {
            *m = mark;
            return;
        }
        if map.len() >= PER_STRIPE {
            if let Some(victim) = map.keys().next().cloned() {
                map.remove(&victim);
                self.live.fetch_sub(1, Ordering::Relaxed);
            }
        }
        map.insert(key.into(), mark);
        self.live.fetch_add(1, Ordering::Relaxed);
    }

    /// How many marks are held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.stripes
            .iter()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).len())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_winner_then_already_sent() {
        let m = Marks::default();
        let first = m.fetch(b"k", 7, true);
        assert_eq!(
            first,
            Tokens {
                won: true,
                ..Tokens::default()
            }
        );
        let second = m.fetch(b"k", 7, true);
        assert_eq!(
            second,
            Tokens {
                already_sent: true,
                ..Tokens::default()
            }
        );
    }

    #[test]
    fn a_new_version_voids_the_mark() {
        let m = Marks::default();
        m.set(
            b"k",
            Mark {
                cas: 3,
                stale: true,
                token_sent: true,
            },
        );
        assert_eq!(m.fetch(b"k", 4, false), Tokens::default());
        assert_eq!(m.get(b"k", 4), Mark::default());
        assert_eq!(m.len(), 0, "the outdated mark was dropped");
    }

    #[test]
    fn stale_wins_once_without_recache_flag() {
        let m = Marks::default();
        m.set(
            b"k",
            Mark {
                cas: 9,
                stale: true,
                token_sent: false,
            },
        );
        let t = m.fetch(b"k", 9, false);
        assert!(t.stale && t.won && !t.already_sent);
        let t = m.fetch(b"k", 9, false);
        assert!(t.stale && !t.won && t.already_sent);
    }

    #[test]
    fn bounded() {
        let m = Marks::default();
        for i in 0..(STRIPES * PER_STRIPE * 2) as u64 {
            m.set(
                &i.to_le_bytes(),
                Mark {
                    cas: 1,
                    stale: false,
                    token_sent: true,
                },
            );
        }
        assert!(m.len() <= STRIPES * PER_STRIPE);
        assert_eq!(m.live.load(Ordering::Relaxed), m.len());
        m.clear();
        assert!(m.is_empty());
    }
}
