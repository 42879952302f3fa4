//! Records of another host. A run made under a second host identity (a UTS namespace with
//! another host name, and another `/etc/machine-id` bind-mounted in a mount namespace of its
//! own) is imported into this host's archive: it never overwrites or mixes with this host's
//! runs, even when its id is one of theirs, and it fills a study's external leg, whose
//! cross-machine table is then shown normalised to the other machine ("E25k = 1").

mod common;

use common::skip::{skip_host, skip_or_fail};
use common::{Results, json, run, stderr, stdout};
use std::path::Path;
use std::process::Command;

const OTHER_HOST: &str = "perflab-other-host";
const OTHER_MACHINE_ID: &str = "0123456789abcdef0123456789abcdef";

/// Runs `perflab ARGS --results DIR` as another host: its own host name and machine id.
/// None (with the reason) when this host cannot make namespaces.
fn as_other_host(dir: &Path, results: &Path, args: &[&str]) -> Result<serde_json::Value, String> {
    let id_file = dir.join("machine-id");
    std::fs::write(&id_file, format!("{OTHER_MACHINE_ID}\n")).map_err(|e| e.to_string())?;
    let mut line = vec![
        "exec".to_string(),
        format!("'{}'", env!("CARGO_BIN_EXE_perflab")),
    ];
    line.extend(args.iter().map(|a| format!("'{a}'")));
    line.extend(["--results".into(), format!("'{}'", results.display())]);
    line.push("--json".into());
    let script = format!(
        "hostname {OTHER_HOST} && mount --bind '{}' /etc/machine-id && {}",
        id_file.display(),
        line.join(" ")
    );
    let o = Command::new("unshare")
        .args(["--uts", "--mount", "sh", "-c", &script])
        .env("NO_COLOR", "1")
        .output()
        .map_err(|e| format!("unshare: {e}"))?;
    if !o.status.success() {
        return Err(format!("unshare --uts --mount: {}", stderr(&o).trim()));
    }
    Ok(json(&o))
}

