//! Property tests ("fuzzing" on stable Rust): no input makes perflab panic.
//!
//! Every value parser, the `--target` URL parser, the record loader (and what renders a
//! record), and the whole command line get arbitrary text and structured near-valid text:
//! huge numbers, negatives, NaN and infinities, empty items, unicode, overflowing multipliers,
//! zero steps, reversed ranges. A bad input must come back as an error (for the command line:
//! one line, exit code 2), never as a panic; proptest turns a panic into a failure and shrinks
//! it to a small input.
//!
//! Each property has a fixed number of cases (`cases`) so `cargo test` stays fast; no
//! workload ever runs, and no `perflab run`. Set `PROPTEST_CASES` to run more locally, e.g.
//! `PROPTEST_CASES=20000 cargo test --test fuzz`.

use perflab::archive::parse_record;
use perflab::cli::{Command, Invocation, What, parse};
use perflab::env::Environment;
use perflab::record::RunRecord;
use perflab::target::url::{TargetUrl, redact_command_line, redact_url_text};
use perflab::vocab::Slo;
use perflab::vocab::sweep::{parse_names, parse_numeric, parse_u64};
use perflab::vocab::units::{
    MAX_DURATION, MAX_RATE, parse_count, parse_duration, parse_rate, parse_size,
};
use perflab::workload::run_args::Action;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use std::time::Duration;

/// A fixed budget, unless `PROPTEST_CASES` asks for more.
fn cases(n: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n);
    ProptestConfig {
        cases: n,
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------
// Pieces of near-valid input.

/// Numbers as people (and typos) write them.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "4",
    "8",
    "10",
    "64",
    "100",
    "512",
    "4096",
    "0.5",
    ".5",
    "5.",
    "1.5",
    "0.001",
    "1e3",
    "1e308",
    "1_000",
    "_",
    "1__0",
    ".",
    "..",
    "-1",
    "-0",
    "+1",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "Infinity",
    "4294967295",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999",
    "340282366920938463463374607431768211456",
    "0.000000000000000000001",
    "1.7976931348623157e308",
    "0x10",
    "١٢",
    "１",
    "",
    " ",
];

/// Units of sizes, counts, durations and rates, and some that are none of them.
const UNITS: &[&str] = &[
    "", "b", "B", "k", "K", "KiB", "kiB", "Ki", "m", "M", "MiB", "g", "G", "GiB", "t", "T", "TiB",
    "kB", "KB", "MB", "GB", "TB", "PB", "EiB", "s", "sec", "ms", "us", "µs", "ns", "min", "h", "d",
    "/s", "/ms", "/min", "/h", "/m", "/sec", "/", "//s", "k/s", "M/s", "G/s", "MB/s", "MiB/s", "%",
    "x", "x2", " s", "s ", "\u{0}", "\u{202e}", "é", "💥",
];

/// Step suffixes of ranges.
const STEPS: &[&str] = &[
    "",
    ":x2",
    ":x1",
    ":x0",
    ":x-2",
    ":xNaN",
    ":xinf",
    ":x1.0000001",
    ":*2",
    ":x",
    ":+1",
    ":+0",
    ":+4k",
    ":4k",
    ":-10",
    ":0",
    ":+-1",
    ":",
    "::",
    ":x2:x2",
    ":+1e308",
    ":+0.000001",
];

fn pick(list: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::sample::select(list).prop_map(str::to_string)
}

/// One value: a number with a unit.
fn value() -> impl Strategy<Value = String> {
    (pick(NUMBERS), pick(UNITS)).prop_map(|(n, u)| format!("{n}{u}"))
}

/// One item of a sweep: a value, or a range with an optional step.
fn item() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => value(),
        3 => (value(), value(), pick(STEPS)).prop_map(|(a, b, s)| format!("{a}..{b}{s}")),
        1 => (value(), value()).prop_map(|(a, b)| format!("{a}...{b}")),
        1 => (value(), value(), value()).prop_map(|(a, b, c)| format!("{a}..{b}..{c}")),
    ]
}

/// Near-valid text for any numeric option: lists of items.
fn near_valid() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(item(), 1..4).prop_map(|v| v.join(",")),
        1 => prop::collection::vec(item(), 1..4).prop_map(|v| v.join(" , ")),
        1 => prop::collection::vec(item(), 1..4).prop_map(|v| format!(",{},", v.join(","))),
    ]
}

