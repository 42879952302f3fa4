//! The throwaway key-value servers of `tests/common/servers.rs` (memcached, Redis, a Redis
//! cluster), proven with raw protocol bytes over std sockets: each starts, stores and returns
//! a value, stops answering while frozen and answers again once thawed (the request sent in
//! between included), dies on `kill()`, and after drop neither runs nor leaves its folder.
//!
//! Skipped, with "SKIPPED <test>: ..." on stderr, where memcached or Redis is not installed —
//! unless `PERFLAB_REQUIRE_SERVERS` is set (CI), where that is a failure (`common::skip`).

mod common;

use common::servers::{MemcachedServer, RedisCluster, RedisServer};
use common::skip::named_thread;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Long enough for any answer of a running server on this machine, even a loaded one.
const ANSWER: Duration = Duration::from_secs(10);
/// How long a frozen server is given to (wrongly) answer.
const SILENCE: Duration = Duration::from_millis(500);

fn connect(port: u16) -> TcpStream {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
        .unwrap_or_else(|e| panic!("cannot connect to 127.0.0.1:{port}: {e}"));
    s.set_read_timeout(Some(ANSWER)).unwrap();
    s
}

fn listening(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok()
}

/// Reads until `complete` says the answer is whole. Err on a read timeout (or a close)
/// before that, with what had come.
fn read_answer(s: &mut impl Read, complete: fn(&[u8]) -> bool) -> Result<String, String> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !complete(&got) {
        match s.read(&mut buf) {
            Ok(0) => return Err(format!("closed after {:?}", String::from_utf8_lossy(&got))),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => return Err(format!("{e} after {:?}", String::from_utf8_lossy(&got))),
        }
    }
    Ok(String::from_utf8_lossy(&got).into_owned())
}

fn ask(
    s: &mut (impl Read + Write),
    request: &[u8],
    complete: fn(&[u8]) -> bool,
) -> Result<String, String> {
    s.write_all(request).map_err(|e| e.to_string())?;
    read_answer(s, complete)
}

/// A whole memcached answer: a one-line reply, or a `get`'s values up to `END`.
fn memcached_complete(b: &[u8]) -> bool {
    if b.starts_with(b"VALUE") {
        b.ends_with(b"END\r\n")
    } else {
        b.ends_with(b"\r\n")
    }
}

/// One whole RESP reply: a line, a bulk string's header and bytes, or an array of them.
fn resp_complete(b: &[u8]) -> bool {
    resp_len(b) == Some(b.len())
}

/// The length of the first whole RESP value in `b`, `None` while it is incomplete.
fn resp_len(b: &[u8]) -> Option<usize> {
    let eol = b.windows(2).position(|w| w == b"\r\n")?;
    let line_end = eol + 2;
    let n = || -> Option<i64> { std::str::from_utf8(&b[1..eol]).ok()?.parse().ok() };
    match b.first()? {
        b'$' => match n()? {
            len if len < 0 => Some(line_end),
            len => {
                let end = line_end + usize::try_from(len).ok()? + 2;
                (b.len() >= end).then_some(end)
            }
        },
        b'*' => {
            let mut end = line_end;
            for _ in 0..n()?.max(0) {
                end += resp_len(&b[end..])?;
            }
            Some(end)
        }
        _ => Some(line_end),
    }
}

fn resp(args: &[&str]) -> Vec<u8> {
    let mut r = format!("*{}\r\n", args.len());
    for a in args {
        r.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    r.into_bytes()
}

fn redis(s: &mut (impl Read + Write), args: &[&str]) -> Result<String, String> {
    ask(s, &resp(args), resp_complete)
}

/// The process `pid` is running `name` (not exited, not a zombie). A pid we have reaped
/// could in principle be reused, but not by a process of that name within a test.
fn runs(pid: u32, name: &str) -> bool {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    comm.trim() == name && state(pid) != Some('Z')
}

/// The process state letter of /proc/PID/stat (R, S, T for stopped, Z).
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}

