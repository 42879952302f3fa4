//! redis-benchmark's and memtier_benchmark's flags as their users type them on `perflab kv`
//! (`crate::workload::peer`).
//!
//! The two tools spell some flags alike with different meanings (`-c`: redis-benchmark's
//! connections, memtier's per thread; `-n`: all requests, or per connection; `-s`, `-P`), so
//! a line is read in one tool's dialect, told by a flag only it has (redis-benchmark's
//! `-h HOST`, memtier's `--server`) or `--like`. In either dialect:
//! - the target is the tool's: Redis at 127.0.0.1:6379 unless the flags say otherwise;
//! - the tool's defaults fill in what defines the work and was not given: for
//!   redis-benchmark `-c 50 -n 100000 -d 3`, one thread, no warmup, and its default suite of tests when
//!   the line names neither `-t` nor a command (each test a step, `--tests`); `-r N` is
//!   `--keyspacelen N` (without it `__rand_int__` is one key, as written); a trailing
//!   command (`LPUSH mylist __rand_int__`) is `--command`, and `-t` is then ignored, as
//!   redis-benchmark ignores it. For memtier `-t 4 -c 50 -d 32 --ratio 1:10 -n 10000` (per
//!   connection); its `--command`s keep memtier's key range (`memtier-`, 0..10,000,000:
//!   nothing is loaded), while its gets and sets keep perflab's range unless the line gives
//!   one (memtier's 10 million keys would take long to load, and unloaded most gets miss).
//!   A note lists what was filled in.

use crate::workload::peer::{
    Flag, Peer, Reading, given, same, seconds, to_option, to_slot, to_switch, whole,
};