/// Arbitrary text: any Unicode, and text made of the characters the grammars use.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[0-9a-zA-Z.,:/%<=>+*x_ -]{0,40}",
        "[0-9.,:x+kmgsMGB]{0,24}",
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![2 => near_valid(), 1 => any_text()]
}

// ---------------------------------------------------------------------------------------
// (a) Every value parser.

fn check_sweep<T: Clone>(s: &perflab::vocab::Sweep<T>) -> Result<(), TestCaseError> {
    prop_assert!(!s.values().is_empty(), "a sweep that parsed has values");
    prop_assert!(s.values().len() <= 4096, "at most 4096 values");
    Ok(())
}

proptest! {
    #![proptest_config(cases(2000))]

    #[test]
    fn units_never_panic_and_stay_in_bounds(t in text()) {
        let _ = parse_size("size", &t);
        let _ = parse_count("count", &t);
        if let Ok(d) = parse_duration("duration", &t) {
            prop_assert!(d <= MAX_DURATION, "{t:?} gave {d:?}");
        }
        if let Ok(r) = parse_rate("rate", &t) {
            prop_assert!(r.is_finite() && r > 0.0 && r <= MAX_RATE, "{t:?} gave {r}");
            prop_assert!(r * MAX_DURATION.as_secs_f64() >= 1.0, "{t:?} gave {r}");
        }
        // Every error is one line.
        for e in [
            parse_size("size", &t).err(),
            parse_count("count", &t).err(),
            parse_duration("duration", &t).err(),
            parse_rate("rate", &t).err(),
        ]
        .into_iter()
        .flatten()
        {
            prop_assert!(!e.hint.contains('\n'), "{e}");
        }
    }

    #[test]
    fn sweeps_never_panic(t in text()) {
        for parse in [parse_size, parse_count] {
            if let Ok(s) = parse_u64("threads", &t, parse) {
                check_sweep(&s)?;
            }
        }
        if let Ok(s) = parse_numeric(
            "spin",
            &t,
            |s| parse_duration("spin", s),
            |d| d.as_nanos() as f64,
            |f| Duration::from_nanos(f as u64),
        ) {
            check_sweep(&s)?;
            prop_assert!(s.values().iter().all(|d| *d <= MAX_DURATION));
        }
        if let Ok(s) = parse_numeric("rate", &t, |s| parse_rate("rate", s), |v| *v, |f| f) {
            check_sweep(&s)?;
            prop_assert!(s.values().iter().all(|r| r.is_finite() && *r > 0.0));
        }
    }

    #[test]
    fn names_slos_and_workload_options_never_panic(
        t in prop_oneof![
            any_text(),
            (pick(&["p99", "p99.9", "p999", "P50", "mean", "max", "avg", "median", "p98", ""]),
             pick(&["<", "<=", "<<", ">", "=<", ""]), value())
                .prop_map(|(f, op, v)| format!("{f}{op}{v}")),
            (pick(&["zipf", "pareto", "hot", "uniform", "ZIPF", ""]),
             pick(&[":", "::", ""]), pick(NUMBERS), pick(&["", "/", "/10", "%"]), pick(NUMBERS))
                .prop_map(|(k, c, a, s, b)| format!("{k}{c}{a}{s}{b}")),
        ]
    ) {
        if let Ok(slo) = Slo::parse("slo", &t) {
            prop_assert!(slo.limit_ns > 0.0 && slo.limit_ns.is_finite());
            let _ = slo.label();
        }
        if let Ok(d) = t.parse::<perflab::workload::distribution::Distribution>() {
            // Display round-trips through the parser.
            let back = d.to_string().parse::<perflab::workload::distribution::Distribution>();
            prop_assert!(back.is_ok(), "{d} does not parse back");
        }
        let _ = parse_names("rw", &t, perflab::workload::io::pattern::Rw::parse);
        let _ = parse_names("kernel", &t, perflab::workload::memory::MemoryKernel::parse);
        let _ = perflab::workload::oltp::Mix::parse(&t);
        let _ = perflab::archive::tags::invalid_name(&t);
        let _ = t.parse::<perflab::engine::EngineKind>();
    }
}

// ---------------------------------------------------------------------------------------
// (b) --target URLs.

