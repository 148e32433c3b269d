//! Standard base64 (RFC 4648, with padding) for meta-protocol binary keys
//! (the `b` flag). Tiny and allocation-bounded, so no extra dependency.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub(crate) fn value(c: u8) -> Option<u32> {
    match c {
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Decodes padded base64. `None` on any malformed input (wrong length, bad
/// character, padding in the middle) or when the result would be empty.
pub(crate) fn decode(input: &[u8]) -> Option<Vec<u8>> {
    // (`is_multiple_of` would need Rust 1.87; the workspace targets 1.80.)
    let chunks = input.chunks_exact(4);
    if input.is_empty() || !chunks.remainder().is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(input.len() / 4 * 3);
    let last = chunks.len().checked_sub(1)?;
    for (i, chunk) in chunks.enumerate() {
        let mut acc: u32 = 0;
        let mut pad = 0usize;
        for &c in chunk {
            acc <<= 6;
            if c == b'=' {
                pad += 1;
            } else if pad > 0 {
                return None; // data after padding
            } else {
                acc |= value(c)?;
            }
        }
        if pad > 2 || (pad > 0 && i != last) {
            return None;
        }
        let bytes = acc.to_be_bytes();
        out.extend(bytes.iter().skip(1).take(3 - pad));
    }
    if out.is_empty() {
        None
    } else {
        Some(out)
    }
}

/// Appends the padded base64 encoding of `input` to `out`.
pub(crate) fn encode_into(input: &[u8], out: &mut Vec<u8>) {
    for chunk in input.chunks(3) {
        let b0 = chunk.first().copied().unwrap_or(0);
        let b1 = chunk.get(1).copied().unwrap_or(0);
        let b2 = chunk.get(2).copied().unwrap_or(0);
        let n = (u32::from(b0) << 16) | (u32::from(b1) << 8) | u32::from(b2);
        let sym = |shift: u32| ALPHABET[((n >> shift) & 63) as usize];
        out.push(sym(18));
        out.push(sym(12));
        out.push(if chunk.len() > 1 { sym(6) } else { b'=' });
        out.push(if chunk.len() > 2 { sym(0) } else { b'=' });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(s: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        encode_into(s, &mut v);
        v
    }

    #[test]
    fn rfc4648_vectors() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"f", b"Zg=="),
            (b"fo", b"Zm8="),
            (b"foo", b"Zm9v"),
            (b"foob", b"Zm9vYg=="),
            (b"fooba", b"Zm9vYmE="),
            (b"foobar", b"Zm9vYmFy"),
        ];
        for (plain, coded) in cases {
            assert_eq!(enc(plain), coded.to_vec());
            assert_eq!(decode(coded).as_deref(), Some(*plain));
        }
    }

    #[test]
    fn rejects_malformed() {
        assert_eq!(decode(b""), None);
        assert_eq!(decode(b"Zg="), None);
        assert_eq!(decode(b"Z=g="), None);
        assert_eq!(decode(b"Zg==Zg=="), None);
        assert_eq!(decode(b"Zm9*"), None);
        assert_eq!(decode(b"===="), None);
    }

    #[test]
    fn binary_round_trip() {
        let all: Vec<u8> = (0..=255u8).collect();
        assert_eq!(decode(&enc(&all)), Some(all));
    }
}
