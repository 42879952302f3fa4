#!/usr/bin/env bash
# The portable build (this tree's default: no target-cpu, the memory kernels chosen at run
# time) against one built for this very CPU (RUSTFLAGS="-C target-cpu=native"), on the work
# the CPU level could change: the memory kernels (read, copy, triad at 1 and 2 threads), the
# CPU fractals, and SQLite's complex scan predicate (sin, cos, sqrt per row: the math
# functions). Alternating, each pair judged by 'perflab compare' (the portable build's).
#   scripts/bench-portable.sh [SECONDS] [OTHER_BINARY]
# OTHER_BINARY replaces the native build of this tree (e.g. an older perflab built with
# SQLite's own math functions). Prints each comparison's verdicts; read them.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-5}
cargo build --release --quiet
PORTABLE=$PWD/target/release/perflab
OTHER=${2:-}
if [ -z "$OTHER" ]; then
  RUSTFLAGS="-C target-cpu=native" cargo build --release --quiet --target-dir target/native
  OTHER=$PWD/target/native/release/perflab
fi
"$PORTABLE" --version | sed -n '1,3p'
"$OTHER" --version | sed -n '1,3p'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PERFLAB_RESULTS=$work/results
"$PORTABLE" scan prepare --quiet --target "sqlite://$work/scan.db" --size 64m >/dev/null

benches=(
  "memory|memory --kernel read,copy,triad --size 256MiB --threads 1,2 --warmup 1s --duration ${SECS}s --repeat 3"
  "cpu|cpu --threads 1,2 --warmup 1s --duration ${SECS}s --repeat 3"
  "scan|scan run --target sqlite://$work/scan.db --predicate complex --cache warm --threads 1 --warmup 1s --duration ${SECS}s --repeat 3"
)
for b in "${benches[@]}"; do
  name=${b%%|*}; read -r -a args <<<"${b#*|}"
  "$OTHER" "${args[@]}" --quiet >/dev/null
  "$PORTABLE" tag last "$name-other" >/dev/null
  "$PORTABLE" "${args[@]}" --quiet >/dev/null
  "$PORTABLE" tag last "$name-portable" >/dev/null
  echo "== $name: portable against $(basename "$(dirname "$(dirname "$OTHER")")")"
  "$PORTABLE" compare "$name-other" "$name-portable" | sed -n '/^step /,/comparisons;/p'
done
