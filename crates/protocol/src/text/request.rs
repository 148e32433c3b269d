//! Text command lines: `set`, `get`, ... and the meta commands.

use bytes::{Bytes, BytesMut};

use super::error::{TextError, TextErrorKind};
use super::line::{
    find_line, parse_data_len, parse_i32, parse_u32, parse_u64, token_ranges, valid_key, Line,
};
use super::meta::{
    arith_mode, parse_flags, set_mode, MetaArith, MetaDelete, MetaFlags, MetaGet, MetaSet,
    MAX_META_FLAGS,
};
use crate::{base64, Parse, MAX_KEY_LEN};

/// Default longest command line. memcached hangs up on a line that has no
/// newline after 2 KiB ([`MEMCACHED_LINE_LIMIT`]) unless it is a `get`/`gets`,
/// which it lets grow without bound; this limit bounds any other line, and a
/// get line longer than it is served in parts of at most this much
/// (`multiget.rs`, through [`super::TextFramer`]).
pub const DEFAULT_MAX_LINE_LEN: usize = 64 * 1024;

/// Bytes memcached buffers without a newline before it decides the line is
/// junk: past this only a `get`/`gets` (a multiget may be long) keeps the
/// connection; anything else is hung up on (`try_read_command_ascii`).
pub const MEMCACHED_LINE_LIMIT: usize = 2048;

/// True if `buf` starts (after at most 100 spaces) with `get ` or `gets `:
/// memcached's test for a line it lets grow past [`MEMCACHED_LINE_LIMIT`].
pub(crate) fn multiget_prefix(buf: &[u8]) -> bool {
    let spaces = buf.iter().take_while(|&&b| b == b' ').count();
    let rest = buf.get(spaces..).unwrap_or_default();
    spaces <= 100 && (rest.starts_with(b"get ") || rest.starts_with(b"gets "))
}

/// Which storage command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreKind {
    Set,
    Add,
    Replace,
    Append,
    Prepend,
    /// `cas`: store only if the item's CAS equals [`StoreCommand::cas`].
    Cas,
}

/// A storage command line. The value follows as a separate data block of
/// `data_len` bytes plus `\r\n`, read with [`parse_data_block`] or
/// [`take_data_block`] — after the server has checked `data_len` against
/// its item limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreCommand {
    pub kind: StoreKind,
    pub key: Bytes,
    pub flags: u32,
    /// memcached exptime; see [`crate::Expiry::from_exptime`].
    pub exptime: i64,
    pub data_len: usize,
    /// The compare value, for `cas` only.
    pub cas: Option<u64>,
    pub noreply: bool,
}

/// `incr` or `decr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IncrDecr {
    Incr,
    Decr,
}

