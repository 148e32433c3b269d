import pytest

from conftest import is_ordered
from memstored import DBM, Status, StatusException

KEYS = ["%03d" % i for i in range(50)]


@pytest.fixture
def filled(db):
    for k in KEYS:
        db.Set(k, "v" + k)
    return db


def test_walk_visits_every_record(filled):
    it = filled.MakeIterator()
    assert it.First() == Status.SUCCESS
    seen = []
    while True:
        rec = it.Get()
        if rec is None:
            break
        seen.append(rec)
        assert it.Next() == Status.SUCCESS
    assert sorted(seen) == [(k.encode(), ("v" + k).encode()) for k in KEYS]
    st = Status()
    assert it.Get(st) is None and st == Status.NOT_FOUND_ERROR
    assert it.Next() == Status.NOT_FOUND_ERROR


def test_ordered_moves(filled, name):
    if not is_ordered(name):
        it = filled.MakeIterator()
        assert it.Last() == Status.NOT_IMPLEMENTED_ERROR
        assert it.JumpUpper("010") == Status.NOT_IMPLEMENTED_ERROR
        assert it.Jump("010") == Status.SUCCESS and it.GetKeyStr() == "010"
        assert it.Jump("nope") == Status.NOT_FOUND_ERROR
        return
    it = filled.MakeIterator()
    assert it.First().IsOK() and it.GetKey() == b"000"
    assert it.Last().IsOK() and it.GetKeyStr() == "049"
    assert it.Previous().IsOK() and it.GetValueStr() == "v048"
    assert it.Jump("0105").IsOK() and it.GetKey() == b"011"
    assert it.JumpLower("010").IsOK() and it.GetKey() == b"009"
    assert it.JumpLower("010", True).IsOK() and it.GetKey() == b"010"
    assert it.JumpUpper("010").IsOK() and it.GetKey() == b"011"
    assert it.JumpUpper("010", True).IsOK() and it.GetValue() == b"v010"
    assert it.GetStr() == ("010", "v010")
    assert it.JumpUpper("999").IsOK() and it.Get() is None
    assert repr(it) == '<memstored.Iterator: key="(unlocated)">'


def test_set_remove_and_step(filled):
    it = filled.MakeIterator()
    it.First()
    key = it.GetKeyStr()
    assert it.Set("changed") == Status.SUCCESS
    assert filled.GetStr(key) == "changed"
    assert it.Remove() == Status.SUCCESS
    assert key not in filled and it.GetKeyStr() != key
    assert filled.Count() == len(KEYS) - 1
    it.First()
    steps = []
    while (rec := it.Step()) is not None:
        steps.append(rec)
    assert len(steps) == len(KEYS) - 1
    st = Status()
    assert it.Step(st) is None and st == Status.NOT_FOUND_ERROR
    it.First()
    k, v = it.StepStr()
    assert isinstance(k, str) and v == filled.GetStr(k)


def test_python_iteration(filled):
    assert len(list(filled)) == len(KEYS)
    it = filled.MakeIterator()
    it.First()
    assert iter(it) is it and len(list(it)) == len(KEYS)
    assert list(filled.MakeIterator()) == []  # not positioned yet


def test_iterator_of_a_closed_database_answers_precondition_error(filled):
    it = filled.MakeIterator()
    it.First()
    filled.Close()
    st = Status()
    assert it.Get(st) is None and st == Status.PRECONDITION_ERROR
    for move in (it.First, it.Next, lambda: it.Jump("000")):
        assert move() == Status.PRECONDITION_ERROR
    with pytest.raises(StatusException):
        next(it)
    assert "unlocated" in repr(it)


def test_iterator_needs_open_database():
    with pytest.raises(StatusException):
        DBM().MakeIterator()
    with pytest.raises(StatusException):
        iter(DBM())