/// `freeze(false)` makes `s` silent: a request sent meanwhile gets no answer, and the
/// process is stopped; `freeze(true)` brings that very answer, which must be `want`.
fn assert_freezes<S: Read + Write>(
    s: &mut S,
    set_timeout: fn(&S, Duration),
    freeze: &dyn Fn(bool),
    pids: &[u32],
    request: &[u8],
    complete: fn(&[u8]) -> bool,
    want: &str,
) {
    freeze(false);
    for &pid in pids {
        // SIGSTOP is delivered asynchronously: on a busy machine the process may still be
        // running for a moment after kill returns.
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while state(pid) != Some('T') && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(state(pid), Some('T'), "pid {pid} is not stopped");
    }
    set_timeout(s, SILENCE);
    s.write_all(request).unwrap();
    let silent = read_answer(s, complete);
    assert!(silent.is_err(), "a frozen server answered {silent:?}");
    freeze(true);
    set_timeout(s, ANSWER);
    assert_eq!(read_answer(s, complete).as_deref(), Ok(want));
    for &pid in pids {
        assert_ne!(state(pid), Some('T'), "pid {pid} is still stopped");
    }
}

fn tcp_timeout(s: &TcpStream, t: Duration) {
    s.set_read_timeout(Some(t)).unwrap();
}

fn unix_timeout(s: &UnixStream, t: Duration) {
    s.set_read_timeout(Some(t)).unwrap();
}

