//! The example reports in docs/examples/ are what today's report draws from their records
//! (docs/examples/records/): a change to the report that changes them fails here until
//! `scripts/examples.sh --render` draws them again.

use std::process::Command;

#[test]
fn the_example_reports_are_drawn_from_their_records_by_todays_report() {
    let root = env!("CARGO_MANIFEST_DIR");
    let o = Command::new("bash")
        .arg(format!("{root}/scripts/examples.sh"))
        .arg("--check")
        .env("PERFLAB", env!("CARGO_BIN_EXE_perflab"))
        .output()
        .expect("bash runs");
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // Every example has its records, and every set of records its example.
    let names = |dir: &str, ext: Option<&str>| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(format!("{root}/{dir}"))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| match ext {
                Some(x) => p.extension().is_some_and(|e| e == x),
                None => p.is_dir(),
            })
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names("docs/examples", Some("html")),
        names("docs/examples/records", None)
    );
}
