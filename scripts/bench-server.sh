#!/usr/bin/env bash
# memstored against Debian's memcached 1.6 with memcached's own load tools.
#
# Two pairings: memstored on the in-memory store (`*#capsiz=1024m`) and on a
# persistent hash store (`bench.tkh#num_shards=8`), each against
#   memcached -l 127.0.0.1 -p -1 -U 0 -m 1024 -t 2 (port from MEMCACHED_PORT_FILENAME)
# (memstored gets -R 2, the same two worker threads). For every workload the
# two servers run one after the other with the same client,
# alternating A B A B, RUNS times each; a fresh server (and a fresh store
# file) for every run. Reported: the median throughput the client saw, and
# the median server CPU time per request: utime+stime of the server process
# (/proc/PID/stat fields 14 and 15) over the client's run, divided by the
# requests it served (cmd_get+cmd_set from its stats, before and after).
#
# Writes docs/bench/server-raw.tsv (every run), docs/bench/server.tsv
# (medians), docs/bench/server.md (tables + docs/bench/server-notes.md) and
# docs/bench/server.png (scripts/plot_server.py).
#
#   scripts/bench-server.sh                    # 3 runs (about 15 minutes)
#   RUNS=1 SECS=3 EXEC=2000 scripts/bench-server.sh   # quick smoke run
#   REPORT_ONLY=1 scripts/bench-server.sh      # re-render md/png from raw
#   TLS=1 scripts/bench-server.sh              # only the TLS rows (below)
#
# The TLS rows (issue 45): memstored -Z against memcached 1.6.45 -Z
# ($MEMCACHED_TLS, a memcached built with TLS), each also in plaintext, all
# with one client (scripts/lib/tls_load.py: 8 connections, one request in
# flight each, memcaslap's 90% get / 10% set of 100-byte values), which
# makes one TLS record per request and per reply. Measured as above: server
# utime+stime over the client's run / cmd_get+cmd_set served, RUNS runs,
# the servers alternating. Writes docs/bench/server-tls-raw.tsv; the report
# adds its table to server.md. The certificate (a P-256 key, from a test CA)
# is made in the run's work dir with the openssl command.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-3}
SECS=${SECS:-10}
EXEC=${EXEC:-10000}
OUT_DIR=${OUT_DIR:-docs/bench}
mkdir -p "$OUT_DIR"
RAW_OUT="$OUT_DIR/server-raw.tsv"

MEMCACHED_CMD="memcached -l 127.0.0.1 -p -1 -U 0 -m 1024 -t 2"
MEMSTORE="${CARGO_TARGET_DIR:-$ROOT/target}/release/memstore"
# pairing name | memstored store (W = the run's work dir)
PAIRINGS=(
  "in-memory|*#capsiz=1024m"
  "persistent hash|W/bench.tkh#num_shards=8"
)
# workload name | client command (P = port)
WORKLOADS=(
  "memcaslap text|memcaslap -s 127.0.0.1:P -T 1 -c 64 -X 100 -t ${SECS}s"
  "memcaslap binary|memcaslap -s 127.0.0.1:P -T 1 -c 64 -X 100 -t ${SECS}s -B"
  "memcslap get c16 binary|memcslap -s 127.0.0.1:P --test=get --concurrency=16 --execute-number=$EXEC --binary"
  "memcslap get c128 binary|memcslap -s 127.0.0.1:P --test=get --concurrency=128 --execute-number=$EXEC --binary"
  # Seed 000's one benchmark, as written there (default execute number):
  # its goal is wall time (issue 15).
  "seed-000 memcslap|memcslap --servers=127.0.0.1:P --test=get --concurrency=128 --binary"
  # Tail latency with 64 connections, one request in flight each (issue 15):
  # the same client for both servers, its get phase's p99.
  "memstore bench c64 binary|$MEMSTORE bench --address 127.0.0.1:P --protocol binary --threads 2 --connections 32 --iter 100000 --json"
)