fn url() -> impl Strategy<Value = String> {
    let scheme = pick(&[
        "postgres://",
        "postgresql://",
        "mysql://",
        "mariadb://",
        "sqlite://",
        "sqlite:///",
        "sqlite:",
        "sqlite::memory:",
        "postgres:",
        "http://",
        "POSTGRES://",
        "",
    ]);
    let user = pick(&[
        "",
        "u@",
        "u:p@",
        ":@",
        "u:@",
        "%zz@",
        "u%40x:p%3A@",
        "@@",
        "u:p:q@",
        "ü:ß@",
    ]);
    let host = pick(&[
        "",
        "localhost",
        "db.example",
        "[::1]",
        "[::1",
        "::1",
        "%2Fvar%2Frun",
        "h%",
        "[]",
        "a b",
        "127.0.0.1",
    ]);
    let port = pick(&[
        "",
        ":",
        ":5432",
        ":0",
        ":65535",
        ":65536",
        ":-1",
        ":99999999999999999999",
        ":abc",
        "::",
    ]);
    let path = pick(&[
        "",
        "/",
        "/db",
        "/db/extra",
        "//",
        "/%00",
        "/d%",
        "/bank.db",
        "tmp/x.db",
        "/a%2Fb",
    ]);
    let query = pick(&[
        "",
        "?",
        "?sslmode=require",
        "?sslmode=bogus",
        "?connect_timeout=99999999999999999999",
        "?connect_timeout=-1",
        "?password=secret",
        "?host=/var/run/postgresql",
        "?socket=/tmp/s",
        "?ssl-mode=VERIFY_CA&ssl-ca=x",
        "?a",
        "?=",
        "?&&",
        "?a=b=c",
        "?mode=memory",
        "#frag",
        "?%zz=1",
    ]);
    prop_oneof![
        4 => (scheme, user, host, port, path, query)
            .prop_map(|(s, u, h, p, d, q)| format!("{s}{u}{h}{p}{d}{q}")),
        1 => any_text(),
        1 => "(postgres|mysql|sqlite)://[a-z:@/%?=&\\[\\]0-9.]{0,30}",
    ]
}

proptest! {
    #![proptest_config(cases(2000))]

    #[test]
    fn target_urls_never_panic(u in url()) {
        if let Ok(parsed) = u.parse::<TargetUrl>() {
            let shown = parsed.redacted();
            prop_assert!(
                shown.parse::<TargetUrl>().is_ok(),
                "{u:?} parsed but its redacted form {shown:?} does not"
            );
            if let Some(db) = &parsed.database {
                let _ = perflab::sql::shard_db::shard_url(&u, db, 3);
            }
        }
        let _ = redact_url_text(&u);
        let _ = redact_command_line(&["perflab".into(), "--target".into(), u.clone()]);
        let _ = redact_command_line(&["perflab".into(), format!("--target={u}")]);
    }
}

// ---------------------------------------------------------------------------------------
// (c) Record loading, and everything that renders a loaded record.

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/records")
}

fn fixture_values() -> &'static [Value] {
    static FIXTURES: OnceLock<Vec<Value>> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
            .expect("the fixtures folder")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        paths
            .iter()
            .map(|p| {
                serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("JSON")
            })
            .collect()
    })
}

/// Every JSON pointer in `v`, containers included.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(x, p, out);
            }
        }
        _ => {}
    }
}

/// Values that break assumptions: extremes, wrong types, empties.
fn nasty_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(Value::Bool(true)),
        Just(serde_json::json!(0)),
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(1)),
        Just(serde_json::json!(u64::MAX)),
        Just(serde_json::json!(i64::MIN)),
        Just(serde_json::json!(1e308)),
        Just(serde_json::json!(-1e308)),
        Just(serde_json::json!(5e-324)),
        Just(serde_json::json!(0.5)),
        Just(serde_json::json!("")),
        Just(serde_json::json!("not base64 ~~~")),
        Just(serde_json::json!(
            "HISTFAAAAB14nJNpmSzMwMDAyAABzFAaxmeEiLECAAd7AQk="
        )),
        Just(serde_json::json!([])),
        Just(serde_json::json!({})),
        Just(serde_json::json!([0])),
        Just(serde_json::json!("💥\u{0}")),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |f| f.is_finite())
            .prop_map(|f| serde_json::json!(f)),
    ]
}

/// What to do at one place of a record.
#[derive(Debug, Clone)]
enum Mutation {
    Replace(Value),
    Remove,
    /// Multiply a number (or leave anything else).
    Scale(f64),
    /// Replace an array with copies of its first element, or empty it.
    Resize(usize),
    /// Replace every number under this place with the value (extremes everywhere at once).
    Flood(Value),
}

