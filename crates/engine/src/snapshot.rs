//! Writing a whole file atomically: records go to `PATH.tmp`, which is synced
//! and renamed over PATH, so a crash leaves either the old file or the new one
//! (and a failure leaves the old one, and no `PATH.tmp`).
//! Used by `.tkmt` snapshots and by backups.

use crate::format::{self, FileHeader, FileKind, Op};
use crate::io::{DataFile, FileSystem};
use crate::name::Compression;
use crate::record::{now_secs, Meta};
use crate::status::Result;
use crate::tmpfile::{self, TmpFile};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes gathered before each write.
const BUFFER: usize = 1 << 20;

pub struct SnapshotWriter<'a> {
    path: PathBuf,
    /// `PATH.tmp`: removed if the writer is dropped before `finish`.
    tmp: TmpFile<&'a dyn FileSystem>,
    file: Arc<dyn DataFile>,
    buf: Vec<u8>,
    written: u64,
    compression: Compression,
}

impl<'a> SnapshotWriter<'a> {
    /// Starts `PATH.tmp` with a header of `kind`, or with no header when `kind` is `None`
    /// (raw copies, whose bytes already begin with one).
    pub fn create(
        fs: &'a dyn FileSystem,
        path: &Path,
        kind: Option<FileKind>,
        max_cas: u64,
        compression: Compression,
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
            compression,
        })
    }

    /// Appends a put record.
    pub fn add(&mut self, key: &[u8], value: &[u8], meta: Meta) -> Result<()> {
        format::encode_record(&mut self.buf, Op::Put, key, value, meta, self.compression)?;
        self.maybe_flush()
    }

    /// Appends raw bytes.
    pub fn add_raw(&mut self, bytes: &[u8]) -> Result<()> {
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
    pub fn finish(mut self) -> Result<()> {
        self.flush()?;
        self.file.sync()?;
        self.tmp.rename_over(&self.path)?
    }
}

/// Writes `body` (from `encode_records`) after a header of `kind` to
/// `PATH.tmp`, syncs it and renames it over `path`.
pub fn write_records(
    fs: &dyn FileSystem,
    path: &Path,
    kind: FileKind,
    max_cas: u64,
    compression: Compression,
    body: &[u8],
) -> Result<()> {
    let mut w = SnapshotWriter::create(fs, path, Some(kind), max_cas, compression)?;
    // A chunk at a time: the writer copies what it is given.
    for chunk in body.chunks(BUFFER) {
        w.add_raw(chunk)?;
    }
    w.finish()
}
