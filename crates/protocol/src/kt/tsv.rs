//! Kyoto Tycoon's TSV-RPC data (`kyototycoon/doc/spex.html`, "TSV-RPC"):
//! a map of byte strings as tab-separated lines, each column optionally
//! encoded by the `colenc` attribute of the content type (B = Base64,
//! Q = quoted-printable, U = URL encoding), and HTML-form / query-string
//! input. The decoders are as lenient as Kyoto Tycoon's own (`kcutil.h`,
//! `ktutil.h`): a malformed escape decodes to what KT makes of it rather
//! than failing, so anything KT accepts is accepted here; none of them can
//! fail or panic on any input.

use std::collections::BTreeMap;

/// A TSV-RPC input or output: keys in byte order, as KT's `std::map`. A
/// later record of the same key replaces an earlier one.
pub type TsvMap = BTreeMap<Vec<u8>, Vec<u8>>;

/// A column encoding (`colenc=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColEnc {
    Base64,
    Quoted,
    Url,
}

impl ColEnc {
    /// The attribute value: `B`, `Q` or `U`.
    pub fn letter(self) -> char {
        match self {
            ColEnc::Base64 => 'B',
            ColEnc::Quoted => 'Q',
            ColEnc::Url => 'U',
        }
    }

    pub fn encode(self, b: &[u8]) -> Vec<u8> {
        match self {
            ColEnc::Base64 => base64_encode(b),
            ColEnc::Quoted => quote_encode(b),
            ColEnc::Url => url_encode(b),
        }
    }

    pub fn decode(self, s: &[u8]) -> Vec<u8> {
        match self {
            ColEnc::Base64 => base64_decode(s),
            ColEnc::Quoted => quote_decode(s),
            ColEnc::Url => url_decode(s),
        }
    }
}

/// What a request's `Content-Type` says about its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// `text/tab-separated-values`, with its `colenc` if any.
    Tsv(Option<ColEnc>),
    /// `application/x-www-form-urlencoded`.
    Form,
    /// Anything else: the body is not input (as in KT).
    Other,
}

const TSV_TYPE: &str = "text/tab-separated-values";
const FORM_TYPE: &str = "application/x-www-form-urlencoded";

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// Reads a `Content-Type` value as KT does: the media type by prefix, then
/// `colenc=X` (quoted or not) among `;`/space separated attributes.
pub fn body_kind(content_type: &str) -> BodyKind {
    if starts_with_ignore_case(content_type, FORM_TYPE) {
        return BodyKind::Form;
    }
    if !starts_with_ignore_case(content_type, TSV_TYPE) {
        return BodyKind::Other;
    }
    let mut enc = None;
    for attr in content_type[TSV_TYPE.len()..].split([';', ' ']) {
        let Some((name, value)) = attr.split_once('=') else {
            continue;
        };
        if !name.eq_ignore_ascii_case("colenc") {
            continue;
        }
        enc = match value.trim_start_matches('"').bytes().next() {
            Some(b'b' | b'B') => Some(ColEnc::Base64),
            Some(b'q' | b'Q') => Some(ColEnc::Quoted),
            Some(b'u' | b'U') => Some(ColEnc::Url),
            _ => enc,
        };
    }
    BodyKind::Tsv(enc)
}

/// The `Content-Type` of a TSV reply in `enc`.
pub fn content_type(enc: Option<ColEnc>) -> String {
    match enc {
        Some(e) => format!("{TSV_TYPE}; colenc={}", e.letter()),
        None => TSV_TYPE.to_string(),
    }
}

/// Adds the records of a TSV body to `map`: one per line (`\n`, an `\r`
/// before it dropped), key and value split at the first tab; lines without
/// a tab are skipped. Columns are decoded with `enc`.
pub fn parse_tsv(body: &[u8], enc: Option<ColEnc>, map: &mut TsvMap) {
    for (k, v) in tsv_lines(body) {
        let (k, v) = match enc {
            Some(e) => (e.decode(k), e.decode(v)),
            None => (k.to_vec(), v.to_vec()),
        };
        map.insert(k, v);
    }
}

/// A TSV body's `key<TAB>value` lines as they are (not decoded), split at
/// each line's first tab; a trailing CR is dropped and a line without a tab
/// skipped.
pub fn tsv_lines(body: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    body.split(|&b| b == b'\n').filter_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let tab = line.iter().position(|&b| b == b'\t')?;
        Some((&line[..tab], &line[tab + 1..]))
    })
}

