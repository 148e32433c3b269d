"""A kt-msgpack client of that era against memstored.

kt-msgpack's users called Kyoto Tycoon through msgpack-rpc-python, whose
msgpack packed every string as raw (no bin type existed), decoded replies as
UTF-8 text, and raised `RPCError(error)` with the server's error object as
its first argument (kt-msgpack's bare integer code). msgpack-rpc-python itself
no longer installs on a current Python (it needs tornado < 5 and msgpack's
removed `encoding` argument), so `OldClient` below does the same with today's
`msgpack` package over a socket: packb(use_bin_type=False) writes str as raw,
unpackb(raw=False) reads raw as str.

Each test follows one procedure of kt-msgpack's README with the argument and
result shapes its test suite expects. kt-msgpack's suite runs against three
databases (`casket2.kct` is its second); memstored serves one, so the `DB`
option names it by file name or index 0, and any other name is 34.
"""

import socket
import time

import msgpack
import pytest

from conftest import Server

REQUEST, RESPONSE = 0, 1
ARGUMENT, NO_DATABASE, NO_RECORD, EXISTS = 2, 34, 35, 33
CAS_FAILED, NOT_COMPATIBLE, POSTPROCESSING, NOT_IMPLEMENTED = 37, 38, 40, 42
DB_NAME = "casket.tkt"


class RPCError(Exception):
    """As msgpack-rpc-python's: `args[0]` is the error object."""


class OldClient:
    def __init__(self, addr):
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=60)
        self.unpacker = msgpack.Unpacker(raw=False)
        self.msgid = 0

    def close(self):
        self.sock.close()

    def call(self, method, *args):
        self.msgid += 1
        self.sock.sendall(msgpack.packb([REQUEST, self.msgid, method, list(args)], use_bin_type=False))
        while True:
            for msg in self.unpacker:
                kind, msgid, error, result = msg
                assert (kind, msgid) == (RESPONSE, self.msgid), msg
                if error is not None:
                    raise RPCError(error)
                return result
            data = self.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.unpacker.feed(data)


def code(client, method, *args):
    with pytest.raises(RPCError) as e:
        client.call(method, *args)
    return e.value.args[0]


def inmap(base, n):
    return {"_%s%d" % (base, i): str(i) for i in range(n)}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = Server(str(tmp_path_factory.mktemp("kt") / DB_NAME))
    yield srv
    srv.stop()


@pytest.fixture()
def kt(server):
    c = OldClient(server.addr)
    yield c
    c.close()


def test_ping(kt):
    assert kt.call("ping") is None


def test_echo(kt):
    assert kt.call("echo", {"hoge": "1", "foo": "bar"}) == {"hoge": "1", "foo": "bar"}
    assert kt.call("echo", {}) == {}
    assert kt.call("echo") == {}
    assert code(kt, "echo", {"hoge": 1, "foo": 0.111}) == ARGUMENT


def test_report(kt):
    rep = kt.call("report")
    for key in ("cnt_get", "cnt_set", "cnt_remove", "cnt_misc", "conf_kt_version", "db_0",
                "db_total_count", "db_total_size", "serv_conn_count", "serv_current_time",
                "serv_proc_id", "serv_running_term", "sys_ru_utime"):
        assert isinstance(rep[key], str), (key, rep)
    assert int(rep["serv_conn_count"]) >= 1


def test_status(kt):
    for args in ((), ({"DB": DB_NAME},), ({"DB": "0"},)):
        st = kt.call("status", *args)
        assert st["count"].isdigit() and st["size"].isdigit(), st
    assert code(kt, "status", {"DB": "xxxx.kct"}) == NO_DATABASE


def test_add(kt):
    assert kt.call("add", "add1", "foo") is None
    assert code(kt, "add", "add1", "foo") == EXISTS
    assert kt.call("add", "add2", "1", {"DB": DB_NAME}) is None
    assert code(kt, "add", "bar", "1", {"DB": "xxxx.kct"}) == NO_DATABASE
    assert kt.call("add", "add3", "111", {"xt": "100000"}) is None
    assert "xt" in kt.call("get", "add3")
    assert code(kt, "add") == ARGUMENT


