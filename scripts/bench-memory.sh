#!/usr/bin/env bash
# Memory bandwidth: perflab against a C reference kernel (cc -O3 -march=native -fopenmp) on the
# same array size and thread counts, alternating, several rounds; sysbench memory beside them.
# Prints one line per measurement and the ratio perflab / C per kernel and thread count.
#
#   scripts/bench-memory.sh            # defaults: 512MiB arrays, 5s per point, 3 rounds
#   ROUNDS=5 SIZE=1GiB scripts/bench-memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-512MiB}        # bytes of each array (STREAM: at least 4x the last-level cache)
SECONDS_PER_POINT=${SECONDS_PER_POINT:-5}
NPROC=$(nproc)
THREADS="1 $NPROC"
[ "$NPROC" = 1 ] && THREADS=1

cargo build --release --quiet
cc -O3 -march=native -fopenmp scripts/ref/stream_ref.c -o target/stream_ref
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

bytes=$(python3 -c "
import re,sys
s='$SIZE'; m=re.fullmatch(r'(\d+)\s*([KMGT]i?B?|[kmgt])?',s)
mult={'k':1,'m':2,'g':3,'t':4}
print(int(m.group(1))*(1024**mult[m.group(2)[0].lower()] if m.group(2) else 1))")
elements=$((bytes / 8))

log=$(mktemp)
for round in $(seq 1 "$ROUNDS"); do
  for kernel in copy triad; do
    for t in $THREADS; do
      p=$(./target/release/perflab memory --kernel "$kernel" --threads "$t" --size "$SIZE" \
            --warmup 1s --duration "${SECONDS_PER_POINT}s" --json --quiet --results "$results" |
          python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["steps"][0]["trials"][0]["bytes_per_sec"])')
      c=$(OMP_PROC_BIND=spread ./target/stream_ref "$kernel" "$elements" "$t" "$SECONDS_PER_POINT" |
          sed -n 's/.*bytes_per_sec=\([0-9.e+]*\).*/\1/p')
      printf 'round %s %-5s threads=%s perflab %.2f GB/s  C %.2f GB/s\n' "$round" "$kernel" "$t" \
        "$(python3 -c "print($p/1e9)")" "$(python3 -c "print($c/1e9)")"
      echo "$kernel $t $p $c" >>"$log"
    done
  done
done

echo
echo "mean over $ROUNDS rounds (array $SIZE each, ${SECONDS_PER_POINT}s per point):"
python3 - "$log" <<'PY'
import sys, collections
acc = collections.defaultdict(lambda: [[], []])
for line in open(sys.argv[1]):
    k, t, p, c = line.split()
    acc[(k, int(t))][0].append(float(p)); acc[(k, int(t))][1].append(float(c))
for (k, t), (p, c) in sorted(acc.items()):
    mp, mc = sum(p)/len(p), sum(c)/len(c)
    print(f"  {k:5} threads={t}: perflab {mp/1e9:6.2f} GB/s   C reference {mc/1e9:6.2f} GB/s   ratio {mp/mc:.3f}")
PY
rm -f "$log"

if command -v sysbench >/dev/null; then
  echo
  echo "sysbench memory, default block size (1 KiB: the same block rewritten, so it stays in L1):"
  sysbench memory --threads=1 --time=5 run | grep -E 'transferred|total time'
  echo "sysbench memory, 1 GiB blocks, read and write:"
  for op in read write; do
    sysbench memory --threads=1 --memory-block-size=1G --memory-total-size=64G --memory-oper=$op --time=5 run |
      grep -E 'transferred' | sed "s/^/  $op: /"
  done
else
  echo "(sysbench not installed: apt-get install sysbench to compare)"
fi
