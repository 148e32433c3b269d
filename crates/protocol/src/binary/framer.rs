//! Framing of the binary protocol: header checks, the item limit, unknown
//! opcodes — every decision that needs only the header (and the key).

use super::{BinaryError, BinaryHeader, Opcode, Request, ResponseHead, HEADER_LEN, REQUEST_MAGIC};
use crate::{Frame, Framer};
use bytes::{Bytes, BytesMut};

/// Why a binary request is not served as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// An opcode memcached does not know (0x81 UnknownCommand).
    UnknownCommand(ResponseHead),
    /// A value longer than the item limit (0x03); `key` is the request's key
    /// (a refused SET also drops the old value), `opcode` its opcode.
    TooLarge {
        head: ResponseHead,
        opcode: Opcode,
        key: Bytes,
        size: u64,
    },
    /// A header that cannot be served; answer with its head, if any, and close.
    Invalid(BinaryError),
}

impl Refusal {
    /// The head of the request this refusal answers, if it has one.
    pub fn head(&self) -> Option<ResponseHead> {
        match self {
            Refusal::UnknownCommand(h) | Refusal::TooLarge { head: h, .. } => Some(*h),
            Refusal::Invalid(e) => e.reply_head(),
        }
    }
}

/// Frames binary requests; values above `max_value` bytes are refused from
/// the header, before their body is read.
#[derive(Debug, Clone, Copy)]
pub struct BinaryFramer {
    pub max_value: u64,
}

impl Framer for BinaryFramer {
    type Request = Request;
    type Refusal = Refusal;

    #[inline]
    fn next(&mut self, buf: &mut BytesMut) -> Frame<Request, Refusal> {
        let Some(raw) = buf.first_chunk::<HEADER_LEN>() else {
            // Nothing of a next request yet is "unknown" (0), as in the text
            // framer: `stats conns` tells a connection between requests
            // (`conn_read`) from one inside a request (`conn_nread`) by it.
            let need = if buf.is_empty() { 0 } else { HEADER_LEN };
            return Frame::Incomplete { need };
        };
        let h = BinaryHeader::decode(raw);
        if h.magic != REQUEST_MAGIC {
            return Frame::Close(None);
        }
        if let Err(e) = h.validate_request() {
            return Frame::Close(Some(Refusal::Invalid(e)));
        }
        let head = ResponseHead::reply_to(&h);
        let Some(opcode) = h.opcode() else {
            let skip = h.frame_len();
            return Frame::Refused {
                answer: Refusal::UnknownCommand(head),
                skip,
            };
        };
        if u64::from(h.value_len()) > self.max_value {
            // Wait for the key, which the refusal names; the value is skipped.
            let key_start = HEADER_LEN + usize::from(h.extras_len);
            let key_end = key_start + usize::from(h.key_len);
            let Some(key) = buf.get(key_start..key_end) else {
                return Frame::Incomplete { need: key_end };
            };
            let answer = Refusal::TooLarge {
                head,
                opcode,
                key: Bytes::copy_from_slice(key),
                size: u64::from(h.value_len()),
            };
            return Frame::Refused {
                answer,
                skip: h.frame_len(),
            };
        }
        let frame_len = usize::try_from(h.frame_len()).unwrap_or(usize::MAX);
        match Request::parse_buf(buf) {
            Ok(Some(r)) => Frame::Request(r),
            Ok(None) => Frame::Incomplete { need: frame_len },
            Err(e) => Frame::Close(Some(Refusal::Invalid(e))),
        }
    }
}
