#!/usr/bin/env python3
"""The TLS rows' client (scripts/bench-server.sh, TLS=1): memcaslap's mix
(90% get, 10% set of 100-byte values over 10,000 keys) from CONNS processes,
one connection each and one request in flight, over TLS (--cafile) or
plaintext, for SECS seconds. The same client for memstored and memcached,
so the servers' CPU per request compare; it is Python, so the servers are
far from saturated (what is measured is server CPU per request, not peak
throughput).

  tls_load.py load  --port P [--cafile CA] [--conns 8] [--secs 10]
      prints "requests N tps T"
  tls_load.py stats --port P [--cafile CA]
      prints cmd_get+cmd_set of the server
"""

import argparse
import multiprocessing
import random
import socket
import ssl
import time

KEYS = 10000
VALUE = b"v" * 100


def connect(port, cafile):
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    if not cafile:
        return sock
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.check_hostname = False
    return ctx.wrap_socket(sock)


def until(sock, ends):
    buf = b""
    while not buf.endswith(ends):
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed after {buf[-80:]!r}")
        buf += chunk
    return buf


def worker(port, cafile, secs, seed, out):
    rng = random.Random(seed)
    sock = connect(port, cafile)
    done = 0
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        key = b"key%d" % rng.randrange(KEYS)
        if rng.random() < 0.1:
            sock.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(VALUE), VALUE))
            until(sock, b"\r\n")
        else:
            sock.sendall(b"get %s\r\n" % key)
            until(sock, b"END\r\n")
        done += 1
    sock.close()
    out.put(done)


def load(args):
    out = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=worker, args=(args.port, args.cafile, args.secs, i, out))
             for i in range(args.conns)]
    started = time.monotonic()
    for p in procs:
        p.start()
    total = sum(out.get() for _ in procs)
    for p in procs:
        p.join()
    took = time.monotonic() - started
    print(f"requests {total} tps {int(total / took)}")


def stats(args):
    with connect(args.port, args.cafile) as sock:
        sock.sendall(b"stats\r\n")
        reply = until(sock, b"END\r\n").decode()
    served = 0
    for line in reply.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("cmd_get", "cmd_set"):
            served += int(parts[2])
    print(served)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["load", "stats"])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--cafile")
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--secs", type=float, default=10)
    args = ap.parse_args()
    (load if args.mode == "load" else stats)(args)


if __name__ == "__main__":
    main()
