#!/usr/bin/env bash
# perflab's OLAP load phase against each engine's own bulk loading tool, on the same flat files,
# alternating which goes first, and the ratio of their rows/s.
#
#   scripts/bench-olap.sh [ROUNDS] [ROWS] [PG_URL] [MYSQL_URL]
#
# Defaults: 3 rounds, 2m sales rows in 8 fact files (FILES=8), LOADERS=$(nproc) parallel loaders,
# SQLite in a temporary file, the local PostgreSQL and MariaDB
# (postgres://postgres@127.0.0.1/test?sslmode=disable, mysql://root@127.0.0.1/test; a password in
# the MySQL URL is passed as MYSQL_PWD). A server that does not answer is skipped with a line
# saying so. PERFLAB names the binary (default target/release/perflab: build it first; this
# script does not run cargo).
#
# Goal: perflab's load at least 1.0x the bulk tool's rows/s (rows: the sales and the three
# dimensions).
#
# perflab: `olap prepare --files-dir DIR --json` writes the flat files (date.tsv, product.tsv,
# store.tsv, sales-NNNN.tsv; tab-separated, no header), creates the tables, then times its load
# step: LOADERS connections take the files in turn (dimensions first) through the engine's bulk
# path (PostgreSQL COPY FROM STDIN, MySQL LOAD DATA LOCAL INFILE, SQLite one transaction of
# prepared inserts per file), then one ANALYZE of the four tables. Its figure is that step's
# elapsed_ns (the file writing and the aggregate step that follow are not in it).
#
# The bulk tool, on the same files into perflab's tables (emptied first, untimed; the summary
# tables of perflab's aggregate step are left alone), timed by the wall clock over the client
# commands, the same ANALYZE included, the same LOADERS in parallel (`xargs -P`, one client
# process per file, in perflab's order):
#   - PostgreSQL: `psql -c "\copy TABLE (cols) FROM 'file'"` (the text format: tabs), then
#     `ANALYZE` of the four tables. A CHECKPOINT (untimed) before each side's load, so neither
#     pays for writing out the other's pages.
#   - MariaDB/MySQL: `mariadb --local-infile=1 -e "LOAD DATA LOCAL INFILE 'file' INTO TABLE ...
#     FIELDS TERMINATED BY '\t' (cols)"` (mysqlimport's statement, through the mariadb client:
#     mysqlimport names the table after the file), then `ANALYZE TABLE` of the four.
#   - SQLite: one `sqlite3` process importing the files in sequence (`.mode tabs`, `.import
#     FILE TABLE`: one transaction per file), then `ANALYZE` of each table. SQLite has one
#     writer, so parallel importers would only queue for its lock (perflab's loaders overlap
#     reading and parsing their files, not the inserts). The shell runs with perflab's settings
#     (the file is already in WAL mode; PRAGMA synchronous = NORMAL). The tables are emptied
#     with DELETE, then VACUUM and a WAL checkpoint, so the import starts, as perflab's load
#     does, from a compact file and an empty log. Note: the sqlite3 shell is Debian's SQLite;
#     perflab's is the bundled one (versions differ).
# After the tool's load the script checks the tables hold as many rows as perflab loaded.
#
# Alternation: odd rounds run perflab first, then the tool on the files it wrote; even rounds run
# the tool first, on the previous round's files and tables (same seed: the same rows), then
# perflab on a new files directory (and, for SQLite, a new database file). Then `perflab olap
# cleanup` and the files are removed.
set -euo pipefail
export LC_ALL=C

