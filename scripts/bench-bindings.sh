#!/usr/bin/env bash
# Seed 004's table on this machine, for the columns this script runs today:
# N records (default 10M) with keys and values "%08d", a hash file with
# num_buckets = 2N, set then get, 1 and 4 threads, median of RUNS (3) runs,
# max RSS beside each; the columns' runs alternate. Columns: memstored's
# Rust library (memstore perf sequence, the flags of Tkrzw's C++ below),
# its C API, Go package, Java, Ruby and Python bindings, and Tkrzw's own
# C++ (tkrzw_dbm_perf sequence) and C API (the same perf.c built on
# libtkrzw-dev), when Debian's tkrzw-utils and
# libtkrzw-dev are installed; tkrzw-python (perf.py with --tkrzw, concurrent
# mode) when Debian's python3-tkrzw is installed; tkrzw-java when
# TKRZW_JAVA_DIR names a built tkrzw-java (its tkrzw.jar and libjtkrzw.so)
# and tkrzw-ruby when TKRZW_RUBY_DIR holds its built tkrzw.so; tkrzw-go
# (its perf/perf.go) when TKRZW_GO_DIR names a tkrzw-go checkout whose perf
# program is built (docs/bench/bindings.md says how; never fetched here). Each language's two
# columns run one program with only the library swapped.
# IMPLS="memstored-python tkrzw-python" runs (and builds) only those columns.
#
# Usage: scripts/bench-bindings.sh [N]   (RUNS=3 THREADS="1 4" by default)
# Prints a TSV: impl threads set_qps get_qps rss_mib (medians; RSS of the median-set run).
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-10000000}"
runs="${RUNS:-3}"
threads_list="${THREADS:-1 4}"
buckets=$((2 * n))
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# IMPLS, when set, names the columns to run; the others are not even built.
wanted() { [ -z "${IMPLS:-}" ] || [[ " $IMPLS " == *" $1 "* ]]; }
impls=()

lib="${CARGO_TARGET_DIR:-target}/release"
if wanted memstored-rust || wanted memstored-c || wanted memstored-go || wanted memstored-java || wanted memstored-ruby; then
  cargo build --release -q -p memstored-c -p memstored-ruby -p memstored-cli
  lib="$(cd "$lib" && pwd)" # absolute: used from other directories below
  export MEMSTORED_RUBY_EXT="$lib/libmemstored_ruby.so"
fi
wanted memstored-rust && impls+=(memstored-rust)
if wanted memstored-c; then
  cc -O2 -I bindings/c/include scripts/bench-bindings/perf.c "$lib/libmemstored.a" \
    -lpthread -lm -ldl -o "$work/memstored-c"
  impls+=(memstored-c)
fi
if wanted memstored-go; then
  (cd bindings/go && CGO_LDFLAGS="-L$lib" go build -o "$work/memstored-go" ./perf)
  impls+=(memstored-go)
fi
if wanted memstored-java || wanted tkrzw-java; then
  java_home="$(bindings/java/find-jdk.sh)"
  java=("$java_home/bin/java" --enable-native-access=ALL-UNNAMED)
fi
if wanted memstored-java; then
  JAVA_HOME="$java_home" MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow" \
    mvn -q -B -f bindings/java/pom.xml -DskipTests package >&2 # keep stdout the TSV
  ms_jar="bindings/java/target/memstored-0.1.0.jar"
  mkdir -p "$work/memstored-java"
  "$java_home/bin/javac" -d "$work/memstored-java" -cp "$ms_jar" bindings/java/perf/Perf.java
  impls+=(memstored-java)
fi
if wanted tkrzw-java && [ -n "${TKRZW_JAVA_DIR:-}" ] && [ -f "$TKRZW_JAVA_DIR/tkrzw.jar" ]; then
  mkdir -p "$work/tkrzw-java"
  sed 's/^import memstored\./import tkrzw./' bindings/java/perf/Perf.java >"$work/tkrzw-java/Perf.java"
  "$java_home/bin/javac" -d "$work/tkrzw-java" -cp "$TKRZW_JAVA_DIR/tkrzw.jar" "$work/tkrzw-java/Perf.java"
  impls+=(tkrzw-java)
fi
if wanted tkrzw-go; then
  if [ -n "${TKRZW_GO_DIR:-}" ] && [ -x "$TKRZW_GO_DIR/perf/perf" ]; then
    impls+=(tkrzw-go)
  else
    echo "tkrzw-go: skipped (set TKRZW_GO_DIR to a tkrzw-go checkout with perf/perf built)" >&2
  fi
fi
wanted memstored-ruby && impls+=(memstored-ruby)
if wanted tkrzw-ruby && [ -n "${TKRZW_RUBY_DIR:-}" ] && [ -f "$TKRZW_RUBY_DIR/tkrzw.so" ]; then
  impls+=(tkrzw-ruby)
fi
# memstored-python: the installed module (pip install --no-build-isolation ./bindings/python).
wanted memstored-python && python3 -c "import memstored" && impls+=(memstored-python)
# tkrzw-python: Debian's python3-tkrzw is built for Debian's python3, which may not be the
# python3 on PATH; expose only its module (same CPython minor version) to that python3.
mkdir -p "$work/tkrzw-py"
for so in /usr/lib/python3/dist-packages/tkrzw.cpython-*.so; do [ -f "$so" ] && ln -s "$so" "$work/tkrzw-py/"; done
if wanted tkrzw-python && PYTHONPATH="$work/tkrzw-py" python3 -c "import tkrzw" 2>/dev/null; then
  impls+=(tkrzw-python)
