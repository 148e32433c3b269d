//! Kyoto Tycoon's replication command (binary protocol 0xB1) served from
//! the update log, so that a Kyoto Tycoon slave (`ktserver -mhost`,
//! `ktremotemgr slave`) or a client written for it follows a memstored
//! master. The frames and messages are `memstored_protocol::kt::ulog`'s.
//!
//! Where it maps and where not:
//! - Timestamps: ours are microseconds, Kyoto Tycoon's nanoseconds; a
//!   message's timestamp is ours × 1000, and a slave asking for the messages
//!   after `ts` gets ours from `ts / 1000 + 1`.
//! - Server ids: `sid` leaves out the messages logged under it (a dual
//!   master's own, come back), or with flag 0x01 sends only those, as
//!   `ktserver` does; after 256 left out in a row an empty message moves
//!   the slave's position on.
//! - memcached flags have no place in a message and are not sent; the
//!   expiration time is sent before the value unless the database is
//!   `ktopts=p`, as Kyoto Tycoon's TimedDB logs it: its `xt`, the last
//!   second the record is alive (what `get` reports), one before the
//!   engine's expiry, the first second it is gone.
//! - When the slave has caught up the stream sends the clock (one second
//!   back, never behind what it sent) every 100 ms, and the slave answers
//!   each with one byte. The answers are its acknowledgements: the master's
//!   `repl_replica_N_*` lag counts what was sent before the last one
//!   answered. A slave that leaves `STALL` of them unanswered is dropped.
//!   These streams do not count for `--sync-replicas` (a Kyoto Tycoon
//!   slave acknowledges nothing while it is behind).

use super::master::POLL;
use crate::protocols::rpc::expiry_to_xt_secs;
use crate::state::replication::liveness::STALL;
use crate::state::replication::progress::StreamProgress;
use crate::state::replication::StreamRequest;
use crate::state::server::Server;
use bytes::BytesMut;
use memstored_engine::ulog::{UlogOp, Update, UpdateLog};
use memstored_protocol::kt::ulog::{self as kt, LogOp};
use std::collections::VecDeque;
use std::io::Read;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Keys and values sent before the stream looks at the shutdown flag and
/// the slave's answers again.
const BATCH_BYTES: usize = 1 << 20;
/// How often a caught-up stream sends the clock (`ktserver` sleeps 0.1 s).
const CAUGHT_UP_EVERY: Duration = Duration::from_millis(100);
/// Messages left out in a row before an empty one (`Slave::DUMMYFREQ`).
const SKIPPED_MARK: u32 = 256;

/// Kyoto Tycoon's timestamp of one of ours.
pub fn kt_timestamp(micros: u64) -> u64 {
    micros.saturating_mul(1000)
}

/// Serves the stream until the slave goes away or the server stops.
pub fn run(
    mut sock: TcpStream,
    srv: &Server,
    log: &UpdateLog,
    req: &StreamRequest,
    white: bool,
    progress: &Arc<StreamProgress>,
) -> Result<&'static str, Box<dyn std::error::Error>> {
    let persistent: Vec<bool> = crate::state::databases::all(srv)
        .iter()
        .map(|db| db.name().persistent)
        .collect();
    let answers = Answers::start(&sock, progress)?;
    let mut out = BytesMut::with_capacity(64 << 10);
    let mut seen = log.wait_visible(u64::MAX, Duration::ZERO);
    let mut reader = log.read_from(req.min_ts)?;
    kt::encode_accept(&mut out);
    progress.live.send_all(&mut sock, &out)?;
    out.clear();
    let mut skipped = 0;
    // The newest timestamp read, sent or not (`rts` in ktserver).
    let mut newest = 0;
    let mut last_sent = 0;
    let mut next_caught_up = Instant::now();
    loop {
        if *srv.shutdown.borrow() {
            return Ok("the server is stopping");
        }
        if answers.failed.load(Relaxed) {
            return Ok("the slave went away or answered out of turn");
        }
        let (mut records, mut first, mut bytes) = (0u64, 0u64, 0usize);
        let mut exhausted = true;
        for u in reader.by_ref() {
            let u = u?;
            newest = newest.max(u.timestamp);
            if (u.server_id == req.replica_id) != white {
                skipped += 1;
                if skipped >= SKIPPED_MARK {
                    kt::encode_skipped(kt_timestamp(u.timestamp), &mut out);
                    skipped = 0;
                }
                continue;
            }
            skipped = 0;
            encode(&u, &persistent, &mut out);
            records += 1;
            if first == 0 {
                first = u.timestamp;
            }
            last_sent = u.timestamp;
            bytes += u.key.len() + u.value.len();
            if bytes >= BATCH_BYTES {
                exhausted = false;
                break;
            }
        }
        if !out.is_empty() {
            progress.live.send_all(&mut sock, &out)?;
            out.clear();
        }
        if records > 0 {
            let unsent = log.pending_after(reader.position());
            progress.sent(records, first, last_sent, unsent);
        }
        if !exhausted {
            continue;
        }
        if Instant::now() >= next_caught_up {
            if !answers.expect(last_sent) {
                return Err("the slave stopped answering".into());
            }
            let clock = crate::state::replication::progress::now_micros().saturating_sub(1_000_000);
            kt::encode_caught_up(kt_timestamp(clock.max(newest)), &mut out);
            progress.live.send_all(&mut sock, &out)?;
            out.clear();
            next_caught_up = Instant::now() + CAUGHT_UP_EVERY;
        }
        seen = log.wait_visible(seen, POLL.min(CAUGHT_UP_EVERY));
    }
}

