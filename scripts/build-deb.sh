#!/usr/bin/env bash
# Builds the Debian package target/debian/memstored_VERSION-1_ARCH.deb and
# prints its path: memstored and memstore in /usr/bin, the systemd unit
# (dist/memstored.service) and the example config as a conffile
# (dist/memstored.toml in /etc/memstored/); crates/server/Cargo.toml's
# [package.metadata.deb] lists them.
#
# Two commands, since cargo-deb builds only its own crate's binary and
# memstore is crates/cli's: both are built first, then packaged as built.
#
#   scripts/build-deb.sh                  # a release build (what to install)
#   scripts/build-deb.sh --profile dev --prebuilt   # target/debug as it is
#
# --prebuilt packages the binaries already in the profile's directory:
# scripts/test-deb.sh packages those `cargo test --workspace` built, since
# building just these two crates resolves features differently and would
# compile the workspace's crates once more.
# Needs cargo-deb: `cargo install cargo-deb --version 3.8.0 --locked`.
# Other arguments go to cargo deb (`--fast`, `--output DIR`, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=release
build=1
while [ $# -gt 0 ]; do
  case "$1" in
  --profile) profile="${2:?--profile needs a name}"; shift 2 ;;
  --prebuilt) build=; shift ;;
  *) break ;;
  esac
done
if ! cargo deb --version >/dev/null 2>&1; then
  echo "build-deb: cargo-deb is missing: cargo install cargo-deb --version 3.8.0 --locked" >&2
  exit 1
fi
if [ -n "$build" ]; then
  cargo build --locked --profile "$profile" -p memstored-server -p memstored-cli >&2
fi
cargo deb --locked --no-build --profile "$profile" -p memstored-server "$@"
