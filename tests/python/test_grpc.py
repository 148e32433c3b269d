"""Tkrzw-RPC's gRPC service (`--grpc-listen`) with grpcio, through stubs
generated at test time from the project's own crates/server/proto/tkrzw_rpc.proto
(grpcio-tools, no protoc), against a started memstored serving two databases:
a file-backed sharded hash (dbm_index 0) and an in-memory tree (1). Each
served call is made, its Tkrzw status checked, and what it did compared with
what MessagePack-RPC sees on the same records (and the other way round),
the streams Stream and Iterate included (Replicate and ChangeMaster:
test_grpc_replication.py). docs/tkrzw-rpc.md lists what is served."""

import importlib
import os
import shutil
import socket
import sys
import tempfile
import time

import grpc
import msgpack
import pytest
from grpc_tools import protoc

from conftest import ROOT, Server, announced_port

PROTO_DIR = ROOT / "crates" / "server" / "proto"

# tkrzw::Status::Code.
SUCCESS, NOT_IMPLEMENTED, PRECONDITION, INVALID_ARGUMENT = 0, 3, 4, 5
NOT_FOUND, PERMISSION, INFEASIBLE, DUPLICATION = 7, 8, 9, 10


@pytest.fixture(scope="module")
def pb():
    """(messages, stubs) generated from our .proto into a temporary folder."""
    out = tempfile.mkdtemp(prefix="memstored-grpc-stubs-")
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main([
        "grpc_tools.protoc", f"-I{PROTO_DIR}", f"-I{include}",
        f"--python_out={out}", f"--grpc_python_out={out}", str(PROTO_DIR / "tkrzw_rpc.proto"),
    ])
    assert rc == 0, "grpc_tools.protoc failed on tkrzw_rpc.proto"
    sys.path.insert(0, out)
    try:
        yield importlib.import_module("tkrzw_rpc_pb2"), importlib.import_module("tkrzw_rpc_pb2_grpc")
    finally:
        sys.path.remove(out)
        shutil.rmtree(out, ignore_errors=True)


def start(*extra, tmp=None):
    """memstored with two databases and a gRPC port: (server, gRPC address)."""
    tmp = tmp or tempfile.mkdtemp(prefix="memstored-grpc-")
    srv = Server(f"{tmp}/casket.tkh#num_shards=4", "-s", "+", "--grpc-listen", "127.0.0.1:0", *extra)
    return srv, f"127.0.0.1:{announced_port(srv, 'grpc')}"


@pytest.fixture(scope="module")
def served(pb):
    srv, addr = start()
    channel = grpc.insecure_channel(addr)
    grpc.channel_ready_future(channel).result(timeout=30)
    yield srv, pb[0], pb[1].DBMServiceStub(channel)
    channel.close()
    srv.stop()


class Rpc:
    """MessagePack-RPC on the main port, with the `msgpack` package."""

    def __init__(self, addr):
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        self.msgid = 0

    def call(self, method, *params, db=None):
        """(error code or None, result); `db` is the `DB` option."""
        params = list(params) + ([{"DB": db}] if db is not None else [])
        self.msgid += 1
        self.sock.sendall(msgpack.packb([0, self.msgid, method, params], use_bin_type=True))
        while True:
            for msg in self.unpacker:
                assert msg[1] == self.msgid, msg
                err = msg[2]
                return (err[0] if isinstance(err, list) else err), msg[3]
            data = self.sock.recv(1 << 16)
            assert data, "the server closed the connection"
            self.unpacker.feed(data)

    def value(self, key, db=None):
        """The record's value, or None when absent."""
        err, result = self.call("get", key, db=db)
        if err == 35:
            return None
        assert err is None, err
        return result["value"]


@pytest.fixture(scope="module")
def rpc(served):
    r = Rpc(served[0].addr)
    yield r
    r.sock.close()


def code(response):
    return response.status.code