/// redis-benchmark.
pub static REDIS_BENCHMARK: Peer = Peer {
    name: "redis-benchmark",
    flags: REDIS_FLAGS,
    positional: redis_command_word,
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
        "--keyspacelen N (__rand_int__ a number below N)",
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
        "--tests (each test a step, in redis-benchmark's order)",
        |r, value| {
            r.note(format!(
                "redis-benchmark's -t {}: its tests, each a step (perflab's own -t is --threads)",
                given(value)
            ));
            r.keep("tests", given(value));
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
    Flag::switch(
        &["-I"],
        "refused: idle connections send nothing to measure",
        |_, _| {
            Err("idle mode opens connections that send nothing; perflab measures requests (a server's connection limit is its maxclients)".into())
        },
    ),
    Flag::switch(
        &["--enable-tracking"],
        "refused: client tracking is not available",
        |_, _| {
            Err("perflab's connections do not turn on client tracking (CLIENT TRACKING); run without it".into())
        },
    ),
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
        &["--command"],
        "--command (__key__ and __data__ as memtier draws them)",
        memtier_command,
    ),
    Flag::value(
        &["--command-ratio"],
        "--command-ratio and --command-blocks (of the latest --command)",
        |r, value| {
            whole(given(value))?;
            set_last(r, "command_ratios", given(value))
        },
    ),
    Flag::value(
        &["--command-key-pattern"],
        "--command-key-pattern (of the latest --command): R, S, G, Z, P",
        |r, value| {
            memtier_letter(&mut Reading::default(), given(value))?;
            set_last(r, "command_patterns", given(value))
        },
    ),
    Flag::value(
        &["--key-pattern"],
        "--key-pattern SET:GET with one pattern for both: R:R, S:S, G:G, Z:Z, P:P",
        |r, value| {
            let v = given(value);
            let (set, get) = v
                .split_once(':')
                .ok_or("give SET:GET, e.g. R:R (memtier's default)")?;
            if set != get {
                return Err(format!(
                    "perflab draws sets and gets with one pattern; give {set}:{set} or {get}:{get}"
                ));
            }
            let pattern = memtier_letter(r, set)?;
            r.keep("key_pattern", pattern);
            Ok(())
        },
    ),
    Flag::switch(
        &["--generate-keys"],
        "what memtier does without --data-import (which perflab refuses): keys from the key range",
        same,
    ),
    Flag::value(
        &[
            "--multi-key-get",
            "--data-offset",
            "--data-import",
            "--data-verify",
            "--verify-only",
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

/// Separates the values of a list kept in one slot.
const SEP: char = '\u{1f}';

/// The values of a list kept in `slot`.
fn kept_list(r: &Reading, slot: &str) -> Vec<String> {
    r.kept(slot)
        .map(|v| v.split(SEP).map(str::to_string).collect())
        .unwrap_or_default()
}

/// Adds `value` to the list in `slot`.
fn push_kept(r: &mut Reading, slot: &'static str, value: &str) {
    let mut list = kept_list(r, slot);
    list.push(value.to_string());
    r.keep(slot, &list.join(&SEP.to_string()));
}

/// Sets the latest command's entry of the list in `slot` (memtier binds `--command-ratio`
/// and `--command-key-pattern` to the `--command` before them).
fn set_last(r: &mut Reading, slot: &'static str, value: &str) -> Result<(), String> {
    let mut list = kept_list(r, slot);
    let Some(last) = list.last_mut() else {
        return Err("no --command before it (memtier binds it to the latest --command)".into());
    };
    *last = value.to_string();
    r.keep(slot, &list.join(&SEP.to_string()));
    Ok(())
}

/// memtier's key pattern letter as perflab's pattern. `P` splits the key range between
/// clients, each walking its part: perflab's sequential pattern splits it between worker
/// threads (a note says so).
fn memtier_letter(r: &mut Reading, letter: &str) -> Result<&'static str, String> {
    Ok(match letter {
        "R" => "uniform",
        "S" => {
            r.note("memtier's S: perflab walks one sequence for sets and gets together (memtier keeps one counter for each)".into());
            "sequential"
        }
        "G" => "gaussian",
        "Z" => "zipf",
        "P" => {
            r.note("memtier's P: each worker thread walks its own part of the key range in order (memtier splits it between connections)".into());
            "sequential"
        }
        _ => return Err("one of R, S, G, Z, P".into()),
    })
}

/// memtier's `--command`: perflab reads `__key__` and `__data__` as memtier does, and
/// `{key}` and `{data}` as its own placeholders, which memtier would send as written.
fn memtier_command(r: &mut Reading, value: Option<&str>) -> Result<(), String> {
    let text = given(value);
    if text.contains("{key}") || text.contains("{data}") {
        return Err("memtier sends {key} and {data} as written, perflab draws them; use __key__ and __data__, or perflab's own --command".into());
    }
    push_kept(r, "commands", text);
    push_kept(r, "command_ratios", "1");
    push_kept(r, "command_patterns", "R");
    Ok(())
}

/// The words after redis-benchmark's options are the command it runs (`LPUSH mylist
/// __rand_int__`); perflab's own action (`run`) is taken first.
fn redis_command_word(r: &mut Reading, word: &str) -> Result<bool, String> {
    if r.kept("command").is_none() && ["all", "prepare", "run", "cleanup"].contains(&word) {
        return Ok(false);
    }
    if ["{key}", "{data}", "__key__", "__data__"]
        .iter()
        .any(|p| word.contains(p))
    {
        return Err(format!(
            "redis-benchmark sends {word:?} as written, perflab would draw a key or a value there; to draw them, use perflab's own --command"
        ));
    }
    push_kept(r, "command", word);
    Ok(true)
}

/// redis-benchmark's tests or command.
fn redis_work(r: &mut Reading) -> Result<(), String> {
    let words = kept_list(r, "command");
    if !words.is_empty() {
        if r.kept("tests").is_some() {
            r.note("redis-benchmark ignores -t when a command is given; so does perflab".into());
        }
        r.opt("--command", &super::command::join_words(&words));
        return Ok(());
    }
    if r.has("--command") || r.has("--tests") || r.has("--ratio") {
        return Ok(());
    }
    let Some(list) = r.kept("tests").map(str::to_ascii_lowercase) else {
        r.opt("--tests", "all");
        r.note("redis-benchmark with neither -t nor a command: its default suite of tests, each a step".into());
        return Ok(());
    };
    let unknown: Vec<&str> = list
        .split(',')
        .filter(|w| !w.is_empty() && !super::redis_tests::known(w))
        .collect();
    if !unknown.is_empty() {
        r.note(format!(
            "redis-benchmark's -t selects nothing for {} (it runs what the other names select); perflab does the same",
            unknown.join(", ")
        ));
    }
    let selected = super::redis_tests::select(Some(&list));
    if selected.is_empty() {
        return Err(format!(
            "-t {list} selects none of redis-benchmark's tests: {}",
            super::redis_tests::names()
        ));
    }
    let names: Vec<&str> = list
        .split(',')
        .filter(|w| super::redis_tests::known(w))
        .collect();
    r.opt("--tests", &names.join(","));
    Ok(())
}

fn redis_finish(r: &mut Reading) -> Result<(), String> {
    target(r, "redis-benchmark", "6379")?;
    redis_work(r)?;
    let mut defaults = Vec::new();
    filled(r, &mut defaults, "clients", "--clients", "50");
    if !r.has("--duration") {
        filled(r, &mut defaults, "requests", "--ops", "100000");
    } else if let Some(n) = r.kept("requests").map(str::to_string) {
        r.opt("--ops", &n);
    }
    filled(r, &mut defaults, "size", "--value-size", "3");
    // redis-benchmark runs one thread unless --threads says otherwise.
    if !r.has("--threads") {
        r.opt("--threads", "1");
        defaults.push("one thread".into());
    }
    if !r.has("--warmup") {
        r.opt("--warmup", "0");
        defaults.push("no warmup".into());
    }
    match r.kept("keyspace").map(str::to_string) {
        Some(n) => r.opt("--keyspacelen", &n),
        None => defaults.push("one key (no -r: __rand_int__ as written)".into()),
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
    if !r.has("--warmup") {
        r.opt("--warmup", "0");
        defaults.push("no warmup".into());
    }
    let commands = kept_list(r, "commands");
    if commands.is_empty() {
        if !r.has("--ratio") {
            r.opt("--ratio", "1:10");
            defaults.push("--ratio 1:10".into());
        }
        if let Some(p) = r.kept("key_pattern").map(str::to_string) {
            r.opt("--key-pattern", &p);
        }
    } else {
        memtier_commands(r, &commands, &mut defaults)?;
    }
    let range_given = ["--key-prefix", "--key-minimum", "--key-maximum"]
        .iter()
        .any(|o| r.has(o));
    if !defaults.is_empty() {
        r.note(format!(
            "memtier's defaults where the line gives none: {}{}",
            defaults.join(", "),
            if commands.is_empty() && !range_given {
                "; the key range stays perflab's (0..99,999, every key loaded)"
            } else {
                ""
            }
        ));
    }
    Ok(())
}

/// memtier's `--command`s: each with its ratio (round-robin blocks, as memtier runs them)
/// and key pattern; memtier's key range where the line gives none (nothing is loaded).
fn memtier_commands(
    r: &mut Reading,
    commands: &[String],
    defaults: &mut Vec<String>,
) -> Result<(), String> {
    if r.kept("key_pattern").is_some() {
        return Err("with --command, each command's key pattern is its --command-key-pattern (memtier refuses --key-pattern here too)".into());
    }
    if r.has("--ratio") {
        return Err("with --command, each command's share is its --command-ratio (memtier refuses --ratio here too)".into());
    }
    let letters = kept_list(r, "command_patterns");
    let parallel = letters.iter().filter(|p| p.as_str() == "P").count();
    if parallel > 0 && parallel != letters.len() {
        return Err(
            "memtier's P key pattern must be every --command's (memtier refuses the mix)".into(),
        );
    }
    let mut patterns = Vec::with_capacity(letters.len());
    for l in &letters {
        patterns.push(memtier_letter(r, l)?);
    }
    for c in commands {
        r.opt("--command", c);
    }
    r.opt("--command-ratio", &kept_list(r, "command_ratios").join(","));
    r.opt("--command-key-pattern", &patterns.join(","));
    r.word("--command-blocks");
    for (option, value) in [
        ("--key-prefix", "memtier-"),
        ("--key-minimum", "0"),
        ("--key-maximum", "10000000"),
    ] {
        if !r.has(option) {
            r.opt(option, value);
            defaults.push(format!("{option} {value}"));
        }
    }
    Ok(())
}
