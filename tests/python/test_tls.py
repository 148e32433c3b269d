"""memcached's TLS on the memcached port (`-Z`, `-o ssl_*`; net/tls/), with
real TLS clients: pymemcache over Python's ssl module and `openssl s_client`.
Client certificates (ssl_verify_mode 1 and 2), a certificate from a CA the
server does not trust, a plaintext client on the TLS port (refused, nothing
of the cache sent), a client that never finishes its handshake (dropped
after --tls-handshake-timeout, no other client stalled), `refresh_certs`,
the session cache and the `ssl_*` stats."""

import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time

import pytest
from pymemcache.client.base import Client

from conftest import Server, announced_port, server_command
from tls_certs import certs, issue, openssl  # noqa: F401  (certs: the fixture)

STORE = "*#capsiz=64m"


def tls_flags(d, *options):
    opts = [f"ssl_chain_cert={d}/server.pem", f"ssl_key={d}/server.key", *options]
    return ["-Z", "-o", ",".join(opts)]


def context(d, cert=None, key=None, version=None):
    """A client context that trusts the test CA, with a client certificate
    when `cert` is given."""
    ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.pem"))
    if cert:
        ctx.load_cert_chain(cert, key)
    if version:
        ctx.minimum_version = ctx.maximum_version = version
    return ctx


def connect(port, ctx, session=None):
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    return ctx.wrap_socket(raw, server_hostname="127.0.0.1", session=session)


def exchange(sock, request: bytes, end: bytes = b"END\r\n") -> bytes:
    sock.sendall(request)
    buf = b""
    while not buf.endswith(end):
        chunk = sock.recv(65536)
        assert chunk, f"closed before {end!r}: {buf!r}"
        buf += chunk
    return buf


def tls_stats(port, ctx, group=b""):
    with connect(port, ctx) as s:
        reply = exchange(s, b"stats " + group + b"\r\n")
    return dict(l.split(" ", 2)[1:] for l in reply.decode().splitlines() if l.startswith("STAT "))


def refused(port, ctx):
    """True when the server ends the TLS session without serving a
    request: a failed handshake, or (TLS 1.3, where the client finishes
    first) an alert or a close in place of the reply."""
    try:
        with connect(port, ctx) as s:
            s.sendall(b"version\r\n")
            return s.recv(100) == b""
    except (ssl.SSLError, ConnectionError):
        return True


def wait_for(what, check, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def server(certs):
    srv = Server(STORE, *tls_flags(certs))
    yield srv
    srv.stop()


def test_pymemcache_over_tls(server, certs):
    client = Client(("127.0.0.1", server.port), tls_context=context(certs), timeout=10)
    client.set("greeting", b"hello over tls")
    assert client.get("greeting") == b"hello over tls"
    # Larger than a TLS record (16 KiB) and than the output buffer: the
    # value crosses many records both ways.
    big = os.urandom(3 << 20)
    client.set("big", big)
    assert client.get("big") == big
    keys = {f"k{i}": str(i).encode() * 50 for i in range(200)}
    client.set_many(keys)
    assert client.get_many(list(keys)) == keys
    client.close()
    settings = tls_stats(server.port, context(certs), b"settings")
    assert settings["ssl_enabled"] == "yes"
    assert settings["ssl_chain_cert"] == f"{certs}/server.pem"
    assert settings["ssl_verify_mode"] == "0"
    assert settings["ssl_min_version"] == "tlsv1.2"


def test_openssl_s_client(server, certs):
    request = b"set s 0 0 5\r\nhello\r\nget s\r\nquit\r\n"
    p = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{server.port}", "-quiet",
                        "-CAfile", os.path.join(certs, "ca.pem"), "-verify_return_error"],
                       input=request, capture_output=True, timeout=30)
    assert b"STORED\r\nVALUE s 0 5\r\nhello\r\nEND\r\n" in p.stdout, p.stderr


