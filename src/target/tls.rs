//! TLS for the servers perflab connects to, and how far it trusts them: one setting, [`Trust`],
//! shared by PostgreSQL (libpq's `sslmode`, `sslrootcert`, `sslcert`, `sslkey`), Redis
//! (`rediss://` with `--cacert`, `--insecure`, `--cert`, `--key`, redis-cli's names), the
//! mail clients (`imaps://`, `pop3s://`, `smtps://`, `--starttls`, the same options) and
//! MySQL (`ssl-mode`, `ssl-ca`, `ssl-cert`, `ssl-key`).
//!
//! ```text
//!  sslmode / --insecure ─► Verify { Off | Chain | Full }     how far the certificate is checked
//!  sslrootcert / --cacert ► Roots  { System | File }          what it must chain to
//!  sslcert+sslkey / --cert+--key ► Identity                   the client's own certificate
//!                       │
//!                       ▼
//!  Trust::config() ─► rustls ClientConfig (one per Trust, cached; per server with sessions)
//!  Trust::describe() ─► the record's `tls` setting ("verified: chain to ca.pem, host name")
//!  refusal() ─► one line from a failed handshake: unknown issuer, expired, host name, and the
//!               option that fixes it (the caller's spelling: [`Spelling`])
//! ```
//!
//! Why these defaults: `rediss://` and mail TLS verify against the system's roots, as
//! redis-cli and every mail client do, so a password is never sent to a man in the middle
//! without the user saying so (`--insecure`). PostgreSQL keeps libpq's default, `prefer`,
//! which encrypts without verifying; `verify-ca` and `verify-full` verify.
//!
//! rustls with the *ring* provider: pure Rust plus a little C built by `cc`, no system
//! OpenSSL to install. The system's roots come from
//! `rustls-native-certs`, which honours `SSL_CERT_FILE` and `SSL_CERT_DIR` as OpenSSL does.

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// How far the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verify {
    /// Encrypted, the certificate taken as it is (libpq's `prefer` and `require`,
    /// `--insecure`, MySQL's `REQUIRED`). The handshake's signatures are still checked, so
    /// the server holds the key of the certificate it showed.
    Off,
    /// The certificate chains to a trusted root; its host name is not checked (libpq's
    /// `verify-ca`, MySQL's `VERIFY_CA`).
    Chain,
    /// The chain and the host name (libpq's `verify-full`, MySQL's `VERIFY_IDENTITY`, and
    /// the default of `rediss://` and mail TLS).
    Full,
}

/// What a verified certificate must chain to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Roots {
    /// The system's trusted roots (`sslrootcert=system`; `SSL_CERT_FILE` and `SSL_CERT_DIR`
    /// name others, as for OpenSSL).
    System,
    /// The certificates in one PEM file (`sslrootcert=FILE`, `--cacert FILE`).
    File(PathBuf),
}

/// The client's own certificate and key, for servers that ask for one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// How a connection's TLS trusts the server, and what it shows of itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Trust {
    pub verify: Verify,
    pub roots: Roots,
    pub identity: Option<Identity>,
}

/// The options that change a [`Trust`], as the caller's users spell them, for messages.
#[derive(Debug, Clone, Copy)]
pub struct Spelling {
    /// Names the roots to trust (`--cacert FILE`, `sslrootcert=FILE`).
    pub roots: &'static str,
    /// Turns verification off (`--insecure`, `sslmode=require`).
    pub off: &'static str,
    /// Names the client certificate (`--cert FILE --key FILE`, `sslcert=FILE&sslkey=FILE`).
    pub identity: &'static str,
}

/// redis-cli's and curl's names: Redis and mail.
pub const CLI: Spelling = Spelling {
    roots: "--cacert FILE",
    off: "--insecure",
    identity: "--cert FILE --key FILE",
};

/// libpq's names: PostgreSQL.
pub const LIBPQ: Spelling = Spelling {
    roots: "sslrootcert=FILE (or sslrootcert=system)",
    off: "sslmode=require",
    identity: "sslcert=FILE&sslkey=FILE",
};

