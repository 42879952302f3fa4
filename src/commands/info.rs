//! `perflab sysinfo | targets | completions | man`.

use crate::cli::GlobalArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::ui::output::print;
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

/// A shell's completion script for the whole command line (every kind's options too),
/// generated from the clap definitions.
pub fn completions(shell: crate::cli::Shell) -> Result<(), AppError> {
    use clap_complete::Shell as S;
    let which = match shell {
        crate::cli::Shell::Bash => S::Bash,
        crate::cli::Shell::Zsh => S::Zsh,
        crate::cli::Shell::Fish => S::Fish,
    };
    let mut out = Vec::new();
    clap_complete::generate(which, &mut crate::cli::command(), "perflab", &mut out);
    print(&String::from_utf8_lossy(&out))
}

/// The manual page: the top page with every subcommand's options after it, generated
/// from the clap definitions.
pub fn man() -> Result<(), AppError> {
    print(&crate::cli::man_page())
}
