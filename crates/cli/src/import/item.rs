//! What every format's reader yields: a parsed record or why a line was
//! refused, and the `Source` trait the import loop reads through.

use crate::tsv;
use anyhow::Result;
use std::fmt;

/// Why a line of a text export was not stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bad {
    /// memstored's own TSV.
    Tsv(tsv::ParseError),
    /// No tab; `hint` says what likely happened in this format.
    NoTab { hint: &'static str },
    /// More than one raw tab where data tabs are escaped.
    ExtraTab { column: usize },
    /// A backslash sequence Tkrzw's escaping does not write.
    Escape { column: usize },
    /// Not a two-digit hex byte.
    Hex { column: usize },
}

impl fmt::Display for Bad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bad::Tsv(e) => e.fmt(f),
            Bad::NoTab { hint } => write!(f, "no tab between key and value{hint}"),
            Bad::ExtraTab { column } => write!(
                f,
                "unexpected second tab at column {column} (a tab inside data is escaped \\t)"
            ),
            Bad::Escape { column } => write!(
                f,
                "bad escape at column {column} (known: \\0 \\a \\b \\t \\n \\v \\f \\r \\\\ \\xNN)"
            ),
            Bad::Hex { column } => write!(
                f,
                "bad hex at column {column} (bytes are two hex digits, separated by spaces)"
            ),
        }
    }
}

/// A parsed key and value, or why the line was refused.
pub type Parsed = std::result::Result<(Vec<u8>, Vec<u8>), Bad>;

/// Where records come from: a text export line by line, or Tkrzw's flat records.
pub trait Source {
    /// The next record or bad line; `None` at the end. `Err` is fatal: the
    /// file cannot be read on (I/O, or a broken binary stream).
    fn next_item(&mut self) -> Result<Option<Parsed>>;
    /// Bytes consumed so far, for the progress bar.
    fn consumed(&self) -> u64;
    /// Where the last item was, as `FILE:LINE` or `FILE: byte N`.
    fn place(&self) -> String;
    /// What was read, for the closing line: `8 lines, 3 bad`.
    fn summary(&self, bad: u64) -> String;
}
