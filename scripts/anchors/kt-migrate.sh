#!/usr/bin/env bash
# NOT RUN BY CI (CI has no Kyoto Tycoon; crates/server/tests/kt_replica.rs runs the same steps
# against memstored's own Kyoto Tycoon stream). A live migration from a real ktserver 0.9.56b
# (built from source, ../shared/ANCHORS.md, into $KT) to memstored, as docs/operations.md
# "Live migration from Kyoto Tycoon" describes it:
#
#   1. ktserver as the master, with an update log (-ulog) and -sid 1; records loaded with
#      ktremotemgr (set, set -xt, import, remove, clear, setbulk).
#   2. memstored as its replica: --replicate-from kt://HOST:PORT --server-id 2 --ulog-dir DIR,
#      with a Kyoto Tycoon port of its own (--kt-listen) for ktremotemgr to read.
#   3. `ktremotemgr list -pv -pt` (keys, values, expiration times) of both agree.
#   4. More writes on the master (sets with -xt, removes); they agree again.
#   5. memstored stopped, written to meanwhile, restarted: it resumes from kt-replication.rts
#      and they agree again; its update log holds every update once (no duplicates).
#   6. memstored promoted (`memstore remote changemaster`): it takes writes through
#      ktremotemgr, and a write to the old master does not arrive.
#
# Usage: scripts/anchors/kt-migrate.sh [WORKDIR]
# Env: KT (default /opt/kt), MEMSTORED (default target/release/memstored), MEMSTORE (the CLI,
#      default next to MEMSTORED).
# Exit status: 0 when every check passed. Servers bind 127.0.0.1 only; every wait is bounded.
# Kyoto Tycoon's tools take ports below 32768 only, and ktserver cannot be asked for a free
# one: each server is started on the first port of 21900-21999 it can bind (it exits if it
# cannot, and the next is tried), never on one probed beforehand.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
KT=${KT:-/opt/kt}
MEMSTORED=${MEMSTORED:-$ROOT/target/release/memstored}
MEMSTORE=${MEMSTORE:-$(dirname "$MEMSTORED")/memstore}
W=${1:-$(mktemp -d /tmp/kt-migrate.XXXXXX)}
export LD_LIBRARY_PATH=$KT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KTSERVER=$KT/bin/ktserver
MGR=$KT/bin/ktremotemgr
for f in "$KTSERVER" "$MGR" "$MEMSTORED" "$MEMSTORE"; do
  [ -x "$f" ] || { echo "missing $f" >&2; exit 2; }
