#!/usr/bin/env bash
# Runs the whole test suite: formatting, lints, every crate's tests (the C
# binding's among them: header check and a C program), the Java binding's
# JUnit tests (Maven, on a JDK 23+), the Go binding's tests (with the race
# detector, and seed 004's two programs), the Python client tests against the
# real server binary, the Python binding's tests, and the Ruby binding's tests
# (minitest).
# Everything the tests need beyond the toolchains (cargo, python3) is
# installed first by scripts/install-test-deps.sh (apt-get as root or through
# sudo -n, else it names the packages; Python modules into the suite's own
# virtual environment, whose bin directory goes first on PATH; Go-built
# memcached_exporter; cargo-deb). MEMSTORED_SKIP_INSTALL=1 skips that step.
set -euo pipefail
cd "$(dirname "$0")"
if [ "${MEMSTORED_SKIP_INSTALL:-}" != 1 ]; then
  venv_bin="$(scripts/install-test-deps.sh)"
else
  venv_bin="$(cd "${MEMSTORED_TEST_VENV:-${CARGO_TARGET_DIR:-target}/test-venv}/bin" && pwd)"
fi
export PATH="$venv_bin:$PATH"
if [ -x /usr/local/go/bin/go ]; then export PATH="$PATH:/usr/local/go/bin"; fi
cargo fmt --all -- --check
# No merge left its conflict markers behind (one once broke a script and a doc).
if git rev-parse --git-dir >/dev/null 2>&1 && git grep -nE '^(<<<<<<<|>>>>>>>) ' -- ':!*.lock'; then
  echo "conflict markers committed (above)" >&2
  exit 1
fi
cargo clippy --workspace --all-targets -- -D warnings
# The server's layers (imports only downward, records only through command/)
# and no import cycle in the other crates: docs/design.md "Server".
python3 scripts/check-layers.py crates/server/src
python3 scripts/check-layers.py --acyclic crates/engine/src crates/cli/src crates/protocol/src
# Built before the tests: the C binding's test links target/debug/libmemstored.a,
# which `cargo test` alone does not produce on a clean tree; the Go, Java and
# Ruby steps below use the libraries built here. No other crate writes
# libmemstored.*: the Python binding's cdylib is libmemstored_python.so.
cargo build -p memstored-server -p memstored-c -p memstored-ruby
cargo test --workspace "$@"
# The server's tests once more on the shared tokio runtime, the scheduler's
# fallback (`--scheduler shared`; per-core is the default): both stay correct.
# The test binaries built above are run directly: `cargo test -p` would resolve
# features for that one package and rebuild the workspace's crates (minutes).
server_tests="$(cargo test --workspace --tests --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"] and "crates/server#" in m["package_id"]:
        print(m["executable"])')"
test -n "$server_tests" || { echo "no server test binaries found" >&2; exit 1; }
for t in $server_tests; do
  (cd crates/server && MEMSTORED_SCHEDULER=shared "$t" -q)
done
# And once more on per-core epoll, what `--io auto` falls back to where the
# kernel refuses io_uring (the first run above used io_uring where allowed).
for t in $server_tests; do
  (cd crates/server && MEMSTORED_IO=epoll "$t" -q)
done
c_lib_dir="$(cd "${CARGO_TARGET_DIR:-target}/debug" && pwd)"
# The Java binding loads the debug libmemstored.so just built. Maven runs on
# the binding's JDK; the Unsafe flag quiets Maven 3.8's own libraries on JDK
# 24+. Dependencies come from ~/.m2 when cached, else from Maven Central
# (JUnit, compiler and surefire plugins only).
java_home="$(bindings/java/find-jdk.sh)"
JAVA_HOME="$java_home" MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow" \
  mvn -q -B -f bindings/java/pom.xml test -Dmemstored.library="$c_lib_dir/libmemstored.so"
# The README's Java example, run from the classes just built (hash order: sorted).
java_out="$(mktemp -d)"
"$java_home/bin/java" --enable-native-access=ALL-UNNAMED -Dmemstored.library="$c_lib_dir/libmemstored.so" \
  -cp bindings/java/target/classes bindings/java/examples/HopStepJump.java "$java_out" | LC_ALL=C sort >"$java_out/got"
printf '%s\n' "first hop" hop jump "second step" step "third jump" | diff - "$java_out/got"
rm -rf "$java_out"
# The Go binding links the static C library just built (bindings/go/native.go
# looks in target/release; -L puts the debug build first). -count=1: go's
# test cache does not see the library change.
(
  cd bindings/go
  test -z "$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting" >&2; exit 1; }
  export CGO_LDFLAGS="-L$c_lib_dir"
  go vet -composites=false ./...
  go test -race -count=1 ./...
)
MEMSTORED_BIN="${CARGO_TARGET_DIR:-target}/debug/memstored" python3 -m pytest -q tests/python
# The Python binding, reinstalled first so that the tests never run a stale
# build (a no-op rebuild when nothing changed; .ci/run installs maturin).
python3 -m pip install -q --no-build-isolation ./bindings/python
python3 -m pytest -q bindings/python/tests
# The type stubs must match the installed module.
python3 -m mypy.stubtest memstored --allowlist bindings/python/tests/stubtest-allowlist.txt
# The Ruby binding (bindings/ruby): the extension just built, by its path,
# so that a newer release build lying beside it is not what gets tested.
MEMSTORED_RUBY_EXT="${CARGO_TARGET_DIR:-target}/debug/libmemstored_ruby.so" \
  ruby -w -I bindings/ruby/lib -e 'ARGV.each { |f| require File.expand_path(f) }' bindings/ruby/test/test_*.rb
# The Debian package (scripts/build-deb.sh) from the debug build above:
# installed with dpkg, the unit's command line run and stopped, then purged.
scripts/test-deb.sh
# Every code block of the README and docs/operations.md, as written and in
# order (scripts/doc-blocks.py says how each kind is run): the README's
# release builds, its install (into a scratch CARGO_INSTALL_ROOT, whose
# memstored and memstore the later blocks run), every example.
python3 scripts/doc-blocks.py README.md docs/operations.md
