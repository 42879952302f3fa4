//! fio's command line as fio reads it: a job file written on one line. The job options
//! before the first `--name` are its `[global]` section, each `--name=NAME` starts a job, and
//! every job option is a line of the section it falls in; so a fio line runs as the job file
//! it stands for ([`super::jobs_cmd`]), fio's meaning and defaults included (buffered, psync,
//! no warm-up; `--bs=4k,64k` is reads and writes). fio's own run options (`--output-format`,
//! `--eta`) and perflab's (`--results`, `--json`) stay flags.
//!
//! As fio's getopt does, a switch (`--time_based`, fio's `FIO_OPT_STR_SET` options) takes a
//! value only as `--time_based=1`; every other job option takes `--opt=VALUE` or `--opt VALUE`.

use super::fio::options::{OTHER_FIO, REFUSED, canonical_name};

/// The perflab flag that carries the job text to `perflab io`.
pub const FLAG: &str = "--fio-job";

/// fio's switches: a value only with `=`.
const SWITCHES: &[&str] = &[
    "bs_unaligned",
    "norandommap",
    "time_based",
    "verify_only",
    "exitall",
    "exitall_on_error",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "thread",
    "group_reporting",
    "zero_buffers",
    "refill_buffers",
];

/// Whether `name` (`--bs` or `bs`) is one of fio's job options (ours to read, or to refuse
/// by name).
pub fn job_option(name: &str) -> bool {
    let name = name.strip_prefix("--").unwrap_or(name);
    canonical_name(name).is_some()
        || REFUSED.iter().any(|(names, _)| names.contains(&name))
        || OTHER_FIO.contains(&name)
}

/// The words of a fio line as perflab's: the job options as one `--fio-job TEXT`, the rest as
/// given.
pub fn as_job(argv: &[String]) -> Result<Vec<String>, String> {
    let mut text = String::from("[global]\n");
    let mut rest = Vec::new();
    let mut jobs = 0;
    let mut any = false;
    let mut i = 0;
    while i < argv.len() {
        let word = &argv[i];
        i += 1;
        let Some(body) = word.strip_prefix("--") else {
            rest.push(word.clone());
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        if !job_option(name) {
            rest.push(word.clone());
            continue;
        }
        let value = match inline {
            Some(v) => Some(v),
            None if SWITCHES.contains(&name) => None,
            None => match argv.get(i) {
                Some(v) if !v.starts_with("--") => {
                    i += 1;
                    Some(v.clone())
                }
                _ => return Err(format!("fio's --{name} needs a value")),
            },
        };
        if value.as_deref().is_some_and(|v| v.contains('\n')) {
            return Err(format!("fio's --{name}: a value on one line"));
        }
        any = true;
        if name == "name" {
            let job = value.unwrap_or_default();
            if job.is_empty() || job.contains([']', '[']) {
                return Err(format!(
                    "fio's --name={job}: give the job a name without brackets"
                ));
            }
            jobs += 1;
            text.push_str(&format!("[{job}]\n"));
            continue;
        }
        match value {
            Some(v) => text.push_str(&format!("{name}={v}\n")),
            None => text.push_str(&format!("{name}\n")),
        }
    }
    if !any {
        return Ok(argv.to_vec());
    }
    if jobs == 0 {
        // fio runs nothing without a --name ("No job(s) defined"); a line of options alone is
        // one job, as its users mean it: its options are that job's own.
        text = text.replacen("[global]", "[job]", 1);
    }
    let mut out = vec![FLAG.to_string(), text];
    out.extend(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn globals_come_before_the_first_name_and_each_name_is_a_job() {
        let out = as_job(&words(
            "--size=1g --direct=1 --name=a --rw randread --time_based --runtime=3 --name=b --rw=write --json",
        ))
        .unwrap();
        assert_eq!(out[0], FLAG);
        assert_eq!(
            out[1],
            "[global]\nsize=1g\ndirect=1\n[a]\nrw=randread\ntime_based\nruntime=3\n[b]\nrw=write\n"
        );
        assert_eq!(out[2..], ["--json"]);
    }

    #[test]
    fn a_switch_takes_a_value_only_with_an_equals_sign() {
        let out = as_job(&words(
            "--name=a --time_based=1 --group_reporting --bs 4k,64k",
        ))
        .unwrap();
        assert_eq!(
            out[1],
            "[global]\n[a]\ntime_based=1\ngroup_reporting\nbs=4k,64k\n"
        );
    }

    #[test]
    fn run_options_and_perflabs_own_stay_flags_and_a_line_without_fio_options_is_untouched() {
        let out = as_job(&words(
            "--name=a --output-format=json --eta=never --results r",
        ))
        .unwrap();
        assert_eq!(
            out[2..],
            ["--output-format=json", "--eta=never", "--results", "r"]
        );
        let plain = words("--results r --json");
        assert_eq!(as_job(&plain).unwrap(), plain);
        assert!(
            as_job(&words("--name=a --runtime"))
                .unwrap_err()
                .contains("needs a value")
        );
    }

    #[test]
    fn options_alone_are_one_job() {
        let out = as_job(&words("--rw=read --size=1m")).unwrap();
        assert_eq!(out[1], "[job]\nrw=read\nsize=1m\n");
    }
}
