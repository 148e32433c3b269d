//! The replica's side (`--replicate-from`): a thread that connects to the
//! master, asks for its update log from the saved position (`rts`),
//! applies every update to the databases (by `dbm_index`, in `-s` order),
//! saves the position after each batch, and reconnects with a growing
//! backoff whenever the stream ends (the master restarting, the network
//! dropping, no heartbeat for `DEAD_AFTER`).
//!
//! The master is a peer, not trusted with this server's memory: a frame
//! larger than a batch of records within this server's `-I` is refused as
//! soon as its header declares it, and a batch holding a key or value over
//! `-I` is refused before any of it is applied. Either ends the connection
//! with `repl_last_error` saying why; the replica keeps what it has and
//! tries again after the backoff (a master that keeps sending the record
//! keeps the replica where it is, reporting the error, until an operator
//! raises `-I` or the master's record changes).
//!
//! A thread and blocking I/O, not a task: applying is engine work that
//! would otherwise hold a worker thread, and there is one stream.

use super::rts::Rts;
use crate::protocols::rpc::replication as wire;
use crate::replication::master::HEARTBEAT;
use crate::state::replication::replica_status::Status;
use bytes::{Buf, BytesMut};
use memstored_engine::Db;
use memstored_protocol::rpc::{self, Decoder, Limits, Message, Value};
use memstored_protocol::Parse;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// No frame from the master for this long: the connection is dead.
pub(super) const DEAD_AFTER: Duration = Duration::from_secs(5);
/// How often a blocked read looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Why one connection to the master ended.
#[derive(Debug, thiserror::Error)]
pub(super) enum Ended {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("the master refused: {0}")]
    Refused(String),
    #[error("{0}")]
    Malformed(String),
    #[error("applying an update: {0}")]
    Apply(#[from] memstored_engine::Error),
    #[error("no frame from the master for {0:?}")]
    Silent(Duration),
    #[error("the master closed the connection")]
    Closed,
    #[error("the master is stopping")]
    MasterStopping,
    #[error("this server is stopping")]
    Stopping,
    #[error("the master sent {0}, over this replica's -I of {1} bytes: not applied")]
    TooLarge(String, u64),
    #[error("told to change its master")]
    Switched,
}

