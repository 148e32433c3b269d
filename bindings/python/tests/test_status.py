import sys

import pytest

from memstored import DBM, Status, StatusException, Utility


def test_codes_are_tkrzws():
    assert (Status.SUCCESS, Status.UNKNOWN_ERROR, Status.SYSTEM_ERROR) == (0, 1, 2)
    assert Status.NOT_IMPLEMENTED_ERROR == 3 and Status.PRECONDITION_ERROR == 4
    assert Status.INVALID_ARGUMENT_ERROR == 5 and Status.CANCELED_ERROR == 6
    assert Status.NOT_FOUND_ERROR == 7 and Status.PERMISSION_ERROR == 8
    assert Status.INFEASIBLE_ERROR == 9 and Status.DUPLICATION_ERROR == 10
    assert Status.BROKEN_DATA_ERROR == 11 and Status.NETWORK_ERROR == 12
    assert Status.APPLICATION_ERROR == 13
    assert Status.CodeName(7) == "NOT_FOUND_ERROR"
    assert Status.CodeName(99) == "unknown"


def test_status_compares_with_ints_and_statuses():
    s = Status(Status.NOT_FOUND_ERROR, "gone")
    assert s == 7 and s == Status.NOT_FOUND_ERROR and s != Status.SUCCESS
    assert s == Status(7) and s != Status(9)
    assert s != "NOT_FOUND_ERROR"
    assert Status(1) < Status(2) and Status(2) >= 2
    assert s.GetCode() == 7 and s.GetMessage() == "gone"
    assert not s.IsOK() and Status().IsOK()
    assert str(s) == "NOT_FOUND_ERROR: gone" and str(Status()) == "SUCCESS"
    assert repr(s) == "<memstored.Status: NOT_FOUND_ERROR: gone>"


def test_set_and_join():
    s = Status()
    s.Set(Status.INFEASIBLE_ERROR, "no")
    assert s == Status.INFEASIBLE_ERROR and s.GetMessage() == "no"
    ok = Status()
    ok.Join(s)
    assert ok == Status.INFEASIBLE_ERROR
    s.Join(Status(Status.SYSTEM_ERROR))
    assert s == Status.INFEASIBLE_ERROR


def test_or_die_raises_the_status():
    Status().OrDie()
    with pytest.raises(StatusException) as e:
        Status(Status.DUPLICATION_ERROR, "twice").OrDie()
    assert isinstance(e.value, RuntimeError)
    assert e.value.GetStatus() == Status.DUPLICATION_ERROR
    assert str(e.value) == "DUPLICATION_ERROR: twice"


def test_engine_errors_arrive_as_their_codes(tmp_path):
    db = DBM()
    assert db.Open("*", True, colour="blue") == Status.INVALID_ARGUMENT_ERROR
    assert db.Open("x.unknown", True) == Status.INVALID_ARGUMENT_ERROR
    assert db.Open("*", True, num_buckets="1,2") == Status.INVALID_ARGUMENT_ERROR
    assert not db.IsOpen()
    assert db.Open("*", True).IsOK()
    assert db.Open("*", True) == Status.PRECONDITION_ERROR
    assert db.Remove("absent") == Status.NOT_FOUND_ERROR
    db.Set("k", "v")
    assert db.Set("k", "w", False) == Status.DUPLICATION_ERROR
    assert db.CompareExchange("k", "x", "y") == Status.INFEASIBLE_ERROR
    assert db.MakeIterator().Last() == Status.NOT_IMPLEMENTED_ERROR
    assert db.Close().IsOK()
    ro = DBM()
    path = str(tmp_path / "ro.tkh")
    DBM(path, True).Close()
    assert ro.Open(path, False).IsOK()
    assert ro.Set("k", "v") == Status.PRECONDITION_ERROR


def test_utility():
    assert Utility.INT64MAX == 2**63 - 1 and Utility.UINT32MAX == 2**32 - 1
    assert Utility.INT64MIN == -(2**63) and Utility.VERSION.count(".") == 2
    before = Utility.GetMemoryUsage()
    assert 0 < before < Utility.GetMemoryCapacity()
    block = bytearray(64 << 20)
    block[::4096] = b"x" * len(block[::4096])  # touch every page
    assert Utility.GetMemoryUsage() >= before + (60 << 20)
    assert Utility.EditDistanceLev("kitten", "sitting") == 3
    assert Utility.EditDistanceLev("日本", "日本語") == 1


def test_utility_is_tkrzws():
    assert Utility.PAGE_SIZE >= 4096 and Utility.PAGE_SIZE & (Utility.PAGE_SIZE - 1) == 0
    assert Utility.INT32MIN == -(2**31) and Utility.INT32MAX == 2**31 - 1
    assert Utility.UINT64MAX == 2**64 - 1
    # Tkrzw's own figures for "abc".
    assert Utility.PrimaryHash("abc") == 16973900370012003622
    assert Utility.PrimaryHash(b"abc", (1 << 32) - 1) == 3042090208
    assert Utility.SecondaryHash("abc") == 1765794342254572867
    assert Utility.SecondaryHash("abc", (1 << 32) - 1) == 702176507
    assert Utility.SerializeInt(-123456) == (-123456).to_bytes(8, "big", signed=True)
    assert Utility.DeserializeInt(Utility.SerializeInt(-123456)) == -123456
    assert Utility.DeserializeInt(b"\x01\x00") == 256
    seq = Utility.SerializeFloat(-123.456)
    assert len(seq) == 8 and Utility.DeserializeFloat(seq) == -123.456
    assert Utility.EditDistanceLev("", "") == 0 and Utility.EditDistanceLev("あいう", "あう") == 1
    if sys.platform.startswith("linux"):
        assert Utility.OS_NAME == "Linux"
