//! Bulk procedures: set_bulk remove_bulk get_bulk, kt-msgpack's way: one
//! map whose `_`-prefixed keys are the records and whose other keys are the
//! options (`DB`, `xt`, `atomic`, present = true). With `atomic`, each is
//! one step of the command layer (`command::StoreAll`, `command::ReadAll`),
//! so other clients see all or nothing; without it, one batch command each
//! (`command::StoreMany`, `DeleteMany`, `GetMany`), which takes each
//! shard's lock once for the request.

use super::kt::{listing, records, underscored};
use super::{code, Args, Reply, RpcError, RpcResult};
use crate::command::{DeleteMany, GetMany, Outcome, ReadAll, StoreAll, StoreMany};
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::BatchPut;
use memstored_protocol::rpc::Value;

fn num(n: usize) -> Value {
    listing(n, []).into_value()
}

/// The bulk map (`inmap`, the only parameter; none = empty).
fn bulk_args(params: &[Value]) -> Result<Args<'_>, RpcError> {
    let a = Args::new(params, 0);
    if a.at(0, "inmap").is_ok_and(|v| !v.is_nil()) {
        return Err(RpcError::argument("a bulk call takes one map"));
    }
    Ok(a)
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
    let a = bulk_args(params)?;
    let expires_at = a.expiry()?;
    let pairs = records(&a)?;
    if a.opt_bool("atomic").unwrap_or(false) {
        let all = StoreAll {
            records: &pairs,
            expires_at: expires_at.unwrap_or(0),
        };
        return match all.apply(srv) {
            Outcome::Done => Ok(num(pairs.len())),
            o => Err(RpcError::from_outcome(o)),
        };
    }
    let batch: Vec<BatchPut> = pairs
        .iter()
        .map(|&(key, value)| BatchPut {
            key,
            value,
            flags: 0,
            expires_at: expires_at.unwrap_or(0),
        })
        .collect();
    match (StoreMany { records: &batch }).apply(srv) {
        Ok(n) => Ok(num(n)),
        Err((_, o)) => Err(RpcError::from_outcome(o)),
    }
}

/// Each of `keys`' values at one instant (`None`: absent); `remove`: the
/// present ones removed in the same step.
fn atomic_read(srv: &Server, keys: &[&[u8]], remove: bool) -> Result<Vec<Option<Bytes>>, RpcError> {
    ReadAll { keys, remove }.apply(srv).map_err(|o| match o {
        Outcome::Exists => RpcError::new(
            code::LOGICAL,
            "records kept changing; the atomic bulk call gave up",
        ),
        o => RpcError::from_outcome(o),
    })
}

/// `remove_bulk([inmap{_key: "", ..., DB, atomic}])` → `{num: "removed"}`
/// (absent keys are skipped).
pub fn remove_bulk(srv: &Server, params: &[Value]) -> RpcResult {
    let a = bulk_args(params)?;
    let keys = bulk_keys(&a)?;
    if a.opt_bool("atomic").unwrap_or(false) {
        let values = atomic_read(srv, &keys, true)?;
        return Ok(num(values.iter().filter(|v| v.is_some()).count()));
    }
    match (DeleteMany { keys: &keys }).apply(srv) {
        Ok(n) => Ok(num(n)),
        Err((_, o)) => Err(RpcError::from_outcome(o)),
    }
}

/// `get_bulk([inmap{_key: "", ..., DB, atomic}])` → `{num: "found", _key:
/// value, ...}` for the keys present (values referenced, not copied). A key
/// named twice is looked up once and answered once, as the reply is a map.
/// A reply whose values would exceed [`super::max_reply`] is refused (41).
pub fn get_bulk(srv: &Server, params: &[Value]) -> Result<Reply, RpcError> {
    let a = bulk_args(params)?;
    let keys = bulk_keys(&a)?;
    let found: Vec<(&[u8], Bytes)> =
        if a.opt_bool("atomic").unwrap_or(false) && srv.db.is_writable() {
            let values = atomic_read(srv, &keys, false)?;
            keys.iter()
                .zip(values)
                .filter_map(|(k, v)| Some((*k, v?)))
                .collect()
        } else {
            let records = GetMany { keys: &keys }
                .apply(srv)
                .map_err(RpcError::from_outcome)?;
            keys.iter()
                .zip(records)
                .filter_map(|(k, r)| Some((*k, r?.value)))
                .collect()
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
