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
    # weights_only=False uses the same allowlist: refused, never run.
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torchcore.load(path, weights_only=False)


@needs_torch
def test_weights_only_false_loads_what_torch_loads(tmp_path):
    path = tmp_path / "plain.pt"
    base = torch.arange(12, dtype=torch.float32)
    torch.save({"a": base, "v": base[2::3], "n": [1, "x", None]}, path)
    ours = torchcore.load(path, weights_only=False)
    ref = torch.load(path, weights_only=False)
    assert ours["n"] == ref["n"]
    assert ours["v"].tolist() == ref["v"].tolist()
    assert ours["v"].stride() == ref["v"].stride()
    assert ours["v"].storage_offset() == ref["v"].storage_offset()
    ours["a"][2] = 100.0
    assert ours["v"][0].item() == 100.0  # still one storage


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "int32", "int16", "bfloat16",
                                   "complex64", "uint8"])
@needs_torch
def test_load_endianness_of_unmarked_archives(tmp_path, dtype):
    """Archives without a byteorder record (torch's _disable_byteorder_record)
    load as set_default_load_endianness says, as torch loads them; a
    recorded byte order always wins."""
    import io
    rt = getattr(torch, dtype)
    import zipfile
    x = (torch.arange(1, 5) * 3).to(rt).reshape(2, 2)
    marked = io.BytesIO()
    torch.save(x, marked)
    # torch 2.15 writes the byteorder record even with
    # _disable_byteorder_record=True: drop it to make a pre-1.13 style file.
    unmarked = io.BytesIO()
    src = zipfile.ZipFile(io.BytesIO(marked.getvalue()))
    with zipfile.ZipFile(unmarked, "w", zipfile.ZIP_STORED) as dst:
        for name in src.namelist():
            if not name.endswith("/byteorder"):
                dst.writestr(name, src.read(name))
    assert b"byteorder" not in unmarked.getvalue()
    ser = torchcore.serialization
    before = ser.get_default_load_endianness()
    try:
        for setting in (None, ser.LoadEndianness.NATIVE, ser.LoadEndianness.LITTLE, ser.LoadEndianness.BIG):
            tsetting = None if setting is None else getattr(torch.serialization.LoadEndianness, setting.name)
            ser.set_default_load_endianness(setting)
            torch.serialization.set_default_load_endianness(tsetting)
            for buf in (unmarked, marked):
                buf.seek(0)
                ref = torch.load(buf).view(-1)
                buf.seek(0)
                ours = torchcore.load(buf).view(-1)
                assert _bits(ours) == _bits_torch(ref), (setting, buf is marked)
    finally:
        ser.set_default_load_endianness(before)
        torch.serialization.set_default_load_endianness(None)
    with pytest.raises(TypeError):
        ser.set_default_load_endianness("big")


def _bits(t):
    return bytes(t.view(torchcore.uint8).tolist())


def _bits_torch(t):
    return bytes(t.contiguous().view(torch.uint8).tolist())


def test_unseekable_file_object_is_refused_as_torch_does():
    class Reader:
        def read(self, n=-1):
            return b""
    with pytest.raises(AttributeError, match="You can only torch.load from a file that is seekable"):
        torchcore.load(Reader())