/// Adds the records of a query string or HTML-form body to `map`:
/// `&`/`;`-separated `key=value`, each URL-decoded; leading blanks skipped.
pub fn parse_form(s: &[u8], map: &mut TsvMap) {
    for pair in s.split(|&b| b == b'&' || b == b';') {
        let start = pair
            .iter()
            .position(|&b| b == 0 || b > b' ')
            .unwrap_or(pair.len());
        let pair = &pair[start..];
        if pair.is_empty() {
            continue;
        }
        let (k, v) = match pair.iter().position(|&b| b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &[][..]),
        };
        map.insert(url_decode(k), url_decode(v));
    }
}

/// Writes `map` as TSV lines, each column in `enc`.
pub fn write_tsv(map: &[(Vec<u8>, Vec<u8>)], enc: Option<ColEnc>) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in map {
        match enc {
            Some(e) => {
                out.extend_from_slice(&e.encode(k));
                out.push(b'\t');
                out.extend_from_slice(&e.encode(v));
            }
            None => {
                out.extend_from_slice(k);
                out.push(b'\t');
                out.extend_from_slice(v);
            }
        }
        out.push(b'\n');
    }
    out
}

/// KT's `checkmapenc`: no encoding when every column is printable and
/// short, else whichever of Base64 and URL encoding is shorter (each
/// column's first 255 bytes weighed; a longer column forces encoding).
pub fn best_encoding(map: &[(Vec<u8>, Vec<u8>)]) -> Option<ColEnc> {
    let (mut bin, mut blen, mut ulen) = (false, 0usize, 0usize);
    for col in map.iter().flat_map(|(k, v)| [k, v]) {
        let col = if col.len() > 255 {
            bin = true;
            &col[..255]
        } else {
            &col[..]
        };
        blen += col.len() * 6 / 4 + 3;
        for &c in col {
            if c < b' ' || c == 0x7f {
                bin = true;
            }
            ulen += if c.is_ascii_alphanumeric() || b"_-.!~*'()".contains(&c) {
                1
            } else {
                3
            };
        }
    }
    match bin {
        false => None,
        true if blen < ulen => Some(ColEnc::Base64),
        true => Some(ColEnc::Url),
    }
}

fn hex_digit(n: u8) -> u8 {
    b"0123456789abcdef"[usize::from(n & 0x0f)]
}

/// A hex digit's value; KT counts anything else as 0.
fn hex_value(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

/// KT's `urlencode`: unreserved bytes as they are, others `%xx` (lower case).
pub fn url_encode(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    for &c in b {
        if c.is_ascii_alphanumeric() || b"_-.~".contains(&c) {
            out.push(c);
        } else {
            out.extend_from_slice(&[b'%', hex_digit(c >> 4), hex_digit(c)]);
        }
    }
    out
}

/// KT's `urldecode`: `%xx` escapes, `+` as a space, control bytes and
/// spaces dropped; a `%` cut short ends the text.
pub fn url_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                let (Some(&h), Some(&l)) = (s.get(i + 1), s.get(i + 2)) else {
                    break;
                };
                out.push(hex_value(h) << 4 | hex_value(l));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c if c <= b' ' || c == 0x7f => i += 1,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// KT's `quoteencode`: `=`, control bytes and bytes above 0x7e as `=XX`.
pub fn quote_encode(b: &[u8]) -> Vec<u8> {
    let upper = |n: u8| b"0123456789ABCDEF"[usize::from(n & 0x0f)];
    let mut out = Vec::with_capacity(b.len());
    for &c in b {
        if c == b'=' || !(b' '..=0x7e).contains(&c) {
            out.extend_from_slice(&[b'=', upper(c >> 4), upper(c)]);
        } else {
            out.push(c);
        }
    }
    out
}

/// KT's `quotedecode`: `=XX` escapes, soft line breaks (`=` before a line
/// end) dropped, control bytes dropped; an escape cut short ends the text.
pub fn quote_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'=' => match (s.get(i + 1), s.get(i + 2)) {
                (None, _) => break,
                (Some(b'\r'), Some(b'\n')) => i += 3,
                (Some(b'\r'), None) => break,
                (Some(b'\r' | b'\n'), _) => i += 2,
                (Some(_), None) => break,
                (Some(&h), Some(&l)) => {
                    out.push(hex_value(h) << 4 | hex_value(l));
                    i += 3;
                }
            },
            c if c < b' ' || c == 0x7f => i += 1,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Standard Base64 with `=` padding.
pub fn base64_encode(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len().div_ceil(3) * 4);
    crate::base64::encode_into(b, &mut out);
    out
}

