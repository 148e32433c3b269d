"""tkrzw-python's DBM calls beyond get/set: the *AndGet calls, Rekey, the
queue (PopFirst/PushLast), Export, CopyFileData, RestoreDatabase, and
Tkrzw's spellings of engine names and classes."""

import os

import pytest

from conftest import is_ordered
from memstored import DBM, Status, StatusException, Utility


def test_set_and_get_gives_the_old_value_typed_as_the_new(db):
    assert db.SetAndGet("k", "apple", False) == (Status.SUCCESS, None)
    st, old = db.SetAndGet("k", "orange", False)
    assert st == Status.DUPLICATION_ERROR and old == "apple"
    st, old = db.SetAndGet("k", b"orange")
    assert st == Status.SUCCESS and old == b"apple"
    assert db.GetStr("k") == "orange"
    assert db.RemoveAndGet("k") == (Status.SUCCESS, "orange")
    st, old = db.RemoveAndGet(b"k")
    assert st == Status.NOT_FOUND_ERROR and old is None


def test_compare_exchange_and_get(db):
    assert db.CompareExchangeAndGet("x", None, "123") == (Status.SUCCESS, None)
    assert db.CompareExchangeAndGet("x", "999", "1") == (Status.INFEASIBLE_ERROR, "123")
    assert db.CompareExchangeAndGet("x", "123", DBM.ANY_DATA) == (Status.SUCCESS, "123")
    assert db.CompareExchangeAndGet("x", DBM.ANY_DATA, None) == (Status.SUCCESS, b"123")
    assert "x" not in db


def test_append_multi_and_increment_int64min(db):
    db.SetMulti(one="first", two="second")
    assert db.AppendMulti(":", one="1", two="2", three="3") == Status.SUCCESS
    assert db.GetMultiStr("one", "two", "three") == {"one": "first:1", "two": "second:2", "three": "3"}
    st = Status()
    assert db.Increment("n", Utility.INT64MIN, 5, st) == 5 and st.IsOK()
    assert "n" not in db  # reading does not store
    assert db.Increment("n", 2, 10000) == 10002
    assert db.Increment("n", Utility.INT64MIN) == 10002
    assert db.Increment("n", 2) == 10004


def test_rekey(db):
    db.Set("zero", "foo")
    db.Set("taken", "bar")
    assert db.Rekey("zero", "taken", False) == Status.DUPLICATION_ERROR
    assert db.Rekey("absent", "x") == Status.NOT_FOUND_ERROR
    assert db.Rekey("zero", "copy", True, True) == Status.SUCCESS
    assert db.GetStr("zero") == "foo" and db.GetStr("copy") == "foo"
    assert db.Rekey("zero", "one") == Status.SUCCESS
    assert db.Get("zero") is None and db.GetStr("one") == "foo"


def test_queue(db, name):
    assert db.PushLast("foo", 0) == Status.SUCCESS
    assert db.PushLast("bar", 0) == Status.SUCCESS
    st = Status()
    first = db.PopFirst(st)
    assert st.IsOK()
    pushed = {(b"\0" * 8, b"foo"), (b"\0" * 7 + b"\1", b"bar")}
    if is_ordered(name):  # a hash database pops in its own order
        assert first == (b"\0" * 8, b"foo")
    assert {first, db.PopFirst()} == pushed
    assert db.PopFirst(st) is None and st == Status.NOT_FOUND_ERROR
    assert db.PopFirstStr(st) is None and st == Status.NOT_FOUND_ERROR
    db.SetMulti(japan="tokyo", china="beijing", korea="seoul")
    popped = [db.PopFirstStr() for _ in range(3)]
    assert sorted(popped) == [("china", "beijing"), ("japan", "tokyo"), ("korea", "seoul")]
    if is_ordered(name):
        assert [k for k, _ in popped] == ["china", "japan", "korea"]
    assert db.PushLast("now") == Status.SUCCESS
    key, value = db.PopFirst()
    assert value == b"now" and abs(int.from_bytes(key, "big") / 1e8 - db.GetTimestamp()) < 3600


