//! MessagePack-RPC framing (the msgpack-rpc spec, as Kyoto Tycoon's
//! kt-msgpack and Tkrzw-RPC clients speak it).
//!
//! * request `[0, msgid, method, params]`
//! * response `[1, msgid, error, result]`
//! * notification `[2, method, params]`
//!
//! Decoding is two steps so that no declared length ever drives an
//! allocation: a [`FrameScanner`] walks the MessagePack structure over the
//! buffer (no allocation, bounds-checked, with depth, size and object-count
//! limits) until it has seen one whole object, and only that complete,
//! bounded frame is handed to rmpv's decoder. Partial frames are
//! [`Parse::Incomplete`]; nothing is kept between calls except, optionally,
//! the scanner's resume point ([`Decoder`]).
//!
//! ```
//! use bytes::BytesMut;
//! use memstored_protocol::rpc::{self, Limits, Message, Value};
//! use memstored_protocol::Parse;
//!
//! let mut wire = BytesMut::new();
//! rpc::encode_request(7, "get", &[Value::from(&b"key"[..])], &mut wire);
//! let Parse::Complete(Message::Request(req), used) = rpc::decode(&wire, &Limits::default()).unwrap() else {
//!     panic!()
//! };
//! assert_eq!((req.msgid, req.method.as_str(), used), (7, "get", wire.len()));
//!
//! let mut out = BytesMut::new();
//! rpc::encode_error(req.msgid, 35, "no record", &mut out);
//! ```

mod encode;
mod framer;
mod scan;
#[cfg(test)]
mod tests;

pub use encode::{
    encode_bin_head, encode_error, encode_map_head, encode_notification, encode_request,
    encode_response, encode_response_head, encode_str_head, encode_value, error_value,
};
pub use framer::RpcFramer;
pub use rmpv;
pub use rmpv::Value;
pub use scan::{frame_len, FrameScanner, MAX_DEPTH_CAP};

use crate::Parse;
use thiserror::Error;

/// `type` field of a request.
pub const REQUEST: u64 = 0;
/// `type` field of a response.
pub const RESPONSE: u64 = 1;
/// `type` field of a notification.
pub const NOTIFICATION: u64 = 2;

/// Bounds on one frame. Everything is checked before any decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest frame in bytes (the server uses its max item size plus slack).
    pub max_frame: usize,
    /// Deepest container nesting (capped at [`MAX_DEPTH_CAP`]). A request
    /// with an options map in its params already nests 3 deep.
    pub max_depth: usize,
    /// Most objects (every scalar and container counts one) in a frame: a
    /// decoded `Value` is ~32 bytes however small its wire form, so this
    /// bounds the decoded size of frames full of one-byte objects.
    pub max_objects: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame: 128 << 20,
            max_depth: 32,
            max_objects: 4 << 20,
        }
    }
}

impl Limits {
    /// The defaults with another frame size limit.
    pub fn with_max_frame(max_frame: usize) -> Self {
        Limits {
            max_frame,
            ..Limits::default()
        }
    }
}

/// Why a frame could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrameError {
    /// Not MessagePack (a reserved byte, or bytes rmpv refused).
    /// The stream cannot be resynchronised: close.
    #[error("invalid MessagePack: {0}")]
    Invalid(&'static str),
    /// The frame is (or declares itself) larger than `Limits::max_frame`. Close.
    #[error("frame larger than {limit} bytes")]
    TooLarge { limit: usize },
    /// Containers nested deeper than `Limits::max_depth`. Close.
    #[error("containers nested deeper than {limit}")]
    TooDeep { limit: usize },
    /// More objects than `Limits::max_objects`. Close.
    #[error("more than {limit} objects in one frame")]
    TooManyObjects { limit: u64 },
    /// Valid MessagePack of the wrong shape (not `[0, msgid, method, params]`
    /// and so on). `len` is the whole frame's length, so the caller can drop
    /// it and go on. With a `msgid` the server answers an error response to
    /// it (kt-msgpack code 36, invalid parameters) and continues; without
    /// one it closes.
    #[error("not a MessagePack-RPC message: {reason}")]
    Shape {
        msgid: Option<u32>,
        reason: String,
        len: usize,
    },
}

impl FrameError {
    /// The msgid of the offending request, when it could be read.
    pub fn msgid(&self) -> Option<u32> {
        match self {
            FrameError::Shape { msgid, .. } => *msgid,
            _ => None,
        }
    }

    /// Bytes to drop to skip the offending frame, when it is known.
    pub fn frame_len(&self) -> Option<usize> {
        match self {
            FrameError::Shape { len, .. } => Some(*len),
            _ => None,
        }
    }

    /// True unless the connection can answer an error to `msgid()` and go on.
    pub fn must_close(&self) -> bool {
        self.msgid().is_none()
    }
}

/// `[0, msgid, method, params]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub msgid: u32,
    pub method: String,
    pub params: Vec<Value>,
}

/// `[1, msgid, error, result]`; `error` is `Nil` on success.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub msgid: u32,
    pub error: Value,
    pub result: Value,
}

impl Response {
    /// `Ok(result)` when `error` is nil, else `Err(error)`.
    pub fn into_result(self) -> Result<Value, Value> {
        if self.error.is_nil() {
            Ok(self.result)
        } else {
            Err(self.error)
        }
    }

    /// The kt-msgpack error code of an `[code, message]` error, if any.
    pub fn error_code(&self) -> Option<i64> {
        match &self.error {
            Value::Array(a) => a.first().and_then(Value::as_i64),
            v => v.as_i64(),
        }
    }
}