/// One parsed command line (text or meta). Keys are `Bytes` slices of the
/// line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// set/add/replace/append/prepend/cas; a data block follows.
    Store(StoreCommand),
    /// `get`/`gets <key>*`: `VALUE` blocks for hits, then `END`.
    Get { keys: Vec<Bytes>, return_cas: bool },
    /// The complete keys at the front of a `get`/`gets` line longer than
    /// the line limit (`multiget.rs`): answered as `Get` is but without the
    /// `END`, which follows the line's last part (a `Get`).
    GetPart { keys: Vec<Bytes>, return_cas: bool },
    /// `gat`/`gats <exptime> <key>*`. `keys` may be empty (memcached then
    /// answers just `END`).
    GetAndTouch {
        exptime: i64,
        keys: Vec<Bytes>,
        return_cas: bool,
    },
    /// `delete <key> [0] [noreply]` → DELETED | NOT_FOUND.
    Delete { key: Bytes, noreply: bool },
    /// `incr|decr <key> <delta> [noreply]` → the new value | NOT_FOUND.
    IncrDecr {
        op: IncrDecr,
        key: Bytes,
        delta: u64,
        noreply: bool,
    },
    /// `touch <key> <exptime> [noreply]` → TOUCHED | NOT_FOUND.
    Touch {
        key: Bytes,
        exptime: i64,
        noreply: bool,
    },
    /// `flush_all [delay] [noreply]` → OK.
    FlushAll { delay: Option<i64>, noreply: bool },
    /// `version` → `VERSION <v>`.
    Version,
    /// `verbosity <n> [noreply]` → OK.
    Verbosity { level: u32, noreply: bool },
    /// `quit`: close without a reply.
    Quit,
    /// `stats [args...]`: `STAT` lines then `END` (or ERROR for an unknown group).
    Stats { args: Vec<Bytes> },
    /// `mg`. The meta commands are boxed: their flags make them several
    /// times larger than the classic commands, and every `Command` is moved
    /// through the framer and the session (measured: ~300 instructions per
    /// request of memcpy when they were inline).
    MetaGet(Box<MetaGet>),
    /// `ms`; a data block follows.
    MetaSet(Box<MetaSet>),
    /// `md`.
    MetaDelete(Box<MetaDelete>),
    /// `ma`.
    MetaArith(Box<MetaArith>),
    /// `mn` → `MN`: marks the end of a pipelined batch.
    MetaNoop,
    /// `me <key> [b]` → `ME <key> <k=v>*` | `EN`.
    MetaDebug { key: Bytes, base64: bool },
    /// `shutdown [graceful]`: the words after `shutdown` (the server checks
    /// them, after checking that shutdown is enabled, as memcached does).
    Shutdown { args: Vec<Bytes> },
    /// `cache_memlimit <megabytes> [noreply]`; `None` if not a number
    /// (memcached answers a bare `ERROR` then).
    CacheMemlimit {
        megabytes: Option<u32>,
        noreply: bool,
    },
    /// `lru_crawler <args...>` (the server answers `metadump`).
    LruCrawler { args: Vec<Bytes> },
    /// `refresh_certs`: reload the TLS certificates (memcached built with
    /// TLS) → `OK` or the error line.
    RefreshCerts,
    /// `watch [kinds...]`: the connection becomes a log watcher (memcached's
    /// logger); the words name the kinds of events it is sent.
    Watch { args: Vec<Bytes> },
    /// `slabs <args...>`: `automove` and `reassign`, memcached's slab
    /// tuning (memstored has no slabs; the server answers as memcached
    /// does with slab reassignment disabled).
    Slabs { args: Vec<Bytes> },
}

impl Command {
    /// Length of the data block this command announces (set family, cas,
    /// ms). Check it against the item limit before reading the block; if
    /// too large, reply `SERVER_ERROR object too large for cache` and
    /// swallow [`data_block_len`] bytes.
    pub fn data_len(&self) -> Option<usize> {
        match self {
            Command::Store(s) => Some(s.data_len),
            Command::MetaSet(m) => Some(m.data_len),
            _ => None,
        }
    }

    /// True if the client asked not to get a reply (`noreply`; meta `q`
    /// only suppresses nominal replies, see [`MetaFlags::quiet`]).
    pub fn noreply(&self) -> bool {
        match self {
            Command::Store(s) => s.noreply,
            Command::Delete { noreply, .. }
            | Command::IncrDecr { noreply, .. }
            | Command::Touch { noreply, .. }
            | Command::FlushAll { noreply, .. }
            | Command::Verbosity { noreply, .. }
            | Command::CacheMemlimit { noreply, .. } => *noreply,
            _ => false,
        }
    }
}

/// Bytes on the wire for a data block of `data_len`: the data plus `\r\n`.
pub fn data_block_len(data_len: usize) -> u64 {
    data_len as u64 + 2
}

/// Stateless line parser with a configurable line limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextParser {
    /// Longest accepted command line, without its `\r\n`.
    pub max_line_len: usize,
}

