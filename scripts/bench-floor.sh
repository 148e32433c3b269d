#!/usr/bin/env bash
# The floor under issue 15's goals: memcached, memstored and a server that
# does nothing but answer with canned replies (crates/server/examples/floor.rs,
# on epoll and on io_uring), with the same clients, alternating, a fresh
# server per run. Reported per run (TSV on stdout): the client's wall time
# and TPS, the server's CPU (utime+stime from /proc over the client's run)
# and CPU per request, requests counted by the client (the floor keeps no
# stats).
#
#   scripts/bench-floor.sh [RUNS] [SECS]      # defaults 3 and 10
#   WORKLOADS="binary" scripts/bench-floor.sh  # binary (memcaslap) and/or seed (memcslap c128)
#
# The floor's GETs all hit with 100-byte values; memcslap's data is larger
# (docs/bench/server-notes.md), so on the seed run it is a lower bound
# for the client's work too.
set -euo pipefail
RUNS=${1:-3} SECS=${2:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/ports.sh
. "$ROOT/scripts/lib/ports.sh"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
echo "building memstored and the floor (release)..." >&2
cargo build --release -q -p memstored-server --bin memstored --example floor
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-floor.XXXXXX")
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT
TICK=$(getconf CLK_TCK)
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

start() { # server -> PID PORT
  rm -f "$WORK/port"
  case $1 in
    memcached) MEMCACHED_PORT_FILENAME="$WORK/port" memcached -l 127.0.0.1 -p -1 -U 0 -m 1024 -t 2 \
      -u "$(server_user)" >"$WORK/log" 2>&1 & ;;
    memstored) "$TARGET/release/memstored" -u "$(server_user)" -s '*#capsiz=1024m' -R 2 -l 127.0.0.1:0 \
      --port-file "$WORK/port" >"$WORK/log" 2>&1 & ;;
    floor-*) "$TARGET/release/examples/floor" "${1#floor-}" 2 "$WORK/port" >"$WORK/log" 2>&1 & ;;
  esac
  PID=$!
  PORT=$(wait_port_file "$WORK/port" "$PID" "$1")
}

printf 'workload\tserver\trun\twall_s\ttps\trequests\tcpu_s\tcpu_us_per_req\tload1\n'
for run in $(seq 1 "$RUNS"); do
  for wl in ${WORKLOADS:-binary seed}; do
    for server in memcached memstored floor-epoll floor-uring; do
      start "$server"
      load=$(cut -d' ' -f1 /proc/loadavg)
      c0=$(cpu_ticks "$PID")
      t0=$(date +%s.%N)
      if [ "$wl" = binary ]; then
        memcaslap -s "127.0.0.1:$PORT" -T 1 -c 64 -X 100 -t "${SECS}s" -B >"$WORK/client" 2>&1
        reqs=$(awk '/^cmd_get:/ {g = $2} /^cmd_set:/ {s = $2} END {print g + s}' "$WORK/client")
        tps=$(sed -n 's/^Run time: .* TPS: \([0-9]*\) .*/\1/p' "$WORK/client" | tail -n1)
      else
        memcslap --servers="127.0.0.1:$PORT" --test=get --concurrency=128 --binary >"$WORK/client" 2>&1
        # The load phase's sets plus the gets.
        reqs=$(sed -n 's/^Time to \(set\|get\) *\([0-9]*\) keys.*/\2/p' "$WORK/client" | awk '{s += $1} END {print s}')
        tps=$(sed -n 's/^Time to get *\([0-9]*\) keys by .*: *\([0-9.]*\) seconds\./\1 \2/p' "$WORK/client" |
          awk '{ if ($2 > 0) printf "%d\n", $1 / $2 }')
      fi
      t1=$(date +%s.%N)
      c1=$(cpu_ticks "$PID")
      kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
      awk -v w="$wl" -v s="$server" -v r="$run" -v a="$t0" -v b="$t1" -v tps="$tps" -v n="$reqs" \
        -v t=$((c1 - c0)) -v hz="$TICK" -v l="$load" \
        'BEGIN { printf "%s\t%s\t%s\t%.2f\t%s\t%s\t%.2f\t%.2f\t%s\n", w, s, r, b - a, tps, n, t / hz, (n > 0 ? t / hz * 1e6 / n : 0), l }'
    done
  done
done
