//! `perflab kv`'s commands against real servers (a throwaway Redis or memcached each, never
//! a mock): redis-benchmark's tests and trailing command, perflab's own `--command` mixes,
//! memtier's `--command`, and hostile commands. After each run the server holds what the
//! peer's run would leave: the list's length after the pushes and pops, the hash's fields,
//! the counters' sum equal to the counted requests.
//!
//! Skipped, with "SKIPPED <test>: ..." on stderr, where a server is not installed — unless
//! `PERFLAB_REQUIRE_SERVERS` is set (CI), where that is a failure (`common::skip`).

mod common;

use common::servers::{MemcachedServer, RedisServer};
use common::{Results, json, run, stderr};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One RESP reply, as text: a simple string, an error (`-...`), an integer, a bulk string
/// (`(nil)` for a null), or an array as its elements joined by newlines.
fn read_reply(r: &mut impl BufRead) -> String {
    let mut line = String::new();
    r.read_line(&mut line).expect("a reply");
    let line = line.trim_end_matches("\r\n");
    let (kind, rest) = line.split_at(1);
    match kind {
        "+" | ":" => rest.to_string(),
        "-" => line.to_string(),
        "$" => {
            let n: i64 = rest.parse().unwrap();
            if n < 0 {
                return "(nil)".into();
            }
            let mut buf = vec![0u8; n as usize + 2];
            std::io::Read::read_exact(r, &mut buf).unwrap();
            String::from_utf8_lossy(&buf[..n as usize]).into_owned()
        }
        "*" => {
            let n: i64 = rest.parse().unwrap();
            (0..n.max(0))
                .map(|_| read_reply(r))
                .collect::<Vec<_>>()
                .join("\n")
        }
        _ => panic!("not RESP: {line}"),
    }
}

/// Sends one command to Redis and returns its reply as text.
fn redis(port: u16, args: &[&str]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut request = format!("*{}\r\n", args.len());
    for a in args {
        request.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s.write_all(request.as_bytes()).unwrap();
    read_reply(&mut BufReader::new(s))
}

fn int(port: u16, args: &[&str]) -> i64 {
    let reply = redis(port, args);
    reply
        .parse()
        .unwrap_or_else(|_| panic!("{args:?}: {reply}"))
}

/// Every key matching `pattern`.
fn keys(port: u16, pattern: &str) -> Vec<String> {
    let all = redis(port, &["KEYS", pattern]);
    all.lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// `INFO commandstats`'s calls of `command`.
fn calls(port: u16, command: &str) -> u64 {
    let info = redis(port, &["INFO", "commandstats"]);
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("cmdstat_{command}:calls=")))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// One of memcached's `stats`.
fn memcached_stat(port: u16, name: &str) -> u64 {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"stats\r\n").unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l == "END" || l.is_empty() {
            panic!("no stat {name}");
        }
        if let Some(v) = l.strip_prefix(&format!("STAT {name} ")) {
            return v.parse().unwrap();
        }
    }
}

