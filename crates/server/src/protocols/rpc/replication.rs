//! The replication stream on the wire (PROTOCOLS.md-style description in
//! docs/operations.md "Replication"): MessagePack-RPC, on the main port.
//!
//! The replica sends one request, `[0, msgid, "replicate", [min_timestamp,
//! server_id]]`: updates with `timestamp >= min_timestamp` are wanted, and
//! those logged under `server_id` (the replica's own, come back through a
//! dual master) are not. The master answers `[1, msgid, nil, {"server_id":
//! N, "last_timestamp": T}]` (or an error, and the connection goes on as a
//! plain RPC one; `"ack": true` when it wants `replicate_ack`s), then sends
//! notifications until the connection ends:
//!
//! - `[2, "replicate", [last_timestamp, pending, [update...]]]`: a batch of
//!   updates in log order, each `[timestamp, server_id, dbm_index, op,
//!   key, value, flags, expires_at]` (op 1 SET, 2 REMOVE, 3 CLEAR; key and
//!   value bin). `last_timestamp` is the master's newest logged timestamp
//!   and `pending` how many logged records the stream has not sent yet, so
//!   the replica can tell its lag. An empty batch is a heartbeat (at least
//!   one a second while idle).
//! - `[2, "replicate_end", [reason]]`: the master is stopping.

use bytes::{BufMut, BytesMut};
use memstored_engine::ulog::{UlogOp, Update};
use memstored_protocol::rpc::{value_bytes, Value};
use rmp::encode as enc;

pub const METHOD: &str = "replicate";
pub const END: &str = "replicate_end";
/// Replica to master, after each batch applied: `[2, "replicate_ack",
/// [timestamp]]`, the master timestamp of the batch's last update (the
/// master's per-replica lag, and `--sync-replicas`).
pub const ACK: &str = "replicate_ack";

/// Writing into memory cannot fail: `BytesMut`'s writer grows as needed.
fn ok<T, E>(r: Result<T, E>) {
    let _ = r;
}

/// Appends `[2, "replicate", [last_ts, pending, [updates]]]`.
pub fn encode_batch(last_ts: u64, pending: u64, updates: &[Update], out: &mut BytesMut) {
    let w = &mut out.writer();
    ok(enc::write_array_len(w, 3));
    ok(enc::write_uint(w, 2));
    ok(enc::write_str(w, METHOD));
    ok(enc::write_array_len(w, 3));
    ok(enc::write_uint(w, last_ts));
    ok(enc::write_uint(w, pending));
    ok(enc::write_array_len(w, updates.len() as u32));
    for u in updates {
        ok(enc::write_array_len(w, 8));
        ok(enc::write_uint(w, u.timestamp));
        ok(enc::write_uint(w, u64::from(u.server_id)));
        ok(enc::write_uint(w, u64::from(u.dbm_index)));
        ok(enc::write_uint(w, u.op as u64));
        ok(enc::write_bin(w, &u.key));
        ok(enc::write_bin(w, &u.value));
        ok(enc::write_uint(w, u64::from(u.flags)));
        ok(enc::write_uint(w, u.expires_at));
    }
}

/// One batch as the replica decodes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub last_ts: u64,
    pub pending: u64,
    pub updates: Vec<Update>,
}

