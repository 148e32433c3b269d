//! Between Ruby objects and the engine: key and value bytes, result strings
//! in the database's encoding, and Status objects (a Ruby class, see
//! lib/memstored/status.rb) for results and failures.

use magnus::encoding::{EncodingCapable, Index};
use magnus::rb_sys::{AsRawId, AsRawValue, FromRawValue};
use magnus::value::IntoId;
use magnus::value::{Lazy, LazyId, Opaque};
use magnus::{prelude::*, Error, ExceptionClass, RClass, RModule, RString, Ruby, Value};
use memstored_c::status::{Failure, Outcome, MEMSTORED_STATUS_PRECONDITION_ERROR};
use memstored_engine::status::STATUS_NAMES;
use std::sync::OnceLock;

static STATUS: OnceLock<Opaque<RClass>> = OnceLock::new();
static STATUS_EXCEPTION: OnceLock<Opaque<ExceptionClass>> = OnceLock::new();

/// Finds the Ruby-defined Status and StatusException classes once, at load,
/// and gives Status Tkrzw's codes from the engine's table: a constant per
/// code (`Status::NOT_FOUND_ERROR`) and `Status::NAMES`, the names by code.
pub fn init(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let status: RClass = module.const_get("Status")?;
    let exception: ExceptionClass = module.const_get("StatusException")?;
    let names = ruby.ary_new_capa(STATUS_NAMES.len());
    for (code, name) in STATUS_NAMES.iter().enumerate() {
        status.const_set(*name, code as i32)?;
        let s = ruby.str_new(name);
        s.freeze();
        names.push(s)?;
    }
    names.freeze();
    status.const_set("NAMES", names)?;
    let _ = STATUS.set(Opaque::from(status));
    let _ = STATUS_EXCEPTION.set(Opaque::from(exception));
    let _ = ruby;
    Ok(())
}

fn class<T: magnus::value::ReprValue + Copy>(
    ruby: &Ruby,
    cell: &OnceLock<Opaque<T>>,
) -> Result<T, Error> {
    cell.get().map(|c| ruby.get_inner(*c)).ok_or_else(|| {
        Error::new(
            ruby.exception_load_error(),
            "memstored: load lib/memstored.rb, not the extension alone",
        )
    })
}

static EMPTY: Lazy<RString> = Lazy::new(|ruby| {
    let s = ruby.str_new("");
    s.freeze();
    s
});

static CODE: LazyId = LazyId::new("@code");
static MESSAGE: LazyId = LazyId::new("@message");

/// A new Status: SUCCESS for Ok, the failure's code and message otherwise.
///
/// Made as `Status#initialize` would make it, without calling it: every set
/// returns one, and a Ruby-level `initialize` cost about a third of a set.
/// The allocation and both instance variables are one protected call:
/// made as three (magnus' obj_alloc and ivar_set, each behind its own
/// rb_protect) they took half of a set's instructions inside the extension
/// (callgrind: 1,505 of 2,908 a set).
pub fn status(ruby: &Ruby, outcome: Outcome<()>) -> Result<Value, Error> {
    let class = class(ruby, &STATUS)?.as_raw();
    let (code, message) = match outcome {
        Ok(()) => (0, ruby.get_inner(&EMPTY)),
        Err(f) => (f.code, ruby.str_new(&f.message)),
    };
    let (code, message) = (
        ruby.integer_from_i64(code.into()).as_raw(),
        message.as_raw(),
    );
    let code_id = (*CODE).into_id_with(ruby).as_raw();
    let message_id = (*MESSAGE).into_id_with(ruby).as_raw();
    // SAFETY: Ruby calls on live values (the class is kept by its constant,
    // the others are on this stack), made under rb_protect, so a Ruby
    // exception (NoMemoryError) comes back as an Err, never unwinding here.
    let object = magnus::rb_sys::protect(|| unsafe {
        let object = rb_sys::rb_obj_alloc(class);
        rb_sys::rb_ivar_set(object, code_id, code);
        rb_sys::rb_ivar_set(object, message_id, message);
        object
    })?;
    // SAFETY: a VALUE Ruby just returned.
    Ok(unsafe { Value::from_raw(object) })
}

