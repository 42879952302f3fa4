//! One worker's connections to the cache, driven as a [`QueuedSession`]: many connections on
//! one thread, `--pipeline` requests in flight on each, one epoll loop.
//!
//! ```text
//!  pump(p) ─► reconnect due connections (blocking connect + handshake, bounded)
//!          ─► fill: pick the next key (KeyPicker) and get or set (--ratio); its shard
//!                 (Router: one server, ketama, or the session's cluster slot map); while
//!                 a connection of that shard has room and p.admit() gives an intended
//!                 start, encode into that connection's output buffer; the connections of
//!                 a shard with room take turns (round robin)
//!          ─► flush: one write(2) per connection with output; the requests it carries are
//!                 stamped with the time just before it (their actual start)
//!          ─► wait (epoll_pwait2, ns timeout): until a reply, the next due start (open loop),
//!                 a reconnect, or 10 ms; then read each readable connection until it is
//!                 drained (a short read) and parse every whole reply in its buffer:
//!                 replies come in request order, so each one is matched to the oldest
//!                 request in flight on its connection, checked, and reported to p.done with
//!                 the time after the read that brought its last byte
//!          ─► every 10 ms: a request unanswered for --op-timeout fails its connection
//! ```
//!
//! Nothing is allocated per request: keys are written into one reused buffer, values are
//! slices of the shared [`Values`](super::keys::Values) pattern, and replies are parsed in
//! place. A get must return exactly the size its key's value has (sizes are fixed by the
//! key), and with `--verify` exactly its bytes; anything else is an error, never a hit.
//!
//! A connection that fails (refused, closed by the server, unanswered, garbage) fails every
//! request in flight on it (each an error with its time so far), is closed, and is opened
//! again after a back-off (10 ms, doubling to 1 s); each failed attempt is an error of the
//! step. The step goes on with the connections that work.
//!
//! With several shards (servers) each client has one connection to each shard, as
//! memtier's cluster mode does, so `--clients 4` over 3 servers is 12 connections. Requests
//! are issued in the order they are picked: when the next key's shard has no connection
//! with room, it waits (and the requests after it) until a reply makes room, as one client
//! waits for the server its key lives on. Each request is timed into its shard's group
//! (`by: "shard"`, from 1), from its intended start in an open loop, as the runner times
//! kinds. In a Redis Cluster, a `-MOVED slot host:port` answer updates the session's slot
//! map and sends the request again to that node; `-ASK slot host:port` sends `ASKING` and
//! the request there once; both are counted, and the request's time runs from its first
//! send to its last answer, as a user waits for it.

use super::cluster::{self, Redirect, SlotMap};
use super::command::{Draw, McReply};
use super::endpoint::{Endpoint, Stream};
use super::keys::{KeyPattern, KeyPicker, KeySpace, ValueSizes, Values};
use super::mix::{Mix, MixState};
use super::protocol::{Command, Parsed, Protocol, Reply};
use super::shard::Router;
use crate::engine::poll::{Interest, Poller};
use crate::record::ErrorKind;
use crate::record::histogram::{LatencyHistogram, new_histogram};
use crate::workload::rng::Rng;
use crate::workload::{
    Failure, Figures, GroupTotals, OpError, OpOutcome, Pump, QueuedSession, Session,
};
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest wait for events: how often the loop looks at the phase, timeouts and reconnects.
const MAX_WAIT: Duration = Duration::from_millis(10);
/// First and longest pause before reconnecting a failed connection.
const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_secs(1);
/// Room kept free at the end of an input buffer for the next read.
const READ_ROOM: usize = 16 * 1024;
/// How long requests may still be answered after Ctrl-C before they are failed: a command
/// that blocks (`BLPOP q 0`) would otherwise hold the end of the run for `--op-timeout`.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// Redirections one request may follow before it fails: a cluster that keeps sending a
/// request around is being resharded faster than a client can follow, or is broken.
const MAX_REDIRECTS: u8 = 5;

/// What every worker's session shares: the servers and the request stream's definition.
pub struct Plan {
    /// Every server, in shard order (shard 1 of the record is `shards[0]`); one when the
    /// keys are not sharded.
    pub shards: Vec<Endpoint>,
    /// Which shard each key lives on.
    pub router: Router,
    pub keys: KeySpace,
    pub pattern: KeyPattern,
    pub sizes: ValueSizes,
    pub values: Arc<Values>,
    /// Share of requests that are sets (`--ratio 1:9` is 0.1).
    pub set_share: f64,
    /// Expiry of the values set, in seconds (0: never).
    pub ttl: u32,
    /// Compare every value a get returns with the bytes perflab set.
    pub verify: bool,
    /// A request unanswered this long fails its connection.
    pub op_timeout: Duration,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Plan({:?})", self.shards)
    }
}

impl Plan {
    /// The protocol every shard speaks.
    pub fn protocol(&self) -> Protocol {
        self.shards[0].protocol
    }

