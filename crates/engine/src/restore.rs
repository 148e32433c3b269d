//! Salvage: copies every intact record of a damaged database into a new one,
//! skipping damaged bytes instead of stopping at them.

use crate::db::Db;
use crate::format::{self, FileHeader, Op, FILE_HEADER_SIZE};
use crate::io::{FileSystem, RealFs};
use crate::name::DbName;
use crate::ops::{StoreMode, StoreOptions};
use crate::paths::shard_path;
use crate::scan::{scan_salvage, Scanned};
use crate::status::{Error, Result};
use bytes::Bytes;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a restore recovered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RestoreReport {
    /// Records applied to the destination (puts, removals and clears).
    pub records: u64,
    /// Bytes skipped as damaged.
    pub skipped_bytes: u64,
}

/// Reads every shard file of `src_name` record by record, resynchronising
/// after damage, and applies the records in order to `dst_name` (created).
pub fn restore(src_name: &str, dst_name: &str) -> Result<RestoreReport> {
    restore_with_fs(src_name, dst_name, Arc::new(RealFs))
}

/// `restore` over a given file system.
pub fn restore_with_fs(
    src_name: &str,
    dst_name: &str,
    fs: Arc<dyn FileSystem>,
) -> Result<RestoreReport> {
    let mut src = DbName::parse(src_name)?;
    crate::existing::resolve_shards(&*fs, &mut src);
    if !src.kind.has_file() {
        return Err(Error::InvalidArgument(format!(
            "{src_name} has no file to restore from"
        )));
    }
    crate::existing::check(&*fs, &src)?;
    // Shared: a restore reads while no writer writes, beside other readers.
    // Never kept: a lock file it made goes when it ends, failed or not.
    let _src_lock = fs.lock_store(std::path::Path::new(&src.path), false)?;
    // A backup a crash interrupted holds some shards, or parts of them:
    // salvaging it would pass a part for the whole.
    crate::backup::files::check_finished(&*fs, &src.path)?;
    let n = src.num_shards;
    // Every shard's header first, before the destination is made: a
    // damaged header is salvaged around, but a foreign file is not ours to
    // read, and an intact header of another format version (version 1's
    // records read as version 2 would all fail their CRC) is refused with
    // what to do instead.
    for i in 0..n {
        let path = shard_path(&src.path, i, n);
        let file = fs.open(&path, false, false)?;
        let mut head = vec![0u8; (file.len()? as usize).min(format::HEAD_READ)];
        file.read_at(&mut head, 0)?;
        if let Err(e) = FileHeader::decode(&head, &path.display().to_string()) {
            if !head.starts_with(format::MAGIC) || FileHeader::is_intact(&head) {
                return Err(e);
            }
        }
    }
    let made = Made::before(&*fs, dst_name)?;
    let dst = Db::open_with_fs(dst_name, true, fs.clone())?;
    let copied = copy(&*fs, &src, &dst);
    let closed = dst.close();
    drop(dst);
    let done = copied.and_then(|report| closed.map(|()| report));
    if done.is_err() {
        made.undo(&*fs);
    }
    done
}

/// What the destination had before the restore, so that a failed restore
/// can remove what it made: a half-made destination is of no use, and on a
/// full disk it holds the space. A destination that existed is left alone.
struct Made {
    name: DbName,
    /// No shard's data file existed.
    fresh: bool,
    /// The lock file did not exist (every open leaves one).
    new_lock: bool,
}

impl Made {
    fn before(fs: &dyn FileSystem, dst_name: &str) -> Result<Made> {
        let mut name = DbName::parse(dst_name)?;
        crate::existing::resolve_shards(fs, &mut name);
        let has_file = name.kind.has_file();
        let fresh = has_file && Made::shards(&name).all(|p| !fs.exists(&p));
        let new_lock = has_file && !fs.exists(&Made::lock(&name));
        Ok(Made {
            name,
            fresh,
            new_lock,
        })
    }

    fn shards(name: &DbName) -> impl Iterator<Item = PathBuf> + '_ {
        let n = name.num_shards;
        (0..n).map(move |i| shard_path(&name.path, i, n))
    }

    fn lock(name: &DbName) -> PathBuf {
        crate::lock::lock_path(Path::new(&name.path))
    }

    fn undo(&self, fs: &dyn FileSystem) {
        if !self.fresh {
            return;
        }
        let mut made: Vec<PathBuf> = Made::shards(&self.name)
            .flat_map(|p| {
                crate::tmpfile::remove_leftovers(fs, &p);
                [crate::paths::hint_path(&p), p]
            })
            .collect();
        if self.new_lock {
            made.push(Made::lock(&self.name));
        }
        for p in made {
            if let Err(e) = fs.remove(&p) {
                tracing::warn!("{e}");
            }
        }
    }
}

/// Applies every intact record of the shards of `src` to `dst`, in order.
fn copy(fs: &dyn FileSystem, src: &DbName, dst: &Db) -> Result<RestoreReport> {
    let n = src.num_shards;
    let mut report = RestoreReport::default();
    for i in 0..n {
        let path = shard_path(&src.path, i, n);
        let file = fs.open(&path, false, false)?;
        let len = file.len()?;
        report.skipped_bytes += scan_salvage(
            &*file,
            FILE_HEADER_SIZE as u64,
            len,
            true,
            &mut |s: Scanned<'_>| {
                report.records += 1;
                match s.header.op {
                    Op::Put => {
                        let value =
                            format::decompress(s.header.codec, s.stored_value.unwrap_or_default())?;
                        let opts = StoreOptions {
                            flags: s.header.meta.flags,
                            expires_at: s.header.meta.expires_at,
                            cas: None,
                        };
                        dst.store(s.key, Bytes::from(value), StoreMode::Set, opts)?;
                    }
                    Op::Remove => match dst.remove(s.key) {
                        Err(Error::NotFound(_)) | Ok(()) => {}
                        Err(e) => return Err(e),
                    },
                    Op::Clear => dst.clear()?,
                }
                Ok(())
            },
        )?;
    }
    Ok(report)
}
