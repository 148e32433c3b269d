use thiserror::Error;

use super::header::BinaryHeader;
use super::status::Status;
use crate::MAX_KEY_LEN;

/// A binary request memcached would refuse. Every variant ends the
/// connection: a binary stream cannot be resynchronised once its framing is
/// in doubt. [`BinaryError::status`] says what to send first, if anything.
///
/// Variants carry the offending header so the reply can echo its opcode and
/// opaque.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum BinaryError {
    /// First byte is not the expected magic. Nothing sensible can be
    /// replied (the peer is not speaking the binary protocol); just close.
    #[error("bad magic byte {0:#04x}")]
    BadMagic(u8),
    /// extras + key longer than the declared body. memcached answers
    /// 0x81 (unknown command) and closes.
    #[error("extras and key exceed body length")]
    BodyTooShort(BinaryHeader),
    /// key_len above 250: 0x04 and close.
    #[error("key longer than {MAX_KEY_LEN} bytes")]
    KeyTooLong(BinaryHeader),
    /// Extras/key/body lengths not allowed for this opcode: 0x04 and close.
    #[error("invalid extras/key/body lengths for opcode {:#04x}", .0.opcode)]
    InvalidArguments(BinaryHeader),
}

impl BinaryError {
    /// Status to reply with before closing, `None` to close silently.
    pub fn status(&self) -> Option<Status> {
        match self {
            BinaryError::BadMagic(_) => None,
            BinaryError::BodyTooShort(_) => Some(Status::UnknownCommand),
            BinaryError::KeyTooLong(_) | BinaryError::InvalidArguments(_) => {
                Some(Status::InvalidArguments)
            }
        }
    }

    /// Always true today; a method so call sites read as policy, not
    /// accident, and can change if a recoverable error is ever added.
    pub fn must_close(&self) -> bool {
        true
    }

    /// The request header the error is about, if one was decoded.
    pub fn header(&self) -> Option<&BinaryHeader> {
        match self {
            BinaryError::BadMagic(_) => None,
            BinaryError::BodyTooShort(h)
            | BinaryError::KeyTooLong(h)
            | BinaryError::InvalidArguments(h) => Some(h),
        }
    }
}