/// The MySQL clients' names: MySQL and MariaDB URLs.
pub const MYSQL: Spelling = Spelling {
    roots: "ssl-ca=FILE",
    off: "ssl-mode=REQUIRED",
    identity: "ssl-cert=FILE&ssl-key=FILE",
};

/// A TLS setting that cannot be used: one line naming the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TlsError(pub String);

impl Trust {
    /// Encrypted, not verified: libpq's `prefer`/`require`, `--insecure`.
    pub fn unverified() -> Trust {
        Trust {
            verify: Verify::Off,
            roots: Roots::System,
            identity: None,
        }
    }

    /// Verified in full against `roots`.
    pub fn full(roots: Roots) -> Trust {
        Trust {
            verify: Verify::Full,
            roots,
            identity: None,
        }
    }

    /// The settings for this trust, shared by every connection that has it: built once (the
    /// roots and the client's key read then), or one line saying why not.
    pub fn config(&self) -> Result<Arc<rustls::ClientConfig>, TlsError> {
        static BY_TRUST: OnceLock<Mutex<HashMap<Trust, Arc<rustls::ClientConfig>>>> =
            OnceLock::new();
        let mut map = BY_TRUST
            .get_or_init(|| Mutex::new(HashMap::new()))
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = map.get(self) {
            return Ok(Arc::clone(c));
        }
        let config = Arc::new(self.build()?);
        map.insert(self.clone(), Arc::clone(&config));
        Ok(config)
    }

    /// [`Trust::config`] with a session cache of its own for the server at `addr`, as a
    /// client keeps one per server it talks to. rustls's cache is keyed by server name
    /// alone, so with one cache, the tickets of a host's IMAPS port would be offered to its
    /// POP3S port (which cannot resume them) and crowd out POP3S's own. Beyond
    /// [`SERVERS_CACHED`] servers, the shared settings (and cache) serve.
    pub fn config_for_server(
        &self,
        addr: SocketAddr,
    ) -> Result<Arc<rustls::ClientConfig>, TlsError> {
        type Key = (Trust, SocketAddr);
        static BY_SERVER: OnceLock<Mutex<HashMap<Key, Arc<rustls::ClientConfig>>>> =
            OnceLock::new();
        let base = self.config()?;
        let mut map = BY_SERVER
            .get_or_init(|| Mutex::new(HashMap::new()))
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let key = (self.clone(), addr);
        if let Some(c) = map.get(&key) {
            return Ok(Arc::clone(c));
        }
        if map.len() >= SERVERS_CACHED {
            return Ok(base);
        }
        let mut own = (*base).clone();
        own.resumption = rustls::client::Resumption::in_memory_sessions(256);
        let own = Arc::new(own);
        map.insert(key, Arc::clone(&own));
        Ok(own)
    }

