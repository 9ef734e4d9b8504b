#!/usr/bin/env python3
"""Generates the fidelity corpus (crates/shape-conformance/data/fidelity.jsonl)
with real PyTorch: what lies beyond view geometry (scalar range checks,
dtype conversions, factories and their dtype inference, arange/linspace/eye
values, version counters, resizing storages made from data, the in-place
rules for leaves that require grad, error texts, transpose_/squeeze_/
view(dtype)/set_).

    python3 -m venv /tmp/tv && /tmp/tv/bin/pip install torch numpy
    /tmp/tv/bin/python tools/gen_fidelity.py > crates/shape-conformance/data/fidelity.jsonl
    cargo test -p shape-conformance --test fidelity

The format is described in crates/shape-conformance/data/README.md
("Fidelity corpus"). Every case is a short script: each step runs one
operation and records what PyTorch returned (the observed tensor's dtype,
geometry, values, version counter, requires_grad, is_leaf and storage size)
or the exception it raised (kind and first line of the message).
The cases are deterministic (no randomness): rerunning the script on the
same PyTorch gives the same file.
"""
import contextlib, json, math, sys, warnings
import torch

warnings.simplefilter("ignore")

DT = {
    "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "uint16": torch.uint16, "uint32": torch.uint32, "uint64": torch.uint64,
    "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
    "float64": torch.float64, "bool": torch.bool, "complex64": torch.complex64,
    "complex128": torch.complex128,
}
NAME = {v: k for k, v in DT.items()}
REAL = [k for k in DT if not k.startswith("complex")]


def enc_num(x):
    if isinstance(x, bool):
        return x
    if isinstance(x, int):
        return x
    if isinstance(x, complex):
        return [enc_num(x.real), enc_num(x.imag)]
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def enc_scalar(v):
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": v}
    return {"float": enc_num(v)}


def observe(t):
    o = {
        "dtype": NAME[t.dtype],
        "sizes": list(t.shape),
        "strides": list(t.stride()),
        "offset": t.storage_offset(),
        "values": [enc_num(v) for v in t.detach().flatten().tolist()] if t.numel() <= 4096 and t.device.type != "meta" else None,
        "device": t.device.type,
        "storage_nbytes": t.untyped_storage().nbytes(),
    }
    # Reading the autograd flags of a view whose base changed in place may
    # fail in PyTorch's autograd engine (it rebuilds the view's grad_fn);
    # recorded apart from the operation's own outcome.
    try:
        o["requires_grad"] = t.requires_grad
        o["is_leaf"] = t.is_leaf
    except RuntimeError as e:
        o["autograd_error"] = str(e).split("\n")[0]
    try:
        o["version"] = t._version
    except RuntimeError:
        o["version"] = None  # inference tensor
    if o["values"] is None:
        del o["values"]
    return o


def err(e):
    return {"error": {"kind": type(e).__name__, "msg": str(e).split("\n")[0]}}


MODES = {
    None: contextlib.nullcontext,
    "inference": torch.inference_mode,
    "no_grad": torch.no_grad,
}


def dt_arg(a):
    return DT[a["dtype"]] if a.get("dtype") is not None else None


def dev(a):
    return a.get("device", "cpu")


def scalar(s):
    (k, v), = s.items()
    if k == "float":
        return float(v)
    return v


def tensor_data(a):
    vals = []
    for v in a["data"]:
        if isinstance(v, list):
            vals.append(complex(float(v[0]), float(v[1])))
        elif isinstance(v, str):
            vals.append(float(v))
        else:
            vals.append(v)
    return torch.tensor(vals, dtype=DT[a["dtype"]]).reshape(a.get("sizes", [len(vals)]))


