//! Logging in: the server's greeting, TLS when asked for, the handshake response, and the
//! password exchange (`mysql_native_password`, `caching_sha2_password`), up to the server's
//! OK. The packets and scrambles are `mysql_common`'s.

use super::{
    CLIENT_MAX_PACKET, Login, Stream, TlsChoice, WireConn, WireError, garbled, ok_packet,
    server_error,
};
use crate::target::tls_stream::TlsStream;
use mysql_common::constants::{CapabilityFlags, MariadbCapabilities};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    AuthPlugin, AuthSwitchRequest, HandshakePacket, HandshakeResponse, SslRequest,
};
use mysql_common::proto::MySerialize;

/// Opens a session on `stream`: the handshake, TLS when asked for, the login.
pub fn connect(stream: Stream, login: &Login<'_>) -> Result<WireConn, WireError> {
    let local = matches!(stream, Stream::Unix(_));
    let mut c = WireConn::new(stream);
    c.private = local;
    c.read_packet()?;
    if c.packet().first() == Some(&0xFF) {
        return Err(server_error(c.packet()));
    }
    let payload = c.packet().to_vec();
    let hs: HandshakePacket<'_> = ParseBuf(&payload)
        .parse(())
        .map_err(|e| garbled(format!("the server's greeting: {e}")))?;
    if hs.protocol_version() != 10 {
        return Err(garbled(format!(
            "protocol version {} (perflab speaks 10)",
            hs.protocol_version()
        )));
    }
    let offered = hs.capabilities();
    if !offered.contains(CapabilityFlags::CLIENT_PROTOCOL_41) {
        return Err(garbled("the server does not speak protocol 4.1"));
    }
    let wanted = CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_LONG_PASSWORD
        | CapabilityFlags::CLIENT_LONG_FLAG
        | CapabilityFlags::CLIENT_TRANSACTIONS
        | CapabilityFlags::CLIENT_LOCAL_FILES
        | CapabilityFlags::CLIENT_MULTI_STATEMENTS
        | CapabilityFlags::CLIENT_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PS_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
        | CapabilityFlags::CLIENT_FOUND_ROWS
        | CapabilityFlags::CLIENT_DEPRECATE_EOF;
    c.caps = wanted & offered;
    // Said in the SslRequest too: MariaDB keeps that packet's flags for the session.
    if login.database.is_some() {
        c.caps |= CapabilityFlags::CLIENT_CONNECT_WITH_DB;
    }
    c.id = hs.connection_id();
    let mut nonce = hs.scramble_1_ref().to_vec();
    nonce.extend_from_slice(hs.scramble_2_ref().unwrap_or(&[]));
    nonce.resize(20, 0);
    let plugin = match hs.auth_plugin() {
        Some(AuthPlugin::CachingSha2Password) => AuthPlugin::CachingSha2Password,
        _ => AuthPlugin::MysqlNativePassword,
    };
    let version = hs.server_version_parsed().unwrap_or((0, 0, 0));
    // MariaDB's own capabilities, offered by a server that leaves out the one MySQL flag
    // (`CLIENT_MYSQL`, once `CLIENT_LONG_PASSWORD`): columns of an execution sent only when
    // they change, as the mysql crate and libmariadb ask.
    let maria = match hs.maria_db_server_version_parsed().is_some()
        && !offered.contains(CapabilityFlags::CLIENT_LONG_PASSWORD)
    {
        true => hs.mariadb_ext_capabilities() & MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA,
        false => MariadbCapabilities::empty(),
    };
    c.cache_metadata = maria.contains(MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA);
    let config = match (&login.tls, offered.contains(CapabilityFlags::CLIENT_SSL)) {
        (TlsChoice::Off, _) => None,
        (_, _) if local => None,
        (TlsChoice::Preferred(c) | TlsChoice::Required(c), true) => Some(c.clone()),
        (TlsChoice::Preferred(_), false) => None,
        (TlsChoice::Required(_), false) => return Err(WireError::NoTls),
    };
    if let Some(config) = config {
        c.caps |= CapabilityFlags::CLIENT_SSL;
        let request = SslRequest::new(c.caps, CLIENT_MAX_PACKET, 45);
        c.start();
        request.serialize(&mut c.out);
        c.send()?;
        let Stream::Tcp(tcp) = std::mem::replace(&mut c.stream, Stream::Closed) else {
            return Err(WireError::Refused("TLS over a Unix socket".into()));
        };
        let tls =
            TlsStream::connect_with(tcp, login.server_name, config).map_err(WireError::Tls)?;
        c.stream = Stream::Tls(Box::new(tls));
        c.private = true;
    }
    let data = plugin.gen_data(login.password, &nonce);
    let mut scramble = Vec::new();
    if let Some(d) = &data {
        d.serialize(&mut scramble);
    }
    let response = HandshakeResponse::new(
        Some(scramble),
        version,
        Some(login.user.as_bytes()),
        login.database.map(str::as_bytes),
        Some(plugin.clone()),
        c.caps,
        None,
        CLIENT_MAX_PACKET,
    )
    .with_mariadb_ext_capabilities(maria);
    c.start();
    response.serialize(&mut c.out);
    c.send()?;
    c.authenticate(plugin, nonce, login.password)?;
    Ok(c)
}

