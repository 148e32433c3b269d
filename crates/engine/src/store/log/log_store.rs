//! `LogStore`: the log-structured engines' `Store` (`.hash`/`.tkh`/`.tch`,
//! `.tree`/`.tkt`/`.tcb`): an append-only file of CRC-checked records and an
//! in-memory index pointing at the newest record of each key (Bitcask,
//! Tkrzw's appending mode). The top of the log family (`mod.rs`).

use super::file::open_file;
use super::hint;
use super::index::{replay_into, LogIndex, LogReader, MAX_LOG_LEN};
use super::loc::Loc;
use super::rebuild::LogRebuild;
use crate::format::{self, Codec, FileHeader, FileKind, Op, RecordHeader, FILE_HEADER_SIZE};
use crate::io::{DataFile, FileMap, FileSystem};
use crate::name::{Compression, SyncMode};
use crate::record::{Meta, Record};
use crate::scan::{next_valid, scan, scan_salvage, Scanned};
use crate::status::{Error, Result};
use crate::store::index::Key;
use crate::store::tagged_table::ProbeHint;
use crate::store::{Frozen, RebuildTask, Store, StoreStats};
use bytes::Bytes;
use std::borrow::Cow;
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::Arc;

/// Writes are gathered in memory and handed to the OS once this many bytes
/// are pending (and at every synchronize/close), saving a system call per record.
const WRITE_BUFFER: usize = 256 * 1024;
/// Disk space is reserved ahead of the log's end in steps of this size
/// (`LogStore::reserve_for`): one `fallocate` for every step of writes.
const RESERVE_STEP: u64 = WRITE_BUFFER as u64;

/// Smallest read map of a log; maps reserve address space past the file's end
/// (doubling as it grows), so a growing log is remapped only now and then.
const MIN_MAP: u64 = 64 << 20;

/// Raw values at least this long are handed out as a view of the map (no
/// copy); shorter ones are copied, which is cheaper than sharing the map.
const ZERO_COPY_MIN: usize = 4096;

/// Index positions (table groups of 8 slots) a hint is written from at a
/// time: the locations of one window, 32K records at most (~0.5 MB), are
/// what closing holds beside the index.
const HINT_WINDOW: usize = 1 << 12;

/// A value inside a read map: keeps the map alive while a `Bytes` points into it.
struct MapSlice {
    map: Arc<FileMap>,
    start: usize,
    end: usize,
}

impl AsRef<[u8]> for MapSlice {
    fn as_ref(&self) -> &[u8] {
        &self.map.bytes()[self.start..self.end]
    }
}

/// The log as its index reads it, borrowing only the fields that hold it
/// (a macro, not a method, so that the index itself can be borrowed mutably
/// beside it).
macro_rules! log_reader {
    ($store:expr) => {
        LogReader {
            file: &*$store.file,
            map: $store.map.as_deref(),
            flushed: $store.flushed,
            pending: &$store.wbuf,
        }
    };
}

/// Options for opening a log file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogOptions {
    pub writable: bool,
    pub kind: FileKind,
    pub compression: Compression,
    pub sync: SyncMode,
    pub buckets: usize,
}

pub(crate) struct LogStore<I: LogIndex> {
    fs: Arc<dyn FileSystem>,
    path: PathBuf,
    file: Arc<dyn DataFile>,
    header: FileHeader,
    opts: LogOptions,
    index: I,
    /// Encoded records not yet handed to the OS; they start at file offset `flushed`.
    wbuf: Vec<u8>,
    flushed: u64,
    /// Disk space is allocated for the file up to here (at least `flushed`),
    /// so that handing the write buffer to the OS cannot fail for want of
    /// space: a record is only indexed once its bytes fit below it.
    reserved: u64,
    /// Read-only map of the file covering at least `[0, flushed)`, so gets of
    /// flushed records need no system call; `None` where files cannot be
    /// mapped (then records are read with `read_at`).
    map: Option<Arc<FileMap>>,
    /// Total size of the live records (newest per key), for `should_be_rebuilt`.
    live_bytes: u64,
    max_cas: u64,
    closed: bool,
    /// Where the index's table is, for writers waiting for the shard's
    /// lock (`ProbeHint`); republished whenever the index may have moved.
    probe: Option<Arc<ProbeHint>>,
}

