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

use crate::workload::peer::{
    Flag, Peer, Reading, given, same, seconds, to_option, to_slot, to_switch, whole,
};

/// redis-benchmark.
pub static REDIS_BENCHMARK: Peer = Peer {
    name: "redis-benchmark",
    flags: REDIS_FLAGS,
    positional: |_, _| Ok(false),
    finish: redis_finish,
    whole: None,
    knows: None,
    marks: None,
};

/// memtier_benchmark.
pub static MEMTIER: Peer = Peer {
    name: "memtier",
    flags: MEMTIER_FLAGS,
    positional: |_, _| Ok(false),
    finish: memtier_finish,
    whole: None,
    knows: None,
    marks: None,
};

/// `fn $name` keeps the flag's value in `$slot` for the target or the counts, a whole number
/// where `$whole` says so.
macro_rules! keeper {
    ($name:ident, $slot:literal, $whole:literal) => {
        fn $name(r: &mut Reading, value: Option<&str>) -> Result<(), String> {
            if $whole {
                whole(given(value))?;
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
    if !given(value).starts_with('/') {
        return Err("give the socket's absolute path".into());
    }
    r.keep("socket", given(value));
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
        given(value)
    ));
    size(r, value)
}
keeper!(tls, "tls", false);

/// perflab's own TLS options, which both tools spell as perflab does but for memtier's
/// `--tls-skip-verify` (`--insecure`): written once, listed in both tables.
const INSECURE: &str = "--insecure: the server's certificate is not verified";
const CACERT: Flag = to_option!(
    ["--cacert"],
    "--cacert",
    "--cacert FILE: the CA that signed the server's certificate"
);
const CERT: Flag = to_option!(["--cert"], "--cert", "--cert FILE: the client certificate");
const KEY: Flag = to_option!(
    ["--key"],
    "--key",
    "--key FILE: the client certificate's key"
);

fn refuse_output(_: &mut Reading, _: Option<&str>) -> Result<(), String> {
    Err("every run is archived with its histograms; write it out with 'perflab export last -f csv -o FILE' (or -f csv-intervals), or give --hlog FILE for an HdrHistogram interval log".into())
}

static REDIS_FLAGS: &[Flag] = &[
    Flag::value(&["-h"], "the server's host (into --target)", host),
    Flag::value(&["-p"], "the server's port (into --target)", port),
    Flag::value(&["-s"], "a Unix socket (into --target)", socket),
    Flag::value(
        &["-a"],
        "the password (into --target; never recorded)",
        password,
    ),
    Flag::value(&["--user"], "the ACL user (into --target)", user),
    to_option!(["-u"], "--target"),
    Flag::value(&["--dbnum"], "the database number (into --target)", db),
    Flag::switch(&["--tls"], "rediss:// (TLS)", tls),
    Flag::switch(&["-3"], "RESP3 (?protocol=3)", |r, _| {
        r.keep("resp3", "yes");
        Ok(())
    }),
    Flag::value(&["-c"], "--clients (connections over all threads)", clients),
    Flag::value(&["-n"], "--ops (requests over all connections)", requests),
    Flag::value(&["-d"], "--value-size (bytes)", data_size),
    Flag::value(&["-P"], "--pipeline", |r, value| {
        whole(given(value))?;
        r.opt("--pipeline", given(value));
        Ok(())
    }),
    Flag::value(
        &["-r"],
        "--key-minimum 0 --key-maximum N-1 (keys at random over N)",
        |r, value| {
            let n = whole(given(value))?;
            if n == 0 {
                return Err("at least one key".into());
            }
            r.keep("keyspace", &n.to_string());
            Ok(())
        },
    ),
    Flag::value(
        &["-t"],
        "the test: get is --ratio 0:1, set --ratio 1:0",
        |r, value| {
            let tests: Vec<String> = given(value)
                .split(',')
                .map(|t| t.trim().to_ascii_lowercase())
                .filter(|t| !t.is_empty())
                .collect();
            r.note(format!(
                "redis-benchmark's -t {}: the test (perflab's own -t is --threads)",
                given(value)
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
    ),
    Flag::value(
        &["-k"],
        "1 (keep connections) is perflab's way; 0 refused",
        |_, value| match given(value) {
            "1" => Ok(()),
            _ => Err(
                "perflab keeps every connection open; reconnecting per request is not available"
                    .into(),
            ),
        },
    ),
    Flag::switch(
        &["--csv"],
        "refused: 'perflab export -f csv' writes the run",
        refuse_output,
    ),
    Flag::switch(&["-l"], "refused: use --repeat N", |_, _| {
        Err("perflab does not loop forever; --repeat N runs each step N times".into())
    }),
    Flag::value(
        &["--precision", "-e"],
        "perflab keeps full histograms and counts every error",
        same,
    ),
    to_switch!(["--insecure"], "--insecure", INSECURE),
    CACERT,
    CERT,
    KEY,
];

static MEMTIER_FLAGS: &[Flag] = &[
    Flag::value(
        &["-s", "--server"],
        "the server's host (into --target)",
        host,
    ),
    Flag::value(&["-p", "--port"], "the server's port (into --target)", port),
    Flag::value(
        &["-S", "--unix-socket"],
        "a Unix socket (into --target)",
        socket,
    ),
    Flag::value(
        &["-a", "--authenticate"],
        "the password, or USER:PASSWORD (into --target; never recorded)",
        |r, value| {
            match given(value).split_once(':') {
                Some((user, password)) => {
                    r.keep("user", user);
                    r.keep("password", password);
                }
                None => r.keep("password", given(value)),
            }
            Ok(())
        },
    ),
    Flag::value(&["--select-db"], "the database number (into --target)", db),
    Flag::switch(&["--tls"], "rediss:// (TLS)", tls),
    to_switch!(["--tls-skip-verify"], "--insecure", INSECURE),
    CACERT,
    CERT,
    KEY,
    Flag::value(
        &["-P", "--protocol"],
        "redis, resp2, resp3 (Redis) or memcache_text (memcached://); memcache_binary refused",
        |r, value| {
            match given(value) {
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
    ),
    Flag::value(&["-t", "--threads"], "--threads", threads),
    Flag::value(
        &["-c", "--clients"],
        "connections per thread (--clients is threads x this)",
        clients,
    ),
    Flag::value(
        &["-n", "--requests"],
        "--ops (per connection, so times threads x clients)",
        |r, value| {
            if given(value) == "allkeys" {
                return Err("perflab loads every key before the run; give a number of requests per connection".into());
            }
            requests(r, value)
        },
    ),
    Flag::value(&["--test-time"], "--duration (seconds)", |r, value| {
        r.keep("time", "yes");
        r.opt("--duration", &seconds(given(value)));
        Ok(())
    }),
    Flag::value(&["-d"], "--value-size (bytes)", data_size),
    Flag::value(&["--data-size"], "--value-size (bytes)", size),
    to_option!(["-x", "--run-count"], "--repeat"),
    Flag::value(
        &["--expiry-range"],
        "--ttl (one value: MIN-MAX with MIN = MAX)",
        |r, value| {
            let (lo, hi) = given(value)
                .split_once('-')
                .unwrap_or((given(value), given(value)));
            if lo != hi {
                return Err("perflab sets one expiry for every value: give MIN-MAX with MIN = MAX (0-0: never)".into());
            }
            r.opt("--ttl", lo);
            Ok(())
        },
    ),
    to_slot!(
        ["--rate-limiting"],
        "rate",
        "--rate (per connection, so times threads x clients)",
        whole
    ),
    to_switch!(["--cluster-mode"], "--cluster"),
    Flag::switch(
        &[
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
        "what perflab does anyway (a seed per connection, random values, full histograms)",
        same,
    ),
    Flag::value(
        &["--print-percentiles"],
        "perflab keeps full histograms",
        same,
    ),
    Flag::value(
        &["-o", "--out-file", "--json-out-file", "--hdr-file-prefix"],
        "refused: 'perflab export' writes the run; --hlog FILE an HdrHistogram interval log",
        refuse_output,
    ),
    Flag::value(
        &[
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
        "refused: not available in perflab kv",
        |_, _| {
            Err("not available in perflab kv, which sets and gets perflab's own keys (see 'perflab kv --help')".into())
        },
    ),
];

/// The target a tool's connection flags name; `default_port` when none is given.
fn target(r: &mut Reading, tool: &str, default_port: &str) -> Result<(), String> {
    let named = [
        "host", "port", "socket", "password", "user", "db", "tls", "scheme", "resp3",
    ]
    .iter()
    .any(|k| r.kept(k).is_some());
    if r.has("--target") {
        return match named {
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