def test_plaintext_client_is_refused_and_gets_nothing(server, certs):
    ctx = context(certs)
    Client(("127.0.0.1", server.port), tls_context=ctx, timeout=10).set("secret", b"do not leak")
    before = int(tls_stats(server.port, ctx)["ssl_handshake_errors"])
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"get secret\r\nstats\r\n")
        got = b""
        try:
            while chunk := s.recv(4096):
                got += chunk
        except ConnectionResetError:
            pass
    # At most a TLS alert record (content type 21), never a reply.
    assert got == b"" or got[0] == 0x15, got
    for word in (b"do not leak", b"VALUE", b"END", b"STAT", b"ERROR"):
        assert word not in got
    after = int(tls_stats(server.port, ctx)["ssl_handshake_errors"])
    assert after == before + 1


def test_client_certificates_required(certs):
    srv = Server(STORE, *tls_flags(certs, "ssl_verify_mode=2", f"ssl_ca_cert={certs}/ca.pem"))
    try:
        port = srv.port
        good = context(certs, f"{certs}/client.pem", f"{certs}/client.key")
        client = Client(("127.0.0.1", port), tls_context=good, timeout=10)
        client.set("k", b"v")
        assert client.get("k") == b"v"
        assert tls_stats(port, good, b"settings")["ssl_verify_mode"] == "3"
        # openssl s_client with the client certificate.
        p = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-quiet",
                            "-CAfile", f"{certs}/ca.pem", "-cert", f"{certs}/client.pem",
                            "-key", f"{certs}/client.key"],
                           input=b"get k\r\nquit\r\n", capture_output=True, timeout=30)
        assert b"VALUE k 0 1\r\nv\r\nEND\r\n" in p.stdout, p.stderr
        before = int(tls_stats(port, good)["ssl_handshake_errors"])
        # No certificate, and one from a CA the server does not trust.
        assert refused(port, context(certs))
        stranger = context(certs, f"{certs}/other/client.pem", f"{certs}/other/client.key")
        assert refused(port, stranger)
        # Over TLS 1.2 too, where the server refuses within the handshake.
        assert refused(port, context(certs, version=ssl.TLSVersion.TLSv1_2))
        wait_for("the refusals counted",
                 lambda: int(tls_stats(port, good)["ssl_handshake_errors"]) == before + 3)
    finally:
        srv.stop()


def test_client_certificates_requested(certs):
    srv = Server(STORE, *tls_flags(certs, "ssl_verify_mode=1", f"ssl_ca_cert={certs}/ca.pem"))
    try:
        # Optional: none is fine, a good one is fine, a bad one is refused.
        for ctx in (context(certs), context(certs, f"{certs}/client.pem", f"{certs}/client.key")):
            assert Client(("127.0.0.1", srv.port), tls_context=ctx, timeout=10).version()
        stranger = context(certs, f"{certs}/other/client.pem", f"{certs}/other/client.key")
        assert refused(srv.port, stranger)
    finally:
        srv.stop()


def test_half_open_handshake_times_out_and_stalls_nobody(certs):
    srv = Server(STORE, "--tls-handshake-timeout", "0.5", *tls_flags(certs))
    try:
        ctx = context(certs)
        silent = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        # A client that sends half a ClientHello and stops.
        half = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        half.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
        client = Client(("127.0.0.1", srv.port), tls_context=ctx, timeout=5)
        client.set("k", b"served meanwhile")
        assert client.get("k") == b"served meanwhile"
        started = time.monotonic()
        assert silent.recv(100) == b""
        rest = half.recv(100)
        assert rest == b"" or rest[0] == 0x15, rest
        assert time.monotonic() - started < 5
        wait_for("the timeouts counted",
                 lambda: int(tls_stats(srv.port, ctx)["ssl_handshake_errors"]) >= 2)
    finally:
        srv.stop()