fn mutation() -> impl Strategy<Value = (prop::sample::Index, Mutation)> {
    let m = prop_oneof![
        4 => nasty_json().prop_map(Mutation::Replace),
        2 => Just(Mutation::Remove),
        2 => prop::sample::select(vec![0.0, -1.0, 1e-300, 1e300, 2.0, 0.5, -0.0])
            .prop_map(Mutation::Scale),
        1 => (0usize..4).prop_map(Mutation::Resize),
        2 => prop::sample::select(vec![
            serde_json::json!(u64::MAX),
            serde_json::json!(0),
            serde_json::json!(-1),
            serde_json::json!(1e308),
            serde_json::json!(i64::MAX),
        ])
        .prop_map(Mutation::Flood),
    ];
    (any::<prop::sample::Index>(), m)
}

fn mutate(record: &mut Value, at: &str, m: &Mutation) {
    let (parent, key) = match at.rfind('/') {
        Some(i) => (&at[..i], at[i + 1..].replace("~1", "/").replace("~0", "~")),
        None => return,
    };
    match m {
        Mutation::Remove => match record.pointer_mut(parent) {
            Some(Value::Object(o)) => {
                o.remove(&key);
            }
            Some(Value::Array(a)) => {
                if let Ok(i) = key.parse::<usize>()
                    && i < a.len()
                {
                    a.remove(i);
                }
            }
            _ => {}
        },
        Mutation::Replace(v) => {
            if let Some(x) = record.pointer_mut(at) {
                *x = v.clone();
            }
        }
        Mutation::Scale(f) => {
            if let Some(x) = record.pointer_mut(at)
                && let Some(n) = x.as_f64()
            {
                let scaled = n * f;
                if scaled.is_finite() {
                    *x = serde_json::json!(scaled);
                }
            }
        }
        Mutation::Flood(v) => {
            fn flood(x: &mut Value, v: &Value) {
                match x {
                    Value::Number(_) => *x = v.clone(),
                    Value::Array(a) => a.iter_mut().for_each(|y| flood(y, v)),
                    Value::Object(o) => o.values_mut().for_each(|y| flood(y, v)),
                    _ => {}
                }
            }
            if let Some(x) = record.pointer_mut(at) {
                flood(x, v);
            }
        }
        Mutation::Resize(n) => {
            if let Some(Value::Array(a)) = record.pointer_mut(at) {
                let first = a.first().cloned();
                a.clear();
                if let Some(f) = first {
                    a.extend(std::iter::repeat_n(f, *n));
                }
            }
        }
    }
}

/// Everything that reads a loaded record: tables, exports, reports, comparison.
fn render_everything(records: &[RunRecord]) {
    for r in records {
        let _ = perflab::ui::show::render(r);
        for format in [
            perflab::export::ExportFormat::Json,
            perflab::export::ExportFormat::Csv,
        ] {
            let _ = perflab::export::write(format, r, &mut Vec::new());
        }
    }
    let slo = Slo::parse("slo", "p99<1ms").ok();
    let options = perflab::report::Options {
        slo,
        landscape: true,
        title: Some("fuzz <&>".into()),
        comparison: None,
        study: None,
        names: Default::default(),
    };
    let _ = perflab::report::to_html(records, &options);
    let _ = perflab::report::to_markdown(records, &options, "figures");
    let _ = perflab::report::landscape::table(records);
    if records.len() >= 2 {
        for expect in [
            None,
            Some(perflab::compare::Expectation::Clock),
            Some(perflab::compare::Expectation::Factor(1e-300)),
        ] {
            let report = perflab::compare::compare(
                records,
                &perflab::compare::Options {
                    noise: 0.02,
                    expect,
                },
            );
            let _ = perflab::ui::compare::render(&report);
            let _ = serde_json::to_string(&report);
            let options = perflab::report::Options {
                comparison: Some(report),
                ..Default::default()
            };
            let _ = perflab::report::to_html(records, &options);
        }
    }
}

