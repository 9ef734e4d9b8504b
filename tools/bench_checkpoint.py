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


def proc_counts():
    """(minor page faults, bytes read through read(2)) of this process so
    far, from /proc/self (zeros where that does not exist)."""
    try:
        with open("/proc/self/stat") as f:
            faults = int(f.read().rsplit(")", 1)[1].split()[7])
        with open("/proc/self/io") as f:
            rchar = int(next(l for l in f if l.startswith("rchar:")).split()[1])
        return faults, rchar
    except (OSError, StopIteration, ValueError, IndexError):
        return 0, 0


def costs(f):
    f0, r0 = proc_counts()
    r = f()
    f1, r1 = proc_counts()
    del r
    return f1 - f0, r1 - r0


path = sys.argv[1]
gib = os.path.getsize(path) / 2**30
t_first = best(1, lambda: torch.load(path, weights_only=True))
t_load = best(5, lambda: torch.load(path, weights_only=True))
t_mmap = best(5, lambda: torch.load(path, weights_only=True, mmap=True))
load_faults, load_read = costs(lambda: torch.load(path, weights_only=True))
mmap_faults, mmap_read = costs(lambda: torch.load(path, weights_only=True, mmap=True))
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
print("one torch.load:      %12d bytes read, %8d page faults" % (load_read, load_faults))
print("one torch.load(mmap): %11d bytes read, %8d page faults" % (mmap_read, mmap_faults))