@needs_torch
def test_is_zipfile_and_zipfile_reader_match_torch(tmp_path):
    import io
    import zipfile
    t = torchcore.tensor([ord("P"), ord("K"), 5, 6] + [0] * 100, dtype=torchcore.uint8)
    buf = io.BytesIO()
    torchcore.save(t, buf)
    buf.seek(0)
    assert zipfile.is_zipfile(buf)
    buf.seek(0)
    assert torchcore.serialization._is_zipfile(buf) is True
    # torch's own helper agrees on both a checkpoint and a non-ZIP file.
    buf.seek(0)
    assert torch.serialization._is_zipfile(buf) is True
    buf.seek(0)
    with torchcore.serialization._open_zipfile_reader(buf) as ours:
        buf.seek(0)
        with torch.serialization._open_zipfile_reader(io.BytesIO(buf.getvalue())) as ref:
            for name in ("byteorder", ".format_version", "data.pkl", "data/0", "version"):
                assert ours.has_record(name) == ref.has_record(name)
                assert ours.get_record(name) == ref.get_record(name)
                assert ours.get_record_offset(name) == ref.get_record_offset(name)
            assert sorted(ours.get_all_records()) == sorted(ref.get_all_records())
            assert not ours.has_record("nope")
    legacy = io.BytesIO()
    torchcore.save(t, legacy, _use_new_zipfile_serialization=False)
    legacy.seek(0)
    assert torchcore.serialization._is_zipfile(legacy) is False
    assert legacy.tell() == 0


@needs_torch
def test_errors_use_torch_wording(tmp_path):
    import io
    a = torchcore.tensor([1 + 2j, 3 + 4j], dtype=torchcore.complex128)
    msg = "Cannot save multiple tensors or storages that view the same data as different types"
    with pytest.raises(RuntimeError, match=msg):
        torchcore.save([a, a.imag], io.BytesIO())
    with pytest.raises(RuntimeError, match=msg):
        torchcore.save([a.real, a], io.BytesIO())
    buf = io.BytesIO()
    torch.save(torch.ones(2), buf, _use_new_zipfile_serialization=False)
    # The location tag is a BINUNICODE string (4-byte length) in torch's pickle.
    data = buf.getvalue().replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0", 1)
    assert data != buf.getvalue()
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torchcore.load(io.BytesIO(data))


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
    # A CUDA target by name: torch's CPU-only error, as the dict form.
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
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


def _attr_copies(mod):
    """What copying, deep-copying and pickling keep of a tensor's instance
    attributes, in `mod` (torchcore or torch)."""
    class Sub(mod.Tensor):
        pass

    t = mod.arange(4.0)
    lst = [1]
    t.a = lst
    c = copy.copy(t)
    d = copy.deepcopy(t)
    p = pickle.loads(pickle.dumps(t))
    s = t.as_subclass(Sub)
    s.b = 2
    sc = copy.copy(s)
    pair = copy.deepcopy([t, t])
    t.me = t
    selfref = copy.deepcopy(t)
    plain = copy.deepcopy(mod.arange(3.0))
    both = copy.deepcopy({"x": t, "y": t.view(2, 2)})
    return [
        (c.a is lst, c.data_ptr() == t.data_ptr(), type(c) is mod.Tensor, c.__dict__ is t.__dict__),
        (d.a == lst, d.a is lst, d.data_ptr() == t.data_ptr()),
        (p.a, type(p) is mod.Tensor, p.tolist()),
        (type(sc).__name__, sc.__dict__, sc.data_ptr() == s.data_ptr()),
        pair[0] is pair[1],
        (selfref.me is selfref, type(selfref.me) is mod.Tensor, selfref.me.__dict__ is selfref.__dict__),
        plain.__dict__,
        both["x"].untyped_storage().data_ptr() == both["y"].untyped_storage().data_ptr(),
    ]


def test_copies_keep_instance_attributes():
    # As torch (see the differential test below): `copy.copy` sets the same
    # values on an alias of the same class, `deepcopy` deep-copies the
    # `__dict__` with the memo, pickling carries it as the state.
    assert _attr_copies(torchcore) == [
        (True, True, True, False),
        (True, False, False),
        ([1], True, [0.0, 1.0, 2.0, 3.0]),
        ("Sub", {"b": 2}, True),
        True,
        (False, True, True),
        {},
        True,
    ]


@needs_torch
def test_copies_keep_instance_attributes_like_torch():
    assert _attr_copies(torchcore) == _attr_copies(torch)


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


