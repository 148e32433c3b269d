//! The files the server writes by a path it is given, besides its stores:
//! the pid file (`-P`), the port file (`--port-file`) and the Unix socket
//! (`--unix-socket`). Each is written without following a symlink and
//! without clobbering a file memstored did not make, and is removed at exit
//! only while it is still the one this process made: the server may run as
//! root, and another server may have taken the path since (issue 40).

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// What a pid or port file may hold: a number and a newline. Anything else
/// at the path is someone else's file.
const MAX_NUMBER_FILE: u64 = 32;

/// A file this process made at `path`, known by its device, inode and
/// change time: a file made there since may reuse the inode number at once
/// (it is the first one free), but not the nanosecond it was made at.
#[derive(Debug)]
pub struct Owned {
    path: PathBuf,
    id: (u64, u64, i64, i64),
}

fn identity(m: &std::fs::Metadata) -> (u64, u64, i64, i64) {
    (m.dev(), m.ino(), m.ctime(), m.ctime_nsec())
}

impl Owned {
    /// The file now at `path`, as this process's own.
    pub fn claim(path: &Path) -> std::io::Result<Owned> {
        let m = std::fs::symlink_metadata(path)?;
        Ok(Owned {
            path: path.to_path_buf(),
            id: identity(&m),
        })
    }

    /// Removes the file unless something else has replaced it since: a
    /// second server started on the same socket path, an operator's new
    /// pid file. Best effort, as at any exit.
    pub fn remove_if_ours(&self) {
        let ours = std::fs::symlink_metadata(&self.path).is_ok_and(|m| identity(&m) == self.id);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        } else {
            tracing::info!(
                "{} is no longer the file this server made; left in place",
                self.path.display()
            );
        }
    }
}

/// Files to remove at exit, on every path out of `startup::run` (a failed
/// start too): dropped last.
#[derive(Debug, Default)]
pub struct Cleanup(pub Vec<Owned>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for f in &self.0 {
            f.remove_if_ours();
        }
    }
}

/// Refuses `path` (`what`: "pid file", "port file") before anything is
/// written: a symlink, anything but a small file holding a number (a file
/// some other program owns), or a file of one of the `stores`, existing or
/// yet to be made.
pub fn check_number_file(what: &str, path: &Path, stores: &[String]) -> Result<(), String> {
    let shown = path.display();
    if let Some(store) = stores.iter().find(|s| belongs_to_store(path, s)) {
        return Err(format!(
            "{what} {shown} is a file of the store {store:?}: writing it there would destroy the store"
        ));
    }
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("{what} {shown}: {e}")),
    };
    if m.file_type().is_symlink() {
        return Err(format!(
            "{what} {shown} is a symbolic link; memstored does not write through links: remove it or name the file itself"
        ));
    }
    let number = m.file_type().is_file()
        && m.len() <= MAX_NUMBER_FILE
        && std::fs::read_to_string(path)
            .is_ok_and(|t| t.trim().bytes().all(|b| b.is_ascii_digit()));
    if !number {
        return Err(format!(
            "{what} {shown} exists and is not a {what} (it holds something else); refusing to overwrite it"
        ));
    }
    Ok(())
}

/// Whether `path` is, or will be, a file of the store named `store`: its
/// data file, shards, lock, hint, temporary and backup files all begin with
/// the store's file name, in the store's directory.
fn belongs_to_store(path: &Path, store: &str) -> bool {
    let Ok(name) = memstored_engine::DbName::parse(store) else {
        return false;
    };
    if !name.kind.has_file() || name.path.is_empty() {
        return false;
    }
    let data = Path::new(&name.path);
    let (Some(ours), Some(theirs)) = (path.file_name(), data.file_name()) else {
        return false;
    };
    ours.as_encoded_bytes()
        .starts_with(theirs.as_encoded_bytes())
        && dir_of(path) == dir_of(data)
}

