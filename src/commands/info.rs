//! `perflab sysinfo | targets`.

use super::{AppError, print};
use crate::cli::GlobalArgs;
use crate::env::Environment;
use crate::target;
use crate::ui::sysinfo::render_sysinfo;

pub fn sysinfo(g: &GlobalArgs) -> Result<(), AppError> {
    let env = Environment::collect();
    if g.json {
        let text =
            serde_json::to_string_pretty(&env).map_err(|e| AppError::Output(e.to_string()))?;
        return print(&(text + "\n"));
    }
    print(&render_sysinfo(&env))
}

pub fn targets(g: &GlobalArgs) -> Result<(), AppError> {
    let targets = target::registry();
    if g.json {
        let text =
            serde_json::to_string_pretty(&targets).map_err(|e| AppError::Output(e.to_string()))?;
        return print(&(text + "\n"));
    }
    print(&crate::ui::report::render_targets(&targets))
}