@pytest.mark.parametrize("db", [0, 1])
def test_set_get_remove_agree_with_msgpack_rpc(served, rpc, db):
    _, m, stub = served
    assert code(stub.Set(m.SetRequest(dbm_index=db, key=b"k1", value=b"v1", overwrite=True))) == SUCCESS
    assert rpc.value(b"k1", db=db) == b"v1"
    # Without overwrite an existing record is DUPLICATION_ERROR (msgpack `add`: 33).
    r = stub.Set(m.SetRequest(dbm_index=db, key=b"k1", value=b"other"))
    assert code(r) == DUPLICATION, r
    assert rpc.call("add", b"k1", b"other", db=db)[0] == 33
    assert rpc.value(b"k1", db=db) == b"v1"
    # What MessagePack-RPC stored, gRPC reads.
    assert rpc.call("set", b"k2", b"\x00binary\xff", db=db)[0] is None
    got = stub.Get(m.GetRequest(dbm_index=db, key=b"k2"))
    assert (code(got), got.value) == (SUCCESS, b"\x00binary\xff")
    got = stub.Get(m.GetRequest(dbm_index=db, key=b"k2", omit_value=True))
    assert (code(got), got.value) == (SUCCESS, b"")
    missing = stub.Get(m.GetRequest(dbm_index=db, key=b"nope"))
    assert code(missing) == NOT_FOUND and missing.value == b""
    assert code(stub.Remove(m.RemoveRequest(dbm_index=db, key=b"k2"))) == SUCCESS
    assert rpc.value(b"k2", db=db) is None
    assert code(stub.Remove(m.RemoveRequest(dbm_index=db, key=b"k2"))) == NOT_FOUND
    assert rpc.call("remove", b"k2", db=db)[0] == 35


def test_databases_are_apart(served, rpc):
    _, m, stub = served
    stub.Set(m.SetRequest(dbm_index=0, key=b"where", value=b"zero", overwrite=True))
    stub.Set(m.SetRequest(dbm_index=1, key=b"where", value=b"one", overwrite=True))
    assert rpc.value(b"where") == b"zero"
    assert rpc.value(b"where", db=1) == b"one"
    for bad in (2, -1):
        with pytest.raises(grpc.RpcError) as e:
            stub.Get(m.GetRequest(dbm_index=bad, key=b"where"))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "dbm_index is out of range" in e.value.details()


def test_multi_calls(served, rpc):
    _, m, stub = served
    recs = [m.BytesPair(first=b"m%d" % i, second=b"value%d" % i) for i in (3, 1, 2)]
    assert code(stub.SetMulti(m.SetMultiRequest(dbm_index=1, records=recs, overwrite=True))) == SUCCESS
    for i in (1, 2, 3):
        assert rpc.value(b"m%d" % i, db=1) == b"value%d" % i
    # Sorted by key and each once, as tkrzw_server answers; a missing key
    # makes the status NOT_FOUND_ERROR while the found ones come back.
    got = stub.GetMulti(m.GetMultiRequest(dbm_index=1, keys=[b"m3", b"none", b"m1", b"m3"]))
    assert code(got) == NOT_FOUND
    assert [(r.first, r.second) for r in got.records] == [(b"m1", b"value1"), (b"m3", b"value3")]
    err, bulk = rpc.call("get_bulk", {b"_m1": b"", b"_m3": b"", b"_none": b"", "DB": 1})
    assert err is None
    assert {k: v for k, v in bulk.items() if k != "num"} == {b"_m1": b"value1", b"_m3": b"value3"}
    got = stub.GetMulti(m.GetMultiRequest(dbm_index=1, keys=[b"m2"]))
    assert code(got) == SUCCESS and [r.second for r in got.records] == [b"value2"]
    # Without overwrite: existing records are DUPLICATION_ERROR, the others stored.
    more = [m.BytesPair(first=b"m1", second=b"x"), m.BytesPair(first=b"m4", second=b"value4")]
    assert code(stub.SetMulti(m.SetMultiRequest(dbm_index=1, records=more))) == DUPLICATION
    assert rpc.value(b"m1", db=1) == b"value1"
    assert rpc.value(b"m4", db=1) == b"value4"
    # RemoveMulti goes on past absent keys and says NOT_FOUND_ERROR.
    r = stub.RemoveMulti(m.RemoveMultiRequest(dbm_index=1, keys=[b"m1", b"none", b"m2"]))
    assert code(r) == NOT_FOUND
    assert [rpc.value(b"m%d" % i, db=1) for i in (1, 2, 3)] == [None, None, b"value3"]
    assert code(stub.RemoveMulti(m.RemoveMultiRequest(dbm_index=1, keys=[b"m3", b"m4"]))) == SUCCESS


def test_append(served, rpc):
    _, m, stub = served
    assert code(stub.Append(m.AppendRequest(key=b"ap", value=b"a", delim=b","))) == SUCCESS
    assert code(stub.Append(m.AppendRequest(key=b"ap", value=b"b", delim=b","))) == SUCCESS
    assert rpc.value(b"ap") == b"a,b"
    # MessagePack-RPC's append (Kyoto Tycoon's) has no delimiter.
    assert rpc.call("append", b"ap", b"c")[0] is None
    assert stub.Get(m.GetRequest(key=b"ap")).value == b"a,bc"
    recs = [m.BytesPair(first=b"ap", second=b"d"), m.BytesPair(first=b"ap2", second=b"e")]
    assert code(stub.AppendMulti(m.AppendMultiRequest(records=recs, delim=b"|"))) == SUCCESS
    assert (rpc.value(b"ap"), rpc.value(b"ap2")) == (b"a,bc|d", b"e")


