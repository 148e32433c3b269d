//! A blocking MessagePack-RPC client over one `TcpStream`, for
//! `memstore remote` (framing from `memstored_protocol::rpc`).

use anyhow::{bail, Context, Result};
use bytes::{Buf, BytesMut};
use memstored_protocol::rpc::{self, Decoder, Limits, Message, Value};
use memstored_protocol::Parse;
use std::borrow::Cow;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The server's default address (memstored listens there by default).
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:11211";

/// `--address` when given, else `$MEMSTORE_ADDRESS`, else [`DEFAULT_ADDRESS`].
pub fn address(flag: Option<&str>) -> String {
    match flag {
        Some(a) => a.to_string(),
        None => std::env::var("MEMSTORE_ADDRESS").unwrap_or_else(|_| DEFAULT_ADDRESS.to_string()),
    }
}

/// Connects with TCP_NODELAY; `localhost:PORT` and bare `PORT` work too.
pub fn connect(addr: &str, timeout: Option<Duration>) -> Result<TcpStream> {
    let full = if addr.parse::<u16>().is_ok() {
        format!("127.0.0.1:{addr}")
    } else {
        addr.to_string()
    };
    let addrs: Vec<_> = full
        .to_socket_addrs()
        .with_context(|| format!("bad address {addr:?}"))?
        .collect();
    let mut last = None;
    for a in addrs {
        let r = match timeout {
            Some(t) => TcpStream::connect_timeout(&a, t),
            None => TcpStream::connect(a),
        };
        match r {
            Ok(s) => {
                s.set_nodelay(true).ok();
                s.set_read_timeout(timeout).ok();
                s.set_write_timeout(timeout).ok();
                return Ok(s);
            }
            Err(e) => last = Some(e),
        }
    }
    match last {
        Some(e) => Err(e).with_context(|| format!("cannot connect to {addr}")),
        None => bail!("address {addr:?} resolves to nothing"),
    }
}

/// kt-msgpack's code for a missing record (Tkrzw's NOT_FOUND_ERROR).
pub const NOT_FOUND: i64 = 35;

/// Tkrzw's status names, by code (tkrzw::Status::Code).
const TKRZW_STATUS: [&str; 14] = [
    "SUCCESS",
    "UNKNOWN_ERROR",
    "SYSTEM_ERROR",
    "NOT_IMPLEMENTED_ERROR",
    "PRECONDITION_ERROR",
    "INVALID_ARGUMENT_ERROR",
    "CANCELED_ERROR",
    "NOT_FOUND_ERROR",
    "PERMISSION_ERROR",
    "INFEASIBLE_ERROR",
    "DUPLICATION_ERROR",
    "BROKEN_DATA_ERROR",
    "NETWORK_ERROR",
    "APPLICATION_ERROR",
];

/// A procedure's failure as the server reported it (`[code, message]`).
#[derive(Debug, Clone)]
pub struct RemoteError {
    /// kt-msgpack's code (a gRPC status is translated, so the checks are
    /// the same for both wires).
    pub code: Option<i64>,
    pub message: String,
    /// Tkrzw's status code, when it came over gRPC.
    pub tkrzw: Option<i32>,
}

impl RemoteError {
    fn from_value(v: &Value) -> Self {
        match v {
            Value::Array(a) => RemoteError {
                code: a.first().and_then(Value::as_i64),
                message: a.get(1).and_then(rpc::value_str).unwrap_or("").to_string(),
                tkrzw: None,
            },
            v => RemoteError {
                code: v.as_i64(),
                message: rpc::value_str(v).map_or_else(|| v.to_string(), String::from),
                tkrzw: None,
            },
        }
    }

    /// A failure reported by Tkrzw-RPC's `StatusProto` (code not 0).
    pub fn tkrzw(code: i32, message: String) -> Self {
        let kt = match code {
            10 => 33,
            7 => NOT_FOUND,
            5 => 36,
            9 => 37,
            4 => 41,
            3 => 42,
            _ => 0,
        };
        RemoteError {
            code: (kt != 0).then_some(kt),
            message,
            tkrzw: Some(code),
        }
    }

