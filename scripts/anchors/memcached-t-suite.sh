#!/usr/bin/env bash
# NOT RUN BY CI. Runs memcached's own t/ suite (a memcached 1.6.45 source tree, built: ../shared/ANCHORS.md)
# against memstored: t/lib/MemcachedTest.pm starts "memcached-debug" from the build tree, each file with its
# own flags; a copy of the tree gets a memcached-debug that starts memstored with those flags instead.
# The suite reads the server's features from `memcached-debug -h`: that is memcached's own help, less its
# extstore lines. memstored has no UDP: every `-U <port>` is dropped (the one the suite adds to every TCP
# start, and t/issue_67.t's own, `-U -1` included).
# proxy*, extstore* and udp.t are not run (no proxy, extstore or UDP in memstored). docs/memcached-compat.md
# lists every file's result.
#
# Usage: scripts/anchors/memcached-t-suite.sh MEMCACHED_TREE [OUTDIR]   (MEMSTORED: default target/debug/memstored)
set -uo pipefail
cd "$(dirname "$0")/../.."
TREE=$(realpath "${1:?usage: $0 MEMCACHED_TREE [OUTDIR]}")
OUT=$(realpath -m "${2:-$(mktemp -d /tmp/memcached-t.XXXXXX)}")
MEMSTORED=$(realpath "${MEMSTORED:-target/debug/memstored}")
[ -x "$TREE/memcached-debug" ] || { echo "$TREE/memcached-debug: build memcached first" >&2; exit 1; }
work=$OUT/tree
rm -rf "$work" && mkdir -p "$work" && cp -r "$TREE/." "$work/"
cp "$MEMSTORED" "$work/memstored-bin"
cat >"$work/memcached-debug" <<EOF
#!/bin/sh
if [ "\$1" = "-h" ]; then exec "$TREE/memcached-debug" -h | grep -v "ext_path\|extstore"; fi
args=\$(echo " \$*" | sed -E 's/ -U -?[0-9]+//')
exec "$work/memstored-bin" \$args
EOF
chmod +x "$work/memcached-debug"
cd "$work" || exit 1
: >"$OUT/summary.tsv"
for f in t/*.t; do
  case "$f" in *proxy* | *extstore* | t/udp.t) continue ;; esac
  name=$(basename "$f")
  timeout 180 prove -v "$f" >"$OUT/$name.log" 2>&1
  result=$(grep -a -m1 '^Result:' "$OUT/$name.log" || echo "Result: TIMEOUT")
  printf '%s\t%s\n' "$name" "${result#Result: }" | tee -a "$OUT/summary.tsv"
done
