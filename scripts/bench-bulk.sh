#!/usr/bin/env bash
# The bulk table of Kyoto Tycoon's kt-msgpack article (shared/seeds/003) on
# this machine, and the Tkrzw-RPC sharding run (shared/seeds/002) scaled to it.
#
# Part 1: set and get of THREADS x ITER records (default 4 x 250k = 1M) with
# bulk 1, 10 and 100, over memstored (binary, text, MessagePack-RPC) and
# Debian's memcached (binary, text), all driven by `memstore bench`. Both
# servers stay up; runs alternate between them (memstored binary, memcached
# binary, memstored text, memcached text, memstored RPC), REPS rounds, and
# the table gives the median.
#
# Part 1b (when KT_DIR names a Kyoto Tycoon install prefix: bin/ktserver,
# bin/ktremotetest, lib/): seed 003's own client, `ktremotetest bulk -th THREADS
# [-bin] -set|-get -bulk B ITER`, over KT's HTTP RPC and KT's binary
# protocol, against memstored's --kt-listen port and against `ktserver`
# (both a 1 GiB cache, `*#capsiz=1024m`), alternating; with the RPC rows of
# part 1 they make seed 003's 18-row table. KT's clients take no port above
# 32767 and ktserver cannot report a kernel-picked one, so both servers are
# started on the first port from KT_PORT_BASE (20000) they manage to bind:
# a port taken meanwhile makes the start fail, which is seen, and the next
# one is tried.
#
# Part 2: `memstore bench --protocol rpc --set_only --multi 100` into a
# 100-shard appending hash store, then `memstore remote sync --hard`,
# `sync make_backup=` and `rebuild`, each timed, while a
# `memstore bench --get_only` runs alongside; its worst latency is reported.
#
# Writes docs/bench/bulk.md, docs/bench/bulk-raw.tsv and docs/bench/bulk.png
# (scripts/plot_bulk.py).
#
# PART=seed003 runs only seed 003's 18 rows as issue 47 measures them
# (scripts/lib/seed003.sh): the seed's store
# (`casket.kct#bnum=2000000#opts=ls#ktopts=p`), a fresh server per run,
# memstored against `ktserver -th 8`, server CPU per record (/proc
# utime+stime over each phase) beside wall time, median of REPS alternating;
# writes docs/bench/bulk-seed003.tsv and prints the table (markdown). KT_DIR
# is Kyoto Tycoon's install prefix (bin/, lib/).
#
#   scripts/bench-bulk.sh                         # the full run (~20-40 min here)
#   ITER=20000 REPS=1 scripts/bench-bulk.sh       # a quick smoke run
#   REPORT_ONLY=1 scripts/bench-bulk.sh           # re-render from bulk-raw.tsv
#   KT_DIR=/opt/kt scripts/bench-bulk.sh          # with the KT rows (KT's install prefix)
#   BIN_DIR=/path/to/release scripts/bench-bulk.sh      # prebuilt memstored + memstore
#   PART=seed003 KT_DIR=/opt/kt scripts/bench-bulk.sh   # seed 003's table, server CPU per record
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ITER=${ITER:-250000}
THREADS=${THREADS:-4}
REPS=${REPS:-3}
BULKS=${BULKS:-"1 10 100"}
OUT_DIR=${OUT_DIR:-docs/bench}
RAW_OUT="$OUT_DIR/bulk-raw.tsv"
META_OUT="$OUT_DIR/bulk-meta.txt"
mkdir -p "$OUT_DIR"

if [ "${REPORT_ONLY:-0}" = 1 ]; then
  exec python3 scripts/plot_bulk.py "$RAW_OUT" "$META_OUT" "$OUT_DIR"
fi

if [ "${PART:-}" != seed003 ] && ! command -v memcached >/dev/null 2>&1; then
  echo "installing memcached..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq memcached >/dev/null
fi

if [ -n "${BIN_DIR:-}" ]; then
  BIN=$(cd "$BIN_DIR" && pwd)  # release binaries built elsewhere (same commit, said in the meta file)
else
  echo "building memstored and memstore (release)..." >&2
  cargo build --release -q -p memstored-server -p memstored-cli
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release"
fi
MEMSTORED="$BIN/memstored"
MEMSTORE="$BIN/memstore"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-bulk.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# shellcheck source=scripts/lib/ports.sh
. "$ROOT/scripts/lib/ports.sh"

# shellcheck source=scripts/lib/seed003.sh
. "$ROOT/scripts/lib/seed003.sh" # start_kt_port (part 1b) and seed003

if [ "${PART:-}" = seed003 ]; then
  : "${KT_DIR:?PART=seed003 needs KT_DIR, the Kyoto Tycoon install prefix}"
  seed003
  exit 0
fi

