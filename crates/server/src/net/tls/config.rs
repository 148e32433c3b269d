//! rustls's server configuration from memcached's `-o ssl_*` settings,
//! with memcached's error words (its tls.c `load_server_certificates`):
//! at start they stop the server, on `refresh_certs` they are the reply.

use super::PeerCheck;
use crate::state::tls::{KeyFormat, TlsSettings, VerifyMode};
use rustls::crypto::CryptoProvider;
use rustls::server::{ServerSessionMemoryCache, StoresServerSessions, WebPkiClientVerifier};
use rustls::{RootCertStore, ServerConfig, SupportedCipherSuite};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// Sessions kept for resumption with `-o ssl_session_cache` (OpenSSL's
/// default cache holds 20480; rustls's memory cache evicts at random).
const SESSIONS: usize = 20480;

/// OpenSSL's names for the TLS 1.2 suites rustls (ring) implements: what
/// `-o ssl_ciphers` can choose among. OpenSSL's list applies to TLS 1.2
/// only (TLS 1.3's suites are `SSL_CTX_set_ciphersuites`'s, which
/// memcached never calls), so the TLS 1.3 suites are always offered.
fn tls12_names() -> [(&'static str, SupportedCipherSuite); 6] {
    use rustls::crypto::ring::cipher_suite as s;
    [
        (
            "ECDHE-ECDSA-AES256-GCM-SHA384",
            s::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        ),
        (
            "ECDHE-ECDSA-AES128-GCM-SHA256",
            s::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        ),
        (
            "ECDHE-ECDSA-CHACHA20-POLY1305",
            s::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        ),
        (
            "ECDHE-RSA-AES256-GCM-SHA384",
            s::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        ),
        (
            "ECDHE-RSA-AES128-GCM-SHA256",
            s::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        ),
        (
            "ECDHE-RSA-CHACHA20-POLY1305",
            s::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        ),
    ]
}

/// The session cache of `-o ssl_session_cache`, counting what it stores as
/// memcached's new-session callback counts (`stats ssl_new_sessions`).
#[derive(Debug)]
pub struct Sessions {
    cache: Arc<ServerSessionMemoryCache>,
    stored: Arc<AtomicU64>,
}

impl Sessions {
    pub fn new(stored: Arc<AtomicU64>) -> Arc<Sessions> {
        Arc::new(Sessions {
            cache: ServerSessionMemoryCache::new(SESSIONS),
            stored,
        })
    }
}

impl StoresServerSessions for Sessions {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        let kept = self.cache.put(key, value);
        if kept {
            self.stored.fetch_add(1, Relaxed);
        }
        kept
    }
    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.cache.get(key)
    }
    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.cache.take(key)
    }
    fn can_cache(&self) -> bool {
        self.cache.can_cache()
    }
}

/// The crypto provider with the TLS 1.2 suites `ciphers` names (all
/// without it). Names rustls does not implement are skipped, as OpenSSL
/// skips names it does not know; none it implements is an error, as in
/// OpenSSL ("Error setting the provided cipher(s)").
fn provider(ciphers: Option<&str>) -> Result<CryptoProvider, String> {
    let mut provider = rustls::crypto::ring::default_provider();
    let Some(list) = ciphers else {
        return Ok(provider);
    };
    let names = tls12_names();
    let wanted: Vec<SupportedCipherSuite> = list
        .split([':', ' '])
        .filter_map(|name| names.iter().find(|(n, _)| *n == name))
        .map(|(_, suite)| *suite)
        .collect();
    if wanted.is_empty() {
        let known: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
        return Err(format!(
            "Error setting the provided cipher(s): {list} (rustls implements {})",
            known.join(":")
        ));
    }
    provider
        .cipher_suites
        .retain(|s| s.tls13().is_some() || wanted.contains(s));
    Ok(provider)
}

fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Vec<_> = CertificateDer::pem_file_iter(path)
        .and_then(|i| i.collect::<Result<Vec<_>, _>>())
        .map_err(|e| e.to_string())?;
    if certs.is_empty() {
        return Err("no certificate in the file".into());
    }
    Ok(certs)
}