@needs_torch
def test_conj_and_neg_views_round_trip_with_torch(tmp_path):
    """Lazy conjugate / negative views: torch writes their bits as the
    rebuild metadata; both sides read the other's files with the bits kept."""
    base = torch.tensor([1 + 2j, -3 + 0.5j], dtype=torch.complex64)
    views = {"conj": base.conj(), "neg": torch._neg_view(base),
             "neg_conj": torch._neg_view(base.conj()), "real_neg": torch._neg_view(torch.tensor([1.5, -2.0]))}
    path = tmp_path / "bits.pt"
    torch.save(views, path)
    ours = torchcore.load(path)
    for k, v in views.items():
        assert ours[k].is_conj() == v.is_conj(), k
        assert ours[k].is_neg() == v.is_neg(), k
        assert ours[k].tolist() == v.tolist(), k
    back = tmp_path / "bits_tc.pt"
    torchcore.save(ours, back)
    ref = torch.load(back, weights_only=True)
    for k, v in views.items():
        assert ref[k].is_conj() == v.is_conj(), k
        assert ref[k].is_neg() == v.is_neg(), k
        assert torch.equal(ref[k], v), k


@needs_torch
def test_equal_compares_complex_values():
    a = torchcore.tensor([1 + 2j, 3 - 1j], dtype=torchcore.complex64)
    assert torchcore.equal(a, a.conj().conj())
    assert not torchcore.equal(a, a.conj())
    assert torchcore.equal(a.conj(), torchcore.tensor([1 - 2j, 3 + 1j], dtype=torchcore.complex64))
    assert torchcore.equal(torchcore.tensor([1 + 0j]), torchcore.tensor([1.0]))
    nan = torchcore.tensor([complex(float("nan"), 0)])
    assert not torchcore.equal(nan, nan)
    assert torch.equal(torch.tensor([1 + 0j]), torch.tensor([1.0]))


@needs_torch
def test_storages_round_trip_with_torch(tmp_path):
    """Bare storages (tensor.storage(), FloatStorage(...)) are saved and
    loaded as torch does: one record per storage, shared with the tensors
    over it, and loaded as TypedStorage of the saved dtype."""
    import warnings
    warnings.simplefilter("ignore", UserWarning)  # TypedStorage deprecation
    a = torch.arange(6, dtype=torch.float32)
    path = tmp_path / "storages.pt"
    torch.save([a, a.storage(), a[2:].storage(), torch.IntStorage([7, 8])], path)
    t, s, s2, si = torchcore.load(path)
    assert isinstance(s, torchcore.storage.TypedStorage) and s.dtype == torchcore.float32
    assert s.tolist() == a.tolist() and si.tolist() == [7, 8] and si.dtype == torchcore.int32
    assert s._cdata == s2._cdata == t.untyped_storage()._cdata  # one storage
    t[0] = 42.0
    assert s[0] == 42.0
    back = tmp_path / "storages_tc.pt"
    tc = torchcore.arange(4, dtype=torchcore.float64)
    torchcore.save([tc, tc.storage(), torchcore.ShortStorage([1, 2, 3])], back)
    rt, rs, rsh = torch.load(back, weights_only=True)
    assert isinstance(rs, torch.storage.TypedStorage) and rs.dtype == torch.float64
    assert rs.data_ptr() == rt.data_ptr()
    assert rs.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert rsh.dtype == torch.int16 and rsh.tolist() == [1, 2, 3]
    # The legacy format too.
    legacy = tmp_path / "storages_legacy.pt"
    torchcore.save([tc, tc.storage()], legacy, _use_new_zipfile_serialization=False)
    lt, ls = torch.load(legacy, weights_only=True)
    assert ls.data_ptr() == lt.data_ptr() and ls.tolist() == [0.0, 1.0, 2.0, 3.0]


