#!/usr/bin/env bash
# perflab scan against each engine's own client timing the same query on the same table,
# alternating, and the native ceiling against perflab's memory read bandwidth; then loading
# against each engine's bulk tool on the same rows.
#
#   scripts/bench-scan.sh [ROUNDS] [SIZE] [PG_URL] [MYSQL_URL]
#
# Defaults: 5 rounds, 256m of row data per table, the local PostgreSQL and MariaDB
# (postgres://postgres@127.0.0.1/test?sslmode=disable, mysql://root@127.0.0.1/test). A server
# that does not answer is skipped with a line saying so.
#
# 1. Scan timing (goal: perflab's rows/s at least 0.98x the client's). Warm, one client,
#    trivial and complex predicates on the ten (10 B rows) and thousand (1 KB rows) tables,
#    which perflab prepares once per engine. Each round runs perflab (`scan run --ops 3`: three
#    timed scans after its untimed warming one) and the engine's client (the same query four
#    times, the first dropped as the warm-up): `sqlite3` with `.timer on` (Run Time: real),
#    `psql` with `\timing on`, `mariadb -vvv` (its "(N sec)"). rows/s = rows / time per scan.
#    Note: the sqlite3 shell is Debian's SQLite; perflab's is the bundled one (versions differ).
# 2. Native ceiling (goal: trivial at least 0.8x the read bandwidth): `perflab scan --target
#    native --predicate trivial` on the page and thousand tables against `perflab memory
#    --kernel read` over 1 GiB, one thread, alternating; MB/s of each.
# 3. Loading (goal: at least as fast as the bulk tool): `perflab scan prepare` of the thousand
#    table (wall time of the command: generation, ANALYZE and, for PostgreSQL, VACUUM included)
#    against loading the same rows from a CSV file: `sqlite3 .import`, `psql \copy`,
#    `LOAD DATA LOCAL INFILE` (mysqlimport's statement); MB/s of row data.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

ROUNDS=${1:-5}
SIZE=${2:-256m}
PG_URL=${3:-postgres://postgres@127.0.0.1/test?sslmode=disable}
MY_URL=${4:-mysql://root@127.0.0.1/test}

need() { command -v "$1" >/dev/null 2>&1; }
missing=()
need sqlite3 || missing+=(sqlite3)
need psql || missing+=(postgresql-client)
need mariadb || missing+=(mariadb-client)
need python3 || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && need apt-get; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "bench-scan: missing ${missing[*]}; apt-get install ${missing[*]}" >&2
    exit 2
  fi
fi
cargo build --release --quiet
PERFLAB=$PWD/target/release/perflab
work=$(mktemp -d)
results=$work/results
DB=$work/scan.db
cleanup() {
  "$PERFLAB" scan cleanup -q --target "$PG_URL" >/dev/null 2>&1 || true
  "$PERFLAB" scan cleanup -q --target "$MY_URL" >/dev/null 2>&1 || true
  psql -q "$PG_URL" -c 'DROP TABLE IF EXISTS bench_copy' >/dev/null 2>&1 || true
  mariadb $MY_ARGS -e 'DROP TABLE IF EXISTS bench_copy' >/dev/null 2>&1 || true
  rm -rf "$work"
}
# mysql://user@host/db as client arguments (no password in this default).
MY_ARGS=$(python3 -c '
import sys, urllib.parse as u
p = u.urlparse(sys.argv[1])
print(f"-h{p.hostname or \"127.0.0.1\"} -P{p.port or 3306} -u{p.username or \"root\"} {p.path.lstrip(\"/\")}")' "$MY_URL")
trap cleanup EXIT

TRIVIAL='SELECT count(*) FROM %s WHERE a = 0'
COMPLEX_SERVER='SELECT stddev_samp(sqrt(sin(a * pi()) * sin(a * pi()) + cos(a * pi()) * cos(a * pi())) - 1.0) FROM %s'
COMPLEX_SQLITE='SELECT sqrt((sum(x * x) - sum(x) * sum(x) / count(*)) / (count(*) - 1)) FROM (SELECT sqrt(sin(a * pi()) * sin(a * pi()) + cos(a * pi()) * cos(a * pi())) - 1.0 AS x FROM %s LIMIT -1)'

query() { # ENGINE PREDICATE TABLE
  local t="scan_$3"
  case "$2/$1" in
    trivial/*) printf "$TRIVIAL" "$t" ;;
    complex/sqlite) printf "$COMPLEX_SQLITE" "$t" ;;
    complex/*) printf "$COMPLEX_SERVER" "$t" ;;
  esac
}

# Seconds per scan, one per line, from the client's own timing of four runs (first dropped).
client_times() { # ENGINE PREDICATE TABLE
  local q; q=$(query "$@")
  case "$1" in
    sqlite)
      printf '.timer on\n%s;\n%s;\n%s;\n%s;\n' "$q" "$q" "$q" "$q" | sqlite3 "$DB" |
        sed -n 's/^Run Time: real \([0-9.]*\).*/\1/p' | tail -n +2 ;;
    postgres)
      psql -q "$PG_URL" -c '\timing on' -c "$q" -c "$q" -c "$q" -c "$q" |
        sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n +2 | awk '{ print $1 / 1000 }' ;;
    mysql)
      mariadb $MY_ARGS -vvv -e "$q; $q; $q; $q;" |
        sed -n 's/.*rows* in set[^(]*(\([0-9.]*\) sec).*/\1/p' | tail -n +2 ;;
  esac
}

target_of() {
  case "$1" in sqlite) echo "sqlite://$DB" ;; postgres) echo "$PG_URL" ;; mysql) echo "$MY_URL" ;; esac
}