ROUNDS=${1:-3}
ROWS=${2:-2m}
PG_URL=${3:-postgres://postgres@127.0.0.1/test?sslmode=disable}
MY_URL=${4:-mysql://root@127.0.0.1/test}
FILES=${FILES:-8}
LOADERS=${LOADERS:-$(nproc)}
# A relative PERFLAB given by the caller is relative to the caller's directory.
if [ -n "${PERFLAB:-}" ] && [[ $PERFLAB == */* && $PERFLAB != /* ]]; then PERFLAB=$PWD/$PERFLAB; fi
cd "$(dirname "$0")/.."
PERFLAB=${PERFLAB:-$PWD/target/release/perflab}

need() { command -v "$1" >/dev/null 2>&1; }
missing=()
need sqlite3 || missing+=(sqlite3)
need psql || missing+=(postgresql-client)
need mariadb || missing+=(mariadb-client)
need python3 || missing+=(python3)
need xargs || missing+=(findutils)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && need apt-get; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "bench-olap: missing ${missing[*]}; apt-get install ${missing[*]}" >&2
    exit 2
  fi
fi
if ! [ -x "$PERFLAB" ] && ! need "$PERFLAB"; then
  echo "bench-olap: no perflab at $PERFLAB; cargo build --release, or set PERFLAB" >&2
  exit 2
fi
for n in "$ROUNDS" "$FILES" "$LOADERS"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench-olap: ROUNDS, FILES and LOADERS are counts (got $n)" >&2; exit 2; }
done

# mysql://user[:password]@host[:port]/db as the client's connection (exported for the loaders).
eval "$(python3 - "$MY_URL" <<'PY'
import shlex, sys, urllib.parse as u
p = u.urlparse(sys.argv[1])
v = {"MY_HOST": p.hostname or "127.0.0.1", "MY_PORT": str(p.port or 3306),
     "MY_USER": u.unquote(p.username or "root"), "MY_DB": p.path.lstrip("/") or "test"}
for k, x in v.items():
    print(f"export {k}={shlex.quote(x)}")
if p.password is not None:
    print(f"export MYSQL_PWD={shlex.quote(u.unquote(p.password))}")
PY
)"
export PG_URL
my() { mariadb -h"$MY_HOST" -P"$MY_PORT" -u"$MY_USER" "$MY_DB" "$@"; }
pg() { psql -X -q -v ON_ERROR_STOP=1 "$PG_URL" "$@"; }
export -f my pg

# URLs for messages, without a password.
shown() { sed -E 's#(://[^:/@]*):[^@]*@#\1:***@#' <<<"$1"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-olap.XXXXXX")
results=$work/results
engines=()
cleanup() {
  local e
  for e in "${engines[@]}"; do
    case $e in
      postgres) "$PERFLAB" olap cleanup -q --target "$PG_URL" >/dev/null 2>&1 || true ;;
      mysql) "$PERFLAB" olap cleanup -q --target "$MY_URL" >/dev/null 2>&1 || true ;;
    esac
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

engines=(sqlite)
if pg -c 'SELECT 1' >/dev/null 2>&1; then engines+=(postgres); else echo "bench-olap: no PostgreSQL at $(shown "$PG_URL"): skipped" >&2; fi
if ! my -e 'SELECT 1' >/dev/null 2>&1; then
  echo "bench-olap: no MySQL at $(shown "$MY_URL"): skipped" >&2
elif [ "$(my -N -B -e 'SELECT @@local_infile' 2>/dev/null)" != 1 ]; then
  echo "bench-olap: MySQL at $(shown "$MY_URL") refuses LOAD DATA LOCAL INFILE (SET GLOBAL local_infile = 1): skipped" >&2
else
  engines+=(mysql)
fi

TABLES="olap_date, olap_product, olap_store, olap_sales"
COUNT_SQL="SELECT (SELECT count(*) FROM olap_date) + (SELECT count(*) FROM olap_product) + (SELECT count(*) FROM olap_store) + (SELECT count(*) FROM olap_sales)"

# The flat files of DIR in perflab's order: the dimensions, then the facts.
files_of() {
  printf '%s\n' "$1/date.tsv" "$1/product.tsv" "$1/store.tsv"
  find "$1" -maxdepth 1 -name 'sales-*.tsv' | sort
}

# One file through a server's client (run by xargs, one process per file).
load_one() { # ENGINE FILE
  local t cols
  case ${2##*/} in
    date.tsv) t=olap_date cols="date_id, year, quarter, month, day" ;;
    product.tsv) t=olap_product cols="product_id, category_id, brand_id, price, name" ;;
    store.tsv) t=olap_store cols="store_id, region_id, city_id, name" ;;
    sales-*.tsv) t=olap_sales cols="sale_id, date_id, product_id, store_id, quantity, amount" ;;
    *) echo "bench-olap: not a flat file: $2" >&2; return 1 ;;
  esac
  case $1 in
    postgres) pg -c "\\copy $t ($cols) FROM '$2'" >/dev/null ;;
    mysql) my --local-infile=1 -e "LOAD DATA LOCAL INFILE '$2' INTO TABLE $t FIELDS TERMINATED BY '\\t' LINES TERMINATED BY '\\n' ($cols)" ;;
  esac
}
export -f load_one

