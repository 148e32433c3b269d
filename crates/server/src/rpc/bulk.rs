//! Bulk procedures: set_bulk remove_bulk get_bulk, kt-msgpack's way: one
//! map whose `_`-prefixed keys are the records and whose other keys are the
//! options (`DB`, `xt`, `atomic`, present = true). With `atomic`, each is
//! carried out as one engine `compare_exchange_multi`, which holds the write
//! locks of every shard involved, so other clients see all or nothing.

use super::kt::{listing, records, underscored};
use super::{code, Args, Reply, RpcError, RpcResult};
use crate::command::{Delete, Get, Outcome, Store, StoreKind};
use crate::server::Server;
use bytes::Bytes;
use memstored_engine::{Db, Error};
use memstored_protocol::rpc::Value;

/// How often an atomic bulk call retries when records change under it.
const ATOMIC_TRIES: usize = 1000;

fn engine(e: Error) -> RpcError {
    RpcError::from(e)
}

fn num(n: usize) -> Value {
    listing(n, []).into_value()
}

/// The bulk map (`inmap`, the only parameter; none = empty) and its database.
fn bulk_args<'a>(srv: &'a Server, params: &'a [Value]) -> Result<(Args<'a>, &'a Db), RpcError> {
    let a = Args::new(params, 0);
    if a.at(0, "inmap").is_ok_and(|v| !v.is_nil()) {
        return Err(RpcError::argument("a bulk call takes one map"));
    }
    let db = &srv.db;
    Ok((a, db))
}

/// The record keys of a bulk map, each named once (a map names each once,
/// unless a client sends the same key as str and as bin).
fn bulk_keys<'a>(a: &Args<'a>) -> Result<Vec<&'a [u8]>, RpcError> {
    let mut keys: Vec<&[u8]> = records(a)?.into_iter().map(|(k, _)| k).collect();
    dedup_in_order(&mut keys);
    Ok(keys)
}

/// `set_bulk([inmap{_key: value, ..., DB, xt, atomic}])` → `{num: "stored"}`.
pub fn set_bulk(srv: &Server, params: &[Value]) -> RpcResult {
    let (a, db) = bulk_args(srv, params)?;
    let expires_at = a.expiry()?;
    let pairs = records(&a)?;
    if a.opt_bool("atomic").unwrap_or(false) {
        // The item limit holds here too, checked before anything is stored.
        for (_, v) in &pairs {
            crate::command::check_size(v.len(), srv.cfg.max_item_size)
                .map_err(RpcError::from_outcome)?;
        }
        let desired: Vec<(&[u8], Option<&[u8]>)> =
            pairs.iter().map(|(k, v)| (*k, Some(*v))).collect();
        db.compare_exchange_multi(&[], &desired).map_err(engine)?;
        // The values went in together; an expiry is set right after (the
        // engine's multi-key call stores without one).
        if let Some(t) = expires_at.filter(|&t| t != 0) {
            for (k, _) in &pairs {
                match db.touch(k, t) {
                    Ok(_) | Err(Error::NotFound(_)) => {}
                    Err(e) => return Err(engine(e)),
                }
            }
        }
        return Ok(num(pairs.len()));
    }
    for (k, v) in &pairs {
        let cmd = Store {
            key: Bytes::copy_from_slice(k),
            value: Bytes::copy_from_slice(v),
            kind: StoreKind::Set,
            flags: 0,
            expires_at: expires_at.unwrap_or(0),
            cas: None,
        };
        match cmd.apply(srv) {
            Outcome::Stored { .. } => {}
            o => return Err(RpcError::from_outcome(o)),
        }
    }
    Ok(num(pairs.len()))
}

/// Each key with its value at one instant (`None`: absent).
type Snapshot<'k> = Vec<(&'k [u8], Option<Bytes>)>;

