//! memcached text protocol and its meta commands (they share a connection).
//!
//! Typical server loop for one connection buffer:
//!
//! 1. [`TextParser::parse_buf`] (or [`TextParser::parse`] on a slice):
//!    `Incomplete` until a whole line (`\r\n` or `\n`) is buffered; a line
//!    longer than the limit is a fatal [`TextError`].
//! 2. For a [`Command`] with [`Command::data_len`], compare it with the
//!    item limit. Too large: reply [`response::SERVER_ERROR_TOO_LARGE`] and
//!    discard [`data_block_len`] bytes as they arrive. Otherwise wait for the
//!    block with [`take_data_block`] (zero-copy value).
//! 3. Errors: send [`TextError::reply`] unless `noreply`, drop
//!    `consumed` bytes (done by the `BytesMut` helpers), then `swallow`
//!    more, close if [`TextError::must_close`].
//! 4. Replies: [`response`] writes status lines and value headers into a
//!    `BytesMut`; values go out as their own `Bytes`.

pub mod auth;
mod error;
mod framer;
mod line;
pub mod meta;
mod multiget;
mod request;
pub mod response;

pub use error::{TextError, TextErrorKind};
pub use framer::{Refusal, TextFramer};
pub use meta::{
    MetaArith, MetaArithMode, MetaDelete, MetaFlags, MetaGet, MetaSet, MetaSetMode, MAX_META_FLAGS,
    MAX_OPAQUE_LEN,
};
pub use request::{
    data_block_len, parse_data_block, take_data_block, Command, IncrDecr, StoreCommand, StoreKind,
    TextParser, DEFAULT_MAX_LINE_LEN,
};
