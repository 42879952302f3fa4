//! The TLS options of the clients that name their servers by URL and take curl's and
//! redis-cli's option names for trust: Redis (`rediss://`) and mail (`imaps://`, `pop3s://`,
//! `smtps://`, `--starttls`). PostgreSQL and MySQL take theirs in the URL, as their own
//! clients do ([`crate::target::conninfo`], [`crate::sql::mysql`]).

use super::tls::{Identity, Roots, Trust, Verify};
use clap::Args;
use std::path::PathBuf;

/// `--cacert`, `--insecure`, `--cert`, `--key`: flattened into the kinds that use them.
#[derive(Debug, Clone, Default, Args)]
pub struct TlsArgs {
    /// TLS: trust the CA certificates in FILE (PEM) instead of the system's roots
    /// (SSL_CERT_FILE names other system roots)
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub cacert: Option<PathBuf>,
    /// TLS: encrypt without verifying the server's certificate (redis-cli's --insecure);
    /// anyone in between can then read the session, password included
    #[arg(long, conflicts_with = "cacert", help_heading = "TLS")]
    pub insecure: bool,
    /// TLS: the client certificate (PEM) for servers that ask for one; with --key
    #[arg(long, value_name = "FILE", requires = "key", help_heading = "TLS")]
    pub cert: Option<PathBuf>,
    /// TLS: the client certificate's private key (PEM, not readable by others); with --cert
    #[arg(long, value_name = "FILE", requires = "cert", help_heading = "TLS")]
    pub key: Option<PathBuf>,
}

impl TlsArgs {
    /// The trust these options ask for: verified in full against the system's roots unless
    /// told otherwise.
    pub fn trust(&self) -> Trust {
        Trust {
            verify: if self.insecure {
                Verify::Off
            } else {
                Verify::Full
            },
            roots: self.cacert.clone().map_or(Roots::System, Roots::File),
            identity: match (&self.cert, &self.key) {
                (Some(cert), Some(key)) => Some(Identity {
                    cert: cert.clone(),
                    key: key.clone(),
                }),
                _ => None,
            },
        }
    }

    /// Whether any option was given (for refusing them where there is no TLS).
    pub fn any(&self) -> bool {
        self.cacert.is_some() || self.insecure || self.cert.is_some()
    }
}
