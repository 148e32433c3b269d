//! memcached's `-Y` authfile: the users of the text protocol's ASCII
//! authentication (`protocols::text::ascii_auth`), read at start and again
//! on SIGHUP as memcached reads it.
//!
//! The format is memcached's (`authfile.c`): one `user:password` per line,
//! the password ending at `\r`, `\n` or the end of the file (a last line
//! without a newline is whole). A line without `:` — an empty line included
//! — is malformed and refuses the file. memcached keeps only the first 8
//! entries and drops the rest without a word (its own FIXME); memstored
//! keeps them all. An empty file is accepted, as memcached accepts it: nobody
//! can log in.

use crate::state::sasl::Credentials;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

/// The authfile and the users last read from it.
#[derive(Debug)]
pub struct AsciiAuth {
    pub path: PathBuf,
    users: RwLock<Credentials>,
}

impl AsciiAuth {
    /// Reads `path`; an error names the file and says what is wrong, in
    /// memcached's words.
    pub fn load(path: &Path) -> Result<AsciiAuth, String> {
        Ok(AsciiAuth {
            path: path.to_path_buf(),
            users: RwLock::new(read(path)?),
        })
    }

    /// Reads the file again (SIGHUP). A file that cannot be read or is
    /// malformed leaves the users as they were, as in memcached.
    pub fn reload(&self) -> Result<(), String> {
        let users = read(&self.path)?;
        *self.users.write().unwrap_or_else(|p| p.into_inner()) = users;
        Ok(())
    }

    /// Whether `user` `password` is one of the file's entries.
    pub fn check(&self, user: &[u8], password: &[u8]) -> bool {
        self.users
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .check(user, password)
    }
}

fn read(path: &Path) -> Result<Credentials, String> {
    let text = std::fs::read(path).map_err(|e| {
        format!(
            "Could not open authfile [{}] for reading, error {e}",
            path.display()
        )
    })?;
    parse(&text).ok_or_else(|| {
        format!(
            "Authfile [{}] has a malformed entry. Should be 'user:password'",
            path.display()
        )
    })
}

/// The entries of an authfile's text; `None` when a line is malformed.
fn parse(text: &[u8]) -> Option<Credentials> {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    let mut pairs = Vec::new();
    // An empty file is no error in memcached: nobody can log in.
    if text.is_empty() {
        return Some(Credentials::default());
    }
    for line in body.split(|&b| b == b'\n') {
        let colon = line.iter().position(|&b| b == b':')?;
        let (user, rest) = line.split_at(colon);
        let password = rest.get(1..).unwrap_or_default();
        let end = password
            .iter()
            .position(|&b| b == b'\r')
            .unwrap_or(password.len());
        pairs.push((user.to_vec(), password[..end].to_vec()));
    }
    Some(Credentials::from_pairs(pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memcached_format() {
        let c = parse(b"foo:bar\nbaaaz:quux\n").unwrap();
        assert!(c.check(b"foo", b"bar") && c.check(b"baaaz", b"quux"));
        assert!(!c.check(b"foo", b"bab"));
        // No newline at the end: the password is whole.
        assert!(parse(b"foo:bar").unwrap().check(b"foo", b"bar"));
        assert!(parse(b"foo:bar\r\n").unwrap().check(b"foo", b"bar"));
        assert!(parse(b"u:a:b\n").unwrap().check(b"u", b"a:b"));
    }

    #[test]
    fn malformed_lines_refuse_the_file() {
        assert!(parse(b"foo:bar\n\nbaz:qux\n").is_none());
        assert!(parse(b"foo\n").is_none());
        assert!(parse(b"\n").is_none());
        assert!(parse(b"").is_some_and(|c| !c.check(b"", b"")));
    }
}