def be(n):
    """Tkrzw's counter value: 8 big-endian bytes."""
    return n.to_bytes(8, "big", signed=True)


def test_increment_is_tkrzws_eight_bytes(served, rpc):
    _, m, stub = served
    rpc.call("remove", b"n")
    r = stub.Increment(m.IncrementRequest(key=b"n", increment=5, initial=100))
    assert (code(r), r.current) == (SUCCESS, 105)
    # Stored as Tkrzw stores it, as MessagePack-RPC reads it.
    assert rpc.value(b"n") == be(105)
    r = stub.Increment(m.IncrementRequest(key=b"n", increment=-200))
    assert (code(r), r.current) == (SUCCESS, -95)
    assert rpc.value(b"n") == be(-95)
    # INT64MIN reads without changing anything or making a record.
    r = stub.Increment(m.IncrementRequest(key=b"n", increment=-(1 << 63)))
    assert (code(r), r.current) == (SUCCESS, -95)
    r = stub.Increment(m.IncrementRequest(key=b"none", increment=-(1 << 63), initial=3))
    assert (code(r), r.current) == (SUCCESS, 3)
    assert rpc.value(b"none") is None
    # A value of another size counts as its first (up to 8) bytes, big-endian.
    assert rpc.call("set", b"text", b"abc")[0] is None
    r = stub.Increment(m.IncrementRequest(key=b"text", increment=1))
    assert (code(r), r.current) == (SUCCESS, 0x616263 + 1)
    assert rpc.value(b"text") == be(0x616264)
    # MessagePack-RPC's increment (Kyoto Tycoon's) keeps decimal text, and
    # refuses Tkrzw's binary counter as not a number (38).
    assert rpc.call("increment", b"dec", 10)[0] is None
    assert rpc.value(b"dec") == b"10"
    assert rpc.call("increment", b"n", 1)[0] == 38


def test_compare_exchange(served, rpc):
    _, m, stub = served
    stub.Remove(m.RemoveRequest(key=b"cx"))
    ce = m.CompareExchangeRequest
    # Absent expected, a value desired: stored.
    r = stub.CompareExchange(ce(key=b"cx", desired_existence=True, desired_value=b"one"))
    assert code(r) == SUCCESS
    assert rpc.value(b"cx") == b"one"
    # A wrong expectation: INFEASIBLE_ERROR, nothing changed (msgpack `cas`: 37).
    r = stub.CompareExchange(ce(key=b"cx", expected_existence=True, expected_value=b"two",
                                desired_existence=True, desired_value=b"three"))
    assert code(r) == INFEASIBLE
    assert rpc.call("cas", b"cx", {"oval": b"two", "nval": b"three"})[0] == 37
    assert rpc.value(b"cx") == b"one"
    # The right one, nothing desired: removed.
    r = stub.CompareExchange(ce(key=b"cx", expected_existence=True, expected_value=b"one"))
    assert code(r) == SUCCESS
    assert rpc.value(b"cx") is None
    # Any value: an absent record fails it, a present one of any value meets it.
    r = stub.CompareExchange(ce(key=b"cx", expected_existence=True, expect_any_value=True,
                                desired_existence=True, desired_value=b"x", get_actual=True))
    assert (code(r), r.found, r.actual) == (INFEASIBLE, False, b"")
    rpc.call("set", b"cx", b"msgpack")
    r = stub.CompareExchange(ce(key=b"cx", expected_existence=True, expect_any_value=True,
                                desired_existence=True, desired_value=b"x", get_actual=True))
    assert (code(r), r.found, r.actual) == (SUCCESS, True, b"msgpack")
    assert rpc.value(b"cx") == b"x"
    # No update: a read that says what is there (found without get_actual).
    r = stub.CompareExchange(ce(key=b"cx", expected_existence=True, expected_value=b"x",
                                desire_no_update=True, desired_existence=True, desired_value=b"y"))
    assert (code(r), r.found, r.actual) == (SUCCESS, True, b"")
    assert rpc.value(b"cx") == b"x"


