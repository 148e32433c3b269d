#!/usr/bin/env bash
# Tests the Debian package as an operator gets it (test.sh runs it last):
# builds it (scripts/build-deb.sh), installs it with dpkg -i, runs the
# installed unit's ExecStart command line as systemd would, sets and gets a
# key over the memcached text protocol, stops the server with SIGTERM
# (exit 0), reads the key back with the packaged memstore, and purges the
# package, leaving the machine as it found it.
#
# It packages the debug binaries `cargo test --workspace` built (test.sh
# has just built them, so that build is a no-op there): what is tested is the
# package (paths, unit, config, maintainer scripts), not the optimiser, and
# a release build of the two programs costs minutes (6 min 17 s measured on
# this 2-core machine; packaging the debug ones, 13 s). cargo-deb 3.8.0 warns
# that a dev profile is unsupported; it packages it (stripped). The package
# goes to target/debian-test/, not beside a release one in target/debian/.
#
# dpkg needs root: run as root, or as a user with passwordless sudo (the
# part after the build then runs through `sudo -n`).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "test-deb: $*" >&2; }

if [ "${1:-}" != --as-root ]; then
  cargo test --locked --workspace --no-run
  # Faster compression: the package is built to be installed once, here.
  deb="$(scripts/build-deb.sh --profile dev --prebuilt --fast --output "${CARGO_TARGET_DIR:-target}/debian-test" | tail -n 1)"
  test -f "$deb" || { say "build-deb.sh printed no package path"; exit 1; }
  if [ "$(id -u)" = 0 ]; then
    exec bash "$0" --as-root "$deb"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    exec sudo -n bash "$0" --as-root "$deb"
  fi
  say "installing the package needs root: run scripts/test-deb.sh (or test.sh)"
  say "as root, or as a user with passwordless sudo (sudo -n true must work)"
  exit 1
fi

# As root from here on.
deb="$2"
pkg=memstored
unit=/usr/lib/systemd/system/memstored.service
if [ -d /run/systemd/system ]; then
  # The package's postinst starts the service where systemd runs, on the
  # config's 127.0.0.1:11211; this test runs the unit's command itself.
  say "skipped: systemd runs here, and installing would start memstored as a"
  say "service; CI (a container without systemd) runs this test"
  exit 0
fi
if dpkg -s "$pkg" >/dev/null 2>&1; then
  say "package $pkg is already installed here; this test would replace and purge it"
  exit 1
fi

tmp="$(mktemp -d)"
server=
state=
cleanup() {
  local rc=$?
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
    kill -KILL "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  dpkg -P "$pkg" >/dev/null 2>&1 || true
  if [ -n "$state" ]; then rm -rf "$state"; fi
  if [ $rc -ne 0 ] && [ -s "$tmp/stderr" ]; then
    say "memstored's stderr:"
    cat "$tmp/stderr" >&2
  fi
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT

dpkg -i "$deb" >/dev/null
for f in /usr/bin/memstored /usr/bin/memstore "$unit"; do
  test -f "$f" || { say "$f is not installed"; exit 1; }
done
dpkg-query -W -f='${Conffiles}\n' "$pkg" | grep -q '^ /etc/memstored/memstored.toml ' ||
  { say "/etc/memstored/memstored.toml is not a conffile"; exit 1; }

# The unit's command line, word by word (it has no quotes), is what runs.
exec_start="$(sed -n 's/^ExecStart=//p' "$unit")"
read -r -a cmd <<<"$exec_start"
test "${cmd[0]}" = /usr/bin/memstored || { say "ExecStart runs ${cmd[0]}, not the packaged binary"; exit 1; }
# systemd makes the StateDirectory (/var/lib/NAME), owned by the unit's
# DynamicUser, and starts the program as that user. Without systemd the test
# does both itself, as nobody: started as root, memstored would refuse to
# run without -u (as memcached), and the unit never starts it as root.
state_name="$(sed -n 's/^StateDirectory=//p' "$unit")"
grep -q '^DynamicUser=yes' "$unit" || { say "the unit has no DynamicUser=yes; update this test"; exit 1; }
test -n "$state_name" || { say "the unit has no StateDirectory"; exit 1; }
if [ -e "/var/lib/$state_name" ]; then
  say "/var/lib/$state_name exists; this test would remove it"
  exit 1
fi
state="/var/lib/$state_name"
install -d -o nobody -g "$(id -gn nobody)" -m 0755 "$state"
as_unit_user=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)

# The config listens on 127.0.0.1:11211; a flag wins over the file, so the
# test takes a port the kernel picks instead, learnt from memstored's
# "memstored listening on ADDR:PORT" line (printed once it serves).
mkfifo "$tmp/stdout"
"${as_unit_user[@]}" "${cmd[@]}" -l 127.0.0.1:0 >"$tmp/stdout" 2>"$tmp/stderr" &
server=$!
exec 3<"$tmp/stdout"
port=
while read -r -t 60 -u 3 line; do
  case "$line" in
  "memstored listening on 127.0.0.1:"*)
    port="${line##*:}"
    break
    ;;
  esac
done
test -n "$port" || { say "memstored did not report its port within 60 s"; exit 1; }

exec 4<>"/dev/tcp/127.0.0.1/$port"
printf 'set deb-test 0 0 5\r\nhello\r\nget deb-test\r\n' >&4
replies=()
for _ in 1 2 3 4; do
  read -r -t 10 -u 4 reply
  replies+=("${reply%$'\r'}")
done
exec 4>&-
want=(STORED "VALUE deb-test 0 5" hello END)
[ "${replies[*]}" = "${want[*]}" ] || { say "replies: ${replies[*]@Q}, want ${want[*]@Q}"; exit 1; }

kill -TERM "$server"
rc=0
wait "$server" || rc=$?
server=
exec 3<&-
[ $rc -eq 0 ] || { say "memstored exited $rc after SIGTERM, not 0"; exit 1; }

# The key is on disk where the config puts the store, and the packaged
# memstore reads it there (as the unit's user, as an operator would).
store="$(/usr/bin/memstored --config /etc/memstored/memstored.toml --print-config |
  sed -n 's/^store = \["\([^"]*\)".*/\1/p')"
case "$store" in
"$state"/*) ;;
*) say "the config's store ($store) is not under the unit's StateDirectory $state"; exit 1 ;;
esac
got="$("${as_unit_user[@]}" /usr/bin/memstore get "$store" deb-test)"
[ "$got" = hello ] || { say "memstore get read ${got@Q}, want 'hello'"; exit 1; }

dpkg -P "$pkg" >/dev/null
for f in /usr/bin/memstored /usr/bin/memstore "$unit" /etc/memstored \
  /etc/systemd/system/multi-user.target.wants/memstored.service; do
  if [ -e "$f" ] || [ -L "$f" ]; then
    say "$f is left after dpkg -P"
    exit 1
  fi
done
say "ok: installed, served, stopped with exit 0, purged ($(basename "$deb"))"
