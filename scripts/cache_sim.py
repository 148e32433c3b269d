"""Request streams for the cache-policy benchmark (scripts/bench-cache.py
policy) and LRU and S3-FIFO simulated on them, with libCacheSim's Python
package when it is installed (`pip install libcachesim`), else with the
small simulators below (the same algorithms: LRU; S3-FIFO with a 10% small
FIFO, a main FIFO with 2-bit frequencies and a ghost of main's size).

A stream is a list of (op, key): "g" a get that, on a miss, the client
follows with a set (cache-aside), "s" a set. Hits count gets only.
"""
import random
from collections import OrderedDict

try:
    import libcachesim as lcs
except ImportError:  # the fallback below
    lcs = None


def zipf(universe, n, seed=16):
    import numpy as np

    weights = 1.0 / np.arange(1, universe + 1, dtype=np.float64) ** 0.99
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    ranks = np.searchsorted(cdf, np.random.default_rng(seed).random(n))
    return [("g", int(r)) for r in ranks]


def scan_reuse(working, scan, reuse, cycles, seed=45):
    """`cycles` times: `reuse` gets spread evenly over a working set of
    `working` keys, then one get each of `scan` keys never seen before."""
    rng, out, fresh = random.Random(seed), [], 1 << 40
    for _ in range(cycles):
        out += [("g", rng.randrange(working)) for _ in range(reuse)]
        out += [("g", fresh + i) for i in range(scan)]
        fresh += scan
    return out


def churn(n, rounds, concurrency=(1, 2, 4, 8), seed=45):
    """memcslap's get test run again and again: each run sets `n` fresh
    keys, then reads random ones of them, `c * n` gets for concurrency c."""
    rng, out, fresh = random.Random(seed), [], 2 << 40
    for _ in range(rounds):
        for c in concurrency:
            out += [("s", fresh + i) for i in range(n)]
            out += [("g", fresh + rng.randrange(n)) for _ in range(c * n)]
            fresh += n
    return out


class Lru:
    def __init__(self, size):
        self.size, self.d = size, OrderedDict()

    def access(self, k):
        if k in self.d:
            self.d.move_to_end(k)
            return True
        if len(self.d) >= self.size:
            self.d.popitem(last=False)
        self.d[k] = None
        return False


class S3Fifo:
    def __init__(self, size):
        self.size, self.small_size = size, max(1, size // 10)
        self.small, self.main, self.ghost = OrderedDict(), OrderedDict(), OrderedDict()

    def access(self, k):
        for q in (self.small, self.main):
            if k in q:
                q[k] = min(3, q[k] + 1)
                return True
        while len(self.small) + len(self.main) >= self.size:
            self.evict()
        if k in self.ghost:
            del self.ghost[k]
            self.main[k] = 0
        else:
            self.small[k] = 0
        return False

    def evict(self):
        if len(self.small) >= self.small_size or not self.main:
            while self.small:
                k, f = self.small.popitem(last=False)
                if f > 1:
                    self.main[k] = 0
                    continue
                self.ghost[k] = None
                if len(self.ghost) > len(self.main):
                    self.ghost.popitem(last=False)
                return
        while self.main:
            k, f = self.main.popitem(last=False)
            if not f:
                return
            self.main[k] = f - 1


class Lcs:
    """A libCacheSim cache of `size` objects (each of size 1)."""

    def __init__(self, kind, size):
        self.cache = getattr(lcs, kind)(cache_size=size)
        self.req = lcs.Request()
        self.req.obj_size = 1

    def access(self, k):
        self.req.obj_id = k
        return self.cache.get(self.req)


def simulate(kind, size, stream, count_from):
    """Hit ratio of gets from index `count_from` on for policy `kind`
    ("LRU" or "S3FIFO") holding `size` items; and which simulator ran."""
    if lcs is not None:
        cache, sim = Lcs(kind, size), "libCacheSim"
    else:
        cache, sim = (Lru if kind == "LRU" else S3Fifo)(size), "own"
    hits = gets = 0
    for i, (op, k) in enumerate(stream):
        hit = cache.access(k)
        if op == "g" and i >= count_from:
            gets += 1
            hits += hit
    return hits / max(gets, 1), sim
