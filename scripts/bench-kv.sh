#!/usr/bin/env bash
# perflab kv against redis-benchmark and memcaslap, on the same throwaway servers, alternating.
#   scripts/bench-kv.sh [ROUNDS] [SECONDS]
# Redis: GET and SET of 100-byte values, 50 connections, pipeline 1 and 16, one client thread
# each (redis-benchmark's default), keys drawn uniformly from 100,000 (-r 100000); both key sets
# are loaded first, so every GET of either client hits.
# memcached: 90% gets / 10% sets of 100-byte values, 50 connections over 2 threads, memcached -t 2
# (memcaslap's defaults are 90/10; its key space is its own, perflab's is 100,000 keys).
# Prints requests/s, client CPU per request (user + system of the client process) and ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-5}
need() { command -v "$1" >/dev/null || { echo "$1 not found: apt-get install $2" >&2; exit 2; }; }
if [ "$(id -u)" = 0 ] && ! command -v memcaslap >/dev/null; then
  apt-get install -y -qq redis-server redis-tools memcached libmemcached-tools >/dev/null
fi
need redis-server redis-server; need redis-benchmark redis-tools
need memcached memcached; need memcaslap libmemcached-tools
cargo build --release --quiet
PERFLAB=$PWD/target/release/perflab
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
RPORT=$(free_port); MPORT=$(free_port)
redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  --dir "$work" >"$work/redis.log" 2>&1 &
RPID=$!
user=(); [ "$(id -u)" = 0 ] && user=(-u nobody)
memcached -l 127.0.0.1 -p "$MPORT" -U 0 -t 2 -m 1024 -c 4096 "${user[@]}" &
MPID=$!
trap 'kill $RPID $MPID 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 0.5
RURL=redis://127.0.0.1:$RPORT/0
MURL=memcached://127.0.0.1:$MPORT
"$PERFLAB" kv prepare --quiet --target "$RURL" --key-maximum 99999 --value-size 100
"$PERFLAB" kv prepare --quiet --target "$MURL" --key-maximum 99999 --value-size 100
# redis-benchmark's keys are its own (key:000000012345): fill them too, so its GETs hit and
# return 100 bytes as perflab's do (a miss is a cheaper request for the server).
redis-benchmark -p "$RPORT" -c 50 -P 16 -d 100 -r 100000 -n 2000000 -t set -q >/dev/null

cpu_of() { /usr/bin/time -f "%U %S" -o "$1" "${@:2}"; }
for round in $(seq 1 "$ROUNDS"); do
  for p in 1 16; do
    for cmd in get set; do
      ratio=0:1; [ "$cmd" = set ] && ratio=1:0
      tag="redis.$cmd.$p.$round"
      run_perflab() {
        cpu_of "$work/perflab.$tag.cpu" "$PERFLAB" kv run --quiet --json --results "$work/res" \
          --target "$RURL" --key-maximum 99999 --value-size 100 --ratio "$ratio" \
          --clients 50 --threads 1 --pipeline "$p" --warmup 0s --duration "${SECS}s" \
          >"$work/perflab.$tag.json"
      }
      run_peer() {
        # -n sized for about SECS seconds at the rates seen here.
        n=$(( p == 1 ? 100000 * SECS : 800000 * SECS ))
        cpu_of "$work/peer.$tag.cpu" redis-benchmark -p "$RPORT" -c 50 -P "$p" -d 100 \
          -r 100000 -n "$n" -t "$cmd" -q >"$work/peer.$tag.txt"
      }
      if (( round % 2 )); then run_perflab; run_peer; else run_peer; run_perflab; fi
    done
  done
  tag="mc.mix.1.$round"
  run_perflab() {
    cpu_of "$work/perflab.$tag.cpu" "$PERFLAB" kv run --quiet --json --results "$work/res" \
      --target "$MURL" --key-maximum 99999 --value-size 100 --ratio 1:9 \
      --clients 50 --threads 2 --warmup 0s --duration "${SECS}s" >"$work/perflab.$tag.json"
  }
  run_peer() {
    cpu_of "$work/peer.$tag.cpu" memcaslap -s "127.0.0.1:$MPORT" -c 50 -T 2 -t "${SECS}s" \
      -X 100 >"$work/peer.$tag.txt" 2>&1
  }
  if (( round % 2 )); then run_perflab; run_peer; else run_peer; run_perflab; fi
done

python3 - "$work" "$ROUNDS" "$SECS" <<'PY'
import json, re, sys, statistics as st
work, rounds, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
def cpu(path):
    u, s = map(float, open(path).read().split()[-2:])
    return u + s
print(f"{'test':22} {'perflab/s':>10} {'peer/s':>10} {'ratio':>6}  {'CPU/req p':>9} {'CPU/req q':>9} {'ratio':>6}")
def row(name, tag, peer_rate):
    rs = []
    for r in range(1, rounds + 1):
        t = json.load(open(f"{work}/perflab.{tag}.{r}.json"))["steps"][0]["trials"][0]
        p_rate = t["ops_per_sec"]
        p_cpu = cpu(f"{work}/perflab.{tag}.{r}.cpu") / max(t["ops"], 1)
        q_rate, q_ops = peer_rate(open(f"{work}/peer.{tag}.{r}.txt").read())
        q_cpu = cpu(f"{work}/peer.{tag}.{r}.cpu") / max(q_ops, 1)
        rs.append((p_rate, q_rate, p_cpu, q_cpu))
    md = st.median
    print(f"{name:22} {md([x[0] for x in rs]):10,.0f} {md([x[1] for x in rs]):10,.0f} "
          f"{md([x[0]/x[1] for x in rs]):6.3f}  {md([x[2] for x in rs])*1e6:7.2f}us "
          f"{md([x[3] for x in rs])*1e6:7.2f}us {md([x[2]/x[3] for x in rs]):6.3f}")
for p in [1, 16]:
    for cmd in ["get", "set"]:
        def peer(text, p=p):
            rate = float(re.findall(r"([0-9.]+) requests per second", text)[-1])
            n = 100000 * secs if p == 1 else 800000 * secs
            return rate, n
        row(f"redis {cmd.upper()} -P {p}", f"redis.{cmd}.{p}", peer)
def mc(text):
    # memcaslap's final summary: "Run time: 5.0s Ops: 612345 TPS: 122469 Net_rate: ..."
    m = re.findall(r"Run time: ([0-9.]+)s Ops: (\d+) TPS: (\d+)", text)
    t, ops, tps = m[-1]
    return float(tps), float(ops)
row("memcached 90/10 c50", "mc.mix.1", mc)
print(f"(medians over {rounds} rounds; ratios perflab/peer per round, then their median; CPU is")
print(" user + system of the whole client process over its whole run, per request it completed)")
PY
