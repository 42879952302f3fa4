//! The structured values: `random_distribution`, `bssplit` and `steadystate`, with fio's
//! checks (options.c `str_random_distribution_cb`, `split_parse_ddir`, `zone_split_ddir`,
//! `bssplit_ddir`, `str_steadystate_cb`).
//!
//! Each returns the read and write settings; perflab has no trim, so the third set of an
//! `R,W,T` value is read and checked but not kept.

use super::job::{FioDistribution, SsCriterion};
use super::units::{self, split_rwt};

/// fio's caps: ZONESPLIT_MAX and BSSPLIT_MAX. fio stops reading at the cap silently;
/// here more entries are refused.
pub const MAX_ZONES: usize = 256;
pub const MAX_BSSPLIT: usize = 64;

/// `random_distribution=...`. Sets for reads and writes that differ are refused: perflab
/// draws every I/O's offset from one distribution.
pub fn distribution(v: &str, kb_base: u64) -> Result<FioDistribution, String> {
    let v = v.trim();
    let (kind, rest) = match v.split_once(':') {
        Some((k, r)) => (k, Some(r)),
        None => (v, None),
    };
    match kind {
        "random" => {
            if rest.is_some() {
                return Err("`random` takes no parameters".into());
            }
            Ok(FioDistribution::Random)
        }
        "zipf" | "pareto" | "normal" => {
            let (mut val, lo_ok): (f64, fn(f64) -> bool) = match kind {
                "zipf" => (1.1, |t| t != 1.0 && t > 0.0),
                "pareto" => (0.2, |h| h > 0.0 && h < 1.0),
                _ => (0.0, |d| (0.0..100.0).contains(&d)),
            };
            let mut center = -1.0;
            if let Some(r) = rest {
                if r.contains(',') {
                    return Err(format!(
                        "`{v}`: fio takes one {kind} for all directions; drop the `,` part"
                    ));
                }
                let mut it = r.split(':');
                let a = it.next().unwrap_or("");
                val = float(a, kind)?;
                if let Some(c) = it.next() {
                    center = float(c, "center")?;
                }
                if it.next().is_some() {
                    return Err(format!("`{v}`: {kind}[:value[:center]]"));
                }
            }
            if center != -1.0 && !(0.0..=1.0).contains(&center) {
                return Err(format!("center {center} is out of range (0 to 1)"));
            }
            if !lo_ok(val) {
                return Err(match kind {
                    "zipf" => format!("zipf theta {val} must be above 0 and not 1"),
                    "pareto" => format!("pareto h {val} must be between 0 and 1 (exclusive)"),
                    _ => format!("normal deviation {val} must be 0 to below 100"),
                });
            }
            // fio's -1 means "no center".
            let center = (center != -1.0).then_some(center);
            Ok(match kind {
                "zipf" => FioDistribution::Zipf { theta: val, center },
                "pareto" => FioDistribution::Pareto { h: val, center },
                _ => FioDistribution::Normal { dev: val, center },
            })
        }
        "zoned" | "zoned_abs" => {
            let Some(rest) = rest else {
                return Err(format!("`{kind}` needs its zones: {kind}:PCT/SIZE:..."));
            };
            let sets = split_rwt(rest, false)?;
            let abs = kind == "zoned_abs";
            let mut parsed: [Option<FioDistribution>; 2] = [None, None];
            for (i, s) in sets.iter().enumerate() {
                let Some(s) = s else { continue };
                let d = zones(s, abs, kb_base)?;
                if i < 2 {
                    parsed[i] = Some(d);
                }
            }
            match parsed {
                [Some(r), Some(w)] if r != w => Err(format!(
                    "`{v}`: the read and write zones differ; perflab draws reads and writes from one distribution, so give one set"
                )),
                [Some(d), _] | [None, Some(d)] => Ok(d),
                [None, None] => Err(format!("`{v}` has no zones")),
            }
        }
        "sequence" => Err(
            "`sequence` is not supported by perflab; use zoned or zoned_abs for a hot set".into(),
        ),
        _ if v.starts_with("zoned_abs=") => Err(
            "write `zoned_abs:` with a colon (fio's HOWTO shows `zoned_abs=`, but its parser needs `:`)"
                .into(),
        ),
        _ => Err(format!(
            "unknown distribution `{kind}` (random, zipf, pareto, normal, zoned, zoned_abs)"
        )),
    }
}

fn float(s: &str, what: &str) -> Result<f64, String> {
    let s = s.trim();
    let v = if s.starts_with('(') {
        units::eval(s, 1.0, &|u| Err(format!("unit `{u}`")))?
    } else {
        s.parse::<f64>()
            .map_err(|_| format!("{what}: `{s}` is not a number"))?
    };
    if !v.is_finite() {
        return Err(format!("{what}: `{s}` is not a finite number"));
    }
    Ok(v)
}

