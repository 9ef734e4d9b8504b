#!/usr/bin/env python3
"""Generates extra conformance cases with real PyTorch (same format as
data/shape-ops.jsonl): random bases, random op chains, including the ops
the public corpus does not cover (split_with_sizes, tensor_split, unbind,
swapaxes, mT, T, ravel, alias, broadcast_to, squeeze with a dim list) and
extreme arguments (huge dims of zero-element tensors, huge steps/offsets).

    pip install torch    # CPU is enough
    python3 tools/gen_conformance.py SEED COUNT > /tmp/more.jsonl
    cargo xtask conformance /tmp/more.jsonl

crates/shape-conformance/data/extra-ops.jsonl was made with this script;
see docs/conformance.md.
"""
import json, random, sys, warnings
import torch

warnings.simplefilter("ignore")
DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
          "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
          "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool}
BIG = [2**62, 2**62 + 1, 2**63 - 1, -(2**63), -(2**62), -(2**62) - 1, 2**40, -(2**40), 2**31]

rng = random.Random(int(sys.argv[1]))
COUNT = int(sys.argv[2])


def rdim(n):
    if rng.random() < 0.1:
        return rng.choice([n, -n - 1, 7, -7, 0, -1])
    return rng.randint(-max(n, 1), max(n, 1) - 1)


def rint(lo, hi):
    if rng.random() < 0.05:
        return rng.choice(BIG)
    return rng.randint(lo, hi)


def rand_base():
    nd = rng.randint(0, 5)
    sizes = [rng.choice([0, 1, 1, 2, 2, 3, 4, 5]) if rng.random() < 0.9 else rng.randint(0, 6) for _ in range(nd)]
    mode = rng.random()
    if mode < 0.4:
        strides, acc = [], 1
        for s in reversed(sizes):
            strides.append(acc)
            acc *= max(s, 1)
        strides.reverse()
    elif mode < 0.7:
        strides = [rng.choice([0, 1, 2, 3, 4, 6, 12, 24]) for _ in sizes]
    else:
        perm = list(range(nd)); rng.shuffle(perm)
        strides = [0] * nd; acc = 1
        for d in reversed(perm):
            strides[d] = acc * rng.choice([1, 1, 2])
            acc *= max(sizes[d], 1) * rng.choice([1, 1, 2])
    offset = rng.choice([0, 0, 1, 3, 5])
    if rng.random() < 0.05 and nd >= 2:
        # zero-element base with absurd dims
        sizes[0] = 0
        j = rng.randint(1, nd - 1)
        sizes[j] = rng.choice([2**40, 2**62, 2**31])
        strides[j] = rng.choice([1, 2**20, 2**40, 2**62])
    need = 1 + offset + sum(st * (sz - 1) for sz, st in zip(sizes, strides) if sz > 0)
    if 0 in sizes:
        need = rng.choice([0, offset + 1])
    dtype = rng.choice(list(DTYPES))
    return {"sizes": sizes, "strides": strides, "offset": offset, "storage_numel": need, "dtype": dtype}


def rand_shape(t):
    n = t.numel()
    shape = []
    rem = n
    for _ in range(rng.randint(0, 4)):
        divs = [d for d in range(1, 13) if rem % d == 0] if rem else [0, 1, 2, 3]
        d = rng.choice(divs)
        shape.append(d)
        rem = rem // d if d else rem
    if rem != 1 or rng.random() < 0.3:
        shape.append(rem if rem else rng.choice([0, 2]))
    if shape and rng.random() < 0.5:
        shape[rng.randrange(len(shape))] = -1
    if rng.random() < 0.1:
        shape.append(rng.choice([-1, -2, 0, 2]))
    return shape


