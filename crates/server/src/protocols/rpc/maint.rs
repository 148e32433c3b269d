//! Maintenance: clear vacuum synchronize rebuild count. vacuum, rebuild and
//! synchronize with `hard` or `make_backup` are slow (`is_slow`): the
//! engine works shard by shard, so other clients are held up by one shard
//! at a time, never the whole database.

use super::{code, Args, RpcError, RpcResult, Value};
use crate::command::{Flush, Outcome};
use crate::state::server::Server;
use memstored_engine::Db;
use memstored_protocol::rpc::value_str;
use std::sync::Arc;

fn engine(e: memstored_engine::Error) -> RpcError {
    RpcError::from(e)
}

/// `clear([inmap{DB}])` → nil: memcached's `flush_all` (same counter, same
/// read-only refusal).
pub fn clear(srv: &Arc<Server>, _params: &[Value]) -> RpcResult {
    let cmd = Flush {
        delay: 0,
        count_refused: true,
    };
    match cmd.apply(srv) {
        Outcome::Done => Ok(Value::Nil),
        o => Err(RpcError::from_outcome(o)),
    }
}

/// `vacuum([inmap{step, DB}])` → nil. Drops expired records; a full vacuum
/// (`step` absent or 0) also compacts the files when dead records fill more
/// than half.
pub fn vacuum(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 0);
    let db = &srv.db;
    let step = a.opt_count("step", 0)?;
    db.vacuum().map_err(engine)?;
    if step == 0 && db.should_be_rebuilt() {
        db.rebuild().map_err(engine)?;
    }
    Ok(Value::Nil)
}

/// `synchronize([inmap{hard, command, make_backup, DB}])` → nil. `hard`:
/// fsync. `make_backup` (Tkrzw-RPC's): also write a consistent copy named
/// `PATH.backup.SUFFIX` (the value is the suffix; empty or `true` = the UTC
/// time `YYYYMMDDhhmmss`). `command`: KT runs that program from its `-cmd`
/// directory after synchronizing; memstored runs no programs, so any
/// command is 40, KT's answer for a command that is not there.
pub fn synchronize(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 0);
    let db = &srv.db;
    let hard = a.opt_bool("hard").unwrap_or(false);
    let backup = match a.opt("make_backup") {
        None | Some(Value::Nil) | Some(Value::Boolean(false)) => None,
        Some(Value::Boolean(true)) => Some(String::new()),
        Some(v) => Some(
            value_str(v)
                .ok_or_else(|| RpcError::invalid("make_backup must be a string suffix"))?
                .to_string(),
        ),
    };
    if backup.is_some() && !db.is_writable() {
        // A read-only server writes no file, backups included.
        return Err(RpcError::from_outcome(crate::command::Outcome::ReadOnly));
    }
    db.synchronize(hard).map_err(engine)?;
    if let Some(suffix) = backup {
        db.backup(&suffix).map_err(engine)?;
    }
    if let Some(cmd) = a.opt("command").filter(|v| value_str(v) != Some("")) {
        return Err(RpcError::new(
            code::POSTPROCESSING,
            format!("memstored runs no postprocessing command ({cmd})"),
        ));
    }
    Ok(Value::Nil)
}

/// `rebuild([opts])` → nil: compacts every shard online.
pub fn rebuild(db: &Db) -> RpcResult {
    db.rebuild().map_err(engine)?;
    Ok(Value::Nil)
}

/// `count()` → the number of records (an integer).
pub fn count(db: &Db) -> RpcResult {
    Ok(Value::from(db.count()))
}
