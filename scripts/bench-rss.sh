#!/usr/bin/env bash
# Long runs: does perflab's memory stay flat? Runs two workloads for a long time each and
# samples the perflab process's resident memory (VmRSS in /proc/PID/status) every 10 s:
#   null  the null target at full speed (closed loop, one thread): the most ops per second,
#         so anything kept per op would show first
#   io    random 4 KiB reads of a small file (16 MiB, direct I/O) in a temporary folder
# Prints a table per workload and the growth after the first minute (RSS at the end minus RSS
# at 60 s, in KiB), against the goal: under 1 MiB. The first minute is left out because
# allocators, thread stacks and the first interval reports settle there; what matters for a
# long run is whether memory keeps growing afterwards. Exits 1 if a workload misses the goal.
#
#   scripts/bench-rss.sh              # 600 s per workload (about 20 minutes with the build)
#   scripts/bench-rss.sh 90           # a quick check: 90 s per workload
#   IO_PATH=/mnt/disk scripts/bench-rss.sh 600
#
# (scripts/bench-memory.sh is the memory *bandwidth* benchmark; this one is about perflab's
# own memory.)
set -euo pipefail
export LC_ALL=C # a decimal point in $EPOCHREALTIME and printf, whatever the locale
cd "$(dirname "$0")/.."

DURATION=${1:-600}   # seconds per workload
INTERVAL=10          # seconds between samples
GOAL_KIB=1024        # growth allowed after the first minute
if ! [[ "$DURATION" =~ ^[0-9]+$ ]] || [ "$DURATION" -lt 70 ]; then
  echo "usage: $0 [SECONDS per workload, at least 70: the growth is measured from 60 s on]" >&2
  exit 2
fi

cargo build --release --quiet
perflab=./target/release/perflab

results=$(mktemp -d)
# /var/tmp is on disk on Debian even where /tmp is tmpfs (which has no O_DIRECT).
io_dir=$(mktemp -d "${IO_PATH:-/var/tmp}/perflab-rss-XXXXXX")
pid=""
cleanup() {
  # A Ctrl-C of this script must not leave perflab running (it removes its own files on SIGINT).
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -INT "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$results" "$io_dir"
}
trap cleanup EXIT

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
hwm_kib() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

failed=0
summary=()

# measure NAME ARGS...: runs perflab with ARGS in the background, samples its RSS until it
# ends, prints the table and the verdict.
measure() {
  local name=$1
  shift
  local out="$results/$name.json" err="$results/$name.err"
  echo
  echo "== $name: perflab $* --duration ${DURATION}s  ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  # --warmup 0s: the clock of the samples and of the run start together; --json: the record
  # on stdout, for the op count at the end.
  "$perflab" "$@" --warmup 0s --duration "${DURATION}s" --quiet --json --results "$results" \
    >"$out" 2>"$err" &
  pid=$!
  local start_us=${EPOCHREALTIME/./} # microseconds
  local -a times=() rss=()
  local k=0 hwm="" r change
  printf '%8s  %12s  %10s\n' "time s" "RSS KiB" "change KiB"
  while true; do
    k=$((k + 1))
    # Sleep until the next 10 s mark from the start, not 10 s from now (no drift), waking
    # early if perflab ends. No sample at 0 s: the child may not have exec'd perflab yet.
    local wait_us=$((start_us + k * INTERVAL * 1000000 - ${EPOCHREALTIME/./}))
    if [ "$wait_us" -gt 0 ]; then
      timeout "$(printf '%d.%06d' $((wait_us / 1000000)) $((wait_us % 1000000)))" \
        tail --pid="$pid" -f /dev/null 2>/dev/null || true
    fi
    r=$(rss_kib "$pid") || true
    [ -n "$r" ] || break # perflab has ended (a zombie has no VmRSS)
    hwm=$(hwm_kib "$pid") || true
    change=""
    [ "${#rss[@]}" -gt 0 ] && change=$((r - rss[-1]))
    times+=("$((k * INTERVAL))")
    rss+=("$r")
    printf '%8s  %12s  %10s\n' "${times[-1]}" "$r" "$change"
  done
  local status=0
  wait "$pid" || status=$?
  pid=""
  if [ "$status" != 0 ]; then
    echo "perflab $name failed (exit $status):" >&2
    cat "$err" >&2
    exit 1
  fi
  # The sample at 60 s and the last one taken while perflab ran.
  local i60=$((60 / INTERVAL - 1)) last=$((${#rss[@]} - 1))
  if [ "$last" -le "$i60" ]; then
    echo "perflab ended before the second minute; nothing to compare" >&2
    exit 1
  fi
  local growth=$((rss[last] - rss[i60]))
  local verdict=PASS
  if [ "$growth" -ge "$GOAL_KIB" ]; then
    verdict=FAIL
    failed=1
  fi
  local ops
  ops=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
t = r["steps"][0]["trials"][0]
engine = r["spec"].get("engine")
print("%d ops, %.0f ops/s%s" % (t["ops"], t["ops_per_sec"], ", engine %s" % engine if engine else ""))
' "$out")
  echo "perflab: $ops; peak RSS (VmHWM) $hwm KiB"
  echo "$name: RSS ${rss[i60]} KiB at ${times[i60]} s, ${rss[last]} KiB at ${times[last]} s:" \
    "growth after the first minute $growth KiB (goal: under $GOAL_KIB KiB) $verdict"
  summary+=("$(printf '%-5s %6s KiB at 60 s  %6s KiB at %4s s  growth %5s KiB  %s' \
    "$name" "${rss[i60]}" "${rss[last]}" "${times[last]}" "$growth" "$verdict")")
}

echo "perflab $($perflab --version | awk '{print $2}'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
measure null null --threads 1
measure io io --path "$io_dir" --rw randread --bs 4k --size 16m --files 1 --direct 1

echo
echo "summary (${DURATION} s per workload, RSS sampled every ${INTERVAL} s):"
printf '  %s\n' "${summary[@]}"
exit "$failed"
