//! The replica's side (`--replicate-from`): a thread that connects to the
//! master, asks for its update log from the saved position (`rts`),
//! applies every update to the databases (by `dbm_index`, in `-s` order),
//! saves the position after each batch, and reconnects with a growing
//! backoff whenever the stream ends (the master restarting, the network
//! dropping, no heartbeat for `DEAD_AFTER`).
//!
//! A thread and blocking I/O, not a task: applying is engine work that
//! would otherwise hold a worker thread, and there is one stream.

use super::rts::Rts;
use super::wire;
use crate::replication::master::HEARTBEAT;
use bytes::{Buf, BytesMut};
use memstored_engine::Db;
use memstored_protocol::rpc::{self, Decoder, Limits, Message, Value};
use memstored_protocol::Parse;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// No frame from the master for this long: the connection is dead.
const DEAD_AFTER: Duration = Duration::from_secs(5);
/// How often a blocked read looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// What `stats` shows of the replica (`repl_*`).
#[derive(Default)]
pub struct Status {
    pub master: Mutex<String>,
    pub connected: AtomicBool,
    /// The master's server id, from its answer to `replicate`.
    pub master_id: AtomicU64,
    /// The master timestamp of the last update applied (the saved position).
    pub applied_ts: AtomicU64,
    /// Updates applied since start.
    pub applied: AtomicU64,
    /// The master's newest timestamp and its records not yet sent, as of
    /// the last batch.
    pub master_ts: AtomicU64,
    pub pending: AtomicU64,
    /// Connections made to the master since start.
    pub connects: AtomicU64,
}

impl Status {
    /// How far behind the master, in milliseconds of the master's clock
    /// (its newest write's timestamp minus the last applied one's): 0 when
    /// nothing is pending.
    pub fn lag_ms(&self) -> u64 {
        if self.pending.load(Relaxed) == 0 {
            return 0;
        }
        let (m, a) = (self.master_ts.load(Relaxed), self.applied_ts.load(Relaxed));
        m.saturating_sub(a) / 1000
    }

    pub fn stats(&self) -> Vec<(&'static str, String)> {
        let master = self.master.lock().map(|m| m.clone()).unwrap_or_default();
        let n = |a: &AtomicU64| a.load(Relaxed).to_string();
        vec![
            ("repl_master", master),
            (
                "repl_connected",
                u8::from(self.connected.load(Relaxed)).to_string(),
            ),
            ("repl_master_server_id", n(&self.master_id)),
            ("repl_applied_timestamp", n(&self.applied_ts)),
            ("repl_applied_records", n(&self.applied)),
            ("repl_lag_records", n(&self.pending)),
            ("repl_lag_ms", self.lag_ms().to_string()),
            ("repl_connects", n(&self.connects)),
        ]
    }
}

/// Why one connection to the master ended.
#[derive(Debug, thiserror::Error)]
enum Ended {
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
    pub master: String,
    pub server_id: u16,
    pub dbs: Vec<Arc<Db>>,
    pub rts: Rts,
    pub status: Arc<Status>,
}

impl Follower {
    /// Starts following; `start_ts` is the saved position.
    pub fn spawn(self, start_ts: u64) -> io::Result<Handle> {
        let stop = Arc::new(AtomicBool::new(false));
        let (wake, sleeper) = mpsc::channel();
        self.status.applied_ts.store(start_ts, Relaxed);
        if let Ok(mut m) = self.status.master.lock() {
            m.clone_from(&self.master);
        }
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
            let r = self.follow(stop);
            self.status.connected.store(false, Relaxed);
            match r {
                Err(Ended::Stopping) => return,
                Err(e) => tracing::warn!("replication from {}: {e}", self.master),
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

    fn connect(&self) -> io::Result<TcpStream> {
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
        for a in self.master.to_socket_addrs()? {
            match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
                Ok(s) => return Ok(s),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// One connection: the request, the answer, then batches until it ends.
    fn follow(&self, stop: &AtomicBool) -> Result<(), Ended> {
        let mut sock = self.connect()?;
        sock.set_nodelay(true)?;
        sock.set_read_timeout(Some(POLL))?;
        sock.set_write_timeout(Some(DEAD_AFTER))?;
        self.status.connects.fetch_add(1, Relaxed);
        let applied = self.status.applied_ts.load(Relaxed);
        let from = if applied == 0 { 0 } else { applied + 1 };
        let mut out = BytesMut::new();
        let params = [Value::from(from), Value::from(self.server_id)];
        rpc::encode_request(1, wire::METHOD, &params, &mut out);
        sock.write_all(&out)?;
        tracing::info!("replicating from {} (timestamps from {from})", self.master);
        let mut conn = Conn {
            sock,
            buf: BytesMut::with_capacity(1 << 16),
            decoder: Decoder::new(Limits::with_max_frame(1 << 30)),
        };
        loop {
            match conn.next(stop)? {
                Message::Response(r) => {
                    let head = r.into_result().map_err(|e| Ended::Refused(e.to_string()))?;
                    let id = match &head {
                        Value::Map(m) => rpc::map_get(m, "server_id").and_then(Value::as_u64),
                        _ => None,
                    };
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
                    self.apply(&b)?;
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

    /// Applies a batch, hands it to the OS, then saves the position.
    fn apply(&self, b: &wire::Batch) -> Result<(), Ended> {
        let mut applied = 0;
        for u in &b.updates {
            if u.server_id == self.server_id {
                continue;
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
                continue;
            };
            db.apply_update(u)?;
            applied += 1;
        }
        let s = &self.status;
        if let Some(last) = b.updates.last() {
            for db in &self.dbs {
                db.flush_dirty()?;
            }
            self.rts.save(last.timestamp)?;
            s.applied_ts.store(last.timestamp, Relaxed);
            s.applied.fetch_add(applied, Relaxed);
        }
        s.master_ts.store(b.last_ts, Relaxed);
        s.pending.store(b.pending, Relaxed);
        Ok(())
    }
}

/// The socket and what was read from it.
struct Conn {
    sock: TcpStream,
    buf: BytesMut,
    decoder: Decoder,
}

impl Conn {
    /// The next frame; reads until one is whole, checking `stop` between
    /// reads and giving up after `DEAD_AFTER` without one.
    fn next(&mut self, stop: &AtomicBool) -> Result<Message, Ended> {
        let since = Instant::now();
        loop {
            match self.decoder.decode(&self.buf) {
                Ok(Parse::Complete(m, used)) => {
                    self.buf.advance(used);
                    return Ok(m);
                }
                Ok(Parse::Incomplete) => {}
                Err(e) => return Err(Ended::Malformed(e.to_string())),
            }
            if stop.load(Relaxed) {
                return Err(Ended::Stopping);
            }
            if since.elapsed() > DEAD_AFTER.max(HEARTBEAT * 3) {
                return Err(Ended::Silent(since.elapsed()));
            }
            if self.buf.capacity() - self.buf.len() < 1 << 15 {
                self.buf.reserve(1 << 16);
            }
            let len = self.buf.len();
            self.buf.resize(self.buf.capacity(), 0);
            match self.sock.read(&mut self.buf[len..]) {
                Ok(0) => {
                    self.buf.truncate(len);
                    return Err(Ended::Closed);
                }
                Ok(n) => self.buf.truncate(len + n),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) =>
                {
                    self.buf.truncate(len)
                }
                Err(e) => {
                    self.buf.truncate(len);
                    return Err(e.into());
                }
            }
        }
    }
}