def test_set_and_get(kt):
    assert kt.call("set", "get1", "get1") is None
    assert kt.call("get", "get1") == {"value": "get1"}
    kt.call("set", "get2", "get2", {"xt": "100000"})
    got = kt.call("get", "get2")
    assert got["value"] == "get2"
    assert abs(int(got["xt"]) - (time.time() + 100000)) < 5
    assert code(kt, "get", "xxxx") == NO_RECORD
    kt.call("set", "get3", "1", {"DB": DB_NAME})
    assert kt.call("get", "get3", {"DB": DB_NAME}) == {"value": "1"}
    assert code(kt, "get", "xxxx", {"DB": "xxxx.kct"}) == NO_DATABASE
    assert code(kt, "set", "bar", "1", {"DB": "xxxx.kct"}) == NO_DATABASE
    assert code(kt, "get") == ARGUMENT
    assert code(kt, "set") == ARGUMENT


def test_negative_xt_is_an_epoch_time(kt):
    at = int(time.time()) + 3600
    kt.call("set", "abs", "v", {"xt": str(-at)})
    assert kt.call("get", "abs")["xt"] == str(at)
    kt.call("set", "past", "v", {"xt": "-1000"})
    assert code(kt, "get", "past") == NO_RECORD


def test_append(kt):
    kt.call("append", "append1", "hoge")
    kt.call("append", "append1", "hoge")
    assert kt.call("get", "append1") == {"value": "hogehoge"}
    assert code(kt, "append", "append3", "hoge", {"DB": "xxxx"}) == NO_DATABASE
    kt.call("append", "xt_append", "1", {"xt": "1000"})
    assert kt.call("get", "xt_append")["value"] == "1"
    assert "xt" in kt.call("get", "xt_append")


def test_remove(kt):
    kt.call("set", "remove1", "hoge")
    assert kt.call("remove", "remove1") is None
    assert code(kt, "get", "remove1") == NO_RECORD
    assert code(kt, "remove", "remove2") == NO_RECORD
    assert code(kt, "remove", "remove4", {"DB": "xxxx"}) == NO_DATABASE
    assert code(kt, "remove") == ARGUMENT


def test_seize(kt):
    kt.call("set", "seize1", "seize1")
    assert kt.call("seize", "seize1") == {"value": "seize1"}
    assert code(kt, "seize", "seize1") == NO_RECORD
    kt.call("set", "seize2", "seize2", {"xt": "100000"})
    assert "xt" in kt.call("seize", "seize2")
    assert code(kt, "seize", "xxxx", {"DB": "xxxx.kct"}) == NO_DATABASE


def test_clear(kt):
    kt.call("set", "clear1", "1")
    assert kt.call("clear") is None
    assert code(kt, "get", "clear1") == NO_RECORD
    assert code(kt, "clear", {"DB": "xxxxx"}) == NO_DATABASE


def test_replace(kt):
    kt.call("set", "replace1", "1111")
    assert kt.call("replace", "replace1", "2222") is None
    assert kt.call("get", "replace1") == {"value": "2222"}
    kt.call("replace", "replace1", "bar", {"xt": "10000"})
    assert "xt" in kt.call("get", "replace1")
    assert code(kt, "replace", "replace3", "x", {"DB": "xxxxx"}) == NO_DATABASE
    assert code(kt, "replace", "absent", "x") == NO_RECORD


def test_cas(kt):
    assert kt.call("cas", "cas1") is None
    assert code(kt, "get", "cas1") == NO_RECORD
    kt.call("cas", "cas2", {"nval": "1"})
    assert kt.call("get", "cas2") == {"value": "1"}
    assert code(kt, "cas", "cas2") == CAS_FAILED
    assert code(kt, "cas", "cas2", {"oval": "2"}) == CAS_FAILED
    kt.call("cas", "cas2", {"oval": "1", "nval": "3"})
    assert kt.call("get", "cas2") == {"value": "3"}
    assert code(kt, "cas", "cas4", {"DB": "xxxxx"}) == NO_DATABASE
    kt.call("cas", "cas2", {"xt": "10000", "oval": "3", "nval": "10"})
    assert "xt" in kt.call("get", "cas2")


def test_increment(kt):
    assert kt.call("increment", "inc1", "1") == {"num": "1"}
    assert kt.call("increment", "inc2", "10", {"orig": "10"}) == {"num": "20"}
    assert code(kt, "increment", "inc3", "0", {"orig": "try"}) == NOT_COMPATIBLE
    assert kt.call("increment", "inc4", "1", {"orig": "set"}) == {"num": "1"}
    assert kt.call("increment", "inc5", "-1", {"DB": DB_NAME, "orig": "1"}) == {"num": "0"}
    assert code(kt, "increment", "inc6", "1", {"DB": "xxxxx"}) == NO_DATABASE
    assert kt.call("increment", "inc7", "11", {"xt": "10000"}) == {"num": "11"}
    # memstored keeps counters as decimal text (KT: 8 bytes, which kt-msgpack's
    # %s turned into "").
    assert kt.call("get", "inc7")["value"] == "11"


