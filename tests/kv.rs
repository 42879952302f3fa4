//! `perflab kv` against real caches: a throwaway memcached (perflab's own default and the
//! tests' `MemcachedServer`) and Redis (`RedisServer`), on free ports. Never a mock.

mod common;

use common::servers::{MemcachedServer, RedisCluster, RedisServer};
use common::{Results, json, run, stderr};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Short steps over a small key space: the tests check behaviour, not speed.
const SHORT: [&str; 6] = [
    "--key-maximum",
    "1999",
    "--warmup",
    "100ms",
    "--duration",
    "700ms",
];

fn kv(results: &Results, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--json", "kv"];
    args.extend_from_slice(&SHORT);
    args.extend_from_slice(extra);
    run(results, &args)
}

/// The figures every healthy step must show: requests done, none failed, every get a hit
/// (the keys were all loaded), gets and sets timed apart, the server's count agreeing.
fn assert_healthy(v: &serde_json::Value) {
    for step in v["steps"].as_array().expect("steps") {
        let t = &step["trials"][0];
        assert!(t["ops"].as_u64().unwrap() > 0, "{t}");
        assert_eq!(t["errors"].as_u64(), Some(0), "{}", t["error_samples"]);
        assert_eq!(
            t["figures"]["hit_pct"].as_f64(),
            Some(100.0),
            "{}",
            t["figures"]
        );
        let kinds: Vec<&str> = t["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["by"] == "kind")
            .map(|g| g["key"].as_str().unwrap())
            .collect();
        assert!(kinds.contains(&"get"), "{kinds:?}");
        let check = step["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "counters_match")
            .expect("the server's counters are compared");
        assert_eq!(check["passed"], true, "{check}");
        assert!(t["figures"]["server_cpu_per_op_ns"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn with_no_target_perflab_starts_its_own_memcached() {
    if common::skip::find_program("memcached").is_none() {
        common::skip::skip_or_fail("kv's default target needs memcached", "memcached");
        return;
    }
    let r = Results::new("kv-default");
    let out = kv(&r, &["--clients", "1,4", "--threads", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["spec"]["workload"], "kv");
    assert_eq!(v["spec"]["throwaway"], true);
    assert!(
        v["spec"]["server"]
            .as_str()
            .unwrap()
            .starts_with("memcached ")
    );
    assert_eq!(v["steps"].as_array().unwrap().len(), 2);
    assert_healthy(&v);
    // The seed's mix: about 10% sets.
    let t = &v["steps"][1]["trials"][0];
    let sets = t["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["by"] == "kind" && g["key"] == "set")
        .map(|g| g["ops"].as_f64().unwrap())
        .unwrap();
    let share = sets / t["ops"].as_f64().unwrap();
    assert!((0.05..0.15).contains(&share), "sets were {share}");
}

#[test]
fn memcached_text_and_meta_protocols_verify_every_value() {
    let Some(m) = MemcachedServer::start() else {
        return;
    };
    for protocol in ["text", "meta"] {
        let r = Results::new("kv-mc");
        let out = kv(
            &r,
            &[
                "--target",
                &m.url(),
                "--protocol",
                protocol,
                "--verify",
                "--clients",
                "4",
                "--threads",
                "2",
                "--pipeline",
                "1,8",
                "--value-size",
                "10-100:1,5k-20k:1",
            ],
        );
        assert!(out.status.success(), "{protocol}: {}", stderr(&out));
        let v = json(&out);
        assert_eq!(v["spec"]["protocol"], format!("memcache_{protocol}"));
        assert_healthy(&v);
    }
}

#[test]
fn redis_over_resp2_and_resp3() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    for url in [redis.url(), format!("{}?protocol=3", redis.url())] {
        let r = Results::new("kv-redis");
        let out = kv(
            &r,
            &[
                "--target",
                &url,
                "--verify",
                "--clients",
                "8",
                "--threads",
                "2",
                "--pipeline",
                "4",
                "--ratio",
                "1:1",
                "--key-pattern",
                "zipf",
            ],
        );
        assert!(out.status.success(), "{url}: {}", stderr(&out));
        let v = json(&out);
        assert!(v["spec"]["server"].as_str().unwrap().starts_with("redis "));
        assert_healthy(&v);
    }
}

/// rediss://: every value verified through TLS, with values up to 20 KB and 32 requests in
/// flight per connection, so records span reads and the socket fills; a plain port named
/// rediss:// is one line.
#[test]
fn redis_over_tls() {
    let Some(redis) = RedisServer::start_tls() else {
        return;
    };
    let url = redis.tls_url().expect("a TLS port");
    let r = Results::new("kv-tls");
    let out = kv(
        &r,
        &[
            "--target",
            &url,
            "--verify",
            "--clients",
            "4",
            "--threads",
            "2",
            "--pipeline",
            "32",
            "--ratio",
            "1:1",
            // A self-signed certificate: verification is tests/trust.rs's subject.
            "--insecure",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["spec"]["target"], url.as_str());
    assert!(v["spec"]["server"].as_str().unwrap().starts_with("redis "));
    assert_healthy(&v);
    let plain_as_tls = redis.url().replacen("redis://", "rediss://", 1);
    let out = kv(
        &r,
        &["--target", &plain_as_tls, "--clients", "1", "--insecure"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("TLS"), "{err}");
}

#[test]
fn a_wrong_redis_password_is_one_line_that_never_shows_it() {
    let Some(redis) = RedisServer::start_with_password("s3cret-pw") else {
        return;
    };
    let r = Results::new("kv-auth");
    let wrong = redis.url().replace("s3cret-pw", "not-the-pw");
    let out = kv(&r, &["--target", &wrong, "--clients", "1"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("password"), "{err}");
    assert!(!err.contains("not-the-pw"), "{err}");
    // The right one works, and is neither printed nor archived.
    let out = kv(&r, &["--target", &redis.url(), "--clients", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("s3cret-pw"));
    for entry in walk(r.path()) {
        let body = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&body).contains("s3cret-pw"),
            "{} holds the password",
            entry.display()
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn an_unreachable_target_is_one_line_and_exit_2() {
    let r = Results::new("kv-unreachable");
    // Port 1 on loopback: nothing listens there.
    let out = kv(&r, &["--target", "memcached://127.0.0.1:1"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("cannot connect"), "{err}");
}

#[test]
fn bad_options_are_one_line_and_exit_2() {
    let r = Results::new("kv-bad");
    for (args, says) in [
        (vec!["--ratio", "nine"], "ratio"),
        (vec!["--value-size", "100-10:1"], "value-size"),
        (vec!["--clients", "2", "--threads", "4"], "clients"),
        (vec!["--key-pattern", "spiral"], "key-pattern"),
        (vec!["--protocol", "binary"], "protocol"),
        (
            vec!["--target", "rediss:///tmp/perflab-no.sock"],
            "Unix socket",
        ),
        (vec!["--target", "postgres://h/db"], "not a cache"),
    ] {
        let out = kv(&r, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let out = run(&r, &["oltp", "--target", "memcached://127.0.0.1:11211"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("perflab kv"), "{}", stderr(&out));
}

/// Coordinated omission, proven: the server stops for a second during a fixed-rate run.
/// Requests keep falling due on schedule; each is timed from when it was due, so the tail
/// shows the stall, and every one of them is counted (done, failed or missed).
#[test]
fn a_one_second_stall_shows_in_the_tail_and_no_request_is_lost() {
    let Some(m) = MemcachedServer::start() else {
        return;
    };
    let r = Results::new("kv-stall");
    let child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["--json", "kv", "--target", &m.url(), "--key-maximum", "999"])
        .args(["--clients", "4", "--threads", "1", "--rate", "2000/s"])
        .args(["--warmup", "200ms", "--duration", "3s", "--results"])
        .arg(r.path())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Loading 1,000 keys takes well under a second; the measure phase is then under way.
    std::thread::sleep(Duration::from_millis(1500));
    m.freeze(false);
    std::thread::sleep(Duration::from_secs(1));
    m.freeze(true);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let t = &v["steps"][0]["trials"][0];
    let p999 = t["latency"]["p999_ns"].as_f64().unwrap();
    assert!(p999 >= 0.9e9, "p99.9 {p999} ns does not show the 1 s stall");
    let done = t["ops"].as_f64().unwrap() + t["errors"].as_f64().unwrap();
    let missed = t["schedule"]["missed_ops"].as_f64().unwrap();
    let due = 2000.0 * t["elapsed_ns"].as_f64().unwrap() / 1e9;
    assert!(
        done + missed >= 0.98 * due,
        "{done} done + {missed} missed of {due} due"
    );
}

/// Sends a raw command to Redis and returns the reply's first line.
fn redis_command(addr: &str, command: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(command.as_bytes()).unwrap();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[test]
fn dropped_connections_are_counted_and_opened_again() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let addr = redis
        .url()
        .trim_start_matches("redis://")
        .trim_end_matches("/0")
        .to_string();
    let r = Results::new("kv-drop");
    let child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args([
            "--json",
            "kv",
            "--target",
            &redis.url(),
            "--key-maximum",
            "999",
        ])
        .args(["--clients", "4", "--threads", "1", "--pipeline", "4"])
        .args(["--warmup", "200ms", "--duration", "3s", "--results"])
        .arg(r.path())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1800));
    let killed = redis_command(&addr, "CLIENT KILL TYPE normal\r\n");
    assert!(killed.starts_with(':'), "{killed}");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let t = &v["steps"][0]["trials"][0];
    assert!(
        t["figures"]["reconnects_per_client"].as_f64().unwrap() > 0.0,
        "{}",
        t["figures"]
    );
    // The step went on: requests were done in the last second, after the drop.
    let series = t["series"].as_array().unwrap();
    assert!(series.last().unwrap()["ops"].as_u64().unwrap() > 0);
}

#[test]
fn prepare_run_and_cleanup_leave_other_keys_alone() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let addr = redis
        .url()
        .trim_start_matches("redis://")
        .trim_end_matches("/0")
        .to_string();
    assert!(redis_command(&addr, "SET someone-elses-key 1\r\n").starts_with("+OK"));
    let r = Results::new("kv-steps");
    let url = redis.url();
    let out = run(
        &r,
        &["kv", "prepare", "--target", &url, "--key-maximum", "499"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(redis_command(&addr, "DBSIZE\r\n").trim(), ":501");
    let out = run(
        &r,
        &[
            "--json",
            "kv",
            "run",
            "--target",
            &url,
            "--key-maximum",
            "499",
            "--clients",
            "2",
            "--threads",
            "1",
            "--warmup",
            "100ms",
            "--duration",
            "500ms",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_healthy(&json(&out));
    let out = run(
        &r,
        &["kv", "cleanup", "--target", &url, "--key-maximum", "499"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(redis_command(&addr, "DBSIZE\r\n").trim(), ":1");
}

#[test]
fn server_threads_sweep_restarts_the_throwaway_memcached() {
    if common::skip::find_program("memcached").is_none() {
        common::skip::skip_or_fail("--server-threads needs memcached", "memcached");
        return;
    }
    let r = Results::new("kv-threads");
    let out = kv(
        &r,
        &[
            "--server-threads",
            "1,2",
            "--clients",
            "2",
            "--threads",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[1]["params"]["server_threads"], 2);
    assert_healthy(&v);
}

/// A raw memcached `stats` value, from the server on `port`.
fn memcached_stat(port: u16, name: &str) -> u64 {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"stats\r\n").unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while !text.ends_with("END\r\n") {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "memcached closed the connection");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("STAT {name} ")))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
        .trim()
        .parse()
        .unwrap()
}

/// The step's groups by shard, as (key, label, ops).
fn shard_groups(t: &serde_json::Value) -> Vec<(String, String, u64)> {
    t["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["by"] == "shard")
        .map(|g| {
            (
                g["key"].as_str().unwrap().to_string(),
                g["label"].as_str().unwrap().to_string(),
                g["ops"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// A sharded run's record that must be healthy, with `shards` servers spread by `sharding`:
/// its first step's trial and that trial's groups by shard (one per server).
fn sharded_trial(
    out: &std::process::Output,
    sharding: &str,
    shards: usize,
) -> (serde_json::Value, Vec<(String, String, u64)>) {
    assert!(out.status.success(), "{}", stderr(out));
    let v = json(out);
    assert_eq!(v["spec"]["sharding"], sharding);
    assert_eq!(v["spec"]["shards"].as_array().unwrap().len(), shards);
    assert_healthy(&v);
    let t = v["steps"][0]["trials"][0].clone();
    let groups = shard_groups(&t);
    assert_eq!(groups.len(), shards, "{groups:?}");
    (t, groups)
}

#[test]
fn two_memcached_targets_share_the_keys_by_ketama() {
    let (Some(a), Some(b)) = (MemcachedServer::start(), MemcachedServer::start()) else {
        return;
    };
    let r = Results::new("kv-ketama");
    let out = kv(
        &r,
        &[
            "--target",
            &a.url(),
            "--target",
            &b.url(),
            "--protocol",
            "meta",
            "--verify",
            "--clients",
            "4",
            "--threads",
            "2",
            "--pipeline",
            "4",
            "--keep",
        ],
    );
    let (t, groups) = sharded_trial(&out, "ketama", 2);
    assert_eq!((groups[0].0.as_str(), groups[1].0.as_str()), ("1", "2"));
    assert_eq!(groups[0].1, a.url());
    assert_eq!(groups[1].1, b.url());
    assert_eq!(
        groups.iter().map(|g| g.2).sum::<u64>(),
        t["ops"].as_u64().unwrap()
    );
    // Every key is on exactly one server (the run kept them), and each has about half.
    let items = [
        memcached_stat(a.port(), "curr_items"),
        memcached_stat(b.port(), "curr_items"),
    ];
    assert_eq!(items[0] + items[1], 2000, "{items:?}");
    for n in items {
        assert!((700..=1300).contains(&n), "{items:?}");
    }
    // Both servers were asked: each request went to its key's server (a get of a key on
    // the other server would have missed).
    for (g, port) in groups.iter().zip([a.port(), b.port()]) {
        let gets = memcached_stat(port, "cmd_get");
        assert!(gets > 0 && g.2 > 0, "{groups:?}");
    }
    // Cleanup deletes every key from its own server.
    let out = run(
        &r,
        &[
            "kv",
            "cleanup",
            "--target",
            &a.url(),
            "--target",
            &b.url(),
            "--key-maximum",
            "1999",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(memcached_stat(a.port(), "curr_items"), 0);
    assert_eq!(memcached_stat(b.port(), "curr_items"), 0);
}

#[test]
fn several_targets_are_checked_before_anything_runs() {
    let r = Results::new("kv-shards-bad");
    for (targets, says) in [
        (
            vec!["memcached://127.0.0.1:11299", "memcached://127.0.0.1:11299"],
            "same server",
        ),
        (
            vec!["memcached://127.0.0.1:11299", "redis://127.0.0.1:6399/0"],
            "mixed",
        ),
    ] {
        let mut args = Vec::new();
        for t in &targets {
            args.extend(["--target", *t]);
        }
        let out = kv(&r, &args);
        assert_eq!(out.status.code(), Some(2), "{targets:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{targets:?}: {err}");
    }
}

#[test]
fn several_plain_redis_servers_are_refused() {
    let (Some(a), Some(b)) = (RedisServer::start(), RedisServer::start()) else {
        return;
    };
    let r = Results::new("kv-redis-shards");
    let out = kv(&r, &["--target", &a.url(), "--target", &b.url()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a Redis Cluster"),
        "{}",
        stderr(&out)
    );
    // --cluster asks for a cluster: a plain server is refused, not run unsharded.
    let out = kv(&r, &["--target", &a.url(), "--cluster"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--cluster:"), "{}", stderr(&out));
}

#[test]
fn a_redis_cluster_is_driven_by_slot() {
    let Some(cluster) = RedisCluster::start(3) else {
        return;
    };
    let r = Results::new("kv-cluster");
    let out = kv(
        &r,
        &[
            "--target",
            &cluster.url(),
            "--cluster",
            "--verify",
            "--clients",
            "2",
            "--threads",
            "1",
            "--pipeline",
            "4",
        ],
    );
    let (t, groups) = sharded_trial(&out, "cluster", 3);
    for g in &groups {
        assert!(g.2 > 0, "{groups:?}");
        assert!(cluster.urls().iter().any(|u| u.starts_with(&g.1)), "{g:?}");
    }
    // The map was right: nothing was redirected.
    assert_eq!(t["figures"]["moved_per_client"].as_f64(), Some(0.0));
    assert_eq!(t["figures"]["asked_per_client"].as_f64(), Some(0.0));
    // Every key was loaded on its own node, and deleted from it after the run.
    for url in cluster.urls() {
        let addr = url
            .trim_start_matches("redis://")
            .trim_end_matches("/0")
            .to_string();
        assert_eq!(redis_command(&addr, "DBSIZE\r\n").trim(), ":0");
    }
}

/// Slots move while perflab runs (`redis-cli --cluster reshard`, which migrates keys with
/// MIGRATE): requests to moved slots are answered MOVED (and ASK while a slot is half
/// moved), followed, counted, and still hit.
#[test]
fn a_reshard_during_a_run_is_followed() {
    let Some(cluster) = RedisCluster::start(3) else {
        return;
    };
    let Some(cli) = common::skip::find_program("redis-cli") else {
        return;
    };
    let addrs: Vec<String> = cluster
        .urls()
        .iter()
        .map(|u| {
            u.trim_start_matches("redis://")
                .trim_end_matches("/0")
                .to_string()
        })
        .collect();
    let id = |addr: &str| {
        let reply = redis_command(addr, "CLUSTER MYID\r\n");
        reply.lines().nth(1).unwrap().trim().to_string()
    };
    let (from, to) = (id(&addrs[0]), id(&addrs[1]));
    let r = Results::new("kv-reshard");
    let child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["--json", "kv", "--target", &cluster.url()])
        .args(["--key-maximum", "1999", "--clients", "2", "--threads", "1"])
        .args(["--pipeline", "2", "--ratio", "0:1"])
        .args(["--warmup", "200ms", "--duration", "3s", "--results"])
        .arg(r.path())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let reshard = Command::new(cli)
        .args(["--cluster", "reshard", &addrs[0]])
        .args(["--cluster-from", &from, "--cluster-to", &to])
        .args(["--cluster-slots", "1000", "--cluster-yes"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        reshard.status.success(),
        "{}{}",
        String::from_utf8_lossy(&reshard.stdout),
        String::from_utf8_lossy(&reshard.stderr)
    );
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let t = &v["steps"][0]["trials"][0];
    assert!(
        t["figures"]["moved_per_client"].as_f64().unwrap() > 0.0,
        "{}",
        t["figures"]
    );
    assert_eq!(t["errors"].as_u64(), Some(0), "{}", t["error_samples"]);
    assert_eq!(t["figures"]["hit_pct"].as_f64(), Some(100.0));
}
