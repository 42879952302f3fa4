#!/usr/bin/env bash
# CPU scaling: fractals/s at 1..N threads, with the speedup and efficiency against 1 thread.
#   scripts/bench-cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
NPROC=$(nproc)
./target/release/perflab cpu --threads "1..$NPROC" --warmup 1s --duration 5s --repeat 3 --quiet --results "$results"
