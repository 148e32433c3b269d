//! Online compaction of a log file. The live records of the frozen part of the
//! old file are copied into a new file without the shard's lock (a short read
//! lock per record asks whether it is still live); the records appended
//! meanwhile are copied as they are in rounds, and only the last small tail is
//! copied under the write lock before the new file is renamed over the old one.

use super::file::new_generation;
use super::index::{replay_into, LogIndex, LogReader};
use crate::format::{self, FileHeader, FileKind, Op, FILE_HEADER_SIZE};
use crate::io::{DataFile, FileSystem, SliceFile};
use crate::record::now_secs;
use crate::scan::{scan, Scanned};
use crate::status::{Error, Result};
use crate::store::RebuildTask;
use crate::tmpfile::{self, TmpFile};
use std::any::Any;
use std::path::Path;
use std::sync::Arc;

/// Bytes gathered before each write to the new file.
const COPY_BUFFER: usize = 1 << 20;

pub(crate) struct LogRebuild<I> {
    /// `PATH.rebuild.tmp`: removed if the rebuild fails or is dropped
    /// before its commit renames it over PATH.
    tmp: TmpFile<Arc<dyn FileSystem>>,
    old: Arc<dyn DataFile>,
    new: Arc<dyn DataFile>,
    header: FileHeader,
    index: I,
    /// Bytes of the new file written or buffered.
    new_len: u64,
    buf: Vec<u8>,
    /// The old file's length when the rebuild started.
    frozen_end: u64,
    copied_to: u64,
    live_bytes: u64,
    max_cas: u64,
}

/// What a finished rebuild hands back to the store.
pub(crate) struct Rebuilt<I> {
    pub file: Arc<dyn DataFile>,
    pub header: FileHeader,
    pub index: I,
    pub len: u64,
    pub live_bytes: u64,
    pub max_cas: u64,
    /// Whether the rename was made durable. The new file is under PATH
    /// either way, so the store switches to it before reporting this.
    pub dir_synced: Result<()>,
}

impl<I: LogIndex> LogRebuild<I> {
    /// Begins a rebuild of `path`; `max_cas` is kept in the new header so
    /// CAS values of records dropped by the compaction are never reused.
    pub(crate) fn start(
        fs: Arc<dyn FileSystem>,
        path: &Path,
        old: Arc<dyn DataFile>,
        kind: FileKind,
        frozen_end: u64,
        index: I,
        max_cas: u64,
    ) -> Result<Self> {
        let (tmp, new) = TmpFile::create(fs, path, tmpfile::REBUILD)?;
        let header = FileHeader {
            kind,
            generation: new_generation(),
            created_at: now_secs(),
            max_cas,
        };
        Ok(LogRebuild {
            tmp,
            old,
            new,
            header,
            index,
            new_len: FILE_HEADER_SIZE as u64,
            buf: header.encode().to_vec(),
            frozen_end,
            copied_to: FILE_HEADER_SIZE as u64,
            live_bytes: 0,
            max_cas,
        })
    }

    fn write_out(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            let at = self.new_len - self.buf.len() as u64;
            self.new.write_at(&self.buf, at)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes the rest, syncs, and renames the new file over `path`. An
    /// error means the old file is still the one under `path` (and the new
    /// one is gone when `self` drops).
    pub(crate) fn commit(mut self, path: &Path) -> Result<Rebuilt<I>> {
        self.write_out()?;
        self.new.sync()?;
        let dir_synced = self.tmp.rename_over(path)?;
        Ok(Rebuilt {
            file: self.new,
            header: self.header,
            index: self.index,
            len: self.new_len,
            live_bytes: self.live_bytes,
            max_cas: self.max_cas,
            dir_synced,
        })
    }
}

impl<I: LogIndex> RebuildTask for LogRebuild<I> {
    fn copy_frozen(&mut self, is_live: &mut dyn FnMut(&[u8], u64) -> bool) -> Result<()> {
        let now = now_secs();
        let old = self.old.clone();
        let end = scan(
            &*old,
            FILE_HEADER_SIZE as u64,
            self.frozen_end,
            true,
            &mut |s: Scanned<'_>| {
                let expired = s.header.meta.is_expired(now);
                if s.header.op != Op::Put || expired || !is_live(s.key, s.offset) {
                    return Ok(());
                }
                let stored = s.stored_value.unwrap_or_default();
                let offset = self.new_len;
                let h = format::encode_stored(
                    &mut self.buf,
                    Op::Put,
                    s.header.codec,
                    s.key,
                    stored,
                    s.header.meta,
                )?;
                self.new_len += h.total_len();
                let log = LogReader {
                    file: &*self.new,
                    map: None,
                    flushed: self.new_len - self.buf.len() as u64,
                    pending: &self.buf,
                };
                replay_into(
                    &mut self.index,
                    &log,
                    &mut self.live_bytes,
                    &mut self.max_cas,
                    offset,
                    &h,
                    s.key,
                );
                if self.buf.len() >= COPY_BUFFER {
                    self.write_out()?;
                }
                Ok(())
            },
        )?;
        if end.torn {
            return Err(Error::BrokenData(format!(
                "bad record at offset {} during rebuild",
                end.valid_end
            )));
        }
        self.copied_to = self.frozen_end;
        Ok(())
    }

    fn copy_tail(&mut self, end: u64) -> Result<()> {
        if end <= self.copied_to {
            return Ok(());
        }
        self.write_out()?;
        let len = usize::try_from(end - self.copied_to)
            .map_err(|_| Error::System("rebuild tail too large".into()))?;
        let mut tail = vec![0u8; len];
        self.old.read_at(&mut tail, self.copied_to)?;
        self.new.write_at(&tail, self.new_len)?;
        let base = self.new_len;
        self.new_len += len as u64;
        self.copied_to = end;
        let tail = SliceFile(tail);
        let (index, live, max_cas) = (&mut self.index, &mut self.live_bytes, &mut self.max_cas);
        let log = LogReader {
            file: &*self.new,
            map: None,
            flushed: self.new_len,
            pending: &[],
        };
        let scanned = scan(&tail, 0, len as u64, false, &mut |s: Scanned<'_>| {
            replay_into(
                index,
                &log,
                live,
                max_cas,
                base + s.offset,
                &s.header,
                s.key,
            );
            Ok(())
        })?;
        if scanned.torn {
            return Err(Error::BrokenData(
                "bad record in the tail copied during rebuild".into(),
            ));
        }
        Ok(())
    }

    fn copied_to(&self) -> u64 {
        self.copied_to
    }

    fn sync_copied(&mut self) -> Result<()> {
        self.write_out()?;
        self.new.sync()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}