def test_increment_double(kt):
    assert kt.call("increment_double", "incd1", "1.1") == {"num": "1.100000"}
    assert kt.call("increment_double", "incd2", "10.0", {"orig": "10.0"}) == {"num": "20.000000"}
    assert code(kt, "increment_double", "incd3", "0", {"orig": "try"}) == NOT_COMPATIBLE
    assert kt.call("increment_double", "incd4", "0.1", {"orig": "set"}) == {"num": "0.100000"}
    assert kt.call("increment_double", "incd5", "-1.0", {"orig": "1.0"}) == {"num": "0.000000"}
    assert kt.call("increment_double", "incd7", "11.01", {"xt": "10000"}) == {"num": "11.010000"}


def test_match_prefix_and_regex(kt):
    kt.call("clear")
    for i in range(10):
        kt.call("set", "_mprefix%d" % i, str(i))
        kt.call("set", "mprefix%d" % i, str(i))
    got = kt.call("match_prefix", "_")
    assert got["num"] == "10"
    assert all(got["__mprefix%d" % i] == "_mprefix%d" % i for i in range(10))
    assert kt.call("match_prefix", "_", {"max": "5"})["num"] == "5"
    assert kt.call("match_prefix", "_", {"DB": DB_NAME})["num"] == "10"
    assert code(kt, "match_prefix", "_", {"DB": "xxxxx"}) == NO_DATABASE
    assert code(kt, "match_prefix") == ARGUMENT
    got = kt.call("match_regex", "^mpre")
    assert got["num"] == "10" and got["_mprefix3"] == "mprefix3"
    assert kt.call("match_regex", "^mpre", {"max": "5"})["num"] == "5"
    assert code(kt, "match_regex", "dd", {"DB": "xxxxx"}) == NO_DATABASE


def test_set_get_remove_bulk(kt):
    m = inmap("bulk", 500)
    assert kt.call("set_bulk", m) == {"num": "500"}
    assert kt.call("get", "bulk7") == {"value": "7"}
    got = kt.call("get_bulk", m)
    assert got["num"] == "500" and len(got) == 501
    assert all(got["_bulk%d" % i] == str(i) for i in range(500))
    assert kt.call("get_bulk", {**m, "atomic": "True"})["num"] == "500"
    assert code(kt, "get_bulk", {**m, "DB": "xxxxx"}) == NO_DATABASE
    assert kt.call("get_bulk") == {"num": "0"}
    assert kt.call("remove_bulk", {**m, "atomic": "True"}) == {"num": "500"}
    assert code(kt, "get", "bulk7") == NO_RECORD
    assert kt.call("remove_bulk") == {"num": "0"}
    assert kt.call("set_bulk") == {"num": "0"}
    # Options are options: `_k0` stores k0, and atomic/xt store nothing.
    assert kt.call("set_bulk", {"_k0": "0", "atomic": "", "xt": "100000"}) == {"num": "1"}
    assert "xt" in kt.call("get", "k0")
    assert code(kt, "get", "atomic") == NO_RECORD
    assert code(kt, "get", "_k0") == NO_RECORD


def test_vacuum_and_synchronize(kt):
    kt.call("set_bulk", {**inmap("vacuum", 1000), "xt": "-1"})
    assert kt.call("vacuum") is None
    assert kt.call("vacuum", {"step": "1"}) is None
    assert kt.call("vacuum", {"DB": DB_NAME}) is None
    assert code(kt, "vacuum", {"DB": "xxxx"}) == NO_DATABASE
    assert kt.call("synchronize") is None
    assert kt.call("synchronize", {"hard": "True"}) is None
    assert code(kt, "synchronize", {"command": "dbbackup"}) == POSTPROCESSING
    assert code(kt, "synchronize", {"DB": "xxxx"}) == NO_DATABASE


def test_unimplemented_procedures(kt):
    assert code(kt, "play_script", "echo") == NOT_IMPLEMENTED
    assert code(kt, "tune_replication") == NOT_IMPLEMENTED
    for proc in ("cur_jump", "cur_jump_back", "cur_step", "cur_step_back", "cur_remove",
                 "cur_get_key", "cur_get_value", "cur_get", "cur_seize", "cur_delete"):
        assert code(kt, proc, "1") == NOT_IMPLEMENTED, proc
    assert code(kt, "cur_set_value", "1", "value1") == NOT_IMPLEMENTED
