#!/usr/bin/env python3
"""Differential corpus for torchcore-pt (PyTorch checkpoint files).

    pt_corpus.py generate OUTDIR     write archives with real torch, plus
                                     OUTDIR/manifest.json describing what
                                     torch.load gives for each
    pt_corpus.py check-saved DIR     torch.load(weights_only=True), and with
                                     mmap=True, every archive listed in
                                     DIR/manifest.json (written by torchcore)
                                     and compare with the description there

Both sides describe a loaded value the same way (`describe` here,
`describe` in crates/torchcore-pt/tests/common/mod.rs): containers in order,
floats as their IEEE bits, tensors as dtype, size, stride, storage offset,
requires_grad, the hex of their whole storage, and a storage group number
(tensors over one storage share it), so equality of descriptions means
bit-exact, view-exact equality.

Needs torch; exits with status 3 and a message when it is missing.
"""

import collections
import io
import json
import os
import pickle
import struct
import sys
import zipfile

try:
    import torch
except ImportError:  # pragma: no cover
    print("pt_corpus.py: torch is not importable; nothing done", file=sys.stderr)
    sys.exit(3)


def fbits(x):
    return struct.pack(">d", x).hex()


class Describer:
    def __init__(self):
        self.groups = {}

    def group(self, t):
        key = t.untyped_storage()._cdata
        if key not in self.groups:
            self.groups[key] = len(self.groups)
        return self.groups[key]

    def tensor(self, t):
        st = t.untyped_storage()
        return {
            "t": "tensor",
            "dtype": str(t.dtype).removeprefix("torch."),
            "size": list(t.shape),
            "stride": list(t.stride()),
            "offset": t.storage_offset(),
            "requires_grad": bool(t.requires_grad),
            "group": self.group(t),
            "storage": bytes(st).hex() if st.nbytes() <= (1 << 20) else "<%d bytes>" % st.nbytes(),
        }

    def __call__(self, x):
        d = self.__call__
        if x is None:
            return {"t": "none"}
        if isinstance(x, bool):
            return {"t": "bool", "v": x}
        if isinstance(x, int):
            return {"t": "int", "v": str(x)}
        if isinstance(x, float):
            return {"t": "float", "v": fbits(x)}
        if isinstance(x, complex):
            return {"t": "complex", "re": fbits(x.real), "im": fbits(x.imag)}
        if isinstance(x, str):
            return {"t": "str", "v": x}
        if isinstance(x, (bytes, bytearray)):
            return {"t": "bytes", "v": bytes(x).hex()}
        if isinstance(x, torch.Size):
            return {"t": "size", "v": list(x)}
        if isinstance(x, torch.dtype):
            return {"t": "dtype", "v": str(x).removeprefix("torch.")}
        if isinstance(x, torch.device):
            return {"t": "device", "v": str(x)}
        if isinstance(x, torch.nn.Parameter):
            return {"t": "param", "tensor": self.tensor(x)}
        if isinstance(x, torch.Tensor):
            return self.tensor(x)
        if isinstance(x, list):
            return {"t": "list", "items": [d(v) for v in x]}
        if isinstance(x, tuple):
            return {"t": "tuple", "items": [d(v) for v in x]}
        if isinstance(x, (set, frozenset)):
            return {"t": "set", "items": [d(v) for v in x]}
        if isinstance(x, collections.OrderedDict):
            out = {"t": "odict", "items": [[d(k), d(v)] for k, v in x.items()]}
            attrs = [[k, d(v)] for k, v in vars(x).items()]
            if attrs:
                out["attrs"] = attrs
            return out
        if isinstance(x, dict):
            return {"t": "dict", "items": [[d(k), d(v)] for k, v in x.items()]}
        raise TypeError("cannot describe %r" % type(x))


def describe(x):
    return Describer()(x)


DTYPES = [
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.float16, torch.bfloat16, torch.float32, torch.float64,
    torch.complex32, torch.complex64, torch.complex128,
    torch.uint16, torch.uint32, torch.uint64,
    torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz,
    torch.float8_e8m0fnu,
]


def random_bits(dtype, n, g):
    """n elements of dtype with arbitrary bit patterns (NaNs included)."""
    itemsize = torch.empty((), dtype=dtype).element_size()
    raw = torch.randint(0, 256, (n * itemsize,), dtype=torch.uint8, generator=g)
    if dtype == torch.bool:
        return raw % 2 == 1
    return raw.view(dtype)


