//! Meta commands (`mg ms md ma mn me`): flag parsing and request types.
//!
//! Flags are single letters, some followed by a token (`T30`, `Oabc`).
//! memcached echoes return flags in the order the client gave them, so we
//! keep that order ([`MetaFlags::requested`]).

use bytes::Bytes;

use super::error::TextErrorKind;
use super::line::{parse_i32, parse_u32, parse_u64};

/// Longest `O` token echoed back, letter included (`MFLAG_MAX_OPAQUE_LENGTH`).
pub const MAX_OPAQUE_LEN: usize = 32;

/// Most flags one meta command may carry. memcached refuses a command with
/// more than 20 tokens counting the command, the key and a terminator.
pub const MAX_META_FLAGS: usize = 17;

/// Parsed meta flags. Booleans are "the letter was present"; `Option`s hold
/// a letter's token. Letters memcached accepts but memstored ignores
/// (`P`, `L`: proxy hints) are recorded in [`MetaFlags::requested`] only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetaFlags {
    /// `b`: the key was base64; it has been decoded. Echo keys re-encoded.
    pub base64_key: bool,
    /// `v`: return the value (`VA` instead of `HD`).
    pub return_value: bool,
    /// `k`: return the key.
    pub return_key: bool,
    /// `f`: return the client flags.
    pub return_client_flags: bool,
    /// `c`: return the CAS.
    pub return_cas: bool,
    /// `t`: return the remaining TTL (-1 = never expires).
    pub return_ttl: bool,
    /// `s`: return the value size.
    pub return_size: bool,
    /// `h`: return whether the item was fetched before (0/1).
    pub return_hit: bool,
    /// `l`: return seconds since last access.
    pub return_last_access: bool,
    /// `u`: do not bump the item in the LRU.
    pub no_lru_bump: bool,
    /// `q`: quiet mode: suppress the nominal reply (HD on ms/md, EN on mg,
    /// ...). Errors are always sent.
    pub quiet: bool,
    /// `I`: invalidate — ms: set only if CAS is older, marks stale; md:
    /// mark stale instead of removing.
    pub invalidate: bool,
    /// `O<token>`: opaque to echo, without the `O`.
    pub opaque: Option<Bytes>,
    /// `T<exptime>`: update the TTL (memcached exptime rules).
    pub ttl: Option<i64>,
    /// `N<exptime>`: vivify on miss with this TTL.
    pub vivify_ttl: Option<i64>,
    /// `R<exptime>`: win a recache token if the TTL is below this.
    pub recache_ttl: Option<i64>,
    /// `F<flags>`: client flags to store (ms).
    pub client_flags: Option<u32>,
    /// `C<cas>`: compare CAS before acting.
    pub compare_cas: Option<u64>,
    /// `J<n>`: initial value for ma auto-create.
    pub initial: Option<u64>,
    /// `D<n>`: delta for ma.
    pub delta: Option<u64>,
    /// `M<c>`: mode switch, interpreted by ms/ma.
    pub mode: Option<u8>,
    /// `E<cas>`: the CAS an item this command creates or changes gets,
    /// instead of the next one (memcached 1.6.21+).
    pub new_cas: Option<u64>,
    /// `x`: md removes the value but keeps the item (memcached 1.6.21+).
    pub remove_value: bool,
    requested: Vec<u8>,
}

impl MetaFlags {
    /// Every flag letter in the order the client sent it. Build return
    /// flags by walking this, so replies match memcached's order.
    pub fn requested(&self) -> &[u8] {
        &self.requested
    }
}

