//! A procedure's result as it goes on the wire: msgpack values, except that
//! record values are referenced, not copied.
//!
//! Why: an `rmpv::Value` owns its bytes, so a `get_bulk` over large records
//! copied every value into the reply, and a client that stopped reading held
//! those copies; text and binary replies splice the store's own `Bytes` into
//! the output (`out.rs`), and RPC replies now do the same.

use crate::protocols::out::Out;
use bytes::{Bytes, BytesMut};
use memstored_protocol::rpc::{
    encode_bin_head, encode_map_head, encode_str_head, encode_value, Value,
};

/// A result: a plain value, a record value by reference, or a map of them.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Value(Value),
    /// Encoded as msgpack bin.
    Bin(Bytes),
    /// Encoded as msgpack str (old raw), the bytes as they are: what
    /// kt-msgpack's clients, which know no bin, can read.
    Str(Bytes),
    Map(Vec<(Reply, Reply)>),
}

impl From<Value> for Reply {
    fn from(v: Value) -> Reply {
        Reply::Value(v)
    }
}

impl From<&str> for Reply {
    fn from(s: &str) -> Reply {
        Reply::Value(Value::from(s))
    }
}

impl Reply {
    /// A map with text keys.
    pub fn map(entries: Vec<(&str, Reply)>) -> Reply {
        Reply::Map(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// Bytes the encoded reply takes, at least (its values; headers aside).
    pub fn value_bytes(&self) -> usize {
        match self {
            Reply::Value(_) => 0,
            Reply::Bin(b) | Reply::Str(b) => b.len(),
            Reply::Map(m) => m
                .iter()
                .map(|(k, v)| k.value_bytes().saturating_add(v.value_bytes()))
                .fold(0, usize::saturating_add),
        }
    }

    /// Appends the msgpack encoding to `out`, splicing large values in uncopied.
    pub fn encode(&self, out: &mut Out) {
        match self {
            Reply::Value(v) => encode_value(v, out.buf()),
            Reply::Bin(b) | Reply::Str(b) => {
                if matches!(self, Reply::Str(_)) {
                    encode_str_head(bin_len(b), out.buf());
                } else {
                    encode_bin_head(bin_len(b), out.buf());
                }
                out.value_or_copy(b);
            }
            Reply::Map(m) => {
                encode_map_head(u32::try_from(m.len()).unwrap_or(u32::MAX), out.buf());
                for (k, v) in m {
                    k.encode(out);
                    v.encode(out);
                }
            }
        }
    }

    /// The encoding, copied into one buffer (late answers, tests).
    pub fn encode_copied(&self, buf: &mut BytesMut) {
        match self {
            Reply::Value(v) => encode_value(v, buf),
            Reply::Bin(b) => {
                encode_bin_head(bin_len(b), buf);
                buf.extend_from_slice(b);
            }
            Reply::Str(b) => {
                encode_str_head(bin_len(b), buf);
                buf.extend_from_slice(b);
            }
            Reply::Map(m) => {
                encode_map_head(u32::try_from(m.len()).unwrap_or(u32::MAX), buf);
                for (k, v) in m {
                    k.encode_copied(buf);
                    v.encode_copied(buf);
                }
            }
        }
    }

    /// As an owned `Value` (the in-process API and tests).
    pub fn into_value(self) -> Value {
        match self {
            Reply::Value(v) => v,
            Reply::Bin(b) => Value::Binary(b.to_vec()),
            Reply::Str(b) => match String::from_utf8(b.to_vec()) {
                Ok(s) => Value::from(s),
                // An owned Value cannot hold a str that is not UTF-8.
                Err(e) => Value::Binary(e.into_bytes()),
            },
            Reply::Map(m) => Value::Map(
                m.into_iter()
                    .map(|(k, v)| (k.into_value(), v.into_value()))
                    .collect(),
            ),
        }
    }
}

impl Reply {
    /// The reply for a client that sent no bin: record data as str.
    /// Record values and keys (`Bin`) keep their bytes as they are; bin
    /// inside plain values (Tkrzw's `list`, `search`) becomes str when it
    /// is UTF-8, which an owned msgpack str must be.
    pub fn into_text(self) -> Reply {
        match self {
            Reply::Bin(b) => Reply::Str(b),
            Reply::Map(m) => Reply::Map(
                m.into_iter()
                    .map(|(k, v)| (k.into_text(), v.into_text()))
                    .collect(),
            ),
            Reply::Value(v) => Reply::Value(value_into_text(v)),
            r @ Reply::Str(_) => r,
        }
    }
}

fn value_into_text(v: Value) -> Value {
    match v {
        Value::Binary(b) => match String::from_utf8(b) {
            Ok(s) => Value::from(s),
            Err(e) => Value::Binary(e.into_bytes()),
        },
        Value::Array(a) => Value::Array(a.into_iter().map(value_into_text).collect()),
        Value::Map(m) => Value::Map(
            m.into_iter()
                .map(|(k, v)| (value_into_text(k), value_into_text(v)))
                .collect(),
        ),
        v => v,
    }
}

/// Values are bounded by `-I` (at most 4 GiB - 1), so this never saturates
/// in practice; saturating keeps a bug from panicking.
fn bin_len(b: &[u8]) -> u32 {
    u32::try_from(b.len()).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spliced_and_copied_encodings_agree_with_rmpv() {
        let big = Bytes::from(vec![7u8; 1000]);
        let r = Reply::map(vec![
            ("value", Reply::Bin(big.clone())),
            ("small", Reply::Bin(Bytes::from_static(b"ab"))),
            ("xt", Value::from(5u64).into()),
        ]);
        let mut expected = BytesMut::new();
        encode_value(&r.clone().into_value(), &mut expected);
        let mut out = Out::new();
        r.encode(&mut out);
        assert_eq!(out.to_vec(), expected.to_vec());
        let mut copied = BytesMut::new();
        r.encode_copied(&mut copied);
        assert_eq!(copied, expected);
        assert_eq!(r.value_bytes(), 1002);
    }

    #[test]
    fn text_replies_carry_str_with_the_bytes_as_they_are() {
        let big = Bytes::from(vec![b'z'; 1000]);
        let r = Reply::map(vec![
            ("value", Reply::Bin(big.clone())),
            ("raw", Reply::Bin(Bytes::from_static(b"\xff\x00"))),
        ])
        .into_text();
        let mut out = Out::new();
        r.encode(&mut out);
        let mut copied = BytesMut::new();
        r.encode_copied(&mut copied);
        assert_eq!(out.to_vec(), copied.to_vec());
        let mut expected = BytesMut::new();
        encode_map_head(2, &mut expected);
        encode_value(&Value::from("value"), &mut expected);
        encode_str_head(1000, &mut expected);
        expected.extend_from_slice(&big);
        encode_value(&Value::from("raw"), &mut expected);
        expected.extend_from_slice(&[0xa2, 0xff, 0x00]);
        assert_eq!(copied, expected);
        // Inside plain values, UTF-8 bin becomes str and the rest stays bin.
        let v = Reply::Value(Value::Array(vec![
            Value::Binary(b"ok".to_vec()),
            Value::Binary(vec![0xff]),
        ]));
        assert_eq!(
            v.into_text().into_value(),
            Value::Array(vec![Value::from("ok"), Value::Binary(vec![0xff])])
        );
    }
}
