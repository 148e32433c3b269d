//! Following a Kyoto Tycoon master (`--replicate-from kt://HOST:PORT`) as
//! `ktserver -mhost` does: Kyoto Tycoon's replication command (0xB1) on the
//! master's port, its update-log messages applied as `TimedDB::recover`
//! applies them (`memstored_protocol::kt::ulog_read` reads them), and the
//! caught-up frames (0xB0) answered. One connection per call of [`follow`];
//! `replica.rs`'s loop reconnects with its backoff.
//!
//! The position is Kyoto Tycoon's own timestamp (nanoseconds: milliseconds
//! × 10^6 plus a sequence number) of the last message read, kept exactly,
//! so that a restart asks for the messages after it and gets each once. It
//! is saved in `DIR/kt-replication.rts` as `ktserver -rts` saves it (20
//! digits and a newline), after the store has what it covers: after every
//! read's worth of messages applied, and when the connection ends. A
//! caught-up frame moves the position to the master's clock as in Kyoto
//! Tycoon; that move is saved with the next messages or at the end.
//! `stats` shows it in microseconds like every other replica's.
//!
//! Where memstored is stricter than `ktserver`: a message it cannot read
//! (sizes that do not add up, a value without its expiration time) ends the
//! connection with `repl_last_error` saying why and the replica stays
//! before it, as for any other master; `ktserver` logs the error and goes
//! on without the update.

use super::replica::{max_frame, Conn, Ended, Follower, DEAD_AFTER};
use memstored_engine::ulog::{UlogOp, Update};
use memstored_protocol::kt::ulog_read::{self as kt, Frame, Op};
use memstored_protocol::kt::{MAGIC_ERROR, MAGIC_REPLICATION, XT_MAX};
use memstored_protocol::Parse;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How `--replicate-from` names a Kyoto Tycoon master.
pub const SCHEME: &str = "kt://";

/// No frame from the master for this long: the connection is dead. A
/// caught-up master sends one every 100 ms; a busy one streams messages.
/// (`ktserver`'s slave gives each read 60 s.)
const SILENT: Duration = Duration::from_secs(30);

/// `DIR/kt-replication.rts`: the position in Kyoto Tycoon's nanoseconds,
/// apart from `replication.rts` (microseconds), so that neither is read in
/// the other's unit.
pub fn rts_path_in(dir: &Path) -> PathBuf {
    dir.join("kt-replication.rts")
}

/// The Kyoto Tycoon timestamp of the last message read (0: none), shared
/// by the connections of one replica.
#[derive(Debug, Clone, Default)]
pub struct KtPosition(Arc<AtomicU64>);

impl KtPosition {
    pub fn new(ts: u64) -> KtPosition {
        KtPosition(Arc::new(AtomicU64::new(ts)))
    }

    fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }

    fn advance(&self, ts: u64) {
        self.0.fetch_max(ts, Relaxed);
    }
}

/// Microseconds (the replica's `stats`) of a Kyoto Tycoon timestamp.
fn micros(kt_ts: u64) -> u64 {
    kt_ts / 1000
}

/// One connection to `master` (`kt://HOST:PORT` or HOST:PORT), until it ends.
pub(super) fn follow(
    f: &Follower,
    pos: &KtPosition,
    master: &str,
    stop: &AtomicBool,
) -> Result<(), Ended> {
    let addr = master.strip_prefix(SCHEME).unwrap_or(master);
    let mut conn = Conn::open(addr, &f.status)?;
    // `changemaster --ts_skew`: step back (Kyoto Tycoon's clock is ns).
    let skew_ns = f.status.skew_us.swap(0, Relaxed).saturating_mul(1000);
    let from = pos.get().saturating_sub(skew_ns);
    pos.0.store(from, Relaxed);
    let mut req = vec![MAGIC_REPLICATION];
    req.extend(0u32.to_be_bytes()); // flags: every server's messages but ours
    req.extend(from.to_be_bytes());
    req.extend(f.server_id.to_be_bytes());
    conn.sock.write_all(&req)?;
    let mut s = Session {
        f,
        pos,
        unsaved: 0,
        moved: false,
    };
    let r = s.run(&mut conn, master, from, stop);
    let saved = s.persist();
    r.and(saved)
}

struct Session<'a> {
    f: &'a Follower,
    pos: &'a KtPosition,
    /// Messages applied since the position was last saved.
    unsaved: u64,
    /// Whether the position moved since it was last saved.
    moved: bool,
}

