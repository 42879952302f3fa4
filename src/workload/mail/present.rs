//! Mail's own table and findings, for the terminal, `perflab show` and reports: per step the
//! users, the load share, sessions per hour, delivery time and the quality-of-service
//! verdict; for a `--search-users` run, the users supported and how the search got there.

use crate::present::mean_figure;
use crate::present::table::Table;
use crate::record::{RunRecord, StepResult, step_number};
use crate::vocab::numbers::{count, ns, sig3};

pub const TITLE: &str = "quality of service by step (SPECmail-style: every command within its limit for 95%, delivery within its limit for 95%, under 1% errors)";

/// A user count as people write it: `4`, `25600`.
pub fn users_text(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        sig3(v)
    }
}

/// The step's verdict: `pass`, `FAIL` or `-` without a `mail_qos` check.
fn qos(s: &StepResult) -> &'static str {
    match s.checks.iter().find(|c| c.name == "mail_qos") {
        Some(c) if c.passed => "pass",
        Some(_) => "FAIL",
        None => "-",
    }
}

/// A step's user count.
pub fn users(s: &StepResult) -> Option<f64> {
    s.params.get("users").and_then(|v| v.as_f64())
}

/// The share of its users' load a step ran at, in percent (100 outside a search).
pub fn load_pct(s: &StepResult) -> f64 {
    s.params
        .get("load_pct")
        .and_then(|v| v.as_f64())
        .unwrap_or(100.0)
}

/// The table, or nothing for a run that is not mail's.
pub fn table(r: &RunRecord) -> Option<Table> {
    if r.steps.is_empty() {
        return None;
    }
    let mut t = Table::new(
        [
            "step",
            "users",
            "load",
            "sessions/h",
            "msgs/min",
            "delivery p95",
            "on time",
            "worst cmd over",
            "errors",
            "server CPU/user-h",
            "QoS",
        ]
        .map(String::from)
        .to_vec(),
    );
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}%"));
    for s in &r.steps {
        let f = |name: &str| mean_figure(s, name);
        t.row(vec![
            step_number(s.index).to_string(),
            users(s).map_or("-".into(), users_text),
            format!("{}%", load_pct(s)),
            f("sessions_per_hour").map_or("-".into(), count),
            f("messages_per_min").map_or("-".into(), sig3),
            f("delivery_p95_ns").map_or("-".into(), ns),
            pct(f("delivery_on_time_pct")),
            pct(f("commands_over_limit_pct")),
            pct(f("session_errors_pct")),
            f("server_cpu_per_user_hour_ns").map_or("-".into(), ns),
            qos(s).into(),
        ]);
    }
    Some(t)
}

/// The headline findings: the users supported (a search), or the largest step that passed
/// its quality of service (a sweep with `--qos`).
pub fn findings(r: &RunRecord) -> Vec<String> {
    let step = |i: usize| r.steps.iter().find(|s| s.index == i);
    let rate = |s: &StepResult| {
        mean_figure(s, "sessions_per_hour")
            .map(|v| format!("{} sessions/hour", count(v)))
            .unwrap_or_default()
    };
    if let Some(search) = &r.search {
        let mut out = Vec::new();
        if let (Some(users), Some(s)) = (search.supported, search.supported_step.and_then(step)) {
            out.push(format!(
                "users supported: {} at {} (step {}; passes at {} of its load)",
                users_text(users),
                rate(s),
                step_number(s.index),
                search
                    .loads_pct
                    .iter()
                    .map(|p| format!("{p}%"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !search.verdict.is_empty() {
            out.push(format!("search: {}", search.verdict));
        }
        let tried: Vec<String> = search
            .probes
            .iter()
            .map(|p| {
                format!(
                    "{}@{}%:{}",
                    users_text(p.value),
                    p.load_pct,
                    if p.passed { "pass" } else { "fail" }
                )
            })
            .collect();
        if !tried.is_empty() {
            out.push(format!("probes in order: {}", tried.join(" ")));
        }
        return out;
    }
    // A sweep judged by --qos: the largest user count that passed.
    let judged: Vec<&StepResult> = r.steps.iter().filter(|s| qos(s) != "-").collect();
    if judged.is_empty() {
        return Vec::new();
    }
    let best = judged
        .iter()
        .filter(|s| qos(s) == "pass")
        .max_by(|a, b| users(a).unwrap_or(0.0).total_cmp(&users(b).unwrap_or(0.0)));
    match best {
        Some(s) => vec![format!(
            "largest step within the quality of service: {} users at {} (step {}); not qualified at 80% and 120% of its load: --search-users does that",
            users(s).map_or("-".into(), users_text),
            rate(s),
            step_number(s.index)
        )],
        None => vec!["no step met the quality of service".into()],
    }
}