proptest! {
    #![proptest_config(cases(300))]

    #[test]
    fn arbitrary_text_is_not_a_record(t in prop_oneof![
        any_text(),
        "\\{\"schema_version\": ?[0-9-]{1,22}[,}].{0,40}",
    ]) {
        let _ = parse_record(Path::new("fuzz.json"), &t);
    }

    #[test]
    fn mutated_records_load_or_fail_but_never_panic(
        which in any::<prop::sample::Index>(),
        second in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..6),
        truncate in prop::option::weighted(0.1, any::<prop::sample::Index>()),
    ) {
        let fixtures = fixture_values();
        let mut value = which.get(fixtures).clone();
        let mut places = Vec::new();
        pointers(&value, String::new(), &mut places);
        for (at, m) in &mutations {
            let place = at.get(&places).clone();
            mutate(&mut value, &place, m);
        }
        let mut text = value.to_string();
        if let Some(cut) = truncate {
            let mut end = cut.index(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        let Ok(record) = parse_record(Path::new("fuzz.json"), &text) else {
            return Ok(());
        };
        // A record that loads must render, alone and beside an intact one.
        let other = parse_record(
            Path::new("fixture.json"),
            &second.get(fixtures).to_string(),
        )
        .expect("fixtures load");
        render_everything(std::slice::from_ref(&record));
        render_everything(&[other, record]);
    }

    #[test]
    fn histograms_from_records_decode_or_fail(
        bytes in prop::collection::vec(any::<u8>(), 0..200),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        header in (any::<u32>(), any::<u32>(), 0u32..8, any::<u64>(), any::<u64>()),
    ) {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD;
        // Arbitrary bytes.
        let _ = perflab::record::histogram::decode(&b64.encode(&bytes));
        // A real histogram with bytes changed.
        let mut h = perflab::record::histogram::new_histogram();
        for v in [1u64, 100, 10_000, 1_000_000] {
            h.saturating_record(v);
        }
        let mut real = b64
            .decode(perflab::record::histogram::encode(&h))
            .expect("base64");
        for (at, byte) in &flips {
            if !real.is_empty() {
                let i = at.index(real.len());
                real[i] = *byte;
            }
        }
        let _ = perflab::record::histogram::decode(&b64.encode(&real));
        // An uncompressed V2 header with arbitrary fields, then the arbitrary bytes.
        let (len, offset, digits, low, high) = header;
        let mut v2 = Vec::new();
        v2.extend_from_slice(&0x1c84_9303u32.to_be_bytes());
        v2.extend_from_slice(&len.min(bytes.len() as u32 + 8).to_be_bytes());
        v2.extend_from_slice(&offset.to_be_bytes());
        v2.extend_from_slice(&digits.to_be_bytes());
        v2.extend_from_slice(&low.to_be_bytes());
        v2.extend_from_slice(&(high % (1 << 40)).to_be_bytes());
        v2.extend_from_slice(&1.0f64.to_be_bytes());
        v2.extend_from_slice(&bytes);
        let _ = perflab::record::histogram::decode(&b64.encode(&v2));
    }
}

// ---------------------------------------------------------------------------------------
// (d) The whole command line.

/// A scratch folder for the command-line properties: an empty directory, a plain file, a
/// results folder holding the fixture records.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn get() -> &'static Scratch {
        static SCRATCH: OnceLock<Scratch> = OnceLock::new();
        SCRATCH.get_or_init(|| {
            remove_stale_scratch();
            let root = std::env::temp_dir().join(format!("perflab-fuzz-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(root.join("dir")).expect("scratch");
            std::fs::create_dir_all(root.join("cwd")).expect("scratch");
            std::fs::write(root.join("file.bin"), vec![0xa5u8; 1 << 16]).expect("scratch file");
            std::fs::write(root.join("not-a-db.db"), b"this is not SQLite").expect("scratch file");
            let results = root.join("results");
            for v in fixture_values() {
                let id = v["id"].as_str().expect("an id");
                let dir = results.join("runs").join(id);
                std::fs::create_dir_all(&dir).expect("run dir");
                std::fs::write(dir.join("run.json"), v.to_string()).expect("record");
            }
            Scratch { root }
        })
    }

    fn path(&self, rel: &str) -> String {
        self.root.join(rel).display().to_string()
    }
}

/// Test processes end without a hook to clean up after all their threads, so each run removes
/// the scratch folders of earlier runs whose process is gone.
fn remove_stale_scratch() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix("perflab-fuzz-")
            && pid.parse::<u32>().is_ok()
            && !Path::new("/proc").join(pid).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The shared options (src/cli/mod.rs: GlobalArgs and RunArgs).
const RUN_OPTIONS: &[&str] = &[
    "--threads",
    "-t",
    "--clients",
    "--warmup",
    "--duration",
    "-d",
    "--ops",
    "--repeat",
    "--rate",
    "--rate-scope",
    "--arrival",
    "--think",
    "--seed",
    "--interval",
];
const GLOBAL_FLAGS: &[&str] = &["--json", "--quiet", "-q"];

fn options_of(command: &str) -> &'static [&'static str] {
    match command {
        "memory" => &["--kernel", "-k", "--size", "-s"],
        "cpu" => &["--side", "--max-iter"],
        "null" => &["--spin", "--fail-every"],
        "io" => &[
            "--path",
            "-p",
            "--mode",
            "--rw",
            "--bs",
            "-b",
            "--bssplit",
            "--rwmix",
            "--rwmixread",
            "--iodepth",
            "--files",
            "--size",
            "-s",
            "--offset",
            "--direct",
            "--fsync",
            "--fdatasync",
            "--distribution",
            "--random-distribution",
            "--engine",
            "--ioengine",
            "--destroy-data",
            "--ss-window",
            "--ss-slope",
            "--ss-spread",
            "--straggler",
        ],
        "oltp" => &[
            "--workload",
            "--target",
            "--shards",
            "--scale",
            "--sqlite-journal-mode",
            "--sqlite-synchronous",
            "--set",
            "--pg-set",
        ],
        "scan" => &[
            "--target",
            "--table",
            "--predicate",
            "--cache",
            "--size",
            "--rows",
            "--native",
            "--set",
            "--op-timeout",
        ],
        "olap" => &[
            "--target",
            "--rows",
            "--files",
            "--loaders",
            "--files-dir",
            "--mix",
            "--set",
            "--op-timeout",
        ],
        "show" => &[],
        "export" => &["--format", "-f", "--output", "-o"],
        "report" => &["--output", "-o", "--format", "-f", "--slo", "--title"],
        "compare" => &["--noise", "--expect", "--fail-on", "--output", "-o"],
        _ => &[],
    }
}

