#!/usr/bin/env bash
# memstored's engines against Tkrzw's on tkrzw_dbm_perf's sequence workload.
#
# Runs `memstore perf sequence` and `tkrzw_dbm_perf sequence` side by side on
# the same workloads, alternating A B A B, takes the median of RUNS runs, and
# writes docs/bench/engine.md, docs/bench/engine.tsv (medians) and
# docs/bench/engine.png (via scripts/plot_engine.py).
#
#   scripts/bench-engine.sh            # 1M records, 3 runs (a few minutes)
#   ITER=100000 RUNS=1 scripts/bench-engine.sh   # quick smoke run
#   CACHE=0 scripts/bench-engine.sh    # without the cache section (cache.md)
#   BIG=0 scripts/bench-engine.sh      # without the 10M-record rows
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ITER=${ITER:-1000000}
RUNS=${RUNS:-3}
HALF=$((ITER / 2))
BIG_ITER=${BIG_ITER:-10000000}
BIG_HALF=$((BIG_ITER / 2))
BIG_BUCKETS=$((BIG_ITER * 2))
OUT_DIR=${OUT_DIR:-docs/bench}
mkdir -p "$OUT_DIR"

# name | memstore perf sequence flags | tkrzw_dbm_perf sequence flags
# M and T stand for the per-run file prefixes of each side.
WORKLOADS=(
  "hash 1t|--dbm hash --path M.tkh --iter $ITER|--dbm hash --path T.tkh --iter $ITER"
  "hash 2t|--dbm hash --path M.tkh --iter $HALF --threads 2|--dbm hash --path T.tkh --iter $HALF --threads 2"
  "tree 1t|--dbm tree --path M.tkt --iter $ITER|--dbm tree --path T.tkt --iter $ITER"
  "tree 2t|--dbm tree --path M.tkt --iter $HALF --threads 2|--dbm tree --path T.tkt --iter $HALF --threads 2"
  "mem hash 1t|--dbm tiny --iter $ITER|--dbm tiny --iter $ITER"
  "mem hash 2t|--dbm tiny --iter $HALF --threads 2|--dbm tiny --iter $HALF --threads 2"
  "mem tree 1t|--dbm baby --iter $ITER|--dbm baby --iter $ITER"
  "mem tree 2t|--dbm baby --iter $HALF --threads 2|--dbm baby --iter $HALF --threads 2"
  # Ordered engines with random keys: two writers rarely share a leaf
  # (with Tkrzw's interleaved keys they share the newest one; engine-notes).
  "tree random 1t|--dbm tree --path M.tkt --iter $ITER --random_key|--dbm tree --path T.tkt --iter $ITER --random_key"
  "tree random 2t|--dbm tree --path M.tkt --iter $HALF --threads 2 --random_key|--dbm tree --path T.tkt --iter $HALF --threads 2 --random_key"
  "mem tree random 1t|--dbm baby --iter $ITER --random_key|--dbm baby --iter $ITER --random_key"
  "mem tree random 2t|--dbm baby --iter $HALF --threads 2 --random_key|--dbm baby --iter $HALF --threads 2 --random_key"
  "4 shards random 1t|--dbm hash --path M.tkh --params num_shards=4 --iter $ITER --random_key|--dbm shard --path T.tkh --params num_shards=4 --iter $ITER --random_key"
  "4 shards random 1t vs plain hash|--dbm hash --path M.tkh --params num_shards=4 --iter $ITER --random_key|--dbm hash --path T.tkh --iter $ITER --random_key"
)
# Seed 004's size (issue 16): 10M records, twice as many buckets, 1 and 2
# threads, for the file hash and the in-memory hash. BIG=0 leaves them out
# (they take most of the run's time).
if [ "${BIG:-1}" = 1 ]; then
  WORKLOADS+=(
  "hash 1t 10M|--dbm hash --path M.tkh --iter $BIG_ITER --buckets $BIG_BUCKETS|--dbm hash --path T.tkh --iter $BIG_ITER --buckets $BIG_BUCKETS"
  "hash 2t 10M|--dbm hash --path M.tkh --iter $BIG_HALF --threads 2 --buckets $BIG_BUCKETS|--dbm hash --path T.tkh --iter $BIG_HALF --threads 2 --buckets $BIG_BUCKETS"
  "mem hash 1t 10M|--dbm tiny --iter $BIG_ITER --buckets $BIG_BUCKETS|--dbm tiny --iter $BIG_ITER --buckets $BIG_BUCKETS"
  "mem hash 2t 10M|--dbm tiny --iter $BIG_HALF --threads 2 --buckets $BIG_BUCKETS|--dbm tiny --iter $BIG_HALF --threads 2 --buckets $BIG_BUCKETS"
  )