def rand_step(t):
    nd = t.dim()
    ops = ["view", "reshape", "as_strided", "transpose", "t", "permute", "expand", "squeeze",
           "unsqueeze", "flatten", "unflatten", "narrow", "slice", "select", "diagonal", "unfold",
           "movedim", "contiguous", "split", "chunk", "clone", "split_with_sizes", "tensor_split",
           "unbind", "swapaxes", "mT", "T", "ravel", "alias", "broadcast_to"]
    op = rng.choice(ops)
    if any(abs(s) > 1000 for s in t.shape) and op in ("split", "chunk", "unbind", "tensor_split", "split_with_sizes"):
        op = "transpose"  # PyTorch would build 2^62 pieces
    size = lambda d: t.shape[d] if -nd <= d < nd and nd else 3
    if op in ("view", "reshape"):
        return op, {"shape": rand_shape(t)}
    if op == "as_strided":
        sz = [rng.randint(0, 4) for _ in range(rng.randint(0, 3))]
        st = [rng.choice([0, 1, 2, 3, -1]) if rng.random() < 0.1 else rng.randint(0, 4) for _ in sz]
        if rng.random() < 0.1:
            st = st[:-1] if st else [1]
        a = {"size": sz, "stride": st}
        if rng.random() < 0.6:
            a["offset"] = rng.choice([0, 1, 2, 5, 100, -1])
        return op, a
    if op in ("transpose", "swapaxes"):
        return op, {"dim0": rdim(nd), "dim1": rdim(nd)}
    if op in ("t", "contiguous", "clone", "mT", "T", "ravel", "alias"):
        return op, {}
    if op == "permute":
        dims = list(range(nd)); rng.shuffle(dims)
        dims = [d - nd if rng.random() < 0.3 else d for d in dims]
        if rng.random() < 0.1 and dims:
            dims[0] = dims[-1]
        if rng.random() < 0.05:
            dims = dims[:-1]
        return op, {"dims": dims}
    if op in ("expand", "broadcast_to"):
        tgt = [s if rng.random() < 0.5 else (rng.choice([2, 3, 0]) if s == 1 else rng.choice([s, -1, s + 1])) for s in t.shape]
        lead = [rng.choice([1, 2, 3, 0, -1]) if rng.random() < 0.95 else rng.choice(BIG) for _ in range(rng.randint(0, 2))]
        return op, {"size": lead + tgt}
    if op == "squeeze":
        r = rng.random()
        if r < 0.3:
            return op, {}
        if r < 0.7:
            return op, {"dim": rdim(nd)}
        return op, {"dim": [rdim(nd) for _ in range(rng.randint(0, 3))]}
    if op == "unsqueeze":
        return op, {"dim": rdim(nd + 1)}
    if op == "flatten":
        return op, {"start_dim": rdim(nd), "end_dim": rdim(nd)}
    if op == "unflatten":
        d = rdim(nd)
        n = size(d)
        cands = [[n], [-1, 1], [1, -1], [2, -1], [-1, 2], [n, 1], [-1, -1], [3, 2], [0, -1], []]
        return op, {"dim": d, "sizes": rng.choice(cands)}
    if op == "narrow":
        d = rdim(nd)
        return op, {"dim": d, "start": rint(-5, 5), "length": rint(-1, 4)}
    if op == "slice":
        d = rdim(nd)
        st = rng.choice([None, rint(-6, 6)])
        en = rng.choice([None, rint(-6, 6), 2**62, 2**63 - 1])
        return op, {"dim": d, "start": st, "end": en, "step": rng.choice([1, 1, 2, 3, 0, -1, 2**62, 2**63 - 1])}
    if op == "select":
        return op, {"dim": rdim(nd), "index": rint(-5, 5)}
    if op == "diagonal":
        return op, {"offset": rint(-4, 4), "dim1": rdim(nd), "dim2": rdim(nd)}
    if op == "unfold":
        return op, {"dimension": rdim(nd), "size": rint(-1, 4), "step": rng.choice([1, 2, 3, 0, -1, 2**62])}
    if op == "movedim":
        if rng.random() < 0.5:
            return op, {"source": rdim(nd), "destination": rdim(nd)}
        k = rng.randint(0, min(nd, 3))
        src = rng.sample(range(nd), k) if nd else [0] * k
        dst = rng.sample(range(nd), k) if nd else [0] * k
        if rng.random() < 0.1:
            dst = dst + [0]
        return op, {"source": src, "destination": dst}
    if op == "split":
        return op, {"split_size": rng.choice([0, 1, 2, 3, 5, -1]), "dim": rdim(nd), "index": rng.randint(-1, 3)}
    if op == "chunk":
        return op, {"chunks": rng.choice([0, 1, 2, 3, 4, 7, -1]), "dim": rdim(nd), "index": rng.randint(-1, 3)}
    if op == "split_with_sizes":
        n = size(0)
        parts = []
        while sum(parts) < n and len(parts) < 4:
            parts.append(rng.randint(0, n - sum(parts)))
        if rng.random() < 0.7:
            parts.append(n - sum(parts))
        if rng.random() < 0.1:
            parts.append(-1)
        return op, {"split_sizes": parts, "dim": rng.choice([0, 0, -nd if nd else 0, rdim(nd)]), "index": rng.randint(0, 2)}
    if op == "tensor_split":
        return op, {"sections": rng.choice([1, 2, 3, 4, 0, -1]), "dim": rdim(nd), "index": rng.randint(-1, 3)}
    if op == "unbind":
        return op, {"dim": rdim(nd), "index": rng.randint(-1, 2)}
    raise AssertionError(op)


