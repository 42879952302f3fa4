//! Where copies run: the machine's CPU topology (NUMA nodes, packages, cores, SMT siblings)
//! read from /sys, and the order in which `compact` and `spread` hand CPUs to copies.
//!
//! Copy `i` (from 0) is pinned to `order[i % order.len()]`, one CPU per copy:
//!
//! - `compact` fills one NUMA node first (then one package, one die), and within it each
//!   physical core's SMT siblings before the next core: copies share caches, memory
//!   controllers and, past the cores, the cores themselves.
//! - `spread` goes round-robin over the NUMA nodes, and takes every physical core (its
//!   first hardware thread) before any core's second sibling: copies share as little as the
//!   machine allows.
//!
//! Only the CPUs this process may run on count (online, and in its affinity mask: a cgroup
//! cpuset or `taskset` narrows them). A machine without /sys topology (a container hiding
//! it) is read as one node of single-threaded cores, in CPU order.

use serde::Serialize;
use std::path::Path;

/// How copies are pinned (`--placement`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Not pinned: the scheduler places copies (the default).
    None,
    Compact,
    Spread,
}

impl Placement {
    pub fn parse(text: &str) -> Option<Placement> {
        match text.trim().to_ascii_lowercase().as_str() {
            "none" => Some(Placement::None),
            "compact" => Some(Placement::Compact),
            "spread" => Some(Placement::Spread),
            _ => None,
        }
    }
}

/// One logical CPU and where it sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cpu {
    pub id: usize,
    pub node: usize,
    pub package: usize,
    pub die: usize,
    pub core: usize,
}

impl Cpu {
    /// The physical core it is a hardware thread of.
    fn core_key(&self) -> (usize, usize, usize, usize) {
        (self.node, self.package, self.die, self.core)
    }
}

/// A list such as `0-3,8,10-11` (the kernel's cpulist format); None if malformed.
pub fn parse_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.trim().parse().ok()?),
        }
    }
    Some(out)
}