# memstored as a cache like memcached's 1 GiB one, two worker threads like memcached -t 2.
MS_CMD="memstored -s '*#capsiz=1024m' -l 127.0.0.1:0 -R 2"
MC_CMD="memcached -l 127.0.0.1 -p -1 -U 0 -m 1024 -t 2"
(cd "$WORK" && exec "$MEMSTORED" -u "$(server_user)" -s '*#capsiz=1024m' -l 127.0.0.1:0 --port-file "$WORK/ms.port" -R 2 >/dev/null) &
PIDS+=($!)
MS_PORT=$(wait_port_file "$WORK/ms.port" "$!" memstored)
MEMCACHED_PORT_FILENAME="$WORK/mc.port" memcached -u "$(server_user)" -l 127.0.0.1 -p -1 -U 0 -m 1024 -t 2 &
PIDS+=($!)
MC_PORT=$(wait_port_file "$WORK/mc.port" "$!" memcached)

LOAD_BEFORE=$(uptime)
{
  echo "date	$(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit	$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "cpu	$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') x $(nproc)"
  echo "memory	$(free -g | awk '/Mem:/ {print $2 " GiB"}')"
  echo "memcached	$(memcached -V)"
  echo "threads	$THREADS"
  echo "iter	$ITER"
  echo "reps	$REPS"
  echo "memstored_cmd	$MS_CMD"
  echo "memcached_cmd	$MC_CMD"
  echo "bench_cmd	memstore bench --address 127.0.0.1:PORT --protocol P --multi B --threads $THREADS --iter $ITER --json"
  echo "load_before	$LOAD_BEFORE"
} >"$WORK/meta.txt"

RAW="$WORK/raw.tsv"
printf 'server\tprotocol\tbulk\trep\tphase\trecords\tseconds\trecords_per_sec\tp50_us\tp99_us\tp999_us\tmax_us\terrors\thits\n' >"$RAW"

# server|protocol|port
TARGETS=(
  "memstored|binary|$MS_PORT"
  "memcached|binary|$MC_PORT"
  "memstored|text|$MS_PORT"
  "memcached|text|$MC_PORT"
  "memstored|rpc|$MS_PORT"
)

