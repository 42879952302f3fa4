#!/usr/bin/env bash
# perflab io against fio on the same file, alternating, O_DIRECT throughout.
#   scripts/bench-io.sh [DIR] [ROUNDS] [SECONDS]
# DIR must be on the storage to measure (default /var/tmp). Prints, per case, IOPS, perflab's
# and fio's CPU time per I/O, mean latency, and the perflab/fio ratios. Needs fio (apt-get
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
# perflab creates (and marks) the file; fio then uses the very same file.
"$PERFLAB" io --quiet --results "$results" --path "$DIR/perflab-bench-io" --rw read --bs 1m \
  --size 1g --ops 1 --warmup 0s --keep >/dev/null
work="$DIR/perflab-bench-io"
file="$work/data0"
trap 'rm -rf "$results" "$out" "$work"' EXIT

# name  rw  bs  depth  perflab-engine  fio-engine
CASES=(
  "randread-4k-qd32 randread 4k 32 io_uring io_uring"
  "randread-4k-qd1 randread 4k 1 io_uring io_uring"
  "randwrite-4k-qd32 randwrite 4k 32 io_uring io_uring"
  "read-1m-qd8 read 1m 8 io_uring io_uring"
  "write-1m-qd8 write 1m 8 io_uring io_uring"
  "randread-4k-qd1-sync randread 4k 1 sync psync"
)

for round in $(seq 1 "$ROUNDS"); do
  for c in "${CASES[@]}"; do
    read -r name rw bs depth pe fe <<<"$c"
    "$PERFLAB" io --quiet --json --results "$results" --path "$work" --rw "$rw" --bs "$bs" \
      --iodepth "$depth" --size 1g --engine "$pe" --direct 1 --warmup 0s --duration "${SECS}s" \
      --keep >"$out/$name.perflab.$round.json"
    fio --name=bench --filename="$file" --rw="$rw" --bs="$bs" --iodepth="$depth" --size=1g \
      --ioengine="$fe" --direct=1 --runtime="$SECS" --time_based \
      --output-format=json >"$out/$name.fio.$round.json"
  done
done

python3 - "$out" "$ROUNDS" "${CASES[@]}" <<'EOF'
import json, sys, statistics as st
out, rounds, cases = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print(f"{'case':22} {'perflab IO/s':>13} {'fio IO/s':>11} {'ratio':>6}  {'CPU/IO p':>9} {'CPU/IO f':>9} {'ratio':>6}  {'mean p':>8} {'mean f':>8} {'ratio':>6}")
for c in cases:
    name = c.split()[0]
    p_iops, f_iops, p_cpu, f_cpu, p_lat, f_lat = [], [], [], [], [], []
    for r in range(1, rounds + 1):
        p = json.load(open(f"{out}/{name}.perflab.{r}.json"))
        t = p["steps"][0]["trials"][0]
        p_iops.append(t["ops_per_sec"]); p_cpu.append(t["figures"]["cpu_ns_per_io"])
        p_lat.append(t["latency"]["mean_ns"])
        f = json.load(open(f"{out}/{name}.fio.{r}.json"))["jobs"][0]
        d = f["read"] if f["read"]["io_bytes"] > 0 else f["write"]
        ios = d["total_ios"]
        f_iops.append(d["iops"])
        f_cpu.append((f["usr_cpu"] + f["sys_cpu"]) / 100 * f["job_runtime"] * 1e6 / max(ios, 1))
        f_lat.append(d["lat_ns"]["mean"])
    m = st.mean
    print(f"{name:22} {m(p_iops):13,.0f} {m(f_iops):11,.0f} {m(p_iops)/m(f_iops):6.3f}  "
          f"{m(p_cpu):7,.0f}ns {m(f_cpu):7,.0f}ns {m(p_cpu)/m(f_cpu):6.3f}  "
          f"{m(p_lat)/1e3:6.1f}us {m(f_lat)/1e3:6.1f}us {m(p_lat)/m(f_lat):6.3f}")
EOF
