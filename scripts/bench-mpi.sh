#!/usr/bin/env bash
# Scale-out's cost: the null target as N MPI ranks of one worker against one process of N
# workers, and against N independent perflab processes of one worker started together (the
# same processes without any coordination), on this host, alternating; and the ranks' start
# skew per step.
#   scripts/bench-mpi.sh [ROUNDS] [N]        (SPIN=2us: ops that each spin 2 us)
# Goals (issue 14): ranks/threads >= 0.95x; start skew under 1 ms on one host.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
N=${2:-$(nproc)}
need() { command -v "$1" >/dev/null 2>&1; }
if ! need mpirun || ! need mpicc; then
  if [ "$(id -u)" = 0 ] && need apt-get; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin libopenmpi-dev libclang-dev pkg-config >/dev/null
  else
    echo "bench-mpi: needs openmpi-bin libopenmpi-dev libclang-dev; install them" >&2
    exit 1
  fi
fi
# Its own target folder: the default build in target/ stays MPI-free.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target/mpi}
cargo build --release --quiet --features mpi
bin="$CARGO_TARGET_DIR/release/perflab"
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
  OMPI_MCA_btl_vader_single_copy_mechanism=none
common=(null --warmup 1s --duration 5s --resources off --json --quiet --results "$results")
[ -n "${SPIN:-}" ] && common+=(--spin "$SPIN")
figures() {
  python3 -c '
import json, sys
r = json.load(sys.stdin)
t = r["steps"][0]["trials"][0]
sync = t.get("ranks") or {}
print("%.0f %d" % (t["ops_per_sec"], sync.get("start_skew_ns", 0)))
'
}
# N perflab processes of one worker each, started together, no MPI: their ops/s summed.
separate() {
  local pids=() i
  for i in $(seq 1 "$N"); do
    mkdir -p "$results/sep$i"
    "$bin" "${common[@]/$results/$results/sep$i}" --threads 1 > "$results/sep$i.json" &
    pids+=($!)
  done
  wait "${pids[@]}"
  python3 -c '
import json, sys
print("%.0f" % sum(json.load(open(f))["steps"][0]["trials"][0]["ops_per_sec"] for f in sys.argv[1:]))
' "$results"/sep*.json
}
threads=() ranks=() seps=() skews=()
for round in $(seq 1 "$ROUNDS"); do
  read -r a _ < <("$bin" "${common[@]}" --threads "$N" | figures)
  read -r b skew < <(mpirun --oversubscribe -np "$N" "$bin" "${common[@]}" --threads "$N" | figures)
  c=$(separate)
  threads+=("$a") ranks+=("$b") seps+=("$c") skews+=("$skew")
  python3 -c "print('round $round: one process of $N threads %.1fM ops/s; $N ranks of 1 thread %.1fM ops/s (%.3fx); $N separate processes %.1fM ops/s (ranks/separate %.3fx); start skew %.1f us' % ($a/1e6, $b/1e6, $b/$a, $c/1e6, $b/$c, $skew/1e3))"
done
python3 - "${threads[*]}" "${ranks[*]}" "${seps[*]}" "${skews[*]}" <<'EOF'
import statistics, sys
a, b, c, s = ([float(x) for x in arg.split()] for arg in sys.argv[1:5])
rt = [y / x for x, y in zip(a, b)]
rs = [y / x for x, y in zip(c, b)]
print("median: threads %.1fM ops/s, ranks %.1fM ops/s, separate processes %.1fM ops/s" % (statistics.median(a) / 1e6, statistics.median(b) / 1e6, statistics.median(c) / 1e6))
print("ranks/threads %.3fx (rounds %.3f..%.3f); ranks/separate processes %.3fx (rounds %.3f..%.3f)" % (statistics.median(rt), min(rt), max(rt), statistics.median(rs), min(rs), max(rs)))
print("start skew median %.1f us, max %.1f us" % (statistics.median(s) / 1e3, max(s) / 1e3))
EOF
