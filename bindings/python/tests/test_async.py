"""AsyncDBM and Future: tkrzw-python's asynchronous calls, awaitable."""

import asyncio

from memstored import AsyncDBM, DBM, File, Future, Status


def test_calls_return_futures_with_tkrzws_results(db):
    adbm = AsyncDBM(db, 4)
    assert "AsyncDBM" in repr(adbm) and "AsyncDBM" in str(adbm)
    f = adbm.Set("one", "hop")
    assert isinstance(f, Future) and "Future" in repr(f) and "Future" in str(f)
    assert f.Wait() and f.Get() == Status.SUCCESS
    assert adbm.Set("one", "more", False).Get() == Status.DUPLICATION_ERROR
    assert adbm.Append("one", "go", ":").Get() == Status.SUCCESS
    assert adbm.Get("one").Get() == (Status.SUCCESS, b"hop:go")
    assert adbm.GetStr("one").Get() == (Status.SUCCESS, "hop:go")
    st, value = adbm.GetStr("absent").Get()
    assert st == Status.NOT_FOUND_ERROR and value == ""
    assert adbm.SetMulti(False, two="step", three="jump").Get() == Status.SUCCESS
    assert adbm.AppendMulti(":", three="go").Get() == Status.SUCCESS
    st, recs = adbm.GetMultiStr("two", "three", "hoge").Get()
    assert st == Status.NOT_FOUND_ERROR and recs == {"two": "step", "three": "jump:go"}
    assert adbm.GetMulti("two").Get() == (Status.SUCCESS, {b"two": b"step"})
    assert adbm.RemoveMulti("one", "two", "three").Get() == Status.SUCCESS
    assert adbm.Remove("one").Get() == Status.NOT_FOUND_ERROR
    assert adbm.Increment("num", 5, 100).Get() == (Status.SUCCESS, 105)
    assert adbm.CompareExchange("num", "105", None).Get() == Status.SUCCESS
    assert adbm.CompareExchange("x", DBM.ANY_DATA, "1").Get() == Status.INFEASIBLE_ERROR
    assert adbm.CompareExchangeMulti([("x", None)], [("x", "abc")]).Get() == Status.SUCCESS
    assert adbm.CompareExchangeMulti([("x", DBM.ANY_DATA)], [("x", None)]).Get() == Status.SUCCESS
    assert adbm.Set("aa", "AAA").Get() == Status.SUCCESS
    assert adbm.Rekey("aa", "bb").Get() == Status.SUCCESS
    assert adbm.PopFirst().Get() == (Status.SUCCESS, b"bb", b"AAA")
    assert adbm.PushLast("foo", 0).Get() == Status.SUCCESS
    assert adbm.PopFirstStr().Get() == (Status.SUCCESS, "\0" * 8, "foo")
    assert adbm.PopFirst().Get() == (Status.NOT_FOUND_ERROR, b"", b"")
    adbm.Set("hello", "1").Get()
    adbm.Set("hi", "2").Get()
    st, keys = adbm.Search("begin", "h").Get()
    assert st == Status.SUCCESS and sorted(keys) == ["hello", "hi"]
    assert adbm.Search("nonsense", "h").Get()[0] == Status.INVALID_ARGUMENT_ERROR
    assert adbm.Synchronize(False).Get() == Status.SUCCESS
    assert adbm.Rebuild().Get() == Status.SUCCESS
    assert adbm.Clear().Get() == Status.SUCCESS and db.Count() == 0
    adbm.Destruct()
    assert adbm.Set("late", "x").Get() == Status.PRECONDITION_ERROR


def test_await_gives_the_result(db):
    adbm = AsyncDBM(db, 2)

    async def main():
        assert await adbm.Set("hello", "good-bye") == Status.SUCCESS
        return await adbm.GetStr("hello")

    assert asyncio.run(main()) == (Status.SUCCESS, "good-bye")
    adbm.Destruct()


def test_export_and_flat_records(tmp_path):
    db = DBM()
    assert db.Open(str(tmp_path / "a.tkh"), True).IsOK()
    adbm = AsyncDBM(db, 2)
    adbm.Set("hello", "world").Get()
    copy = str(tmp_path / "copy.tkh")
    assert adbm.CopyFileData(copy).Get() == Status.SUCCESS
    other = DBM()
    assert other.Open(copy, True).IsOK() and other.Count() == 1
    assert other.Clear().IsOK()
    assert adbm.Export(other).Get() == Status.SUCCESS and other.Count() == 1
    f = File()
    assert f.Open(str(tmp_path / "flat"), True).IsOK()
    assert adbm.ExportToFlatRecords(f).Get() == Status.SUCCESS
    assert adbm.Clear().Get() == Status.SUCCESS
    assert adbm.ImportFromFlatRecords(f).Get() == Status.SUCCESS
    assert db.GetStr("hello") == "world"
    adbm.Destruct()
