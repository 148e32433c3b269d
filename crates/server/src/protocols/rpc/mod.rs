//! MessagePack-RPC procedures (Kyoto Tycoon's kt-msgpack set, plus
//! Tkrzw-RPC's `compare_exchange_multi`, `list`, `count`, `rebuild`,
//! `search`) as a pure function over the engine: no sockets, no tasks.
//!
//! Record procedures decode their parameters into a `crate::command` and
//! map its `Outcome` with [`RpcError::from_outcome`], the one table from
//! outcomes to kt-msgpack codes. The connection decodes a frame with
//! `memstored_protocol::rpc`, calls [`call_reply`], and encodes `Ok(reply)`
//! with `Reply::encode` and `Err(e)` with [`RpcError::encode`]. A notification is called the
//! same way and its result dropped. Procedures for which [`is_slow`] is true
//! (synchronize hard / make_backup, rebuild, vacuum, the key searches) run
//! off the worker threads within `crate::exec::slow`'s bounds and are answered by
//! msgid when done, while the connection keeps answering quick calls.
//!
//! The shapes are kt-msgpack's (its IDL types everything `string` and
//! `map<string, string>`): positional parameters, then an optional map of
//! options (`DB`, `xt`, `atomic`, `max`, ...); bulk calls carry their record
//! keys in that same map with a leading `_`; results are maps of strings
//! (`num` as decimal text, `xt` as absolute epoch seconds). `xt` given is
//! KT's: positive = seconds from now, negative = its absolute value is the
//! epoch time, absent = never. Error codes are kt-msgpack's (msgpack-rpc's 1
//! no such method and 2 bad arguments, KT's 32-42), sent as kt-msgpack sends
//! them, the bare code, to requests in its dialect (no bin), and as
//! `[code, message]` to requests carrying bin. Record data (keys, values)
//! comes back as msgpack str when the request's strings were all str
//! (kt-msgpack's era knew only raw), as bin otherwise ([`kt::wants_bin`]; a
//! request with no string at all gets bin).
//!
//! | group | file |
//! |---|---|
//! | ping echo status report | `basic.rs` |
//! | add set get check remove append seize replace cas increment increment_double | `record.rs` |
//! | set_bulk remove_bulk get_bulk | `bulk.rs` |
//! | match_prefix match_regex match_similar search | `search.rs` |
//! | clear vacuum synchronize rebuild count | `maint.rs` |
//! | compare_exchange_multi list | `tkrzw.rs` |
//! | `DB`, `xt`, `_` records, str or bin (`crate::protocols::rpc::select::select`, ...) | `kt.rs` |
//! | report's `sys_*` fields | `sysinfo.rs` |

pub mod replication;
pub mod select;
pub mod session;

mod basic;
mod bulk;
mod kt;
#[cfg(test)]
mod kt_bulk_tests;
#[cfg(test)]
mod kt_tests;
mod maint;
mod record;
mod reply;
mod search;
mod sysinfo;
#[cfg(test)]
mod tests;
mod tkrzw;

use crate::command::{Absence, Outcome};
use crate::state::server::Server;
pub use bulk::{found_records, remove_records, store_records};
pub use kt::{expiry_to_xt, expiry_to_xt_secs, xt_to_expiry};
use memstored_engine::Error;
pub use memstored_protocol::rpc::Value;
use memstored_protocol::rpc::{map_get, value_bytes, value_str};
pub use reply::Reply;
use std::sync::Arc;

/// kt-msgpack error codes (the error object of a response is the bare code).
pub mod code {
    /// No such procedure (msgpack-rpc's NO_METHOD_ERROR).
    pub const NO_METHOD: i64 = 1;
    /// A parameter is missing or of the wrong msgpack type (msgpack-rpc's
    /// ARGUMENT_ERROR, which kt-msgpack's generated dispatcher answers).
    pub const ARGUMENT: i64 = 2;
    /// Unexpected error (I/O, broken data).
    pub const UNEXPECTED: i64 = 32;
    /// `add` met an existing record.
    pub const RECORD_EXISTS: i64 = 33;
    /// No such database.
    pub const NO_DATABASE: i64 = 34;
    /// No such record.
    pub const NO_RECORD: i64 = 35;
    /// Missing or malformed parameters.
    pub const INVALID_PARAMETERS: i64 = 36;
    /// `cas` / `compare_exchange_multi` expectation failed.
    pub const CAS_FAILED: i64 = 37;
    /// The stored value is not a number (`increment`).
    pub const NOT_COMPATIBLE: i64 = 38;
    /// `synchronize`'s postprocessing `command` failed.
    pub const POSTPROCESSING: i64 = 40;
    /// Logical error (read-only database, overflow).
    pub const LOGICAL: i64 = 41;
    /// A procedure of kt-msgpack's IDL that memstored does not implement, or
    /// an operation the engine does not support.
    pub const NOT_IMPLEMENTED: i64 = 42;
}