fn flags_of(command: &str) -> &'static [&'static str] {
    match command {
        "io" => &[
            "--prefill",
            "--verify",
            "--keep",
            "--steady-state",
            "--direct",
        ],
        "oltp" => &["--select-only", "--keep"],
        "scan" | "olap" => &["--keep"],
        "report" => &["--suite", "--landscape"],
        _ => &[],
    }
}

/// Values for options: near-valid numbers and sweeps, the words options take, paths in the
/// scratch folder, URLs, and junk.
fn option_value() -> impl Strategy<Value = String> {
    let s = Scratch::get();
    let paths = vec![
        s.path("dir"),
        s.path("file.bin"),
        s.path("missing"),
        s.path("missing/deeper"),
        s.path("dir/new.html"),
        s.path("dir/new.md"),
        s.path("missing/out.html"),
        "/dev/null".to_string(),
        String::new(),
        ".".to_string(),
    ];
    let targets = vec![
        format!("sqlite://{}", s.path("dir/bank.db")),
        format!("sqlite://{}", s.path("not-a-db.db")),
        format!("sqlite://{}", s.path("missing/bank.db")),
        "sqlite://relative-never-created.db".to_string(),
        "sqlite::memory:".to_string(),
        "postgres://u:secret@localhost:1/db".to_string(),
        "mysql://u@localhost:1/db".to_string(),
    ];
    prop_oneof![
        4 => near_valid(),
        2 => pick(&[
            "0", "1", "yes", "no", "true", "read", "write", "randread", "randwrite", "rw",
            "randrw", "readwrite", "copy,triad", "latency", "lotto", "triad,latency", "test",
            "surface", "io_uring", "sync", "psync", "uniform", "zipf:1.2", "zipf:0",
            "pareto:0.5", "hot:90/10", "hot:100/0", "debitcredit", "orderentry", "wal", "off",
            "full", "total", "worker", "poisson", "4k/60:64k/40", "4k/0", "4k/4294967295:8k/1",
            "p99<10ms", "p99<0s", "clock", "2x", "0x", "regression", "json", "csv", "html",
            "md", "last", "20261122", "baseline", "all", "prepare", "run", "cleanup",
            "synchronous_commit=off", "=x", "-", "--", "-1",
        ]),
        2 => prop::sample::select(paths),
        1 => prop::sample::select(targets),
        1 => any_text(),
    ]
}

