//! Tkrzw's flat-records format (tkrzw_file_util.h, `FlatRecord`), byte for
//! byte, for `Db::export_to_flat_records` / `import_from_flat_records`.
//!
//! A file is a sequence of records, each one byte of type (0xFF a normal
//! record, 0xFE metadata), the data's length as Tkrzw's variable-length
//! number (7 bits a byte, most significant group first, the high bit set
//! on every byte but the last), then the data. An export is the key and
//! then the value of each record, as two normal records; an import skips
//! metadata records in a key's place.

use crate::db::Db;
use crate::status::{Error, Result};
use crate::tfile::File;

const NORMAL: u8 = 0xFF;
const METADATA: u8 = 0xFE;

/// The longest length prefix: 64 bits in groups of 7.
const MAX_VARNUM: usize = 10;

/// Bytes an export gathers before it appends them to the file.
const WRITE_CHUNK: usize = 1 << 20;

/// Bytes an import reads at a time (longer records are read whole).
const READ_CHUNK: usize = 1 << 20;

/// Appends one normal record holding `data`.
fn put_record(out: &mut Vec<u8>, data: &[u8]) {
    out.push(NORMAL);
    let n = data.len() as u64;
    let groups = (1..MAX_VARNUM).take_while(|i| n >> (7 * i) != 0).count() + 1;
    for i in (1..groups).rev() {
        out.push(((n >> (7 * i)) & 0x7f) as u8 | 0x80);
    }
    out.push((n & 0x7f) as u8);
    out.extend_from_slice(data);
}

/// Reads records of a file from its start, a chunk at a time.
struct Reader<'a> {
    file: &'a File,
    end: u64,
    /// File offset of `buf[0]`.
    at: u64,
    buf: Vec<u8>,
    pos: usize,
}

impl Reader<'_> {
    /// Makes at least `n` bytes from `pos` available; false when the file
    /// has fewer left.
    fn fill(&mut self, n: usize) -> Result<bool> {
        if self.buf.len() - self.pos >= n {
            return Ok(true);
        }
        self.at += self.pos as u64;
        self.buf.drain(..self.pos);
        self.pos = 0;
        let have = self.at + self.buf.len() as u64;
        let want = (n - self.buf.len()).max(READ_CHUNK) as u64;
        let take = want.min(self.end - have);
        if take > 0 {
            let more = self.file.read(have, take as usize)?;
            self.buf.extend_from_slice(&more);
        }
        Ok(self.buf.len() >= n)
    }

    /// The next record's type byte and data; `None` at the end.
    fn next(&mut self) -> Result<Option<(u8, Vec<u8>)>> {
        if !self.fill(1)? {
            return Ok(None);
        }
        let kind = self.buf[self.pos];
        if kind != NORMAL && kind != METADATA {
            return Err(broken("invalid record magic number"));
        }
        let left = (self.end - self.at) as usize - self.pos;
        self.fill(left.min(1 + MAX_VARNUM))?;
        let (mut len, mut i) = (0u64, self.pos + 1);
        loop {
            let Some(&b) = self.buf.get(i).filter(|_| i - self.pos <= MAX_VARNUM) else {
                return Err(broken("invalid record size"));
            };
            len = (len << 7) | u64::from(b & 0x7f);
            i += 1;
            if b < 0x80 {
                break;
            }
        }
        let head = i - self.pos;
        let total = usize::try_from(len)
            .ok()
            .and_then(|l| l.checked_add(head))
            .filter(|&t| (t as u64) <= self.end - self.at - self.pos as u64)
            .ok_or_else(|| broken("too large record size"))?;
        self.fill(total)?;
        let data = self.buf[self.pos + head..self.pos + total].to_vec();
        self.pos += total;
        Ok(Some((kind, data)))
    }
}

fn broken(what: &str) -> Error {
    Error::BrokenData(format!("flat records: {what}"))
}

impl Db {
    /// Tkrzw's `ExportToFlatRecords`: empties `dest`, then writes every
    /// live record's key and value as two flat records.
    pub fn export_to_flat_records(&self, dest: &File) -> Result<()> {
        self.export_flat(dest, true)
    }

    /// Tkrzw's `ExportKeysAsLines`: empties `dest`, then writes every
    /// live key followed by a line feed.
    pub fn export_keys_as_lines(&self, dest: &File) -> Result<()> {
        self.export_flat(dest, false)
    }

