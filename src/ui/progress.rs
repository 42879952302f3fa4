//! Live progress on stderr: a bar with the current step, its phase and live rate on a
//! terminal; otherwise (logs, CI) plain lines: one every interval while measuring, or every
//! `--progress TIME` (pgbench's `-P`), and one per finished step. Silent with `--quiet`.

use super::style;
use crate::record::histogram::{LatencyHistogram, new_histogram};
use crate::record::{IntervalPoint, RunRecord, StepResult, Warning, step_number};
use crate::run::Observer;
use crate::run::recorder::Counts;
use crate::vocab::numbers::{count, metric, ns, sig3};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::RefCell;
use std::io::IsTerminal;
use std::time::Duration;

struct State {
    steps: usize,
    repeat: u32,
    label: String,
    step: usize,
    trial: u32,
    headline: String,
    op_name: String,
    interval: Duration,
    phase: String,
    /// The plain lines' period so far (no terminal).
    period: Period,
}

/// How often plain progress lines come where stderr is not a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Every {
    /// Each interval of the run (the default).
    Interval,
    /// Every so long, in whole intervals (`--progress 5s`).
    Time(Duration),
    /// Only a line per finished step (`--progress off`).
    Off,
}

impl Every {
    /// `--progress` as given: None is the default.
    pub fn parse(text: Option<&str>) -> Result<Every, crate::vocab::SpecError> {
        match text {
            None => Ok(Every::Interval),
            Some("off") => Ok(Every::Off),
            Some(t) => {
                let d = crate::vocab::units::parse_duration("progress", t)?;
                if d.is_zero() {
                    return Err(crate::vocab::SpecError::new(
                        "progress",
                        t,
                        "a time above zero, e.g. 5s, or off",
                    ));
                }
                Ok(Every::Time(d))
            }
        }
    }
}

/// What the intervals since the last plain line add up to.
#[derive(Default)]
struct Period {
    ops: u64,
    errors: u64,
    bytes: f64,
    /// Nanoseconds of measure phase covered.
    covered_ns: u64,
    /// The end of the last interval added, from the measure phase's start.
    end_ns: u64,
    histogram: Option<LatencyHistogram>,
}

pub struct Progress {
    bar: Option<ProgressBar>,
    quiet: bool,
    every: Every,
    state: RefCell<State>,
}

impl Progress {
    /// `every`: the plain lines' period where stderr is not a terminal.
    pub fn new(quiet: bool, every: Every) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr_with_hz(10));
            bar.set_style(
                ProgressStyle::with_template("{bar:24.cyan/blue} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar
        });
        Progress {
            bar,
            quiet,
            every,
            state: RefCell::new(State {
                steps: 0,
                repeat: 1,
                label: String::new(),
                step: 0,
                trial: 0,
                headline: String::new(),
                op_name: "ops".into(),
                interval: Duration::from_secs(1),
                phase: String::new(),
                period: Period::default(),
            }),
        }
    }

    /// Prints a line above the bar (or plainly without one).
    pub fn line(&self, text: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    fn prefix(&self) -> String {
        let s = self.state.borrow();
        let rep = if s.repeat > 1 {
            format!(" repeat {}/{}", s.trial + 1, s.repeat)
        } else {
            String::new()
        };
        // A search decides its steps as it goes: no total.
        let of = if s.steps == 0 {
            String::new()
        } else {
            format!("/{}", s.steps)
        };
        format!("step {}{of}{rep} {}", step_number(s.step), s.label)
    }
}

impl Observer for Progress {
    fn note(&self, text: &str) {
        self.line(text);
    }

    fn run_started(&self, record: &RunRecord, steps: usize, repeat: u32) {
        let mut s = self.state.borrow_mut();
        s.steps = steps;
        s.repeat = repeat;
        s.headline = record.headline.metric.clone();
        s.op_name = record.headline.op_name.clone();
        if let Some(i) = record.spec.get("interval_ns").and_then(|v| v.as_u64()) {
            s.interval = Duration::from_nanos(i.max(1));
        }
        drop(s);
        let count = match steps {
            0 => "steps as the search needs".to_string(),
            1 => "1 step".to_string(),
            n => format!("{n} steps"),
        };
        self.line(&format!(
            "perflab {}: run {} ({count})",
            record.workload, record.id
        ));
    }

