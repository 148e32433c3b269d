//! Wire formats memstored speaks: the memcached binary, text and meta
//! protocols, as a pure library.
//!
//! Nothing here does IO, touches storage, or spawns tasks. Parsers take the
//! bytes a connection has buffered so far and answer one of three things:
//!
//! * [`Parse::Complete`] — a typed request plus how many bytes it used,
//! * [`Parse::Incomplete`] — read more and call again (nothing was allocated
//!   on the strength of a length the peer *declared*),
//! * an error that says exactly what to reply and whether to close.
//!
//! Encoders write the small framing parts (headers, status lines) into a
//! `BytesMut` and leave values out, so the server can hand a stored value
//! (`bytes::Bytes`) straight to a vectored write without copying it.
//!
//! See `README.md` in this crate for the intended calling sequence.

mod base64;
pub mod binary;
pub mod expiry;
mod frame;
pub mod kt;
mod parse;
pub mod rpc;
pub mod text;

pub use expiry::Expiry;
pub use frame::{owned_value, Frame, Framer, LARGE_VALUE};
pub use parse::Parse;

/// Longest key memcached accepts (`KEY_MAX_LENGTH`), in every protocol.
///
/// The binary header could describe a 64 KiB key, but memcached's item
/// format stores the key length in one byte and rejects anything above 250;
/// clients rely on that limit, so we enforce it everywhere.
pub const MAX_KEY_LEN: usize = 250;
