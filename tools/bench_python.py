"""Per-call time from Python: torchcore side by side with torch and NumPy.

    python tools/bench_python.py            # whichever of torch/numpy import

Each cell is the best of R `timeit` repeats of N calls, divided by N; the
libraries are interleaved repeat by repeat, so that on a shared, loaded
machine each one gets the same chances at a quiet moment.
"""

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
    ("from_numpy(n)", "mod.from_numpy(n)", "np.asarray(n)"),
    ("l.numpy()", "l.numpy()", "np.asarray(l)"),
    ("np.asarray(l)", "np.asarray(l)", "np.asarray(l)"),
]


def setup(mod):
    return {
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


REPEATS = 25
NUMBER = 20_000


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