def test_compare_exchange_waits_for_a_notify(served, rpc):
    _, m, stub = served
    ce = m.CompareExchangeRequest
    rpc.call("set", b"lock", b"held")
    waiting = ce(key=b"lock", expected_existence=True, expected_value=b"free",
                 desired_existence=True, desired_value=b"mine", retry_wait=20)
    future = stub.CompareExchange.future(waiting)
    time.sleep(0.3)
    assert not future.done()
    # A plain write wakes nobody; a CompareExchange with notify does.
    release = ce(key=b"lock", expected_existence=True, expected_value=b"held",
                 desired_existence=True, desired_value=b"free", notify=True)
    started = time.monotonic()
    assert code(stub.CompareExchange(release)) == SUCCESS
    assert code(future.result(timeout=10)) == SUCCESS
    assert time.monotonic() - started < 4, "woken by the notify, not the 5 s retry"
    assert rpc.value(b"lock") == b"mine"
    r = stub.CompareExchange(ce(key=b"lock", expected_existence=True, expected_value=b"free",
                                desired_existence=True, desired_value=b"x", retry_wait=0.2))
    assert code(r) == INFEASIBLE


def test_compare_exchange_multi(served, rpc):
    _, m, stub = served
    rs = m.RecordState
    rpc.call("set", b"cm1", b"a")
    rpc.call("remove", b"cm2")
    cem = m.CompareExchangeMultiRequest
    # An expectation that fails: nothing changes (msgpack's compare_exchange_multi: 37).
    wrong = cem(expected=[rs(existence=True, key=b"cm1", value=b"x")],
                desired=[rs(existence=True, key=b"cm2", value=b"b")])
    assert code(stub.CompareExchangeMulti(wrong)) == INFEASIBLE
    assert rpc.call("compare_exchange_multi", [[b"cm1", b"x"]], [[b"cm2", b"b"]])[0] == 37
    assert rpc.value(b"cm2") is None
    # One that holds: cm1 removed and cm2 stored together.
    right = cem(expected=[rs(existence=True, key=b"cm1", value=b"a"), rs(key=b"cm2")],
                desired=[rs(key=b"cm1"), rs(existence=True, key=b"cm2", value=b"b")])
    assert code(stub.CompareExchangeMulti(right)) == SUCCESS
    assert (rpc.value(b"cm1"), rpc.value(b"cm2")) == (None, b"b")
    anyv = cem(expected=[rs(existence=True, key=b"cm2", any_value=True)],
               desired=[rs(existence=True, key=b"cm3", value=b"c")])
    assert code(stub.CompareExchangeMulti(anyv)) == SUCCESS
    assert rpc.value(b"cm3") == b"c"
    anyv = cem(expected=[rs(existence=True, key=b"cm1", any_value=True)])
    assert code(stub.CompareExchangeMulti(anyv)) == INFEASIBLE


def test_rekey_agrees_with_msgpack_rpc(served, rpc):
    _, m, stub = served
    for db in (0, 1):
        rpc.call("set", b"rk-old", b"v", db=db)
        rpc.call("remove", b"rk-new", db=db)
        rq = lambda old, new, **kw: m.RekeyRequest(dbm_index=db, old_key=old, new_key=new, **kw)
        assert code(stub.Rekey(rq(b"rk-old", b"rk-new"))) == SUCCESS
        assert (rpc.value(b"rk-old", db=db), rpc.value(b"rk-new", db=db)) == (None, b"v")
        assert code(stub.Rekey(rq(b"rk-old", b"rk-new", overwrite=True))) == NOT_FOUND
        assert code(stub.Rekey(rq(b"rk-new", b"rk-old", copying=True))) == SUCCESS
        assert (rpc.value(b"rk-old", db=db), rpc.value(b"rk-new", db=db)) == (b"v", b"v")
        rpc.call("set", b"rk-old", b"w", db=db)
        assert code(stub.Rekey(rq(b"rk-old", b"rk-new"))) == DUPLICATION
        assert code(stub.Rekey(rq(b"rk-old", b"rk-new", overwrite=True))) == SUCCESS
        assert (rpc.value(b"rk-old", db=db), rpc.value(b"rk-new", db=db)) == (None, b"w")