    fn build(&self) -> Result<rustls::ClientConfig, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier: Arc<dyn ServerCertVerifier> = match self.verify {
            Verify::Off => Arc::new(Unverified(Arc::clone(&provider))),
            Verify::Chain | Verify::Full => {
                let roots = Arc::new(self.root_store()?);
                let webpki =
                    WebPkiServerVerifier::builder_with_provider(roots, Arc::clone(&provider))
                        .build()
                        .map_err(|e| TlsError(format!("TLS roots: {e}")))?;
                match self.verify {
                    Verify::Chain => Arc::new(ChainOnly(webpki)),
                    _ => webpki,
                }
            }
        };
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError(format!("TLS: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        match &self.identity {
            None => Ok(builder.with_no_client_auth()),
            Some(id) => {
                let (chain, key) = id.load()?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    TlsError(format!(
                        "the client certificate {} does not go with the key {}: {e}",
                        id.cert.display(),
                        id.key.display()
                    ))
                })
            }
        }
    }

    fn root_store(&self) -> Result<RootCertStore, TlsError> {
        let mut store = RootCertStore::empty();
        match &self.roots {
            Roots::File(path) => {
                for cert in read_certificates(path, "the CA file")? {
                    store.add(cert).map_err(|e| {
                        TlsError(format!(
                            "the CA file {}: a certificate cannot be used as a root: {e}",
                            path.display()
                        ))
                    })?;
                }
            }
            Roots::System => {
                let found = rustls_native_certs::load_native_certs();
                let (added, _) = store.add_parsable_certificates(found.certs);
                if added == 0 {
                    let why = found
                        .errors
                        .first()
                        .map_or_else(String::new, |e| format!(" ({e})"));
                    return Err(TlsError(format!(
                        "no trusted roots found on this system{why}; install ca-certificates, set SSL_CERT_FILE, or name the CA's certificate"
                    )));
                }
            }
        }
        Ok(store)
    }

    /// What the record and the terminal say of this trust, e.g. `verified (chain to ca.pem,
    /// host name); client certificate client.pem` or `encrypted, not verified`.
    pub fn describe(&self) -> String {
        let roots = match &self.roots {
            Roots::System => "the system's roots".to_string(),
            Roots::File(p) => p.display().to_string(),
        };
        let mut text = match self.verify {
            Verify::Off => "encrypted, the server's certificate not verified".to_string(),
            Verify::Chain => format!("verified: chain to {roots}; host name not checked"),
            Verify::Full => format!("verified: chain to {roots} and host name"),
        };
        if let Some(id) = &self.identity {
            text.push_str(&format!("; client certificate {}", id.cert.display()));
        }
        text
    }
}

/// Sessions cached per server by [`Trust::config_for_server`]: the most servers one process
/// keeps.
const SERVERS_CACHED: usize = 64;

impl Identity {
    /// Reads both files as [`Trust::config`] would, so a bad file is one line before any
    /// connection is tried.
    pub fn check(&self) -> Result<(), TlsError> {
        self.load().map(|_| ())
    }

    /// The certificate chain and the key, read from their files. The key's file must not be
    /// readable by group or others, as libpq and ssh insist, unless it is root's and only
    /// its group reads it (the `ssl-cert` group's way on Debian).
    fn load(&self) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), TlsError> {
        let chain = read_certificates(&self.cert, "the client certificate")?;
        check_private(&self.key)?;
        let key = PrivateKeyDer::from_pem_file(&self.key).map_err(|e| {
            TlsError(format!(
                "the client key {}: {}; give the PEM private key that goes with {}",
                self.key.display(),
                pem_problem(&e),
                self.cert.display()
            ))
        })?;
        Ok((chain, key))
    }
}

/// The certificates in a PEM file, at least one, or one line saying why not.
fn read_certificates(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let unreadable = |why: String| TlsError(format!("{what} {}: {why}", path.display()));
    std::fs::metadata(path).map_err(|e| unreadable(e.to_string()))?;
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| unreadable(pem_problem(&e)))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| unreadable(pem_problem(&e)))?;
    if certs.is_empty() {
        return Err(unreadable(
            "no certificate in it; give a PEM file with -----BEGIN CERTIFICATE----- blocks".into(),
        ));
    }
    Ok(certs)
}

fn pem_problem(e: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    match e {
        Error::Io(io) => io.to_string(),
        Error::NoItemsFound => "no PEM block of that kind in it".into(),
        other => format!("not PEM ({other:?})"),
    }
}

/// Refuses a private key file that others may read: a key others can read is not private,
/// and libpq refuses it too (`chmod 600` is the fix).
fn check_private(path: &Path) -> Result<(), TlsError> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path)
        .map_err(|e| TlsError(format!("the client key {}: {e}", path.display())))?;
    let mode = meta.mode() & 0o777;
    let root_group_read = meta.uid() == 0 && mode & 0o037 == 0;
    if mode & 0o077 != 0 && !root_group_read {
        return Err(TlsError(format!(
            "the client key {} may be read by others (mode {mode:o}); chmod 600 it",
            path.display()
        )));
    }
    Ok(())
}