/// The groups by kind of a trial: (name, requests, errors).
fn kinds(t: &serde_json::Value) -> Vec<(String, u64, u64)> {
    t["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["by"] == "kind")
        .map(|g| {
            (
                g["key"].as_str().unwrap().to_string(),
                g["ops"].as_u64().unwrap(),
                g["errors"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn redis_benchmarks_default_suite_runs_each_test_as_a_step_and_leaves_its_keys() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let port = server.port().to_string();
    let r = Results::new("kv-suite");
    let n = 300;
    let out = run(
        &r,
        &[
            "--json",
            "kv",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-n",
            "300",
            "-c",
            "4",
            "-r",
            "50",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("default suite"), "{}", stderr(&out));
    let v = json(&out);
    let steps = v["steps"].as_array().unwrap();
    let tests: Vec<&str> = steps
        .iter()
        .map(|s| s["params"]["test"].as_str().unwrap())
        .collect();
    assert_eq!(
        tests,
        [
            "ping_inline",
            "ping_mbulk",
            "set",
            "get",
            "incr",
            "lpush",
            "rpush",
            "lpop",
            "rpop",
            "sadd",
            "hset",
            "spop",
            "zadd",
            "zpopmin",
            "lpush_lrange",
            "lrange_100",
            "lrange_300",
            "lrange_500",
            "lrange_600",
            "mset",
            "xadd"
        ]
    );
    for s in steps {
        let t = &s["trials"][0];
        assert_eq!(t["ops"].as_u64(), Some(n), "{}", s["params"]);
        assert_eq!(t["errors"].as_u64(), Some(0), "{}", t["error_samples"]);
        let k = kinds(t);
        assert_eq!(k.len(), 1, "{k:?}");
        assert_eq!(k[0].1, n);
        let check = &s["checks"][0];
        assert_eq!(check["passed"], true, "{check}");
    }
    let p = server.port();
    // Pushes, pops, and the push before LRANGE: one push's worth is left.
    assert_eq!(int(p, &["LLEN", "mylist"]), n as i64);
    assert_eq!(int(p, &["XLEN", "mystream"]), n as i64);
    // -r 50: at most 50 fields and keys; the pops drained the set and the sorted set.
    let fields = int(p, &["HLEN", "myhash"]);
    assert!((1..=50).contains(&fields), "{fields}");
    assert_eq!(int(p, &["EXISTS", "myset"]), 0);
    assert_eq!(int(p, &["EXISTS", "myzset"]), 0);
    let counters = keys(p, "counter:*");
    assert!(!counters.is_empty() && counters.len() <= 50);
    let sum: i64 = counters.iter().map(|k| int(p, &["GET", k])).sum();
    assert_eq!(sum, n as i64, "every counted INCR, once");
    for k in keys(p, "key:*") {
        assert_eq!(k.len(), "key:".len() + 12, "{k}");
        assert_eq!(int(p, &["STRLEN", &k]), 3, "-d 3");
    }
}

#[test]
fn a_trailing_command_is_redis_benchmarks_with_or_without_r() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let port = server.port().to_string();
    let r = Results::new("kv-trailing");
    let base = ["kv", "-h", "127.0.0.1", "-p", &port, "-c", "3"];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        run(&r, &a)
    };
    let out = with(&[
        "-n",
        "200",
        "-r",
        "10",
        "-t",
        "get",
        "LPUSH",
        "biglist",
        "__rand_int__",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("ignores -t"), "{}", stderr(&out));
    let p = server.port();
    assert_eq!(int(p, &["LLEN", "biglist"]), 200);
    for e in redis(p, &["LRANGE", "biglist", "0", "-1"]).lines() {
        assert!(e.len() == 12 && e.bytes().all(|b| b.is_ascii_digit()) && e < "000000000010");
    }
    // Without -r, __rand_int__ is sent as written: one key.
    let out = with(&["-n", "50", "SET", "k:__rand_int__", "x y"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(redis(p, &["GET", "k:__rand_int__"]), "x y");
}

#[test]
fn own_commands_are_groups_with_their_figures_and_leave_their_keys() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let r = Results::new("kv-own");
    let out = run(
        &r,
        &[
            "--json",
            "kv",
            "--target",
            &server.url(),
            "--clients",
            "4",
            "--threads",
            "1",
            "--warmup",
            "0",
            "--ops",
            "400",
            "--key-maximum",
            "19",
            "--value-size",
            "10",
            "--command",
            "HSET h:{key} f {data}",
            "--command",
            "INCR c",
            "--command-ratio",
            "3,1",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let t = &v["steps"][0]["trials"][0];
    let k = kinds(t);
    let hset = k.iter().find(|g| g.0 == "hset").expect("hset's group");
    let incr = k.iter().find(|g| g.0 == "incr").expect("incr's group");
    assert_eq!(hset.1 + incr.1, 400);
    assert!(hset.1 > incr.1, "weights 3:1: {k:?}");
    for g in t["groups"].as_array().unwrap() {
        assert!(g["ops_per_sec"].as_f64().unwrap() > 0.0, "{g}");
        assert!(g["latency"]["p50_ns"].as_u64().unwrap() > 0, "{g}");
    }
    let p = server.port();
    assert_eq!(int(p, &["GET", "c"]), incr.1 as i64);
    let hashes = keys(p, "h:perflab:*");
    assert!(!hashes.is_empty() && hashes.len() <= 20, "{hashes:?}");
    for h in hashes {
        assert_eq!(int(p, &["HSTRLEN", &h, "f"]), 10);
    }
    assert_eq!(
        v["spec"]["commands"][0].as_str(),
        Some("HSET h:{key} f {data} (weight 3)")
    );
}

#[test]
fn a_reply_of_the_wrong_kind_is_a_counted_error_of_its_command() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let p = server.port();
    redis(p, &["SET", "s", "x"]);
    let r = Results::new("kv-wrongtype");
    let out = run(
        &r,
        &[
            "--json",
            "kv",
            "--target",
            &server.url(),
            "--clients",
            "2",
            "--threads",
            "1",
            "--warmup",
            "0",
            "--ops",
            "100",
            "--command",
            "LPOP s",
            "--command",
            "GET s",
            "--command",
            "NOSUCHCOMMAND x",
        ],
    );
    let v = json(&out);
    let t = &v["steps"][0]["trials"][0];
    let k = kinds(t);
    let of = |name: &str| k.iter().find(|g| g.0 == name).cloned().unwrap();
    assert_eq!(of("lpop").1, 0);
    assert!(of("lpop").2 > 0);
    assert_eq!(of("get").2, 0);
    assert_eq!(of("nosuchcommand").1, 0);
    assert_eq!(
        t["errors_by_kind"]["server"].as_u64(),
        Some(of("lpop").2 + of("nosuchcommand").2)
    );
    let samples = t["error_samples"].to_string();
    assert!(
        samples.contains("WRONGTYPE") && samples.contains("unknown command"),
        "{samples}"
    );
    assert_eq!(redis(p, &["GET", "s"]), "x");
}

#[test]
fn hostile_commands_are_one_line_or_counted_and_end_soon() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let r = Results::new("kv-hostile");
    let url = server.url();
    let refused = |command: &str, says: &str| {
        let out = run(&r, &["kv", "--target", &url, "--command", command]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
        let e = stderr(&out);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains(says), "{command}: {e}");
    };
    refused("BLPOP q 0", "no timeout");
    refused("SUBSCRIBE ch", "subscriber");
    // (One argument of 1 MB is more than Linux passes to a program: 100 kB stands in.)
    refused(&format!("SET k {}", "x".repeat(100_000)), "--value-size");
    refused("GET \"k", "unbalanced quotes");
    let out = run(
        &r,
        &["kv", "--target", &url, "--command", "GET k", "--verify"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--verify does not go with"),
        "{}",
        stderr(&out)
    );
    // A 1 MB value, as {data}: stored whole.
    let out = run(
        &r,
        &[
            "kv",
            "--target",
            &url,
            "--clients",
            "1",
            "--threads",
            "1",
            "--warmup",
            "0",
            "--ops",
            "3",
            "--value-size",
            "1m",
            "--command",
            "SET big {data}",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(int(server.port(), &["STRLEN", "big"]), 1 << 20);
    // A command that blocks, interrupted: the run ends within 2 s of Ctrl-C.
    let (mut child, started, _err) = common::spawn_watching(
        &r,
        &[
            "kv",
            "--target",
            &url,
            "--clients",
            "2",
            "--threads",
            "1",
            "--warmup",
            "0",
            "--duration",
            "20s",
            "--op-timeout",
            "60s",
            "--command",
            "BLPOP nothing 30",
        ],
        "perflab kv: run",
    );
    started
        .recv_timeout(Duration::from_secs(20))
        .expect("the run starts");
    std::thread::sleep(Duration::from_millis(500));
    let (code, took) = common::interrupt_and_wait(&mut child, Duration::from_secs(10))
        .expect("Ctrl-C ends the run");
    assert_eq!(code, Some(130));
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn memtiers_commands_keep_its_ratio_blocks_and_key_range() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let port = server.port().to_string();
    let r = Results::new("kv-memtier");
    let out = run(
        &r,
        &[
            "--json",
            "kv",
            "--server",
            "127.0.0.1",
            "--port",
            &port,
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "50",
            "--generate-keys",
            "--command=SET __key__ __data__",
            "--command-ratio=2",
            "--command=GET __key__",
            "--command-key-pattern=S",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let p = server.port();
    // 100 requests of one worker, in blocks of two SETs and one GET.
    assert_eq!(calls(p, "set"), 67);
    assert_eq!(calls(p, "get"), 33);
    for k in keys(p, "*") {
        let n: u64 = k.strip_prefix("memtier-").unwrap().parse().unwrap();
        assert!(n <= 10_000_000);
        assert_eq!(int(p, &["STRLEN", &k]), 32, "memtier's -d 32");
    }
    // memtier refuses a key pattern or a ratio beside its commands; so does perflab.
    let out = run(
        &r,
        &[
            "kv",
            "--server",
            "127.0.0.1",
            "--port",
            &port,
            "--command",
            "GET __key__",
            "--key-pattern",
            "R:R",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--command-key-pattern"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn memcached_text_and_meta_commands_with_keys() {
    let Some(m) = MemcachedServer::start() else {
        return;
    };
    for (protocol, set, get) in [
        ("text", "set {key} 0 0 {data}", "get {key}"),
        ("meta", "ms {key} {data} T0", "mg {key} v"),
    ] {
        let r = Results::new("kv-mc-commands");
        let out = run(
            &r,
            &[
                "--json",
                "kv",
                "--target",
                &m.url(),
                "--protocol",
                protocol,
                "--clients",
                "2",
                "--threads",
                "1",
                "--warmup",
                "0",
                "--ops",
                "300",
                "--key-maximum",
                "9",
                "--value-size",
                "20",
                "--command",
                set,
                "--command",
                get,
                "--command",
                "delete nothing-here",
            ],
        );
        if protocol == "meta" {
            // delete is a text command; meta's is md.
            assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
            assert!(stderr(&out).contains("meta commands"), "{}", stderr(&out));
            continue;
        }
        assert!(out.status.success(), "{protocol}: {}", stderr(&out));
        let v = json(&out);
        let t = &v["steps"][0]["trials"][0];
        assert_eq!(t["errors"].as_u64(), Some(0), "{}", t["error_samples"]);
        let names: Vec<String> = kinds(t).into_iter().map(|k| k.0).collect();
        assert_eq!(names.len(), 3, "{names:?}");
        // The sets left their keys: at most the ten of the key space, 20 bytes each.
        let items = memcached_stat(m.port(), "curr_items");
        assert!((1..=10).contains(&items), "{items}");
        // memcached's own counters of the three verbs agree with perflab's count.
        let check = &v["steps"][0]["checks"][0];
        assert_eq!(check["passed"], true, "{check}");
    }
    let r = Results::new("kv-mc-meta");
    let out = run(
        &r,
        &[
            "--json",
            "kv",
            "--target",
            &m.url(),
            "--protocol",
            "meta",
            "--clients",
            "2",
            "--threads",
            "1",
            "--warmup",
            "0",
            "--ops",
            "300",
            "--key-maximum",
            "9",
            "--value-size",
            "20",
            "--command",
            "ms {key} {data} T0",
            "--command",
            "mg {key} v",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["errors"].as_u64(), Some(0), "{}", t["error_samples"]);
    assert_eq!(kinds(t).iter().map(|k| k.1).sum::<u64>(), 300);
    assert_eq!(v["steps"][0]["checks"][0]["passed"], true);
}
