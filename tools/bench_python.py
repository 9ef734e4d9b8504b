"""Per-call time from Python: torchcore side by side with torch and NumPy.

    python tools/bench_python.py            # whichever of torch/numpy import
    BENCH_REPEATS=15 BENCH_NUMBER=2000 python tools/bench_python.py   # quicker
    BENCH_ONLY="view,item" python tools/bench_python.py   # rows whose label has these
    BENCH_BEFORE=old/python python tools/bench_python.py   # + a "before" column

`BENCH_BEFORE` names a folder holding another build of the `torchcore`
package (the `torchcore/` folder with its `_C` extension, e.g. a wheel
installed with `pip install --target`): it is loaded under another module
name in the same process, so the two builds are timed side by side.

torch runs on one thread (`torch.set_num_threads(1)`; `BENCH_TORCH_THREADS=N`
changes it), as in the issue's side-by-side measurement: torch's idle OpenMP
workers spin for a while after each parallel call, and on a small machine they
take the core that the next library's call (interleaved) would use.

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

    torch.set_num_threads(int(os.environ.get("BENCH_TORCH_THREADS", "1")))
except ImportError:  # pragma: no cover
    torch = None
try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

CASES = [
    # label, torchcore/torch statement, numpy statement. The views and
    # indexing calls come first, every one the package has, each against
    # NumPy's closest equivalent (`np.*` functions such as `np.moveaxis` or
    # `np.split` are written in Python, so those rows flatter torchcore).
    ("a.view(3, 4)", "a.view(3, 4)", "a.reshape(3, 4)"),
    ("a.view(-1, 6)", "a.view(-1, 6)", "a.reshape(-1, 6)"),
    ("m.reshape(8, 6)", "m.reshape(8, 6)", "m.reshape(8, 6)"),
    ("m.reshape((8, 6))", "m.reshape((8, 6))", "m.reshape((8, 6))"),
    ("a[2:]", "a[2:]", "a[2:]"),
    ("m[3]", "m[3]", "m[3]"),
    ("m[3, 1:5]", "m[3, 1:5]", "m[3, 1:5]"),
    ("m[:, 1]", "m[:, 1]", "m[:, 1]"),
    ("m[..., 1:3]", "m[..., 1:3]", "m[..., 1:3]"),
    ("m[None]", "m[None]", "m[None]"),
    ("m.t()", "m.t()", "m.T"),
    ("m.T", "m.T", "m.T"),
    ("m.mT", "m.mT", "m.mT"),
    ("m.permute(1, 0)", "m.permute(1, 0)", "m.transpose(1, 0)"),
    ("m.transpose(0, 1)", "m.transpose(0, 1)", "m.swapaxes(0, 1)"),
    ("m.narrow(1, 2, 3)", "m.narrow(1, 2, 3)", "m[:, 2:5]"),
    ("m.select(0, 3)", "m.select(0, 3)", "m[3]"),
    ("m.expand(2, 6, 8)", "m.expand(2, 6, 8)", "np.broadcast_to(m, (2, 6, 8))"),
    ("m.unsqueeze(0)", "m.unsqueeze(0)", "m[None]"),
    ("u.squeeze(0)", "u.squeeze(0)", "u.squeeze(0)"),
    ("u.squeeze()", "u.squeeze()", "u.squeeze()"),
    ("m.flatten()", "m.flatten()", "m.ravel()"),
    ("m.unflatten(1, (2, 4))", "m.unflatten(1, (2, 4))", "m.reshape(6, 2, 4)"),
    ("m.movedim(0, 1)", "m.movedim(0, 1)", "np.moveaxis(m, 0, 1)"),
    ("m.diagonal()", "m.diagonal()", "m.diagonal()"),
    ("m.split(2)", "m.split(2)", "np.split(m, 3)"),
    ("m.chunk(3)", "m.chunk(3)", "np.split(m, 3)"),
    ("m.unbind()", "m.unbind()", "tuple(m)"),
    ("m.as_strided((3, 4), (1, 3))", "m.as_strided((3, 4), (1, 3))", "as_strided(m, (3, 4), (4, 12))"),
    ("m.detach()", "m.detach()", "m.view()"),
    ("view_as_real(c)", "mod.view_as_real(c)", "c.view(np.float32)"),
    ("empty(3, 4)", "mod.empty(3, 4)", "np.empty((3, 4), dtype=np.float32)"),
    ("empty((3, 4))", "mod.empty((3, 4))", "np.empty((3, 4), dtype=np.float32)"),
    # Copies, conversions, elements.
    ("s.clone()", "s.clone()", "s.copy()"),
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
    ("d0.item() (float64)", "d0.item()", "d0.item()"),
    ("h0.item() (float16)", "h0.item()", "h0.item()"),
    ("c0.item() (complex64)", "c0.item()", "c0.item()"),
    # Metadata and calls that return the tensor itself.
    ("m.shape", "m.shape", "m.shape"),
    ("m.size()", "m.size()", "m.shape"),
    ("m.stride()", "m.stride()", "m.strides"),
    ("m.device", "m.device", "m.device"),
    ("m.dtype", "m.dtype", "m.dtype"),
    ("m.contiguous() (already)", "m.contiguous()", "np.ascontiguousarray(m)"),
    ("m.conj() (real)", "m.conj()", "m.conj()"),
    ("m.untyped_storage()", "m.untyped_storage()", "m.data"),
    ("a.equal(a) (12 f32)", "a.equal(a)", "np.array_equal(a, a)"),
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
        "u": (mod.arange(48, dtype=mod.float32) if mod is not np else np.arange(48, dtype=np.float32)).reshape(1, 6, 8),
        "c": mod.zeros(12, dtype=mod.complex64) if mod is not np else np.zeros(12, dtype=np.complex64),
        "d0": mod.tensor(2.5, dtype=mod.float64) if mod is not np else np.float64(2.5),
        "h0": mod.tensor(2.5, dtype=mod.float16) if mod is not np else np.float16(2.5),
        "c0": mod.tensor(1 + 2j, dtype=mod.complex64) if mod is not np else np.complex64(1 + 2j),
        "as_strided": np.lib.stride_tricks.as_strided if np is not None else None,
    }


# Overridable for a quicker run (`BENCH_REPEATS=15 BENCH_NUMBER=2000`).
REPEATS = int(os.environ.get("BENCH_REPEATS", "25"))
NUMBER = int(os.environ.get("BENCH_NUMBER", "20000"))
# Only the rows whose label contains one of these comma-separated strings.
ONLY = [x for x in os.environ.get("BENCH_ONLY", "").split(",") if x]


def load_before(folder):
    """The `torchcore` package in `folder`, imported as `torchcore_before`."""
    import importlib.util

    pkg = os.path.join(folder, "torchcore")
    spec = importlib.util.spec_from_file_location(
        "torchcore_before", os.path.join(pkg, "__init__.py"), submodule_search_locations=[pkg]
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["torchcore_before"] = mod
    spec.loader.exec_module(mod)
    return mod


def main():
    rows = []
    envs = {"torchcore": setup(tc)}
    if os.environ.get("BENCH_BEFORE"):
        envs["before"] = setup(load_before(os.environ["BENCH_BEFORE"]))
    if torch is not None:
        envs["torch"] = setup(torch)
    if np is not None:
        envs["numpy"] = setup(np)
    for label, stmt, np_stmt in CASES:
        if ONLY and not any(o in label for o in ONLY):
            continue
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
    threads = torch.get_num_threads() if torch else '-'
    print(f"Python {sys.version.split()[0]}; torch {getattr(torch, '__version__', '-')} on {threads} thread(s); numpy {getattr(np, '__version__', '-')}")
    head = "| op | " + " | ".join(f"{c} (ns)" for c in cols)
    if "torch" in envs and "before" in envs:
        head += " | before / torch"
    if "torch" in envs:
        head += " | torchcore / torch"
    if "numpy" in envs:
        head += " | torchcore / numpy"
    print(head + " |")
    print("|" + "---|" * (head.count("|")))
    for r in rows:
        line = f"| `{r['op']}` | " + " | ".join(f"{r[c]:.0f}" for c in cols)
        if "torch" in envs and "before" in envs:
            line += f" | {r['before'] / r['torch']:.2f}"
        if "torch" in envs:
            line += f" | {r['torchcore'] / r['torch']:.2f}"
        if "numpy" in envs:
            line += f" | {r['torchcore'] / r['numpy']:.2f}"
        print(line + " |")


if __name__ == "__main__":
    main()
