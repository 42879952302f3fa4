#!/usr/bin/env bash
# A long session of the hostile-replies property test (tests/replies.rs): every reply parser
# on arbitrary and near-valid bytes, the heap measured by dhat. CI runs 300 cases per
# protocol with a fixed seed; this runs as many as asked (default 20000), in release mode.
#   scripts/fuzz-replies.sh [CASES]
set -euo pipefail
cd "$(dirname "$0")/.."
PROPTEST_CASES="${1:-20000}" cargo test --release --test replies -- --nocapture
