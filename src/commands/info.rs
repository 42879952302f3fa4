//! `perflab sysinfo | targets`.

use super::{AppError, print};
use crate::cli::GlobalArgs;
use crate::env::Environment;
use crate::ui::show::TargetRow;
use crate::ui::sysinfo::{render_power, render_sysinfo};

pub fn sysinfo(g: &GlobalArgs) -> Result<(), AppError> {
    let env = Environment::collect();
    // Not part of the environment every record carries: finding IPMI runs a program.
    let power = crate::env::power::discover(std::path::Path::new("/sys"), None);
    if g.json {
        let mut value = serde_json::to_value(&env).map_err(|e| AppError::Output(e.to_string()))?;
        if let Some(map) = value.as_object_mut() {
            map.insert(
                "power_sources".into(),
                serde_json::to_value(&power).unwrap_or_default(),
            );
        }
        let text =
            serde_json::to_string_pretty(&value).map_err(|e| AppError::Output(e.to_string()))?;
        return print(&(text + "\n"));
    }
    print(&(render_sysinfo(&env) + &render_power(&power)))
}

pub fn targets(g: &GlobalArgs) -> Result<(), AppError> {
    let targets: Vec<TargetRow> = crate::workload::kind::targets()
        .into_iter()
        .map(|(t, kinds)| TargetRow {
            name: t.name,
            workloads: kinds,
            description: t.description,
            available: true,
        })
        .collect();
    if g.json {
        let text =
            serde_json::to_string_pretty(&targets).map_err(|e| AppError::Output(e.to_string()))?;
        return print(&(text + "\n"));
    }
    print(&crate::ui::show::render_targets(&targets))
}
