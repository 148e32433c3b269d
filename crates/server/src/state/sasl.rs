//! SASL PLAIN for the binary protocol (and RPC's `auth`), from a
//! `user:password` per line file.

use crate::state::counters::bump;
use crate::state::server::Server;
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
        self.users
            .get(user)
            .is_some_and(|p| constant_time_eq(p, password))
    }
}

/// One authentication attempt (binary SASL_AUTH/SASL_STEP, RPC `auth`),
/// counted in `auth_cmds` / `auth_errors`. True only for PLAIN with valid
/// credentials; the caller's connection is authenticated exactly when this
/// returns true, so a failed re-auth de-authenticates.
pub fn authenticate(srv: &Server, mechanism: &[u8], data: &[u8]) -> bool {
    let c = &srv.counters;
    bump(&c.auth_cmds);
    let ok = mechanism == MECHANISMS
        && srv
            .credentials
            .as_ref()
            .is_some_and(|cr| cr.check_plain(data));
    if !ok {
        bump(&c.auth_errors);
    }
    ok
}

/// Failed authentications a connection may make before it is closed: a
/// client guessing passwords must reconnect for every few guesses.
pub const MAX_FAILED_ATTEMPTS: u32 = 3;

/// One connection's authentication state.
#[derive(Debug, Default)]
pub struct AuthState {
    pub authenticated: bool,
    failures: u32,
}

impl AuthState {
    /// A connection of `srv`: authenticated from the start when it needs no credentials.
    pub fn new(srv: &Server) -> AuthState {
        AuthState {
            authenticated: srv.credentials.is_none(),
            failures: 0,
        }
    }

    /// Runs one attempt; the connection is authenticated exactly when it
    /// succeeds. Returns false when the connection must now be closed
    /// (too many failures on it).
    pub fn attempt(&mut self, srv: &Server, mechanism: &[u8], data: &[u8]) -> bool {
        self.authenticated = authenticate(srv, mechanism, data);
        if !self.authenticated {
            self.failures += 1;
        }
        self.failures < MAX_FAILED_ATTEMPTS
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