total=$((REPS * $(echo $BULKS | wc -w) * ${#TARGETS[@]}))
n=0
for rep in $(seq 1 "$REPS"); do
  for bulk in $BULKS; do
    for t in "${TARGETS[@]}"; do
      IFS='|' read -r server proto port <<<"$t"
      n=$((n + 1))
      echo "[$n/$total] rep $rep bulk $bulk $server $proto ($(cut -d' ' -f1-3 /proc/loadavg))" >&2
      json=$("$MEMSTORE" bench --address "127.0.0.1:$port" --protocol "$proto" --multi "$bulk" \
        --threads "$THREADS" --iter "$ITER" --json)
      python3 - "$server" "$proto" "$bulk" "$rep" "$json" >>"$RAW" <<'EOF'
import json, sys
server, proto, bulk, rep, text = sys.argv[1:]
j = json.loads(text)
for p in j["phases"]:
    l = p["latency_us"]
    print("\t".join(str(x) for x in [server, proto, bulk, rep, p["phase"], p["records"],
          f'{p["seconds"]:.4f}', f'{p["records_per_sec"]:.0f}', l["p50"], l["p99"], l["p999"],
          l["max"], p["errors"], p["hits"]]))
EOF
    done
  done
done
echo "load_after_bulk	$(uptime)" >>"$WORK/meta.txt"

# ---- Part 1b: Kyoto Tycoon's protocols, memstored vs ktserver ----
if [ -n "${KT_DIR:-}" ] && [ -x "$KT_DIR/bin/ktserver" ] && [ -x "$KT_DIR/bin/ktremotetest" ]; then
  export LD_LIBRARY_PATH="$KT_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  PIDS=()
  KT_STORE='*#capsiz=1024m'
  pushd "$WORK" >/dev/null
  start_kt_port memstored-kt "$MEMSTORED" -u "$(server_user)" -s "$KT_STORE" -l 127.0.0.1:0 -R 2 --kt-listen '127.0.0.1:{PORT}'
  MSKT_PORT=$SERVER_PORT
  KT_PORT_BASE=$((MSKT_PORT + 1)) start_kt_port ktserver \
    "$KT_DIR/bin/ktserver" -host 127.0.0.1 -port '{PORT}' -th 2 -log "$WORK/ktserver.log" "$KT_STORE"
  KT_PORT=$SERVER_PORT
  popd >/dev/null
  {
    echo "kt_memstored_cmd	memstored -s '$KT_STORE' -R 2 --kt-listen PORT"
    echo "kt_ktserver_cmd	ktserver -host 127.0.0.1 -port PORT -th 2 '$KT_STORE'"
    echo "kt_version	$("$KT_DIR/bin/ktserver" --version 2>&1 | head -n1)"
    echo "kt_bench_cmd	ktremotetest bulk -th $THREADS [-bin] -set|-get -bulk B -port PORT $ITER"
  } >>"$WORK/meta.txt"
  total=$((REPS * $(echo $BULKS | wc -w) * 4))
  n=0
  for rep in $(seq 1 "$REPS"); do
    for bulk in $BULKS; do
      for t in "memstored|kt-http|$MSKT_PORT" "ktserver|kt-http|$KT_PORT" \
        "memstored|kt-binary|$MSKT_PORT" "ktserver|kt-binary|$KT_PORT"; do
        IFS='|' read -r server proto port <<<"$t"
        bin=()
        if [ "$proto" = kt-binary ]; then bin=(-bin); fi
        n=$((n + 1))
        echo "[$n/$total] rep $rep bulk $bulk $server $proto ($(cut -d' ' -f1-3 /proc/loadavg))" >&2
        for phase in set get; do
          out=$("$KT_DIR/bin/ktremotetest" bulk -th "$THREADS" "${bin[@]}" "-$phase" -bulk "$bulk" -port "$port" "$ITER" 2>&1)
          python3 - "$server" "$proto" "$bulk" "$rep" "$phase" "$((THREADS * ITER))" "$out" >>"$RAW" <<'EOF2'
import sys
server, proto, bulk, rep, phase, records, out = sys.argv[1:]
lines = out.splitlines()
start = next(i for i, l in enumerate(lines) if l.endswith("records:"))
secs = next(float(l.split()[1]) for l in lines[start:] if l.startswith("time:"))
errors = sum(1 for l in lines if "error" in l.lower())
print("\t".join(str(x) for x in [server, proto, bulk, rep, phase, records, f"{secs:.4f}",
      f"{int(records) / secs:.0f}", "", "", "", "", errors, ""]))
EOF2
        done
      done
    done
  done
  echo "load_after_kt	$(uptime)" >>"$WORK/meta.txt"
else
  echo "KT_DIR unset or without ktserver/ktremotetest: no Kyoto Tycoon rows" >&2
fi

# ---- Part 2: the Tkrzw-RPC sharding run, scaled ----
for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
PIDS=()
SH_DIR="$WORK/shard"
mkdir -p "$SH_DIR"
SH_STORE='casket.tkh#num_shards=100,update_mode=appending'
(cd "$SH_DIR" && exec "$MEMSTORED" -u "$(server_user)" -s "$SH_STORE" -l 127.0.0.1:0 --port-file "$WORK/sh.port" -R 2 -W 2 >/dev/null) &
PIDS+=($!)
SH_PORT=$(wait_port_file "$WORK/sh.port" "$!" memstored)
export MEMSTORE_ADDRESS="127.0.0.1:$SH_PORT"
echo "sharding: loading $((THREADS * ITER)) records" >&2
load_json=$("$MEMSTORE" bench --protocol rpc --set_only --multi 100 --threads "$THREADS" --iter "$ITER" --json)
echo "shard_store	$SH_STORE" >>"$WORK/meta.txt"
echo "shard_server_cmd	memstored -s '$SH_STORE' -l PORT -R 2 -W 2" >>"$WORK/meta.txt"
echo "shard_load_cmd	memstore bench --protocol rpc --set_only --multi 100 --threads $THREADS --iter $ITER" >>"$WORK/meta.txt"
echo "shard_load	$load_json" >>"$WORK/meta.txt"

# Gets alongside: one thread, one record per request, stopped by a file.
STOP="$WORK/stop"
GET_JSON="$WORK/get.json"
"$MEMSTORE" bench --protocol binary --get_only --threads 1 --iter 1000000000 \
  --random_key --key_space $((THREADS * ITER)) --stop_file "$STOP" --json >"$GET_JSON" &
GET_PID=$!
PIDS+=($GET_PID)
sleep 1
timed() {
  local name=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  echo "shard_op	$name	$(python3 -c "print(f'{$t1 - $t0:.3f}')")	memstore ${*:2}" >>"$WORK/meta.txt"
  echo "sharding: $name took $(python3 -c "print(f'{$t1 - $t0:.3f}')") s" >&2
}
timed "sync --hard" "$MEMSTORE" remote sync --hard
timed "sync make_backup=" "$MEMSTORE" remote sync make_backup=
timed "rebuild" "$MEMSTORE" remote rebuild
sleep 1
touch "$STOP"
wait "$GET_PID" || true
echo "shard_gets_cmd	memstore bench --protocol binary --get_only --threads 1 --iter 1000000000 --random_key --key_space $((THREADS * ITER)) --stop_file F" >>"$WORK/meta.txt"
echo "shard_gets	$(cat "$GET_JSON")" >>"$WORK/meta.txt"
echo "shard_files	$(ls "$SH_DIR" | wc -l) files, $(du -sh "$SH_DIR" | cut -f1)" >>"$WORK/meta.txt"
echo "load_after	$(uptime)" >>"$WORK/meta.txt"

cp "$RAW" "$RAW_OUT"
cp "$WORK/meta.txt" "$META_OUT"
python3 scripts/plot_bulk.py "$RAW_OUT" "$META_OUT" "$OUT_DIR"
