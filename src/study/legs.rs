//! A leg as the command line it runs.
//!
//! Options are laid over each other in this order, a later one replacing an earlier one of the
//! same name: the study's `[defaults]` (only those the leg's command takes), the leg's own,
//! under `--quick` the study's `[quick]` and then the leg's `quick = {..}`, and last the flags
//! given on the command line. Placeholders are filled in for this machine: `{cpus}`, `{ram}`
//! (bytes), `{io_path}` (where storage legs put their files) and `{postgres}` (the user's
//! server or the study's throwaway one).
//!
//! A value may also hold `{= EXPR}`: a number computed from the records of legs that ran
//! before this one (a rate at 75% of an earlier leg's peak, a database of twice the RAM), in
//! the figures' language of [`super::expr`]. Such a leg's command line is final only when
//! those legs have run: [`derive`] fills it in just before the leg runs.

use super::file::arg_named;
use super::{Leg, Opt, OptValue, Study};
use crate::workload::kind::by_command;

/// What the placeholders stand for on this machine.
#[derive(Debug, Clone, Default)]
pub struct Machine {
    pub cpus: u64,
    pub ram_bytes: u64,
    pub io_path: String,
    /// A PostgreSQL URL for `{postgres}`, when there is one.
    pub postgres: Option<String>,
}

/// The flags given on the command line after the study's name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides(pub Vec<Opt>);

