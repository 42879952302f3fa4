#!/usr/bin/env bash
# perflab oltp against sysbench: sysbench's own command lines, run by sysbench and by perflab
# (`sysbench` replaced by `perflab oltp`), on the same tables, alternating.
#   scripts/bench-sysbench.sh [ROUNDS] [SECONDS] [THREADS]
#     ENGINES="mariadb postgres" TESTS="oltp_read_write oltp_point_select"
#     TABLES=4 TABLE_SIZE=100000
#     PERFLAB=BINARY (another perflab build, e.g. an earlier commit's, for a before/after)
#     MYSQL="--mysql-host=127.0.0.1 --mysql-user=root --mysql-db=test"
#     PGSQL="--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-user=postgres --pgsql-db=test"
# perflab prepares the tables (sysbench's DDL and rows) and drops them at the end; both run
# the test on them with the same line. PGSSLMODE=disable for both clients (libpq and perflab
# would both take TLS where the server offers it; the benchmark compares the clients, not
# TLS); the MariaDB here offers none. Prints events/s of each, the CPU time per event of
# each client program (perflab's own CPU from its record, sysbench's from /usr/bin/time),
# and the perflab/sysbench ratios: the median of the per-round ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-5}
THREADS=${3:-4}
ENGINES=${ENGINES:-mariadb postgres}
TESTS=${TESTS:-oltp_read_write oltp_point_select}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
MYSQL=${MYSQL:---mysql-host=127.0.0.1 --mysql-user=root --mysql-db=test}
PGSQL=${PGSQL:---db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-user=postgres --pgsql-db=test}
export PGSSLMODE=disable
SYSBENCH=$(command -v sysbench) || { echo "sysbench not found: apt-get install sysbench" >&2; exit 2; }
if [[ -z ${PERFLAB:-} ]]; then
  cargo build --release --quiet
  PERFLAB=$PWD/target/release/perflab
fi
results=$(mktemp -d)
out=$(mktemp -d)
options() { case $1 in mariadb) echo "$MYSQL" ;; postgres) echo "$PGSQL" ;; esac; }
cleanup() {
  for e in $ENGINES; do
    # shellcheck disable=SC2046
    "$PERFLAB" oltp oltp_read_write $(options "$e") --tables="$TABLES" cleanup --quiet || true
  done
  rm -rf "$results" "$out"
}
trap cleanup EXIT
for e in $ENGINES; do
  # shellcheck disable=SC2046
  "$PERFLAB" oltp oltp_read_write $(options "$e") --tables="$TABLES" --table-size="$TABLE_SIZE" prepare --quiet
done
for round in $(seq 1 "$ROUNDS"); do
  for e in $ENGINES; do
    for t in $TESTS; do
      line="$t $(options "$e") --tables=$TABLES --table-size=$TABLE_SIZE --threads=$THREADS --time=$SECS"
      run_perflab() {
        # shellcheck disable=SC2086
        "$PERFLAB" oltp $line run --quiet --json --results "$results" \
          >"$out/perflab.$e.$t.$round.json"
      }
      run_sysbench() {
        # shellcheck disable=SC2086
        /usr/bin/time -f "%U %S" -o "$out/sysbench.$e.$t.$round.cpu" \
          "$SYSBENCH" $line run >"$out/sysbench.$e.$t.$round.txt" 2>&1
      }
      if (( round % 2 )); then run_perflab; run_sysbench; else run_sysbench; run_perflab; fi
    done
  done
done

python3 - "$out" "$ROUNDS" "$THREADS" "$ENGINES" "$TESTS" <<'PY'
import json, re, sys, statistics as st
out, rounds, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3]
engines, tests = sys.argv[4].split(), sys.argv[5].split()
print(f"{'engine':9} {'test':18} {'threads':>7} {'perflab ev/s':>13} {'sysbench ev/s':>14} {'ratio':>6}  {'CPU/ev p':>9} {'CPU/ev s':>9} {'ratio':>6}  rounds' ratios")
for e in engines:
    for t in tests:
        rows = []
        for r in range(1, rounds + 1):
            p = json.load(open(f"{out}/perflab.{e}.{t}.{r}.json"))["steps"][0]["trials"][0]
            text = open(f"{out}/sysbench.{e}.{t}.{r}.txt").read()
            events = int(re.search(r"total number of events:\s+(\d+)", text).group(1))
            secs = float(re.search(r"total time:\s+([0-9.]+)s", text).group(1))
            u, s = map(float, open(f"{out}/sysbench.{e}.{t}.{r}.cpu").read().split()[-2:])
            rows.append((p["ops_per_sec"], events / secs, p["resources"]["process_cpu_ns_per_op"], (u + s) * 1e9 / max(events, 1)))
        md = st.median
        print(f"{e:9} {t:18} {threads:>7} {md([x[0] for x in rows]):13,.0f} {md([x[1] for x in rows]):14,.0f} "
              f"{md([x[0]/x[1] for x in rows]):6.3f}  {md([x[2] for x in rows])/1e3:7.1f}us "
              f"{md([x[3] for x in rows])/1e3:7.1f}us {md([x[2]/x[3] for x in rows]):6.3f}  "
              + " ".join(f"{x[0]/x[1]:.2f}" for x in rows))
print(f"(medians over {rounds} rounds of the same line; ratios perflab/sysbench per round, then their median)")
PY
