//! `Memstored::Index` and `Memstored::IndexIterator`: Tkrzw's secondary
//! index, the engine's (memstored_engine::Index, whose files the other
//! bindings share). lib/memstored/index.rb gives the methods tkrzw-ruby's
//! signatures and the strings their encoding; these return binary strings.

use crate::convert::{self, owned, status};
use crate::gvl;
use magnus::{Error, RArray, RString, Ruby, Value};
use memstored_c::status::Failure;
use memstored_engine::{Index, IndexIter};
use parking_lot::Mutex;

type Res<T> = Result<T, Error>;

#[derive(Default)]
#[magnus::wrap(class = "Memstored::Index", free_immediately, size)]
pub struct RbIndex {
    index: Index,
}

/// Raises the failure of a call that answers a value, not a Status.
fn raise<T>(ruby: &Ruby, r: memstored_engine::Result<T>) -> Res<T> {
    r.map_err(|e| convert::exception(ruby, e.into()))
}

impl RbIndex {
    /// open_native(path, writable, [[name, value], ...]) -> Status: a tree
    /// file for a .tkt path, else in memory (Tkrzw's PolyIndex).
    pub fn open(
        ruby: &Ruby,
        rb_self: &Self,
        path: String,
        writable: bool,
        params: Vec<(String, String)>,
    ) -> Res<Value> {
        if let Some((k, v)) = params
            .iter()
            .find(|(k, v)| format!("{k}{v}").contains([',', '#', '=']))
        {
            return status(
                ruby,
                Err(Failure::invalid(format!(
                    "parameter {k}={v} holds , # or =",
                ))),
            );
        }
        let text: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let result = gvl::without(|| rb_self.index.open(&path, writable, &text.join(",")));
        status(ruby, result.map_err(Failure::from))
    }

    pub fn close(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        status(
            ruby,
            gvl::without(|| rb_self.index.close()).map_err(Failure::from),
        )
    }

    pub fn contains(ruby: &Ruby, rb_self: &Self, key: Value, value: Value) -> Res<bool> {
        let (key, value) = (owned(key)?, owned(value)?);
        raise(ruby, rb_self.index.contains(&key, &value))
    }

    pub fn get_values(ruby: &Ruby, rb_self: &Self, key: Value, max: usize) -> Res<RArray> {
        let key = owned(key)?;
        let values = raise(ruby, rb_self.index.get_values(&key, max))?;
        let array = RArray::with_capacity(values.len());
        for v in values {
            array.push(ruby.str_from_slice(&v))?;
        }
        Ok(array)
    }

    pub fn add(ruby: &Ruby, rb_self: &Self, key: Value, value: Value) -> Res<Value> {
        let (key, value) = (owned(key)?, owned(value)?);
        status(ruby, rb_self.index.add(&key, &value).map_err(Failure::from))
    }

    pub fn remove(ruby: &Ruby, rb_self: &Self, key: Value, value: Value) -> Res<Value> {
        let (key, value) = (owned(key)?, owned(value)?);
        status(
            ruby,
            rb_self.index.remove(&key, &value).map_err(Failure::from),
        )
    }

    pub fn count(ruby: &Ruby, rb_self: &Self) -> Res<u64> {
        raise(ruby, rb_self.index.count())
    }

    pub fn file_path(ruby: &Ruby, rb_self: &Self) -> Res<String> {
        raise(ruby, rb_self.index.file_path())
    }

    pub fn clear(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        status(
            ruby,
            gvl::without(|| rb_self.index.clear()).map_err(Failure::from),
        )
    }

    pub fn rebuild(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        status(
            ruby,
            gvl::without(|| rb_self.index.rebuild()).map_err(Failure::from),
        )
    }

    pub fn synchronize(ruby: &Ruby, rb_self: &Self, hard: bool) -> Res<Value> {
        let result = gvl::without(|| rb_self.index.synchronize(hard));
        status(ruby, result.map_err(Failure::from))
    }

    pub fn is_open(&self) -> bool {
        self.index.is_open()
    }

    pub fn is_writable(&self) -> bool {
        self.index.is_writable()
    }
}

#[derive(Default)]
#[magnus::wrap(class = "Memstored::IndexIterator", free_immediately, size)]
pub struct RbIndexIter {
    iter: Mutex<Option<IndexIter>>,
}

impl RbIndexIter {
    /// IndexIterator.new(index): on no pair until first, last or jump.
    pub fn initialize(ruby: &Ruby, rb_self: &Self, index: &RbIndex) -> Res<()> {
        *rb_self.iter.lock() = Some(raise(ruby, index.index.iter())?);
        Ok(())
    }

    pub fn destruct(&self) {
        self.iter.lock().take();
    }

    fn call<T>(
        ruby: &Ruby,
        rb_self: &Self,
        f: impl FnOnce(&mut IndexIter) -> memstored_engine::Result<T>,
    ) -> Res<memstored_engine::Result<T>> {
        let mut guard = rb_self.iter.lock();
        let iter = guard
            .as_mut()
            .ok_or_else(|| convert::not_open(ruby, "destructed iterator"))?;
        Ok(f(iter))
    }

    fn moved(
        ruby: &Ruby,
        rb_self: &Self,
        f: impl FnOnce(&mut IndexIter) -> memstored_engine::Result<()>,
    ) -> Res<Value> {
        let result = Self::call(ruby, rb_self, f)?;
        status(ruby, result.map_err(Failure::from))
    }

    pub fn first(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        Self::moved(ruby, rb_self, IndexIter::first)
    }

    pub fn last(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        Self::moved(ruby, rb_self, IndexIter::last)
    }

    pub fn next(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        Self::moved(ruby, rb_self, IndexIter::next)
    }

    pub fn previous(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        Self::moved(ruby, rb_self, IndexIter::previous)
    }

    /// jump_native(key, value): to the first pair not before (key, value).
    pub fn jump(ruby: &Ruby, rb_self: &Self, key: Value, value: Value) -> Res<Value> {
        let (key, value) = (owned(key)?, owned(value)?);
        Self::moved(ruby, rb_self, |it| it.jump(&key, &value))
    }

    /// get_native -> [key, value] or nil.
    pub fn get(ruby: &Ruby, rb_self: &Self) -> Res<Option<(RString, RString)>> {
        let pair = Self::call(ruby, rb_self, IndexIter::get)?;
        Ok(pair
            .ok()
            .map(|(k, v)| (ruby.str_from_slice(&k), ruby.str_from_slice(&v))))
    }
}
