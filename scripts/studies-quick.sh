#!/usr/bin/env bash
# The five built-in studies at --quick --check-shapes, each ROUNDS times (default 3): wall
# time, exit code, the load average before each run, and every shape check that did not pass
# (failed, or not applicable here with its reason). What issue 43 asks of them: exit 0 on a
# quiet 2-CPU machine, each within 5 minutes.
#
#   scripts/studies-quick.sh                       # all five, 3 rounds, release build
#   ROUNDS=1 ONLY=ral-x4500 scripts/studies-quick.sh
#   PERFLAB=/path/to/perflab scripts/studies-quick.sh   # skip the build
#
# Results go to a fresh folder under $TMPDIR (printed at the end); nothing else is written.
set -u
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
STUDIES=${ONLY:-gray-thumper ral-x4500 bestperf-igen bestperf-mail-cache-batch-power bestperf-hpc-flash-landscape}
if [ -z "${PERFLAB:-}" ]; then
  cargo build --release --quiet || exit 1
  PERFLAB=$PWD/target/release/perflab
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/perflab-studies.XXXXXX")
summary=$out/summary.txt
printf '%-32s %5s %6s %5s  %s\n' study round secs exit "load before" | tee "$summary"
for round in $(seq 1 "$ROUNDS"); do
  for s in $STUDIES; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    log=$out/$s.$round.log
    start=$(date +%s.%N)
    "$PERFLAB" study "$s" --quick --check-shapes --results "$out/results" -q >"$log" 2>&1
    rc=$?
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
    printf '%-32s %5s %6.0f %5s  %s\n' "$s" "$round" "$secs" "$rc" "$load" | tee -a "$summary"
    # The checks that failed, and those not applicable here for a reason other than a leg
    # that runs elsewhere: each check's lines joined, up to "the paper:".
    awk '/^shape checks/ {on = 1; next}
         on && /^  (pass|FAIL|n\/a) / {flush(); cur = $0; next}
         on && /^        the paper:/ {flush(); next}
         on && /^        / && cur != "" {sub(/^ +/, " "); cur = cur $0; next}
         on && /^[^ ]/ {flush(); on = 0}
         function flush() {
           if (cur ~ /^  FAIL/ || (cur ~ /^  n\/a/ && cur !~ /did not run/)) print "      " cur
           cur = ""
         }
         END {flush()}' "$log" | cut -c1-260 >>"$summary"
  done
done
echo
echo "logs and results: $out"
cat "$summary"