if [ "${REPORT_ONLY:-0}" != 1 ]; then
  for tool in memcached memcaslap memcslap; do
    if ! command -v $tool >/dev/null 2>&1; then
      echo "installing memcached and libmemcached-tools..." >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq && apt-get install -y -qq memcached libmemcached-tools >/dev/null
      break
    fi
  done

  # PROFILE=dev measures the dev build (dependencies at opt-level 3,
  # memstored's own crates at 1): for a quick look on a machine too busy
  # for a release build; the tables are release's.
  PROFILE=${PROFILE:-release}
  echo "building memstored and memstore ($PROFILE)..." >&2
  # The TLS rows need no memstore.
  packages=(-p memstored-server)
  [ "${TLS:-0}" = 1 ] || packages+=(-p memstored-cli)
  # SKIP_BUILD=1: measure what is built already.
  [ "${SKIP_BUILD:-0}" = 1 ] || cargo build --profile "$PROFILE" -q "${packages[@]}"
  MEMSTORED="${CARGO_TARGET_DIR:-$ROOT/target}/$([ "$PROFILE" = dev ] && echo debug || echo "$PROFILE")/memstored"
  TICK=$(getconf CLK_TCK)

  WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-server.XXXXXX")
  SERVER_PID=
  cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
  }
  trap cleanup EXIT

  # utime+stime of a process, in clock ticks (comm may hold spaces: cut at ')').
  cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

  # cmd_get+cmd_set of the server on $PORT, asked over the text protocol.
  served() {
    local reply
    exec 3<>"/dev/tcp/127.0.0.1/$PORT"
    printf 'stats\r\n' >&3
    reply=$(timeout 5 sed -u '/^END/q' <&3 || true)
    exec 3>&- 3<&-
    echo "$reply" | tr -d '\r' | awk '$2 == "cmd_get" || $2 == "cmd_set" {s += $3} END {print s + 0}'
    # memstored's `io_engine` (io_uring or epoll), kept for the report.
    echo "$reply" | tr -d '\r' | awk '$2 == "io_engine" {print $3}' >>"$WORK/io_engine"
  }

  # shellcheck source=scripts/lib/ports.sh
  . "$ROOT/scripts/lib/ports.sh"

  start_server() { # side store
    local side=$1 store=$2
    if [ "$side" = memstored ]; then
      rm -f "$WORK"/bench.tkh*
      rm -f "$WORK/port"
      "$MEMSTORED" -u "$(server_user)" -s "${store//W\//$WORK/}" -l 127.0.0.1:0 --port-file "$WORK/port" -R 2 >"$WORK/server.log" 2>&1 &
    else
      rm -f "$WORK/port"
      # shellcheck disable=SC2086
      MEMCACHED_PORT_FILENAME="$WORK/port" $MEMCACHED_CMD -u "$(server_user)" >"$WORK/server.log" 2>&1 &
    fi
    SERVER_PID=$!
    PORT=$(wait_port_file "$WORK/port" "$SERVER_PID" "$side")
  }

  stop_server() {
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
  }

  # Throughput from the client's log: memcaslap's TPS, or memcslap's gets
  # divided by the time of its get phase.
  tps_of() {
    local log=$1 t
    if grep -q '"phases"' "$log"; then json_get "$log" requests_per_sec; return; fi
    t=$(sed -n 's/^Run time: .* TPS: \([0-9]*\) .*/\1/p' "$log" | tail -n1)
    if [ -n "$t" ]; then echo "$t"; return; fi
    sed -n 's/^Time to get *\([0-9]*\) keys by .*: *\([0-9.]*\) seconds\./\1 \2/p' "$log" |
      awk '{ if ($2 > 0) printf "%d\n", $1 / $2 }' | tail -n1
  }

  # A field of `memstore bench --json`'s get phase (latency_us.p99 for "p99").
  json_get() {
    python3 -c 'import json,sys
j = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
g = [p for p in j["phases"] if p["phase"] == "get"][0]
print(int(g["latency_us"]["p99"] if sys.argv[2] == "p99" else g[sys.argv[2]]))' "$1" "$2"
  }

  MEMCACHED_TLS=${MEMCACHED_TLS:-/opt/memcached-1.6.45/bin/memcached}
  TLS_LOAD="python3 $ROOT/scripts/lib/tls_load.py"
  TLS_CONNS=${TLS_CONNS:-8}

  # One TLS-table run: a fresh server, plaintext or -Z, the same client.
  run_tls_one() { # side mode run
    local side=$1 mode=$2 run=$3 flags=() ca=()
    if [ "$mode" = tls ]; then
      flags=(-Z -o "ssl_chain_cert=$WORK/server.pem,ssl_key=$WORK/server.key")
      ca=(--cafile "$WORK/ca.pem")
    fi
    rm -f "$WORK/port"
    if [ "$side" = memstored ]; then
      "$MEMSTORED" -u "$(server_user)" -s '*#capsiz=1024m' -l 127.0.0.1:0 --port-file "$WORK/port" -R 2 "${flags[@]}" >"$WORK/server.log" 2>&1 &
    else
      MEMCACHED_PORT_FILENAME="$WORK/port" "$MEMCACHED_TLS" -l 127.0.0.1 -p -1 -U 0 -m 1024 -t 2 -u "$(server_user)" "${flags[@]}" >"$WORK/server.log" 2>&1 &
    fi
    SERVER_PID=$!
    PORT=$(wait_port_file "$WORK/port" "$SERVER_PID" "$side")
    local load r0 c0 c1 r1 result
    load=$(cut -d' ' -f1 /proc/loadavg)
    r0=$($TLS_LOAD stats --port "$PORT" "${ca[@]}")
    c0=$(cpu_ticks "$SERVER_PID")
    result=$($TLS_LOAD load --port "$PORT" "${ca[@]}" --conns "$TLS_CONNS" --secs "$SECS")
    c1=$(cpu_ticks "$SERVER_PID")
    r1=$($TLS_LOAD stats --port "$PORT" "${ca[@]}")
    stop_server
    local reqs=$((r1 - r0)) tps us
    tps=$(echo "$result" | awk '{print $4}')
    us=$(awk -v t=$((c1 - c0)) -v hz="$TICK" -v n="$reqs" 'BEGIN { printf "%.2f", (n > 0 ? t / hz * 1e6 / n : 0) }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$side" "$run" "$tps" "$reqs" "$((c1 - c0))" "$us" "$load" >>"$RAW"
    printf '  %-5s %-9s run %s: %6s TPS, %7s reqs, %5s ticks, %6s us/req (load %s)\n' \
      "$mode" "$side" "$run" "$tps" "$reqs" "$((c1 - c0))" "$us" "$load" >&2
  }

  run_tls() {
    (
      cd "$WORK"
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key \
        -out ca.pem -days 2 -subj "/CN=bench CA" 2>/dev/null
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key \
        -out server.csr -subj "/CN=localhost" 2>/dev/null
      printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >server.ext
      openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
        -out server.pem -extfile server.ext 2>/dev/null
    )
    RAW="$WORK/tls-raw.tsv"
    {
      echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet -- crates 2>/dev/null || echo ' (with uncommitted changes)')"
      echo "# date $(date -u '+%Y-%m-%d %H:%M UTC')"
      echo "# cpu $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores, kernel $(uname -r), CLK_TCK $TICK"
      echo "# memstored build profile $PROFILE; memcached $("$MEMCACHED_TLS" -V 2>&1 | awk '{print $2}') ($MEMCACHED_TLS), $(openssl version)"
      echo "# client scripts/lib/tls_load.py --conns $TLS_CONNS --secs $SECS"
      echo "# load before $(cut -d' ' -f1-3 /proc/loadavg)"
      printf 'mode\tserver\trun\ttps\trequests\tcpu_ticks\tcpu_us_per_req\tload1\n'
    } >"$RAW"
    for run in $(seq 1 "$RUNS"); do
      for mode in tls plain; do
        run_tls_one memstored "$mode" "$run"
        run_tls_one memcached "$mode" "$run"
      done
    done
    echo "# load after $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RAW"
    cp "$RAW" "$OUT_DIR/server-tls-raw.tsv"
  }

  run_one() { # side pairing store workload client run
    local side=$1 pairing=$2 store=$3 workload=$4 client=$5 run=$6 log="$WORK/client.log"
    start_server "$side" "$store"
    local c0 r0 c1 r1 tps load
    load=$(cut -d' ' -f1 /proc/loadavg)
    r0=$(served)
    c0=$(cpu_ticks "$SERVER_PID")
    local t0 t1 wall
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    ${client//:P/:$PORT} >"$log" 2>&1 || { echo "client failed:" >&2; cat "$log" >&2; exit 1; }
    t1=$(date +%s.%N)
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    c1=$(cpu_ticks "$SERVER_PID")
    r1=$(served)
    stop_server
    tps=$(tps_of "$log")
    if [ -z "$tps" ]; then echo "no throughput in client output:" >&2; cat "$log" >&2; exit 1; fi
    local reqs=$((r1 - r0)) errors p99=""
    if grep -q '"phases"' "$log"; then p99=$(json_get "$log" p99); fi
    # Replies the client counted as errors (memcaslap prints each one).
    errors=$(grep -c 'ERROR' "$log" || true)
    local us
    us=$(awk -v t=$((c1 - c0)) -v hz="$TICK" -v n="$reqs" 'BEGIN { printf "%.2f", (n > 0 ? t / hz * 1e6 / n : 0) }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
      "$pairing" "$workload" "$side" "$run" "$tps" "$reqs" "$((c1 - c0))" "$us" "$load" "$errors" "$wall" "$p99" >>"$RAW"
    printf '  %-16s %-24s %-9s run %s: %7s TPS, %7s reqs, %5s ticks, %6s us/req, %s error replies (load %s)\n' \
      "$pairing" "$workload" "$side" "$run" "$tps" "$reqs" "$((c1 - c0))" "$us" "$errors" "$load" >&2
  }

  if [ "${TLS:-0}" = 1 ]; then
    run_tls
  else
    RAW="$WORK/raw.tsv"
    {
      echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet -- crates 2>/dev/null || echo ' (with uncommitted changes)')"
      echo "# date $(date -u '+%Y-%m-%d %H:%M UTC')"
      echo "# cpu $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores, kernel $(uname -r), CLK_TCK $TICK"
      echo "# memcached $(memcached -V 2>&1 | awk '{print $2}'), $(memcslap --version 2>&1 | head -n1), $(memcaslap -V 2>&1 | head -n1)"
      echo "# load before $(cut -d' ' -f1-3 /proc/loadavg)"
      printf 'pairing\tworkload\tserver\trun\ttps\trequests\tcpu_ticks\tcpu_us_per_req\tload1\terrors\twall_secs\tp99_us\n'
    } >"$RAW"

    for p in "${PAIRINGS[@]}"; do
      pairing=${p%%|*}
      store=${p#*|}
      for w in "${WORKLOADS[@]}"; do
        workload=${w%%|*}
        client=${w#*|}
        echo "$pairing / $workload (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
        for run in $(seq 1 "$RUNS"); do
          run_one memstored "$pairing" "$store" "$workload" "$client" "$run"
          run_one memcached "$pairing" "$store" "$workload" "$client" "$run"
        done
      done
    done
    echo "# load after $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RAW"
    echo "# memstored io_engine $(sort -u "$WORK/io_engine" 2>/dev/null | paste -sd, -)" >>"$RAW"
    cp "$RAW" "$RAW_OUT"
  fi
fi

# ---- report -----------------------------------------------------------
# The TLS section of server.md (from TLS=1's raw file), printed.
tls_section() {
  python3 - "$OUT_DIR/server-tls-raw.tsv" <<'PY'
import re
import statistics
import sys

raw = sys.argv[1]
conns, secs = "8", "10"
meta, rows, header = [], [], None
for line in open(raw):
    line = line.rstrip("\n")
    if line.startswith("#"):
        meta.append(line[2:])
        m = re.search(r"--conns (\d+) --secs (\S+)", line)
        if m:
            conns, secs = m.groups()
    elif header is None:
        header = line.split("\t")
    elif line:
        rows.append(dict(zip(header, line.split("\t"))))

def med(mode, side, key):
    xs = [float(r[key]) for r in rows if r["mode"] == mode and r["server"] == side]
    return statistics.median(xs) if xs else 0.0

runs = len([r for r in rows if r["mode"] == "tls" and r["server"] == "memstored"])
loads = [float(r["load1"]) for r in rows]
print("\n## TLS: CPU per request, memstored -Z vs memcached 1.6.45 -Z (issue 45)\n")
for m in meta:
    print(f"- {m}")
if loads:
    print(f"- 1-minute load average at the start of each run: min {min(loads):.2f}, median "
          f"{statistics.median(loads):.2f}, max {max(loads):.2f}: the machine was shared with other "
          "builds, so read the CPU per request (this process's own utime+stime), not the throughput")
print(f"- median of {runs} runs per cell, servers alternating, a fresh server for every run")
if any("build profile dev" in m for m in meta):
    print("- memstored was the dev build (its own crates at opt-level 1; rustls, ring and tokio at 3), "
          "so its rows overstate its CPU; the release run for a quiet machine is "
          "`TLS=1 RUNS=3 SECS=10 scripts/bench-server.sh`")
print()
print(f"Client: `scripts/lib/tls_load.py` ({conns} connections, one request in flight each, 90% get / "
      f"10% set of 100-byte values, {secs} s), so every request and reply is one TLS record. CPU: server "
      "utime+stime over the client's run / (cmd_get+cmd_set served). TLS cost: the TLS row's CPU less "
      "the plaintext row's.\n")
print("| mode | memstored TPS | memcached TPS | memstored CPU µs/req | memcached CPU µs/req | CPU ratio |")
print("|---|---:|---:|---:|---:|---:|")
for mode, label in (("tls", "TLS (-Z)"), ("plain", "plaintext")):
    m, c = med(mode, "memstored", "cpu_us_per_req"), med(mode, "memcached", "cpu_us_per_req")
    print(f"| {label} | {int(med(mode, 'memstored', 'tps')):,} | {int(med(mode, 'memcached', 'tps')):,} "
          f"| {m:.2f} | {c:.2f} | {m / c if c else 0:.2f} |")
mt = med("tls", "memstored", "cpu_us_per_req") - med("plain", "memstored", "cpu_us_per_req")
ct = med("tls", "memcached", "cpu_us_per_req") - med("plain", "memcached", "cpu_us_per_req")
print(f"| TLS cost (µs/req added) | | | {mt:.2f} | {ct:.2f} | {mt / ct if ct else 0:.2f} |")
print("\n```")
profile = "PROFILE=dev " if any("build profile dev" in m for m in meta) else ""
print(f"TLS=1 {profile}RUNS={runs} SECS={secs} scripts/bench-server.sh")
print("memstored -s '*#capsiz=1024m' -l 127.0.0.1:P -R 2 [-Z -o ssl_chain_cert=server.pem,ssl_key=server.key]")
print("memcached -l 127.0.0.1 -p P -U 0 -m 1024 -t 2 [-Z -o ssl_chain_cert=server.pem,ssl_key=server.key]")
print(f"python3 scripts/lib/tls_load.py load --port P [--cafile ca.pem] --conns {conns} --secs {secs}")
print("```\n")
print("Every run in `docs/bench/server-tls-raw.tsv`.")
PY
}

# TLS=1 replaces only the TLS section at the end of server.md; the tables
# above it stay as their own runs made them.
if [ "${TLS:-0}" = 1 ]; then
  python3 - "$OUT_DIR/server.md" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
cut = text.find("\n## TLS: CPU per request")
open(path, "w").write(text if cut < 0 else text[:cut + 1])
PY
  tls_section >>"$OUT_DIR/server.md"
  echo "wrote the TLS section of $OUT_DIR/server.md and $OUT_DIR/server-tls-raw.tsv" >&2
  exit 0
fi

python3 - "$RAW_OUT" "$OUT_DIR/server.tsv" "$OUT_DIR/server.md" "$OUT_DIR/server-notes.md" \
  "$MEMCACHED_CMD" "$RUNS" "${PAIRINGS[@]}" -- "${WORKLOADS[@]}" <<'PY'
import statistics
import sys

raw, tsv, md, notes, mc_cmd, runs = sys.argv[1:7]
rest = sys.argv[7:]
sep = rest.index("--")
pairings = [p.split("|", 1) for p in rest[:sep]]
workloads = [w.split("|", 1) for w in rest[sep + 1:]]

meta, rows = [], []
with open(raw) as f:
    header = None
    for line in f:
        line = line.rstrip("\n")
        if line.startswith("#"):
            meta.append(line[2:])
        elif header is None:
            header = line.split("\t")
        elif line:
            rows.append(dict(zip(header, line.split("\t"))))

def med(pairing, workload, side, key):
    xs = [float(r[key]) for r in rows
          if r["pairing"] == pairing and r["workload"] == workload and r["server"] == side
          and r.get(key) not in (None, "")]
    return statistics.median(xs) if xs else None

out = []
for pairing, _ in pairings:
    for workload, _ in workloads:
        m_tps = med(pairing, workload, "memstored", "tps")
        c_tps = med(pairing, workload, "memcached", "tps")
        m_cpu = med(pairing, workload, "memstored", "cpu_us_per_req")
        c_cpu = med(pairing, workload, "memcached", "cpu_us_per_req")
        if None in (m_tps, c_tps, m_cpu, c_cpu):
            continue
        m_p99 = med(pairing, workload, "memstored", "p99_us")
        c_p99 = med(pairing, workload, "memcached", "p99_us")
        m_wall = med(pairing, workload, "memstored", "wall_secs") or 0.0
        c_wall = med(pairing, workload, "memcached", "wall_secs") or 0.0
        m_err = med(pairing, workload, "memstored", "errors") or 0
        c_err = med(pairing, workload, "memcached", "errors") or 0
        out.append({
            "pairing": pairing, "workload": workload,
            "memstored_tps": int(m_tps), "memcached_tps": int(c_tps),
            "tps_ratio": m_tps / c_tps if c_tps else 0,
            "memstored_cpu_us": m_cpu, "memcached_cpu_us": c_cpu,
            "cpu_ratio": m_cpu / c_cpu if c_cpu else 0,
            "memstored_errors": int(m_err), "memcached_errors": int(c_err),
            "memstored_wall_s": m_wall, "memcached_wall_s": c_wall,
            "memstored_p99_us": int(m_p99) if m_p99 is not None else "",
            "memcached_p99_us": int(c_p99) if c_p99 is not None else "",
        })

cols = ["pairing", "workload", "memstored_tps", "memcached_tps", "tps_ratio",
        "memstored_cpu_us", "memcached_cpu_us", "cpu_ratio", "memstored_errors",
        "memcached_errors", "memstored_wall_s", "memcached_wall_s", "memstored_p99_us",
        "memcached_p99_us"]
with open(tsv, "w") as f:
    f.write("\t".join(cols) + "\n")
    for r in out:
        f.write("\t".join(f"{r[c]:.3f}" if isinstance(r[c], float) else str(r[c]) for c in cols) + "\n")

def fmt_pair(a, b, spec):
    """`a / b`, or `-` where the run did not measure it (older raw files,
    or a client that reports no latency)."""
    if a in ("", 0, 0.0) or b in ("", 0, 0.0):
        return "-"
    return f"{a:{spec}} / {b:{spec}}"

loads = [float(r["load1"]) for r in rows]
L = []
L.append("# memstored server vs memcached 1.6\n")
L.append("Generated by `scripts/bench-server.sh` (do not edit by hand; the notes come from "
         "`docs/bench/server-notes.md`).\n")
L.append("## Machine and run\n")
for m in meta:
    L.append(f"- {m}")
if loads:
    L.append(f"- 1-minute load average at the start of each run: min {min(loads):.2f}, "
             f"median {statistics.median(loads):.2f}, max {max(loads):.2f} "
             "(the machine is shared with other builds; 2 cores)")
L.append(f"- median of {runs} runs per cell, the two servers alternating A B A B, a fresh "
         "server for every run\n")
L.append("## Results\n")
L.append("TPS: what the client reports (memcaslap `TPS`; memcslap: keys got / time of the get "
         "phase). CPU: server utime+stime over the client's run / (cmd_get+cmd_set served). "
         "Ratios are memstored / memcached: above 1 is better for TPS, below 1 is better for CPU.\n")
for pairing, store in pairings:
    store = store.replace("W/", "<tmp>/")
    L.append(f"### memstored `-s '{store}' -R 2` vs memcached\n")
    L.append("| workload | memstored TPS | memcached TPS | TPS ratio | memstored CPU µs/req "
             "| memcached CPU µs/req | CPU ratio | client wall s (memstored / memcached) "
             "| p99 µs (memstored / memcached) |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in out:
        if r["pairing"] != pairing:
            continue
        flag = ""
        if r["memstored_errors"] or r["memcached_errors"]:
            flag = (f" **(invalid: {r['memstored_errors']:,} / {r['memcached_errors']:,} "
                    "error replies per run, memstored / memcached)**")
        L.append(f"| {r['workload']}{flag} | {r['memstored_tps']:,} | {r['memcached_tps']:,} "
                 f"| {r['tps_ratio']:.2f}x | {r['memstored_cpu_us']:.2f} "
                 f"| {r['memcached_cpu_us']:.2f} | {r['cpu_ratio']:.2f} "
                 f"| {fmt_pair(r['memstored_wall_s'], r['memcached_wall_s'], '.1f')} "
                 f"| {fmt_pair(r['memstored_p99_us'], r['memcached_p99_us'], ',')} |")
    L.append("")
L.append("![memstored vs memcached](server.png)\n")
try:
    with open(notes) as f:
        L.append(f.read().rstrip() + "\n")
except FileNotFoundError:
    pass
L.append("## Exact commands\n")
L.append("```")
L.append("memstored -s '*#capsiz=1024m' -l 127.0.0.1:P -R 2")
L.append("memstored -s '<tmp>/bench.tkh#num_shards=8' -l 127.0.0.1:P -R 2   # store file removed before each run")
L.append(mc_cmd.replace(mc_cmd.split("-p ")[1].split()[0], "P"))
for name, cmd in workloads:
    L.append(f"{cmd}    # {name}")
L.append("```\n")
L.append("Every run in `docs/bench/server-raw.tsv`; medians in `docs/bench/server.tsv`.")
with open(md, "w") as f:
    f.write("\n".join(L) + "\n")
PY


if [ -f "$OUT_DIR/server-tls-raw.tsv" ]; then tls_section >>"$OUT_DIR/server.md"; fi
python3 scripts/plot_server.py "$OUT_DIR/server.tsv" "$OUT_DIR/server.png"
echo "wrote $OUT_DIR/server.md, $OUT_DIR/server.tsv, $OUT_DIR/server-raw.tsv, $OUT_DIR/server.png" >&2