fi

RAW_OUT="$OUT_DIR/engine-raw.tsv"
if [ "${REPORT_ONLY:-0}" = 1 ]; then
  # Re-render engine.md/png from the last run's raw numbers (e.g. after
  # editing docs/bench/engine-notes.md), without measuring again.
  RAW="$RAW_OUT"
else
  if ! command -v tkrzw_dbm_perf >/dev/null 2>&1; then
    echo "installing tkrzw-utils (tkrzw_dbm_perf)..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq tkrzw-utils >/dev/null
  fi

  echo "building memstore (release)..." >&2
  cargo build --release -q -p memstored-cli
  MEMSTORE="${CARGO_TARGET_DIR:-$ROOT/target}/release/memstore"

  WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-engine.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT


  RAW="$WORK/raw.tsv"
  {
    echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "# date $(date -u +%Y-%m-%d)"
  } >"$RAW"

  # qps of a phase line in a perf log, e.g. "Setting done: ... qps=1234 ...".
  qps() { sed -n "s/^$1 done: .* qps=\([0-9]*\).*/\1/p" "$2" | head -n1; }

  run_one() { # side name flags run
    local side=$1 name=$2 flags=$3 run=$4 log="$WORK/log"
    local prefix="$WORK/$side"
    flags=${flags//M./$prefix.}
    flags=${flags//T./$prefix.}
    rm -f "$prefix".*
    if [ "$side" = memstored ]; then
      # shellcheck disable=SC2086
      "$MEMSTORE" perf sequence $flags >"$log" 2>&1
    else
      # shellcheck disable=SC2086
      tkrzw_dbm_perf sequence $flags >"$log" 2>&1
    fi
    local s g m
    s=$(qps Setting "$log")
    g=$(qps Getting "$log")
    # Process RSS after the set phase, as each tool prints it (bytes).
    m=$(sed -n 's/^Setting done: .* mem=\([0-9]*\).*/\1/p' "$log" | head -n1)
    if [ -z "$s" ] || [ -z "$g" ]; then
      echo "no qps from $side on '$name':" >&2
      cat "$log" >&2
      exit 1
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$side" "$run" "$s" "$g" "${m:-0}" >>"$RAW"
    printf '  %-34s %-9s run %s: set %9s  get %9s  mem %s\n' "$name" "$side" "$run" "$s" "$g" "${m:-0}" >&2
    rm -f "$prefix".*
  }

  for w in "${WORKLOADS[@]}"; do
    IFS='|' read -r name mflags tflags <<<"$w"
    for run in $(seq 1 "$RUNS"); do
      run_one memstored "$name" "$mflags" "$run"
      run_one tkrzw "$name" "$tflags" "$run"
    done
  done
  cp "$RAW" "$RAW_OUT"
fi
RUN_COMMIT=$(sed -n 's/^# commit //p' "$RAW" | head -n1)
RUN_DATE=$(sed -n 's/^# date //p' "$RAW" | head -n1)

# Medians per workload and side.
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print int((a[NR/2]+a[NR/2+1])/2)}'; }
MED="$OUT_DIR/engine.tsv"
printf 'workload\tmemstored_set\ttkrzw_set\tset_ratio\tmemstored_get\ttkrzw_get\tget_ratio\tmemstored_mem\ttkrzw_mem\n' >"$MED"
for w in "${WORKLOADS[@]}"; do
  IFS='|' read -r name _ _ <<<"$w"
  ms=$(awk -F'\t' -v n="$name" '$1==n && $2=="memstored" {print $4}' "$RAW" | median)
  ts=$(awk -F'\t' -v n="$name" '$1==n && $2=="tkrzw" {print $4}' "$RAW" | median)
  mg=$(awk -F'\t' -v n="$name" '$1==n && $2=="memstored" {print $5}' "$RAW" | median)
  tg=$(awk -F'\t' -v n="$name" '$1==n && $2=="tkrzw" {print $5}' "$RAW" | median)
  mm=$(awk -F'\t' -v n="$name" '$1==n && $2=="memstored" {print $6+0}' "$RAW" | median)
  tm=$(awk -F'\t' -v n="$name" '$1==n && $2=="tkrzw" {print $6+0}' "$RAW" | median)
  rs=$(awk -v a="$ms" -v b="$ts" 'BEGIN {printf "%.2f", a / b}')
  rg=$(awk -v a="$mg" -v b="$tg" 'BEGIN {printf "%.2f", a / b}')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$ms" "$ts" "$rs" "$mg" "$tg" "$rg" "$mm" "$tm" >>"$MED"
done

python3 scripts/plot_engine.py "$MED" "$OUT_DIR/engine.png"

# The report. Hand-written analysis lives in docs/bench/engine-notes.md and
# is appended verbatim, so re-running the script keeps it.
fmt() { awk -v x="$1" 'BEGIN {if (x >= 995000) printf "%.2fM", x / 1e6; else printf "%.0fk", x / 1e3}'; }
MD="$OUT_DIR/engine.md"
{
  echo "# Engine benchmark: memstored vs Tkrzw (sequence workload)"
  echo
  echo "Generated by \`scripts/bench-engine.sh\`; measured on $RUN_DATE at commit $RUN_COMMIT."
  echo "Median of $RUNS runs per cell, memstored and Tkrzw alternated run by run (A B A B)."
  echo "Ratio = memstored / Tkrzw; the goal (issue 16) is at least 2.0 for set and get everywhere, and RSS at most Tkrzw's."
  echo
  echo "| workload | memstored set | Tkrzw set | set ratio | memstored get | Tkrzw get | get ratio | memstored RSS | Tkrzw RSS |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$MED" | while IFS=$'\t' read -r name ms ts rs mg tg rg mm tm; do
    mark_s=""; mark_g=""
    awk -v r="$rs" 'BEGIN {exit !(r >= 2.0)}' && mark_s=" ✓"
    awk -v r="$rg" 'BEGIN {exit !(r >= 2.0)}' && mark_g=" ✓"
    mb() { awk -v x="${1:-0}" 'BEGIN {if (x > 0) printf "%.0f MB", x / 1e6; else printf "—"}'; }
    echo "| $name | $(fmt "$ms") | $(fmt "$ts") | ${rs}${mark_s} | $(fmt "$mg") | $(fmt "$tg") | ${rg}${mark_g} | $(mb "$mm") | $(mb "$tm") |"
  done
  echo
  echo "![set and get throughput, memstored vs Tkrzw](engine.png)"
  echo
  echo "Records: $ITER per workload (1 thread: --iter $ITER; 2 threads: --iter $HALF each;"
  echo "rows named 10M: $BIG_ITER, --iter $BIG_HALF each with 2 threads, --buckets $BIG_BUCKETS on both sides),"
  echo "8-digit decimal keys, 8-byte values. Throughput in operations per second (qps as printed"
  echo "by each tool: all operations of a phase over its wall time, including the final sync)."
  echo "RSS: the process's resident memory after the set phase, as each tool prints it (\`mem=\`)."
  echo "Raw numbers of every run: \`engine-raw.tsv\`; medians: \`engine.tsv\`."
  echo
  echo "## Commands"
  echo
  echo "\`M\`/\`T\` are per-run file prefixes in a temporary directory; files are deleted before each run."
  echo
  echo '```'
  for w in "${WORKLOADS[@]}"; do
    IFS='|' read -r name mflags tflags <<<"$w"
    echo "# $name"
    echo "memstore perf sequence $mflags"
    echo "tkrzw_dbm_perf sequence $tflags"
  done
  echo '```'
  echo
  echo "## Machine"
  echo
  echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), nproc=$(nproc)"
  echo "- Memory: $(free -h | awk '/^Mem:/ {print $2 " total, " $7 " available"}')"
  echo "- Kernel: $(uname -r)"
  echo "- Tkrzw: $(dpkg-query -W -f='${Package} ${Version}' tkrzw-utils 2>/dev/null || echo unknown)"
  echo "- rustc: $(rustc --version)"
  echo "- Shared, noisy 2-core VM: identical runs differ by up to ~15% (see shared/BENCHMARKING.md)."
  if [ -f "$OUT_DIR/engine-notes.md" ]; then
    echo
    cat "$OUT_DIR/engine-notes.md"
  fi
} >"$MD"
echo "wrote $MD, $MED and $OUT_DIR/engine.png" >&2

# The cache section (issue 16): memstored's *#capsiz= cache against memcached
# under the same -m, in docs/bench/cache.md. CACHE=0 skips it.
if [ "${CACHE:-1}" = 1 ] && [ "${REPORT_ONLY:-0}" != 1 ]; then
  command -v memcached >/dev/null || {
    echo "installing memcached..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq memcached >/dev/null
  }
  cargo build --release -q -p memstored-server
  BIN_DIR="${CARGO_TARGET_DIR:-$ROOT/target}/release" OUT_DIR="$OUT_DIR" python3 scripts/bench-cache.py "$RUNS"
  python3 scripts/plot_cache.py "$OUT_DIR"
fi
