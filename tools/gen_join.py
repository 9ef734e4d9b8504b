#!/usr/bin/env python3
"""Generates crates/shape-conformance/data/join.jsonl: torch.cat / torch.stack
cases recorded with real PyTorch (run with python).

Each line is one case:

  {"id": "cat-17", "op": "cat" | "stack", "dim": -1,
   "inputs": [{"sizes": [2, 3], "dtype": "float32", "layout": "contiguous",
               "start": 10}, ...],
   "expect": {"sizes": [...], "strides": [...], "dtype": "float32",
              "values": [...]}        # or
   "expect": {"error": "RuntimeError", "message": "first line of the message"}}

An input is `arange(start, start + numel)` in float64, converted to `dtype`
with `.to(dtype)`, shaped to `sizes` with the given layout:
`contiguous`, `transposed` (the last two dims laid out swapped, then
transposed back: same sizes, non-contiguous strides) or `channels_last`
(4-d only). Expected values are the result's elements in row-major order
as float64 (real part for complex dtypes).

Usage: gen_join.py [--seed N] [--count N] [--out PATH]
"""
import argparse
import json
import random
import warnings

import torch

warnings.filterwarnings("ignore")

COMMON = ["float32", "int64", "float64", "int32", "uint8", "bool", "float16",
          "bfloat16", "int8", "int16"]
RARE = ["uint16", "uint32", "uint64", "complex64", "complex128", "complex32",
        "float8_e5m2", "float8_e4m3fn"]
LAYOUTS = ["contiguous", "transposed"]


def make(spec):
    sizes = spec["sizes"]
    n = 1
    for s in sizes:
        n *= s
    dtype = getattr(torch, spec["dtype"])
    base = torch.arange(spec["start"], spec["start"] + n, dtype=torch.float64)
    layout = spec["layout"]
    if layout == "transposed" and len(sizes) >= 2:
        sw = list(sizes)
        sw[-1], sw[-2] = sw[-2], sw[-1]
        t = base.reshape(sw).to(dtype).transpose(-1, -2)
    else:
        t = base.reshape(sizes).to(dtype)
        if layout == "channels_last":
            t = t.contiguous(memory_format=torch.channels_last)
    return t


def values(t):
    if t.is_complex():
        t = t.real
    return [float(x) for x in t.to(torch.float64).reshape(-1).tolist()]


def record(op, dim, inputs):
    tensors = [make(s) for s in inputs]
    try:
        fn = torch.cat if op == "cat" else torch.stack
        out = fn(tensors, dim)
    except Exception as e:  # noqa: BLE001 - every PyTorch error is recorded
        return {"error": type(e).__name__, "message": str(e).split("\n")[0]}
    return {"sizes": list(out.shape), "strides": list(out.stride()),
            "dtype": str(out.dtype).replace("torch.", ""), "values": values(out)}


def pick_dtypes(rng, n):
    r = rng.random()
    if r < 0.6:
        d = rng.choice(COMMON)
        return [d] * n
    if r < 0.9:
        return [rng.choice(COMMON) for _ in range(n)]
    pool = COMMON + RARE
    if rng.random() < 0.5:
        d = rng.choice(RARE)
        return [d] * n
    return [rng.choice(pool) for _ in range(n)]


def rand_sizes(rng, ndim, zero_p=0.1):
    return [0 if rng.random() < zero_p else rng.randint(1, 4) for _ in range(ndim)]


def inputs_for(rng, shapes, dtypes):
    out = []
    start = 0
    for s, d in zip(shapes, dtypes):
        layout = "contiguous"
        if len(s) >= 2 and rng.random() < 0.3:
            layout = "transposed"
        if len(s) == 4 and rng.random() < 0.3:
            layout = "channels_last"
        out.append({"sizes": s, "dtype": d, "layout": layout, "start": start})
        n = 1
        for x in s:
            n *= x
        start += n + 3
    return out