fn private_key(path: &Path, format: KeyFormat) -> Result<PrivateKeyDer<'static>, String> {
    match format {
        KeyFormat::Pem => PrivateKeyDer::from_pem_file(path).map_err(|e| e.to_string()),
        KeyFormat::Der => {
            let der = std::fs::read(path).map_err(|e| e.to_string())?;
            PrivateKeyDer::try_from(der).map_err(str::to_string)
        }
    }
}

/// Reads the files `tls` names and builds the configuration; `sessions`
/// is the cache kept across `refresh_certs` (with `ssl_session_cache`).
/// `check`, a listener's `btls:`/`mtls:` prefix, overrides
/// `ssl_verify_mode`; an `mtls:` listener without `-o ssl_ca_cert` starts,
/// and refuses every client (memcached's OpenSSL, with no CA loaded,
/// verifies no certificate).
pub fn build(
    tls: &TlsSettings,
    sessions: Option<&Arc<Sessions>>,
    check: Option<PeerCheck>,
) -> Result<ServerConfig, String> {
    let chain = tls
        .chain_cert
        .as_deref()
        .ok_or("Error loading the certificate chain: -Z needs -o ssl_chain_cert=FILE")?;
    let certs = certificates(chain).map_err(|e| {
        format!(
            "Error loading the certificate chain: {} : {e}",
            chain.display()
        )
    })?;
    let key_path = tls.key.as_deref().unwrap_or(chain);
    let key = private_key(key_path, tls.keyformat)
        .map_err(|e| format!("Error loading the key: {} : {e}", key_path.display()))?;
    let provider = Arc::new(provider(tls.ciphers.as_deref())?);
    let versions: &[&rustls::SupportedProtocolVersion] = if tls.min_version >= 3 {
        &[&rustls::version::TLS13]
    } else {
        &[&rustls::version::TLS13, &rustls::version::TLS12]
    };
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .map_err(|e| format!("Error setting the TLS versions: {e}"))?;
    let mode = match check {
        None => tls.verify_mode,
        Some(PeerCheck::None) => VerifyMode::None,
        Some(PeerCheck::Required) => VerifyMode::Require,
    };
    let builder = match (mode, &tls.ca_cert) {
        (VerifyMode::None, _) => builder.with_no_client_auth(),
        (_, None) if check.is_some() => {
            builder.with_client_cert_verifier(Arc::new(NoTrustedIssuer(provider.clone())))
        }
        (mode, None) => {
            return Err(format!(
                "Error loading the CA certificate: ssl_verify_mode={} verifies client certificates against -o ssl_ca_cert=FILE, which is not given",
                mode as u8
            ))
        }
        (mode, Some(ca)) => {
            let ca_error = |e: String| {
                format!("Error loading the CA certificate: {} : {e}", ca.display())
            };
            let mut roots = RootCertStore::empty();
            let (added, _) = roots.add_parsable_certificates(certificates(ca).map_err(ca_error)?);
            if added == 0 {
                return Err(ca_error("no usable CA certificate".into()));
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = match mode {
                VerifyMode::Request => verifier.allow_unauthenticated(),
                _ => verifier,
            };
            builder.with_client_cert_verifier(verifier.build().map_err(|e| ca_error(e.to_string()))?)
        }
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("Error validating the certificate: {e}"))?;
    match sessions {
        Some(cache) => config.session_storage = cache.clone(),
        None => {
            config.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
            config.send_tls13_tickets = 0;
        }
    }
    Ok(config)
}

/// The client-certificate check of an `mtls:` listener without a CA
/// certificate: a certificate is required, and none is trusted.
#[derive(Debug)]
struct NoTrustedIssuer(Arc<CryptoProvider>);

impl rustls::server::danger::ClientCertVerifier for NoTrustedIssuer {
    fn root_hint_subjects(&self) -> &[rustls::DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: rustls_pki_types::UnixTime,
    ) -> Result<rustls::server::danger::ClientCertVerified, rustls::Error> {
        Err(rustls::Error::InvalidCertificate(
            rustls::CertificateError::UnknownIssuer,
        ))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