    /// The servers, for messages: one URL, or several separated by commas.
    pub fn shown(&self) -> String {
        let urls: Vec<&str> = self.shards.iter().map(|e| e.shown.as_str()).collect();
        urls.join(", ")
    }

    /// The same request stream against another server (a restarted throwaway).
    pub fn clone_with_endpoint(&self, endpoint: Endpoint) -> Arc<Plan> {
        self.clone_with_shards(vec![endpoint], Router::Single)
    }

    /// The same request stream against other servers (a cluster map read again).
    pub fn clone_with_shards(&self, shards: Vec<Endpoint>, router: Router) -> Arc<Plan> {
        Arc::new(Plan {
            shards,
            router,
            keys: self.keys.clone(),
            pattern: self.pattern.clone(),
            sizes: self.sizes.clone(),
            values: Arc::clone(&self.values),
            set_share: self.set_share,
            ttl: self.ttl,
            verify: self.verify,
            op_timeout: self.op_timeout,
        })
    }

    /// How long a connection attempt may take: the op timeout, but never so long that a
    /// worker with one dead host stops serving its other connections for long.
    pub fn connect_timeout(&self) -> Duration {
        self.op_timeout.min(Duration::from_secs(1))
    }
}

/// One request in flight (or written into the output buffer, not yet sent).
#[derive(Debug, Clone, Copy)]
struct Pending {
    intended: Instant,
    start: Instant,
    command: Command,
    key: u64,
    size: u32,
    token: u32,
    /// Times the cluster sent this request elsewhere; a resent request keeps its first
    /// start.
    redirects: u8,
    /// Not a request: the `+OK` of the `ASKING` sent before the next one (cluster only).
    asking: bool,
}

/// One connection and its buffers.
struct Conn {
    /// The shard (index in `Plan::shards`) this connection talks to.
    shard: usize,
    stream: Option<Stream>,
    /// Encoded requests; `out[sent..]` is not yet written.
    out: Vec<u8>,
    sent: usize,
    /// Received bytes; `input[head..tail]` is not yet parsed.
    input: Vec<u8>,
    head: usize,
    tail: usize,
    /// The parser's lower bound on the bytes the front reply needs (0: unknown).
    need: usize,
    pending: VecDeque<Pending>,
    /// The last `unstamped` entries of `pending` have not been written yet.
    unstamped: usize,
    token: u32,
    /// Whether the connection is in the session's `room` queue, or its `dirty` list.
    in_room: bool,
    dirty: bool,
    retry_at: Instant,
    backoff: Duration,
}

impl Conn {
    fn new(shard: usize, stream: Option<Stream>, now: Instant) -> Self {
        Conn {
            shard,
            stream,
            out: Vec::with_capacity(4096),
            sent: 0,
            input: vec![0; READ_ROOM * 2],
            head: 0,
            tail: 0,
            need: 0,
            pending: VecDeque::new(),
            unstamped: 0,
            token: 0,
            in_room: false,
            dirty: false,
            retry_at: now,
            backoff: BACKOFF_MIN,
        }
    }

    /// Makes room for the next read: moves unparsed bytes to the front, and grows the
    /// buffer when the front reply needs more than it holds: by doubling at most, with the
    /// bytes that arrive, never to a size a reply's header merely claims (a broken or
    /// hostile server announcing a 512 MB value costs what it sends, not 512 MB at once).
    fn make_room(&mut self) {
        if self.head == self.tail {
            self.head = 0;
            self.tail = 0;
        }
        let want = room_wanted(self.tail - self.head, self.need);
        if self.input.len() - self.tail < READ_ROOM || self.input.len() - self.head < want {
            self.input.copy_within(self.head..self.tail, 0);
            self.tail -= self.head;
            self.head = 0;
            if self.input.len() < want {
                self.input.resize(want.next_power_of_two(), 0);
            }
        }
    }
}

/// The buffer a connection wants for its next read, holding `held` unparsed bytes of a
/// reply that needs `need` in all (0: not known yet): room for the reply and a read, but at
/// most twice what has arrived, so memory follows the bytes received, not a header's claim.
fn room_wanted(held: usize, need: usize) -> usize {
    (need.max(held) + READ_ROOM).min(2 * held + 2 * READ_ROOM)
}

/// What this worker's requests found, counted while measuring.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    gets: u64,
    hits: u64,
    misses: u64,
    sets: u64,
    /// Connections that failed (closed, refused, timed out).
    failures: u64,
    timeouts: u64,
    /// Cluster redirections followed: `MOVED` (the map was stale) and `ASK` (a slot being
    /// migrated).
    moved: u64,
    asked: u64,
}

/// One shard's requests, for the breakdown by shard.
struct ShardGroup {
    ops: u64,
    bytes: u64,
    errors: u64,
    latency: LatencyHistogram,
}

/// The next request, picked but not yet sent (its shard had no connection with room, or
/// the pump admitted nothing more).
#[derive(Debug, Clone, Copy)]
struct Next {
    key: u64,
    command: Command,
    shard: usize,
}

