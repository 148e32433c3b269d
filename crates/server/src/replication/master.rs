//! The master's side of a replication stream: a `replicate` call turns its
//! RPC connection into a one-way stream of the update log (`wire` for the
//! frames), read from the requested timestamp and then followed live.
//!
//! The stream runs on a thread of its own with a blocking socket: reading
//! the log is file I/O, and catching up a replica that is far behind must
//! not hold a worker thread other clients need. What it has not sent stays
//! in the log, not in memory: it encodes one batch (at most `BATCH_BYTES`
//! of keys and values, or `BATCH_RECORDS` records) at a time and writes it
//! before reading more, so its buffer is one batch and the socket's. A
//! replica that stops reading is dropped after `STALL`: its writes must
//! make progress (`liveness`), and it must acknowledge what it is sent,
//! heartbeats included. At shutdown the stream sends `replicate_end` and
//! closes.

use crate::protocols::rpc::replication as wire;
use crate::state::replication::liveness::{Liveness, STALL};
use crate::state::replication::progress::StreamProgress;
use crate::state::replication::{StreamRequest, Wire};
use crate::state::server::Server;
use bytes::BytesMut;
use memstored_engine::ulog::{Update, UpdateLog};
use std::net::TcpStream;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Keys and values per batch, in bytes.
const BATCH_BYTES: usize = 1 << 20;
/// Updates per batch.
const BATCH_RECORDS: usize = 4096;
/// An idle stream sends an empty batch this often (the replica's liveness
/// check and its lag when nothing is written).
pub const HEARTBEAT: Duration = Duration::from_secs(1);
/// How often an idle stream looks at the shutdown flag.
pub const POLL: Duration = Duration::from_millis(100);

/// Serves the stream on `stream` (the connection's socket) until the
/// replica goes away or the server stops. Awaited by the connection's task,
/// so the connection stays counted, and the shutdown waits for it, while
/// the work runs on its own thread.
pub async fn serve(stream: tokio::net::TcpStream, srv: Arc<Server>, req: StreamRequest) {
    let Some(log) = srv.replication.ulog.get().cloned() else {
        return;
    };
    let sock = match stream.into_std().and_then(|s| {
        s.set_nonblocking(false)?;
        s.set_write_timeout(Some(STALL))?;
        Ok(s)
    }) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("replication stream: {e}");
            return;
        }
    };
    let peer = sock.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let started = std::thread::Builder::new()
        .name("memstored-repl-out".into())
        .spawn(move || {
            let r = &srv.replication;
            r.streams_total.fetch_add(1, Relaxed);
            tracing::info!(
                "replication stream to {peer} (server id {}) from timestamp {}",
                req.replica_id,
                req.min_ts
            );
            let live = Liveness::new(sock.try_clone().ok(), req.slot.released.clone());
            let progress = r.progress.register(peer.clone(), req.replica_id, live);
            let ended = match req.wire {
                Wire::Rpc { msgid } => {
                    let _acks = AckReader::start(&srv, &sock, &progress);
                    run(sock, &srv, &log, &req, msgid, &progress)
                }
                Wire::Kt { white } => {
                    super::kt_stream::run(sock, &srv, &log, &req, white, &progress)
                }
            };
            match ended {
                Ok(why) => tracing::info!("replication stream to {peer} ended: {why}"),
                Err(e) => tracing::info!("replication stream to {peer} dropped: {e}"),
            }
            r.progress.forget(&progress);
            drop(req); // gives the stream's place back
            let _ = done_tx.send(());
        });
    match started {
        Ok(_) => {
            let _ = done_rx.await;
        }
        Err(e) => tracing::warn!("replication stream: cannot start a thread: {e}"),
    }
}

fn stopping(srv: &Server) -> bool {
    *srv.shutdown.borrow()
}

fn send(sock: &mut TcpStream, out: &mut BytesMut, live: &Liveness) -> std::io::Result<()> {
    live.send_all(sock, out)?;
    out.clear();
    Ok(())
}