# op name -> (kind, function(env, self, args))
#   kind "new": makes a tensor (no self); "inplace": returns self; "out": new tensor from self
def run_op(op, x, a, env):
    if op == "tensor":
        t = tensor_data(a)
        if a.get("requires_grad"):
            t.requires_grad_(True)
        return t
    if op == "zeros":
        return torch.zeros(a["size"], dtype=dt_arg(a), requires_grad=a.get("requires_grad", False), device=dev(a))
    if op == "empty":
        return torch.empty(a["size"], dtype=dt_arg(a), requires_grad=a.get("requires_grad", False), device=dev(a))
    if op == "ones":
        return torch.ones(a["size"], dtype=dt_arg(a), device=dev(a))
    if op == "full":
        return torch.full(a["size"], scalar(a["value"]), dtype=dt_arg(a), device=dev(a))
    if op == "scalar_tensor":
        return torch.scalar_tensor(scalar(a["value"]), dtype=dt_arg(a), device=dev(a))
    if op == "arange":
        return torch.arange(scalar(a["start"]), scalar(a["end"]), scalar(a["step"]), dtype=dt_arg(a), device=dev(a))
    if op == "linspace":
        return torch.linspace(scalar(a["start"]), scalar(a["end"]), a["steps"], dtype=dt_arg(a), device=dev(a))
    if op == "eye":
        if a.get("m") is None:
            return torch.eye(a["n"], dtype=dt_arg(a), device=dev(a))
        return torch.eye(a["n"], a["m"], dtype=dt_arg(a), device=dev(a))
    # ops on self
    if op == "fill_":
        return x.fill_(scalar(a["value"]))
    if op == "zero_":
        return x.zero_()
    if op == "setitem":
        x[tuple(a["index"])] = scalar(a["value"])
        return x
    if op == "copy_":
        return x.copy_(env[a["src"]])
    if op == "resize_":
        return x.resize_(a["size"])
    if op == "set_":
        src = env[a["source"]]
        if "size" in a:
            return x.set_(src.untyped_storage(), a["offset"], a["size"], a["stride"])
        return x.set_(src)
    if op == "set_storage":
        return x.set_(env[a["source"]].untyped_storage())
    if op == "t_":
        return x.t_()
    if op == "transpose_":
        return x.transpose_(a["dim0"], a["dim1"])
    if op == "squeeze_":
        d = a.get("dim")
        return x.squeeze_() if d is None else x.squeeze_(tuple(d) if isinstance(d, list) else d)
    if op == "unsqueeze_":
        return x.unsqueeze_(a["dim"])
    if op == "as_strided_":
        return x.as_strided_(a["size"], a["stride"], a.get("offset"))
    if op == "requires_grad_":
        return x.requires_grad_(a["flag"])
    if op == "to":
        return x.to(DT[a["dtype"]])
    if op == "clone":
        return x.clone()
    if op == "contiguous":
        return x.contiguous()
    if op == "detach":
        return x.detach()
    if op == "t":
        return x.t()
    if op == "view":
        return x.view(a["size"])
    if op == "view_dtype":
        return x.view(DT[a["dtype"]])
    if op == "select":
        return x.select(a["dim"], a["index"])
    if op == "getitem":
        return x[tuple(a["index"])]
    if op == "slice":
        return x[a["start"]:a["end"]:a["step"]]
    raise ValueError("unknown op " + op)


INPLACE = {"fill_", "zero_", "setitem", "copy_", "resize_", "set_", "set_storage", "t_",
           "transpose_", "squeeze_", "unsqueeze_", "as_strided_", "requires_grad_"}
NEW = {"tensor", "zeros", "empty", "ones", "full", "scalar_tensor", "arange", "linspace", "eye"}

out = sys.stdout
count = [0]


def case(cat, cid, steps):
    """steps: list of dicts {op, args, self?, out?, mode?}; runs them and records expects."""
    env = {}
    rec = []
    for s in steps:
        op, a = s["op"], s.get("args", {})
        me = s.get("self", "x")
        dst = s.get("out", "x" if op in NEW or op in INPLACE else "y")
        step = {"op": op, "args": a}
        if "self" in s:
            step["self"] = s["self"]
        if "out" in s:
            step["out"] = s["out"]
        if s.get("mode"):
            step["mode"] = s["mode"]
        try:
            with MODES[s.get("mode")]():
                r = run_op(op, env.get(me), a, env)
            env[dst] = r
            step["expect"] = observe(r)
        except Exception as e:  # noqa: BLE001 - recorded as the expectation
            step["expect"] = err(e)
        rec.append(step)
    count[0] += 1
    out.write(json.dumps({"id": f"{cat}-{cid}", "cat": cat, "steps": rec}) + "\n")


# ---------------------------------------------------------------------------
# 1. scalar range checks (c10's checked_convert): fill_, full, scalar_tensor,
#    single-element writes, for every dtype and a value set at every edge.
INTS = [0, 1, -1, 2, 127, 128, -128, -129, 255, 256, -255, -256, 300, 32767, 32768, -32768, -32769,
        65535, 65536, -65535, -65536, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1, 2**32, -2**32,
        2**53 + 1, 2**63 - 1, -2**63, 16777217]
