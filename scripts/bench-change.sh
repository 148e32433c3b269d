#!/usr/bin/env bash
# A change measured against the commit before it: two memstored binaries,
# the same memcaslap workloads (text and binary, -T 1 -c 64 -X 100), run
# alternately A B A B A B on a fresh in-memory server (`*#capsiz=1024m -R 2`)
# each time. Reported per run and as medians: the client's TPS and the
# server's CPU time per request (utime+stime from /proc over the run, divided
# by cmd_get+cmd_set from its stats).
#
#   scripts/bench-change.sh OLD_BIN NEW_BIN [RUNS] [SECS] > docs/bench/change-XXX.tsv
#   WORKLOADS="text binary c128" scripts/bench-change.sh ...   # c128: seed 000's
#       memcslap --test=get --concurrency=128 --binary (EXEC=N per thread, 10000)
#
# OLD_BIN and NEW_BIN may be wrappers (`exec memstored --flag "$@"`) to
# compare two settings of one binary.
#
# A binary that predates --port-file (memstored < the port-0 change) is
# started on a port probed free just before; the script then checks with
# `stats` that the server answering is the one it started (its pid).
set -euo pipefail
OLD=$1 NEW=$2 RUNS=${3:-3} SECS=${4:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib/ports.sh
. "$ROOT/scripts/lib/ports.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-change.XXXXXX")
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT
TICK=$(getconf CLK_TCK)

cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
stat_of() { # port name
  exec 3<>"/dev/tcp/127.0.0.1/$1"
  printf 'stats\r\n' >&3
  timeout 5 sed -u '/^END/q' <&3 | tr -d '\r' | awk -v n="$2" '$2 == n {print $3}'
  exec 3>&- 3<&-
}
start() { # bin -> sets PID PORT
  rm -f "$WORK/port"
  # Binaries that know `-u` get it: a current one refuses root without it.
  local user=()
  if "$1" --help 2>&1 | grep -q -- --user; then user=(-u "$(server_user)"); fi
  if "$1" --help 2>&1 | grep -q -- --port-file; then
    "$1" "${user[@]}" -s '*#capsiz=1024m' -R 2 -l 127.0.0.1:0 --port-file "$WORK/port" >"$WORK/log" 2>&1 &
    PID=$!
    PORT=$(wait_port_file "$WORK/port" "$PID" memstored)
  else
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "$1" "${user[@]}" -s '*#capsiz=1024m' -R 2 -l "127.0.0.1:$PORT" >"$WORK/log" 2>&1 &
    PID=$!
    for _ in $(seq 1 500); do
      (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
      kill -0 "$PID" || { echo "server exited" >&2; exit 1; }
      sleep 0.02
    done
  fi
  [ "$(stat_of "$PORT" pid)" = "$PID" ] || { echo "port $PORT is not our server" >&2; exit 1; }
}

printf 'workload\tbinary\trun\ttps\trequests\tcpu_ticks\tus_per_req\tload\n'
for run in $(seq 1 "$RUNS"); do
  for wl in ${WORKLOADS:-text binary}; do
    for side in old new; do
      bin=$OLD; [ "$side" = new ] && bin=$NEW
      start "$bin"
      load=$(cut -d' ' -f1 /proc/loadavg)
      r0=$(( $(stat_of "$PORT" cmd_get) + $(stat_of "$PORT" cmd_set) ))
      c0=$(cpu_ticks "$PID")
      t0=$(date +%s.%N)
      case $wl in
        text) memcaslap -s "127.0.0.1:$PORT" -T 1 -c 64 -X 100 -t "${SECS}s" >"$WORK/client" 2>&1 ;;
        binary) memcaslap -s "127.0.0.1:$PORT" -T 1 -c 64 -X 100 -t "${SECS}s" -B >"$WORK/client" 2>&1 ;;
        c128) memcslap --servers="127.0.0.1:$PORT" --test=get --concurrency=128 \
          --execute-number="${EXEC:-10000}" --binary >"$WORK/client" 2>&1 ;;
      esac
      t1=$(date +%s.%N)
      c1=$(cpu_ticks "$PID")
      r1=$(( $(stat_of "$PORT" cmd_get) + $(stat_of "$PORT" cmd_set) ))
      kill -TERM "$PID"; wait "$PID" 2>/dev/null || true; PID=
      tps=$(sed -n 's/^Run time: .* TPS: \([0-9]*\) .*/\1/p' "$WORK/client" | tail -n1)
      # memcslap prints no TPS: requests over its wall time.
      [ -n "$tps" ] || tps=$(awk -v n=$((r1 - r0)) -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / (b - a) }')
      us=$(awk -v t=$((c1 - c0)) -v hz="$TICK" -v n=$((r1 - r0)) 'BEGIN { printf "%.2f", t / hz * 1e6 / n }')
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$side" "$run" "$tps" $((r1 - r0)) $((c1 - c0)) "$us" "$load"
    done
  done
done
