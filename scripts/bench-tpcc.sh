#!/usr/bin/env bash
# perflab's TPC-C-style workload on local PostgreSQL and MariaDB: NOPM, NOPM per client core
# and server CPU per new order at 1, 2, 4 and 8 warehouses, and the loader's rows per second
# beside oltp's DebitCredit loader on the same engine, alternating. No TPC-C peer can run
# here (HammerDB, BenchBase, go-tpc and sysbench-tpcc are not installable), so the figures
# are set beside published ones in docs/performance.md.
#   scripts/bench-tpcc.sh [PG_URL] [MYSQL_URL] [SECONDS] [CLIENTS] [ROUNDS]
# The databases must exist; perflab loads its tables there and drops them at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
PG=${1:-postgres://postgres@127.0.0.1/test?sslmode=disable}
MY=${2:-mysql://root@127.0.0.1/test}
SECS=${3:-10}
CLIENTS=${4:-1,4}
ROUNDS=${5:-2}
cargo build --release --quiet
PERFLAB=$PWD/target/release/perflab
results=$(mktemp -d)
out=$(mktemp -d)
cleanup() {
  for url in "$PG" "$MY"; do
    "$PERFLAB" oltp cleanup --quiet --workload tpcc --target "$url" || true
  done
  rm -rf "$results" "$out"
}
trap cleanup EXIT

# Loader: one warehouse (about 600,000 rows over nine tables) against DebitCredit at scale 6
# (600,000 accounts), alternating; rows per second from each prepare's closing line.
for round in $(seq 1 "$ROUNDS"); do
  for engine in pg my; do
    url=$PG; [ "$engine" = my ] && url=$MY
    load_tpcc() {
      "$PERFLAB" oltp prepare --workload tpcc --warehouses 1 --target "$url" \
        2>"$out/load.tpcc.$engine.$round.txt"
      "$PERFLAB" oltp cleanup --quiet --workload tpcc --target "$url"
    }
    load_dc() {
      "$PERFLAB" oltp prepare --workload debitcredit --scale 6 --target "$url" \
        2>"$out/load.dc.$engine.$round.txt"
      "$PERFLAB" oltp cleanup --quiet --target "$url"
    }
    if (( round % 2 )); then load_tpcc; load_dc; else load_dc; load_tpcc; fi
  done
done

# Throughput mode at 1, 2, 4 and 8 warehouses: one load of 8, steps over the first N.
for engine in pg my; do
  url=$PG; [ "$engine" = my ] && url=$MY
  "$PERFLAB" oltp prepare --quiet --workload tpcc --warehouses 8 --target "$url"
  "$PERFLAB" oltp run --quiet --json --results "$results" --workload tpcc --target "$url" \
    --warehouses 1,2,4,8 --clients "$CLIENTS" --warmup 2s --duration "${SECS}s" \
    >"$out/run.$engine.json" || true
  "$PERFLAB" oltp cleanup --quiet --workload tpcc --target "$url"
done

python3 - "$out" "$ROUNDS" <<'PY'
import json, re, sys, statistics as st
out, rounds = sys.argv[1], int(sys.argv[2])
names = {"pg": "PostgreSQL", "my": "MariaDB"}
print("loader (rows/s, median of rounds)")
print(f"{'engine':11} {'tpcc':>10} {'debitcredit':>12} {'ratio':>6}")
for e in ["pg", "my"]:
    def rate(kind, r):
        text = open(f"{out}/load.{kind}.{e}.{r}.txt").read()
        if kind == "tpcc":
            return float(re.search(r"done in [0-9.]+ s \(\d+ rows, ([0-9.]+) rows/s", text).group(1))
        secs = float(re.search(r"done in ([0-9.]+) s", text).group(1))
        scale = 6
        return (scale * 100_000 + scale * 10 + scale) / secs
    t = [rate("tpcc", r) for r in range(1, rounds + 1)]
    d = [rate("dc", r) for r in range(1, rounds + 1)]
    print(f"{names[e]:11} {st.median(t):10,.0f} {st.median(d):12,.0f} {st.median(t)/st.median(d):6.2f}")
print()
print("throughput mode")
print(f"{'engine':11} {'wh':>3} {'clients':>7} {'NOPM':>8} {'tx/min':>8} {'client cores':>12} {'NOPM/client core':>16} {'server CPU/NO':>13} {'log syncs/txn':>13} {'p90 NO':>8}")
for e in ["pg", "my"]:
    v = json.load(open(f"{out}/run.{e}.json"))
    for s in v["steps"]:
        t = s["trials"][0]
        f = t["figures"]
        cores = t["resources"].get("process_cpu_ns_per_op", 0) * t["ops_per_sec"] / 1e9
        no = next(g for g in t["groups"] if g["by"] == "kind" and g["key"] == "new_order")
        syncs = f.get("log_syncs_per_txn", f.get("data_syncs_per_txn", float("nan")))
        print(f"{names[e]:11} {f['warehouses']:3.0f} {t['workers']:7} {f['nopm']:8,.0f} {f['tpm']:8,.0f} "
              f"{cores:12.2f} {f['nopm']/max(cores,1e-9):16,.0f} {f.get('server_cpu_us_per_new_order', float('nan')):11,.0f}us "
              f"{syncs:13.2f} {no['latency']['p90_ns']/1e6:6.1f}ms")
PY