impl Default for TextParser {
    fn default() -> Self {
        TextParser {
            max_line_len: DEFAULT_MAX_LINE_LEN,
        }
    }
}

impl TextParser {
    /// A parser accepting lines up to `max_line_len` bytes.
    pub fn new(max_line_len: usize) -> TextParser {
        TextParser { max_line_len }
    }

    /// Parses the command line at the front of `buf`. The line is copied
    /// once into a `Bytes` (bounded by the line limit) so keys can be
    /// slices of it. The data block of a storage command is NOT consumed.
    pub fn parse(&self, buf: &[u8]) -> Result<Parse<Command>, TextError> {
        self.parse_with(buf, Bytes::copy_from_slice)
    }

    /// Like [`TextParser::parse`] but zero copy: keys are slices of `buf`.
    pub fn parse_bytes(&self, buf: &Bytes) -> Result<Parse<Command>, TextError> {
        self.parse_with(buf, |line| buf.slice_ref(line))
    }

    /// Parses and removes the command line from the front of a connection
    /// buffer (zero copy). `Ok(None)`: incomplete, nothing consumed. On error
    /// the offending line has been removed (`err.consumed` bytes) unless the
    /// error is fatal ([`TextError::must_close`]).
    pub fn parse_buf(&self, buf: &mut BytesMut) -> Result<Option<Command>, TextError> {
        let len = match find_line(buf, self.max_line_len) {
            Line::Incomplete if buf.len() > MEMCACHED_LINE_LIMIT && !multiget_prefix(buf) => {
                return Err(TextError::new(TextErrorKind::LineTooLong, 0))
            }
            Line::Incomplete => return Ok(None),
            Line::TooLong => return Err(TextError::new(TextErrorKind::LineTooLong, 0)),
            Line::Complete { consumed, .. } => consumed,
        };
        let frame = buf.split_to(len.min(buf.len())).freeze();
        match self.parse_bytes(&frame)? {
            Parse::Complete(cmd, _) => Ok(Some(cmd)),
            // Cannot happen: the frame holds a whole line.
            Parse::Incomplete => Ok(None),
        }
    }

    fn parse_with<'a>(
        &self,
        buf: &'a [u8],
        to_bytes: impl FnOnce(&'a [u8]) -> Bytes,
    ) -> Result<Parse<Command>, TextError> {
        let (len, consumed) = match find_line(buf, self.max_line_len) {
            Line::Incomplete if buf.len() > MEMCACHED_LINE_LIMIT && !multiget_prefix(buf) => {
                return Err(TextError::new(TextErrorKind::LineTooLong, 0))
            }
            Line::Incomplete => return Ok(Parse::Incomplete),
            Line::TooLong => return Err(TextError::new(TextErrorKind::LineTooLong, 0)),
            Line::Complete { len, consumed } => (len, consumed),
        };
        let line = to_bytes(buf.get(..len).unwrap_or_default());
        // Room for a storage command's tokens (`cas k f e n c noreply`) at
        // once: growing from empty cost three reallocations a line.
        let mut tokens: Vec<Bytes> = Vec::with_capacity(8);
        tokens.extend(token_ranges(&line).map(|r| line.slice(r)));
        match parse_tokens(&tokens, consumed) {
            Ok(cmd) => Ok(Parse::Complete(cmd, consumed)),
            Err(mut e) => {
                e.consumed = consumed;
                Err(e)
            }
        }
    }
}

/// Parses a data block of `data_len` bytes plus `\r\n` from the front of
/// `buf`. Returns the data (without the terminator) and the bytes used.
/// If the terminator is wrong the error covers the whole block
/// (`data_len + 2` bytes): memcached consumes it and answers
/// `CLIENT_ERROR bad data chunk`.
pub fn parse_data_block(buf: &[u8], data_len: usize) -> Result<Parse<&[u8]>, TextError> {
    let Some(need) = data_len.checked_add(2) else {
        return Ok(Parse::Incomplete);
    };
    let (Some(data), Some(term)) = (buf.get(..data_len), buf.get(data_len..need)) else {
        return Ok(Parse::Incomplete);
    };
    if term != b"\r\n" {
        return Err(TextError::new(TextErrorKind::BadDataChunk, need));
    }
    Ok(Parse::Complete(data, need))
}