now() { date +%s.%N; }

db_of() { echo "$work/olap-$1.db"; } # ROUND: SQLite's file for perflab's run of that round
target_of() { # ENGINE ROUND
  case $1 in sqlite) echo "sqlite://$(db_of "$2")" ;; postgres) echo "$PG_URL" ;; mysql) echo "$MY_URL" ;; esac
}

checkpoint() { # ENGINE: untimed, before a timed load
  [ "$1" = postgres ] && { pg -c CHECKPOINT >/dev/null 2>&1 || true; }
  return 0
}

# perflab's prepare of ENGINE in round R into the new directory DIR; prints "seconds rows".
run_perflab() { # ENGINE R DIR
  checkpoint "$1"
  "$PERFLAB" olap prepare -q --json --results "$results" --target "$(target_of "$1" "$2")" \
    --rows "$ROWS" --files "$FILES" --loaders "$LOADERS" --files-dir "$3" >"$work/run.json"
  python3 - "$work/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
load = [s for s in r["steps"] if s["params"].get("phase") == "load"]
if not load:
    sys.exit("bench-olap: perflab's record has no load step")
s = load[0]
for c in s.get("checks", []):
    if not c["passed"]:
        sys.exit(f"bench-olap: perflab's load check failed: {c['summary']}")
t = s["trials"][0]
if t.get("errors"):
    sys.exit(f"bench-olap: perflab's load had {t['errors']} errors")
print(t["elapsed_ns"] / 1e9, t["items"])
PY
}

# The engine's own tool: empty perflab's tables (untimed), load the files of DIR, ANALYZE;
# prints "seconds rows".
run_tool() { # ENGINE R DIR  (R: the round whose perflab run made the tables)
  local t0 t1 rows
  case $1 in
    sqlite)
      local db; db=$(db_of "$2")
      sqlite3 -bail "$db" >/dev/null <<SQL
DELETE FROM olap_date; DELETE FROM olap_product; DELETE FROM olap_store; DELETE FROM olap_sales;
VACUUM;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
      {
        printf '.bail on\nPRAGMA synchronous = NORMAL;\n.mode tabs\n'
        files_of "$3" | while read -r f; do
          case ${f##*/} in date.tsv) t=olap_date ;; product.tsv) t=olap_product ;; store.tsv) t=olap_store ;; *) t=olap_sales ;; esac
          printf '.import "%s" %s\n' "$f" "$t"
        done
        printf 'ANALYZE olap_date;\nANALYZE olap_product;\nANALYZE olap_store;\nANALYZE olap_sales;\n'
      } >"$work/import.sql"
      t0=$(now)
      sqlite3 "$db" <"$work/import.sql" >/dev/null
      t1=$(now)
      rows=$(sqlite3 "$db" "$COUNT_SQL") ;;
    postgres)
      pg -c "TRUNCATE TABLE $TABLES" >/dev/null
      checkpoint postgres
      t0=$(now)
      files_of "$3" | xargs -d '\n' -P "$LOADERS" -n 1 bash -c 'load_one postgres "$1"' _
      pg -c "ANALYZE $TABLES" >/dev/null
      t1=$(now)
      rows=$(pg -At -c "$COUNT_SQL") ;;
    mysql)
      my -e "TRUNCATE TABLE olap_date; TRUNCATE TABLE olap_product; TRUNCATE TABLE olap_store; TRUNCATE TABLE olap_sales"
      t0=$(now)
      files_of "$3" | xargs -d '\n' -P "$LOADERS" -n 1 bash -c 'load_one mysql "$1"' _
      my -e "ANALYZE TABLE $TABLES" >/dev/null
      t1=$(now)
      rows=$(my -N -B -e "$COUNT_SQL") ;;
  esac
  python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]), sys.argv[3])" "$t0" "$t1" "$rows"
}

