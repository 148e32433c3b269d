#!/usr/bin/env bash
# Clients' latency while the server does maintenance (issue 40, finding 7).
# For each store, a 100-shard `.tkh` and a 100-shard `.tkmt` loaded with
# RECORDS records of 100 bytes, each run measures in turn:
#   idle     4 probe clients for IDLE_SECS with no maintenance: 2 setting
#            and 2 getting random loaded keys, one record per request,
#            paced at RATE requests/s in all (memstore bench --rate);
#   sync     the same probes while `memstore remote sync --hard` runs;
#   backup   ... while `memstore remote sync make_backup=` runs;
#   rebuild  ... while `memstore remote rebuild` runs.
# The probes start a second before the maintenance and stop as it ends. A
# row per probe process: its p50, p99.9 and worst request latency (HDR
# histogram of memstore bench), how long the maintenance took, and the
# 1-minute load average before and after. Then plot_maintenance.py writes
# OUT_DIR/maintenance.md (worst and p99.9 per phase, against the goal:
# worst during maintenance at most 2x the idle worst and under 50 ms) and
# OUT_DIR/maintenance.png. Run it on a quiet machine (docs BENCHMARKING.md).
#
#   BIN_DIR=target/release scripts/bench-maintenance.sh [RUNS] [RECORDS]
#   (OUT_DIR=docs/bench, IDLE_SECS=5, RATE=4000, KINDS="tkh tkmt", SHARDS=100;
#    NOTE="..." adds a line to the report, e.g. what else ran on the machine)
set -euo pipefail
RUNS=${1:-3} RECORDS=${2:-1000000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN_DIR=${BIN_DIR:-$ROOT/target/release}
OUT_DIR=${OUT_DIR:-$ROOT/docs/bench}
IDLE_SECS=${IDLE_SECS:-5} RATE=${RATE:-4000} KINDS=${KINDS:-tkh tkmt} SHARDS=${SHARDS:-100}
# shellcheck source=scripts/lib/ports.sh
. "$ROOT/scripts/lib/ports.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-maint.XXXXXX")
cleanup() {
  for f in "$WORK"/*.pid; do [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

load1() { cut -d' ' -f1 /proc/loadavg; }
start() { # kind -> prints the port
  "$BIN_DIR/memstored" -u "$(server_user)" -s "$WORK/m.$1#num_shards=$SHARDS" -l 127.0.0.1:0 \
    --port-file "$WORK/m.port" >"$WORK/m.log" 2>&1 &
  echo $! >"$WORK/m.pid"
  wait_port_file "$WORK/m.port" "$!" memstored
}
stop() {
  local pid
  pid=$(cat "$WORK/m.pid")
  kill "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  rm -rf "$WORK"/m.* "$WORK"/*.json
}
bench() { # port args...
  "$BIN_DIR/memstore" bench --address "127.0.0.1:$1" --protocol binary --size 100 "${@:2}"
}
load_records() { # port
  bench "$1" --set_only --threads 2 --multi 100 --iter $((RECORDS / 2)) --json >/dev/null
}
# Starts the 4 probes (2 processes of 2 threads); they stop once $WORK/stop exists.
probes() { # port
  rm -f "$WORK/stop"
  local common=(--threads 2 --random_key --key_space "$RECORDS" --iter 1000000000
    --rate $((RATE / 2)) --stop_file "$WORK/stop" --json)
  bench "$1" --set_only "${common[@]}" >"$WORK/set.json" &
  echo $! >"$WORK/set.pid"
  bench "$1" --get_only "${common[@]}" >"$WORK/get.json" &
  echo $! >"$WORK/get.pid"
}
finish_probes() {
  touch "$WORK/stop"
  wait "$(cat "$WORK/set.pid")" "$(cat "$WORK/get.pid")"
  rm -f "$WORK/set.pid" "$WORK/get.pid"
}
row() { # kind run phase maint_secs load_before
  local f
  for f in set get; do
    python3 - "$WORK/$f.json" "$@" "$f" "$(load1)" <<'EOF'
import json, sys
path, kind, run, phase, secs, load0, probe, load1 = sys.argv[1:]
p = json.load(open(path))["phases"][0]
l = p["latency_us"]
print("\t".join(map(str, [kind, run, phase, probe, p["requests"], p["errors"],
                          l["p50"], l["p999"], l["max"], secs, load0, load1])))
EOF
  done
}
phase() { # kind run port name command...
  local kind=$1 run=$2 port=$3 name=$4 l0 t0 t1 secs
  shift 4
  l0=$(load1)
  probes "$port"
  sleep 1
  t0=$(date +%s.%N)
  if [ $# -gt 0 ]; then
    "$BIN_DIR/memstore" remote --address "127.0.0.1:$port" "$@" >/dev/null
  else
    sleep "$IDLE_SECS"
  fi
  t1=$(date +%s.%N)
  finish_probes
  secs=$(python3 -c "print(f'{$t1 - $t0:.3f}')")
  row "$kind" "$run" "$name" "$secs" "$l0"
}

mkdir -p "$OUT_DIR"
RAW="$OUT_DIR/maintenance-raw.tsv"
{
  printf 'kind\trun\tphase\tprobe\trequests\terrors\tp50_us\tp999_us\tmax_us\tmaint_s\tload_before\tload_after\n'
  for kind in $KINDS; do
    for run in $(seq 1 "$RUNS"); do
      port=$(start "$kind")
      load_records "$port"
      "$BIN_DIR/memstore" remote --address "127.0.0.1:$port" sync --hard >/dev/null
      phase "$kind" "$run" "$port" idle
      phase "$kind" "$run" "$port" sync sync --hard
      phase "$kind" "$run" "$port" backup sync make_backup=
      rm -f "$WORK"/m."$kind".backup.*
      phase "$kind" "$run" "$port" rebuild rebuild
      stop
    done
  done
} >"$RAW"
python3 "$ROOT/scripts/plot_maintenance.py" "$RAW" "$OUT_DIR" \
  "scripts/bench-maintenance.sh $RUNS $RECORDS (RATE=$RATE IDLE_SECS=$IDLE_SECS SHARDS=$SHARDS)"
