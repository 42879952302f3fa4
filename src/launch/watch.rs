//! What a command's runs report to while they go: the progress display on stderr and the
//! live outputs (`crate::live`: the interval file beside each record, `--live`,
//! `--metrics-listen`, `--hlog`).

use crate::archive::Archive;
use crate::cli::GlobalArgs;
use crate::error::AppError;
use crate::live::{Both, Live};
use crate::ui::Progress;
use crate::ui::progress::Every;

pub struct Watch {
    pub progress: Progress,
    pub live: Live,
}

impl Watch {
    /// Opens both, or says in one line why an output cannot be had (a file that exists, an
    /// address in use).
    pub fn open(g: &GlobalArgs, archive: &Archive) -> Result<Watch, AppError> {
        let every = Every::parse(g.live.progress.as_deref())?;
        let live = Live::open(
            &g.live,
            Some(archive),
            g.json,
            Box::new(|text| eprintln!("{text}")),
        )
        .map_err(AppError::Usage)?;
        Ok(Watch {
            progress: Progress::new(g.quiet, every),
            live,
        })
    }

    /// The observer to hand the runner.
    pub fn observer(&self) -> Both<'_> {
        Both(&self.progress, &self.live)
    }

    /// A line above the progress bar.
    pub fn line(&self, text: &str) {
        self.progress.line(text);
    }

    /// The command's runs are over: the bar goes, the metrics get their last scrape.
    pub fn finish(&self) {
        self.progress.finish();
        self.live.finish();
    }
}
