#!/usr/bin/env bash
# Runs every fio job file in DIR under fio and under perflab, on small sizes, and prints one
# row per file: fio's IO/s, perflab's, their ratio, or what refused it.
#
#   scripts/fio-examples.sh DIR [SIZE] [RUNTIME]      (defaults: 16m, 2 seconds)
#
# DIR is, for example, fio's own examples/ folder (from fio's repository; the project does
# not carry those files). Each file is copied to a scratch folder and made small the same way
# for both tools: size, filesize and io_size become SIZE where larger, runtime becomes RUNTIME seconds
# (ramp_time 0), directory= points at the scratch folder and relative file names land there.
# Files that name a device (filename=/dev/..., other than /dev/null and /dev/zero) are
# skipped, never run: fio would write to it. Each tool runs in an empty scratch folder of its
# own, so neither sees the other's files.
#
# The table: file | fio IO/s | perflab IO/s | perflab/fio | what happened. IO/s is the sum
# over the file's jobs of their reads, writes and trims per second (fio's jobs[].read.iops +
# write.iops + trim.iops; perflab's job groups). The last lines count the files fio runs here and how
# many of those perflab runs.
set -uo pipefail
cd "$(dirname "$0")/.."

dir=${1:?usage: scripts/fio-examples.sh DIR [SIZE] [RUNTIME]}
size=${2:-16m}
runtime=${3:-2}
need() { command -v "$1" >/dev/null 2>&1; }
if ! need fio; then
  if [ "$(id -u)" = 0 ] && need apt-get; then
    apt-get install -y -qq fio >/dev/null 2>&1 || { echo "fio-examples: cannot install fio" >&2; exit 1; }
  else
    echo "fio-examples: fio is missing; install it: apt-get install fio" >&2
    exit 1
  fi
fi
need python3 || { echo "fio-examples: python3 is missing" >&2; exit 1; }
cargo build --release -q || exit 1
perflab=$PWD/target/release/perflab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Makes FILE small in the scratch folder SCRATCH: prints the new file's path.
shrink() {
  python3 - "$1" "$2" "$size" "$runtime" <<'EOF'
import re, sys, os
src, scratch, size, runtime = sys.argv[1:5]

def nbytes(text):
    """A plain size (4k, 100M, 102404k) in bytes, fio's 1024 base; None for anything else."""
    m = re.fullmatch(r"\s*(\d+)\s*([kmgtp]?)i?b?\s*", text.split(";")[0].split("#")[0], re.I)
    if not m:
        return None
    return int(m.group(1)) * 1024 ** " kmgtp".index(m.group(2).lower() or " ")

out = []
for line in open(src, errors="replace"):
    s = line.strip()
    key = s.split("=", 1)[0].strip().lower()
    if key in ("size", "filesize", "io_size", "io_limit"):
        # Only ever smaller: filestat's filesize=4k over 200 files stays 4k (16m each
        # would be 3 GiB a job, and another meaning: one block a file).
        given = nbytes(s.split("=", 1)[1]) if "=" in s else None
        if given is None or given > nbytes(size):
            line = f"{key}={size}\n"
    elif key == "runtime":
        line = f"runtime={runtime}\n"
    elif key == "ramp_time":
        line = "ramp_time=0\n"
    elif key == "directory":
        line = f"directory={scratch}\n"
    out.append(line)
dst = os.path.join(scratch, os.path.basename(src))
open(dst, "w").write("".join(out))
print(dst)
EOF
}

# Sums fio's JSON (stdin) as reads and writes per second over the jobs.
fio_iops() {
  python3 -c '
import json, sys
text = sys.stdin.read()
start = text.find("{")
d = json.loads(text[start:])
print(round(sum(j[k]["iops"] for j in d["jobs"] for k in ("read", "write", "trim") if k in j)))
' 2>/dev/null
}

# Sums perflab's record (stdin): each step's job groups, per second.
perflab_iops() {
  python3 -c '
import json, sys
d = json.load(sys.stdin)
total = 0.0
for s in d["steps"]:
    for g in s["trials"][0]["groups"]:
        if g["by"] == "job":
            total += g["ops_per_sec"]
print(round(total))
' 2>/dev/null
}

printf '%-40s %12s %12s %8s  %s\n' file "fio IO/s" "perflab IO/s" ratio "what happened"
fio_ran=0
both_ran=0
for f in "$dir"/*.fio; do
  name=$(basename "$f")
  if grep -E '^[[:space:]]*filename[[:space:]]*=[[:space:]]*/dev/' "$f" |
    grep -Evq '=[[:space:]]*/dev/(null|zero)[[:space:]]*$'; then
    printf '%-40s %12s %12s %8s  %s\n' "$name" - - - "skipped: names a device"
    continue
  fi
  rm -rf "$work/fio" "$work/perflab" && mkdir -p "$work/fio" "$work/perflab"
  # Absolute file names outside the scratch folders (waitfor.fio's /tmp/data): fio makes
  # them and leaves them, and perflab never writes to a file it did not make. Whatever of
  # them fio made here is removed again before perflab runs.
  made=()
  for p in $(grep -E '^[[:space:]]*filename[[:space:]]*=[[:space:]]*/' "$f" | sed 's/^[^=]*=[[:space:]]*//; s/[[:space:]]*[;#].*$//' | tr ':' ' '); do
    case $p in /dev/*) continue ;; esac
    [ -e "$p" ] || made+=("$p")
  done
  job=$(shrink "$f" "$work/fio")
  # Into a file, not captured: fio's io_submit_mode=offload examples leave a job process
  # behind when timeout kills fio (its parent), which would hold a captured pipe open and
  # stall the script. Whatever still runs this file is killed afterwards.
  (cd "$work/fio" && timeout -k 5 60 fio --output-format=json "$job" >"$work/fio.json" 2>"$work/fio.err")
  fio_rc=$?
  pkill -KILL -f -- "$work/fio/" 2>/dev/null || true
  fio_out=$(cat "$work/fio.json")
  for p in "${made[@]}"; do [ -f "$p" ] && rm -f "$p"; done
  fio=$(printf '%s' "$fio_out" | fio_iops)
  if [ $fio_rc -ne 0 ] || [ -z "$fio" ]; then
    why=$(grep -v '^$' "$work/fio.err" | head -1 | cut -c1-70)
    printf '%-40s %12s %12s %8s  %s\n' "$name" - - - "fio fails here: ${why:-exit $fio_rc}"
    continue
  fi
  fio_ran=$((fio_ran + 1))
  job=$(shrink "$f" "$work/perflab")
  pl_out=$(cd "$work/perflab" && timeout -k 5 120 "$perflab" io "$job" --json --results "$work/results" 2>"$work/perflab.err")
  pl_rc=$?
  pl=$(printf '%s' "$pl_out" | perflab_iops)
  if [ $pl_rc -ne 0 ] || [ -z "$pl" ]; then
    why=$(grep -v '^$' "$work/perflab.err" | tail -1 | sed "s|$work/perflab/||g" | cut -c1-110)
    printf '%-40s %12s %12s %8s  %s\n' "$name" "$fio" - - "refused: ${why:-exit $pl_rc}"
    continue
  fi
  both_ran=$((both_ran + 1))
  ratio=$(python3 -c "print(f'{$pl / max($fio, 1):.2f}')")
  printf '%-40s %12s %12s %8s  %s\n' "$name" "$fio" "$pl" "$ratio" "ran"
done
echo
echo "fio runs $fio_ran of the files here; perflab runs $both_ran of those ($(( fio_ran > 0 ? 100 * both_ran / fio_ran : 0 ))%)"
