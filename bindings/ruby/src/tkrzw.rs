//! The engine's Tkrzw calls (crates/engine/src/tkrzw_ops.rs, queue.rs) for
//! `Memstored::DBM`: compare_exchange_and_get with ANY_DATA, rekey, the
//! queue (push_last, pop_first with its wait), copy_file_data, timestamp,
//! file_path. lib/memstored/dbm_process.rb and dbm_files.rb give them
//! tkrzw-ruby's signatures.

use crate::convert::{self, out, owned, status};
use crate::dbm::Dbm;
use crate::gvl;
use magnus::{prelude::*, Error, RString, Ruby, Value};
use memstored_c::status::{Failure, MEMSTORED_STATUS_INFEASIBLE_ERROR};
use memstored_engine::CasValue;

type Res<T> = Result<T, Error>;

/// A compare-exchange operand: `any` (Ruby's ANY_DATA), nil (no record) or bytes.
fn operand(v: Value, any: bool) -> Res<Option<Option<Vec<u8>>>> {
    if any {
        return Ok(None);
    }
    if v.is_nil() {
        Ok(Some(None))
    } else {
        owned(v).map(|b| Some(Some(b)))
    }
}

fn cas(v: &Option<Option<Vec<u8>>>) -> CasValue<'_> {
    match v {
        None => CasValue::Any,
        Some(None) => CasValue::Absent,
        Some(Some(b)) => CasValue::Value(b),
    }
}

/// compare_exchange_and_get_native(key, expected, expected_any, desired,
/// desired_any) -> [Status, the value before or nil], atomically.
pub fn compare_exchange_and_get(
    ruby: &Ruby,
    rb_self: &Dbm,
    args: &[Value],
) -> Res<(Value, Option<RString>)> {
    let [key, expected, expected_any, desired, desired_any] = *args else {
        return Err(convert::arity(ruby, args.len(), 5, 5));
    };
    let key = owned(key)?;
    let expected = operand(expected, expected_any.to_bool())?;
    let desired = operand(desired, desired_any.to_bool())?;
    let open = rb_self.open(ruby)?;
    let result = open
        .db
        .compare_exchange_and_get(&key, cas(&expected), cas(&desired));
    let (outcome, old) = match result {
        Ok((true, old)) => (Ok(()), old),
        Ok((false, old)) => (
            Err(Failure::new(
                MEMSTORED_STATUS_INFEASIBLE_ERROR,
                "the record does not hold the expected value",
            )),
            old,
        ),
        Err(e) => (Err(e.into()), None),
    };
    let old = old.map(|v| out(ruby, &v, open.enc)).transpose()?;
    Ok((status(ruby, outcome)?, old))
}

/// rekey_native(old_key, new_key, overwrite, copying) -> Status.
pub fn rekey(
    ruby: &Ruby,
    rb_self: &Dbm,
    old: Value,
    new: Value,
    overwrite: bool,
    copying: bool,
) -> Res<Value> {
    let (old, new) = (owned(old)?, owned(new)?);
    let open = rb_self.open(ruby)?;
    let result = open.db.rekey(&old, &new, overwrite, copying);
    status(ruby, result.map_err(Failure::from))
}

/// push_last_native(value, wtime, notify) -> Status; wtime negative: now.
pub fn push_last(ruby: &Ruby, rb_self: &Dbm, value: Value, wtime: f64, notify: bool) -> Res<Value> {
    let value = owned(value)?;
    let open = rb_self.open(ruby)?;
    let result = open.db.push_last(&value, wtime, notify).map(|_| ());
    status(ruby, result.map_err(Failure::from))
}

/// pop_first_native(retry_wait) -> [Status, key, value] (nil key and value
/// on failure). A wait for a push releases the GVL.
pub fn pop_first(
    ruby: &Ruby,
    rb_self: &Dbm,
    retry_wait: f64,
) -> Res<(Value, Option<RString>, Option<RString>)> {
    let open = rb_self.open(ruby)?;
    let result = if retry_wait > 0.0 {
        gvl::without(|| open.db.pop_first(retry_wait))
    } else {
        open.db.pop_first(0.0)
    };
    match result {
        Ok((k, v)) => Ok((
            status(ruby, Ok(()))?,
            Some(out(ruby, &k, open.enc)?),
            Some(out(ruby, &v, open.enc)?),
        )),
        Err(e) => Ok((status(ruby, Err(e.into()))?, None, None)),
    }
}

/// copy_file_data_native(dest_path, sync_hard) -> Status: a consistent copy
/// of the files, made while other threads keep using the database.
pub fn copy_file_data(ruby: &Ruby, rb_self: &Dbm, dest: String, sync_hard: bool) -> Res<Value> {
    let open = rb_self.open(ruby)?;
    let result = gvl::without(|| open.db.copy_file_data(&dest, sync_hard));
    status(ruby, result.map_err(Failure::from))
}

/// Seconds since the epoch of the open or the last synchronize.
pub fn timestamp(ruby: &Ruby, rb_self: &Dbm) -> Res<f64> {
    Ok(rb_self.open(ruby)?.db.timestamp())
}

/// The path the database was opened with; nil for one without a file.
pub fn file_path(ruby: &Ruby, rb_self: &Dbm) -> Res<Option<String>> {
    let open = rb_self.open(ruby)?;
    let path = open.db.file_path();
    Ok((!path.is_empty()).then(|| path.to_string()))
}

/// The engine's count of the database's file bytes: an on-memory class
/// kept in a file (.tiny, .cache, .stdhash), the file as last saved;
/// otherwise in memory, the records' bytes.
pub fn file_size(ruby: &Ruby, rb_self: &Dbm) -> Res<u64> {
    Ok(rb_self.open(ruby)?.db.file_size())
}

/// Whether the engine holds the database healthy.
pub fn is_healthy(ruby: &Ruby, rb_self: &Dbm) -> Res<bool> {
    Ok(rb_self.open(ruby)?.db.is_healthy())
}
