//! The peers' command lines, typed as their users type them: each reads as the same run as
//! perflab's own spelling (the same spec), what cannot mean anything here is one line naming
//! what to use instead, and docs/options.md lists every flag perflab reads for a peer.

mod common;

use common::servers::{MemcachedServer, PgServer, RedisServer, pg_program};
use common::skip::skip_or_fail;
use common::{Results, json, stderr, stdout};
use perflab::env::Environment;
use std::process::Command;

fn machine() -> Environment {
    let mut e = Environment::default();
    e.cpu.logical_cpus = Some(2);
    e.memory.available_bytes = Some(8 << 30);
    e.memory.total_bytes = Some(16 << 30);
    e
}

fn words(line: &str) -> Vec<String> {
    std::iter::once("perflab".to_string())
        .chain(line.split_whitespace().map(String::from))
        .collect()
}

/// The record's `spec` a command line stands for, and the notes on its reading.
fn spec(line: &str) -> (serde_json::Value, Vec<String>) {
    let cli = perflab::cli::parse(words(line)).unwrap_or_else(|e| panic!("{line}: {e}"));
    let spec = perflab::commands::workload_spec(&cli.what, &machine())
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .expect("a run");
    let run = serde_json::to_value(&spec).expect("serializes");
    (run, cli.notes)
}

fn same_run(peer: &str, ours: &str) -> Vec<String> {
    let (a, notes) = spec(peer);
    let (b, _) = spec(ours);
    assert_eq!(a, b, "\n{peer}\nreads differently from\n{ours}");
    notes
}

/// The lines docs/options.md shows: each peer's, then perflab's own spelling of it.
fn documented(dir: &str) -> Vec<(String, String)> {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/options.md"))
        .expect("docs/options.md");
    let lines: Vec<&str> = docs
        .lines()
        .filter(|l| l.starts_with("perflab io ") || l.starts_with("perflab kv "))
        .collect();
    assert!(
        lines.len() >= 4,
        "the peers' examples are in docs/options.md"
    );
    lines
        .chunks(2)
        .map(|pair| {
            let fix = |l: &str| l.trim_start_matches("perflab ").replace("/mnt/data", dir);
            (fix(pair[0]), fix(pair[1]))
        })
        .collect()
}

#[test]
fn the_peers_lines_in_the_docs_read_as_perflabs_own() {
    let scratch = Results::new("peers");
    std::fs::create_dir_all(scratch.path()).unwrap();
    let dir = scratch.path().to_str().unwrap();
    let Some(redis) = RedisServer::start() else {
        return;
    };
    for (peer, ours) in documented(dir) {
        same_run(&on(&peer, redis.port(), 0), &on(&ours, redis.port(), 0));
    }
}

/// The jobs a spec runs, without where each was written (a command line or a file).
fn jobs_of(spec: &serde_json::Value) -> serde_json::Value {
    let mut jobs = spec["jobs"].clone();
    for j in jobs.as_array_mut().expect("a job file's spec") {
        j.as_object_mut().unwrap().remove("at");
    }
    jobs
}

/// A fio line reads as the job file it stands for: the same jobs, fio's meaning and
/// defaults included.
fn same_jobs(line: &str, file: &std::path::Path, text: &str) {
    std::fs::write(file, text).unwrap();
    let (a, _) = spec(line);
    let (b, _) = spec(&format!("io {}", file.display()));
    assert_eq!(
        jobs_of(&a),
        jobs_of(&b),
        "\n{line}\nreads differently from\n{text}"
    );
    assert_eq!(a["global_options"], b["global_options"], "{line}");
}

