#!/usr/bin/env bash
# Replication's cost and lag on loopback (issue 18). Each run, in turn:
#   alone    a master (-s m.tkh --ulog-dir --server-id 1 -R 2) under
#            `memstore bench --protocol binary --set_only --threads 2
#            --multi 100 --size 100` as fast as it answers: writes/s;
#   replica  the same with one replica following it: writes/s;
#   lag      the master and its replica under a paced load (--rate RATE),
#            the master's `repl_replica_0_lag_ms` (how long the oldest
#            update the replica has not acknowledged has waited) sampled
#            every 10 ms: p50, p99, max.
# Every server starts on fresh files; runs alternate alone/replica/lag.
#
# MASTER_ARGS adds flags to every master (e.g. "--ulog-segment-size 1g");
# STORE_PARAMS database parameters to both stores (e.g. "#num_buckets=4000000").
#
#   BIN_DIR=target/release scripts/bench-replication.sh [RUNS] [SECS] [RATE] \
#       > docs/bench/replication-raw.tsv
#   python3 scripts/plot_replication.py docs/bench/replication-raw.tsv docs/bench
set -euo pipefail
RUNS=${1:-3} SECS=${2:-10} RATE=${3:-100000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN_DIR=${BIN_DIR:-$ROOT/target/release}
# shellcheck source=scripts/lib/ports.sh
. "$ROOT/scripts/lib/ports.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-repl.XXXXXX")
cleanup() {
  for f in "$WORK"/*.pid; do [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

start() { # name extra-args... -> prints the port; the pid goes to $WORK/NAME.pid
  local name=$1
  shift
  "$BIN_DIR/memstored" -u "$(server_user)" -s "$WORK/$name.tkh${STORE_PARAMS:-}" --ulog-dir "$WORK/$name-ulog" -R 2 \
    -l 127.0.0.1:0 --port-file "$WORK/$name.port" "$@" >"$WORK/$name.log" 2>&1 &
  echo $! >"$WORK/$name.pid"
  wait_port_file "$WORK/$name.port" "$!" "$name"
}
stop_all() {
  for f in "$WORK"/*.pid; do
    [ -e "$f" ] || continue
    kill "$(cat "$f")" 2>/dev/null || true
    while kill -0 "$(cat "$f")" 2>/dev/null; do sleep 0.05; done
    rm -f "$f"
  done
  rm -rf "$WORK"/*.tkh* "$WORK"/*-ulog "$WORK"/*.port
}
stat_of() { python3 "$ROOT/scripts/stat_probe.py" "$1" "$2"; } # port name
bench() { # port [extra args] -> writes/s
  "$BIN_DIR/memstore" bench --address "127.0.0.1:$1" --protocol binary --set_only \
    --threads 2 --multi 100 --size 100 --iter 100000000 --duration "$SECS" --json "${@:2}" |
    python3 -c 'import json,sys; print(round(json.load(sys.stdin)["phases"][0]["records_per_sec"]))'
}
wait_caught_up() { # master-port
  for _ in $(seq 1 3000); do
    [ "$(stat_of "$1" repl_replica_0_lag_records)" = 0 ] && return 0
    sleep 0.02
  done
  echo "the replica did not catch up" >&2
  return 1
}
# Samples the master's repl_replica_0_lag_ms every 10 ms until FILE exists;
# prints p50 p99 max samples.
sample_lag() { # master-port stop-file
  python3 "$ROOT/scripts/stat_probe.py" "$1" repl_replica_0_lag_ms --until "$2"
}

printf 'run\tmode\twrites_per_s\tlag_p50_ms\tlag_p99_ms\tlag_max_ms\tsamples\n'
for run in $(seq 1 "$RUNS"); do
  # shellcheck disable=SC2086
  mport=$(start m --server-id 1 ${MASTER_ARGS:-})
  printf '%s\talone\t%s\t\t\t\t\n' "$run" "$(bench "$mport")"
  stop_all

  # shellcheck disable=SC2086
  mport=$(start m --server-id 1 ${MASTER_ARGS:-})
  start r --server-id 2 --replicate-from "127.0.0.1:$mport" >/dev/null
  printf '%s\treplica\t%s\t\t\t\t\n' "$run" "$(bench "$mport")"
  stop_all

  # shellcheck disable=SC2086
  mport=$(start m --server-id 1 ${MASTER_ARGS:-})
  start r --server-id 2 --replicate-from "127.0.0.1:$mport" >/dev/null
  # The stream is up once the master lists it.
  for _ in $(seq 1 3000); do
    [ -n "$(stat_of "$mport" repl_replica_0_server_id)" ] && break
    sleep 0.02
  done
  rm -f "$WORK/stop"
  sample_lag "$mport" "$WORK/stop" >"$WORK/lag" &
  sampler=$!
  rate=$(bench "$mport" --rate "$RATE")
  touch "$WORK/stop"
  wait "$sampler"
  wait_caught_up "$mport"
  read -r p50 p99 max n <"$WORK/lag"
  printf '%s\tlag\t%s\t%s\t%s\t%s\t%s\n' "$run" "$rate" "$p50" "$p99" "$max" "$n"
  stop_all
done
