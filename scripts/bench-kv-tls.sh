#!/usr/bin/env bash
# perflab kv against redis-benchmark over TLS (rediss://, redis-benchmark --tls --insecure), on
# the same throwaway redis-server, alternating.
#   scripts/bench-kv-tls.sh [ROUNDS] [SECONDS]
# GET of 100-byte values, 50 connections, pipeline 1 and 16, one client thread each; both key
# sets are loaded first, so every GET of either client hits. The server has a self-signed
# certificate and asks for no client certificate; neither client verifies the server's.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-3}
need() { command -v "$1" >/dev/null || { echo "$1 not found: apt-get install $2" >&2; exit 2; }; }
if [ "$(id -u)" = 0 ] && ! command -v redis-benchmark >/dev/null; then
  apt-get install -y -qq redis-server redis-tools openssl >/dev/null
fi
need redis-server redis-server; need redis-benchmark redis-tools; need openssl openssl
cargo build --release --quiet
PERFLAB=$PWD/target/release/perflab
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
  -keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1
PORT=$(free_port); TPORT=$(free_port)
redis-server --port "$PORT" --tls-port "$TPORT" --tls-cert-file "$work/cert.pem" \
  --tls-key-file "$work/key.pem" --tls-auth-clients no --bind 127.0.0.1 --save '' \
  --appendonly no --daemonize no --dir "$work" >"$work/redis.log" 2>&1 &
RPID=$!
trap 'kill $RPID 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 0.5
URL=rediss://127.0.0.1:$TPORT/0
"$PERFLAB" kv prepare --quiet --target "$URL" --insecure --key-maximum 99999 --value-size 100
redis-benchmark -p "$PORT" -c 50 -P 16 -d 100 -r 100000 -n 2000000 -t set -q >/dev/null

cpu_of() { /usr/bin/time -f "%U %S" -o "$1" "${@:2}"; }
for round in $(seq 1 "$ROUNDS"); do
  for p in 1 16; do
    tag="tls.$p.$round"
    run_perflab() {
      cpu_of "$work/perflab.$tag.cpu" "$PERFLAB" kv run --quiet --json --results "$work/res" \
        --target "$URL" --insecure --key-maximum 99999 --value-size 100 --ratio 0:1 \
        --clients 50 --threads 1 --pipeline "$p" --warmup 0s --duration "${SECS}s" \
        >"$work/perflab.$tag.json"
    }
    run_peer() {
      n=$(( p == 1 ? 50000 * SECS : 300000 * SECS ))
      cpu_of "$work/peer.$tag.cpu" redis-benchmark -p "$TPORT" --tls --insecure -c 50 \
        -P "$p" -d 100 -r 100000 -n "$n" -t get -q >"$work/peer.$tag.txt"
    }
    if (( round % 2 )); then run_perflab; run_peer; else run_peer; run_perflab; fi
  done
done

python3 - "$work" "$ROUNDS" "$SECS" <<'PY'
import json, re, sys, statistics as st
work, rounds, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
def cpu(path):
    u, s = map(float, open(path).read().split()[-2:])
    return u + s
print(f"{'test':22} {'perflab/s':>10} {'peer/s':>10} {'ratio':>6}  {'CPU/req p':>9} {'CPU/req q':>9} {'ratio':>6}")
for p in [1, 16]:
    rs = []
    for r in range(1, rounds + 1):
        t = json.load(open(f"{work}/perflab.tls.{p}.{r}.json"))["steps"][0]["trials"][0]
        p_cpu = cpu(f"{work}/perflab.tls.{p}.{r}.cpu") / max(t["ops"], 1)
        text = open(f"{work}/peer.tls.{p}.{r}.txt").read()
        q_rate = float(re.findall(r"([0-9.]+) requests per second", text)[-1])
        q_ops = (50000 if p == 1 else 300000) * secs
        q_cpu = cpu(f"{work}/peer.tls.{p}.{r}.cpu") / q_ops
        rs.append((t["ops_per_sec"], q_rate, p_cpu, q_cpu))
    md = st.median
    print(f"{'rediss GET -P ' + str(p):22} {md([x[0] for x in rs]):10,.0f} {md([x[1] for x in rs]):10,.0f} "
          f"{md([x[0]/x[1] for x in rs]):6.3f}  {md([x[2] for x in rs])*1e6:7.2f}us "
          f"{md([x[3] for x in rs])*1e6:7.2f}us {md([x[2]/x[3] for x in rs]):6.3f}")
print(f"(medians over {rounds} rounds; ratios perflab/peer per round, then their median; CPU is")
print(" user + system of the whole client process over its whole run, per request it completed)")
PY
