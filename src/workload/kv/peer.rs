//! redis-benchmark's and memtier_benchmark's flags as their users type them on `perflab kv`
//! (`crate::workload::peer`).
//!
//! The two tools spell some flags alike with different meanings (`-c`: redis-benchmark's
//! connections, memtier's per thread; `-n`: all requests, or per connection; `-s`, `-P`), so
//! a line is read in one tool's dialect, told by a flag only it has (redis-benchmark's
//! `-h HOST`, memtier's `--server`) or `--like`. In either dialect:
//! - the target is the tool's: Redis at 127.0.0.1:6379 unless the flags say otherwise;
//! - the tool's defaults fill in what defines the work and was not given: for
//!   redis-benchmark `-c 50 -n 100000 -d 3` and one key (no `-r`); for memtier `-t 4 -c 50
//!   -d 32 --ratio 1:10 -n 10000` (per connection). Only memtier's key range stays perflab's
//!   (0..99,999, every key loaded): memtier's 10 million keys are never loaded, so most of
//!   its gets miss, which is not a cache's usual work. A note lists what was filled in.

use crate::workload::peer::{Flag, Peer, Reading, Takes, same, seconds, whole};

/// redis-benchmark.
pub static REDIS_BENCHMARK: Peer = Peer {
    name: "redis-benchmark",
    flags: REDIS_FLAGS,
    positional: |_, _| Ok(false),
    finish: redis_finish,
};

/// memtier_benchmark.
pub static MEMTIER: Peer = Peer {
    name: "memtier",
    flags: MEMTIER_FLAGS,
    positional: |_, _| Ok(false),
    finish: memtier_finish,
};

fn v(value: Option<&str>) -> &str {
    value.unwrap_or_default()
}

/// `fn $name` keeps the flag's value in `$slot` for the target or the counts, a whole number
/// where `$whole` says so.
macro_rules! keeper {
    ($name:ident, $slot:literal, $whole:literal) => {
        fn $name(r: &mut Reading, value: Option<&str>) -> Result<(), String> {
            if $whole {
                whole(v(value))?;
            }
            r.keep($slot, value.unwrap_or("yes"));
            Ok(())
        }
    };
}

keeper!(host, "host", false);
keeper!(port, "port", true);
keeper!(password, "password", false);
keeper!(user, "user", false);
/// redis-benchmark's `-s` and memtier's `-S`: a Unix socket, by its absolute path.
fn socket(r: &mut Reading, value: Option<&str>) -> Result<(), String> {
    if !v(value).starts_with('/') {
        return Err("give the socket's absolute path".into());
    }
    r.keep("socket", v(value));
    Ok(())
}
keeper!(db, "db", true);
keeper!(clients, "clients", true);
keeper!(threads, "threads", true);
keeper!(requests, "requests", true);
keeper!(size, "size", false);

/// redis-benchmark's and memtier's `-d`: the value size, where perflab's own `-d` is
/// `--duration`.
fn data_size(r: &mut Reading, value: Option<&str>) -> Result<(), String> {
    r.note(format!(
        "{}'s -d {}: the value size in bytes (perflab's own -d is --duration)",
        r.dialect().unwrap_or("the tool"),
        v(value)
    ));
    size(r, value)
}
keeper!(tls, "tls", false);

/// perflab's own TLS options, under the same names (memtier's `--tls-skip-verify` is
/// `--insecure`).
fn insecure(r: &mut Reading, _: Option<&str>) -> Result<(), String> {
    r.word("--insecure");
    Ok(())
}

fn cacert(r: &mut Reading, value: Option<&str>) -> Result<(), String> {
    r.opt("--cacert", v(value));
    Ok(())
}

fn cert(r: &mut Reading, value: Option<&str>) -> Result<(), String> {
    r.opt("--cert", v(value));
    Ok(())
}

fn key(r: &mut Reading, value: Option<&str>) -> Result<(), String> {
    r.opt("--key", v(value));
    Ok(())
}

fn refuse_output(_: &mut Reading, _: Option<&str>) -> Result<(), String> {
    Err("every run is archived with its histograms; write it out with 'perflab export last -f csv -o FILE' (or -f csv-intervals), or give --hlog FILE for an HdrHistogram interval log".into())
}

