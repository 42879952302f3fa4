//! `perflab kv` at its edges, on throwaway real servers: a Unix socket, Facebook's ETC value
//! sizes, key patterns, a key space too large for the throwaway memcached, the open loop
//! that cannot keep up.

mod common;

use common::servers::{MemcachedServer, RedisServer};
use common::{Results, json, run, stderr};

fn kv(results: &Results, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "--json",
        "kv",
        "--key-maximum",
        "1999",
        "--warmup",
        "100ms",
        "--duration",
        "500ms",
    ];
    args.extend_from_slice(extra);
    run(results, &args)
}

fn trial(v: &serde_json::Value) -> &serde_json::Value {
    &v["steps"][0]["trials"][0]
}

#[test]
fn a_unix_socket_target_works_like_tcp() {
    let Some(m) = MemcachedServer::start_unix() else {
        return;
    };
    let url = m.url();
    assert!(url.starts_with("memcached:///"), "{url}");
    let r = Results::new("kv-unix");
    let out = kv(&r, &["--target", &url, "--clients", "2", "--threads", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["spec"]["target"].as_str(), Some(url.as_str()));
    let t = trial(&v);
    assert!(t["ops"].as_u64().unwrap() > 0);
    assert_eq!(t["errors"].as_u64(), Some(0), "{}", t["error_samples"]);
}

/// Redis over its socket in redis-py's and redis-rs's spellings, the database and the
/// password as their parameters: the keys land in that database, and the password shows
/// nowhere.
#[test]
fn redis_sockets_take_the_clients_url_spellings() {
    let Some(redis) = RedisServer::start_with_password("pw") else {
        return;
    };
    let socket = redis.socket().display().to_string();
    let r = Results::new("kv-redis-unix");
    for url in [
        format!("unix://:pw@{socket}?db=3"),
        format!("redis+unix://{socket}?db=3&password=pw"),
    ] {
        let out = kv(
            &r,
            &[
                "--target",
                &url,
                "--clients",
                "2",
                "--threads",
                "1",
                "--keep",
            ],
        );
        assert!(out.status.success(), "{url}: {}", stderr(&out));
        let v = json(&out);
        let shown = v["spec"]["target"].as_str().unwrap();
        assert_eq!(shown, format!("redis://{socket}?db=3&password=***"));
        let t = trial(&v);
        assert!(t["ops"].as_u64().unwrap() > 0);
        assert_eq!(t["errors"].as_u64(), Some(0), "{}", t["error_samples"]);
        assert!(!String::from_utf8_lossy(&out.stdout).contains(":pw@"));
    }
    // The keys are in database 3, none in 0.
    let sizes = |db: &str| {
        let o = std::process::Command::new("redis-cli")
            .args([
                "-s",
                &socket,
                "-a",
                "pw",
                "--no-auth-warning",
                "-n",
                db,
                "DBSIZE",
            ])
            .output()
            .expect("redis-cli runs");
        String::from_utf8_lossy(&o.stdout)
            .trim()
            .parse::<u64>()
            .unwrap_or(0)
    };
    assert!(sizes("3") > 0);
    assert_eq!(sizes("0"), 0);
}

#[test]
fn etc_sizes_and_every_key_pattern_run_clean() {
    let Some(m) = MemcachedServer::start_with(2, 256) else {
        return;
    };
    for (pattern, sizes) in [
        ("sequential", "etc"),
        ("gaussian", "100"),
        ("zipf", "1k:3,10k:1"),
        ("S", "4-100:1"),
    ] {
        let r = Results::new("kv-patterns");
        let out = kv(
            &r,
            &[
                "--target",
                &m.url(),
                "--key-pattern",
                pattern,
                "--value-size",
                sizes,
                "--verify",
                "--clients",
                "4",
                "--threads",
                "2",
            ],
        );
        assert!(out.status.success(), "{pattern} {sizes}: {}", stderr(&out));
        let v = json(&out);
        let t = trial(&v);
        assert_eq!(t["errors"].as_u64(), Some(0), "{}", t["error_samples"]);
        assert_eq!(t["figures"]["hit_pct"].as_f64(), Some(100.0));
    }
}

#[test]
fn a_key_space_too_large_for_the_throwaway_is_refused_before_it_starts() {
    let r = Results::new("kv-too-big");
    let out = run(
        &r,
        &["kv", "--server-memory", "8m", "--key-maximum", "99999"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--server-memory"), "{err}");
}

#[test]
fn an_offered_rate_out_of_reach_is_flagged() {
    let Some(m) = MemcachedServer::start() else {
        return;
    };
    let r = Results::new("kv-overload");
    // One connection, one request in flight: a million a second is out of reach.
    let out = kv(
        &r,
        &[
            "--target",
            &m.url(),
            "--clients",
            "1",
            "--threads",
            "1",
            "--rate",
            "1000000/s",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let codes: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["code"].as_str())
        .collect();
    assert!(codes.contains(&"rate_not_reached"), "{codes:?}");
    let t = trial(&v);
    assert!(t["schedule"]["late_starts"].as_u64().unwrap() > 0);
}
