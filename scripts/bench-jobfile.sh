#!/usr/bin/env bash
# perflab io against fio on the same job files, alternating: `fio JOB.fio` and
# `perflab io JOB.fio`, each in an empty folder of its own on DIR.
#   scripts/bench-jobfile.sh [DIR] [ROUNDS] [SECONDS]
#   ONLY=file-server-mix* scripts/bench-jobfile.sh ...   (only the job files matching the glob)
#   PERFLAB=/path/to/perflab scripts/bench-jobfile.sh ... (that binary, not this checkout's)
# DIR must be on the storage to measure (default /var/tmp). Prints, per job file, the IO/s
# of all its jobs (reads and writes), the CPU time each tool spent per I/O, and the
# perflab/fio ratios (medians over rounds of neighbour ratios). Needs fio and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-/var/tmp}
ROUNDS=${2:-3}
SECS=${3:-5}
command -v fio >/dev/null || { echo "fio is not installed: apt-get install fio" >&2; exit 2; }
# PERFLAB=path/to/perflab measures that build instead of building this checkout.
if [[ -z ${PERFLAB:-} ]]; then
  cargo build --release --quiet
  PERFLAB=$PWD/target/release/perflab
fi
base=$(mktemp -d "$DIR/perflab-bench-jobfile.XXXXXX")
out=$(mktemp -d)
trap 'rm -rf "$base" "$out"' EXIT

# The job files: written here, perflab's own (not fio's examples).
mkdir -p "$base/jobs"
cat >"$base/jobs/at-once.fio" <<EOF
; a random reader and a sequential writer at once, direct, on io_uring
[global]
ioengine=io_uring
direct=1
size=256m
time_based
runtime=$SECS

[reader]
rw=randread
bs=4k
iodepth=16

[writer]
rw=write
bs=128k
iodepth=4
EOF
cat >"$base/jobs/psync-x4.fio" <<EOF
; four copies of a synchronous random reader, direct
[reader]
ioengine=psync
direct=1
rw=randread
bs=4k
size=256m
numjobs=4
time_based
runtime=$SECS
EOF
cat >"$base/jobs/write-then-read.fio" <<EOF
; a sequential writer, then (stonewalled) a reader of the same file, each for its size
[global]
ioengine=io_uring
direct=1
bs=1m
iodepth=8
size=512m
filename=data

[write]
rw=write

[read]
stonewall
rw=read
EOF

cat >"$base/jobs/file-server-mix.fio" <<EOF
; Intel IOmeter's file server mix (fio's iometer example, its shape), for a time: eight
; block sizes from 512 B to 64 KiB, 80% reads, direct, at depth 64
[mix]
bssplit=512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10
rw=randrw
rwmixread=80
direct=1
size=1g
ioengine=libaio
iodepth=64
time_based
runtime=$SECS
EOF

# The same mix on io_uring: the two engines side by side, in both tools.
sed -e 's/^ioengine=libaio/ioengine=io_uring/' -e 's/^; Intel/; on io_uring: Intel/' \
  "$base/jobs/file-server-mix.fio" >"$base/jobs/file-server-mix-uring.fio"

run() { # tool job round
  local dir="$base/run-$1"
  rm -rf "$dir" && mkdir -p "$dir"
  case $1 in
    fio) (cd "$dir" && fio --output-format=json "$2" >"$out/$(basename "$2").fio.$3.json") ;;
    perflab) (cd "$dir" && "$PERFLAB" io "$2" --quiet --json --results "$out/results" \
      >"$out/$(basename "$2").perflab.$3.json") ;;
  esac
  rm -rf "$dir"
}

jobs=("$base"/jobs/${ONLY:-*}.fio)
for round in $(seq 1 "$ROUNDS"); do
  for j in "${jobs[@]}"; do
    if ((round % 2)); then run perflab "$j" "$round"; run fio "$j" "$round"; else
      run fio "$j" "$round"; run perflab "$j" "$round"; fi
  done
done

python3 - "$out" "$ROUNDS" "${jobs[@]}" <<'EOF'
import json, os, sys, statistics as st
out, rounds, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def fio(path):
    d = json.load(open(path))
    ios = iops = cpu = 0.0
    for j in d["jobs"]:
        for k in ("read", "write"):
            iops += j[k]["iops"]
            ios += j[k]["total_ios"]
        # usr_cpu and sys_cpu are percent of one CPU over the job's runtime.
        cpu += (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] / 1000
    return iops, cpu / max(ios, 1) * 1e9

def perflab(path):
    d = json.load(open(path))
    iops = ios = cpu = 0.0
    for s in d["steps"]:
        t = s["trials"][0]
        for g in t["groups"]:
            if g["by"] == "job":
                iops += g["ops_per_sec"]
        ios += t["ops"]
        per = t["resources"].get("process_cpu_ns_per_op") or 0
        cpu += per * t["ops"]
    return iops, cpu / max(ios, 1)

print(f"{'job file':22} {'perflab IO/s':>13} {'fio IO/s':>11} {'ratio':>6}  {'CPU/IO p':>9} {'CPU/IO f':>9} {'ratio':>6}")
for j in jobs:
    name = os.path.basename(j)
    p = [perflab(f"{out}/{name}.perflab.{r}.json") for r in range(1, rounds + 1)]
    f = [fio(f"{out}/{name}.fio.{r}.json") for r in range(1, rounds + 1)]
    io_ratio = st.median(a[0] / b[0] for a, b in zip(p, f))
    cpu_ratio = st.median(a[1] / b[1] for a, b in zip(p, f) if b[1] > 0)
    rounds_txt = " ".join(f"{a[0] / b[0]:.2f}" for a, b in zip(p, f))
    print(f"{name:22} {st.median(x[0] for x in p):13.0f} {st.median(x[0] for x in f):11.0f} {io_ratio:6.2f}  "
          f"{st.median(x[1] for x in p):8.0f}n {st.median(x[1] for x in f):8.0f}n {cpu_ratio:6.2f}  rounds {rounds_txt}")
EOF
