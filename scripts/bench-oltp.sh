#!/usr/bin/env bash
# perflab oltp against pgbench: DebitCredit on the same PostgreSQL bank, alternating.
#   scripts/bench-oltp.sh [URL] [ROUNDS] [SECONDS]     (MODES="prepared extended simple")
# URL defaults to postgres://postgres@127.0.0.1/test?sslmode=disable: plain TCP for both (libpq
# and perflab default to sslmode=prefer, TLS where the server offers it; the benchmark compares
# the clients, not TLS). The database must exist and allow the
# user in). perflab prepares the bank (scale 1) and drops it at the end; pgbench runs on the
# same tables with -n (no vacuum); each query mode of MODES runs both with the same -M
# (perflab's -M has pgbench's meanings: named statements, the unnamed statement parsed every
# time, or the parameters written into one query).
# Prints tps, CPU time per transaction of each client program, and the perflab/pgbench ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
URL=${1:-postgres://postgres@127.0.0.1/test?sslmode=disable}
ROUNDS=${2:-2}
SECS=${3:-5}
MODES=${MODES:-prepared extended simple}
PGBENCH=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1)
[ -x "$PGBENCH" ] || { echo "pgbench not found: apt-get install postgresql-contrib" >&2; exit 2; }
cargo build --release --quiet
PERFLAB=$PWD/target/release/perflab
results=$(mktemp -d)
out=$(mktemp -d)
trap '"$PERFLAB" oltp cleanup --quiet --target "$URL" || true; rm -rf "$results" "$out"' EXIT
"$PERFLAB" oltp prepare --quiet --target "$URL" --scale 1
# pgbench takes libpq's URL as its database name.
for round in $(seq 1 "$ROUNDS"); do
 for mode in $MODES; do
  for c in 1 4 16; do
    for variant in tpcb select; do
      flag=""; pflag=""
      [ "$variant" = select ] && { flag="--select-only"; pflag="-S"; }
      run_perflab() {
        "$PERFLAB" oltp run --quiet --json --results "$results" --target "$URL" --clients "$c" \
          -M "$mode" $flag --warmup 0s --duration "${SECS}s" >"$out/perflab.$mode.$variant.$c.$round.json"
      }
      run_pgbench() {
        /usr/bin/time -f "%U %S" -o "$out/pgbench.$mode.$variant.$c.$round.cpu" \
          "$PGBENCH" -n -M "$mode" $pflag -c "$c" -j "$c" -T "$SECS" "$URL" \
          >"$out/pgbench.$mode.$variant.$c.$round.txt" 2>/dev/null
      }
      if (( round % 2 )); then run_perflab; run_pgbench; else run_pgbench; run_perflab; fi
    done
  done
 done
done

python3 - "$out" "$ROUNDS" $MODES <<'PY'
import json, re, sys, statistics as st
out, rounds, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print(f"{'-M':8} {'variant':8} {'clients':>7} {'perflab tps':>12} {'pgbench tps':>12} {'ratio':>6}  {'CPU/txn p':>10} {'CPU/txn g':>10} {'ratio':>6}")
for mode in modes:
  for variant in ["tpcb", "select"]:
    for c in [1, 4, 16]:
        rows = []
        for r in range(1, rounds + 1):
            t = json.load(open(f"{out}/perflab.{mode}.{variant}.{c}.{r}.json"))["steps"][0]["trials"][0]
            text = open(f"{out}/pgbench.{mode}.{variant}.{c}.{r}.txt").read()
            tps = float(re.search(r"tps = ([0-9.]+)", text).group(1))
            txns = int(re.search(r"number of transactions actually processed: (\d+)", text).group(1))
            u, s = map(float, open(f"{out}/pgbench.{mode}.{variant}.{c}.{r}.cpu").read().split()[-2:])
            rows.append((t["ops_per_sec"], tps, t["resources"]["process_cpu_ns_per_op"], (u + s) * 1e9 / max(txns, 1)))
        md = st.median
        print(f"{mode:8} {variant:8} {c:7} {md([x[0] for x in rows]):12,.0f} {md([x[1] for x in rows]):12,.0f} "
              f"{md([x[0]/x[1] for x in rows]):6.3f}  {md([x[2] for x in rows])/1e3:8.1f}us "
              f"{md([x[3] for x in rows])/1e3:8.1f}us {md([x[2]/x[3] for x in rows]):6.3f}")
print(f"(medians over {rounds} rounds; ratios perflab/pgbench per round, then their median)")
PY
