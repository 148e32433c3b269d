#!/usr/bin/env bash
# NOT RUN BY CI. memstored's Tkrzw-RPC gRPC port against the real tkrzw_server (Tkrzw-RPC 0.9.10, built from
# source by scripts/anchors/build-tkrzw-rpc.sh as ../shared/ANCHORS.md says), both driven by the real
# `tkrzw_dbm_remote_perf sequence --set_only --get_only` (issue 43).
#
# Cells: --multi 1 and 100, --threads 1 and 4; set and get are the two phases of one perf run (perf clears the
# database first). Both servers serve the same store name (STORE) with `--async --threads 4`, a fresh server
# and a fresh directory for every run, alternating memstored / tkrzw_server, RUNS times each (medians).
# Reported per phase: the records per second perf prints (qps), and the server's CPU per record and per call:
# utime+stime of the server process (/proc/PID/stat fields 14 and 15) read when perf prints the phase's
# start and end lines, divided by the records (calls = records / multi).
#
# Writes docs/bench/rpc-raw.tsv (every run), docs/bench/rpc.tsv (medians), docs/bench/rpc.md and
# docs/bench/rpc.png (scripts/plot_rpc.py).
#
#   scripts/bench-rpc.sh                          # RUNS=3, RECORDS=100000 per run
#   RUNS=3 RECORDS=20000 scripts/bench-rpc.sh     # a quick look
#   REPORT_ONLY=1 scripts/bench-rpc.sh            # re-render md/png from rpc-raw.tsv
# Env: TKRPC (default /opt/tkrpc), MEMSTORED (default target/release/memstored, built if missing),
#      STORE (default seed 002's "casket.tkh#num_shards=100,num_buckets=1M,update_mode=appending").
# Servers bind 127.0.0.1 only. Read ../shared/BENCHMARKING.md: run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-3}
RECORDS=${RECORDS:-100000}
TKRPC=${TKRPC:-/opt/tkrpc}
STORE=${STORE:-casket.tkh#num_shards=100,num_buckets=1M,update_mode=appending}
OUT_DIR=${OUT_DIR:-docs/bench}
RAW=$OUT_DIR/rpc-raw.tsv
MED=$OUT_DIR/rpc.tsv
MD=$OUT_DIR/rpc.md
mkdir -p "$OUT_DIR"
CELLS=("1 1" "1 4" "100 1" "100 4") # multi threads

if [ "${REPORT_ONLY:-0}" != 1 ]; then
  MEMSTORED=${MEMSTORED:-${CARGO_TARGET_DIR:-$ROOT/target}/release/memstored}
  if [ ! -x "$MEMSTORED" ]; then
    echo "building memstored (release)..." >&2
    cargo build --release -q -p memstored-server
  fi
  # shellcheck source=lib/tkrzw-rpc.sh
  . "$ROOT/scripts/lib/tkrzw-rpc.sh"
  PERF=$TKRPC/bin/tkrzw_dbm_remote_perf
  TKSERVER=$TKRPC/bin/tkrzw_server
  for f in "$PERF" "$TKSERVER" "$TKRPC/bin/tkrzw_dbm_remote_util"; do
    [ -x "$f" ] || { echo "missing $f: run scripts/anchors/build-tkrzw-rpc.sh" >&2; exit 2; }
  done
  TICK=$(getconf CLK_TCK)
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-rpc.XXXXXX")
  trap 'tkrpc_stop; rm -rf "$WORK"' EXIT

  # run SERVER MULTI THREADS RUN: one perf run; appends its set and get rows to RAW.
  run() {
    local server=$1 multi=$2 threads=$3 r=$4 iter line t0=0 phase qps
    iter=$((RECORDS / threads))
    tkrpc_start "$server" "$WORK/$server" "$STORE"
    local cmd="tkrzw_dbm_remote_perf sequence --set_only --get_only --multi $multi --threads $threads --iter $iter"
    # perf flushes every line: read the server's CPU when a phase starts and ends.
    while IFS= read -r line; do
      case $line in
        Setting:* | Getting:*) t0=$(cpu_ticks "$SERVER_PID") ;;
        "Setting done:"* | "Getting done:"*)
          local t1 records
          t1=$(cpu_ticks "$SERVER_PID")
          phase=set
          [ "${line#Getting}" != "$line" ] && phase=get
          qps=$(sed -n 's/.* qps=\([0-9.]*\).*/\1/p' <<<"$line")
          records=$((iter * threads))
          printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$server" "$multi" "$threads" "$phase" "$r" "$records" "$qps" \
            "$(awk -v d=$((t1 - t0)) -v t="$TICK" -v n="$records" 'BEGIN{printf "%.3f", d / t * 1e6 / n}')" \
            "$cmd" >>"$RAW"
          ;;
      esac
    done < <("$PERF" sequence --set_only --get_only --multi "$multi" --threads "$threads" --iter "$iter" \
      --address "$ADDR" 2>"$WORK/perf.err")
    if [ -s "$WORK/perf.err" ]; then
      echo "$server multi=$multi threads=$threads: perf reported errors:" >&2
      head -3 "$WORK/perf.err" >&2
    fi
    tkrpc_stop
  }

  printf 'server\tmulti\tthreads\tphase\trun\trecords\tqps\tcpu_us_per_record\tcommand\n' >"$RAW"
  LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
  for cell in "${CELLS[@]}"; do
    read -r multi threads <<<"$cell"
    for r in $(seq "$RUNS"); do
      for server in memstored tkrzw_server; do
        echo "multi=$multi threads=$threads run $r: $server" >&2
        run "$server" "$multi" "$threads" "$r"
      done
    done
  done
  LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
  {
    echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "# memstored: $(git rev-parse --short HEAD) ($("$MEMSTORED" --version 2>/dev/null | head -1))"
    echo "# tkrzw_server: $("$TKSERVER" --version | head -1) over Tkrzw $(dpkg-query -W -f='${Version}' libtkrzw1 2>/dev/null)"
    echo "# store: $STORE; servers: --async --threads 4; RUNS=$RUNS RECORDS=$RECORDS"
    echo "# load average (1 5 15 min) before: $LOAD_BEFORE; after: $LOAD_AFTER; cores: $(nproc)"
  } >"$OUT_DIR/rpc-meta.txt"
