//! `Memstored::Iterator`: an engine cursor that owns its database (an Arc),
//! so it is memory-safe after `DBM#close`, where the engine answers its
//! calls with PRECONDITION_ERROR. One thread moves it at a time (a mutex); others
//! wait for it with the GVL released.

use crate::convert::{self, out, owned, status};
use crate::dbm::Dbm;
use crate::gvl;
use magnus::encoding::Index;
use magnus::{prelude::*, Error, RString, Ruby, Value};
use memstored_c::status::{Failure, MEMSTORED_STATUS_NOT_FOUND_ERROR};
use memstored_engine::{Cursor, Db};
use parking_lot::{Mutex, MutexGuard};
use self_cell::self_cell;
use std::sync::Arc;

self_cell!(
    /// A cursor together with the database it borrows.
    struct OwnedCursor {
        owner: Arc<Db>,
        #[covariant]
        dependent: Cursor,
    }
);

struct State {
    cell: OwnedCursor,
    enc: Option<Index>,
    /// Moves of a hash cursor copy a shard's keys: they release the GVL.
    ordered: bool,
}

#[derive(Default)]
#[magnus::wrap(class = "Memstored::Iterator", free_immediately, size)]
pub struct Iter {
    state: Mutex<Option<State>>,
}

type Res<T> = Result<T, Error>;
type Pair = (Vec<u8>, bytes::Bytes);

fn past_end() -> Failure {
    Failure::new(
        MEMSTORED_STATUS_NOT_FOUND_ERROR,
        "the iterator is past the last record",
    )
}

impl Iter {
    /// Iterator.new(dbm): on no record until first, last or a jump.
    pub fn initialize(ruby: &Ruby, rb_self: &Self, dbm: &Dbm) -> Res<()> {
        let open = dbm.open(ruby)?;
        let ordered = open.db.is_ordered();
        *rb_self.state.lock() = Some(State {
            cell: OwnedCursor::new(open.db, |db| db.cursor()),
            enc: open.enc,
            ordered,
        });
        Ok(())
    }

    /// Releases the cursor; later calls raise StatusException.
    pub fn destruct(&self) {
        self.state.lock().take();
    }

