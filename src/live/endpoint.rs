//! `--metrics-listen ADDR`: a small HTTP server on its own thread that answers
//! `GET /metrics` with the figures of [`super::metrics`], for Prometheus (or anything that
//! scrapes its format) to read during a run.
//!
//! It binds before the run starts, so a bad or busy address is one line and exit code 2, not
//! a run without its metrics. Only `/metrics` answers (and `/` with a pointer to it); each
//! connection serves one request and closes. When the command ends, a scraper that was
//! reading the endpoint gets one more scrape of the final figures: perflab waits for it, up to
//! twice the interval it saw between scrapes (at most 30 s), so the last counters Prometheus
//! stores are the record's.

use super::metrics::Metrics;
use crate::http::{self, Response};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The longest perflab waits for a last scrape at the end.
const LAST_SCRAPE_LIMIT: Duration = Duration::from_secs(30);

/// When the endpoint was read, for the wait at the end.
#[derive(Debug, Default)]
struct Scrapes {
    count: u64,
    last: Option<Instant>,
    /// The time between the last two scrapes.
    period: Option<Duration>,
}

/// The listening endpoint; the figures it serves are shared with the run's observer.
pub struct Endpoint {
    pub addr: SocketAddr,
    pub metrics: Arc<Mutex<Metrics>>,
    scrapes: Arc<(Mutex<Scrapes>, Condvar)>,
}

impl Endpoint {
    /// Binds `addr` (`127.0.0.1:9464`, `[::1]:9464`, `:9464` for every interface) and
    /// starts serving, or says in one line why not.
    pub fn bind(addr: &str) -> Result<Endpoint, String> {
        let (listener, addr) = http::listen("--metrics-listen", addr, 9464)?;
        let metrics = Arc::new(Mutex::new(Metrics::default()));
        let scrapes = Arc::new((Mutex::new(Scrapes::default()), Condvar::new()));
        let (m, s) = (metrics.clone(), scrapes.clone());
        std::thread::Builder::new()
            .name("perflab-metrics".into())
            .spawn(move || {
                http::accept_forever(&listener, |conn| serve(conn, &m, &s));
            })
            .map_err(|e| format!("--metrics-listen: cannot start its thread: {e}"))?;
        Ok(Endpoint {
            addr,
            metrics,
            scrapes,
        })
    }

    /// The command is done: if a scraper has been reading, waits for its next scrape (the
    /// final figures), up to twice its period. Returns how long it waited, if it did.
    pub fn last_scrape(&self, say: &dyn Fn(&str)) -> Option<Duration> {
        let (lock, ready) = &*self.scrapes;
        let guard = lock.lock().ok()?;
        let seen = guard.count;
        // Not scraped at all: nobody to wait for. Scraped once (a scraper whose second visit
        // has not come yet, or somebody with curl): a short wait; on a period: two of them.
        guard.last?;
        let period = guard.period.unwrap_or(Duration::from_millis(2500));
        let limit = (period * 2).min(LAST_SCRAPE_LIMIT);
        say(&format!(
            "metrics: waiting up to {:.0} s for the last scrape of {}",
            limit.as_secs_f64().ceil(),
            self.addr
        ));
        let start = Instant::now();
        let _unused = ready
            .wait_timeout_while(guard, limit, |s| s.count == seen)
            .ok()?;
        Some(start.elapsed())
    }
}

/// Answers one request.
fn serve(mut conn: TcpStream, metrics: &Mutex<Metrics>, scrapes: &(Mutex<Scrapes>, Condvar)) {
    let request = match http::read_request(&conn) {
        Ok(r) => r,
        Err(http::BadRequest::Gone) => return,
        Err(http::BadRequest::Answer(r)) => {
            let _ = r.send(&mut conn, "GET");
            return;
        }
    };
    let scrape = request.is_read() && request.path == "/metrics";
    let answer = match request.path.as_str() {
        _ if !request.is_read() => Response::text(405, "only GET and HEAD\n"),
        "/metrics" => {
            let openmetrics = request
                .header("accept")
                .is_some_and(|a| a.contains("application/openmetrics-text"));
            let body = metrics
                .lock()
                .map(|m| m.render(openmetrics))
                .unwrap_or_default();
            let kind = match openmetrics {
                true => "application/openmetrics-text; version=1.0.0; charset=utf-8",
                false => "text/plain; version=0.0.4; charset=utf-8",
            };
            Response::new(200, kind, body)
        }
        "/" => Response::text(200, "perflab: the run's figures are at /metrics\n"),
        _ => Response::text(404, "not found: try /metrics\n"),
    };
    if answer.send(&mut conn, &request.method).is_ok() && scrape {
        let (lock, ready) = scrapes;
        if let Ok(mut s) = lock.lock() {
            let now = Instant::now();
            if let Some(last) = s.last {
                s.period = Some(now - last);
            }
            s.last = Some(now);
            s.count += 1;
            ready.notify_all();
        }
    }
}
