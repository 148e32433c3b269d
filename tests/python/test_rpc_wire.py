"""Runs crates/server/tests/rpc_client.py (every MessagePack-RPC procedure,
the kt-msgpack error codes, out-of-order completion) against a started
memstored on a 10-shard tree store and on the in-memory store."""

import os
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT, Server


@pytest.mark.parametrize("kind", ["tree", "memory"])
def test_rpc_procedures(kind):
    with tempfile.TemporaryDirectory(prefix="memstored-rpc-") as tmp:
        store = f"{tmp}/casket.tkt#num_shards=10" if kind == "tree" else "*"
        srv = Server(store)
        try:
            env = {**os.environ, "MEMSTORED_ADDR": srv.addr, "MEMSTORED_LARGE_RECORDS": "50000"}
            r = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 str(ROOT / "crates" / "server" / "tests" / "rpc_client.py")],
                env=env, capture_output=True, text=True, timeout=600,
            )
            assert r.returncode == 0, r.stdout + r.stderr
            assert " passed" in r.stdout, r.stdout
        finally:
            srv.stop()
