#!/usr/bin/env bash
# Installs what the test suite needs on a machine that has only the
# toolchains (cargo, python3): test.sh runs it first, so the README's test
# command is the whole set-up; `.ci/run` is that same command.
#
# - Debian packages (apt-get, as root or through `sudo -n`; otherwise it stops
#   and prints the exact apt-get line to run): the programs the tests start
#   beside memstored (memcached, memccapable, nutcracker, Prometheus), the
#   ancestors' tools the import tests run (Tkrzw, Tokyo Cabinet, Kyoto
#   Cabinet), a C compiler, Go, Maven and a JDK 23+, Ruby's headers, libclang
#   and minitest, python3-venv.
# - Python modules, into a virtual environment of the suite's own
#   (`$MEMSTORED_TEST_VENV`, default target/test-venv), never into the
#   system's: Debian's python3 refuses `pip install` outside one.
# - Go-built memcached_exporter (Prometheus's, not packaged by Debian), and
#   cargo-deb (the .deb test) with `cargo install`.
#
# Prints the virtual environment's bin directory last; test.sh puts it first
# on PATH. Everything is checked before it is installed, so a second run
# installs nothing and takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "install-test-deps: $*" >&2; }

need_apt=()
want_pkg() { dpkg -s "$1" >/dev/null 2>&1 || need_apt+=("$1"); }
# memcached and memccapable (libmemcached-tools) to compare with; nutcracker
# (twemproxy) and libmemcached's headers (pylibmc builds on them) for the
# scale-out tests; Prometheus and promtool for the metrics tests.
for pkg in memcached libmemcached-tools nutcracker libmemcached-dev zlib1g-dev prometheus; do
  want_pkg "$pkg"
done
# The ancestors' own tools, which make the files `memstore import` brings over
# (crates/cli/tests: tkrzw_dbm_util, tchmgr/tcbmgr, kchashmgr/kctreemgr).
for pkg in tkrzw-utils tokyocabinet-bin kyotocabinet-utils; do
  want_pkg "$pkg"
done
# The C and Go bindings' tests: a C compiler, and Go (a Go in /usr/local/go,
# as on the CI image, is used when there).
command -v cc >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
if [ -x /usr/local/go/bin/go ]; then export PATH="$PATH:/usr/local/go/bin"; fi
command -v go >/dev/null 2>&1 || need_apt+=(golang-go)
# The Java binding: Maven, and a JDK 23+ (Debian 12 has none; a newer Debian
# has openjdk-25; bindings/java/find-jdk.sh says where it looked).
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
if ! bindings/java/find-jdk.sh >/dev/null 2>&1 &&
  apt-cache policy openjdk-25-jdk-headless 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  need_apt+=(openjdk-25-jdk-headless)
fi
# The Ruby binding: Ruby with its headers (the extension is built by cargo
# through magnus/rb-sys, whose bindgen needs libclang) and minitest.
for pkg in ruby-dev ruby-minitest libclang-dev; do
  want_pkg "$pkg"
done
# The openssl command: test_grpc_port.py makes the certificates of its TLS
# tests with it (a CA, a server and client certificates).
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
# A virtual environment for the Python modules (Debian's python3 needs
# python3-venv for it; a python3 of its own, such as pyenv's, has it).
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need_apt+=(python3-venv)

if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    say "these Debian packages are missing and installing them needs root:"
    say "  sudo apt-get install -y ${need_apt[*]}"
    say "run that (or run ./test.sh as root), then ./test.sh again"
    exit 1
  fi
  say "apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq "${need_apt[@]}" >/dev/null
  # memcached, nutcracker and Prometheus are installed as programs to test
  # against; the services the packages start are not wanted (the tests start
  # their own, and a memcached on 11211 would answer for memstored).
  if command -v service >/dev/null 2>&1; then
    for svc in memcached nutcracker prometheus prometheus-node-exporter; do
      "${as_root[@]}" service "$svc" stop >/dev/null 2>&1 || true
    done
  fi
fi
# The JDK the Java steps need, or the reason there is none.
bindings/java/find-jdk.sh >/dev/null

venv="${MEMSTORED_TEST_VENV:-${CARGO_TARGET_DIR:-target}/test-venv}"
if [ ! -x "$venv/bin/python3" ]; then
  say "python3 -m venv $venv"
  python3 -m venv "$venv"
fi
venv="$(cd "$venv" && pwd)"
# pip is asked only when requirements-test.txt changed since it last ran
# here (its resolver costs seconds even when all is there).
stamp="$venv/requirements.sha256"
want="$(cat requirements-test.txt; echo 'maturin>=1.9,<2')"
if [ "$(sha256sum <<<"$want")" != "$(cat "$stamp" 2>/dev/null)" ]; then
  say "pip install into $venv: requirements-test.txt, maturin"
  "$venv/bin/python3" -m pip install -q --upgrade pip
  "$venv/bin/python3" -m pip install -q -r requirements-test.txt "maturin>=1.9,<2"
  sha256sum <<<"$want" >"$stamp"
fi

# Prometheus's memcached_exporter for tests/python/test_memcached_exporter.py:
# not packaged by Debian, so built from the Go module proxy. Its newest
# releases are not served there and v0.14.4's checksum is not in the
# checksum database, so that one module is exempt from the check (its
# dependencies are checked). A test tool: nothing of it is shipped.
exporter="$(go env GOPATH)/bin/memcached_exporter"
if ! command -v memcached_exporter >/dev/null 2>&1 && [ ! -x "$exporter" ]; then
  say "go build memcached_exporter v0.14.4 into $exporter"
  build="$(mktemp -d)"
  (
    cd "$build"
    export GONOSUMDB=github.com/prometheus/memcached_exporter GOFLAGS=-mod=mod
    go mod init memcached-exporter-build >/dev/null 2>&1
    go get github.com/prometheus/memcached_exporter@v0.14.4 >/dev/null 2>&1
    go build -o "$exporter" github.com/prometheus/memcached_exporter/cmd/memcached_exporter
  )
  rm -rf "$build"
fi

# cargo-deb for scripts/test-deb.sh (the Debian package's test), a version
# pinned so that its handling of our metadata does not change under us
# (builds in about 2 minutes here).
if [ "$(cargo deb --version 2>/dev/null)" != "cargo-deb 3.8.0" ]; then
  say "cargo install cargo-deb 3.8.0"
  cargo install --quiet --locked cargo-deb --version 3.8.0 >&2
fi

# rustfmt and clippy come with rustup's default profile; a minimal one lacks them.
if command -v rustup >/dev/null 2>&1; then
  rustup component list --installed 2>/dev/null | grep -q '^clippy' &&
    rustup component list --installed 2>/dev/null | grep -q '^rustfmt' ||
    rustup component add rustfmt clippy >/dev/null
fi

echo "$venv/bin"