/// KT's `basedecode`: bytes outside the alphabet are skipped, decoding
/// stops at the first `=`, a final partial group yields its whole bytes.
pub fn base64_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3 + 3);
    let (mut bits, mut n) = (0u32, 0u32);
    for &c in s {
        if c == b'=' {
            break;
        }
        let Some(v) = crate::base64::value(c) else {
            continue;
        };
        bits = bits << 6 | v;
        n += 1;
        if n == 4 {
            out.extend_from_slice(&bits.to_be_bytes()[1..]);
            (bits, n) = (0, 0);
        }
    }
    match n {
        2 => out.push((bits >> 4) as u8),
        3 => out.extend_from_slice(&((bits >> 2) as u16).to_be_bytes()),
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spex_examples() {
        let mut m = TsvMap::new();
        parse_tsv(
            b"aWQ=\tMTIzNDU=\nYWdl\tMzE=\n",
            Some(ColEnc::Base64),
            &mut m,
        );
        assert_eq!(m[&b"id"[..]], b"12345");
        assert_eq!(m[&b"age"[..]], b"31");
        let mut m = TsvMap::new();
        parse_form(b"id=1234&name=%e5%b9%b9%e9%9b%84", &mut m);
        assert_eq!(m[&b"name"[..]], "幹雄".as_bytes());
        assert_eq!(url_encode("平林".as_bytes()), b"%e5%b9%b3%e6%9e%97");
        assert_eq!(
            body_kind("text/tab-separated-values; colenc=B"),
            BodyKind::Tsv(Some(ColEnc::Base64))
        );
        assert_eq!(
            body_kind("Text/Tab-Separated-Values;colenc=\"u\""),
            BodyKind::Tsv(Some(ColEnc::Url))
        );
        assert_eq!(body_kind("text/tab-separated-values"), BodyKind::Tsv(None));
        assert_eq!(body_kind("application/octet-stream"), BodyKind::Other);
    }

    #[test]
    fn every_encoding_round_trips_every_byte() {
        let all: Vec<u8> = (0..=255u8).chain(*b"ab=\t\n%+").collect();
        for n in 0..all.len() {
            for e in [ColEnc::Base64, ColEnc::Quoted, ColEnc::Url] {
                assert_eq!(e.decode(&e.encode(&all[n..])), &all[n..], "{e:?} {n}");
            }
        }
        assert_eq!(base64_encode(b"12345"), b"MTIzNDU=");
    }

    #[test]
    fn lines_and_damaged_input() {
        let mut m = TsvMap::new();
        parse_tsv(b"k\tv\r\nno tab\n\ta\tb\nk\tlater", None, &mut m);
        assert_eq!(m[&b"k"[..]], b"later");
        assert_eq!(m[&b""[..]], b"a\tb");
        assert_eq!(m.len(), 2);
        // Cut-short escapes end the text, as in KT; nothing panics.
        assert_eq!(url_decode(b"ab%4"), b"ab");
        assert_eq!(url_decode(b"%zz"), b"\0");
        assert_eq!(quote_decode(b"a=4"), b"a");
        assert_eq!(quote_decode(b"a=\r\nb"), b"ab");
        assert_eq!(base64_decode(b"M T\nIz!"), b"123");
        assert_eq!(base64_decode(b"YQ"), b"a");
    }

    proptest::proptest! {
        /// Network input: nothing panics, and every encoding round-trips.
        #[test]
        fn any_input_decodes_without_panic(b in proptest::collection::vec(proptest::num::u8::ANY, 0..300), s in ".{0,80}") {
            let mut m = TsvMap::new();
            for enc in [None, Some(ColEnc::Base64), Some(ColEnc::Quoted), Some(ColEnc::Url)] {
                parse_tsv(&b, enc, &mut m);
                if let Some(e) = enc {
                    proptest::prop_assert_eq!(e.decode(&e.encode(&b)), b.clone());
                }
            }
            parse_form(&b, &mut m);
            let _ = body_kind(&s);
            let _ = best_encoding(&m.into_iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn best_encoding_is_kts() {
        let map = |k: &[u8], v: &[u8]| vec![(k.to_vec(), v.to_vec())];
        assert_eq!(best_encoding(&map(b"value", b"tokyo")), None);
        assert_eq!(best_encoding(&map(b"value", b"a\tb")), Some(ColEnc::Url));
        assert_eq!(
            best_encoding(&map(b"value", &[0u8, 1, 2, 3, 4, 5, 6, 7, 200])),
            Some(ColEnc::Base64)
        );
        assert_eq!(
            best_encoding(&map(b"value", &[b'a'; 300])),
            Some(ColEnc::Url)
        );
    }
}
