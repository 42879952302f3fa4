//! `perflab trend FIGURE [--workload K] [--where LABEL=VALUE] [--by LABEL|day] [-o FILE]`:
//! one figure across runs, read through the store the other commands read (the shared
//! store's index when one is set), judged point by point by `compare::trend`.

use crate::archive::TrendQuery;
use crate::cli::{GlobalArgs, TrendArgs};
use crate::compare::trend::{By, trend as judge};
use crate::error::AppError;
use crate::ui::output::{print, write_new_file};

pub fn trend(g: &GlobalArgs, args: &TrendArgs) -> Result<(), AppError> {
    let noise = crate::compare::parse_noise(&args.noise)?;
    if args.newest == 0 {
        return Err(AppError::Usage("--newest takes 1 or more".into()));
    }
    let store = super::shared::store(g)?;
    let query = TrendQuery {
        metric: args.figure.clone(),
        workload: args.workload.clone(),
        labels: args.filters.clone(),
        newest: args.newest,
    };
    let points = store.trend(&query)?;
    if points.is_empty() {
        return Err(AppError::Usage(format!(
            "no run in {} has the headline figure {:?}{}; 'perflab runs' lists the runs and their figures",
            store.place(),
            args.figure,
            if args.filters.is_empty() && args.workload.is_none() {
                ""
            } else {
                " with those --workload/--where"
            }
        )));
    }
    let t = judge(&args.figure, &points, &By::parse(args.by.as_deref()), noise);
    if g.json {
        let text = serde_json::to_string_pretty(&t).map_err(|e| AppError::Output(e.to_string()))?;
        print(&(text + "\n"))?;
    } else {
        let mut out = crate::view::trend::table(&t).render();
        for n in &t.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        print(&out)?;
    }
    if let Some(path) = &args.output {
        let subtitle = format!("{} runs in {}", points.len(), store.place());
        let doc = crate::report::trend::document(&t, &subtitle);
        write_new_file(path, crate::report::html::render(&doc).as_bytes())?;
        eprintln!("perflab: trend written to {}", path.display());
    }
    Ok(())
}
