//! Filling the cache before the first step (`prepare`) and emptying it of perflab's keys
//! afterwards (`cleanup`): every key of the key space set (or deleted) once, pipelined over a
//! few connections in parallel, with progress.
//!
//! Each loader thread owns a contiguous slice of the keys and one connection, writes a batch
//! of requests in one write, then reads the batch's replies: the server is never more than a
//! batch ahead, so its socket buffers stay bounded however large the values.

use super::endpoint::{Control, EndpointError};
use super::protocol::{Command, Reply};
use super::session::Plan;
use crate::run::interrupt::is_interrupted;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Requests per write.
const BATCH: u64 = 256;
/// Loader threads (connections).
const LOADERS: u64 = 4;

/// What a load (or delete) pass did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    pub keys: u64,
    pub bytes: u64,
    /// Sets the server refused (out of memory ...), or deletes of keys that were not there.
    pub refused: u64,
    pub first_refusal: Option<String>,
    pub elapsed: Duration,
}

/// Sets (`Command::Set`, with the plan's values and ttl) or deletes (`Command::Delete`) every
/// key of the plan's key space on its server, each answer awaited at most `timeout`. `note`
/// is called about once a second with the share done.
pub fn every_key(
    plan: &Plan,
    command: Command,
    timeout: Duration,
    note: &dyn Fn(f64),
) -> Result<Loaded, EndpointError> {
    let started = Instant::now();
    let endpoint = &plan.endpoint;
    let count = plan.keys.count();
    let done = AtomicU64::new(0);
    let loaders = LOADERS.min(count.div_ceil(BATCH)).max(1);
    let results: Vec<Result<Loaded, EndpointError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..loaders)
            .map(|i| {
                let (lo, hi) = (count * i / loaders, count * (i + 1) / loaders);
                let done = &done;
                scope.spawn(move || load_slice(plan, command, timeout, lo..hi, done))
            })
            .collect();
        let mut last_note = Instant::now();
        while handles.iter().any(|h| !h.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
            if last_note.elapsed() >= Duration::from_secs(1) {
                last_note = Instant::now();
                note(done.load(Ordering::Relaxed) as f64 / count.max(1) as f64);
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(EndpointError::Protocol {
                        shown: endpoint.shown.clone(),
                        message: "a loader thread failed".into(),
                    })
                })
            })
            .collect()
    });
    let mut total = Loaded::default();
    for r in results {
        let r = r?;
        total.keys += r.keys;
        total.bytes += r.bytes;
        total.refused += r.refused;
        if total.first_refusal.is_none() {
            total.first_refusal = r.first_refusal;
        }
    }
    total.elapsed = started.elapsed();
    Ok(total)
}

/// One loader: keys `range` (positions in the key space) over one connection.
fn load_slice(
    plan: &Plan,
    command: Command,
    timeout: Duration,
    range: std::ops::Range<u64>,
    done: &AtomicU64,
) -> Result<Loaded, EndpointError> {
    let (endpoint, keys, sizes, values) = (&plan.endpoint, &plan.keys, &plan.sizes, &plan.values);
    let mut control = Control::open(endpoint, timeout)?;
    let protocol = endpoint.protocol;
    let mut out = Vec::with_capacity(1 << 20);
    let mut key = Vec::with_capacity(64);
    let mut loaded = Loaded::default();
    let mut at = range.start;
    while at < range.end {
        if is_interrupted() {
            return Err(EndpointError::Protocol {
                shown: endpoint.shown.clone(),
                message: "interrupted (Ctrl-C) while loading".into(),
            });
        }
        let end = (at + BATCH).min(range.end);
        out.clear();
        for pos in at..end {
            let index = keys.minimum + pos;
            keys.write_key(index, &mut key);
            let size = sizes.size_of(index);
            let value = if command == Command::Set {
                loaded.bytes += u64::from(size);
                values.of(index, size)
            } else {
                &[]
            };
            protocol.encode(&mut out, command, &key, value, plan.ttl, (pos - at) as u32);
        }
        control.send_raw(&out)?;
        for pos in at..end {
            match control.receive_reply(command, (pos - at) as u32)? {
                Ok(Reply::Done) => {}
                Ok(Reply::Miss) if command == Command::Delete => loaded.refused += 1,
                Ok(other) => {
                    loaded.refused += 1;
                    loaded
                        .first_refusal
                        .get_or_insert_with(|| format!("unexpected answer {other:?}"));
                }
                Err(message) => {
                    loaded.refused += 1;
                    loaded.first_refusal.get_or_insert(message);
                }
            }
        }
        loaded.keys += end - at;
        done.fetch_add(end - at, Ordering::Relaxed);
        at = end;
    }
    Ok(loaded)
}
