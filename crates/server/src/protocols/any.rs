//! The sniff: which wire a memcached-port connection speaks, from its first
//! byte, and the one enum the IO drivers hold a session as. The only file
//! that names every wire; a new wire is added here and in its own folder.

use crate::protocols::binary::BinarySession;
use crate::protocols::kt::KtSession;
use crate::protocols::out::Out;
use crate::protocols::rpc::session::RpcSession;
use crate::protocols::session::{self, ConnState, Cx, Session, Step};
use crate::protocols::text::ascii_auth::AuthGate;
use crate::protocols::text::TextSession;
use crate::state::replication::StreamRequest;
use crate::state::server::Server;
use bytes::BytesMut;

/// The protocol a connection speaks, chosen by its first byte.
pub enum AnySession {
    Binary(BinarySession),
    Text(Box<TextSession>),
    /// A text connection of a `-Y` server that has not logged in yet.
    AsciiAuth(Box<AuthGate>),
    Rpc(Box<RpcSession>),
    Kt(KtSession),
}

impl AnySession {
    /// Picks the protocol from the first byte: 0x80 is the binary protocol's
    /// request magic, a msgpack fixarray (0x90–0x9f) is MessagePack-RPC,
    /// 0xb0–0xbf Kyoto Tycoon's binary protocol, anything else the text and
    /// meta protocols. Protocols without authentication (text, Kyoto Tycoon's)
    /// are refused when the server requires SASL.
    /// memcached's `-B ascii` / `-B binary` pin the wire whatever the byte.
    pub fn sniff(srv: &Server, rbuf: &[u8]) -> Option<AnySession> {
        use crate::state::server::Binding;
        let first = match (srv.cfg.binding, rbuf.first().copied()) {
            (_, None) => return None,
            (Binding::Auto, b) => b,
            (Binding::Binary, _) => Some(0x80),
            // Anything else than the binary, RPC and KT bytes is text.
            (Binding::Ascii, _) => Some(b' '),
        };
        match first {
            Some(0x80) => Some(AnySession::Binary(BinarySession::new(srv))),
            Some(0x90..=0x9f) => Some(AnySession::Rpc(Box::new(RpcSession::new(srv)))),
            Some(0xb0..=0xbf) if srv.credentials.is_some() => {
                tracing::info!("Kyoto Tycoon binary connection refused: SASL is required");
                None
            }
            Some(0xb0..=0xbf) => Some(AnySession::Kt(KtSession::new(srv))),
            Some(_) if srv.credentials.is_some() => {
                tracing::info!("text protocol connection refused: SASL is required");
                None
            }
            Some(_) if srv.ascii_auth.is_some() => Some(AnySession::AsciiAuth(Box::default())),
            Some(_) => Some(AnySession::Text(Box::new(TextSession::new(srv)))),
            None => None,
        }
    }

    /// Serves every complete request in `rbuf` (`session::process`).
    pub fn process(&mut self, cx: &mut Cx<'_>, cs: &mut ConnState, rbuf: &mut BytesMut) -> Step {
        match self {
            AnySession::Binary(s) => session::process(s, cx, cs, rbuf),
            AnySession::Text(s) => session::process(s.as_mut(), cx, cs, rbuf),
            AnySession::AsciiAuth(g) => {
                let step = session::process(g.as_mut(), cx, cs, rbuf);
                if !g.passed() || step == Step::Close {
                    return step;
                }
                // Logged in: what follows in the buffer is the text protocol's.
                *self = AnySession::Text(Box::new(TextSession::new(cx.srv)));
                self.process(cx, cs, rbuf)
            }
            AnySession::Rpc(s) => session::process(s.as_mut(), cx, cs, rbuf),
            AnySession::Kt(s) => session::process(s, cx, cs, rbuf),
        }
    }

    /// Whether the wire may answer late (slow calls) or hand its socket
    /// over to a replication stream: such connections need the tokio driver.
    pub fn needs_tasks(&self) -> bool {
        matches!(self, AnySession::Rpc(_) | AnySession::Kt(_))
    }

    pub fn in_flight(&self) -> usize {
        match self {
            AnySession::Rpc(s) => s.in_flight(),
            _ => 0,
        }
    }

    pub fn answered_late(&mut self) {
        if let AnySession::Rpc(s) = self {
            s.answered_late();
        }
    }

    /// `Session::out_of_memory` of the wire spoken.
    pub fn out_of_memory(&mut self, rbuf: &mut BytesMut, out: &mut Out) -> bool {
        match self {
            AnySession::Binary(s) => s.out_of_memory(rbuf, out),
            AnySession::Text(s) => s.out_of_memory(rbuf, out),
            AnySession::AsciiAuth(g) => g.out_of_memory(rbuf, out),
            AnySession::Rpc(s) => s.out_of_memory(rbuf, out),
            AnySession::Kt(s) => s.out_of_memory(rbuf, out),
        }
    }

    /// The watcher a text session became (`watch`) as it closed: the
    /// connection's socket goes to it.
    pub fn take_watcher(&mut self) -> Option<std::sync::Arc<crate::state::watch::Watcher>> {
        match self {
            AnySession::Text(s) => s.take_watcher(),
            _ => None,
        }
    }

    /// How the session says the connection closed (`quit`: normally).
    pub fn close_reason(&self) -> crate::state::watch::CloseReason {
        match self {
            AnySession::Text(s) => s.close_reason(),
            AnySession::Binary(s) => s.close_reason(),
            _ => crate::state::watch::CloseReason::Error,
        }
    }

    /// The replication stream the session accepted before it closed: the
    /// connection's socket goes to it.
    pub fn take_stream(&mut self) -> Option<StreamRequest> {
        match self {
            AnySession::Rpc(s) => s.take_stream(),
            AnySession::Kt(s) => s.take_stream(),
            _ => None,
        }
    }
}