/// After drop: the process is gone, nothing listens, the folder is removed.
fn assert_gone(pid: u32, name: &str, port: Option<u16>, dir: &Path) {
    assert!(!runs(pid, name), "{name} (pid {pid}) still runs");
    if let Some(port) = port {
        assert!(!listening(port), "port {port} still listens");
    }
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[test]
fn memcached_stores_freezes_dies_on_kill_and_is_removed() {
    let t0 = Instant::now();
    let Some(mc) = MemcachedServer::start() else {
        return;
    };
    eprintln!("memcached started in {:?}", t0.elapsed());
    let (port, pid, dir) = (mc.port(), mc.pid(), mc.dir().to_path_buf());
    assert_eq!(mc.url(), format!("memcached://127.0.0.1:{port}"));
    assert!(runs(pid, "memcached"));
    assert!(mc.socket().is_none());

    let mut s = connect(port);
    let mut mc_ask = |req: &[u8]| ask(&mut s, req, memcached_complete);
    assert_eq!(
        mc_ask(b"set k 0 0 5\r\nhello\r\n").as_deref(),
        Ok("STORED\r\n")
    );
    let value = "VALUE k 0 5\r\nhello\r\nEND\r\n";
    assert_eq!(mc_ask(b"get k\r\n").as_deref(), Ok(value));
    assert_freezes(
        &mut s,
        tcp_timeout,
        &|cont| mc.freeze(cont),
        &[pid],
        b"get k\r\n",
        memcached_complete,
        value,
    );
    // New connections are served again too.
    assert_eq!(
        ask(&mut connect(port), b"get k\r\n", memcached_complete).as_deref(),
        Ok(value)
    );

    mc.kill();
    assert!(!runs(pid, "memcached"), "runs after kill()");
    assert!(!listening(port), "listens after kill()");
    assert!(dir.exists(), "the folder stays until drop");
    drop(mc);
    assert_gone(pid, "memcached", Some(port), &dir);
}

#[test]
fn memcached_start_with_sets_threads_and_memory_and_drop_stops_it() {
    let Some(mc) = MemcachedServer::start_with(1, 16) else {
        return;
    };
    let (port, pid, dir) = (mc.port(), mc.pid(), mc.dir().to_path_buf());
    let stats = ask(&mut connect(port), b"stats settings\r\n", |b| {
        b.ends_with(b"END\r\n")
    })
    .unwrap();
    for line in [
        "STAT num_threads 1\r\n",
        "STAT maxbytes 16777216\r\n",
        "STAT maxconns 4096\r\n",
        "STAT udpport 0\r\n",
        "STAT tcpport ",
    ] {
        assert!(stats.contains(line), "no {line:?} in {stats}");
    }
    // Not killed first: drop's SIGTERM must end it.
    drop(mc);
    assert_gone(pid, "memcached", Some(port), &dir);
}

#[test]
fn memcached_on_a_unix_socket_stores_freezes_and_is_removed() {
    let Some(mc) = MemcachedServer::start_unix() else {
        return;
    };
    let (pid, dir) = (mc.pid(), mc.dir().to_path_buf());
    let socket: PathBuf = mc.socket().expect("a unix-socket server").to_path_buf();
    assert!(socket.starts_with(&dir));
    assert_eq!(mc.url(), format!("memcached://{}", socket.display()));
    assert!(mc.url().starts_with("memcached:///"));

    let mut s = UnixStream::connect(&socket).unwrap();
    s.set_read_timeout(Some(ANSWER)).unwrap();
    assert_eq!(
        ask(&mut s, b"set u 0 0 3\r\nabc\r\n", memcached_complete).as_deref(),
        Ok("STORED\r\n")
    );
    let value = "VALUE u 0 3\r\nabc\r\nEND\r\n";
    assert_eq!(
        ask(&mut s, b"get u\r\n", memcached_complete).as_deref(),
        Ok(value)
    );
    assert_freezes(
        &mut s,
        unix_timeout,
        &|cont| mc.freeze(cont),
        &[pid],
        b"get u\r\n",
        memcached_complete,
        value,
    );
    drop(mc);
    assert_gone(pid, "memcached", None, &dir);
    assert!(UnixStream::connect(&socket).is_err());
}

#[test]
fn memcached_servers_side_by_side_get_ports_of_their_own() {
    let starts: Vec<_> = (0..3)
        .map(|_| named_thread(|| MemcachedServer::start_with(1, 8)))
        .collect();
    let servers: Vec<MemcachedServer> = starts
        .into_iter()
        .filter_map(|t| t.join().expect("start thread"))
        .collect();
    if servers.len() < 3 {
        return; // skipped (said on stderr by each)
    }
    let mut ports: Vec<u16> = servers.iter().map(MemcachedServer::port).collect();
    ports.sort_unstable();
    ports.dedup();
    assert_eq!(ports.len(), 3, "{ports:?}");
    for mc in &servers {
        let answer = ask(&mut connect(mc.port()), b"version\r\n", memcached_complete).unwrap();
        assert!(answer.starts_with("VERSION "), "{answer}");
    }
}

#[test]
fn redis_stores_freezes_dies_on_kill_and_is_removed() {
    let t0 = Instant::now();
    let Some(r) = RedisServer::start() else {
        return;
    };
    eprintln!("redis-server started in {:?}", t0.elapsed());
    let (port, pid, dir) = (r.port(), r.pid(), r.dir().to_path_buf());
    assert_eq!(r.url(), format!("redis://127.0.0.1:{port}/0"));
    assert!(runs(pid, "redis-server"));

    let mut s = connect(port);
    assert_eq!(
        redis(&mut s, &["SET", "k", "hello"]).as_deref(),
        Ok("+OK\r\n")
    );
    assert_eq!(
        redis(&mut s, &["GET", "k"]).as_deref(),
        Ok("$5\r\nhello\r\n")
    );
    // Nothing is saved: no snapshot points, no append-only file.
    assert_eq!(
        redis(&mut s, &["CONFIG", "GET", "save"]).as_deref(),
        Ok("*2\r\n$4\r\nsave\r\n$0\r\n\r\n"),
    );
    assert_freezes(
        &mut s,
        tcp_timeout,
        &|cont| r.freeze(cont),
        &[pid],
        &resp(&["GET", "k"]),
        resp_complete,
        "$5\r\nhello\r\n",
    );

    r.kill();
    assert!(!runs(pid, "redis-server"), "runs after kill()");
    assert!(!listening(port), "listens after kill()");
    drop(r);
    assert_gone(pid, "redis-server", Some(port), &dir);
}

#[test]
fn redis_with_a_password_wants_auth_and_drop_stops_it() {
    // Characters that a URL must percent-encode in its userinfo.
    let password = "p@ss/w:rd";
    let Some(r) = RedisServer::start_with_password(password) else {
        return;
    };
    let (port, pid, dir) = (r.port(), r.pid(), r.dir().to_path_buf());
    assert_eq!(
        r.url(),
        format!("redis://:p%40ss%2Fw%3Ard@127.0.0.1:{port}/0")
    );
    let mut s = connect(port);
    let noauth = redis(&mut s, &["GET", "k"]).unwrap();
    assert!(noauth.starts_with("-NOAUTH"), "{noauth}");
    let wrong = redis(&mut s, &["AUTH", "nope"]).unwrap();
    assert!(wrong.starts_with("-WRONGPASS"), "{wrong}");
    assert_eq!(redis(&mut s, &["AUTH", password]).as_deref(), Ok("+OK\r\n"));
    assert_eq!(redis(&mut s, &["PING"]).as_deref(), Ok("+PONG\r\n"));
    drop(r);
    assert_gone(pid, "redis-server", Some(port), &dir);
}

#[test]
fn redis_cluster_forms_answers_freezes_and_is_removed() {
    let t0 = Instant::now();
    let Some(c) = RedisCluster::start(3) else {
        return;
    };
    eprintln!("Redis cluster of 3 formed in {:?}", t0.elapsed());
    let nodes = c.nodes();
    assert_eq!(nodes.len(), 3);
    let ports: Vec<u16> = nodes.iter().map(RedisServer::port).collect();
    let pids: Vec<u32> = nodes.iter().map(RedisServer::pid).collect();
    let dir = c.dir().to_path_buf();
    assert_eq!(
        c.urls(),
        ports
            .iter()
            .map(|p| format!("redis://127.0.0.1:{p}/0"))
            .collect::<Vec<_>>()
    );
    assert_eq!(c.url(), c.urls()[0]);
    for n in nodes {
        assert!(n.dir().starts_with(&dir));
        assert!(n.dir().join("nodes.conf").exists());
        let info = redis(&mut connect(n.port()), &["CLUSTER", "INFO"]).unwrap();
        for line in [
            "cluster_state:ok",
            "cluster_slots_assigned:16384",
            "cluster_known_nodes:3",
            "cluster_size:3",
        ] {
            assert!(
                info.contains(line),
                "node {}: no {line} in {info}",
                n.port()
            );
        }
    }

    // A key lives on one node; the others redirect to it.
    let mut s = connect(ports[0]);
    let mut reply = redis(&mut s, &["SET", "perflab", "v"]).unwrap();
    if let Some(moved) = reply.strip_prefix("-MOVED ") {
        let to: u16 = moved
            .trim()
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .unwrap_or_else(|| panic!("{reply}"));
        assert!(ports.contains(&to), "MOVED to a stranger: {reply}");
        s = connect(to);
        reply = redis(&mut s, &["SET", "perflab", "v"]).unwrap();
    }
    assert_eq!(reply, "+OK\r\n");
    assert_freezes(
        &mut s,
        tcp_timeout,
        &|cont| c.freeze(cont),
        &pids,
        &resp(&["GET", "perflab"]),
        resp_complete,
        "$1\r\nv\r\n",
    );

    drop(c);
    for (&pid, &port) in pids.iter().zip(&ports) {
        assert_gone(pid, "redis-server", Some(port), &dir);
    }
}