/// Writes an outcome into a caller's Status object (tkrzw's `status=nil`
/// out-parameter); nil is left alone.
pub fn report(
    ruby: &Ruby,
    target: Option<Value>,
    outcome: Result<(), &Failure>,
) -> Result<(), Error> {
    let Some(target) = target.filter(|v| !v.is_nil()) else {
        return Ok(());
    };
    match outcome {
        Ok(()) => target.funcall::<_, _, Value>("set", (0, ruby.get_inner(&EMPTY)))?,
        Err(f) => target.funcall::<_, _, Value>("set", (f.code, f.message.as_str()))?,
    };
    Ok(())
}

/// A StatusException carrying the failure, to raise.
pub fn exception(ruby: &Ruby, failure: Failure) -> Error {
    let made = status(ruby, Err(failure))
        .and_then(|s| class(ruby, &STATUS_EXCEPTION)?.new_instance::<_>((s,)));
    match made {
        Ok(e) => Error::from(e),
        Err(e) => e,
    }
}

/// The failure of a call on a database that is not open (or an iterator destructed).
pub fn not_open(ruby: &Ruby, what: &str) -> Error {
    exception(
        ruby,
        Failure::new(MEMSTORED_STATUS_PRECONDITION_ERROR, what),
    )
}

/// A key or value as a Ruby string: strings as they are, other objects as
/// tkrzw-ruby converts them (`to_str`, else `to_s`: 12 → "12", true → "true").
pub fn rstring(v: Value) -> Result<RString, Error> {
    if let Some(s) = RString::from_value(v) {
        return Ok(s);
    }
    if v.respond_to("to_str", false)? {
        return v.funcall("to_str", ());
    }
    v.funcall("to_s", ())
}

/// A copy of a key or value's bytes (for calls that release the GVL, and
/// for arrays of them).
pub fn owned(v: Value) -> Result<Vec<u8>, Error> {
    let s = rstring(v)?;
    // SAFETY: copied at once, before Ruby can run.
    Ok(unsafe { s.as_slice() }.to_vec())
}

/// Runs `f` on the bytes of a Ruby string, borrowed. `f` must not call
/// into Ruby (nothing may move or change the string meanwhile).
pub fn with_bytes<R>(s: RString, f: impl FnOnce(&[u8]) -> R) -> R {
    // SAFETY: `f` runs engine code only; the string is on the stack (kept
    // alive by the caller's argument) and no Ruby code runs while it is borrowed.
    f(unsafe { s.as_slice() })
}

/// A result string: binary, or tagged with the database's encoding.
pub fn out(ruby: &Ruby, bytes: &[u8], enc: Option<Index>) -> Result<RString, Error> {
    let s = ruby.str_from_slice(bytes);
    if let Some(enc) = enc {
        s.enc_associate(enc)?;
    }
    Ok(s)
}

/// Runs a search (a mode name, then the engine's search with that mode)
/// without the GVL and returns what it found as an array of result
/// strings; raises StatusException for an unknown mode or a failure.
pub fn search_results(
    ruby: &Ruby,
    mode: &str,
    enc: Option<Index>,
    search: impl FnOnce(memstored_engine::SearchMode) -> memstored_engine::Result<Vec<Vec<u8>>>,
) -> Result<magnus::RArray, Error> {
    let found: Outcome<Vec<Vec<u8>>> = crate::gvl::without(|| {
        let mode = memstored_c::dbm::search_mode(mode)?;
        Ok(search(mode)?)
    });
    let items = found.map_err(|f| exception(ruby, f))?;
    let array = magnus::RArray::with_capacity(items.len());
    for item in items {
        array.push(out(ruby, &item, enc)?)?;
    }
    Ok(array)
}

/// The encoding to give results: None for binary (ASCII-8BIT).
pub fn encoding(ruby: &Ruby, name: Option<String>) -> Result<Option<Index>, Error> {
    let Some(name) = name else { return Ok(None) };
    let index = ruby.find_encindex(&name)?;
    Ok((index != ruby.ascii8bit_encindex()).then_some(index))
}

/// An ArgumentError for a call with the wrong number of arguments.
pub fn arity(ruby: &Ruby, given: usize, min: usize, max: usize) -> Error {
    Error::new(
        ruby.exception_arg_error(),
        format!("wrong number of arguments (given {given}, expected {min}..{max})"),
    )
}
