#!/usr/bin/env bash
# The long crash run of docs/reliability.md: CYCLES kill -9 / restart / verify
# cycles (default 200) of crates/server/tests/crash.rs, in release mode.
# Usage: scripts/crash-test.sh [CYCLES]
set -euo pipefail
cd "$(dirname "$0")/.."
cycles="${1:-200}"
start=$(date +%s)
CRASH_CYCLES="$cycles" cargo test --release -p memstored-server --test crash -- --nocapture 2>&1 | tee /tmp/crash-test.log | grep -E "^cycle|cycles in|test result"
echo "crash-test: $cycles cycles passed in $(( $(date +%s) - start )) s"
