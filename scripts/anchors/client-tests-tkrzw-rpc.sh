#!/usr/bin/env bash
# NOT RUN BY CI. Runs the Tkrzw-RPC client libraries' own test suites (estraier/tkrzw-rpc-python, -go, -java,
# -ruby) against the real tkrzw_server (baseline) and then against memstored's gRPC port, with only the address
# changed: each suite's hard-coded "localhost:1978" is replaced by the TKRPC_ADDR environment variable in the
# test file, nothing else. Nothing fetched goes into this repository.
#
# Usage: scripts/anchors/client-tests-tkrzw-rpc.sh CLIENTS_DIR [OUTDIR]
#   CLIENTS_DIR holds python/ go/ java/ ruby/: checkouts (or `git archive`s) of the four repositories; a
#   missing one is cloned from GitHub. Languages: LANGS (default "python go java ruby").
# Env: TKRPC (default /opt/tkrpc), MEMSTORED (default target/release/memstored),
#      DB (default "#dbm=tiny", tkrzw_server's own default database made explicit, given to both servers).
# A fresh server for every suite. Prints one line per test: LANG TEST tkrzw_server-result memstored-result;
# the suites' output is kept under OUTDIR.
#
# Set-up that worked here (2026-11-28, Debian 12; rubygems.org is not reachable from these machines):
# - python: a venv with grpcio, grpcio-tools and protobuf from PyPI; the package's shipped *_pb2 files were made
#   by a protoc too old for protobuf >= 4, so the stubs are regenerated from its own tkrzw_rpc.proto.
# - go: `go mod tidy` (the repository has no go.sum), then `go test -c`.
# - ruby: Debian's ruby-grpc and ruby-google-protobuf (its *_pb.rb use the old DSL that they still read).
# - java: Debian's libgrpc-java, libprotobuf-java, libnetty-java, libperfmark-java; javac into build/.
#   The suite is Test.java's status, basic, iter and thread modes (its Makefile's `check`, less perf/wicked).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
CLIENTS=$(realpath "${1:?usage: $0 CLIENTS_DIR [OUTDIR]}")
OUT=${2:-$(mktemp -d /tmp/client-tests-tkrzw-rpc.XXXXXX)}
TKRPC=${TKRPC:-/opt/tkrpc}
MEMSTORED=${MEMSTORED:-$ROOT/target/release/memstored}
DB=${DB:-#dbm=tiny}
LANGS=${LANGS:-python go java ruby}
VENV=${VENV:-$CLIENTS/venv}
# shellcheck source=../lib/tkrzw-rpc.sh
. "$ROOT/scripts/lib/tkrzw-rpc.sh"
trap tkrpc_stop EXIT
mkdir -p "$OUT"
: >"$OUT/results.txt"
JAVA_JARS="grpc-api grpc-context grpc-core grpc-netty grpc-protobuf grpc-protobuf-lite grpc-stub protobuf guava
  failureaccess error_prone_annotations jsr305 opencensus-api opencensus-contrib-grpc-metrics gson perfmark-api
  perfmark-impl netty-buffer netty-codec netty-codec-http netty-codec-http2 netty-codec-socks netty-common
  netty-handler netty-handler-proxy netty-resolver netty-transport"
JAVA_CP=$(for j in $JAVA_JARS; do [ -f "/usr/share/java/$j.jar" ] && printf '/usr/share/java/%s.jar:' "$j"; done)

# setup LANG: gets and builds one client library; patches its tests' address.
setup() {
  local lang=$1 dir=$CLIENTS/$1
  [ -d "$dir" ] || git clone -q "https://github.com/estraier/tkrzw-rpc-$lang" "$dir" || return 1
  case $lang in
    python)
      [ -x "$VENV/bin/python" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q grpcio grpcio-tools protobuf; } ||
        return 1
      sed -i 's/"localhost:1978"/os.environ["TKRPC_ADDR"]/' "$dir/test.py"
      (cd "$dir" && "$VENV/bin/python" -m grpc_tools.protoc -I. --python_out=tkrzw_rpc --grpc_python_out=tkrzw_rpc \
        tkrzw_rpc.proto)
      ;;
    go)
      sed -i 's/"localhost:1978"/os.Getenv("TKRPC_ADDR")/' "$dir/unit_test.go"
      (cd "$dir" && go mod tidy && go test -c -o tkrpc-go.test)
      ;;
    ruby)
      dpkg -s ruby-grpc ruby-google-protobuf >/dev/null 2>&1 ||
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ruby-grpc ruby-google-protobuf >/dev/null || return 1
      sed -i 's/"localhost:1978"/ENV["TKRPC_ADDR"]/' "$dir/test.rb"
      ;;
    java)
      dpkg -s libgrpc-java libprotobuf-java libnetty-java libperfmark-java >/dev/null 2>&1 ||
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgrpc-java libprotobuf-java libnetty-java \
          libperfmark-java >/dev/null || return 1
      JAVA_CP=$(for j in $JAVA_JARS; do [ -f "/usr/share/java/$j.jar" ] && printf '/usr/share/java/%s.jar:' "$j"; done)
      sed -i 's/"localhost:1978"/System.getenv("TKRPC_ADDR")/' "$dir/Test.java"
      mkdir -p "$dir/build"
      (cd "$dir" && javac -nowarn -d build -cp "$JAVA_CP" ./*.java)
      ;;
  esac
}

# suite LANG LOG: runs one suite against ADDR; prints "TEST ok|FAIL|ERROR" lines.
suite() {
  local lang=$1 log=$2 dir=$CLIENTS/$1 t
  export TKRPC_ADDR=$ADDR
  case $lang in
    python)
      (cd "$dir" && timeout 600 "$VENV/bin/python" test.py) >"$log" 2>&1
      sed -n -E 's/^(test[A-Za-z]+) .* \.\.\. (ok|FAIL|ERROR)$/\1 \2/p' "$log"
      ;;
    go)
      (cd "$dir" && timeout 600 ./tkrpc-go.test -test.v) >"$log" 2>&1
      sed -n -E 's/^--- (PASS|FAIL): ([A-Za-z]+) .*/\2 \1/p' "$log" | sed 's/ PASS$/ ok/'
      ;;
    ruby)
      (cd "$dir" && timeout 600 ruby -I. test.rb -v) >"$log" 2>&1
      # test-unit -v: "  test_x:" per test (its mark may come lines later), "Failure: test_x(" / "Error: test_x(".
      for t in $(grep -a -o -E '^  test_[a-z_]+:' "$log" | tr -d ' :'); do
        if grep -a -q "^Failure: $t(" "$log"; then
          echo "$t FAIL"
        elif grep -a -q "^Error: $t(" "$log"; then
          echo "$t ERROR"
        else
          echo "$t ok"
        fi
      done
      ;;
    java)
      : >"$log"
      for t in status basic iter thread; do
        echo "== $t" >>"$log"
        if (cd "$dir" && timeout 300 java -cp "build:$JAVA_CP" tkrzw_rpc.Test "$t") >>"$log" 2>&1; then
          echo "$t ok"
        else
          echo "$t FAIL"
        fi
      done
      ;;
  esac
}

for lang in $LANGS; do
  if ! setup "$lang" >"$OUT/setup-$lang.log" 2>&1; then
    echo "$lang: set-up failed (see $OUT/setup-$lang.log)" >&2
    continue
  fi
  for server in tkrzw_server memstored; do
    tkrpc_start "$server" "$OUT/$server-$lang" "$DB"
    suite "$lang" "$OUT/$lang-$server.log" >"$OUT/$lang-$server.results"
    tkrpc_stop
  done
  join -a1 -a2 -e - -o 0,1.2,2.2 <(sort "$OUT/$lang-tkrzw_server.results") <(sort "$OUT/$lang-memstored.results") |
    sed "s/^/$lang /" | tee -a "$OUT/results.txt"
done
echo "logs under $OUT" >&2
