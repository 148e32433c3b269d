"""Hostile clients on the gRPC port (net/grpc_port), speaking HTTP/2 with
raw sockets: rapid reset, SETTINGS and PING floods, huge headers, endless
streams, a slow reader, more connections than -c, and more than the
server has descriptors for. After each, the server is still running and a well-behaved client is served promptly.

HTTP/2 here is the few bytes RFC 9113 and RFC 7541 define: a frame is a
9-byte header (length, type, flags, stream id) and a payload; header blocks
use HPACK literals without Huffman coding. Every loop is bounded, and
nothing sleeps in place of waiting for a reply."""

import os
import resource
import socket
import struct
import subprocess
import threading
import time

import grpc
import pytest

from conftest import Server, announced_port, server_command, stats
from test_grpc import pb  # noqa: F401  (the stubs fixture)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
CANCEL, REFUSED_STREAM = 0x8, 0x7
# How long a well-behaved call may take while the port is under attack.
PROMPT = 5.0


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def hpack_int(n, prefix, flags=0):
    top = (1 << prefix) - 1
    if n < top:
        return bytes([flags | n])
    out = [flags | top]
    n -= top
    while n >= 128:
        out.append(n % 128 + 128)
        n //= 128
    return bytes(out + [n])


def hpack_str(s):
    return hpack_int(len(s), 7) + s


def literal(name, value):
    """A literal header field, never indexed, with a new name."""
    return b"\x00" + hpack_str(name) + hpack_str(value)


def call_headers(method, extra=b""):
    """A gRPC call's header block: POST, http, its path, the authority."""
    return (b"\x83\x86" + b"\x04" + hpack_str(f"/tkrzw_rpc.DBMService/{method}".encode())
            + b"\x01" + hpack_str(b"localhost")
            + literal(b"content-type", b"application/grpc") + literal(b"te", b"trailers") + extra)


def varint(n):
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def grpc_message(fields):
    """A length-prefixed gRPC message of protobuf `fields` [(number, bytes)]."""
    body = b"".join(bytes([num << 3 | 2]) + varint(len(v)) + v for num, v in fields)
    return b"\x00" + struct.pack(">I", len(body)) + body


class Raw:
    """A raw HTTP/2 client connection: the preface and empty SETTINGS sent."""

    def __init__(self, addr, timeout=10):
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0))
        self.buf = b""

    def send(self, data):
        """Sends `data`; False if the server closed the connection, or it
        stopped reading for the socket's timeout (its answer to a flood)."""
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            return False

    def frames(self, limit=100_000):
        """Frames the server sends, (type, flags, stream, payload), until it
        closes, goes silent for the timeout, or `limit` frames."""
        for _ in range(limit):
            while len(self.buf) < 9 or len(self.buf) < 9 + int.from_bytes(self.buf[:3], "big"):
                try:
                    chunk = self.sock.recv(1 << 16)
                except (socket.timeout, ConnectionResetError):
                    return
                if not chunk:
                    return
                self.buf += chunk
            n = int.from_bytes(self.buf[:3], "big")
            kind, flags = self.buf[3], self.buf[4]
            stream = struct.unpack(">I", self.buf[5:9])[0] & 0x7FFFFFFF
            yield kind, flags, stream, self.buf[9:9 + n]
            self.buf = self.buf[9 + n:]

    def close(self):
        self.sock.close()


@pytest.fixture(scope="module")
def port(pb):
    srv = Server("*#capsiz=256m", "--grpc-listen", "127.0.0.1:0", "-c", "16", "--conn-memory", "16m")
    addr = f"127.0.0.1:{announced_port(srv, 'grpc')}"
    m, stubs = pb
    with grpc.insecure_channel(addr) as channel:
        stub = stubs.DBMServiceStub(channel)
        stub.Set(m.SetRequest(key=b"big", value=os.urandom(1 << 20), overwrite=True), timeout=30)
    yield srv, addr, m, stubs
    srv.stop()


def assert_served(port):
    """The server runs and answers a new client's call within PROMPT."""
    srv, addr, m, stubs = port
    assert srv.proc.poll() is None, srv.diagnose()
    started = time.monotonic()
    with grpc.insecure_channel(addr) as ch:
        stub = stubs.DBMServiceStub(ch)
        assert stub.Echo(m.EchoRequest(message="still here"), timeout=PROMPT).echo == "still here"
    assert time.monotonic() - started < PROMPT


