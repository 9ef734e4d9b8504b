#!/usr/bin/env python3
"""Times torch.load (copying and mmap=True) and torch.save on the state
dict that `cargo run --release -p torchcore-pt --example bench_checkpoint
-- MiB FILE` left in FILE (warm page cache; best of 5 / 3)."""
import os
import sys
import time

import torch


def best(n, f):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        r = f()
        out.append(time.perf_counter() - t)
        del r
    return min(out)


path = sys.argv[1]
gib = os.path.getsize(path) / 2**30
t_first = best(1, lambda: torch.load(path, weights_only=True))
t_load = best(5, lambda: torch.load(path, weights_only=True))
t_mmap = best(5, lambda: torch.load(path, weights_only=True, mmap=True))
sd = torch.load(path, weights_only=True)
out = path + ".torch.pt"


def save():
    torch.save(sd, out)
    fd = os.open(out, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


t_save = best(3, save)
os.remove(out)
print("first torch.load            %8.1f ms  %5.2f GiB/s" % (t_first * 1e3, gib / t_first))
print("torch.load                 %8.1f ms  %5.2f GiB/s" % (t_load * 1e3, gib / t_load))
print("torch.load(mmap=True)      %8.3f ms" % (t_mmap * 1e3))
print("torch.save (+ fsync)       %8.1f ms  %5.2f GiB/s" % (t_save * 1e3, gib / t_save))
