//! Tkrzw's flat records: what `tkrzw_dbm_util export` writes by default, and
//! what Tkrzw's on-memory databases (`.tkmt`, `.tkmb`) save. As observed from
//! tkrzw-utils 1.0.25, the file is a sequence of fields, each a magic byte,
//! a size and that many bytes; data fields alternate key, value, key, ...
//! The magic is 0xFF for data and 0xFE for metadata (a saved on-memory
//! database starts with one, listing its class and tuning), which is skipped.
//! The size is a big-endian base-128 varint: seven bits a byte, the high bit
//! set on every byte but the last (300 is `82 2C`).
//!
//! The stream has no lines to resynchronise on, so a broken field stops the
//! import there (the records before it are kept).

use super::item::{Parsed, Source};
use anyhow::{bail, Context, Result};
use std::io::{ErrorKind, Read};

const DATA: u8 = 0xff;
const METADATA: u8 = 0xfe;

pub struct Flat<R> {
    r: R,
    file: String,
    /// Bytes consumed.
    at: u64,
    /// Where the last record's key field began.
    record_at: u64,
    fields: u64,
}

impl<R: Read> Flat<R> {
    pub fn new(r: R, file: &str) -> Self {
        Flat {
            r,
            file: file.to_string(),
            at: 0,
            record_at: 0,
            fields: 0,
        }
    }

    /// One byte, or `None` at the end of the file.
    fn byte(&mut self) -> Result<Option<u8>> {
        let mut b = [0u8];
        loop {
            match self.r.read(&mut b) {
                Ok(0) => return Ok(None),
                Ok(_) => {
                    self.at += 1;
                    return Ok(Some(b[0]));
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e).with_context(|| format!("reading {:?}", self.file)),
            }
        }
    }

    fn truncated(&self) -> anyhow::Error {
        anyhow::anyhow!(
            "{}: byte {}: the file ends inside a field (truncated export?)",
            self.file,
            self.at
        )
    }

    fn size(&mut self) -> Result<u64> {
        let mut n = 0u64;
        for _ in 0..10 {
            let b = self.byte()?.ok_or_else(|| self.truncated())?;
            n = n.checked_mul(128).ok_or_else(|| {
                anyhow::anyhow!("{}: byte {}: field size overflows", self.file, self.at)
            })? | u64::from(b & 0x7f);
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        bail!(
            "{}: byte {}: field size longer than 10 bytes",
            self.file,
            self.at
        )
    }

    /// The next data field, skipping metadata; `None` at a clean end.
    fn field(&mut self) -> Result<Option<Vec<u8>>> {
        loop {
            let start = self.at;
            let Some(magic) = self.byte()? else {
                return Ok(None);
            };
            if magic != DATA && magic != METADATA {
                bail!(
                    "{}: byte {start}: 0x{magic:02X} starts no Tkrzw flat record \
                     (data fields start with 0xFF, metadata with 0xFE); is this \
                     a `tkrzw_dbm_util export` without --tsv?",
                    self.file
                );
            }
            let size = self.size()?;
            // Read through `take`: a corrupt huge size fails at the end of
            // the file instead of allocating it up front.
            let mut data = Vec::new();
            let got = (&mut self.r)
                .take(size)
                .read_to_end(&mut data)
                .with_context(|| format!("reading {:?}", self.file))?;
            self.at += got as u64;
            if (got as u64) < size {
                return Err(self.truncated());
            }
            self.fields += 1;
            if magic == DATA {
                return Ok(Some(data));
            }
        }
    }
}

impl<R: Read> Source for Flat<R> {
    fn next_item(&mut self) -> Result<Option<Parsed>> {
        self.record_at = self.at;
        let Some(key) = self.field()? else {
            return Ok(None);
        };
        let Some(value) = self.field()? else {
            bail!(
                "{}: byte {}: the last key has no value (odd number of data fields)",
                self.file,
                self.record_at
            );
        };
        Ok(Some(Ok((key, value))))
    }

    fn consumed(&self) -> u64 {
        self.at
    }

    fn place(&self) -> String {
        format!("{}: byte {}", self.file, self.record_at)
    }

    fn summary(&self, _bad: u64) -> String {
        format!("{} fields, {} bytes", self.fields, self.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(bytes: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut f = Flat::new(bytes, "t");
        let mut out = Vec::new();
        while let Some(item) = f.next_item()? {
            out.push(item.expect("flat records have no bad lines"));
        }
        Ok(out)
    }

    #[test]
    fn fields_pair_up_and_metadata_is_skipped() {
        let mut b = b"\xfe\x07\x05classX".to_vec();
        b.extend_from_slice(b"\xff\x01k\xff\x82\x2c");
        b.extend_from_slice(&[b'a'; 300]);
        b.extend_from_slice(b"\xff\x00\xff\x00");
        let got = all(&b).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], (b"k".to_vec(), vec![b'a'; 300]));
        assert_eq!(got[1], (vec![], vec![]));
    }

    #[test]
    fn broken_streams_fail_with_the_offset() {
        let e = all(b"\xff\x01k").unwrap_err().to_string();
        assert!(e.contains("byte 0") && e.contains("no value"), "{e}");
        let e = all(b"\xff\x05ab").unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
        let e = all(b"\xff\x01k\xff\x01vkey\tvalue")
            .unwrap_err()
            .to_string();
        assert!(e.contains("byte 6: 0x6B"), "{e}");
        // A size near 2^64 is refused without allocating it.
        let e = all(b"\xff\x8f\xff\xff\xff\xff\xff\xff\xff\x7f")
            .unwrap_err()
            .to_string();
        assert!(e.contains("truncated"), "{e}");
        let e = all(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f")
            .unwrap_err()
            .to_string();
        assert!(e.contains("overflows") || e.contains("longer"), "{e}");
    }
}
