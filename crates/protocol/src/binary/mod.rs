//! memcached binary protocol (magic 0x80 requests, 0x81 responses).
//!
//! Typical server loop:
//!
//! 1. [`BinaryHeader::parse`] on the read buffer. `Incomplete` until 24 bytes.
//! 2. [`BinaryHeader::validate_request`]: lengths that memcached refuses
//!    (key > 250, extras/key longer than the body, wrong extras for the
//!    opcode) become a [`BinaryError`] that names the status to send; the
//!    connection is then closed.
//! 3. If [`BinaryHeader::body_len`] exceeds the item-size limit, answer
//!    [`Status::TooLarge`] and discard `body_len` bytes as they arrive,
//!    without ever buffering them.
//! 4. Otherwise wait for [`BinaryHeader::frame_len`] bytes and call
//!    [`Request::parse_buf`] (zero copy from a `BytesMut`) or
//!    [`Request::parse_bytes`].
//! 5. Encode replies with [`encode_response_head`] and send the value `Bytes`
//!    as its own `IoSlice`.

mod check;
mod error;
mod framer;
mod header;
mod opcode;
mod request;
mod response;
mod status;

pub use error::BinaryError;
pub use framer::{BinaryFramer, Refusal};
pub use header::{BinaryHeader, HEADER_LEN, REQUEST_MAGIC, RESPONSE_MAGIC};
pub use opcode::Opcode;
pub use request::{ArithMode, Command, ConcatMode, Request, StoreMode};
pub use response::{
    encode_error, encode_response, encode_response_head, EncodeError, Response, ResponseHead,
};
pub use status::Status;
