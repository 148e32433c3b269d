use bytes::{BufMut, Bytes, BytesMut};
use thiserror::Error;

use super::error::BinaryError;
use super::header::{BinaryHeader, HEADER_LEN, RESPONSE_MAGIC};
use super::status::Status;
use crate::Parse;

/// The fields of a reply header the server chooses. Lengths are filled in
/// by the encoder from the parts it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResponseHead {
    /// Echo of the request's opcode byte (also for unknown opcodes).
    pub opcode: u8,
    pub status: Status,
    /// Echo of the request's opaque.
    pub opaque: u32,
    /// CAS of the item touched (0 when not applicable).
    pub cas: u64,
}

impl ResponseHead {
    /// A success head answering `request`: same opcode and opaque, CAS 0.
    pub fn reply_to(request: &BinaryHeader) -> ResponseHead {
        ResponseHead {
            opcode: request.opcode,
            status: Status::NoError,
            opaque: request.opaque,
            cas: 0,
        }
    }

    /// Same head with another status.
    pub fn with_status(self, status: Status) -> ResponseHead {
        ResponseHead { status, ..self }
    }

    /// Same head with a CAS value.
    pub fn with_cas(self, cas: u64) -> ResponseHead {
        ResponseHead { cas, ..self }
    }
}

/// A reply whose parts do not fit the header's length fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// extras + key + value exceeds `u32::MAX`, or the key exceeds
    /// `u16::MAX`, or the extras exceed 255 bytes.
    #[error("response body too large for the binary header")]
    TooLarge,
}

/// Writes header + extras + key of a reply into `out`, declaring a value of
/// `value_len` bytes that the caller sends next (typically the stored
/// `Bytes` as its own `IoSlice`, so it is never copied).
///
/// Nothing is written on error.
pub fn encode_response_head(
    head: &ResponseHead,
    extras: &[u8],
    key: &[u8],
    value_len: usize,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    let extras_len = u8::try_from(extras.len()).map_err(|_| EncodeError::TooLarge)?;
    let key_len = u16::try_from(key.len()).map_err(|_| EncodeError::TooLarge)?;
    let body_len = extras
        .len()
        .checked_add(key.len())
        .and_then(|n| n.checked_add(value_len))
        .and_then(|n| u32::try_from(n).ok())
        .ok_or(EncodeError::TooLarge)?;
    out.reserve(HEADER_LEN + extras.len() + key.len());
    BinaryHeader {
        magic: RESPONSE_MAGIC,
        opcode: head.opcode,
        key_len,
        extras_len,
        data_type: 0,
        vbucket_or_status: head.status.as_u16(),
        body_len,
        opaque: head.opaque,
        cas: head.cas,
    }
    .encode(out);
    out.put_slice(extras);
    out.put_slice(key);
    Ok(())
}

/// Writes a complete reply including a (small) value, copying it: for
/// version strings, stat lines, INCR results and error texts.
pub fn encode_response(
    head: &ResponseHead,
    extras: &[u8],
    key: &[u8],
    value: &[u8],
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    encode_response_head(head, extras, key, value.len(), out)?;
    out.put_slice(value);
    Ok(())
}

/// Writes an error reply whose body is memcached's text for the status
/// (e.g. "Not found"). Cannot fail: the body is a short constant.
pub fn encode_error(head: &ResponseHead, out: &mut BytesMut) {
    let msg = head.status.message().as_bytes();
    // A constant of a few dozen bytes always fits the header.
    let _ = encode_response(head, &[], &[], msg, out);
}

/// A decoded response, for clients (the CLI's remote and bench tools).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub header: BinaryHeader,
    pub extras: Bytes,
    pub key: Bytes,
    pub value: Bytes,
}

impl Response {
    /// Parses one response (magic 0x81) from a `Bytes` buffer, zero copy.
    /// Waits for the full body; a client reading replies to its own
    /// requests decides itself how large a reply it is willing to buffer
    /// (see [`BinaryHeader::parse_response`] to peek first).
    pub fn parse_bytes(buf: &Bytes) -> Result<Parse<Response>, BinaryError> {
        let Parse::Complete(header, _) = BinaryHeader::parse_response(buf)? else {
            return Ok(Parse::Incomplete);
        };
        let ext = usize::from(header.extras_len);
        let key = usize::from(header.key_len);
        if ext + key > header.body_len as usize {
            return Err(BinaryError::BodyTooShort(header));
        }
        let Ok(frame_len) = usize::try_from(header.frame_len()) else {
            return Ok(Parse::Incomplete);
        };
        let Some(body) = buf.get(HEADER_LEN..frame_len) else {
            return Ok(Parse::Incomplete);
        };
        let body = buf.slice_ref(body);
        let (Some(e), Some(k), Some(v)) = (
            body.get(..ext),
            body.get(ext..ext + key),
            body.get(ext + key..),
        ) else {
            return Err(BinaryError::BodyTooShort(header));
        };
        Ok(Parse::Complete(
            Response {
                header,
                extras: body.slice_ref(e),
                key: body.slice_ref(k),
                value: body.slice_ref(v),
            },
            frame_len,
        ))
    }

    /// The status, `None` if the server sent a code memstored does not know.
    pub fn status(&self) -> Option<Status> {
        Status::from_u16(self.header.vbucket_or_status)
    }
}

/// The reply an error is due, beside the reply heads it builds.
impl BinaryError {
    /// Reply head (opcode and opaque echoed, error status), if a reply is due.
    /// Encode it with [`super::encode_error`].
    pub fn reply_head(&self) -> Option<ResponseHead> {
        let status = self.status()?;
        let header = self.header()?;
        Some(ResponseHead::reply_to(header).with_status(status))
    }
}