/// `0-3,8` for a list of CPUs (ascending runs joined).
pub fn format_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if j > i + 1 {
            format!("{}-{}", sorted[i], sorted[j])
        } else if j == i + 1 {
            format!("{},{}", sorted[i], sorted[j])
        } else {
            sorted[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The CPUs this process may run on, with their topology, from `root` (normally
/// `/sys/devices/system`) and the allowed set (the affinity mask).
pub fn read_topology(root: &Path, allowed: &[usize]) -> Vec<Cpu> {
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let online = read(&root.join("cpu/online"))
        .and_then(|t| parse_list(&t))
        .unwrap_or_else(|| allowed.to_vec());
    // Node of each CPU, from node*/cpulist.
    let mut node_of = std::collections::BTreeMap::new();
    if let Ok(entries) = std::fs::read_dir(root.join("node")) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(n) = name
                .strip_prefix("node")
                .and_then(|n| n.parse::<usize>().ok())
            else {
                continue;
            };
            if let Some(list) = read(&e.path().join("cpulist")).and_then(|t| parse_list(&t)) {
                for c in list {
                    node_of.insert(c, n);
                }
            }
        }
    }
    let num = |cpu: usize, file: &str| -> Option<usize> {
        read(&root.join(format!("cpu/cpu{cpu}/topology/{file}")))?
            .trim()
            .parse::<i64>()
            .ok()
            .and_then(|v| usize::try_from(v).ok())
    };
    online
        .into_iter()
        .filter(|c| allowed.contains(c))
        .map(|id| Cpu {
            id,
            node: node_of.get(&id).copied().unwrap_or(0),
            package: num(id, "physical_package_id").unwrap_or(0),
            die: num(id, "die_id").unwrap_or(0),
            // No topology: every CPU its own core.
            core: num(id, "core_id").unwrap_or(id),
        })
        .collect()
}

/// The order in which copies take CPUs under `placement` (empty for `none`).
pub fn order(cpus: &[Cpu], placement: Placement) -> Vec<usize> {
    match placement {
        Placement::None => Vec::new(),
        Placement::Compact => {
            let mut sorted = cpus.to_vec();
            sorted.sort_by_key(|c| (c.core_key(), c.id));
            sorted.into_iter().map(|c| c.id).collect()
        }
        Placement::Spread => {
            // Per node: the cores in order, each with its hardware threads in order.
            let mut nodes: std::collections::BTreeMap<usize, Vec<Vec<usize>>> = Default::default();
            let mut sorted = cpus.to_vec();
            sorted.sort_by_key(|c| (c.core_key(), c.id));
            let mut last_core = None;
            for c in sorted {
                let cores = nodes.entry(c.node).or_default();
                if last_core != Some(c.core_key()) {
                    cores.push(Vec::new());
                    last_core = Some(c.core_key());
                }
                if let Some(core) = cores.last_mut() {
                    core.push(c.id);
                }
            }
            // Rank r: the r-th hardware thread of every core. Within a rank, round-robin
            // over the nodes, one core of each at a time.
            let ranks = nodes
                .values()
                .flat_map(|cores| cores.iter().map(Vec::len))
                .max()
                .unwrap_or(0);
            let mut out = Vec::with_capacity(cpus.len());
            for rank in 0..ranks {
                let lists: Vec<Vec<usize>> = nodes
                    .values()
                    .map(|cores| cores.iter().filter_map(|t| t.get(rank).copied()).collect())
                    .collect();
                let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
                for i in 0..longest {
                    out.extend(lists.iter().filter_map(|l| l.get(i).copied()));
                }
            }
            out
        }
    }
}

/// The CPU list of copy `copy` (from 0): one CPU, or none when not pinned.
pub fn cpus_of(order: &[usize], copy: usize) -> Vec<usize> {
    if order.is_empty() {
        Vec::new()
    } else {
        vec![order[copy % order.len()]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two nodes, each with two cores of two threads; Linux numbers the second threads
    /// after all first ones (cpu 4 is cpu 0's sibling).
    fn machine() -> Vec<Cpu> {
        let mut v = Vec::new();
        for id in 0..8 {
            let first = id % 4;
            v.push(Cpu {
                id,
                node: first / 2,
                package: first / 2,
                die: 0,
                core: first % 2,
            });
        }
        v
    }

    #[test]
    fn compact_fills_a_node_and_its_siblings_first() {
        assert_eq!(
            order(&machine(), Placement::Compact),
            vec![0, 4, 1, 5, 2, 6, 3, 7]
        );
    }

    #[test]
    fn spread_alternates_nodes_and_takes_cores_before_siblings() {
        assert_eq!(
            order(&machine(), Placement::Spread),
            vec![0, 2, 1, 3, 4, 6, 5, 7]
        );
    }

    #[test]
    fn copies_wrap_around_and_none_pins_nothing() {
        let o = order(&machine(), Placement::Compact);
        assert_eq!(cpus_of(&o, 9), vec![4]);
        assert!(cpus_of(&order(&machine(), Placement::None), 0).is_empty());
    }

    #[test]
    fn cpu_lists_parse_and_print() {
        assert_eq!(
            parse_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_list("3-1"), None);
        assert_eq!(parse_list("x"), None);
        assert_eq!(format_list(&[3, 0, 1, 2, 8, 10, 11]), "0-3,8,10,11");
        assert_eq!(format_list(&[5]), "5");
    }

    #[test]
    fn this_machine_reads_as_at_least_one_cpu() {
        let allowed = crate::engine::process::allowed_cpus().expect("affinity");
        let cpus = read_topology(Path::new("/sys/devices/system"), &allowed);
        assert!(!cpus.is_empty());
        assert_eq!(order(&cpus, Placement::Spread).len(), cpus.len());
    }
}