fi
if wanted tkrzw-c && [ -f /usr/include/tkrzw_langc.h ]; then
  cc -O2 -DUSE_TKRZW scripts/bench-bindings/perf.c -ltkrzw -lpthread -o "$work/tkrzw-c"
  impls+=(tkrzw-c)
fi
wanted tkrzw-cpp && command -v tkrzw_dbm_perf >/dev/null && impls+=(tkrzw-cpp)

# The perf programs' "set N / get N / rss_kib N" lines as "set get rss".
perf_line() { awk '{v[$1] = $2} END {print v["set"], v["get"], v["rss_kib"]}'; }

# tkrzw_dbm_perf's "Setting done ... qps=N" lines and time's "rss N" as "set get rss".
tkrzw_lines() {
  awk '/^Setting done/ {for (i = 1; i <= NF; i++) if ($i ~ /^qps=/) s = substr($i, 5)}
       /^Getting done/ {for (i = 1; i <= NF; i++) if ($i ~ /^qps=/) g = substr($i, 5)}
       /^rss / {r = $2} END {print s, g, r}'
}

# One run: prints "set_qps get_qps rss_kib".
run_once() {
  local impl="$1" threads="$2" db="$work/casket.tkh"
  rm -f "$db" "$db".*
  case "$impl" in
    tkrzw-cpp)
      /usr/bin/time -f "rss %M" tkrzw_dbm_perf sequence --dbm hash --path "$db" \
        --iter $((n / threads)) --threads "$threads" --buckets "$buckets" --size 8 2>&1 |
        tkrzw_lines
      ;;
    memstored-rust)
      # The Rust library itself, through memstore perf (the same flags and
      # output as tkrzw_dbm_perf).
      /usr/bin/time -f "rss %M" "$lib/memstore" perf sequence --dbm hash --path "$db" \
        --iter $((n / threads)) --threads "$threads" --buckets "$buckets" --size 8 2>&1 |
        tkrzw_lines
      ;;
    tkrzw-go)
      # tkrzw-go's own perf.go: --iter is per goroutine; its set phase ends
      # with a Synchronize, as perf.c's does.
      /usr/bin/time -f "rss %M" "$TKRZW_GO_DIR/perf/perf" --path "$db" \
        --params "num_buckets=$buckets" --iter $((n / threads)) --threads "$threads" 2>&1 |
        tkrzw_lines
      ;;
    memstored-java)
      "${java[@]}" -Dmemstored.library="$lib/libmemstored.so" -cp "$ms_jar:$work/memstored-java" \
        Perf "$db" "truncate=true,num_buckets=$buckets" "$n" "$threads" |
        perf_line
      ;;
    tkrzw-java)
      "${java[@]}" -Djava.library.path="$TKRZW_JAVA_DIR" -cp "$TKRZW_JAVA_DIR/tkrzw.jar:$work/tkrzw-java" \
        Perf "$db" "truncate=true,num_buckets=$buckets" "$n" "$threads" |
        perf_line
      ;;
    memstored-ruby | tkrzw-ruby)
      local flag=()
      [ "$impl" = tkrzw-ruby ] && flag=(--tkrzw)
      RUBYLIB="${TKRZW_RUBY_DIR:-}" ruby -I bindings/ruby/lib bindings/ruby/bench/perf.rb "${flag[@]}" \
        "$db" "truncate=true,num_buckets=$buckets" "$n" "$threads" |
        perf_line
      ;;
    memstored-python | tkrzw-python)
      # tkrzw-python in its concurrent mode, as seed 004 ran it.
      local flag=() params="truncate=true,num_buckets=$buckets"
      [ "$impl" = tkrzw-python ] && flag=(--tkrzw) && params+=",concurrent=true"
      PYTHONPATH="$work/tkrzw-py" python3 scripts/bench-bindings/perf.py "${flag[@]}" \
        "$db" "$params" "$n" "$threads" |
        perf_line
      ;;
    *)
      "$work/$impl" "$db" "truncate=true,num_buckets=$buckets" "$n" "$threads" |
        perf_line
      ;;
  esac
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# Runs alternate between the columns (A B A B ...: every column's run r
# before any column's run r+1), so that a slow spell of this shared machine
# falls on all of them rather than on one column's three runs.
for threads in $threads_list; do
  for r in $(seq "$runs"); do
    for impl in "${impls[@]}"; do
      run_once "$impl" "$threads" >>"$work/results-$impl-$threads"
      echo "run $r/$runs: $impl, $threads threads: $(tail -n 1 "$work/results-$impl-$threads")" >&2
    done
  done
done

printf 'impl\tthreads\tset_qps\tget_qps\trss_mib\n'
for threads in $threads_list; do
  for impl in "${impls[@]}"; do
    results="$work/results-$impl-$threads"
    set_qps="$(awk '{print $1}' "$results" | median)"
    get_qps="$(awk '{print $2}' "$results" | median)"
    rss="$(awk -v s="$set_qps" '$1 == s {printf "%.0f", $3 / 1024; exit}' "$results")"
    printf '%s\t%s\t%s\t%s\t%s\n' "$impl" "$threads" "$set_qps" "$get_qps" "$rss"
  done
done
