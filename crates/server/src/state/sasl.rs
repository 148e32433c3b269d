//! SASL PLAIN credentials for the binary protocol (and RPC's `auth`), from a
//! `user:password` per line file. The attempt itself is `command::auth`.

use std::collections::HashMap;
use std::path::Path;

/// Users and passwords allowed to authenticate.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    users: HashMap<Vec<u8>, Vec<u8>>,
}

/// The mechanisms we offer (body of SASL_LIST_MECHS).
pub const MECHANISMS: &[u8] = b"PLAIN";

impl Credentials {
    /// Reads `user:password` lines; blank lines and `#` comments are skipped.
    pub fn load(path: &Path) -> std::io::Result<Credentials> {
        let text = std::fs::read(path).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("reading SASL file {}: {e}", path.display()),
            )
        })?;
        Ok(Credentials::parse(&text))
    }

    pub fn parse(text: &[u8]) -> Credentials {
        let mut users = HashMap::new();
        for line in text.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() || line.first() == Some(&b'#') {
                continue;
            }
            if let Some(colon) = line.iter().position(|&b| b == b':') {
                let (user, rest) = line.split_at(colon);
                let password = rest.get(1..).unwrap_or_default();
                users.insert(user.to_vec(), password.to_vec());
            }
        }
        Credentials { users }
    }

    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.users.len()
    }

    /// Checks a PLAIN initial response: `[authzid] \0 user \0 password`.
    /// The authzid must be empty or the user itself: nobody may act as
    /// another user, as no user here has that right.
    pub fn check_plain(&self, data: &[u8]) -> bool {
        let mut parts = data.split(|&b| b == 0);
        let (Some(authz), Some(user), Some(password), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        if !authz.is_empty() && authz != user {
            return false;
        }
        self.check(user, password)
    }

    /// Whether `user` may log in with `password` (compared in constant time).
    pub fn check(&self, user: &[u8], password: &[u8]) -> bool {
        self.users
            .get(user)
            .is_some_and(|p| constant_time_eq(p, password))
    }

    /// Credentials from pairs already read (`state::ascii_auth`'s file).
    pub fn from_pairs(pairs: impl IntoIterator<Item = (Vec<u8>, Vec<u8>)>) -> Credentials {
        Credentials {
            users: pairs.into_iter().collect(),
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain() {
        let c = Credentials::parse(b"alice:secret\n# comment\nbob:pa:ss\r\n");
        assert_eq!(c.len(), 2);
        assert!(c.check_plain(b"\0alice\0secret"));
        assert!(c.check_plain(b"alice\0alice\0secret"));
        assert!(
            !c.check_plain(b"bob\0alice\0secret"),
            "acting as another user"
        );
        assert!(c.check_plain(b"\0bob\0pa:ss"));
        assert!(!c.check_plain(b"\0alice\0wrong"));
        assert!(!c.check_plain(b"\0carol\0secret"));
        assert!(!c.check_plain(b"alice secret"));
    }
}
