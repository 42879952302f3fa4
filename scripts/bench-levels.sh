#!/usr/bin/env bash
# SPECpower's graduated load levels on this machine: does every level from 100% down to 10%
# land within 2 points of its target (SPECpower's tolerance)?  The CPU kernel (fractals) at
# every CPU, three calibrations, then 100..10:-10 and active idle, each level LEVEL long.
#   scripts/bench-levels.sh            # 30 s levels (about 8 minutes)
#   LEVEL=10s scripts/bench-levels.sh  # shorter levels, for a quick look
set -euo pipefail
cd "$(dirname "$0")/.."
LEVEL=${LEVEL:-30s}
RUNS=${RUNS:-1}
cargo build --release --quiet
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
for run in $(seq 1 "$RUNS"); do
  ./target/release/perflab cpu --load-levels 100..10:-10,0 --duration "$LEVEL" --warmup 2s \
    --quiet --results "$results" --json >"$results/run-$run.json"
  python3 - "$results/run-$run.json" "$LEVEL" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
ll = r["load_levels"]
print(f"== {sys.argv[2]} levels: calibrated maximum {ll['calibrated_max_ops_per_sec']:.1f} ops/s")
worst = 0.0
for l in ll["levels"]:
    if l["kind"] != "level":
        continue
    off = l["achieved_pct"] - l["target_pct"]
    worst = max(worst, abs(off))
    print(f"  level {l['target_pct']:5.0f}%: achieved {l['achieved_pct']:6.2f}% ({off:+.2f} points)"
          f"{'  FLAGGED: ' + l['flag'] if l['flag'] else ''}")
print(f"  worst level: {worst:.2f} points off its target: "
      f"{'within' if worst <= 2.0 else 'OUTSIDE'} SPECpower's 2 points")
EOF
done
