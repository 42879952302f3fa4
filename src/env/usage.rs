//! CPU-time samplers taken around each measurement step.
//!
//! Take a [`CpuTimes`] (whole machine) and a [`process_cpu_time`] (this process) before a
//! step and again after it; [`CpuTimes::usage_since`] turns the two machine samples into
//! the [`CpuUsage`] of the interval. A busy machine, stolen time (a noisy hypervisor
//! neighbour) or I/O wait during a step are reasons to distrust its figures.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Clock ticks per second of `/proc` CPU times (`USER_HZ`): 100 on the Linux ABIs perflab
/// runs on, whatever the kernel's internal `HZ`.
const USER_HZ: u64 = 100;

/// Whole-machine CPU time from the first `cpu` line of /proc/stat, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

/// How the CPUs spent an interval, in percent of all CPU time in it (all CPUs together,
/// 0..100). `busy_pct + steal_pct + iowait_pct + idle = 100`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuUsage {
    /// user + nice + system + irq + softirq (guest time is already inside user and nice).
    pub busy_pct: f64,
    /// Time a hypervisor gave this guest's CPUs to someone else.
    pub steal_pct: f64,
    /// Idle time with I/O outstanding.
    pub iowait_pct: f64,
}

/// How all CPUs together spent an interval, in percent of their time (sums to 100).
/// `user` includes `nice` and guest time; `busy()` is everything but idle and iowait.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct CpuShares {
    pub user: f64,
    pub system: f64,
    pub iowait: f64,
    pub irq: f64,
    pub softirq: f64,
    pub steal: f64,
    pub idle: f64,
}

impl CpuShares {
    /// Time the CPUs were not available to take more work: running something, or taken by
    /// the hypervisor (steal).
    pub fn busy(&self) -> f64 {
        // At most 100: shares rounded one by one (a record's per-CPU entries) can add up
        // to a little more.
        (self.user + self.system + self.irq + self.softirq + self.steal).min(100.0)
    }

    /// The seven shares in the order of a per-CPU entry of the record.
    pub fn to_array(self) -> [f64; 7] {
        [
            self.user,
            self.system,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
            self.idle,
        ]
    }

    pub fn from_array(a: [f64; 7]) -> CpuShares {
        CpuShares {
            user: a[0],
            system: a[1],
            iowait: a[2],
            irq: a[3],
            softirq: a[4],
            steal: a[5],
            idle: a[6],
        }
    }
}

impl CpuTimes {
    /// Reads `/proc/stat` now; `None` when it cannot be read or parsed.
    pub fn sample() -> Option<CpuTimes> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// The aggregate `cpu` line of a `/proc/stat` text. Fields after `idle` that old kernels
    /// lack count as zero; a malformed number gives `None`.
    pub fn parse(text: &str) -> Option<CpuTimes> {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some("cpu"))?;
        Self::parse_fields(line.split_whitespace().skip(1))
    }

    /// The numbers after a `cpu` or `cpuN` label: at least four (user, nice, system, idle);
    /// the ones later kernels added count as zero where absent.
    pub fn parse_fields<'a>(fields: impl Iterator<Item = &'a str>) -> Option<CpuTimes> {
        let mut v = [0u64; 8];
        let mut n = 0;
        for (slot, f) in v.iter_mut().zip(fields) {
            *slot = f.parse().ok()?;
            n += 1;
        }
        (n >= 4).then_some(CpuTimes {
            user: v[0],
            nice: v[1],
            system: v[2],
            idle: v[3],
            iowait: v[4],
            irq: v[5],
            softirq: v[6],
            steal: v[7],
        })
    }

    /// How the time between `earlier` and `self` was spent, in percent (all zeros for an
    /// empty interval; a counter that went backwards counts as zero).
    pub fn shares_since(&self, earlier: &CpuTimes) -> CpuShares {
        let d = |now: u64, then: u64| now.saturating_sub(then);
        let parts = [
            d(self.user, earlier.user).saturating_add(d(self.nice, earlier.nice)),
            d(self.system, earlier.system),
            d(self.iowait, earlier.iowait),
            d(self.irq, earlier.irq),
            d(self.softirq, earlier.softirq),
            d(self.steal, earlier.steal),
            d(self.idle, earlier.idle),
        ];
        let total = parts.iter().fold(0u64, |a, b| a.saturating_add(*b));
        if total == 0 {
            return CpuShares::default();
        }
        CpuShares::from_array(parts.map(|p| p as f64 * 100.0 / total as f64))
    }

    /// The usage between `earlier` and `self`. A counter that went backwards (iowait can,
    /// and samples may be swapped) counts as zero; an empty interval gives all zeros.
    pub fn usage_since(&self, earlier: &CpuTimes) -> CpuUsage {
        let d = |now: u64, then: u64| now.saturating_sub(then);
        let busy = [
            d(self.user, earlier.user),
            d(self.nice, earlier.nice),
            d(self.system, earlier.system),
            d(self.irq, earlier.irq),
            d(self.softirq, earlier.softirq),
        ]
        .iter()
        .fold(0u64, |a, b| a.saturating_add(*b));
        let steal = d(self.steal, earlier.steal);
        let iowait = d(self.iowait, earlier.iowait);
        let idle = d(self.idle, earlier.idle);
        let total = busy
            .saturating_add(steal)
            .saturating_add(iowait)
            .saturating_add(idle);
        if total == 0 {
            return CpuUsage::default();
        }
        let pct = |part: u64| part as f64 * 100.0 / total as f64;
        CpuUsage {
            busy_pct: pct(busy),
            steal_pct: pct(steal),
            iowait_pct: pct(iowait),
        }
    }
}