impl WireConn {
    /// The rest of the login, after the handshake response: an auth switch, caching_sha2's
    /// fast or full authentication, until the server's OK.
    fn authenticate(
        &mut self,
        mut plugin: AuthPlugin<'static>,
        mut nonce: Vec<u8>,
        password: Option<&str>,
    ) -> Result<(), WireError> {
        let mut switched = false;
        loop {
            self.read_packet()?;
            let p = self.packet();
            match (p.first().copied(), p.get(1).copied()) {
                (Some(0x00), _) => {
                    self.status = ok_packet(p)?.1;
                    return Ok(());
                }
                (Some(0xFF), _) => return Err(server_error(p)),
                (Some(0xFE), _) if !switched => {
                    switched = true;
                    let owned = p.to_vec();
                    let switch: AuthSwitchRequest<'_> = ParseBuf(&owned)
                        .parse(())
                        .map_err(|e| garbled(format!("an auth switch request: {e}")))?;
                    plugin = match switch.auth_plugin() {
                        AuthPlugin::MysqlNativePassword => AuthPlugin::MysqlNativePassword,
                        AuthPlugin::CachingSha2Password => AuthPlugin::CachingSha2Password,
                        other => {
                            return Err(WireError::Refused(format!(
                                "the server asks for the authentication method {}, which perflab does not speak (it speaks mysql_native_password and caching_sha2_password)",
                                String::from_utf8_lossy(other.as_bytes())
                            )));
                        }
                    };
                    nonce = switch.plugin_data().to_vec();
                    let mut data = Vec::new();
                    if let Some(d) = plugin.gen_data(password, &nonce) {
                        d.serialize(&mut data);
                    }
                    self.send_bytes(&data)?;
                }
                // caching_sha2_password: the server had the password's hash cached.
                (Some(0x01), Some(0x03)) if plugin == AuthPlugin::CachingSha2Password => {}
                // Full authentication: the password itself, in the clear over TLS or a
                // socket, else encrypted with the server's RSA key.
                (Some(0x01), Some(0x04)) if plugin == AuthPlugin::CachingSha2Password => {
                    let mut pass = password.unwrap_or("").as_bytes().to_vec();
                    pass.push(0);
                    if self.private {
                        self.send_bytes(&pass)?;
                    } else if nonce.is_empty() {
                        return Err(garbled("caching_sha2_password without a nonce"));
                    } else {
                        self.send_bytes(&[0x02])?;
                        self.read_packet()?;
                        let key = self.packet().get(1..).unwrap_or(&[]).to_vec();
                        for (i, b) in pass.iter_mut().enumerate() {
                            *b ^= nonce[i % nonce.len()];
                        }
                        let sealed = encrypt(&pass, &key)?;
                        self.send_bytes(&sealed)?;
                    }
                }
                _ => return Err(garbled("an unexpected packet during authentication")),
            }
        }
    }
}

/// The password encrypted with the server's RSA key (PEM). The library panics on a key it
/// cannot read; that is caught and said in one line.
fn encrypt(pass: &[u8], key: &[u8]) -> Result<Vec<u8>, WireError> {
    let valid = std::str::from_utf8(key).is_ok_and(|k| k.contains("-----BEGIN"));
    if !valid {
        return Err(garbled("the server's RSA public key is not PEM"));
    }
    std::panic::catch_unwind(|| mysql_common::crypto::encrypt(pass, key)).map_err(|_| {
        garbled("the server's RSA public key cannot be read; connect with ssl-mode=REQUIRED")
    })
}
