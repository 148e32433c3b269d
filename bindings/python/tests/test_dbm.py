import os
import subprocess
import sys

import pytest

from conftest import is_ordered
from memstored import DBM, Status, StatusException


def test_get_set_remove_with_str_and_bytes(db):
    assert db.Set("one", "first") == Status.SUCCESS
    assert db.Set(b"two", b"\x00\xff") == Status.SUCCESS
    assert db.Set("three", bytearray(b"ba")) == Status.SUCCESS
    assert db.Set(4, 4.5) == Status.SUCCESS
    assert db.Get("one") == b"first" and db.GetStr(b"one") == "first"
    assert db.Get("two") == b"\x00\xff" and db.Get("three") == b"ba"
    assert db.Get("4") == b"4.5"
    assert db.Set("one", "again", False) == Status.DUPLICATION_ERROR
    assert db.Get("one") == b"first"
    st = Status()
    assert db.Get("absent", st) is None and st == Status.NOT_FOUND_ERROR
    assert db.GetStr("one", st) == "first" and st.IsOK()
    assert db.Remove("one") == Status.SUCCESS
    assert db.Remove("one") == Status.NOT_FOUND_ERROR
    assert db.Count() == 3


def test_append_and_increment(db):
    assert db.Append("log", "a") == Status.SUCCESS
    assert db.Append("log", "b", ",") == Status.SUCCESS
    assert db.Append("log", b"c") == Status.SUCCESS
    assert db.Get("log") == b"a,bc"
    assert db.Increment("n") == 1
    assert db.Increment("n", 10) == 11
    assert db.Increment("m", -5, 100) == 95
    assert db.Get("n") == b"11"
    st = Status()
    assert db.Increment("log", 1, 0, st) is None and st == Status.INFEASIBLE_ERROR


def test_compare_exchange(db):
    assert db.CompareExchange("k", None, "v1") == Status.SUCCESS
    assert db.CompareExchange("k", None, "v2") == Status.INFEASIBLE_ERROR
    assert db.CompareExchange("k", "v1", "v2") == Status.SUCCESS
    assert db.CompareExchange("k", DBM.ANY_DATA, "v3") == Status.SUCCESS
    assert db.CompareExchange("k", "v3", DBM.ANY_DATA) == Status.SUCCESS
    assert db.Get("k") == b"v3"
    assert db.CompareExchange("absent", DBM.ANY_DATA, "x") == Status.INFEASIBLE_ERROR
    assert db.CompareExchange("k", b"v3", None) == Status.SUCCESS
    assert "k" not in db


def test_compare_exchange_multi_is_all_or_nothing(db):
    db.SetMulti(alice="3000", bob="1000")
    ok = db.CompareExchangeMulti([("alice", "3000"), ("bob", "1000")],
                                 [("alice", "2500"), ("bob", "1500")])
    assert ok == Status.SUCCESS
    assert db.GetStr("alice") == "2500" and db.GetStr("bob") == "1500"
    stale = db.CompareExchangeMulti([("alice", "3000"), ("bob", "1500")],
                                    [("alice", "0"), ("bob", "0")])
    assert stale == Status.INFEASIBLE_ERROR
    assert db.GetStr("alice") == "2500"
    assert db.CompareExchangeMulti([("carol", None)], [("carol", "1"), ("bob", None)]).IsOK()
    assert db.GetStr("carol") == "1" and "bob" not in db
    # ANY_DATA: any record (absent: INFEASIBLE_ERROR), or leave it as is.
    assert db.CompareExchangeMulti([("dave", DBM.ANY_DATA)], [("dave", "x")]) == Status.INFEASIBLE_ERROR
    assert db.CompareExchangeMulti([("carol", DBM.ANY_DATA)], [("carol", "2"), ("alice", DBM.ANY_DATA)]).IsOK()
    assert db.GetStr("carol") == "2" and db.GetStr("alice") == "2500"
    stale = db.CompareExchangeMulti([("carol", DBM.ANY_DATA), ("alice", "0")], [("carol", None)])
    assert stale == Status.INFEASIBLE_ERROR and db.GetStr("carol") == "2"
    assert db.CompareExchangeMulti([("carol", DBM.ANY_DATA)], [("carol", None)]).IsOK()
    assert "carol" not in db


def test_multi_calls(db):
    assert db.SetMulti(a="1", b="2", c="3") == Status.SUCCESS
    assert db.SetMulti(False, a="9", d="4") == Status.DUPLICATION_ERROR
    assert db.GetMulti("a", "b", "d", "zz") == {b"a": b"1", b"b": b"2", b"d": b"4"}
    assert db.GetMultiStr(["a", "c"]) == {"a": "1", "c": "3"}
    assert db.RemoveMulti("a", "b") == Status.SUCCESS
    assert db.RemoveMulti(["c", "zz"]) == Status.NOT_FOUND_ERROR
    assert db.GetMulti("a", "b", "c") == {}
    assert db.Count() == 1


def test_search(db, name):
    for k in ["apple", "apricot", "banana", "cherry", "Applet"]:
        db.Set(k, "x")
    assert db.Search("begin", "ap") == ["apple", "apricot"]
    assert db.Search("contain", "an") == ["banana"]
    assert db.Search("containcase", "APPLE") == ["Applet", "apple"]
    assert db.Search("end", b"rry") == ["cherry"]
    assert db.Search("regex", "^a.*t$") == ["apricot"]
    assert db.Search("edit", "aple", 1) == ["apple"]
    assert len(db.Search("begin", "", 2)) == 2
    if is_ordered(name):
        assert db.Search("upper", "banana") == ["cherry"]
        assert db.Search("lowerinc", "apricot", 2) == ["apricot", "apple"]
    with pytest.raises(StatusException) as e:
        db.Search("sideways", "a")
    assert e.value.GetStatus() == Status.INVALID_ARGUMENT_ERROR


