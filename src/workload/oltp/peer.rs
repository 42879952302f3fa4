//! pgbench's flags as pgbench's users type them on `perflab oltp` (`crate::workload::peer`).
//!
//! A pgbench line means pgbench's run: against the bank already in the database (perflab's
//! `run`, which works on the tables `pgbench -i` made), on PostgreSQL, reached as pgbench
//! reaches it: `-h`, `-p`, `-U` and the database name, else `PGHOST`, `PGPORT`, `PGUSER`,
//! `PGDATABASE`, else libpq's defaults (the socket directory, the login name).

use crate::workload::peer::{
    Flag, Peer, Reading, given, same, seconds, to_option, to_seconds, to_slot, to_switch, whole,
};

/// pgbench.
pub static PGBENCH: Peer = Peer {
    name: "pgbench",
    flags: FLAGS,
    positional,
    finish,
    whole: None,
    knows: None,
    marks: None,
};

/// perflab's own words for `oltp`'s steps.
const ACTIONS: [&str; 4] = ["all", "prepare", "run", "cleanup"];

/// A word that is not a flag: perflab's step, else pgbench's database name.
fn positional(r: &mut Reading, word: &str) -> Result<bool, String> {
    if ACTIONS.contains(&word) {
        r.keep("action", word);
        return Ok(false);
    }
    if let Some(first) = r.kept("dbname") {
        return Err(format!(
            "pgbench takes one database name; {first:?} and {word:?} are two"
        ));
    }
    r.keep("dbname", word);
    Ok(true)
}

fn refuse_init(_: &mut Reading, _: Option<&str>) -> Result<(), String> {
    Err("an option of pgbench -i's own loading: make the bank with pgbench -i itself (perflab oltp run works on it), or with 'perflab oltp prepare --scale N'".into())
}

