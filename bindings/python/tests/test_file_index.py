"""File (with Tkrzw's flat-record files) and Index."""

from memstored import DBM, File, Index, Status, StatusException


def test_file_reads_writes_appends_and_pads(tmp_path):
    path = str(tmp_path / "casket.txt")
    f = File()
    assert f.Open(path, True, truncate=True, file="pos-atom", block_size=512,
                  access_options="padding:pagecache") == Status.SUCCESS
    assert f.Write(5, "12345") == Status.SUCCESS and f.Write(0, "ABCDE") == Status.SUCCESS
    assert f.Append("FGH") == 10 and f.Append(b"IJ") == 13
    assert f.GetSize() == 15 and f.GetPath() == path
    assert f.Synchronize(True) == Status.SUCCESS
    assert f.Truncate(12) == Status.SUCCESS and f.GetSize() == 12
    assert f.Read(0, 12) == b"ABCDE12345FG" and f.ReadStr(3, 5) == "DE123"
    st = Status()
    assert f.ReadStr(1024, 10, st) is None and st == Status.INFEASIBLE_ERROR
    assert "File" in repr(f) and "path=" in str(f)
    assert f.Close() == Status.SUCCESS
    assert str(f) == "(unopened)" and f.Close() == Status.PRECONDITION_ERROR
    assert f.Open(path, False) == Status.SUCCESS
    assert f.GetSize() == 512  # padded to the block size on close
    assert f.Write(0, "x") == Status.PRECONDITION_ERROR
    assert f.Close().IsOK()
    assert File().Open(str(tmp_path / "absent"), False) != Status.SUCCESS
    assert File().Open(str(tmp_path / "absent"), True, no_create=True) == Status.NOT_FOUND_ERROR


def test_flat_records_are_tkrzws_bytes_and_round_trip(tmp_path):
    db = DBM()
    assert db.Open("+", True).IsOK()
    db.SetMulti(a="1", bb="x" * 200)
    f = File()
    path = str(tmp_path / "flat")
    assert f.Open(path, True, truncate=True).IsOK()
    assert db.ExportToFlatRecords(f) == Status.SUCCESS
    expected = b"\xff\x01a\xff\x011" + b"\xff\x02bb\xff\x81\x48" + b"x" * 200
    assert f.Read(0, f.GetSize()) == expected
    assert db.Clear().IsOK()
    assert db.ImportFromFlatRecords(f) == Status.SUCCESS
    assert dict(db) == {b"a": b"1", b"bb": b"x" * 200}
    assert f.Truncate(3).IsOK()  # half a record
    assert db.ImportFromFlatRecords(f) == Status.BROKEN_DATA_ERROR
    assert db.ExportKeysAsLines(f) == Status.SUCCESS
    assert f.Read(0, f.GetSize()) == b"a\nbb\n"
    assert f.Search("begin", "b") == ["bb"] and f.Search("contain", "") == ["a", "bb"]
    try:
        f.Search("foo", "x")
    except StatusException as e:
        assert e.GetStatus() == Status.INVALID_ARGUMENT_ERROR
    else:
        raise AssertionError("no exception")
    f.Close()


def test_index_pairs(tmp_path):
    path = str(tmp_path / "casket.tkt")
    index = Index()
    assert index.Open(path, True, truncate=True, num_buckets=100) == Status.SUCCESS
    assert "Index" in repr(index) and ("path=" + path) in str(index)
    assert ("single", "1") not in index
    for k, v in [("single", "1"), ("double", "11"), ("single", "2"), ("double", "22"),
                 ("triple", "222"), ("a\0b", "z"), ("a", "\0")]:
        assert index.Add(k, v) == Status.SUCCESS
    assert ("single", "1") in index and len(index) == 7
    assert index.GetValues("single") == [b"1", b"2"]
    assert index.GetValuesStr("single", 1) == ["1"]
    assert index.GetValuesStr("a") == ["\0"] and index.GetValuesStr("a\0b") == ["z"]
    assert index.GetValuesStr("foo") == []
    assert index.Remove("single", "1") == Status.SUCCESS
    assert index.Remove("triple", "x") == Status.NOT_FOUND_ERROR
    assert index.Count() == 6 and index.GetFilePath() == path
    assert index.Synchronize(False).IsOK() and index.Rebuild().IsOK()
    assert index.Clear().IsOK() and index.Count() == 0
    assert index.IsOpen() and index.IsWritable()
    for k, v in [("first", "1"), ("second", "22"), ("third", "333")]:
        index.Add(k, v)
    it = index.MakeIterator()
    assert "IndexIterator" in repr(it) and "unlocated" in str(it)
    it.First()
    assert "first" in repr(it) and it.Get() == (b"first", b"1")
    it.Next()
    assert it.GetStr() == ("second", "22")
    it.Last()
    assert it.GetStr() == ("third", "333")
    it.Previous()
    it.Previous()
    it.Previous()
    st = Status()
    assert it.GetStr(st) is None and st == Status.NOT_FOUND_ERROR
    it.Jump("second")
    assert it.GetStr() == ("second", "22")
    assert dict(index) == {b"first": b"1", b"second": b"22", b"third": b"333"}
    assert index.Close().IsOK() and not index.IsOpen()
    assert index.Open(path, False).IsOK() and index.Count() == 3 and not index.IsWritable()
    index.Close()
    memory = Index()  # any path but a .tkt one is an index in memory, as Tkrzw's
    assert memory.Open("", True).IsOK() and memory.Add("k", "v").IsOK()
    assert memory.GetFilePath() == "" and ("k", "v") in memory
