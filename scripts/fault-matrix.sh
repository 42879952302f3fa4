#!/usr/bin/env bash
# The table of docs/reliability.md: each protocol client through the tests' fault-injecting
# relay, one fault kind at a time, and the errors each produced (a minute or two).
#   scripts/fault-matrix.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --test faults -- --ignored --nocapture fault_matrix 2>/dev/null | grep '^|'