static FLAGS: &[Flag] = &[
    Flag::value(&["-c", "--client"], "--clients", |r, value| {
        r.keep("clients", given(value));
        r.opt("--clients", given(value));
        Ok(())
    }),
    Flag::value(
        &["-j", "--jobs"],
        "each client has its own thread here",
        |r, value| {
            whole(given(value))?;
            r.note(format!(
                "pgbench's -j {}: perflab runs each client on its own thread, so the clients need no jobs to share",
                given(value)
            ));
            Ok(())
        },
    ),
    to_seconds!(["-T", "--time"], "--duration"),
    Flag::value(
        &["-t", "--transactions"],
        "--ops (per client, so times --clients)",
        |r, value| {
            whole(given(value))?;
            r.note(format!(
                "pgbench's -t {}: transactions per client (perflab's own -t is --threads)",
                given(value)
            ));
            r.keep("transactions", given(value));
            Ok(())
        },
    ),
    to_option!(["-s", "--scale"], "--scale"),
    to_switch!(["-S", "--select-only"], "--select-only"),
    Flag::value(
        &["-b", "--builtin"],
        "--builtin NAME[@W] (pgbench's built-in scripts, weights and prefixes; list)",
        |r, value| {
            r.opt("--builtin", given(value));
            Ok(())
        },
    ),
    Flag::switch(
        &["-N", "--skip-some-updates"],
        "--builtin simple-update",
        |r, _| {
            r.opt("--builtin", "simple-update");
            Ok(())
        },
    ),
    Flag::value(&["-f", "--file"], "--script FILE[@W]", |r, value| {
        r.opt("--script", given(value));
        Ok(())
    }),
    Flag::value(&["-D", "--define"], "--define NAME=VALUE", |r, value| {
        r.opt("--define", given(value));
        Ok(())
    }),
    Flag::value(&["--max-tries"], "--max-tries N", |r, value| {
        whole(given(value))?;
        r.opt("--max-tries", given(value));
        Ok(())
    }),
    Flag::switch(
        &["--failures-detailed", "--verbose-errors"],
        "accepted: failures are always counted by kind, with samples of their messages",
        |r, _| {
            r.note("failures are counted by kind (serialization, deadlock ...) and their messages sampled in every run's record and warnings, as --failures-detailed and --verbose-errors ask".into());
            Ok(())
        },
    ),
    Flag::switch(
        &["-d", "--debug"],
        "refused: pgbench's debugging output",
        |_, _| {
            Err("pgbench's debugging output is not available; perflab's record has every step's figures".into())
        },
    ),
    Flag::value(
        &["-M", "--protocol"],
        "--query-mode (simple, extended, prepared: pgbench's meanings)",
        |r, value| {
            let mode = crate::sql::query_mode::QueryMode::parse(given(value))?;
            r.keep("protocol", mode.name());
            r.opt("--query-mode", mode.name());
            Ok(())
        },
    ),
    Flag::value(
        &["-R", "--rate"],
        "--rate N/s --rate-scope total (pgbench's rate is over all clients)",
        |r, value| {
            let n = given(value);
            r.opt("--rate", &format!("{n}/s"));
            r.opt("--rate-scope", "total");
            r.note(format!(
                "pgbench's rate {n}: {n} transactions a second over all clients (perflab's own oltp --rate is per client)"
            ));
            Ok(())
        },
    ),
    // Progress lines follow the interval (--progress's default), so -P N alone gives
    // pgbench's line every N seconds.
    to_option!(
        ["-P", "--progress"],
        "--interval",
        "--interval (seconds): a progress line every N seconds where stderr is not a terminal",
        seconds
    ),
    Flag::value(&["--random-seed"], "--seed", |r, value| {
        match given(value) {
            "time" | "rand" => {
                return Err("perflab's seeds are numbers, so that runs repeat; give one".into());
            }
            n => r.opt("--seed", n),
        }
        Ok(())
    }),
    Flag::switch(
        &["-n", "--no-vacuum"],
        "perflab vacuums nothing before a run",
        same,
    ),
    Flag::switch(
        &["-r", "--report-per-command", "--report-latencies"],
        "--per-statement (each command's latency, as a group of the step)",
        |r, _| {
            r.word("--per-statement");
            Ok(())
        },
    ),
    Flag::switch(
        &["-i", "--initialize"],
        "prepare (the same tables and rows, recorded as perflab's)",
        |r, _| {
            r.keep("initialize", "yes");
            r.note("pgbench's -i: 'perflab oltp prepare' loads pgbench's tables and rows and records them as perflab's (perflab_meta), so 'perflab oltp cleanup' can drop them".into());
            Ok(())
        },
    ),
    to_slot!(
        ["-h", "--host"],
        "host",
        "the server's host or socket directory (into --target)"
    ),
    to_slot!(
        ["-p", "--port"],
        "port",
        "the server's port (into --target)",
        whole
    ),
    to_slot!(["-U", "--username"], "user", "the user (into --target)"),
    Flag::switch(
        &["-C", "--connect"],
        "--connect-each (a new connection for every transaction)",
        |r, _| {
            r.word("--connect-each");
            Ok(())
        },
    ),
    Flag::value(
        &["-L", "--latency-limit"],
        "--latency-limit MS (milliseconds; late ones counted, with -R those already late skipped)",
        |r, value| {
            let ms = given(value)
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| *v > 0.0)
                .ok_or_else(|| format!("invalid latency limit: {:?}", given(value)))?;
            r.opt(
                "--latency-limit",
                &format!("{}us", (ms * 1000.0).round() as u64),
            );
            Ok(())
        },
    ),
    Flag::switch(
        &["-l", "--log"],
        "--log-transactions (pgbench's log format, pgbench_log.PID)",
        |r, _| {
            r.word("--log-transactions");
            Ok(())
        },
    ),
    Flag::value(&["--log-prefix"], "--log-prefix", |r, value| {
        r.opt("--log-prefix", given(value));
        Ok(())
    }),
    Flag::value(&["--sampling-rate"], "--sampling-rate", |r, value| {
        r.opt("--sampling-rate", given(value));
        Ok(())
    }),
    Flag::value(
        &["--aggregate-interval"],
        "--aggregate-interval (pgbench's aggregated log lines, with -l)",
        |r, value| {
            r.opt("--aggregate-interval", given(value));
            Ok(())
        },
    ),
    Flag::switch(
        &["-v", "--vacuum-all"],
        "refused: perflab vacuums nothing of the user's",
        |_, _| {
            Err("perflab changes nothing of yours outside the transactions; run VACUUM yourself first".into())
        },
    ),
    Flag::value(
        &[
            "-I",
            "--init-steps",
            "-F",
            "--fillfactor",
            "--index-tablespace",
            "--partition-method",
            "--partitions",
            "--tablespace",
        ],
        "refused: an option of pgbench -i's loading",
        refuse_init,
    ),
    Flag::switch(
        &["--foreign-keys", "--unlogged-tables"],
        "refused: an option of pgbench -i's loading",
        refuse_init,
    ),
];

