#!/usr/bin/env python3
"""The cache section of the engine benchmark (issue 16): memstored's
`*#capsiz=` cache against memcached under the same memory limit, with the
same client (this script), alternating the two servers.

Three measurements, each on fresh servers:

- fill: pipelined `set ... noreply` of 16-byte keys and 100-byte values,
  twice as many as the limit could hold, then `curr_items`, `evictions` and
  the server's RSS (VmRSS), for `-m 64` and `-m 1024`;
- per item: 1M items into a limit they fit in (1024 MiB), RSS / 1M;
- hit ratio: a cache-aside loop (multi-get 500 keys, `set` each miss) on
  Zipf(0.99)-distributed keys over 10x more keys than memcached kept at
  `-m 64`, warmed with WARM requests, then counted over COUNT requests.

Writes docs/bench/cache.md and docs/bench/cache.tsv (then cache.png with
scripts/plot_cache.py).

    BIN_DIR=target/release scripts/bench-cache.py [RUNS]

`policy` measures which items the caches keep (issue 45; `policy_main`):
hit ratios on Zipf(0.99), scan-then-reuse and churn request streams
(scripts/cache_sim.py) replayed on both servers at `-m 64`, beside LRU and
S3-FIFO simulated on the same streams; and memcslap's churn run on a warm
512 MiB server. Writes docs/bench/cache-policy.tsv (then
scripts/plot_cache_policy.py draws cache-policy.png).

    BIN_DIR=target/release scripts/bench-cache.py policy
    SCALE=3 STREAMS="Zipf(0.99)" MEMCSLAP=0 OUT_DIR=/tmp/x BIN_DIR=... scripts/bench-cache.py policy
      (the streams over 3x the keys; only the Zipf stream; no memcslap run)
"""
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import numpy as np
except ImportError:  # a fresh machine: the Zipf sampler needs it
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "numpy"], check=True)
    import numpy as np

ROOT = Path(__file__).resolve().parent.parent
POLICY = len(sys.argv) > 1 and sys.argv[1] == "policy"
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 and not POLICY else 3
WARM = int(os.environ.get("WARM", 2_000_000))
COUNT = int(os.environ.get("COUNT", 2_000_000))
KEY_LEN, VALUE_LEN = 16, 100
VALUE = b"v" * VALUE_LEN
OUT = Path(os.environ.get("OUT_DIR", ROOT / "docs" / "bench"))
# The -m limits of the fill rows (a smoke run may pass smaller ones); the
# first is also the hit-ratio limit, the last the per-item one.
LIMITS = [int(x) for x in os.environ.get("LIMITS", "64 1024").split()]
PER_ITEM = int(os.environ.get("PER_ITEM", 1_000_000))
# Appended to memstored's `*#capsiz=Lm` (e.g. `,cache_kind=clock` to measure the
# other cache).
STORE_PARAMS = os.environ.get("STORE_PARAMS", "")


def key(i):
    """16 bytes; rank i scattered over 10^12 names (a bijection, since the
    multiplier is prime), so hot keys are not the first ones set."""
    return b"key:%012d" % ((i * 2654435761) % 10**12)