#[test]
fn fio_lines_read_as_fio_means_them() {
    let scratch = Results::new("peers-fio");
    std::fs::create_dir_all(scratch.path()).unwrap();
    let dir = scratch.path().to_str().unwrap();
    let job = scratch.path().join("line.fio");
    if common::io_uring_allowed("fio's io_uring line") {
        same_jobs(
            &format!(
                "io --name=job --rw=randread --bs=4k --iodepth=32 --direct=1 --runtime=3 --ramp_time=1 --time_based --numjobs=2 --directory={dir} --size=64m --ioengine=io_uring --group_reporting --randseed=7"
            ),
            &job,
            &format!(
                "[job]\nrw=randread\nbs=4k\niodepth=32\ndirect=1\nruntime=3\nramp_time=1\ntime_based\nnumjobs=2\ndirectory={dir}\nsize=64m\nioengine=io_uring\ngroup_reporting\nrandseed=7\n"
            ),
        );
    }
    // Options before the first --name are every job's; each --name is a job; fio's
    // defaults (buffered, psync) and bs=READ,WRITE hold.
    same_jobs(
        &format!(
            "io --directory={dir} --size=4m --name=reader --rw=randread --numjobs=2 --name=writer --rw=write --bs=4k,64k --rate_iops=50"
        ),
        &job,
        &format!(
            "[global]\ndirectory={dir}\nsize=4m\n[reader]\nrw=randread\nnumjobs=2\n[writer]\nrw=write\nbs=4k,64k\nrate_iops=50\n"
        ),
    );
    let (spec, _) = spec(&format!(
        "io --name=w --directory={dir} --size=4m --rw=randrw --bs=4k,64k"
    ));
    let w = &spec["jobs"][0];
    assert_eq!(w["sizes"], serde_json::json!([[4096, 1]]), "{w}");
    assert_eq!(w["write_sizes"], serde_json::json!([[65536, 1]]), "{w}");
    assert_eq!(w["iodepth"], 1, "psync keeps one I/O in flight");
    // A line of options alone is one job, as its users mean it.
    same_jobs(
        &format!("io --readwrite=readwrite --rwmixwrite=30 --directory={dir} --size=1m"),
        &job,
        &format!("[job]\nreadwrite=readwrite\nrwmixwrite=30\ndirectory={dir}\nsize=1m\n"),
    );
}

/// `line` with the standard ports made the throwaway servers'.
fn on(line: &str, redis: u16, memcached: u16) -> String {
    line.replace("6379", &redis.to_string())
        .replace("11211", &memcached.to_string())
}

#[test]
fn redis_benchmark_and_memtier_lines_read_as_their_tools_mean_them() {
    // perflab looks at the server before the run (a cluster?): real ones, on their own ports.
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let Some(memcached) = MemcachedServer::start() else {
        return;
    };
    let same_run = |peer: &str, ours: &str| {
        same_run(
            &on(peer, redis.port(), memcached.port()),
            &on(ours, redis.port(), memcached.port()),
        )
    };
    // redis-benchmark: -c is every connection, -n every request (of each test), -t its
    // tests, -r the range of __rand_int__.
    same_run(
        "kv -h 127.0.0.1 -p 6379 -t get,lpush -c 50 -P 16 -n 200000 -d 100 -r 1000",
        "kv --target redis://127.0.0.1:6379 --tests get,lpush --clients 50 --pipeline 16 --ops 200000 --value-size 100 --keyspacelen 1000 --warmup 0",
    );
    // Its defaults where the line gives none, said in a note: no -t is its default suite.
    let notes = same_run(
        "kv -h 127.0.0.1 -p 6379",
        "kv --target redis://127.0.0.1:6379 --tests all --clients 50 --ops 100000 --value-size 3 --warmup 0",
    );
    assert!(
        notes.iter().any(|n| n.contains("default suite")),
        "{notes:?}"
    );
    // A command after the flags is the one it runs; -t is then ignored, as it ignores it.
    let notes = same_run(
        "kv -h 127.0.0.1 -p 6379 -t set -r 10 DBSIZE",
        "kv --target redis://127.0.0.1:6379 --command DBSIZE --clients 50 --ops 100000 --value-size 3 --warmup 0 --keyspacelen 10",
    )
    .join(" ");
    assert!(notes.contains("ignores -t"), "{notes}");
    let notes = same_run(
        "kv -h 127.0.0.1 -p 6379 -t set",
        "kv --target redis://127.0.0.1:6379 --tests set --clients 50 --ops 100000 --value-size 3 --warmup 0",
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("redis-benchmark's defaults")),
        "{notes:?}"
    );
    // memtier: -c is per thread, so -t 2 -c 10 is 20 connections; -n is per connection.
    let notes = same_run(
        "kv --server 127.0.0.1 --port 6379 -t 2 -c 10 --test-time 5 --ratio 1:9 -d 100 --pipeline 4",
        "kv --target redis://127.0.0.1:6379 --threads 2 --clients 20 --duration 5s --ratio 1:9 --value-size 100 --pipeline 4 --warmup 0",
    );
    assert!(
        notes.iter().any(|n| n.contains("20 connections")),
        "{notes:?}"
    );
    same_run(
        "kv -s 127.0.0.1 -p 11211 -P memcache_text -t 1 -c 4 -n 1000 --ratio 0:1 -d 10",
        "kv --target memcached://127.0.0.1:11211 --threads 1 --clients 4 --ops 4000 --ratio 0:1 --value-size 10 --warmup 0",
    );
    // Without a tool's own flag, a flag both spell differently needs --like.
    same_run(
        "kv --like memtier -s 127.0.0.1 -p 6379 -n 10 -t 1 -c 2 -d 10 --ratio 1:1",
        "kv --target redis://127.0.0.1:6379 --ops 20 --threads 1 --clients 2 --value-size 10 --ratio 1:1 --warmup 0",
    );
    // memtier's key patterns are SET:GET pairs of its letters; one pattern for both here.
    same_run(
        "kv --server 127.0.0.1 --port 6379 -t 1 -c 2 -n 10 --key-pattern G:G --ratio 1:1",
        "kv --target redis://127.0.0.1:6379 --threads 1 --clients 2 --ops 20 --value-size 32 --warmup 0 --key-pattern gaussian --ratio 1:1",
    );
    // memtier's commands: ratios and key patterns bind to the command before them, in
    // round-robin blocks, on memtier's key range (nothing is loaded).
    same_run(
        "kv --server 127.0.0.1 --port 6379 -t 1 -c 2 -n 10 --command=PING --command-ratio 3 --command=DBSIZE --command-key-pattern G",
        "kv --target redis://127.0.0.1:6379 --threads 1 --clients 2 --ops 20 --value-size 32 --warmup 0 --command PING --command DBSIZE --command-ratio 3,1 --command-key-pattern uniform,gaussian --command-blocks --key-prefix memtier- --key-minimum 0 --key-maximum 10000000",
    );
    // perflab's own spelling keeps its meaning: --clients counts all threads' connections.
    same_run(
        "kv --target redis://127.0.0.1:6379 -t 2 -c 10 --value-size 10",
        "kv --target redis://127.0.0.1:6379 --threads 2 --clients 10 --value-size 10",
    );
}

