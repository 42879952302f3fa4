#!/usr/bin/env bash
# The example reports in docs/examples/, made from records kept beside them
# (docs/examples/records/NAME/*.json), so that they always show what today's report draws:
#   scripts/examples.sh            new runs (a few minutes), their records kept, then --render
#   scripts/examples.sh --render   the reports drawn again from the kept records
#   scripts/examples.sh --check    drawn into a temporary folder and compared with docs/examples/;
#                                  exits 1 naming the reports that are out of date (tests/examples.rs)
# PERFLAB names the binary (default: this tree's release build, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-new}
case "$mode" in new | --render | --check) ;; *)
  echo "usage: scripts/examples.sh [--render|--check]" >&2
  exit 2
  ;;
esac
if [ -z "${PERFLAB:-}" ]; then
  [ -x target/release/perflab ] || cargo build --release --quiet
  PERFLAB=$PWD/target/release/perflab
fi
PERFLAB=$(realpath "$PERFLAB")
records=docs/examples/records
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The example runs: each one's records go to records/NAME.
if [ "$mode" = new ]; then
  # The records keep their command lines: as a user types them (`perflab ...`, the results
  # folder from the environment), not this checkout's paths.
  runs=$work/runs
  mkdir -p "$work/bin"
  ln -s "$PERFLAB" "$work/bin/perflab"
  export PERFLAB_RESULTS=$runs PATH=$work/bin:$PATH
  keep() { # NAME ID...: the records of these runs, as the examples' sources
    local name=$1
    shift
    rm -rf "${records:?}/$name"
    mkdir -p "$records/$name"
    for id in "$@"; do cp "$runs/runs/$id/run.json" "$records/$name/$id.json"; done
  }
  last() { perflab runs --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[-1]["id"])'; }
  (cd "$work" && perflab run --quick --quiet --io-path . >/dev/null)
  suite=$(perflab runs --json | python3 -c 'import json,sys; print(" ".join(r["id"] for r in json.load(sys.stdin)))')
  # shellcheck disable=SC2086
  keep balance-sheet $suite
  perflab oltp --quiet --scale 1 --clients 1,2,4,8 --repeat 3 --warmup 1s --duration 3s >/dev/null
  keep oltp-sqlite "$(last)"
  perflab memory --quiet --kernel triad --threads 1,2 --repeat 3 --warmup 1s --duration 2s >/dev/null
  a=$(last)
  perflab memory --quiet --kernel triad --threads 1,2 --repeat 3 --warmup 1s --duration 2s >/dev/null
  keep compare "$a" "$(last)"
  perflab null --quiet --load-levels 100..10:-30,0 --calibrate 2 --warmup 500ms --duration 2s >/dev/null
  keep load-levels "$(last)"
fi

# Each example drawn from its records, in a fresh archive of their own (no tags, so no names).
render() { # NAME OUT
  local name=$1 out=$2 archive=$work/render-$1
  local ids=()
  "$PERFLAB" import "$records/$name"/*.json --results "$archive" >/dev/null
  for f in "$records/$name"/*.json; do ids+=("$(basename "$f" .json)"); done
  case "$name" in
    balance-sheet) "$PERFLAB" report --suite "${ids[0]}" --results "$archive" -o "$out" >/dev/null ;;
    compare) "$PERFLAB" compare "${ids[0]}" "${ids[1]}" --results "$archive" -o "$out" >/dev/null 2>&1 ;;
    *) "$PERFLAB" report "${ids[@]}" --results "$archive" -o "$out" >/dev/null ;;
  esac
}

stale=()
for dir in "$records"/*/; do
  name=$(basename "$dir")
  fresh=$work/$name.html
  render "$name" "$fresh"
  if [ "$mode" = --check ]; then
    cmp -s "$fresh" "docs/examples/$name.html" || stale+=("docs/examples/$name.html")
  else
    cp "$fresh" "docs/examples/$name.html"
    echo "docs/examples/$name.html"
  fi
done
if [ ${#stale[@]} -gt 0 ]; then
  echo "out of date (the report changed; run scripts/examples.sh --render): ${stale[*]}" >&2
  exit 1
fi