class Server:
    def __init__(self, side, limit_mb):
        self.side = side
        self.work = tempfile.mkdtemp(prefix="bench-cache-")
        port_file = os.path.join(self.work, "port")
        env = dict(os.environ)
        # Both refuse to run as root without -u; the user running this is both.
        user = pwd.getpwuid(os.geteuid()).pw_name
        if side == "memstored":
            exe = os.path.join(os.environ.get("BIN_DIR", ROOT / "target" / "release"), "memstored")
            args = [exe, "-u", user, "-s", f"*#capsiz={limit_mb}m{STORE_PARAMS}", "-l", "127.0.0.1:0",
                    "--port-file", port_file]
        else:
            args = ["memcached", "-l", "127.0.0.1", "-p", "-1", "-U", "0",
                    "-m", str(limit_mb), "-u", user]
            env["MEMCACHED_PORT_FILENAME"] = port_file
        self.proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            text = Path(port_file).read_text() if os.path.exists(port_file) else ""
            ports = [l.rsplit(":", 1)[-1].strip() for l in text.splitlines()
                     if l.startswith("TCP INET:") or l.strip().isdigit()]
            if ports and ports[0].isdigit():
                self.port = int(ports[0])
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{side} did not start: {args}")
            time.sleep(0.02)  # the servers offer nothing to block on
        # A stalled exchange fails the run instead of hanging it (memcached
        # once stopped reading a pipelined batch of sets here).
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        # A batch of noreply sets followed by a get otherwise waits for the
        # server's delayed ACK (~30 ms a batch, both servers alike).
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def stop(self):
        self.sock.close()
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.work, ignore_errors=True)

    def rss_mb(self):
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def read_until(self, end):
        while not self.buf.endswith(end):
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise SystemExit(f"{self.side} closed the connection")
            self.buf += chunk
        out, self.buf = self.buf, b""
        return out

    def stats(self):
        self.sock.sendall(b"stats\r\n")
        out = {}
        for line in self.read_until(b"END\r\n").split(b"\r\n"):
            parts = line.split(b" ")
            if len(parts) == 3 and parts[0] == b"STAT":
                out[parts[1].decode()] = parts[2].decode()
        return out

    def set_many(self, keys):
        self.sock.sendall(b"".join(b"set %s 0 0 %d noreply\r\n%s\r\n" % (k, VALUE_LEN, VALUE)
                                   for k in keys))

    def sync(self):
        """Waits until every pipelined `noreply` before it is done."""
        self.sock.sendall(b"version\r\n")
        self.read_until(b"\r\n")

    def get_many(self, keys):
        """The subset of `keys` that hit."""
        self.sock.sendall(b"get " + b" ".join(keys) + b"\r\n")
        reply = self.read_until(b"END\r\n")
        hits, at = set(), 0
        while True:
            at = reply.find(b"VALUE ", at)
            if at < 0:
                return hits
            end = reply.index(b" ", at + 6)
            hits.add(reply[at + 6:end])
            at = end


def fill(side, limit_mb, n):
    s = Server(side, limit_mb)
    try:
        for start in range(0, n, 1000):
            s.set_many(key(i) for i in range(start, min(n, start + 1000)))
        s.sync()
        st = s.stats()
        return {"items": int(st.get("curr_items", 0)), "evictions": int(st.get("evictions", 0)),
                "rss_mb": s.rss_mb()}
    finally:
        s.stop()


def zipf_ranks(universe, n, seed):
    weights = 1.0 / np.arange(1, universe + 1, dtype=np.float64) ** 0.99
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    return np.searchsorted(cdf, np.random.default_rng(seed).random(n))


def hit_ratio(side, limit_mb, ranks):
    s = Server(side, limit_mb)
    try:
        hits = gets = 0
        for start in range(0, len(ranks), 500):
            batch = [key(int(r)) for r in ranks[start:start + 500]]
            got = s.get_many(batch)
            misses = [k for k in dict.fromkeys(batch) if k not in got]
            s.set_many(misses)
            if start >= WARM:
                gets += len(batch)
                hits += sum(1 for k in batch if k in got)
        s.sync()
        return hits / gets
    finally:
        s.stop()


def retried(what, f, *args):
    """`f(*args)`, tried again (on fresh servers) if an exchange times out."""
    for attempt in range(3):
        try:
            return f(*args)
        except socket.timeout:
            print(f"{what}: timed out (attempt {attempt + 1}); again", file=sys.stderr)
    raise SystemExit(f"{what}: timed out three times")


