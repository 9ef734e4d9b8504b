"""torchcore.save / torchcore.load against real torch (skipped without
torch), and pickling / copying of tensors, dtypes, devices and Size."""

import collections
import copy
import io
import os
import pickle

import pytest

import torchcore

try:
    import torch
except ImportError:  # CI has no torch: the differential tests skip, the rest run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable: differential test skipped")


@needs_torch
def test_torch_loads_what_torchcore_saved(tmp_path):
    numbers = torchcore.arange(1, 10)
    evens = numbers[1::2]
    w = torchcore.arange(12.0).view(3, 4).t()
    obj = {"numbers": numbers, "evens": evens, "w": w, "epoch": 3, "lr": 0.5,
           "shape": torchcore.Size([2, 3]), "dtype": torchcore.bfloat16, "names": ["a", "b"],
           "od": collections.OrderedDict(x=torchcore.zeros(2, dtype=torchcore.float16))}
    path = tmp_path / "x.pt"
    torchcore.save(obj, path)
    for mmap in (False, True):
        back = torch.load(path, weights_only=True, mmap=mmap)
        assert back["numbers"].tolist() == list(range(1, 10))
        assert back["evens"].untyped_storage().data_ptr() == back["numbers"].untyped_storage().data_ptr()
        assert back["evens"].storage_offset() == 1 and back["evens"].stride() == (2,)
        assert back["w"].stride() == (1, 4)
        assert torch.equal(back["w"], torch.arange(12.0).view(3, 4).t())
        assert back["shape"] == torch.Size([2, 3]) and back["dtype"] is torch.bfloat16
        assert back["epoch"] == 3 and back["lr"] == 0.5 and back["names"] == ["a", "b"]
        assert isinstance(back["od"], collections.OrderedDict)
        assert back["od"]["x"].dtype == torch.float16


@needs_torch
def test_torchcore_loads_what_torch_saved(tmp_path):
    lin = torch.nn.Linear(3, 2)
    n = torch.arange(1, 10)
    buf = io.BytesIO()
    torch.save({"sd": lin.state_dict(), "n": n, "e": n[1::2], "p": torch.nn.Parameter(torch.ones(2)),
                "u16": torch.arange(5).to(torch.uint16), "f8": torch.ones(3).to(torch.float8_e4m3fn)},
               buf)
    buf.seek(0)
    back = torchcore.load(buf, map_location=torch.device("cpu"))
    assert list(back["sd"].keys()) == ["weight", "bias"]
    assert back["sd"]._metadata[""]["version"] == 1
    assert back["sd"]["weight"].tolist() == lin.weight.tolist()
    assert back["p"].requires_grad
    assert back["u16"].dtype == torchcore.uint16 and back["f8"].dtype == torchcore.float8_e4m3fn
    back["e"].fill_(0)
    assert back["n"].tolist() == [1, 0, 3, 0, 5, 0, 7, 0, 9]
    path = tmp_path / "y.pt"
    buf.seek(0)
    path.write_bytes(buf.read())
    mapped = torchcore.load(path, mmap=True)
    assert mapped["sd"]["bias"].tolist() == lin.bias.tolist()


@needs_torch
def test_refused_global_is_an_unpickling_error(tmp_path):
    class Evil:
        def __reduce__(self):
            import os
            return (os.system, ("echo never",))
    path = tmp_path / "evil.pt"
    torch.save({"x": Evil()}, path)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torchcore.load(path)
    with pytest.raises(ValueError, match="always weights-only"):
        torchcore.load(path, weights_only=False)


def test_round_trip_without_torch(tmp_path):
    n = torchcore.arange(1, 10)
    obj = {"n": n, "e": n[1::2], "meta": (1, 2.5, "x", None, True, b"\x00\xff", 2**70, 1 + 2j),
           "s": torchcore.Size([3]), "d": torchcore.uint16, "dev": torchcore.device("cpu")}
    torchcore.save(obj, tmp_path / "a.pt")
    back = torchcore.load(tmp_path / "a.pt")
    assert back["meta"] == obj["meta"] and back["s"] == obj["s"]
    assert back["d"] is torchcore.uint16 and str(back["dev"]) == "cpu"
    back["e"].fill_(0)
    assert back["n"].tolist() == [1, 0, 3, 0, 5, 0, 7, 0, 9]
    with pytest.raises(ValueError, match="needs a path"):
        torchcore.load(io.BytesIO((tmp_path / "a.pt").read_bytes()), mmap=True)


CUDA_TAG = os.path.join(os.path.dirname(__file__), "..", "..", "torchcore-pt", "tests", "fixtures",
                        "torch-2.15", "cuda_tag.pt")


