//! Tkrzw's `Index` (tkrzw_index.h) for the bindings: a secondary index, an
//! ordered set of (key, value) pairs where one key has many values.
//!
//! Each pair is one record of an ordered database (`+` in memory, a tree
//! file with a path) whose key is the pair's key with every 0x00 written
//! 0x00 0x01, then 0x00 0x00, then the value: byte order of those records
//! is the order of (key, value), so a key's values are one range. The file
//! is memstored's tree file, not Tkrzw's.

use crate::db::Db;
use crate::iter::CursorPlace;
use crate::name::with_params_text;
use crate::status::{Error, Result};
use parking_lot::RwLock;
use std::sync::Arc;

/// The record key of a pair; `value` `None`: the prefix of all of `key`'s.
fn encode(key: &[u8], value: Option<&[u8]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + 2 + value.map_or(0, <[u8]>::len));
    for &b in key {
        out.push(b);
        if b == 0 {
            out.push(1);
        }
    }
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(value.unwrap_or_default());
    out
}

/// The pair of a record key.
fn decode(rec: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut key = Vec::with_capacity(rec.len());
    let mut i = 0;
    while i + 1 < rec.len() {
        match (rec[i], rec[i + 1]) {
            (0, 0) => return Ok((key, rec[i + 2..].to_vec())),
            (0, 1) => {
                key.push(0);
                i += 2;
            }
            (0, _) => break,
            (b, _) => {
                key.push(b);
                i += 1;
            }
        }
    }
    Err(Error::BrokenData(
        "an index record without its separator".into(),
    ))
}

/// Tkrzw's Index: made closed, opened, used from any number of threads.
#[derive(Default)]
pub struct Index {
    db: RwLock<Option<Arc<Db>>>,
}

impl Index {
    /// A closed index.
    pub fn new() -> Index {
        Index::default()
    }

    /// Opens the index at `path` (a tree file when it ends in `.tkt`, else
    /// in memory) with `"k=v,..."` parameters as a database name takes
    /// them (`truncate=true`, ...).
    pub fn open(&self, path: &str, writable: bool, params: &str) -> Result<()> {
        let mut slot = self.db.write();
        if slot.is_some() {
            return Err(Error::Precondition("the index is already opened".into()));
        }
        // As Tkrzw's PolyIndex: a `.tkt` path is a file, any other (the
        // empty one included) an index in memory.
        let in_file = path.ends_with(".tkt");
        let name = if in_file {
            let p = if params.trim().is_empty() {
                "dbm=tree".to_string()
            } else {
                format!("{params},dbm=tree")
            };
            with_params_text(path, &p)
        } else {
            with_params_text("+", params)
        };
        // An index in memory opened read-only could only ever be empty:
        // it is writable whatever `writable` says.
        *slot = Some(Arc::new(Db::open(&name, writable || !in_file)?));
        Ok(())
    }

    /// Closes the index; `Precondition` when not open.
    pub fn close(&self) -> Result<()> {
        let db = self.db.write().take().ok_or_else(not_open)?;
        db.close()
    }

    fn db(&self) -> Result<Arc<Db>> {
        self.db.read().clone().ok_or_else(not_open)
    }

    /// True while open.
    pub fn is_open(&self) -> bool {
        self.db.read().is_some()
    }

    /// True when open writable.
    pub fn is_writable(&self) -> bool {
        self.db.read().as_ref().is_some_and(|d| d.is_writable())
    }

    /// True when the pair is in the index.
    pub fn contains(&self, key: &[u8], value: &[u8]) -> Result<bool> {
        Ok(self.db()?.get_record(&encode(key, Some(value)))?.is_some())
    }

    /// The values of `key` in order, at most `max` (0: all).
    pub fn get_values(&self, key: &[u8], max: usize) -> Result<Vec<Vec<u8>>> {
        let db = self.db()?;
        let prefix = encode(key, None);
        let mut c = db.cursor();
        c.jump(&prefix)?;
        let mut out = Vec::new();
        while max == 0 || out.len() < max {
            match c.key() {
                Ok(k) if k.starts_with(&prefix) => out.push(k[prefix.len()..].to_vec()),
                _ => break,
            }
            c.next()?;
        }
        Ok(out)
    }

    /// Adds the pair (a pair already there stays one).
    pub fn add(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.db()?.set(&encode(key, Some(value)), b"", true)
    }

    /// Removes the pair; `NotFound` when it is not there.
    pub fn remove(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.db()?.remove(&encode(key, Some(value)))
    }

    /// The number of pairs.
    pub fn count(&self) -> Result<u64> {
        Ok(self.db()?.count())
    }

    /// The path of the index file (empty in memory).
    pub fn file_path(&self) -> Result<String> {
        Ok(self.db()?.file_path().to_string())
    }

    /// Removes every pair.
    pub fn clear(&self) -> Result<()> {
        self.db()?.clear()
    }

    /// Compacts the file.
    pub fn rebuild(&self) -> Result<()> {
        self.db()?.rebuild()
    }