#[test]
fn a_peer_flag_without_a_meaning_here_is_one_line_naming_what_to_use() {
    let r = Results::new("peers-refused");
    for (line, says) in [
        (
            "io --output=out.txt",
            "fio's --output out.txt: every run is archived",
        ),
        (
            "io --name=a --size=1m --rw=trim",
            "fio's --rw: perflab trims only on ioengine=falloc",
        ),
        (
            "io --name=a --size=1m --ioengine=mmap",
            "has no perflab equivalent",
        ),
        (
            "io --name=a --size=1m --rw=read --path /tmp",
            "say it as fio does",
        ),
        ("oltp -c 2 -d", "debugging output is not available"),
        ("kv -n 5", "--like redis-benchmark|memtier"),
        (
            "kv -h 127.0.0.1 -t nosuch",
            "selects none of redis-benchmark's tests",
        ),
        (
            "kv --server 127.0.0.1 --command-ratio 2",
            "no --command before it",
        ),
        (
            "kv -h 127.0.0.1 SET {key} x",
            "redis-benchmark sends \"{key}\" as written",
        ),
        (
            "kv --server 127.0.0.1 --key-pattern R:S",
            "perflab draws sets and gets with one pattern",
        ),
        (
            "kv -h 127.0.0.1 -c 5 -n 5 -r 5 --value-size 3 --warmup 0 --threads 1 BLPOP q 0",
            "no timeout",
        ),
        (
            "kv --server 127.0.0.1 -P memcache_binary",
            "not the binary one",
        ),
        ("io --runtime", "fio's --runtime needs a value"),
        ("io --filename=/nonexistent/f1 --size=1m", "does not exist"),
    ] {
        let o = common::run(&r, &line.split_whitespace().collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(2), "{line}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{line}: one line: {err}");
        assert!(err.contains(says), "{line}: {err}");
        assert!(!err.contains("similar argument"), "{line}: no guess: {err}");
    }
    // -h is a host where redis-benchmark and pgbench use it; alone it is still help.
    let o = common::run(&r, &["kv", "-h"]);
    assert!(o.status.success() && stdout(&o).contains("Usage: perflab kv"));
    assert!(
        stdout(&o).contains("redis-benchmark's flags"),
        "the help lists them"
    );
}