    /// Tkrzw's name for the code.
    pub fn status_name(&self) -> &'static str {
        if let Some(c) = self.tkrzw {
            return TKRZW_STATUS
                .get(c as usize)
                .copied()
                .unwrap_or("UNKNOWN_ERROR");
        }
        match self.code {
            Some(33) => "DUPLICATION_ERROR",
            Some(35) => "NOT_FOUND_ERROR",
            Some(36) => "INVALID_ARGUMENT_ERROR",
            Some(37) | Some(38) => "INFEASIBLE_ERROR",
            Some(41) => "PRECONDITION_ERROR",
            Some(42) => "NOT_IMPLEMENTED_ERROR",
            _ => "UNKNOWN_ERROR",
        }
    }
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.tkrzw.map(i64::from).or(self.code) {
            Some(c) => write!(f, "{} ({c}): {}", self.status_name(), self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for RemoteError {}

/// Whether `v` is or holds a bin.
fn carries_bin(v: &Value) -> bool {
    match v {
        Value::Binary(_) => true,
        Value::Array(a) => a.iter().any(carries_bin),
        Value::Map(m) => m.iter().any(|(k, v)| carries_bin(k) || carries_bin(v)),
        _ => false,
    }
}

/// One connection; calls are answered in order of completion, matched by msgid.
pub struct RpcClient {
    stream: TcpStream,
    rbuf: BytesMut,
    wbuf: BytesMut,
    decoder: Decoder,
    next_id: u32,
    /// `--index N`: the database every call names in its `DB` option.
    db: Option<u32>,
}

impl RpcClient {
    pub fn connect(addr: &str, timeout: Option<Duration>) -> Result<Self> {
        Ok(RpcClient {
            stream: connect(addr, timeout)?,
            rbuf: BytesMut::with_capacity(64 * 1024),
            wbuf: BytesMut::with_capacity(4096),
            decoder: Decoder::new(Limits::default()),
            next_id: 1,
            db: None,
        })
    }

    /// Makes every later call address database `index` of the server (its
    /// `DB` option; 0, the first database, needs none).
    pub fn set_db(&mut self, index: u32) {
        self.db = (index != 0).then_some(index);
    }

    /// `params` with the `DB` option added: into the map the call ends with
    /// (its options; for a bulk call, kt-msgpack's one map of `_key`s and
    /// options), else as a map of its own. `echo` and `ping` address no database.
    ///
    /// The option's name is bin, so that every call carries bin: the server
    /// then answers an error as `[code, message]`, and the message (a full
    /// disk's "No space left on device") is shown, not kt-msgpack's bare
    /// code (docs/kt-compat.md). A call that carries no bin and names no
    /// database gets `DB` 0, the first database, as if it named none.
    fn with_db<'a>(&self, method: &str, params: &'a [Value]) -> Cow<'a, [Value]> {
        if matches!(method, "echo" | "ping" | "auth") {
            return Cow::Borrowed(params);
        }
        let db = match self.db {
            Some(index) => Value::from(index),
            None if params.iter().any(carries_bin) => return Cow::Borrowed(params),
            None => Value::from(0u32),
        };
        let entry = (Value::Binary(b"DB".to_vec()), db);
        let mut p = params.to_vec();
        match p.last_mut() {
            Some(Value::Map(m)) => m.push(entry),
            _ => p.push(Value::Map(vec![entry])),
        }
        Cow::Owned(p)
    }

    /// `auth [user, password]` from `USER:PASSWORD`.
    pub fn auth(&mut self, spec: &str) -> Result<()> {
        let (user, password) = spec.split_once(':').context("--auth takes USER:PASSWORD")?;
        self.call("auth", &[Value::from(user), Value::from(password)])?
            .map_err(|e| anyhow::anyhow!("authentication: {e}"))?;
        Ok(())
    }

    /// Calls `method`; the outer error is the transport's, the inner the procedure's.
    pub fn call(
        &mut self,
        method: &str,
        params: &[Value],
    ) -> Result<std::result::Result<Value, RemoteError>> {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        self.wbuf.clear();
        let params = self.with_db(method, params);
        rpc::encode_request(id, method, &params, &mut self.wbuf);
        self.stream
            .write_all(&self.wbuf)
            .with_context(|| format!("sending {method}"))?;
        loop {
            match self.read_message()? {
                Message::Response(r) if r.msgid == id => {
                    return Ok(if r.error.is_nil() {
                        Ok(r.result)
                    } else {
                        Err(RemoteError::from_value(&r.error))
                    });
                }
                _ => continue, // another call's answer or a notification
            }
        }
    }

    /// Sends `calls` in one write (pipelined; MessagePack-RPC matches the
    /// answers by msgid) and returns their results in call order: one round
    /// trip for the batch. A notification (`reply` false) gets no answer and
    /// its slot is `Ok(Nil)`.
    pub fn call_batch(
        &mut self,
        calls: &[(&str, Vec<Value>, bool)],
    ) -> Result<Vec<std::result::Result<Value, RemoteError>>> {
        let first = self.next_id;
        self.wbuf.clear();
        let mut waiting = 0usize;
        let mut ids = Vec::with_capacity(calls.len());
        for (method, params, reply) in calls {
            let params = &*self.with_db(method, params);
            if *reply {
                let id = self.next_id;
                self.next_id = self.next_id.wrapping_add(1);
                rpc::encode_request(id, method, params, &mut self.wbuf);
                ids.push(Some(id));
                waiting += 1;
            } else {
                rpc::encode_notification(method, params, &mut self.wbuf);
                ids.push(None);
            }
        }
        self.stream
            .write_all(&self.wbuf)
            .context("sending a batch of calls")?;
        let mut out: Vec<Option<std::result::Result<Value, RemoteError>>> = ids
            .iter()
            .map(|id| id.is_none().then_some(Ok(Value::Nil)))
            .collect();
        // msgid → slot: ids are consecutive from `first` over the replying calls.
        let slots: Vec<usize> = (0..ids.len()).filter(|&i| ids[i].is_some()).collect();
        while waiting > 0 {
            if let Message::Response(r) = self.read_message()? {
                let Some(&slot) = slots.get(r.msgid.wrapping_sub(first) as usize) else {
                    continue; // an answer to an earlier call
                };
                if out[slot].is_some() {
                    continue; // answered twice: keep the first
                }
                out[slot] = Some(if r.error.is_nil() {
                    Ok(r.result)
                } else {
                    Err(RemoteError::from_value(&r.error))
                });
                waiting -= 1;
            }
        }
        let out = out
            .into_iter()
            .map(|r| r.unwrap_or(Ok(Value::Nil)))
            .collect();
        Ok(out)
    }

    fn read_message(&mut self) -> Result<Message> {
        loop {
            match self.decoder.decode(&self.rbuf) {
                Ok(Parse::Complete(m, used)) => {
                    self.rbuf.advance(used);
                    return Ok(m);
                }
                Ok(Parse::Incomplete) => {}
                Err(e) => bail!("bad reply from the server: {e}"),
            }
            let mut chunk = [0u8; 64 * 1024];
            let n = self
                .stream
                .read(&mut chunk)
                .context("reading the server's reply")?;
            if n == 0 {
                bail!("the server closed the connection");
            }
            self.rbuf.extend_from_slice(&chunk[..n]);
        }
    }
}