static REDIS_FLAGS: &[Flag] = &[
    Flag {
        names: &["-h"],
        takes: Takes::Value,
        means: "the server's host (into --target)",
        read: host,
    },
    Flag {
        names: &["-p"],
        takes: Takes::Value,
        means: "the server's port (into --target)",
        read: port,
    },
    Flag {
        names: &["-s"],
        takes: Takes::Value,
        means: "a Unix socket (into --target)",
        read: socket,
    },
    Flag {
        names: &["-a"],
        takes: Takes::Value,
        means: "the password (into --target; never recorded)",
        read: password,
    },
    Flag {
        names: &["--user"],
        takes: Takes::Value,
        means: "the ACL user (into --target)",
        read: user,
    },
    Flag {
        names: &["-u"],
        takes: Takes::Value,
        means: "--target",
        read: |r, value| {
            r.opt("--target", v(value));
            Ok(())
        },
    },
    Flag {
        names: &["--dbnum"],
        takes: Takes::Value,
        means: "the database number (into --target)",
        read: db,
    },
    Flag {
        names: &["--tls"],
        takes: Takes::Nothing,
        means: "rediss:// (TLS)",
        read: tls,
    },
    Flag {
        names: &["-3"],
        takes: Takes::Nothing,
        means: "RESP3 (?protocol=3)",
        read: |r, _| {
            r.keep("resp3", "yes");
            Ok(())
        },
    },
    Flag {
        names: &["-c"],
        takes: Takes::Value,
        means: "--clients (connections over all threads)",
        read: clients,
    },
    Flag {
        names: &["-n"],
        takes: Takes::Value,
        means: "--ops (requests over all connections)",
        read: requests,
    },
    Flag {
        names: &["-d"],
        takes: Takes::Value,
        means: "--value-size (bytes)",
        read: data_size,
    },
    Flag {
        names: &["-P"],
        takes: Takes::Value,
        means: "--pipeline",
        read: |r, value| {
            whole(v(value))?;
            r.opt("--pipeline", v(value));
            Ok(())
        },
    },
    Flag {
        names: &["-r"],
        takes: Takes::Value,
        means: "--key-minimum 0 --key-maximum N-1 (keys at random over N)",
        read: |r, value| {
            let n = whole(v(value))?;
            if n == 0 {
                return Err("at least one key".into());
            }
            r.keep("keyspace", &n.to_string());
            Ok(())
        },
    },
    Flag {
        names: &["-t"],
        takes: Takes::Value,
        means: "the test: get is --ratio 0:1, set --ratio 1:0",
        read: |r, value| {
            let tests: Vec<String> = v(value)
                .split(',')
                .map(|t| t.trim().to_ascii_lowercase())
                .filter(|t| !t.is_empty())
                .collect();
            r.note(format!(
                "redis-benchmark's -t {}: the test (perflab's own -t is --threads)",
                v(value)
            ));
            match tests.iter().map(String::as_str).collect::<Vec<_>>()[..] {
                ["get"] => r.opt("--ratio", "0:1"),
                ["set"] => r.opt("--ratio", "1:0"),
                [_, _, ..] if tests.iter().all(|t| t == "get" || t == "set") => {
                    return Err("redis-benchmark runs each test in turn; perflab runs one mix: --ratio 1:1 for both together, or one run per test".into());
                }
                _ => {
                    return Err("perflab measures get and set (-t get or -t set); other commands are not available".into());
                }
            }
            Ok(())
        },
    },
    Flag {
        names: &["-k"],
        takes: Takes::Value,
        means: "1 (keep connections) is perflab's way; 0 refused",
        read: |_, value| match v(value) {
            "1" => Ok(()),
            _ => Err(
                "perflab keeps every connection open; reconnecting per request is not available"
                    .into(),
            ),
        },
    },
    Flag {
        names: &["--csv"],
        takes: Takes::Nothing,
        means: "refused: 'perflab export -f csv' writes the run",
        read: refuse_output,
    },
    Flag {
        names: &["-l"],
        takes: Takes::Nothing,
        means: "refused: use --repeat N",
        read: |_, _| Err("perflab does not loop forever; --repeat N runs each step N times".into()),
    },
    Flag {
        names: &["--precision", "-e"],
        takes: Takes::Value,
        means: "perflab keeps full histograms and counts every error",
        read: same,
    },
    Flag {
        names: &["--insecure"],
        takes: Takes::Nothing,
        means: "--insecure: the server's certificate is not verified",
        read: insecure,
    },
    Flag {
        names: &["--cacert"],
        takes: Takes::Value,
        means: "--cacert FILE: the CA that signed the server's certificate",
        read: cacert,
    },
    Flag {
        names: &["--cert"],
        takes: Takes::Value,
        means: "--cert FILE: the client certificate",
        read: cert,
    },
    Flag {
        names: &["--key"],
        takes: Takes::Value,
        means: "--key FILE: the client certificate's key",
        read: key,
    },
];

