#!/usr/bin/env bash
# What does the system sampler cost? Two answers from the same rounds:
#   1. its own CPU time, which it measures around every reading (CLOCK_THREAD_CPUTIME_ID) and
#      records in each step's resources summary: percent of one CPU, and microseconds per
#      reading. The goal (issue 12): under 0.1% of one CPU at 1 s intervals;
#   2. the null target's ops/s with the sampler on and off (--resources on|off), alternating
#      on/off and off/on in successive rounds, one thread, so the two see the same machine:
#      the median of each and their ratio. The goal: no difference beyond the noise.
#
#   scripts/bench-sampler.sh            # 7 rounds of 5 s each way
#   scripts/bench-sampler.sh 11 10      # 11 rounds of 10 s
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

ROUNDS=${1:-7}
SECONDS_EACH=${2:-5}
command -v python3 >/dev/null || { echo "bench-sampler: needs python3 (for the JSON)" >&2; exit 1; }
cargo build --release --quiet
perflab=./target/release/perflab
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

one() { # one RESOURCES: prints "ops_per_sec sampler_cpu_pct samples"
  "$perflab" null -t 1 --warmup 1s -d "${SECONDS_EACH}s" --resources "$1" --quiet --json \
    --results "$results" | python3 -c '
import json, sys
t = json.load(sys.stdin)["steps"][0]["trials"][0]
s = t["resources"].get("summary") or {}
print(t["ops_per_sec"], s.get("sampler_cpu_pct", 0), s.get("samples", 0), t["elapsed_ns"])'
}

on=() off=() cost=() per_reading=()
printf '%5s  %14s  %14s  %12s  %14s\n' round "on ops/s" "off ops/s" "sampler CPU" "per reading"
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then order="on off"; else order="off on"; fi
  for mode in $order; do
    read -r ops pct samples elapsed <<<"$(one "$mode")"
    if [ "$mode" = on ]; then
      on+=("$ops") cost+=("$pct")
      # CPU per reading: the phase's sampler CPU over the readings it took.
      per_reading+=("$(python3 -c "print($pct / 100 * $elapsed / 1e3 / max($samples, 1))")")
    else
      off+=("$ops")
    fi
  done
  printf '%5d  %14.0f  %14.0f  %11.4f%%  %11.1f µs\n' "$r" "${on[-1]}" "${off[-1]}" "${cost[-1]}" "${per_reading[-1]}"
done

python3 - "${on[*]}" "${off[*]}" "${cost[*]}" "${per_reading[*]}" <<'EOF'
import statistics as st, sys
on, off, cost, per = ([float(x) for x in a.split()] for a in sys.argv[1:5])
m_on, m_off = st.median(on), st.median(off)
spread = lambda v: (max(v) - min(v)) / st.median(v) * 100
print()
print(f"null target, 1 thread: sampler on {m_on:,.0f} ops/s, off {m_off:,.0f} ops/s (medians); "
      f"on/off = {m_on / m_off:.3f}; spread of the rounds: on {spread(on):.1f}%, off {spread(off):.1f}%")
c = st.mean(cost)
print(f"sampler's own CPU: {c:.4f}% of one CPU at 1 s intervals ({st.median(per):.0f} µs per reading); "
      f"goal under 0.1%: {'met' if c < 0.1 else 'MISSED'}")
sys.exit(0 if c < 0.1 else 1)
EOF
