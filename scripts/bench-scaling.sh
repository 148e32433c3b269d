#!/usr/bin/env bash
# Scaling past two cores (issue 46): made for a one-off run on a many-core
# machine, with prebuilt binaries, so it builds nothing and installs nothing.
#
# Two measurements, each at 1, 2, 4, 8 and 16 threads (THREADS), alternating
# memstored and its anchor within each point, RUNS runs each, one TSV row a run:
#
#  1. server: `memstored -R N -s '*#capsiz=4096m'` beside `memcached -t N
#     -m 4096`, both loaded by the same client, `memstore bench --protocol
#     binary` (CLIENT_THREADS threads x CONNS connections, one request in
#     flight each, set phase then get phase, SECS seconds each). Reported:
#     the client's requests per second per phase and the server's CPU time per
#     request (utime+stime of the server process over the run / requests). When
#     N + CLIENT_THREADS fit in the cores, the server is pinned to cores 0..N-1
#     and the client to the last CLIENT_THREADS cores (taskset), so the two do
#     not share a core; otherwise nothing is pinned (the row says so).
#  2. engine: `memstore perf sequence --dbm tiny|hash` beside `tkrzw_dbm_perf
#     sequence` with the same flags, TOTAL records split over N threads.
#
#   BIN=DIR OUT=DIR scripts/bench-scaling.sh
#   PARTS=engine DBMS=hash RUNS=3 TOTAL=1000000 BIN=... OUT=... scripts/bench-scaling.sh
#
# BIN holds memstored, memstore, memcached and tkrzw_dbm_perf (LIB, if set,
# is the LD_LIBRARY_PATH the last two need). Writes OUT/scaling-raw.tsv.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:?BIN=dir with memstored memstore memcached tkrzw_dbm_perf}
OUT=${OUT:?OUT=dir for scaling-raw.tsv}
LIB=${LIB:-}
THREADS=${THREADS:-1 2 4 8 16}
RUNS=${RUNS:-3}
SECS=${SECS:-3}
CLIENT_THREADS=${CLIENT_THREADS:-8}
CONNS=${CONNS:-8}
TOTAL=${TOTAL:-4000000}
PARTS=${PARTS:-server engine}   # which of the two measurements to run
DBMS=${DBMS:-tiny hash}
CORES=$(nproc)
TICK=$(getconf CLK_TCK)
RAW="$OUT/scaling-raw.tsv"
WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
# shellcheck source=scripts/lib/ports.sh
. "$ROOT/scripts/lib/ports.sh"

cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
pin() { # first count -> "taskset -c a-b" or nothing
  if command -v taskset >/dev/null 2>&1; then echo "taskset -c $1-$(($1 + $2 - 1))"; fi
}

{
  echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "# date $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# cpu $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $CORES cores, kernel $(uname -r)"
  echo "# client: memstore bench --protocol binary --threads $CLIENT_THREADS --connections $CONNS --duration $SECS --random_key --key_space 100000"
  printf 'kind\tworkload\tthreads\tside\trun\tpinned\tset_per_sec\tget_per_sec\tcpu_us_per_req\n'
} >"$RAW"

