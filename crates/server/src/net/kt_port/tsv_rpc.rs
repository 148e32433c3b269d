//! TSV-RPC at `/rpc/NAME`: KT's input map (query string, then a TSV or
//! HTML-form body; a later key replaces an earlier one) becomes the call's
//! MessagePack-RPC parameters, so both transports run `crate::protocols::rpc`'s one
//! implementation of each procedure (kt-msgpack's shapes: the positional
//! parameters KT names, then the whole map as the options map, which also
//! carries `DB`, `xt`, `_`-prefixed bulk records...). The result map goes
//! back as TSV in the request's `colenc`, or, for a request without one, in
//! the encoding KT's server would pick; an error as `ERROR\tmessage` with
//! KT's status code. Plain set_bulk/get_bulk/remove_bulk calls take a
//! shorter way with the same replies (`tsv_bulk.rs`).

use super::http::Shared;
use super::http::{reply, Reply};
use crate::protocols::rpc::{call_reply, code, is_slow, RpcError, Value};
use crate::state::server::Server;
use bytes::Bytes;
use memstored_protocol::kt::tsv::{self, BodyKind, ColEnc, TsvMap};
use std::sync::Arc;

/// Calls procedure `name` (URL-encoded) with the request's input.
pub(super) async fn call(
    srv: &Arc<Server>,
    shared: &Shared,
    name: &str,
    query: Option<&str>,
    content_type: Option<&str>,
    body: &[u8],
) -> Reply {
    let name = String::from_utf8_lossy(&tsv::url_decode(name.as_bytes())).into_owned();
    let mut input = TsvMap::new();
    if let Some(q) = query {
        tsv::parse_form(q.as_bytes(), &mut input);
    }
    let kind = content_type.map(tsv::body_kind);
    if query.is_none() && matches!(kind, Some(BodyKind::Tsv(None))) {
        if let Some(r) = super::tsv_bulk::call(srv, &name, body) {
            return r;
        }
    }
    let enc = match kind {
        Some(BodyKind::Tsv(enc)) => {
            tsv::parse_tsv(body, enc, &mut input);
            enc
        }
        Some(BodyKind::Form) => {
            tsv::parse_form(body, &mut input);
            None
        }
        _ => None,
    };
    if name.starts_with("cur_") {
        return match shared.cursors.call(srv, &shared.slots, &name, &input).await {
            Ok(out) => tsv_reply(200, out, enc),
            Err(e) => error_reply(&e, enc),
        };
    }
    let slots = &shared.slots;
    let params = params(&name, input);
    let result = if is_slow(&name, &params) {
        match slots.admit(srv) {
            Ok(ticket) => {
                let srv = srv.clone();
                ticket
                    .run(move || call_reply(&srv, &name, &params).map(|r| r.into_value()))
                    .await
            }
            Err(busy) => Err(busy.into()),
        }
    } else {
        call_reply(srv, &name, &params).map(|r| r.into_value())
    };
    match result {
        Ok(v) => tsv_reply(200, output(v), enc),
        Err(e) => error_reply(&e, enc),
    }
}

pub(super) fn error_reply(e: &RpcError, enc: Option<ColEnc>) -> Reply {
    let out = vec![(b"ERROR".to_vec(), e.message.clone().into_bytes())];
    tsv_reply(status(e), out, enc)
}

/// The input keys a procedure takes positionally in kt-msgpack's
/// interface, in order; everything else is read from the options map.
fn positional(method: &str) -> &'static [&'static str] {
    match method {
        "set" | "add" | "replace" | "append" => &["key", "value"],
        "get" | "check" | "remove" | "seize" | "cas" => &["key"],
        "increment" | "increment_double" => &["key", "num"],
        "match_prefix" => &["prefix"],
        "match_regex" => &["regex"],
        "match_similar" => &["origin"],
        "search" => &["mode", "pattern"],
        _ => &[],
    }
}

/// `[positional..., {every input record}]`. A missing positional stops the
/// list there, so the procedure reports it (400) instead of shifting.
pub(super) fn params(method: &str, input: TsvMap) -> Vec<Value> {
    let mut params: Vec<Value> = positional(method)
        .iter()
        .map_while(|k| input.get(k.as_bytes()).map(|v| Value::Binary(v.clone())))
        .collect();
    params.push(Value::Map(
        input
            .into_iter()
            .map(|(k, v)| (Value::Binary(k), Value::Binary(v)))
            .collect(),
    ));
    params
}

/// A value as TSV text: bytes as they are, numbers in decimal.
fn text(v: Value) -> Vec<u8> {
    match v {
        Value::Binary(b) => b,
        Value::String(s) => s.into_bytes(),
        Value::Nil => Vec::new(),
        other => other.to_string().into_bytes(),
    }
}

/// A procedure's result as KT's output map, sorted by key as KT's
/// `std::map`: a map's records; nothing for nil; for the procedures beyond
/// KT that return other shapes, an array as `num` and `_ELEMENT` → its
/// index, a single value as `result`.
pub(super) fn output(v: Value) -> Vec<(Vec<u8>, Vec<u8>)> {
    let map: TsvMap = match v {
        Value::Nil => TsvMap::new(),
        Value::Map(m) => m.into_iter().map(|(k, v)| (text(k), text(v))).collect(),
        Value::Array(a) => {
            let mut m = TsvMap::new();
            m.insert(b"num".to_vec(), a.len().to_string().into_bytes());
            for (i, e) in a.into_iter().enumerate() {
                let mut k = b"_".to_vec();
                k.extend(text(e));
                m.insert(k, i.to_string().into_bytes());
            }
            m
        }
        other => TsvMap::from([(b"result".to_vec(), text(other))]),
    };
    map.into_iter().collect()
}

/// KT's status for a kt-msgpack error code (ktrpc.h: success 200, invalid
/// 400, logic 450, internal 500, not implemented 501, timeout 503).
fn status(e: &RpcError) -> u16 {
    match e.code {
        code::NO_METHOD | code::NOT_IMPLEMENTED => 501,
        code::ARGUMENT | code::INVALID_PARAMETERS | code::NO_DATABASE => 400,
        code::RECORD_EXISTS
        | code::NO_RECORD
        | code::CAS_FAILED
        | code::NOT_COMPATIBLE
        | code::POSTPROCESSING
        | code::LOGICAL => 450,
        _ => 500,
    }
}

pub(super) fn tsv_reply(code: u16, out: Vec<(Vec<u8>, Vec<u8>)>, enc: Option<ColEnc>) -> Reply {
    let enc = enc.or_else(|| tsv::best_encoding(&out));
    reply(
        code,
        &[("content-type", tsv::content_type(enc))],
        Bytes::from(tsv::write_tsv(&out, enc)),
    )
}
