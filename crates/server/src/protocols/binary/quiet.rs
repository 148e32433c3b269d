//! Runs of quiet requests served as one batch.
//!
//! A client that pipelines GETQ/GETKQ (a multi-get: libmemcached's
//! `memcached_mget`, pylibmc's `get_multi`) or SETQ (a multi-set) sends a
//! run of them ended by a NOOP or a plain GET. memcached answers them one by
//! one; here a run of the same kind is gathered while the connection's
//! buffered input lasts and then read or stored in one engine batch
//! (`GetMany`, `StoreEach`: each shard's lock taken once for all of its
//! keys), as Kyoto Tycoon's bulk calls are. What a client sees is the same:
//! any other request, a refusal, or the end of what was read runs the
//! gathered requests first (`Session::settle`), so replies keep request
//! order, and nothing waits for more input.
//!
//! Output stays bounded as it was one request at a time: a batch answers
//! only values under [`SPLICE_FROM`] (each larger one is dropped as the
//! engine hands it over, then read again and answered alone), and a run
//! stops while the output is at [`FLUSH_AT`]; the rest goes on after the
//! output is written (`Session::resume`), the request that ended the run
//! held until then.

use super::{get, reply, Reply};
use crate::command::{Detailed, GetMany, Outcome, StoreEach};
use crate::protocols::out::{Out, SPLICE_FROM};
use crate::protocols::session::FLUSH_AT;
use crate::state::server::{expires_at_binary, Server};
use bytes::Bytes;
use memstored_engine::BatchPut;
use memstored_protocol::binary::{Command, ResponseHead, Status, StoreMode};
use std::collections::VecDeque;

/// The most requests gathered before they are run: a run's replies are
/// built in one go, so this bounds what one run adds to the output before
/// the connection's output limit is looked at again (`FLUSH_AT`).
pub const MAX_RUN: usize = 128;

/// GETQ/GETKQ or SETQ requests read and not yet run (at most one kind).
#[derive(Default)]
pub struct QuietRun {
    gets: VecDeque<QuietGet>,
    sets: Vec<QuietSet>,
    /// The last `run` stopped at the output limit with gets left.
    stalled: bool,
}

struct QuietGet {
    head: ResponseHead,
    key: Bytes,
    return_key: bool,
}

struct QuietSet {
    head: ResponseHead,
    key: Bytes,
    value: Bytes,
    flags: u32,
    exptime: u32,
}

impl QuietRun {
    /// Keeps `cmd` for the run if it is a GETQ/GETKQ or a SETQ without a
    /// CAS (running a run of sets before a get; a set after gets ends the
    /// run); hands anything else back, to be served after [`QuietRun::run`].
    pub fn gather(
        &mut self,
        srv: &Server,
        head: ResponseHead,
        cmd: Command,
        out: &mut Out,
    ) -> Result<(), Command> {
        match cmd {
            Command::Get {
                key,
                quiet: true,
                return_key,
            } => {
                self.run_sets(srv, out);
                self.gets.push_back(QuietGet {
                    head,
                    key,
                    return_key,
                });
            }
            // A set after gets ends the run (it waits for them: `run`).
            Command::Store {
                mode: StoreMode::Set,
                key,
                value,
                flags,
                exptime,
                cas: 0,
                quiet: true,
            } if self.gets.is_empty() => {
                self.sets.push(QuietSet {
                    head,
                    key,
                    value,
                    flags,
                    exptime,
                });
            }
            cmd => return Err(cmd),
        }
        Ok(())
    }

    /// Whether as many requests are gathered as a run holds.
    pub fn is_full(&self) -> bool {
        self.gets.len() + self.sets.len() >= MAX_RUN
    }

    /// Whether the last run stopped at the output limit: the rest is to go
    /// on once the output is written, before anything else is served (a
    /// run still being gathered is not: it waits for its end).
    pub fn is_stalled(&self) -> bool {
        self.stalled
    }

    /// Runs what was gathered, appending its replies to `out`, while the
    /// output is under `FLUSH_AT`; false when some are left.
    pub fn run(&mut self, srv: &Server, out: &mut Out) -> bool {
        while !self.gets.is_empty() {
            if out.len() >= FLUSH_AT {
                self.stalled = true;
                return false;
            }
            self.run_gets(srv, out);
        }
        self.run_sets(srv, out);
        self.stalled = false;
        true
    }

    /// Answers gets from the front of the run in request order, as one
    /// batch up to the first value of `SPLICE_FROM` bytes or more, which is
    /// then read again and answered alone. Hits answered, a quiet miss is
    /// silent. A batch that fails (a disk error) is served one request at a
    /// time, so each request gets the answer it would have had alone.
    fn run_gets(&mut self, srv: &Server, out: &mut Out) {
        let keys: Vec<&[u8]> = self.gets.iter().map(|g| g.key.as_ref()).collect();
        let (found, large) = match Detailed(GetMany { keys: &keys }).apply_below(srv, SPLICE_FROM) {
            Ok(answered) => answered,
            Err(_) => (Vec::new(), Some(0)),
        };
        drop(keys);
        let answered = found.len();
        for (g, r) in self.gets.iter().zip(found) {
            if let Some(r) = r {
                let how = Reply::Value {
                    key: &g.key,
                    quiet: true,
                    return_key: g.return_key,
                };
                reply(g.head, Outcome::Found(r), how, out);
            }
        }
        self.gets.drain(..answered);
        if large.is_some() {
            if let Some(g) = self.gets.pop_front() {
                get(srv, g.head, g.key, None, true, g.return_key, out);
            }
        }
    }

    /// Stored records are silent; a refused one (out of memory, too large
    /// for the cache) gets its error reply and the others are stored, as
    /// separate SETQs would be. On a read-only server every one is refused.
    fn run_sets(&mut self, srv: &Server, out: &mut Out) {
        if self.sets.is_empty() {
            return;
        }
        let puts: Vec<BatchPut<'_>> = self
            .sets
            .iter()
            .map(|s| BatchPut {
                key: &s.key,
                value: &s.value,
                flags: s.flags,
                expires_at: expires_at_binary(s.exptime),
            })
            .collect();
        let how = || Reply::Stored {
            quiet: true,
            absent: Status::NotStored,
        };
        match Detailed(StoreEach { records: &puts }).apply(srv) {
            Ok(mut refused) => {
                // Replies in request order.
                refused.sort_unstable_by_key(|(i, _)| *i);
                for (i, o) in refused {
                    if let Some(s) = self.sets.get(i) {
                        reply(s.head, o, how(), out);
                    }
                }
            }
            Err(o) => {
                for s in &self.sets {
                    reply(s.head, o.clone(), how(), out);
                }
            }
        }
        drop(puts);
        self.sets.clear();
    }
}