/// Parses the flag tokens after the key (or after `ms`'s data length),
/// following memcached's `_meta_flag_preparse`: a repeated or unknown letter
/// stops at once; a bad token is remembered and the last one reported after
/// all tokens were seen.
pub(crate) fn parse_flags(tokens: &[Bytes]) -> Result<MetaFlags, TextErrorKind> {
    let mut f = MetaFlags::default();
    // memcached tracks letters below 127 and calls anything else a duplicate.
    let mut seen = [false; 127];
    let mut pending: Option<TextErrorKind> = None;
    for tok in tokens {
        let Some((&letter, arg)) = tok.split_first() else {
            continue;
        };
        match seen.get_mut(usize::from(letter)) {
            Some(s) if !*s => *s = true,
            _ => return Err(TextErrorKind::DuplicateFlag),
        }
        let mut bad = |kind: TextErrorKind| pending = Some(kind);
        match letter {
            b'b' => f.base64_key = true,
            b'v' => f.return_value = true,
            b'k' => f.return_key = true,
            b'f' => f.return_client_flags = true,
            b'c' => f.return_cas = true,
            b't' => f.return_ttl = true,
            b's' => f.return_size = true,
            b'h' => f.return_hit = true,
            b'l' => f.return_last_access = true,
            b'u' => f.no_lru_bump = true,
            b'q' => f.quiet = true,
            b'I' => f.invalidate = true,
            b'x' => f.remove_value = true,
            b'E' => match parse_u64(arg) {
                Some(v) => f.new_cas = Some(v),
                None => bad(TextErrorKind::BadToken),
            },
            b'P' | b'L' => {}
            b'O' => f.opaque = Some(tok.slice(1..)),
            b'T' => match parse_i32(arg) {
                Some(v) => f.ttl = Some(v),
                None => bad(TextErrorKind::BadToken),
            },
            b'N' => match parse_i32(arg) {
                Some(v) => f.vivify_ttl = Some(v),
                None => bad(TextErrorKind::BadToken),
            },
            b'R' => match parse_i32(arg) {
                Some(v) => f.recache_ttl = Some(v),
                None => bad(TextErrorKind::BadToken),
            },
            b'F' => match parse_u32(arg) {
                Some(v) => f.client_flags = Some(v),
                // memcached sets no message here: the default one stands.
                None => {
                    if pending.is_none() {
                        pending = Some(TextErrorKind::BadCommandLine);
                    }
                }
            },
            b'C' => match parse_u64(arg) {
                Some(v) => f.compare_cas = Some(v),
                None => bad(TextErrorKind::BadToken),
            },
            b'J' => match parse_u64(arg) {
                Some(v) => f.initial = Some(v),
                None => bad(TextErrorKind::InvalidInitial),
            },
            b'D' => match parse_u64(arg) {
                Some(v) => f.delta = Some(v),
                None => bad(TextErrorKind::InvalidMetaDelta),
            },
            b'M' => match arg {
                [m] => f.mode = Some(*m),
                _ => bad(TextErrorKind::BadModeLength),
            },
            _ => return Err(TextErrorKind::InvalidFlag),
        }
        f.requested.push(letter);
    }
    if f.opaque
        .as_ref()
        .is_some_and(|o| o.len() + 1 > MAX_OPAQUE_LEN)
    {
        pending = pending.or(Some(TextErrorKind::OpaqueTooLong));
    }
    match pending {
        Some(kind) => Err(kind),
        None => Ok(f),
    }
}

/// `mg <key> <flags>*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaGet {
    /// The key, base64-decoded if `flags.base64_key`.
    pub key: Bytes,
    pub flags: MetaFlags,
}

/// How `ms` stores (`M` flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetaSetMode {
    /// `S` (default). With `C`, a compare-and-set.
    Set,
    /// `E`: only if absent.
    Add,
    /// `A`.
    Append,
    /// `P`.
    Prepend,
    /// `R`: only if present.
    Replace,
}

/// `ms <key> <datalen> <flags>*`, followed by a data block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaSet {
    pub key: Bytes,
    /// Declared value length; the data block is `data_len` bytes + `\r\n`.
    pub data_len: usize,
    pub mode: MetaSetMode,
    pub flags: MetaFlags,
}

/// `md <key> <flags>*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaDelete {
    pub key: Bytes,
    pub flags: MetaFlags,
}

/// Direction of `ma`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetaArithMode {
    /// `I` or `+` (default).
    Increment,
    /// `D` or `-`.
    Decrement,
}

/// `ma <key> <flags>*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaArith {
    pub key: Bytes,
    pub mode: MetaArithMode,
    /// `D` token, default 1.
    pub delta: u64,
    /// `J` token, default 0; used when `N` auto-creates a missing key.
    pub initial: u64,
    pub flags: MetaFlags,
}

