#!/usr/bin/env bash
# perflab oltp against pgbench on pgbench's own command lines and scripts, alternating: the
# same words given to `pgbench` and to `perflab oltp` (pgbench's dialect).
#   scripts/bench-pgbench-scripts.sh [ROUNDS] [SECONDS] [CLIENTS]
# Needs a local PostgreSQL on 127.0.0.1:5432 that lets user postgres in (PGHOST/PGPORT/PGUSER
# change that). The script makes a database of its own (perflab_bench_scripts), loads it with
# `pgbench -i -s 1`, and drops it at the end; the scripts it runs are written to a temporary
# folder: a custom script with \set, \gset, \if and \sleep, and a pipeline.
# Cases: the built-ins with weights (-b tpcb-like@1 -b select-only@9), -N, the custom script
# (-M simple), the pipeline (-M prepared). Prints tps and client CPU per transaction of each
# program, and the perflab/pgbench ratios (medians of per-round ratios).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-5}
CLIENTS=${3:-4}
HOST=${PGHOST:-127.0.0.1}
PORT=${PGPORT:-5432}
USER_=${PGUSER:-postgres}
DB=perflab_bench_scripts
PGBENCH=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1)
[ -x "$PGBENCH" ] || { echo "pgbench not found: apt-get install postgresql-client" >&2; exit 2; }
command -v psql >/dev/null || { echo "psql not found: apt-get install postgresql-client" >&2; exit 2; }
cargo build --release --quiet
PERFLAB=$PWD/target/release/perflab
work=$(mktemp -d)
psql_() { psql -X -q -h "$HOST" -p "$PORT" -U "$USER_" -d postgres "$@"; }
trap 'psql_ -c "DROP DATABASE IF EXISTS $DB" || true; rm -rf "$work"' EXIT
psql_ -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
"$PGBENCH" -q -i -s 1 -h "$HOST" -p "$PORT" -U "$USER_" "$DB" >/dev/null 2>&1

cat >"$work/custom.sql" <<'SQL'
\set aid random(1, 100000 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance AS bal, bid FROM pgbench_accounts WHERE aid = :aid \gset acc_
\if :acc_bal > 0
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :acc_bid;
\endif
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, :acc_bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
\sleep 100 us
SQL
cat >"$work/pipeline.sql" <<'SQL'
\set aid random(1, 100000 * :scale)
\set delta random(-5000, 5000)
\startpipeline
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, :delta, CURRENT_TIMESTAMP);
END;
\endpipeline
SQL

declare -A CASES=(
  [weights]="-b tpcb-like@1 -b select-only@9"
  [simple-update]="-N"
  [custom]="-f $work/custom.sql"
  [pipeline]="-M prepared -f $work/pipeline.sql"
)
ORDER="weights simple-update custom pipeline"
conn=(-h "$HOST" -p "$PORT" -U "$USER_")
for round in $(seq 1 "$ROUNDS"); do
  for name in $ORDER; do
    read -r -a words <<<"${CASES[$name]}"
    run_perflab() {
      "$PERFLAB" oltp --quiet --json --results "$work/results" -n -c "$CLIENTS" -j "$CLIENTS" \
        -T "$SECS" "${words[@]}" "${conn[@]}" "$DB" >"$work/perflab.$name.$round.json"
    }
    run_pgbench() {
      /usr/bin/time -f "%U %S" -o "$work/pgbench.$name.$round.cpu" \
        "$PGBENCH" -n -c "$CLIENTS" -j "$CLIENTS" -T "$SECS" "${words[@]}" "${conn[@]}" "$DB" \
        >"$work/pgbench.$name.$round.txt" 2>/dev/null
    }
    if (( round % 2 )); then run_perflab; run_pgbench; else run_pgbench; run_perflab; fi
  done
done

python3 - "$work" "$ROUNDS" $ORDER <<'PY'
import json, re, sys, statistics as st
work, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print(f"{'case':14} {'perflab tps':>12} {'pgbench tps':>12} {'ratio':>6}  {'CPU/txn p':>10} {'CPU/txn g':>10} {'ratio':>6}  errors p/g")
for name in names:
    rows = []
    for r in range(1, rounds + 1):
        t = json.load(open(f"{work}/perflab.{name}.{r}.json"))["steps"][0]["trials"][0]
        text = open(f"{work}/pgbench.{name}.{r}.txt").read()
        tps = float(re.search(r"tps = ([0-9.]+)", text).group(1))
        txns = int(re.search(r"number of transactions actually processed: (\d+)", text).group(1))
        failed = re.search(r"number of failed transactions: (\d+)", text)
        u, s = map(float, open(f"{work}/pgbench.{name}.{r}.cpu").read().split()[-2:])
        rows.append((t["ops_per_sec"], tps, t["resources"]["process_cpu_ns_per_op"],
                     (u + s) * 1e9 / max(txns, 1), t["errors"], int(failed.group(1)) if failed else 0))
    md = st.median
    print(f"{name:14} {md([x[0] for x in rows]):12,.0f} {md([x[1] for x in rows]):12,.0f} "
          f"{md([x[0]/x[1] for x in rows]):6.3f}  {md([x[2] for x in rows])/1e3:8.1f}us "
          f"{md([x[3] for x in rows])/1e3:8.1f}us {md([x[2]/x[3] for x in rows]):6.3f}  "
          f"{sum(x[4] for x in rows)}/{sum(x[5] for x in rows)}")
print(f"(medians over {rounds} rounds; ratios perflab/pgbench per round, then their median)")
PY
