"""A pool of three memstored nodes behind the scale-out engines memcached
users already run: twemproxy (Debian's nutcracker, ketama) and client-side
consistent hashing (libmemcached's ketama through pylibmc).

Each test sets 10,000 keys through the engine, checks that they spread over
the nodes (every key on exactly one node, no node with less than a sixth),
stops one node and checks that exactly its keys are lost, then restarts it
on its durable store and checks that they all read back (memstored's nodes
come back warm, memcached's come back empty)."""

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pylibmc
import pytest
from pymemcache.client.base import Client

from conftest import START_TIMEOUT, Process, Server

N = 10_000
KEYS = [f"pool:{i:05d}" for i in range(N)]


def value(key: str) -> bytes:
    return f"value of {key}".encode()


class Pool:
    """Three nodes, each on its own .tkh file, that can be stopped and
    restarted on the same port."""

    def __init__(self, tmp: Path):
        self.stores = [f"{tmp}/node{i}.tkh" for i in range(3)]
        self.nodes = [Server(s) for s in self.stores]

    def stop(self, i: int):
        self.nodes[i].stop()

    def restart(self, i: int):
        port = self.nodes[i].port
        self.nodes[i] = Server(self.stores[i], listen=f"127.0.0.1:{port}")

    def keys_on_each(self) -> list:
        """The pool's keys each node holds, read from the node directly."""
        held = []
        for node in self.nodes:
            c = Client(("127.0.0.1", node.port))
            found = set()
            for at in range(0, N, 500):
                found.update(k.decode() if isinstance(k, bytes) else k for k in c.get_many(KEYS[at : at + 500]))
            c.close()
            held.append(found)
        return held

    def close(self):
        for n in self.nodes:
            n.stop()


@pytest.fixture
def pool(tmp_path):
    p = Pool(tmp_path)
    yield p
    p.close()


def check_spread(pool: Pool) -> list:
    held = pool.keys_on_each()
    assert sum(len(h) for h in held) == N, "every key on exactly one node"
    assert set().union(*held) == set(KEYS)
    for i, h in enumerate(held):
        assert len(h) > N / 6, f"node {i} holds only {len(h)} of {N} keys: ketama should spread them"
    return held


def readable(get) -> set:
    """The keys that read back with their value through `get`; a key whose
    node is down may raise or miss, depending on the engine."""
    ok = set()
    for k in KEYS:
        try:
            if get(k) == value(k):
                ok.add(k)
        except Exception:
            pass
    return ok


class Twemproxy(Process):
    """nutcracker with ketama over the pool, listening on a Unix socket in
    its own directory (twemproxy takes no port 0, and a socket path needs no
    port at all), its stats on another."""

    def __init__(self, ports):
        exe = shutil.which("nutcracker")
        if exe is None:
            pytest.fail("nutcracker not installed: apt-get install nutcracker (.ci/run does)")
        self.conf_dir = tempfile.mkdtemp(prefix="nutcracker-conf-")
        self.socket = os.path.join(self.conf_dir, "proxy.sock")
        conf = os.path.join(self.conf_dir, "nutcracker.yml")
        servers = "\n".join(f"    - 127.0.0.1:{p}:1 node{i}" for i, p in enumerate(ports))
        Path(conf).write_text(
            "pool:\n"
            f"  listen: {self.socket} 0600\n"
            "  hash: fnv1a_64\n"
            "  distribution: ketama\n"
            "  timeout: 2000\n"
            "  auto_eject_hosts: false\n"
            "  servers:\n"
            f"{servers}\n"
        )
        stats = os.path.join(self.conf_dir, "stats.sock")
        super().__init__("nutcracker", [exe, "-c", conf, "-a", stats, "-s", "1"], stdout=subprocess.DEVNULL)
        self._wait_listening()

    def stop(self):
        super().stop()
        shutil.rmtree(self.conf_dir, ignore_errors=True)

    def _wait_listening(self):
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                self.fail("exited before listening")
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(self.socket)
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.fail("never listened")
            time.sleep(0.01)  # nutcracker offers nothing to block on


def test_twemproxy_ketama_pool(pool):
    proxy = Twemproxy([n.port for n in pool.nodes])
    try:
        c = Client(proxy.socket, connect_timeout=5, timeout=5)
        for k in KEYS:
            assert c.set(k, value(k), noreply=False), k
        held = check_spread(pool)
        assert readable(c.get) == set(KEYS)

        pool.stop(1)
        c.close()
        assert readable(c.get) == held[0] | held[2], "only the stopped node's share is lost"

        pool.restart(1)
        c.close()
        assert readable(c.get) == set(KEYS), "the restarted node comes back with its share"
        c.close()
    finally:
        proxy.stop()


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_libmemcached_ketama_pool(pool, binary):
    def client():
        return pylibmc.Client(
            [n.addr for n in pool.nodes],
            binary=binary,
            behaviors={"ketama": True, "connect_timeout": 2000},
        )

    c = client()
    for k in KEYS:
        assert c.set(k, value(k)), k
    held = check_spread(pool)
    assert readable(c.get) == set(KEYS)

    pool.stop(2)
    assert readable(client().get) == held[0] | held[1], "only the stopped node's share is lost"

    pool.restart(2)
    assert readable(client().get) == set(KEYS), "the restarted node comes back with its share"
