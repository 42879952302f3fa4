//! `perflab serve [--listen ADDR]`: the archive in a browser, read-only, until Ctrl-C.

use crate::cli::{GlobalArgs, ServeArgs};
use crate::error::AppError;
use crate::serve::Server;
use crate::ui::output::print;

pub fn serve(g: &GlobalArgs, args: &ServeArgs) -> Result<(), AppError> {
    let archive = crate::shared_store::open(
        g.results.as_deref(),
        g.shared_to_read().as_deref(),
        false,
        crate::shared_store::Access::Read,
    )?;
    let server = Server::bind(&args.listen).map_err(AppError::Usage)?;
    let addr = server.addr();
    if !addr.ip().is_loopback() {
        eprintln!(
            "perflab: note: listening on {addr}: anyone who can reach this machine there can read the archive"
        );
    }
    // The address on stdout, alone on its line, for scripts (`--listen 127.0.0.1:0` picks a port).
    print(&format!(
        "perflab: serving {} read-only at http://{addr}/ (Ctrl-C to stop)\n",
        archive.place()
    ))?;
    server.run(archive);
    Ok(())
}
