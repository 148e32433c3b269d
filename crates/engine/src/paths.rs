//! Where a store's files are: a shard's data file and its hint beside it.
//! A leaf: the modules that open, back up, restore or clean up those files
//! all name them from here.

use std::path::{Path, PathBuf};

/// The file of shard `i` of `n`: Tkrzw's `casket.tkh-00003-of-00016` style,
/// or the path itself for an unsharded database.
pub fn shard_path(path: &str, i: usize, n: usize) -> PathBuf {
    if n == 1 {
        PathBuf::from(path)
    } else {
        PathBuf::from(format!("{path}-{i:05}-of-{n:05}"))
    }
}

/// `casket.tkh` -> `casket.tkh.hint`.
pub fn hint_path(data: &Path) -> PathBuf {
    let mut s = data.as_os_str().to_owned();
    s.push(".hint");
    PathBuf::from(s)
}