static MEMTIER_FLAGS: &[Flag] = &[
    Flag {
        names: &["-s", "--server"],
        takes: Takes::Value,
        means: "the server's host (into --target)",
        read: host,
    },
    Flag {
        names: &["-p", "--port"],
        takes: Takes::Value,
        means: "the server's port (into --target)",
        read: port,
    },
    Flag {
        names: &["-S", "--unix-socket"],
        takes: Takes::Value,
        means: "a Unix socket (into --target)",
        read: socket,
    },
    Flag {
        names: &["-a", "--authenticate"],
        takes: Takes::Value,
        means: "the password, or USER:PASSWORD (into --target; never recorded)",
        read: |r, value| {
            match v(value).split_once(':') {
                Some((user, password)) => {
                    r.keep("user", user);
                    r.keep("password", password);
                }
                None => r.keep("password", v(value)),
            }
            Ok(())
        },
    },
    Flag {
        names: &["--select-db"],
        takes: Takes::Value,
        means: "the database number (into --target)",
        read: db,
    },
    Flag {
        names: &["--tls"],
        takes: Takes::Nothing,
        means: "rediss:// (TLS)",
        read: tls,
    },
    Flag {
        names: &["--tls-skip-verify"],
        takes: Takes::Nothing,
        means: "--insecure: the server's certificate is not verified",
        read: insecure,
    },
    Flag {
        names: &["--cacert"],
        takes: Takes::Value,
        means: "--cacert FILE: the CA that signed the server's certificate",
        read: cacert,
    },
    Flag {
        names: &["--cert"],
        takes: Takes::Value,
        means: "--cert FILE: the client certificate",
        read: cert,
    },
    Flag {
        names: &["--key"],
        takes: Takes::Value,
        means: "--key FILE: the client certificate's key",
        read: key,
    },
    Flag {
        names: &["-P", "--protocol"],
        takes: Takes::Value,
        means: "redis, resp2, resp3 (Redis) or memcache_text (memcached://); memcache_binary refused",
        read: |r, value| {
            match v(value) {
                "redis" | "resp2" => r.keep("scheme", "redis"),
                "resp3" => {
                    r.keep("scheme", "redis");
                    r.keep("resp3", "yes");
                }
                "memcache_text" => r.keep("scheme", "memcached"),
                "memcache_binary" => {
                    return Err("perflab speaks memcached's text and meta protocols, not the binary one; use memcache_text".into());
                }
                _ => return Err("redis, resp2, resp3 or memcache_text".into()),
            }
            Ok(())
        },
    },
    Flag {
        names: &["-t", "--threads"],
        takes: Takes::Value,
        means: "--threads",
        read: threads,
    },
    Flag {
        names: &["-c", "--clients"],
        takes: Takes::Value,
        means: "connections per thread (--clients is threads x this)",
        read: clients,
    },
    Flag {
        names: &["-n", "--requests"],
        takes: Takes::Value,
        means: "--ops (per connection, so times threads x clients)",
        read: |r, value| {
            if v(value) == "allkeys" {
                return Err("perflab loads every key before the run; give a number of requests per connection".into());
            }
            requests(r, value)
        },
    },
    Flag {
        names: &["--test-time"],
        takes: Takes::Value,
        means: "--duration (seconds)",
        read: |r, value| {
            r.keep("time", "yes");
            r.opt("--duration", &seconds(v(value)));
            Ok(())
        },
    },
    Flag {
        names: &["-d"],
        takes: Takes::Value,
        means: "--value-size (bytes)",
        read: data_size,
    },
    Flag {
        names: &["--data-size"],
        takes: Takes::Value,
        means: "--value-size (bytes)",
        read: size,
    },
    Flag {
        names: &["-x", "--run-count"],
        takes: Takes::Value,
        means: "--repeat",
        read: |r, value| {
            r.opt("--repeat", v(value));
            Ok(())
        },
    },
    Flag {
        names: &["--expiry-range"],
        takes: Takes::Value,
        means: "--ttl (one value: MIN-MAX with MIN = MAX)",
        read: |r, value| {
            let (lo, hi) = v(value).split_once('-').unwrap_or((v(value), v(value)));
            if lo != hi {
                return Err("perflab sets one expiry for every value: give MIN-MAX with MIN = MAX (0-0: never)".into());
            }
            r.opt("--ttl", lo);
            Ok(())
        },
    },
    Flag {
        names: &["--rate-limiting"],
        takes: Takes::Value,
        means: "--rate (per connection, so times threads x clients)",
        read: |r, value| {
            whole(v(value))?;
            r.keep("rate", v(value));
            Ok(())
        },
    },
    Flag {
        names: &["--cluster-mode"],
        takes: Takes::Nothing,
        means: "--cluster",
        read: |r, _| {
            r.word("--cluster");
            Ok(())
        },
    },
    Flag {
        names: &[
            "-D",
            "--debug",
            "--show-config",
            "--hide-histogram",
            "--print-all-runs",
            "--distinct-client-seed",
            "--randomize",
            "-R",
            "--random-data",
        ],
        takes: Takes::Nothing,
        means: "what perflab does anyway (a seed per connection, random values, full histograms)",
        read: same,
    },
    Flag {
        names: &["--print-percentiles"],
        takes: Takes::Value,
        means: "perflab keeps full histograms",
        read: same,
    },
    Flag {
        names: &["-o", "--out-file", "--json-out-file", "--hdr-file-prefix"],
        takes: Takes::Value,
        means: "refused: 'perflab export' writes the run; --hlog FILE an HdrHistogram interval log",
        read: refuse_output,
    },
    Flag {
        names: &[
            "--command",
            "--command-ratio",
            "--command-key-pattern",
            "--multi-key-get",
            "--data-offset",
            "--data-import",
            "--data-verify",
            "--verify-only",
            "--generate-keys",
            "--reconnect-interval",
            "--wait-ratio",
            "--num-slaves",
            "--wait-timeout",
            "--sni",
        ],
        takes: Takes::Value,
        means: "refused: not available in perflab kv",
        read: |_, _| {
            Err("not available in perflab kv, which sets and gets perflab's own keys (see 'perflab kv --help')".into())
        },
    },
];

