use std::fmt;

use thiserror::Error;

/// What went wrong, named after the exact line memcached answers with.
///
/// Every kind except [`TextErrorKind::LineTooLong`] leaves the connection
/// usable: the server sends [`TextErrorKind::reply`], drops the bytes the
/// error covers and carries on with the next line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TextErrorKind {
    /// Unknown command or wrong number of tokens: `ERROR`.
    UnknownCommand,
    /// `CLIENT_ERROR bad command line format` (bad number, key too long...).
    BadCommandLine,
    /// The data block was not followed by `\r\n`.
    BadDataChunk,
    /// No newline within the configured line limit, or (not a `get`/`gets`)
    /// within 2048 bytes. memcached closes the connection without a reply;
    /// so do we.
    LineTooLong,
    /// `touch`, `gat`, `flush_all` with a non-numeric exptime.
    InvalidExptime,
    /// `incr`/`decr` with a non-numeric delta.
    InvalidDelta,
    /// `delete <key> <junk>`; memcached's message has two spaces and a usage hint.
    DeleteUsage,
    /// Meta: a flag letter memcached does not know.
    InvalidFlag,
    /// Meta: the same flag twice.
    DuplicateFlag,
    /// `md`/`ma`: memcached folds all flag errors into one message.
    InvalidOrDuplicateFlag,
    /// Meta: a flag's numeric token did not parse (T, N, R, C, E).
    BadToken,
    /// Meta: `M` must be followed by exactly one character.
    BadModeLength,
    /// `ma` `J` token not numeric.
    InvalidInitial,
    /// `ma` `D` token not numeric.
    InvalidMetaDelta,
    /// `mg` with too many flags (memcached's wording differs per command).
    MgTooManyFlags,
    /// `ms`/`md`/`ma` with too many flags.
    TooManyFlags,
    /// Meta `O` token longer than 32 bytes.
    OpaqueTooLong,
    /// `ms` mode not one of E A P R S.
    InvalidSetMode,
    /// `ma` mode not one of I + D -.
    InvalidArithMode,
    /// Meta `b` flag on a key that is not valid base64.
    KeyDecode,
    /// An unknown command whose last word starts with `HTTP/`: an HTTP
    /// request line. memcached hangs up without a word, so do we (and a
    /// client that took this port for Kyoto Tycoon's HTTP learns it at once).
    HttpRequest,
}

impl TextErrorKind {
    /// The exact reply line memcached sends, `\r\n` included.
    pub fn reply(self) -> &'static [u8] {
        use TextErrorKind::*;
        match self {
            UnknownCommand => b"ERROR\r\n",
            BadCommandLine => b"CLIENT_ERROR bad command line format\r\n",
            BadDataChunk => b"CLIENT_ERROR bad data chunk\r\n",
            // Never sent (`should_reply` is false: memcached closes
            // without a word); named for logs.
            LineTooLong => b"CLIENT_ERROR line too long\r\n",
            InvalidExptime => b"CLIENT_ERROR invalid exptime argument\r\n",
            InvalidDelta => b"CLIENT_ERROR invalid numeric delta argument\r\n",
            DeleteUsage => {
                b"CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n"
            }
            InvalidFlag => b"CLIENT_ERROR invalid flag\r\n",
            DuplicateFlag => b"CLIENT_ERROR duplicate flag\r\n",
            InvalidOrDuplicateFlag => b"CLIENT_ERROR invalid or duplicate flag\r\n",
            BadToken => b"CLIENT_ERROR bad token in command line format\r\n",
            BadModeLength => b"CLIENT_ERROR incorrect length for M token\r\n",
            InvalidInitial => b"CLIENT_ERROR invalid numeric initial value\r\n",
            InvalidMetaDelta => b"CLIENT_ERROR invalid numeric delta value\r\n",
            MgTooManyFlags => b"CLIENT_ERROR options flags are too long\r\n",
            TooManyFlags => b"CLIENT_ERROR options flags too long\r\n",
            OpaqueTooLong => b"CLIENT_ERROR opaque token too long\r\n",
            InvalidSetMode => b"CLIENT_ERROR invalid mode for ms M token\r\n",
            InvalidArithMode => b"CLIENT_ERROR invalid mode for ma M token\r\n",
            KeyDecode => b"CLIENT_ERROR error decoding key\r\n",
            // Never sent (`should_reply` is false); named for logs.
            HttpRequest => b"ERROR\r\n",
        }
    }
}

impl fmt::Display for TextErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = self.reply();
        let line = line.strip_suffix(b"\r\n").unwrap_or(line);
        f.write_str(&String::from_utf8_lossy(line))
    }
}

/// A text/meta request memcached would refuse, with everything the server
/// needs to recover exactly like memcached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("{kind}")]
pub struct TextError {
    pub kind: TextErrorKind,
    /// Bytes of input this error covers (the command line, or the data
    /// block). Drop them and continue with the next line.
    /// ([`super::TextParser::parse_buf`] and [`super::take_data_block`]
    /// already did.)
    pub consumed: usize,
    /// After `consumed`, this many more bytes must be discarded as they
    /// arrive: the data block of an `ms` whose flags were bad, which
    /// memcached swallows. They may not be buffered yet. 0 otherwise.
    pub swallow: u64,
    /// The line ended in `noreply`. memcached then suppresses even the
    /// error reply (classic commands only; meta errors are always sent).
    pub noreply: bool,
}

impl TextError {
    pub(crate) fn new(kind: TextErrorKind, consumed: usize) -> TextError {
        TextError {
            kind,
            consumed,
            swallow: 0,
            noreply: false,
        }
    }

    /// The line to send, `\r\n` included (check [`TextError::should_reply`]).
    pub fn reply(&self) -> &'static [u8] {
        self.kind.reply()
    }

    /// False when memcached would stay silent because of `noreply`.
    pub fn should_reply(&self) -> bool {
        !self.noreply
            && !matches!(
                self.kind,
                TextErrorKind::HttpRequest | TextErrorKind::LineTooLong
            )
    }

    /// True if the connection must be closed after replying.
    pub fn must_close(&self) -> bool {
        matches!(
            self.kind,
            TextErrorKind::LineTooLong | TextErrorKind::HttpRequest
        )
    }
}
