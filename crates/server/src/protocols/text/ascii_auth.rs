//! A text connection of a server started with `-Y` before it logs in:
//! memcached's ASCII authentication. The framing is the protocol crate's
//! (`memstored_protocol::text::auth`); here the credentials are checked and
//! counted in `auth_cmds` / `auth_errors`, as memcached counts them. Once
//! the connection has logged in, `AnySession` hands the rest of its input
//! to a plain `TextSession`.

use crate::protocols::session::{Cx, Flow, Session};
use crate::state::counters::bump;
use memstored_protocol::text::auth::{AuthFramer, AuthToken, AUTH_FAILED};
use memstored_protocol::text::response::STORED;

/// An unauthenticated text connection.
#[derive(Debug, Default)]
pub struct AuthGate {
    framer: AuthFramer,
    passed: bool,
}

impl AuthGate {
    /// Whether the connection has logged in (the text protocol takes over).
    pub fn passed(&self) -> bool {
        self.passed
    }
}

impl Session for AuthGate {
    type Framer = AuthFramer;

    fn framer(&mut self) -> &mut AuthFramer {
        &mut self.framer
    }

    fn serve(&mut self, cx: &mut Cx<'_>, t: AuthToken) -> Flow {
        let c = &cx.srv.counters;
        bump(&c.auth_cmds);
        let ok = cx
            .srv
            .ascii_auth
            .as_ref()
            .is_some_and(|a| a.check(&t.user, &t.password));
        if ok {
            cx.out.put(STORED);
            self.passed = true;
            self.framer.finish();
        } else {
            bump(&c.auth_errors);
            cx.out.put(AUTH_FAILED);
        }
        Flow::Continue
    }

    fn refuse(&mut self, cx: &mut Cx<'_>, answer: &'static [u8], closing: bool) -> Flow {
        cx.out.put(answer);
        if closing {
            Flow::Close
        } else {
            Flow::Continue
        }
    }
}
