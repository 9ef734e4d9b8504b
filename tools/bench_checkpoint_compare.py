#!/usr/bin/env python3
"""torchcore-pt against torch 2.15 on the same checkpoint, in one run.

    python tools/bench_checkpoint_compare.py [MiB] [TENSORS] [ROUNDS]

Defaults: 1024 MiB in 256 float32 tensors (4 MiB each), 3 rounds. Each
round runs the Rust benchmark (the `bench_checkpoint` example, built with
`cargo build --release -p torchcore-pt --example bench_checkpoint`;
override the binary with $BENCH_BIN), which writes the file and times
save, load, load_mmap, a plain write and std::fs::read of it, then
tools/bench_checkpoint.py on that same file (torch.load, mmap=True,
torch.save), each in a fresh process, alternating so that both sides see
the same machine load. Prints every round, then the median of each
number over the rounds and the ratios the issue asks for (computed per
round, median shown).
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("BENCH_BIN",
                     os.path.join(ROOT, "target", "release", "examples", "bench_checkpoint"))

RUST = {
    "save": r"save \(torchcore\)\s+([\d.]+) ms",
    "save_nocrc": r"save \(torchcore, no CRC\)\s+([\d.]+) ms",
    "load_nocrc": r"load \(torchcore, no CRC\)\s+([\d.]+) ms",
    "write": r"plain write \+ fsync\s+([\d.]+) ms",
    "first_load": r"first load \(torchcore\)\s+([\d.]+) ms",
    "load": r"load \(torchcore, copying\)\s+([\d.]+) ms",
    "fs_read": r"std::fs::read of the file\s+([\d.]+) ms",
    "mmap": r"load_mmap \(torchcore\)\s+([\d.]+) ms",
    "load_bytes": r"one load:\s+(\d+) bytes read",
    "load_faults": r"one load:\s+\d+ bytes read,\s+(\d+) page faults",
    "mmap_bytes": r"one load_mmap:\s+(\d+) bytes read",
}
TORCH = {
    "t_first_load": r"first torch.load\s+([\d.]+) ms",
    "t_load": r"^torch.load\s+([\d.]+) ms",
    "t_mmap": r"torch.load\(mmap=True\)\s+([\d.]+) ms",
    "t_save": r"torch.save \(\+ fsync\)\s+([\d.]+) ms",
    "t_load_bytes": r"one torch.load:\s+(\d+) bytes read",
    "t_load_faults": r"one torch.load:\s+\d+ bytes read,\s+(\d+) page faults",
    "t_mmap_bytes": r"one torch.load\(mmap\):\s+(\d+) bytes read",
}


def parse(text, patterns):
    out = {}
    for k, p in patterns.items():
        m = re.search(p, text, re.MULTILINE)
        if not m:
            sys.exit("could not find %r in:\n%s" % (k, text))
        out[k] = float(m.group(1))
    return out


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("%s failed:\n%s%s" % (cmd[0], r.stdout, r.stderr))
    return r.stdout


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    tensors = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    if not os.path.exists(BIN):
        sys.exit("build the benchmark first: cargo build --release -p torchcore-pt "
                 "--example bench_checkpoint (or set BENCH_BIN)")
    results = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bench.pt")
        for i in range(rounds):
            rust = parse(run([BIN, str(mib), path, str(tensors)]), RUST)
            torch = parse(run([sys.executable, os.path.join(ROOT, "tools", "bench_checkpoint.py"),
                               path]), TORCH)
            r = {**rust, **torch}
            r["load/torch.load"] = r["load"] / r["t_load"]
            r["first load/first torch.load"] = r["first_load"] / r["t_first_load"]
            r["load no CRC/torch.load"] = r["load_nocrc"] / r["t_load"]
            r["load/fs::read"] = r["load"] / r["fs_read"]
            r["mmap/load"] = r["mmap"] / r["load"]
            r["write speed of save"] = r["write"] / r["save"]
            r["write speed of save no CRC"] = r["write"] / r["save_nocrc"]
            r["save/torch.save"] = r["save"] / r["t_save"]
            results.append(r)
            print("round %d: %s" % (i + 1, ", ".join(
                "%s %.4g" % (k, v) for k, v in r.items())), flush=True)
    print("\n%d MiB in %d float32 tensors, %d rounds; medians:" % (mib, tensors, rounds))
    for k in results[0]:
        print("  %-28s %14.4g" % (k, statistics.median(r[k] for r in results)))


if __name__ == "__main__":
    main()