pub(crate) fn set_mode(mode: Option<u8>) -> Option<MetaSetMode> {
    Some(match mode {
        None | Some(b'S' | b's') => MetaSetMode::Set,
        Some(b'E' | b'e') => MetaSetMode::Add,
        Some(b'A' | b'a') => MetaSetMode::Append,
        Some(b'P' | b'p') => MetaSetMode::Prepend,
        Some(b'R' | b'r') => MetaSetMode::Replace,
        Some(_) => return None,
    })
}

pub(crate) fn arith_mode(mode: Option<u8>) -> Option<MetaArithMode> {
    Some(match mode {
        None | Some(b'I' | b'i' | b'+') => MetaArithMode::Increment,
        Some(b'D' | b'd' | b'-') => MetaArithMode::Decrement,
        Some(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(s: &str) -> Result<MetaFlags, TextErrorKind> {
        let toks: Vec<Bytes> = s
            .split(' ')
            .filter(|t| !t.is_empty())
            .map(|t| Bytes::copy_from_slice(t.as_bytes()))
            .collect();
        parse_flags(&toks)
    }

    #[test]
    fn letters_and_tokens() {
        let f = flags("v k f c t s q Oabc T30 N-1 R5 F7 C99 J3 D4 MA I b h l u").unwrap();
        assert!(f.return_value && f.return_key && f.return_client_flags && f.return_cas);
        assert!(f.return_ttl && f.return_size && f.quiet && f.invalidate && f.base64_key);
        assert!(f.return_hit && f.return_last_access && f.no_lru_bump);
        assert_eq!(f.opaque.as_deref(), Some(&b"abc"[..]));
        assert_eq!(f.ttl, Some(30));
        assert_eq!(f.vivify_ttl, Some(-1));
        assert_eq!(f.recache_ttl, Some(5));
        assert_eq!(f.client_flags, Some(7));
        assert_eq!(f.compare_cas, Some(99));
        assert_eq!(f.initial, Some(3));
        assert_eq!(f.delta, Some(4));
        assert_eq!(f.mode, Some(b'A'));
        assert_eq!(f.requested(), b"vkfctsqOTNRFCJDMIbhlu");
    }

    #[test]
    fn errors_follow_memcached_precedence() {
        assert_eq!(flags("v v"), Err(TextErrorKind::DuplicateFlag));
        assert_eq!(flags("v Z"), Err(TextErrorKind::InvalidFlag));
        assert_eq!(flags("Tx"), Err(TextErrorKind::BadToken));
        assert_eq!(flags("T"), Err(TextErrorKind::BadToken));
        // A bad token does not stop parsing: a later duplicate wins.
        assert_eq!(flags("Tx v v"), Err(TextErrorKind::DuplicateFlag));
        assert_eq!(flags("Jx"), Err(TextErrorKind::InvalidInitial));
        assert_eq!(flags("D-1"), Err(TextErrorKind::InvalidMetaDelta));
        assert_eq!(flags("MEE"), Err(TextErrorKind::BadModeLength));
        assert_eq!(flags("Fx"), Err(TextErrorKind::BadCommandLine));
        assert_eq!(flags("Tx Fx"), Err(TextErrorKind::BadToken));
        let long = format!("O{}", "x".repeat(32));
        assert_eq!(flags(&long), Err(TextErrorKind::OpaqueTooLong));
        assert!(flags(&format!("O{}", "x".repeat(31))).is_ok());
        assert_eq!(flags("\u{7f}"), Err(TextErrorKind::DuplicateFlag));
        assert_eq!(flags("~"), Err(TextErrorKind::InvalidFlag));
        // memcached 1.6.45 knows `E` (explicit CAS) and `x` (md: drop the value).
        let f = flags("E5 x").unwrap();
        assert_eq!((f.new_cas, f.remove_value), (Some(5), true));
        assert_eq!(flags("Ex"), Err(TextErrorKind::BadToken));
        assert_eq!(flags("é"), Err(TextErrorKind::DuplicateFlag));
    }

    #[test]
    fn modes() {
        assert_eq!(set_mode(None), Some(MetaSetMode::Set));
        assert_eq!(set_mode(Some(b'E')), Some(MetaSetMode::Add));
        assert_eq!(set_mode(Some(b'X')), None);
        assert_eq!(arith_mode(Some(b'-')), Some(MetaArithMode::Decrement));
        assert_eq!(arith_mode(Some(b'x')), None);
    }
}
