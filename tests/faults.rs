//! Faults a network, a middlebox or a broken server produces, between perflab and a real
//! server: a relay of the tests' own ([`common::proxy`]) delays replies, resets connections
//! before and in the middle of a reply, cuts replies short, corrupts their framing, stalls
//! with the socket open, and drips bytes one at a time, seeded and reproducible. Every
//! affected op must end as a counted error of its kind, the sessions reconnect and the step
//! goes on, nothing hangs past the op timeout, nothing panics, and no op is lost.
//!
//! docs/reliability.md holds the table of protocol x fault -> error kind and these tests'
//! figures; each test prints its own line of them (`FAULTS ...`) on stderr.

mod common;

use common::proxy::{FaultProxy, Faults};
use common::servers::{MariaDbServer, MemcachedServer, PgServer, RedisServer};
use common::{Results, json, stderr};
use serde_json::Value;
use std::net::SocketAddr;
use std::process::Output;
use std::time::{Duration, Instant};

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// The errors of every trial of the run, by kind, and the ops.
fn tally(v: &Value) -> (u64, u64, std::collections::BTreeMap<String, u64>) {
    let mut kinds = std::collections::BTreeMap::new();
    let (mut ops, mut errors) = (0, 0);
    for step in v["steps"].as_array().unwrap() {
        for t in step["trials"].as_array().unwrap() {
            ops += t["ops"].as_u64().unwrap();
            errors += t["errors"].as_u64().unwrap();
            if let Some(m) = t["errors_by_kind"].as_object() {
                for (k, n) in m {
                    *kinds.entry(k.clone()).or_insert(0) += n.as_u64().unwrap_or(0);
                }
            }
        }
    }
    (ops, errors, kinds)
}

/// What every fault test asserts of a run through the proxy: it finished (the step went on
/// through the faults) within `bound`, it counted errors, each of a known kind, adding up.
#[track_caller]
fn survived(
    what: &str,
    o: &Output,
    took: Duration,
    bound: Duration,
    proxies: &[&FaultProxy],
) -> Value {
    let e = stderr(o);
    assert!(!e.contains("panicked"), "{what}: a panic: {e}");
    assert!(o.status.success(), "{what}: {e}");
    assert!(took < bound, "{what} took {took:?}, past {bound:?}");
    let v = json(o);
    assert_eq!(v["status"], "complete", "{what}");
    let (ops, errors, kinds) = tally(&v);
    let by_kind: u64 = kinds.values().sum();
    assert_eq!(by_kind, errors, "{what}: errors by kind add up: {kinds:?}");
    assert!(ops > 0, "{what}: the step went on");
    let mut injected = std::collections::BTreeMap::new();
    for p in proxies {
        for (k, n) in p.injected() {
            *injected.entry(k.name()).or_insert(0) += n;
        }
    }
    let connections: u64 = proxies.iter().map(|p| p.connections()).sum();
    assert!(!injected.is_empty(), "{what}: faults were injected");
    assert!(errors > 0, "{what}: faults were counted as errors");
    // No op lost: the workload's own checks after each step (the server's count against
    // perflab's successes and errors; the bank's books and history, allowing exactly the
    // transactions in doubt) must hold.
    for step in v["steps"].as_array().unwrap() {
        for c in step["checks"].as_array().cloned().unwrap_or_default() {
            assert_eq!(c["passed"], true, "{what}: {c}");
        }
    }
    let checks: Vec<String> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["checks"].as_array().cloned().unwrap_or_default())
        .map(|c| format!("{} {}: {}", c["name"], c["passed"], c["summary"]))
        .collect();
    eprintln!(
        "FAULTS {what}: injected {:?} over {} connections; ops {ops}, errors {errors} {kinds:?}; checks {checks:?}; warnings {}",
        injected, connections, v["warnings"]
    );
    v
}

#[test]
fn redis_survives_every_network_fault() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let r = Results::new("faults-redis");
    let (o, took, proxy) = kv_through(&r, &redis.url(), redis.port(), "redis://127.0.0.1");
    survived("redis", &o, took, Duration::from_secs(30), &[&proxy]);
}

#[test]
fn postgres_survives_every_network_fault() {
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("faults-pg");
    let url = |port: u16| format!("postgres://postgres@127.0.0.1:{port}/postgres?sslmode=disable");
    let (o, took, proxy) = oltp_through(&r, pg.port(), &url);
    survived("postgres", &o, took, Duration::from_secs(40), &[&proxy]);
}

