//! Kyoto Tycoon's binary protocol on the main port (first byte 0xB0–0xBF):
//! set_bulk, remove_bulk and get_bulk as `ktserver`'s `do_bin_*` serve them,
//! through the command layer so counters, `-I` and read-only hold.
//!
//! Where we follow `ktserver` and where not:
//! - `dbidx` picks the database by its place on the command line (`-s A -s
//!   B`: 0 is A, 1 is B; `crate::state::databases`). A record whose `dbidx` names
//!   no database is skipped (not a hit, not an error), as `ktserver` does.
//! - The first record that fails ends the request: no further records are
//!   applied and the reply is the error byte 0xBF. `ktserver` then hangs up
//!   because it has not read the rest; we have, so the connection goes on.
//! - A size over `-I` (or the frame limit) is answered 0xBF and the
//!   connection closed, as `ktserver` does for sizes over its own limit.
//! - play_script answers 0xBF (no scripting here, as a `ktserver` without
//!   `-scr`).
//! - replication (0xB1) turns the connection into a stream of the update
//!   log (`replication::kt_stream`); without `--ulog-dir` it answers 0xBF
//!   and hangs up, as a `ktserver` without `-ulog`.
//! - The protocol has no authentication, so a server with `--sasl-file`
//!   refuses these connections outright (`connection::sniff`).

use crate::command::{DeleteMany, GetMany, Outcome, StoreMany};
use crate::protocols::out::{Out, SPLICE_FROM};
use crate::protocols::session::{Cx, Flow, Session};
use crate::state::replication::{StreamRequest, StreamSlot, Wire, MAX_STREAMS};
use crate::state::server::Server;
use memstored_engine::{BatchPut, LookupRef};
use memstored_protocol::kt::ulog::FLAG_WHITE_SID;
use memstored_protocol::kt::{
    self, KeyRecord, KtFramer, Limits, Refusal, Request, SetRecord, MAGIC_REMOVE_BULK,
    MAGIC_SET_BULK,
};
use std::sync::Arc;

/// Per-connection state.
pub struct KtSession {
    framer: KtFramer,
    /// An accepted replication command, served once the session has closed.
    stream: Option<StreamRequest>,
}

impl KtSession {
    pub fn new(srv: &Server) -> KtSession {
        KtSession {
            framer: KtFramer::new(limits(srv)),
            stream: None,
        }
    }

    /// The accepted replication command, once the session has closed for it.
    pub fn take_stream(&mut self) -> Option<StreamRequest> {
        self.stream.take()
    }

    /// 0xB1: accepted (the session closes and the connection hands its
    /// socket to `replication::master`), or 0xBF.
    fn replication(&mut self, srv: &Arc<Server>, flags: u32, ts: u64, sid: u16, out: &mut Out) {
        let min_ts = first_after(ts);
        let slot = if srv.replication.ulog.get().is_none() {
            tracing::info!("replication asked for: this server keeps no update log (--ulog-dir)");
            None
        } else if let Some(gap) = srv.replication.gap(min_ts) {
            tracing::warn!("replication refused to server id {sid}: {gap}");
            None
        } else {
            let slot = StreamSlot::take(&srv.replication);
            if slot.is_none() {
                tracing::warn!("replication asked for: {MAX_STREAMS} streams already run");
            }
            slot
        };
        match slot {
            Some(slot) => {
                self.stream = Some(StreamRequest {
                    wire: Wire::Kt {
                        white: flags & FLAG_WHITE_SID != 0,
                    },
                    min_ts,
                    replica_id: sid,
                    slot,
                })
            }
            None => kt::encode_error(out.buf()),
        }
    }
}

/// Values are held to `-I`, keys too (Kyoto Tycoon has no key limit below
/// its 256 MiB data limit); a whole request to the RPC's frame limit,
/// `-I` + 1 MiB and at least 64 MiB.
pub fn limits(srv: &Server) -> Limits {
    let max_value = srv.cfg.max_item_size;
    Limits {
        max_key: max_value,
        max_value,
        max_frame: max_frame(srv),
    }
}

/// The largest request: `-I` + 1 MiB, at least 64 MiB (also the KT port's
/// largest HTTP body).
pub fn max_frame(srv: &Server) -> u64 {
    srv.cfg.max_item_size.saturating_add(1 << 20).max(64 << 20)
}

impl Session for KtSession {
    type Framer = KtFramer;

    fn framer(&mut self) -> &mut KtFramer {
        &mut self.framer
    }