done
mkdir -p "$W"
# shellcheck source=../lib/ports.sh
. "$ROOT/scripts/lib/ports.sh"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
step() { echo "== $*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

# start_kt: ktserver as the master on the first port it can bind; sets KTPORT, KTPID.
start_kt() {
  local p i
  for p in $(seq 21900 21999); do
    "$KTSERVER" -host 127.0.0.1 -port "$p" -log "$W/ktserver.log" -ls -ulog "$W/kt-ulog" -sid 1 \
      "$W/master.kch" &
    KTPID=$!
    for i in $(seq 1 250); do
      if ! kill -0 "$KTPID" 2>/dev/null; then break; fi
      if "$MGR" report -port "$p" >/dev/null 2>&1; then KTPORT=$p; PIDS+=("$KTPID"); return 0; fi
      sleep 0.02
    done
    kill "$KTPID" 2>/dev/null || true
    wait "$KTPID" 2>/dev/null || true
  done
  fail "ktserver could not bind a port in 21900-21999 (see $W/ktserver.log)"
}

# start_ms: memstored as the replica (main port from the kernel, Kyoto Tycoon port the first
# in range it can bind); sets MSPORT, MSKT, MSPID.
start_ms() {
  local p port_file=$W/ms.port
  for p in $(seq 21900 21999); do
    [ "$p" = "$KTPORT" ] && continue
    rm -f "$port_file"
    "$MEMSTORED" -u "$(server_user)" -l 127.0.0.1:0 --port-file "$port_file" \
      --kt-listen "127.0.0.1:$p" --ulog-dir "$W/ms-ulog" --server-id 2 \
      --replicate-from "kt://127.0.0.1:$KTPORT" "$W/replica.kch" >>"$W/memstored.out" 2>>"$W/memstored.log" &
    MSPID=$!
    if MSPORT=$(wait_port_file "$port_file" "$MSPID" memstored 2>/dev/null); then
      MSKT=$p
      PIDS+=("$MSPID")
      return 0
    fi
    wait "$MSPID" 2>/dev/null || true
  done
  fail "memstored could not bind a port in 21900-21999 (see $W/memstored.log)"
}

stop_ms() {
  kill -TERM "$MSPID"
  wait "$MSPID" || fail "memstored exited with $?"
}

# listing PORT: every record as ktremotemgr lists it (key, value, xt), sorted.
listing() { "$MGR" list -port "$1" -pv -pt | LC_ALL=C sort; }

# agree WHAT: waits (at most 30 s) until memstored's listing equals the master's.
agree() {
  local i
  listing "$KTPORT" >"$W/master.list"
  for i in $(seq 1 300); do
    listing "$MSKT" >"$W/replica.list" 2>/dev/null || true
    if cmp -s "$W/master.list" "$W/replica.list"; then
      echo "   agree: $(wc -l <"$W/master.list") records, $(awk -F'\t' '$3 < 1099511627775' "$W/master.list" | wc -l) with an xt"
      return 0
    fi
    sleep 0.1
  done
  diff "$W/master.list" "$W/replica.list" | head -20 >&2
  fail "$1: memstored's records differ from the master's"
}

# stat NAME: memstored's `stats` value NAME, over its memcached port.
stat() {
  local v
  exec 3<>"/dev/tcp/127.0.0.1/$MSPORT"
  printf 'stats\r\nquit\r\n' >&3
  v=$(timeout 10 cat <&3 | tr -d '\r' | awk -v k="$1" '$1 == "STAT" && $2 == k { print $3 }')
  exec 3<&-
  echo "$v"
}

step "ktserver master with an update log"
start_kt
echo "   ktserver $("$KTSERVER" --version 2>&1 | head -1) on port $KTPORT"
"$MGR" set -port "$KTPORT" greeting hello
"$MGR" set -port "$KTPORT" -xt 3600 timed "an hour"
"$MGR" set -port "$KTPORT" -xt 86400 daily "a day"
for i in $(seq 1 200); do printf 'bulk%03d\tvalue %d\n' "$i" "$i"; done >"$W/bulk.tsv"
"$MGR" import -port "$KTPORT" "$W/bulk.tsv"
"$MGR" import -port "$KTPORT" -xt 7200 <(printf 'xt%03d\ttimed %d\n' 1 1 2 2 3 3)
"$MGR" setbulk -port "$KTPORT" -xt 600 sb1 one sb2 two
"$MGR" set -port "$KTPORT" doomed x
"$MGR" remove -port "$KTPORT" doomed
"$MGR" remove -port "$KTPORT" bulk007

step "memstored replica (kt://127.0.0.1:$KTPORT)"
start_ms
agree "the records loaded before the replica started"
"$MGR" set -port "$MSKT" refused x 2>/dev/null && fail "the replica took a write before promotion"

step "live writes on the master"
"$MGR" set -port "$KTPORT" -xt 1200 live1 "twenty minutes"
"$MGR" set -port "$KTPORT" live2 forever
"$MGR" set -port "$KTPORT" greeting "hello again"
"$MGR" remove -port "$KTPORT" bulk100
"$MGR" set -port "$KTPORT" -add -xt 3000 added "fifty minutes"
agree "live writes"

step "replica restarted; the master written to meanwhile"
stop_ms
cat "$W/ms-ulog/kt-replication.rts"
"$MGR" set -port "$KTPORT" -xt 900 while-down "it was away"
"$MGR" remove -port "$KTPORT" bulk200
start_ms
agree "after the restart"
# Every update once: the replica's own log re-logs each message it applied.
# (`ktremotemgr slave` without -uw prints the master's whole log and stops when caught up.)
kt_msgs=$(timeout 30 "$MGR" slave -port "$KTPORT" | wc -l)
ms_recs=$(stat ulog_records)
echo "   master's update log: $kt_msgs messages; replica's: $ms_recs records"
[ "$kt_msgs" = "$ms_recs" ] || fail "the replica's log has $ms_recs updates, the master's $kt_msgs"

step "promote memstored"
"$MEMSTORE" remote --address "127.0.0.1:$MSPORT" changemaster
"$MGR" set -port "$MSKT" -xt 60 after "promotion"
[ "$("$MGR" get -port "$MSKT" after)" = promotion ] || fail "no write after promotion"
"$MGR" set -port "$KTPORT" on-the-old-master x
sleep 1 # the only negative check: a write that must NOT arrive
if "$MGR" get -port "$MSKT" on-the-old-master >/dev/null 2>&1; then
  fail "a write to the old master arrived after promotion"
fi
echo "   repl_master='$(stat repl_master)' repl_connected=$(stat repl_connected)"
step "all checks passed ($W)"