/// A procedure's failure: a kt-msgpack code and a message. To a request in
/// kt-msgpack's dialect (no bin) the wire carries the code alone,
/// as kt-msgpack does (its clients compare the error object with the code);
/// to others `[code, message]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    /// Encode as the bare code (set by [`RpcError::in_dialect_of`]).
    pub bare_code: bool,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            bare_code: false,
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        RpcError::new(code::INVALID_PARAMETERS, message)
    }

    /// A missing parameter or one of the wrong type: msgpack-rpc's 2.
    pub(crate) fn argument(message: impl Into<String>) -> Self {
        RpcError::new(code::ARGUMENT, message)
    }

    /// Answers in the dialect of a request with `params`: the bare code
    /// unless it carried bin (see [`kt::speaks_bin`]).
    pub fn in_dialect_of(mut self, params: &[Value]) -> Self {
        self.bare_code = !kt::speaks_bin(params);
        self
    }

    /// The wire form: the bare code, or `[code, message]`.
    pub fn to_value(&self) -> Value {
        if self.bare_code {
            Value::from(self.code)
        } else {
            memstored_protocol::rpc::error_value(self.code, &self.message)
        }
    }

    /// `[1, msgid, error, nil]`; a bare code's message goes to the debug log.
    pub fn encode(&self, msgid: u32, out: &mut bytes::BytesMut) {
        if self.bare_code {
            tracing::debug!("RPC call {msgid} failed: {self}");
        }
        memstored_protocol::rpc::encode_response(msgid, Err(&self.to_value()), out);
    }

    /// The one table from command outcomes to kt-msgpack codes.
    pub(crate) fn from_outcome(o: Outcome) -> Self {
        let (c, message) = match o {
            Outcome::NotFound | Outcome::NotStored(Absence::Absent) => {
                (code::NO_RECORD, "no such record".to_string())
            }
            Outcome::NotStored(Absence::Present) => {
                (code::RECORD_EXISTS, "the record exists".to_string())
            }
            Outcome::Exists => (
                code::CAS_FAILED,
                "the record does not hold the expected value".to_string(),
            ),
            Outcome::NonNumeric => (
                code::NOT_COMPATIBLE,
                "the value is not a number".to_string(),
            ),
            Outcome::Overflow => (code::LOGICAL, "the increment overflows".to_string()),
            Outcome::TooLarge { size, cap } => (
                code::LOGICAL,
                format!("a value of {size} bytes exceeds the limit of {cap} bytes"),
            ),
            Outcome::NoMemory => (
                code::LOGICAL,
                "out of memory: the cache is full and evictions are disabled".to_string(),
            ),
            Outcome::ReadOnly => (code::LOGICAL, "the database is read-only".to_string()),
            Outcome::FlushDisabled => (
                code::LOGICAL,
                "clearing is disabled (-F, --disable-flush-all)".to_string(),
            ),
            Outcome::Failed(e) => (
                match e {
                    Error::InvalidArgument(_) => code::INVALID_PARAMETERS,
                    Error::NotImplemented(_) => code::NOT_IMPLEMENTED,
                    _ => code::UNEXPECTED,
                },
                e.to_string(),
            ),
            other => (code::UNEXPECTED, format!("unexpected outcome {other:?}")),
        };
        RpcError::new(c, message)
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for RpcError {}

impl From<Error> for RpcError {
    fn from(e: Error) -> Self {
        RpcError::from_outcome(Outcome::from_error(e))
    }
}

/// A slow call's refusal or failure as kt-msgpack reports it: busy and a
/// timed-out search are logical errors, a bad bound an invalid parameter.
impl From<crate::exec::slow::SlowError> for RpcError {
    fn from(e: crate::exec::slow::SlowError) -> Self {
        use crate::exec::slow::SlowError;
        match e {
            SlowError::Busy(why) | SlowError::TimedOut(why) => RpcError::new(code::LOGICAL, why),
            SlowError::Invalid(why) => RpcError::invalid(why),
            SlowError::Engine(e) => RpcError::from(e),
            e @ (SlowError::ShuttingDown | SlowError::Failed(_)) => {
                RpcError::new(code::UNEXPECTED, e.to_string())
            }
        }
    }
}

pub type RpcResult = Result<Value, RpcError>;

/// The largest reply a procedure may build (its values' bytes), as large as
/// the largest request frame: `-I` plus 1 MiB, at least 64 MiB.
pub fn max_reply(srv: &Server) -> usize {
    srv.max_message()
}

/// Calls procedure `method` with `params` (the request's params array);
/// the result as an owned value. Sessions use [`call_reply`].
pub fn call(srv: &Arc<Server>, method: &str, params: &[Value]) -> RpcResult {
    call_reply(srv, method, params).map(Reply::into_value)
}

/// Calls procedure `method` on the database its `DB` option picks
/// (`crate::state::databases`); record values in the result are referenced, not
/// copied.
pub fn call_reply(srv: &Arc<Server>, method: &str, params: &[Value]) -> Result<Reply, RpcError> {
    let reply = on_selected(srv, method, params).map_err(|e| e.in_dialect_of(params))?;
    Ok(if kt::wants_bin(params) {
        reply
    } else {
        reply.into_text()
    })
}

/// Runs the call on the database its `DB` option names (`crate::state::databases`).
fn on_selected(srv: &Arc<Server>, method: &str, params: &[Value]) -> Result<Reply, RpcError> {
    if method == "report" {
        // The whole server's report, as ktserver's, whatever `DB` says.
        return basic::report(srv).map(Reply::Value);
    }
    let target = crate::protocols::rpc::select::select(srv, params)?;
    if Arc::ptr_eq(target, srv) {
        return reply_on(srv, method, params);
    }
    let result = reply_on(target, method, params);
    // The connection hands the first database's writes to the OS after each
    // batch; another database's are handed over here, after each call, and
    // a failure there fails the call: its writes may not be acknowledged.
    if let Err(e) = target.db.flush_dirty() {
        tracing::error!("flushing {:?}: {e}", target.cfg.store);
        return Err(RpcError::from_outcome(Outcome::Failed(e)));
    }
    result
}

fn reply_on(srv: &Arc<Server>, method: &str, params: &[Value]) -> Result<Reply, RpcError> {
    match method {
        "get" => record::get(srv, params),
        "check" => record::check(srv, params),
        "seize" => record::seize(srv, params),
        "get_bulk" => bulk::get_bulk(srv, params),
        _ => call_value(srv, method, params).map(Reply::Value),
    }
}

/// The procedures whose results hold no record values.
fn call_value(srv: &Arc<Server>, method: &str, params: &[Value]) -> RpcResult {
    let db = &*srv.db;
    match method {
        "ping" | "void" => Ok(Value::Nil),
        "echo" => basic::echo(params),
        "status" => basic::status(srv, params),

        "set" => record::set(srv, params),
        "add" => record::add(srv, params),
        "replace" => record::replace(srv, params),
        "append" => record::append(srv, params),
        "remove" => record::remove(srv, params),
        "cas" => record::cas(srv, params),
        "increment" => record::increment(srv, params),
        "increment_double" => record::increment_double(srv, params),

        "set_bulk" => bulk::set_bulk(srv, params),
        "remove_bulk" => bulk::remove_bulk(srv, params),

        "match_prefix" => search::match_prefix(srv, params),
        "match_regex" => search::match_regex(srv, params),
        "match_similar" => search::match_similar(srv, params),
        "search" => search::search(srv, params),

        "clear" => maint::clear(srv, params),
        "vacuum" => maint::vacuum(srv, params),
        "synchronize" => maint::synchronize(srv, params),
        "rebuild" => maint::rebuild(db),
        "count" => maint::count(db),

        "changemaster" => replication::change_master(srv, params),
        "compare_exchange_multi" => tkrzw::compare_exchange_multi(srv, params),
        "list" => tkrzw::list(srv, params, max_reply(srv)),

        m if kt::UNIMPLEMENTED.contains(&m) => Err(RpcError::new(
            code::NOT_IMPLEMENTED,
            format!("{method} is not implemented"),
        )),
        _ => Err(RpcError::new(
            code::NO_METHOD,
            format!("no such procedure: {method}"),
        )),
    }
}

/// The most records a `list` may ask for and still run on a worker thread
/// (at most a few milliseconds of work).
pub const QUICK_LIST_ITEMS: usize = 1000;

/// True for calls that may take long (fsync, backup, compaction, a scan of
/// every key): run them off the worker threads, within `crate::exec::slow`'s
/// bounds, and answer by msgid when done.
pub fn is_slow(method: &str, params: &[Value]) -> bool {
    match method {
        "rebuild" | "vacuum" => true,
        "match_prefix" | "match_regex" | "match_similar" | "search" => true,
        // Every record unless `items` says fewer.
        "list" => !matches!(
            Args::new(params, 0).opt_count("items", 0),
            Ok(n) if n > 0 && n <= QUICK_LIST_ITEMS
        ),
        "synchronize" => {
            let a = Args::new(params, 0);
            a.opt_bool("hard").unwrap_or(false) || a.opt("make_backup").is_some()
        }
        _ => false,
    }
}

/// Positional parameters plus the optional trailing options map.
pub(crate) struct Args<'a> {
    pos: &'a [Value],
    opts: &'a [(Value, Value)],
}

