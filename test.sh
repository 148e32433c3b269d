#!/usr/bin/env bash
# Runs the whole test suite: formatting, lints, and every crate's tests.
# Tests that drive external programs (memcached, memccapable, Python clients)
# expect them installed; .ci/run installs them on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace "$@"
