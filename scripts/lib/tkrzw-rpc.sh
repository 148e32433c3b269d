# Sourced by the off-CI Tkrzw-RPC scripts (scripts/anchors/compare-tkrzw-rpc.sh, scripts/bench-rpc.sh): starts
# and stops the real tkrzw_server (Tkrzw-RPC 0.9.10 under $TKRPC, see scripts/anchors/build-tkrzw-rpc.sh) or
# memstored's gRPC port, the same way for both, on 127.0.0.1 only, and reads a process's CPU time.
#
# Needs: TKRPC (the prefix of the build), MEMSTORED (the memstored binary). Sets SERVER_PID and ADDR.

export LD_LIBRARY_PATH=$TKRPC/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
SERVER_PID=
ADDR=

# utime+stime of a process, in clock ticks (comm may hold spaces: cut at ')').
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

# tkrpc_start KIND DIR NAME: a fresh server in a fresh DIR serving the database NAME with tkrzw_server's
# `--async --threads 4` (seed 002's command line). KIND is tkrzw_server or memstored. memstored takes port 0
# and prints its gRPC address; tkrzw_server cannot, so it gets a port probed free first (off CI only).
# Returns once the server answers Echo; exits the script if it does not within 2 minutes.
tkrpc_start() {
  local kind=$1 dir=$2 name=$3 i port asroot=
  rm -rf "$dir"
  mkdir -p "$dir"
  ADDR=
  if [ "$kind" = tkrzw_server ]; then
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    (cd "$dir" && exec "$TKRPC/bin/tkrzw_server" --address "127.0.0.1:$port" --async --threads 4 \
      "$name" >server.log 2>&1) &
    SERVER_PID=$!
    ADDR=127.0.0.1:$port
  else
    [ "$(id -u)" = 0 ] && asroot="-u root"
    # shellcheck disable=SC2086
    (cd "$dir" && exec "$MEMSTORED" -l 127.0.0.1:0 --grpc-listen 127.0.0.1:0 --async --threads 4 \
      $asroot ${MEMSTORED_ARGS:-} "$name" >server.log 2>&1) &
    SERVER_PID=$!
    for i in $(seq 600); do
      # (the log may not exist yet; callers may run under set -e -o pipefail)
      ADDR=$(sed -n 's/^memstored grpc listening on //p' "$dir/server.log" 2>/dev/null | head -1) || ADDR=
      [ -n "$ADDR" ] && break
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.2
    done
  fi
  for i in $(seq 600); do
    [ -n "$ADDR" ] && "$TKRPC/bin/tkrzw_dbm_remote_util" echo --address "$ADDR" --timeout 2 ping >/dev/null 2>&1 &&
      return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.2
  done
  echo "$kind did not answer Echo${ADDR:+ on $ADDR}:" >&2
  cat "$dir/server.log" >&2
  exit 2
}

# tkrpc_stop: SIGTERM, then SIGKILL after 20 s.
tkrpc_stop() {
  local i
  [ -n "$SERVER_PID" ] || return 0
  kill "$SERVER_PID" 2>/dev/null || true
  for i in $(seq 200); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
  return 0
}
