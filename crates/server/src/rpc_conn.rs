//! A MessagePack-RPC connection. Requests are answered in the order they
//! complete: quick procedures inline, in the batch being read; slow ones
//! (hard synchronize, backup, rebuild, vacuum) on blocking threads, their
//! responses sent by msgid when done while later quick calls on the same
//! connection keep being answered.

use crate::connection::FLUSH_AT;
use crate::rpc::{call, code, is_slow, RpcError};
use crate::server::Server;
use crate::stats;
use bytes::{Buf, BytesMut};
use memstored_protocol::rpc::{self, Decoder, Limits, Message, Value};
use memstored_protocol::Parse;
use std::io;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// Per-connection state.
struct RpcConn {
    srv: Arc<Server>,
    /// False until `auth` succeeds, when the server requires credentials.
    authed: bool,
    /// Responses of slow procedures come back here.
    done_tx: mpsc::UnboundedSender<BytesMut>,
    /// Slow procedures started and not yet answered.
    in_flight: usize,
}

impl RpcConn {
    /// Handles one decoded message, appending any immediate response to `out`.
    fn handle(&mut self, msg: Message, out: &mut BytesMut) {
        let (msgid, method, params) = match msg {
            Message::Request(r) => (Some(r.msgid), r.method, r.params),
            Message::Notification(n) => (None, n.method, n.params),
            Message::Response(_) => return, // we never send requests
        };
        if method == "auth" {
            let result = self.auth(&params);
            if let Some(id) = msgid {
                encode(id, result, out);
            }
            return;
        }
        if !self.authed {
            if let Some(id) = msgid {
                let e = RpcError::new(
                    code::LOGICAL,
                    "authentication required: call auth [user, password]",
                );
                encode(id, Err(e), out);
            }
            return;
        }
        if is_slow(&method, &params) {
            self.spawn_slow(msgid, method, params);
            return;
        }
        let result = call(&self.srv, &method, &params);
        if let Some(id) = msgid {
            encode(id, result, out);
        }
    }

    fn auth(&mut self, params: &[Value]) -> Result<Value, RpcError> {
        if self.srv.credentials.is_none() {
            self.authed = true;
            return Ok(Value::Nil);
        }
        let user = params.first().and_then(rpc::value_bytes);
        let password = params.get(1).and_then(rpc::value_bytes);
        let (Some(user), Some(password)) = (user, password) else {
            return Err(RpcError::new(
                code::INVALID_PARAMETERS,
                "auth takes [user, password]",
            ));
        };
        let plain = [&b"\0"[..], user, b"\0", password].concat();
        self.authed = crate::sasl::authenticate(&self.srv, crate::sasl::MECHANISMS, &plain);
        if self.authed {
            Ok(Value::Nil)
        } else {
            Err(RpcError::new(code::LOGICAL, "authentication failed"))
        }
    }

    fn spawn_slow(&mut self, msgid: Option<u32>, method: String, params: Vec<Value>) {
        self.in_flight += usize::from(msgid.is_some());
        let srv = self.srv.clone();
        let tx = self.done_tx.clone();
        // The blocking pool has `-W` threads (main.rs), which bounds how many
        // slow procedures run at once; the rest queue there.
        tokio::spawn(async move {
            let result = tokio::task::spawn_blocking(move || call(&srv, &method, &params))
                .await
                .unwrap_or_else(|e| {
                    Err(RpcError::new(
                        code::UNEXPECTED,
                        format!("procedure failed: {e}"),
                    ))
                });
            if let Some(id) = msgid {
                let mut buf = BytesMut::new();
                encode(id, result, &mut buf);
                let _ = tx.send(buf);
            }
        });
    }
}

fn encode(msgid: u32, result: Result<Value, RpcError>, out: &mut BytesMut) {
    match result {
        Ok(v) => rpc::encode_response(msgid, Ok(&v), out),
        Err(e) => rpc::encode_error(msgid, e.code, &e.message, out),
    }
}

async fn write_out(stream: &TcpStream, srv: &Server, out: &mut BytesMut) -> io::Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    if let Err(e) = srv.db.flush_dirty() {
        tracing::error!("handing writes to the OS failed: {e}");
    }
    let mut sent = 0;
    while sent < out.len() {
        match stream.try_write(&out[sent..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => stream.writable().await?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    stats::add(&srv.counters.bytes_written, out.len() as u64);
    out.clear();
    if out.capacity() > 1 << 20 {
        *out = BytesMut::with_capacity(4096);
    }
    Ok(())
}

/// Serves an RPC connection whose first bytes are already in `rbuf`.
pub async fn serve(stream: &TcpStream, srv: &Arc<Server>, mut rbuf: BytesMut) -> io::Result<()> {
    let max_frame = usize::try_from(srv.cfg.max_item_size)
        .unwrap_or(usize::MAX)
        .saturating_add(1 << 20)
        .max(64 << 20);
    let mut dec = Decoder::new(Limits::with_max_frame(max_frame));
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let mut conn = RpcConn {
        srv: srv.clone(),
        authed: srv.credentials.is_none(),
        done_tx,
        in_flight: 0,
    };
    let mut out = BytesMut::with_capacity(4096);
    let mut shutdown = srv.shutdown.clone();
    let mut eof = false;
    loop {
        loop {
            match dec.decode(&rbuf) {
                Ok(Parse::Complete(msg, used)) => {
                    rbuf.advance(used);
                    conn.handle(msg, &mut out);
                }
                Ok(Parse::Incomplete) => break,
                Err(e) => match (e.msgid(), e.frame_len()) {
                    (Some(id), Some(len)) if len <= rbuf.len() => {
                        rbuf.advance(len);
                        dec.reset();
                        rpc::encode_error(id, code::INVALID_PARAMETERS, &e.to_string(), &mut out);
                    }
                    _ => {
                        tracing::debug!("closing RPC connection: {e}");
                        write_out(stream, srv, &mut out).await?;
                        return Ok(());
                    }
                },
            }
            if out.len() >= FLUSH_AT {
                write_out(stream, srv, &mut out).await?;
            }
        }
        write_out(stream, srv, &mut out).await?;
        if eof && conn.in_flight == 0 {
            return Ok(());
        }
        tokio::select! {
            r = stream.readable(), if !eof => {
                r?;
                if rbuf.capacity() - rbuf.len() < 4096 {
                    rbuf.reserve(rbuf.capacity().max(4096));
                }
                match stream.try_read_buf(&mut rbuf) {
                    Ok(0) => eof = true,
                    Ok(n) => stats::add(&srv.counters.bytes_read, n as u64),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
            Some(done) = done_rx.recv() => {
                conn.in_flight -= 1;
                out.extend_from_slice(&done);
                while let Ok(more) = done_rx.try_recv() {
                    conn.in_flight -= 1;
                    out.extend_from_slice(&more);
                }
            }
            _ = shutdown.changed() => return Ok(()),
        }
    }
}
