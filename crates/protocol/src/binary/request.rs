use bytes::{Bytes, BytesMut};

use super::error::BinaryError;
use super::header::{BinaryHeader, HEADER_LEN};
use super::opcode::Opcode;
use crate::Parse;

/// SET / ADD / REPLACE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreMode {
    Set,
    Add,
    Replace,
}

/// APPEND / PREPEND.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConcatMode {
    Append,
    Prepend,
}

/// INCREMENT / DECREMENT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArithMode {
    Increment,
    Decrement,
}

/// One decoded binary request: the header (for opaque, CAS and the raw
/// opcode to echo) plus the typed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub header: BinaryHeader,
    pub command: Command,
}

/// What the client asked for. `quiet` marks the Q opcodes: suppress the
/// success reply (but GETQ-family hits are still sent, and errors always are).
/// Keys and values are `Bytes` slices of the received frame: no copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// GET, GETQ, GETK, GETKQ. `return_key`: K variants echo the key.
    Get {
        key: Bytes,
        quiet: bool,
        return_key: bool,
    },
    /// GAT, GATQ, GATK, GATKQ: get and set a new expiration.
    GetAndTouch {
        key: Bytes,
        exptime: u32,
        quiet: bool,
        return_key: bool,
    },
    /// TOUCH.
    Touch { key: Bytes, exptime: u32 },
    /// SET/ADD/REPLACE(Q). `cas` non-zero = compare-and-set.
    Store {
        mode: StoreMode,
        key: Bytes,
        value: Bytes,
        flags: u32,
        exptime: u32,
        cas: u64,
        quiet: bool,
    },
    /// APPEND/PREPEND(Q). Flags and expiry of the item are kept.
    Concat {
        mode: ConcatMode,
        key: Bytes,
        value: Bytes,
        cas: u64,
        quiet: bool,
    },
    /// DELETE(Q); `cas` non-zero must match.
    Delete { key: Bytes, cas: u64, quiet: bool },
    /// INCREMENT/DECREMENT(Q). `exptime == NO_AUTO_CREATE` (0xffffffff)
    /// means a missing key is NOT_FOUND instead of being created with
    /// `initial`.
    Arith {
        mode: ArithMode,
        key: Bytes,
        delta: u64,
        initial: u64,
        exptime: u32,
        cas: u64,
        quiet: bool,
    },
    /// QUIT(Q): reply (unless quiet), then close.
    Quit { quiet: bool },
    /// FLUSH(Q), with the optional delay extra.
    Flush { delay: Option<u32>, quiet: bool },
    /// NOOP: flush out everything pending, then reply.
    Noop,
    /// VERSION.
    Version,
    /// STAT, with an optional group name in the key.
    Stat { group: Option<Bytes> },
    /// SASL_LIST_MECHS.
    SaslListMechs,
    /// SASL_AUTH: key = mechanism, value = initial response
    /// (PLAIN: `\0user\0password`).
    SaslAuth { mechanism: Bytes, data: Bytes },
    /// SASL_STEP.
    SaslStep { mechanism: Bytes, data: Bytes },
    /// An opcode memstored does not implement: answer 0x81, keep the
    /// connection. The body has been consumed with the frame.
    Unknown { opcode: u8 },
}

impl Request {
    /// Parses one request from a plain slice. The frame's body is copied
    /// into a fresh `Bytes` (one allocation, bounded by bytes actually
    /// present). Prefer [`Request::parse_bytes`] / [`Request::parse_buf`]
    /// on the hot path.
    pub fn parse(buf: &[u8]) -> Result<Parse<Request>, BinaryError> {
        let Some((header, frame_len)) = complete_frame(buf)? else {
            return Ok(Parse::Incomplete);
        };
        let body = buf.get(HEADER_LEN..frame_len).unwrap_or_default();
        let request = Request::decode(header, Bytes::copy_from_slice(body))?;
        Ok(Parse::Complete(request, frame_len))
    }

    /// Parses one request from a `Bytes` buffer; keys and values are
    /// reference-counted slices of `buf` (zero copy).
    pub fn parse_bytes(buf: &Bytes) -> Result<Parse<Request>, BinaryError> {
        let Some((header, frame_len)) = complete_frame(buf)? else {
            return Ok(Parse::Incomplete);
        };
        if buf.get(HEADER_LEN..frame_len).is_none() {
            return Ok(Parse::Incomplete);
        }
        let request = Request::decode(header, buf.slice(HEADER_LEN..frame_len))?;
        Ok(Parse::Complete(request, frame_len))
    }

    /// Parses one request from the front of a connection's read buffer and,
    /// on success, removes the frame from it (zero copy: the frame is split
    /// off and frozen). `Ok(None)` = incomplete, nothing consumed. On error
    /// nothing is consumed either; the caller replies and closes.
    pub fn parse_buf(buf: &mut BytesMut) -> Result<Option<Request>, BinaryError> {
        let Some((header, frame_len)) = complete_frame(buf)? else {
            return Ok(None);
        };
        if buf.len() < frame_len {
            return Ok(None);
        }
        // Validate before splitting so an error leaves the buffer untouched.
        header.validate_request()?;
        let mut frame = buf.split_to(frame_len).freeze();
        let body = frame.split_off(HEADER_LEN.min(frame.len()));
        Request::decode(header, body).map(Some)
    }

