#!/usr/bin/env python3
"""A small bulk client for profiling: set or get N records (keys %08d,
values the key, as ktremotetest's bulk test) in batches of B, over Kyoto
Tycoon's binary protocol (set_bulk 0xB8 / get_bulk 0xBA), MessagePack-RPC
(kt-msgpack's set_bulk / get_bulk with `_key` maps), or memcached's binary
protocol (a run of SETQ or GETKQ ended by NOOP, as libmemcached's mget and
multi-set send) or text protocol (`set ... noreply` lines ended by `mn`; one
`get k1 ... kB` line), one batch in flight.

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


def mc_binary(s, keys, phase):
    parts = []
    for i, k in enumerate(keys):
        if phase == "set":  # SETQ: flags 0, exptime 0
            extras = struct.pack(">II", 0, 0)
            body = extras + k + k
            parts.append(struct.pack(">BBHBBHIIQ", 0x80, 0x11, len(k), 8, 0, 0, len(body), i, 0) + body)
        else:  # GETKQ
            parts.append(struct.pack(">BBHBBHIIQ", 0x80, 0x0D, len(k), 0, 0, 0, len(k), i, 0) + k)
    parts.append(struct.pack(">BBHBBHIIQ", 0x80, 0x0A, 0, 0, 0, 0, 0, 0xFFFF, 0))
    s.sendall(b"".join(parts))
    hits = 0
    while True:
        h = recv_exact(s, 24)
        _, op, _, _, _, status, body, opaque, _ = struct.unpack(">BBHBBHIIQ", h)
        recv_exact(s, body)
        if op == 0x0A:
            break
        if phase == "set" or status != 0:
            raise SystemExit(f"opcode {op:#x} status {status:#x} for request {opaque}")
        hits += 1
    if phase == "get" and hits != len(keys):
        raise SystemExit(f"GETKQ run: {hits} of {len(keys)} found")


def mc_text(s, keys, phase):
    if phase == "set":
        s.sendall(b"".join(b"set %s 0 0 %d noreply\r\n%s\r\n" % (k, len(k), k) for k in keys) + b"mn\r\n")
        end = b"MN\r\n"
    else:
        s.sendall(b"get " + b" ".join(keys) + b"\r\n")
        end = b"END\r\n"
    buf = b""
    while not buf.endswith(end):
        chunk = s.recv(1 << 16)
        if not chunk:
            raise SystemExit("server closed the connection")
        buf += chunk
    if phase == "get" and buf.count(b"VALUE ") != len(keys):
        raise SystemExit(f"get: {buf.count(b'VALUE ')} of {len(keys)} found")


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
    ap.add_argument("--proto", choices=["kt-binary", "rpc", "mc-binary", "mc-text"], required=True)
    ap.add_argument("--phase", choices=["set", "get"], required=True)
    ap.add_argument("--bulk", type=int, default=100)
    ap.add_argument("-n", type=int, default=10000, help="records in all")
    args = ap.parse_args()
    s = socket.create_connection((args.host, args.port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    rpc = Rpc(s)
    for start in range(0, args.n, args.bulk):
        keys = [b"%08d" % i for i in range(start, min(start + args.bulk, args.n))]
        if args.proto == "mc-binary":
            mc_binary(s, keys, args.phase)
        elif args.proto == "mc-text":
            mc_text(s, keys, args.phase)
        elif args.proto == "kt-binary":
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
