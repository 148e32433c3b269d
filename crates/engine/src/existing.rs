//! Whether a file store exists, checked before an open that must not create
//! it (`Db::open_existing`, every read-only open): the refusal says what is
//! missing and, when the files are there under another shard count, the
//! name that opens them. `big.tkt` against `big.tkt-00000-of-00010` .. is an
//! easy slip (the shard count is part of the name, not of the files), and a
//! bare "does not exist" beside those files reads as lost data.

use crate::io::FileSystem;
use crate::name::DbName;
use crate::paths::shard_path;
use crate::status::{Error, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// `Ok` when the store's first data file exists; else `Error::NotFound`
/// naming it, with the hint above when one applies (or, for the files of an
/// unfinished backup, `backup::files::check_finished`'s refusal).
pub(crate) fn check(fs: &dyn FileSystem, name: &DbName) -> Result<()> {
    let n = name.num_shards;
    let first = shard_path(&name.path, 0, n);
    if fs.exists(&first) {
        return Ok(());
    }
    // A backup a crash cut short may lack its first shard: told as such.
    crate::backup::files::check_finished(fs, &name.path)?;
    let mut text = format!("{} does not exist", first.display());
    match other_shard_count(fs, &name.path).filter(|(count, _)| *count != n) {
        Some((count, files)) => text.push_str(&format!(
            "; shard files exist for that name ({}): open it as {}#num_shards={count}",
            files, name.path
        )),
        None if n > 1 && fs.exists(Path::new(&name.path)) => text.push_str(&format!(
            "; {} exists: a store of one shard, named without num_shards",
            name.path
        )),
        None => {}
    }
    Err(Error::NotFound(text))
}

/// The shard count of the files a `num_shards=0` name opens (Tkrzw: "as
/// many as the files have"): that of the shard files beside `path`, else 1
/// (no files yet, or one unsharded file).
pub(crate) fn resolve_shards(fs: &dyn FileSystem, name: &mut DbName) {
    if name.num_shards == 0 {
        name.num_shards = shards_on_disk(fs, &name.path);
    }
}

fn shards_on_disk(fs: &dyn FileSystem, path: &str) -> usize {
    other_shard_count(fs, path)
        .map_or(1, |(count, _)| count)
        .min(crate::name::MAX_SHARDS)
}

/// The shard files `PATH-IIIII-of-NNNNN` beside `path`: the most common N,
/// with its first and last file as `first .. last` (one file: itself).
fn other_shard_count(fs: &dyn FileSystem, path: &str) -> Option<(usize, String)> {
    let path = Path::new(path);
    let base = path.file_name()?.to_str()?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut by_count: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for file in fs.list_dir(dir).ok()? {
        let Some(file_name) = file.file_name().and_then(|f| f.to_str()) else {
            continue;
        };
        if let Some(count) = file_name.strip_prefix(base).and_then(shard_suffix) {
            // Shown as the name gave the directory (`big.tkt-...`, not `./big.tkt-...`).
            let shown = path.with_file_name(file_name);
            by_count
                .entry(count)
                .or_default()
                .push(shown.display().to_string());
        }
    }
    let (count, mut files) = by_count.into_iter().max_by_key(|(_, f)| f.len())?;
    files.sort();
    let shown = match (files.first(), files.last()) {
        (Some(a), Some(b)) if a != b => format!("{a} .. {b}"),
        (Some(a), _) => a.clone(),
        _ => return None,
    };
    Some((count, shown))
}

/// `-IIIII-of-NNNNN` (five digits each, as `shard_path` writes them) -> N.
fn shard_suffix(rest: &str) -> Option<usize> {
    let digits = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
    let (index, count) = rest.strip_prefix('-')?.split_once("-of-")?;
    if !digits(index) || !digits(count) {
        return None;
    }
    count.parse().ok().filter(|&c| c > 0)
}

#[cfg(test)]
mod tests {
    use super::shard_suffix;

    #[test]
    fn only_shard_file_suffixes_count() {
        assert_eq!(shard_suffix("-00003-of-00010"), Some(10));
        assert_eq!(shard_suffix("-00003-of-00010.hint"), None);
        assert_eq!(shard_suffix(".lock"), None);
        assert_eq!(shard_suffix("-3-of-10"), None);
        assert_eq!(shard_suffix("-00000-of-00000"), None);
    }
}