@needs_torch
def test_legacy_tensor_type_classes_as_torch():
    for name in ("DoubleTensor", "FloatTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
                 "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"):
        ours, ref = getattr(torchcore, name), getattr(torch, name)
        e, re = ours(), ref()
        assert str(e.dtype) == str(re.dtype) and tuple(e.shape) == tuple(re.shape) == (0,)
        assert isinstance(e, ours)
        assert tuple(ours(2, 3).shape) == tuple(ref(2, 3).shape)
        assert ours([1, 0]).tolist() == ref([1, 0]).tolist()
    assert not isinstance(torchcore.zeros(2, dtype=torchcore.float64), torchcore.FloatTensor)
    assert not isinstance(3.0, torchcore.FloatTensor)
    s = torchcore.zeros(5).storage()
    t = torchcore.FloatTensor().set_(s, 1, (2,), (2,))
    assert t.storage_offset() == 1 and t.stride() == (2,)


@needs_torch
def test_mmap_options_private_and_shared(tmp_path):
    """set_default_mmap_options as torch: MAP_PRIVATE (default) keeps writes
    in the process, MAP_SHARED writes them to the file; a context manager
    restores the previous flags."""
    import mmap
    ser = torchcore.serialization
    path = tmp_path / "m.pt"
    torchcore.save({"w": torchcore.arange(6, dtype=torchcore.float32).reshape(2, 3)}, path)
    assert ser.get_default_mmap_options() == mmap.MAP_PRIVATE
    sd = torchcore.load(path, mmap=True)
    sd["w"][0][0] = 7.0
    assert torchcore.load(path, mmap=True)["w"][0][0].item() == 0.0
    with ser.set_default_mmap_options(mmap.MAP_SHARED):
        assert ser.get_default_mmap_options() == mmap.MAP_SHARED
        sd = torchcore.load(path, mmap=True)
        sd["w"][0][0] = 7.0
        again = torchcore.load(path, mmap=True)
        assert again["w"][0][0].item() == 7.0
    assert ser.get_default_mmap_options() == mmap.MAP_PRIVATE
    del sd, again
    # torch reads the file written through the shared mapping (it does not
    # check record CRCs; torchcore's copying load does, and refuses it).
    assert torch.load(path, weights_only=True)["w"][0][0].item() == 7.0
    with pytest.raises(RuntimeError, match="invalid checksum"):
        torchcore.load(path)
    with pytest.raises(ValueError, match="expected mmap.MAP_PRIVATE or mmap.MAP_SHARED"):
        ser.set_default_mmap_options(12345)


@needs_torch
def test_file_objects_as_torch(tmp_path):
    """save flushes a file object and checks it can write before pickling;
    load reads file objects through readinto when they have it."""
    import io
    import tempfile
    t = torchcore.arange(5, dtype=torchcore.float32)
    with tempfile.NamedTemporaryFile() as f:
        torchcore.save(t, f)  # no explicit flush: reading by name sees it
        assert torch.load(f.name, weights_only=True).tolist() == t.tolist()
    with pytest.raises(AttributeError, match="file-like object with a 'write' attribute"):
        torchcore.save(t, 3)

    class Tracked(io.BytesIO):
        used = set()

        def read(self, *a):
            self.used.add("read")
            return super().read(*a)

        def readinto(self, b):
            self.used.add("readinto")
            return super().readinto(b)
    buf = io.BytesIO()
    torchcore.save(t, buf)
    src = Tracked(buf.getvalue())
    assert torchcore.load(src).tolist() == t.tolist()
    assert src.used == {"readinto"}
    # From an offset, as torch (a header before the archive).
    both = io.BytesIO()
    both.write(b"header")
    torchcore.save(t, both)
    both.seek(6)
    assert torchcore.load(both).tolist() == t.tolist()