/// The target pgbench would connect to, and the step it would take.
fn finish(r: &mut Reading) -> Result<(), String> {
    if let Some(n) = r.kept("transactions").map(str::to_string) {
        let clients = match r.kept("clients") {
            Some(c) => whole(c).map_err(|_| {
                "pgbench's -t is per client: give -c one number (or --ops for all clients)"
                    .to_string()
            })?,
            None => 1,
        };
        r.opt("--ops", &(whole(&n)? * clients).to_string());
    }
    if r.kept("protocol").is_none() && r.kept("initialize").is_none() && !r.has("--query-mode") {
        // pgbench's line means pgbench's run: its default mode, not perflab's.
        r.note(
            "-M simple, pgbench's default query mode (perflab's own default is -M prepared)".into(),
        );
        r.opt("--query-mode", "simple");
    }
    if r.kept("initialize").is_none() && !r.has("--warmup") {
        // pgbench measures from its first transaction.
        r.note(
            "no warm-up, as pgbench (perflab's own default is 1 s of warm-up, not measured)".into(),
        );
        r.opt("--warmup", "0s");
    }
    if r.kept("initialize").is_none() && !r.has("--abort-on-error") {
        // pgbench ends a client at an error it does not retry, and the run with exit 2.
        r.note(
            "a client stops at a failure other than a serialization failure or a deadlock, and the run fails, as pgbench's clients abort (perflab's own default counts the failure and goes on)".into(),
        );
        r.word("--abort-on-error");
    }
    let initialize = r.kept("initialize").is_some();
    match r.kept("action") {
        Some(a) if initialize && a != "prepare" => {
            return Err(format!(
                "pgbench's -i loads the bank: it is 'prepare', not '{a}'"
            ));
        }
        Some(_) => {}
        None => r.word(if initialize { "prepare" } else { "run" }),
    }
    let connection = ["host", "port", "user", "dbname"]
        .iter()
        .any(|k| r.kept(k).is_some());
    if r.has("--target") {
        return match connection {
            true => Err("give --target or pgbench's -h, -p, -U and database name, not both".into()),
            false => Ok(()),
        };
    }
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let host = r
        .kept("host")
        .map(str::to_string)
        .or_else(|| env("PGHOST"))
        .unwrap_or_else(|| {
            // libpq's default: the socket directory where Debian's server puts it, else TCP.
            match std::path::Path::new("/var/run/postgresql").is_dir() {
                true => "/var/run/postgresql".to_string(),
                false => "localhost".to_string(),
            }
        });
    let port = r
        .kept("port")
        .map(str::to_string)
        .or_else(|| env("PGPORT"))
        .unwrap_or_else(|| "5432".to_string());
    let user = r
        .kept("user")
        .map(str::to_string)
        .or_else(|| env("PGUSER"))
        .or_else(|| env("USER"))
        .unwrap_or_else(|| "postgres".to_string());
    let db = r
        .kept("dbname")
        .map(str::to_string)
        .or_else(|| env("PGDATABASE"))
        .unwrap_or_else(|| user.clone());
    let target = format!(
        "postgres:///{}?host={}&port={port}&user={}",
        encode(&db),
        encode(&host),
        encode(&user)
    );
    r.opt("--target", &target);
    Ok(())
}

/// Percent-encodes what a URL's path or query value cannot hold as it is.
fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
