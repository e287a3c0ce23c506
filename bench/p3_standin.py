#!/usr/bin/env python3
"""The P3 job types' stand-ins for bench/p3-real: fixed work of one kind, so a task's run
time says how fast its node does that kind of work.

usage: p3_standin.py cpu|mem|io SCALE
  cpu  integer and float arithmetic in a loop (SCALE x 2 million iterations)
  mem  copies a 256 MiB buffer (SCALE x 8 times): memory bandwidth, 512 MiB resident
  io   writes SCALE x 32 MiB in 1 MiB chunks, each fsync'd, into the working folder, then
       reads it back and removes it
"""
import os
import sys


def cpu(scale):
    x, f = 88172645463325252, 1.0
    for _ in range(int(scale * 2_000_000)):
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        f = f * 0.999999 + (x >> 44) * 1e-7
    return x ^ int(f)


def mem(scale):
    src = bytearray(os.urandom(1 << 20)) * 256
    dst = bytearray(len(src))
    for i in range(int(scale * 8)):
        dst[:] = src
        src[i] ^= dst[-1 - i]  # each copy depends on the last
    return dst[0]


def io(scale):
    chunk = os.urandom(1 << 20)
    path = "p3-io-%d.tmp" % os.getpid()
    n = int(scale * 32)
    with open(path, "wb") as f:
        for _ in range(n):
            f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass
    os.unlink(path)
    return n


if __name__ == "__main__":
    kind, scale = sys.argv[1], float(sys.argv[2])
    print({"cpu": cpu, "mem": mem, "io": io}[kind](scale))
