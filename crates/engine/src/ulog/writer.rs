//! Appending to the update log: segments, rotation, retention, sync.

use super::change::{appended, origin, Change, UpdateListener};
use super::reader::{read_dir, Updates};
use super::record::{encode, SEGMENT_HEADER_LEN};
use super::recovery::{recover_last_segments, scan_segment};
use super::seal::Seal;
use super::segment::Position;
use super::segment::{list_segments, segment_header, segment_path, SegmentHeader};
use crate::io::{DataFile, FileSystem};
use crate::name::SyncMode;
use crate::status::Result;
use parking_lot::{Condvar, Mutex};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Entries buffered before they are handed to the OS regardless of batches.
const WRITE_BUFFER: usize = 1 << 20;

/// How an update log is kept.
#[derive(Debug, Clone)]
pub struct UlogOptions {
    pub dir: PathBuf,
    /// Written into every record, so that dual masters can skip their own.
    pub server_id: u16,
    /// A new segment is started when a record would take the current one
    /// past this many bytes (a record bigger than it gets a segment alone).
    pub segment_size: u64,
    /// Oldest segments are removed while all of them take more bytes (0 = no limit).
    pub keep_bytes: u64,
    /// ... or while there are more segments than this (0 = no limit).
    pub keep_segments: usize,
    /// As the store's `#sync=`: `Always` fsyncs every record before the
    /// write returns; otherwise entries reach the OS after each batch and the
    /// disk on `synchronize(true)` (the server's `--sync-interval`) and close.
    pub sync: SyncMode,
}

/// Counters for `stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UlogStats {
    pub bytes: u64,
    pub records: u64,
    pub segments: u64,
    pub last_timestamp: u64,
}

struct Segment {
    num: u64,
    bytes: u64,
    records: u64,
    /// Its newest record's timestamp (0: none yet).
    last_ts: u64,
}

struct Inner {
    /// Oldest first; the last is the one appended to.
    segments: Vec<Segment>,
    file: Arc<dyn DataFile>,
    /// Bytes of the current segment already handed to the OS.
    flushed: u64,
    buf: Vec<u8>,
    last_ts: u64,
    /// The last timestamp handed to the OS, so visible to readers.
    visible_ts: u64,
    /// Each recently changed key's last change (`track_recent`).
    recent: Option<super::recent::Recent>,
    /// The newest timestamp retention removed (`dropped_until`).
    dropped_until: u64,
    /// The last rotation's disk work, until finished (`seal`).
    pending: Option<Arc<Seal>>,
}

/// An open update log directory. Share it (`Arc`) among a server's databases
/// and give each a `listener(dbm_index)`.
pub struct UpdateLog {
    fs: Arc<dyn FileSystem>,
    opts: UlogOptions,
    inner: Mutex<Inner>,
    /// Notified whenever records become visible to readers (`wait_visible`).
    visible: Condvar,
}