def test_push_last_and_pop_first(served, rpc):
    _, m, stub = served
    assert code(stub.Clear(m.ClearRequest(dbm_index=1))) == SUCCESS
    for value, wtime in [(b"one", 2.0), (b"two", 2.0), (b"zero", 1.0)]:
        r = stub.PushLast(m.PushLastRequest(dbm_index=1, value=value, wtime=wtime))
        assert code(r) == SUCCESS
    # Keys: the time times 10^8 (plus a sequence number), 8 big-endian bytes.
    assert rpc.value(be(200_000_000), db=1) == b"one"
    assert rpc.value(be(200_000_001), db=1) == b"two"
    got = [stub.PopFirst(m.PopFirstRequest(dbm_index=1)) for _ in range(3)]
    assert [(code(r), r.key, r.value) for r in got] == [
        (SUCCESS, be(100_000_000), b"zero"), (SUCCESS, be(200_000_000), b"one"),
        (SUCCESS, be(200_000_001), b"two")]
    assert rpc.call("count", db=1) == (None, 0)
    assert code(stub.PopFirst(m.PopFirstRequest(dbm_index=1))) == NOT_FOUND
    # The system clock's key, near now.
    before = time.time()
    assert code(stub.PushLast(m.PushLastRequest(dbm_index=1, value=b"now", wtime=-1))) == SUCCESS
    r = stub.PopFirst(m.PopFirstRequest(dbm_index=1, omit_value=True))
    assert code(r) == SUCCESS and r.value == b""
    assert abs(int.from_bytes(r.key, "big") / 1e8 - before) < 60
    # A waiting PopFirst is woken by a PushLast with notify.
    future = stub.PopFirst.future(m.PopFirstRequest(dbm_index=1, retry_wait=20))
    time.sleep(0.3)
    assert not future.done()
    started = time.monotonic()
    assert code(stub.PushLast(m.PushLastRequest(dbm_index=1, value=b"late", notify=True))) == SUCCESS
    r = future.result(timeout=10)
    assert (code(r), r.value) == (SUCCESS, b"late")
    assert time.monotonic() - started < 4
    r = stub.PopFirst(m.PopFirstRequest(dbm_index=1, retry_wait=0.2))
    assert code(r) == NOT_FOUND


def listed_pairs(listed):
    """MessagePack-RPC's `list` records as (key, value) bytes (text comes as str)."""
    as_bytes = lambda x: x.encode() if isinstance(x, str) else x
    return [(as_bytes(k), as_bytes(v)) for k, v in listed]


def iterate(stub, m, ops):
    """[(code, key, value)] of the Iterate calls `ops`, on one stream."""
    return [(code(r), r.key, r.value) for r in stub.Iterate(iter(ops))]


def test_iterate_walks_as_msgpack_lists(served, rpc):
    _, m, stub = served
    I = m.IterateRequest
    assert code(stub.Clear(m.ClearRequest(dbm_index=1))) == SUCCESS
    for k in (b"a", b"b", b"c", b"d"):
        rpc.call("set", k, k.upper(), db=1)
    got = iterate(stub, m, [
        I(dbm_index=1, operation=I.OP_JUMP_LOWER, key=b"c", jump_inclusive=True),
        I(dbm_index=1, operation=I.OP_GET), I(dbm_index=1, operation=I.OP_NEXT),
        I(dbm_index=1, operation=I.OP_STEP), I(dbm_index=1, operation=I.OP_GET),
        I(dbm_index=1, operation=I.OP_LAST), I(dbm_index=1, operation=I.OP_PREVIOUS),
        I(dbm_index=1, operation=I.OP_SET, value=b"new"),
        I(dbm_index=1, operation=I.OP_REMOVE), I(dbm_index=1, operation=I.OP_GET, omit_key=True),
        I(dbm_index=1, operation=I.OP_FIRST), I(dbm_index=1, operation=I.OP_JUMP, key=b"bb"),
        I(dbm_index=1, operation=I.OP_GET, omit_value=True),
        I(dbm_index=1, operation=I.OP_JUMP_UPPER, key=b"a"), I(dbm_index=1, operation=I.OP_GET),
    ])
    ok = (SUCCESS, b"", b"")
    assert got == [ok, (SUCCESS, b"c", b"C"), ok, (SUCCESS, b"d", b"D"), (NOT_FOUND, b"", b""),
                   ok, ok, ok, ok, (SUCCESS, b"", b"D"), ok, ok, (SUCCESS, b"d", b""),
                   ok, (SUCCESS, b"b", b"B")]
    assert (rpc.value(b"c", db=1), rpc.value(b"d", db=1)) == (None, b"D")
    # A walk with Step sees what MessagePack-RPC's list sees.
    steps = iterate(stub, m, [I(dbm_index=1, operation=I.OP_FIRST)]
                    + [I(dbm_index=1, operation=I.OP_STEP)] * 4)
    err, listed = rpc.call("list", db=1)
    assert err is None
    assert [(k, v) for c, k, v in steps[1:] if c == SUCCESS] == listed_pairs(listed)
    assert steps[-1][0] == NOT_FOUND
    # The hash database (sharded: Tkrzw's ShardDBM) has no order: its hash
    # iterators refuse these, and a refused move leaves the iterator on nothing.
    rpc.call("set", b"h", b"H")
    for op in (I.OP_LAST, I.OP_JUMP_LOWER, I.OP_JUMP_UPPER):
        got = iterate(stub, m, [I(dbm_index=0, operation=I.OP_JUMP, key=b"h"),
                                I(dbm_index=0, operation=op, key=b"h"), I(dbm_index=0, operation=I.OP_GET)])
        assert got == [ok, (NOT_IMPLEMENTED, b"", b""), (NOT_FOUND, b"", b"")], op
    got = iterate(stub, m, [I(dbm_index=0, operation=I.OP_PREVIOUS), I(dbm_index=0, operation=I.OP_JUMP, key=b"h"),
                            I(dbm_index=0, operation=I.OP_GET), I(dbm_index=0, operation=I.OP_PREVIOUS),
                            I(dbm_index=0, operation=I.OP_GET)])
    assert got == [(NOT_FOUND, b"", b""), ok, (SUCCESS, b"h", b"H"), (NOT_IMPLEMENTED, b"", b""),
                   (NOT_FOUND, b"", b"")]
    # A jump to an absent key succeeds on nothing (ShardDBM's answer).
    got = iterate(stub, m, [I(dbm_index=0, operation=I.OP_JUMP, key=b"absent"), I(dbm_index=0, operation=I.OP_GET)])
    assert got == [ok, (NOT_FOUND, b"", b"")]
    # OP_NONE answers no status; another dbm_index makes a new iterator.
    got = list(stub.Iterate(iter([I(dbm_index=1, operation=I.OP_FIRST), I(dbm_index=1),
                                  I(dbm_index=0, operation=I.OP_GET)])))
    assert not got[1].HasField("status")
    assert code(got[2]) == NOT_FOUND
    # An out-of-range dbm_index ends the stream.
    with pytest.raises(grpc.RpcError) as e:
        list(stub.Iterate(iter([I(dbm_index=1, operation=I.OP_FIRST), I(dbm_index=7)])))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "dbm_index is out of range" in e.value.details()


