#!/usr/bin/env bash
# The shared store at scale: a throwaway PostgreSQL filled with 100,000 runs, then, each
# measured ROUNDS times (the median printed), alternating with the peer doing the same work
# (psql running the same query, the floor any client can reach):
#   - 'perflab runs' (the newest 50)                          goal < 0.5 s
#   - serve's pages: the runs page (newest 1000), a run's report, its run.json, a compare of
#     two runs, the landscape (newest 200), as curl fetches them   goal < 200 ms each
#   - 'perflab trend' over 10,000 runs                        goal < 1 s
# The runs are made by perflab (a few real null runs, sent as every run is), then cloned in
# SQL with other ids, hosts, times, commits and figures: what matters at this scale is the
# number of rows and their indexes, not 100,000 distinct measurements.
#   scripts/bench-shared.sh [ROWS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-100000}
ROUNDS=${2:-5}
PERFLAB=${PERFLAB:-$PWD/target/release/perflab}
[ -x "$PERFLAB" ] || cargo build --release --quiet
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || bin=$(dirname "$(command -v initdb)")
work=$(mktemp -d)
as=()
if [ "$(id -u)" = 0 ]; then chown postgres "$work"; as=(runuser -u postgres --); fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${as[@]}" "$bin/initdb" -D "$work/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >/dev/null
"${as[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w \
  -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$work" start >/dev/null
trap '"${as[@]}" "$bin/pg_ctl" -D "$work/data" -m fast stop >/dev/null 2>&1 || true; kill $SERVE 2>/dev/null || true; rm -rf "$work"' EXIT
SERVE=
URL=postgres://postgres@127.0.0.1:$port/postgres
export PERFLAB_RESULTS=$work/results PERFLAB_SHARED=$URL
q() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$URL" -c "$1"; }

"$PERFLAB" shared init >/dev/null
for c in a b c; do
  "$PERFLAB" null --duration 200ms --warmup 0s --repeat 3 --label branch=main --label commit=$c -q >/dev/null
done
echo "== filling the store with $ROWS runs (clones of $(q 'SELECT count(*) FROM perflab_runs') real ones)"
start=$(date +%s)
# The templates are read once, into a temporary table: a scan of perflab_runs per new row
# would read every row this statement has inserted so far (quadratic).
q "
CREATE TEMP TABLE template AS
  SELECT *, (row_number() OVER (ORDER BY id) - 1)::int AS k FROM perflab_runs;
INSERT INTO perflab_runs (id, host, machine, started_at, status, workload, target, suite, steps,
  headline_metric, peak_value, command, settings, record, labels, headline_mean, headline_low,
  headline_high, headline_n, higher_is_better)
SELECT id, host, machine, started_at, status, workload, target, suite, steps, headline_metric,
  peak_value * f, command, settings, jsonb_set(record, '{id}', to_jsonb(id)),
  jsonb_build_object('branch', 'main', 'commit', 'c' || (g / 10)), headline_mean * f,
  headline_low * f, headline_high * f, headline_n, higher_is_better
FROM (
  SELECT to_char(now() - (g || ' minutes')::interval, 'YYYYMMDD-HH24MISS') || '-' || lpad(to_hex(g % 65536), 4, '0') || '-' || g AS id,
         'host' || (g % 20) AS host, t.machine, now() - (g || ' minutes')::interval AS started_at,
         t.status, t.workload, t.target, t.suite, t.steps, t.headline_metric, t.peak_value,
         t.command, t.settings, t.record, t.headline_mean, t.headline_low, t.headline_high,
         t.headline_n, t.higher_is_better, g, 1 + 0.05 * sin(g) AS f
  FROM generate_series(1, $ROWS - 3) g
  JOIN template t ON t.k = g % 3
) s;
ANALYZE perflab_runs;"
echo "   $(q 'SELECT count(*) FROM perflab_runs') runs, $(q "SELECT pg_size_pretty(pg_total_relation_size('perflab_runs'))") on disk, in $(( $(date +%s) - start )) s"

