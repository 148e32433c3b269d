#!/usr/bin/env python3
"""Set then get `%08d` keys from 1 and 4 threads on one database, as seed
004's table does, and print each phase's operations per second.

  python3 bindings/python/bench/gil.py [--records N] [--path NAME]

Used to choose which calls release the GIL: run it before and after a change.
"""
import argparse
import threading
import time

import memstored


def run(db, threads, per_thread, op):
    def work(t):
        base = t * per_thread
        for i in range(base, base + per_thread):
            op(db, "%08d" % i)

    ths = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    start = time.perf_counter()
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    return threads * per_thread / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--path", default="*")
    args = ap.parse_args()
    for threads in (1, 4):
        db = memstored.DBM()
        db.Open(args.path, True, truncate=True, num_buckets=args.records * 2).OrDie()
        per = args.records // threads
        set_qps = run(db, threads, per, lambda d, k: d.Set(k, k))
        get_qps = run(db, threads, per, lambda d, k: d.Get(k))
        assert db.Count() == per * threads
        db.Close().OrDie()
        print(f"threads={threads} set={set_qps:,.0f}/s get={get_qps:,.0f}/s")


if __name__ == "__main__":
    main()
