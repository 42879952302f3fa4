#!/usr/bin/env bash
# A CI regression gate over the team's shared store (docs/shared-store.md, "CI"): run one
# perflab command for the commit under test, labelled with its commit and branch, make sure
# it reached the store (every run is sent; a queued one is sent now), then compare the
# team's baseline tag with this machine's newest run: exit 3 when a figure is slower beyond
# the noise, as 'perflab compare --fail-on regression' does.
#
#   PERFLAB_SHARED=postgres://ci@db/perflab scripts/ci-gate.sh -- memory --kernel triad --repeat 5
#
# Environment: PERFLAB (the binary; default perflab), GATE_BASELINE (the tag; default
# baseline), GATE_NOISE (default 2%), GATE_COMMIT and GATE_BRANCH (default: from git),
# GATE_ACCEPT_BRANCH (a branch whose passing runs become the new baseline, e.g. main).
# The first run of a team, with no baseline yet, becomes the baseline.
set -euo pipefail
: "${PERFLAB_SHARED:?set PERFLAB_SHARED to the shared store (a postgres:// URL)}"
export PERFLAB_SHARED
perflab=${PERFLAB:-perflab}
baseline=${GATE_BASELINE:-baseline}
noise=${GATE_NOISE:-2%}
commit=${GATE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
branch=${GATE_BRANCH:-$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)}
[ "${1:-}" = -- ] && shift
if [ $# = 0 ]; then
  echo "usage: scripts/ci-gate.sh -- COMMAND... (a perflab workload command, e.g. memory --kernel triad --repeat 5)" >&2
  exit 2
fi

"$perflab" "$@" --label "commit=$commit" --label "branch=$branch" --quiet >/dev/null
# Every run is sent when it ends; one the store could not take waits in the queue.
"$perflab" shared sync --quiet
if ! "$perflab" show "$baseline" >/dev/null 2>&1; then
  echo "perflab gate: no run is tagged $baseline in the shared store yet; this one is now"
  "$perflab" tag last "$baseline"
  exit 0
fi
set +e
"$perflab" compare "$baseline" last --noise "$noise" --fail-on regression
rc=$?
set -e
if [ "$rc" = 0 ] && [ -n "${GATE_ACCEPT_BRANCH:-}" ] && [ "$branch" = "$GATE_ACCEPT_BRANCH" ]; then
  "$perflab" tag last "$baseline"
fi
exit "$rc"