/// The stream's loop; `Ok` with why it ended cleanly.
fn run(
    mut sock: TcpStream,
    srv: &Server,
    log: &UpdateLog,
    req: &StreamRequest,
    msgid: u32,
    progress: &StreamProgress,
) -> Result<&'static str, Box<dyn std::error::Error>> {
    let mut out = BytesMut::with_capacity(64 << 10);
    // Everything written so far is visible to the reader once it is open
    // (read_from flushes), so `seen` is sampled first.
    let mut seen = log.wait_visible(u64::MAX, Duration::ZERO);
    let mut reader = log.read_from(req.min_ts)?;
    let head = memstored_protocol::rpc::Value::Map(vec![
        (
            "server_id".into(),
            u64::from(log.options().server_id).into(),
        ),
        ("last_timestamp".into(), log.stats().last_timestamp.into()),
        // The replica acknowledges what it applied: its lag, and
        // `--sync-replicas`. (A replica acknowledges only when asked.)
        ("ack".into(), true.into()),
    ]);
    let live = &progress.live;
    memstored_protocol::rpc::encode_response(msgid, Ok(&head), &mut out);
    send(&mut sock, &mut out, live)?;
    let mut batch: Vec<Update> = Vec::new();
    let mut last_sent = Instant::now();
    loop {
        if stopping(srv) {
            memstored_protocol::rpc::encode_notification(
                wire::END,
                &["the master is stopping".into()],
                &mut out,
            );
            send(&mut sock, &mut out, live)?;
            return Ok("the server is stopping");
        }
        live.check_answered()?;
        let mut bytes = 0;
        let mut exhausted = true;
        for u in reader.by_ref() {
            let u = u?;
            if u.server_id == req.replica_id {
                continue;
            }
            bytes += u.key.len() + u.value.len();
            batch.push(u);
            if bytes >= BATCH_BYTES || batch.len() >= BATCH_RECORDS {
                exhausted = false;
                break;
            }
        }
        if !batch.is_empty() || last_sent.elapsed() >= HEARTBEAT {
            let pending = log.pending_after(reader.position());
            let last_ts = log.stats().last_timestamp;
            wire::encode_batch(last_ts, pending, &batch, &mut out);
            let first = batch.first().map_or(0, |u| u.timestamp);
            let last = batch.last().map_or(0, |u| u.timestamp);
            let records = batch.len() as u64;
            batch.clear();
            // Counted before it goes out: the replica may acknowledge it
            // before `send` returns, and an acknowledgement of a batch not
            // yet counted would leave it counted as unapplied for good.
            progress.sent(records, first, last, pending);
            send(&mut sock, &mut out, live)?;
            live.sent_frame();
            last_sent = Instant::now();
        }
        if exhausted {
            let wait = POLL.min(HEARTBEAT.saturating_sub(last_sent.elapsed()));
            seen = log.wait_visible(seen, wait);
        }
    }
}

/// Reads the replica's `replicate_ack`s on a thread of its own (the
/// stream's thread only writes) and records them: the stream's progress
/// (its lag) and, in semi-synchronous mode, for `--sync-replicas`.
/// Dropped when the stream ends: the socket is shut down, which ends the
/// reader, and the stream is forgotten.
struct AckReader {
    sock: Option<TcpStream>,
    srv: Arc<Server>,
    slot: Option<Arc<std::sync::atomic::AtomicU64>>,
}

impl AckReader {
    fn start(srv: &Arc<Server>, sock: &TcpStream, progress: &Arc<StreamProgress>) -> AckReader {
        let mut me = AckReader {
            sock: None,
            srv: srv.clone(),
            slot: None,
        };
        let (Ok(keep), Ok(mut rd)) = (sock.try_clone(), sock.try_clone()) else {
            return me;
        };
        let slot = srv.replication.semi.get().map(|semi| semi.register());
        let (srv2, slot2, progress) = (srv.clone(), slot.clone(), progress.clone());
        let spawned = std::thread::Builder::new()
            .name("memstored-repl-ack".into())
            .spawn(move || read_acks(&mut rd, &srv2, slot2.as_deref(), &progress));
        me.slot = slot;
        if spawned.is_ok() {
            me.sock = Some(keep);
        }
        me
    }
}

impl Drop for AckReader {
    fn drop(&mut self) {
        if let Some(s) = &self.sock {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        if let (Some(semi), Some(slot)) = (self.srv.replication.semi.get(), &self.slot) {
            semi.forget(slot);
        }
    }
}

fn read_acks(
    sock: &mut TcpStream,
    srv: &Server,
    slot: Option<&std::sync::atomic::AtomicU64>,
    progress: &StreamProgress,
) {
    use memstored_protocol::rpc::{Decoder, Limits, Message};
    use memstored_protocol::Parse;
    use std::io::Read;
    let semi = srv.replication.semi.get().zip(slot);
    let mut dec = Decoder::new(Limits::with_max_frame(1 << 16));
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match dec.decode(&buf) {
            Ok(Parse::Complete(m, used)) => {
                buf.drain(..used);
                if let Message::Notification(n) = m {
                    let ts = n.params.first().and_then(|v| v.as_u64());
                    if let (wire::ACK, Some(ts)) = (n.method.as_str(), ts) {
                        progress.live.answered();
                        progress.acked(ts);
                        if let Some((semi, slot)) = semi {
                            semi.ack(slot, ts);
                        }
                    }
                }
                continue;
            }
            Ok(Parse::Incomplete) => {}
            Err(_) => return,
        }
        match sock.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}
