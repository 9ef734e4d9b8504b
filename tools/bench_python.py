"""Per-call time from Python: torchcore side by side with torch and NumPy.

    python tools/bench_python.py            # whichever of torch/numpy import
    BENCH_REPEATS=15 BENCH_NUMBER=2000 python tools/bench_python.py   # quicker

Each cell is the best of R `timeit` repeats of N calls, divided by N; the
libraries are interleaved repeat by repeat, so that on a shared, loaded
machine each one gets the same chances at a quiet moment.
"""

import os
import sys
import timeit

import torchcore as tc

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None
try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

CASES = [
    # label, torchcore/torch statement, numpy statement
    ("a.view(3, 4)", "a.view(3, 4)", "a.reshape(3, 4)"),
    ("a[2:]", "a[2:]", "a[2:]"),
    ("m.t()", "m.t()", "m.T"),
    ("m.permute(1, 0)", "m.permute(1, 0)", "m.transpose(1, 0)"),
    ("m[3, 1:5]", "m[3, 1:5]", "m[3, 1:5]"),
    ("empty(3, 4)", "mod.empty(3, 4)", "np.empty((3, 4), dtype=np.float32)"),
    ("s.clone()", "s.clone()", "s.copy()"),
    ("m.reshape(8, 6)", "m.reshape(8, 6)", "m.reshape(8, 6)"),
    ("big.clone() (1 MiB)", "big.clone()", "big.copy()"),
    ("l.tolist() (1,000 f32)", "l.tolist()", "l.tolist()"),
    ("tensor(py_list) (1,000 floats)", "mod.tensor(py_list)", "np.array(py_list, dtype=np.float32)"),
    ("x0.item()", "x0.item()", "x0.item()"),
    ("l64.tolist() (1,000 f64)", "l64.tolist()", "l64.tolist()"),
    ("li.tolist() (1,000 int64)", "li.tolist()", "li.tolist()"),
    ("li32.tolist() (1,000 int32)", "li32.tolist()", "li32.tolist()"),
    ("lb.tolist() (1,000 bool)", "lb.tolist()", "lb.tolist()"),
    ("lh.tolist() (1,000 f16)", "lh.tolist()", "lh.tolist()"),
    ("lc.tolist() (1,000 complex64)", "lc.tolist()", "lc.tolist()"),
    ("m.tolist() (6x8 f32)", "m.tolist()", "m.tolist()"),
    ("tensor(int_list) (1,000 ints)", "mod.tensor(int_list)", "np.array(int_list)"),
    ("tensor(bool_list) (1,000 bools)", "mod.tensor(bool_list)", "np.array(bool_list)"),
    ("tensor(nested) (10x100 floats)", "mod.tensor(nested)", "np.array(nested, dtype=np.float32)"),
    ("i0.item() (int64)", "i0.item()", "i0.item()"),
    ("b0.item() (bool)", "b0.item()", "b0.item()"),
    ("from_numpy(n)", "mod.from_numpy(n)", "np.asarray(n)"),
    ("l.numpy()", "l.numpy()", "np.asarray(l)"),
    ("np.asarray(l)", "np.asarray(l)", "np.asarray(l)"),
]


def arange(mod, n, dtype):
    """`n` elements of `dtype` (a NumPy/torch dtype name) in either library."""
    vals = [i % 7 for i in range(n)]
    if mod is np:
        return np.array(vals, dtype=dtype)
    return mod.tensor(vals, dtype=getattr(mod, dtype))


def setup(mod):
    return {
        "l64": arange(mod, 1000, "float64"),
        "li": arange(mod, 1000, "int64"),
        "li32": arange(mod, 1000, "int32"),
        "lb": arange(mod, 1000, "bool"),
        "lh": arange(mod, 1000, "float16"),
        "lc": arange(mod, 1000, "complex64"),
        "int_list": list(range(1000)),
        "bool_list": [i % 3 == 0 for i in range(1000)],
        "nested": [[float(i * 100 + j) for j in range(100)] for i in range(10)],
        "i0": mod.tensor(7) if mod is not np else np.int64(7),
        "b0": mod.tensor(True) if mod is not np else np.bool_(True),
        "mod": mod,
        "np": np,
        "a": mod.arange(12, dtype=mod.float32) if mod is not np else np.arange(12, dtype=np.float32),
        "m": (mod.arange(48, dtype=mod.float32) if mod is not np else np.arange(48, dtype=np.float32)).reshape(6, 8),
        "s": (mod.arange(12, dtype=mod.float32) if mod is not np else np.arange(12, dtype=np.float32)).reshape(3, 4),
        "big": mod.zeros(262144, dtype=mod.float32) if mod is not np else np.zeros(262144, dtype=np.float32),
        "l": mod.arange(1000, dtype=mod.float32) if mod is not np else np.arange(1000, dtype=np.float32),
        "py_list": [float(i) for i in range(1000)],
        "x0": mod.tensor(3.5) if mod is not np else np.float32(3.5),
        "n": np.arange(12, dtype=np.float32) if np is not None else None,
    }


# Overridable for a quicker run (`BENCH_REPEATS=15 BENCH_NUMBER=2000`).
REPEATS = int(os.environ.get("BENCH_REPEATS", "25"))
NUMBER = int(os.environ.get("BENCH_NUMBER", "20000"))


def main():
    rows = []
    envs = {"torchcore": setup(tc)}
    if torch is not None:
        envs["torch"] = setup(torch)
    if np is not None:
        envs["numpy"] = setup(np)
    for label, stmt, np_stmt in CASES:
        timers = {
            name: timeit.Timer(np_stmt if name == "numpy" else stmt, globals=env)
            for name, env in envs.items()
        }
        best = {name: float("inf") for name in envs}
        for _ in range(REPEATS):
            for name, t in timers.items():
                best[name] = min(best[name], t.timeit(NUMBER) / NUMBER * 1e9)
        rows.append({"op": label, **best})
    cols = list(envs)
    print(f"Python {sys.version.split()[0]}; torch {getattr(torch, '__version__', '-')}; numpy {getattr(np, '__version__', '-')}")
    head = "| op | " + " | ".join(f"{c} (ns)" for c in cols)
    if "torch" in envs:
        head += " | torchcore / torch"
    if "numpy" in envs:
        head += " | torchcore / numpy"
    print(head + " |")
    print("|" + "---|" * (head.count("|")))
    for r in rows:
        line = f"| `{r['op']}` | " + " | ".join(f"{r[c]:.0f}" for c in cols)
        if "torch" in envs:
            line += f" | {r['torchcore'] / r['torch']:.2f}"
        if "numpy" in envs:
            line += f" | {r['torchcore'] / r['numpy']:.2f}"
        print(line + " |")


if __name__ == "__main__":
    main()
