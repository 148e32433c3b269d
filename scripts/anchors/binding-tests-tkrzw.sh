#!/usr/bin/env bash
# NOT RUN BY CI. Runs Tkrzw's own binding test suites (estraier/tkrzw-python test.py, tkrzw-go unit_test.go,
# tkrzw-java Test.java, tkrzw-ruby test.rb) against memstored's bindings with only the names changed: the
# module/package name `tkrzw` becomes `memstored` (Ruby's module `Tkrzw` becomes `Memstored`), wherever the
# suite spells it, its string literals of qualified class names ("tkrzw.File", "Tkrzw::DBM") included. Nothing
# else is edited and nothing fetched goes into this repository. docs/bindings.md has the results.
#
# Usage: scripts/anchors/binding-tests-tkrzw.sh SRC_DIR [OUTDIR]
#   SRC_DIR holds python/ go/ java/ ruby/: checkouts (or `git archive`s) of the four repositories.
#   Languages: LANGS (default "python go java ruby").
# Env: VENV (a Python virtual environment to install the binding into; default target/test-venv, which
#      ./test.sh makes), CARGO_TARGET_DIR (default target).
# Prints one line per language with the suite's result; the suites' output is kept under OUTDIR.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
SRC=$(realpath "${1:?usage: $0 SRC_DIR [OUTDIR]}")
OUT=${2:-$(mktemp -d /tmp/binding-tests-tkrzw.XXXXXX)}
LANGS=${LANGS:-python go java ruby}
TARGET=$(realpath "${CARGO_TARGET_DIR:-target}")
VENV=${VENV:-$TARGET/test-venv}
mkdir -p "$OUT"
export PATH="$PATH:/usr/local/go/bin"
cargo build -q -p memstored-c -p memstored-ruby || exit 1
lib=$TARGET/debug

run_python() {
  "$VENV/bin/python" -m pip install -q --no-build-isolation ./bindings/python || return 1
  local dir=$OUT/python
  mkdir -p "$dir" && sed 's/^from tkrzw import \*/from memstored import */; s/^import tkrzw$/import memstored as tkrzw/' \
    "$SRC/python/test.py" >"$dir/test.py"
  (cd "$dir" && "$VENV/bin/python" test.py) >"$OUT/python.log" 2>&1
}

run_go() {
  local dir=$OUT/go
  rm -rf "$dir" && mkdir -p "$dir"
  cp bindings/go/go.mod bindings/go/*.c bindings/go/*.h "$dir/"
  for f in bindings/go/*.go; do case $f in *_test.go) ;; *) cp "$f" "$dir/" ;; esac; done
  sed 's/^package tkrzw$/package memstored/' "$SRC/go/unit_test.go" >"$dir/unit_test.go"
  (cd "$dir" && CGO_CFLAGS="-I$ROOT/bindings/c/include" CGO_LDFLAGS="-L$lib" go test -count=1 -v .) >"$OUT/go.log" 2>&1
}

run_java() {
  local jh dir=$OUT/java rc=0
  jh=$(bindings/java/find-jdk.sh) || return 1
  JAVA_HOME=$jh MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow" mvn -q -B -f bindings/java/pom.xml compile || return 1
  rm -rf "$dir" && mkdir -p "$dir/src/memstored" "$dir/out"
  sed 's/^package tkrzw;/package memstored;/; s/"tkrzw\./"memstored./g' "$SRC/java/Test.java" \
    >"$dir/src/memstored/Test.java"
  "$jh/bin/javac" -nowarn -d "$dir/out" -cp bindings/java/target/classes "$dir/src/memstored/Test.java" || return 1
  : >"$OUT/java.log"
  # Test.java's modes, as its Makefile's `check` runs them (perf and wicked are benchmarks).
  for t in utility status basic process iter thread search export asyncdbm file index; do
    (cd "$dir" && timeout 300 "$jh/bin/java" -ea --enable-native-access=ALL-UNNAMED \
      -Dmemstored.library="$lib/libmemstored.so" -cp "out:$ROOT/bindings/java/target/classes" memstored.Test "$t") \
      >>"$OUT/java.log" 2>&1
    local r=$?
    echo "java $t: exit $r" >>"$OUT/java.log"
    [ $r = 0 ] || rc=1
  done
  return $rc
}

run_ruby() {
  local dir=$OUT/ruby
  mkdir -p "$dir"
  sed 's/tkrzw/memstored/g; s/Tkrzw/Memstored/g' "$SRC/ruby/test.rb" >"$dir/test.rb"
  (cd "$dir" && MEMSTORED_RUBY_EXT="$lib/libmemstored_ruby.so" ruby -I "$ROOT/bindings/ruby/lib" test.rb) \
    >"$OUT/ruby.log" 2>&1
}

status=0
for l in $LANGS; do
  if [ ! -d "$SRC/$l" ]; then
    echo "$l: no checkout at $SRC/$l"
    status=1
    continue
  fi
  if "run_$l"; then r=pass; else r=FAIL; status=1; fi
  echo "$l: $r ($OUT/$l.log)"
done
exit $status
