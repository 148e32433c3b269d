//! Text exports, one record per line: the loop shared by every TSV format.

use super::item::{Parsed, Source};
use anyhow::{Context, Result};
use std::io::BufRead;

pub struct Lines<R> {
    r: R,
    file: String,
    parse: fn(&[u8]) -> Parsed,
    /// Whether an empty line is skipped (memstored's TSV) or refused (an
    /// ancestor's export never has one, so it means a split record).
    skip_empty: bool,
    buf: Vec<u8>,
    lineno: u64,
    read: u64,
}

impl<R: BufRead> Lines<R> {
    pub fn new(r: R, file: &str, parse: fn(&[u8]) -> Parsed, skip_empty: bool) -> Self {
        Lines {
            r,
            file: file.to_string(),
            parse,
            skip_empty,
            buf: Vec::with_capacity(256),
            lineno: 0,
            read: 0,
        }
    }
}

impl<R: BufRead> Source for Lines<R> {
    fn next_item(&mut self) -> Result<Option<Parsed>> {
        loop {
            self.buf.clear();
            let n = self
                .r
                .read_until(b'\n', &mut self.buf)
                .with_context(|| format!("reading {:?}", self.file))?;
            if n == 0 {
                return Ok(None);
            }
            self.lineno += 1;
            self.read += n as u64;
            let line = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
            if self.skip_empty && (line.is_empty() || line == b"\r") {
                continue;
            }
            return Ok(Some((self.parse)(line)));
        }
    }

    fn consumed(&self) -> u64 {
        self.read
    }

    fn place(&self) -> String {
        format!("{}:{}", self.file, self.lineno)
    }

    fn summary(&self, bad: u64) -> String {
        format!("{} lines, {bad} bad", self.lineno)
    }
}
