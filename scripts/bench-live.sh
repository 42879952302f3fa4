#!/usr/bin/env bash
# What --metrics-listen costs: the null harness (1 and 2 threads) and perflab kv on Redis (GETs
# of 100-byte values, 50 connections on one thread, as scripts/bench-kv.sh runs it), each with
# the endpoint on and scraped every second by a throwaway Prometheus, against off, alternating.
# Each pair is judged by 'perflab compare' (its verdict per step: faster, slower, equivalent or
# inconclusive, from the runs' per-second intervals); the cost is acceptable when no verdict
# is "slower".
#   scripts/bench-live.sh [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-20}
if [ "$(id -u)" = 0 ] && { ! command -v prometheus >/dev/null || ! command -v redis-server >/dev/null; }; then
  apt-get install -y -qq prometheus redis-server >/dev/null
fi
for p in prometheus redis-server; do
  command -v "$p" >/dev/null || { echo "$p not found: apt-get install $p" >&2; exit 2; }
done
cargo build --release --quiet
PERFLAB=$PWD/target/release/perflab
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
MPORT=$(free_port); PPORT=$(free_port); RPORT=$(free_port)
cat >"$work/prometheus.yml" <<YML
global: { scrape_interval: 1s, scrape_timeout: 1s }
scrape_configs:
  - job_name: perflab
    static_configs: [ { targets: ['127.0.0.1:$MPORT'] } ]
YML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$PPORT" >"$work/prometheus.log" 2>&1 &
PROM=$!
redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  --dir "$work" >"$work/redis.log" 2>&1 &
REDIS=$!
trap 'kill $PROM $REDIS 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 1
RURL=redis://127.0.0.1:$RPORT/0
export PERFLAB_RESULTS=$work/results
"$PERFLAB" kv prepare --quiet --target "$RURL" --key-maximum 99999 --value-size 100

run() { # NAME ENDPOINT(on|off) ARGS...
  local name=$1 endpoint=$2; shift 2
  local extra=()
  [ "$endpoint" = on ] && extra=(--metrics-listen "127.0.0.1:$MPORT")
  "$PERFLAB" "$@" --quiet --progress off "${extra[@]}" --warmup 1s --duration "${SECS}s" \
    --interval 500ms >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  "$PERFLAB" tag last "$name-$endpoint" >/dev/null
}
NULL=(null --threads 1,2)
KV=(kv run --target "$RURL" --key-maximum 99999 --value-size 100 --ratio 0:1 --clients 50 --threads 1)
slower=0
for round in $(seq 1 "$ROUNDS"); do
  for w in null kv; do
    args=("${NULL[@]}"); [ $w = kv ] && args=("${KV[@]}")
    # Alternate which goes first, so a drift of the machine favours neither.
    if [ $((round % 2)) = 1 ]; then order=(off on); else order=(on off); fi
    for e in "${order[@]}"; do run "$w-$round" "$e" "${args[@]}"; done
    echo "== round $round, $w: endpoint on (scraped every second) against off"
    out=$("$PERFLAB" compare "$w-$round-off" "$w-$round-on" --noise 2%)
    echo "$out" | sed -n '/^step /,/comparisons;/p'
    # A verdict of its own, not the summary's count of them.
    if echo "$out" | grep -v "comparisons;" | grep -qw "slower"; then slower=$((slower + 1)); fi
  done
done
scrapes=$(curl -s "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode 'query=sum(sum_over_time(up{job="perflab"}[1h]))' | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(int(float(r[0]["value"][1])) if r else 0)' 2>/dev/null || echo "?")
echo "Prometheus scraped the endpoint $scrapes times; comparisons with a 'slower' verdict: $slower"