/// The directory of `path`, resolved where it exists (`./a` and `a`, or a
/// symlinked directory, are the same place).
fn dir_of(path: &Path) -> PathBuf {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

/// Writes `text` to `path` whole: into a new file beside it (created
/// exclusively, never through a link), then renamed over `path`, which
/// replaces a link itself rather than what it points to. Checked first
/// with [`check_number_file`].
pub fn write_number_file(path: &Path, text: &str) -> std::io::Result<Owned> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    match std::fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o644)
        .open(&tmp)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Owned::claim(path)
}

/// The environment variable memcached reads for its port file.
pub const MEMCACHED_PORT_FILENAME: &str = "MEMCACHED_PORT_FILENAME";

/// memcached's port file: with `MEMCACHED_PORT_FILENAME` set, the TCP port
/// listened on is written there as memcached writes it (`TCP INET: 11211`,
/// `TCP INET6: ...`), for memcached's test suite (t/issue_67.t) and tools
/// that start a server on a free port. Written whole (aside, then renamed,
/// as memcached renames its `NAME.lck`) and, as memcached leaves it, not
/// removed at exit. Any other file already at the path is left alone; a
/// failure is logged, not fatal, as in memcached.
pub fn write_memcached_port_file(addr: std::net::SocketAddr) {
    let Some(path) = std::env::var_os(MEMCACHED_PORT_FILENAME) else {
        return;
    };
    let path = Path::new(&path);
    let family = if addr.is_ipv4() { "INET" } else { "INET6" };
    let text = format!("TCP {family}: {}\n", addr.port());
    let written = match std::fs::symlink_metadata(path) {
        Ok(m) if !(m.file_type().is_file() && m.len() <= MAX_NUMBER_FILE && is_port_list(path)) => {
            Err(std::io::Error::other(
                "exists and is not a port file; left alone",
            ))
        }
        _ => write_number_file(path, &text).map(drop),
    };
    if let Err(e) = written {
        tracing::warn!("{MEMCACHED_PORT_FILENAME} {}: {e}", path.display());
    }
}

/// Whether the file at `path` holds nothing but port lines (`TCP INET: 1`).
fn is_port_list(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| {
        t.lines()
            .all(|l| l.starts_with("TCP ") || l.starts_with("UDP "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_files_are_recognised() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().display();
        let store = format!("{d}/casket.tkh#num_shards=4");
        for name in ["casket.tkh", "casket.tkh.lock", "casket.tkh-00001-of-00004"] {
            assert!(belongs_to_store(&t.path().join(name), &store), "{name}");
        }
        assert!(!belongs_to_store(&t.path().join("memstored.pid"), &store));
        assert!(!belongs_to_store(
            &t.path().join("casket.tkh"),
            "*#capsiz=1m"
        ));
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(!belongs_to_store(
            &elsewhere.path().join("casket.tkh"),
            &store
        ));
    }

    #[test]
    fn only_number_files_are_overwritten() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("x.pid");
        assert!(check_number_file("pid file", &p, &[]).is_ok(), "absent");
        std::fs::write(&p, "123\n").unwrap();
        assert!(
            check_number_file("pid file", &p, &[]).is_ok(),
            "an old pid file"
        );
        std::fs::write(&p, "").unwrap();
        assert!(check_number_file("pid file", &p, &[]).is_ok(), "empty");
        std::fs::write(&p, "root:x:0:0\n").unwrap();
        let e = check_number_file("pid file", &p, &[]).unwrap_err();
        assert!(e.contains("refusing to overwrite"), "{e}");
        std::fs::write(&p, vec![b'1'; 100]).unwrap();
        assert!(check_number_file("pid file", &p, &[]).is_err(), "too big");
        let link = t.path().join("link.pid");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        let e = check_number_file("pid file", &link, &[]).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
    }

    #[test]
    fn removal_spares_a_file_made_since() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("x.port");
        let ours = write_number_file(&p, "1\n").unwrap();
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, "2\n").unwrap();
        ours.remove_if_ours();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "2\n");
        let again = Owned::claim(&p).unwrap();
        again.remove_if_ours();
        assert!(!p.exists());
    }
}
