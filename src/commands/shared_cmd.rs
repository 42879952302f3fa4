//! `perflab shared init | sync`: the shared store's tables made or migrated, and the runs
//! queued on this machine sent.

use crate::archive::{Archive, Imported};
use crate::cli::{GlobalArgs, SharedAction, SharedArgs};
use crate::error::AppError;
use crate::shared_store::{Address, queue, schema};
use crate::ui::output::print;

pub fn shared(g: &GlobalArgs, args: &SharedArgs) -> Result<(), AppError> {
    let Some(text) = g.shared_address() else {
        return Err(AppError::Usage(format!(
            "no shared store named: give --shared URL or set {}",
            crate::shared_store::ENV
        )));
    };
    let address = Address::parse(&text)?;
    match args.action {
        SharedAction::Init => {
            let version = schema::init(&address, None)?;
            print(&format!(
                "{} is at schema version {version}: tables perflab_runs and perflab_tags, roles perflab_writer and perflab_reader (docs/shared-store.md)\n",
                address.shown()
            ))
        }
        SharedAction::Sync => sync(g, &address),
    }
}

fn sync(g: &GlobalArgs, address: &Address) -> Result<(), AppError> {
    let archive = Archive::open(g.results.as_deref())?;
    let waiting = queue::queued(&archive).len();
    let sent = queue::send(&archive, address);
    let mut out = String::new();
    for (queued, done) in &sent.done {
        out.push_str(&match done {
            Imported::New { id, .. } if id == queued => format!("sent {id}\n"),
            Imported::New { id, .. } => {
                format!("sent {queued} as {id} (another host's run has its id)\n")
            }
            Imported::AlreadyHere(id) => format!("{id} is in the shared store already\n"),
        });
    }
    for id in &sent.gone {
        out.push_str(&format!(
            "{id}: no longer in the results folder; dropped from the queue\n"
        ));
    }
    if waiting == 0 && !g.quiet {
        eprintln!("perflab: no runs queued for {}", address.shown());
    }
    print(&out)?;
    match sent.failed {
        Some(e) => Err(AppError::Archive(e)),
        None => Ok(()),
    }
}
