//! `perflab mail`: SPECmail-style users on a throwaway Dovecot (LMTP delivery, IMAP checks
//! and syncs, POP3 sessions). Every message is accounted for after every step; delivery is
//! timed by IDLE watchers; a Dovecot killed mid-step is started again and every message it
//! acknowledged is found; a server started apart is driven through `--target`; TLS (`--tls`:
//! IMAPS, POP3S and LMTP with STARTTLS; `--starttls`) encrypts every session, its cost timed
//! apart and nothing lost; bad inputs get one line and exit 2.

mod common;

use common::skip::skip_or_fail;
use common::{Results, json, stderr};
use perflab::workload::mail::message::Sizes;
use perflab::workload::mail::server::Throwaway;
use serde_json::Value;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Dovecot with the services the workload uses, as `.ci/run` installs them.
const PACKAGES: &str = "dovecot-core dovecot-imapd dovecot-pop3d dovecot-lmtpd";

/// Whether Dovecot is installed; says why the test skips (or fails, in CI) if not.
fn dovecot_installed() -> bool {
    let found = ["/usr/sbin/dovecot", "/usr/local/sbin/dovecot"]
        .iter()
        .any(|p| std::path::Path::new(p).is_file())
        && ["imap", "pop3", "lmtp"]
            .iter()
            .all(|s| std::path::Path::new("/usr/lib/dovecot").join(s).is_file());
    if !found {
        skip_or_fail(
            "Dovecot (with imapd, pop3d and lmtpd) is not installed",
            PACKAGES,
        );
    }
    found
}

/// Whether `openssl` is on PATH (the throwaway's certificate is made with it); says why the
/// test skips (or fails, in CI) if not.
fn openssl_installed() -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).any(|d| d.join("openssl").is_file());
    if !found {
        skip_or_fail("openssl is not installed", "openssl");
    }
    found
}

/// A heavy day, so that a few users make a few dozen sessions a second: short steps then
/// hold every kind of session.
const BUSY: [&str; 18] = [
    "--sent-per-day",
    "3000",
    "--imap-checks-per-day",
    "3000",
    "--imap-syncs-per-day",
    "600",
    "--pop3-per-day",
    "2000",
    "--pop3-users",
    "0.25",
    "--peak-share",
    "0.5",
    "--mailbox-messages",
    "3",
    "--message-size",
    "1k:5,20k:1",
    "--watchers",
    "4",
];

fn mail(results: &Results, extra: &[&str]) -> Output {
    let mut args = vec!["--json", "mail"];
    args.extend(BUSY);
    args.extend(extra);
    common::run(results, &args)
}

fn check<'a>(step: &'a Value, name: &str) -> &'a Value {
    step["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {}", step["checks"]))
}

/// Every step's accounting passed, with mail accepted and every accepted copy found.
fn assert_accounted(v: &Value) {
    for s in v["steps"].as_array().unwrap() {
        let c = check(s, "mail_accounting");
        assert_eq!(c["passed"], true, "{}", c["summary"]);
        let f = &c["figures"];
        assert!(f["accepted"].as_i64().unwrap() > 0, "{f}");
        assert_eq!(f["lost"], 0);
        assert_eq!(f["duplicated"], 0);
        assert_eq!(f["corrupt"], 0);
        assert!(
            f["compared"].as_i64().unwrap() > 0,
            "bodies were compared: {f}"
        );
        let sent = f["sent"].as_i64().unwrap();
        let parts = f["accepted"].as_i64().unwrap()
            + f["refused"].as_i64().unwrap()
            + f["in_doubt"].as_i64().unwrap();
        assert_eq!(sent, parts, "sent = accepted + refused + in doubt: {f}");
    }
}

