"""Replication over Tkrzw-RPC's gRPC: Replicate (the master's update log as a
server stream), `--repl_master` (a replica following a master's gRPC port,
as tkrzw_server's replicas do) and ChangeMaster (promotion), between two
started memstoreds. The same procedure with tkrzw_server on either side is
run by hand (docs/operations.md, "Moving from Tkrzw-RPC"): CI has no
tkrzw_server."""

import tempfile
import time

import grpc
import pytest

from test_grpc import pb, start  # noqa: F401  (pb is a fixture)

SUCCESS, INFEASIBLE = 0, 9
OP_NOOP, OP_SET, OP_REMOVE, OP_CLEAR = 0, 1, 2, 3


def stub(pb, addr):
    channel = grpc.insecure_channel(addr)
    grpc.channel_ready_future(channel).result(timeout=30)
    return pb[1].DBMServiceStub(channel)


def eventually(check, what, timeout=30.0):
    """Polls `check` until it is true (replication is asynchronous); fails
    with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def value(pb, s, key, dbm_index=0):
    r = s.Get(pb[0].GetRequest(key=key, dbm_index=dbm_index))
    return r.value if r.status.code == SUCCESS else None


def test_replicate_streams_the_log_as_tkrzw_server_does(pb):
    m, _ = pb
    tmp = tempfile.mkdtemp(prefix="memstored-grpc-repl-")
    srv, addr = start("--ulog-dir", f"{tmp}/ulog", "--server-id", "7", tmp=tmp)
    try:
        s = stub(pb, addr)
        before_ms = int(time.time() * 1000)
        assert s.Set(m.SetRequest(key=b"a", value=b"1", overwrite=True)).status.code == SUCCESS
        assert s.Set(m.SetRequest(key=b"b", value=b"2", overwrite=True, dbm_index=1)).status.code == SUCCESS
        assert s.Remove(m.RemoveRequest(key=b"a")).status.code == SUCCESS
        stream = s.Replicate(m.ReplicateRequest(min_timestamp=0, server_id=99, wait_time=0.2))
        head = next(stream)
        assert (head.op_type, head.server_id) == (OP_NOOP, 7)
        got = [next(stream) for _ in range(3)]
        assert [(r.op_type, r.dbm_index, r.key, r.value, r.server_id) for r in got] == [
            (OP_SET, 0, b"a", b"1", 7), (OP_SET, 1, b"b", b"2", 7), (OP_REMOVE, 0, b"a", b"", 7)]
        assert all(r.status.code == SUCCESS for r in got)
        assert all(before_ms - 1000 <= r.timestamp <= time.time() * 1000 + 1000 for r in got), got
        # Nothing more within wait_time: INFEASIBLE_ERROR with the position.
        beat = next(stream)
        assert beat.status.code == INFEASIBLE and beat.timestamp >= got[-1].timestamp, beat
        # A change made now arrives on the open stream.
        assert s.Set(m.SetRequest(key=b"c", value=b"3", overwrite=True)).status.code == SUCCESS
        later = next(r for r in stream if r.status.code == SUCCESS)
        assert (later.op_type, later.key, later.value) == (OP_SET, b"c", b"3")
        stream.cancel()
        # From a timestamp: the older changes are not sent again.
        fresh = s.Replicate(m.ReplicateRequest(min_timestamp=later.timestamp, server_id=99, wait_time=0.2))
        next(fresh)
        first = next(fresh)
        assert (first.key, first.status.code) == (b"c", SUCCESS)
        fresh.cancel()
        # The master's own id is refused, as tkrzw_server refuses it.
        with pytest.raises(grpc.RpcError) as e:
            next(s.Replicate(m.ReplicateRequest(min_timestamp=0, server_id=7, wait_time=0.2)))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert e.value.details() == "self server ID"
    finally:
        srv.stop()


def test_replicate_without_an_update_log_is_refused(pb, served):
    _, m, s = served
    with pytest.raises(grpc.RpcError) as e:
        next(s.Replicate(m.ReplicateRequest(min_timestamp=0, server_id=3)))
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert e.value.details() == "disabled update logging"


@pytest.fixture(scope="module")
def served(pb):
    srv, addr = start()
    yield srv, pb[0], stub(pb, addr)
    srv.stop()


def master_and_replica_args():
    """A master (server id 1, with an update log) started, and the arguments
    and folder of a replica (id 2) following it: (master, its address,
    replica arguments, replica folder, the replica's position file)."""
    mtmp = tempfile.mkdtemp(prefix="memstored-grpc-master-")
    rtmp = tempfile.mkdtemp(prefix="memstored-grpc-replica-")
    master, maddr = start("--ulog-dir", f"{mtmp}/ulog", "--server-id", "1", tmp=mtmp)
    ts_file = f"{rtmp}/replica.rts"
    args = ("--server-id", "2", "--repl_master", maddr, "--repl_ts_file", ts_file, "--repl_wait", "0.2")
    return master, maddr, args, rtmp, ts_file


def test_a_repl_master_replica_follows_then_is_promoted(pb):
    m, _ = pb
    master, maddr, args, rtmp, ts_file = master_and_replica_args()
    replica, raddr = start(*args, tmp=rtmp)
    try:
        ms, rs = stub(pb, maddr), stub(pb, raddr)
        for i in range(50):
            ms.Set(m.SetRequest(key=b"k%02d" % i, value=b"v%d" % i, overwrite=True))
        ms.Set(m.SetRequest(key=b"tree", value=b"t", overwrite=True, dbm_index=1))
        ms.Remove(m.RemoveRequest(key=b"k00"))
        eventually(lambda: value(pb, rs, b"k49") == b"v49" and value(pb, rs, b"tree", 1) == b"t",
                   "the replica to have the master's records")
        assert value(pb, rs, b"k00") is None
        assert value(pb, rs, b"k10") == b"v10"
        # Tkrzw's replicas take client writes: so does this one.
        assert rs.Set(m.SetRequest(key=b"local", value=b"x", overwrite=True)).status.code == SUCCESS
        # The position reaches the file, in Tkrzw's milliseconds.
        eventually(lambda: open(ts_file).read().strip().lstrip("0") != "", "the position to be saved")
        saved_ms = int(open(ts_file).read())
        assert abs(saved_ms - time.time() * 1000) < 120_000, saved_ms
        # Promotion: follow nobody; the master's later changes stay there.
        assert rs.ChangeMaster(m.ChangeMasterRequest(master="")).status.code == SUCCESS
        ms.Set(m.SetRequest(key=b"after", value=b"promotion", overwrite=True))
        ms.Set(m.SetRequest(key=b"k10", value=b"changed", overwrite=True))
        # A marker the replica must not see: the master's stream is gone.
        marker_deadline = time.monotonic() + 1.0
        while time.monotonic() < marker_deadline:
            assert value(pb, rs, b"after") is None
            time.sleep(0.05)
        assert value(pb, rs, b"k10") == b"v10"
        # And back: ChangeMaster to the master again resumes from the position.
        assert rs.ChangeMaster(m.ChangeMasterRequest(master=maddr, timestamp_skew=-1000)).status.code == SUCCESS
        eventually(lambda: value(pb, rs, b"after") == b"promotion", "the replica to resume")
        assert value(pb, rs, b"k10") == b"changed"
    finally:
        replica.stop()
        master.stop()


def test_a_replica_resumes_from_its_ts_file_after_a_restart(pb):
    m, _ = pb
    master, maddr, args, rtmp, ts_file = master_and_replica_args()
    try:
        ms = stub(pb, maddr)
        ms.Set(m.SetRequest(key=b"one", value=b"1", overwrite=True))
        replica, raddr = start(*args, tmp=rtmp)
        rs = stub(pb, raddr)
        eventually(lambda: value(pb, rs, b"one") == b"1", "the first record")
        # A record the master never sent: kept only if the replica resumes
        # from its position instead of replaying (and re-clearing) from 0.
        ms.Clear(m.ClearRequest())
        ms.Set(m.SetRequest(key=b"two", value=b"2", overwrite=True))
        eventually(lambda: value(pb, rs, b"two") == b"2" and value(pb, rs, b"one") is None,
                   "the clear and the second record")
        eventually(lambda: int(open(ts_file).read() or 0) > 0, "the position to be saved")
        replica.stop()
        ms.Set(m.SetRequest(key=b"three", value=b"3", overwrite=True))
        replica, raddr = start(*args, tmp=rtmp)
        rs = stub(pb, raddr)
        eventually(lambda: value(pb, rs, b"three") == b"3", "the change made while it was down")
        assert value(pb, rs, b"two") == b"2"
        replica.stop()
    finally:
        master.stop()