/// The target a tool's connection flags name; `default_port` when none is given.
fn target(r: &mut Reading, tool: &str, default_port: &str) -> Result<(), String> {
    let given = [
        "host", "port", "socket", "password", "user", "db", "tls", "scheme", "resp3",
    ]
    .iter()
    .any(|k| r.kept(k).is_some());
    if r.has("--target") {
        return match given {
            true => Err(format!(
                "give --target or {tool}'s host, port and socket flags, not both"
            )),
            false => Ok(()),
        };
    }
    let scheme = r.kept("scheme").unwrap_or("redis");
    let scheme = match (scheme, r.kept("tls").is_some()) {
        ("redis", true) => "rediss",
        ("memcached", true) => {
            return Err("perflab's memcached client has no TLS; drop --tls".into());
        }
        (s, _) => s,
    };
    let auth = match (r.kept("user"), r.kept("password")) {
        (Some(u), Some(p)) => format!("{u}:{p}@"),
        (None, Some(p)) => format!(":{p}@"),
        (Some(u), None) => format!("{u}@"),
        (None, None) => String::new(),
    };
    if r.kept("socket").is_some() && !auth.is_empty() {
        return Err(
            "perflab's socket targets take no password in the URL; use REDISCLI_AUTH".into(),
        );
    }
    let mut url = match r.kept("socket") {
        // A socket is its absolute path after an empty authority: redis:///run/redis.sock.
        Some(path) if path.starts_with('/') => format!("{scheme}://{path}"),
        Some(_) => return Err("give the socket's absolute path".into()),
        None => {
            let host = r.kept("host").unwrap_or("127.0.0.1");
            let port = r.kept("port").unwrap_or(match scheme {
                "memcached" => "11211",
                _ => default_port,
            });
            let host = match host.contains(':') {
                true => format!("[{host}]"),
                false => host.to_string(),
            };
            format!("{scheme}://{auth}{host}:{port}")
        }
    };
    if let Some(db) = r.kept("db") {
        url.push_str(&format!("/{db}"));
    }
    if r.kept("resp3").is_some() {
        url.push_str("?protocol=3");
    }
    r.opt("--target", &url);
    Ok(())
}