def test_refresh_certs(certs):
    d = tempfile.mkdtemp(prefix="memstored-refresh-")
    for f in ("server.pem", "server.key"):
        shutil.copy(os.path.join(certs, f), d)
    # A second server certificate from the same CA, with its own name.
    for f in ("ca.pem", "ca.key"):
        shutil.copy(os.path.join(certs, f), d)
    issue(d, "renewed", "serverAuth")
    srv = Server(STORE, "-Z", "-o", f"ssl_chain_cert={d}/server.pem,ssl_key={d}/server.key")
    try:
        ctx = context(certs)

        def subject(sock):
            return dict(x[0] for x in sock.getpeercert()["subject"])["commonName"]

        old = connect(srv.port, ctx)
        assert subject(old) == "server"
        shutil.copy(os.path.join(d, "renewed.pem"), os.path.join(d, "server.pem"))
        shutil.copy(os.path.join(d, "renewed.key"), os.path.join(d, "server.key"))
        assert exchange(old, b"refresh_certs\r\n", b"\r\n") == b"OK\r\n"
        with connect(srv.port, ctx) as new:
            assert subject(new) == "renewed"
            assert int(exchange(new, b"stats\r\n").split(b"time_since_server_cert_refresh ")[1]
                       .split(b"\r\n")[0]) <= 1
        # The connection made before keeps its session.
        assert exchange(old, b"version\r\n", b"\r\n").startswith(b"VERSION ")
        # A file that does not load: memcached's error line, the old
        # certificate kept.
        with open(os.path.join(d, "server.pem"), "w") as f:
            f.write("not a certificate\n")
        reply = exchange(old, b"refresh_certs\r\n", b"\r\n")
        assert reply.startswith(b"Error loading the certificate chain: "), reply
        with connect(srv.port, ctx) as new:
            assert subject(new) == "renewed"
        old.close()
    finally:
        srv.stop()


def test_session_cache(certs):
    tls12 = context(certs, version=ssl.TLSVersion.TLSv1_2)
    srv = Server(STORE, *tls_flags(certs))
    try:
        assert "ssl_new_sessions" not in tls_stats(srv.port, tls12)
        first = connect(srv.port, tls12)
        session = first.session
        first.close()
        with connect(srv.port, tls12, session=session) as again:
            assert not again.session_reused
    finally:
        srv.stop()
    srv = Server(STORE, *tls_flags(certs, "ssl_session_cache"))
    try:
        first = connect(srv.port, tls12)
        exchange(first, b"version\r\n", b"\r\n")
        session = first.session
        first.close()
        sessions = int(tls_stats(srv.port, tls12)["ssl_new_sessions"])
        assert sessions >= 1
        with connect(srv.port, tls12, session=session) as again:
            assert again.session_reused
            stats = exchange(again, b"stats\r\n")
        # The stats connection's handshake made one (counted above); the
        # resumed one none.
        assert b"STAT ssl_new_sessions %d\r\n" % sessions in stats
    finally:
        srv.stop()


def test_min_version_tls13(certs):
    srv = Server(STORE, *tls_flags(certs, "ssl_min_version=3"))
    try:
        assert refused(srv.port, context(certs, version=ssl.TLSVersion.TLSv1_2))
        assert Client(("127.0.0.1", srv.port), tls_context=context(certs), timeout=10).version()
    finally:
        srv.stop()


def test_unix_socket_stays_plaintext(certs):
    path = os.path.join(tempfile.mkdtemp(prefix="memstored-tls-unix-"), "mc.sock")
    srv = Server(STORE, "--unix-socket", path, *tls_flags(certs))
    try:
        wait_for("the unix socket", lambda: os.path.exists(path))
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(path)
            assert exchange(s, b"version\r\n", b"\r\n").startswith(b"VERSION ")
    finally:
        srv.stop()


