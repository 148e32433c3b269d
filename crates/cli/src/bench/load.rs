//! Which load generator a connection uses: the batch goes to its protocol's
//! file and is sent; its reply is read by the same file.

use super::conn::{Conn, Reply, Values};
use super::options::{Phase, Protocol};
use super::{binary, rpc, text};
use anyhow::Result;

/// Sends one batch of the phase's requests for `keys`.
pub(super) fn send(c: &mut Conn, phase: Phase, keys: &[u64], vals: &Values) -> Result<()> {
    match (phase, c.proto) {
        (Phase::Set, Protocol::Binary) => binary::send_set(c, keys, vals),
        (Phase::Set, Protocol::Text) => text::send_set(c, keys, vals),
        (Phase::Set, Protocol::Rpc) => rpc::send_set(c, keys, vals),
        (Phase::Get, Protocol::Binary) => binary::send_get(c, keys),
        (Phase::Get, Protocol::Text) => text::send_get(c, keys),
        (Phase::Get, Protocol::Rpc) => rpc::send_get(c, keys),
    }
    c.flush()
}

/// Reads the reply to the batch just sent (`n` records).
pub(super) fn recv(c: &mut Conn, phase: Phase, n: usize) -> Result<Reply> {
    match c.proto {
        Protocol::Binary => binary::recv(c, phase, n),
        Protocol::Text => text::recv(c, phase),
        Protocol::Rpc => rpc::recv(c, phase, n),
    }
}
