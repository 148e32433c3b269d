#!/usr/bin/env python3
"""Fills a memcached-protocol server with N `set`s of SIZE-byte values under
14-byte keys (noreply, pipelined by 1000) and prints how much it kept:
curr_items, evictions, bytes and limit_maxbytes from `stats`.

    scripts/cache-fill.py PORT N SIZE

Used for the items-per-MiB comparison with memcached in docs/format.md.
"""
import socket, sys, time
port=int(sys.argv[1]); n=int(sys.argv[2]); vlen=int(sys.argv[3])
s=socket.create_connection(("127.0.0.1",port))
val=b"v"*vlen
batch=[]
for i in range(n):
    batch.append(b"set key:%010d 0 0 %d noreply\r\n%s\r\n" % (i, vlen, val))
    if len(batch)==1000:
        s.sendall(b"".join(batch)); batch=[]
s.sendall(b"".join(batch)+b"stats\r\n")
buf=b""
while not buf.endswith(b"END\r\n"): buf+=s.recv(65536)
for l in buf.split(b"\r\n"):
    if l.startswith(b"STAT curr_items") or l.startswith(b"STAT evictions") or l.startswith(b"STAT bytes ") or l.startswith(b"STAT limit_maxbytes"): print(l.decode())
