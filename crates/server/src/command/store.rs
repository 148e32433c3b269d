//! set/add/replace/append/prepend/cas (text, binary, meta `ms`), RPC
//! set/add/replace/append and gRPC Set/Append.

use super::{check_size, Absence, Outcome};
use crate::state::counters::bump;
use crate::state::marks::Mark;
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::{Action, Error, StoreMode, StoreOptions};

/// How a store treats the present record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Set,
    Add,
    Replace,
    /// memcached's append: only onto a present record, keeping its flags and expiry.
    Append,
    Prepend,
    /// Kyoto Tycoon's append: onto a present record or as a new one; the
    /// expiry is set when given, else kept.
    AppendOrSet {
        expires_at: Option<u64>,
    },
}

/// Stores one record.
#[derive(Debug, Clone)]
pub struct Store {
    pub key: Bytes,
    /// Owned: a slice of the read buffer would pin the whole buffer.
    pub value: Bytes,
    pub kind: StoreKind,
    pub flags: u32,
    /// Absolute expiry (0 = never).
    pub expires_at: u64,
    /// Store only if the record has this CAS (memcached `cas`, `ms C`).
    pub cas: Option<u64>,
}

impl Store {
    /// `Stored`, `NotStored`, `NotFound` (a CAS store of an absent record),
    /// `Exists` (CAS mismatch), `TooLarge` (the value, or the value an
    /// append would build, is over `-I` or over what the cache holds),
    /// `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        self.apply_as(srv, b"", None)
    }

    /// [`Store::apply`] whose `AppendOrSet` puts `delim` between the present
    /// value and the new one (Tkrzw's `Append`); other kinds ignore it.
    pub fn apply_delimited(&self, srv: &Server, delim: &[u8]) -> Outcome {
        self.apply_as(srv, delim, None)
    }

    /// [`Store::apply`] that gives the stored item the CAS `new_cas` when
    /// one is given (memcached's meta `E`); `AppendOrSet` ignores it.
    pub fn apply_with_cas(&self, srv: &Server, new_cas: Option<u64>) -> Outcome {
        self.apply_as(srv, b"", new_cas)
    }

    fn apply_as(&self, srv: &Server, delim: &[u8], new_cas: Option<u64>) -> Outcome {
        self.fetch_watched(srv);
        let c = srv.counters.here();
        bump(&c.cmd_set);
        let cap = srv.cfg.max_item_size;
        if let Err(too_large) = check_size(self.value.len(), cap) {
            bump(&c.store_too_large);
            if self.kind == StoreKind::Set {
                drop_stale(srv, &self.key);
            }
            return too_large;
        }
        let result = match self.kind {
            StoreKind::AppendOrSet { expires_at } => {
                srv.db
                    .append_with(&self.key, &self.value, delim, expires_at, cap)
            }
            kind => {
                let mode = match kind {
                    StoreKind::Add => StoreMode::Add,
                    StoreKind::Replace => StoreMode::Replace,
                    StoreKind::Append => StoreMode::Append,
                    StoreKind::Prepend => StoreMode::Prepend,
                    _ => StoreMode::Set,
                };
                let opts = StoreOptions {
                    flags: self.flags,
                    expires_at: self.expires_at,
                    cas: self.cas,
                };
                srv.db
                    .store_capped(&self.key, self.value.clone(), mode, opts, cap, new_cas)
            }
        };
        self.finish(srv, result)
    }

    /// Counts a store's result and turns it into its outcome.
    fn finish(&self, srv: &Server, result: memstored_engine::Result<u64>) -> Outcome {
        let o = self.counted(srv, result);
        self.store_watched(srv, &o);
        o
    }

    /// memcached fetches the item a store replaces (`do_store_item`), and
    /// its fetchers' watchers see that fetch: the present value's size, or
    /// a miss. Read only while someone watches.
    fn fetch_watched(&self, srv: &Server) {
        use crate::state::watch::{kind, Found};
        if !srv.watch.wants(kind::FETCHERS) {
            return;
        }
        match srv.db.get_record(&self.key) {
            Ok(Some(r)) => srv.watch.item_get(&self.key, Found::Found, r.value.len()),
            _ => srv.watch.item_get(&self.key, Found::NotFound, 0),
        }
    }

    /// The store as memcached's mutations watchers see it (`item_store`).
    fn store_watched(&self, srv: &Server, o: &Outcome) {
        if !srv.watch.wants(crate::state::watch::kind::MUTATIONS) {
            return;
        }
        let status = match o {
            Outcome::Stored { .. } => "stored",
            Outcome::Exists => "exists",
            Outcome::NotFound => "not_found",
            Outcome::TooLarge { .. } => "too_large",
            Outcome::NoMemory => "no_memory",
            _ => "not_stored",
        };
        let cmd = match self.kind {
            StoreKind::Set if self.cas.is_some() => "cas",
            StoreKind::Set => "set",
            StoreKind::Add => "add",
            StoreKind::Replace => "replace",
            StoreKind::Append | StoreKind::AppendOrSet { .. } => "append",
            StoreKind::Prepend => "prepend",
        };
        let expires_at = match self.kind {
            StoreKind::AppendOrSet { expires_at } => expires_at.unwrap_or(0),
            _ => self.expires_at,
        };
        srv.watch
            .item_store(&self.key, status, cmd, expires_at, self.value.len());
    }

    fn counted(&self, srv: &Server, result: memstored_engine::Result<u64>) -> Outcome {
        let c = srv.counters.here();
        let with_cas = self.cas.is_some();
        match result {
            Ok(cas) => {
                bump(&c.total_items);
                if with_cas {
                    bump(&c.cas_hits);
                }
                Outcome::Stored { cas }
            }
            // memcached's NREAD_CAS: only a set with a CAS answers NOT_FOUND;
            // replace/append/prepend of an absent item are NOT_STORED, CAS or not.
            Err(Error::NotFound(_)) if with_cas && self.kind == StoreKind::Set => {
                bump(&c.cas_misses);
                Outcome::NotFound
            }
            Err(Error::NotFound(_)) => Outcome::NotStored(Absence::Absent),
            Err(Error::CasMismatch) => {
                bump(&c.cas_badval);
                Outcome::Exists
            }
            Err(e) => {
                let counter = match e {
                    Error::TooLarge { .. } => Some(&c.store_too_large),
                    Error::NoMemory { .. } => Some(&c.store_no_memory),
                    _ => None,
                };
                if let Some(counter) = counter {
                    bump(counter);
                    if self.kind == StoreKind::Set {
                        drop_stale(srv, &self.key);
                    }
                }
                Outcome::from_error(e)
            }
        }
    }

    /// meta `ms <key> C<cas> I`: memcached's `CAS_ALLOW_STALE`. A CAS older
    /// than the item's still stores the value, keeping the item's TTL, and
    /// the new version is stale (keeping a recache token already sent), so
    /// readers see `X` until a write with the current CAS lands; a CAS that is
    /// not older is a plain mismatch. One atomic engine call. Without a CAS,
    /// or for append/prepend, this is [`Store::apply`].
    pub fn apply_allowing_stale(&self, srv: &Server) -> Outcome {
        let (Some(want), StoreKind::Set | StoreKind::Replace) = (self.cas, self.kind) else {
            return self.apply(srv);
        };
        self.fetch_watched(srv);
        bump(&srv.counters.here().cmd_set);
        if let Err(too_large) = check_size(self.value.len(), srv.cfg.max_item_size) {
            return too_large;
        }
        let r = srv.db.process(&self.key, |cur| {
            let cur = cur.ok_or_else(|| Error::NotFound("no such record".into()))?;
            let (expires_at, stale) = if cur.meta.cas == want {
                (self.expires_at, false)
            } else if want < cur.meta.cas {
                (cur.meta.expires_at, true)
            } else {
                return Err(Error::CasMismatch);
            };
            let action = Action::Put {
                value: self.value.clone(),
                flags: self.flags,
                expires_at,
            };
            Ok((action, (stale, cur.meta.cas)))
        });
        let r = r.map(|((stale, old_cas), cas)| {
            let cas = cas.unwrap_or(0);
            if stale {
                let token_sent = srv.marks.get(&self.key, old_cas).token_sent;
                let mark = Mark {
                    cas,
                    stale: true,
                    token_sent,
                };
                srv.marks.set(&self.key, mark);
            }
            cas
        });
        self.finish(srv, r)
    }
}

/// The answer to a store whose declared length is over `-I`, decided before
/// its body is read (the body is then skipped, never buffered). Counts and
/// drops the old value of a `set` like [`Store::apply`] does.
pub fn refuse_oversized(srv: &Server, key: &[u8], kind: StoreKind, size: u64) -> Outcome {
    let c = srv.counters.here();
    bump(&c.cmd_set);
    bump(&c.store_too_large);
    if kind == StoreKind::Set {
        drop_stale(srv, key);
    }
    Outcome::TooLarge {
        size,
        cap: srv.cfg.max_item_size,
    }
}

/// memcached unlinks the old item when a `set` fails for size or memory: a client
/// that just failed to replace a value must not go on reading the old one.
/// Counts a request refused "out of memory" because the connection memory
/// budget cannot hold it (as memcached counts an item it cannot allocate).
pub fn count_refused_for_memory(srv: &Server) {
    bump(&srv.counters.here().store_no_memory);
}

pub(super) fn drop_stale(srv: &Server, key: &[u8]) {
    if let Err(e) = srv.db.remove(key) {
        if !e.is_not_found() {
            tracing::debug!("dropping the old value of a refused set: {e}");
        }
    }
}
