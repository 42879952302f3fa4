//! Filling the cache before the first step (`prepare`) and emptying it of perflab's keys
//! afterwards (`cleanup`): every key of the key space set (or deleted) once, pipelined over a
//! few connections in parallel, with progress.
//!
//! Each loader thread owns a contiguous slice of the keys and one connection to each shard
//! (opened when its first key there comes up): it sorts a batch of requests by shard (the
//! plan's [`Router`](super::shard::Router): ketama or the cluster's slot map), writes each
//! shard's part in one write, then reads the replies: no server is ever more than a batch
//! ahead, so socket buffers stay bounded however large the values.

use super::endpoint::{Control, EndpointError};
use super::protocol::{Command, Reply};
use super::session::Plan;
use crate::stop::Stop;
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
    stop: &Stop,
) -> Result<Loaded, EndpointError> {
    let started = Instant::now();
    let shown = plan.shown();
    let count = plan.keys.count();
    let done = AtomicU64::new(0);
    let loaders = LOADERS.min(count.div_ceil(BATCH)).max(1);
    let results: Vec<Result<Loaded, EndpointError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..loaders)
            .map(|i| {
                let (lo, hi) = (count * i / loaders, count * (i + 1) / loaders);
                let done = &done;
                scope.spawn(move || load_slice(plan, command, timeout, lo..hi, done, stop))
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
                        shown: shown.clone(),
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

/// One loader: keys `range` (positions in the key space) over one connection per shard.
fn load_slice(
    plan: &Plan,
    command: Command,
    timeout: Duration,
    range: std::ops::Range<u64>,
    done: &AtomicU64,
    stop: &Stop,
) -> Result<Loaded, EndpointError> {
    let (keys, sizes, values) = (&plan.keys, &plan.sizes, &plan.values);
    let shards = plan.shards.len();
    let mut controls: Vec<Option<Control>> = (0..shards).map(|_| None).collect();
    let protocol = plan.protocol();
    // Per shard: its requests of this batch, and how many (the meta protocol's tokens count
    // per connection).
    let mut outs: Vec<Vec<u8>> = (0..shards)
        .map(|_| Vec::with_capacity(if shards == 1 { 1 << 20 } else { 1 << 16 }))
        .collect();
    let mut sent: Vec<u32> = vec![0; shards];
    let mut key = Vec::with_capacity(64);
    let mut loaded = Loaded::default();
    let mut at = range.start;
    while at < range.end {
        if stop.is_set() {
            return Err(EndpointError::Protocol {
                shown: plan.shown(),
                message: "interrupted (Ctrl-C) while loading".into(),
            });
        }
        let end = (at + BATCH).min(range.end);
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
            let s = plan.router.shard_of(&key);
            protocol.encode(&mut outs[s], command, &key, value, plan.ttl, sent[s]);
            sent[s] += 1;
        }
        for s in 0..shards {
            if sent[s] == 0 {
                continue;
            }
            let control = match &mut controls[s] {
                Some(c) => c,
                slot => slot.insert(Control::open(&plan.shards[s], timeout)?),
            };
            control.send_raw(&outs[s])?;
            outs[s].clear();
        }
        for s in 0..shards {
            let Some(control) = controls[s].as_mut() else {
                continue;
            };
            for token in 0..std::mem::take(&mut sent[s]) {
                match control.receive_reply(command, token)? {
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
                        loaded.first_refusal.get_or_insert_with(|| {
                            if shards > 1 {
                                format!("{}: {message}", plan.shards[s].shown)
                            } else {
                                message
                            }
                        });
                    }
                }
            }
        }
        loaded.keys += end - at;
        done.fetch_add(end - at, Ordering::Relaxed);
        at = end;
    }
    Ok(loaded)
}
