"""`--unix-socket PATH` with `-a MASK`, side by side with memcached's
`-s PATH -a MASK`: the same replies over the socket, the same file mode,
`stats settings` naming the socket, and no TCP port unless asked for."""

import os
import re
import select
import shutil
import socket
import stat
import subprocess
import tempfile
import time

import pytest
from pymemcache.client.base import Client

from conftest import START_TIMEOUT, Process, as_caller, server_command
from test_memcached_differential import exchange

REQUESTS = [
    b"set a 0 0 1\r\n1\r\n", b"get a\r\n", b"gets a b\r\n", b"incr a 41\r\n",
    b"append a 0 0 2\r\nxy\r\n", b"delete a\r\n", b"delete a\r\n",
    b"ms m 2 T0\r\nhi\r\n", b"mg m v\r\n", b"bogus\r\n",
]


def session(path: str) -> list:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(path)
        out = [exchange(s, r) for r in REQUESTS]
        settings = exchange(s, b"stats settings\r\n")
        out.append(re.findall(rb"STAT (?:domain_socket|umask) \S+", settings))
        out.append(stat.S_IMODE(os.stat(path).st_mode))
    client = Client(path, timeout=10)
    client.set("py", "value")
    out.append(client.get("py"))
    client.close()
    return out


def tcp_listening(pid: int) -> list:
    """The TCP ports process `pid` listens on, from /proc."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:
                    ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


class UnixMemstored(Process):
    def __init__(self, path: str, *extra: str):
        super().__init__("memstored", [*server_command(), "--unix-socket", path, "-a", "770", *extra])
        ready, _, _ = select.select([self.proc.stdout], [], [], START_TIMEOUT)
        self.line = self.proc.stdout.readline().decode() if ready else ""
        if not self.line.startswith("memstored listening on "):
            self.fail(f"did not announce itself (first stdout line {self.line!r})")


class UnixMemcached(Process):
    def __init__(self, path: str):
        exe = shutil.which("memcached")
        if exe is None:
            pytest.fail("memcached not installed: apt-get install memcached (.ci/run does)")
        args = [exe, "-s", path, "-a", "770", *as_caller()]
        super().__init__("memcached", args, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while not os.path.exists(path):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.fail("made no socket")
            time.sleep(0.01)  # memcached offers nothing to block on


def test_unix_socket_like_memcached():
    d = tempfile.mkdtemp(prefix="unix-socket-")
    mc_path, ms_path = f"{d}/memcached.sock", f"{d}/memstored.sock"
    mc, ms = UnixMemcached(mc_path), UnixMemstored(ms_path)
    try:
        want, got = session(mc_path), session(ms_path)
        assert want[-3][0] == f"STAT domain_socket {mc_path}".encode()
        got[-3][0] = got[-3][0].replace(ms_path.encode(), mc_path.encode())
        assert want[-2] == 0o770
        assert got == want
        assert ms.line.strip() == f"memstored listening on unix:{ms_path}"
        assert tcp_listening(mc.proc.pid) == []
        assert tcp_listening(ms.proc.pid) == []
    finally:
        mc.stop()
        ms.stop()
        shutil.rmtree(d, ignore_errors=True)
    assert not os.path.exists(ms_path), "memstored removes its socket at exit"


def test_unix_socket_beside_a_tcp_port():
    """With `-l` (or `-p`) the TCP port stays: both serve the same store."""
    d = tempfile.mkdtemp(prefix="unix-socket-")
    path = f"{d}/s.sock"
    ms = UnixMemstored(path, "-l", "127.0.0.1:0")
    try:
        port = int(ms.line.strip().rsplit(":", 1)[1])
        assert tcp_listening(ms.proc.pid) == [port]
        assert Client(("127.0.0.1", port), timeout=10).set("k", "over tcp", noreply=False)
        assert Client(path, timeout=10).get("k") == b"over tcp"
    finally:
        ms.stop()
        shutil.rmtree(d, ignore_errors=True)
