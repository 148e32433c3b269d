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


def wait_listening(server, name: str):
    """Waits until `server.proc` accepts connections on `server.port`; stops
    it and raises if it exits or does not listen within 10 s."""
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", server.port), timeout=0.2).close()
            return
        except OSError:
            if server.proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {server.proc.returncode}")
            time.sleep(0.05)
    server.stop()
    raise RuntimeError(f"{name} did not start listening")


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
        wait_listening(self, "memstored")

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


class Memcached:
    """The real memcached on a free loopback port: the reference the
    differential tests compare memstored with."""

    def __init__(self):
        exe = shutil.which("memcached")
        if exe is None:
            pytest.fail("memcached not installed: apt-get install memcached (.ci/run does)")
        self.port = free_port()
        args = [exe, "-l", "127.0.0.1", "-p", str(self.port), "-U", "0", "-m", "64"]
        if os.geteuid() == 0:
            args += ["-u", "root"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(self, "memcached")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def memcached():
    mc = Memcached()
    yield mc
    mc.stop()
