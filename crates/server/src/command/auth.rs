//! One authentication attempt (binary SASL, RPC `auth`) against the
//! server's credentials (`state::sasl`), counted in `auth_cmds` and
//! `auth_errors`, and a connection's state across attempts.

use crate::state::counters::bump;
use crate::state::sasl::MECHANISMS;
use crate::state::server::Server;

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