def test_rapid_reset(port):
    """HEADERS then RST_STREAM, over and over (CVE-2023-44487): the server
    closes the connection (GOAWAY) instead of serving reset streams."""
    raw = Raw(port[1], timeout=2)
    for i in range(5000):
        stream = 2 * i + 1
        if not raw.send(frame(HEADERS, END_HEADERS, stream, call_headers("Echo"))
                        + frame(RST_STREAM, 0, stream, struct.pack(">I", CANCEL))):
            break
    goaway = [payload for kind, _, _, payload in raw.frames() if kind == GOAWAY]
    raw.close()
    # ENHANCE_YOUR_CALM (0xb), after hyper's limit of pending resets.
    assert goaway and struct.unpack(">I", goaway[0][4:8])[0] == 0xB, goaway
    assert_served(port)


@pytest.mark.parametrize("kind", ["settings", "ping"])
def test_control_frame_floods(port, kind):
    """SETTINGS or PING frames, 100,000 of them, their ACKs not read while
    they are sent: other clients are served meanwhile and after."""
    raw = Raw(port[1], timeout=2)
    one = frame(SETTINGS, 0, 0) if kind == "settings" else frame(PING, 0, 0, b"12345678")
    batch = one * 1000
    for _ in range(100):
        if not raw.send(batch):
            break
    assert_served(port)
    raw.close()
    assert_served(port)


def test_huge_headers(port):
    """A header list over the port's 16 KiB: the call is refused (the stream
    reset, a 431, or the connection closed), the server carries on."""
    raw = Raw(port[1], timeout=5)
    block = call_headers("Echo", literal(b"x-huge", b"a" * (40 << 10)))
    first, rest = block[:16000], block[16000:]
    raw.send(frame(HEADERS, 0, 1, first))
    while rest:
        piece, rest = rest[:16000], rest[16000:]
        raw.send(frame(CONTINUATION, 0 if rest else END_HEADERS, 1, piece))
    # hyper answers 431 (HEADERS, END_STREAM) and resets the stream.
    answer = next(((kind, stream) for kind, _, stream, _ in raw.frames(limit=100)
                   if stream == 1 or kind == GOAWAY), None)
    raw.close()
    assert answer in ((HEADERS, 1), (RST_STREAM, 1), (GOAWAY, 0)), answer
    assert_served(port)


MAX_STREAMS, OPENED = 1024, 1200


def test_endless_streams(port):
    """Streams opened and never finished, 1200 on one connection: those past
    the port's 1024 are refused (REFUSED_STREAM), the 1024 wait, and other
    clients are served meanwhile."""
    raw = Raw(port[1], timeout=5)
    opened = b"".join(frame(HEADERS, END_HEADERS, 2 * i + 1, call_headers("Echo")) for i in range(OPENED))
    raw.send(opened)
    refused = set()
    for kind, _, stream, payload in raw.frames(limit=40_000):
        if kind == RST_STREAM and struct.unpack(">I", payload)[0] == REFUSED_STREAM:
            refused.add(stream)
        if len(refused) == OPENED - MAX_STREAMS:
            break
    # Exactly the streams past the first MAX_STREAMS.
    assert refused == {2 * i + 1 for i in range(MAX_STREAMS, OPENED)}, sorted(refused)[:5]
    assert_served(port)
    raw.close()
    assert_served(port)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_slow_reader_memory_stays_bounded(port):
    """Four connections each asking 100 times for a 1 MiB value and never
    reading a byte: 400 MiB of replies if the server kept them. Replies
    past --conn-memory (16m) are refused (RESOURCE_EXHAUSTED), so the
    server's memory grows by far less, and other clients are served
    meanwhile."""
    srv = port[0]
    before = rss_kib(srv.proc.pid)
    get = grpc_message([(2, b"big")])
    raws = []
    for _ in range(4):
        raw = Raw(port[1], timeout=5)
        # A receive window that lets the server send everything at once.
        raw.send(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1 << 30)))
        for i in range(100):
            stream = 2 * i + 1
            raw.send(frame(HEADERS, END_HEADERS, stream, call_headers("Get"))
                     + frame(DATA, END_STREAM, stream, get))
        raws.append(raw)
    assert_served(port)
    # All 400 answered: at most 16 replies of 1 MiB fit in --conn-memory
    # (their clients read nothing), every other one refused. A bounded wait.
    deadline = time.monotonic() + 30
    while int(stats(srv.port)["conn_buffer_refused"]) < 400 - 16 and time.monotonic() < deadline:
        assert_served(port)
    assert int(stats(srv.port)["conn_buffer_refused"]) >= 400 - 16
    grown = rss_kib(srv.proc.pid) - before
    assert grown < 100 << 10, f"RSS grew by {grown} KiB"
    for raw in raws:
        raw.close()
    assert_served(port)