    /// The locked state: taken at once when free, else waited for without the GVL
    /// (the holder may itself be waiting for the GVL to return).
    fn lock(&self) -> MutexGuard<'_, Option<State>> {
        self.state
            .try_lock()
            .unwrap_or_else(|| gvl::without(|| self.state.lock()))
    }

    /// Runs `f` on the cursor; `mover` calls on hash databases without the GVL.
    fn call<T>(
        &self,
        ruby: &Ruby,
        mover: bool,
        f: impl FnOnce(&mut Cursor<'_>) -> Result<T, Failure>,
    ) -> Res<(Result<T, Failure>, Option<Index>)> {
        let mut guard = self.lock();
        let state = guard
            .as_mut()
            .ok_or_else(|| convert::not_open(ruby, "destructed iterator"))?;
        let enc = state.enc;
        let result = if mover && !state.ordered {
            gvl::without(|| state.cell.with_dependent_mut(|_, c| f(c)))
        } else {
            state.cell.with_dependent_mut(|_, c| f(c))
        };
        Ok((result, enc))
    }

    fn moved(
        ruby: &Ruby,
        rb_self: &Self,
        f: impl FnOnce(&mut Cursor<'_>) -> memstored_engine::Result<()>,
    ) -> Res<Value> {
        let (result, _) = rb_self.call(ruby, true, |c| f(c).map_err(Failure::from))?;
        status(ruby, result)
    }

    pub fn first(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        Self::moved(ruby, rb_self, |c| c.first())
    }

    pub fn last(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        Self::moved(ruby, rb_self, |c| c.last())
    }

    pub fn jump(ruby: &Ruby, rb_self: &Self, key: Value) -> Res<Value> {
        let key = owned(key)?;
        Self::moved(ruby, rb_self, |c| c.jump(&key))
    }

    /// jump_lower(key, inclusive = false).
    pub fn jump_lower(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Res<Value> {
        let (key, inclusive) = key_and_flag(ruby, args)?;
        Self::moved(ruby, rb_self, |c| c.jump_lower(&key, inclusive))
    }

    /// jump_upper(key, inclusive = false).
    pub fn jump_upper(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Res<Value> {
        let (key, inclusive) = key_and_flag(ruby, args)?;
        Self::moved(ruby, rb_self, |c| c.jump_upper(&key, inclusive))
    }

    pub fn next(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        Self::moved(ruby, rb_self, |c| c.next())
    }

    pub fn previous(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        Self::moved(ruby, rb_self, |c| c.previous())
    }

    /// Reads a record (get, or step which also moves) and reports it into
    /// the optional status argument: [key, value] or nil.
    fn record(
        ruby: &Ruby,
        rb_self: &Self,
        args: &[Value],
        f: impl FnOnce(&mut Cursor<'_>) -> Result<Pair, Failure>,
    ) -> Res<Option<(RString, RString)>> {
        let target = status_arg(ruby, args)?;
        let (result, enc) = rb_self.call(ruby, false, f)?;
        convert::report(ruby, target, result.as_ref().map(|_| ()))?;
        let Ok((k, v)) = result else { return Ok(None) };
        Ok(Some((out(ruby, &k, enc)?, out(ruby, &v, enc)?)))
    }

    /// get(status = nil) -> [key, value] or nil.
    pub fn get(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Res<Option<(RString, RString)>> {
        Self::record(ruby, rb_self, args, |c| c.get().map_err(Failure::from))
    }

    /// step(status = nil) -> [key, value] of the current record, then moves on; nil past the end.
    pub fn step(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Res<Option<(RString, RString)>> {
        Self::record(ruby, rb_self, args, |c| c.step()?.ok_or_else(past_end))
    }

    fn one(
        ruby: &Ruby,
        rb_self: &Self,
        args: &[Value],
        f: impl FnOnce(&mut Cursor<'_>) -> memstored_engine::Result<Vec<u8>>,
    ) -> Res<Option<RString>> {
        let target = status_arg(ruby, args)?;
        let (result, enc) = rb_self.call(ruby, false, |c| f(c).map_err(Failure::from))?;
        convert::report(ruby, target, result.as_ref().map(|_| ()))?;
        result.ok().map(|b| out(ruby, &b, enc)).transpose()
    }

    /// get_key(status = nil) -> the current key or nil.
    pub fn get_key(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Res<Option<RString>> {
        Self::one(ruby, rb_self, args, |c| c.key())
    }

    /// get_value(status = nil) -> the current value or nil.
    pub fn get_value(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Res<Option<RString>> {
        Self::one(ruby, rb_self, args, |c| c.get().map(|(_, v)| v.to_vec()))
    }

    pub fn set(ruby: &Ruby, rb_self: &Self, value: Value) -> Res<Value> {
        let value = owned(value)?;
        let (result, _) = rb_self.call(ruby, false, |c| c.set(&value).map_err(Failure::from))?;
        status(ruby, result)
    }

    /// Removes the current record and moves to the next.
    pub fn remove(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        Self::moved(ruby, rb_self, |c| c.remove())
    }
}

fn key_and_flag(ruby: &Ruby, args: &[Value]) -> Res<(Vec<u8>, bool)> {
    match *args {
        [k] => Ok((owned(k)?, false)),
        [k, f] => Ok((owned(k)?, f.to_bool())),
        _ => Err(convert::arity(ruby, args.len(), 1, 2)),
    }
}

fn status_arg(ruby: &Ruby, args: &[Value]) -> Res<Option<Value>> {
    match *args {
        [] => Ok(None),
        [s] => Ok(Some(s)),
        _ => Err(convert::arity(ruby, args.len(), 0, 1)),
    }
}