    /// Writes buffered pairs to the OS; with `hard`, to the device.
    pub fn synchronize(&self, hard: bool) -> Result<()> {
        self.db()?.synchronize(hard)
    }

    /// A new iterator, on no pair until `first`, `last` or `jump`.
    pub fn iter(&self) -> Result<IndexIter> {
        Ok(IndexIter {
            db: self.db()?,
            place: None,
        })
    }
}

fn not_open() -> Error {
    Error::Precondition("the index is not opened".into())
}

/// An iterator over an index's pairs in order. It keeps the index's
/// database alive; a move on a closed index still answers safely.
pub struct IndexIter {
    db: Arc<Db>,
    place: Option<CursorPlace>,
}

impl IndexIter {
    fn moved(&mut self, f: impl FnOnce(&mut crate::iter::Cursor<'_>) -> Result<()>) -> Result<()> {
        let mut c = match self.place.take() {
            Some(p) => self.db.resume_cursor(p),
            None => self.db.cursor(),
        };
        let r = f(&mut c);
        self.place = Some(c.detach());
        r
    }

    /// To the first pair.
    pub fn first(&mut self) -> Result<()> {
        self.moved(|c| c.first())
    }

    /// To the last pair.
    pub fn last(&mut self) -> Result<()> {
        self.moved(|c| c.last())
    }

    /// To the first pair at or after (key, value).
    pub fn jump(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let to = encode(key, Some(value));
        self.moved(|c| c.jump(&to))
    }

    /// To the next pair.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<()> {
        self.moved(|c| c.next())
    }

    /// To the previous pair.
    pub fn previous(&mut self) -> Result<()> {
        self.moved(|c| c.previous())
    }

    /// The current pair; `NotFound` when on none.
    pub fn get(&mut self) -> Result<(Vec<u8>, Vec<u8>)> {
        let mut key = Err(Error::NotFound("the iterator is on no pair".into()));
        self.moved(|c| {
            key = c.key();
            Ok(())
        })?;
        decode(&key?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(it: &mut IndexIter, forward: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        while let Ok(p) = it.get() {
            out.push(p);
            if forward { it.next() } else { it.previous() }.unwrap();
        }
        out
    }

    #[test]
    fn pairs_keep_key_then_value_order() {
        let ix = Index::new();
        assert!(matches!(ix.count(), Err(Error::Precondition(_))));
        ix.open("", true, "").unwrap();
        for (k, v) in [
            ("b", "2"),
            ("a", "9"),
            ("a", "1"),
            ("a\0x", "0"),
            ("ab", "0"),
        ] {
            ix.add(k.as_bytes(), v.as_bytes()).unwrap();
        }
        ix.add(b"a", b"1").unwrap();
        assert_eq!(ix.count().unwrap(), 5);
        assert!(ix.contains(b"a", b"9").unwrap() && !ix.contains(b"a", b"2").unwrap());
        assert_eq!(
            ix.get_values(b"a", 0).unwrap(),
            vec![b"1".to_vec(), b"9".to_vec()]
        );
        assert_eq!(ix.get_values(b"a", 1).unwrap(), vec![b"1".to_vec()]);
        assert!(ix.get_values(b"zz", 0).unwrap().is_empty());
        let mut it = ix.iter().unwrap();
        it.first().unwrap();
        let keys: Vec<Vec<u8>> = pairs(&mut it, true).into_iter().map(|p| p.0).collect();
        let want: Vec<&[u8]> = vec![b"a", b"a", b"a\0x", b"ab", b"b"];
        assert_eq!(keys, want);
        it.last().unwrap();
        assert_eq!(pairs(&mut it, false).len(), 5);
        it.jump(b"a", b"5").unwrap();
        assert_eq!(it.get().unwrap(), (b"a".to_vec(), b"9".to_vec()));
        ix.remove(b"a", b"9").unwrap();
        assert!(ix.remove(b"a", b"9").unwrap_err().is_not_found());
        ix.clear().unwrap();
        assert_eq!(ix.count().unwrap(), 0);
        ix.close().unwrap();
        assert!(!ix.is_open());
    }

    #[test]
    fn a_file_index_persists() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("casket.tkt");
        let path = path.to_str().unwrap();
        let ix = Index::new();
        ix.open(path, true, "truncate=true,num_buckets=100")
            .unwrap();
        ix.add(b"k", b"v").unwrap();
        assert_eq!(ix.file_path().unwrap(), path);
        ix.synchronize(false).unwrap();
        ix.rebuild().unwrap();
        ix.close().unwrap();
        ix.open(path, false, "").unwrap();
        assert!(!ix.is_writable());
        assert_eq!(ix.get_values(b"k", 0).unwrap(), vec![b"v".to_vec()]);
    }

    /// As the Go binding's own Index did before it rode on this one: an
    /// index in memory opened read-only is still writable (else it could
    /// only be empty).
    #[test]
    fn an_index_in_memory_is_writable_however_opened() {
        let ix = Index::new();
        ix.open("", false, "").unwrap();
        assert!(ix.is_writable());
        ix.add(b"k", b"v").unwrap();
        assert!(ix.contains(b"k", b"v").unwrap());
    }
}