/// An argument vector for `command`: its options and the shared ones, values, stray words.
fn argv_for(command: &'static str) -> impl Strategy<Value = Vec<String>> {
    let mut options: Vec<&'static str> = options_of(command).to_vec();
    if matches!(
        command,
        "memory" | "cpu" | "null" | "io" | "oltp" | "scan" | "olap"
    ) {
        options.extend_from_slice(RUN_OPTIONS);
    }
    options.push("--results");
    if matches!(
        command,
        "memory" | "cpu" | "null" | "io" | "oltp" | "scan" | "olap"
    ) {
        options.push("--nope");
    }
    let flags: Vec<&'static str> = flags_of(command)
        .iter()
        .chain(GLOBAL_FLAGS)
        .copied()
        .collect();
    let options_s = options.clone();
    let arg = prop_oneof![
        5 => (prop::sample::select(options), option_value())
            .prop_map(|(o, v)| vec![o.to_string(), v]),
        1 => (prop::sample::select(options_s), option_value())
            .prop_map(|(o, v)| vec![format!("{o}={v}")]),
        2 => prop::sample::select(flags).prop_map(|f| vec![f.to_string()]),
        1 => option_value().prop_map(|v| vec![v]),
    ];
    let arg = arg.boxed();
    // Short command lines often parse, so the commands get to do their work; long ones
    // mix more options.
    let parts = prop_oneof![
        prop::collection::vec(arg.clone(), 0..3),
        prop::collection::vec(arg, 0..7),
    ];
    parts.prop_map(move |parts| {
        let mut argv = vec!["perflab".to_string(), command.to_string()];
        argv.extend(parts.into_iter().flatten());
        argv
    })
}

/// The machine the specs are built for: fixed, so memory checks do not depend on the host.
fn machine() -> Environment {
    let mut e = Environment::default();
    e.cpu.logical_cpus = Some(4);
    e.memory.available_bytes = Some(8 << 30);
    e.memory.total_bytes = Some(16 << 30);
    e
}

/// Whether an oltp command names a server (building its spec would connect to it).
fn names_a_server(cli: &Invocation) -> bool {
    let server = |t: &String| {
        t.parse::<TargetUrl>()
            .is_ok_and(|u| u.backend != perflab::target::url::Backend::Sqlite)
    };
    match &cli.what {
        What::Kind(kind, args) if ["oltp", "scan", "olap"].contains(&kind.name()) => args
            .get_many::<String>("target")
            .is_some_and(|mut targets| targets.any(server)),
        _ => false,
    }
}

/// Whether the command line is a kind's `prepare` or `cleanup` (the generator draws those
/// words as stray arguments, and `oltp cleanup` is a real command), which runs nothing.
fn is_setup(cli: &Invocation) -> bool {
    match &cli.what {
        What::Kind(_, args) => args
            .try_get_one::<Action>("action")
            .ok()
            .flatten()
            .is_some_and(|a| a.is_setup()),
        What::Generic(_) => false,
    }
}

/// What a clap error does to the exit code (as `main_with_args` maps it).
fn clap_exit_code(e: &clap::Error) -> u8 {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
        _ => 2,
    }
}

fn workload_command() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        argv_for("null"),
        argv_for("memory"),
        argv_for("cpu"),
        argv_for("io"),
        argv_for("io").prop_map(|mut v| {
            v.extend(["--mode".into(), "surface".into()]);
            v
        }),
        argv_for("oltp"),
        argv_for("oltp").prop_map(|mut v| {
            v.insert(2, "run".into());
            v
        }),
        argv_for("scan"),
        argv_for("scan").prop_map(|mut v| {
            v.extend(["--target".into(), "native".into()]);
            v
        }),
        argv_for("olap"),
        argv_for("olap").prop_map(|mut v| {
            v.insert(2, "run".into());
            v
        }),
    ]
}

proptest! {
    #![proptest_config(cases(1500))]

    /// Workload command lines are parsed and their specs built, never run.
    #[test]
    fn workload_command_lines_build_or_fail_with_exit_code_2(argv in workload_command()) {
        let cli = match parse(&argv) {
            Ok(cli) => cli,
            Err(e) => {
                prop_assert!(clap_exit_code(&e) <= 2);
                return Ok(());
            }
        };
        prop_assert!(!matches!(cli.what, What::Generic(Command::Run(_))), "never the suite");
        if names_a_server(&cli) {
            return Ok(());
        }
        match perflab::commands::workload_spec(&cli.what, &machine()) {
            Ok(Some(spec)) => {
                prop_assert!(spec.warmup <= MAX_DURATION);
                prop_assert!(spec.interval <= MAX_DURATION);
                let steps = perflab::vocab::sweep::grid(&spec.axes());
                prop_assert!(!steps.is_empty() && steps.len() <= 10_000, "{} steps", steps.len());
                let json = serde_json::to_string(&spec);
                prop_assert!(json.is_ok(), "{argv:?}: the spec does not serialize");
            }
            // `prepare` and `cleanup` set a system up or tear it down: no run, so no spec.
            Ok(None) => prop_assert!(is_setup(&cli), "{argv:?} runs a workload but built no spec"),
            Err(e) => {
                let line = e.to_string();
                prop_assert_eq!(e.exit_code(), 2, "{:?}: {}", argv, line);
                prop_assert!(!line.contains('\n') && !line.is_empty(), "{argv:?}: {line:?}");
            }
        }
    }
}

