//! TLS for the servers perflab connects to: PostgreSQL (as libpq does it for `sslmode=prefer`,
//! its default, and `require`) and Redis (`rediss://`, as `redis-cli --tls --insecure`): the
//! session is encrypted, the server's certificate is not verified. For PostgreSQL, `prefer`
//! falls back to plain TCP when the server offers no TLS; `require` fails then; `disable` never
//! asks. `verify-ca` and `verify-full` are refused: perflab does not check certificates yet.
//! The negotiation (SSLRequest) is in [`crate::workload::oltp::postgres`]; the non-blocking
//! stream the caches use is in [`crate::workload::kv::endpoint`].
//!
//! rustls with the *ring* provider: pure Rust plus a little C built by `cc`, no system
//! OpenSSL to install, the same stack the MySQL driver uses.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::sync::{Arc, OnceLock};

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
