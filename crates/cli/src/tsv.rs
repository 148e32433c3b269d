//! The text format of `export`, `import` and `list`: one record per line,
//! `KEY<TAB>VALUE<LF>`, with C-style escapes so that any bytes round-trip.
//! See docs/tsv.md.

use std::fmt;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends the escaped form of `data` to `out`.
///
/// Tab, newline, carriage return and backslash become `\t`, `\n`, `\r`, `\\`;
/// other control bytes, DEL and bytes that are not part of valid UTF-8 become
/// `\xNN`. Printable ASCII and valid UTF-8 text (other than control
/// characters) are kept as they are, so text stays readable.
pub fn escape_into(data: &[u8], out: &mut Vec<u8>) {
    let mut rest = data;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                escape_str(s, out);
                return;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                if let Ok(s) = std::str::from_utf8(&rest[..valid]) {
                    escape_str(s, out);
                }
                let bad = e.error_len().unwrap_or(rest.len() - valid);
                for &b in &rest[valid..valid + bad] {
                    hex_byte(b, out);
                }
                rest = &rest[valid + bad..];
            }
        }
    }
}

fn hex_byte(b: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'\\', b'x', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
}

fn escape_str(s: &str, out: &mut Vec<u8>) {
    for c in s.chars() {
        match c {
            '\t' => out.extend_from_slice(b"\\t"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for &b in c.encode_utf8(&mut buf).as_bytes() {
                    hex_byte(b, out);
                }
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
}

/// The escaped form of `data` as a new buffer.
#[cfg(test)]
pub fn escape(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 8);
    escape_into(data, &mut out);
    out
}

/// Why a field or a line could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// A backslash followed by something that is not a known escape.
    BadEscape { column: usize },
    /// The line has no tab between key and value.
    NoTab,
    /// The line has more than one raw tab (a tab inside data must be `\t`).
    ExtraTab { column: usize },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::BadEscape { column } => write!(
                f,
                "bad escape at column {column} (known: \\t \\n \\r \\0 \\\\ \\xNN)"
            ),
            ParseError::NoTab => write!(f, "no tab between key and value"),
            ParseError::ExtraTab { column } => write!(
                f,
                "unexpected second tab at column {column} (a tab inside data is written \\t)"
            ),
        }
    }
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decodes an escaped field. `base` is the 1-based column of the field's
/// first byte, for error messages.
pub fn unescape(field: &[u8], base: usize) -> Result<Vec<u8>, ParseError> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let b = field[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let bad = ParseError::BadEscape { column: base + i };
        match field.get(i + 1) {
            Some(b't') => out.push(b'\t'),
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            Some(b'0') => out.push(0),
            Some(b'\\') => out.push(b'\\'),
            Some(b'x') => {
                let hi = field
                    .get(i + 2)
                    .copied()
                    .and_then(hex_val)
                    .ok_or(bad.clone())?;
                let lo = field.get(i + 3).copied().and_then(hex_val).ok_or(bad)?;
                out.push(hi << 4 | lo);
                i += 4;
                continue;
            }
            _ => return Err(bad),
        }
        i += 2;
    }
    Ok(out)
}

/// Parses one line (without its line feed; a trailing CR is tolerated) into
/// a key and a value.
pub fn parse_line(line: &[u8]) -> Result<(Vec<u8>, Vec<u8>), ParseError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let tab = line
        .iter()
        .position(|&b| b == b'\t')
        .ok_or(ParseError::NoTab)?;
    if let Some(j) = line[tab + 1..].iter().position(|&b| b == b'\t') {
        return Err(ParseError::ExtraTab {
            column: tab + 2 + j,
        });
    }
    let key = unescape(&line[..tab], 1)?;
    let value = unescape(&line[tab + 1..], tab + 2)?;
    Ok((key, value))
}

/// Appends `KEY<TAB>VALUE<LF>`, escaped, to `out`.
pub fn format_line(key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    escape_into(key, out);
    out.push(b'\t');
    escape_into(value, out);
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255u8).collect();
        let e = escape(&all);
        assert!(!e.contains(&b'\t') && !e.contains(&b'\n') && !e.contains(&b'\r'));
        assert_eq!(unescape(&e, 1).unwrap(), all);
        let mut line = Vec::new();
        format_line(&all, b"v\t\n\\\0\xff", &mut line);
        assert_eq!(line.last(), Some(&b'\n'));
        let (k, v) = parse_line(&line[..line.len() - 1]).unwrap();
        assert_eq!(
            (k.as_slice(), v.as_slice()),
            (&all[..], &b"v\t\n\\\0\xff"[..])
        );
    }

    #[test]
    fn text_stays_readable() {
        assert_eq!(escape("日本語 key".as_bytes()), "日本語 key".as_bytes());
        assert_eq!(escape(b"a\tb\\c\x01\xff"), b"a\\tb\\\\c\\x01\\xff");
        assert_eq!(escape("\u{85}".as_bytes()), b"\\xc2\\x85");
    }

    #[test]
    fn bad_lines_are_explained() {
        assert_eq!(parse_line(b"novalue"), Err(ParseError::NoTab));
        assert_eq!(
            parse_line(b"a\tb\tc"),
            Err(ParseError::ExtraTab { column: 4 })
        );
        assert_eq!(
            parse_line(b"a\tb\\q"),
            Err(ParseError::BadEscape { column: 4 })
        );
        assert_eq!(
            parse_line(b"a\\x4\tb"),
            Err(ParseError::BadEscape { column: 2 })
        );
        assert_eq!(parse_line(b"k\tv\r"), Ok((b"k".to_vec(), b"v".to_vec())));
        assert_eq!(parse_line(b"\t"), Ok((vec![], vec![])));
    }
}