def test_map_location_forms():
    # cuda_tag.pt: {"w": arange(3.0)} whose storage torch tagged 'cuda:0'.
    with pytest.raises(RuntimeError, match="saved on 'cuda:0'"):
        torchcore.load(CUDA_TAG)
    for m in ["cpu", torchcore.device("cpu"), {"cuda:0": "cpu"}, {"cuda:0": torchcore.device("cpu")}]:
        assert torchcore.load(CUDA_TAG, map_location=m)["w"].tolist() == [0.0, 1.0, 2.0], m
    # Tags not in the dict stay as saved.
    with pytest.raises(RuntimeError, match="saved on 'cuda:0'"):
        torchcore.load(CUDA_TAG, map_location={"cuda:1": "cpu"})
    with pytest.raises(RuntimeError, match="saved on 'cuda:1'"):
        torchcore.load(CUDA_TAG, map_location={"cuda:0": "cuda:1"})
    with pytest.raises(NotImplementedError, match="CPU only"):
        torchcore.load(CUDA_TAG, map_location="cuda:0")
    with pytest.raises(TypeError, match="map_location must be"):
        torchcore.load(CUDA_TAG, map_location=3)


def test_map_location_callable(tmp_path):
    calls = []

    def keep(storage, location):
        calls.append((type(storage).__name__, storage.nbytes(), location))
        return storage
    for mmap in (False, True):
        calls.clear()
        assert torchcore.load(CUDA_TAG, map_location=keep, mmap=mmap)["w"].tolist() == [0.0, 1.0, 2.0]
        assert calls == [("UntypedStorage", 12, "cuda:0")]
    with open(CUDA_TAG, "rb") as f:  # from a file object too
        assert torchcore.load(f, map_location=keep)["w"].tolist() == [0.0, 1.0, 2.0]
    # None: load where saved (cpu only).
    with pytest.raises(RuntimeError, match="saved on 'cuda:0'"):
        torchcore.load(CUDA_TAG, map_location=lambda s, loc: None)
    n = torchcore.arange(1, 10)
    torchcore.save({"n": n, "e": n[1::2]}, tmp_path / "a.pt")
    back = torchcore.load(tmp_path / "a.pt", map_location=lambda s, loc: None)
    assert back["e"].tolist() == [2, 4, 6, 8]
    # A replacement storage is used by every tensor over the original.
    other = torchcore.full((9,), 7, dtype=torchcore.int64)
    back = torchcore.load(tmp_path / "a.pt", map_location=lambda s, loc: other.untyped_storage())
    assert back["n"].tolist() == [7] * 9 and back["e"].tolist() == [7] * 4
    other.fill_(3)
    assert back["e"].tolist() == [3] * 4
    # Too small a replacement, a wrong type, an exception: errors.
    small = torchcore.ones(1)
    with pytest.raises(RuntimeError, match="at least as large"):
        torchcore.load(tmp_path / "a.pt", map_location=lambda s, loc: small.untyped_storage())
    with pytest.raises(TypeError, match="expected an UntypedStorage or None"):
        torchcore.load(tmp_path / "a.pt", map_location=lambda s, loc: 5)

    def boom(s, loc):
        raise KeyError("boom")
    with pytest.raises(KeyError, match="boom"):
        torchcore.load(tmp_path / "a.pt", map_location=boom)


@needs_torch
def test_map_location_callable_as_torch():
    seen = {}
    for lib in (torch, torchcore):
        calls = []
        out = lib.load(CUDA_TAG, map_location=lambda s, loc: calls.append((s.nbytes(), loc)) or s)
        seen[lib.__name__] = (calls, out["w"].tolist())
    assert seen["torch"] == seen["torchcore"]


@needs_torch
def test_torchcore_loads_legacy_files_torch_wrote(tmp_path):
    n = torch.arange(1, 10)
    obj = collections.OrderedDict([
        ("n", n), ("e", n[1::2]), ("t", torch.randn(3, 4).t()), ("p", torch.nn.Parameter(torch.ones(2))),
        ("h", torch.randn(3).half()), ("b", torch.randn(2).bfloat16()), ("c", torch.randn(2, dtype=torch.complex64)),
        ("meta", {"epoch": 2, "sizes": torch.Size([1, 2])}),
    ])
    path = tmp_path / "legacy.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=False)
    expected = torch.load(path, weights_only=True)
    for back in (torchcore.load(path), torchcore.load(io.BytesIO(path.read_bytes()))):
        assert list(back) == list(expected)
        for k in ["n", "e", "t", "p", "h", "b"]:
            assert back[k].tolist() == expected[k].tolist(), k
            assert back[k].stride() == expected[k].stride() and back[k].storage_offset() == expected[k].storage_offset()
        assert back["p"].requires_grad
        assert back["meta"]["sizes"] == torchcore.Size([1, 2])
        back["e"].fill_(0)
        assert back["n"].tolist() == [1, 0, 3, 0, 5, 0, 7, 0, 9]
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved in the ZIP format"):
        torchcore.load(path, mmap=True)


