#!/usr/bin/env bash
# Scale-out's cost: the null target as N MPI ranks of one worker against one process of N
# workers, on this host, alternating; and the ranks' start skew per step.
#   scripts/bench-mpi.sh [ROUNDS] [N]
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
figures() {
  python3 -c '
import json, sys
r = json.load(sys.stdin)
t = r["steps"][0]["trials"][0]
sync = t.get("ranks") or {}
print("%.0f %d" % (t["ops_per_sec"], sync.get("start_skew_ns", 0)))
'
}
threads=() ranks=() skews=()
for round in $(seq 1 "$ROUNDS"); do
  read -r a _ < <("$bin" "${common[@]}" --threads "$N" | figures)
  read -r b skew < <(mpirun --oversubscribe -np "$N" "$bin" "${common[@]}" --threads "$N" | figures)
  threads+=("$a") ranks+=("$b") skews+=("$skew")
  python3 -c "print('round $round: one process of $N threads %.1fM ops/s, $N ranks of 1 thread %.1fM ops/s: %.3fx; start skew %.1f us' % ($a/1e6, $b/1e6, $b/$a, $skew/1e3))"
done
python3 - "${threads[*]}" "${ranks[*]}" "${skews[*]}" <<'EOF'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
s = [float(x) for x in sys.argv[3].split()]
ratios = [y / x for x, y in zip(a, b)]
print("median: threads %.1fM ops/s, ranks %.1fM ops/s, ratio %.3fx (rounds %.3f..%.3f); start skew median %.1f us, max %.1f us"
      % (statistics.median(a) / 1e6, statistics.median(b) / 1e6, statistics.median(ratios), min(ratios), max(ratios),
         statistics.median(s) / 1e3, max(s) / 1e3))
EOF