    fn serve(&mut self, cx: &mut Cx<'_>, req: Request) -> Flow {
        let out = &mut *cx.out;
        match req {
            Request::SetBulk { no_reply, records } => {
                let r = set_bulk(cx.srv, &records);
                answer_hits(MAGIC_SET_BULK, r, no_reply, out);
            }
            Request::RemoveBulk { no_reply, keys } => {
                let r = remove_bulk(cx.srv, &keys);
                answer_hits(MAGIC_REMOVE_BULK, r, no_reply, out);
            }
            Request::GetBulk { keys } => {
                if let Err(o) = get_bulk(cx.srv, &keys, out) {
                    fail(&o, out);
                }
            }
            Request::PlayScript { no_reply, name, .. } => {
                tracing::debug!(
                    "play_script {:?}: no scripting",
                    String::from_utf8_lossy(&name)
                );
                if !no_reply {
                    kt::encode_error(out.buf());
                }
            }
            Request::Replication { flags, ts, sid } => {
                self.replication(cx.srv, flags, ts, sid, out);
                return Flow::Close;
            }
        }
        Flow::Continue
    }

    fn refuse(&mut self, cx: &mut Cx<'_>, r: Refusal, _closing: bool) -> Flow {
        tracing::debug!("closing Kyoto Tycoon connection: {}", r.error);
        if !r.no_reply {
            kt::encode_error(cx.out.buf());
        }
        Flow::Close
    }
}

/// A bulk reply: the count, or the error byte; nothing with no-reply.
fn answer_hits(magic: u8, r: Result<u32, Outcome>, no_reply: bool, out: &mut Out) {
    match r {
        _ if no_reply => {}
        Ok(hits) => kt::encode_hits(magic, hits, out.buf()),
        Err(o) => fail(&o, out),
    }
}

fn fail(o: &Outcome, out: &mut Out) {
    tracing::debug!("Kyoto Tycoon bulk request failed: {o:?}");
    kt::encode_error(out.buf());
}

/// The server of database `dbidx` (0: `srv` itself), if there is one.
pub fn database(srv: &Server, dbidx: u16) -> Option<&Server> {
    match dbidx {
        0 => Some(srv),
        i => srv.others.get(usize::from(i) - 1).map(|s| &**s),
    }
}

/// Hands the writes of the databases after the first to the OS after a
/// write request (the connection does the first's after each batch).
/// A failure fails the request: its writes may not be acknowledged.
fn flush_others(srv: &Server) -> Result<(), Outcome> {
    for s in &srv.others {
        if let Err(e) = s.db.flush_dirty() {
            tracing::error!("flushing {:?}: {e}", s.cfg.store);
            return Err(Outcome::Failed(e));
        }
    }
    Ok(())
}

/// Calls `f` with each run of consecutive records that name one database
/// (in practice the whole request: clients name one), that database and
/// where the run starts;
/// records naming no database are skipped. Stops at `f`'s first error.
fn by_database<'r, R, E>(
    srv: &Server,
    records: &'r [R],
    dbidx: impl Fn(&R) -> u16,
    mut f: impl FnMut(&Server, usize, &'r [R]) -> Result<(), E>,
) -> Result<(), E> {
    let mut first = 0;
    while let Some(head) = records.get(first) {
        let idx = dbidx(head);
        let len = records[first..]
            .iter()
            .take_while(|r| dbidx(r) == idx)
            .count();
        if let Some(db) = database(srv, idx) {
            f(db, first, &records[first..first + len])?;
        }
        first += len;
    }
    Ok(())
}

/// Stores each record in its database until one fails; how many were
/// stored. Each run of one database's records is one `StoreMany` (each
/// shard's lock taken once, keys and values borrowed from the request).
fn set_bulk(srv: &Server, records: &[SetRecord]) -> Result<u32, Outcome> {
    let now = memstored_engine::now_secs();
    let mut hits = 0usize;
    let mut batch = Vec::with_capacity(records.len());
    let result = by_database(
        srv,
        records,
        |r| r.dbidx,
        |db, _, run| {
            batch.clear();
            batch.extend(run.iter().map(|r| BatchPut {
                key: &r.key,
                value: &r.value,
                flags: 0,
                expires_at: kt::expires_at(r.xt, now),
            }));
            let r = StoreMany { records: &batch }.apply(db);
            hits += r.as_ref().map_or_else(|(done, _)| *done, |n| *n);
            r.map(|_| ()).map_err(|(_, o)| o)
        },
    );
    flush_others(srv)?;
    result.map(|()| u32::try_from(hits).unwrap_or(u32::MAX))
}