def test_mapping_protocol(db):
    db["k"] = "v"
    db[b"b"] = b"\x01"
    assert db["k"] == "v" and db[b"k"] == b"v"
    assert "k" in db and b"b" in db and "zz" not in db
    assert len(db) == 2
    assert sorted(db) == [(b"b", b"\x01"), (b"k", b"v")]
    del db["k"]
    with pytest.raises(StatusException) as e:
        db["k"]
    assert e.value.GetStatus() == Status.NOT_FOUND_ERROR
    with pytest.raises(StatusException):
        del db["k"]


def test_maintenance_calls(db, name):
    # Files under 64 KiB are never worth a rebuild: 300 KB over at most 3 shards.
    for i in range(1000):
        db.Set("%04d" % i, "x" * 300)
    for i in range(900):
        db.Remove("%04d" % i)
    assert db.Synchronize(False) == Status.SUCCESS
    assert db.Synchronize(True) == Status.SUCCESS
    files = not name.startswith(("*", "+"))
    assert db.ShouldBeRebuilt() is files
    assert db.Rebuild() == Status.SUCCESS
    assert db.ShouldBeRebuilt() is False
    assert db.Count() == 100 and db.Get("0950") == b"x" * 300
    props = db.Inspect()
    assert props["num_records"] == "100"
    assert props["class"] in {"TinyDBM", "BabyDBM", "HashDBM", "TreeDBM"}
    assert db.IsWritable() and db.IsOrdered() == is_ordered(name)
    assert db.GetFileSize() > 0  # in memory: the bytes the records take, as Tkrzw's
    assert db.GetFilePath() == name.split("#")[0]
    assert db.Clear() == Status.SUCCESS and db.Count() == 0


def test_large_values_round_trip(db):
    big = os.urandom(1 << 20)
    assert db.Set("big", big).IsOK()
    assert db.Get("big") == big
    assert db.Append("big", b"!").IsOK()
    assert db.Get("big") == big + b"!"


def test_data_survives_reopen_and_truncate_empties(tmp_path):
    path = str(tmp_path / "casket.tkh")
    with DBM(path, True, num_shards=2, num_buckets=100) as db:
        db["k"] = "v"
    assert sorted(os.listdir(tmp_path))[0].startswith("casket.tkh-00000-of-00002")
    with DBM(path, False, num_shards=2) as db:
        assert db["k"] == "v" and not db.IsWritable()
    with DBM(path, True, num_shards=2, truncate=True) as db:
        assert len(db) == 0
        db["k2"] = "v2"
    with DBM(path, True, num_shards=2, truncate=True) as db:
        assert len(db) == 0


# A child process that opens the store writable and holds it until its
# stdin closes, saying "holding" once the store is open.
HOLD = """
import sys, memstored
db = memstored.DBM(sys.argv[1], True, num_shards=2)
print("holding", flush=True)
sys.stdin.read()
db.Close()
"""


def files_of(d):
    return {f: (d / f).read_bytes() for f in sorted(os.listdir(d))}


def test_truncate_refused_while_another_process_holds_the_store(tmp_path):
    """Regression (issue 40, finding 10): truncate=True deleted the shard and
    hint files itself, before and without the store's lock, so it emptied a
    store another process (a running server) was writing."""
    path = str(tmp_path / "casket.tkh")
    with DBM(path, True, num_shards=2) as db:
        db["k"] = "v"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        before = files_of(tmp_path)
        db = DBM()
        st = db.Open(path, True, num_shards=2, truncate=True)
        assert not st.IsOK(), st
        assert "lock" in st.GetMessage(), st
        assert not db.IsOpen()
        assert files_of(tmp_path) == before
    finally:
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0
    with DBM(path, False, num_shards=2) as db:
        assert db["k"] == "v"
    # With no holder, it truncates as before.
    with DBM(path, True, num_shards=2, truncate=True) as db:
        assert len(db) == 0


def test_no_create(tmp_path):
    db = DBM()
    path = str(tmp_path / "none.tkt")
    assert db.Open(path, True, no_create=True) == Status.NOT_FOUND_ERROR
    assert not os.path.exists(path)
    assert db.Open(path, True).IsOK() and db.Close().IsOK()
    assert db.Open(path, True, no_create=True).IsOK()


def test_closed_database(tmp_path):
    db = DBM()
    assert not db.IsOpen()
    assert db.Set("k", "v") == Status.PRECONDITION_ERROR
    assert db.Close() == Status.PRECONDITION_ERROR
    st = Status()
    assert db.Get("k", st) is None and st == Status.PRECONDITION_ERROR
    assert len(db) == 0  # as tkrzw-python: no exception before Open
    for call in (db.Count, db.Inspect, db.MakeIterator, lambda: db["k"]):
        with pytest.raises(StatusException) as e:
            call()
        assert e.value.GetStatus() == Status.PRECONDITION_ERROR
    assert repr(db) == "<memstored.DBM: class=unknown path=- num_records=-1>"


def test_context_manager_closes_even_on_error(tmp_path):
    path = str(tmp_path / "cm.tkh")
    with pytest.raises(ValueError):
        with DBM(path, True) as db:
            db["k"] = "v"
            raise ValueError("boom")
    assert not db.IsOpen()
    with DBM() as db2:
        db2.Open(path, True).OrDie()
        assert db2["k"] == "v"
        assert repr(db2) == '<memstored.DBM: class=HashDBM path="%s" num_records=1>' % path
        assert "HashDBM" in str(db2)
    assert not db2.IsOpen()
    with pytest.raises(StatusException):
        DBM("x.unknown", True)
