//! Unescaped TSV: `tchmgr`/`tcbmgr`/`kchashmgr`/`kctreemgr list -pv` and
//! `tkrzw_dbm_util export --tsv`. The tools write the bytes as they are, so
//! the key ends at the first tab and the value is the rest of the line, tabs
//! included. What the tools lost cannot come back: Tokyo and Kyoto Cabinet
//! split a record at a line feed in it (their `-px` hex output does not);
//! Tkrzw turned line feeds, control bytes and a key's tabs into spaces.

use super::item::{Bad, Parsed};

fn split(line: &[u8], hint: &'static str) -> Parsed {
    let tab = line
        .iter()
        .position(|&b| b == b'\t')
        .ok_or(Bad::NoTab { hint })?;
    Ok((line[..tab].to_vec(), line[tab + 1..].to_vec()))
}

/// A line of `list -pv` (Tokyo or Kyoto Cabinet).
pub fn parse_list(line: &[u8]) -> Parsed {
    split(
        line,
        " (a line feed inside a record splits it: export with `list -pv -px` \
         and import with --format tc-hex or kc-hex)",
    )
}

/// A line of `tkrzw_dbm_util export --tsv`.
pub fn parse_tkrzw(line: &[u8]) -> Parsed {
    split(line, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_ends_at_the_first_tab() {
        assert_eq!(
            parse_list(b"k\tv\tw\r"),
            Ok((b"k".to_vec(), b"v\tw\r".to_vec()))
        );
        assert_eq!(parse_tkrzw(b"\t"), Ok((vec![], vec![])));
        assert!(matches!(parse_list(b"line2"), Err(Bad::NoTab { .. })));
        assert!(matches!(parse_list(b""), Err(Bad::NoTab { .. })));
    }
}