#[test]
fn every_message_is_accounted_for_and_every_session_kind_runs() {
    if !dovecot_installed() {
        return;
    }
    let r = Results::new("mail");
    let out = mail(
        &r,
        &["--users", "30,60", "-d", "3s", "--warmup", "1s", "--qos"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["spec"]["workload"], "mail");
    assert_eq!(v["spec"]["load"]["model"], "offered");
    assert_eq!(v["spec"]["throwaway"], true);
    assert!(v["spec"]["server"].as_str().unwrap().starts_with("Dovecot"));
    assert_eq!(v["spec"]["durability"]["mail_fsync"], "optimized");
    // Passwords are made for the run and never recorded.
    assert!(!out.stdout.windows(8).any(|w| w == b"password"));
    assert_accounted(&v);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for s in steps {
        let t = &s["trials"][0];
        // The offered rate follows the users: 30 users x 3,933 sessions a day x 0.5 / 3600.
        let users = s["params"]["users"].as_f64().unwrap();
        let offered = t["schedule"]["target_ops_per_sec"].as_f64().unwrap();
        let per_user_hour = (3000.0 + 0.75 * 3600.0 + 0.25 * 2000.0) * 0.5;
        assert!(
            (offered - users * per_user_hour / 3600.0).abs() < 1e-6,
            "{offered}"
        );
        assert!(t["figures"]["sessions_per_hour"].as_f64().unwrap() > 0.0);
        // Watched users' mail was seen by their IDLE-ing reader and timed.
        assert!(
            t["figures"]["delivery_p95_ns"].as_f64().unwrap() > 0.0,
            "{}",
            t["figures"]
        );
        let q = check(s, "mail_qos");
        assert!(q["figures"]["delivery_seen"].as_i64().unwrap() > 0, "{q}");
        // The server is local: its CPU per user-hour is measured.
        assert!(
            t["figures"]["server_cpu_per_user_hour_ns"]
                .as_f64()
                .unwrap()
                > 0.0
        );
    }
    // Every session kind ran, and their commands were timed one by one.
    let groups = steps[1]["trials"][0]["groups"].as_array().unwrap();
    let has = |by: &str, key: &str| groups.iter().any(|g| g["by"] == by && g["key"] == key);
    for kind in ["smtp", "imap_check", "imap_sync", "pop3"] {
        assert!(
            has("kind", kind),
            "no {kind} session: {}",
            steps[1]["trials"][0]["groups"]
        );
    }
    for command in [
        "smtp_connect",
        "smtp_envelope",
        "smtp_data",
        "imap_login",
        "imap_select",
        "imap_search",
        "imap_fetch_headers",
        "imap_fetch_body",
        "imap_fetch_flags",
        "pop3_login",
        "pop3_uidl",
        "pop3_retr",
        "pop3_quit",
    ] {
        assert!(has("command", command), "no {command} timed");
    }
}

/// A short TLS run on the throwaway: every session kind's handshake timed as its own group,
/// the connect recorded beside it, nothing lost, the record saying how each server was
/// secured. Returns the record.
fn tls_run(name: &str, option: &str) -> Option<Value> {
    if !dovecot_installed() || !openssl_installed() {
        return None;
    }
    let r = Results::new(name);
    let out = mail(
        &r,
        &[option, "--users", "30", "-d", "2s", "--warmup", "500ms"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_accounted(&v);
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["errors"], 0, "{t}");
    let groups = t["groups"].as_array().unwrap();
    let group = |key: &str| {
        groups
            .iter()
            .find(|g| g["by"] == "command" && g["key"] == key)
            .unwrap_or_else(|| panic!("no {key} group: {groups:?}"))
    };
    for (tls, connect) in [
        ("imap_tls", "imap_connect"),
        ("pop3_tls", "pop3_connect"),
        ("smtp_tls", "smtp_connect"),
    ] {
        // One handshake per connection, each timed apart from its connect.
        assert!(group(tls)["ops"].as_u64().unwrap() > 0, "{tls}");
        assert_eq!(group(tls)["ops"], group(connect)["ops"], "{tls}");
    }
    let resumed = t["figures"]["tls_resumed_pct"].as_f64().unwrap();
    assert!((0.0..=100.0).contains(&resumed), "{resumed}");
    let settings = &v["spec"]["tls_settings"];
    assert!(
        settings["certificate"]
            .as_str()
            .unwrap()
            .contains("RSA 2048"),
        "{settings}"
    );
    assert!(
        settings["negotiated"].as_str().unwrap().contains("TLSv1_3"),
        "{settings}"
    );
    assert!(settings["client"].as_str().unwrap().contains("resumption"));
    Some(v)
}

/// The record's URLs start with `schemes` (target, pop3, submit) and its `tls` says `modes`
/// (imap, pop3, submit).
fn assert_secured(v: &Value, schemes: [&str; 3], modes: [&str; 3]) {
    let spec = &v["spec"];
    for (field, scheme) in ["target", "pop3", "submit"].into_iter().zip(schemes) {
        let url = spec[field].as_str().unwrap();
        assert!(url.starts_with(scheme), "{field}: {url}");
    }
    for (protocol, mode) in ["imap", "pop3", "submit"].into_iter().zip(modes) {
        assert_eq!(spec["tls"][protocol], mode, "{protocol}: {spec}");
    }
}

#[test]
fn tls_on_the_throwaway_uses_imaps_and_pop3s_and_loses_nothing() {
    let Some(v) = tls_run("mail-tls", "--tls") else {
        return;
    };
    // LMTP has no TLS port: Dovecot's offers STARTTLS.
    assert_secured(
        &v,
        ["imaps://", "pop3s://", "lmtp://"],
        ["implicit", "implicit", "starttls"],
    );
}

#[test]
fn starttls_on_the_throwaway_upgrades_every_connection() {
    let Some(v) = tls_run("mail-starttls", "--starttls") else {
        return;
    };
    // STARTTLS keeps the plain schemes: the record's tls says how they were secured.
    assert_secured(
        &v,
        ["imap://", "pop3://", "lmtp://"],
        ["starttls", "starttls", "starttls"],
    );
}

/// The process group of the throwaway Dovecot that the perflab process `pid` started.
fn dovecot_of(pid: u32) -> Option<u32> {
    let needle = format!("perflab-mail-{pid}-");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let p: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
        let cmd = String::from_utf8_lossy(&cmd);
        (cmd.contains("dovecot") && cmd.contains(&needle) && cmd.contains("-F")).then_some(p)
    })
}