#[test]
fn another_hosts_records_join_beside_this_hosts_and_build_the_cross_machine_table() {
    if Command::new("unshare").arg("--version").output().is_err() {
        skip_or_fail("unshare is not installed", "util-linux");
        return;
    }
    let here = Results::new("hosts-here");
    let theirs = Results::new("hosts-theirs");
    let work = Results::new("hosts-work");
    std::fs::create_dir_all(work.path()).unwrap();

    // A study with this machine's leg and the other machine's, and its table over the other.
    let study = work.path().join("two-hosts.toml");
    std::fs::write(
        &study,
        r#"
[study]
name = "two-hosts"
title = "This machine against another"

[defaults]
command = "null"
threads = "1,2"
warmup = "0s"
duration = "300ms"

[[leg]]
name = "here"

[[leg]]
name = "other"
external = "the other machine: run this there"

[[paper]]
leg = "here"
at = { threads = "1" }
what = "ops, one thread"
here = "ops_per_sec"
value = "1"
unit = "ops/s"
line = 1
quote = "-"

[[table]]
title = "Machine against machine"
leg = "here"
base = "other"
columns = [
  { label = "one thread", unit = "ops/s", here = "ops_per_sec@threads=1" },
  { label = "two threads", unit = "ops/s", here = "ops_per_sec@threads=2" },
]

[[table.row]]
label = "here"
values = ["-", "-"]

[[table.row]]
label = "other"
leg = "other"
values = ["-", "-"]

[[shape]]
name = "two threads do more than one"
leg = "here"
check = "ops_per_sec@threads=2 > 0"
"#,
    )
    .unwrap();
    let o = run(&here, &["study", study.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mine = json(&run(&here, &["show", "two-hosts.here", "--json"]));
    let my_id = mine["id"].as_str().unwrap().to_string();
    let my_host = mine["env"]["hostname"].as_str().unwrap().to_string();
    let my_path = here.path().join("runs").join(&my_id).join("run.json");
    let my_bytes = std::fs::read(&my_path).expect("this host's record");

    let other = match as_other_host(
        work.path(),
        theirs.path(),
        &[
            "null",
            "--threads",
            "1,2",
            "--warmup",
            "0s",
            "--duration",
            "300ms",
        ],
    ) {
        Ok(v) => v,
        Err(why) => {
            skip_host(&format!("cannot run as a second host here: {why}"));
            return;
        }
    };
    assert_eq!(other["env"]["hostname"], OTHER_HOST);
    assert_ne!(other["env"]["machine"], mine["env"]["machine"]);
    assert_ne!(other["env"]["hostname"], mine["env"]["hostname"]);
    let other_id = other["id"].as_str().unwrap().to_string();

    // Their run under one of our ids: it joins under its own name, ours is untouched.
    let mut clash = other.clone();
    clash["id"] = serde_json::Value::from(my_id.clone());
    let clash_dir = work.path().join("clash");
    std::fs::create_dir_all(&clash_dir).unwrap();
    std::fs::write(
        clash_dir.join("run.json"),
        serde_json::to_vec_pretty(&clash).unwrap(),
    )
    .unwrap();
    let o = run(&here, &["import", clash_dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o);
    let joined = format!("{my_id}-{OTHER_HOST}-");
    assert!(
        said.contains(&joined) && said.contains(&format!("from {OTHER_HOST}")),
        "{said}"
    );
    assert_eq!(
        std::fs::read(&my_path).unwrap(),
        my_bytes,
        "our record changed"
    );
    // The same again is left alone.
    let o = run(&here, &["import", clash_dir.to_str().unwrap()]);
    assert!(
        stdout(&o).contains("in the archive already"),
        "{}",
        stdout(&o)
    );

    // Their real record stands for the study's external leg.
    let theirs_file = theirs.path().join("runs").join(&other_id).join("run.json");
    let o = run(
        &here,
        &[
            "import",
            theirs_file.to_str().unwrap(),
            "--study",
            "last",
            "--leg",
            "other",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("is leg other of study two-hosts"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        std::fs::read(&my_path).unwrap(),
        my_bytes,
        "our record changed"
    );

    // The listing names each run's host; each record keeps its own.
    let runs = stdout(&run(&here, &["runs"]));
    assert!(
        runs.contains(OTHER_HOST) && runs.contains(&my_host),
        "{runs}"
    );
    let list = json(&run(&here, &["runs", "--json"]));
    let hosts: Vec<(String, String)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let id = r["id"].as_str().unwrap_or_default().to_string();
            let host = json(&run(&here, &["show", &id, "--json"]))["env"]["hostname"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            (id, host)
        })
        .collect();
    assert_eq!(hosts.len(), 3, "{hosts:?}");
    for (id, host) in &hosts {
        let expected = if id == &my_id { &my_host } else { OTHER_HOST };
        assert_eq!(host, expected, "run {id}");
    }

    // The cross-machine table: both machines' figures, and again over the other machine.
    let md = work.path().join("study.md");
    let o = run(
        &here,
        &["report", "--study", "last", "-o", md.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = std::fs::read_to_string(&md).expect("the study's report");
    let normalised = out
        .split("Machine against machine, each over other (= 1)")
        .nth(1)
        .unwrap_or_else(|| panic!("no table over the base machine:\n{out}"));
    let base_row = normalised
        .lines()
        .find(|l| l.starts_with("| other |"))
        .unwrap_or_else(|| panic!("no base row:\n{normalised}"));
    assert_eq!(base_row.matches("\\| 1.00 \\|").count(), 2, "{base_row}");
    let table = out.split("Machine against machine:").nth(1).unwrap_or("");
    let other_row = table
        .lines()
        .find(|l| l.starts_with("| other |"))
        .unwrap_or_default();
    assert!(other_row.contains("| - \\| "), "{other_row}\n{out}");
    assert!(
        !other_row.contains("did not run") && !other_row.contains("not measured"),
        "the other machine's row has no figures: {other_row}\n{out}"
    );
}