def test_export_to_another_dbm(db):
    db.SetMulti(a="1", b="2")
    dest = DBM()
    assert dest.Open("", True, dbm="BabyDBM").IsOK()
    assert dest.Inspect()["class"] == "BabyDBM"
    assert db.Export(dest) == Status.SUCCESS
    assert dict(dest) == {b"a": b"1", b"b": b"2"}
    assert db.Export(DBM()) == Status.PRECONDITION_ERROR


def test_file_calls(tmp_path):
    path = str(tmp_path / "casket.tkh")
    db = DBM()
    assert db.Open(path, True, num_shards=3).IsOK()
    db.SetMulti(a="1", b="2", c="3")
    assert db.Synchronize(False).IsOK()
    assert db.IsHealthy() and path in db.GetFilePath() and db.GetFileSize() > 0
    assert db.GetTimestamp() > 0
    copy = str(tmp_path / "copy.tkh")
    assert db.CopyFileData(copy) == Status.SUCCESS
    assert not any(".backup." in f for f in os.listdir(tmp_path))
    copied = DBM()
    assert copied.Open(copy, False, num_shards=0).IsOK()
    assert dict(copied) == {b"a": b"1", b"b": b"2", b"c": b"3"}
    copied.Close()
    restored = str(tmp_path / "copy.tkh-restored")
    assert DBM.RestoreDatabase(copy + "#num_shards=3", restored, "HashDBM", -1) == Status.SUCCESS
    back = DBM()
    assert back.Open(restored, False, dbm="HashDBM", num_shards=0).IsOK()
    assert back.Count() == 3
    # Without num_shards the source's shards are found by their files, and
    # restored into as many, as Tkrzw's ShardDBM restores.
    assert DBM.RestoreDatabase(copy, restored + "-found", "HashDBM", -1) == Status.SUCCESS
    assert os.path.exists(restored + "-found-00002-of-00003")
    found = DBM()
    assert found.Open(restored + "-found", False, dbm="HashDBM", num_shards=0).IsOK()
    assert found.Count() == 3
    assert DBM.RestoreDatabase(copy, restored + "2", "", 100) == Status.NOT_IMPLEMENTED_ERROR
    assert db.Close().IsOK() and not db.IsHealthy()


def test_file_size_of_an_in_memory_class_saved_to_a_path(tmp_path):
    db = DBM()
    assert db.Open(str(tmp_path / "casket.tiny"), True, num_buckets=10).IsOK()
    db.Set("k", "v")
    assert db.Synchronize(False).IsOK()
    assert db.GetFileSize() > 0  # the file as saved, as Tkrzw's TinyDBM reports
    assert db.Close().IsOK()
    mem = DBM()
    assert mem.Open("*", True).IsOK() and mem.GetFileSize() == 0
    mem.Set("k", "v")
    assert mem.GetFileSize() > 0  # the bytes the records take, as Tkrzw's


def test_tkrzw_spellings_and_classes(tmp_path):
    for path, params, cls in [
        ("a.tkh", {"update_mode": "UPDATE_APPENDING", "offset_width": 3}, "HashDBM"),
        ("a.tkt", {"update_mode": "UPDATE_IN_PLACE", "key_comparator": "decimal"}, "TreeDBM"),
        ("a.tks", {"step_unit": 2, "max_level": 3}, "SkipDBM"),
        ("a.tiny", {"num_buckets": 10}, "TinyDBM"),
        ("", {"dbm": "BabyDBM"}, "BabyDBM"),
    ]:
        db = DBM()
        full = str(tmp_path / path) if path else ""
        assert db.Open(full, True, truncate=True, **params) == Status.SUCCESS, path
        assert db.Inspect()["class"] == cls and cls in repr(db) and cls in str(db)
        assert db.Close().IsOK()


def test_iterator_of_a_closed_dbm_answers_precondition_error(tmp_path):
    path = str(tmp_path / "it.tkt")
    db = DBM(path, True)
    db.Set("k", "v")
    it = db.MakeIterator()
    assert it.First().IsOK()
    assert db.Close().IsOK()
    assert it.Next() == Status.PRECONDITION_ERROR
    st = Status()
    assert it.Get(st) is None and st == Status.PRECONDITION_ERROR
    # The store is released: the same process opens it again.
    again = DBM()
    assert again.Open(path, True) == Status.SUCCESS
    assert again.GetStr("k") == "v"
    assert again.Close().IsOK()
