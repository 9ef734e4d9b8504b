#!/usr/bin/env python3
"""Times view ops on a PyTorch fake tensor with symbolic sizes (s0, s1, s2)
(hints 4, 6, 8; FakeTensorMode + ShapeEnv, DimDynamic.DYNAMIC), one
environment reused after a warm-up: the reference for
crates/aten-shape/examples/sym_views_bench.rs. Medians of 15 runs, per call.

    python tools/bench_symbolic.py   
"""
import statistics
import time
import warnings

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

warnings.simplefilter("ignore")


def bench(name, f, n=300):
    for _ in range(50):
        f()
    samples = []
    for _ in range(15):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        samples.append((time.perf_counter() - t0) / n * 1e9)
    print(f"{name:<48} {statistics.median(samples):>9.0f} ns")


def main():
    env = ShapeEnv()
    mode = FakeTensorMode(shape_env=env)
    ctx = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * 3)
    x = mode.from_tensor(torch.empty(4, 6, 8), symbolic_context=ctx)
    with mode:
        xt = x.transpose(0, 1)
        print(f"torch {torch.__version__}, symbolic {tuple(x.shape)}:")
        bench("transpose(0, 1)", lambda: x.transpose(0, 1))
        bench("view(-1)", lambda: x.view(-1))
        bench("view(-1, 8)", lambda: x.view(-1, 8))
        bench("narrow(1, 1, 3)", lambda: x.narrow(1, 1, 3))
        bench("select(1, 2)", lambda: x.select(1, 2))
        bench("narrow -> transpose -> unsqueeze -> expand",
              lambda: x.narrow(1, 1, 3).transpose(0, 2).unsqueeze(0).expand(5, -1, -1, -1))
        bench("transpose(0, 1).reshape(-1) (copy)", lambda: xt.reshape(-1))
        bench("is_contiguous() of x.transpose(0, 1)", lambda: xt.is_contiguous())
        print("guards recorded:", len(env.guards))


if __name__ == "__main__":
    main()