    /// Builds a request from a validated header and exactly `body_len`
    /// body bytes. Re-validates, so it is safe on any input.
    pub fn decode(header: BinaryHeader, body: Bytes) -> Result<Request, BinaryError> {
        header.validate_request()?;
        if body.len() as u64 != u64::from(header.body_len) {
            return Err(BinaryError::BodyTooShort(header));
        }
        let ext_len = usize::from(header.extras_len);
        let key_len = usize::from(header.key_len);
        let (Some(extras), Some(key), Some(value)) = (
            body.get(..ext_len),
            body.get(ext_len..ext_len + key_len),
            body.get(ext_len + key_len..),
        ) else {
            return Err(BinaryError::BodyTooShort(header));
        };
        // Turn the checked ranges into zero-copy slices.
        let key = body.slice_ref(key);
        let value = body.slice_ref(value);
        let cas = header.cas;
        let Some(op) = header.opcode() else {
            return Ok(Request {
                header,
                command: Command::Unknown {
                    opcode: header.opcode,
                },
            });
        };
        let quiet = op.is_quiet();
        let err = || BinaryError::InvalidArguments(header);
        use Opcode::*;
        let command = match op {
            Get | GetQ | GetK | GetKQ => Command::Get {
                key,
                quiet,
                return_key: matches!(op, GetK | GetKQ),
            },
            Gat | GatQ | GatK | GatKQ => Command::GetAndTouch {
                key,
                exptime: be_u32(extras, 0).ok_or_else(err)?,
                quiet,
                return_key: matches!(op, GatK | GatKQ),
            },
            Touch => Command::Touch {
                key,
                exptime: be_u32(extras, 0).ok_or_else(err)?,
            },
            Set | SetQ | Add | AddQ | Replace | ReplaceQ => Command::Store {
                mode: match op {
                    Set | SetQ => StoreMode::Set,
                    Add | AddQ => StoreMode::Add,
                    _ => StoreMode::Replace,
                },
                key,
                value,
                flags: be_u32(extras, 0).ok_or_else(err)?,
                exptime: be_u32(extras, 4).ok_or_else(err)?,
                cas,
                quiet,
            },
            Append | AppendQ | Prepend | PrependQ => Command::Concat {
                mode: if matches!(op, Append | AppendQ) {
                    ConcatMode::Append
                } else {
                    ConcatMode::Prepend
                },
                key,
                value,
                cas,
                quiet,
            },
            Delete | DeleteQ => Command::Delete { key, cas, quiet },
            Increment | IncrementQ | Decrement | DecrementQ => Command::Arith {
                mode: if matches!(op, Increment | IncrementQ) {
                    ArithMode::Increment
                } else {
                    ArithMode::Decrement
                },
                key,
                delta: be_u64(extras, 0).ok_or_else(err)?,
                initial: be_u64(extras, 8).ok_or_else(err)?,
                exptime: be_u32(extras, 16).ok_or_else(err)?,
                cas,
                quiet,
            },
            Quit | QuitQ => Command::Quit { quiet },
            Flush | FlushQ => Command::Flush {
                delay: be_u32(extras, 0),
                quiet,
            },
            Noop => Command::Noop,
            Version => Command::Version,
            Stat => Command::Stat {
                group: (!key.is_empty()).then_some(key),
            },
            SaslListMechs => Command::SaslListMechs,
            SaslAuth => Command::SaslAuth {
                mechanism: key,
                data: value,
            },
            SaslStep => Command::SaslStep {
                mechanism: key,
                data: value,
            },
        };
        Ok(Request { header, command })
    }

    /// The opaque to echo.
    pub fn opaque(&self) -> u32 {
        self.header.opaque
    }

    /// True for the Q opcodes.
    pub fn is_quiet(&self) -> bool {
        self.header.opcode().is_some_and(Opcode::is_quiet)
    }
}

/// Header of the first frame if the whole frame is buffered.
/// Validates lengths first so a bad header fails fast, before waiting for
/// a body that may never come.
fn complete_frame(buf: &[u8]) -> Result<Option<(BinaryHeader, usize)>, BinaryError> {
    let Parse::Complete(header, _) = BinaryHeader::parse(buf)? else {
        return Ok(None);
    };
    header.validate_request()?;
    // If the frame length does not fit in usize it certainly is not buffered.
    let Ok(frame_len) = usize::try_from(header.frame_len()) else {
        return Ok(None);
    };
    if buf.len() < frame_len {
        return Ok(None);
    }
    Ok(Some((header, frame_len)))
}

fn be_u32(buf: &[u8], at: usize) -> Option<u32> {
    let bytes = buf.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes(bytes.try_into().ok()?))
}

fn be_u64(buf: &[u8], at: usize) -> Option<u64> {
    let bytes = buf.get(at..at.checked_add(8)?)?;
    Some(u64::from_be_bytes(bytes.try_into().ok()?))
}