/// One worker's connections.
pub struct KvSession {
    plan: Arc<Plan>,
    /// The protocol every shard speaks (a copy: read per request).
    protocol: Protocol,
    poller: Poller,
    /// Client `i`'s connection to shard `s` is `conns[s * clients + i]`.
    conns: Vec<Conn>,
    clients: usize,
    /// Per shard: its connections with room for another request, in turn.
    rooms: Vec<VecDeque<usize>>,
    /// Connections with output to write.
    dirty: Vec<usize>,
    /// Failed connections waiting to reconnect.
    down: Vec<usize>,
    pipeline: usize,
    in_flight: usize,
    rng: Rng,
    picker: KeyPicker,
    /// `next_u64() < set_below` makes a set.
    set_below: u64,
    /// The bytes of the picked key (`held`'s while one is held).
    key: Vec<u8>,
    held: Option<Next>,
    /// A Redis Cluster's slot map as this session knows it, corrected by `MOVED` answers.
    slots: Option<SlotMap>,
    /// Per shard, when there are several.
    by_shard: Vec<ShardGroup>,
    /// The key of a request sent again after a redirection.
    scratch: Vec<u8>,
    counts: Counts,
    next_expiry_check: Instant,
    measuring: bool,
    open_loop: bool,
    /// The step's commands, when it runs a mix (`--command`, a redis-benchmark test)
    /// rather than gets and sets.
    mix: Option<(Arc<Mix>, MixState)>,
    /// Scratch for a mix's words.
    word: Vec<u8>,
    /// The run's stop token (Ctrl-C), and when this session first saw it set.
    stop: crate::stop::Stop,
    stopped_at: Option<Instant>,
}

