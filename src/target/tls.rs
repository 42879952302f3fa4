//! TLS for the servers perflab connects to: PostgreSQL (as libpq does it for `sslmode=prefer`,
//! its default, and `require`), Redis (`rediss://`, as `redis-cli --tls --insecure`) and mail
//! servers (`imaps://`, `pop3s://`, `smtps://`, `--starttls`): the
//! session is encrypted, the server's certificate is not verified. For PostgreSQL, `prefer`
//! falls back to plain TCP when the server offers no TLS; `require` fails then; `disable` never
//! asks. `verify-ca` and `verify-full` are refused: perflab does not check certificates yet.
//! The negotiation (SSLRequest) is in [`crate::sql::postgres`]; the stream the
//! caches (`rediss://`) and the mail clients (IMAPS, POP3S, SMTPS, STARTTLS) use, blocking or
//! not, is [`crate::target::tls_stream`].
//!
//! rustls with the *ring* provider: pure Rust plus a little C built by `cc`, no system
//! OpenSSL to install, the same stack the MySQL driver uses.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The TLS settings every connection of the process shares.
pub fn config() -> Result<Arc<rustls::ClientConfig>, String> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            Ok(Arc::new(
                rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
                    .with_safe_default_protocol_versions()
                    .map_err(|e| format!("TLS: {e}"))?
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(Unverified(provider)))
                    .with_no_client_auth(),
            ))
        })
        .clone()
}

/// Sessions cached per server by [`config_for_server`]: the most servers one process keeps.
const SERVERS_CACHED: usize = 64;

/// The process's settings with a session cache of their own for the server at `addr`, as a
/// client keeps one per server it talks to. rustls's cache is keyed by server name alone,
/// so with one cache, the tickets of a host's IMAPS port would be offered to its POP3S port
/// (which cannot resume them) and crowd out POP3S's own. Beyond [`SERVERS_CACHED`] servers,
/// the shared settings (and cache) serve.
pub fn config_for_server(addr: SocketAddr) -> Result<Arc<rustls::ClientConfig>, String> {
    static BY_SERVER: OnceLock<Mutex<HashMap<SocketAddr, Arc<rustls::ClientConfig>>>> =
        OnceLock::new();
    let base = config()?;
    let mut map = BY_SERVER
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(c) = map.get(&addr) {
        return Ok(Arc::clone(c));
    }
    if map.len() >= SERVERS_CACHED {
        return Ok(base);
    }
    let mut own = (*base).clone();
    own.resumption = rustls::client::Resumption::in_memory_sessions(256);
    let own = Arc::new(own);
    map.insert(addr, Arc::clone(&own));
    Ok(own)
}

/// Accepts the server's certificate as it is (libpq's `require`), still checking that the
/// server holds its key: the handshake's signatures are verified.
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
