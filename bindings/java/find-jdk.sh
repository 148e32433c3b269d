#!/usr/bin/env bash
# Prints the home of a JDK the Java binding runs on: 23 or newer (the Foreign
# Function & Memory API with critical downcalls on heap arrays). Tries
# $MEMSTORED_JAVA_HOME, $JAVA_HOME, the CI image's Temurin 25, then every JDK
# in /usr/lib/jvm; exits 1 with a message naming what it tried when none fits.
set -euo pipefail
min=23
major() { sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null; }
tried=()
for home in "${MEMSTORED_JAVA_HOME:-}" "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do
  [ -n "$home" ] && [ -x "$home/bin/javac" ] || continue
  v="$(major "$home")"
  if [ -n "$v" ] && [ "$v" -ge "$min" ]; then
    echo "$home"
    exit 0
  fi
  tried+=("$home (${v:-unknown version})")
done
echo "no JDK $min+ found for the Java binding (tried: ${tried[*]:-none}); install one (Temurin 25) and set MEMSTORED_JAVA_HOME" >&2
exit 1
