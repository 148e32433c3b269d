//! Writing a whole file atomically: records go to `PATH.tmp`, which is synced
//! and renamed over PATH, so a crash leaves either the old file or the new one
//! (and a failure leaves the old one, and no `PATH.tmp`).
//! Used by `.tkmt` snapshots and by backups.

use crate::format::{FileHeader, FileKind};
use crate::io::{DataFile, FileSystem};
use crate::record::now_secs;
use crate::status::Result;
use crate::tmpfile::{self, TmpFile};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes gathered before each write.
const BUFFER: usize = 1 << 20;

pub(crate) struct SnapshotWriter<'a> {
    path: PathBuf,
    /// `PATH.tmp`: removed if the writer is dropped before `finish`.
    tmp: TmpFile<&'a dyn FileSystem>,
    file: Arc<dyn DataFile>,
    buf: Vec<u8>,
    written: u64,
}

impl<'a> SnapshotWriter<'a> {
    /// Starts `PATH.tmp` with a header of `kind`, or with no header when `kind` is `None`
    /// (raw copies, whose bytes already begin with one).
    pub(crate) fn create(
        fs: &'a dyn FileSystem,
        path: &Path,
        kind: Option<FileKind>,
        max_cas: u64,
    ) -> Result<Self> {
        let (tmp, file) = TmpFile::create(fs, path, tmpfile::PLAIN)?;
        let buf = match kind {
            Some(kind) => FileHeader {
                kind,
                generation: crate::store::log::file::new_generation(),
                created_at: now_secs(),
                max_cas,
            }
            .encode()
            .to_vec(),
            None => Vec::new(),
        };
        Ok(SnapshotWriter {
            path: path.to_path_buf(),
            tmp,
            file,
            buf,
            written: 0,
        })
    }

    /// Appends raw bytes.
    pub(crate) fn add_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.buf.extend_from_slice(bytes);
        self.maybe_flush()
    }

    fn maybe_flush(&mut self) -> Result<()> {
        if self.buf.len() >= BUFFER {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.file.write_at(&self.buf, self.written)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Syncs the temporary file and renames it over the destination.
    pub(crate) fn finish(mut self) -> Result<()> {
        self.flush()?;
        self.file.sync()?;
        self.tmp.rename_over(&self.path)?
    }
}

/// Writes `body` (from `encode_records`) after a header of `kind` to
/// `PATH.tmp`, syncs it and renames it over `path`.
pub(crate) fn write_records(
    fs: &dyn FileSystem,
    path: &Path,
    kind: FileKind,
    max_cas: u64,
    body: &[u8],
) -> Result<()> {
    let mut w = SnapshotWriter::create(fs, path, Some(kind), max_cas)?;
    // A chunk at a time: the writer copies what it is given.
    for chunk in body.chunks(BUFFER) {
        w.add_raw(chunk)?;
    }
    w.finish()
}