def test_iterate_jump_lower_on_a_sharded_tree(pb):
    """`tkrzw_dbm_remote_util list --move jumplowerinc --jump_key K --items N`:
    JumpLower inclusive, then Get and Next, in key order across shards."""
    m, stubs = pb
    tmp = tempfile.mkdtemp(prefix="memstored-grpc-")
    srv = Server(f"{tmp}/casket.tkt#num_shards=10", "--grpc-listen", "127.0.0.1:0")
    addr = f"127.0.0.1:{announced_port(srv, 'grpc')}"
    rpc = Rpc(srv.addr)
    try:
        with grpc.insecure_channel(addr) as channel:
            stub = stubs.DBMServiceStub(channel)
            recs = [m.BytesPair(first=b"%08d" % i, second=b"v%d" % i) for i in range(0, 300, 3)]
            assert code(stub.SetMulti(m.SetMultiRequest(records=recs, overwrite=True))) == SUCCESS
            I = m.IterateRequest
            ops = [I(operation=I.OP_JUMP_LOWER, key=b"00000100", jump_inclusive=True)]
            for _ in range(20):
                ops += [I(operation=I.OP_GET), I(operation=I.OP_NEXT)]
            got = iterate(stub, m, ops)
            walked = [(k, v) for c, k, v in got[1::2]]
            assert [c for c, _, _ in got] == [SUCCESS] * len(got)
            err, listed = rpc.call("list", {"move": "jumplowerinc", "jump_key": b"00000100", "items": 20})
            assert err is None, listed
            assert walked == listed_pairs(listed)
            assert walked[0] == (b"00000099", b"v99") and walked[-1][0] == b"%08d" % 156
    finally:
        rpc.sock.close()
        srv.stop()


