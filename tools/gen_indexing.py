#!/usr/bin/env python3
"""Generates crates/shape-conformance/data/indexing.jsonl with real PyTorch.

Each line is one case: a base tensor (arange values, optionally permuted so
its strides are not row-major), an index list, an operation and what PyTorch
returned.

  {"id", "dtype", "sizes", "perm", "index": [entry...], "op": "get" | "set_scalar" | "set_tensor",
   "value": number (set_scalar), "src": {"sizes", "dtype", "values"} (set_tensor),
   "expect": {"sizes", "strides", "offset", "values"}            (get, success)
           | {"values", "version_delta"}                          (set, success: base values after)
           | {"error": {"kind", "message"}}}

Index entries: {"int": i}, {"slice": [start|null, stop|null, step]}, "none",
"ellipsis", {"tensor0": i} (a 0-dim int64 tensor). A list of one int, slice,
None or Ellipsis is applied as Python's `t[i]`; any other list as a tuple.

Usage: python tools/gen_indexing.py [N] [SEED]
"""
import json
import math
import random
import sys
import warnings

import torch

warnings.simplefilter("ignore")

N = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 15
OUT = "crates/shape-conformance/data/indexing.jsonl"
rng = random.Random(SEED)
DTYPES = {"int64": torch.int64, "float32": torch.float32, "uint8": torch.uint8, "float64": torch.float64}
BIG = [2**62, -(2**62), 2**63 - 1, -(2**63) + 1]


def rand_sizes():
    nd = rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 5])
    sizes = []
    for _ in range(nd):
        sizes.append(0 if rng.random() < 0.08 else rng.randint(1, 5 if nd <= 3 else 3))
    return sizes


def rand_bound():
    r = rng.random()
    if r < 0.3:
        return None
    if r < 0.93:
        return rng.randint(-7, 7)
    return rng.choice(BIG)


def rand_entry(ndim):
    r = rng.random()
    if r < 0.33:
        r2 = rng.random()
        if r2 < 0.8:
            return {"int": rng.randint(-2, 1)}
        return {"int": rng.randint(-6, 6) if r2 < 0.97 else rng.choice(BIG)}
    if r < 0.70:
        s = rng.random()
        if s < 0.6:
            step = 1
        elif s < 0.93:
            step = rng.randint(2, 4)
        elif s < 0.96:
            step = rng.choice([0, -1, -2])
        else:
            # (not 2**63 - 1: there PyTorch's wrapped slice size goes negative,
            # which aten-shape's slice refuses, a listed difference)
            step = rng.choice([2**62, 2**61 + 1])
        return {"slice": [rand_bound(), rand_bound(), step]}
    if r < 0.84:
        return "none"
    if r < 0.96:
        return "ellipsis"
    return {"tensor0": rng.randint(-4, 4)}


def rand_index(ndim):
    if rng.random() < 0.85:
        n = rng.randint(0, max(ndim, 1))
    else:
        n = rng.randint(ndim + 1, ndim + 3)
    idx = [rand_entry(ndim) for _ in range(n)]
    # Mostly at most one ellipsis; sometimes several (PyTorch's walk).
    if sum(1 for e in idx if e == "ellipsis") > 1 and rng.random() < 0.8:
        first = True
        out = []
        for e in idx:
            if e == "ellipsis":
                if first:
                    out.append(e)
                    first = False
                else:
                    out.append("none")
            else:
                out.append(e)
        idx = out
    return idx


def py_entry(e):
    if e == "none":
        return None
    if e == "ellipsis":
        return Ellipsis
    if "int" in e:
        return e["int"]
    if "slice" in e:
        a, b, k = e["slice"]
        return slice(a, b, k)
    return torch.tensor(e["tensor0"])


def py_index(idx):
    if len(idx) == 1 and not (isinstance(idx[0], dict) and "tensor0" in idx[0]):
        return py_entry(idx[0])
    return tuple(py_entry(e) for e in idx)


def make_base(sizes, perm, dtype):
    numel = math.prod(sizes)
    if dtype == torch.uint8:
        base = (torch.arange(numel) % 256).to(dtype)
    else:
        base = torch.arange(numel, dtype=dtype)
    if perm is None:
        return base.view(sizes)
    psizes = [sizes[p] for p in perm]
    # base laid out as psizes, then permuted so its sizes are `sizes`
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return base.view(psizes).permute(inv)


def values(t):
    v = t.reshape(-1).tolist()
    return v


def err(e):
    return {"error": {"kind": type(e).__name__, "message": str(e).split("\n")[0]}}


def one_case(i):
    sizes = rand_sizes()
    dname = rng.choices(["int64", "float32", "uint8", "float64"], [6, 2, 1, 1])[0]
    dtype = DTYPES[dname]
    perm = None
    if len(sizes) >= 2 and rng.random() < 0.3:
        perm = list(range(len(sizes)))
        rng.shuffle(perm)
    idx = rand_index(len(sizes))
    op = rng.choices(["get", "set_scalar", "set_tensor"], [6, 2, 2])[0]
    case = {"id": f"idx-{i}", "dtype": dname, "sizes": sizes, "perm": perm, "index": idx, "op": op}
    x = make_base(sizes, perm, dtype)
    pi = py_index(idx)
    if op == "get":
        try:
            r = x[pi]
            case["expect"] = {"sizes": list(r.shape), "strides": list(r.stride()),
                              "offset": r.storage_offset(), "values": values(r)}
        except Exception as e:  # noqa: BLE001
            case["expect"] = err(e)
        return case
    if op == "set_scalar":
        if dname == "uint8" and rng.random() < 0.5:
            value = rng.choice([300, -1, 255])
        elif dname in ("float32", "float64") and rng.random() < 0.5:
            value = rng.choice([2.5, -0.75, 1e3])
        else:
            value = rng.randint(-50, 50) if dname != "uint8" else rng.randint(0, 255)
        case["value"] = value
        v0 = x._version
        try:
            x[pi] = value
            case["expect"] = {"values": values(x), "version_delta": x._version - v0}
        except Exception as e:  # noqa: BLE001
            case["expect"] = err(e)
        return case
    # set_tensor: a source shaped like the view (or broadcastable / not)
    try:
        target = list(x[pi].shape)
    except Exception:  # noqa: BLE001
        target = rand_sizes()
    r = rng.random()
    if r < 0.3:
        ssizes = target
    elif r < 0.55:
        ssizes = [1 if rng.random() < 0.4 else s for s in target]
        ssizes = ssizes[rng.randint(0, len(ssizes)):] if ssizes and rng.random() < 0.4 else ssizes
    elif r < 0.7:
        ssizes = [1] * rng.randint(1, 2) + target
    elif r < 0.8:
        ssizes = []
    else:
        ssizes = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
    sname = rng.choice(["int64", "int64", "float64"])
    sdt = DTYPES[sname]
    n = math.prod(ssizes)
    src = torch.arange(100, 100 + n, dtype=sdt).view(ssizes)
    if sname == "float64":
        src = src + 0.5
    case["src"] = {"sizes": ssizes, "dtype": sname, "values": values(src)}
    v0 = x._version
    try:
        x[pi] = src
        case["expect"] = {"values": values(x), "version_delta": x._version - v0}
    except Exception as e:  # noqa: BLE001
        case["expect"] = err(e)
    return case


def main():
    cases = [one_case(i) for i in range(N)]
    with open(OUT, "w") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
    ok = sum(1 for c in cases if "error" not in c["expect"])
    print(f"{len(cases)} cases ({ok} succeed, {len(cases) - ok} raise) -> {OUT}; torch {torch.__version__}")


if __name__ == "__main__":
    main()
