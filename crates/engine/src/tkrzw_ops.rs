//! Tkrzw's DBM calls that memstored's own protocols do not need, for the
//! bindings that stand in for Tkrzw's (tkrzw_dbm.h): Rekey,
//! CompareExchangeAndGet, AppendMulti, Export, GetTimestamp, IsHealthy,
//! GetFileSize / GetFilePath, CopyFileData, RestoreDatabase and the
//! record processors (Process, ProcessMulti, ProcessFirst, ProcessEach).

use crate::db::Db;
use crate::name::EngineKind;
use crate::record::{now_secs, Record};
use crate::shard::Action;
use crate::status::{Error, Result};
use bytes::Bytes;
use std::sync::atomic::Ordering;

/// A value a compare-exchange expects or wants (Tkrzw's string_view with
/// its two special values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CasValue<'a> {
    /// Expected: no record. Desired: remove the record.
    Absent,
    /// Expected: a record with any value (Tkrzw's ANY_DATA). Desired: no
    /// change.
    Any,
    /// This exact value.
    Value(&'a [u8]),
}

impl CasValue<'_> {
    fn admits(&self, cur: Option<&Record>) -> bool {
        match (self, cur) {
            (CasValue::Absent, None) | (CasValue::Any, Some(_)) => true,
            (CasValue::Value(v), Some(r)) => *v == &r.value[..],
            _ => false,
        }
    }
}

/// Retries of an optimistic `rekey` whose record changed under it.
const REKEY_RETRIES: usize = 1000;

impl Db {
    /// Tkrzw's `Rekey`: the record of `old_key` moves (or, `copying`, is
    /// copied) to `new_key`, atomically across shards; over a record of
    /// `new_key` only with `overwrite` (else `Duplication`). `NotFound`
    /// without a record of `old_key`. The moved record keeps its value,
    /// not its expiry.
    pub fn rekey(&self, old: &[u8], new: &[u8], overwrite: bool, copying: bool) -> Result<()> {
        self.check_client_write()?;
        for _ in 0..REKEY_RETRIES {
            let value = self
                .get_record(old)?
                .ok_or_else(|| Error::NotFound("no record of the old key".into()))?
                .value;
            let mut expected = vec![(old, Some(&value[..]))];
            if !overwrite {
                if self.get_record(new)?.is_some() {
                    return Err(Error::Duplication("a record of the new key exists".into()));
                }
                expected.push((new, None));
            }
            let mut desired = Vec::with_capacity(2);
            if !copying {
                desired.push((old, None));
            }
            desired.push((new, Some(&value[..])));
            match self.compare_exchange_multi(&expected, &desired) {
                Err(Error::ValueMismatch(_)) => continue,
                r => return r,
            }
        }
        Err(Error::ValueMismatch(
            "the records kept changing during the rekey".into(),
        ))
    }

    /// Tkrzw's `CompareExchangeAndGet`: when the record admits `expected`,
    /// applies `desired`. Returns whether it did, and the value the record
    /// held (`None`: no record) either way; atomic.
    pub fn compare_exchange_and_get(
        &self,
        key: &[u8],
        expected: CasValue<'_>,
        desired: CasValue<'_>,
    ) -> Result<(bool, Option<Bytes>)> {
        let (out, _) = self.process(key, |cur| {
            let actual = cur.map(|r| r.value.clone());
            if !expected.admits(cur) {
                return Ok((Action::Keep, (false, actual)));
            }
            let action = match desired {
                CasValue::Any => Action::Keep,
                CasValue::Absent if cur.is_some() => Action::Remove,
                CasValue::Absent => Action::Keep,
                CasValue::Value(v) => Action::Put {
                    value: Bytes::copy_from_slice(v),
                    flags: cur.map_or(0, |r| r.meta.flags),
                    expires_at: cur.map_or(0, |r| r.meta.expires_at),
                },
            };
            Ok((action, (true, actual)))
        })?;
        Ok(out)
    }