/// One update as a Kyoto Tycoon message; an update for a database index
/// past 65535 (which Kyoto Tycoon cannot name) is left out.
fn encode(u: &Update, persistent: &[bool], out: &mut BytesMut) {
    let Ok(dbid) = u16::try_from(u.dbm_index) else {
        return;
    };
    let op = match u.op {
        UlogOp::Set => LogOp::Set {
            key: &u.key,
            value: &u.value,
            xt: expiry_to_xt_secs(u.expires_at),
            persistent: persistent.get(usize::from(dbid)).copied().unwrap_or(false),
        },
        UlogOp::Remove => LogOp::Remove { key: &u.key },
        UlogOp::Clear => LogOp::Clear,
    };
    kt::encode_log(kt_timestamp(u.timestamp), u.server_id, dbid, op, out);
}

/// The slave's answers to the caught-up frames, read on a thread of their
/// own: each is one byte 0xB1 and acknowledges what was sent before the
/// frame it answers.
struct Answers {
    sock: TcpStream,
    /// For each frame not yet answered, the last timestamp sent before it.
    waiting: Arc<Mutex<VecDeque<u64>>>,
    failed: Arc<AtomicBool>,
}

impl Answers {
    fn start(sock: &TcpStream, progress: &Arc<StreamProgress>) -> std::io::Result<Answers> {
        let me = Answers {
            sock: sock.try_clone()?,
            waiting: Arc::default(),
            failed: Arc::default(),
        };
        let mut rd = sock.try_clone()?;
        let (waiting, failed, progress) = (me.waiting.clone(), me.failed.clone(), progress.clone());
        std::thread::Builder::new()
            .name("memstored-kt-repl".into())
            .spawn(move || {
                let mut byte = [0u8; 1];
                while let Ok(1) = rd.read(&mut byte) {
                    let answered = waiting.lock().ok().and_then(|mut w| w.pop_front());
                    match (byte[0], answered) {
                        (memstored_protocol::kt::MAGIC_REPLICATION, Some(ts)) => {
                            progress.live.answered();
                            if ts != 0 {
                                progress.acked(ts);
                            }
                        }
                        _ => break,
                    }
                }
                failed.store(true, Relaxed);
            })?;
        Ok(me)
    }

    /// A caught-up frame is about to go out after `last_sent`; false when
    /// the slave has left `STALL` of them unanswered.
    fn expect(&self, last_sent: u64) -> bool {
        let limit = (STALL.as_millis() / CAUGHT_UP_EVERY.as_millis()) as usize;
        let Ok(mut w) = self.waiting.lock() else {
            return false;
        };
        if w.len() >= limit {
            return false;
        }
        w.push_back(last_sent);
        true
    }
}

impl Drop for Answers {
    fn drop(&mut self) {
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::kt::first_after;

    #[test]
    fn timestamps_map_both_ways() {
        assert_eq!(
            kt_timestamp(1_700_000_000_123_456),
            1_700_000_000_123_456_000
        );
        // The slave read up to one of ours: it gets the next.
        assert_eq!(first_after(kt_timestamp(42)), 43);
        // A timestamp of Kyoto Tycoon's own clock between two of ours.
        assert_eq!(first_after(42_999), 43);
        assert_eq!(first_after(0), 1);
    }
}