FLOATS = [0.0, -0.0, 0.5, -0.5, 2.5, -2.5, -1.0, 1.0, 127.5, 128.0, -128.5, -129.0, 255.5, 256.0,
          -255.0, -256.0, 300.0, 32767.5, 32768.0, -32769.0, 65504.0, 65519.0, 65520.0, 1e5, -1e5,
          2147483647.0, 2147483648.0, -2147483649.0, 4294967296.0, 1e10, -1e10, 9.2e18,
          9.223372036854775807e18, 1.8446744073709552e19, 1e20, 3.3e38, 3.4028234663852886e38,
          3.4028235677973366e38, 3.5e38, 1e40, -1e40, 1e300, 1e-40, 1e-50, 5e-324,
          float("inf"), float("-inf"), float("nan"), 0.1, 1.0000001]
BOOLS = [True, False]
VALUES = INTS + FLOATS + BOOLS

for dt in DT:
    for i, v in enumerate(VALUES):
        sv = enc_scalar(v)
        case("range", f"fill-{dt}-{i}", [
            {"op": "zeros", "args": {"size": [2], "dtype": dt}},
            {"op": "fill_", "args": {"value": sv}}])
        case("range", f"full-{dt}-{i}", [
            {"op": "full", "args": {"size": [2], "value": sv, "dtype": dt}}])
        case("range", f"scalar_tensor-{dt}-{i}", [
            {"op": "scalar_tensor", "args": {"value": sv, "dtype": dt}}])
        case("range", f"setitem-{dt}-{i}", [
            {"op": "zeros", "args": {"size": [3], "dtype": dt}},
            {"op": "setitem", "args": {"index": [1], "value": sv}}])

# ---------------------------------------------------------------------------
# 2. dtype inference in factories that take a scalar (no dtype given).
for i, v in enumerate([0, 3, -7, 2**40, 2.5, -0.0, float("inf"), float("nan"), True, False, 1e40]):
    sv = enc_scalar(v)
    case("infer", f"full-{i}", [{"op": "full", "args": {"size": [2], "value": sv}}])
    case("infer", f"scalar_tensor-{i}", [{"op": "scalar_tensor", "args": {"value": sv}}])
for i, (s, e, st) in enumerate([(0, 5, 1), (0, 5.0, 1), (0.0, 5, 1), (0, 5, 0.5), (True, 5, 1),
                                (0, 5, True), (-3, 3, 2), (0, 1, 0.25)]):
    case("infer", f"arange-{i}", [{"op": "arange", "args": {
        "start": enc_scalar(s), "end": enc_scalar(e), "step": enc_scalar(st)}}])
for i, (s, e, n) in enumerate([(0, 1, 5), (0, 10, 3), (True, 5, 2), (2, 8, 4)]):
    case("infer", f"linspace-{i}", [{"op": "linspace", "args": {
        "start": enc_scalar(s), "end": enc_scalar(e), "steps": n}}])
case("infer", "eye-0", [{"op": "eye", "args": {"n": 3}}])
case("infer", "zeros-0", [{"op": "zeros", "args": {"size": [2]}}])

# ---------------------------------------------------------------------------
# 3. arange: values (PyTorch's accumulation), sizes, dtypes, errors.
AR = [(0, 10, 1), (0, 10, 3), (0, 10, 2.5), (-0.5, 2, 1), (-1, 1, 0.1), (0, 1, 0.1), (1, 0, -0.1),
      (0.3, 7.9, 0.37), (-5.25, 5.5, 0.125), (0, 100, 0.7), (-2.7, 3.3, 0.31), (10, 0, -3),
      (10, 0, -2.5), (0, 0, 1), (5, 5, -1), (0, 1e-3, 1e-5), (1e6, 1e6 + 50, 1.5),
      (0, 10, -1), (10, 0, 1), (0, 10, 0), (0, 10, 0.0), (0, float("inf"), 1), (float("nan"), 1, 1),
      (0, 2**40, 2**38), (-(2**62), 2**62, 2**61), (0, 300, 1), (0, 70000, 17), (0.5, 64.5, 1),
      (-100, 100, 7.7), (3, 40, 1.1)]
AR_DT = [None] + list(DT)
for i, (s, e, st) in enumerate(AR):
    for dt in AR_DT:
        a = {"start": enc_scalar(s), "end": enc_scalar(e), "step": enc_scalar(st)}
        if dt:
            a["dtype"] = dt
        case("arange", f"{i}-{dt}", [{"op": "arange", "args": a}])