    /// Tkrzw's `AppendMulti`: `append` of every pair, each atomic on its own.
    pub fn append_multi(&self, records: &[(&[u8], &[u8])], delim: &[u8]) -> Result<()> {
        for (k, v) in records {
            self.append(k, v, delim)?;
        }
        Ok(())
    }

    /// Tkrzw's `Export`: stores every live record of this database in
    /// `dest` (overwriting records of the same keys there).
    pub fn export_to(&self, dest: &Db) -> Result<()> {
        let mut c = self.cursor();
        c.first()?;
        while let Some((k, v)) = c.step()? {
            dest.set(&k, &v, true)?;
        }
        Ok(())
    }

    /// Tkrzw's `GetTimestamp`: seconds since the epoch of the open or the
    /// last synchronize, as Tkrzw's engines record it.
    pub fn timestamp(&self) -> f64 {
        f64::from_bits(self.tk.stamp.load(Ordering::Relaxed))
    }

    /// Tkrzw's `IsHealthy`: no shard has failed its checks. memstored
    /// refuses to open damaged files and fails calls on I/O errors instead
    /// of marking the database unhealthy, so an open database is healthy.
    pub fn is_healthy(&self) -> bool {
        true
    }

    /// Tkrzw's `GetFileSize`: the bytes of the database's files; for an
    /// in-memory database, the bytes its records take. An in-memory hash
    /// saved to a path (`.tkmt`, Tkrzw's `.tiny`, `.cache`, `.stdhash`)
    /// counts the file it was last saved to, or its records before the
    /// first save.
    pub fn file_size(&self) -> u64 {
        let st = self.stats();
        match self.name.kind {
            EngineKind::MemFile => {
                let n = self.shards.len();
                let on_disk: u64 = (0..n)
                    .map(|i| crate::paths::shard_path(&self.name.path, i, n))
                    .filter_map(|p| self.fs.open(&p, false, false).and_then(|f| f.len()).ok())
                    .sum();
                if on_disk > 0 {
                    on_disk
                } else {
                    st.bytes
                }
            }
            kind if kind.has_file() => st.file_size,
            _ => st.bytes,
        }
    }

    /// Tkrzw's `GetFilePath`: the path the database was opened with
    /// (shard files add their `-0000N-of-0000M` suffixes to it); empty for
    /// an in-memory database.
    pub fn file_path(&self) -> &str {
        if self.name.kind.has_file() {
            &self.name.path
        } else {
            ""
        }
    }

    /// Tkrzw's `CopyFileData`: writes a consistent copy of the database's
    /// files to `dest` (shards: `dest-0000N-of-0000M`), which then opens as
    /// the database does, while other threads keep using it. The copy is
    /// always made durable, so `sync_hard` changes nothing.
    pub fn copy_file_data(&self, dest: &str, _sync_hard: bool) -> Result<()> {
        if !self.name.kind.has_file() {
            return Err(Error::Precondition(
                "copy_file_data: an in-memory database has no file".into(),
            ));
        }
        let _m = self.maintenance.lock();
        self.write_backup(dest)
    }
}

/// Tkrzw's `RestoreDatabase`: copies every intact record of the damaged
/// database at `old_path` into a new one at `new_path`. `class_name`
/// (Tkrzw's class: HashDBM or TreeDBM; empty: by the extension) picks
/// the engine. `end_offset`
/// other than 0 or negative (read to the end) is `NotImplemented`.
pub fn restore_database(
    old_path: &str,
    new_path: &str,
    class_name: &str,
    end_offset: i64,
) -> Result<()> {
    if end_offset > 0 {
        return Err(Error::NotImplemented(
            "restore_database with a positive end_offset".into(),
        ));
    }
    let dbm = match class_name {
        "" => "",
        "HashDBM" | "hash" => "hash",
        "TreeDBM" | "tree" => "tree",
        other => {
            return Err(Error::NotImplemented(format!(
                "restore_database of class {other}: only HashDBM and TreeDBM have files to salvage"
            )))
        }
    };
    // A `dbm=` parameter overrides the path's extension, as Tkrzw's class.
    let class = match dbm {
        "" => String::new(),
        d => format!("#dbm={d}"),
    };
    // A sharded database is restored shard by shard into as many shards, as
    // Tkrzw's ShardDBM does: the count is the one the old files have.
    let mut old = crate::name::DbName::parse(&format!("{old_path}#num_shards=0{class}"))?;
    crate::existing::resolve_shards(&crate::io::RealFs, &mut old);
    let shards = match old.num_shards {
        1 => String::new(),
        n => format!("#num_shards={n}"),
    };
    let name = |p: &str| format!("{p}{shards}{class}");
    crate::restore::restore(&name(old_path), &name(new_path)).map(|_| ())
}