impl Overrides {
    /// Reads `--name value`, `--name=value` and `--switch` against the legs' commands: a flag
    /// no leg takes is an error, as is a value given to a switch.
    pub fn parse(study: &Study, args: &[String]) -> Result<Overrides, String> {
        let commands: Vec<clap::Command> = study
            .legs
            .iter()
            .filter_map(|l| by_command(&study.command_of(l)).map(|k| k.command()))
            .collect();
        let mut out: Vec<Opt> = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            let Some(body) = a.strip_prefix("--") else {
                return Err(format!(
                    "{a:?}: after the study's name come its flags (--name value), each for the legs whose command takes it"
                ));
            };
            let (key, inline) = match body.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (body.to_string(), None),
            };
            let arg = commands
                .iter()
                .find_map(|c| arg_named(c, &key).map(|x| x.get_action().takes_values()));
            let Some(takes_value) = arg else {
                return Err(format!(
                    "--{key}: no leg of study {} takes it (their commands: {})",
                    study.name,
                    study
                        .legs
                        .iter()
                        .map(|l| study.command_of(l))
                        .collect::<std::collections::BTreeSet<_>>()
                        .into_iter()
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            let value = match (takes_value, inline) {
                (false, None) => OptValue::Flag(true),
                (false, Some(_)) => return Err(format!("--{key} is a switch; it takes no value")),
                (true, Some(v)) => OptValue::Values(vec![v]),
                (true, None) => {
                    i += 1;
                    let v = args
                        .get(i)
                        .ok_or_else(|| format!("--{key} needs a value"))?;
                    OptValue::Values(vec![v.clone()])
                }
            };
            // Given twice (--path a --path b): both, as on a command line.
            match (out.iter_mut().find(|o| o.key == key), value) {
                (
                    Some(Opt {
                        value: OptValue::Values(have),
                        ..
                    }),
                    OptValue::Values(more),
                ) => have.extend(more),
                (_, value) => out.push(Opt {
                    key,
                    value,
                    line: 0,
                }),
            }
            i += 1;
        }
        Ok(Overrides(out))
    }

    /// As typed, for the record and `--dry-run`.
    pub fn words(&self) -> Vec<String> {
        render(&self.0)
    }
}

/// Lays `from` over `into`, each option under its long name (an alias such as `clients`
/// replaces `threads`); options the command does not take are left out.
fn lay(into: &mut Vec<Opt>, from: &[Opt], cmd: &clap::Command) {
    for o in from.iter().filter(|o| o.key != "command") {
        let Some(long) = arg_named(cmd, &o.key).and_then(|a| a.get_long()) else {
            continue;
        };
        match into.iter_mut().find(|x| x.key == long) {
            Some(x) => x.value = o.value.clone(),
            None => into.push(Opt {
                key: long.to_string(),
                ..o.clone()
            }),
        }
    }
}

fn render(opts: &[Opt]) -> Vec<String> {
    let mut v = Vec::new();
    for o in opts {
        match &o.value {
            OptValue::Flag(true) => v.push(format!("--{}", o.key)),
            OptValue::Flag(false) => {}
            OptValue::Values(vals) => {
                for x in vals {
                    v.push(format!("--{}", o.key));
                    v.push(x.clone());
                }
            }
        }
    }
    v
}

/// Why a leg cannot run here (None: it can).
pub fn unrunnable(study: &Study, leg: &Leg, overrides: &Overrides, m: &Machine) -> Option<String> {
    if let Some(e) = &leg.external {
        return Some(format!("runs elsewhere: {e}"));
    }
    let opts = options(study, leg, false, overrides);
    let uses_postgres = leg.needs.iter().any(|n| n == "postgres")
        || opts.iter().any(|o| match &o.value {
            OptValue::Values(v) => v.iter().any(|x| x.contains("{postgres}")),
            OptValue::Flag(_) => false,
        });
    if uses_postgres && m.postgres.is_none() {
        return Some(
            "needs PostgreSQL: install it (apt-get install postgresql) for a throwaway server, or give --target postgres://USER@HOST/DB".into(),
        );
    }
    None
}

/// A leg that wants one path per disk (`needs = "volumes"`) whose paths here share one: what
/// its volume ramp then measures, said before it runs (None otherwise).
pub fn shared_device(
    study: &Study,
    leg: &Leg,
    overrides: &Overrides,
    m: &Machine,
) -> Option<String> {
    if !leg.needs.iter().any(|n| n == "volumes") {
        return None;
    }
    let argv = argv(study, leg, false, overrides, m);
    let paths: Vec<&String> = argv
        .windows(2)
        .filter(|w| w[0] == "--path")
        .map(|w| &w[1])
        .collect();
    let devices: std::collections::BTreeSet<String> = paths
        .iter()
        .filter_map(|p| crate::env::disk::device_of(std::path::Path::new(p.as_str())))
        .map(|d| d.whole_disk.unwrap_or(d.name))
        .collect();
    (devices.len() <= 1).then(|| {
        format!(
            "its volumes share one device here{}: the ramp measures one disk's queue, and 'linear in volumes' does not apply (give --path once per disk)",
            devices
                .iter()
                .next()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        )
    })
}

/// The leg's options, laid over each other (placeholders not yet filled in).
pub fn options(study: &Study, leg: &Leg, quick: bool, overrides: &Overrides) -> Vec<Opt> {
    let Some(kind) = by_command(&study.command_of(leg)) else {
        return Vec::new();
    };
    let cmd = kind.command();
    let mut opts = Vec::new();
    lay(&mut opts, &study.defaults, &cmd);
    lay(&mut opts, &leg.options, &cmd);
    if quick {
        lay(&mut opts, &study.quick, &cmd);
        lay(&mut opts, &leg.quick, &cmd);
    }
    lay(&mut opts, &overrides.0, &cmd);
    opts
}

/// The command line of a leg (after `perflab`), for this machine.
pub fn argv(
    study: &Study,
    leg: &Leg,
    quick: bool,
    overrides: &Overrides,
    m: &Machine,
) -> Vec<String> {
    let fill = |s: &str| -> String {
        s.replace("{cpus}", &m.cpus.max(1).to_string())
            .replace("{ram}", &m.ram_bytes.to_string())
            .replace("{io_path}", &m.io_path)
            .replace("{postgres}", m.postgres.as_deref().unwrap_or("{postgres}"))
    };
    let mut v = vec![study.command_of(leg)];
    v.extend(
        render(&options(study, leg, quick, overrides))
            .iter()
            .map(|s| fill(s)),
    );
    // Values computed from this machine alone are known now; a value that cannot be is left
    // as written, and the leg's command's parser then names it.
    fill_derived(&v, &super::expr::Runs::new(), true).unwrap_or(v)
}

/// The spans (byte ranges, braces included) of each `{= EXPR}` in an option's value; braces
/// nest (`{= 2 * {ram} / 1e8}`).
pub fn derived_spans(value: &str) -> Result<Vec<(usize, usize)>, String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = value[from..].find("{=").map(|i| from + i) {
        let mut depth = 0usize;
        let mut close = None;
        for (i, c) in value[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let close = close.ok_or_else(|| format!("{value:?}: '{{=' without its closing '}}'"))?;
        out.push((open, close));
        from = close;
    }
    Ok(out)
}

/// The expression of a span `{= EXPR}`.
pub fn derived_text(value: &str, (open, close): (usize, usize)) -> &str {
    value[open + 2..close - 1].trim()
}

/// A computed value as an option takes it: whole numbers as such, others with four
/// significant digits (`round(EXPR)` where the option wants a count).
fn derived_number(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 || v.abs() >= 1e4 {
        return format!("{}", v.round() as i64);
    }
    let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    let t = format!("{v:.decimals$}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Fills in each `{= EXPR}` of a leg's command line from the records of the legs that ran
/// before it. Errors say which value could not be computed and why.
pub fn derive(argv: &[String], runs: &super::expr::Runs) -> Result<Vec<String>, String> {
    fill_derived(argv, runs, false)
}

/// Fills in the `{= EXPR}` of a command line: all of them, or only those that name no leg
/// (`{= round(0.5 * 25769803776 / 2.5e6)}` once `{ram}` is filled in), which are known
/// before any leg runs.
fn fill_derived(
    argv: &[String],
    runs: &super::expr::Runs,
    leg_free_only: bool,
) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(argv.len());
    for a in argv {
        let spans = derived_spans(a)?;
        if spans.is_empty() {
            out.push(a.clone());
            continue;
        }
        let mut filled = String::new();
        let mut last = 0;
        for span in spans {
            let text = derived_text(a, span);
            let e = super::expr::parse_expr(text).map_err(|e| format!("{{= {text}}}: {e}"))?;
            let mut legs = Vec::new();
            e.legs(&mut legs);
            if leg_free_only && !legs.is_empty() {
                filled.push_str(&a[last..span.1]);
                last = span.1;
                continue;
            }
            let v = super::expr::eval(&e, runs, &super::expr::Scope::default())
                .map_err(|m| format!("{{= {text}}} cannot be computed: {m}"))?;
            if !v.is_finite() {
                return Err(format!("{{= {text}}} is {v}, not a number"));
            }
            filled.push_str(&a[last..span.0]);
            filled.push_str(&derived_number(v));
            last = span.1;
        }
        filled.push_str(&a[last..]);
        out.push(filled);
    }
    Ok(out)
}

/// Whether a command line still holds values computed from earlier legs.
pub fn is_derived(argv: &[String]) -> bool {
    argv.iter().any(|a| a.contains("{="))
}

/// A command line as a shell would take it back (single quotes where needed).
pub fn shell_line(argv: &[String]) -> String {
    std::iter::once("perflab".to_string())
        .chain(argv.iter().map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:,=@%+".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        }))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::file::{Origin, parse};

    const S: &str = r#"
[study]
title = "t"
[defaults]
command = "io"
size = "16m"
duration = "5s"
threads = "1,{cpus}"
[quick]
duration = "1s"
[[leg]]
name = "a"
rw = "randread"
duration = "10s"
quick = { size = "1m" }
[[leg]]
name = "b"
command = "memory"
kernel = "copy"
[[leg]]
name = "pg"
command = "oltp"
target = "{postgres}"
"#;

    fn study() -> Study {
        parse(
            S,
            &Origin {
                name: "t",
                label: "t.toml",
            },
        )
        .unwrap()
    }

    #[test]
    fn options_are_laid_in_order_and_only_where_the_command_takes_them() {
        let s = study();
        let m = Machine {
            cpus: 2,
            ..Machine::default()
        };
        let none = Overrides::default();
        let a = argv(&s, &s.legs[0], false, &none, &m);
        assert_eq!(
            a.join(" "),
            "io --size 16m --duration 10s --threads 1,2 --rw randread"
        );
        let a = argv(&s, &s.legs[0], true, &none, &m);
        assert_eq!(
            a.join(" "),
            "io --size 1m --duration 1s --threads 1,2 --rw randread"
        );
        // memory takes --duration and --threads but not --size... it does take --size.
        let b = argv(&s, &s.legs[1], false, &none, &m);
        assert!(b.starts_with(&["memory".to_string()]));
        assert!(b.windows(2).any(|w| w == ["--kernel", "copy"]));
        let o = Overrides::parse(&s, &["--duration".into(), "2s".into()]).unwrap();
        let a = argv(&s, &s.legs[0], true, &o, &m);
        assert!(a.windows(2).any(|w| w == ["--duration", "2s"]), "{a:?}");
        assert!(Overrides::parse(&s, &["--fruit".into()]).is_err());
        assert!(Overrides::parse(&s, &["--duration".into()]).is_err());
        assert!(Overrides::parse(&s, &["x".into()]).is_err());
    }

    #[test]
    fn a_leg_on_postgres_says_how_to_get_one() {
        let s = study();
        let m = Machine::default();
        let why = unrunnable(&s, &s.legs[2], &Overrides::default(), &m).unwrap();
        assert!(why.contains("apt-get install postgresql"), "{why}");
        let with = Machine {
            postgres: Some("postgres://p@127.0.0.1:5/x".into()),
            ..m
        };
        assert_eq!(
            unrunnable(&s, &s.legs[2], &Overrides::default(), &with),
            None
        );
        assert!(
            argv(&s, &s.legs[2], false, &Overrides::default(), &with)
                .contains(&"postgres://p@127.0.0.1:5/x".to_string())
        );
    }

    #[test]
    fn derived_values_come_from_earlier_legs() {
        use crate::record::{RunRecord, StepResult, Trial};
        let mut r = RunRecord::default();
        let mut step = StepResult::default();
        step.params.insert("threads".into(), serde_json::json!(4));
        step.trials.push(Trial {
            ops_per_sec: 200.0,
            ..Default::default()
        });
        r.steps.push(step);
        let mut runs = super::super::expr::Runs::new();
        runs.insert("peak".to_string(), &r);
        let argv: Vec<String> = [
            "oltp",
            "--rate",
            "{= 0.75 * max(ops_per_sec[peak] over threads) / {4}}/s",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // `{4}` is no placeholder: one line saying so.
        assert!(derive(&argv, &runs).is_err());
        let argv: Vec<String> = [
            "oltp",
            "--rate",
            "{= 0.75 * max(ops_per_sec[peak] over threads) / 4}/s",
            "--scale",
            "{= round(2 * 1e8 / 3e6)}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            derive(&argv, &runs).unwrap(),
            ["oltp", "--rate", "37.5/s", "--scale", "67"]
        );
        let missing: Vec<String> = vec!["--rate".into(), "{= ops_per_sec[other]}".into()];
        let e = derive(&missing, &runs).unwrap_err();
        assert!(e.contains("leg other did not run"), "{e}");
        assert_eq!(derived_spans("{= 2 * {ram} }x").unwrap(), [(0, 14)]);
        assert!(derived_spans("{= 2").is_err());
    }

    #[test]
    fn shell_lines_quote_what_needs_it() {
        let l = shell_line(&["io".into(), "--set".into(), "a=b c".into()]);
        assert_eq!(l, "perflab io --set 'a=b c'");
    }
}