@pytest.mark.parametrize("with_ca", [True, False])
def test_listeners_with_tls_prefixes(certs, with_ca):
    """memcached's t/ssl_ports.t: under -Z, `-l notls:A,B,mtls:C` serves
    one cache in plaintext on A, over TLS on B, and over TLS with a client
    certificate required on C (without -o ssl_ca_cert no certificate is
    trusted there, as with memcached's OpenSSL)."""
    ca = [f"ssl_ca_cert={certs}/ca.pem"] if with_ca else []
    srv = Server(STORE, *tls_flags(certs, *ca),
                 listen="notls:127.0.0.1:0,127.0.0.1:0,mtls:127.0.0.1:0")
    try:
        plain = srv.port
        tls_port = announced_port(srv, "")
        mtls_port = announced_port(srv, "")
        assert len({plain, tls_port, mtls_port}) == 3
        Client(("127.0.0.1", tls_port), tls_context=context(certs), timeout=10).set(
            "foo:123", b"foo set over SSL")
        assert Client(("127.0.0.1", plain), timeout=10).get("foo:123") == b"foo set over SSL"
        # The plaintext listener really is one: a TLS greeting is no command.
        with socket.create_connection(("127.0.0.1", plain), timeout=10) as s:
            assert exchange(s, b"version\r\n", b"\r\n").startswith(b"VERSION ")
        good = context(certs, f"{certs}/client.pem", f"{certs}/client.key")
        assert refused(mtls_port, context(certs))
        if with_ca:
            got = Client(("127.0.0.1", mtls_port), tls_context=good, timeout=10).get("foo:123")
            assert got == b"foo set over SSL"
        else:
            assert refused(mtls_port, good)
        # The plain TLS listener asks for no certificate (ssl_verify_mode 0).
        assert Client(("127.0.0.1", tls_port), tls_context=context(certs), timeout=10).version()
    finally:
        srv.stop()


def test_btls_listener_asks_no_certificate(certs):
    srv = Server(STORE, *tls_flags(certs, "ssl_verify_mode=2", f"ssl_ca_cert={certs}/ca.pem"),
                 listen="127.0.0.1:0,btls:127.0.0.1:0")
    try:
        btls_port = announced_port(srv, "")
        assert refused(srv.port, context(certs))
        assert Client(("127.0.0.1", btls_port), tls_context=context(certs), timeout=10).version()
    finally:
        srv.stop()


def test_tls_prefixes_need_tls():
    p = subprocess.run([*server_command(), "-l", "notls:127.0.0.1:0,127.0.0.1:0"],
                       capture_output=True, timeout=30)
    assert p.returncode != 0
    assert b"valid only when SSL is enabled" in p.stderr, p.stderr


@pytest.mark.parametrize("options, why", [
    ([], "-Z needs -o ssl_chain_cert"),
    (["-o", "ssl_chain_cert=/nonexistent/server.pem"], "Error loading the certificate chain"),
    (["-o", "ssl_min_version=0"], "TLS 1.2 and 1.3 only"),
    (["-o", "ssl_kernel_tls"], "kernel TLS"),
    (["-o", "ssl_chain_cert={d}/server.pem,ssl_key={d}/server.key,ssl_ciphers=DHE-RSA-AES128-SHA"],
     "Error setting the provided cipher(s)"),
    (["-o", "ssl_chain_cert={d}/server.pem,ssl_key={d}/ca.key"], "Error validating the certificate"),
])
def test_what_cannot_be_honoured_stops_the_start(certs, options, why):
    options = [o.format(d=certs) for o in options]
    p = subprocess.run([*server_command(), "-l", "127.0.0.1:0", "-Z", *options],
                       capture_output=True, timeout=30)
    assert p.returncode != 0
    assert why in p.stderr.decode(), p.stderr


def test_verify_mode_without_ca_stops_the_start(certs):
    p = subprocess.run([*server_command(), "-l", "127.0.0.1:0", *tls_flags(certs, "ssl_verify_mode=2")],
                       capture_output=True, timeout=30)
    assert p.returncode != 0
    assert b"ssl_ca_cert" in p.stderr
