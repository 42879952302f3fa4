//! Tests of the job file reader: each option family, each refusal, hostile files.

use super::*;
use std::time::Duration;

fn no_env(_: &str) -> Option<String> {
    None
}

fn read(text: &str) -> Result<JobFile, JobFileError> {
    read_str(text, Path::new("/t/job.fio"), &no_env)
}

fn job(text: &str) -> FioJob {
    let f = read(text).unwrap_or_else(|e| panic!("{e}"));
    f.jobs.into_iter().next().unwrap()
}

fn refused(text: &str) -> String {
    match read(text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn smallest_job() {
    let j = job("[a]\nsize=1m\n");
    assert_eq!(j.name, "a");
    assert_eq!(j.bs, [4096, 4096]);
    assert_eq!(j.rw, FioRw::Read);
    assert_eq!(j.size, Some(SizeSpec::Bytes(1 << 20)));
    let _ = Duration::ZERO;
}