impl<'a> Args<'a> {
    /// Splits `params`: a map after the first `required` parameters is the
    /// options map.
    pub fn new(params: &'a [Value], required: usize) -> Self {
        if params.len() > required {
            if let Some(Value::Map(m)) = params.last() {
                return Args {
                    pos: &params[..params.len() - 1],
                    opts: m,
                };
            }
        }
        Args {
            pos: params,
            opts: &[],
        }
    }

    /// Positional parameter `i`, which must be present (else 2, as kt-msgpack).
    pub fn at(&self, i: usize, what: &str) -> Result<&'a Value, RpcError> {
        self.pos
            .get(i)
            .ok_or_else(|| RpcError::argument(format!("missing parameter {what}")))
    }

    /// Positional parameter `i` as bytes (bin or str; else 2).
    pub fn bytes(&self, i: usize, what: &str) -> Result<&'a [u8], RpcError> {
        let v = self.at(i, what)?;
        value_bytes(v).ok_or_else(|| RpcError::argument(format!("{what} must be bin or str")))
    }

    /// The options map's entries (empty when there is none).
    pub fn options(&self) -> &'a [(Value, Value)] {
        self.opts
    }

    /// Positional parameter `i` (optional) or, failing that, option `name`.
    pub fn pos_or_opt(&self, i: usize, name: &str) -> Option<&'a Value> {
        self.pos.get(i).or_else(|| self.opt(name))
    }

    pub fn opt(&self, name: &str) -> Option<&'a Value> {
        map_get(self.opts, name)
    }

    /// A boolean option: true/false, a number (nonzero = true), or a
    /// string ("true"/"false"/"1"/"0"/""; KT sends option flags as strings,
    /// and the mere presence of a flag means true).
    pub fn opt_bool(&self, name: &str) -> Option<bool> {
        self.opt(name).map(|v| match v {
            Value::Boolean(b) => *b,
            Value::Nil => false,
            Value::Integer(_) => v.as_i64() != Some(0),
            _ => !matches!(value_str(v), Some("false" | "0")),
        })
    }

    /// An integer option (int, float truncated, or decimal string).
    pub fn opt_i64(&self, name: &str) -> Result<Option<i64>, RpcError> {
        self.opt(name)
            .map(|v| as_i64(v).ok_or_else(|| RpcError::invalid(format!("{name} must be a number"))))
            .transpose()
    }

    /// A non-negative count option; absent or negative = `default`.
    pub fn opt_count(&self, name: &str, default: usize) -> Result<usize, RpcError> {
        match self.opt_i64(name)? {
            None => Ok(default),
            Some(n) if n < 0 => Ok(default),
            Some(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        }
    }

    /// The `xt` option as the engine's absolute expiry (`None`: absent).
    pub fn expiry(&self) -> Result<Option<u64>, RpcError> {
        Ok(self.opt_i64("xt")?.map(xt_to_expiry))
    }

    /// KT's rule for writes: the record gets the given `xt`, or none at all
    /// when it is absent (`Some(0)`, never expires).
    pub fn expiry_or_never(&self) -> Result<Option<u64>, RpcError> {
        Ok(Some(self.expiry()?.unwrap_or(0)))
    }
}

/// An integer from int, float or decimal text.
pub(crate) fn as_i64(v: &Value) -> Option<i64> {
    match v {
        Value::Integer(i) => i.as_i64(),
        Value::F32(f) => float_to_i64(f64::from(*f)),
        Value::F64(f) => float_to_i64(*f),
        _ => value_str(v)?.trim().parse().ok(),
    }
}

fn float_to_i64(f: f64) -> Option<i64> {
    (f.is_finite() && f.abs() < 9.2e18).then_some(f as i64)
}

/// A float from float, int or decimal text.
pub(crate) fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::F32(f) => Some(f64::from(*f)),
        Value::F64(f) => Some(*f),
        Value::Integer(i) => i.as_f64(),
        _ => value_str(v)?.trim().parse().ok(),
    }
}

pub(crate) fn bin(b: &[u8]) -> Value {
    Value::Binary(b.to_vec())
}

#[cfg(test)]
pub(crate) fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(
        entries
            .into_iter()
            .map(|(k, v)| (Value::from(k), v))
            .collect(),
    )
}
