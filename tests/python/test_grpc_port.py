"""The gRPC port's own settings (net/grpc_port, app/tkrzw_flags.rs): TLS with
`--auth` (rustls; certificates made here with the `openssl` command), the
--sasl-file rule (every call refused unless TLS verifies client certificates),
tkrzw_server's command line, and the memory budget (`--conn-memory`)."""

import os
import socket
import subprocess
import tempfile

import grpc
import pytest

from conftest import Server, announced_port, server_command, stats
from tls_certs import certs  # noqa: F401  (the fixture)
from test_grpc import pb  # noqa: F401  (the stubs fixture)


def read(d, name):
    with open(os.path.join(d, name), "rb") as f:
        return f.read()


def start(*extra):
    srv = Server("*#capsiz=64m", "--grpc-listen", "127.0.0.1:0", *extra)
    return srv, f"127.0.0.1:{announced_port(srv, 'grpc')}"


def auth(d, root=True):
    flag = f"ssl:key={d}/server.key,cert={d}/server.pem"
    return flag + (f",root={d}/ca.pem" if root else "")


def echo(pb, channel, timeout=10):
    m, stubs = pb
    return stubs.DBMServiceStub(channel).Echo(m.EchoRequest(message="hi"), timeout=timeout).echo


def tls_channel(d, addr, client="client", client_dir=None):
    kw = {}
    if client:
        cd = client_dir or d
        kw = {"private_key": read(cd, f"{client}.key"), "certificate_chain": read(cd, f"{client}.pem")}
    creds = grpc.ssl_channel_credentials(root_certificates=read(d, "ca.pem"), **kw)
    return grpc.secure_channel(addr, creds, options=[("grpc.ssl_target_name_override", "localhost")])


def refused(pb, channel):
    """The status code a call on `channel` fails with."""
    with pytest.raises(grpc.RpcError) as e:
        echo(pb, channel, timeout=5)
    return e.value.code()


def test_mutual_tls(pb, certs):
    srv, addr = start("--auth", auth(certs))
    try:
        with tls_channel(certs, addr) as ch:
            assert echo(pb, ch) == "hi"
        # No client certificate, one from a CA the server does not trust,
        # or no TLS at all: no call gets through.
        with tls_channel(certs, addr, client=None) as ch:
            assert refused(pb, ch) == grpc.StatusCode.UNAVAILABLE
        with tls_channel(certs, addr, client_dir=os.path.join(certs, "other")) as ch:
            assert refused(pb, ch) == grpc.StatusCode.UNAVAILABLE
        with grpc.insecure_channel(addr) as ch:
            assert refused(pb, ch) == grpc.StatusCode.UNAVAILABLE
        # And the port still serves the right client.
        with tls_channel(certs, addr) as ch:
            assert echo(pb, ch) == "hi"
    finally:
        srv.stop()


def test_tls_without_client_certificates(pb, certs):
    srv, addr = start("--auth", auth(certs, root=False))
    try:
        with tls_channel(certs, addr, client=None) as ch:
            assert echo(pb, ch) == "hi"
    finally:
        srv.stop()


def test_bad_auth_files_stop_the_start(certs):
    for flag, says in [
        (f"ssl:key={certs}/missing.key,cert={certs}/server.pem", "missing.key"),
        (f"ssl:key={certs}/ca.pem,cert={certs}/server.pem", "--auth"),
        ("tls:key=a,cert=b", "unknown authentication mode"),
    ]:
        p = subprocess.run([*server_command(), "-l", "127.0.0.1:0", "--grpc-listen", "0", "--auth", flag],
                           capture_output=True, timeout=30)
        assert p.returncode != 0, flag
        assert says in p.stderr.decode(), p.stderr.decode()


def sasl_file():
    f = tempfile.NamedTemporaryFile("w", suffix=".sasl", delete=False)
    f.write("user:secret\n")
    f.close()
    return f.name