def median(xs):
    return sorted(xs)[len(xs) // 2]


def main():
    rows = []  # (measurement, side, value)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = os.getloadavg()[0]
    kept = {}
    for limit in LIMITS:
        n = limit * 2 * (1 << 20) // (KEY_LEN + VALUE_LEN)
        res = {"memcached": [], "memstored": []}
        for _ in range(RUNS):
            for side in ("memcached", "memstored"):
                print(f"fill {side} -m {limit} with {n} items", file=sys.stderr)
                res[side].append(retried(f"fill {side}", fill, side, limit, n))
        for side, rs in res.items():
            items = median([r["items"] for r in rs])
            rss = median([r["rss_mb"] for r in rs])
            rows.append((f"fill -m {limit}: items kept", side, items))
            rows.append((f"fill -m {limit}: RSS MiB", side, round(rss, 1)))
            rows.append((f"fill -m {limit}: RSS bytes per item kept", side,
                         round(rss * (1 << 20) / max(items, 1), 1)))
            kept[(limit, side)] = items
        write_report(rows, started, load, 0)  # partial, in case a later step fails
    per = {"memcached": [], "memstored": []}
    for _ in range(RUNS):
        for side in per:
            print(f"{PER_ITEM} items into {side} -m {LIMITS[-1]}", file=sys.stderr)
            per[side].append(retried(f"fill {side}", fill, side, LIMITS[-1], PER_ITEM)["rss_mb"])
    for side, rs in per.items():
        rows.append((f"{PER_ITEM:,} items (-m {LIMITS[-1]}): RSS bytes per item", side,
                     round(median(rs) * (1 << 20) / PER_ITEM, 1)))
    universe = 10 * kept[(LIMITS[0], "memcached")]
    ranks = zipf_ranks(universe, WARM + COUNT, seed=16)
    ratios = {"memcached": [], "memstored": []}
    for _ in range(RUNS):
        for side in ratios:
            print(f"zipf on {side} -m {LIMITS[0]} over {universe} keys", file=sys.stderr)
            ratios[side].append(retried(f"zipf {side}", hit_ratio, side, LIMITS[0], ranks))
    for side, rs in ratios.items():
        rows.append((f"Zipf(0.99) hit ratio, -m {LIMITS[0]}, {universe:,} keys", side,
                     round(median(rs), 4)))
    write_report(rows, started, load, universe)


def write_report(rows, started, load, universe):
    OUT.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    with open(OUT / "cache.tsv", "w") as f:
        f.write(f"# commit {commit}, {started}, 1-minute load {load:.1f} at start\n")
        f.write("measurement\tside\tvalue\n")
        for m, side, v in rows:
            f.write(f"{m}\t{side}\t{v}\n")
    by = {}
    for m, side, v in rows:
        by.setdefault(m, {})[side] = v
    lines = [
        "# Cache: memstored `*#capsiz=` vs memcached under the same limit",
        "",
        f"Measured {started} at commit {commit} (1-minute load {load:.1f} at start), "
        f"median of {RUNS} runs alternating the servers, by `scripts/bench-cache.py` "
        "(run by `scripts/bench-engine.sh`; the exact command is below). Keys are 16 bytes, "
        "values 100 bytes; memstored runs `-s '*#capsiz=Lm{STORE_PARAMS}'`, memcached `-m L -U 0`.",
        "",
        "| measurement | memstored | memcached | ratio |",
        "|---|---:|---:|---:|",
    ]
    for m, v in by.items():
        a, b = v.get("memstored", 0), v.get("memcached", 0)
        ratio = f"{a / b:.2f}x" if b else "-"
        lines.append(f"| {m} | {a:,} | {b:,} | {ratio} |")
    lines += [
        "",
        "![items kept, bytes per item and hit ratio](cache.png)",
        "",
        "Goals (issue 16): at most 140 bytes of RSS per item with 1M items; at least 1.2x the items "
        "memcached keeps under the same `-m`; a hit ratio at least memcached's on the Zipf workload.",
        "",
        "```sh",
        "BIN_DIR=target/release python3 scripts/bench-cache.py 3",
        "python3 scripts/plot_cache.py",
        "```",
        "",
    ]
    notes = OUT / "cache-notes.md"
    if notes.exists():
        lines.append(notes.read_text())
    (OUT / "cache.md").write_text("\n".join(lines))
    print("\n".join(lines))


def replay(side, limit_mb, stream, count_from, s=None):
    """Hit ratio of `stream`'s gets from index `count_from` on (a get that
    misses is followed by a set, after its batch), on a fresh server, and the
    items it holds at the end. A key twice in one batch of gets counts for
    its second get what its first got, so the ratio is what one get at a
    time would have seen."""
    own = s is None
    s = s or Server(side, limit_mb)
    try:
        hits = gets = i = 0
        while i < len(stream):
            op = stream[i][0]
            j = i
            while j < len(stream) and j - i < 500 and stream[j][0] == op:
                j += 1
            batch = [key(k) for _, k in stream[i:j]]
            if op == "s":
                s.set_many(batch)
            else:
                got = s.get_many(batch)
                seen = set()
                for n, k in enumerate(batch):
                    if i + n >= count_from:
                        gets += 1
                        hits += k in got or k in seen
                    seen.add(k)
                s.set_many([k for k in dict.fromkeys(batch) if k not in got])
            i = j
        s.sync()
        return hits / max(gets, 1), int(s.stats().get("curr_items", 0))
    finally:
        if own:
            s.stop()


def memcslap_churn(side, rounds):
    """memcslap's get test (100,000 fresh keys a run, read back) at
    concurrency 1, 2, 4, 8, `rounds` times on one 512 MiB server: the gets
    each run missed."""
    s = Server(side, 512)
    try:
        out, before = [], 0
        for r in range(rounds):
            for c in (1, 2, 4, 8):
                subprocess.run(["memcslap", f"--servers=127.0.0.1:{s.port}", "--test=get",
                                "--execute-number=100000", "--binary", f"--concurrency={c}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=False, timeout=900)
                misses = int(s.stats()["get_misses"])
                out.append((r + 1, c, misses - before))
                before = misses
        return out
    finally:
        s.stop()


def policy_main():
    sys.path.insert(0, str(ROOT / "scripts"))
    import cache_sim

    rows = []  # (workload, cache, hit ratio or misses)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    limit = LIMITS[0]
    n = limit * 2 * (1 << 20) // (KEY_LEN + VALUE_LEN)
    held = fill("memcached", limit, n)["items"]
    print(f"memcached -m {limit} holds {held} items", file=sys.stderr)
    scale = float(os.environ.get("SCALE", 1))
    c = int(held * scale)
    streams = {
        # Over twice as many keys as memcached holds, so that the caches are
        # full and evicting long before the counted requests.
        # (made when run: each is millions of requests)
        "Zipf(0.99)": (lambda: cache_sim.zipf(2 * c, WARM + COUNT), WARM),
        "scan-then-reuse": (lambda: cache_sim.scan_reuse(c // 2, c, 2 * c, 4), 2 * c),
        "churn": (lambda: cache_sim.churn(c // 2, 2), 15 * c),
    }
    # STREAMS="Zipf(0.99)" (names as above, space-separated) runs only those;
    # MEMCSLAP=0 leaves out the memcslap churn run.
    only = os.environ.get("STREAMS", "").split()
    for name, (make, warm) in streams.items():
        if only and name not in only:
            continue
        stream = make()
        items = {}
        for side in ("memcached", "memstored"):
            print(f"{name} on {side} -m {limit}: {len(stream)} requests", file=sys.stderr)
            ratio, items[side] = retried(f"{name} {side}", replay, side, limit, stream, warm)
            rows.append((name, side, round(ratio, 4)))
            rows.append((name, f"{side} items", items[side]))
        for kind in ("LRU", "S3FIFO"):
            # As many items as memstored held (the policy at the same size);
            # SIM_AT="memstored memcached" adds memcached's size.
            for at in os.environ.get("SIM_AT", "memstored").split():
                ratio, sim = cache_sim.simulate(kind, items[at], stream, warm)
                rows.append((name, f"{kind} ({sim}) at {at}'s items", round(ratio, 4)))
        write_policy(rows, started)
    for side in ("memcached", "memstored") if os.environ.get("MEMCSLAP", "1") != "0" else ():
        print(f"memcslap churn on {side}", file=sys.stderr)
        for r, conc, misses in memcslap_churn(side, 2):
            rows.append((f"memcslap round {r} concurrency {conc}: misses", side, misses))
        write_policy(rows, started)


def write_policy(rows, started):
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "cache-policy.tsv", "w") as f:
        f.write(f"# commit {commit}, {started}\n")
        f.write("workload\tcache\tvalue\n")
        for w, side, v in rows:
            f.write(f"{w}\t{side}\t{v}\n")
    for w, side, v in rows:
        print(f"{w}\t{side}\t{v}")


if __name__ == "__main__":
    policy_main() if POLICY else main()