/// The running replica thread.
pub struct Handle {
    stop: Arc<AtomicBool>,
    wake: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Handle {
    /// Stops the thread and waits for it (it ends within `POLL`, after the
    /// batch it is applying).
    pub fn stop(mut self) {
        self.stop.store(true, Relaxed);
        self.wake.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Everything the thread needs.
pub struct Follower {
    pub server_id: u16,
    pub dbs: Vec<Arc<Db>>,
    /// Where the position is saved (none: it is not, as tkrzw_server
    /// without `--repl_ts_file`).
    pub rts: Option<Rts>,
    /// Which wire the master speaks.
    pub wire: Wire,
    pub status: Arc<Status>,
    /// `-I`: the largest key or value this replica takes from its master.
    pub max_item: u64,
}

/// The master's wire.
#[derive(Debug, Clone)]
pub enum Wire {
    /// memstored's MessagePack-RPC stream on the master's main port
    /// (`--replicate-from`): flags and expiry travel too, and the master
    /// hears how far the replica is.
    Rpc,
    /// Tkrzw-RPC's Replicate on the master's gRPC port (`--repl_master`).
    Grpc(super::grpc_follow::GrpcOptions),
    /// Kyoto Tycoon's replication command on a `ktserver`'s port
    /// (`--replicate-from kt://HOST:PORT`), from the exact position kept.
    Kt(super::kt_follow::KtPosition),
}

/// The largest frame a replica with item limit `max_item` reads: a batch
/// is `master::BATCH_BYTES` of keys and values plus the record that
/// crossed it (a key and a value of up to `max_item` each), and framing.
pub fn max_frame(max_item: u64) -> usize {
    let records = max_item.saturating_mul(2);
    usize::try_from(records.saturating_add(4 << 20)).unwrap_or(usize::MAX)
}

impl Follower {
    /// Starts following; `start_ts` is the saved position.
    pub fn spawn(self, master: &str, start_ts: u64) -> io::Result<Handle> {
        let stop = Arc::new(AtomicBool::new(false));
        let (wake, sleeper) = mpsc::channel();
        self.status.applied_ts.store(start_ts, Relaxed);
        self.status.change_master(master, 0);
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("memstored-replica".into())
            .spawn(move || self.run(&flag, &sleeper))?;
        Ok(Handle {
            stop,
            wake: Some(wake),
            thread: Some(thread),
        })
    }

    fn run(self, stop: &AtomicBool, sleeper: &mpsc::Receiver<()>) {
        let mut backoff = BACKOFF_MIN;
        while !stop.load(Relaxed) {
            let applied_before = self.status.applied.load(Relaxed);
            let master = self.status.master();
            if master.is_empty() {
                // Promoted: nothing to follow until `changemaster` names one.
                if let Err(mpsc::RecvTimeoutError::Disconnected) = sleeper.recv_timeout(POLL) {
                    return;
                }
                continue;
            }
            let r = match &self.wire {
                Wire::Rpc => self.follow(&master, stop),
                Wire::Grpc(o) => super::grpc_follow::follow(&self, o, &master, stop),
                Wire::Kt(p) => super::kt_follow::follow(&self, p, &master, stop),
            };
            self.status.connected.store(false, Relaxed);
            match r {
                Err(Ended::Stopping) => return,
                Err(Ended::Switched) => {
                    backoff = BACKOFF_MIN;
                    continue;
                }
                Err(e) => {
                    tracing::warn!("replication from {master}: {e}");
                    if let Ok(mut last) = self.status.last_error.lock() {
                        *last = e.to_string();
                    }
                }
                Ok(()) => {}
            }
            // A connection that carried updates was healthy: start over.
            if self.status.applied.load(Relaxed) != applied_before {
                backoff = BACKOFF_MIN;
            }
            // Sleeps the backoff, or less when `Handle::stop` drops the sender.
            if let Err(mpsc::RecvTimeoutError::Disconnected) = sleeper.recv_timeout(backoff) {
                return;
            }
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
    }

    /// One connection: the request, the answer, then batches until it ends.
    fn follow(&self, master: &str, stop: &AtomicBool) -> Result<(), Ended> {
        if master.starts_with(super::kt_follow::SCHEME) {
            return Err(Ended::Refused(format!(
                "{master} is a Kyoto Tycoon master: a replica started with --replicate-from HOST:PORT follows memstored masters only; restart it with --replicate-from {master}"
            )));
        }
        let mut conn = Conn::open(master, &self.status)?;
        let skew = self.status.skew_us.swap(0, Relaxed);
        let applied = self.status.applied_ts.load(Relaxed).saturating_sub(skew);
        let from = if applied == 0 { 0 } else { applied + 1 };
        let mut out = BytesMut::new();
        let params = [Value::from(from), Value::from(self.server_id)];
        rpc::encode_request(1, wire::METHOD, &params, &mut out);
        conn.sock.write_all(&out)?;
        tracing::info!("replicating from {master} (timestamps from {from})");
        let mut decoder = Decoder::new(Limits::with_max_frame(max_frame(self.max_item)));
        let mut acks = false;
        loop {
            match self.next(&mut conn, &mut decoder, stop)? {
                Message::Response(r) => {
                    let head = r.into_result().map_err(|e| Ended::Refused(e.to_string()))?;
                    let field = |name| match &head {
                        Value::Map(m) => rpc::map_get(m, name),
                        _ => None,
                    };
                    let id = field("server_id").and_then(Value::as_u64);
                    acks = field("ack").and_then(Value::as_bool).unwrap_or(false);
                    if id == Some(u64::from(self.server_id)) {
                        // Every update would look like our own and be skipped.
                        return Err(Ended::Refused(format!(
                            "the master has this server's id {}: give each server its own --server-id",
                            self.server_id
                        )));
                    }
                    self.status.master_id.store(id.unwrap_or(0), Relaxed);
                    self.status.connected.store(true, Relaxed);
                }
                Message::Notification(n) if n.method == wire::METHOD => {
                    let b = wire::decode_batch(&n.params)
                        .map_err(|e| Ended::Malformed(e.to_string()))?;
                    self.check_sizes(&b)?;
                    self.apply(&b)?;
                    if acks {
                        // Every batch, heartbeats too: the master's lag,
                        // its --sync-replicas, and its proof that this
                        // replica still reads.
                        let applied = self.status.applied_ts.load(Relaxed);
                        let ts = b.updates.last().map_or(applied, |u| u.timestamp);
                        out.clear();
                        rpc::encode_notification(wire::ACK, &[Value::from(ts)], &mut out);
                        conn.sock.write_all(&out)?;
                    }
                }
                Message::Notification(n) if n.method == wire::END => {
                    return Err(Ended::MasterStopping)
                }
                other => {
                    return Err(Ended::Malformed(format!(
                        "unexpected frame from the master: {other:?}"
                    )))
                }
            }
        }
    }

    /// The next frame; reads until one is whole, giving up after
    /// `DEAD_AFTER` (or three heartbeats) without one.
    fn next(
        &self,
        conn: &mut Conn,
        decoder: &mut Decoder,
        stop: &AtomicBool,
    ) -> Result<Message, Ended> {
        let since = Instant::now();
        loop {
            match decoder.decode(&conn.buf) {
                Ok(Parse::Complete(m, used)) => {
                    conn.buf.advance(used);
                    return Ok(m);
                }
                Ok(Parse::Incomplete) => {}
                Err(rpc::FrameError::TooLarge { limit }) => {
                    let what = format!("a frame over {limit} bytes");
                    return Err(Ended::TooLarge(what, self.max_item));
                }
                Err(e) => return Err(Ended::Malformed(e.to_string())),
            }
            conn.read_more(stop, since, DEAD_AFTER.max(HEARTBEAT * 3))?;
        }
    }

    /// Refuses a batch with a key or value over `-I`, before any of it is
    /// applied.
    fn check_sizes(&self, b: &wire::Batch) -> Result<(), Ended> {
        for u in &b.updates {
            self.check_size(u.key.len(), u.value.len())?;
        }
        Ok(())
    }

    /// Refuses a key or value over `-I`.
    pub(super) fn check_size(&self, key: usize, value: usize) -> Result<(), Ended> {
        for (what, len) in [("key", key), ("value", value)] {
            if len as u64 > self.max_item {
                let what = format!("a {what} of {len} bytes");
                return Err(Ended::TooLarge(what, self.max_item));
            }
        }
        Ok(())
    }

    /// Applies one of the master's updates to the database of its
    /// `dbm_index`; this server's own (come back through a dual master)
    /// and those of a database this server does not have are skipped.
    /// `false`: not applied (skipped, or a later local change of the key
    /// won).
    pub(super) fn apply_one(&self, u: &memstored_engine::ulog::Update) -> Result<bool, Ended> {
        if u.server_id == self.server_id {
            return Ok(false);
        }
        let Some(db) = usize::try_from(u.dbm_index)
            .ok()
            .and_then(|i| self.dbs.get(i))
        else {
            tracing::warn!(
                "replication: an update for database {} skipped: this server has {}",
                u.dbm_index,
                self.dbs.len()
            );
            return Ok(false);
        };
        Ok(db.apply_update(u)?)
    }

    /// Applies a batch, hands it to the OS, then saves the position.
    fn apply(&self, b: &wire::Batch) -> Result<(), Ended> {
        let mut applied = 0;
        for u in &b.updates {
            applied += u64::from(self.apply_one(u)?);
        }
        let s = &self.status;
        if let Some(last) = b.updates.last() {
            for db in &self.dbs {
                db.flush_dirty()?;
            }
            if let Some(rts) = &self.rts {
                rts.save(last.timestamp)?;
            }
            s.applied_ts.store(last.timestamp, Relaxed);
            s.applied.fetch_add(applied, Relaxed);
        }
        s.master_ts.store(b.last_ts, Relaxed);
        s.pending.store(b.pending, Relaxed);
        Ok(())
    }
}

/// The socket and what was read from it.
pub(super) struct Conn {
    /// `Status::generation` when connected: a change ends the connection.
    generation: u64,
    status: Arc<Status>,
    pub(super) sock: TcpStream,
    pub(super) buf: BytesMut,
}

impl Conn {
    /// Connects to `master` (HOST:PORT) and counts the connection.
    pub(super) fn open(master: &str, status: &Arc<Status>) -> Result<Conn, Ended> {
        let generation = status.generation.load(Relaxed);
        let sock = connect(master)?;
        sock.set_nodelay(true)?;
        sock.set_read_timeout(Some(POLL))?;
        sock.set_write_timeout(Some(DEAD_AFTER))?;
        status.connects.fetch_add(1, Relaxed);
        Ok(Conn {
            generation,
            status: status.clone(),
            sock,
            buf: BytesMut::with_capacity(1 << 16),
        })
    }

    /// Whether `changemaster` was called since this connection was made:
    /// nothing more read on it may be applied.
    pub(super) fn switched(&self) -> bool {
        self.status.generation.load(Relaxed) != self.generation
    }

    /// Reads what the master sent next into `buf`, waiting at most `POLL`;
    /// first ends the connection when this server stops, the master was
    /// changed, or no frame came for `silent` since `since`.
    pub(super) fn read_more(
        &mut self,
        stop: &AtomicBool,
        since: Instant,
        silent: Duration,
    ) -> Result<(), Ended> {
        if stop.load(Relaxed) {
            return Err(Ended::Stopping);
        }
        if self.switched() {
            return Err(Ended::Switched);
        }
        if since.elapsed() > silent {
            return Err(Ended::Silent(since.elapsed()));
        }
        if self.buf.capacity() - self.buf.len() < 1 << 15 {
            self.buf.reserve(1 << 16);
        }
        let len = self.buf.len();
        self.buf.resize(self.buf.capacity(), 0);
        let read = self.sock.read(&mut self.buf[len..]);
        self.buf.truncate(len + *read.as_ref().unwrap_or(&0));
        match read {
            // Told to change master while the read waited: that, not the
            // end of a stream it no longer wants, is why it ends.
            Ok(0) | Err(_) if self.switched() => Err(Ended::Switched),
            Ok(0) => Err(Ended::Closed),
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }
}

fn connect(master: &str) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for a in master.to_socket_addrs()? {
        match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}
