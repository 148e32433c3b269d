#!/usr/bin/env bash
# Instructions per record of a bulk set and a bulk get, counted by valgrind's
# callgrind in the server (repeatable whatever else the machine is doing).
# The server runs under callgrind with seed 003's store; scripts/bulk-client.py
# sets N records in batches of BULK, then gets them; callgrind's counters are
# zeroed before each phase and dumped after it, so each dump is one phase.
# Prints one line per phase (instructions / N) and leaves the dumps, for
# callgrind_annotate, in OUT_DIR (default: a temporary directory, printed).
#
#   scripts/callgrind-bulk.sh memstored BIN [PROTO]   # PROTO: kt-binary (default), rpc, mc-binary, mc-text
#   scripts/callgrind-bulk.sh ktserver KT_DIR         # KT's binary protocol
#   scripts/callgrind-bulk.sh memcached BIN PROTO     # PROTO: mc-binary or mc-text (memcached -t 1)
#   N=20000 BULK=100 OUT_DIR=/tmp/cg scripts/callgrind-bulk.sh memstored target/release/memstored
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SERVER=$1 BIN=$(realpath "$2") PROTO=${3:-kt-binary}
N=${N:-20000}
BULK=${BULK:-100}
STORE=${STORE:-'casket.kct#bnum=2000000#opts=ls#ktopts=p'}
OUT_DIR=${OUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/callgrind-bulk.XXXXXX")}
mkdir -p "$OUT_DIR"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/callgrind-bulk-db.XXXXXX")
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
# shellcheck source=scripts/lib/ports.sh
. "$ROOT/scripts/lib/ports.sh"

# Names written out in every dump, so each dump reads on its own.
CG=(valgrind --tool=callgrind --compress-strings=no --compress-pos=no --callgrind-out-file="$OUT_DIR/$SERVER.%p")
case $SERVER in
  memstored)
    # Under valgrind the io_uring driver answers nothing: epoll.
    (cd "$WORK" && exec "${CG[@]}" "$BIN" -u "$(server_user)" --io epoll -s "$STORE" \
      -l 127.0.0.1:0 --port-file "$WORK/port" >"$WORK/log" 2>&1) &
    PID=$!
    PORT=$(wait_port_file "$WORK/port" "$PID" memstored)
    ;;
  ktserver)
    export LD_LIBRARY_PATH="$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # ktserver cannot report a kernel-picked port and takes none above
    # 32767: the first of these it binds, seen by its log line.
    for PORT in $(seq 21000 21100); do
      (cd "$WORK" && exec "${CG[@]}" "$BIN/bin/ktserver" -host 127.0.0.1 -port "$PORT" -th 8 \
        -log "$WORK/kt.log" "$STORE" >"$WORK/log" 2>&1) &
      PID=$!
      for _ in $(seq 1 3000); do
        grep -q "listening" "$WORK/kt.log" 2>/dev/null && break
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.02
      done
      grep -q "listening" "$WORK/kt.log" 2>/dev/null && break
      kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=
      rm -f "$WORK/kt.log"
    done
    [ -n "$PID" ] || { echo "ktserver did not start" >&2; exit 1; }
    ;;
  memcached)
    # memcached sets its fd limits (soft and hard) to `-c`, and valgrind
    # allows that only at its own hard limit: the process's less the 12
    # descriptors valgrind keeps for itself.
    (cd "$WORK" && ulimit -n 1024 && MEMCACHED_PORT_FILENAME="$WORK/port" exec "${CG[@]}" "$BIN" \
      -u "$(server_user)" -l 127.0.0.1 -p -1 -U 0 -t 1 -m 1024 -c 1012 >"$WORK/log" 2>&1) &
    PID=$!
    PORT=$(wait_port_file "$WORK/port" "$PID" memcached)
    ;;
  *) echo "server: memstored, ktserver or memcached" >&2; exit 2 ;;
esac
# callgrind's pid is the server's (valgrind execs it in place).
printf 'server\tproto\tphase\trecords\tinstructions\tinstructions_per_record\tdump\n'
for phase in set get; do
  callgrind_control -z "$PID" >/dev/null 2>&1
  python3 scripts/bulk-client.py --port "$PORT" --proto "$PROTO" --phase "$phase" --bulk "$BULK" -n "$N"
  before=$(ls "$OUT_DIR" | wc -l)
  callgrind_control -d "$phase" "$PID" >/dev/null 2>&1
  dump=$(ls -t "$OUT_DIR"/"$SERVER".* | head -n1)
  [ "$(ls "$OUT_DIR" | wc -l)" -gt "$before" ] || { echo "no dump" >&2; exit 1; }
  ir=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$dump")
  [ -n "$ir" ] || ir=$(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$dump")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$SERVER" "$PROTO" "$phase" "$N" "$ir" "$((ir / N))" "$dump"
done
kill -TERM "$PID"; wait "$PID" 2>/dev/null || true; PID=
