"""Starts a real memstored (and, for the differential tests, a real memcached)
for each test module that asks for one.

No port is guessed. Picking a free port and passing it on is racy (anyone can
take it in between, and connecting to a port nobody listens on can even
connect to itself), so both servers are started on a port the kernel picks
and tell us which:

- memstored gets `-l 127.0.0.1:0` and prints `memstored listening on ADDR`
  as its first stdout line once it accepts connections;
- memcached cannot print its port, but it writes it to the file named by the
  MEMCACHED_PORT_FILENAME environment variable (`TCP INET: PORT`, renamed
  into place once it listens) when started with `-p -1` - the mechanism
  memcached's own test suite uses. We wait for that file, checking that the
  process is still alive, and then ask it `version` to be sure the port is
  served by memcached and not by something else.

When a test fails while a server runs, the report gets a section saying
whether each server is still alive, its exit status otherwise, and the end of
its stderr, so a crash is told apart from a network problem.
"""

import os
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import weakref
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0
LIVE = weakref.WeakSet()


def server_binary() -> str:
    path = os.environ.get("MEMSTORED_BIN") or str(ROOT / "target" / "debug" / "memstored")
    if not os.path.exists(path):
        pytest.fail(f"memstored binary not found at {path}; run `cargo build` first or set MEMSTORED_BIN")
    return path


def as_caller() -> list:
    """`-u root` when the tests run as root (CI does): memstored and memcached
    refuse to run as root without `-u`, and the servers stay the user that
    runs the tests (as anyone else, `-u` changes nothing)."""
    return ["-u", "root"] if os.geteuid() == 0 or os.getuid() == 0 else []


def server_command() -> list:
    """memstored, as the tests start it; the test's own arguments follow."""
    return [server_binary(), *as_caller()]


class Process:
    """A server process with its stderr in a file (a chatty server never
    blocks on a full pipe) and a `diagnose()` for failure reports."""

    def __init__(self, name: str, args, env=None, stdout=subprocess.PIPE, pass_fds=()):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix=f"{name}-")
        self.log_path = os.path.join(self.dir, "stderr.log")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(args, stdout=stdout, stderr=log, env=env, pass_fds=pass_fds)
        self.port = None
        LIVE.add(self)

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def diagnose(self) -> str:
        code = self.proc.poll()
        state = f"is still running (pid {self.proc.pid})" if code is None else f"exited with {code}"
        try:
            tail = Path(self.log_path).read_bytes()[-4096:].decode(errors="replace")
        except OSError:
            tail = "(no stderr log)"
        return f"{self.name} {state}; its stderr ends with:\n{tail}"

    def fail(self, why: str):
        msg = f"{self.name} {why}; {self.diagnose()}"
        self.stop()
        raise RuntimeError(msg)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        LIVE.discard(self)
        shutil.rmtree(self.dir, ignore_errors=True)


class Server(Process):
    """A memstored process on a port it picked and reported."""

    def __init__(self, store: str, *extra: str, listen: str = "127.0.0.1:0"):
        super().__init__("memstored", [*server_command(), "-s", store, "-l", listen, *extra])
        self.store = store
        ready, _, _ = select.select([self.proc.stdout], [], [], START_TIMEOUT)
        line = self.proc.stdout.readline().decode(errors="replace") if ready else ""
        try:
            self.port = int(line.strip().rsplit(":", 1)[1])
        except (IndexError, ValueError):
            self.fail(f"did not report its port (first stdout line {line!r})")


def announced_port(srv: Server, what: str) -> int:
    """The port of `srv` that memstored announces after its main port's line
    as `memstored WHAT listening on ADDR:PORT` (`kt` for --kt-listen, `grpc`
    for --grpc-listen; `memstored listening on` for each `-l` address after
    the first, with WHAT empty). That line may already sit in the pipe reader's buffer
    (so select on the pipe would not see it): it is read on a thread, with a
    time limit."""
    got = []
    reader = threading.Thread(target=lambda: got.append(srv.proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_TIMEOUT)
    line = got[0].decode(errors="replace") if got else ""
    if not line.startswith(" ".join(w for w in ("memstored", what, "listening on ") if w)):
        srv.fail(f"did not report its {what} port (line {line!r})")
    return int(line.strip().rsplit(":", 1)[1])


def read_until_end(sock, end: bytes = b"END\r\n") -> bytes:
    """What `sock` sends up to and including the `end` (memcached's
    `END\\r\\n` by default) that ends a listing."""
    buf = b""
    while not buf.endswith(end):
        chunk = sock.recv(65536)
        assert chunk, "connection closed before END"
        buf += chunk
    return buf


def stats(port: int) -> dict:
    """`stats` on the memcached port at `port`, as a dict of strings."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"stats\r\n")
        buf = read_until_end(s)
    return dict(l.split(" ", 2)[1:] for l in buf.decode().splitlines() if l.startswith("STAT "))


def kt_port(srv: Server) -> int:
    """The `--kt-listen` port of `srv` (`memstored kt listening on ADDR:PORT`)."""
    return announced_port(srv, "kt")


@pytest.fixture(scope="module", params=["memory", "sharded-hash"])
def server(request):
    tmp = tempfile.mkdtemp(prefix="memstored-py-")
    store = "*#capsiz=64m" if request.param == "memory" else f"{tmp}/casket.tkh#num_shards=4"
    srv = Server(store)
    yield srv
    srv.stop()
    shutil.rmtree(tmp, ignore_errors=True)


class Memcached(Process):
    """The real memcached: the reference the differential tests compare
    memstored with. See the module docstring for how its port is found."""

    def __init__(self, *extra: str):
        exe = shutil.which("memcached")
        if exe is None:
            pytest.fail("memcached not installed: apt-get install memcached (.ci/run does)")
        port_dir = tempfile.mkdtemp(prefix="memcached-port-")
        port_file = os.path.join(port_dir, "port")
        args = [exe, "-l", "127.0.0.1", "-p", "-1", "-U", "0", "-m", "64", *extra, *as_caller()]
        env = {**os.environ, "MEMCACHED_PORT_FILENAME": port_file}
        super().__init__("memcached", args, env=env, stdout=subprocess.DEVNULL)
        try:
            self.port = self._wait_port(port_file)
        finally:
            shutil.rmtree(port_dir, ignore_errors=True)
        self._check_is_memcached()

    def _wait_port(self, port_file: str) -> int:
        deadline = time.monotonic() + START_TIMEOUT
        while not os.path.exists(port_file):
            if self.proc.poll() is not None:
                self.fail("exited before listening")
            if time.monotonic() > deadline:
                self.fail("wrote no port file")
            time.sleep(0.01)  # memcached offers nothing to block on
        for line in Path(port_file).read_text().splitlines():
            if line.startswith("TCP INET: "):
                return int(line.split(":", 1)[1])
        self.fail(f"port file without a TCP port: {Path(port_file).read_text()!r}")

    def _check_is_memcached(self):
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
            s.sendall(b"version\r\n")
            reply = s.recv(100)
        if not reply.startswith(b"VERSION 1."):
            self.fail(f"port {self.port} answered {reply!r} to `version`")


@pytest.fixture(scope="module")
def memcached():
    mc = Memcached()
    yield mc
    mc.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Adds each live server's state and stderr to a failed test's report."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for proc in list(LIVE):
            report.sections.append((f"{proc.name} at failure", proc.diagnose()))
