# Seed 003's 18 rows (shared/seeds/003): KT HTTP, KT binary and
# MessagePack-RPC; set and get; bulk 1, 10 and 100; memstored against
# ktserver, with server CPU per record beside wall time. Sourced by
# scripts/bench-bulk.sh (`PART=seed003`; its KT rows use start_kt_port too),
# which sets ROOT, WORK, MEMSTORED,
# MEMSTORE, KT_DIR, THREADS, ITER, REPS, BULKS, OUT_DIR and PIDS. PROTOS
# (default all three: kt-http kt-binary rpc) picks rows for a partial run.
#
# Each run is a fresh server (a new, empty store directory): set, then get,
# of THREADS x ITER records. Runs alternate memstored, ktserver, round by
# round; REPS rounds; the table gives medians. Server CPU is the server
# process's utime+stime (/proc/PID/stat) over the phase, in clock ticks
# (USER_HZ) turned into seconds, divided by the phase's records: on a shared
# machine it is the measure (wall time also counts the client and every
# other process). KT rows use Kyoto Tycoon's ktremotetest against both
# servers; msgpack-rpc rows `memstore bench --protocol rpc` (set_bulk /
# get_bulk; bulk 1: set / get) against memstored only (ktserver speaks
# msgpack-rpc only with the kt-msgpack plugin, not built here).

SEED_STORE=${SEED_STORE:-'casket.kct#bnum=2000000#opts=ls#ktopts=p'}
HZ=$(getconf CLK_TCK)

# cpu_ticks PID: utime+stime of PID (fields 14 and 15 of /proc/PID/stat,
# counted after the command name, which may hold spaces).
cpu_ticks() {
  sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}

# start_kt_port NAME CMD...: runs CMD with {PORT} replaced by ports from
# KT_PORT_BASE upward until `ktremotemgr report` answers on it (KT's clients
# take no port above 32767, and ktserver cannot report a kernel-picked
# one); sets SERVER_PID and SERVER_PORT.
start_kt_port() {
  local name=$1 port pid i
  shift
  for port in $(seq "${KT_PORT_BASE:-20000}" "$(( ${KT_PORT_BASE:-20000} + 200 ))"); do
    "${@//\{PORT\}/$port}" >"$name.out" 2>&1 &
    pid=$!
    for i in $(seq 1 1500); do
      if ! kill -0 "$pid" 2>/dev/null; then break; fi
      if "$KT_DIR/bin/ktremotemgr" report -port "$port" >/dev/null 2>&1; then
        SERVER_PID=$pid SERVER_PORT=$port
        PIDS+=("$pid")
        return 0
      fi
      sleep 0.02
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  echo "$name: could not start on any port from ${KT_PORT_BASE:-20000}" >&2
  return 1
}

# start_server memstored|ktserver DIR: a fresh server whose store lives
# in DIR; sets SERVER_PID and SERVER_PORT (its KT port).
start_server() {
  local server=$1 dir=$2
  mkdir -p "$dir"
  pushd "$dir" >/dev/null
  case $server in
    memstored)
      start_kt_port memstored "$MEMSTORED" -u "$(server_user)" -s "$SEED_STORE" \
        -l 127.0.0.1:0 --port-file "$dir/main.port" --kt-listen '127.0.0.1:{PORT}'
      ;;
    ktserver)
      start_kt_port ktserver "$KT_DIR/bin/ktserver" -host 127.0.0.1 -port '{PORT}' -th 8 \
        -log "$dir/ktserver.log" "$SEED_STORE"
      ;;
  esac
  popd >/dev/null
}

stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
}

# phase SERVER PROTO BULK REP PHASE: runs one phase's client against the
# running server; appends a row to $SEED_RAW.
phase() {
  local server=$1 proto=$2 bulk=$3 rep=$4 ph=$5 t0 t1 c0 c1 out secs
  local records=$((THREADS * ITER))
  c0=$(cpu_ticks "$SERVER_PID")
  t0=$(date +%s.%N)
  case $proto in
    kt-http | kt-binary)
      local bin=()
      [ "$proto" = kt-binary ] && bin=(-bin)
      out=$("$KT_DIR/bin/ktremotetest" bulk -th "$THREADS" "${bin[@]}" "-$ph" -bulk "$bulk" \
        -port "$SERVER_PORT" "$ITER" 2>&1)
      ;;
    rpc)
      out=$("$MEMSTORE" bench --address "127.0.0.1:$SERVER_PORT" --protocol rpc --multi "$bulk" \
        --threads "$THREADS" --iter "$ITER" "--${ph}_only" --json)
      ;;
  esac
  t1=$(date +%s.%N)
  c1=$(cpu_ticks "$SERVER_PID")
  if [ "$proto" = rpc ]; then
    errors=$(python3 -c 'import json, sys; print(sum(p["errors"] for p in json.loads(sys.argv[1])["phases"]))' "$out")
  else
    errors=$(grep -ci 'error' <<<"$out" || true)
  fi
  python3 - "$server" "$proto" "$bulk" "$rep" "$ph" "$records" "$t0" "$t1" "$((c1 - c0))" "$HZ" "$errors" >>"$SEED_RAW" <<'EOF'
import sys
server, proto, bulk, rep, ph, records, t0, t1, ticks, hz, errors = sys.argv[1:]
secs = float(t1) - float(t0)
cpu = int(ticks) / int(hz)
n = int(records)
print("\t".join([server, proto, bulk, rep, ph, records, f"{secs:.4f}", f"{n / secs:.0f}",
                 f"{cpu:.3f}", f"{cpu / n * 1e6:.3f}", errors]))
EOF
}

seed003() {
  SEED_RAW="$WORK/seed003.tsv"
  printf 'server\tprotocol\tbulk\trep\tphase\trecords\twall_s\trecords_per_s\tserver_cpu_s\tserver_cpu_us_per_record\terrors\n' >"$SEED_RAW"
  export LD_LIBRARY_PATH="$KT_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local rep bulk proto server n=0 dir
  for rep in $(seq 1 "$REPS"); do
    for bulk in $BULKS; do
      for proto in ${PROTOS:-kt-http kt-binary rpc}; do
        # Alternate which server goes first, round by round.
        local order=(memstored ktserver)
        [ $((rep % 2)) = 0 ] && order=(ktserver memstored)
        for server in "${order[@]}"; do
          [ "$proto" = rpc ] && [ "$server" = ktserver ] && continue
          n=$((n + 1))
          echo "[seed003 $n] rep $rep bulk $bulk $proto $server ($(cut -d' ' -f1-3 /proc/loadavg))" >&2
          dir="$WORK/seed003-$server-$rep-$bulk-$proto"
          start_server "$server" "$dir"
          if [ "$proto" = rpc ]; then
            # msgpack-rpc is on memstored's main port.
            SERVER_PORT=$(wait_port_file "$dir/main.port" "$SERVER_PID" memstored)
          fi
          phase "$server" "$proto" "$bulk" "$rep" set
          phase "$server" "$proto" "$bulk" "$rep" get
          stop_server
          rm -rf "$dir"
        done
      done
    done
  done
  cp "$SEED_RAW" "$OUT_DIR/bulk-seed003.tsv"
  python3 "$ROOT/scripts/seed003_table.py" "$OUT_DIR/bulk-seed003.tsv" "$OUT_DIR/bulk-seed003.png"
}