/// Removes a data block from the front of a connection buffer, returning
/// the value as a zero-copy `Bytes`. `Ok(None)`: not all there yet, nothing
/// consumed. On a bad terminator the block is consumed and the error
/// returned.
pub fn take_data_block(buf: &mut BytesMut, data_len: usize) -> Result<Option<Bytes>, TextError> {
    match parse_data_block(buf, data_len) {
        Ok(Parse::Incomplete) => Ok(None),
        Ok(Parse::Complete(_, used)) => {
            let mut block = buf.split_to(used.min(buf.len())).freeze();
            block.truncate(data_len);
            Ok(Some(block))
        }
        Err(e) => {
            let _ = buf.split_to(e.consumed.min(buf.len()));
            Err(e)
        }
    }
}

fn err(kind: TextErrorKind) -> TextError {
    TextError::new(kind, 0)
}

fn err_noreply(kind: TextErrorKind, noreply: bool) -> TextError {
    TextError {
        noreply,
        ..err(kind)
    }
}

/// Dispatch on the command word. Token-count rules are memcached 1.6.45's
/// (`process_request` in proto_parser.c): a command with fewer tokens than
/// it needs is `CLIENT_ERROR bad command line format`, tokens past those it
/// reads are ignored, and `noreply` is the last token. `line_len` counts the
/// line's terminator: memcached refuses a line under 4 bytes that way too.
fn parse_tokens(t: &[Bytes], line_len: usize) -> Result<Command, TextError> {
    let n = t.len();
    if line_len < 4 {
        return Err(err(TextErrorKind::BadCommandLine));
    }
    let Some(cmd) = t.first() else {
        return Err(err(TextErrorKind::UnknownCommand));
    };
    let rest = || t.get(1..).unwrap_or_default().to_vec();
    match &cmd[..] {
        b"mg" | b"ms" | b"md" | b"ma" | b"mn" | b"me" => parse_meta(t),
        b"get" | b"gets" | b"gat" | b"gats" => parse_get(t, cmd),
        b"set" | b"add" | b"replace" | b"append" | b"prepend" | b"cas" => parse_store(t, cmd),
        b"incr" | b"decr" => parse_incr_decr(t, cmd),
        b"delete" => parse_delete(t),
        b"touch" => parse_touch(t),
        b"flush_all" => parse_flush_all(t),
        b"verbosity" => parse_verbosity(t),
        // Extra tokens are ignored, as by memcached 1.6 (whose version the
        // server reports; memccapable checks `version foo` answers VERSION then).
        b"version" => Ok(Command::Version),
        b"quit" => Ok(Command::Quit),
        b"shutdown" => Ok(Command::Shutdown { args: rest() }),
        b"cache_memlimit" => parse_cache_memlimit(t),
        b"lru_crawler" if n >= 2 => Ok(Command::LruCrawler { args: rest() }),
        b"slabs" => Ok(Command::Slabs { args: rest() }),
        b"refresh_certs" => Ok(Command::RefreshCerts),
        b"watch" => Ok(Command::Watch { args: rest() }),
        b"stats" => Ok(Command::Stats { args: rest() }),
        // memcached's process_command_ascii: an unknown command whose last
        // token starts with "HTTP/" closes the connection.
        _ if n > 1 && t.last().is_some_and(|w| w.starts_with(b"HTTP/")) => {
            Err(err(TextErrorKind::HttpRequest))
        }
        _ => Err(err(TextErrorKind::UnknownCommand)),
    }
}

/// Token `i`, or nothing.
fn arg(t: &[Bytes], i: usize) -> &[u8] {
    t.get(i).map(|b| &b[..]).unwrap_or_default()
}