# ---------------------------------------------------------------------------
# 4. linspace and eye.
LS = [(0, 1, 5), (0, 1, 1), (0, 1, 0), (1, 0, 7), (-3.3, 8.1, 13), (0, 10, 11), (0, 255, 50),
      (0, 1, 100), (-1, 1, 33), (2.5, 2.5, 4), (0, 1, -1), (0, 300, 7), (-5, 5, 8),
      (0.1, 0.9, 17), (1e10, 1e10 + 1, 3), (0, 7, 300)]
for i, (s, e, n) in enumerate(LS):
    for dt in [None] + list(DT):
        a = {"start": enc_scalar(s), "end": enc_scalar(e), "steps": n}
        if dt:
            a["dtype"] = dt
        case("linspace", f"{i}-{dt}", [{"op": "linspace", "args": a}])
for i, (n, m) in enumerate([(0, None), (1, None), (3, None), (2, 4), (4, 2), (3, 0), (-1, None),
                            (2, -1), (5, 5)]):
    for dt in [None, "float32", "int64", "bool", "uint8", "float16", "complex64"]:
        a = {"n": n, "m": m}
        if dt:
            a["dtype"] = dt
        case("eye", f"{i}-{dt}", [{"op": "eye", "args": a}])

# ---------------------------------------------------------------------------
# 5. conversions: every (src, dst) pair, a value set at every edge of every
#    dtype; a short tensor (scalar loop) and a long one (vectorised loop).
SRC_F = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 127.9, 128.0, 255.0, 255.9, 256.0, -1.0,
         -1.9, -128.0, -129.0, 32767.0, 32768.0, 65535.0, 65536.0, -32769.0, 2147483520.0,
         2147483648.0, 4294967040.0, 4294967296.0, -2147483904.0, 1e10, -1e10, 9.2e18,
         9.223372036854775807e18, 1.8446744073709552e19, 3e19, 1e20, -1e20, 65504.0, 70000.0,
         3.3e38, 1e-40, float("inf"), float("-inf"), float("nan")]
SRC_I = [0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32769, 65535, 65536, 2**31 - 1,
         2**31, -2**31, 2**32 - 1, 2**32, 2**53 + 1, 2**63 - 1, -2**63, 16777217, 123456789]


def src_values(dt):
    d = DT[dt]
    if d == torch.bool:
        return [False, True]
    if d.is_floating_point or d.is_complex:
        vals = SRC_F
        t = torch.tensor(vals, dtype=torch.float64).to(d)
        if d.is_complex:
            t = t + 1j * torch.tensor(list(reversed(vals)), dtype=torch.float64).to(d)
        return t.tolist()
    info = torch.iinfo(d)
    return [v for v in SRC_I if info.min <= v <= info.max]


