//! One move or record call of a Tkrzw iterator (Tkrzw-RPC's Iterate
//! stream), on a cursor kept between calls as a [`CursorPlace`]. The moves
//! and statuses are Tkrzw's `DBM::Iterator`'s: on a hash database `Last`,
//! `JumpLower`, `JumpUpper` and `Previous` are NOT_IMPLEMENTED_ERROR, and a
//! `Jump` to an absent key leaves the iterator on nothing (NOT_FOUND_ERROR;
//! SUCCESS on a sharded one, as Tkrzw's ShardDBM answers).

use super::{check_size, Outcome};
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::{Cursor, CursorPlace, Error};

/// What an [`Iterate`] does.
#[derive(Debug, Clone, Copy)]
pub enum IterOp<'a> {
    First,
    Last,
    /// The record of the key (ordered: the first at or after it).
    Jump(&'a [u8]),
    /// The last record before the key (`true`: or at it).
    JumpLower(&'a [u8], bool),
    /// The first record after the key (`true`: or at it).
    JumpUpper(&'a [u8], bool),
    Next,
    Previous,
    /// The record the iterator is on.
    Get,
    /// A new value for the record the iterator is on.
    Set(&'a [u8]),
    /// Removes the record the iterator is on; the iterator goes to the next.
    Remove,
    /// The record the iterator is on, then a move to the next.
    Step,
}

/// One iterator call on the cursor at `place` (`None`: a new iterator, on
/// nothing yet).
#[derive(Debug, Clone, Copy)]
pub struct Iterate<'a> {
    pub op: IterOp<'a>,
}

/// What an [`Iterate`] did: `Ok(Some(..))` the record of `Get` and `Step`,
/// `Ok(None)` a move or change done; `Err`: `NotFound` (on no record, or
/// past the end), `TooLarge`, `ReadOnly` or `Failed` (NOT_IMPLEMENTED_ERROR
/// among them).
pub type Iterated = Result<Option<(Vec<u8>, Bytes)>, Outcome>;

impl Iterate<'_> {
    /// The answer and the place to go on from.
    pub fn apply(&self, srv: &Server, place: Option<CursorPlace>) -> (Iterated, CursorPlace) {
        let mut c = match place {
            Some(p) => srv.db.resume_cursor(p),
            None => srv.db.cursor(),
        };
        let r = self.step(srv, &mut c);
        (r, c.detach())
    }

    fn step<'s>(&self, srv: &'s Server, c: &mut Cursor<'s>) -> Iterated {
        let ordered = srv.db.is_ordered();
        // A name with `num_shards` is a Tkrzw ShardDBM, whose iterator
        // merges its shards' ones: on hash shards, a refused move has
        // already left every shard's place, and a jump to an absent key
        // succeeds on nothing.
        let sharded_hash = !ordered && srv.db.name().names_shards();
        let not_implemented = || Err(Outcome::Failed(Error::NotImplemented(String::new())));
        let moved = |r: memstored_engine::Result<()>| r.map(|()| None).map_err(Outcome::from_error);
        match self.op {
            IterOp::First => moved(c.first()),
            IterOp::Last | IterOp::JumpLower(..) | IterOp::JumpUpper(..) if sharded_hash => {
                *c = srv.db.cursor();
                not_implemented()
            }
            IterOp::Last => moved(c.last()),
            IterOp::Jump(k) => match c.jump(k) {
                Ok(()) => Ok(None),
                Err(e) => {
                    // A jump that finds nothing leaves the iterator on nothing.
                    *c = srv.db.cursor();
                    match e {
                        Error::NotFound(_) if sharded_hash => Ok(None),
                        e => Err(Outcome::from_error(e)),
                    }
                }
            },
            IterOp::JumpLower(k, inclusive) => moved(c.jump_lower(k, inclusive)),
            IterOp::JumpUpper(k, inclusive) => moved(c.jump_upper(k, inclusive)),
            IterOp::Next => moved(c.next()),
            IterOp::Previous if sharded_hash => {
                // On nothing: NOT_FOUND_ERROR; else a refused lower jump.
                let on = c.key().is_ok();
                *c = srv.db.cursor();
                if on {
                    not_implemented()
                } else {
                    Err(Outcome::NotFound)
                }
            }
            // Tkrzw's hash iterators refuse it wherever they are.
            IterOp::Previous if !ordered => not_implemented(),
            IterOp::Previous => moved(c.previous()),
            IterOp::Get => c.get().map(Some).map_err(Outcome::from_error),
            IterOp::Set(v) => {
                check_size(v.len(), srv.cfg.max_item_size)?;
                moved(c.set(v))
            }
            IterOp::Remove => moved(c.remove()),
            IterOp::Step => {
                let got = c.get().map_err(Outcome::from_error)?;
                match c.next() {
                    Ok(()) | Err(Error::NotFound(_)) => Ok(Some(got)),
                    Err(e) => Err(Outcome::from_error(e)),
                }
            }
        }
    }
}