fi

python3 - "$RAW" "$MED" "$MD" "$OUT_DIR/rpc-meta.txt" <<'EOF'
import csv, statistics, sys
raw, med, md, meta = sys.argv[1:]
rows = list(csv.DictReader(open(raw, newline=""), delimiter="\t"))
cells = {}
for r in rows:
    cells.setdefault((int(r["multi"]), int(r["threads"]), r["phase"]), {}).setdefault(r["server"], []).append(r)
out = []
for (multi, threads, phase), by in sorted(cells.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] != "set")):
    m = {s: (statistics.median(float(x["qps"]) for x in v), statistics.median(float(x["cpu_us_per_record"]) for x in v), len(v))
         for s, v in by.items()}
    if "memstored" not in m or "tkrzw_server" not in m:
        continue
    (mq, mc, n), (tq, tc, _) = m["memstored"], m["tkrzw_server"]
    out.append(dict(multi=multi, threads=threads, phase=phase, runs=n,
                    memstored_qps=round(mq), tkrzw_qps=round(tq), qps_ratio=round(mq / tq, 2),
                    memstored_cpu_us=round(mc, 3), tkrzw_cpu_us=round(tc, 3),
                    cpu_ratio=round(mc / tc, 2) if tc else float("nan")))
with open(med, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(out[0].keys()), delimiter="\t")
    w.writeheader()
    w.writerows(out)
lines = ["# Tkrzw-RPC: memstored's gRPC port vs tkrzw_server", "",
         "Written by `scripts/bench-rpc.sh` (issue 43); not run by CI. Both servers driven by the real",
         "`tkrzw_dbm_remote_perf sequence --set_only --get_only --multi M --threads T --iter RECORDS/T` (Tkrzw-RPC 0.9.10),",
         "a fresh server per run, alternating, medians. qps: records per second as perf prints it; CPU: server",
         "utime+stime per record (per call: times M), read in clock ticks (10 ms here), so a batched row of a small run",
         "is a few ticks and coarse. Goal (issue 43): qps ratio >= 1.5 and CPU ratio <= 0.67 in every row.", ""]
lines += ["    " + l.rstrip() for l in open(meta)] + [""]
lines += ["| multi | threads | op | memstored qps | tkrzw_server qps | ratio | memstored CPU µs/record | tkrzw_server CPU µs/record | CPU ratio | goal |",
          "|---:|---:|---|---:|---:|---:|---:|---:|---:|---|"]
for o in out:
    goal = "met" if o["qps_ratio"] >= 1.5 and o["cpu_ratio"] <= 0.67 else "not met"
    lines.append(f"| {o['multi']} | {o['threads']} | {o['phase']} | {o['memstored_qps']:,} | {o['tkrzw_qps']:,} | "
                 f"{o['qps_ratio']:.2f}x | {o['memstored_cpu_us']:.2f} | {o['tkrzw_cpu_us']:.2f} | {o['cpu_ratio']:.2f}x | {goal} |")
lines += ["", "Every run: `" + raw + "`; chart: `rpc.png`.", ""]
open(md, "w").write("\n".join(lines))
print("\n".join(lines))
EOF
python3 "$ROOT/scripts/plot_rpc.py" "$MED" "$OUT_DIR/rpc.png" || echo "no chart" >&2
