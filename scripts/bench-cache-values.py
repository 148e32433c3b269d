#!/usr/bin/env python3
"""Items kept under `-m 64` by value size: memstored's `*#capsiz=64m`
against memcached `-m 64`, the same fill as scripts/bench-cache.py's (16-byte
keys, pipelined `set ... noreply`, twice what the limit holds), for values
of SIZES bytes (values of 1 KiB or more are kept aside of the cache's
segments: docs/format.md). The two servers alternate, a fresh one per run;
prints the median of RUNS runs as a Markdown table, and writes it to
docs/bench/cache-values.tsv (scripts/plot_cache_policy.py draws it).

    BIN_DIR=target/release scripts/bench-cache-values.py [RUNS]
"""
import importlib.util
import os
import sys
from pathlib import Path

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
SIZES = [int(s) for s in os.environ.get("SIZES", "100 1500 4096 100000").split()]
LIMIT = 64

spec = importlib.util.spec_from_file_location(
    "bench_cache", Path(__file__).resolve().parent / "bench-cache.py")
bc = importlib.util.module_from_spec(spec)
sys.argv = sys.argv[:1]  # bench-cache.py reads its own RUNS from argv
spec.loader.exec_module(bc)


def main():
    print("| value bytes | memstored items | memcached items | ratio | memstored RSS MiB | memcached RSS MiB |")
    print("|---:|---:|---:|---:|---:|---:|")
    bc.OUT.mkdir(parents=True, exist_ok=True)
    tsv = open(bc.OUT / "cache-values.tsv", "w")
    tsv.write("value bytes\tmemstored items\tmemcached items\n")
    for size in SIZES:
        bc.VALUE_LEN, bc.VALUE = size, b"v" * size
        n = LIMIT * 2 * (1 << 20) // (bc.KEY_LEN + size)
        res = {"memstored": [], "memcached": []}
        for _ in range(RUNS):
            for side in ("memcached", "memstored"):
                print(f"fill {side} -m {LIMIT} with {n} values of {size} bytes", file=sys.stderr)
                res[side].append(bc.retried(f"fill {side}", bc.fill, side, LIMIT, n))
        items = {s: bc.median([r["items"] for r in rs]) for s, rs in res.items()}
        rss = {s: bc.median([r["rss_mb"] for r in rs]) for s, rs in res.items()}
        print(f"| {size:,} | {items['memstored']:,} | {items['memcached']:,} | "
              f"{items['memstored'] / max(items['memcached'], 1):.2f}x | "
              f"{rss['memstored']:.1f} | {rss['memcached']:.1f} |", flush=True)
        tsv.write(f"{size}\t{items['memstored']}\t{items['memcached']}\n")
        tsv.flush()


if __name__ == "__main__":
    main()