ms() { # the wall time of a command in ms
  local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 ))
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
report() { # NAME GOAL_MS PERFLAB_MS... -- PEER_MS...
  local name=$1 goal=$2; shift 2
  local ours=() peer=()
  while [ "$1" != -- ]; do ours+=("$1"); shift; done; shift
  peer=("$@")
  local m p; m=$(median "${ours[@]}"); p=$(median "${peer[@]:-0}")
  local ratio=-; [ "${p:-0}" -gt 0 ] && ratio=$(awk -v a="$m" -v b="$p" 'BEGIN{printf "%.1f", a/b}')
  [ "${p:-0}" -gt 0 ] || p=-
  local verdict=met; [ "$m" -ge "$goal" ] && verdict=MISSED
  printf '%-34s perflab %5d ms   peer (psql) %5s ms   ratio %5s   goal < %d ms: %s\n' \
    "$name" "$m" "${p:-}" "$ratio" "$goal" "$verdict"
}

echo "== perflab runs (newest 50) against psql's SELECT of the same 50 rows, $ROUNDS rounds"
ours=(); peer=()
for _ in $(seq "$ROUNDS"); do
  ours+=("$(ms "$PERFLAB" runs)")
  peer+=("$(ms psql -X -q -d "$URL" -c "SELECT id, started_at, status, workload, target, suite, steps, headline_metric, peak_value, command, host, machine, settings FROM perflab_runs ORDER BY started_at DESC, id DESC LIMIT 50")")
done
report "runs (newest 50 of $ROWS)" 500 "${ours[@]}" -- "${peer[@]}"

echo "== perflab trend over 10,000 runs against psql's SELECT of their figures"
ours=(); peer=()
for _ in $(seq "$ROUNDS"); do
  ours+=("$(ms "$PERFLAB" trend ops_per_sec --newest 10000)")
  peer+=("$(ms psql -X -q -d "$URL" -c "SELECT id, started_at, host, workload, headline_metric, headline_mean, headline_low, headline_high, headline_n, higher_is_better, labels FROM perflab_runs WHERE headline_metric = 'ops_per_sec' AND labels @> '{}' ORDER BY started_at DESC, id DESC LIMIT 10000")")
done
report "trend (10,000 runs, one per point)" 1000 "${ours[@]}" -- "${peer[@]}"
ours=(); peer=()
for _ in $(seq "$ROUNDS"); do
  ours+=("$(ms "$PERFLAB" trend ops_per_sec --newest 10000 --where branch=main --by commit)")
  peer+=("$(ms psql -X -q -d "$URL" -c "SELECT labels ->> 'commit', avg(headline_mean), count(*) FROM (SELECT * FROM perflab_runs WHERE headline_metric = 'ops_per_sec' AND labels @> '{\"branch\": \"main\"}' ORDER BY started_at DESC LIMIT 10000) r GROUP BY 1")")
done
report "trend (10,000 runs, --by commit)" 1000 "${ours[@]}" -- "${peer[@]}"

echo "== serve over the store: each page fetched by curl (the first fetch of each warms it)"
"$PERFLAB" serve --listen 127.0.0.1:0 >"$work/serve.out" 2>&1 &
SERVE=$!
for _ in $(seq 50); do grep -q http:// "$work/serve.out" && break; sleep 0.1; done
base=$(grep -o 'http://[^/]*' "$work/serve.out" | head -1)
a=$(q "SELECT id FROM perflab_runs ORDER BY started_at DESC LIMIT 1")
b=$(q "SELECT id FROM perflab_runs ORDER BY started_at DESC LIMIT 1 OFFSET 1")
for page in "/" "/runs/$a" "/runs/$a/run.json" "/compare?runs=$a,$b" "/landscape"; do
  curl -sf -o /dev/null "$base$page"
  ours=()
  for _ in $(seq "$ROUNDS"); do ours+=("$(ms curl -sf -o /dev/null "$base$page")"); done
  report "serve $page" 200 "${ours[@]}" -- 0
done
