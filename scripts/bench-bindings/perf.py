#!/usr/bin/env python3
"""Seed 004's measurement in Python, the same loop as perf.c and perf.rb:
N records with keys and values "%08d", set then get, by T threads (thread t
takes every T-th index). Runs on memstored's module, or with --tkrzw on
tkrzw-python (the same API, which is the point: only the import differs).

  python3 scripts/bench-bindings/perf.py [--tkrzw] PATH PARAMS N THREADS

PARAMS is "k=v,k=v" (Open's keyword arguments). Prints "set QPS", "get QPS"
and the max RSS in KiB, one per line, as the other perf programs do.
"""
import resource
import sys
import threading
import time


def phase(n, threads, op):
    """Runs op(key) for every index by `threads` threads; returns QPS."""
    failures = [0] * threads

    def work(t):
        bad = 0
        for i in range(t, n, threads):
            if not op("%08d" % i):
                bad += 1
        failures[t] = bad

    ths = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    start = time.perf_counter()
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    elapsed = time.perf_counter() - start
    if sum(failures):
        sys.exit(f"{sum(failures)} failed calls")
    return n / elapsed


def main():
    args = sys.argv[1:]
    use_tkrzw = "--tkrzw" in args
    if use_tkrzw:
        args.remove("--tkrzw")
        import tkrzw as lib
    else:
        import memstored as lib
    if len(args) != 4:
        sys.exit("usage: perf.py [--tkrzw] PATH PARAMS N THREADS")
    path, params, n, threads = args[0], args[1], int(args[2]), int(args[3])
    open_params = dict(kv.split("=", 1) for kv in params.split(",") if kv)

    dbm = lib.DBM()
    dbm.Open(path, True, **open_params).OrDie()
    set_qps = phase(n, threads, lambda key: dbm.Set(key, key).IsOK())
    get_qps = phase(n, threads, lambda key: dbm.Get(key) is not None)
    if dbm.Count() != n:
        sys.exit(f"count {dbm.Count()}, want {n}")
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    dbm.Close().OrDie()
    print(f"set {set_qps:.0f}\nget {get_qps:.0f}\nrss_kib {rss_kib}")


if __name__ == "__main__":
    main()