impl<I: LogIndex> LogStore<I> {
    pub(crate) fn open(fs: Arc<dyn FileSystem>, path: PathBuf, opts: LogOptions) -> Result<Self> {
        let (file, header, len) = open_file(&fs, &path, opts.writable, opts.kind)?;
        let mut store = LogStore {
            fs,
            path,
            file,
            header,
            opts,
            index: I::with_capacity(opts.buckets),
            wbuf: Vec::new(),
            flushed: len,
            reserved: 0,
            map: None,
            live_bytes: 0,
            max_cas: 0,
            closed: false,
            probe: I::probe_hint().map(Arc::new),
        };
        store.max_cas = store.header.max_cas;
        // Mapped first: a compact index reads keys back while it fills.
        store.remap();
        let start = store.load_hint(len);
        if let Err(e) = store.recover(start, len) {
            // Refused: the drop must not close it, which would write a hint
            // describing the half-read file.
            store.closed = true;
            return Err(e);
        }
        store.remap();
        store.publish_probe();
        store.reserved = store.flushed;
        Ok(store)
    }

    /// Makes the read map cover `[0, flushed)`: maps the file anew, with room
    /// to grow, when the flushed part has outgrown the map. Readers holding
    /// values of the old map keep it alive.
    fn remap(&mut self) {
        let mapped = self.map.as_ref().map_or(0, |m| m.bytes().len() as u64);
        if self.flushed <= mapped {
            return;
        }
        let len = self.flushed.next_power_of_two().max(MIN_MAP);
        match self.file.map(len) {
            Ok(map) => self.map = map,
            Err(e) => {
                // Reads fall back to `read_at`.
                tracing::warn!("{}: {e}", self.path.display());
                self.map = None;
            }
        }
    }

    fn hint_path(&self) -> PathBuf {
        hint::hint_path(&self.path)
    }

    /// Loads the index snapshot written at the last clean close, if it fits
    /// this file; returns the offset from which the log must still be scanned.
    fn load_hint(&mut self, len: u64) -> u64 {
        match hint::load(&*self.fs, &self.hint_path(), self.header.generation, len) {
            Some(h) => {
                // Room for every entry before the first: a hint lists a
                // hash index's entries in its slot order, and reinserted in
                // that order into a table that must grow meanwhile, each
                // growth's new array filled from its front (its first
                // groups taking the entries aimed at the whole array), and
                // every insert probed past the pile-up: a reopen of 200k
                // records with `num_buckets=1000` took 3.3 s, of four times
                // fewer 0.18 s, and a CI run hung in it.
                if h.len() > self.opts.buckets && self.index.len() == 0 {
                    self.index = I::with_capacity(h.len());
                }
                let log = log_reader!(self);
                let index = &mut self.index;
                if !h.for_each(&mut |key, loc| {
                    index.insert(&log, key, loc);
                }) {
                    // `load` read and checked it whole, but this second
                    // read failed part way: the index holds part of the
                    // hint. Start over from the log.
                    tracing::warn!("{}: hint unreadable; scanning the log", self.path.display());
                    self.index.clear();
                    return FILE_HEADER_SIZE as u64;
                }
                self.live_bytes = h.live_bytes;
                self.max_cas = self.max_cas.max(h.max_cas);
                h.data_len
            }
            None => FILE_HEADER_SIZE as u64,
        }
    }

