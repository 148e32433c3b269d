"""One open DBM shared by threads: no lost writes, atomic read-modify-write
calls, and iterators and maintenance running beside writers."""
import threading

from memstored import DBM, Status

THREADS = 4


def run_threads(target, n=THREADS):
    errors = []

    def wrap(t):
        try:
            target(t)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    ths = [threading.Thread(target=wrap, args=(t,)) for t in range(n)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert errors == []


def test_parallel_sets_and_gets_lose_nothing(db):
    per = 5000

    def work(t):
        for i in range(per):
            k = "%d-%05d" % (t, i)
            assert db.Set(k, k) == Status.SUCCESS
        for i in range(per):
            k = "%d-%05d" % (t, i)
            assert db.GetStr(k) == k

    run_threads(work)
    assert db.Count() == THREADS * per


def test_increment_is_atomic(db):
    run_threads(lambda t: [db.Increment("counter", 1) for _ in range(2000)])
    assert db.Get("counter") == str(THREADS * 2000).encode()


def test_compare_exchange_transfers_keep_the_total(db):
    db.SetMulti(alice="4000", bob="0")

    def transfer(t):
        done = 0
        while done < 200:
            a, b = db.GetStr("alice"), db.GetStr("bob")
            st = db.CompareExchangeMulti([("alice", a), ("bob", b)],
                                         [("alice", str(int(a) - 1)), ("bob", str(int(b) + 1))])
            if st == Status.SUCCESS:
                done += 1
            else:
                assert st == Status.INFEASIBLE_ERROR

    run_threads(transfer)
    assert db.GetStr("alice") == str(4000 - THREADS * 200)
    assert db.GetStr("bob") == str(THREADS * 200)


def test_iteration_and_rebuild_beside_writers(db):
    for i in range(3000):
        db.Set("base%05d" % i, "x" * 50)

    def work(t):
        if t == 0:
            for _ in range(3):
                assert sum(1 for k, _ in db if k.startswith(b"base")) == 3000
        elif t == 1:
            for _ in range(3):
                assert db.Rebuild() == Status.SUCCESS
                assert db.Synchronize(False) == Status.SUCCESS
        else:
            for i in range(3000):
                db.Set("w%d-%05d" % (t, i), "y")
                db.Remove("w%d-%05d" % (t, i))

    run_threads(work)
    assert db.Count() == 3000


def test_close_waits_for_calls_and_later_calls_report_it(tmp_path):
    db = DBM(str(tmp_path / "c.tkh"), True)
    writing = threading.Barrier(4)
    seen = []

    def writer(t):
        st = db.Set("k%d" % t, "v")
        seen.append(st.GetCode())
        writing.wait()
        # Large values release the GIL, so Close runs while these are under way.
        while st == Status.SUCCESS:
            st = db.Set("k%d" % t, "v" * 100000)
            seen.append(st.GetCode())

    ths = [threading.Thread(target=writer, args=(t,)) for t in range(3)]
    for th in ths:
        th.start()
    writing.wait(timeout=30)
    assert db.Close() == Status.SUCCESS
    for th in ths:
        th.join(timeout=30)
        assert not th.is_alive()
    assert set(seen) == {Status.SUCCESS, Status.PRECONDITION_ERROR}
    assert seen.count(Status.PRECONDITION_ERROR) == 3


def test_one_iterator_shared_by_threads_hands_out_each_record_once(db):
    for i in range(2000):
        db.Set("%05d" % i, "v")
    it = db.MakeIterator()
    assert it.First() == Status.SUCCESS
    got = [[] for _ in range(THREADS)]

    def take(t):
        while (rec := it.Step()) is not None:
            got[t].append(rec[0])

    run_threads(take)
    everything = [k for part in got for k in part]
    assert sorted(everything) == [b"%05d" % i for i in range(2000)]
