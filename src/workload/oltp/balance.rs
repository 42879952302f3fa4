//! oltp's line in the balance sheet `perflab run` ends with.

use crate::present::param_u64;
use crate::record::RunRecord;
use crate::vocab::numbers::count;

/// DebitCredit: transactions per second at each client count, and the log syncs each cost.
pub fn line(r: &RunRecord) -> String {
    let per: Vec<String> = r
        .steps
        .iter()
        .map(|s| {
            let n = param_u64(s, "threads").unwrap_or(1);
            format!(
                "{} tps ({n} client{})",
                count(s.summary.headline.mean),
                if n == 1 { "" } else { "s" }
            )
        })
        .collect();
    let flushes = r
        .steps
        .first()
        .and_then(|s| s.trials.first())
        .and_then(|t| t.figures.get("device_flushes_per_txn"))
        .map(|f| format!("; {f:.2} device flushes per transaction"))
        .unwrap_or_default();
    let variant = r
        .spec
        .get("select_only")
        .and_then(|v| v.as_bool())
        .filter(|&s| s)
        .map_or("debitcredit", |_| "debitcredit select-only");
    format!("oltp {variant} ({}): {}{flushes}", r.target, per.join(", "))
}
