//! The little HTTP/1.1 perflab speaks: one request per connection, GET and HEAD, answered and
//! closed. The metrics endpoint (`live::endpoint`) and `perflab serve` both stand on it.
//!
//! It is deliberately small: no keep-alive, no chunked bodies, no request bodies at all
//! (nothing perflab serves takes one). What it does take care over is the hostile or broken
//! client: a request line or header block past its limit, a client that stops sending (the
//! read times out), a path with encoded bytes, each ends in a status or a closed connection,
//! never a stuck thread or a panic.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// How long a client may take to send its request, and to take the answer.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// The longest request line or header line read.
const LINE_LIMIT: u64 = 8 * 1024;
/// The most header lines read.
const HEADER_LIMIT: usize = 100;

/// A request as read: the method, the path (percent-decoded, without the query) and the
/// query's pairs (decoded), and the headers perflab looks at.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    /// Header names in lower case, values trimmed.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The first value of the query parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn is_read(&self) -> bool {
        self.method == "GET" || self.method == "HEAD"
    }
}

/// Why a request could not be read: the answer to send, if the connection can still take
/// one.
#[derive(Debug, Clone, PartialEq)]
pub enum BadRequest {
    /// Nothing, or not HTTP: close without a word.
    Gone,
    /// An answer explains (400 or 431).
    Answer(Response),
}

