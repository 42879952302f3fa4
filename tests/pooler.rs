//! PostgreSQL through a pooler in transaction mode (a throwaway PgBouncer in front of a
//! throwaway PostgreSQL): perflab's named prepared statements (`-M prepared`, the default)
//! cannot work there, since each transaction may get another server connection, so the run
//! ends in one line that names `-M extended` and `-M simple`, with exit 2; `-M extended`
//! runs.

mod common;

use common::servers::{PgBouncer, PgServer};
use common::{Results, json, stderr};

/// Two clients, so that they share the pool's one server connection: the second to prepare
/// finds the first's statements there (42P05), or a statement missing (26000).
fn oltp(r: &Results, url: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "oltp",
        "--target",
        url,
        "--clients",
        "2",
        "--warmup",
        "0s",
        "--duration",
        "1s",
    ];
    args.extend_from_slice(extra);
    common::run(r, &args)
}

#[test]
fn named_statements_through_a_transaction_pooler_end_in_one_line_naming_the_fix() {
    let Some(pg) = PgServer::start() else {
        return;
    };
    let Some(bouncer) = PgBouncer::start(&pg, "transaction") else {
        return;
    };
    let url = bouncer.url();
    let r = Results::new("pooler");
    for mode in [&[][..], &["-M", "prepared"][..]] {
        let o = oltp(&r, &url, mode);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{mode:?}: {err}");
        let last = err.trim_end().lines().last().unwrap_or_default();
        assert!(
            last.starts_with(
                "perflab: the server (a pooler in transaction mode?) refused perflab's named prepared statements ("
            ),
            "{mode:?}: {err}"
        );
        assert!(
            last.contains("42P05") || last.contains("26000"),
            "{mode:?}: {last}"
        );
        assert!(
            last.contains("run with -M extended or -M simple"),
            "{mode:?}: {last}"
        );
        assert!(!err.contains("step 1 failed"), "{mode:?}: {err}");
        // The run is kept, failed, with where it stopped.
        let v = json(&common::run(&r, &["show", "last", "--json"]));
        assert_eq!(v["status"], "failed", "{v}");
        assert_eq!(v["cut_short"]["phase"], "open", "{v}");
    }
    // The unnamed statement, parsed with each execution, works through the pooler.
    let o = oltp(&r, &url, &["-M", "extended", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    assert!(t["ops"].as_u64().unwrap_or(0) > 0, "{t}");
    assert_eq!(t["errors"], 0, "{t}");
}
