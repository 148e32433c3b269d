//! `tkrzw_dbm_util export --tsv --escape`: one raw tab between key and value,
//! C-style escapes inside them. As observed from tkrzw-utils 1.0.25: NUL is
//! `\0`; BEL, BS, TAB, LF, VT, FF, CR are `\a \b \t \n \v \f \r`; a
//! backslash is `\\`; other control bytes and DEL are `\xNN`; bytes from
//! 0x80 up are written raw. Exactly those escapes are read back.

use super::item::{Bad, Parsed};

fn hex(b: Option<&u8>) -> Option<u8> {
    b.and_then(|&b| (b as char).to_digit(16)).map(|d| d as u8)
}

/// Decodes one field; `base` is the 1-based column of its first byte.
fn unescape(field: &[u8], base: usize) -> Result<Vec<u8>, Bad> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        if field[i] != b'\\' {
            out.push(field[i]);
            i += 1;
            continue;
        }
        let bad = Bad::Escape { column: base + i };
        let b = match field.get(i + 1) {
            Some(b'0') => 0,
            Some(b'a') => 7,
            Some(b'b') => 8,
            Some(b't') => b'\t',
            Some(b'n') => b'\n',
            Some(b'v') => 11,
            Some(b'f') => 12,
            Some(b'r') => b'\r',
            Some(b'\\') => b'\\',
            Some(b'x') => {
                let (hi, lo) = (hex(field.get(i + 2)), hex(field.get(i + 3)));
                let (Some(hi), Some(lo)) = (hi, lo) else {
                    return Err(bad);
                };
                out.push(hi << 4 | lo);
                i += 4;
                continue;
            }
            _ => return Err(bad),
        };
        out.push(b);
        i += 2;
    }
    Ok(out)
}

pub fn parse_line(line: &[u8]) -> Parsed {
    // A CR in data is written `\r`: a raw one is a Windows line end.
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let tab = line
        .iter()
        .position(|&b| b == b'\t')
        .ok_or(Bad::NoTab { hint: "" })?;
    if let Some(j) = line[tab + 1..].iter().position(|&b| b == b'\t') {
        return Err(Bad::ExtraTab {
            column: tab + 2 + j,
        });
    }
    Ok((
        unescape(&line[..tab], 1)?,
        unescape(&line[tab + 1..], tab + 2)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tkrzw_escapes_decode() {
        assert_eq!(
            parse_line(b"a\\tb\tline1\\nline2\\0\\a\\b\\v\\f\\r\\x7f\\x1B\xff\\\\"),
            Ok((
                b"a\tb".to_vec(),
                b"line1\nline2\0\x07\x08\x0b\x0c\r\x7f\x1b\xff\\".to_vec()
            ))
        );
        assert_eq!(parse_line(b"k\t\\q"), Err(Bad::Escape { column: 3 }));
        assert_eq!(parse_line(b"k\tv\\x1"), Err(Bad::Escape { column: 4 }));
        assert_eq!(parse_line(b"k\tv\\"), Err(Bad::Escape { column: 4 }));
        assert_eq!(parse_line(b"k\tv\tw"), Err(Bad::ExtraTab { column: 4 }));
    }
}
