"""Process, ProcessMulti and ProcessEach: a Python function per record."""

import threading

from memstored import DBM, Status


def test_process_results_keep_remove_or_store(db):
    assert db.Process("abc", lambda k, v: None, True) == Status.SUCCESS
    assert db.Process("abc", lambda k, v: False, True) == Status.SUCCESS
    assert db.GetStr("abc") is None
    assert db.Process("abc", lambda k, v: "ABCDE", True) == Status.SUCCESS
    seen = []
    assert db.Process("abc", lambda k, v: seen.append((k, v)), False).IsOK()
    assert seen == [(b"abc", b"ABCDE")]
    assert db.Process("abc", lambda k, v: "ignored", False).IsOK()
    assert db.GetStr("abc") == "ABCDE"
    for i in range(5):
        assert db.Process(i, lambda k, v: i * i, True).IsOK()
    assert db.GetStr("3") == "9"


def test_process_each_visits_every_record_between_two_empty_calls(db):
    for i in range(10):
        db.Set(str(i), str(i * i))
    calls = []
    assert db.ProcessEach(lambda k, v: calls.append((k, v)), False).IsOK()
    assert calls[0] == (None, None) and calls[-1] == (None, None)
    assert sorted(calls[1:-1]) == sorted((str(i).encode(), str(i * i).encode()) for i in range(10))
    assert db.ProcessEach(lambda k, v: k and int(int(v) ** 0.5), True).IsOK()
    assert db.GetStr("9") == "9"
    assert db.ProcessEach(lambda k, v: False if k else None, True).IsOK()
    assert db.Count() == 0


def test_process_multi_chains_functions_of_a_key_and_stores_at_once(db):
    db.SetMulti(one="x", two="y")
    ops = [
        ("one", lambda k, v: False),
        ("three", lambda k, v: v.decode() * 2 if v else "jump"),
        ("three", lambda k, v: v.decode() * 2 if v else "x"),
        ("two", lambda k, v: None),
    ]
    assert db.ProcessMulti(ops, True) == Status.SUCCESS
    assert db.GetMultiStr("one", "two", "three") == {"two": "y", "three": "jumpjump"}


def test_exceptions_of_the_function_propagate(db):
    def boom(k, v):
        raise ValueError("boom")
    for call in (lambda: db.Process("k", boom, True), lambda: db.ProcessMulti([("k", boom)], True)):
        try:
            call()
        except ValueError:
            pass
        else:
            raise AssertionError("no exception")
    db.Set("k", "v")
    try:
        db.ProcessEach(lambda k, v: boom(k, v) if k else None, True)
    except ValueError:
        pass
    else:
        raise AssertionError("no exception")


def test_process_counts_exactly_under_threads_with_plain_sets():
    # Process's function runs outside the engine's locks: threads doing
    # plain Sets meanwhile must neither deadlock nor lose an increment.
    db = DBM()
    assert db.Open("*", True, num_shards=1).IsOK()
    db.Set("n", "0")
    def incr():
        for _ in range(300):
            assert db.Process("n", lambda k, v: int(v) + 1, True).IsOK()
    def setter():
        for i in range(3000):
            db.Set("other%d" % (i % 7), str(i))
    threads = [threading.Thread(target=incr) for _ in range(3)] + [threading.Thread(target=setter)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive()
    assert db.GetStr("n") == "900"