def byteswapped(t):
    """t with every element (every complex component) byte-reversed."""
    size = t.element_size() // (2 if t.is_complex() else 1)
    raw = t.contiguous().view(torch.uint8)
    return raw.view(-1, size).flip(1).reshape(raw.shape).view(t.dtype).view(t.shape)


def rewrite_zip(src, dst, edit):
    """Copies archive src to dst, passing (name, bytes) through edit."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, edit(info.filename, zin.read(info.filename)))


class Evil:
    def __reduce__(self):
        return (os.system, ("echo this must never run",))


def generate(out):
    os.makedirs(out, exist_ok=True)
    g = torch.Generator().manual_seed(1234)
    files = {}

    def put(name, obj, **kw):
        path = os.path.join(out, name)
        torch.save(obj, path, **kw)
        files[name] = obj

    put("dtypes.pt", collections.OrderedDict(
        (str(d).removeprefix("torch."), random_bits(d, 5, g)) for d in DTYPES))
    numbers = torch.arange(1, 10)
    put("shared.pt", {"numbers": numbers, "evens": numbers[1::2]})
    base = torch.randn(2, 3, 4, 5, generator=g)
    put("views.pt", {
        "transposed": torch.randn(3, 4, generator=g).t(),
        "expanded": torch.randn(3, 1, generator=g).expand(3, 4),
        "channels_last": base.contiguous(memory_format=torch.channels_last),
        "offset_view": base[1, 1:, 2],
        "zero_size": torch.empty(0, 3),
        "zero_dim": torch.tensor(2.5),
        "narrow_of_shared": base[0],
        "base": base,
    })
    lin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(2, 3, generator=g))
        lin.bias.copy_(torch.randn(2, generator=g))
    put("state_dict.pt", lin.state_dict())
    put("nested.pt", {
        "params": [torch.nn.Parameter(torch.randn(2, generator=g)),
                   torch.nn.Parameter(torch.ones(2), requires_grad=False)],
        "meta": {"epoch": 7, "lr": 0.125, "name": "run-1", "big": 2**70, "neg": -(2**40),
                 "flags": (True, False, None), "blob": b"\x00\xffab", "c": 3 + 4j,
                 "ids": {1, 2, 3}, "shape": torch.Size([2, 3]), "dtype": torch.bfloat16,
                 "device": torch.device("cpu"), "nan": float("nan"), "inf": -float("inf")},
        "grad_tensor": torch.randn(3, generator=g).requires_grad_(),
        "deep": [[[[{"x": [1, (2, 3)]}]]]],
        "empty": ([], {}, (), ""),
    })
    put("protocol4.pt", {"a": torch.arange(6).reshape(2, 3), "b": [1.5, "s" * 300]},
        pickle_protocol=4)
    put("protocol5.pt", {"a": torch.arange(4.0), "b": (1, 2)}, pickle_protocol=5)

    # Big-endian: torch writes sys.byteorder; write pre-swapped data and
    # mark the archive big-endian, so that torch.load swaps it back. Only
    # typed storages (torch swaps those) are included.
    be = collections.OrderedDict(
        (str(d).removeprefix("torch."), random_bits(d, 5, g))
        for d in [torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
                  torch.float32, torch.float64, torch.complex64, torch.complex128, torch.uint8,
                  torch.bool])
    swapped = collections.OrderedDict((k, byteswapped(v)) for k, v in be.items())
    old = sys.byteorder
    try:
        sys.byteorder = "big"
        torch.save(swapped, os.path.join(out, "bigendian.pt"))
    finally:
        sys.byteorder = old
    check = torch.load(os.path.join(out, "bigendian.pt"))
    for k in be:
        assert torch.equal(check[k].view(torch.uint8), be[k].view(torch.uint8)), k
    files["bigendian.pt"] = be

    # A storage tagged cuda:0 (torch.load(map_location='cpu') reads it).
    tmp = os.path.join(out, "_tmp.pt")
    cuda_obj = {"w": torch.arange(3.0)}
    torch.save(cuda_obj, tmp)
    rewrite_zip(tmp, os.path.join(out, "cuda_tag.pt"),
                lambda n, b: b.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
                if n.endswith("data.pkl") else b)
    os.remove(tmp)
    files["cuda_tag.pt"] = torch.load(os.path.join(out, "cuda_tag.pt"), map_location="cpu")

    # A global outside the weights-only allowlist (never called by either
    # loader; torch.load(weights_only=True) refuses it too).
    torch.save({"w": torch.ones(2), "evil": Evil()}, os.path.join(out, "refused_global.pt"))

    # The legacy (pre-1.6, non-ZIP) format, still written on request:
    # typed storages, shared storages and views, a parameter, nesting.
    lbase = torch.randn(3, 4, generator=g)
    lnumbers = torch.arange(1, 10)
    put("legacy.pt", collections.OrderedDict([
        ("numbers", lnumbers), ("evens", lnumbers[1::2]),
        ("transposed", lbase.t()), ("row", lbase[1]), ("expanded", lbase[:, :1].expand(3, 5)),
        ("param", torch.nn.Parameter(torch.randn(2, generator=g))),
        ("zero_dim", torch.tensor(2.5, dtype=torch.float64)), ("empty", torch.empty(0, 2)),
        ("meta", {"epoch": 3, "name": "old", "sizes": torch.Size([3, 4])}),
    ] + [(str(d).removeprefix("torch."), random_bits(d, 5, g))
         for d in [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32,
                   torch.float16, torch.bfloat16, torch.complex64, torch.complex128]]),
        _use_new_zipfile_serialization=False)
    # Dtypes saved through UntypedStorage: torch 2.15 writes them in the
    # legacy format but cannot load them back ("UntypedStorage has no
    # attribute dtype"), so the expected description is that of the
    # object saved (see below).
    legacy_untyped = collections.OrderedDict(
        (str(d).removeprefix("torch."), random_bits(d, 5, g))
        for d in [torch.uint16, torch.uint32, torch.uint64, torch.float8_e4m3fn,
                  torch.float8_e5m2])
    torch.save(legacy_untyped, os.path.join(out, "legacy_untyped.pt"),
               _use_new_zipfile_serialization=False)

    # Any top folder name: a file object gives "archive/", a path its stem.
    buf = io.BytesIO()
    torch.save({"x": torch.arange(3)}, buf)
    with open(os.path.join(out, "from_buffer.pt"), "wb") as f:
        f.write(buf.getvalue())
    files["from_buffer.pt"] = {"x": torch.arange(3)}

    manifest = {}
    for name, obj in files.items():
        # torch 2.15's weights-only unpickler refuses FRAME (protocol 4+):
        # those files, written here, are loaded with the full unpickler.
        weights_only = not name.startswith("protocol")
        loaded = torch.load(os.path.join(out, name), weights_only=weights_only,
                            map_location="cpu")
        manifest[name] = describe(loaded)
        assert describe(obj)["t"] == manifest[name]["t"]
    manifest["legacy_untyped.pt"] = describe(legacy_untyped)
    manifest["refused_global.pt"] = {"t": "refused", "global": "%s.system" % os.system.__module__}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    print("wrote %d archives to %s" % (len(manifest), out))


def check_saved(d):
    with open(os.path.join(d, "manifest.json")) as f:
        manifest = json.load(f)
    failures = 0
    for name, expected in sorted(manifest.items()):
        path = os.path.join(d, name)
        for mmap in (False, True):
            try:
                got = describe(torch.load(path, weights_only=True, mmap=mmap))
            except Exception as e:  # report every file, then fail
                print("FAIL %s (mmap=%s): %s" % (name, mmap, e))
                failures += 1
                continue
            if got != expected:
                print("FAIL %s (mmap=%s): torch.load gives\n  %s\nexpected\n  %s"
                      % (name, mmap, json.dumps(got)[:2000], json.dumps(expected)[:2000]))
                failures += 1
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                off = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
                # The local extra field may differ from the central one.
                with open(path, "rb") as f:
                    f.seek(info.header_offset + 26)
                    n, m = struct.unpack("<HH", f.read(4))
                off = info.header_offset + 30 + n + m
                if off % 64 != 0:
                    print("FAIL %s: record %s starts at %d, not 64-aligned" % (name, info.filename, off))
                    failures += 1
    print("checked %d archives: %d failures" % (len(manifest), failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("generate", "check-saved"):
        print(__doc__)
        sys.exit(2)
    (generate if sys.argv[1] == "generate" else check_saved)(sys.argv[2])