def apply(t, op, a):
    if op == "view": return t.view(a["shape"])
    if op == "reshape": return t.reshape(a["shape"])
    if op == "as_strided":
        if "offset" in a: return t.as_strided(a["size"], a["stride"], a["offset"])
        return t.as_strided(a["size"], a["stride"])
    if op == "transpose": return t.transpose(a["dim0"], a["dim1"])
    if op == "swapaxes": return t.swapaxes(a["dim0"], a["dim1"])
    if op == "t": return t.t()
    if op == "mT": return t.mT
    if op == "T": return t.T
    if op == "ravel": return t.ravel()
    if op == "alias": return torch.ops.aten.alias(t)
    if op == "permute": return t.permute(a["dims"])
    if op == "expand": return t.expand(a["size"])
    if op == "broadcast_to": return t.broadcast_to(a["size"])
    if op == "squeeze": return t.squeeze(a["dim"]) if "dim" in a else t.squeeze()
    if op == "unsqueeze": return t.unsqueeze(a["dim"])
    if op == "flatten": return t.flatten(a["start_dim"], a["end_dim"])
    if op == "unflatten": return t.unflatten(a["dim"], a["sizes"])
    if op == "narrow": return t.narrow(a["dim"], a["start"], a["length"])
    if op == "slice": return torch.ops.aten.slice.Tensor(t, a["dim"], a["start"], a["end"], a["step"])
    if op == "select": return t.select(a["dim"], a["index"])
    if op == "diagonal": return t.diagonal(a["offset"], a["dim1"], a["dim2"])
    if op == "unfold": return t.unfold(a["dimension"], a["size"], a["step"])
    if op == "movedim": return t.movedim(a["source"], a["destination"])
    if op == "contiguous": return t.contiguous()
    if op == "clone": return t.clone()
    if op == "split": return t.split(a["split_size"], a["dim"])[a["index"]]
    if op == "chunk": return t.chunk(a["chunks"], a["dim"])[a["index"]]
    if op == "split_with_sizes": return t.split_with_sizes(a["split_sizes"], a["dim"])[a["index"]]
    if op == "tensor_split": return t.tensor_split(a["sections"], a["dim"])[a["index"]]
    if op == "unbind": return t.unbind(a["dim"])[a["index"]]
    raise AssertionError(op)


def describe(r, base):
    e = {"sizes": list(r.shape), "strides": list(r.stride()), "offset": r.storage_offset(),
         "is_contiguous": r.is_contiguous(),
         "aliases_base": r.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()}
    if r.dim() == 4:
        e["is_channels_last"] = r.is_contiguous(memory_format=torch.channels_last)
    if r.numel() <= 64:
        v = r.reshape(-1).tolist() if r.numel() else []
        if r.dtype == torch.bool:
            v = [int(x) for x in v]
        e["values"] = v
    return e


n = 0
while n < COUNT:
    b = rand_base()
    try:
        storage = torch.arange(b["storage_numel"]).to(DTYPES[b["dtype"]])
        base = storage.as_strided(b["sizes"], b["strides"], b["offset"])
    except Exception:
        continue
    steps, cur = [], base
    for _ in range(rng.randint(1, 4)):
        op, a = rand_step(cur)
        try:
            r = apply(cur, op, a)
        except (RuntimeError, IndexError, ValueError) as ex:
            steps.append({"op": op, "args": a, "expect": {"error": type(ex).__name__, "message": str(ex).split("\n")[0]}})
            break
        if not isinstance(r, torch.Tensor):
            break
        steps.append({"op": op, "args": a, "expect": describe(r, base)})
        cur = r
    if not steps:
        continue
    print(json.dumps({"id": f"extra-{sys.argv[1]}-{n}", "base": b, "steps": steps}))
    n += 1