impl KvSession {
    /// Opens `clients` connections to each shard for worker `worker` of `workers`. A
    /// connection that cannot be opened fails the session: the run checked the servers
    /// before the first step.
    pub fn open(
        plan: Arc<Plan>,
        mix: Option<Arc<Mix>>,
        clients: usize,
        pipeline: usize,
        (worker, workers): (usize, usize),
        seed: u64,
        stop: crate::stop::Stop,
    ) -> Result<KvSession, OpError> {
        let shards = plan.shards.len();
        let poller = Poller::new((clients * shards).max(1) * 2)
            .map_err(|e| OpError::other(format!("cannot create an epoll instance: {e}")))?;
        let now = Instant::now();
        let mut conns = Vec::with_capacity(clients * shards);
        let mut rooms = Vec::with_capacity(shards);
        for (s, endpoint) in plan.shards.iter().enumerate() {
            let mut room = VecDeque::with_capacity(clients);
            for _ in 0..clients {
                let c = conns.len();
                let stream = endpoint
                    .connect(plan.connect_timeout())
                    .map_err(|e| OpError::other(e.to_string()))?;
                stream
                    .set_nonblocking(true)
                    .map_err(|e| OpError::other(format!("{}: {e}", endpoint.shown)))?;
                poller
                    .add(&stream, c as u64, Interest::READ_WRITE)
                    .map_err(|e| OpError::other(format!("epoll: {e}")))?;
                let mut conn = Conn::new(s, Some(stream), now);
                conn.in_room = true;
                room.push_back(c);
                conns.push(conn);
            }
            rooms.push(room);
        }
        let picker =
            KeyPicker::new(&plan.pattern, &plan.keys, worker, workers).map_err(OpError::other)?;
        let set_below = share_threshold(plan.set_share);
        let mix = match mix {
            Some(m) => {
                let state = m
                    .state(&plan.keys, worker, workers)
                    .map_err(OpError::other)?;
                Some((m, state))
            }
            None => None,
        };
        let slots = match &plan.router {
            Router::Cluster(map) => Some(map.clone()),
            _ => None,
        };
        let by_shard = if shards > 1 {
            (0..shards)
                .map(|_| ShardGroup {
                    ops: 0,
                    bytes: 0,
                    errors: 0,
                    latency: new_histogram(),
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(KvSession {
            protocol: plan.protocol(),
            plan,
            poller,
            dirty: Vec::with_capacity(conns.len()),
            conns,
            clients,
            rooms,
            down: Vec::new(),
            pipeline: pipeline.max(1),
            in_flight: 0,
            rng: Rng::new(seed),
            picker,
            set_below,
            key: Vec::with_capacity(64),
            held: None,
            slots,
            by_shard,
            scratch: Vec::new(),
            counts: Counts::default(),
            next_expiry_check: now + MAX_WAIT,
            measuring: false,
            open_loop: false,
            mix,
            word: Vec::with_capacity(64),
            stop,
            stopped_at: None,
        })
    }

    /// Picks the next request: its key (written into `self.key`), get or set, and shard.
    #[inline]
    fn pick(&mut self) -> Next {
        if let Some((mix, state)) = &mut self.mix {
            // A mix runs on one server (refused with several): its commands carry their keys.
            let index = mix.next(state, &mut self.rng);
            let values = mix.commands[index].mc_reply == McReply::Values;
            return Next {
                key: 0,
                command: Command::Custom {
                    index: index as u16,
                    values,
                },
                shard: 0,
            };
        }
        let plan = &*self.plan;
        let key = self.picker.next(&mut self.rng);
        let command = if self.set_below != 0 && self.rng.next_u64() < self.set_below {
            Command::Set
        } else {
            Command::Get
        };
        plan.keys.write_key(key, &mut self.key);
        let shard = match (&plan.router, &self.slots) {
            (Router::Single, _) => 0,
            (Router::Cluster(_), Some(map)) => map.shard_of(&self.key),
            (router, _) => router.shard_of(&self.key),
        };
        Next {
            key,
            command,
            shard,
        }
    }

    /// A connection of shard `s` with room for another request, at the front of its turn.
    #[inline]
    fn room_in(&mut self, s: usize) -> Option<usize> {
        let room = &mut self.rooms[s];
        while let Some(&c) = room.front() {
            let conn = &mut self.conns[c];
            if conn.stream.is_some() && conn.pending.len() < self.pipeline {
                return Some(c);
            }
            conn.in_room = false;
            room.pop_front();
        }
        None
    }

    /// Writes requests into connections with room while the pump admits them.
    fn fill(&mut self, pump: &mut dyn Pump) {
        loop {
            let next = match self.held.take() {
                Some(n) => n,
                None => self.pick(),
            };
            let Some(c) = self.room_in(next.shard) else {
                self.held = Some(next);
                return;
            };
            let Some(intended) = pump.admit() else {
                self.held = Some(next);
                return;
            };
            self.issue(c, next, intended);
            // Round robin: the connection goes to the back of its shard's queue if it has
            // room left.
            let room = &mut self.rooms[next.shard];
            room.pop_front();
            if self.conns[c].pending.len() < self.pipeline {
                room.push_back(c);
            } else {
                self.conns[c].in_room = false;
            }
        }
    }

    /// Encodes request `next` (its key in `self.key`) into connection `c`'s output.
    #[inline]
    fn issue(&mut self, c: usize, next: Next, intended: Instant) {
        let plan = &*self.plan;
        let (key, command) = (next.key, next.command);
        let size = plan.sizes.size_of(key);
        let value: &[u8] = if command == Command::Set {
            plan.values.of(key, size)
        } else {
            &[]
        };
        let conn = &mut self.conns[c];
        conn.token = conn.token.wrapping_add(1);
        match (command, &mut self.mix) {
            (Command::Custom { index, .. }, Some((mix, state))) => {
                let mut draw = Draw {
                    rng: &mut self.rng,
                    picker: &mut state.pickers[index as usize],
                    keys: &plan.keys,
                    keyspacelen: mix.keyspacelen,
                    sizes: &plan.sizes,
                    values: &plan.values,
                    word: &mut self.word,
                    key: &mut self.key,
                };
                mix.commands[index as usize].encode(&mut conn.out, &mut draw);
            }
            _ => self.protocol.encode(
                &mut conn.out,
                command,
                &self.key,
                value,
                plan.ttl,
                conn.token,
            ),
        }
        conn.pending.push_back(Pending {
            intended,
            start: intended,
            command,
            key,
            size,
            token: conn.token,
            redirects: 0,
            asking: false,
        });
        conn.unstamped += 1;
        if !conn.dirty {
            conn.dirty = true;
            self.dirty.push(c);
        }
        self.in_flight += 1;
    }

    /// Writes every connection's pending output.
    fn flush(&mut self, pump: &mut dyn Pump) {
        while let Some(c) = self.dirty.pop() {
            self.conns[c].dirty = false;
            self.flush_one(c, pump);
        }
    }

    /// Writes connection `c`'s output until it is gone or the socket is full (the
    /// writable event then brings the loop back).
    fn flush_one(&mut self, c: usize, pump: &mut dyn Pump) {
        let conn = &mut self.conns[c];
        let Some(stream) = conn.stream.as_mut() else {
            return;
        };
        if conn.sent == conn.out.len() {
            // TLS may still hold records the socket had no room for.
            if stream.has_pending_output() {
                match stream.flush() {
                    Err(e) if e.kind() != io::ErrorKind::WouldBlock => {
                        let m = format!("sending to the server failed: {e}");
                        self.fail(c, ErrorKind::Reset, &m, pump);
                    }
                    _ => {}
                }
            }
            return;
        }
        let now = Instant::now();
        let n = conn.pending.len();
        for p in conn.pending.range_mut(n - conn.unstamped.min(n)..) {
            // A request sent again after a redirection keeps its first start.
            if p.redirects == 0 {
                p.start = now;
            }
        }
        conn.unstamped = 0;
        while conn.sent < conn.out.len() {
            match stream.write(&conn.out[conn.sent..]) {
                Ok(0) => {
                    self.fail(
                        c,
                        ErrorKind::Reset,
                        "the server closed the connection",
                        pump,
                    );
                    return;
                }
                Ok(n) => conn.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let m = format!("sending to the server failed: {e}");
                    self.fail(c, ErrorKind::Reset, &m, pump);
                    return;
                }
            }
        }
        conn.out.clear();
        conn.sent = 0;
    }

    /// Reads connection `c` until it is drained, completing every whole reply.
    fn read_one(&mut self, c: usize, pump: &mut dyn Pump) {
        loop {
            let conn = &mut self.conns[c];
            conn.make_room();
            let Some(stream) = conn.stream.as_mut() else {
                return;
            };
            let space = conn.input.len() - conn.tail;
            let short_read_drains = stream.short_read_drains();
            match stream.read(&mut conn.input[conn.tail..]) {
                Ok(0) => {
                    self.fail(
                        c,
                        ErrorKind::Reset,
                        "the server closed the connection",
                        pump,
                    );
                    return;
                }
                Ok(n) => {
                    let end = Instant::now();
                    conn.tail += n;
                    if !self.parse(c, end, pump) {
                        return;
                    }
                    // Edge-triggered: a short read means the socket is drained; new data
                    // brings a new event.
                    if n < space && short_read_drains {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let m = format!("receiving from the server failed: {e}");
                    self.fail(c, ErrorKind::Reset, &m, pump);
                    return;
                }
            }
        }
    }

    /// Completes every whole reply in connection `c`'s input. False if the connection
    /// failed.
    fn parse(&mut self, c: usize, end: Instant, pump: &mut dyn Pump) -> bool {
        let protocol = self.protocol;
        loop {
            let conn = &mut self.conns[c];
            let available = conn.tail - conn.head;
            if available == 0 {
                return true;
            }
            let Some(&p) = conn.pending.front() else {
                let m = format!("the server sent {available} bytes nobody asked for");
                self.fail(c, ErrorKind::Protocol, &m, pump);
                return false;
            };
            if available < conn.need {
                return true;
            }
            let input = &conn.input[conn.head..conn.tail];
            // ASKING is answered `+OK`, the answer a set gets.
            let command = if p.asking { Command::Set } else { p.command };
            match protocol.parse(input, command, p.token) {
                Parsed::Reply { reply, consumed } => {
                    conn.pending.pop_front();
                    conn.need = 0;
                    let shard = conn.shard;
                    let redirect = match (&reply, &self.slots) {
                        (Reply::Refused { message }, Some(_)) => {
                            cluster::parse_redirect(&input[message.clone()])
                        }
                        _ => None,
                    };
                    if p.asking {
                        // Its request follows, and says what the node thought of it.
                    } else if let Some(r) = redirect {
                        self.in_flight -= 1;
                        self.redirect(c, p, r, pump);
                    } else {
                        self.in_flight -= 1;
                        let reply_bytes = &input[..consumed];
                        let group = if self.measuring {
                            self.by_shard.get_mut(shard)
                        } else {
                            None
                        };
                        complete(
                            &self.plan,
                            self.mix.as_ref().map(|(m, _)| &**m),
                            &mut self.counts,
                            self.measuring,
                            group.map(|g| (g, self.open_loop)),
                            p,
                            reply,
                            reply_bytes,
                            end,
                            pump,
                        );
                    }
                    let conn = &mut self.conns[c];
                    conn.head += consumed;
                    if !conn.in_room && conn.stream.is_some() {
                        conn.in_room = true;
                        self.rooms[shard].push_back(c);
                    }
                }
                Parsed::Incomplete { need } => {
                    conn.need = need;
                    return true;
                }
                Parsed::Invalid(m) => {
                    let m = format!("a reply that makes no sense: {m}");
                    self.fail(c, ErrorKind::Protocol, &m, pump);
                    return false;
                }
            }
        }
    }

    /// Follows a cluster's redirection of request `p` (answered on connection `c`): sends it
    /// again to the node named, on this client's connection to it (after `ASKING` for an
    /// `ASK`), and for a `MOVED` corrects the slot map first. The request stays in flight.
    fn redirect(&mut self, c: usize, mut p: Pending, r: Redirect, pump: &mut dyn Pump) {
        let (slot, host, port, ask) = match r {
            Redirect::Moved { slot, host, port } => (slot, host, port, false),
            Redirect::Ask { slot, host, port } => (slot, host, port, true),
        };
        let from = &self.plan.shards[self.conns[c].shard];
        let to = cluster::node_endpoint(from, &host, port)
            .ok()
            .and_then(|e| self.plan.shards.iter().position(|s| s.address == e.address));
        let word = if ask { "ASK" } else { "MOVED" };
        let Some(s) = to else {
            let m = format!(
                "{} {}: the cluster sent it to {host}:{port} ({word}), not a master when the step began; the next step reads the cluster's map again",
                p.command.name(),
                key_text(&self.plan, p.key)
            );
            self.fail_request(p, self.conns[c].shard, ErrorKind::Server, &m, pump);
            return;
        };
        if p.redirects >= MAX_REDIRECTS {
            let m = format!(
                "{} {}: redirected {MAX_REDIRECTS} times ({word} {slot} {host}:{port} last); is the cluster being resharded?",
                p.command.name(),
                key_text(&self.plan, p.key)
            );
            self.fail_request(p, s, ErrorKind::Server, &m, pump);
            return;
        }
        if self.measuring {
            if ask {
                self.counts.asked += 1;
            } else {
                self.counts.moved += 1;
            }
        }
        if !ask && let Some(map) = self.slots.as_mut() {
            map.set(slot, s);
        }
        let t = s * self.clients + c % self.clients;
        if self.conns[t].stream.is_none() {
            let m = format!(
                "{} {}: the cluster sent it to {} ({word}), and perflab's connection there is down",
                p.command.name(),
                key_text(&self.plan, p.key),
                self.plan.shards[s].shown
            );
            self.fail_request(p, s, ErrorKind::Server, &m, pump);
            return;
        }
        let plan = &*self.plan;
        plan.keys.write_key(p.key, &mut self.scratch);
        let value: &[u8] = if p.command == Command::Set {
            plan.values.of(p.key, p.size)
        } else {
            &[]
        };
        let conn = &mut self.conns[t];
        if ask {
            super::resp::encode_command(&mut conn.out, &[b"ASKING"]);
            conn.pending.push_back(Pending {
                asking: true,
                redirects: 0,
                ..p
            });
            conn.unstamped += 1;
        }
        conn.token = conn.token.wrapping_add(1);
        self.protocol.encode(
            &mut conn.out,
            p.command,
            &self.scratch,
            value,
            plan.ttl,
            conn.token,
        );
        p.token = conn.token;
        p.redirects += 1;
        conn.pending.push_back(p);
        conn.unstamped += 1;
        if !conn.dirty {
            conn.dirty = true;
            self.dirty.push(t);
        }
        self.in_flight += 1;
    }

    /// Reports request `p` (no longer in flight) as failed.
    fn fail_request(
        &mut self,
        p: Pending,
        shard: usize,
        cause: ErrorKind,
        message: &str,
        pump: &mut dyn Pump,
    ) {
        if self.measuring
            && let Some(g) = self.by_shard.get_mut(shard)
        {
            g.errors += 1;
        }
        pump.done(
            p.intended,
            p.start,
            Instant::now(),
            Err(Failure {
                kind: p.command.name(),
                cause,
                message,
            }),
        );
    }

    /// Closes connection `c`, failing every request on it, and schedules its reconnection.
    fn fail(&mut self, c: usize, cause: ErrorKind, message: &str, pump: &mut dyn Pump) {
        let end = Instant::now();
        let conn = &mut self.conns[c];
        if let Some(stream) = conn.stream.take() {
            let _ = self.poller.remove(&stream);
        }
        let mut group = if self.measuring {
            self.by_shard.get_mut(conn.shard)
        } else {
            None
        };
        for p in conn.pending.drain(..).filter(|p| !p.asking) {
            self.in_flight -= 1;
            if let Some(g) = group.as_mut() {
                g.errors += 1;
            }
            pump.done(
                p.intended,
                p.start,
                end,
                Err(Failure {
                    kind: p.command.name(),
                    cause,
                    message,
                }),
            );
        }
        conn.out.clear();
        conn.sent = 0;
        conn.unstamped = 0;
        conn.head = 0;
        conn.tail = 0;
        conn.need = 0;
        conn.retry_at = end + conn.backoff;
        conn.backoff = (conn.backoff * 2).min(BACKOFF_MAX);
        self.down.push(c);
        if self.measuring {
            self.counts.failures += 1;
        }
    }

    /// Reopens the failed connections whose back-off is over.
    fn reconnect(&mut self, now: Instant, pump: &mut dyn Pump) {
        let mut i = 0;
        while i < self.down.len() {
            let c = self.down[i];
            if self.conns[c].retry_at > now {
                i += 1;
                continue;
            }
            let endpoint = &self.plan.shards[self.conns[c].shard];
            let opened = endpoint.connect(self.plan.connect_timeout()).and_then(|s| {
                s.set_nonblocking(true).map_err(|e| {
                    super::endpoint::EndpointError::Unreachable {
                        shown: endpoint.shown.clone(),
                        reason: e.to_string(),
                    }
                })?;
                Ok(s)
            });
            match opened {
                Ok(stream) => {
                    if let Err(e) = self.poller.add(&stream, c as u64, Interest::READ_WRITE) {
                        pump.fail(ErrorKind::Other, &format!("epoll: {e}"));
                        i += 1;
                        continue;
                    }
                    let conn = &mut self.conns[c];
                    conn.stream = Some(stream);
                    conn.backoff = BACKOFF_MIN;
                    if !conn.in_room {
                        conn.in_room = true;
                        self.rooms[conn.shard].push_back(c);
                    }
                    self.down.swap_remove(i);
                }
                Err(e) => {
                    pump.fail(ErrorKind::Refused, &format!("reconnecting: {e}"));
                    let conn = &mut self.conns[c];
                    conn.retry_at = Instant::now() + conn.backoff;
                    conn.backoff = (conn.backoff * 2).min(BACKOFF_MAX);
                    i += 1;
                }
            }
        }
    }

    /// Fails the connections whose oldest request has waited longer than the op timeout.
    fn expire(&mut self, now: Instant, pump: &mut dyn Pump) {
        let limit = self.plan.op_timeout;
        for c in 0..self.conns.len() {
            let late = self.conns[c]
                .pending
                .front()
                .is_some_and(|p| now.saturating_duration_since(p.start) > limit);
            if late {
                if self.measuring {
                    self.counts.timeouts += 1;
                }
                let m = format!(
                    "no answer within {} (--op-timeout)",
                    crate::vocab::units::format_duration(limit)
                );
                self.fail(c, ErrorKind::Timeout, &m, pump);
            }
        }
    }

    /// After Ctrl-C and a grace of [`STOP_GRACE`], fails the requests still unanswered, so
    /// that the run ends soon whatever they wait for.
    fn interrupt(&mut self, now: Instant, pump: &mut dyn Pump) {
        if !self.stop.is_set() {
            return;
        }
        let since = *self.stopped_at.get_or_insert(now);
        if now.saturating_duration_since(since) < STOP_GRACE {
            return;
        }
        for c in 0..self.conns.len() {
            if !self.conns[c].pending.is_empty() {
                self.fail(
                    c,
                    ErrorKind::Other,
                    "interrupted (Ctrl-C) before its answer",
                    pump,
                );
            }
        }
    }

    /// How long to wait for events now.
    fn timeout(&self, now: Instant, pump: &dyn Pump) -> Duration {
        let mut wait = MAX_WAIT;
        if pump.open_loop()
            && let Some(due) = pump.next_due()
        {
            // With room to send, wake when the next request is due; without, only a reply
            // (or a reconnect) can make room.
            let room = match &self.held {
                Some(next) => !self.rooms[next.shard].is_empty(),
                None => self.rooms.iter().any(|r| !r.is_empty()),
            };
            if room {
                wait = wait.min(due.saturating_duration_since(now));
            }
        } else if self.in_flight == 0 && self.down.is_empty() {
            return Duration::ZERO;
        }
        if let Some(retry) = self.down.iter().map(|&c| self.conns[c].retry_at).min() {
            wait = wait.min(retry.saturating_duration_since(now));
        }
        wait
    }
}

/// The threshold of a 64-bit draw below which an event of probability `share` happens.
fn share_threshold(share: f64) -> u64 {
    if share <= 0.0 {
        0
    } else if share >= 1.0 {
        u64::MAX
    } else {
        (share * 18_446_744_073_709_551_616.0) as u64
    }
}

/// Checks one reply against its request and reports it.
#[allow(clippy::too_many_arguments)]
#[inline]
fn complete(
    plan: &Plan,
    mix: Option<&Mix>,
    counts: &mut Counts,
    measuring: bool,
    group: Option<(&mut ShardGroup, bool)>,
    p: Pending,
    reply: Reply,
    input: &[u8],
    end: Instant,
    pump: &mut dyn Pump,
) {
    let kind = match (p.command, mix) {
        (Command::Custom { index, .. }, Some(m)) => m.commands[index as usize].name,
        (command, _) => command.name(),
    };
    let ok = |bytes: usize| {
        Ok(OpOutcome {
            bytes: bytes as u64,
            items: 1,
            kind,
        })
    };
    let outcome: Result<OpOutcome, (ErrorKind, String)> = match (p.command, reply) {
        (Command::Get, Reply::Hit { value }) => {
            let got = &input[value];
            if got.len() != p.size as usize {
                Err((
                    ErrorKind::WrongAnswer,
                    format!(
                        "get {} returned {} bytes; perflab sets {} for this key",
                        key_text(plan, p.key),
                        got.len(),
                        p.size
                    ),
                ))
            } else if plan.verify && got != plan.values.of(p.key, p.size) {
                Err((
                    ErrorKind::WrongAnswer,
                    format!(
                        "get {} returned bytes that differ from what perflab set",
                        key_text(plan, p.key)
                    ),
                ))
            } else {
                if measuring {
                    counts.gets += 1;
                    counts.hits += 1;
                }
                ok(got.len())
            }
        }
        (Command::Get, Reply::Miss) => {
            if measuring {
                counts.gets += 1;
                counts.misses += 1;
            }
            ok(0)
        }
        (Command::Set, Reply::Done) => {
            if measuring {
                counts.sets += 1;
            }
            ok(p.size as usize)
        }
        (Command::Delete, Reply::Done | Reply::Miss) => ok(0),
        (Command::Custom { index, .. }, Reply::Value { kind: t }) => {
            let expect = mix.map_or(&b""[..], |m| m.commands[index as usize].expect);
            if expect.is_empty() || expect.contains(&t) {
                ok(input.len())
            } else {
                Err((
                    ErrorKind::WrongAnswer,
                    format!(
                        "{kind}: answered with {}, not {}",
                        super::resp::type_name(t),
                        expect
                            .iter()
                            .map(|&e| super::resp::type_name(e))
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                ))
            }
        }
        (Command::Custom { .. }, Reply::Refused { message }) => Err((
            ErrorKind::Server,
            format!(
                "{kind}: {}",
                String::from_utf8_lossy(&input[message]).trim()
            ),
        )),
        (_, Reply::Refused { message }) => Err((
            ErrorKind::Server,
            format!(
                "{} {}: {}",
                kind,
                key_text(plan, p.key),
                String::from_utf8_lossy(&input[message]).trim()
            ),
        )),
        (_, other) => Err((
            ErrorKind::Protocol,
            format!("{kind}: an answer that does not fit: {other:?}"),
        )),
    };
    // The shard's share, timed as the runner times the step: from the intended start in an
    // open loop, from the actual one in a closed loop.
    if let Some((g, open_loop)) = group {
        match &outcome {
            Ok(o) => {
                let from = if open_loop { p.intended } else { p.start };
                g.ops += 1;
                g.bytes += o.bytes;
                g.latency
                    .saturating_record(end.saturating_duration_since(from).as_nanos() as u64);
            }
            Err(_) => g.errors += 1,
        }
    }
    match outcome {
        Ok(o) => pump.done(p.intended, p.start, end, Ok(o)),
        Err((cause, message)) => pump.done(
            p.intended,
            p.start,
            end,
            Err(Failure {
                kind,
                cause,
                message: &message,
            }),
        ),
    }
}

/// A key as text, for messages.
fn key_text(plan: &Plan, key: u64) -> String {
    let mut buf = Vec::new();
    plan.keys.write_key(key, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

impl QueuedSession for KvSession {
    fn pump(&mut self, pump: &mut dyn Pump) -> Result<(), OpError> {
        self.measuring = pump.measuring();
        self.open_loop = pump.open_loop();
        let now = Instant::now();
        if !self.down.is_empty() {
            self.reconnect(now, pump);
        }
        self.fill(pump);
        self.flush(pump);
        let wait = self.timeout(Instant::now(), pump);
        if !wait.is_zero() || self.in_flight > 0 {
            let mut ready: [(u64, bool, bool); 64] = [(0, false, false); 64];
            let mut n = 0;
            self.poller
                .wait(Some(wait), |e| {
                    if n < ready.len() {
                        ready[n] = (e.token, e.readable, e.writable);
                        n += 1;
                    }
                })
                .map_err(|e| OpError::other(format!("epoll_wait failed: {e}")))?;
            for &(token, readable, writable) in &ready[..n] {
                let c = token as usize;
                if writable {
                    self.flush_one(c, pump);
                }
                if readable {
                    self.read_one(c, pump);
                }
            }
        }
        let now = Instant::now();
        if now >= self.next_expiry_check {
            self.next_expiry_check = now + MAX_WAIT;
            self.expire(now, pump);
            self.interrupt(now, pump);
        }
        Ok(())
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }
}

impl Session for KvSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        Err(OpError::other("a kv session runs queued"))
    }

    fn as_queued(&mut self) -> Option<&mut dyn QueuedSession> {
        Some(self)
    }

    fn finish(&mut self) -> Figures {
        let c = std::mem::take(&mut self.counts);
        let mut f = Figures::new();
        f.insert("gets".into(), c.gets as f64);
        f.insert("get_hits".into(), c.hits as f64);
        f.insert("get_misses".into(), c.misses as f64);
        f.insert("sets".into(), c.sets as f64);
        f.insert("connection_failures".into(), c.failures as f64);
        f.insert("timeouts".into(), c.timeouts as f64);
        if self.slots.is_some() {
            f.insert("moved".into(), c.moved as f64);
            f.insert("asked".into(), c.asked as f64);
        }
        f
    }

    fn groups(&mut self) -> Vec<GroupTotals> {
        let plan = &self.plan;
        self.by_shard
            .iter_mut()
            .enumerate()
            .map(|(s, g)| GroupTotals {
                by: "shard",
                key: (s + 1).to_string(),
                label: plan.shards[s].shown.clone(),
                ops: std::mem::take(&mut g.ops),
                bytes: std::mem::take(&mut g.bytes),
                errors: std::mem::take(&mut g.errors),
                latency: std::mem::replace(&mut g.latency, new_histogram()),
                active: None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_size_is_not_allocated_ahead_of_its_bytes() {
        // A 512 MB value announced, 16 KB of it arrived: room for twice that, not 512 MB.
        assert_eq!(room_wanted(16 << 10, 512 << 20), 4 * READ_ROOM);
        // A small reply wants room for itself and one read.
        assert_eq!(room_wanted(100, 300), 300 + READ_ROOM);
        // Nothing known yet: one read's room.
        assert_eq!(room_wanted(0, 0), READ_ROOM);
    }
}