def test_more_connections_than_c(port):
    """-c 16: the 17th connection is closed at once; one given back lets
    the next in."""
    # The earlier tests' connections gone (curr_connections counts this
    # stats connection too): a bounded wait.
    deadline = time.monotonic() + 10
    while int(stats(port[0].port)["curr_connections"]) > 1:
        assert time.monotonic() < deadline, "earlier connections still open"
    raws = [Raw(port[1], timeout=5) for _ in range(16)]
    # Each is served: its SETTINGS answered.
    for raw in raws:
        assert any(kind == SETTINGS for kind, *_ in raw.frames(limit=3))
    extra = Raw(port[1], timeout=5)
    assert list(extra.frames(limit=3)) == []  # closed without a frame
    extra.close()
    _, addr, m, stubs = port
    with pytest.raises(grpc.RpcError):
        with grpc.insecure_channel(addr) as ch:
            stubs.DBMServiceStub(ch).Echo(m.EchoRequest(message="x"), timeout=2)
    raws.pop().close()
    served_soon(port)
    for raw in raws:
        raw.close()
    served_soon(port)


def served_soon(port):
    """assert_served, retried for PROMPT: a connection's place under -c is
    given back when the server sees it closed, which may come after the
    next connection arrives."""
    deadline = time.monotonic() + PROMPT
    while True:
        try:
            return assert_served(port)
        except grpc.RpcError:
            if time.monotonic() > deadline:
                raise


def cpu_seconds(pid):
    """User and system CPU time of process `pid`, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_accept_errors_back_off(pb):
    """Every descriptor taken (a server limited to 128), connections waiting
    in the backlog: each accept fails with EMFILE. The loop pauses after a
    failure instead of retrying at once, so the server does not spin a core;
    once connections close, new ones are served."""
    m, stubs = pb
    limit = 128
    proc = subprocess.Popen(
        [*server_command(), "-s", "*#capsiz=16m", "-l", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit)))
    socks = []
    try:
        # Both lines on a thread, with a time limit (see announced_port).
        lines = []
        reader = threading.Thread(
            target=lambda: lines.extend(proc.stdout.readline().decode() for _ in range(2)), daemon=True)
        reader.start()
        reader.join(30)
        assert len(lines) == 2 and lines[1].startswith("memstored grpc listening on "), lines
        addr = lines[1].strip().rsplit(" ", 1)[1]
        host, port = addr.rsplit(":", 1)
        # More connections than descriptors: the last ones wait in the backlog.
        for _ in range(limit + 32):
            socks.append(socket.create_connection((host, int(port)), timeout=10))
        deadline = time.monotonic() + 10
        while len(os.listdir(f"/proc/{proc.pid}/fd")) < limit:
            assert time.monotonic() < deadline, "the server never ran out of descriptors"
        before, started = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(1)  # the interval measured, not a wait for readiness
        used = (cpu_seconds(proc.pid) - before) / (time.monotonic() - started)
        assert used < 0.5, f"the server used {used:.0%} of a core while accept failed"
        for s in socks:
            s.close()
        socks.clear()
        deadline = time.monotonic() + PROMPT
        while True:
            try:
                with grpc.insecure_channel(addr) as ch:
                    got = stubs.DBMServiceStub(ch).Echo(m.EchoRequest(message="back"), timeout=PROMPT)
                assert got.echo == "back"
                break
            except grpc.RpcError:
                assert time.monotonic() < deadline, "not served after the connections closed"
    finally:
        for s in socks:
            s.close()
        proc.terminate()
        proc.wait(timeout=10)
