//! Line framing, tokenizing and number parsing shared by text and meta.

use std::ops::Range;

use crate::MAX_KEY_LEN;

/// Outcome of looking for one command line.
pub(crate) enum Line {
    /// `len` bytes of line content (without `\r\n`), `consumed` bytes
    /// including the terminator.
    Complete {
        len: usize,
        consumed: usize,
    },
    Incomplete,
    /// No `\n` within `max` bytes of content.
    TooLong,
}

/// Finds the first line in `buf`, accepting `\r\n` or a bare `\n` (as
/// memcached does). Only the first `max + 2` bytes are scanned, so a peer
/// streaming bytes without a newline costs bounded work and memory.
pub(crate) fn find_line(buf: &[u8], max: usize) -> Line {
    let window_len = buf.len().min(max.saturating_add(2));
    let window = buf.get(..window_len).unwrap_or(buf);
    match window.iter().position(|&b| b == b'\n') {
        Some(nl) => {
            let content = window.get(..nl).unwrap_or_default();
            let len = match content.last() {
                Some(b'\r') => nl - 1,
                _ => nl,
            };
            if len > max {
                Line::TooLong
            } else {
                Line::Complete {
                    len,
                    consumed: nl + 1,
                }
            }
        }
        None if window_len >= max.saturating_add(2) => Line::TooLong,
        None => Line::Incomplete,
    }
}

/// Space-separated token ranges of `line` (memcached splits on ' ' only and
/// ignores runs of spaces).
pub(crate) fn tokenize(line: &[u8]) -> Vec<Range<usize>> {
    token_ranges(line).collect()
}

/// [`tokenize`] as an iterator, for callers that build their own vector.
pub(crate) fn token_ranges(line: &[u8]) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + line.get(at..)?.iter().position(|&b| b != b' ')?;
        let len = line
            .get(start..)?
            .iter()
            .position(|&b| b == b' ')
            .unwrap_or(line.len() - start);
        at = start + len;
        Some(start..at)
    })
}

/// A key memcached would store: 1..=250 bytes. Like memcached, which only
/// splits on spaces, other bytes — control characters included — are part of
/// the key: load tools such as memcaslap generate such keys, and refusing
/// them would refuse what memcached accepts. (Spaces cannot occur: the
/// tokenizer split on them; CR and LF end the line.)
pub(crate) fn valid_key(key: &[u8]) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY_LEN && !key.iter().any(|&b| matches!(b, b'\r' | b'\n'))
}

/// Unsigned decimal, digits only (memcached's `safe_strtoull` refuses signs).
pub(crate) fn parse_u64(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() {
        return None;
    }
    tok.iter().try_fold(0u64, |acc, &b| {
        let digit = b.checked_sub(b'0').filter(|d| *d < 10)?;
        acc.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

pub(crate) fn parse_u32(tok: &[u8]) -> Option<u32> {
    parse_u64(tok).and_then(|v| u32::try_from(v).ok())
}

/// A data block's declared length, as memcached reads it (`safe_strtol`
/// into an `int32_t`, then `vlen < 0 || vlen > INT_MAX - 2` refused):
/// beyond that the command line is bad and nothing is swallowed, where a
/// length it takes but cannot store swallows the block.
pub(crate) fn parse_data_len(tok: &[u8]) -> Option<usize> {
    parse_i32(tok)
        .filter(|v| (0..=i64::from(i32::MAX - 2)).contains(v))
        .and_then(|v| usize::try_from(v).ok())
}

/// Signed 32-bit decimal with an optional sign, widened to i64
/// (memcached parses exptimes with `safe_strtol` into an `int32_t`).
pub(crate) fn parse_i32(tok: &[u8]) -> Option<i64> {
    let (neg, digits) = match tok.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, tok),
    };
    let mag = i64::try_from(parse_u64(digits)?).ok()?;
    let v = if neg { -mag } else { mag };
    i32::try_from(v).ok().map(i64::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(buf: &[u8], max: usize) -> Option<(usize, usize)> {
        match find_line(buf, max) {
            Line::Complete { len, consumed } => Some((len, consumed)),
            _ => None,
        }
    }

    proptest::proptest! {
        /// Tokens are the non-empty runs between spaces, in order.
        #[test]
        fn tokens_are_the_runs_between_spaces(l in proptest::collection::vec(proptest::prop_oneof![proptest::strategy::Just(b' '), proptest::prelude::any::<u8>()], 0..40)) {
            let got: Vec<&[u8]> = token_ranges(&l).map(|r| &l[r]).collect();
            let want: Vec<&[u8]> = l.split(|&b| b == b' ').filter(|t| !t.is_empty()).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn crlf_and_bare_lf() {
        assert_eq!(line(b"get a\r\nrest", 100), Some((5, 7)));
        assert_eq!(line(b"get a\nrest", 100), Some((5, 6)));
        assert_eq!(line(b"\r\n", 100), Some((0, 2)));
        assert!(matches!(find_line(b"get a\r", 100), Line::Incomplete));
    }

    #[test]
    fn limit_is_on_content() {
        assert_eq!(line(b"abcd\r\n", 4), Some((4, 6)));
        assert!(matches!(find_line(b"abcde\r\n", 4), Line::TooLong));
        assert!(matches!(find_line(b"abcde\n", 4), Line::TooLong));
        assert!(matches!(find_line(b"abcd\r", 4), Line::Incomplete));
        assert!(matches!(find_line(b"abcdef", 4), Line::TooLong));
        assert!(matches!(find_line(b"abcde", 4), Line::Incomplete));
    }

    #[test]
    fn tokens_split_on_spaces_only() {
        let l = b"  set  a\tb 1 ";
        let t: Vec<&[u8]> = tokenize(l).into_iter().map(|r| &l[r]).collect();
        assert_eq!(t, vec![&b"set"[..], b"a\tb", b"1"]);
        assert!(tokenize(b"   ").is_empty());
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"1x"), None);
        assert_eq!(parse_u32(b"4294967296"), None);
        assert_eq!(parse_i32(b"-5"), Some(-5));
        assert_eq!(parse_i32(b"+5"), Some(5));
        assert_eq!(parse_i32(b"2147483648"), None);
        assert_eq!(parse_i32(b"-2147483648"), Some(-2147483648));
        assert_eq!(parse_i32(b"-"), None);
    }

    #[test]
    fn keys() {
        assert!(valid_key(b"a"));
        assert!(valid_key(&[b'k'; 250]));
        assert!(!valid_key(&[b'k'; 251]));
        assert!(!valid_key(b""));
        assert!(
            valid_key(b"a\tb"),
            "memcached accepts control characters in keys"
        );
        assert!(valid_key(b"a\x7fb"));
        assert!(!valid_key(b"a\rb"));
        assert!(valid_key("ключ".as_bytes()));
    }
}