/// The key (token 1), or the bad-command-line error.
fn key_at(t: &[Bytes], noreply: bool) -> Result<Bytes, TextError> {
    t.get(1)
        .filter(|k| valid_key(k))
        .cloned()
        .ok_or_else(|| err_noreply(TextErrorKind::BadCommandLine, noreply))
}

/// Whether token `i` is `noreply`.
fn is_noreply(t: &[Bytes], i: usize) -> bool {
    t.get(i).is_some_and(|b| &b[..] == b"noreply")
}

/// `get`/`gets`/`gat`/`gats`: keys (after the exptime for the touching forms).
fn parse_get(t: &[Bytes], cmd: &[u8]) -> Result<Command, TextError> {
    let n = t.len();
    let touch = cmd.starts_with(b"gat");
    if n < if touch { 3 } else { 2 } {
        return Err(err(TextErrorKind::BadCommandLine));
    }
    let return_cas = cmd.ends_with(b"s");
    let (exptime, first_key) = if touch {
        let exptime = parse_i32(arg(t, 1)).ok_or_else(|| err(TextErrorKind::InvalidExptime))?;
        (exptime, 2)
    } else {
        (0, 1)
    };
    let keys: Vec<Bytes> = t.get(first_key..).unwrap_or_default().to_vec();
    if !keys.iter().all(|k| valid_key(k)) {
        return Err(err(TextErrorKind::BadCommandLine));
    }
    Ok(if touch {
        Command::GetAndTouch {
            exptime,
            keys,
            return_cas,
        }
    } else {
        Command::Get { keys, return_cas }
    })
}

/// `set`/`add`/`replace`/`append`/`prepend`/`cas`: the line before a data block.
fn parse_store(t: &[Bytes], cmd: &[u8]) -> Result<Command, TextError> {
    let n = t.len();
    let kind = match cmd {
        b"set" => StoreKind::Set,
        b"add" => StoreKind::Add,
        b"replace" => StoreKind::Replace,
        b"append" => StoreKind::Append,
        b"prepend" => StoreKind::Prepend,
        _ => StoreKind::Cas,
    };
    // memcached 1.6.45 reads the length first: without one the line is bad
    // and nothing is swallowed (not even under `noreply`, read later).
    if n < 5 {
        return Err(err(TextErrorKind::BadCommandLine));
    }
    let data_len = parse_data_len(arg(t, 4)).ok_or_else(|| err(TextErrorKind::BadCommandLine))?;
    let noreply = is_noreply(t, n - 1);
    // From here on the length is known: any other fault of the line
    // swallows the data block (`cas k 0 0 6` without its CAS value too),
    // so that the client's data is never read as commands.
    let bad = || TextError {
        swallow: data_block_len(data_len),
        ..err_noreply(TextErrorKind::BadCommandLine, noreply)
    };
    let key = t.get(1).filter(|k| valid_key(k)).ok_or_else(bad)?.clone();
    let flags = parse_u32(arg(t, 2)).ok_or_else(bad)?;
    let exptime = parse_i32(arg(t, 3)).ok_or_else(bad)?;
    let cas = if kind == StoreKind::Cas {
        Some(parse_u64(arg(t, 5)).ok_or_else(bad)?)
    } else {
        None
    };
    Ok(Command::Store(StoreCommand {
        kind,
        key,
        flags,
        exptime,
        data_len,
        cas,
        noreply,
    }))
}

/// `incr`/`decr <key> <delta> [noreply]`.
fn parse_incr_decr(t: &[Bytes], cmd: &[u8]) -> Result<Command, TextError> {
    let n = t.len();
    if n < 3 {
        return Err(err(TextErrorKind::BadCommandLine));
    }
    let noreply = is_noreply(t, n - 1);
    let key = key_at(t, noreply)?;
    let delta =
        parse_u64(arg(t, 2)).ok_or_else(|| err_noreply(TextErrorKind::InvalidDelta, noreply))?;
    let op = if cmd == b"incr" {
        IncrDecr::Incr
    } else {
        IncrDecr::Decr
    };
    Ok(Command::IncrDecr {
        op,
        key,
        delta,
        noreply,
    })
}

