#!/usr/bin/env bash
# NOT RUN BY CI. Off-CI comparison: the real Tkrzw-RPC 0.9.10 tools (tkrzw_dbm_remote_util,
# tkrzw_dbm_remote_perf; build them with scripts/anchors/build-tkrzw-rpc.sh) against the real
# tkrzw_server and against memstored's gRPC port, same commands in the same order, then a diff of
# the two transcripts (stdout, stderr and exit code of every command; times, rates, process ids,
# memory figures and timestamps masked).
#
# The commands are seed 002's, in its order, at a small size (ITER per thread instead of 25M):
#   hash server "casket.tkh#num_shards=100,num_buckets=1M,update_mode=appending":
#     perf sequence --set_only --multi 100 --threads 4, sync --hard, sync "make_backup=", rebuild,
#     get 00000001, get 00000002, set --multi ..., get --multi ...
#   in-memory server "casket.tkmt#num_shards=100,num_buckets=1M": the same perf, sync --hard
#   tree server "casket.tkt#num_shards=10,num_buckets=1M": the same perf,
#     list --move jumplowerinc --jump_key 00000100 --items 20
# then the util's other subcommands (inspect, echo, list, queue, set --incr/--append/--no_overwrite,
# queue --compex, search, remove, clear, changemaster, --index) and perf's other workloads.
#
# Usage: scripts/anchors/compare-tkrzw-rpc.sh [OUTDIR]
# Env: TKRPC (default /opt/tkrpc), MEMSTORED (default target/release/memstored),
#      ITER (default 2500, per thread; 4 threads), MEMSTORED_ARGS (extra flags for memstored).
# Exit status: 0 when the transcripts agree, 1 when they differ.
# Servers bind 127.0.0.1 only; every loop is bounded.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
TKRPC=${TKRPC:-/opt/tkrpc}
MEMSTORED=${MEMSTORED:-$ROOT/target/release/memstored}
ITER=${ITER:-2500}
OUT=${1:-$(mktemp -d /tmp/compare-tkrzw-rpc.XXXXXX)}
# shellcheck source=../lib/tkrzw-rpc.sh
. "$ROOT/scripts/lib/tkrzw-rpc.sh"
UTIL=$TKRPC/bin/tkrzw_dbm_remote_util
PERF=$TKRPC/bin/tkrzw_dbm_remote_perf
for f in "$UTIL" "$PERF" "$TKRPC/bin/tkrzw_server" "$MEMSTORED"; do
  [ -x "$f" ] || { echo "missing $f" >&2; exit 2; }
done
mkdir -p "$OUT"
trap tkrpc_stop EXIT

# Masks what differs from run to run: times, rates, memory, pids, timestamps, ports.
# A queue key that is the current time in seconds (PushLast's default) is masked too.
mask() {
  sed -E -e 's/(elapsed_time|qps|mem|process_id|memory_usage|memory_capacity|timestamp)=[0-9.e+-]+/\1=#/g' \
    -e 's/^1[0-9]{9}\.[0-9]{6}\t/NOW\t/' -e "s/$ADDR/ADDR/g"
}

# c TOOL ARGS...: runs one tool command against ADDR and records it in the transcript.
c() {
  local tool=$1
  shift
  local bin=$UTIL
  [ "$tool" = perf ] && bin=$PERF
  echo "\$ tkrzw_dbm_remote_$tool $*"
  timeout 300 "$bin" "$@" --address "$ADDR" >"$WORK/o" 2>"$WORK/e"
  local rc=$?
  mask <"$WORK/o"
  mask <"$WORK/e" | sed 's/^/stderr: /'
  echo "rc=$rc"
}

# Lists the backup files' names, digits masked; the 14 characters of the date suffix are masked
# whole (tkrzw_server 0.9.10 pads its %2d fields with spaces: "20261128 91558" at 9 o'clock), and
# the names as they are go to backups.txt, outside the diff.
backups() {
  echo "\$ ls (backup files, digits masked)"
  (cd "$1" && ls -1 | grep -i backup | tee -a "$WORK/backups.txt" |
    sed -E -e 's/\.backup\.[0-9 ]{14}/.backup.YYYYMMDDhhmmss/' -e 's/[0-9]/9/g' | sort | uniq -c | head -5)
  echo "count=$(cd "$1" && ls -1 | grep -ci backup)"
}