#[test]
fn units_and_objectives_say_what_they_were_read_as() {
    let r = Results::new("peers-units");
    // A unitless objective is refused, quoting it.
    let o = common::run(&r, &["report", "last", "--slo", "p99<1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("p99<1ms or p99<1s"), "{}", stderr(&o));
    // A block size that is not one quotes what was typed, not the bytes it became.
    let o = common::run(&r, &["io", "--bs", "1000B"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--bs \"1000B\""), "{}", stderr(&o));
}

#[test]
fn every_peer_flag_is_in_the_options_docs() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/options.md"))
        .expect("docs/options.md");
    for kind in perflab::workload::kind::KINDS {
        for peer in kind.peers() {
            let table = perflab::workload::peer::markdown(kind.name(), peer);
            assert!(
                docs.contains(&table),
                "docs/options.md must hold {}'s flags as the code reads them:\n\n{table}",
                peer.name
            );
        }
    }
}

/// Runs a PostgreSQL client program against the throwaway server, or skips without it.
fn pg_client(pg: &PgServer, program: &str, args: &[&str]) -> Option<String> {
    let Some(path) = pg_program(program) else {
        skip_or_fail(&format!("{program} not found"), "postgresql-client");
        return None;
    };
    let port = pg.port().to_string();
    let o = Command::new(path)
        .args(["-h", "127.0.0.1", "-p", &port, "-U", "postgres"])
        .args(args)
        .output()
        .expect("runs");
    assert!(
        o.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The shape of pgbench's tables: columns with their types, indexes, constraints.
fn shape(pg: &PgServer) -> Option<String> {
    pg_client(
        pg,
        "psql",
        &[
            "-At",
            "-d",
            "postgres",
            "-c",
            "SELECT table_name || '.' || column_name || ':' || data_type FROM information_schema.columns WHERE table_name LIKE 'pgbench%' ORDER BY 1",
            "-c",
            "SELECT indexdef FROM pg_indexes WHERE tablename LIKE 'pgbench%' ORDER BY 1",
            "-c",
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
        ],
    )
}

#[test]
fn a_database_pgbench_made_runs_as_it_is_and_keeps_its_shape() {
    let Some(pg) = PgServer::start() else { return };
    let Some(_) = pg_client(&pg, "pgbench", &["-i", "-s", "1", "-q", "postgres"]) else {
        return;
    };
    let Some(before) = shape(&pg) else { return };
    let r = Results::new("peers-pgbench");
    let port = pg.port().to_string();
    // pgbench's line: -c clients, -j jobs, -T seconds, the database last.
    let line = [
        "oltp",
        "-c",
        "2",
        "-j",
        "2",
        "-T",
        "1",
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "-U",
        "postgres",
        "--warmup",
        "0s",
        "--json",
        "postgres",
    ];
    let o = common::run(&r, &line);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("pgbench's bank (pgbench -i, scale 1)"),
        "{}",
        stderr(&o)
    );
    let v = json(&o);
    assert_eq!(v["spec"]["tables_of"], "pgbench -i");
    assert_eq!(v["spec"]["scale"], 1);
    assert_eq!(v["spec"]["phases"], "run");
    let checks = v["steps"][0]["checks"].as_array().expect("checks");
    assert!(
        !checks.is_empty() && checks.iter().all(|c| c["passed"] == true),
        "{checks:?}"
    );
    // pgbench's -P: a progress line every N seconds in a log, as pgbench prints them.
    let o = common::run(
        &r,
        &[
            "oltp",
            "-c",
            "1",
            "-T",
            "2",
            "-P",
            "1",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-U",
            "postgres",
            "--warmup",
            "0s",
            "postgres",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let progress = stderr(&o)
        .lines()
        .filter(|l| l.contains("progress: step 1/1 · "))
        .count();
    assert!(
        (2..=3).contains(&progress),
        "every 2 s of 4: {}",
        stderr(&o)
    );
    // The same run in perflab's own words.
    let url = pg.url();
    let (peer, _) = spec(&format!(
        "oltp -c 2 -j 2 -T 1 -h 127.0.0.1 -p {port} -U postgres --warmup 0s postgres"
    ));
    // pgbench without -M means its default, the simple protocol; its clients abort at an
    // error they do not retry.
    let (ours, _) = spec(&format!(
        "oltp run --target {url} --clients 2 --duration 1s --warmup 0s -M simple --abort-on-error"
    ));
    assert_eq!(peer["workload"]["target"], ours["workload"]["target"]);
    assert_eq!(peer, ours);
    // prepare explains instead of loading; cleanup finds nothing of perflab's to drop.
    let o = common::run(&r, &["oltp", "prepare", "--target", &url]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("'perflab oltp run --target"),
        "{}",
        stderr(&o)
    );
    let o = common::run(&r, &["oltp", "cleanup", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("holds no tables perflab made"),
        "{}",
        stderr(&o)
    );
    let Some(after) = shape(&pg) else { return };
    assert_eq!(before, after, "pgbench's tables keep their shape");
    // And pgbench itself still runs on them.
    pg_client(&pg, "pgbench", &["-c", "1", "-t", "10", "-n", "postgres"]);
}
