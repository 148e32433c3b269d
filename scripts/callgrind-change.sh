#!/usr/bin/env bash
# Instructions per request of two memstored binaries under the same fixed
# load, counted by valgrind's callgrind (repeatable whatever else the machine
# is doing, unlike seconds). Each server runs in-memory (`*#capsiz=64m -R 1`)
# under callgrind; memcslap loads 10,000 keys and gets them (text, then
# binary); the server's total Ir is divided by the requests it served
# (cmd_get+cmd_set from its stats). Both run on the epoll driver (`--io
# epoll` where the binary has `--io`).
#
#   scripts/callgrind-change.sh OLD_BIN NEW_BIN
set -euo pipefail
OLD=$1 NEW=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/callgrind-change.XXXXXX")
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT
stat_of() { # port name
  exec 3<>"/dev/tcp/127.0.0.1/$1"
  printf 'stats\r\n' >&3
  timeout 20 sed -u '/^END/q' <&3 | tr -d '\r' | awk -v n="$2" '$2 == n {print $3}'
  exec 3>&- 3<&-
}
printf 'protocol\tbinary\trequests\tinstructions\tinstructions_per_request\n'
for proto in text binary; do
  flag=; [ "$proto" = binary ] && flag=--binary
  for side in old new; do
    bin=$OLD; [ "$side" = new ] && bin=$NEW
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    # Binaries that know `-u` get it: a current one refuses root without it.
    user=(); if "$bin" --help 2>&1 | grep -q -- --user; then user=(-u "$(id -un)"); fi
    # Under valgrind the io_uring driver answers no request (valgrind does
    # not model io_uring), so both sides run on epoll, which every binary has.
    if "$bin" --help 2>&1 | grep -q -- '--io '; then user+=(--io epoll); fi
    valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" \
      "$bin" "${user[@]}" -s '*#capsiz=64m' -R 1 -l "127.0.0.1:$PORT" >"$WORK/log" 2>&1 &
    PID=$!
    for _ in $(seq 1 3000); do
      (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
      kill -0 "$PID" || { echo "server exited" >&2; cat "$WORK/log" >&2; exit 1; }
      sleep 0.02
    done
    [ "$(stat_of "$PORT" pid)" = "$PID" ] || { echo "port $PORT is not our server" >&2; exit 1; }
    memcslap --servers="127.0.0.1:$PORT" --test=get --concurrency=4 --execute-number=5000 $flag >"$WORK/client" 2>&1
    reqs=$(( $(stat_of "$PORT" cmd_get) + $(stat_of "$PORT" cmd_set) ))
    kill -TERM "$PID"; wait "$PID" 2>/dev/null || true; PID=
    ir=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$WORK/cg.out")
    printf '%s\t%s\t%s\t%s\t%s\n' "$proto" "$side" "$reqs" "$ir" "$((ir / reqs))"
  done
done