transcript() {
  local kind=$1 base=$OUT/$1
  WORK=$base
  mkdir -p "$base"

  echo "### hash server"
  tkrpc_start "$kind" "$base/hash" "casket.tkh#num_shards=100,num_buckets=1M,update_mode=appending"
  c perf sequence --set_only --multi 100 --threads 4 --iter "$ITER"
  c util sync --hard
  c util sync "make_backup="
  backups "$base/hash"
  c util rebuild
  c util get 00000001
  c util get 00000002
  c util set --multi 00000001 yuutei 00000002 miyaou 00000003 kimukou
  c util get --multi 00000001 00000002 00000003
  echo "### hash server: other subcommands"
  c util inspect num_records
  c util inspect class
  c util inspect --index -1 num_dbms
  c util inspect --index -1 dbm_0_path
  c util inspect --index -1 dbm_0_count
  c util inspect --index -1 dbm_0_class
  c util inspect --index -1 version
  c util echo hello world
  c util echo
  c util get --multi 00000003 00000001 missing
  c util get missing
  c util set --no_overwrite 00000002 x
  c util set --append , 00000002 x
  c util get 00000002
  c util set --incr 5 ctr 0
  c util set --incr 5 ctr 3
  c util get ctr
  c util set --incr 1 00000002 1
  c util queue --compex ck
  c util queue --compex ck cv
  c util queue --compex ck --key
  c util queue --compex ck cv2
  c util search --mode begin 0000001 --items 100
  c util search --mode regex '^0000002[0-3]$' --items 100
  c util search --mode upper 00000010 --items 3
  c util remove 00000001
  c util remove 00000001
  c util remove --multi 00000002 00000003 missing
  c util get 00000002
  c util list --keys --items 1
  c util get --index 5 x
  c util rebuild num_buckets=1000
  c util sync --hard reducer=none
  c util sync --hard reducer=ReduceToFirst ignored=1
  c util sync "make_backup=x/y z"
  echo "\$ ls (backup files with suffix xyz or x/y z)"
  (cd "$base/hash" && ls -1 | grep -c -F -e 'backup.xyz' -e 'backup.x')
  c util changemaster 127.0.0.1:1
  c util clear
  c util inspect num_records
  c util queue q1 q2
  c util queue
  c util queue --key
  c util queue
  c util inspect num_records
  c util list
  echo "### hash server: perf workloads"
  c perf sequence --iter 1000 --threads 2
  c perf sequence --iter 1000 --threads 2 --stream
  c perf sequence --iter 1000 --threads 2 --multi 10
  c perf sequence --iter 500 --threads 2 --random_key --random_value
  c perf parallel --iter 1000 --threads 2
  c perf parallel --iter 1000 --threads 2 --stream
  c perf wicked --iter 1000 --threads 1
  c perf wicked --iter 1000 --threads 1 --iterator --clear --rebuild
  c perf queue --iter 200 --threads 1
  tkrpc_stop

  echo "### in-memory server"
  tkrpc_start "$kind" "$base/tkmt" "casket.tkmt#num_shards=100,num_buckets=1M"
  c perf sequence --set_only --multi 100 --threads 4 --iter "$ITER"
  c util sync --hard
  c util sync make_backup=b1
  c util get 00000001
  c util inspect num_records
  c util inspect class
  tkrpc_stop
  echo "\$ ls tkmt (files after sync, digits masked)"
  (cd "$base/tkmt" && ls -1 | grep -v '^server.log$' | sed -E 's/[0-9]/9/g' | sort | uniq -c | head -5)

  echo "### tree server"
  tkrpc_start "$kind" "$base/tkt" "casket.tkt#num_shards=10,num_buckets=1M"
  c perf sequence --set_only --multi 100 --threads 4 --iter "$ITER"
  c util list --move jumplowerinc --jump_key 00000100 --items 20
  c util inspect class
  c util list --items 3
  c util list --move jump --jump_key 00000100 --items 2
  c util list --move jumplower --jump_key 00000100 --items 2
  c util list --move jumpupper --jump_key 00000100 --items 2
  c util list --move jumpupperinc --jump_key 00000100 --items 2
  c util list --keys --escape --items 2
  c util search --mode upper 00000100 --items 3
  c util search --mode lowerinc 00000100 --items 3
  c util queue
  c util queue --key
  tkrpc_stop
}

echo "transcripts and server directories under $OUT" >&2
transcript tkrzw_server >"$OUT/tkrzw.txt" 2>&1
transcript memstored >"$OUT/memstored.txt" 2>&1
du -sh "$OUT/tkrzw_server" "$OUT/memstored" >&2
if diff -a -u --label tkrzw_server "$OUT/tkrzw.txt" --label memstored "$OUT/memstored.txt" >"$OUT/diff.txt"; then
  echo "no difference ($(grep -c '^\$ ' "$OUT/tkrzw.txt") commands)"
  status=0
else
  cat "$OUT/diff.txt"
  status=1
fi
# The databases and backups (hundreds of MB) are not kept; the servers' logs are.
find "$OUT/tkrzw_server" "$OUT/memstored" -type f ! -name server.log ! -name o ! -name e ! -name backups.txt -delete
exit $status
