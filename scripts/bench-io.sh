#!/usr/bin/env bash
# perflab io against fio on the same file, alternating, O_DIRECT throughout.
#   scripts/bench-io.sh [DIR] [ROUNDS] [SECONDS]
# DIR must be on the storage to measure (default /var/tmp). Prints, per case, IOPS, perflab's
# and fio's CPU time per I/O, mean latency, and the perflab/fio ratios (medians). Needs fio (apt-get
# install fio) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-/var/tmp}
ROUNDS=${2:-2}
SECS=${3:-5}
command -v fio >/dev/null || { echo "fio is not installed: apt-get install fio" >&2; exit 2; }
cargo build --release --quiet
PERFLAB=$PWD/target/release/perflab
results=$(mktemp -d)
out=$(mktemp -d)
# perflab creates (and marks) the file in a work directory of its own inside $base, kept;
# fio then uses the very same file, and perflab reuses it by that directory.
base=$(mktemp -d "$DIR/perflab-bench-io.XXXXXX")
trap 'rm -rf "$results" "$out" "$base"' EXIT
"$PERFLAB" io --quiet --results "$results" --path "$base" --rw read --bs 1m \
  --size 1g --ops 1 --warmup 0s --keep >/dev/null
work=$(echo "$base"/perflab-io-*)
file="$work/data0"

# name  rw  bs  depth  perflab-engine  fio-engine
CASES=(
  "randread-4k-qd32 randread 4k 32 io_uring io_uring"
  "randread-4k-qd1 randread 4k 1 io_uring io_uring"
  "randwrite-4k-qd32 randwrite 4k 32 io_uring io_uring"
  "read-1m-qd8 read 1m 8 io_uring io_uring"
  "write-1m-qd8 write 1m 8 io_uring io_uring"
  "randread-4k-qd1-sync randread 4k 1 sync psync"
)

run_perflab() {
  "$PERFLAB" io --quiet --json --results "$results" --path "$work" --rw "$rw" --bs "$bs" \
    --iodepth "$depth" --size 1g --engine "$pe" --direct 1 --warmup 0s --duration "${SECS}s" \
    --keep >"$out/$name.perflab.$round.json"
}
run_fio() {
  fio --name=bench --filename="$file" --rw="$rw" --bs="$bs" --iodepth="$depth" --size=1g \
    --ioengine="$fe" --direct=1 --runtime="$SECS" --time_based \
    --output-format=json >"$out/$name.fio.$round.json"
}
# No warm-up on either side: fio's CPU percentages cover its whole job, so both count the
# same span. The order alternates between rounds (perflab first, then fio first), and the
# ratios are taken per round, between neighbours, then their median: the host's speed drifts
# over minutes, so neighbours compare best.
for round in $(seq 1 "$ROUNDS"); do
  for c in "${CASES[@]}"; do
    read -r name rw bs depth pe fe <<<"$c"
    if (( round % 2 )); then run_perflab; run_fio; else run_fio; run_perflab; fi
  done
done

python3 - "$out" "$ROUNDS" "${CASES[@]}" <<'EOF'
import json, sys, statistics as st
out, rounds, cases = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print(f"{'case':22} {'perflab IO/s':>13} {'fio IO/s':>11} {'ratio':>6}  {'CPU/IO p':>9} {'CPU/IO f':>9} {'ratio':>6}  {'mean p':>8} {'mean f':>8} {'ratio':>6}")
for c in cases:
    name = c.split()[0]
    rows = []
    for r in range(1, rounds + 1):
        t = json.load(open(f"{out}/{name}.perflab.{r}.json"))["steps"][0]["trials"][0]
        f = json.load(open(f"{out}/{name}.fio.{r}.json"))["jobs"][0]
        d = f["read"] if f["read"]["io_bytes"] > 0 else f["write"]
        f_cpu = (f["usr_cpu"] + f["sys_cpu"]) / 100 * f["job_runtime"] * 1e6 / max(d["total_ios"], 1)
        rows.append((t["ops_per_sec"], d["iops"], t["figures"]["cpu_ns_per_io"], f_cpu,
                     t["latency"]["mean_ns"], d["lat_ns"]["mean"]))
    md = st.median
    col = lambda i: md([x[i] for x in rows])
    ratio = lambda i, j: md([x[i] / x[j] for x in rows])
    print(f"{name:22} {col(0):13,.0f} {col(1):11,.0f} {ratio(0, 1):6.3f}  "
          f"{col(2):7,.0f}ns {col(3):7,.0f}ns {ratio(2, 3):6.3f}  "
          f"{col(4)/1e3:6.1f}us {col(5)/1e3:6.1f}us {ratio(4, 5):6.3f}")
print(f"(medians over {rounds} rounds; ratios are perflab/fio per round, then their median)")
EOF
