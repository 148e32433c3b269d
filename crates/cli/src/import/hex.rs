//! `list -pv -px` of Tokyo and Kyoto Cabinet's tools: each byte of key and
//! value as two upper-case hex digits, separated by spaces, and one tab
//! between key and value (`61 09 62<TAB>6C 0A`). Any bytes round-trip.

use super::item::{Bad, Parsed};

fn digit(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Decodes one field; `base` is the 1-based column of its first byte.
fn field(text: &[u8], base: usize) -> Result<Vec<u8>, Bad> {
    let mut out = Vec::with_capacity(text.len() / 3 + 1);
    let mut at = 0;
    for token in text.split(|&b| b == b' ') {
        let column = base + at;
        at += token.len() + 1;
        match token {
            [] => {} // doubled spaces, or an empty field
            [hi, lo] => match (digit(*hi), digit(*lo)) {
                (Some(h), Some(l)) => out.push(h << 4 | l),
                _ => return Err(Bad::Hex { column }),
            },
            _ => return Err(Bad::Hex { column }),
        }
    }
    Ok(out)
}

pub fn parse_line(line: &[u8]) -> Parsed {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let tab = line.iter().position(|&b| b == b'\t').ok_or(Bad::NoTab {
        hint: " (was the export made without -px? then use --format tc or kc)",
    })?;
    if let Some(j) = line[tab + 1..].iter().position(|&b| b == b'\t') {
        return Err(Bad::ExtraTab {
            column: tab + 2 + j,
        });
    }
    Ok((field(&line[..tab], 1)?, field(&line[tab + 1..], tab + 2)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_fields_decode() {
        assert_eq!(
            parse_line(b"00 6E 75 6C\t00 01 0d 0A 09 5C FF"),
            Ok((b"\0nul".to_vec(), b"\0\x01\r\n\t\\\xff".to_vec()))
        );
        assert_eq!(parse_line(b"65\t"), Ok((b"e".to_vec(), vec![])));
        assert_eq!(parse_line(b"61 6G\t62"), Err(Bad::Hex { column: 4 }));
        assert_eq!(parse_line(b"61\t6"), Err(Bad::Hex { column: 4 }));
        assert_eq!(parse_line(b"61\t62\t63"), Err(Bad::ExtraTab { column: 6 }));
        assert!(matches!(parse_line(b"key value"), Err(Bad::NoTab { .. })));
    }
}
