"""Starts a real memstored for each test module that asks for one."""

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def server_binary() -> str:
    path = os.environ.get("MEMSTORED_BIN") or str(ROOT / "target" / "debug" / "memstored")
    if not os.path.exists(path):
        pytest.fail(f"memstored binary not found at {path}; run `cargo build` first or set MEMSTORED_BIN")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A memstored process on a free loopback port."""

    def __init__(self, store: str, *extra: str):
        self.port = free_port()
        self.addr = f"127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [server_binary(), "-s", store, "-l", self.addr, *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"memstored exited with {self.proc.returncode}")
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("memstored did not start listening")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module", params=["memory", "sharded-hash"])
def server(request):
    tmp = tempfile.mkdtemp(prefix="memstored-py-")
    store = "*#capsiz=64m" if request.param == "memory" else f"{tmp}/casket.tkh#num_shards=4"
    srv = Server(store)
    yield srv
    srv.stop()
    shutil.rmtree(tmp, ignore_errors=True)
