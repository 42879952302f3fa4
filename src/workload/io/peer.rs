//! fio's command line on `perflab io` (`crate::workload::peer`): a line that holds one of
//! fio's job options (or says `--like fio`) is read as fio reads it, as the job file it stands
//! for ([`super::fio_line`]): fio's meaning and defaults, several jobs with `--name`. This
//! table holds only fio's options about the run itself; `--output-format` is perflab io's
//! own flag, spelled as fio's.

use crate::workload::peer::{Flag, Peer, Reading, given, same};

/// fio.
pub static FIO: Peer = Peer {
    name: "fio",
    flags: FLAGS,
    positional: |_, _| Ok(false),
    finish: |_: &mut Reading| Ok(()),
    whole: Some(super::fio_line::as_job),
    knows: Some(super::fio_line::job_option),
    marks: None,
};

static FLAGS: &[Flag] = &[
    Flag::value(&["--eta"], "--eta=never is --quiet", |r, value| {
        if given(value) == "never" {
            r.word("--quiet");
        }
        Ok(())
    }),
    Flag::switch(
        &["--eta-newline"],
        "perflab's progress is a line per interval already",
        same,
    ),
    Flag::switch(
        &["--parse-only"],
        "--dry-run: the plan, nothing run",
        |r, _| {
            r.word("--dry-run");
            Ok(())
        },
    ),
    Flag::value(
        &["--output"],
        "refused: every run is archived; 'perflab export last --format fio-json -o FILE' writes fio's JSON of it",
        |_, value| {
            Err(format!(
                "every run is archived ({}); write it out with 'perflab export last --format fio-json -o FILE' (or --output-format=json for stdout)",
                given(value)
            ))
        },
    ),
];