@needs_torch
def test_python2_strings_and_encoding():
    """encoding= for Python 2 strings (SHORT_BINSTRING), as torch: 'utf-8'
    by default, 'bytes' gives bytes, 'latin1' one char per byte."""
    import io
    import pickle as pk
    raw = "ż".encode("utf-8")
    # A protocol-2 legacy checkpoint whose object is [py2 str, 1]: build it
    # with torch, then swap the str for a SHORT_BINSTRING by hand.
    buf = io.BytesIO()
    torch.save(["XXXX", 1], buf, _use_new_zipfile_serialization=False)
    data = buf.getvalue()
    old = b"X\x04\x00\x00\x00XXXX"
    assert old in data
    data = data.replace(old, b"U" + bytes([len(raw)]) + raw, 1)
    for enc, want in (("utf-8", "ż"), ("bytes", raw), ("latin1", raw.decode("latin1"))):
        assert torchcore.load(io.BytesIO(data), encoding=enc)[0] == want
        assert torch.load(io.BytesIO(data), encoding=enc, weights_only=False)[0] == want
    assert torchcore.load(io.BytesIO(data))[0] == "ż"
    with pytest.raises(RuntimeError, match="'ascii' codec can't decode"):
        torchcore.load(io.BytesIO(data), encoding="ascii")
    del pk


@needs_torch
def test_empty_storages_viewed_as_two_types_save_as_torch():
    import io
    a = torchcore.tensor([], dtype=torchcore.int8)
    s = torchcore.storage.TypedStorage(wrap_storage=a.untyped_storage(), dtype=torchcore.uint8, _internal=True)
    buf = io.BytesIO()
    torchcore.save([a, s], buf)
    buf.seek(0)
    ra, rs = torch.load(buf, weights_only=True)
    assert ra.dtype == torch.int8 and ra.numel() == 0
    assert rs.dtype == torch.uint8 and rs.size() == 0
    buf.seek(0)
    la, ls = torchcore.load(buf)
    assert la.dtype == torchcore.int8 and ls.dtype == torchcore.uint8


@needs_torch
def test_zipfile_writer_reader_round_trip(tmp_path):
    import io
    data = {"a": b"12039810948234589", "b": b"1239081209484958", "c/d": b"94589480984058"}
    for target in (tmp_path / "w.zip", io.BytesIO()):
        with torchcore.serialization._open_zipfile_writer(target) as zf:
            for k, v in data.items():
                zf.write_record(k, v, len(v))
            zf.write_record("byteorder", "little", 6)
        if hasattr(target, "seek"):
            target.seek(0)
        with torchcore.serialization._open_zipfile_reader(target) as zr:
            for k, v in data.items():
                assert zr.get_record(k) == v
            assert zr.get_record("byteorder") == b"little"
        if hasattr(target, "seek"):
            target.seek(0)
        with torch.serialization._open_zipfile_reader(
                str(target) if not hasattr(target, "seek") else io.BytesIO(target.getvalue())) as tr:
            assert tr.get_record("c/d") == data["c/d"]


class _Hello:
    def __reduce__(self):
        return (print, ("never printed",))


@needs_torch
def test_refusals_use_torch_wording():
    """A refused global is named as torch names it: builtins bare, the
    modules torch blocks said to be blocked; the same regexes match both."""
    import io
    import os
    import re
    cases = [
        (_Hello(), "Unsupported global: GLOBAL print"),
        (os.execv, f"unsupported GLOBAL {os.execv.__module__}.execv whose module "
                   f"{os.execv.__module__} is blocked"),
        ({"p": io.BytesIO}, "GLOBAL _io.BytesIO was not an allowed global by default"),
    ]
    for obj, pattern in cases:
        buf = io.BytesIO()
        torch.save(obj, buf)
        for loader in (lambda b: torch.load(b, weights_only=True), torchcore.load):
            buf.seek(0)
            with pytest.raises(pickle.UnpicklingError) as info:
                loader(buf)
            assert re.search(pattern, str(info.value)), (pattern, str(info.value))


