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
    per_thread = s["summary"]["ops_per_sec"]["mean"] / t
    print(f"threads={t}: {s[\"summary\"][\"ops_per_sec\"][\"mean\"]/1e6:.1f}M ops/s, {1e9/per_thread:.1f} ns per op per thread (mean of {s[\"summary\"][\"ops_per_sec\"][\"n\"]} repeats)")
'
