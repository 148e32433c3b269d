#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for N seconds each (default 30), one
# at a time, with its dictionary and seeds. Needs the nightly toolchain and
# cargo-fuzz (`cargo install cargo-fuzz`); without them it says so and exits
# 0 — the stable proptests (`cargo test --test fuzz_smoke` in
# crates/protocol and crates/engine) cover the same entry points.
#
#   scripts/fuzz-smoke.sh [SECONDS] [TARGET...]
#
# A crash stops the script with a non-zero status; the input is left in
# fuzz/artifacts/<target>/ (reproduce: cargo +nightly fuzz run <target> <file>).
set -euo pipefail

secs="${1:-30}"
shift || true
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/fuzz"

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz-smoke: no nightly toolchain (rustup toolchain install nightly); skipped"
    exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz-smoke: cargo-fuzz not installed (cargo install cargo-fuzz); skipped"
    exit 0
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

cargo +nightly fuzz build

for t in "${targets[@]}"; do
    corpus="$root/fuzz/corpus/$t"
    mkdir -p "$corpus"
    seeds=()
    [ -d "seeds/$t" ] && seeds=("$root/fuzz/seeds/$t")
    dict=()
    [ -f "dict/$t.dict" ] && dict=("-dict=$root/fuzz/dict/$t.dict")
    echo "== $t: ${secs}s"
    log="$(mktemp)"
    set +e
    cargo +nightly fuzz run "$t" "$corpus" "${seeds[@]}" -- \
        -max_total_time="$secs" "${dict[@]}" -print_final_stats=1 >"$log" 2>&1
    status=$?
    set -e
    grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb|Done)' "$log" || true
    if [ $status -ne 0 ]; then
        tail -n 40 "$log"
        rm -f "$log"
        echo "fuzz-smoke: $t failed (status $status); the input is in fuzz/artifacts/$t/"
        exit 1
    fi
    rm -f "$log"
done
echo "fuzz-smoke: all targets ran ${secs}s clean"