engines=(sqlite)
if psql -q "$PG_URL" -c 'SELECT 1' >/dev/null 2>&1; then engines+=(postgres); else echo "bench-scan: no PostgreSQL at $PG_URL: skipped" >&2; fi
if mariadb $MY_ARGS -e 'SELECT 1' >/dev/null 2>&1; then engines+=(mysql); else echo "bench-scan: no MySQL at $MY_URL: skipped" >&2; fi

# --size in bytes (k, m, g: powers of 1024, as perflab reads them).
SIZE_BYTES=$(python3 -c "
import re, sys
m = re.fullmatch(r'(\d+)([kmgt]?)(i?b)?', sys.argv[1].lower())
print(int(m.group(1)) * 1024 ** ' kmgt'.index(m.group(2) or ' '))" "$SIZE")

echo "== 1. scan timing: perflab against the engine's own client ($ROUNDS rounds, $SIZE per table, warm, one client)"
: >"$work/scan.tsv"
for e in "${engines[@]}"; do
  "$PERFLAB" scan prepare -q --target "$(target_of "$e")" --table ten,thousand --size "$SIZE"
  for table in ten thousand; do
    rows=$(( SIZE_BYTES / $([ "$table" = ten ] && echo 10 || echo 1000) ))
    for p in trivial complex; do
      for r in $(seq 1 "$ROUNDS"); do
        run_perflab() {
          "$PERFLAB" scan run -q --json --results "$results" --target "$(target_of "$e")" \
            --table "$table" --predicate "$p" --cache warm --clients 1 --native off \
            --warmup 0s --ops 3 | python3 -c '
import json, sys
t = json.load(sys.stdin)["steps"][0]["trials"][0]
print(t["items_per_sec"])' >"$work/p"
        }
        run_client() {
          client_times "$e" "$p" "$table" | python3 -c "
import sys, statistics as st
v = [float(x) for x in sys.stdin.read().split()]
print($rows / st.mean(v) if v and st.mean(v) > 0 else 0)" >"$work/c"
        }
        if (( r % 2 )); then run_perflab; run_client; else run_client; run_perflab; fi
        printf '%s\t%s\t%s\t%s\t%s\n' "$e" "$table" "$p" "$(cat "$work/p")" "$(cat "$work/c")" >>"$work/scan.tsv"
      done
    done
  done
  [ "$e" = sqlite ] || "$PERFLAB" scan cleanup -q --target "$(target_of "$e")"
done
python3 - "$work/scan.tsv" <<'PY'
import sys, statistics as st
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
keys = []
for e, t, p, *_ in rows:
    if (e, t, p) not in keys:
        keys.append((e, t, p))
print(f"{'engine':9}{'table':10}{'predicate':10}{'perflab rows/s':>16}{'client rows/s':>16}{'ratio':>8}")
for k in keys:
    v = [(float(a), float(b)) for e, t, p, a, b in rows if (e, t, p) == k]
    pm, cm = st.median(x[0] for x in v), st.median(x[1] for x in v)
    ratio = st.median(a / b for a, b in v if b > 0)
    print(f"{k[0]:9}{k[1]:10}{k[2]:10}{pm:16,.0f}{cm:16,.0f}{ratio:8.3f}")
print("(medians over rounds; the ratio is the median of the per-round ratios; goal >= 0.98)")
PY

echo
echo "== 2. the native ceiling's trivial scan against perflab's memory read bandwidth (1 thread)"
: >"$work/native.tsv"
for r in $(seq 1 "$ROUNDS"); do
  nat() {
    "$PERFLAB" scan -q --json --results "$results" --target native --table page,thousand \
      --predicate trivial --threads 1 --size 1g --warmup 0s --duration 3s | python3 -c '
import json, sys
for s in json.load(sys.stdin)["steps"]:
    if s["params"]["predicate"] == "trivial":
        print(s["params"]["table"], s["trials"][0]["bytes_per_sec"])' >"$work/n"
  }
  mem() {
    "$PERFLAB" memory -q --json --results "$results" --kernel read --size 1g --threads 1 \
      --warmup 1s --duration 3s | python3 -c '
import json, sys
print(json.load(sys.stdin)["steps"][0]["trials"][0]["bytes_per_sec"])' >"$work/m"
  }
  if (( r % 2 )); then nat; mem; else mem; nat; fi
  while read -r table bps; do
    printf '%s\t%s\t%s\n' "$table" "$bps" "$(cat "$work/m")" >>"$work/native.tsv"
  done <"$work/n"
done
python3 - "$work/native.tsv" <<'PY'
import sys, statistics as st
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
for table in sorted({r[0] for r in rows}):
    v = [(float(a), float(b)) for t, a, b in rows if t == table]
    print(f"native trivial on {table}: {st.median(x[0] for x in v) / 1e9:.2f} GB/s, memory read "
          f"{st.median(x[1] for x in v) / 1e9:.2f} GB/s, ratio {st.median(a / b for a, b in v):.3f} (goal >= 0.8)")
PY

echo
echo "== 3. loading the thousand table ($SIZE of row data): perflab scan prepare against the bulk tool"
bytes=$(( SIZE_BYTES / 1000 * 1000 ))
secs() { python3 -c "import time; print(time.monotonic())"; }
for e in "${engines[@]}"; do
  target=$(target_of "$e")
  # The rows as CSV, from perflab's own table.
  "$PERFLAB" scan prepare -q --target "$target" --table thousand --size "$SIZE"
  csv=$work/thousand.csv
  case "$e" in
    sqlite) sqlite3 -csv "$DB" 'SELECT a, pad FROM scan_thousand' >"$csv" ;;
    postgres) psql -q "$PG_URL" -c "\\copy scan_thousand TO '$csv' WITH (FORMAT csv)" ;;
    mysql) mariadb $MY_ARGS -N -B -e 'SELECT a, pad FROM scan_thousand' | tr '\t' ',' >"$csv" ;;
  esac
  "$PERFLAB" scan cleanup -q --target "$target"
  : >"$work/load.tsv"
  for r in $(seq 1 "$ROUNDS"); do
    run_perflab() {
      local t0; t0=$(secs)
      "$PERFLAB" scan prepare -q --target "$target" --table thousand --size "$SIZE"
      python3 -c "print($(secs) - $t0)" >"$work/lp"
      "$PERFLAB" scan cleanup -q --target "$target"
    }
    run_tool() {
      local t0
      case "$e" in
        sqlite)
          rm -f "$work/bulk.db"
          t0=$(secs)
          printf 'CREATE TABLE bench_copy (a integer NOT NULL, pad varchar(996) NOT NULL);\n.import --csv %s bench_copy\n' "$csv" |
            sqlite3 "$work/bulk.db"
          python3 -c "print($(secs) - $t0)" >"$work/lt" ;;
        postgres)
          psql -q "$PG_URL" -c 'DROP TABLE IF EXISTS bench_copy' -c 'CREATE TABLE bench_copy (a integer NOT NULL, pad varchar(996) NOT NULL)'
          t0=$(secs)
          psql -q "$PG_URL" -c "\\copy bench_copy FROM '$csv' WITH (FORMAT csv)"
          python3 -c "print($(secs) - $t0)" >"$work/lt"
          psql -q "$PG_URL" -c 'DROP TABLE bench_copy' ;;
        mysql)
          mariadb $MY_ARGS -e 'DROP TABLE IF EXISTS bench_copy; CREATE TABLE bench_copy (a integer NOT NULL, pad varchar(996) NOT NULL)'
          t0=$(secs)
          mariadb $MY_ARGS --local-infile=1 -e "LOAD DATA LOCAL INFILE '$csv' INTO TABLE bench_copy FIELDS TERMINATED BY ','"
          python3 -c "print($(secs) - $t0)" >"$work/lt"
          mariadb $MY_ARGS -e 'DROP TABLE bench_copy' ;;
      esac
    }
    if (( r % 2 )); then run_perflab; run_tool; else run_tool; run_perflab; fi
    printf '%s\t%s\n' "$(cat "$work/lp")" "$(cat "$work/lt")" >>"$work/load.tsv"
  done
  python3 - "$work/load.tsv" "$e" "$bytes" <<'PY'
import sys, statistics as st
v = [tuple(map(float, l.split())) for l in open(sys.argv[1]).read().splitlines()]
b = int(sys.argv[3])
p, t = st.median(x[0] for x in v), st.median(x[1] for x in v)
tool = {"sqlite": "sqlite3 .import", "postgres": "psql \\copy", "mysql": "LOAD DATA LOCAL INFILE"}[sys.argv[2]]
print(f"{sys.argv[2]:9} perflab prepare {p:6.2f} s ({b / p / 1e6:6.1f} MB/s)   {tool} {t:6.2f} s ({b / t / 1e6:6.1f} MB/s)   ratio {t / p:.2f}x (goal >= 1)")
PY
done