/// Microseconds since the Unix epoch.
fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl UpdateLog {
    /// Opens (creating) the log in `opts.dir`. Every kept segment is read
    /// once to count its records, with the store's recovery rule: the last
    /// one's torn tail (a crash in the middle of a write) is cut off; so is
    /// the tail a sealed segment lost in a power loss before its seal was
    /// fsynced, with the segment after it (see `seal`); damage anywhere
    /// refuses the open.
    pub fn open(fs: Arc<dyn FileSystem>, opts: UlogOptions) -> Result<UpdateLog> {
        fs.create_dir(&opts.dir)?;
        let mut found = Vec::new();
        for num in list_segments(&*fs, &opts.dir)? {
            found.push(scan_segment(&*fs, &opts.dir, num)?);
        }
        recover_last_segments(&*fs, &opts.dir, &mut found)?;
        let mut segments = Vec::with_capacity(found.len());
        let mut last_ts = 0;
        for f in &found {
            last_ts = last_ts.max(f.last_ts);
            segments.push(Segment {
                num: f.num,
                bytes: f.end,
                records: f.records,
                last_ts: f.last_ts,
            });
        }
        let (file, flushed) = match found.pop() {
            Some(f) => (f.file, f.end),
            None => {
                let header = SegmentHeader {
                    num: 1,
                    prev_end: 0,
                };
                let path = segment_path(&opts.dir, 1);
                let file = start_segment(&*fs, &path, header)?;
                file.sync()?;
                fs.sync_dir(&path)?;
                segments.push(Segment {
                    num: 1,
                    bytes: SEGMENT_HEADER_LEN as u64,
                    records: 0,
                    last_ts: 0,
                });
                (file, SEGMENT_HEADER_LEN as u64)
            }
        };
        let dropped_until = super::dropped::read(&*fs, &opts.dir)?;
        Ok(UpdateLog {
            fs,
            opts,
            inner: Mutex::new(Inner {
                segments,
                file,
                flushed,
                buf: Vec::new(),
                last_ts,
                visible_ts: last_ts,
                recent: None,
                dropped_until,
                pending: None,
            }),
            visible: Condvar::new(),
        })
    }

    /// Remembers the last change of up to `cap` recently changed keys
    /// (`last_change`): what a dual master needs for its conflict rule.
    /// Costs a map insert per change, so it is off unless asked for.
    pub fn track_recent(&self, cap: usize) {
        self.inner.lock().recent = Some(super::recent::Recent::new(cap));
    }

    /// (origin timestamp, origin server id) of `key`'s last change, if
    /// tracked and still remembered.
    pub fn last_change(&self, key: &[u8]) -> Option<(u64, u16)> {
        self.inner.lock().recent.as_ref()?.get(key)
    }

    pub fn options(&self) -> &UlogOptions {
        &self.opts
    }

    /// Appends one change of database `dbm_index`; returns its timestamp.
    pub fn append(&self, change: &Change<'_>, dbm_index: u32) -> Result<u64> {
        let mut g = self.inner.lock();
        let inner = &mut *g;
        let ts = now_micros().max(inner.last_ts + 1);
        let size = (super::record::HEADER_LEN + change.key.len() + change.value.len()) as u64;
        let cur = inner.segments.last().map_or(0, |s| s.bytes);
        let has_records = inner.segments.last().is_some_and(|s| s.records > 0);
        if has_records && cur + size > self.opts.segment_size {
            self.rotate(inner)?;
        }
        let (server_id, origin_ts) = origin().unwrap_or((self.opts.server_id, ts));
        encode(&mut inner.buf, change, ts, server_id, dbm_index)?;
        if let Some(r) = &mut inner.recent {
            if change.op != super::change::UlogOp::Clear {
                r.record(change.key, origin_ts, server_id);
            }
        }
        inner.last_ts = ts;
        appended(ts);
        if let Some(s) = inner.segments.last_mut() {
            s.bytes += size;
            s.records += 1;
            s.last_ts = ts;
        }
        if self.opts.sync == SyncMode::Always {
            flush(inner)?;
            inner.file.sync()?;
            self.visible.notify_all();
        } else if inner.buf.len() >= WRITE_BUFFER {
            flush(inner)?;
            self.visible.notify_all();
        }
        Ok(ts)
    }

    /// Seals the current segment, starts the next and applies the
    /// retention policy; the disk work (fsyncs, removals) is left to a
    /// `Seal` finished on its own thread, so that writers and readers do
    /// not wait for it (with `sync=always`, where every record is fsynced
    /// before its write returns anyway, it is finished here).
    fn rotate(&self, inner: &mut Inner) -> Result<()> {
        // At most one seal pending: recovery relies on it (`seal`).
        if let Some(p) = &inner.pending {
            p.finish(&*self.fs)?;
        }
        inner.pending = None;
        flush(inner)?;
        self.visible.notify_all();
        let header = SegmentHeader {
            num: inner.segments.last().map_or(0, |s| s.num) + 1,
            prev_end: inner.flushed,
        };
        let path = segment_path(&self.opts.dir, header.num);
        let file = start_segment(&*self.fs, &path, header)?;
        let sealed = std::mem::replace(&mut inner.file, file.clone());
        inner.flushed = SEGMENT_HEADER_LEN as u64;
        inner.segments.push(Segment {
            num: header.num,
            bytes: SEGMENT_HEADER_LEN as u64,
            records: 0,
            last_ts: 0,
        });
        let mut seal = Seal::new(sealed, file, path, self.opts.dir.clone());
        loop {
            let total: u64 = inner.segments.iter().map(|s| s.bytes).sum();
            let n = inner.segments.len();
            let over = (self.opts.keep_segments > 0 && n > self.opts.keep_segments)
                || (self.opts.keep_bytes > 0 && total > self.opts.keep_bytes);
            if n <= 1 || !over {
                break;
            }
            let old = inner.segments.remove(0);
            if old.last_ts > inner.dropped_until {
                inner.dropped_until = old.last_ts;
                seal.dropped_until = Some(old.last_ts);
            }
            seal.remove.push(old.num);
        }
        let seal = Arc::new(seal);
        if self.opts.sync == SyncMode::Always {
            return seal.finish(&*self.fs);
        }
        inner.pending = Some(seal.clone());
        let fs = self.fs.clone();
        let finish = move || {
            if let Err(e) = seal.finish(&*fs) {
                tracing::warn!("sealing an update-log segment: {e} (retried on the next sync)");
            }
        };
        if let Err(e) = std::thread::Builder::new()
            .name("ulog-seal".into())
            .spawn(finish)
        {
            tracing::warn!("no thread to seal an update-log segment ({e}); left to the next sync");
        }
        Ok(())
    }

    /// Hands buffered entries to the OS.
    pub fn flush(&self) -> Result<()> {
        let mut g = self.inner.lock();
        if g.buf.is_empty() {
            return Ok(());
        }
        flush(&mut g)?;
        self.visible.notify_all();
        Ok(())
    }

    /// Waits until records after timestamp `after` are visible to readers
    /// (handed to the OS) or `timeout` passes; returns the last visible
    /// timestamp. What a replication stream waits on once it has sent all.
    pub fn wait_visible(&self, after: u64, timeout: std::time::Duration) -> u64 {
        let mut g = self.inner.lock();
        if g.visible_ts <= after {
            self.visible.wait_for(&mut g, timeout);
        }
        g.visible_ts
    }

    /// The newest timestamp retention has removed from the log (0: none):
    /// a reader from a timestamp at or before it would miss updates.
    pub fn dropped_until(&self) -> u64 {
        self.inner.lock().dropped_until
    }

    /// Whether reading from `from` would miss updates retention removed.
    pub fn has_gap_before(&self, from: u64) -> bool {
        let d = self.dropped_until();
        d > 0 && from <= d
    }

    /// Records kept in the log after `pos` (a reader's position), buffered
    /// ones included: how far a replication stream is behind.
    pub fn pending_after(&self, pos: Position) -> u64 {
        let g = self.inner.lock();
        g.segments
            .iter()
            .map(|s| match s.num.cmp(&pos.segment) {
                std::cmp::Ordering::Less => 0,
                std::cmp::Ordering::Equal => s.records.saturating_sub(pos.records),
                std::cmp::Ordering::Greater => s.records,
            })
            .sum()
    }

    /// Flushes and, with `hard`, fsyncs the current segment (after the
    /// previous one's pending seal, so that what is on the disk stays a
    /// prefix of the log).
    pub fn synchronize(&self, hard: bool) -> Result<()> {
        let mut g = self.inner.lock();
        flush(&mut g)?;
        if hard {
            if let Some(p) = &g.pending {
                p.finish(&*self.fs)?;
            }
            g.pending = None;
            g.file.sync()?;
        }
        self.visible.notify_all();
        Ok(())
    }

    pub fn stats(&self) -> UlogStats {
        let g = self.inner.lock();
        UlogStats {
            bytes: g.segments.iter().map(|s| s.bytes).sum(),
            records: g.segments.iter().map(|s| s.records).sum(),
            segments: g.segments.len() as u64,
            last_timestamp: g.last_ts,
        }
    }

    /// Every kept update with `timestamp >= from`, oldest first (buffered
    /// ones are flushed first, so the reader sees every append made so far).
    pub fn read_from(&self, from: u64) -> Result<Updates> {
        self.flush()?;
        read_dir(self.fs.clone(), &self.opts.dir, from)
    }

    /// A listener that logs the changes of database `dbm_index`.
    pub fn listener(self: &Arc<Self>, dbm_index: u32) -> Arc<dyn UpdateListener> {
        Arc::new(DbListener {
            log: self.clone(),
            dbm_index,
        })
    }
}