/// This process's CPU time (user + system) from /proc/self/stat fields 14 and 15, at
/// USER_HZ = 100. The resolution is one tick (10 ms): compare it over steps of seconds.
pub fn process_cpu_time() -> Option<Duration> {
    parse_process_cpu(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// The CPU time (user + system) of every process whose command name is one of `names`
/// (`postgres`, `mariadbd` ...): a local database server's CPU, sampled around a step.
/// Reaped children's time counts too (the kernel adds it to their parent's `cutime` and
/// `cstime`), so a server backend that exits between two samples does not take its time
/// with it.
pub fn cpu_time_of(names: &[&str]) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut found = false;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let file_name = entry.file_name();
        if !file_name
            .to_string_lossy()
            .bytes()
            .all(|b| b.is_ascii_digit())
        {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let comm = text
            .find('(')
            .zip(text.rfind(')'))
            .map(|(a, b)| &text[a + 1..b]);
        if comm.is_some_and(|c| names.contains(&c))
            && let Some(t) = parse_process_cpu_with_children(&text)
        {
            total += t;
            found = true;
        }
    }
    found.then_some(total)
}

/// The CPU time of process `pid` and its direct children, reaped ones included (the
/// kernel adds those to the parent's `cutime` and `cstime`): a server whose master forks a
/// process per connection (Dovecot), whose children come and go between two samples.
pub fn cpu_time_of_tree(pid: u32) -> Option<Duration> {
    let own = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut total = parse_process_cpu_with_children(&own)?;
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    for child in children.split_whitespace() {
        if let Some(t) = std::fs::read_to_string(format!("/proc/{child}/stat"))
            .ok()
            .and_then(|text| parse_process_cpu_with_children(&text))
        {
            total += t;
        }
    }
    Some(total)
}

/// `utime + stime` of a `/proc/<pid>/stat` text. The command name (field 2) is in
/// parentheses and may itself hold spaces and `)`, so fields are counted from the last `)`.
pub fn parse_process_cpu(stat_text: &str) -> Option<Duration> {
    let close = stat_text.rfind(')')?;
    stat_text[..close].find('(')?;
    // After the command name come fields 3 (state), 4, ...: field n is at index n - 3.
    let mut fields = stat_text[close + 1..].split_whitespace().skip(14 - 3);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime.saturating_add(stime);
    Some(Duration::from_millis(ticks.saturating_mul(1000 / USER_HZ)))
}

/// `utime + stime + cutime + cstime` (fields 14 to 17) of a `/proc/<pid>/stat` text.
fn parse_process_cpu_with_children(stat_text: &str) -> Option<Duration> {
    let close = stat_text.rfind(')')?;
    let ticks = stat_text[close + 1..]
        .split_whitespace()
        .skip(14 - 3)
        .take(4)
        .map(|f| f.parse::<u64>().ok())
        .sum::<Option<u64>>()?;
    Some(Duration::from_millis(ticks.saturating_mul(1000 / USER_HZ)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  3428 10 3479 614403 290 0 78 9 0 0
cpu0 1662 0 1427 307261 13 0 28 2 0 0
cpu1 1766 10 2052 307142 277 0 50 7 0 0
intr 1021040 28 9 0 0 0 0 0 0 0 0
ctxt 2046587
btime 1732245934
processes 7723
procs_running 1
procs_blocked 0
";

    fn times(user: u64, system: u64, idle: u64, iowait: u64, steal: u64) -> CpuTimes {
        CpuTimes {
            user,
            system,
            idle,
            iowait,
            steal,
            ..Default::default()
        }
    }

    #[test]
    fn parse_proc_stat() {
        let t = CpuTimes::parse(STAT).unwrap();
        assert_eq!(
            t,
            CpuTimes {
                user: 3428,
                nice: 10,
                system: 3479,
                idle: 614403,
                iowait: 290,
                irq: 0,
                softirq: 78,
                steal: 9,
            }
        );
        // A 2.6.10-era line without iowait and later fields.
        let old = CpuTimes::parse("cpu 1 2 3 4\n").unwrap();
        assert_eq!((old.idle, old.iowait, old.steal), (4, 0, 0));
    }

    #[test]
    fn parse_malformed() {
        assert_eq!(CpuTimes::parse(""), None);
        assert_eq!(CpuTimes::parse("cpu0 1 2 3 4 5 6 7 8\n"), None);
        assert_eq!(CpuTimes::parse("cpu 1 2 3\n"), None);
        assert_eq!(CpuTimes::parse("cpu 1 2 x 4 5\n"), None);
        assert_eq!(CpuTimes::parse("cpu -1 2 3 4\n"), None);
        assert_eq!(CpuTimes::parse("intr 1 2 3 4\ncpu\n"), None);
    }

    #[test]
    fn usage_with_steal() {
        let before = times(1000, 500, 10_000, 100, 50);
        // 400 ticks over the interval: 200 busy (150 user + 50 system), 40 steal, 20 iowait,
        // 140 idle.
        let after = times(1150, 550, 10_140, 120, 90);
        let u = after.usage_since(&before);
        assert!((u.busy_pct - 50.0).abs() < 1e-12);
        assert!((u.steal_pct - 10.0).abs() < 1e-12);
        assert!((u.iowait_pct - 5.0).abs() < 1e-12);
        let all = CpuTimes {
            nice: 5,
            irq: 3,
            softirq: 2,
            ..times(10, 10, 70, 0, 0)
        };
        let u = all.usage_since(&CpuTimes::default());
        assert!((u.busy_pct - 30.0).abs() < 1e-12);
    }

    #[test]
    fn empty_or_backwards_interval() {
        let t = times(1000, 500, 10_000, 100, 50);
        assert_eq!(t.usage_since(&t), CpuUsage::default());
        assert_eq!(CpuTimes::default().usage_since(&t), CpuUsage::default());
        // Only iowait went backwards (it can on NO_HZ kernels): it counts as zero.
        let later = CpuTimes {
            iowait: 90,
            ..times(1100, 500, 10_100, 90, 50)
        };
        let u = later.usage_since(&t);
        assert_eq!(u.iowait_pct, 0.0);
        assert!((u.busy_pct - 50.0).abs() < 1e-12);
        let huge = times(u64::MAX, u64::MAX, u64::MAX, u64::MAX, u64::MAX);
        let u = huge.usage_since(&CpuTimes::default());
        assert!(u.busy_pct.is_finite() && u.steal_pct.is_finite() && u.iowait_pct.is_finite());
    }

    #[test]
    fn live_samples() {
        if let (Some(a), Some(b)) = (CpuTimes::sample(), CpuTimes::sample()) {
            let u = b.usage_since(&a);
            assert!((0.0..=100.0).contains(&u.busy_pct));
        }
        if let Some(t) = process_cpu_time() {
            let mut x = 0u64;
            for i in 0..20_000_000u64 {
                x = x.wrapping_mul(31).wrapping_add(i);
            }
            std::hint::black_box(x);
            assert!(process_cpu_time().unwrap() >= t);
        }
    }

    #[test]
    fn process_stat() {
        let plain = "7708 (cat) R 7691 7691 6852 0 -1 4194304 101 0 0 0 250 36 0 0 20 0 1 0 \
                     312198 3133440 389 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0\n";
        assert_eq!(parse_process_cpu(plain), Some(Duration::from_millis(2860)));
        // Reaped children's time (fields 16 and 17) counts for a server's CPU.
        let parent = plain.replace(" 250 36 0 0 ", " 250 36 14 10 ");
        assert_eq!(
            parse_process_cpu_with_children(&parent),
            Some(Duration::from_millis(3100))
        );
        // A command name with spaces and parentheses in it.
        let odd = "42 (my (weird) prog) 1 2) S 1 42 42 0 -1 4194560 500 0 0 0 7 3 0 0 20 0 4 0 \
                   100 0 0 18446744073709551615\n";
        assert_eq!(parse_process_cpu(odd), Some(Duration::from_millis(100)));
        assert_eq!(parse_process_cpu(""), None);
        assert_eq!(parse_process_cpu("7708 cat R 1 2 3"), None);
        assert_eq!(parse_process_cpu("7708 (cat) R 7691 7691"), None);
        assert_eq!(
            parse_process_cpu("1 (x) R 1 1 1 0 -1 0 0 0 0 0 abc 36 0"),
            None
        );
        assert_eq!(parse_process_cpu(")("), None);
        let max = format!("1 (x) R 1 1 1 0 -1 0 0 0 0 0 {} {} 0", u64::MAX, u64::MAX);
        assert_eq!(
            parse_process_cpu(&max),
            Some(Duration::from_millis(u64::MAX))
        );
    }
}
