//! Encoders for responses (server side) and requests/notifications (client
//! side: `memstore remote`, `memstore bench --protocol rpc`).
//!
//! They write into a `BytesMut`. Large values can go out uncopied: write the
//! envelope with [`encode_response_head`] and a bin header with
//! [`encode_bin_head`], then hand the value's `Bytes` to a vectored write.

use super::{Value, NOTIFICATION, REQUEST, RESPONSE};
use bytes::{BufMut, BytesMut};
use rmp::encode as enc;

// Writing into memory cannot fail: `BytesMut`'s writer grows as needed.
fn ok<T, E: std::fmt::Debug>(r: Result<T, E>) {
    debug_assert!(r.is_ok(), "{:?}", r.err());
}

fn write_value(v: &Value, out: &mut BytesMut) {
    ok(rmpv::encode::write_value(&mut out.writer(), v));
}

/// `[0, msgid, method, params]`.
pub fn encode_request(msgid: u32, method: &str, params: &[Value], out: &mut BytesMut) {
    {
        let w = &mut out.writer();
        ok(enc::write_array_len(w, 4));
        ok(enc::write_uint(w, REQUEST));
        ok(enc::write_uint(w, u64::from(msgid)));
        ok(enc::write_str(w, method));
        ok(enc::write_array_len(w, params.len() as u32));
    }
    for p in params {
        write_value(p, out);
    }
}

/// `[2, method, params]`.
pub fn encode_notification(method: &str, params: &[Value], out: &mut BytesMut) {
    {
        let w = &mut out.writer();
        ok(enc::write_array_len(w, 3));
        ok(enc::write_uint(w, NOTIFICATION));
        ok(enc::write_str(w, method));
        ok(enc::write_array_len(w, params.len() as u32));
    }
    for p in params {
        write_value(p, out);
    }
}

/// `[1, msgid, nil, result]` for `Ok(result)`, `[1, msgid, error, nil]` for `Err(error)`.
pub fn encode_response(msgid: u32, result: Result<&Value, &Value>, out: &mut BytesMut) {
    match result {
        Ok(v) => {
            encode_response_head(msgid, out);
            write_value(v, out);
        }
        Err(e) => {
            {
                let w = &mut out.writer();
                ok(enc::write_array_len(w, 4));
                ok(enc::write_uint(w, RESPONSE));
                ok(enc::write_uint(w, u64::from(msgid)));
            }
            write_value(e, out);
            ok(enc::write_nil(&mut out.writer()));
        }
    }
}

/// The kt-msgpack error object `[code, message]`.
pub fn error_value(code: i64, message: &str) -> Value {
    Value::Array(vec![Value::from(code), Value::from(message)])
}

/// `[1, msgid, [code, message], nil]`.
pub fn encode_error(msgid: u32, code: i64, message: &str, out: &mut BytesMut) {
    encode_response(msgid, Err(&error_value(code, message)), out);
}

/// `[1, msgid, nil, ` — a successful response up to its result, which the
/// caller writes next (e.g. a map header, then bin heads and uncopied values).
pub fn encode_response_head(msgid: u32, out: &mut BytesMut) {
    let w = &mut out.writer();
    ok(enc::write_array_len(w, 4));
    ok(enc::write_uint(w, RESPONSE));
    ok(enc::write_uint(w, u64::from(msgid)));
    ok(enc::write_nil(w));
}

/// The header of a bin of `len` bytes; the bytes themselves follow.
pub fn encode_bin_head(len: u32, out: &mut BytesMut) {
    ok(enc::write_bin_len(&mut out.writer(), len));
}

/// The header of a str of `len` bytes; the bytes themselves follow.
pub fn encode_str_head(len: u32, out: &mut BytesMut) {
    ok(enc::write_str_len(&mut out.writer(), len));
}

/// The header of a map of `len` pairs; the keys and values follow.
pub fn encode_map_head(len: u32, out: &mut BytesMut) {
    ok(enc::write_map_len(&mut out.writer(), len));
}

/// One value, whole.
pub fn encode_value(v: &Value, out: &mut BytesMut) {
    write_value(v, out);
}