for src in DT:
    vals = src_values(src)
    data = [enc_num(v) for v in vals]
    for dst in DT:
        case("convert", f"{src}-{dst}-short", [
            {"op": "tensor", "args": {"data": data, "dtype": src}},
            {"op": "to", "args": {"dtype": dst}}])
        # Every other element of a doubled tensor: a strided source, which
        # PyTorch converts element by element (no vectorised loop).
        doubled = [v for v in data for _ in range(2)]
        case("convert", f"{src}-{dst}-strided", [
            {"op": "tensor", "args": {"data": doubled, "dtype": src}},
            {"op": "slice", "args": {"start": 0, "end": len(doubled), "step": 2}},
            {"op": "to", "self": "y", "args": {"dtype": dst}, "out": "z"}])
        long = (data * ((64 // len(data)) + 2))[: max(64, len(data))]
        case("convert", f"{src}-{dst}-long", [
            {"op": "tensor", "args": {"data": long, "dtype": src}},
            {"op": "to", "args": {"dtype": dst}}])

# ---------------------------------------------------------------------------
# 6. version counters.
V = [
    ("resize-same", [{"op": "zeros", "args": {"size": [2, 3]}}, {"op": "resize_", "args": {"size": [2, 3]}}]),
    ("resize-shrink", [{"op": "zeros", "args": {"size": [2, 3]}}, {"op": "resize_", "args": {"size": [4]}}]),
    ("resize-grow", [{"op": "zeros", "args": {"size": [2, 3]}}, {"op": "resize_", "args": {"size": [4, 4]}}]),
    ("resize-reshape", [{"op": "zeros", "args": {"size": [2, 3]}}, {"op": "resize_", "args": {"size": [3, 2]}}]),
    ("resize-twice", [{"op": "zeros", "args": {"size": [6]}}, {"op": "resize_", "args": {"size": [6]}},
                      {"op": "resize_", "args": {"size": [2, 3]}}, {"op": "resize_", "args": {"size": [2, 3]}}]),
    ("fill", [{"op": "zeros", "args": {"size": [3]}}, {"op": "fill_", "args": {"value": {"int": 1}}},
              {"op": "fill_", "args": {"value": {"int": 2}}}]),
    ("fill-overflow", [{"op": "zeros", "args": {"size": [3], "dtype": "uint8"}},
                       {"op": "fill_", "args": {"value": {"int": 300}}},
                       {"op": "fill_", "args": {"value": {"int": 3}}}]),
    ("setitem-ok", [{"op": "zeros", "args": {"size": [3]}}, {"op": "setitem", "args": {"index": [1], "value": {"int": 5}}}]),
    ("setitem-bad-index", [{"op": "zeros", "args": {"size": [3]}}, {"op": "setitem", "args": {"index": [5], "value": {"int": 5}}},
                           {"op": "zero_"}]),
    ("setitem-too-many", [{"op": "zeros", "args": {"size": [2, 2]}}, {"op": "setitem", "args": {"index": [0, 0, 0], "value": {"int": 5}}}]),
    ("setitem-overflow", [{"op": "zeros", "args": {"size": [3], "dtype": "int8"}}, {"op": "setitem", "args": {"index": [0], "value": {"int": 500}}}]),
    ("copy", [{"op": "zeros", "args": {"size": [3]}, "out": "s"}, {"op": "zeros", "args": {"size": [3]}},
              {"op": "copy_", "args": {"src": "s"}}]),
    ("copy-bad-shape", [{"op": "zeros", "args": {"size": [4]}, "out": "s"}, {"op": "zeros", "args": {"size": [3]}},
                        {"op": "copy_", "args": {"src": "s"}}]),
    ("view-shares", [{"op": "zeros", "args": {"size": [2, 3]}}, {"op": "t", "out": "y"},
                     {"op": "fill_", "self": "y", "args": {"value": {"int": 1}}},
                     {"op": "zero_", "self": "x"}]),
    ("t_", [{"op": "zeros", "args": {"size": [2, 3]}}, {"op": "t_"}, {"op": "unsqueeze_", "args": {"dim": 0}},
            {"op": "transpose_", "args": {"dim0": 0, "dim1": 2}}, {"op": "squeeze_"}]),
    ("as_strided_", [{"op": "zeros", "args": {"size": [6]}}, {"op": "as_strided_", "args": {"size": [2, 2], "stride": [1, 2]}}]),
    ("set_", [{"op": "zeros", "args": {"size": [4]}, "out": "s"}, {"op": "zeros", "args": {"size": [3]}},
              {"op": "set_", "args": {"source": "s"}}]),
    ("clone", [{"op": "zeros", "args": {"size": [3]}}, {"op": "fill_", "args": {"value": {"int": 1}}}, {"op": "clone"}]),
    ("contiguous-copy", [{"op": "zeros", "args": {"size": [2, 3]}}, {"op": "t", "out": "y"},
                         {"op": "contiguous", "self": "y", "out": "z"}]),
    ("to-dtype", [{"op": "zeros", "args": {"size": [3]}}, {"op": "to", "args": {"dtype": "float64"}}]),
    ("inference-clone", [{"op": "zeros", "args": {"size": [3]}, "mode": "inference"}, {"op": "clone"}]),
    ("inference-clone-inside", [{"op": "zeros", "args": {"size": [3]}, "mode": "inference"}, {"op": "clone", "mode": "inference"}]),
    ("inference-contiguous", [{"op": "zeros", "args": {"size": [2, 3]}, "mode": "inference"},
                              {"op": "t", "out": "y"}, {"op": "contiguous", "self": "y", "out": "z"}]),
    ("inference-to", [{"op": "zeros", "args": {"size": [3]}, "mode": "inference"}, {"op": "to", "args": {"dtype": "float64"}}]),
    ("inference-fill-outside", [{"op": "zeros", "args": {"size": [3]}, "mode": "inference"},
                                {"op": "fill_", "args": {"value": {"int": 1}}}]),
    ("inference-fill-inside", [{"op": "zeros", "args": {"size": [3]}, "mode": "inference"},
                               {"op": "fill_", "args": {"value": {"int": 1}}, "mode": "inference"}]),
    ("normal-in-inference", [{"op": "zeros", "args": {"size": [3]}},
                             {"op": "fill_", "args": {"value": {"int": 1}}, "mode": "inference"},
                             {"op": "clone", "mode": "inference"}]),
    ("detach-shares", [{"op": "zeros", "args": {"size": [3]}}, {"op": "detach", "out": "y"},
                       {"op": "fill_", "self": "y", "args": {"value": {"int": 1}}}, {"op": "zero_"}]),
    ("view-dtype", [{"op": "zeros", "args": {"size": [4]}}, {"op": "view_dtype", "args": {"dtype": "int32"}},
                    {"op": "fill_", "self": "y", "args": {"value": {"int": 1}}}, {"op": "zero_"}]),
]
for name, steps in V:
    case("version", name, steps)

# ---------------------------------------------------------------------------
# 7. storages made from data are resizable like any other.
R = [
    ("grow", [{"op": "tensor", "args": {"data": [1, 2, 3, 4], "dtype": "int64"}}, {"op": "resize_", "args": {"size": [10]}}]),
    ("grow-2d", [{"op": "tensor", "args": {"data": [1.5, 2.5], "dtype": "float32"}}, {"op": "resize_", "args": {"size": [3, 3]}}]),
    ("shrink-grow", [{"op": "tensor", "args": {"data": [1, 2, 3, 4], "dtype": "int32"}}, {"op": "resize_", "args": {"size": [2]}},
                     {"op": "resize_", "args": {"size": [4]}}]),
    ("set-grow", [{"op": "tensor", "args": {"data": [1, 2], "dtype": "int64"}, "out": "s"},
                  {"op": "zeros", "args": {"size": [2], "dtype": "int64"}},
                  {"op": "set_", "args": {"source": "s", "offset": 1, "size": [5], "stride": [1]}}]),
    ("view-then-grow", [{"op": "tensor", "args": {"data": [1, 2, 3, 4], "dtype": "int64"}},
                        {"op": "t", "out": "y"}, {"op": "resize_", "args": {"size": [8]}},
                        {"op": "fill_", "self": "y", "args": {"value": {"int": 7}}}]),
]
for name, steps in R:
    case("resize_data", name, steps)

# ---------------------------------------------------------------------------
# 8. in-place rules for leaves that require grad, views of them, detach,
#    no_grad and inference mode.
LEAF_OPS = [
    ("fill_", {"value": {"int": 1}}), ("zero_", {}), ("t_", {}), ("transpose_", {"dim0": 0, "dim1": 1}),
    ("unsqueeze_", {"dim": 0}), ("squeeze_", {}), ("as_strided_", {"size": [2], "stride": [1]}),
    ("resize_", {"size": [4]}), ("resize_", {"size": [2, 2]}), ("set_", {"source": "s"}),
    ("setitem", {"index": [0], "value": {"int": 3}}), ("copy_", {"src": "s"}), ("requires_grad_", {"flag": False}),
]
for j, (op, a) in enumerate(LEAF_OPS):
    for mode in [None, "no_grad", "inference"]:
        pre = [{"op": "zeros", "args": {"size": [2, 2]}, "out": "s"},
               {"op": "zeros", "args": {"size": [2, 2], "requires_grad": True}}]
        case("leaf", f"{op}-{j}-{mode}", pre + [{"op": op, "args": a, "mode": mode}])
        case("leaf", f"view-{op}-{j}-{mode}", pre + [{"op": "t", "out": "v"},
                                                 {"op": op, "self": "v", "args": a, "mode": mode}])
        case("leaf", f"detach-{op}-{j}-{mode}", pre + [{"op": "detach", "out": "d"},
                                                   {"op": op, "self": "d", "args": a, "mode": mode}])
        case("leaf", f"select-{op}-{j}-{mode}", pre + [{"op": "select", "args": {"dim": 0, "index": 0}, "out": "v"},
                                                   {"op": op, "self": "v", "args": a, "mode": mode}])
        case("leaf", f"clone-{op}-{j}-{mode}", pre + [{"op": "clone", "out": "v"},
                                                  {"op": op, "self": "v", "args": a, "mode": mode}])
        case("leaf", f"nograd-view-{op}-{j}-{mode}", pre + [{"op": "t", "out": "v", "mode": "no_grad"},
                                                        {"op": op, "self": "v", "args": a, "mode": mode}])
for i, dt in enumerate(DT):
    case("leaf", f"requires_grad-{dt}", [{"op": "zeros", "args": {"size": [2], "dtype": dt}},
                                         {"op": "requires_grad_", "args": {"flag": True}}])
    case("leaf", f"requires_grad-factory-{dt}", [{"op": "zeros", "args": {"size": [2], "dtype": dt, "requires_grad": True}}])
case("leaf", "view-of-leaf-flags", [{"op": "zeros", "args": {"size": [2, 2], "requires_grad": True}}, {"op": "t"},
                                    {"op": "detach", "self": "y", "out": "z"}])

# ---------------------------------------------------------------------------
# 9. error texts.
E = [
    ("resize-neg", [{"op": "zeros", "args": {"size": [2]}}, {"op": "resize_", "args": {"size": [-1]}}]),
    ("resize-neg-2d", [{"op": "zeros", "args": {"size": [2]}}, {"op": "resize_", "args": {"size": [2, -3]}}]),
    ("as_strided_-neg", [{"op": "zeros", "args": {"size": [4]}}, {"op": "as_strided_", "args": {"size": [-1], "stride": [1]}}]),
    ("as_strided_-neg-stride", [{"op": "zeros", "args": {"size": [4]}}, {"op": "as_strided_", "args": {"size": [2], "stride": [-1]}}]),
    ("zeros-neg", [{"op": "zeros", "args": {"size": [-1]}}]),
    ("zeros-neg-2d", [{"op": "zeros", "args": {"size": [2, -5]}}]),
    ("empty-neg", [{"op": "empty", "args": {"size": [-1]}}]),
    ("ones-neg", [{"op": "ones", "args": {"size": [3, -2]}}]),
    ("full-neg", [{"op": "full", "args": {"size": [-2], "value": {"int": 1}}}]),
    ("too-many-indices", [{"op": "zeros", "args": {"size": [2, 2]}}, {"op": "getitem", "args": {"index": [0, 0, 0]}}]),
    ("too-many-indices-1d", [{"op": "zeros", "args": {"size": [2]}}, {"op": "getitem", "args": {"index": [0, 1]}}]),
    ("too-many-indices-0d", [{"op": "scalar_tensor", "args": {"value": {"int": 1}}}, {"op": "getitem", "args": {"index": [0]}}]),
    ("index-out-of-range", [{"op": "zeros", "args": {"size": [2, 3]}}, {"op": "getitem", "args": {"index": [0, 3]}}]),
    ("index-neg-out-of-range", [{"op": "zeros", "args": {"size": [2, 3]}}, {"op": "getitem", "args": {"index": [-3]}}]),
    ("getitem-ok", [{"op": "zeros", "args": {"size": [2, 3]}}, {"op": "getitem", "args": {"index": [1, -1]}}]),
]
for name, steps in E:
    case("errors", name, steps)

# ---------------------------------------------------------------------------
# 10. transpose_, squeeze_ with dims, view(dtype), set_ across dtypes.
SH = [[2, 1, 3, 1], [1, 1], [1], [], [3, 1, 1, 2]]
for i, sz in enumerate(SH):
    nd = len(sz)
    for d in [None, 0, -1, [0], [0, 1], [1, 3], [-1, 0], [0, 0], [5], [], [0, -4]]:
        a = {} if d is None else {"dim": d}
        case("ops", f"squeeze_-{i}-{d}", [{"op": "zeros", "args": {"size": sz}},
                                          {"op": "squeeze_", "args": a}])
    for d0, d1 in [(0, 1), (0, -1), (1, 1), (0, 5), (-5, 0), (0, 0)]:
        case("ops", f"transpose_-{i}-{d0}-{d1}", [{"op": "zeros", "args": {"size": sz}},
                                                  {"op": "transpose_", "args": {"dim0": d0, "dim1": d1}}])
VD = [([4, 6], [6, 1], 0), ([2, 3], [1, 2], 0), ([4], [1], 1), ([3], [2], 0), ([2, 4], [4, 1], 1),
      ([], [], 0), ([0, 4], [4, 1], 0), ([4, 1], [1, 1], 0), ([6], [1], 2), ([2, 2], [2, 1], 2)]
for i, (sz, st, off) in enumerate(VD):
    for src in ["float32", "int16", "uint8", "float64", "bool", "complex64"]:
        for dst in ["float32", "int64", "int8", "float16", "uint8", "complex128", "bool", "int32"]:
            n = 1 + off + sum((s - 1) * t for s, t in zip(sz, st)) if all(sz) else 0
            case("ops", f"view_dtype-{i}-{src}-{dst}", [
                {"op": "tensor", "args": {"data": list(range(max(n, 1) + 2)), "dtype": "int64"}, "out": "b"},
                {"op": "to", "self": "b", "args": {"dtype": src}, "out": "c"},
                {"op": "zeros", "args": {"size": [0], "dtype": src}},
                {"op": "set_", "args": {"source": "c", "offset": off, "size": sz, "stride": st}},
                {"op": "view_dtype", "args": {"dtype": dst}}])
for src in ["float32", "int64", "uint8"]:
    for dst in ["float32", "int64", "float64", "uint8"]:
        case("ops", f"set_-dtype-{src}-{dst}", [
            {"op": "zeros", "args": {"size": [4], "dtype": src}, "out": "s"},
            {"op": "zeros", "args": {"size": [2], "dtype": dst}},
            {"op": "set_", "args": {"source": "s"}}])
        case("ops", f"set_-storage-dtype-{src}-{dst}", [
            {"op": "zeros", "args": {"size": [4], "dtype": src}, "out": "s"},
            {"op": "zeros", "args": {"size": [2], "dtype": dst}},
            {"op": "set_storage", "args": {"source": "s"}}])

# ---------------------------------------------------------------------------
# 11. the meta device: geometry, dtypes and versions without data; set_
#     across devices.
M = "meta"
META = [
    ("empty", [{"op": "empty", "args": {"size": [2, 3], "device": M}}]),
    ("zeros", [{"op": "zeros", "args": {"size": [2, 3], "device": M, "dtype": "int64"}}]),
    ("full-overflow", [{"op": "full", "args": {"size": [2], "value": {"int": 300}, "dtype": "uint8", "device": M}}]),
    ("full-infer", [{"op": "full", "args": {"size": [2], "value": {"int": 3}, "device": M}}]),
    ("fill-overflow", [{"op": "empty", "args": {"size": [2], "dtype": "uint8", "device": M}},
                       {"op": "fill_", "args": {"value": {"int": 300}}}]),
    ("fill", [{"op": "empty", "args": {"size": [2], "device": M}}, {"op": "fill_", "args": {"value": {"float": 2.5}}}]),
    ("arange", [{"op": "arange", "args": {"start": {"int": 0}, "end": {"int": 10}, "step": {"int": 3}, "device": M}}]),
    ("arange-bad", [{"op": "arange", "args": {"start": {"int": 0}, "end": {"int": 10}, "step": {"int": -3}, "device": M}}]),
    ("linspace", [{"op": "linspace", "args": {"start": {"int": 0}, "end": {"int": 1}, "steps": 5, "device": M}}]),
    ("eye", [{"op": "eye", "args": {"n": 3, "m": 2, "device": M}}]),
    ("resize", [{"op": "empty", "args": {"size": [2], "device": M}}, {"op": "resize_", "args": {"size": [10]}}]),
    ("t_", [{"op": "empty", "args": {"size": [2, 3], "device": M}}, {"op": "t_"}]),
    ("set-meta", [{"op": "empty", "args": {"size": [5], "device": M}, "out": "s"},
                  {"op": "empty", "args": {"size": [2], "device": M}}, {"op": "set_", "args": {"source": "s"}}]),
    ("set-cpu-onto-meta", [{"op": "zeros", "args": {"size": [3]}, "out": "s"},
                           {"op": "empty", "args": {"size": [2], "device": M}}, {"op": "set_", "args": {"source": "s"}}]),
    ("set-meta-onto-cpu", [{"op": "empty", "args": {"size": [3], "device": M}, "out": "s"},
                           {"op": "zeros", "args": {"size": [2]}}, {"op": "set_", "args": {"source": "s"}}]),
    ("clone", [{"op": "empty", "args": {"size": [2, 3], "device": M}}, {"op": "t"}, {"op": "clone", "self": "y", "out": "z"}]),
    ("to", [{"op": "empty", "args": {"size": [2, 3], "device": M}}, {"op": "to", "args": {"dtype": "float64"}}]),
    ("view-dtype", [{"op": "empty", "args": {"size": [2, 4], "device": M}}, {"op": "view_dtype", "args": {"dtype": "int64"}}]),
    ("zeros-neg", [{"op": "zeros", "args": {"size": [-1], "device": M}}]),
]
for name, steps in META:
    case("meta", name, steps)

print(f"{count[0]} cases", file=sys.stderr)