finish() { # ENGINE R DIR: drop perflab's tables, remove the files (and SQLite's database)
  "$PERFLAB" olap cleanup -q --target "$(target_of "$1" "$2")" >/dev/null
  rm -rf "$3"
  [ "$1" = sqlite ] && rm -f "$(db_of "$2")" "$(db_of "$2")-wal" "$(db_of "$2")-shm"
  return 0
}

tool_name() {
  case $1 in sqlite) echo 'sqlite3 .import' ;; postgres) echo 'psql \copy' ;; mysql) echo 'LOAD DATA' ;; esac
}

echo "== olap load: perflab against the bulk tool ($ROUNDS rounds, $ROWS sales rows in $FILES files, $LOADERS loaders; SQLite's tool: one importer)"
: >"$work/load.tsv"
for r in $(seq 1 "$ROUNDS"); do
  for e in "${engines[@]}"; do
    dir=$work/files-$e-$r
    if (( r % 2 )); then
      first=perflab
      read -r ps prows < <(run_perflab "$e" "$r" "$dir")
      read -r ts trows < <(run_tool "$e" "$r" "$dir")
    else
      # The previous round's files and tables (kept for this), then perflab afresh.
      first=tool
      prev=$work/files-$e-$((r - 1))
      read -r ts trows < <(run_tool "$e" "$((r - 1))" "$prev")
      finish "$e" "$((r - 1))" "$prev"
      read -r ps prows < <(run_perflab "$e" "$r" "$dir")
    fi
    if [ -z "${ps:-}" ] || [ -z "${ts:-}" ]; then
      echo "bench-olap: $e round $r: a load failed (see above)" >&2
      exit 1
    fi
    if [ "$trows" != "$prows" ]; then
      echo "bench-olap: $e round $r: $(tool_name "$e") left $trows rows, perflab loaded $prows" >&2
      exit 1
    fi
    # Keep this round's files and tables for the next round's tool-first run.
    if (( r % 2 == 0 || r == ROUNDS )); then finish "$e" "$r" "$dir"; fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$e" "$first" "$ps" "$ts" "$prows" >>"$work/load.tsv"
    python3 - "$r" "$e" "$first" "$ps" "$ts" "$prows" "$(tool_name "$e")" <<'PY'
import sys
r, e, first, ps, ts, rows, tool = sys.argv[1:]
ps, ts, rows = float(ps), float(ts), int(rows)
print(f"round {r:>2} {e:9}{first + ' first':14}perflab {ps:7.3f} s {rows / ps:13,.0f} rows/s   "
      f"{tool:16}{ts:7.3f} s {rows / ts:13,.0f} rows/s   ratio {ts / ps:5.2f}")
PY
    unset ps ts
  done
done

echo
python3 - "$work/load.tsv" <<'PY'
import sys, statistics as st
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
for e in dict.fromkeys(x[1] for x in rows):
    v = [(float(p), float(t), int(n)) for _, en, _, p, t, n in rows if en == e]
    pm, tm = st.median(x[0] for x in v), st.median(x[1] for x in v)
    ratio = st.median(t / p for p, t, _ in v)  # rows/s perflab / rows/s tool
    n = v[0][2]
    print(f"{e:9} median: perflab {pm:7.3f} s ({n / pm:13,.0f} rows/s), tool {tm:7.3f} s "
          f"({n / tm:13,.0f} rows/s), ratio perflab/tool {ratio:.2f}x")
    print(f"{e:9} goal: perflab load at least 1.0x the bulk tool")
PY