def test_pickle_and_copy_of_tensors():
    t = torchcore.arange(6.0).view(2, 3).t()
    u = pickle.loads(pickle.dumps(t))
    assert u.tolist() == t.tolist() and u.stride() == t.stride()
    assert torchcore.equal(t, u)
    c = copy.copy(t)
    assert c is not t and c.data_ptr() == t.data_ptr()  # shares, as in torch
    d = copy.deepcopy([t, t[0]])
    assert d[0].data_ptr() != t.data_ptr()
    assert d[0].untyped_storage().data_ptr() == d[1].untyped_storage().data_ptr()
    assert d[0].tolist() == t.tolist()
    assert not torchcore.equal(torchcore.tensor([float("nan")]), torchcore.tensor([float("nan")]))
    assert torchcore.equal(torchcore.tensor([1]), torchcore.tensor([1.0]))


def test_dtype_device_size_pickle_and_copy():
    for x in [torchcore.float32, torchcore.uint64, torchcore.device("cpu"), torchcore.Size([2, 3])]:
        assert pickle.loads(pickle.dumps(x)) == x
        assert copy.deepcopy(x) == x
        assert copy.copy(x) == x
    assert pickle.loads(pickle.dumps(torchcore.bfloat16)) is torchcore.bfloat16


LOADABLE_DTYPES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                   "float8_e5m2fnuz", "float8_e8m0fnu", "bfloat16", "float16", "complex32", "complex64",
                   "complex128", "bool", "int8", "uint8"]


def _same(a, b):
    """Equal values of equal Python types, NaN equal to NaN."""
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, complex):
        return isinstance(b, complex) and _same(a.real, b.real) and _same(a.imag, b.imag)
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return type(a) is type(b) and a == b


@needs_torch
def test_tolist_item_repr_of_every_loadable_dtype_as_torch():
    g = torch.Generator().manual_seed(7)
    obj = {}
    for name in LOADABLE_DTYPES:
        d = getattr(torch, name)
        itemsize = torch.empty((), dtype=d).element_size()
        raw = torch.randint(0, 256, (6 * itemsize,), dtype=torch.uint8, generator=g)
        obj[name] = (raw % 2 == 1).view(2, 3) if d == torch.bool else raw.view(d).reshape(2, 3)
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    back = torchcore.load(buf)
    for name in LOADABLE_DTYPES:
        assert _same(back[name].tolist(), obj[name].tolist()), name
        assert _same(back[name][1, 2].item(), obj[name][1, 2].item()), name
        assert _same(back[name][0, 1].tolist(), obj[name][0, 1].tolist()), name
        assert repr(back[name]) == repr(obj[name]), name


def test_unsigned_and_complex_elements_without_torch():
    big = torchcore.tensor([0, 2**63 - 1]).view(torchcore.uint64)
    assert big.tolist() == [0, 2**63 - 1]
    top = torchcore.tensor([-1]).view(torchcore.uint64)
    assert top.tolist() == [2**64 - 1] and top[0].item() == 2**64 - 1
    assert torchcore.tensor([-1], dtype=torchcore.int32).view(torchcore.uint32).item() == 2**32 - 1
    c = torchcore.tensor([1.5, -2.0]).view(torchcore.complex64)
    assert c.tolist() == [complex(1.5, -2.0)] and c[0].item() == complex(1.5, -2.0)
    assert torchcore.ones(2).to(torchcore.float8_e4m3fn).tolist() == [1.0, 1.0]


@needs_torch
def test_legacy_format_both_ways(tmp_path):
    n = torchcore.arange(1, 10)
    base = torchcore.arange(12, dtype=torchcore.float32).reshape(3, 4)
    obj = collections.OrderedDict([
        ("n", n), ("e", n[1::2]), ("t", base.t()), ("row", base[1]),
        ("h", torchcore.ones(3, dtype=torchcore.float16)), ("u16", torchcore.arange(4).to(torchcore.uint16)),
        ("meta", {"epoch": 3, "s": torchcore.Size([2])}),
    ])
    path = tmp_path / "legacy_tc.pt"
    torchcore.save(obj, path, _use_new_zipfile_serialization=False)
    buf = io.BytesIO()
    torchcore.save(obj, buf, _use_new_zipfile_serialization=False)
    assert buf.getvalue() == path.read_bytes()  # deterministic, path or file object
    # torch 2.15 cannot load UntypedStorage dtypes from legacy files (its own bug): check the rest.
    del obj["u16"]
    torch_path = tmp_path / "legacy_tc_typed.pt"
    torchcore.save(obj, torch_path, _use_new_zipfile_serialization=False)
    t = torch.load(torch_path, weights_only=True)
    assert list(t) == list(obj)
    for k in ["n", "e", "t", "row", "h"]:
        assert t[k].tolist() == obj[k].tolist(), k
        assert t[k].stride() == obj[k].stride() and t[k].storage_offset() == obj[k].storage_offset(), k
    assert t["e"].untyped_storage().data_ptr() == t["n"].untyped_storage().data_ptr()
    assert t["meta"] == {"epoch": 3, "s": torch.Size([2])}
    back = torchcore.load(path)
    assert back["u16"].tolist() == [0, 1, 2, 3] and back["e"].tolist() == [2, 4, 6, 8]
    back["e"].fill_(0)
    assert back["n"].tolist() == [1, 0, 3, 0, 5, 0, 7, 0, 9]
