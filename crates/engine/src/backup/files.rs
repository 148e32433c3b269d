//! A backup set's files by name: its unfinished marker, the refusal to open
//! a set that has one, and the removal of sets a crash left unfinished.
//! Below the database's open (`db.rs`), which refuses and sweeps them, and
//! the backup itself (`mod.rs`), which writes them.

use crate::io::FileSystem;
use crate::paths::shard_path;
use crate::status::{Error, Result};
use std::path::{Path, PathBuf};

/// `BASE.unfinished`: present while the backup set `BASE` is being written.
pub(crate) fn unfinished_marker(base: &str) -> PathBuf {
    PathBuf::from(format!("{base}.unfinished"))
}

/// Refuses a database whose files are an unfinished backup.
pub(crate) fn check_finished(fs: &dyn FileSystem, path: &str) -> Result<()> {
    let marker = unfinished_marker(path);
    if fs.exists(&marker) {
        return Err(Error::BrokenData(format!(
            "{path} is an unfinished backup (a crash or an error stopped it; {} says so): \
             take the backup again",
            marker.display()
        )));
    }
    Ok(())
}

/// `PATH.tmp`, where `SnapshotWriter` writes `PATH` first.
fn tmp_of(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Removes the files of the backup set `base` of `shards` shards, the
/// marker last, so that a crash in between still leaves the set marked.
pub(super) fn remove_set(fs: &dyn FileSystem, base: &str, shards: usize) -> Result<()> {
    for i in 0..shards {
        let path = shard_path(base, i, shards);
        fs.remove(&tmp_of(&path))?;
        fs.remove(&path)?;
    }
    let marker = unfinished_marker(base);
    fs.sync_dir(&marker)?;
    fs.remove(&marker)?;
    fs.sync_dir(&marker)
}

/// True when `file` is a file of the backup set whose base file name is
/// `base`: `BASE`, `BASE-00003-of-00016`, or either with `.tmp`.
fn in_set(file: &str, base: &str) -> bool {
    let Some(rest) = file.strip_prefix(base) else {
        return false;
    };
    let rest = rest.strip_suffix(".tmp").unwrap_or(rest);
    let numbered = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    rest.is_empty()
        || rest
            .strip_prefix('-')
            .and_then(|r| r.split_once("-of-"))
            .is_some_and(|(i, n)| numbered(i) && numbered(n))
}

/// Removes the backup sets of the database at `path` that a crash left
/// unfinished (a marker `PATH.backup.SUFFIX.unfinished` beside them). Run by a
/// writable open, which holds the store's lock, so no backup of it is running.
/// The set's files are found by name, not from the marker's note: a crash
/// may have come before the note was durable.
pub(crate) fn sweep_unfinished(fs: &dyn FileSystem, path: &str) -> Result<()> {
    let path = Path::new(path);
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(());
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}.backup.", name.to_string_lossy());
    let entries = fs.list_dir(dir)?;
    let name_of = |p: &PathBuf| p.file_name().map(|f| f.to_string_lossy().into_owned());
    for marker in &entries {
        let Some(base) = name_of(marker)
            .and_then(|f| f.strip_suffix(".unfinished").map(str::to_string))
            .filter(|b| b.starts_with(&prefix))
        else {
            continue;
        };
        tracing::warn!(
            "removing {}, a backup a crash left unfinished",
            dir.join(&base).display()
        );
        for file in &entries {
            if name_of(file).is_some_and(|f| in_set(&f, &base)) {
                fs.remove(file)?;
            }
        }
        fs.sync_dir(marker)?;
        fs.remove(marker)?;
        fs.sync_dir(marker)?;
    }
    Ok(())
}

/// `YYYYMMDDhhmmss` in UTC, the default backup suffix.
pub(crate) fn utc_timestamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}{:02}{:02}{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn files_of_a_set_are_told_by_name() {
        let base = "c.tkh.backup.x";
        for f in [
            "c.tkh.backup.x",
            "c.tkh.backup.x.tmp",
            "c.tkh.backup.x-00001-of-00004",
        ] {
            assert!(super::in_set(f, base), "{f}");
        }
        assert!(super::in_set("c.tkh.backup.x-00001-of-00004.tmp", base));
        for f in [
            "c.tkh.backup.xy",
            "c.tkh.backup.x.lock",
            "c.tkh.backup.x-1",
            "c.tkh",
        ] {
            assert!(!super::in_set(f, base), "{f}");
        }
        assert!(!super::in_set("c.tkh.backup.x-00001-of-", base));
    }

    #[test]
    fn utc_timestamps() {
        assert_eq!(super::utc_timestamp(0), "19700101000000");
        assert_eq!(super::utc_timestamp(1_613_020_707), "20210211051827");
        assert_eq!(super::utc_timestamp(951_782_400), "20000229000000");
    }
}