/// `delete <key> [0] [noreply]`. memcached 1.6.45 ignores whatever follows
/// the key; memstored keeps 1.6.18's usage error for anything but the old
/// `0` hold time and `noreply` there, because libmemcached's conformance
/// suite (memccapable's "ascii delete") requires it, and 1.6.45 fails that
/// test (docs/memcached-compat.md). A line without a key is 1.6.45's bad line.
fn parse_delete(t: &[Bytes]) -> Result<Command, TextError> {
    let n = t.len();
    if n < 2 {
        return Err(err(TextErrorKind::BadCommandLine));
    }
    let mut noreply = false;
    if n > 2 {
        let hold_is_zero = arg(t, 2) == b"0";
        noreply = is_noreply(t, n - 1);
        let valid = (n == 3 && (hold_is_zero || noreply)) || (n == 4 && hold_is_zero && noreply);
        if !valid {
            return Err(err_noreply(TextErrorKind::DeleteUsage, noreply));
        }
    }
    let key = key_at(t, noreply)?;
    Ok(Command::Delete { key, noreply })
}

/// `touch <key> <exptime> [noreply]`.
fn parse_touch(t: &[Bytes]) -> Result<Command, TextError> {
    let n = t.len();
    if n < 3 {
        return Err(err(TextErrorKind::BadCommandLine));
    }
    let noreply = is_noreply(t, n - 1);
    let key = key_at(t, noreply)?;
    let exptime =
        parse_i32(arg(t, 2)).ok_or_else(|| err_noreply(TextErrorKind::InvalidExptime, noreply))?;
    Ok(Command::Touch {
        key,
        exptime,
        noreply,
    })
}

/// `flush_all [delay] [noreply]`.
fn parse_flush_all(t: &[Bytes]) -> Result<Command, TextError> {
    let n = t.len();
    let noreply = n > 1 && is_noreply(t, n - 1);
    let delay = if n != if noreply { 2 } else { 1 } {
        Some(
            parse_i32(arg(t, 1))
                .ok_or_else(|| err_noreply(TextErrorKind::InvalidExptime, noreply))?,
        )
    } else {
        None
    };
    Ok(Command::FlushAll { delay, noreply })
}

/// `verbosity <level> [noreply]`.
fn parse_verbosity(t: &[Bytes]) -> Result<Command, TextError> {
    let n = t.len();
    let noreply = n > 1 && is_noreply(t, n - 1);
    let level =
        parse_u32(arg(t, 1)).ok_or_else(|| err_noreply(TextErrorKind::BadCommandLine, noreply))?;
    Ok(Command::Verbosity { level, noreply })
}

/// `cache_memlimit <megabytes> [noreply]`.
fn parse_cache_memlimit(t: &[Bytes]) -> Result<Command, TextError> {
    let n = t.len();
    // memcached 1.6.45 ignores tokens after the number.
    if n < 2 {
        return Err(err(TextErrorKind::UnknownCommand));
    }
    Ok(Command::CacheMemlimit {
        megabytes: parse_u32(arg(t, 1)),
        noreply: is_noreply(t, n - 1),
    })
}

