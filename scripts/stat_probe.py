#!/usr/bin/env python3
"""Reads one numeric `stats` value from a memcached-protocol server.

    stat_probe.py PORT NAME                  prints it once (nothing if absent)
    stat_probe.py PORT NAME --until FILE     samples it every 10 ms until FILE
                                             exists; prints p50 p99 max count
"""
import os
import socket
import sys
import time


def read_stat(sock, name):
    sock.sendall(b"stats\r\n")
    buf = b""
    while not buf.endswith(b"END\r\n"):
        buf += sock.recv(65536)
    for line in buf.decode().split("\r\n"):
        p = line.split(" ")
        if len(p) == 3 and p[1] == name:
            return p[2]
    return None


def main():
    port, name = int(sys.argv[1]), sys.argv[2]
    sock = socket.create_connection(("127.0.0.1", port))
    if len(sys.argv) < 5:
        v = read_stat(sock, name)
        if v is not None:
            print(v)
        return
    stop = sys.argv[4]
    samples = []
    while not os.path.exists(stop):
        v = read_stat(sock, name)
        if v is not None:
            samples.append(int(v))
        time.sleep(0.01)
    samples.sort()
    pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
    print(pick(0.5), pick(0.99), samples[-1], len(samples))


if __name__ == "__main__":
    main()