/// One direction's zones, `A/S:A/S:...` (`A` percent of I/O; `S` percent of the region,
/// or bytes with `zoned_abs`).
fn zones(s: &str, abs: bool, kb_base: u64) -> Result<FioDistribution, String> {
    let mut access: Vec<u64> = Vec::new();
    let mut sizes: Vec<Option<u64>> = Vec::new();
    for z in s.split(':') {
        if z.is_empty() {
            break; // fio stops at an empty entry
        }
        if access.len() == MAX_ZONES {
            return Err(format!("more than {MAX_ZONES} zones (fio's limit)"));
        }
        let (a, size) = match z.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (z, None),
        };
        let a = units::parse_bytes(a, kb_base).map_err(|e| format!("zone `{z}`: {e}"))?;
        if a > 100 {
            return Err(format!("zone `{z}`: {a} percent of the I/O is over 100"));
        }
        access.push(a);
        sizes.push(match size {
            None => None,
            Some(b) if abs => {
                Some(units::parse_bytes(b, kb_base).map_err(|e| format!("zone `{z}`: {e}"))?)
            }
            // fio reads the share with atoi: 0 or blank is "not given", over 100 is 100
            Some(b) => match b.trim().parse::<u64>() {
                Ok(0) => None,
                Ok(n) => Some(n.min(100)),
                Err(_) if b.trim().is_empty() => None,
                Err(_) => return Err(format!("zone `{z}`: `{b}` is not a whole percent")),
            },
        });
    }
    let total: u64 = access.iter().sum();
    if total != 100 {
        return Err(format!(
            "the zones' shares of the I/O add up to {total}, not 100"
        ));
    }
    if abs {
        let z = access
            .iter()
            .zip(&sizes)
            .map(|(&a, s)| (a as f64, s.unwrap_or(0)))
            .collect::<Vec<_>>();
        if z.iter().any(|&(_, b)| b == 0) {
            return Err("every zoned_abs zone needs a size (A/SIZE)".into());
        }
        return Ok(FioDistribution::ZonedAbs(z));
    }
    let given: u64 = sizes.iter().flatten().sum();
    if given > 100 {
        return Err(format!(
            "the zones' sizes add up to {given} percent, over 100"
        ));
    }
    let missing = sizes.iter().filter(|s| s.is_none()).count() as u64;
    let fill = if missing == 1 && sizes.len() == 1 {
        100
    } else {
        (100 - given).checked_div(missing).unwrap_or(0)
    };
    Ok(FioDistribution::Zoned(
        access
            .iter()
            .zip(&sizes)
            .map(|(&a, s)| (a as f64, s.unwrap_or(fill) as f64))
            .collect(),
    ))
}

/// `bssplit=bs/pct:bs/pct,...` for reads and writes.
pub fn bssplit(v: &str, kb_base: u64) -> Result<[Vec<(u64, u32)>; 2], String> {
    let sets = split_rwt(v, false)?;
    let mut out: [Vec<(u64, u32)>; 2] = [Vec::new(), Vec::new()];
    for (i, s) in sets.iter().enumerate() {
        let Some(s) = s else { continue };
        let one = bssplit_one(s, kb_base)?;
        if i < 2 {
            out[i] = one;
        }
    }
    Ok(out)
}

fn bssplit_one(s: &str, kb_base: u64) -> Result<Vec<(u64, u32)>, String> {
    let mut entries: Vec<(u64, Option<u32>)> = Vec::new();
    for e in s.split(':') {
        if e.is_empty() {
            break;
        }
        if entries.len() == MAX_BSSPLIT {
            return Err(format!("more than {MAX_BSSPLIT} sizes (fio's limit)"));
        }
        let (b, p) = match e.split_once('/') {
            Some((b, p)) => (b, Some(p)),
            None => (e, None),
        };
        let bs = units::parse_bytes(b, kb_base).map_err(|m| format!("`{e}`: {m}"))?;
        if bs == 0 {
            return Err(format!("`{e}`: a block size of 0"));
        }
        let pct = match p.map(str::trim) {
            None | Some("") => None,
            Some(p) => match p.parse::<u32>() {
                // fio: 0 is "not given"
                Ok(0) => None,
                Ok(n) if n > 100 => {
                    return Err(format!("`{e}`: {n} percent is over 100"));
                }
                Ok(n) => Some(n),
                Err(_) => return Err(format!("`{e}`: `{p}` is not a whole percent")),
            },
        };
        entries.push((bs, pct));
    }
    if entries.is_empty() {
        return Err("no block sizes".into());
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    if given > 100 {
        return Err(format!("the percentages add up to {given}, over 100"));
    }
    let missing = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    let fill = if missing == 1 && entries.len() == 1 {
        100
    } else {
        (100 - given).checked_div(missing).unwrap_or(0)
    };
    Ok(entries
        .into_iter()
        .map(|(b, p)| (b, p.unwrap_or(fill)))
        .collect())
}

/// `steadystate=CRIT:LIMIT`: the criterion, the limit, whether it is a percent.
pub fn steadystate(v: &str, kb_base: u64) -> Result<(SsCriterion, f64, bool), String> {
    let (crit, limit) = v
        .split_once(':')
        .ok_or_else(|| format!("`{v}`: give a limit too, as CRITERION:LIMIT (iops_slope:0.1%)"))?;
    let c = match crit.trim() {
        "iops" => SsCriterion::Iops,
        "iops_slope" => SsCriterion::IopsSlope,
        "bw" => SsCriterion::Bw,
        "bw_slope" => SsCriterion::BwSlope,
        "lat" => SsCriterion::Lat,
        "lat_slope" => SsCriterion::LatSlope,
        other => {
            return Err(format!(
                "unknown criterion `{other}` (iops, iops_slope, bw, bw_slope, lat, lat_slope)"
            ));
        }
    };
    let limit = limit.trim();
    if let Some(p) = limit.strip_suffix('%') {
        return Ok((c, float(p, "steadystate limit")?, true));
    }
    let l = match c {
        SsCriterion::Iops | SsCriterion::IopsSlope => float(limit, "steadystate limit")?,
        SsCriterion::Lat | SsCriterion::LatSlope => units::parse_time_us(limit, false)? as f64,
        SsCriterion::Bw | SsCriterion::BwSlope => units::parse_bytes(limit, kb_base)? as f64,
    };
    Ok((c, l, false))
}