/// `[2, method, params]`: no response is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub method: String,
    pub params: Vec<Value>,
}

/// One decoded frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request(Request),
    Response(Response),
    Notification(Notification),
}

/// Decodes the message at the front of `buf` (stateless).
pub fn decode(buf: &[u8], limits: &Limits) -> Result<Parse<Message>, FrameError> {
    Decoder::new(*limits).decode(buf)
}

/// A per-connection decoder: limits plus the scanner's resume point, so a
/// large frame arriving over many reads is scanned once. Call `decode` with
/// the connection's whole read buffer; after `Complete(msg, used)` drop
/// `used` bytes. If bytes are dropped from the front in any other way, call
/// [`Decoder::reset`].
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    pub limits: Limits,
    scanner: FrameScanner,
}

impl Decoder {
    pub fn new(limits: Limits) -> Self {
        Decoder {
            limits,
            scanner: FrameScanner::default(),
        }
    }

    /// Forgets the scan progress.
    pub fn reset(&mut self) {
        self.scanner.reset();
    }

    /// Decodes one message from the front of `buf`.
    pub fn decode(&mut self, buf: &[u8]) -> Result<Parse<Message>, FrameError> {
        let len = match self.scanner.scan(buf, &self.limits)? {
            Parse::Complete((), len) => len,
            Parse::Incomplete => return Ok(Parse::Incomplete),
        };
        decode_frame(&buf[..len]).map(|m| Parse::Complete(m, len))
    }
}

/// Decodes one complete frame (already delimited by a scanner: every length
/// it declares is backed by bytes in `frame`).
fn decode_frame(frame: &[u8]) -> Result<Message, FrameError> {
    let mut rd = frame;
    let value = rmpv::decode::read_value(&mut rd)
        .map_err(|_| FrameError::Invalid("undecodable MessagePack"))?;
    message(value, frame.len())
}

fn shape(msgid: Option<u32>, reason: impl Into<String>, len: usize) -> FrameError {
    FrameError::Shape {
        msgid,
        reason: reason.into(),
        len,
    }
}

fn method_name(v: Value, msgid: Option<u32>, len: usize) -> Result<String, FrameError> {
    let bytes = match v {
        Value::String(s) => s.into_bytes(),
        Value::Binary(b) => b,
        _ => return Err(shape(msgid, "the method name is not a string", len)),
    };
    String::from_utf8(bytes).map_err(|_| shape(msgid, "the method name is not UTF-8", len))
}

fn params(v: Value, msgid: Option<u32>, len: usize) -> Result<Vec<Value>, FrameError> {
    match v {
        Value::Array(a) => Ok(a),
        // Some clients send nil for "no parameters".
        Value::Nil => Ok(Vec::new()),
        _ => Err(shape(msgid, "params is not an array", len)),
    }
}

fn msgid(v: &Value, len: usize) -> Result<u32, FrameError> {
    v.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| shape(None, "msgid is not a 32-bit unsigned integer", len))
}

fn message(value: Value, len: usize) -> Result<Message, FrameError> {
    let Value::Array(items) = value else {
        return Err(shape(None, "the message is not an array", len));
    };
    let kind = items.first().and_then(Value::as_u64);
    let mut it = items.into_iter();
    match (kind, it.len()) {
        (Some(REQUEST), 4) => {
            let _ = it.next();
            let id = msgid(&it.next().unwrap_or(Value::Nil), len)?;
            let method = method_name(it.next().unwrap_or(Value::Nil), Some(id), len)?;
            let params = params(it.next().unwrap_or(Value::Nil), Some(id), len)?;
            Ok(Message::Request(Request {
                msgid: id,
                method,
                params,
            }))
        }
        (Some(RESPONSE), 4) => {
            let _ = it.next();
            let id = msgid(&it.next().unwrap_or(Value::Nil), len)?;
            let error = it.next().unwrap_or(Value::Nil);
            let result = it.next().unwrap_or(Value::Nil);
            Ok(Message::Response(Response {
                msgid: id,
                error,
                result,
            }))
        }
        (Some(NOTIFICATION), 3) => {
            let _ = it.next();
            let method = method_name(it.next().unwrap_or(Value::Nil), None, len)?;
            let params = params(it.next().unwrap_or(Value::Nil), None, len)?;
            Ok(Message::Notification(Notification { method, params }))
        }
        (Some(REQUEST), n) => {
            // Answer a malformed request if its msgid is readable.
            let _ = it.next();
            let id = it.next().and_then(|v| msgid(&v, len).ok());
            Err(shape(id, format!("a request has 4 elements, not {n}"), len))
        }
        (Some(k @ (RESPONSE | NOTIFICATION)), n) => Err(shape(
            None,
            format!("a message of type {k} has the wrong number of elements ({n})"),
            len,
        )),
        _ => Err(shape(None, "unknown message type", len)),
    }
}

/// The bytes of a key or value sent as bin or str (str need not be UTF-8).
pub fn value_bytes(v: &Value) -> Option<&[u8]> {
    match v {
        Value::Binary(b) => Some(b),
        Value::String(s) => Some(s.as_bytes()),
        _ => None,
    }
}

/// The text of a str or bin value, if it is UTF-8.
pub fn value_str(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => s.as_str(),
        Value::Binary(b) => std::str::from_utf8(b).ok(),
        _ => None,
    }
}

/// Looks up `key` (matched as str or bin bytes) in a map value's entries.
pub fn map_get<'a>(map: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    map.iter()
        .find(|(k, _)| value_bytes(k) == Some(key.as_bytes()))
        .map(|(_, v)| v)
}