def gen_cat(rng):
    n = rng.randint(1, 4)
    ndim = rng.randint(1, 4)
    dim = rng.randint(-ndim, ndim - 1)
    base = rand_sizes(rng, ndim)
    shapes = []
    for _ in range(n):
        s = list(base)
        s[dim] = rng.randint(0, 4)
        shapes.append(s)
    kind = rng.random()
    if kind < 0.12:  # legacy skipped [0] tensors
        for _ in range(rng.randint(1, 2)):
            shapes.insert(rng.randint(0, len(shapes)), [0])
    elif kind < 0.22:  # size mismatch outside dim
        i = rng.randrange(len(shapes))
        others = [d for d in range(ndim) if d != dim % ndim]
        if others:
            d = rng.choice(others)
            shapes[i][d] += rng.randint(1, 2)
    elif kind < 0.28:  # rank mismatch
        i = rng.randrange(len(shapes))
        shapes[i] = shapes[i] + [rng.randint(1, 3)] if rng.random() < 0.5 else shapes[i][:-1]
    elif kind < 0.34:  # dim out of range
        dim = rng.choice([ndim, ndim + 1, -ndim - 1, -ndim - 2, 5])
    elif kind < 0.38:  # zero-dim tensor
        shapes.insert(rng.randint(0, len(shapes)), [])
    elif kind < 0.42:  # only [0] tensors
        shapes = [[0] for _ in range(rng.randint(1, 3))]
        dim = rng.randint(-3, 3)
    dtypes = pick_dtypes(rng, len(shapes))
    return dim, inputs_for(rng, shapes, dtypes)


def gen_stack(rng):
    n = rng.randint(1, 4)
    ndim = rng.randint(0, 3)
    dim = rng.randint(-ndim - 1, ndim)
    base = rand_sizes(rng, ndim)
    shapes = [list(base) for _ in range(n)]
    kind = rng.random()
    if kind < 0.15 and ndim > 0:
        i = rng.randrange(n)
        shapes[i][rng.randrange(ndim)] += 1
    elif kind < 0.2 and n > 1:
        i = rng.randrange(1, n)
        shapes[i] = shapes[i] + [2]
    elif kind < 0.28:
        dim = rng.choice([ndim + 1, ndim + 2, -ndim - 2, 7])
    dtypes = pick_dtypes(rng, n)
    return dim, inputs_for(rng, shapes, dtypes)


FIXED = [
    ("cat", 0, []),
    ("stack", 0, []),
    ("cat", 1, [[2, 2], [3, 3]]),
    ("cat", 0, [[2, 2], [0]]),
    ("cat", 1, [[0], [2, 3]]),
    ("cat", 5, [[0], [2, 3]]),
    ("cat", 3, [[0]]),
    ("cat", -3, [[0], [2, 3]]),
    ("cat", 0, [[2, 0], [3, 0]]),
    ("cat", 0, [[2, 0], [2, 3]]),
    ("cat", 0, [[0, 3], [2, 3]]),
    ("cat", 0, [[], []]),
    ("stack", 0, [[2, 3], [2, 4]]),
    ("stack", 0, [[0], [0]]),
    ("stack", 1, [[0], [0]]),
    ("stack", 0, [[], []]),
    ("stack", 1, [[], []]),
    ("stack", -1, [[2, 3], [2, 3]]),
    ("stack", 2, [[2, 2, 2, 2], [2, 2, 2, 2]]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--count", type=int, default=1200)
    ap.add_argument("--out", default="crates/shape-conformance/data/join.jsonl")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    cases = []
    for i, (op, dim, shapes) in enumerate(FIXED):
        ins = inputs_for(rng, shapes, ["float32"] * len(shapes))
        cases.append({"id": f"fixed-{i}", "op": op, "dim": dim, "inputs": ins})
    # Every dtype pair, once each, through a 1-d cat.
    names = COMMON + RARE
    for x in names:
        for y in names:
            ins = inputs_for(rng, [[2], [3]], [x, y])
            cases.append({"id": f"promote-{x}-{y}", "op": "cat", "dim": 0, "inputs": ins})
    # Channels-last inputs.
    for i in range(20):
        shapes = [[2, 3, 2, 2], [2, 3, 2, 2]]
        ins = inputs_for(rng, shapes, ["float32", "float32"])
        for s in ins:
            s["layout"] = rng.choice(["channels_last", "channels_last", "contiguous"])
        cases.append({"id": f"cl-{i}", "op": rng.choice(["cat", "stack"]),
                      "dim": rng.randint(-4, 3), "inputs": ins})
    for i in range(a.count):
        op = "cat" if rng.random() < 0.6 else "stack"
        dim, ins = gen_cat(rng) if op == "cat" else gen_stack(rng)
        cases.append({"id": f"{op}-{i}", "op": op, "dim": dim, "inputs": ins})
    with open(a.out, "w") as f:
        for c in cases:
            c["expect"] = record(c["op"], c["dim"], c["inputs"])
            f.write(json.dumps(c) + "\n")
    errs = sum(1 for c in cases if "error" in c["expect"])
    print(f"{len(cases)} cases ({errs} errors) -> {a.out}")


if __name__ == "__main__":
    main()
