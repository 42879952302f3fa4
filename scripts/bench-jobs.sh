#!/usr/bin/env bash
# Batch jobs: K copies of a CPU-bound command through `perflab jobs --copies 1,2`, against the
# same copies started by the shell (`&` and `wait`, timed by `date +%s.%N`), alternating which
# goes first, round by round.
#
#   scripts/bench-jobs.sh [ROUNDS] [ITERATIONS]
#
# Defaults: 3 rounds; the job is `sh -c 'i=0; while [ $i -lt ITERATIONS ]; do i=$((i+1)); done'`
# with ITERATIONS=1000000 (about 1-2 s of one CPU under dash). PERFLAB names the binary (default
# target/release/perflab: build it first; this script does not run cargo).
#
# Per round it prints:
#   - perflab: jobs/hour at 1 and 2 copies, the throughput of 2 copies relative to 1 (the
#     record's analysis.scaling; goal >= 1.9x on 2 idle cores), and perflab's own CPU per job
#     as a share of the job's CPU (the figure perflab_cpu_pct; goal < 1%).
#   - shell: the same two steps (1 copy, then 2 at once), each timed from before the first
#     `&` to after `wait`, as jobs/hour, and its relative throughput.
#   - the ratio of perflab's 2-copy jobs/hour to the shell's (goal about 1.0: perflab's spawn,
#     wait4 and bookkeeping cost nothing a job would notice).
# Then the medians over the rounds.
set -euo pipefail
export LC_ALL=C

ROUNDS=${1:-3}
ITERATIONS=${2:-1000000}
# A relative PERFLAB given by the caller is relative to the caller's directory.
if [ -n "${PERFLAB:-}" ] && [[ $PERFLAB == */* && $PERFLAB != /* ]]; then PERFLAB=$PWD/$PERFLAB; fi
cd "$(dirname "$0")/.."
PERFLAB=${PERFLAB:-$PWD/target/release/perflab}
if ! [ -x "$PERFLAB" ] && ! command -v "$PERFLAB" >/dev/null 2>&1; then
  echo "bench-jobs: no perflab at $PERFLAB; cargo build --release, or set PERFLAB" >&2
  exit 2
fi
command -v python3 >/dev/null 2>&1 || { echo "bench-jobs: needs python3" >&2; exit 2; }

JOB="i=0; while [ \$i -lt $ITERATIONS ]; do i=\$((i+1)); done"
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

# perflab: prints "jph1 jph2 relative perflab_cpu_pct(max over steps)".
run_perflab() {
  "$PERFLAB" --results "$results" --quiet --json jobs --shell --command "$JOB" --name busy \
    --copies 1,2 >"$results/last.json"
  python3 - "$results/last.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
jph = [s["trials"][0]["figures"]["jobs_per_hour"] for s in r["steps"]]
rel = next(s["speedup"] for s in r["analysis"]["scaling"] if s["step"] == 1)
own = max(s["trials"][0]["figures"].get("perflab_cpu_pct", float("nan")) for s in r["steps"])
print(f"{jph[0]:.1f} {jph[1]:.1f} {rel:.3f} {own:.3f}")
EOF
}

# The shell: K copies with & and wait; prints jobs/hour.
run_shell() {
  local k=$1 t0 t1
  t0=$(date +%s.%N)
  for _ in $(seq "$k"); do sh -c "$JOB" & done
  wait
  t1=$(date +%s.%N)
  python3 -c "print(f'{$k / ($t1 - $t0) * 3600:.1f}')"
}

printf '%-5s %-10s %10s %10s %9s %10s   %10s %10s %9s   %s\n' round first \
  "p jph@1" "p jph@2" "p rel" "p own CPU" "sh jph@1" "sh jph@2" "sh rel" "p/sh @2"
rows=()
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) -eq 1 ]; then
    first=perflab
    read -r p1 p2 prel pown < <(run_perflab)
    s1=$(run_shell 1); s2=$(run_shell 2)
  else
    first=shell
    s1=$(run_shell 1); s2=$(run_shell 2)
    read -r p1 p2 prel pown < <(run_perflab)
  fi
  srel=$(python3 -c "print(f'{$s2 / $s1:.3f}')")
  ratio=$(python3 -c "print(f'{$p2 / $s2:.3f}')")
  printf '%-5s %-10s %10s %10s %8sx %9s%%   %10s %10s %8sx   %sx\n' "$round" "$first" \
    "$p1" "$p2" "$prel" "$pown" "$s1" "$s2" "$srel" "$ratio"
  rows+=("$prel $pown $srel $ratio")
done
printf '%s\n' "${rows[@]}" | python3 -c '
import sys, statistics as st
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
med = [st.median(c) for c in zip(*rows)]
print(f"median: perflab relative throughput {med[0]:.2f}x (goal >= 1.9x), perflab own CPU "
      f"{med[1]:.3f}% of the job CPU (goal < 1%); shell relative {med[2]:.2f}x; "
      f"perflab/shell at 2 copies {med[3]:.3f}x")
'