/// Reads one request from `conn` (setting its timeouts).
pub fn read_request(conn: &TcpStream) -> Result<Request, BadRequest> {
    let _ = conn.set_read_timeout(Some(TIMEOUT));
    let _ = conn.set_write_timeout(Some(TIMEOUT));
    let mut reader = BufReader::new(conn.take(LINE_LIMIT * (HEADER_LIMIT as u64 + 2)));
    let line = read_line(&mut reader)?;
    let mut words = line.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (words.next(), words.next(), words.next())
    else {
        return Err(BadRequest::Answer(Response::text(
            400,
            "a request line is METHOD PATH HTTP/1.1\n",
        )));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(BadRequest::Gone);
    }
    let (raw_path, raw_query) = target.split_once('?').unwrap_or((target, ""));
    let Some(path) = decode(raw_path, false) else {
        return Err(BadRequest::Answer(Response::text(
            400,
            "the path is not valid percent-encoded UTF-8\n",
        )));
    };
    let query = raw_query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Some((decode(k, true)?, decode(v, true)?))
        })
        .collect();
    let mut headers = Vec::new();
    loop {
        let line = read_line(&mut reader)?;
        if line.is_empty() {
            break;
        }
        if headers.len() == HEADER_LIMIT {
            return Err(BadRequest::Answer(Response::text(
                431,
                "too many header lines\n",
            )));
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    Ok(Request {
        method: method.to_string(),
        path,
        query,
        headers,
    })
}

/// One line without its CRLF; a line past the limit is a 431, a closed or silent client
/// [`BadRequest::Gone`].
fn read_line(reader: &mut impl BufRead) -> Result<String, BadRequest> {
    let mut bytes = Vec::new();
    let mut limited = reader.take(LINE_LIMIT + 1);
    match limited.read_until(b'\n', &mut bytes) {
        Ok(0) | Err(_) => return Err(BadRequest::Gone),
        Ok(_) => {}
    }
    if bytes.last() != Some(&b'\n') {
        return Err(match bytes.len() as u64 > LINE_LIMIT {
            true => BadRequest::Answer(Response::text(431, "a request line is too long\n")),
            false => BadRequest::Gone,
        });
    }
    while matches!(bytes.last(), Some(b'\n' | b'\r')) {
        bytes.pop();
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Hands every connection `listener` accepts to `each`, for as long as the process lives. An
/// accept that fails (out of descriptors) waits a moment rather than spinning, so the
/// connections in flight can finish and free theirs.
pub fn accept_forever(listener: &std::net::TcpListener, mut each: impl FnMut(TcpStream)) {
    for conn in listener.incoming() {
        match conn {
            Ok(conn) => each(conn),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Listens on `listen` as a user wrote it for `option` (`--listen`, `--metrics-listen`;
/// `example_port` for the hint), or says in one line why not. Returns the listener and the
/// address it got (port 0 picks one).
pub fn listen(
    option: &str,
    listen: &str,
    example_port: u16,
) -> Result<(std::net::TcpListener, std::net::SocketAddr), String> {
    let addr = parse_listen(listen).ok_or_else(|| {
        format!(
            "{option} {listen:?}: give HOST:PORT, e.g. 127.0.0.1:{example_port} (or :{example_port} for every interface)"
        )
    })?;
    let listener = std::net::TcpListener::bind(addr)
        .map_err(|e| format!("{option} {listen}: cannot listen there: {e}; choose another port"))?;
    let addr = listener.local_addr().unwrap_or(addr);
    Ok((listener, addr))
}

/// A listening address as a user writes it: `HOST:PORT` (`127.0.0.1:8080`, `[::1]:8080`,
/// `localhost:8080`) or `:PORT` for every interface.
pub fn parse_listen(text: &str) -> Option<std::net::SocketAddr> {
    let text = text.trim();
    let full = match text.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => match text.rsplit_once(':') {
            Some((host, port)) if host.eq_ignore_ascii_case("localhost") => {
                format!("127.0.0.1:{port}")
            }
            _ => text.to_string(),
        },
    };
    full.parse().ok()
}

/// Percent-decoding (`+` is a space in a query); None for bytes that are not UTF-8 or a
/// broken escape.
pub fn decode(text: &str, query: bool) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' if query => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Percent-encoding of a query value or path segment: everything but unreserved characters.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// An answer: status, content type, extra headers and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub status: u16,
    pub content_type: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type: content_type.to_string(),
            headers: Vec::new(),
            body: body.into(),
        }
    }

    pub fn text(status: u16, body: &str) -> Response {
        Response::new(status, "text/plain; charset=utf-8", body)
    }

    pub fn html(body: String) -> Response {
        Response::new(200, "text/html; charset=utf-8", body)
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Sends the answer (the body only for methods other than HEAD) and closes.
    pub fn send(&self, conn: &mut TcpStream, method: &str) -> std::io::Result<()> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.status,
            reason(self.status),
            self.content_type,
            self.body.len()
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        conn.write_all(head.as_bytes())?;
        if method != "HEAD" {
            conn.write_all(&self.body)?;
        }
        conn.flush()
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        421 => "Misdirected Request",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// `raw` sent to a fresh listener, read back as the server sees it.
    fn parse(raw: &[u8]) -> Result<Request, BadRequest> {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let raw = raw.to_vec();
        let client = std::thread::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            let _ = c.write_all(&raw);
            let _ = c.shutdown(std::net::Shutdown::Write);
            let mut rest = Vec::new();
            let _ = c.read_to_end(&mut rest);
        });
        let (conn, _) = listener.accept().unwrap();
        let r = read_request(&conn);
        drop(conn);
        client.join().unwrap();
        r
    }

    #[test]
    fn requests_are_read_with_their_query_and_headers() {
        let r = parse(b"GET /a%20b/c?runs=x%2Cy&q=one+two&flag HTTP/1.1\r\nHost: Example:80\r\nAccept: */*\r\n\r\n").unwrap();
        assert_eq!(r.method, "GET");
        assert_eq!(r.path, "/a b/c");
        assert_eq!(r.param("runs"), Some("x,y"));
        assert_eq!(r.param("q"), Some("one two"));
        assert_eq!(r.param("flag"), Some(""));
        assert_eq!(r.header("host"), Some("Example:80"));
    }

    #[test]
    fn broken_requests_get_a_status_or_a_closed_connection() {
        assert_eq!(parse(b""), Err(BadRequest::Gone));
        assert_eq!(parse(b"GET / HTTP/1.1\r\nHost: x"), Err(BadRequest::Gone));
        assert_eq!(parse(b"GET / SPDY/3\r\n\r\n"), Err(BadRequest::Gone));
        let status = |raw: &[u8]| match parse(raw) {
            Err(BadRequest::Answer(r)) => r.status,
            other => panic!("{other:?}"),
        };
        assert_eq!(status(b"SSH-2.0-OpenSSH_9.2\r\n"), 400);
        assert_eq!(status(b"GET /%zz HTTP/1.1\r\n\r\n"), 400);
        assert_eq!(status(b"GET /%ff HTTP/1.1\r\n\r\n"), 400);
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(9000));
        assert_eq!(status(long.as_bytes()), 431);
        let many = format!("GET / HTTP/1.1\r\n{}\r\n", "X: y\r\n".repeat(101));
        assert_eq!(status(many.as_bytes()), 431);
    }

    #[test]
    fn listening_addresses() {
        let port = |t: &str| parse_listen(t).map(|a| a.to_string());
        assert_eq!(port(":8080").as_deref(), Some("0.0.0.0:8080"));
        assert_eq!(port("localhost:0").as_deref(), Some("127.0.0.1:0"));
        assert_eq!(port("[::1]:9").as_deref(), Some("[::1]:9"));
        assert_eq!(port("8080"), None);
        assert_eq!(port("example.com:80"), None);
    }

    #[test]
    fn encoding_round_trips() {
        for s in ["20261129-101010-abcd", "a b/c?d&e=f", "ünï"] {
            assert_eq!(decode(&encode(s), true).as_deref(), Some(s));
        }
    }
}