    fn trial_started(&self, index: usize, repeat: u32, label: &str, _swept: &[(String, String)]) {
        let mut s = self.state.borrow_mut();
        s.step = index;
        s.trial = repeat;
        s.label = label.to_string();
        s.period = Period::default();
    }

    /// Plain lines (no terminal): the intervals add up until the period is over.
    fn interval(&self, point: &IntervalPoint, histogram: &LatencyHistogram) {
        if self.bar.is_some() || self.quiet || self.every == Every::Off {
            return;
        }
        let mut s = self.state.borrow_mut();
        let p = &mut s.period;
        p.ops += point.ops;
        p.errors += point.errors;
        p.bytes += point.bytes_per_sec * point.duration_ns as f64 / 1e9;
        p.covered_ns += point.duration_ns;
        p.end_ns = point.start_ns + point.duration_ns;
        let h = p.histogram.get_or_insert_with(new_histogram);
        let _ = h.add(histogram);
        let due = match self.every {
            Every::Time(d) => p.covered_ns + 1_000 >= d.as_nanos() as u64,
            _ => true,
        };
        if !due {
            return;
        }
        let p = std::mem::take(&mut s.period);
        let secs = (p.covered_ns as f64 / 1e9).max(1e-9);
        let rate = if s.headline.starts_with("bytes") {
            metric("bytes_per_sec", p.bytes / secs)
        } else {
            format!("{} {}/s", count(p.ops as f64 / secs), s.op_name)
        };
        let latency = match p.histogram.filter(|h| !h.is_empty()) {
            Some(h) => format!(
                ", mean {} p99 {}",
                ns(h.mean()),
                ns(h.value_at_quantile(0.99) as f64)
            ),
            None => String::new(),
        };
        drop(s);
        self.line(&format!(
            "  progress: {} · {:.0} s: {rate}{latency}, {} errors",
            self.prefix().trim_end(),
            p.end_ns as f64 / 1e9,
            p.errors
        ));
    }

    fn phase(&self, name: &str, length: Option<Duration>) {
        self.state.borrow_mut().phase = name.to_string();
        if let Some(bar) = &self.bar {
            bar.set_length(length.map_or(0, |d| d.as_millis() as u64).max(1));
            bar.set_position(0);
            bar.set_message(format!("{} · {name}", self.prefix()));
        }
    }

    fn progress(&self, elapsed: Duration, ops: u64, latest: Option<(u64, Counts)>) {
        let Some(bar) = &self.bar else { return };
        let s = self.state.borrow();
        let secs = s.interval.as_secs_f64();
        let live = latest.map(|(_, c)| {
            if s.headline.starts_with("bytes") {
                metric("bytes_per_sec", c.bytes as f64 / secs)
            } else {
                format!("{} {}/s", sig3(c.ops as f64 / secs), s.op_name)
            }
        });
        let phase = s.phase.clone();
        drop(s);
        bar.set_position(elapsed.as_millis() as u64);
        bar.set_message(format!(
            "{} · {phase} {:.0}s · {} ops{}",
            self.prefix(),
            elapsed.as_secs_f64(),
            count(ops as f64),
            live.map(|l| format!(" · {l}")).unwrap_or_default()
        ));
    }

    fn step_finished(&self, step: &StepResult, record: &RunRecord) {
        let h = &record.headline;
        let t = step.trials.first();
        let lat = t.map(|t| t.latency).unwrap_or_default();
        let ci = match (
            step.summary.headline.ci95_low,
            step.summary.headline.ci95_high,
        ) {
            (Some(lo), Some(hi)) => format!(" ±{}", metric(&h.metric, (hi - lo) / 2.0)),
            _ => String::new(),
        };
        // Ops not timed one by one (fio's gtod_reduce) leave no latency to show.
        let latency = match lat.count {
            0 if step.trials.iter().any(|t| t.ops > 0) => ", no latency kept".to_string(),
            _ => format!(", mean {} p99 {}", ns(lat.mean_ns), ns(lat.p99_ns as f64)),
        };
        self.line(&format!(
            "  {}: {}{ci}{latency}{}",
            self.prefix(),
            metric(&h.metric, step.summary.headline.mean),
            if step.summary.errors > 0 {
                format!(", {} errors", step.summary.errors)
            } else {
                String::new()
            }
        ));
    }

    fn warning(&self, w: &Warning) {
        if !self.quiet {
            self.line(&style::warning(&w.message));
        }
    }
}