server_run() { # side n run
  local side=$1 n=$2 run=$3 spin="" cpin="" pinned=no
  if [ $((n + CLIENT_THREADS)) -le "$CORES" ] && [ -n "$(pin 0 1)" ]; then
    spin=$(pin 0 "$n")
    cpin=$(pin $((CORES - CLIENT_THREADS)) "$CLIENT_THREADS")
    pinned=yes
  fi
  rm -f "$WORK/port"
  if [ "$side" = memstored ]; then
    $spin "$BIN/memstored" -u "$(id -un)" -s '*#capsiz=4096m' -l 127.0.0.1:0 \
      --port-file "$WORK/port" -R "$n" >"$WORK/server.log" 2>&1 &
  else
    MEMCACHED_PORT_FILENAME="$WORK/port" LD_LIBRARY_PATH=$LIB $spin "$BIN/memcached" \
      -u "$(id -un)" -l 127.0.0.1 -p -1 -U 0 -m 4096 -t "$n" -c 4096 >"$WORK/server.log" 2>&1 &
  fi
  SERVER_PID=$!
  local port c0 c1 log="$WORK/client.json"
  port=$(wait_port_file "$WORK/port" "$SERVER_PID" "$side") || { cat "$WORK/server.log" >&2; return 1; }
  c0=$(cpu_ticks "$SERVER_PID")
  $cpin "$BIN/memstore" bench --address "127.0.0.1:$port" --protocol binary \
    --threads "$CLIENT_THREADS" --connections "$CONNS" --iter 100000000 --duration "$SECS" --random_key --key_space 100000 \
    --json >"$log" 2>"$WORK/client.err" || { cat "$WORK/client.err" >&2; }
  c1=$(cpu_ticks "$SERVER_PID")
  kill -TERM "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=
  python3 - "$log" "$((c1 - c0))" "$TICK" "$side" "$n" "$run" "$pinned" >>"$RAW" <<'PY'
import json, sys
log, ticks, hz, side, n, run, pinned = sys.argv[1:]
j = json.loads(open(log).read().strip().splitlines()[-1])
ph = {p["phase"]: p for p in j["phases"]}
reqs = sum(p["requests"] for p in ph.values())
us = int(ticks) / int(hz) * 1e6 / reqs if reqs else 0
print(f"server\tbinary\t{n}\t{side}\t{run}\t{pinned}\t"
      f"{ph['set']['requests_per_sec']:.0f}\t{ph['get']['requests_per_sec']:.0f}\t{us:.2f}")
PY
  tail -n1 "$RAW" >&2
}

engine_run() { # side dbm n run
  local side=$1 dbm=$2 n=$3 run=$4 flags log="$WORK/perf.log" s g
  flags="--dbm $dbm --iter $((TOTAL / n)) --threads $n"
  if [ "$dbm" = hash ]; then flags="$flags --path $WORK/p.tkh --buckets $((TOTAL * 2))"; fi
  rm -f "$WORK"/p.tkh*
  if [ "$side" = memstored ]; then
    # shellcheck disable=SC2086
    "$BIN/memstore" perf sequence $flags >"$log" 2>&1
  else
    # shellcheck disable=SC2086
    LD_LIBRARY_PATH=$LIB "$BIN/tkrzw_dbm_perf" sequence $flags >"$log" 2>&1
  fi
  s=$(sed -n 's/^Setting done: .* qps=\([0-9]*\).*/\1/p' "$log" | head -n1)
  g=$(sed -n 's/^Getting done: .* qps=\([0-9]*\).*/\1/p' "$log" | head -n1)
  [ -n "$s" ] || { echo "no qps from $side $dbm $n:" >&2; cat "$log" >&2; }
  printf 'engine\t%s\t%s\t%s\t%s\t-\t%s\t%s\t-\n' "$dbm" "$n" "$side" "$run" "${s:-0}" "${g:-0}" >>"$RAW"
  tail -n1 "$RAW" >&2
  rm -f "$WORK"/p.tkh*
}

case " $PARTS " in *" server "*) ;; *) THREADS_SERVER= ;; esac
for n in ${THREADS_SERVER-$THREADS}; do
  for run in $(seq 1 "$RUNS"); do
    server_run memstored "$n" "$run"
    server_run memcached "$n" "$run"
  done
done
case " $PARTS " in *" engine "*) ;; *) DBMS= ;; esac
for dbm in $DBMS; do
  for n in $THREADS; do
    for run in $(seq 1 "$RUNS"); do
      engine_run memstored "$dbm" "$n" "$run"
      engine_run tkrzw "$dbm" "$n" "$run"
    done
  done
done
echo "wrote $RAW" >&2