/// Removes each key from its database; absent keys are not hits, any other
/// failure ends the request.
fn remove_bulk(srv: &Server, keys: &[KeyRecord]) -> Result<u32, Outcome> {
    let mut hits = 0usize;
    let mut batch: Vec<&[u8]> = Vec::with_capacity(keys.len());
    let result = by_database(
        srv,
        keys,
        |k| k.dbidx,
        |db, _, run| {
            batch.clear();
            batch.extend(run.iter().map(|k| &k.key[..]));
            let r = DeleteMany { keys: &batch }.apply(db);
            hits += r.as_ref().map_or_else(|(done, _)| *done, |n| *n);
            r.map(|_| ()).map_err(|(_, o)| o)
        },
    );
    flush_others(srv)?;
    result.map(|()| u32::try_from(hits).unwrap_or(u32::MAX))
}

/// What get_bulk found for one position of the request.
#[derive(Clone, Copy)]
enum Found {
    Miss,
    /// Encoded whole (head, key, value) at this range of the scratch buffer.
    Encoded(usize, usize),
    /// A long value, sent by reference: the index of its record.
    Long(usize),
}

/// get_bulk's reply: the live records of the keys, each from its database,
/// in request order (a key named twice is answered twice, as `ktserver`
/// does). Short values are encoded straight from where the engine keeps
/// them (`GetMany::apply_with`: no `Record` for them), long ones are sent
/// without a copy. A reply whose keys and values would exceed
/// `rpc::max_reply` is refused (`TooLarge`), nothing of it written: a
/// client naming one large value over and over would otherwise have the
/// reply, and its charge to the memory budget, grow with every mention.
fn get_bulk(srv: &Server, keys: &[KeyRecord], out: &mut Out) -> Result<(), Outcome> {
    let limit = crate::protocols::rpc::max_reply(srv);
    let mut total = 0usize;
    let heads: usize = keys.iter().map(|k| 18 + k.key.len()).sum();
    // Records are encoded as the engine visits them (one shard after
    // another), then copied out in request order.
    let mut encoded: Vec<u8> = Vec::with_capacity(heads.min(limit));
    let mut found = vec![Found::Miss; keys.len()];
    let mut long = Vec::new();
    let mut hits = 0u32;
    let mut batch: Vec<&[u8]> = Vec::with_capacity(keys.len());
    by_database(
        srv,
        keys,
        |k| k.dbidx,
        |db, first, run| {
            batch.clear();
            batch.extend(run.iter().map(|k| &k.key[..]));
            GetMany { keys: &batch }.apply_with(db, SPLICE_FROM, |i, l| {
                let k = &run[i];
                let (value, meta) = match &l {
                    LookupRef::Lent(value, meta) => (*value, *meta),
                    LookupRef::Hit(r) => (&r.value[..], &r.meta),
                    LookupRef::Expired | LookupRef::Missing => return,
                };
                total = total.saturating_add(18 + k.key.len() + value.len());
                if total > limit {
                    return;
                }
                hits += 1;
                let xt = kt::xt_of(meta.expires_at);
                if let LookupRef::Hit(r) = l {
                    found[first + i] = Found::Long(long.len());
                    long.push((xt, r.value));
                    return;
                }
                let at = encoded.len();
                kt::encode_record_head(k.dbidx, k.key.len(), value.len(), xt, &mut encoded);
                encoded.extend_from_slice(&k.key);
                encoded.extend_from_slice(value);
                found[first + i] = Found::Encoded(at, encoded.len());
            })?;
            match total > limit {
                true => Err(Outcome::TooLarge {
                    size: total as u64,
                    cap: limit as u64,
                }),
                false => Ok(()),
            }
        },
    )?;
    out.buf().reserve(5 + encoded.len());
    kt::encode_get_head(hits, out.buf());
    for (k, f) in keys.iter().zip(found) {
        match f {
            Found::Miss => {}
            Found::Encoded(from, to) => out.put(&encoded[from..to]),
            Found::Long(j) => {
                // Each long value is answered once: taken, not shared.
                let (xt, value) = std::mem::take(&mut long[j]);
                kt::encode_record_head(k.dbidx, k.key.len(), value.len(), xt, out.buf());
                out.put(&k.key);
                out.value(value);
            }
        }
    }
    Ok(())
}

/// The first of our timestamps after Kyoto Tycoon's `ts`.
pub fn first_after(kt_ts: u64) -> u64 {
    kt_ts / 1000 + 1
}
