#!/usr/bin/env bash
# An old perflab binary against a new one on the same work, alternating, judged by `perflab
# compare` (the new binary's): the check that a change to the shared layers (the runner, the
# SQL clients, the stop token, the registry, typed errors) costs nothing: the harness (null),
# DebitCredit on SQLite (and PostgreSQL with PG_URL), storage at QD32, pipelined memcached.
#   scripts/bench-refactor.sh OLD_BINARY [NEW_BINARY] [PG_URL] [SECONDS]
# NEW_BINARY defaults to this tree's release build. PG_URL (optional) adds DebitCredit
# select-only on that PostgreSQL database (prepared by the new binary, dropped at the end).
# Prints one verdict line per comparison and exits 0; read the verdicts.
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${1:?give the old binary: scripts/bench-refactor.sh OLD_BINARY [NEW_BINARY] [PG_URL]}
NEW=${2:-}
if [ -z "$NEW" ]; then
  cargo build --release --quiet
  NEW=$PWD/target/release/perflab
fi
PG=${3:-}
SECS=${4:-5}
results=$(mktemp -d)
sqlite=$(mktemp -d)
trap 'rm -rf "$results" "$sqlite"; [ -n "$PG" ] && "$NEW" oltp cleanup --quiet --target "$PG" >/dev/null 2>&1 || true' EXIT

# name | arguments shared by both binaries
benches=(
  "null|null --threads 1,2 --warmup 1s --duration ${SECS}s --repeat 3"
  "sqlite-select|oltp run --target sqlite://$sqlite/bank.db --select-only --clients 1,2 --warmup 1s --duration ${SECS}s --repeat 3"
  "sqlite-tpcb|oltp run --target sqlite://$sqlite/bank.db --clients 1,2 --warmup 1s --duration ${SECS}s --repeat 3"
  "io-randread|io --path $sqlite --rw randread --bs 4k --iodepth 32 --size 256m --warmup 1s --duration ${SECS}s --repeat 3"
)
# The caches, on each binary's own throwaway memcached, where memcached is installed.
if command -v memcached >/dev/null 2>&1 || [ -x /usr/bin/memcached ]; then
  benches+=("kv-pipelined|kv --clients 4 --pipeline 16 --threads 1 --warmup 1s --duration ${SECS}s --repeat 3")
fi
"$NEW" oltp prepare --quiet --target "sqlite://$sqlite/bank.db" --scale 1
if [ -n "$PG" ]; then
  "$NEW" oltp prepare --quiet --target "$PG" --scale 1
  benches+=("pg-select|oltp run --target $PG --select-only --clients 4 --warmup 1s --duration ${SECS}s --repeat 3")
fi

for b in "${benches[@]}"; do
  name=${b%%|*}
  args=${b#*|}
  for round in 1 2; do
    # Alternate which binary goes first, so drift in the machine falls on both.
    if [ "$round" = 1 ]; then order="OLD NEW"; else order="NEW OLD"; fi
    for which in $order; do
      bin=$OLD; [ "$which" = NEW ] && bin=$NEW
      # shellcheck disable=SC2086
      "$bin" $args --quiet --results "$results" >/dev/null
      "$NEW" tag --results "$results" last "$name-$which-$round" >/dev/null
    done
  done
  for round in 1 2; do
    verdict=$("$NEW" compare --quiet --results "$results" "$name-OLD-$round" "$name-NEW-$round" 2>&1 |
      grep -iE "faster|slower|equivalent|inconclusive" | head -3 | tr -s ' ' | paste -sd ';' -)
    echo "$name round $round (new against old): $verdict"
  done
done