def test_search_agrees_with_msgpack_rpc(served, rpc):
    _, m, stub = served
    for k in (b"sa1", b"sa2", b"sb1", b"xsa"):
        stub.Set(m.SetRequest(dbm_index=1, key=k, value=b"v", overwrite=True))
    for mode, pattern, capacity in [("begin", b"sa", 0), ("contain", b"sa", 0), ("end", b"1", 0),
                                    ("regex", b"^s.1$", 0), ("begin", b"s", 2), ("upper", b"sb", 0)]:
        got = stub.Search(m.SearchRequest(dbm_index=1, mode=mode, pattern=pattern, capacity=capacity))
        assert code(got) == SUCCESS, (mode, got)
        err, want = rpc.call("search", mode, pattern, capacity, db=1)
        assert err is None, (mode, err)
        assert sorted(got.matched) == sorted(want), (mode, pattern)
        assert got.matched, (mode, pattern)
    assert sorted(stub.Search(m.SearchRequest(dbm_index=1, mode="begin", pattern=b"sa")).matched) == [b"sa1", b"sa2"]
    bad = stub.Search(m.SearchRequest(dbm_index=1, mode="nope", pattern=b"a"))
    assert code(bad) == INVALID_ARGUMENT
    # upper/lower need an ordered database: NOT_IMPLEMENTED_ERROR on the hash one.
    hashed = stub.Search(m.SearchRequest(dbm_index=0, mode="upper", pattern=b"a"))
    assert code(hashed) == NOT_IMPLEMENTED, hashed
    huge = stub.Search(m.SearchRequest(dbm_index=1, mode="begin", pattern=b"a" * 5000))
    assert code(huge) == INVALID_ARGUMENT, huge


def test_stream_answers_each_call_in_order(served, rpc):
    _, m, stub = served
    S = m.StreamRequest
    calls = [
        S(echo_request=m.EchoRequest(message="hi")),
        S(set_request=m.SetRequest(dbm_index=1, key=b"st", value=b"1", overwrite=True)),
        S(append_request=m.AppendRequest(dbm_index=1, key=b"st", value=b"2", delim=b"-")),
        S(get_request=m.GetRequest(dbm_index=1, key=b"st")),
        S(set_request=m.SetRequest(dbm_index=1, key=b"st", value=b"x")),
        S(increment_request=m.IncrementRequest(dbm_index=1, key=b"stn", increment=3), omit_response=True),
        S(increment_request=m.IncrementRequest(dbm_index=1, key=b"stn", increment=4)),
        S(compare_exchange_request=m.CompareExchangeRequest(
            dbm_index=1, key=b"st", expected_existence=True, expected_value=b"1-2")),
        S(remove_request=m.RemoveRequest(dbm_index=1, key=b"st")),
        S(get_request=m.GetRequest(dbm_index=1, key=b"st")),
    ]
    got = list(stub.Stream(iter(calls)))
    assert len(got) == len(calls) - 1, got  # one omitted
    assert got[0].echo_response.echo == "hi"
    assert code(got[1].set_response) == SUCCESS
    assert code(got[2].append_response) == SUCCESS
    assert got[3].get_response.value == b"1-2"
    assert code(got[4].set_response) == DUPLICATION
    assert got[5].increment_response.current == 7
    assert code(got[6].compare_exchange_response) == SUCCESS
    assert code(got[7].remove_response) == NOT_FOUND
    assert code(got[8].get_response) == NOT_FOUND
    assert rpc.value(b"st", db=1) is None
    assert rpc.value(b"stn", db=1) == be(7)
    # A call the unary method refuses ends the stream with that error.
    with pytest.raises(grpc.RpcError) as e:
        list(stub.Stream(iter([S(echo_request=m.EchoRequest(message="a")),
                               S(get_request=m.GetRequest(dbm_index=9, key=b"k"))])))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_count_file_size_inspect(served, rpc):
    srv, m, stub = served
    for db in (0, 1):
        err, status = rpc.call("status", db=db)
        assert err is None
        got = stub.Count(m.CountRequest(dbm_index=db))
        assert (code(got), got.count) == (SUCCESS, int(status["count"]))
        size = stub.GetFileSize(m.GetFileSizeRequest(dbm_index=db))
        assert (code(size), size.file_size) == (SUCCESS, int(status["size"]))
        inspected = dict((p.first, p.second) for p in stub.Inspect(m.InspectRequest(dbm_index=db)).records)
        assert inspected["num_records"] == status["count"], inspected
    server = dict((p.first, p.second) for p in stub.Inspect(m.InspectRequest(dbm_index=-1)).records)
    assert server["num_dbms"] == "2"
    assert server["dbm_0_path"].endswith("casket.tkh"), server
    assert server["version"].startswith("memstored "), server
    assert code(stub.ShouldBeRebuilt(m.ShouldBeRebuiltRequest(dbm_index=0))) == SUCCESS


