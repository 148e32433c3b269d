#!/usr/bin/env bash
# NOT RUN BY CI. Off-CI helper: builds the anchor Tkrzw-RPC 0.9.10 (tkrzw_server, tkrzw_dbm_remote_util,
# tkrzw_dbm_remote_perf) from estraier/tkrzw-rpc's source against Debian's Tkrzw 1.0.25, as
# ../shared/ANCHORS.md ("Tkrzw-RPC 0.9.10") describes. Nothing it fetches goes into this repository.
#
# Usage: scripts/anchors/build-tkrzw-rpc.sh [SRC_GIT_DIR_OR_URL]
#   SRC_GIT_DIR_OR_URL: a git directory or URL of estraier/tkrzw-rpc (default: the GitHub URL).
# Env: PREFIX (default /opt/tkrpc), WORK (default /tmp/tkrpc), JOBS (default 2).
# Afterwards: export LD_LIBRARY_PATH=$PREFIX/lib
#
# Notes (measured 2026-11-28):
# - The repository has no tags: 0.9.10 is the last commits (configure.in's AC_INIT says 0.9.10 from 4e487be on;
#   HEAD 41940f2 only adds snprintf in tkrzw_dbm_remote_perf.cc and a doc line). This builds 41940f2.
# - ANCHORS.md's steps worked unchanged (apt packages, ./configure --prefix, make -j2, make install); the only
#   missing piece there is how to get the source (git archive of the commit below).
set -euo pipefail
SRC=${1:-https://github.com/estraier/tkrzw-rpc.git}
PREFIX=${PREFIX:-/opt/tkrpc}
WORK=${WORK:-/tmp/tkrpc}
JOBS=${JOBS:-2}
COMMIT=41940f2713d982112cf2749aa0e4e82a9ab3f748

DEBIAN_FRONTEND=noninteractive apt-get install -y \
  libtkrzw-dev libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler pkg-config

rm -rf "$WORK"
mkdir -p "$WORK"
if [ -d "$SRC" ]; then
  git --git-dir="$SRC" archive "$COMMIT" | tar x -C "$WORK"
else
  git clone --quiet "$SRC" "$WORK.git-tmp"
  git -C "$WORK.git-tmp" archive "$COMMIT" | tar x -C "$WORK"
  rm -rf "$WORK.git-tmp"
fi
cd "$WORK"
grep -q 'AC_INIT(\[tkrzw-rpc\], \[0.9.10\])' configure.in
./configure --prefix="$PREFIX"
make -j"$JOBS"
make install
LD_LIBRARY_PATH="$PREFIX/lib" "$PREFIX/bin/tkrzw_server" --version