@needs_torch
def test_open_file_like_as_torch(tmp_path):
    import io
    path = tmp_path / "x.pt"
    torchcore.save(torchcore.ones(2), path)
    with torchcore.serialization._open_file_like(path, "rb") as f:
        data = f.read()
    assert f.closed
    with torch.serialization._open_file_like(str(path), "rb") as g:
        assert g.read() == data
    buf = io.BytesIO(data)
    with torchcore.serialization._open_file_like(buf, "rb") as f:
        assert f is buf
        with torchcore.serialization._open_zipfile_reader(f) as z:
            assert z.get_record(".format_version") == b"1"
    assert not buf.closed


def test_crc32_options_default_and_stored_as_given():
    ser = torchcore.serialization
    assert ser.get_crc32_options() is True
    try:
        ser.set_crc32_options(0)
        assert ser.get_crc32_options() == 0  # as torch: the value is kept as given
    finally:
        ser.set_crc32_options(True)


def _crc_fields(data):
    import zipfile
    return {i.filename.split("/", 1)[1]: i.CRC for i in zipfile.ZipFile(io.BytesIO(data)).infolist()}


def test_save_without_crc32_writes_zeros_and_loads(tmp_path):
    ser = torchcore.serialization
    t = torchcore.arange(12).reshape(3, 4)
    ser.set_crc32_options(False)
    try:
        buf = io.BytesIO()
        torchcore.save({"t": t, "v": t[1:]}, buf)
        torchcore.save({"t": t, "v": t[1:]}, tmp_path / "nocrc.pt")
    finally:
        ser.set_crc32_options(True)
    data = buf.getvalue()
    assert set(_crc_fields(data).values()) == {0}
    for src in (io.BytesIO(data), tmp_path / "nocrc.pt"):
        back = torchcore.load(src)
        assert torchcore.equal(back["t"], t) and torchcore.equal(back["v"], t[1:])
    back = torchcore.load(tmp_path / "nocrc.pt", mmap=True)
    assert back["v"].storage_offset() == 4
    with ser._open_zipfile_reader(io.BytesIO(data)) as z:
        assert z.get_record("byteorder") == b"little"
    # With CRCs on (the default), each field is the record's CRC-32.
    buf = io.BytesIO()
    torchcore.save(t, buf)
    assert 0 not in _crc_fields(buf.getvalue()).values()


@needs_torch
def test_crc32_off_both_ways_with_torch(tmp_path):
    t = torchcore.arange(6, dtype=torchcore.float32)
    torchcore.serialization.set_crc32_options(False)
    try:
        torchcore.save([t, t[2:]], tmp_path / "ours.pt")
    finally:
        torchcore.serialization.set_crc32_options(True)
    for mmap in (False, True):
        a, b = torch.load(tmp_path / "ours.pt", weights_only=True, mmap=mmap)
        assert b.tolist() == [2.0, 3.0, 4.0, 5.0]
        assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    torch.serialization.set_crc32_options(False)
    try:
        x = torch.arange(6, dtype=torch.float32)
        torch.save({"x": x, "y": x[::2]}, tmp_path / "theirs.pt")
    finally:
        torch.serialization.set_crc32_options(True)
    assert set(_crc_fields((tmp_path / "theirs.pt").read_bytes()).values()) == {0}
    for mmap in (False, True):
        back = torchcore.load(tmp_path / "theirs.pt", mmap=mmap)
        assert back["y"].tolist() == [0.0, 2.0, 4.0]
        back["x"][0] = 7.0
        assert back["y"][0].item() == 7.0


def test_legacy_storage_views_load_over_their_root():
    # A pre-1.0 layout (storage views in the persistent ids), made by hand;
    # torch 2.15 loads it the same way (crates/torchcore-pt/tests/legacy_views.rs).
    path = os.path.join(os.path.dirname(__file__), "..", "..", "torchcore-pt", "tests", "fixtures",
                        "torch-legacy-storage-views.pt")
    d = torchcore.load(path)
    assert d["a"].tolist() == [[3.0, 5.0], [4.0, 6.0]]
    assert d["b"].tolist() == [2.0, 3.0, 4.0, 5.0, 6.0]
    d["b"][0] = 100.0
    assert d["whole"][2].item() == 100.0