def test_echo_synchronize_clear(served, rpc):
    _, m, stub = served
    r = stub.Echo(m.EchoRequest(message="hello, tkrzw"))
    assert (code(r), r.echo) == (SUCCESS, "hello, tkrzw")
    stub.Set(m.SetRequest(dbm_index=0, key=b"kept", value=b"1", overwrite=True))
    for hard in (False, True):
        assert code(stub.Synchronize(m.SynchronizeRequest(dbm_index=0, hard=hard))) == SUCCESS
    assert code(stub.Rebuild(m.RebuildRequest(dbm_index=0))) == SUCCESS
    stub.Set(m.SetRequest(dbm_index=1, key=b"gone", value=b"1", overwrite=True))
    assert code(stub.Clear(m.ClearRequest(dbm_index=1))) == SUCCESS
    assert rpc.call("count", db=1) == (None, 0)
    assert rpc.value(b"kept") == b"1"


def test_read_only_and_item_limit(pb):
    m, stubs = pb
    tmp = tempfile.mkdtemp(prefix="memstored-grpc-")
    srv, addr = start("-I", "2k", tmp=tmp)
    try:
        with grpc.insecure_channel(addr) as channel:
            stub = stubs.DBMServiceStub(channel)
            r = stub.Set(m.SetRequest(key=b"big", value=b"x" * 4096, overwrite=True))
            assert code(r) == INFEASIBLE and "limit" in r.status.message, r
            big = m.RecordState(existence=True, key=b"big", value=b"x" * 4096)
            r = stub.CompareExchangeMulti(m.CompareExchangeMultiRequest(desired=[big]))
            assert code(r) == INFEASIBLE, r
            r = stub.Append(m.AppendRequest(key=b"big", value=b"x" * 1500))
            assert code(r) == SUCCESS
            r = stub.Append(m.AppendRequest(key=b"big", value=b"x" * 1500))
            assert code(r) == INFEASIBLE, r
            # A request past the port's message limit is refused whole.
            with pytest.raises(grpc.RpcError) as e:
                stub.Set(m.SetRequest(key=b"huge", value=b"x" * (70 << 20)))
            assert e.value.code() in (grpc.StatusCode.OUT_OF_RANGE, grpc.StatusCode.RESOURCE_EXHAUSTED)
    finally:
        srv.stop()
    srv, addr = start("--read-only", tmp=tmp)
    try:
        with grpc.insecure_channel(addr) as channel:
            stub = stubs.DBMServiceStub(channel)
            assert stub.Get(m.GetRequest(key=b"big")).value == b"x" * 1500
            for r in [
                stub.Set(m.SetRequest(key=b"k", value=b"v", overwrite=True)),
                stub.Remove(m.RemoveRequest(key=b"k")),
                stub.Increment(m.IncrementRequest(key=b"n", increment=1)),
                stub.Clear(m.ClearRequest()),
                stub.Rekey(m.RekeyRequest(old_key=b"big", new_key=b"b2")),
                stub.PopFirst(m.PopFirstRequest()),
                stub.PushLast(m.PushLastRequest(value=b"v")),
                stub.CompareExchange(m.CompareExchangeRequest(key=b"k", desired_existence=True)),
            ]:
                assert code(r) == PRECONDITION, r
            assert stub.Count(m.CountRequest()).count == 1
            r = stub.Synchronize(m.SynchronizeRequest(params=[m.StringPair(first="make_backup")]))
            assert code(r) == PRECONDITION, r
    finally:
        srv.stop()


def test_the_port_has_its_own_connection_limit(pb):
    m, stubs = pb
    srv, addr = start("-c", "2")
    # Each channel its own connection (grpcio shares them between channels otherwise).
    opts = [("grpc.use_local_subchannel_pool", 1)]
    chans = []
    try:
        for _ in range(2):
            chans.append(grpc.insecure_channel(addr, options=opts))
            r = stubs.DBMServiceStub(chans[-1]).Echo(m.EchoRequest(message="in"), timeout=10)
            assert r.echo == "in"
        # The third is closed unanswered; the memcached port's -c is not spent by it.
        chans.append(grpc.insecure_channel(addr, options=opts))
        with pytest.raises(grpc.RpcError) as e:
            stubs.DBMServiceStub(chans[-1]).Echo(m.EchoRequest(message="out"), timeout=3)
        assert e.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(b"version\r\n")
            assert s.recv(100).startswith(b"VERSION ")
        # A connection closed gives its place back.
        chans.pop().close()
        chans.pop(0).close()
        chans.append(grpc.insecure_channel(addr, options=opts))
        r = stubs.DBMServiceStub(chans[-1]).Echo(m.EchoRequest(message="again"), timeout=10,
                                                   wait_for_ready=True)
        assert r.echo == "again"
    finally:
        for ch in chans:
            ch.close()
        srv.stop()
