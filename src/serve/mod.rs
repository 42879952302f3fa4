//! `perflab serve`: the archive in a browser, read-only.
//!
//! ```text
//! browser ──HTTP──► Server (accept; one thread per request, at most MAX_IN_FLIGHT)
//!                     └─ routes::answer ──► runs_page   /            the runs, to sort, filter and pick
//!                                      ├─► report      /runs/ID     the run's report (report::to_html)
//!                                      ├─► files       /runs/ID/run.json, /runs/ID/intervals.jsonl?from=N
//!                                      ├─► live_page   /live/ID     charts filling in from the interval file
//!                                      └─► compare, report, landscape of picked runs
//! ```
//!
//! It reads the runs through [`RunStore`]: a results folder opened read-only
//! (`archive::ReadOnlyArchive`, which writes nothing: no index row refreshed, no report
//! saved, and runs named only by their folder names, so no request reaches a file outside
//! the archive), or a shared store on sessions whose transactions are all read-only
//! (`shared_store`, connected as a member of `perflab_reader`). A shared store has no
//! interval files: its runs' live pages show the record alone. It binds to loopback unless told otherwise, and then
//! answers only requests addressed to a loopback name (a page elsewhere cannot reach it by
//! pointing a DNS name at 127.0.0.1).

mod files;
mod live_page;
mod page;
mod routes;
mod runs_page;

use crate::archive::RunStore;
use crate::http::{self, BadRequest, Response};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Requests answered at once; more get a 503 rather than a thread each.
const MAX_IN_FLIGHT: usize = 32;

/// A bound server, not yet answering.
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
}

impl Server {
    /// Binds `listen` (`127.0.0.1:8080`, `[::1]:8080`, `localhost:8080`, or `:8080` for every
    /// interface), or says in one line why not.
    pub fn bind(listen: &str) -> Result<Server, String> {
        let (listener, addr) = http::listen("--listen", listen, 8080)?;
        Ok(Server { listener, addr })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Answers requests until the process ends (Ctrl-C: nothing to save).
    pub fn run(self, archive: Box<dyn RunStore>) {
        let archive: Arc<dyn RunStore> = Arc::from(archive);
        let in_flight = Arc::new(AtomicUsize::new(0));
        let loopback = self.addr.ip().is_loopback();
        http::accept_forever(&self.listener, |conn| {
            if in_flight.fetch_add(1, Ordering::SeqCst) >= MAX_IN_FLIGHT {
                in_flight.fetch_sub(1, Ordering::SeqCst);
                let mut conn = conn;
                let _ = conn.set_write_timeout(Some(http::TIMEOUT));
                let busy = Response::text(503, "busy: too many requests at once; try again\n");
                let _ = busy.send(&mut conn, "GET");
                return;
            }
            let (archive, done) = (archive.clone(), in_flight.clone());
            let spawned = std::thread::Builder::new()
                .name("perflab-serve".into())
                .spawn(move || {
                    serve_one(conn, archive.as_ref(), loopback);
                    done.fetch_sub(1, Ordering::SeqCst);
                });
            if spawned.is_err() {
                in_flight.fetch_sub(1, Ordering::SeqCst);
            }
        });
    }
}

fn serve_one(mut conn: TcpStream, archive: &dyn RunStore, loopback: bool) {
    let request = match http::read_request(&conn) {
        Ok(r) => r,
        Err(BadRequest::Gone) => return,
        Err(BadRequest::Answer(r)) => {
            let _ = r.send(&mut conn, "GET");
            return;
        }
    };
    let answer = if loopback && !addressed_to_loopback(request.header("host")) {
        Response::text(
            421,
            "this server answers only to localhost, 127.0.0.1 or [::1] (perflab serve --listen ADDR for more)\n",
        )
    } else if !request.is_read() {
        Response::text(405, "the archive is read-only here: GET and HEAD only\n")
    } else {
        routes::answer(archive, &request)
    };
    let _ = answer
        .with_header("X-Content-Type-Options", "nosniff")
        .with_header("Referrer-Policy", "no-referrer")
        .send(&mut conn, &request.method);
}

/// Whether a request's Host names a loopback address (any port); no Host at all is an
/// HTTP/1.0 client on this machine.
fn addressed_to_loopback(host: Option<&str>) -> bool {
    let Some(host) = host else { return true };
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_reach_a_loopback_server() {
        for ok in [
            None,
            Some("localhost:8080"),
            Some("LOCALHOST"),
            Some("127.0.0.1:1"),
            Some("[::1]:8080"),
        ] {
            assert!(addressed_to_loopback(ok), "{ok:?}");
        }
        for bad in [
            "evil.example:8080",
            "10.0.0.1:8080",
            "localhost.evil.example",
        ] {
            assert!(!addressed_to_loopback(Some(bad)), "{bad}");
        }
    }
}