/// Meta commands, following memcached's `process_m*_command` checks in
/// order.
fn parse_meta(t: &[Bytes]) -> Result<Command, TextError> {
    let cmd = t.first().map(|b| &b[..]).unwrap_or_default();
    let n = t.len();
    if cmd == b"mn" {
        return Ok(Command::MetaNoop);
    }
    let bad_line = || err(TextErrorKind::BadCommandLine);
    if cmd == b"me" {
        let key = t.get(1).ok_or_else(bad_line)?;
        if key.len() > MAX_KEY_LEN {
            return Err(bad_line());
        }
        // memcached 1.6.45 reads `me`'s key as given: its `b` is ignored.
        return Ok(Command::MetaDebug {
            key: key.clone(),
            base64: false,
        });
    }
    if n < 2 {
        return Err(bad_line());
    }
    let raw_key = t.get(1).ok_or_else(bad_line)?;
    if raw_key.len() > MAX_KEY_LEN {
        return Err(bad_line());
    }
    // memcached counts command, key, flags and a terminator against 20.
    let flag_start = if cmd == b"ms" { 3 } else { 2 };
    if cmd == b"ms" && n == 2 {
        return Err(bad_line());
    }
    if n + 1 > MAX_META_FLAGS + 3 {
        return Err(err(if cmd == b"mg" {
            TextErrorKind::MgTooManyFlags
        } else {
            TextErrorKind::TooManyFlags
        }));
    }
    let flag_tokens = t.get(flag_start..).unwrap_or_default();
    match cmd {
        b"mg" => {
            let flags = parse_flags(flag_tokens).map_err(err)?;
            let key = meta_key(raw_key, &flags)?;
            Ok(Command::MetaGet(Box::new(MetaGet { key, flags })))
        }
        b"ms" => {
            let data_len = t
                .get(2)
                .and_then(|d| parse_data_len(d))
                .ok_or_else(bad_line)?;
            // From here on memcached knows the length and swallows the block
            // after an error, so the client's data is not read as commands.
            let swallowing = |kind| TextError {
                swallow: data_block_len(data_len),
                ..err(kind)
            };
            let flags = parse_flags(flag_tokens).map_err(swallowing)?;
            let mode =
                set_mode(flags.mode).ok_or_else(|| swallowing(TextErrorKind::InvalidSetMode))?;
            let key = meta_key(raw_key, &flags).map_err(|e| swallowing(e.kind))?;
            Ok(Command::MetaSet(Box::new(MetaSet {
                key,
                data_len,
                mode,
                flags,
            })))
        }
        // memcached 1.6.45 answers md's flag errors as mg's (only ma keeps
        // "invalid or duplicate flag").
        b"md" => {
            let flags = parse_flags(flag_tokens).map_err(err)?;
            let key = meta_key(raw_key, &flags)?;
            Ok(Command::MetaDelete(Box::new(MetaDelete { key, flags })))
        }
        b"ma" => {
            let flags = parse_flags(flag_tokens).map_err(|kind| {
                err(if kind == TextErrorKind::OpaqueTooLong {
                    kind
                } else {
                    TextErrorKind::InvalidOrDuplicateFlag
                })
            })?;
            let mode =
                arith_mode(flags.mode).ok_or_else(|| err(TextErrorKind::InvalidArithMode))?;
            let key = meta_key(raw_key, &flags)?;
            Ok(Command::MetaArith(Box::new(MetaArith {
                key,
                mode,
                delta: flags.delta.unwrap_or(1),
                initial: flags.initial.unwrap_or(0),
                flags,
            })))
        }
        _ => Err(err(TextErrorKind::UnknownCommand)),
    }
}

/// The key as stored: base64-decoded for `b`, otherwise checked like a
/// text key. A decoded key may hold any bytes.
fn meta_key(raw: &Bytes, flags: &MetaFlags) -> Result<Bytes, TextError> {
    if flags.base64_key {
        let decoded = base64::decode(raw).ok_or_else(|| err(TextErrorKind::KeyDecode))?;
        if decoded.len() > MAX_KEY_LEN {
            return Err(err(TextErrorKind::BadCommandLine));
        }
        Ok(Bytes::from(decoded))
    } else if valid_key(raw) {
        Ok(raw.clone())
    } else {
        Err(err(TextErrorKind::BadCommandLine))
    }
}
