//! TLS on the memcached port (`-Z`, memcached's tls.c over rustls): the
//! server configuration, swapped whole by `refresh_certs` (connections
//! open keep the one they were made with), and the handshake, bounded by
//! `--tls-handshake-timeout` so that a client that never finishes one (a
//! plaintext client waiting for a greeting, a half-open connection) holds
//! a connection slot for that long at most. A handshake runs as its
//! connection's task on its worker, so a slow one stalls no other client.
//! The connection is then served by `socket::TlsSocket`.

pub mod config;
pub mod socket;

use crate::state::server::Server;
use crate::state::tls::TlsSettings;
use rustls::ServerConfig;
use socket::TlsSocket;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, RwLock};
use tokio::net::TcpStream;

/// A listener's own client-certificate check (memcached's `-l btls:` and
/// `mtls:` prefixes), over `ssl_verify_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerCheck {
    /// No client certificate asked for.
    None,
    /// A client certificate required, and verified.
    Required,
}

/// The memcached port's TLS acceptor.
pub struct Acceptor {
    settings: TlsSettings,
    /// This listener's prefix, if it has one.
    check: Option<PeerCheck>,
    /// `ssl_new_sessions` (the session cache counts into it).
    new_sessions: Arc<AtomicU64>,
    sessions: Option<Arc<config::Sessions>>,
    current: RwLock<Arc<ServerConfig>>,
}

impl Acceptor {
    /// Reads the files `settings` names (memcached's messages on failure).
    pub fn new(settings: &TlsSettings) -> Result<Arc<Acceptor>, String> {
        let new_sessions = Arc::new(AtomicU64::new(0));
        let sessions = settings
            .session_cache
            .then(|| config::Sessions::new(new_sessions.clone()));
        let built = config::build(settings, sessions.as_ref(), None)?;
        Ok(Arc::new(Acceptor {
            settings: settings.clone(),
            check: None,
            new_sessions,
            sessions,
            current: RwLock::new(Arc::new(built)),
        }))
    }

    /// The acceptor of a listener with its own client-certificate check
    /// (`-l btls:`/`mtls:`): the same files, session cache and counters.
    pub fn with_check(&self, check: PeerCheck) -> Result<Arc<Acceptor>, String> {
        let built = config::build(&self.settings, self.sessions.as_ref(), Some(check))?;
        Ok(Arc::new(Acceptor {
            settings: self.settings.clone(),
            check: Some(check),
            new_sessions: self.new_sessions.clone(),
            sessions: self.sessions.clone(),
            current: RwLock::new(Arc::new(built)),
        }))
    }

    /// Hands `srv` the reload hook of every listener's acceptor (`all`:
    /// `self` and its `with_check` siblings) and the session counter.
    pub fn attach(self: &Arc<Self>, srv: &Server, all: Vec<Arc<Acceptor>>) {
        let reload_all = move || all.iter().try_for_each(|a| a.reload());
        srv.tls
            .enable(Box::new(reload_all), self.new_sessions.clone());
    }

    /// `refresh_certs`: the files read again; on failure the old
    /// configuration stays.
    pub fn reload(&self) -> Result<(), String> {
        let built = config::build(&self.settings, self.sessions.as_ref(), self.check)?;
        let mut current = self.current.write().map_err(|_| "TLS state poisoned")?;
        *current = Arc::new(built);
        Ok(())
    }

    fn config(&self) -> Option<Arc<ServerConfig>> {
        self.current.read().ok().map(|c| c.clone())
    }

    /// The handshake on a new connection; `None` (counted in
    /// `ssl_handshake_errors`, the connection closed) when it fails or
    /// takes longer than the timeout.
    pub async fn handshake(
        &self,
        tcp: TcpStream,
        peer: &str,
        srv: Arc<Server>,
    ) -> Option<TlsSocket> {
        let config = self.config()?;
        let accepting = tokio_rustls::TlsAcceptor::from(config).accept(tcp);
        let why = match tokio::time::timeout(self.settings.handshake_timeout, accepting).await {
            Ok(Ok(stream)) => {
                let (tcp, conn) = stream.into_inner();
                let wbuf = self.settings.wbuf_size as usize;
                return Some(TlsSocket::new(tcp, conn, wbuf, srv));
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => "timed out".to_string(),
        };
        srv.tls.handshake_errors.fetch_add(1, Relaxed);
        tracing::debug!("{peer}: TLS handshake: {why}");
        None
    }
}
