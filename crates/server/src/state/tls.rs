//! memcached's TLS on the memcached port (`-Z`, `-o ssl_*`): the settings
//! as given (`stats settings` prints them as memcached does), the counters
//! `stats` reports, and the hook `refresh_certs` calls. No TLS code here:
//! `net::tls` builds rustls's configuration from these settings and
//! installs the hook at start, so that the text protocol's `refresh_certs`
//! (a layer below `net/`) can reach it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// memcached's `ssl_keyformat`: OpenSSL's `SSL_FILETYPE_PEM` (1) or
/// `SSL_FILETYPE_ASN1` (2, DER). ENGINE keys are refused at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyFormat {
    Pem,
    Der,
}

/// memcached's `ssl_verify_mode` 0..3: whether a client certificate is
/// asked for and whether one is required. `Once` differs from `Require`
/// in OpenSSL only on renegotiation, which rustls never does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyMode {
    None,
    Request,
    Require,
    Once,
}

impl VerifyMode {
    /// The OpenSSL flags memcached prints in `stats settings`
    /// (`SSL_VERIFY_PEER` 1, `FAIL_IF_NO_PEER_CERT` 2, `CLIENT_ONCE` 4).
    pub fn openssl_flags(self) -> u8 {
        match self {
            VerifyMode::None => 0,
            VerifyMode::Request => 1,
            VerifyMode::Require => 3,
            VerifyMode::Once => 7,
        }
    }
}

/// The `-o ssl_*` options, checked (`app::extended`). Present in the
/// server's `Config` only with `-Z`.
#[derive(Debug, Clone, PartialEq)]
pub struct TlsSettings {
    pub chain_cert: Option<PathBuf>,
    /// The private key's file; the chain file when not given.
    pub key: Option<PathBuf>,
    pub keyformat: KeyFormat,
    pub verify_mode: VerifyMode,
    /// Roots client certificates must chain to.
    pub ca_cert: Option<PathBuf>,
    /// OpenSSL's cipher list as given; `net::tls` keeps the TLS 1.2
    /// suites it names (TLS 1.3's are always offered, as in OpenSSL).
    pub ciphers: Option<String>,
    /// Bytes of replies encrypted per TLS write (memcached's output buffer).
    pub wbuf_size: u32,
    pub session_cache: bool,
    /// 2 (TLS 1.2) or 3 (TLS 1.3): rustls has no TLS 1.0 or 1.1.
    pub min_version: u8,
    /// How long a handshake may take before the connection is dropped
    /// (memstored's own; memcached waits as long as the client).
    pub handshake_timeout: std::time::Duration,
}

impl Default for TlsSettings {
    fn default() -> Self {
        TlsSettings {
            chain_cert: None,
            key: None,
            keyformat: KeyFormat::Pem,
            verify_mode: VerifyMode::None,
            ca_cert: None,
            ciphers: None,
            wbuf_size: 16 * 1024,
            session_cache: false,
            min_version: 2,
            handshake_timeout: std::time::Duration::from_secs(10),
        }
    }
}

impl TlsSettings {
    /// `stats settings ssl_min_version`'s words.
    pub fn min_version_text(&self) -> &'static str {
        if self.min_version >= 3 {
            "tlsv1.3"
        } else {
            "tlsv1.2"
        }
    }
}

/// Reloads the certificates, key and CA from their files; the error is the
/// line `refresh_certs` answers with.
pub type Reload = Box<dyn Fn() -> Result<(), String> + Send + Sync>;

/// The TLS counters and the reload hook of a server.
pub struct TlsState {
    /// Handshakes that failed (a plaintext client, a bad or missing
    /// client certificate, no common version or cipher, a timeout).
    pub handshake_errors: AtomicU64,
    /// TLS errors after the handshake (a corrupt or forged record).
    pub proto_errors: AtomicU64,
    /// Sessions put in the session cache (`-o ssl_session_cache`): the
    /// cache's own counter, attached at start.
    new_sessions: OnceLock<Arc<AtomicU64>>,
    refreshed: Mutex<Instant>,
    reload: OnceLock<Reload>,
}

impl Default for TlsState {
    fn default() -> Self {
        TlsState {
            handshake_errors: AtomicU64::new(0),
            proto_errors: AtomicU64::new(0),
            new_sessions: OnceLock::new(),
            refreshed: Mutex::new(Instant::now()),
            reload: OnceLock::new(),
        }
    }
}

impl TlsState {
    /// Installs the reload hook and the session cache's counter (once, at
    /// start).
    pub fn enable(&self, reload: Reload, new_sessions: Arc<AtomicU64>) {
        let _ = self.reload.set(reload);
        let _ = self.new_sessions.set(new_sessions);
        self.mark_refreshed();
    }

    /// `ssl_new_sessions`.
    pub fn new_sessions(&self) -> u64 {
        self.new_sessions.get().map_or(0, |n| n.load(Relaxed))
    }

    /// `stats reset`: the counters start again from zero.
    pub fn reset(&self) {
        self.handshake_errors.store(0, Relaxed);
        self.proto_errors.store(0, Relaxed);
        if let Some(n) = self.new_sessions.get() {
            n.store(0, Relaxed);
        }
    }

    /// `refresh_certs`: reloads the files for new connections (those open
    /// keep theirs). memcached's words when TLS is off.
    pub fn refresh(&self) -> Result<(), String> {
        let reload = self.reload.get().ok_or("Error TLS not enabled")?;
        reload()?;
        self.mark_refreshed();
        Ok(())
    }

    fn mark_refreshed(&self) {
        if let Ok(mut at) = self.refreshed.lock() {
            *at = Instant::now();
        }
    }

    /// `time_since_server_cert_refresh`, in seconds.
    pub fn since_refresh(&self) -> u64 {
        self.refreshed
            .lock()
            .map(|at| at.elapsed().as_secs())
            .unwrap_or(0)
    }
}
