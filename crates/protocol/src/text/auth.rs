//! memcached's ASCII authentication (`-Y`, memcached's
//! `try_read_command_asciiauth`): until a connection authenticates, the only
//! request read is `set <key> <flags> <exptime> <bytes>\r\n` with the data
//! block `<user> <password>\r\n`; key, flags and exptime are ignored. Any
//! other line is answered `CLIENT_ERROR unauthenticated` and nothing else
//! is served. Junk closes the connection: a line under 6 bytes, or 2 KiB
//! without a newline.

use crate::{Frame, Framer};
use bytes::{Buf, Bytes, BytesMut};

/// Longest `<user> <password>` block memcached reads (`MAX_AUTH_REQ_LEN`).
pub const MAX_AUTH_TOKEN: u32 = 16384;
/// A shorter line cannot be a `set` (`MIN_AUTH_REQ_LEN`): the connection is closed.
const MIN_AUTH_LINE: usize = 6;
/// Bytes without a newline after which the connection is closed.
const MAX_JUNK: usize = 2048;

pub const UNAUTHENTICATED: &[u8] = b"CLIENT_ERROR unauthenticated\r\n";
pub const TOKEN_TOO_LONG: &[u8] = b"CLIENT_ERROR auth token too long\r\n";
pub const BAD_TERMINATION: &[u8] = b"CLIENT_ERROR bad command line termination\r\n";
pub const BAD_TOKEN: &[u8] = b"CLIENT_ERROR bad authentication token format\r\n";
pub const AUTH_FAILED: &[u8] = b"CLIENT_ERROR authentication failure\r\n";

/// A credentials attempt: the data block split at its first space.
#[derive(Debug, PartialEq, Eq)]
pub struct AuthToken {
    pub user: Bytes,
    pub password: Bytes,
}

/// Frames an unauthenticated connection's input. Refusals are the reply
/// line to send (nothing to skip: memcached reads no data block after a
/// refused line).
#[derive(Debug, Default)]
pub struct AuthFramer {
    /// The `set` line was read: its data block's length, `\r\n` included.
    block: Option<usize>,
    /// The connection authenticated: nothing more is framed here.
    done: bool,
}

impl AuthFramer {
    /// The connection authenticated; from now on `next` frames nothing
    /// (the text protocol's framer takes over the rest of the buffer).
    pub fn finish(&mut self) {
        self.done = true;
    }

    /// Reads a `set` line: the length of the data block to wait for, or
    /// the refusal to answer.
    fn line(&mut self, line: &[u8]) -> Result<usize, &'static [u8]> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let mut tokens = line.split(|&b| b == b' ').filter(|t| !t.is_empty());
        // memcached compares only the first three bytes with "set".
        let size = match (tokens.next(), tokens.nth(3)) {
            (Some(cmd), Some(size)) if cmd.starts_with(b"set") => std::str::from_utf8(size)
                .ok()
                .and_then(|s| s.parse::<u32>().ok())
                .ok_or(UNAUTHENTICATED)?,
            _ => return Err(UNAUTHENTICATED),
        };
        if size > MAX_AUTH_TOKEN {
            return Err(TOKEN_TOO_LONG);
        }
        Ok(size as usize + 2)
    }
}

/// The data block `<user> <password>\r\n`: split at its first space.
fn token(block: Bytes) -> Result<AuthToken, &'static [u8]> {
    if !block.ends_with(b"\r\n") {
        return Err(BAD_TERMINATION);
    }
    let mid = block.iter().position(|&b| b == b' ').ok_or(BAD_TOKEN)?;
    Ok(AuthToken {
        user: block.slice(..mid),
        password: block.slice(mid + 1..block.len() - 2),
    })
}

impl Framer for AuthFramer {
    type Request = AuthToken;
    /// The reply line.
    type Refusal = &'static [u8];

    fn next(&mut self, buf: &mut BytesMut) -> Frame<AuthToken, &'static [u8]> {
        if self.done {
            return Frame::Incomplete { need: 0 };
        }
        if let Some(len) = self.block {
            if buf.len() < len {
                return Frame::Incomplete { need: len };
            }
            self.block = None;
            return match token(buf.split_to(len).freeze()) {
                Ok(t) => Frame::Request(t),
                Err(answer) => Frame::Refused { answer, skip: 0 },
            };
        }
        let Some(end) = buf.iter().position(|&b| b == b'\n') else {
            return if buf.len() > MAX_JUNK {
                Frame::Close(None)
            } else {
                Frame::Incomplete { need: 0 }
            };
        };
        if end < MIN_AUTH_LINE {
            return Frame::Close(None);
        }
        let result = self.line(&buf[..end]);
        buf.advance(end + 1);
        match result {
            Ok(len) => {
                self.block = Some(len);
                self.next(buf)
            }
            Err(answer) => Frame::Refused { answer, skip: 0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<Result<AuthToken, &'static [u8]>> {
        let mut f = AuthFramer::default();
        let mut buf = BytesMut::from(input);
        let mut out = Vec::new();
        loop {
            match f.next(&mut buf) {
                Frame::Request(t) => out.push(Ok(t)),
                Frame::Refused { answer, .. } => out.push(Err(answer)),
                Frame::Incomplete { .. } | Frame::Close(_) => return out,
            }
        }
    }

    #[test]
    fn a_set_carries_the_credentials() {
        let t = AuthToken {
            user: Bytes::from_static(b"foo"),
            password: Bytes::from_static(b"b r"),
        };
        assert_eq!(frames(b"set x 0 0 7\r\nfoo b r\r\n"), vec![Ok(t)]);
    }

    #[test]
    fn memcached_refusals() {
        assert_eq!(frames(b"get foo\r\n"), vec![Err(UNAUTHENTICATED)]);
        assert_eq!(frames(b"set foo 0 0\r\n"), vec![Err(UNAUTHENTICATED)]);
        assert_eq!(frames(b"set foo 0 0 x\r\n"), vec![Err(UNAUTHENTICATED)]);
        // No data block is read after a refused line.
        assert_eq!(
            frames(b"set foo 0 0 2147483646\r\nset a 0 0 2\r\nhi\r\n"),
            vec![Err(TOKEN_TOO_LONG), Err(BAD_TOKEN)]
        );
        assert_eq!(frames(b"set a 0 0 2\r\nhi\n\n"), vec![Err(BAD_TERMINATION)]);
    }

    #[test]
    fn junk_closes() {
        let mut f = AuthFramer::default();
        assert!(matches!(
            f.next(&mut BytesMut::from(&b"hi\r\n"[..])),
            Frame::Close(None)
        ));
        let mut junk = BytesMut::from(&[b'a'; MAX_JUNK + 1][..]);
        assert!(matches!(f.next(&mut junk), Frame::Close(None)));
    }

    #[test]
    fn nothing_after_finish() {
        let mut f = AuthFramer::default();
        f.finish();
        let mut buf = BytesMut::from(&b"get foo\r\n"[..]);
        assert!(matches!(f.next(&mut buf), Frame::Incomplete { need: 0 }));
        assert_eq!(buf.len(), 9);
    }
}