#[test]
fn a_dovecot_killed_mid_step_keeps_every_message_it_acknowledged() {
    if !dovecot_installed() {
        return;
    }
    let r = Results::new("mail-kill");
    let mut args = vec!["--json", "mail"];
    args.extend(BUSY);
    args.extend(["--users", "40", "-d", "6s", "--warmup", "1s", "--results"]);
    let child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(&args)
        .arg(r.path())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("perflab starts");
    // Wait for the server, then for the measure phase to be under way.
    let pid = child.id();
    // A run that hangs fails the test within two minutes rather than holding CI.
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(120));
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    });
    let started = Instant::now();
    let server = loop {
        if let Some(p) = dovecot_of(pid) {
            break p;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no Dovecot started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_secs(3));
    // Every Dovecot process at once, as a crash would.
    let killed = Command::new("sh")
        .arg("-c")
        .arg(format!("kill -s KILL -- -{server}"))
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let began = Instant::now();
    let out = child.wait_with_output().expect("perflab ends");
    assert_eq!(
        out.status.code(),
        Some(0),
        "after {:?}: {}",
        began.elapsed(),
        stderr(&out)
    );
    let v = json(&out);
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("server_restarted"), "{warnings}");
    assert_accounted(&v);
    // Sessions failed while the server was down (as failed ops, or, where the kill came
    // before the measure phase on a loaded machine, as the sessions' error share); the
    // watchers logged in again after.
    let t = &v["steps"][0]["trials"][0];
    let session_errors = t["figures"]["session_errors_pct"].as_f64().unwrap_or(0.0);
    assert!(
        t["errors"].as_u64().unwrap() > 0 || session_errors > 0.0,
        "{t}"
    );
    // The restarted server was stopped at the end like the first.
    assert!(
        dovecot_of(pid).is_none(),
        "a Dovecot of the run is left running"
    );
}

