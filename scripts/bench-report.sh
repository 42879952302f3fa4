#!/usr/bin/env bash
# Reports stay usable on large runs: a 1,000-step record must render in under a second, and a
# 24-hour run (86,400 one-second intervals per step) must give a report under 5 MB.
#   scripts/bench-report.sh
# Prints the median render time of 5 renders of each, and the report sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=$PWD/target/release/perflab
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

# 1,000 steps: the null target with its spin time swept over 1,000 values, 200 ops each.
"$bin" --results "$results" null --spin 0ns..999ns --ops 200 --warmup 0s --quiet >/dev/null
many=$(ls "$results/runs" | tail -1)

# A day: a real one-step run, its series stretched to 86,400 intervals (with a one-second
# stall at noon), saved as a new run.
"$bin" --results "$results" null --threads 1 --duration 2s --warmup 0s --quiet >/dev/null
one=$(ls "$results/runs" | tail -1)
day=20990101-000000-da75
mkdir -p "$results/runs/$day"
python3 - "$results/runs/$one/run.json" "$results/runs/$day/run.json" "$day" <<'EOF'
import json, sys
src, dst, rid = sys.argv[1:4]
r = json.load(open(src))
r["id"] = rid
t = r["steps"][0]["trials"][0]
p = t["series"][0]
series = []
for s in range(86400):
    q = dict(p)
    q["start_ns"] = s * 1_000_000_000
    q["duration_ns"] = 1_000_000_000
    if s == 43200:
        q["ops_per_sec"] = 0.0
        q["ops"] = 0
    series.append(q)
t["series"] = series
t["elapsed_ns"] = 86400 * 1_000_000_000
json.dump(r, open(dst, "w"))
EOF

time_it() {
  python3 - "$@" <<'EOF'
import subprocess, sys, time
times = []
for _ in range(5):
    t0 = time.perf_counter()
    subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
    times.append(time.perf_counter() - t0)
times.sort()
print("%.3f s" % times[2])
EOF
}
echo "1,000-step record ($(du -h "$results/runs/$many/run.json" | cut -f1) of JSON): median render $(time_it "$bin" --results "$results" report "$many")"
echo "  report size: $(du -h "$results/reports/$many.html" | cut -f1)"
echo "24-hour record ($(du -h "$results/runs/$day/run.json" | cut -f1) of JSON): median render $(time_it "$bin" --results "$results" report "$day")"
echo "  report size: $(du -h "$results/reports/$day.html" | cut -f1)"
grep -q 'band the min and max' "$results/reports/$day.html" && echo "  the series was downsampled (min/max kept)"
