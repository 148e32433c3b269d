#!/usr/bin/env python3
"""A small bulk client for profiling: set or get N records (keys %08d,
values the key, as ktremotetest's bulk test) in batches of B, over Kyoto
Tycoon's binary protocol (set_bulk 0xB8 / get_bulk 0xBA) or MessagePack-RPC
(kt-msgpack's set_bulk / get_bulk with `_key` maps), one request in flight.

Why: a server run under callgrind serves a few thousand records a second,
so the client's own speed does not matter, and this needs nothing built
(Kyoto Tycoon's ktremotetest does the same over the same wire).

  scripts/bulk-client.py --port P --proto kt-binary --phase set --bulk 100 -n 20000
"""
import argparse
import socket
import struct
import sys

import msgpack


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise SystemExit("server closed the connection")
        buf += chunk
    return bytes(buf)


def kt_set(s, keys):
    parts = [struct.pack(">BII", 0xB8, 0, len(keys))]
    for k in keys:
        parts.append(struct.pack(">HIIq", 0, len(k), len(k), (1 << 40) - 1) + k + k)
    s.sendall(b"".join(parts))
    magic, hits = struct.unpack(">BI", recv_exact(s, 5))
    if magic != 0xB8 or hits != len(keys):
        raise SystemExit(f"set_bulk: magic {magic:#x}, hits {hits}")


def kt_get(s, keys):
    parts = [struct.pack(">BII", 0xBA, 0, len(keys))]
    for k in keys:
        parts.append(struct.pack(">HI", 0, len(k)) + k)
    s.sendall(b"".join(parts))
    magic, hits = struct.unpack(">BI", recv_exact(s, 5))
    if magic != 0xBA or hits != len(keys):
        raise SystemExit(f"get_bulk: magic {magic:#x}, hits {hits}")
    for _ in range(hits):
        _, ksiz, vsiz, _ = struct.unpack(">HIIq", recv_exact(s, 18))
        recv_exact(s, ksiz + vsiz)


class Rpc:
    def __init__(self, s):
        self.s = s
        self.unpacker = msgpack.Unpacker(raw=True)
        self.msgid = 0

    def call(self, method, params):
        self.msgid += 1
        self.s.sendall(msgpack.packb([0, self.msgid, method, params], use_bin_type=True))
        while True:
            for msg in self.unpacker:
                if msg[2] is not None:
                    raise SystemExit(f"{method}: error {msg[2]!r}")
                return msg[3]
            chunk = self.s.recv(1 << 16)
            if not chunk:
                raise SystemExit("server closed the connection")
            self.unpacker.feed(chunk)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--proto", choices=["kt-binary", "rpc"], required=True)
    ap.add_argument("--phase", choices=["set", "get"], required=True)
    ap.add_argument("--bulk", type=int, default=100)
    ap.add_argument("-n", type=int, default=10000, help="records in all")
    args = ap.parse_args()
    s = socket.create_connection((args.host, args.port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    rpc = Rpc(s)
    for start in range(0, args.n, args.bulk):
        keys = [b"%08d" % i for i in range(start, min(start + args.bulk, args.n))]
        if args.proto == "kt-binary":
            (kt_set if args.phase == "set" else kt_get)(s, keys)
        elif args.phase == "set":
            rpc.call("set_bulk", [{b"_" + k: k for k in keys}])
        else:
            r = rpc.call("get_bulk", [{b"_" + k: b"" for k in keys}])
            if len(r) != len(keys) + 1:
                raise SystemExit(f"get_bulk: {len(r) - 1} of {len(keys)} found")
    s.close()


if __name__ == "__main__":
    sys.exit(main())
