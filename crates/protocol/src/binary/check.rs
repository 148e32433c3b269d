//! The checks that turn a request header into a [`BinaryError`]: a wrong
//! magic, and lengths memcached refuses. Apart from `header.rs` so that the
//! header knows nothing of the errors about it.

use super::error::BinaryError;
use super::header::{BinaryHeader, HEADER_LEN, REQUEST_MAGIC, RESPONSE_MAGIC};
use super::opcode::Opcode;
use crate::{Parse, MAX_KEY_LEN};

impl BinaryHeader {
    /// Parses a request header (magic 0x80) from the front of `buf`.
    ///
    /// Only the 24 header bytes are looked at; the body may be absent.
    /// A wrong magic byte is [`BinaryError::BadMagic`]: memcached cannot
    /// resynchronise a binary stream, so the caller closes the connection.
    pub fn parse(buf: &[u8]) -> Result<Parse<BinaryHeader>, BinaryError> {
        Self::parse_with_magic(buf, REQUEST_MAGIC)
    }

    /// Parses a response header (magic 0x81), for clients and tools.
    pub fn parse_response(buf: &[u8]) -> Result<Parse<BinaryHeader>, BinaryError> {
        Self::parse_with_magic(buf, RESPONSE_MAGIC)
    }

    fn parse_with_magic(buf: &[u8], magic: u8) -> Result<Parse<BinaryHeader>, BinaryError> {
        let Some(raw) = buf.first_chunk::<HEADER_LEN>() else {
            // Reject a bad magic as soon as the first byte shows it, rather
            // than waiting for 24 bytes of garbage.
            return match buf.first() {
                Some(&m) if m != magic => Err(BinaryError::BadMagic(m)),
                _ => Ok(Parse::Incomplete),
            };
        };
        let header = Self::decode(raw);
        if header.magic != magic {
            return Err(BinaryError::BadMagic(header.magic));
        }
        Ok(Parse::Complete(header, HEADER_LEN))
    }

    /// Checks the lengths the way memcached's `dispatch_bin_command` does,
    /// from the header alone, so a bad request is refused before its body
    /// is read. Unknown opcodes pass (they are answered, not rejected).
    pub fn validate_request(&self) -> Result<(), BinaryError> {
        let ext = u32::from(self.extras_len);
        let key = u32::from(self.key_len);
        let body = self.body_len;
        if key + ext > body {
            return Err(BinaryError::BodyTooShort(*self));
        }
        if usize::from(self.key_len) > MAX_KEY_LEN {
            return Err(BinaryError::KeyTooLong(*self));
        }
        let Some(op) = self.opcode() else {
            return Ok(());
        };
        use Opcode::*;
        let ok = match op {
            Version | Noop | Quit | QuitQ | SaslListMechs => ext == 0 && key == 0 && body == 0,
            Flush | FlushQ => key == 0 && body == ext && (ext == 0 || ext == 4),
            Set | SetQ | Add | AddQ | Replace | ReplaceQ => ext == 8 && key != 0,
            Get | GetQ | GetK | GetKQ | Delete | DeleteQ => ext == 0 && key != 0 && body == key,
            Increment | IncrementQ | Decrement | DecrementQ => {
                ext == 20 && key != 0 && body == key + ext
            }
            Append | AppendQ | Prepend | PrependQ => ext == 0 && key != 0,
            Stat => ext == 0,
            SaslAuth | SaslStep => ext == 0 && key != 0,
            Touch | Gat | GatQ | GatK | GatKQ => ext == 4 && key != 0,
        };
        if ok {
            Ok(())
        } else {
            Err(BinaryError::InvalidArguments(*self))
        }
    }
}