/// An argument kept inside the scratch folder: an absolute path elsewhere is moved under
/// `scratch/abs/` (the commands write files and results folders where they are told), and a
/// NUL byte, which no process argument can hold, is dropped.
fn confined(arg: &str) -> String {
    let s = Scratch::get();
    let arg = arg.replace('\0', "");
    let inside = |p: &str| {
        if p.starts_with('/') && !p.starts_with(&s.path("")) && p != "/dev/null" {
            format!("{}/{}", s.path("abs"), p.trim_start_matches('/'))
        } else {
            p.to_string()
        }
    };
    match arg.split_once('=') {
        Some((o, v)) if o.starts_with("--") => format!("{o}={}", inside(v)),
        _ => inside(&arg),
    }
}

fn perflab_binary(args: &[String]) -> Output {
    let s = Scratch::get();
    std::process::Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(args.iter().map(|a| confined(a)))
        // Relative paths land in the scratch folder too.
        .current_dir(s.path("cwd"))
        .env("NO_COLOR", "1")
        .env_remove("PERFLAB_TEST_PANIC")
        .env("PERFLAB_RESULTS", Scratch::get().path("results"))
        .output()
        .expect("the perflab binary runs")
}

fn archive_command() -> impl Strategy<Value = Vec<String>> {
    let runs = prop_oneof![
        3 => pick(&["last", "20261122-043507", "20261122-043508"]),
        1 => pick(&["2026", "", "baseline", "nosuch", "../../etc", "last ", "💥"]),
    ];
    let run_args = prop::collection::vec(runs, 0..3);
    (
        prop_oneof![
            Just("runs"),
            Just("show"),
            Just("export"),
            Just("report"),
            Just("compare"),
            Just("tag"),
        ],
        run_args,
    )
        .prop_flat_map(|(cmd, runs)| {
            argv_for(cmd).prop_map(move |mut argv| {
                argv.splice(2..2, runs.iter().cloned());
                argv
            })
        })
}

proptest! {
    #![proptest_config(cases(48))]

    /// Archive commands run for real, through the binary, on a results folder holding the
    /// fixture records: they end with 0, 2 (or 3, a regression), one line on stderr, no panic.
    #[test]
    fn archive_command_lines_exit_cleanly(argv in archive_command()) {
        // Belt and braces: only archive commands ever run here.
        if let Ok(cli) = parse(&argv) {
            prop_assert!(matches!(
                cli.what,
                What::Generic(Command::Runs(_)
                    | Command::Show(_)
                    | Command::Export(_)
                    | Command::Report(_)
                    | Command::Compare(_)
                    | Command::Tag(_))
            ));
        }
        let out = perflab_binary(&argv[1..]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        prop_assert!(
            matches!(code, Some(0 | 2 | 3)),
            "{argv:?} exited {code:?}: {stderr}"
        );
        prop_assert!(!stderr.contains("panicked") && !stderr.contains("bug:"), "{stderr}");
        if code == Some(2) && !stderr.starts_with("Usage") {
            prop_assert_eq!(stderr.lines().count(), 1, "{:?}: {}", argv, stderr);
            prop_assert!(stderr.starts_with("perflab: "), "{stderr}");
            // The line says what is wrong: not a heading whose list was cut off.
            prop_assert!(!stderr.contains(": (see"), "{stderr}");
        }
    }
}

/// Every number of every fixture, one at a time, at the extremes a hand-edited or corrupted
/// record can hold: a record that loads with it must render. Random mutations found a u64::MAX
/// sum only after many runs; this walks every place every time.
#[test]
fn each_number_at_an_extreme_renders() {
    let fixtures = fixture_values();
    for fixture in fixtures {
        let mut places = Vec::new();
        pointers(fixture, String::new(), &mut places);
        for place in places {
            if !fixture.pointer(&place).is_some_and(Value::is_number) {
                continue;
            }
            for extreme in [
                Value::from(u64::MAX),
                Value::from(i64::MIN),
                Value::from(f64::MAX),
            ] {
                let mut value = fixture.clone();
                *value.pointer_mut(&place).expect("the place exists") = extreme;
                if let Ok(record) = parse_record(Path::new("fuzz.json"), &value.to_string()) {
                    render_everything(std::slice::from_ref(&record));
                }
            }
        }
    }
}