/// What a run of `n` over all connections needs from `--value-size` and the key space.
fn filled(r: &mut Reading, defaults: &mut Vec<String>, slot: &str, option: &str, default: &str) {
    let given = r.kept(slot).map(str::to_string);
    match given {
        Some(value) => r.opt(option, &value),
        None if !r.has(option) => {
            r.opt(option, default);
            defaults.push(format!("{option} {default}"));
        }
        None => {}
    }
}

fn redis_finish(r: &mut Reading) -> Result<(), String> {
    target(r, "redis-benchmark", "6379")?;
    let mut defaults = Vec::new();
    filled(r, &mut defaults, "clients", "--clients", "50");
    if !r.has("--duration") {
        filled(r, &mut defaults, "requests", "--ops", "100000");
    } else if let Some(n) = r.kept("requests").map(str::to_string) {
        r.opt("--ops", &n);
    }
    filled(r, &mut defaults, "size", "--value-size", "3");
    match r.kept("keyspace").map(str::to_string) {
        Some(n) => {
            let last = whole(&n)? - 1;
            r.opt("--key-minimum", "0");
            r.opt("--key-maximum", &last.to_string());
        }
        None if !r.has("--key-maximum") => {
            r.opt("--key-minimum", "0");
            r.opt("--key-maximum", "0");
            defaults.push("one key (no -r)".into());
        }
        None => {}
    }
    if !defaults.is_empty() {
        r.note(format!(
            "redis-benchmark's defaults where the line gives none: {}",
            defaults.join(", ")
        ));
    }
    Ok(())
}

fn memtier_finish(r: &mut Reading) -> Result<(), String> {
    target(r, "memtier", "6379")?;
    let mut defaults = Vec::new();
    let threads = match r.kept("threads") {
        Some(t) => whole(t)?,
        None => {
            defaults.push("-t 4".to_string());
            4
        }
    };
    let per_thread = match r.kept("clients") {
        Some(c) => whole(c)?,
        None => {
            defaults.push("-c 50".to_string());
            50
        }
    };
    let connections = threads * per_thread;
    r.opt("--threads", &threads.to_string());
    r.opt("--clients", &connections.to_string());
    r.note(format!(
        "memtier's -t {threads} -c {per_thread}: {connections} connections ({per_thread} per thread); perflab's own --clients counts all threads' connections"
    ));
    match (r.kept("requests").map(str::to_string), r.kept("time")) {
        (Some(_), Some(_)) => {
            return Err("give --test-time or -n, not both".into());
        }
        (Some(n), None) => r.opt("--ops", &(whole(&n)? * connections).to_string()),
        (None, None) if !r.has("--duration") && !r.has("--ops") => {
            r.opt("--ops", &(10_000 * connections).to_string());
            defaults.push("-n 10000 (per connection)".into());
        }
        _ => {}
    }
    if let Some(rate) = r.kept("rate").map(str::to_string) {
        r.opt("--rate", &format!("{}/s", whole(&rate)? * connections));
        r.opt("--rate-scope", "total");
    }
    filled(r, &mut defaults, "size", "--value-size", "32");
    if !r.has("--ratio") {
        r.opt("--ratio", "1:10");
        defaults.push("--ratio 1:10".into());
    }
    if !defaults.is_empty() {
        r.note(format!(
            "memtier's defaults where the line gives none: {}; the key range stays perflab's (0..99,999, every key loaded)",
            defaults.join(", ")
        ));
    }
    Ok(())
}