/// Why a frame from the master is not a batch.
#[derive(Debug, thiserror::Error)]
#[error("malformed replication batch: {0}")]
pub struct Malformed(&'static str);

fn uint(v: Option<&Value>, what: &'static str) -> Result<u64, Malformed> {
    v.and_then(Value::as_u64).ok_or(Malformed(what))
}

fn narrow<T: TryFrom<u64>>(v: u64, what: &'static str) -> Result<T, Malformed> {
    T::try_from(v).map_err(|_| Malformed(what))
}

/// Decodes the params of a `replicate` notification (network input:
/// every field is checked).
pub fn decode_batch(params: &[Value]) -> Result<Batch, Malformed> {
    let last_ts = uint(params.first(), "last_timestamp")?;
    let pending = uint(params.get(1), "pending")?;
    let Some(Value::Array(items)) = params.get(2) else {
        return Err(Malformed("updates must be an array"));
    };
    let mut updates = Vec::with_capacity(items.len());
    for item in items {
        let Value::Array(f) = item else {
            return Err(Malformed("an update must be an array"));
        };
        let op = match uint(f.get(3), "op")? {
            1 => UlogOp::Set,
            2 => UlogOp::Remove,
            3 => UlogOp::Clear,
            _ => return Err(Malformed("unknown op")),
        };
        let bytes = |i: usize, what| {
            f.get(i)
                .and_then(value_bytes)
                .map(<[u8]>::to_vec)
                .ok_or(Malformed(what))
        };
        updates.push(Update {
            timestamp: uint(f.first(), "timestamp")?,
            server_id: narrow(uint(f.get(1), "server_id")?, "server_id")?,
            dbm_index: narrow(uint(f.get(2), "dbm_index")?, "dbm_index")?,
            op,
            key: bytes(4, "key")?,
            value: bytes(5, "value")?,
            flags: narrow(uint(f.get(6), "flags")?, "flags")?,
            expires_at: uint(f.get(7), "expires_at")?,
        });
    }
    Ok(Batch {
        last_ts,
        pending,
        updates,
    })
}

/// The request's `[min_timestamp, server_id]`.
pub fn decode_request(params: &[Value]) -> Option<(u64, u16)> {
    let min_ts = params.first()?.as_u64()?;
    let server_id = u16::try_from(params.get(1)?.as_u64()?).ok()?;
    Some((min_ts, server_id))
}

/// `changemaster [master, {ts_skew: MS}]` (Tkrzw-RPC's ChangeMaster): a
/// replica follows `master` (HOST:PORT) from now on, its position stepped
/// back by `ts_skew` milliseconds; an empty or absent `master` promotes it:
/// it stops following and accepts client writes. Only on a server started
/// with `--replicate-from` (it has the position file and the thread).
pub fn change_master(
    srv: &crate::state::server::Server,
    params: &[memstored_protocol::rpc::Value],
) -> Result<memstored_protocol::rpc::Value, super::RpcError> {
    use super::{code, RpcError};
    let a = super::Args::new(params, 0);
    let master = match a.pos_or_opt(0, "master") {
        None => String::new(),
        Some(v) => memstored_protocol::rpc::value_bytes(v)
            .and_then(|b| std::str::from_utf8(b).ok())
            .ok_or_else(|| RpcError::argument("master must be a string HOST:PORT"))?
            .trim()
            .to_string(),
    };
    let skew_ms = a.opt_i64("ts_skew")?.unwrap_or(0).max(0);
    let skew_us = u64::try_from(skew_ms).unwrap_or(0).saturating_mul(1000);
    crate::command::ChangeMaster { master, skew_us }
        .apply(srv)
        .map_err(|why| RpcError::new(code::LOGICAL, why))?;
    Ok(memstored_protocol::rpc::Value::Nil)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memstored_protocol::rpc::{decode, Limits, Message};
    use memstored_protocol::Parse;

    #[test]
    fn a_batch_round_trips_and_bad_ones_are_refused() {
        let u = Update {
            timestamp: 1_700_000_000_000_000,
            server_id: 65535,
            dbm_index: 2,
            op: UlogOp::Remove,
            key: b"k\0ey".to_vec(),
            value: vec![0xff; 3],
            flags: u32::MAX,
            expires_at: 99,
        };
        let mut out = BytesMut::new();
        encode_batch(7, 3, &[u.clone(), u.clone()], &mut out);
        let Ok(Parse::Complete(Message::Notification(n), used)) = decode(&out, &Limits::default())
        else {
            panic!("not a notification");
        };
        assert_eq!((n.method.as_str(), used), (METHOD, out.len()));
        let b = decode_batch(&n.params).unwrap();
        assert_eq!((b.last_ts, b.pending), (7, 3));
        assert_eq!(b.updates, vec![u.clone(), u]);

        let bad_op = Value::Array(vec![
            1.into(),
            1.into(),
            0.into(),
            9.into(),
            Value::Binary(vec![]),
            Value::Binary(vec![]),
            0.into(),
            0.into(),
        ]);
        for params in [
            vec![],
            vec![1.into(), 2.into()],
            vec![1.into(), 2.into(), Value::Array(vec![1.into()])],
            vec![1.into(), 2.into(), Value::Array(vec![bad_op])],
        ] {
            assert!(decode_batch(&params).is_err(), "{params:?}");
        }
        assert_eq!(decode_request(&[5.into(), 2.into()]), Some((5, 2)));
        assert_eq!(decode_request(&[5.into(), 70000.into()]), None);
        assert_eq!(decode_request(&[]), None);
    }
}