/// Why a TLS handshake failed, in one line that names the fix, when it failed on the
/// server's certificate; `None` for other failures (the caller says those its own way).
/// `e` is the error the handshake returned (rustls's, possibly inside an `io::Error`).
pub fn refusal(e: &(dyn std::error::Error + 'static), spelling: Spelling) -> Option<String> {
    let tls = tls_error(e)?;
    let rustls::Error::InvalidCertificate(cert) = tls else {
        if let rustls::Error::AlertReceived(alert) = tls {
            use rustls::AlertDescription as A;
            if matches!(
                alert,
                A::CertificateRequired | A::BadCertificate | A::UnknownCA | A::HandshakeFailure
            ) {
                return Some(format!(
                    "the server refused the TLS handshake ({alert:?}): it may want a client certificate ({}) that it trusts",
                    spelling.identity
                ));
            }
        }
        return None;
    };
    let why = match cert {
        CertificateError::UnknownIssuer => {
            "unknown issuer (it does not chain to a trusted root)".to_string()
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            "it has expired".to_string()
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "it is not valid yet (is this machine's clock right?)".to_string()
        }
        CertificateError::NotValidForName => "it is not for this host name".to_string(),
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => format!(
            "it is for {} and not for {}",
            if presented.is_empty() {
                "no name".to_string()
            } else {
                presented.join(", ")
            },
            expected.to_str()
        ),
        CertificateError::BadSignature => "a signature in its chain is wrong".to_string(),
        CertificateError::Revoked => "it has been revoked".to_string(),
        other => format!("{other:?}"),
    };
    Some(format!(
        "the server's certificate is not trusted: {why}; name its CA with {}, or connect without verifying with {}",
        spelling.roots, spelling.off
    ))
}

/// The rustls error inside `e`, if any (handshakes return it bare or inside an `io::Error`).
fn tls_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut next = Some(e);
    while let Some(err) = next {
        if let Some(t) = err.downcast_ref::<rustls::Error>() {
            return Some(t);
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && let Some(inner) = io.get_ref()
        {
            if let Some(t) = inner.downcast_ref::<rustls::Error>() {
                return Some(t);
            }
            next = inner.source();
            continue;
        }
        next = err.source();
    }
    None
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

/// libpq's `verify-ca`: the full check, except that a certificate for another host name
/// passes. Everything else (issuer, dates, signatures) is webpki's.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            // webpki checks the name last, after the chain and the dates passed.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_say_what_was_checked() {
        assert_eq!(
            Trust::unverified().describe(),
            "encrypted, the server's certificate not verified"
        );
        let mut t = Trust::full(Roots::File("ca.pem".into()));
        assert_eq!(t.describe(), "verified: chain to ca.pem and host name");
        t.verify = Verify::Chain;
        t.identity = Some(Identity {
            cert: "c.pem".into(),
            key: "k.pem".into(),
        });
        assert_eq!(
            t.describe(),
            "verified: chain to ca.pem; host name not checked; client certificate c.pem"
        );
    }

    #[test]
    fn a_missing_ca_file_is_one_line() {
        let t = Trust::full(Roots::File("/nonexistent/ca.pem".into()));
        let e = t.config().unwrap_err().0;
        assert!(e.starts_with("the CA file /nonexistent/ca.pem: "), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn certificate_errors_name_the_fix() {
        let e = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer),
        );
        let line = refusal(&e, CLI).unwrap();
        assert!(line.contains("unknown issuer"), "{line}");
        assert!(line.contains("--cacert FILE") && line.contains("--insecure"));
        let e = rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
            expected: ServerName::try_from("db.example").unwrap(),
            presented: vec!["DnsName(\"other\")".into()],
        });
        let line = refusal(&e, LIBPQ).unwrap();
        assert!(line.contains("not for db.example"), "{line}");
        assert!(line.contains("sslmode=require"));
        let other = std::io::Error::other("connection reset");
        assert!(refusal(&other, CLI).is_none());
    }
}
