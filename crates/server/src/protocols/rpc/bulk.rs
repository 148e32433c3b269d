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
    let expires_at = a.expiry()?.unwrap_or(0);
    let pairs = records(&a)?;
    store_records(srv, &pairs, expires_at, atomic(&a)).map(num)
}

/// `atomic` named in the bulk map (present = true, KT's rule).
fn atomic(a: &Args<'_>) -> bool {
    a.opt_bool("atomic").unwrap_or(false)
}

/// Stores `pairs` (key, value, each key once), all with `expires_at`: with
/// `atomic` as one step (`StoreAll`: all or nothing for other clients),
/// else as one batch command (each shard's lock taken once). How many were
/// stored. set_bulk's work, shared with the TSV-RPC port's plain form
/// (`net::kt_port::tsv_bulk`), as are the two below.
pub fn store_records(
    srv: &Server,
    pairs: &[(&[u8], &[u8])],
    expires_at: u64,
    atomic: bool,
) -> Result<usize, RpcError> {
    if atomic {
        let all = StoreAll {
            records: pairs,
            expires_at,
        };
        return match all.apply(srv) {
            Outcome::Done => Ok(pairs.len()),
            o => Err(RpcError::from_outcome(o)),
        };
    }
    let batch: Vec<BatchPut> = pairs
        .iter()
        .map(|&(key, value)| BatchPut {
            key,
            value,
            flags: 0,
            expires_at,
        })
        .collect();
    (StoreMany { records: &batch })
        .apply(srv)
        .map_err(|(_, o)| RpcError::from_outcome(o))
}

/// Each of `keys`' values at one instant (`None`: absent); `remove`: the
/// present ones removed in the same step.
fn atomic_read(srv: &Server, keys: &[&[u8]], remove: bool) -> Result<Vec<Option<Bytes>>, RpcError> {
    ReadAll { keys, remove }
        .apply(srv)
        .map_err(RpcError::from_outcome)
}

/// `remove_bulk([inmap{_key: "", ..., DB, atomic}])` → `{num: "removed"}`
/// (absent keys are skipped).
pub fn remove_bulk(srv: &Server, params: &[Value]) -> RpcResult {
    let a = bulk_args(params)?;
    let keys = bulk_keys(&a)?;
    remove_records(srv, &keys, atomic(&a)).map(num)
}

/// Removes the present ones of `keys` (each named once), in one step with
/// `atomic`, else as one batch command: how many were removed.
pub fn remove_records(srv: &Server, keys: &[&[u8]], atomic: bool) -> Result<usize, RpcError> {
    if atomic {
        let values = atomic_read(srv, keys, true)?;
        return Ok(values.iter().filter(|v| v.is_some()).count());
    }
    (DeleteMany { keys })
        .apply(srv)
        .map_err(|(_, o)| RpcError::from_outcome(o))
}

/// `get_bulk([inmap{_key: "", ..., DB, atomic}])` → `{num: "found", _key:
/// value, ...}` for the keys present (values referenced, not copied). A key
/// named twice is looked up once and answered once, as the reply is a map.
pub fn get_bulk(srv: &Server, params: &[Value]) -> Result<Reply, RpcError> {
    let a = bulk_args(params)?;
    let keys = bulk_keys(&a)?;
    let found = found_records(srv, &keys, atomic(&a))?;
    Ok(listing(
        found.len(),
        found
            .into_iter()
            .map(|(k, v)| (underscored(k), Reply::Bin(v))),
    ))
}

/// The present ones of `keys` (each named once) with their values, in
/// `keys`' order: read at one instant with `atomic` on a writable store,
/// else as one batch command. Refused (41) when the keys and values found
/// would exceed [`super::max_reply`].
pub fn found_records<'k>(
    srv: &Server,
    keys: &[&'k [u8]],
    atomic: bool,
) -> Result<Vec<(&'k [u8], Bytes)>, RpcError> {
    let found: Vec<(&[u8], Bytes)> = if atomic && srv.db.is_writable() {
        let values = atomic_read(srv, keys, false)?;
        keys.iter()
            .zip(values)
            .filter_map(|(k, v)| Some((*k, v?)))
            .collect()
    } else {
        let records = GetMany { keys }
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
    Ok(found)
}

/// Drops repeated keys, keeping each first occurrence in place.
fn dedup_in_order(keys: &mut Vec<&[u8]>) {
    if keys.len() < 2 {
        return;
    }
    let mut seen = std::collections::HashSet::with_capacity(keys.len());
    keys.retain(|k| seen.insert(*k));
}