impl Session<'_> {
    fn run(
        &mut self,
        conn: &mut Conn,
        master: &str,
        from: u64,
        stop: &AtomicBool,
    ) -> Result<(), Ended> {
        let mut heard = Instant::now();
        // The answer: 0xB1 accepts, 0xBF refuses (no update log).
        while conn.buf.is_empty() {
            conn.read_more(stop, heard, DEAD_AFTER)?;
        }
        match conn.buf.first().copied().unwrap_or_default() {
            MAGIC_REPLICATION => {}
            MAGIC_ERROR => {
                return Err(Ended::Refused(
                    "0xbf: the master has no update log (start ktserver with -ulog DIR)".into(),
                ))
            }
            other => {
                return Err(Ended::Malformed(format!(
                    "the master answered {other:#04x} to the replication command, not 0xb1: is {master} a Kyoto Tycoon port?"
                )))
            }
        }
        let _ = conn.buf.split_to(1);
        self.f.status.connected.store(true, Relaxed);
        tracing::info!("replicating from Kyoto Tycoon master {master} (after timestamp {from})");
        let limit = max_frame(self.f.max_item);
        loop {
            loop {
                if conn.switched() {
                    return Err(Ended::Switched);
                }
                let used = match kt::decode_frame(&conn.buf, limit) {
                    Ok(Parse::Complete(frame, used)) => {
                        self.take(frame, &mut conn.sock)?;
                        used
                    }
                    Ok(Parse::Incomplete) => break,
                    Err(kt::StreamError::TooLarge { size, .. }) => {
                        let what = format!("a message of {size} bytes");
                        return Err(Ended::TooLarge(what, self.f.max_item));
                    }
                    Err(e) => return Err(Ended::Malformed(format!("the master's stream: {e}"))),
                };
                let _ = conn.buf.split_to(used);
                heard = Instant::now();
            }
            if self.unsaved > 0 {
                self.persist()?;
            }
            match conn.read_more(stop, heard, SILENT) {
                Err(Ended::Closed) if !conn.buf.is_empty() => {
                    return Err(Ended::Malformed(format!(
                        "the master closed the connection in the middle of a frame ({} bytes of it read)",
                        conn.buf.len()
                    )))
                }
                r => r?,
            }
        }
    }

    /// One frame of the stream.
    fn take(&mut self, frame: Frame<'_>, sock: &mut std::net::TcpStream) -> Result<(), Ended> {
        let status = &self.f.status;
        match frame {
            Frame::CaughtUp { ts } => {
                sock.write_all(&[MAGIC_REPLICATION])?;
                status.pending.store(0, Relaxed);
                self.moved_to(ts);
            }
            Frame::Log { ts, message: [] } => self.moved_to(ts),
            Frame::Log { ts, message } => {
                let applied = self.apply(message, ts)?;
                status.applied.fetch_add(u64::from(applied), Relaxed);
                // More may follow: the master says when it has no more.
                status.pending.store(1, Relaxed);
                self.unsaved += 1;
                self.moved_to(ts);
            }
        }
        Ok(())
    }

    fn moved_to(&mut self, ts: u64) {
        self.pos.advance(ts);
        self.moved = true;
        let status = &self.f.status;
        status.applied_ts.fetch_max(micros(ts), Relaxed);
        status.master_ts.fetch_max(micros(ts), Relaxed);
    }

    /// Applies one message; `false`: not applied (this server's own, a
    /// database this server does not have, an operation Kyoto Tycoon does
    /// not replay either).
    fn apply(&self, message: &[u8], ts: u64) -> Result<bool, Ended> {
        let m = kt::parse_message(message)
            .map_err(|e| Ended::Malformed(format!("the master's message at {ts}: {e}")))?;
        self.f.status.master_id.store(u64::from(m.sid), Relaxed);
        let (op, key, value, expires_at) = match m.op {
            Op::Set { key, raw } => {
                let (value, expires_at) = self.value_of(m.dbid, raw, ts)?;
                (UlogOp::Set, key, value, expires_at)
            }
            Op::Remove { key } => (UlogOp::Remove, key, &[][..], 0),
            Op::Clear => (UlogOp::Clear, &[][..], &[][..], 0),
            Op::Other(_) => return Ok(false),
        };
        self.f.check_size(key.len(), value.len())?;
        let u = Update {
            timestamp: micros(ts),
            server_id: m.sid,
            dbm_index: u32::from(m.dbid),
            op,
            key: key.to_vec(),
            value: value.to_vec(),
            flags: 0,
            expires_at,
        };
        self.f.apply_one(&u)
    }

    /// A set's value and expiry: in a database with expiry the value comes
    /// after its `xt` (the last second it is alive), as this replica's
    /// database of the same index expects (Kyoto Tycoon's slaves read the
    /// master's values by their own `ktopts` too).
    fn value_of<'m>(&self, dbid: u16, raw: &'m [u8], ts: u64) -> Result<(&'m [u8], u64), Ended> {
        let persistent = self
            .f
            .dbs
            .get(usize::from(dbid))
            .is_none_or(|db| db.name().persistent);
        if persistent {
            return Ok((raw, 0));
        }
        let Some((xt, value)) = kt::split_xt(raw) else {
            return Err(Ended::Malformed(format!(
                "the master's set at {ts} has a value of {} bytes, without the 5-byte expiration time a database with expiry logs: if the master's database is ktopts=p, give this replica's the same (#ktopts=p)",
                raw.len()
            )));
        };
        let expires_at = if xt >= XT_MAX as u64 { 0 } else { xt + 1 };
        Ok((value, expires_at))
    }

    /// Hands what was applied to the OS, then saves the position.
    fn persist(&mut self) -> Result<(), Ended> {
        if self.unsaved == 0 && !self.moved {
            return Ok(());
        }
        for db in &self.f.dbs {
            db.flush_dirty()?;
        }
        if let Some(rts) = &self.f.rts {
            rts.save(self.pos.get())?;
        }
        self.unsaved = 0;
        self.moved = false;
        Ok(())
    }
}