impl Drop for UpdateLog {
    fn drop(&mut self) {
        if let Err(e) = self.synchronize(true) {
            tracing::error!("closing the update log: {e}");
        }
    }
}

/// Bytes handed to the OS between two writeback hints.
const WRITEBACK_EVERY: u64 = 8 << 20;

/// Hands the buffer to the OS; the caller notifies `UpdateLog::visible`.
/// Every `WRITEBACK_EVERY` bytes it asks the OS to start writing them to
/// the disk: otherwise a whole segment (64 MB by default) could still be
/// dirty when its seal fsyncs it, and that burst of writeback slowed every
/// writer and replication stream for hundreds of milliseconds
/// (docs/bench/replication.md).
fn flush(inner: &mut Inner) -> Result<()> {
    if !inner.buf.is_empty() {
        inner.file.write_at(&inner.buf, inner.flushed)?;
        let before = inner.flushed;
        inner.flushed += inner.buf.len() as u64;
        inner.buf.clear();
        let kicked = before / WRITEBACK_EVERY * WRITEBACK_EVERY;
        if inner.flushed - kicked >= WRITEBACK_EVERY {
            let upto = inner.flushed / WRITEBACK_EVERY * WRITEBACK_EVERY;
            inner.file.start_writeback(kicked, upto - kicked);
        }
    }
    inner.visible_ts = inner.last_ts;
    Ok(())
}

/// Creates a segment file with its header, not yet fsynced (`Seal` or the
/// caller does that).
fn start_segment(
    fs: &dyn FileSystem,
    path: &Path,
    header: SegmentHeader,
) -> Result<Arc<dyn DataFile>> {
    let file = fs.create_fresh(path)?;
    file.write_at(&segment_header(header), 0)?;
    Ok(file)
}

struct DbListener {
    log: Arc<UpdateLog>,
    dbm_index: u32,
}

impl UpdateListener for DbListener {
    fn on_change(&self, change: &Change<'_>) -> Result<()> {
        self.log.append(change, self.dbm_index).map(|_| ())
    }
    fn flush(&self) -> Result<()> {
        self.log.flush()
    }
    fn last_change(&self, key: &[u8]) -> Option<(u64, u16)> {
        self.log.last_change(key)
    }
    fn synchronize(&self, hard: bool) -> Result<()> {
        self.log.synchronize(hard)
    }
    fn stats(&self) -> Vec<(&'static str, u64)> {
        let s = self.log.stats();
        vec![
            ("ulog_bytes", s.bytes),
            ("ulog_records", s.records),
            ("ulog_segments", s.segments),
            ("ulog_last_timestamp", s.last_timestamp),
            ("ulog_dropped_timestamp", self.log.dropped_until()),
        ]
    }
}