/// The current values of `keys`, checked by an empty compare_exchange_multi
/// (which holds every involved shard's lock) so they are one instant's.
/// `then_remove`: remove the present ones in the same locked step.
fn atomic_snapshot<'k>(
    db: &Db,
    keys: &[&'k [u8]],
    then_remove: bool,
) -> Result<Snapshot<'k>, RpcError> {
    for _ in 0..ATOMIC_TRIES {
        let mut snap = Vec::with_capacity(keys.len());
        for k in keys {
            snap.push((*k, db.get_record(k).map_err(engine)?.map(|r| r.value)));
        }
        let expected: Vec<(&[u8], Option<&[u8]>)> =
            snap.iter().map(|(k, v)| (*k, v.as_deref())).collect();
        let desired: Vec<(&[u8], Option<&[u8]>)> = if then_remove {
            snap.iter()
                .filter(|(_, v)| v.is_some())
                .map(|(k, _)| (*k, None))
                .collect()
        } else {
            Vec::new()
        };
        match db.compare_exchange_multi(&expected, &desired) {
            Ok(()) => return Ok(snap),
            Err(Error::ValueMismatch(_)) => continue,
            Err(e) => return Err(engine(e)),
        }
    }
    Err(RpcError::new(
        code::LOGICAL,
        "records kept changing; the atomic bulk call gave up",
    ))
}

/// `remove_bulk([inmap{_key: "", ..., DB, atomic}])` → `{num: "removed"}`
/// (absent keys are skipped).
pub fn remove_bulk(srv: &Server, params: &[Value]) -> RpcResult {
    let (a, db) = bulk_args(srv, params)?;
    let keys = bulk_keys(&a)?;
    if a.opt_bool("atomic").unwrap_or(false) {
        let snap = atomic_snapshot(db, &keys, true)?;
        return Ok(num(snap.iter().filter(|(_, v)| v.is_some()).count()));
    }
    let mut n = 0;
    for k in keys {
        let cmd = Delete {
            key: Bytes::copy_from_slice(k),
            cas: None,
        };
        match cmd.apply(srv) {
            Outcome::Deleted => n += 1,
            Outcome::NotFound => {}
            o => return Err(RpcError::from_outcome(o)),
        }
    }
    Ok(num(n))
}

/// `get_bulk([inmap{_key: "", ..., DB, atomic}])` → `{num: "found", _key:
/// value, ...}` for the keys present (values referenced, not copied). A key
/// named twice is looked up once and answered once, as the reply is a map.
/// A reply whose values would exceed [`super::max_reply`] is refused (41).
pub fn get_bulk(srv: &Server, params: &[Value]) -> Result<Reply, RpcError> {
    let (a, db) = bulk_args(srv, params)?;
    let keys = bulk_keys(&a)?;
    let found: Vec<(&[u8], Bytes)> = if a.opt_bool("atomic").unwrap_or(false) && db.is_writable() {
        atomic_snapshot(db, &keys, false)?
            .into_iter()
            .filter_map(|(k, v)| Some((k, v?)))
            .collect()
    } else {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            match Get::new(Bytes::copy_from_slice(k)).apply(srv) {
                Outcome::Found(r) => out.push((k, r.value)),
                Outcome::NotFound => {}
                o => return Err(RpcError::from_outcome(o)),
            }
        }
        out
    };
    let limit = super::max_reply(srv);
    let total = found
        .iter()
        .map(|(k, v)| k.len().saturating_add(v.len()))
        .fold(0usize, usize::saturating_add);
    if total > limit {
        return Err(RpcError::new(
            code::LOGICAL,
            format!("the reply would hold {total} bytes, over the limit of {limit}"),
        ));
    }
    Ok(listing(
        found.len(),
        found
            .into_iter()
            .map(|(k, v)| (underscored(k), Reply::Bin(v))),
    ))
}

/// Drops repeated keys, keeping each first occurrence in place.
fn dedup_in_order(keys: &mut Vec<&[u8]>) {
    if keys.len() < 2 {
        return;
    }
    let mut seen = std::collections::HashSet::with_capacity(keys.len());
    keys.retain(|k| seen.insert(*k));
}
