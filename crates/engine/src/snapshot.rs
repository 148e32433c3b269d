//! Writing a whole file atomically: records go to `PATH.tmp`, which is synced
//! and renamed over PATH, so a crash leaves either the old file or the new one.
//! Used by `.tkmt` snapshots and by backups.

use crate::format::{self, FileHeader, FileKind, Op};
use crate::io::{DataFile, FileSystem};
use crate::name::Compression;
use crate::record::{now_secs, Meta};
use crate::status::Result;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes gathered before each write.
const BUFFER: usize = 1 << 20;

pub struct SnapshotWriter<'a> {
    fs: &'a dyn FileSystem,
    path: PathBuf,
    tmp: PathBuf,
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
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let file = fs.create_fresh(&tmp)?;
        let buf = match kind {
            Some(kind) => FileHeader {
                kind,
                generation: crate::store::log::new_generation(),
                created_at: now_secs(),
                max_cas,
            }
            .encode()
            .to_vec(),
            None => Vec::new(),
        };
        Ok(SnapshotWriter {
            fs,
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
        self.fs.rename(&self.tmp, &self.path)?;
        self.fs.sync_dir(&self.path)
    }
}
