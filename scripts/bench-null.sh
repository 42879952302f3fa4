#!/usr/bin/env bash
# Harness overhead: the null target's time per op (timing + recording + loop) per thread.
#   scripts/bench-null.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
NPROC=$(nproc)
./target/release/perflab null --threads "1..$NPROC" --warmup 1s --duration 5s --repeat 3 --json --quiet --results "$results" |
python3 -c '
import json, sys
r = json.load(sys.stdin)
for s in r["steps"]:
    t = s["params"]["threads"]
    ops = s["summary"]["ops_per_sec"]
    per_thread = ops["mean"] / t
    print("threads=%d: %.1fM ops/s, %.1f ns per op per thread (mean of %d repeats)" % (t, ops["mean"] / 1e6, 1e9 / per_thread, ops["n"]))
'
