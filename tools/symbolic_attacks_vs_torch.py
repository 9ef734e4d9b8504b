"""Runs issue #25's symbolic attacks through PyTorch's ShapeEnv and through
torchcore's engine (the `symbolic_attacks` example), and prints a Markdown
table of both, measured in one run.

    cargo build --release -p c10-core --example symbolic_attacks
    python3 tools/symbolic_attacks_vs_torch.py target/release/examples/symbolic_attacks

Needs a Python with torch (any 2.x with torch.fx.experimental.symbolic_shapes).
"""
import subprocess
import sys
import time

import torch
from torch._dynamo.source import ConstantSource
from torch.fx.experimental.symbolic_shapes import ShapeEnv


def symint(env, hint, name):
    s = env.create_symbol(hint, source=ConstantSource(name))
    return env.create_symintnode(s, hint=hint)


def deep_nesting():
    env = ShapeEnv()
    a, b, e = symint(env, 3, "a"), symint(env, 2, "b"), symint(env, 5, "c")
    for level in range(100_000):
        try:
            e = e // b + a
        except RecursionError:
            return f"RecursionError at level {level}"
    return "built 100,000 levels"


def power_of_sum(k):
    env = ShapeEnv()
    total = 0
    for i in range(8):
        total = total + symint(env, 2 + i, f"a{i}")
    e = total
    for _ in range(1, k):
        e = e * total
    is_zero = bool(e == 0)
    return f"Eq(..., 0) = {is_zero}, {len(env.guards)} guards"


def squarings():
    env = ShapeEnv(specialize_zero_one=False)
    e = symint(env, 1, "s")
    for _ in range(33):
        e = e * e
    return f"guard_int = {int(e)}"


def wide_sum():
    env = ShapeEnv()
    e = 0
    for i in range(100_000):
        e = e + symint(env, 2 + i, f"a{i}")
    big = bool(e > 1)
    return f"Gt(..., 1) = {big}, {len(env.guards)} guards"


def timed(f):
    t = time.perf_counter()
    try:
        out = f()
    except Exception as exc:  # report, do not stop the table
        out = f"{type(exc).__name__}: {exc}"[:120]
    return (time.perf_counter() - t) * 1e3, out


ATTACKS = {
    "deep_nesting": deep_nesting,
    "power_of_sum_k7": lambda: power_of_sum(7),
    "power_of_sum_k13": lambda: power_of_sum(13),
    "squarings_33": squarings,
    "wide_sum": wide_sum,
}


def torch_attack(name, limit_s=120, limit_bytes=8 << 30):
    """Runs one attack in a child process, bounded in time and memory."""
    def limit():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    try:
        run = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True,
                             text=True, timeout=limit_s, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return float("nan"), f"did not finish in {limit_s} s"
    if run.returncode != 0:
        return float("nan"), f"child failed (exit {run.returncode}): {run.stderr.strip()[-80:]}"
    ms, out = run.stdout.strip().split("\t", 1)
    return float(ms), out


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        ms, out = timed(ATTACKS[sys.argv[2]])
        print(f"{ms}\t{out}")
        return
    ours = {}
    if len(sys.argv) > 1:
        run = subprocess.run([sys.argv[1]], capture_output=True, text=True, check=True)
        for line in run.stdout.splitlines():
            name, ms, out = line.split("\t", 2)
            ours[name] = (float(ms), out)
    theirs = {name: torch_attack(name) for name in ATTACKS}
    print(f"torch {torch.__version__}")
    print("| attack | PyTorch ms | PyTorch outcome | torchcore ms | torchcore outcome |")
    print("|---|---:|---|---:|---|")
    for name, (ms, out) in theirs.items():
        oms, oout = ours.get(name, (float("nan"), "not run"))
        print(f"| {name} | {ms:.1f} | {out[:70]} | {oms:.2f} | {oout[:70]} |")


if __name__ == "__main__":
    main()