    /// Replays records from `start` (the recovery rule of docs/format.md).
    /// A torn tail — a bad record with nothing valid after it — is cut off
    /// when writable. Damage followed by valid records is not a torn tail:
    /// cutting it would destroy what `memstore restore` can save, so a
    /// writable open refuses, and a read-only open serves every valid record
    /// around the damage.
    fn recover(&mut self, start: u64, len: u64) -> Result<()> {
        let file = self.file.clone();
        let (path, writable) = (self.path.display().to_string(), self.opts.writable);
        let mut replay = |s: Scanned<'_>| {
            self.replay(s.offset, &s.header, s.key);
            Ok(())
        };
        let end = scan(&*file, start, len, false, &mut replay)?;
        if !end.torn {
            return Ok(());
        }
        if let Some(next) = next_valid(&*file, end.valid_end + 1, len)? {
            if writable {
                return Err(Error::BrokenData(format!(
                    "{path}: damaged at offset {}, with valid records after it (from offset \
                     {next}); not opened for writing, which would cut them off. Salvage it \
                     with `memstore restore {path} NEW_NAME`, or open it read-only",
                    end.valid_end
                )));
            }
            let skipped = scan_salvage(&*file, next, len, false, &mut replay)?;
            tracing::warn!(
                "{path}: damaged at offset {}: serving the valid records around {} damaged bytes",
                end.valid_end,
                next - end.valid_end + skipped
            );
            return Ok(());
        }
        tracing::warn!(
            "{path}: ignoring {} bytes of torn tail after offset {}",
            len - end.valid_end,
            end.valid_end
        );
        if writable {
            self.file.set_len(end.valid_end)?;
            self.file.sync()?;
        }
        self.flushed = end.valid_end;
        Ok(())
    }

    /// The log as the index reads it (for calls that do not change it).
    fn log(&self) -> LogReader<'_> {
        log_reader!(self)
    }

    fn replay(&mut self, offset: u64, h: &RecordHeader, key: &[u8]) {
        let log = log_reader!(self);
        replay_into(
            &mut self.index,
            &log,
            &mut self.live_bytes,
            &mut self.max_cas,
            offset,
            h,
            key,
        );
        self.publish_probe();
    }

    /// Tells the probe hint, if any, where the index is now.
    #[inline]
    fn publish_probe(&self) {
        if let Some(p) = &self.probe {
            self.index.publish(p);
        }
    }

    fn check_writable(&self) -> Result<()> {
        if !self.opts.writable || self.closed {
            return Err(Error::Precondition(format!(
                "{} is not open for writing",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// Appends one record and indexes it.
    fn append(&mut self, op: Op, key: &[u8], value: &[u8], meta: Meta) -> Result<()> {
        let offset = self.next_offset()?;
        let h = format::encode_record(&mut self.wbuf, op, key, value, meta, self.opts.compression)?;
        self.reserve_for(offset)?;
        self.appended(offset, &h, key)
    }

    /// Makes sure the disk has room for the write buffer, whose last record
    /// starts at `offset`: reserves space ahead (`DataFile::reserve`), a
    /// step at a time. When the disk is full the record is taken back out of
    /// the buffer before anything indexed it, and the write is refused with
    /// `NoSpace`: so no record is ever acknowledged whose bytes the OS could
    /// still refuse at `flush` (docs/design.md "A full disk").
    fn reserve_for(&mut self, offset: u64) -> Result<()> {
        let end = self.flushed + self.wbuf.len() as u64;
        if end <= self.reserved {
            return Ok(());
        }
        let ahead = end.div_ceil(RESERVE_STEP) * RESERVE_STEP;
        let result = self
            .file
            .reserve(self.reserved, ahead - self.reserved)
            .map(|()| ahead)
            // Too little room for a whole step: what this record needs.
            .or_else(|_| {
                self.file
                    .reserve(self.reserved, end - self.reserved)
                    .map(|()| end)
            });
        match result {
            Ok(to) => {
                self.reserved = to;
                Ok(())
            }
            Err(e) => {
                self.wbuf.truncate((offset - self.flushed) as usize);
                Err(match e {
                    Error::NoSpace(why) => Error::NoSpace(format!(
                        "no room on disk for a record of {} bytes ({why})",
                        end - offset
                    )),
                    other => other,
                })
            }
        }
    }

    /// Where the next record goes, if the log takes one.
    fn next_offset(&self) -> Result<u64> {
        self.check_writable()?;
        let offset = self.flushed + self.wbuf.len() as u64;
        if offset >= MAX_LOG_LEN {
            return Err(Error::Precondition(format!(
                "{} has reached the largest log size (256 TiB)",
                self.path.display()
            )));
        }
        Ok(offset)
    }

    /// Indexes the record of `key` just put in the write buffer at `offset`,
    /// and hands the buffer to the OS when the sync mode or its size says so.
    fn appended(&mut self, offset: u64, h: &RecordHeader, key: &[u8]) -> Result<()> {
        self.replay(offset, h, key);
        if self.opts.sync == SyncMode::Always {
            self.synchronize(true)?;
        } else if self.wbuf.len() >= WRITE_BUFFER {
            self.flush()?;
        }
        Ok(())
    }

    /// Hands the write buffer to the OS.
    fn flush(&mut self) -> Result<()> {
        if !self.wbuf.is_empty() {
            self.file.write_at(&self.wbuf, self.flushed)?;
            self.flushed += self.wbuf.len() as u64;
            self.wbuf.clear();
            self.remap();
        }
        Ok(())
    }

    /// Reads the whole record at `loc`, checks its CRC and returns the value.
    /// Flushed records are read through the map (no system call, no copy of
    /// the record), unflushed ones from the write buffer.
    fn read_value(&self, loc: &Loc) -> Result<Bytes> {
        match self.record_at(loc)? {
            Cow::Borrowed(rec) => {
                let from_map = loc.offset < self.flushed;
                self.decode(loc, rec, self.map.as_ref().filter(|_| from_map))
            }
            Cow::Owned(b) => {
                let value_at = b.len() - self.checked_value(loc, &b)?.len();
                match loc.codec {
                    Codec::Raw => Ok(Bytes::from(b).slice(value_at..)),
                    codec => Ok(Bytes::from(format::decompress(codec, &b[value_at..])?)),
                }
            }
        }
    }

    /// Calls `f` with the value of the record at `loc` after checking its
    /// CRC, borrowed from the write buffer or the map where it can be: no
    /// `Bytes` made for a caller that copies the value out anyway.
    fn with_value(&self, loc: &Loc, f: &mut dyn FnMut(&[u8])) -> Result<()> {
        let rec = self.record_at(loc)?;
        let value = self.checked_value(loc, &rec)?;
        match loc.codec {
            Codec::Raw => f(value),
            codec => f(&format::decompress(codec, value)?),
        }
        Ok(())
    }

    /// The whole record at `loc`: borrowed from the write buffer or the
    /// map, else read from the file.
    fn record_at(&self, loc: &Loc) -> Result<Cow<'_, [u8]>> {
        let total = loc.total_len() as usize;
        if loc.offset >= self.flushed {
            let at = (loc.offset - self.flushed) as usize;
            return self
                .wbuf
                .get(at..at + total)
                .map(Cow::Borrowed)
                .ok_or_else(|| Error::BrokenData("index points past the write buffer".into()));
        }
        let end = loc.offset.saturating_add(total as u64);
        if let Some(map) = self.map.as_ref().filter(|_| end <= self.flushed) {
            if let Some(rec) = map.bytes().get(loc.offset as usize..end as usize) {
                return Ok(Cow::Borrowed(rec));
            }
        }
        let mut b = vec![0u8; total];
        self.file.read_at(&mut b, loc.offset)?;
        Ok(Cow::Owned(b))
    }

    fn check_crc(&self, loc: &Loc, rec: &[u8]) -> Result<()> {
        if format::crc_ok(rec) {
            return Ok(());
        }
        Err(Error::BrokenData(format!(
            "{}: record at offset {} fails its checksum",
            self.path.display(),
            loc.offset
        )))
    }

    /// The value of the record `rec` (whole, at `loc`), CRC checked; `map`
    /// when `rec` lies in it, so long values can be shared instead of copied.
    /// The stored value inside the whole record `rec` at `loc`, once its
    /// CRC is checked.
    fn checked_value<'r>(&self, loc: &Loc, rec: &'r [u8]) -> Result<&'r [u8]> {
        self.check_crc(loc, rec)?;
        rec.get((loc.head_len() + u64::from(loc.key_len)) as usize..)
            .ok_or_else(|| Error::BrokenData("record shorter than its header says".into()))
    }

    fn decode(&self, loc: &Loc, rec: &[u8], map: Option<&Arc<FileMap>>) -> Result<Bytes> {
        let value = self.checked_value(loc, rec)?;
        let value_at = rec.len() - value.len();
        match (loc.codec, map) {
            (Codec::Raw, Some(map)) if value.len() >= ZERO_COPY_MIN => {
                let start = loc.offset as usize + value_at;
                Ok(Bytes::from_owner(MapSlice {
                    map: map.clone(),
                    start,
                    end: start + value.len(),
                }))
            }
            (Codec::Raw, _) => Ok(Bytes::copy_from_slice(value)),
            (codec, _) => Ok(Bytes::from(format::decompress(codec, value)?)),
        }
    }
}

impl<I: LogIndex> Store for LogStore<I> {
    fn get(&self, key: &[u8]) -> Result<Option<Record>> {
        match self.index.get(&self.log(), key) {
            Some(loc) => Ok(Some(Record {
                value: self.read_value(&loc)?,
                meta: loc.meta,
            })),
            None => Ok(None),
        }
    }
    fn get_with(&self, key: &[u8], f: &mut dyn FnMut(&[u8], &Meta)) -> Result<bool> {
        let Some(loc) = self.index.get(&self.log(), key) else {
            return Ok(false);
        };
        self.with_value(&loc, &mut |value| f(value, &loc.meta))?;
        Ok(true)
    }
    /// No access state to record: a fetch is a read.
    fn fetch_with(&self, key: &[u8], f: &mut dyn FnMut(&[u8], &Meta)) -> Result<bool> {
        self.get_with(key, f)
    }
    fn get_meta(&self, key: &[u8]) -> Result<Option<Meta>> {
        Ok(self.index.get(&self.log(), key).map(|l| l.meta))
    }
    fn put(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        self.append(Op::Put, key, &value, meta)
    }
    fn put_slice(&mut self, key: &[u8], value: &[u8], meta: Meta) -> Result<()> {
        self.append(Op::Put, key, value, meta)
    }
    fn pre_encoding(&self) -> Option<Compression> {
        Some(self.opts.compression)
    }
    fn put_encoded(&mut self, key: &[u8], record: &[u8], header: &RecordHeader) -> Result<()> {
        let offset = self.next_offset()?;
        self.wbuf.extend_from_slice(record);
        self.reserve_for(offset)?;
        self.appended(offset, header, key)
    }
    fn remove(&mut self, key: &[u8]) -> Result<bool> {
        self.check_writable()?;
        if self.index.get(&self.log(), key).is_none() {
            return Ok(false);
        }
        self.append(Op::Remove, key, &[], Meta::default())?;
        Ok(true)
    }
    fn len(&self) -> u64 {
        self.index.len() as u64
    }
    fn clear(&mut self) -> Result<()> {
        self.append(Op::Clear, &[], &[], Meta::default())
    }
    fn synchronize(&mut self, hard: bool) -> Result<()> {
        if !self.opts.writable {
            return Ok(());
        }
        self.flush()?;
        if hard {
            self.file.sync()?;
        }
        Ok(())
    }
    fn close(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        if self.opts.writable {
            self.synchronize(true)?;
            let end = self.flushed;
            let (index, log) = (&self.index, self.log());
            let mut each =
                |f: &mut dyn FnMut(&[u8], Loc)| index.for_each_windowed(&log, HINT_WINDOW, f);
            // The data is durable now; the hint only spares the next open a
            // scan. Failing to write it (a read-only directory, a full disk)
            // must not fail the close: callers would report a write as
            // failed that is stored (issue 12). An older hint stays valid: it
            // covers a prefix, and the records after it are replayed.
            if let Err(e) = hint::save(
                &*self.fs,
                &self.hint_path(),
                &hint::Covered {
                    generation: self.header.generation,
                    data_len: end,
                    max_cas: self.max_cas,
                    live_bytes: self.live_bytes,
                },
                &mut each,
            ) {
                tracing::warn!(
                    "{}: no hint written ({e}); the next open scans the log",
                    self.path.display()
                );
            }
            // The space reserved past the end goes back to the disk.
            if self.reserved > end {
                self.file.release_after(end, self.reserved - end);
                self.reserved = end;
            }
        }
        self.closed = true;
        Ok(())
    }
    fn seek(&self, from: Bound<&[u8]>, forward: bool) -> Option<Key> {
        self.index.seek(from, forward)
    }
    fn keys(&self) -> Vec<Key> {
        let mut out = Vec::with_capacity(self.index.len());
        self.index
            .for_each(&self.log(), &mut |k, _| out.push(k.into()));
        out
    }
    fn keys_window(&self, from: usize, budget: usize) -> (Vec<Key>, Option<usize>) {
        let mut out = Vec::new();
        let next = self
            .index
            .for_each_window(&self.log(), from, budget, &mut |k, _| out.push(k.into()));
        (out, next)
    }
    fn window_of(&self, key: &[u8]) -> Option<usize> {
        self.index.window_of(&self.log(), key)
    }
    fn max_cas(&self) -> u64 {
        self.max_cas
    }
    fn stats(&self) -> StoreStats {
        StoreStats {
            bytes: self.live_bytes,
            evictions: 0,
            file_size: self.flushed + self.wbuf.len() as u64,
            ..Default::default()
        }
    }
    fn freeze(&mut self) -> Result<Option<Frozen>> {
        self.flush()?;
        Ok(Some(Frozen {
            file: self.file.clone(),
            end: self.flushed,
        }))
    }
    fn start_rebuild(&mut self) -> Result<Option<Box<dyn RebuildTask>>> {
        self.check_writable()?;
        self.flush()?;
        let task = LogRebuild::<I>::start(
            self.fs.clone(),
            &self.path,
            self.file.clone(),
            self.header.kind,
            self.flushed,
            // Room for every key at once: a growth of a compact index reads
            // every key back, and the new file is read with `pread`. Its
            // positions name the same keys as the old index's (its salt
            // and, when the records fit, its array's size): a hash cursor
            // walking across the swap misses no record.
            self.index
                .with_capacity_like(self.opts.buckets.max(self.index.len())),
            self.max_cas,
        )?;
        Ok(Some(Box::new(task)))
    }
    fn is_live_at(&self, key: &[u8], offset: u64) -> bool {
        self.index
            .get(&self.log(), key)
            .is_some_and(|l| l.offset == offset)
    }
    fn finish_rebuild(&mut self, task: Box<dyn RebuildTask>) -> Result<()> {
        self.flush()?;
        let mut task = task
            .into_any()
            .downcast::<LogRebuild<I>>()
            .map_err(|_| Error::InvalidArgument("rebuild task of another store".into()))?;
        task.copy_tail(self.flushed)?;
        let done = (*task).commit(&self.path)?;
        // The new file is under PATH now: whatever fails from here on, the
        // store must switch to it (writes to the old, unlinked file would be lost).
        self.file = done.file;
        self.header = done.header;
        self.index = done.index;
        self.publish_probe();
        self.flushed = done.len;
        self.reserved = done.len;
        self.map = None;
        self.remap();
        self.live_bytes = done.live_bytes;
        self.max_cas = self.max_cas.max(done.max_cas);
        // The old hint names the old file's generation, so it can never be
        // taken for the new one; it is removed for its space.
        done.dir_synced.and(self.fs.remove(&self.hint_path()))
    }
    fn probe_hint(&self) -> Option<Arc<ProbeHint>> {
        self.probe.clone()
    }
    fn live_ratio(&self) -> f64 {
        let size = self.flushed + self.wbuf.len() as u64 - FILE_HEADER_SIZE as u64;
        if size < 64 * 1024 {
            1.0
        } else {
            self.live_bytes as f64 / size as f64
        }
    }
}

impl<I: LogIndex> Drop for LogStore<I> {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::error!("{}: closing failed: {e}", self.path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::SimFs;
    use crate::store::log::index::CompactHash;

    /// A writable hash log presized for 4 records: every growth happens.
    fn hash_log_of_4_buckets() -> LogOptions {
        LogOptions {
            writable: true,
            kind: FileKind::HashLog,
            compression: Compression::None,
            sync: SyncMode::None,
            buckets: 4,
        }
    }

    /// A reopen from the hint sizes the index for the hint's entries first:
    /// grown while the entries (listed in slot order) went back in, the
    /// table piled them up at each new array's front, and a reopen of 200k
    /// records took 3.3 s (0.18 s for 50k; a CI run hung in one).
    #[test]
    fn a_reopen_from_the_hint_sizes_the_index_first() {
        let opts = hash_log_of_4_buckets();
        let fs = SimFs::new();
        const N: usize = 50_000;
        let mut store = LogStore::<CompactHash>::open(fs.clone(), "h.tkh".into(), opts).unwrap();
        for n in 0..N {
            store
                .put_slice(format!("key{n}").as_bytes(), b"v", Meta::default())
                .unwrap();
        }
        drop(store);
        let store = LogStore::<CompactHash>::open(fs, "h.tkh".into(), opts).unwrap();
        assert_eq!(store.len(), N as u64);
        assert_eq!(store.index.bytes(), CompactHash::with_capacity(N).bytes());
        for n in (0..N).step_by(97) {
            assert!(
                store.get(format!("key{n}").as_bytes()).unwrap().is_some(),
                "{n}"
            );
        }
    }

    /// The probe hint follows the index through its growths, a clear and a
    /// rebuild's swap. A hint left on a dropped array still cannot fault,
    /// but it prefetches nothing of use, and two writers on one shard would
    /// silently lose the speedup the hint exists for.
    #[test]
    fn the_probe_hint_follows_the_index() {
        let opts = hash_log_of_4_buckets();
        let mut store = LogStore::<CompactHash>::open(SimFs::new(), "h.tkh".into(), opts).unwrap();
        let hint = store.probe_hint().expect("the compact index gives a hint");
        let key = |n: u32| format!("key{n}").into_bytes();
        let follows = |store: &LogStore<CompactHash>| {
            (0..300).all(|n| hint.line(&key(n)) == store.index.first_group(&key(n)))
        };
        assert!(follows(&store), "after open");
        for n in 0..3000 {
            store.put_slice(&key(n), b"v", Meta::default()).unwrap();
            assert!(n % 97 != 0 || follows(&store), "after {n} puts");
        }
        assert!(follows(&store), "after the growths");
        for n in 0..2000 {
            store.remove(&key(n)).unwrap();
        }
        let mut task = store.start_rebuild().unwrap().expect("a rebuild");
        task.copy_frozen(&mut |_, _| true).unwrap();
        store.finish_rebuild(task).unwrap();
        assert!(follows(&store), "after the rebuild");
        store.clear().unwrap();
        assert!(follows(&store), "after clear");
    }
}