/// An oltp run of 4 s through a proxy armed in its middle, on a bank prepared directly;
/// `url` names the server at a port.
fn oltp_through(
    r: &Results,
    port: u16,
    url: &dyn Fn(u16) -> String,
) -> (Output, Duration, FaultProxy) {
    let prepared = common::run(r, &["oltp", "prepare", "--target", &url(port)]);
    assert!(prepared.status.success(), "{}", stderr(&prepared));
    let proxy = FaultProxy::start(addr(port), Faults::default());
    proxy.arm_for(Duration::from_millis(1500), Duration::from_millis(2500));
    let started = Instant::now();
    let o = common::run(
        r,
        &[
            "oltp",
            "run",
            "--json",
            "--target",
            &url(proxy.port()),
            "--clients",
            "4",
            "--op-timeout",
            "1s",
            "--warmup",
            "0s",
            "--duration",
            "4s",
        ],
    );
    (o, started.elapsed(), proxy)
}

/// A kv run of 4 s through a proxy armed after 1.5 s, on a key space prepared directly.
fn kv_through(
    r: &Results,
    server: &str,
    port: u16,
    scheme_host: &str,
) -> (Output, Duration, FaultProxy) {
    let keys = ["--key-maximum", "999", "--value-size", "100"];
    let prepared = common::run(
        r,
        &[&["kv", "prepare", "--target", server][..], &keys[..]].concat(),
    );
    assert!(prepared.status.success(), "{}", stderr(&prepared));
    let proxy = FaultProxy::start(addr(port), Faults::default());
    proxy.arm_for(Duration::from_millis(1500), Duration::from_millis(2500));
    let target = format!("{scheme_host}:{}", proxy.port());
    let started = Instant::now();
    let o = common::run(
        r,
        &[
            &[
                "kv",
                "run",
                "--json",
                "--target",
                &target,
                "--clients",
                "4",
                "--threads",
                "2",
                "--op-timeout",
                "1s",
                "--warmup",
                "0s",
                "--duration",
                "4s",
            ][..],
            &keys[..],
        ]
        .concat(),
    );
    (o, started.elapsed(), proxy)
}

#[test]
fn memcached_survives_every_network_fault() {
    let Some(mc) = MemcachedServer::start() else {
        return;
    };
    let r = Results::new("faults-memcached");
    let (o, took, proxy) = kv_through(&r, &mc.url(), mc.port(), "memcached://127.0.0.1");
    survived("memcached", &o, took, Duration::from_secs(30), &[&proxy]);
}

#[test]
fn mariadb_survives_every_network_fault() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    let r = Results::new("faults-mariadb");
    let url = |port: u16| format!("mysql://root@127.0.0.1:{port}/test?ssl-mode=DISABLED");
    let (o, took, proxy) = oltp_through(&r, db.port(), &url);
    survived("mariadb", &o, took, Duration::from_secs(40), &[&proxy]);
}

