#!/usr/bin/env python3
"""A third random generator for the symbolic-shapes corpus, written apart
from `tools/gen_symbolic.py`'s `pick`/`case` (its own op mix, argument
forms and seed), recorded by the same harness (PyTorch 2.15,
FakeTensorMode + ShapeEnv, ATen's C++ meta path; see that file for the
format).

Each chain is a random walk of two to five steps on an eager tensor of
the example sizes; arguments are drawn as the current tensor's
`SymInt` sizes plus small constants wherever PyTorch takes a `SymInt`
(narrow start and length, select index, slice start/end/step,
as_strided sizes/strides/offset, expand, view/reshape targets, split
sizes, unflatten sizes, new_empty/new_empty_strided, set_, resize_).
One case is written per chain prefix, so a runner's count is a count
of steps. 8% of chains have unbacked inputs, 12% use
`ShapeEnv(specialize_zero_one=False)`.

    python tools/gen_symbolic_walk.py [CHAINS] [--seed N] > walk.jsonl
    SYMBOLIC_CORPUS=walk.jsonl cargo test -p shape-conformance --test symbolic
"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

from gen_symbolic import Unsupported, apply, force_cpp_meta, record  # noqa: E402

TERMINAL = {"split", "split_with_sizes", "chunk", "is_contiguous",
            "is_channels_last_contiguous"}


def s(k, add=0):
    return {"size": k, "add": add} if add else {"size": k}


def size_arg(rng, t, d):
    """Size `d` of `t` as a SymInt argument (sometimes a constant)."""
    v = t.shape[d]
    r = rng.random()
    if r < 0.65:
        return s(d)
    if r < 0.8 and v >= 2:
        return s(d, -1)
    return v


def draw(rng, t):
    """One step on eager tensor t (the walk's op mix)."""
    n, shape = t.dim(), list(t.shape)
    weights = {"view": 4, "reshape": 3, "unsqueeze": 1, "contiguous": 1,
               "is_contiguous": 1, "new_empty": 1, "view_dtype": 1}
    if n >= 1:
        weights.update({"narrow": 4, "slice": 4, "select": 3, "expand": 2,
                        "unflatten": 3, "split": 2, "split_with_sizes": 2,
                        "chunk": 1, "squeeze_dim": 1, "unfold": 1,
                        "flatten": 1, "resize_": 1, "as_strided": 2,
                        "as_strided_": 1, "set_": 1, "new_empty_strided": 1})
    if n >= 2:
        weights.update({"transpose": 3, "permute": 2, "movedim": 2,
                        "diagonal": 2, "flatten": 2})
    if n in (4, 5):
        weights["is_channels_last_contiguous"] = 2
        weights["resize_cl"] = 1
    ops = list(weights)
    op = rng.choices(ops, [weights[o] for o in ops])[0]
    d = rng.randrange(n) if n else 0
    if op in ("view", "reshape"):
        if n == 0:
            return {"op": op, "shape": [1, -1]}
        k = rng.randrange(5)
        if k == 0:
            target = [size_arg(rng, t, i) for i in range(n)]
            target[rng.randrange(n)] = -1
        elif k == 1 and n >= 2:
            a = rng.randrange(n - 1)
            target = [s(i) for i in range(a)] + [-1] + [s(i) for i in range(a + 2, n)]
        elif k == 2:
            target = [-1] + [s(i) for i in range(n) if i != d]
        elif k == 3:
            target = [s(i) for i in range(n)]
            target.insert(rng.randrange(n + 1), 1)
        else:
            f = rng.choice([2, 3, 6])
            target = [f, -1] if rng.random() < 0.5 else [-1, f]
        return {"op": op, "shape": target}
    if op == "narrow":
        size = shape[d]
        k = rng.randrange(4)
        if k == 0:
            return {"op": op, "dim": d, "start": 0, "length": s(d, -min(size, 2))}
        if k == 1 and size >= 2:
            return {"op": op, "dim": d, "start": s(d, -2), "length": rng.choice([1, 2])}
        if k == 2 and size >= 1:
            return {"op": op, "dim": d, "start": 1 if size else 0, "length": s(d, -1)}
        return {"op": op, "dim": d, "start": rng.randrange(size + 1), "length": 0}
    if op == "slice":
        size = shape[d]
        pick = lambda: rng.choice([None, 0, 1, -1, -2, s(d), s(d, -1), s(d, -3),
                                   s(d, 2), size])
        st = rng.choice([1, 1, 1, 2, 3])
        if rng.random() < 0.1 and size >= 2:
            st = s(d, -1)
        return {"op": op, "dim": d, "start": pick(), "end": pick(), "step": st}
    if op == "select":
        size = shape[d]
        if size == 0:
            return {"op": op, "dim": d, "index": 0}
        return {"op": op, "dim": d,
                "index": rng.choice([0, -1, s(d, -1), s(d, -size), size // 2])}
    if op == "expand":
        sizes = [(s(i) if rng.random() < 0.5 else -1) if shape[i] != 1
                 else rng.choice([1, 4, -1]) for i in range(n)]
        if rng.random() < 0.4:
            sizes = [rng.choice([1, 2, s(d)])] + sizes
        return {"op": op, "sizes": sizes}
    if op == "unflatten":
        size = shape[d]
        fs = [f for f in (2, 3, 5) if size % f == 0]
        if not fs or rng.random() < 0.2:
            return {"op": op, "dim": d, "sizes": [s(d), 1] if rng.random() < 0.5 else [1, -1]}
        f = rng.choice(fs)
        return {"op": op, "dim": d, "sizes": rng.choice([[-1, f], [f, -1], [1, f, -1]])}
    if op == "split":
        return {"op": op, "dim": d,
                "size": rng.choice([2, 5, s(d), s(d, -1) if shape[d] >= 2 else 1])}
    if op == "split_with_sizes":
        size = shape[d]
        if size >= 2:
            a = rng.randrange(1, size)
            sizes = rng.choice([[a, s(d, -a)], [s(d, -a), a], [s(d), 0]])
        else:
            sizes = [s(d)]
        return {"op": op, "dim": d, "sizes": sizes}
    if op == "chunk":
        return {"op": op, "dim": d, "chunks": rng.choice([2, 3, 5])}
    if op == "squeeze_dim":
        return {"op": op, "dim": d}
    if op == "unsqueeze":
        return {"op": op, "dim": rng.randrange(-n - 1, n + 1)}
    if op == "unfold":
        size = shape[d]
        return {"op": op, "dim": d, "size": rng.choice([1, 2, max(size, 1)]),
                "step": rng.choice([1, 2])}
    if op == "flatten":
        a = rng.randrange(n)
        return {"op": op, "start": a, "end": rng.randrange(a, n)}
    if op == "transpose":
        a, b = rng.sample(range(n), 2)
        return {"op": op, "dims": [a, b - n if rng.random() < 0.3 else b]}
    if op == "permute":
        p = list(range(n))
        rng.shuffle(p)
        return {"op": op, "dims": p}
    if op == "movedim":
        return {"op": op, "dims": [rng.randrange(n), rng.randrange(-n, n)]}
    if op == "diagonal":
        a, b = rng.sample(range(n), 2)
        return {"op": op, "offset": rng.choice([0, 0, 1, -1, 3]), "dim1": a, "dim2": b}
    if op == "resize_":
        sizes = [s(i) for i in range(n)]
        if rng.random() < 0.5:
            sizes = sizes[::-1]
        if rng.random() < 0.3:
            sizes = sizes[:-1]
        return {"op": op, "sizes": sizes, "memory_format": None}
    if op == "resize_cl":
        fmt = "channels_last" if n == 4 else "channels_last_3d"
        return {"op": "resize_", "sizes": [s(i) for i in range(n)], "memory_format": fmt}
    if op in ("as_strided", "as_strided_", "set_"):
        # Within the tensor's elements: a dense prefix of its own sizes.
        if t.numel() == 0 or not t.is_contiguous():
            return {"op": "contiguous"}
        if n == 1:
            return {"op": op, "sizes": [s(0, -1) if shape[0] >= 1 else 0], "strides": [1],
                    "offset": 1 if shape[0] >= 1 else 0}
        if n == 2:
            k = rng.randrange(3)
            if k == 0:
                return {"op": op, "sizes": [s(1), s(0)], "strides": [1, s(1)], "offset": 0}
            if k == 1 and shape[0] >= 1:
                return {"op": op, "sizes": [s(0, -1), s(1)], "strides": [s(1), 1],
                        "offset": s(1)}
            return {"op": op, "sizes": [s(0)], "strides": [s(1)], "offset": 0}
        return {"op": op, "sizes": [s(n - 1), s(n - 2)], "strides": [1, s(n - 1)],
                "offset": 0}
    if op == "new_empty":
        return {"op": rng.choice(["new_empty", "new_zeros"]),
                "sizes": [s(i) for i in range(n)][::-1] + [2]}
    if op == "new_empty_strided":
        return {"op": op, "sizes": [s(d), 3], "strides": [1, s(d)]}
    if op == "view_dtype":
        return {"op": op, "dtype": rng.choice(["int32", "float64", "uint8", "int16",
                                               "complex64"])}
    return {"op": op}


def walk(rng, i):
    """(sizes, [step, ...], szo, unbacked) for chain i."""
    r = rng.random()
    unbacked = r < 0.08
    szo = not (0.08 <= r < 0.20)
    nd = rng.choice([1, 2, 2, 3, 3, 4, 4, 5])
    pool = [2, 3, 4, 5, 6, 7, 8, 10, 12, 15] if szo else [0, 1, 1, 2, 3, 4, 6]
    sizes = [rng.choice(pool) if rng.random() < (0.35 if not szo else 0.9)
             else rng.choice([2, 3, 4, 6, 9]) for _ in range(nd)]
    if szo and not unbacked and rng.random() < 0.1:
        sizes[rng.randrange(nd)] = rng.choice([0, 1])
    eager = torch.empty(*sizes)
    chain = []
    for _ in range(rng.randrange(2, 6)):
        step = draw(rng, eager)
        chain.append(step)
        try:
            nxt = apply(eager, step)
        except Exception:  # noqa: BLE001 - the error is a step too
            break
        if step["op"] in TERMINAL or not isinstance(nxt, torch.Tensor):
            break
        eager = nxt
    return sizes, chain, szo, unbacked


def main():
    force_cpp_meta()
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    seed = 90210
    if "--seed" in sys.argv:
        seed = int(sys.argv[sys.argv.index("--seed") + 1])
        args = [a for a in args if a != str(seed)]
    rng = random.Random(seed)
    chains = int(args[0]) if args else 300
    made = skipped = 0
    for i in range(chains):
        sizes, chain, szo, unbacked = walk(rng, i)
        for k in range(1, len(chain) + 1):
            try:
                c = record(sizes, chain[:k], szo, unbacked)
            except Unsupported as e:
                skipped += 1
                print(f"skipped {i}-{k}: {e}", file=sys.stderr)
                break
            c["id"] = f"walk-{seed}-{i}-{k}"
            print(json.dumps(c, separators=(",", ":")))
            made += 1
    print(f"{made} steps, {skipped} skipped", file=sys.stderr)


if __name__ == "__main__":
    main()
