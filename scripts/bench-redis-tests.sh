#!/usr/bin/env bash
# perflab kv against redis-benchmark on redis-benchmark's own lines: each test of its default
# suite, and two commands from its help (LPUSH mylist __rand_int__; EVAL of a PING), on one
# throwaway Redis, the two clients alternating (which goes first swaps every round).
#   scripts/bench-redis-tests.sh [ROUNDS] [REQUESTS]
# Every run is the same line for both: -c 50 -n REQUESTS -d 100 -r 100000, one client thread
# (redis-benchmark's default; perflab's own default for 50 connections on 2 CPUs is 1 too),
# one test per process, so each process's CPU time (user + system, /usr/bin/time) is that
# test's. Prints, per test, the medians of requests/s and of client CPU per request, and of
# the per-round ratios perflab/redis-benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
N=${2:-50000}
need() { command -v "$1" >/dev/null || { echo "$1 not found: apt-get install $2" >&2; exit 2; }; }
need redis-server redis-server; need redis-benchmark redis-tools
[ -x /usr/bin/time ] || { echo "/usr/bin/time not found: apt-get install time" >&2; exit 2; }
cargo build --release --quiet
PERFLAB=$PWD/target/release/perflab
echo "$(redis-server --version | cut -d' ' -f1-3); redis-benchmark $(redis-benchmark --version 2>/dev/null | cut -d' ' -f2)" >&2
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  --dir "$work" >"$work/redis.log" 2>&1 &
RPID=$!
trap 'kill $RPID 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 0.5
TESTS="ping_inline ping_mbulk set get incr lpush rpush lpop rpop sadd hset spop zadd zpopmin lrange_100 lrange_300 lrange_500 lrange_600 mset xadd"
LINE=(-h 127.0.0.1 -p "$PORT" -c 50 -n "$N" -d 100 -r 100000)
cpu_of() { /usr/bin/time -f "%U %S" -o "$1" "${@:2}"; }
# One case: its tag, then the words after the common line (-t NAME, or a command).
one() {
  local tag=$1 round=$2; shift 2
  run_perflab() {
    cpu_of "$work/p.$tag.$round.cpu" "$PERFLAB" kv "${LINE[@]}" "$@" --quiet --json \
      --results "$work/res" >"$work/p.$tag.$round.json" 2>"$work/p.$tag.$round.err"
  }
  run_peer() {
    cpu_of "$work/q.$tag.$round.cpu" redis-benchmark "${LINE[@]}" --csv "$@" \
      >"$work/q.$tag.$round.csv"
  }
  if (( round % 2 )); then run_perflab "$@"; run_peer "$@"; else run_peer "$@"; run_perflab "$@"; fi
}
for round in $(seq 1 "$ROUNDS"); do
  for t in $TESTS; do one "$t" "$round" -t "$t"; done
  one lpush_cmd "$round" LPUSH mylist __rand_int__
  one eval_ping "$round" EVAL "return redis.call('ping')" 0
  echo "round $round of $ROUNDS done" >&2
done

python3 - "$work" "$ROUNDS" "$N" $TESTS lpush_cmd eval_ping <<'PY'
import json, csv, sys, statistics as st
work, rounds, n, tags = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
def cpu(path):
    u, s = map(float, open(path).read().split()[-2:])
    return u + s
print(f"{'test':34} {'perflab/s':>10} {'peer/s':>10} {'ratio':>6}  {'CPU/req p':>9} {'CPU/req q':>9} {'ratio':>6}")
for tag in tags:
    rows = {}
    for r in range(1, rounds + 1):
        steps = json.load(open(f"{work}/p.{tag}.{r}.json"))["steps"]
        peer = [row for row in csv.reader(open(f"{work}/q.{tag}.{r}.csv")) if row and row[0] != "test"]
        if not peer:
            # -t xadd: redis-benchmark before 7.2 has no XADD test, and runs nothing.
            rows.setdefault("(not in this redis-benchmark)", [])
            continue
        # -t lrange_N runs "LPUSH (needed to benchmark LRANGE)" first in both: its own row.
        for s, q in zip(steps, peer):
            name = s["params"].get("test", tag)
            t = s["trials"][0]
            rows.setdefault(name, []).append((t["ops_per_sec"], float(q[1]), t["ops"], q[0]))
        p_cpu = cpu(f"{work}/p.{tag}.{r}.cpu") / (n * len(steps))
        q_cpu = cpu(f"{work}/q.{tag}.{r}.cpu") / (n * len(peer))
        for name in rows:
            if len(rows[name][-1]) == 4:
                rows[name][-1] = rows[name][-1] + (p_cpu, q_cpu)
    for name, rs in rows.items():
        if not rs:
            print(f"{tag:34} {'-':>10} {'-':>10}  {name}")
            continue
        if name == "lpush_lrange" and tag != "lrange_100":
            continue
        md = st.median
        label = tag if name == tag else f"{tag}: {name}" if tag.endswith("_cmd") or tag == "eval_ping" else name
        print(f"{label:34} {md([x[0] for x in rs]):10,.0f} {md([x[1] for x in rs]):10,.0f} "
              f"{md([x[0]/x[1] for x in rs]):6.3f}  {md([x[4] for x in rs])*1e6:7.2f}us "
              f"{md([x[5] for x in rs])*1e6:7.2f}us {md([x[4]/x[5] for x in rs]):6.3f}")
print(f"(medians over {rounds} rounds of {n} requests a test; ratios perflab/redis-benchmark per")
print(" round, then their median; CPU is user + system of the whole client process over its")
print(" whole run, per request, so an LRANGE test's process shares its CPU with its LPUSH; on a")
print(" shared 2-vCPU VM the server and the client share the CPUs: figures are noisy)")
PY