#[test]
fn mail_survives_every_network_fault() {
    use perflab::workload::mail::message::Sizes;
    use perflab::workload::mail::server::Throwaway;
    let users: Vec<(String, String)> = (1..=20)
        .map(|i| (format!("box{i}"), format!("secret-{i}-pw")))
        .collect();
    let server = match Throwaway::start(&users) {
        Ok(s) => s,
        Err(e) => {
            common::skip::skip_or_fail(&e, "dovecot-imapd dovecot-pop3d dovecot-lmtpd");
            return;
        }
    };
    let names: Vec<String> = users.iter().map(|u| u.0.clone()).collect();
    server
        .populate(&names, 2, &Sizes::parse("2k").unwrap(), 7, &|_| {}, &|| {
            false
        })
        .expect("mailboxes filled");
    let r = Results::new("faults-mail");
    std::fs::create_dir_all(r.path()).unwrap();
    let file = r.path().join("users.txt");
    let lines: Vec<String> = users.iter().map(|(u, p)| format!("{u}:{p}")).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    // One proxy per protocol, each with faults of its own.
    let proxies: Vec<FaultProxy> = [server.imap(), server.lmtp(), server.pop3()]
        .into_iter()
        .enumerate()
        .map(|(i, a)| {
            FaultProxy::start(
                a,
                Faults {
                    seed: 29 + i as u64,
                    one_in: 25,
                    ..Faults::default()
                },
            )
        })
        .collect();
    for p in &proxies {
        p.arm_for(Duration::from_millis(1500), Duration::from_millis(3000));
    }
    let url = |scheme: &str, p: &FaultProxy| format!("{scheme}://127.0.0.1:{}", p.port());
    let (imap, lmtp, pop3) = (
        url("imap", &proxies[0]),
        url("lmtp", &proxies[1]),
        url("pop3", &proxies[2]),
    );
    let started = Instant::now();
    let o = common::run(
        &r,
        &[
            "--json",
            "mail",
            "--target",
            &imap,
            "--smtp",
            &lmtp,
            "--pop3",
            &pop3,
            "--users-file",
            file.to_str().unwrap(),
            "--users",
            "20",
            "--sent-per-day",
            "3000",
            "--imap-checks-per-day",
            "3000",
            "--imap-syncs-per-day",
            "600",
            "--pop3-per-day",
            "2000",
            "--pop3-users",
            "0.5",
            "--peak-share",
            "0.5",
            "--watchers",
            "0",
            "--op-timeout",
            "2s",
            "--warmup",
            "0s",
            "-d",
            "5s",
        ],
    );
    let took = started.elapsed();
    // The three proxies' faults, as one.
    let all: Vec<&FaultProxy> = proxies.iter().collect();
    let v = survived("mail", &o, took, Duration::from_secs(60), &all);
    // Every message accounted for: accepted, refused or in doubt, none lost or duplicated.
    for s in v["steps"].as_array().unwrap() {
        let c = s["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "mail_accounting")
            .expect("the accounting check")
            .clone();
        let f = &c["figures"];
        assert_eq!(f["lost"], 0, "{f}");
        assert_eq!(f["duplicated"], 0, "{f}");
        let sent = f["sent"].as_i64().unwrap();
        let parts = f["accepted"].as_i64().unwrap()
            + f["refused"].as_i64().unwrap()
            + f["in_doubt"].as_i64().unwrap();
        assert_eq!(sent, parts, "sent = accepted + refused + in doubt: {f}");
        eprintln!("FAULTS mail accounting: {f}");
    }
}

/// One fault kind at a time, for each protocol: the table of docs/reliability.md. Slow (a
/// minute or two), so run on demand: `scripts/fault-matrix.sh`.
#[test]
#[ignore = "the table for docs/reliability.md; run by scripts/fault-matrix.sh"]
fn fault_matrix() {
    use common::proxy::Fault;
    let (Some(redis), Some(mc), Some(pg), Some(my)) = (
        RedisServer::start(),
        MemcachedServer::start(),
        PgServer::start(),
        MariaDbServer::start(),
    ) else {
        return;
    };
    let r = Results::new("faults-matrix");
    let keys = ["--key-maximum", "999", "--value-size", "100"];
    for url in [redis.url(), mc.url()] {
        let o = common::run(
            &r,
            &[&["kv", "prepare", "--target", &url][..], &keys[..]].concat(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let pg_url = |p: u16| format!("postgres://postgres@127.0.0.1:{p}/postgres?sslmode=disable");
    let my_url = |p: u16| format!("mysql://root@127.0.0.1:{p}/test?ssl-mode=DISABLED");
    for url in [pg_url(pg.port()), my_url(my.port())] {
        let o = common::run(&r, &["oltp", "prepare", "--target", &url]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let timing = [
        "--op-timeout",
        "1s",
        "--warmup",
        "0s",
        "--duration",
        "3s",
        "--json",
    ];
    println!("| protocol | fault | injected | errors by kind |");
    println!("|---|---|---|---|");
    let only = std::env::var("FAULT_MATRIX_ONLY").unwrap_or_default();
    for (name, port) in [
        ("Redis (RESP2)", redis.port()),
        ("memcached (text)", mc.port()),
        ("PostgreSQL", pg.port()),
        ("MariaDB", my.port()),
    ] {
        if !name.starts_with(only.as_str()) {
            continue;
        }
        for fault in Fault::ALL {
            let proxy = FaultProxy::start(
                addr(port),
                Faults {
                    one_in: 40,
                    kinds: vec![fault],
                    ..Faults::default()
                },
            );
            proxy.arm_for(Duration::from_millis(1200), Duration::from_millis(1500));
            let p = proxy.port();
            let o = match name {
                "Redis (RESP2)" => {
                    let t = format!("redis://127.0.0.1:{p}/0");
                    let args = [
                        &["kv", "run", "--target", &t, "--clients", "4"][..],
                        &keys[..],
                        &timing[..],
                    ]
                    .concat();
                    common::run(&r, &args)
                }
                "memcached (text)" => {
                    let t = format!("memcached://127.0.0.1:{p}");
                    let args = [
                        &["kv", "run", "--target", &t, "--clients", "4"][..],
                        &keys[..],
                        &timing[..],
                    ]
                    .concat();
                    common::run(&r, &args)
                }
                "PostgreSQL" => {
                    let t = pg_url(p);
                    common::run(
                        &r,
                        &[
                            &["oltp", "run", "--target", &t, "--clients", "4"][..],
                            &timing[..],
                        ]
                        .concat(),
                    )
                }
                _ => {
                    let t = my_url(p);
                    common::run(
                        &r,
                        &[
                            &["oltp", "run", "--target", &t, "--clients", "4"][..],
                            &timing[..],
                        ]
                        .concat(),
                    )
                }
            };
            let kinds = if o.status.success() {
                let (_, _, kinds) = tally(&json(&o));
                format!("{kinds:?}")
            } else {
                format!("run failed: {}", stderr(&o).trim().replace('\n', " / "))
            };
            println!(
                "| {name} | {} | {} | {kinds} |",
                fault.name(),
                proxy.total()
            );
        }
    }
}
