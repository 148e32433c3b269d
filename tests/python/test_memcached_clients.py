"""Real memcached clients against a started memstored: each stores, reads,
increments, CAS-updates and deletes."""

import shutil
import subprocess

import bmemcached
import pytest
from pymemcache.client.base import Client as TextClient


def test_pymemcache_text(server):
    c = TextClient(("127.0.0.1", server.port), default_noreply=False)
    assert c.set("py:text", b"hello", expire=0)
    assert c.get("py:text") == b"hello"
    assert c.add("py:text", b"again") is False
    assert c.set("py:count", b"10")
    assert c.incr("py:count", 5) == 15
    assert c.decr("py:count", 20) == 0, "decr floors at zero"
    value, cas = c.gets("py:text")
    assert value == b"hello"
    assert c.cas("py:text", b"world", cas) is True
    assert c.cas("py:text", b"stale", cas) is False, "an old CAS is refused"
    assert c.get("py:text") == b"world"
    assert c.append("py:text", b"!")
    assert c.get_many(["py:text", "py:count", "py:none"]) == {"py:text": b"world!", "py:count": b"0"}
    assert c.delete("py:text") is True
    assert c.get("py:text") is None
    assert c.delete("py:text") is False
    c.close()


def test_python_binary_memcached(server):
    c = bmemcached.Client([server.addr])
    assert c.set("py:bin", "hello")
    assert c.get("py:bin") == "hello"
    assert c.add("py:bin", "again") is False
    assert c.set("py:bincount", 10)
    assert c.incr("py:bincount", 5) == 15
    assert c.decr("py:bincount", 3) == 12
    value, cas = c.gets("py:bin")
    assert value == "hello"
    assert c.cas("py:bin", "world", cas)
    assert not c.cas("py:bin", "stale", cas), "an old CAS is refused"
    assert c.get("py:bin") == "world"
    assert c.get_multi(["py:bin", "py:none"]) == {"py:bin": "world"}
    assert c.delete("py:bin")
    assert c.get("py:bin") is None
    c.disconnect_all()


@pytest.mark.parametrize("binary", [False, True])
def test_libmemcached_tools(server, tmp_path, binary):
    memccp, memccat = shutil.which("memccp"), shutil.which("memccat")
    if not (memccp and memccat):
        pytest.fail("memccp/memccat missing: install libmemcached-tools (.ci/run does)")
    proto = ["--binary"] if binary else []
    name = f"libmc-{int(binary)}.txt"
    f = tmp_path / name
    f.write_bytes(b"stored by memccp\n" * 100)
    servers = f"--servers={server.addr}"
    subprocess.run([memccp, servers, *proto, str(f)], check=True, timeout=30)
    out = subprocess.run([memccat, servers, *proto, name], check=True, capture_output=True, timeout=30)
    # memccat prints the value and a newline, as it does against memcached.
    assert out.stdout == f.read_bytes() + b"\n"
    missing = subprocess.run([memccat, servers, *proto, "no-such-key"], capture_output=True, timeout=30)
    assert missing.returncode != 0