    fn export_flat(&self, dest: &File, records: bool) -> Result<()> {
        dest.truncate(0)?;
        let mut out = Vec::with_capacity(WRITE_CHUNK);
        let mut c = self.cursor();
        c.first()?;
        while let Some((k, v)) = c.step()? {
            if records {
                put_record(&mut out, &k);
                put_record(&mut out, &v);
            } else {
                out.extend_from_slice(&k);
                out.push(b'\n');
            }
            if out.len() >= WRITE_CHUNK {
                dest.append(&out)?;
                out.clear();
            }
        }
        dest.append(&out)?;
        Ok(())
    }

    /// Tkrzw's `ImportFromFlatRecords`: stores each key and value pair of
    /// the flat records in `src`, from its start (metadata records in a
    /// key's place are skipped). `BrokenData` for a malformed file or a
    /// key without its value.
    pub fn import_from_flat_records(&self, src: &File) -> Result<()> {
        let mut r = Reader {
            file: src,
            end: src.size()?,
            at: 0,
            buf: Vec::new(),
            pos: 0,
        };
        while let Some((kind, key)) = r.next()? {
            if kind != NORMAL {
                continue;
            }
            match r.next()? {
                Some((NORMAL, value)) => self.set(&key, &value, true)?,
                Some(_) => return Err(broken("invalid metadata position")),
                None => return Err(broken("odd number of records")),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfile::FileOptions;

    fn file(dir: &tempfile::TempDir) -> File {
        let f = File::new();
        let path = dir.path().join("flat");
        f.open(path.to_str().unwrap(), true, FileOptions::default())
            .unwrap();
        f
    }

    #[test]
    fn varnums_are_tkrzws() {
        let head = |n: usize| {
            let mut out = Vec::new();
            put_record(&mut out, &vec![0; n]);
            out[..out.len() - n].to_vec()
        };
        assert_eq!(head(0), [0xFF, 0]);
        assert_eq!(head(127), [0xFF, 0x7F]);
        assert_eq!(head(128), [0xFF, 0x81, 0x00]);
        assert_eq!(head(300), [0xFF, 0x82, 0x2C]);
        assert_eq!(head(1 << 14), [0xFF, 0x81, 0x80, 0x00]);
    }

    #[test]
    fn export_writes_tkrzws_bytes_and_import_reads_them_back() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(&dir);
        f.append(b"left over").unwrap();
        let db = Db::open("+", true).unwrap();
        db.set(b"a", b"1", true).unwrap();
        db.set(b"bc", b"", true).unwrap();
        db.export_to_flat_records(&f).unwrap();
        let bytes = f.read(0, f.size().unwrap() as usize).unwrap();
        assert_eq!(bytes, b"\xFF\x01a\xFF\x011\xFF\x02bc\xFF\x00");
        let big = vec![7u8; 3 * READ_CHUNK + 5];
        for i in 0..1000u32 {
            db.set(format!("k{i}").as_bytes(), &i.to_be_bytes(), true)
                .unwrap();
        }
        db.set(b"big", &big, true).unwrap();
        db.export_to_flat_records(&f).unwrap();
        let copy = Db::open("*", true).unwrap();
        copy.import_from_flat_records(&f).unwrap();
        assert_eq!(copy.count(), db.count());
        assert_eq!(copy.get(b"big").unwrap().len(), big.len());
        assert_eq!(&copy.get(b"k999").unwrap()[..], &999u32.to_be_bytes());
        assert!(copy.get(b"bc").unwrap().is_empty());
    }

    #[test]
    fn import_skips_metadata_and_refuses_broken_files() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(&dir);
        f.append(b"\xFE\x02md\xFF\x01k\xFF\x01v").unwrap();
        let db = Db::open("*", true).unwrap();
        db.import_from_flat_records(&f).unwrap();
        assert_eq!((db.count(), &db.get(b"k").unwrap()[..]), (1, &b"v"[..]));
        for bad in [
            &b"\xFF\x01k"[..],
            b"\x00",
            b"\xFF\x05abc",
            b"\xFF\x01k\xFE\x00",
            b"\xFF\x81",
        ] {
            f.truncate(0).unwrap();
            f.append(bad).unwrap();
            let e = db.import_from_flat_records(&f).unwrap_err();
            assert!(matches!(e, Error::BrokenData(_)), "{bad:?}: {e}");
        }
    }

    #[test]
    fn keys_as_lines() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(&dir);
        let db = Db::open("+", true).unwrap();
        db.set(b"x", b"1", true).unwrap();
        db.set(b"y", b"2", true).unwrap();
        db.export_keys_as_lines(&f).unwrap();
        assert_eq!(f.read(0, 4).unwrap(), b"x\ny\n");
    }
}