def test_sasl_closes_the_port_without_client_certificates(pb, certs):
    path = sasl_file()
    srv, addr = start("--sasl-file", path)
    try:
        with grpc.insecure_channel(addr) as ch:
            with pytest.raises(grpc.RpcError) as e:
                echo(pb, ch)
            assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert "--sasl-file" in e.value.details()
    finally:
        srv.stop()
    # TLS without client certificates is no login either.
    srv, addr = start("--sasl-file", path, "--auth", auth(certs, root=False))
    try:
        with tls_channel(certs, addr, client=None) as ch:
            with pytest.raises(grpc.RpcError) as e:
                echo(pb, ch)
            assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        srv.stop()
    # Client certificates verified stand for the login.
    srv, addr = start("--sasl-file", path, "--auth", auth(certs))
    try:
        with tls_channel(certs, addr) as ch:
            assert echo(pb, ch) == "hi"
    finally:
        srv.stop()
    os.unlink(path)


def test_tkrzw_server_command_line(pb):
    """tkrzw_server's flags: --address is the gRPC port, --read_only the
    store's mode, and the memcached port stays where -l put it."""
    d = tempfile.mkdtemp(prefix="memstored-tkrzw-")
    pid = os.path.join(d, "pid")
    srv = Server(f"{d}/casket.tkh#num_shards=2", "--async", "--threads", "2",
                 "--address", "127.0.0.1:0", "--pid_file", pid, "--log_level", "warn",
                 "--server_id", "3", "--ulog_prefix", f"{d}/ulog", "--ulog_max_file_size", "1m")
    try:
        addr = f"127.0.0.1:{announced_port(srv, 'grpc')}"
        m, stubs = pb
        with grpc.insecure_channel(addr) as ch:
            stub = stubs.DBMServiceStub(ch)
            assert stub.Set(m.SetRequest(key=b"k", value=b"v", overwrite=True), timeout=10).status.code == 0
        with open(pid) as f:
            assert int(f.read()) == srv.proc.pid
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(b"get k\r\n")
            assert s.recv(100).startswith(b"VALUE k")
        # --ulog_prefix is the update log's directory.
        assert any(n.startswith("ulog-") for n in os.listdir(f"{d}/ulog")), os.listdir(d)
    finally:
        srv.stop()
    log = os.path.join(d, "server.log")
    srv = Server(f"{d}/casket.tkh#num_shards=2", "--read_only", "--address", "127.0.0.1:0",
                 "--log_file", log)
    try:
        addr = f"127.0.0.1:{announced_port(srv, 'grpc')}"
        with grpc.insecure_channel(addr) as ch:
            stub = stubs.DBMServiceStub(ch)
            assert stub.Get(m.GetRequest(key=b"k"), timeout=10).value == b"v"
            r = stub.Set(m.SetRequest(key=b"k", value=b"w", overwrite=True), timeout=10)
            assert r.status.code == 4, r  # PRECONDITION_ERROR
    finally:
        srv.stop()
    # --log_file: the log went there, not to stderr.
    with open(log) as f:
        assert "Tkrzw-RPC gRPC port listening on" in f.read()


def test_a_read_only_replica_is_refused_at_start():
    """--repl_master starts a replica (test_grpc_replication.py); one that
    could not apply what it follows does not start."""
    p = subprocess.run([*server_command(), "-l", "127.0.0.1:0", "--address", "127.0.0.1:0",
                        "--read-only", "--repl_master", "localhost:1978"],
                       capture_output=True, timeout=30)
    assert p.returncode != 0
    err = p.stderr.decode()
    assert "--repl_master cannot be combined with --read-only" in err, err


def test_requests_are_charged_to_the_memory_budget(pb):
    """A request larger than --conn-memory is refused RESOURCE_EXHAUSTED,
    counted in conn_buffer_refused; smaller calls are served before and after."""
    m, stubs = pb
    srv, addr = start("--conn-memory", "1m")
    try:
        with grpc.insecure_channel(addr) as ch:
            stub = stubs.DBMServiceStub(ch)
            assert stub.Set(m.SetRequest(key=b"a", value=b"x" * 500_000, overwrite=True), timeout=10).status.code == 0
            assert len(stub.Get(m.GetRequest(key=b"a"), timeout=10).value) == 500_000
            with pytest.raises(grpc.RpcError) as e:
                stub.Set(m.SetRequest(key=b"b", value=b"x" * 2_000_000, overwrite=True), timeout=10)
            assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e.value
            assert "--conn-memory" in e.value.details()
            assert stub.Set(m.SetRequest(key=b"c", value=b"small", overwrite=True), timeout=10).status.code == 0
        assert int(stats(srv.port)["conn_buffer_refused"]) >= 1
    finally:
        srv.stop()
