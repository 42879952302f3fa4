//! Where one mail server listens and how its connections are secured: plain, TLS from the
//! first byte (IMAPS on 993, POP3S on 995, SMTPS on 465), or plain then upgraded by the
//! protocol's STARTTLS (IMAP `STARTTLS`, POP3 `STLS`, SMTP and LMTP `STARTTLS`).
//!
//! ```text
//!  imap://host  ──► Endpoint { addr, host, Plain }     (--starttls: StartTls)
//!  imaps://host ──► Endpoint { addr, host, Implicit }
//! ```
//!
//! The clients ([`super::imap`], [`super::pop3`], [`super::smtp`]) take an endpoint and do
//! the handshake where its security says: right after the TCP connect for `Implicit`, after
//! the greeting (SMTP and LMTP: after EHLO or LHLO) for `StartTls`. The server's certificate
//! is verified as its `trust` says ([`crate::target::tls`]: against the system's roots by
//! default, `--cacert`, or not with `--insecure`); `host` is the name it must carry, also
//! sent for SNI (an IP address sends none).

use crate::target::tls::Trust;
use serde::Serialize;
use std::net::SocketAddr;

/// How a connection to a server is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Security {
    /// No TLS.
    Plain,
    /// TLS from the first byte (`imaps://`, `pop3s://`, `smtps://`).
    Implicit,
    /// Plain, then upgraded by the protocol's STARTTLS before anything else is said.
    StartTls,
}

impl Security {
    /// As the record names it: `off`, `implicit` or `starttls`.
    pub fn name(self) -> &'static str {
        match self {
            Security::Plain => "off",
            Security::Implicit => "implicit",
            Security::StartTls => "starttls",
        }
    }

    /// Whether connections are encrypted at all.
    pub fn is_tls(self) -> bool {
        self != Security::Plain
    }
}

/// One server: its address, its name for TLS, and how connections to it are secured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: SocketAddr,
    /// The name sent for SNI (as written in the URL; an IP address is fine).
    pub host: String,
    pub security: Security,
    /// How far the server's certificate is trusted, when TLS is on.
    pub trust: Trust,
}

impl Endpoint {
    /// A plain endpoint named by its address.
    pub fn plain(addr: SocketAddr) -> Endpoint {
        Endpoint {
            addr,
            host: addr.ip().to_string(),
            security: Security::Plain,
            trust: Trust::unverified(),
        }
    }

    /// The endpoint as a URL: `scheme` is the plain protocol's (`imap`, `pop3`, `smtp`,
    /// `lmtp`), which gains an `s` for implicit TLS (`imaps://127.0.0.1:993`). STARTTLS
    /// keeps the plain scheme, as the URLs given for it do.
    pub fn url(&self, scheme: &str) -> String {
        let s = if self.security == Security::Implicit {
            "s"
        } else {
            ""
        };
        format!("{scheme}{s}://{}", self.addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_carry_the_implicit_scheme() {
        let mut e = Endpoint::plain("127.0.0.1:993".parse().unwrap());
        assert_eq!(e.host, "127.0.0.1");
        assert_eq!(e.url("imap"), "imap://127.0.0.1:993");
        e.security = Security::Implicit;
        assert_eq!(e.url("imap"), "imaps://127.0.0.1:993");
        e.security = Security::StartTls;
        assert_eq!(e.url("pop3"), "pop3://127.0.0.1:993");
        assert_eq!(Security::StartTls.name(), "starttls");
        assert!(!Security::Plain.is_tls());
    }
}
