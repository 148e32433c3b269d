//! set_bulk, get_bulk and remove_bulk over TSV-RPC in their plain form —
//! a TSV body without `colenc` that holds records and at most `atomic`
//! (no `DB`, `xt` or any other option) and no query string, which is what
//! KT's `RemoteDB` sends for printable records — served straight from the
//! body to the bulk commands and back.
//!
//! Why: the general path (`tsv_rpc.rs`) builds a sorted map of the input,
//! a MessagePack map from it, and a sorted map of the output: per record,
//! two allocations and a tree insert each way, and an encoding scan of the
//! output. At 100 records a request that was a quarter of the server's CPU
//! per record against ktserver's (docs/bench/bulk.md). Here the records
//! stay slices of the body, sorted once. Anything else (an option, an
//! encoded body, a reply that needs an encoding) goes the general way, and
//! the replies are byte for byte the general path's: the tests compare the
//! two on the same requests.

use super::http::{reply, Reply};
use super::tsv_rpc::{error_reply, tsv_reply};
use crate::protocols::rpc::{found_records, remove_records, store_records};
use crate::state::server::Server;
use bytes::Bytes;
use memstored_protocol::kt::tsv;

/// The reply to `name` with `body` (a TSV body without `colenc`), or `None`
/// when the call is not a plain bulk call and must go the general way.
pub(super) fn call(srv: &Server, name: &str, body: &[u8]) -> Option<Reply> {
    let proc = match name {
        "set_bulk" => Proc::Set,
        "get_bulk" => Proc::Get,
        "remove_bulk" => Proc::Remove,
        _ => return None,
    };
    let (mut records, atomic) = plain_records(body)?;
    let result = match proc {
        Proc::Set => store_records(srv, last_of_each(&mut records), 0, atomic).map(num_reply),
        Proc::Remove => remove_records(srv, &keys_once(&records), atomic).map(num_reply),
        Proc::Get => found_records(srv, &keys_once(&records), atomic).map(|f| found_reply(&f)),
    };
    Some(result.unwrap_or_else(|e| error_reply(&e, None)))
}

enum Proc {
    Set,
    Get,
    Remove,
}

/// A body's records, (key, value) slices of it.
type Records<'b> = Vec<(&'b [u8], &'b [u8])>;

/// The body's records (`_KEY\tVALUE` lines, the `_` taken off) and
/// whether it says `atomic` (an empty value, as KT's client sends it), or
/// `None` when a line names anything else or there is no record. Lines are
/// `tsv::tsv_lines`, as the general path's.
fn plain_records(body: &[u8]) -> Option<(Records<'_>, bool)> {
    let (mut out, mut atomic) = (Vec::new(), false);
    for (key, value) in tsv::tsv_lines(body) {
        match key.strip_prefix(b"_") {
            Some(key) => out.push((key, value)),
            None if key == b"atomic" && value.is_empty() => atomic = true,
            None => return None,
        }
    }
    (!out.is_empty()).then_some((out, atomic))
}

/// The records in key order, a key named twice keeping its last value:
/// the input map's rule ("a later key replaces an earlier one").
fn last_of_each<'r, 'b>(records: &'r mut Records<'b>) -> &'r [(&'b [u8], &'b [u8])] {
    records.sort_by(|a, b| a.0.cmp(b.0)); // stable: a key's records stay in request order
    let mut kept = 0;
    for i in 0..records.len() {
        let last = records.get(i + 1).is_none_or(|next| next.0 != records[i].0);
        if last {
            records[kept] = records[i];
            kept += 1;
        }
    }
    records.truncate(kept);
    records
}

/// Each key once, in key order (the order of KT's output map).
fn keys_once<'b>(records: &[(&'b [u8], &'b [u8])]) -> Vec<&'b [u8]> {
    let mut keys: Vec<&[u8]> = records.iter().map(|r| r.0).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

fn num_reply(n: usize) -> Reply {
    plain_reply(format!("num\t{n}\n").into_bytes())
}

/// `_KEY\tVALUE` for each record found (in key order), then `num`, as KT's
/// sorted output map; written here when no column needs an encoding
/// (`tsv::best_encoding`'s test), else by the general writer.
fn found_reply(found: &[(&[u8], Bytes)]) -> Reply {
    let printable = |col: &[u8], extra: usize| {
        col.len() + extra <= 255 && !col.iter().any(|&c| c < b' ' || c == 0x7f)
    };
    let n = found.len().to_string();
    if !found
        .iter()
        .all(|(k, v)| printable(k, 1) && printable(v, 0))
    {
        let mut out: Vec<(Vec<u8>, Vec<u8>)> = found
            .iter()
            .map(|(k, v)| ([b"_", *k].concat(), v.to_vec()))
            .collect();
        out.push((b"num".to_vec(), n.into_bytes()));
        return tsv_reply(200, out, None);
    }
    let size: usize = found.iter().map(|(k, v)| k.len() + v.len() + 3).sum();
    let mut out = Vec::with_capacity(size + n.len() + 5);
    for (k, v) in found {
        out.push(b'_');
        out.extend_from_slice(k);
        out.push(b'\t');
        out.extend_from_slice(v);
        out.push(b'\n');
    }
    out.extend_from_slice(b"num\t");
    out.extend_from_slice(n.as_bytes());
    out.push(b'\n');
    plain_reply(out)
}

fn plain_reply(body: Vec<u8>) -> Reply {
    reply(
        200,
        &[("content-type", tsv::content_type(None))],
        Bytes::from(body),
    )
}

#[cfg(test)]
mod tests;