#[test]
fn a_target_server_is_driven_by_its_urls_and_users_file() {
    if !dovecot_installed() {
        return;
    }
    // A Dovecot perflab does not own in this run: started here, from the library, with
    // users of its own.
    let users: Vec<(String, String)> = (1..=20)
        .map(|i| (format!("box{i}"), format!("secret-{i}-pw")))
        .collect();
    let server = match Throwaway::start(&users) {
        Ok(s) => s,
        Err(e) => {
            skip_or_fail(&e, PACKAGES);
            return;
        }
    };
    let names: Vec<String> = users.iter().map(|u| u.0.clone()).collect();
    server
        .populate(&names, 2, &Sizes::parse("2k").unwrap(), 7, &|_| {}, &|| {
            false
        })
        .expect("mailboxes filled");
    let r = Results::new("mail-target");
    std::fs::create_dir_all(r.path()).unwrap();
    let file = r.path().join("users.txt");
    let lines: Vec<String> = users.iter().map(|(u, p)| format!("{u}:{p}")).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let (imap, lmtp, pop3) = (
        format!("imap://{}", server.imap()),
        format!("lmtp://{}", server.lmtp()),
        format!("pop3://{}", server.pop3()),
    );
    let out = mail(
        &r,
        &[
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
            "-d",
            "2s",
            "--warmup",
            "500ms",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["spec"]["throwaway"], false);
    assert_eq!(v["spec"]["target"], imap);
    assert_eq!(v["spec"]["submit"], lmtp);
    assert_eq!(v["spec"]["tls"]["imap"], "off");
    assert!(v["spec"].get("tls_settings").is_none());
    assert!(v["spec"]["accounts"].as_str().unwrap().contains("file"));
    assert_accounted(&v);
    // The passwords are nowhere in the record.
    assert!(!String::from_utf8_lossy(&out.stdout).contains("-pw"));
    // A wrong password is one line naming the user, before anything runs.
    std::fs::write(&file, "box1:wrong\n").unwrap();
    // One user of the file against the server, with `extra`.
    let one = |extra: &[&str]| {
        let mut args = vec![
            "mail",
            "--target",
            &imap,
            "--smtp",
            &lmtp,
            "--users-file",
            file.to_str().unwrap(),
            "--users",
            "1",
        ];
        args.extend(extra);
        common::run(&r, &args)
    };
    let out = one(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("box1 cannot log in"),
        "{}",
        stderr(&out)
    );
    // STARTTLS asked of a server without a certificate: one line at the start, exit 2.
    let out = one(&["--starttls"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("does not offer STARTTLS"), "{err}");
    // Nothing listening: one line naming the server, exit 2.
    let out = common::run(
        &r,
        &[
            "mail",
            "--target",
            "imap://127.0.0.1:1",
            "--password-pattern",
            "p%d",
            "--users",
            "5",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("127.0.0.1:1"), "{err}");
}

#[test]
fn bad_inputs_get_one_line_and_exit_2() {
    let r = Results::new("mail-bad");
    for (args, says) in [
        (vec!["--users", "0"], "--users"),
        (vec!["--profile", "bank"], "--profile"),
        (vec!["--peak-share", "2"], "--peak-share"),
        (vec!["--recipients", "3-1"], "--recipients"),
        (vec!["--rate", "5/s"], "--rate"),
        (vec!["--message-size", "1k:x"], "--message-size"),
        (vec!["--smtp", "lmtp://127.0.0.1:24"], "--smtp"),
        (vec!["--password-pattern", "x%d"], "--target"),
        (vec!["--target", "pop3://127.0.0.1"], "--target"),
        (vec!["--target", "imap://u:p@127.0.0.1"], "--target"),
        (
            vec![
                "--target",
                "imap://127.0.0.1",
                "--user-pattern",
                "u",
                "--password-pattern",
                "p",
            ],
            "--user-pattern",
        ),
        (vec!["--command-limit", "0s"], "--command-limit"),
        (vec!["--search-users", "--users", "8"], "--users"),
        (vec!["--search-users", "--users", "8,4"], "--users"),
        (vec!["--tls", "--target", "imap://127.0.0.1"], "imaps://"),
        (vec!["--target", "imaps://127.0.0.1:x"], "--target"),
        (
            vec![
                "--target",
                "imap://127.0.0.1",
                "--smtp",
                "lmtps://127.0.0.1",
            ],
            "--smtp",
        ),
    ] {
        let mut all = vec!["mail"];
        all.extend(&args);
        let out = common::run(&r, &all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn the_search_qualifies_the_users_supported_and_says_when_none_pass() {
    if !dovecot_installed() {
        return;
    }
    let r = Results::new("mail-search");
    let short = ["--duration", "2s", "--warmup", "500ms"];
    // Both user counts pass: the top of the range is the answer, run at 100% and 120% of
    // its load on the way up, then qualified at 80%.
    let mut args = vec!["--users", "2,4", "--search-users"];
    args.extend(short);
    let o = mail(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let s = &v["search"];
    let probes: Vec<(f64, f64, bool)> = s["probes"]
        .as_array()
        .expect("probes")
        .iter()
        .map(|p| {
            (
                p["value"].as_f64().unwrap(),
                p["load_pct"].as_f64().unwrap(),
                p["passed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        probes,
        vec![
            (2.0, 100.0, true),
            (2.0, 120.0, true),
            (4.0, 100.0, true),
            (4.0, 120.0, true),
            (4.0, 80.0, true)
        ],
        "{s}"
    );
    assert_eq!(s["supported"].as_f64(), Some(4.0), "{s}");
    assert_eq!(s["supported_step"].as_u64(), Some(2), "{s}");
    assert!(
        s["verdict"].as_str().unwrap().contains("top of the range"),
        "{s}"
    );
    // Each probe is a step at its share of the load, checked like any other.
    let steps = v["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 5);
    assert_eq!(steps[1]["params"]["load_pct"].as_u64(), Some(120));
    for step in steps {
        assert_eq!(check(step, "mail_qos")["passed"], true, "{step}");
    }
    let shown = common::run(&r, &["show", "last"]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("users supported: 4 at"), "{text}");
    // A limit no login meets: the smallest count fails at once, and nothing is supported.
    let mut args = vec!["--users", "2,4", "--search-users", "--command-limit", "1ms"];
    args.extend(short);
    let o = mail(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let s = &v["search"];
    assert!(s.get("supported").is_none(), "{s}");
    assert_eq!(s["probes"].as_array().map(Vec::len), Some(1), "{s}");
    assert!(
        s["verdict"].as_str().unwrap().starts_with("no users"),
        "{s}"
    );
}