/// A record processor's verdict, as Tkrzw's callbacks return it.
pub type ProcessResult = Result<Action>;

impl Db {
    /// Tkrzw's `ProcessMulti`: `f` sees each key's live record (or `None`)
    /// in turn and returns what to do with it, every involved shard locked
    /// for writing throughout, so other threads see all the changes or
    /// none. Without `writable`, each record is read on its own and what
    /// `f` returns is ignored.
    pub fn process_multi(
        &self,
        keys: &[&[u8]],
        writable: bool,
        mut f: impl FnMut(usize, &[u8], Option<&Record>) -> ProcessResult,
    ) -> Result<()> {
        if !writable {
            for (i, k) in keys.iter().enumerate() {
                f(i, k, self.get_record(k)?.as_ref())?;
            }
            return Ok(());
        }
        self.check_client_write()?;
        let mut locked = self.lock_shards(keys);
        let now = now_secs();
        for (i, k) in keys.iter().enumerate() {
            let state = locked.state(k)?;
            let cur = state.live(k, now)?;
            let action = f(i, k, cur.as_ref())?;
            if action != Action::Keep {
                self.shards[self.shard_index(k)].mark_dirty();
                state.apply(k, action)?;
            }
        }
        Ok(())
    }

    /// Tkrzw's `ProcessFirst`: `f` sees the first record (as the cursor
    /// orders them) and returns what to do with it; `NotFound` when there
    /// is none. Without `writable`, what `f` returns is ignored.
    pub fn process_first(
        &self,
        writable: bool,
        mut f: impl FnMut(&[u8], &Record) -> ProcessResult,
    ) -> Result<()> {
        let mut c = self.cursor();
        c.first()?;
        loop {
            let key = c.key()?;
            if self.process_one(&key, writable, &mut f)? {
                return Ok(());
            }
            // Removed since the cursor saw it: the next one is first now.
            c.next()?;
        }
    }

    /// Tkrzw's `ProcessEach`: `f` sees every live record in the cursor's
    /// order and returns what to do with it, each record atomically on its
    /// own. Without `writable`, what `f` returns is ignored.
    pub fn process_each(
        &self,
        writable: bool,
        mut f: impl FnMut(&[u8], &Record) -> ProcessResult,
    ) -> Result<()> {
        let mut c = self.cursor();
        c.first()?;
        loop {
            let key = match c.key() {
                Ok(k) => k,
                Err(Error::NotFound(_)) => return Ok(()),
                Err(e) => return Err(e),
            };
            // Moved on first, so `f` may remove the record it is given.
            c.next()?;
            self.process_one(&key, writable, &mut f)?;
        }
    }

    /// Runs `f` on the live record of `key`; false when there is none.
    fn process_one(
        &self,
        key: &[u8],
        writable: bool,
        f: &mut impl FnMut(&[u8], &Record) -> ProcessResult,
    ) -> Result<bool> {
        if !writable {
            return match self.get_record(key)? {
                Some(r) => f(key, &r).map(|_| true),
                None => Ok(false),
            };
        }
        let (found, _) = self.process(key, |cur| match cur {
            Some(r) => Ok((f(key, r)?, true)),
            None => Ok((Action::Keep, false)),
        })?;
        Ok(found)
    }
}

#[cfg(test)]
mod tests;
