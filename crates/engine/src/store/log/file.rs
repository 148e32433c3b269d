//! A log-structured file's header: a fresh generation number, and opening
//! a file (creating it when writable) with its header checked. Below the
//! log store, its rebuild and the snapshot files that share the header.

use crate::format::{self, FileHeader, FileKind, FILE_HEADER_SIZE};
use crate::io::{DataFile, FileSystem};
use crate::status::{Error, Result};
use std::path::Path;
use std::sync::Arc;

/// A fresh generation number for a new file.
pub(crate) fn new_generation() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = foldhash::fast::RandomState::default().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    h.finish()
}

/// Opens (creating if needed and writable) a file and checks its header.
/// Returns the file, its header and its length. A foreign file is refused untouched.
pub(crate) fn open_file(
    fs: &Arc<dyn FileSystem>,
    path: &Path,
    writable: bool,
    kind: FileKind,
) -> Result<(Arc<dyn DataFile>, FileHeader, u64)> {
    let shown = path.display().to_string();
    if !fs.exists(path) && !writable {
        return Err(Error::NotFound(format!("{shown} does not exist")));
    }
    let file = fs.open(path, writable, true)?;
    let len = file.len()?;
    if len == 0 && writable {
        // A new file, or one left empty by a crash right after its creation.
        let header = FileHeader {
            kind,
            generation: new_generation(),
            created_at: crate::record::now_secs(),
            max_cas: 0,
        };
        file.write_at(&header.encode(), 0)?;
        file.sync()?;
        fs.sync_dir(path)?;
        return Ok((file, header, FILE_HEADER_SIZE as u64));
    }
    let mut head = vec![0u8; (len as usize).min(format::HEAD_READ)];
    file.read_at(&mut head, 0)?;
    let header = FileHeader::decode(&head, &shown)?;
    if header.kind != kind {
        return Err(Error::BrokenData(format!(
            "{shown} holds a {:?} file, not a {kind:?} file",
            header.kind
        )));
    }
    Ok((file, header, len))
}
