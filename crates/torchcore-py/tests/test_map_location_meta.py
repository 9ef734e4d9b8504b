"""`torchcore.load(map_location='meta')` (a string or a meta device) gives
meta tensors: dtype, shape, strides, offsets and storage sharing as saved,
no data, and no record is read; a dict or a callable mapping to the meta
device does the same after reading. Compared with torch where installed."""
import io
import re
import zipfile

import pytest

import torchcore as tc


def checkpoint(m, legacy=False):
    base = m.arange(12, dtype=m.float32)
    obj = {
        "a": base[2:10].view(2, 4),
        "b": base.as_strided((3, 2), (1, 3), 1),
        "c": m.zeros(3, dtype=m.int16),
        "g": m.ones(2, requires_grad=True),
        "n": 7,
    }
    buf = io.BytesIO()
    m.save(obj, buf, _use_new_zipfile_serialization=not legacy)
    return buf.getvalue()


def layout(r):
    return {
        k: (str(v.device), str(v.dtype).split(".")[-1], tuple(v.shape), v.stride(),
            v.storage_offset(), v.untyped_storage().nbytes(), v.requires_grad)
        for k, v in r.items() if k != "n"
    }


TARGETS = ["meta", tc.device("meta"), {"cpu": "meta"},
           lambda s, loc: tc.UntypedStorage(s.nbytes(), device="meta")]


@pytest.mark.parametrize("loc", TARGETS, ids=["str", "device", "dict", "callable"])
@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_meta_layout(loc, legacy):
    r = tc.load(io.BytesIO(checkpoint(tc, legacy)), map_location=loc)
    assert r["n"] == 7
    got = layout(r)
    assert got["a"] == ("meta", "float32", (2, 4), (4, 1), 2, 48, False)
    assert got["b"] == ("meta", "float32", (3, 2), (1, 3), 1, 48, False)
    assert got["c"] == ("meta", "int16", (3,), (1,), 0, 6, False)
    assert got["g"] == ("meta", "float32", (2,), (1,), 0, 8, True)
    # One storage for the two views, as saved.
    sa, sb = r["a"].untyped_storage(), r["b"].untyped_storage()
    assert sa._cdata == sb._cdata
    assert r["c"].untyped_storage()._cdata != sa._cdata
    with pytest.raises(NotImplementedError):
        r["a"].tolist()


def test_meta_reads_no_record(tmp_path):
    # The data records are replaced by garbage of another size: the meta
    # load does not look at them; a CPU load refuses the file.
    data = checkpoint(tc)
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for info in src.infolist():
            body = src.read(info)
            if "/data/" in info.filename:
                body = b"x"
            z.writestr(info, body)
    r = tc.load(io.BytesIO(out.getvalue()), map_location="meta")
    assert layout(r)["a"][:5] == ("meta", "float32", (2, 4), (4, 1), 2)
    with pytest.raises(Exception):
        tc.load(io.BytesIO(out.getvalue()), map_location="cpu")


def test_meta_mmap_and_path(tmp_path):
    p = tmp_path / "c.pt"
    p.write_bytes(checkpoint(tc))
    for mmap in (False, True):
        r = tc.load(p, map_location="meta", mmap=mmap)
        assert layout(r)["b"] == ("meta", "float32", (3, 2), (1, 3), 1, 48, False)


def test_meta_storages_and_tags():
    buf = io.BytesIO()
    t = tc.arange(4, dtype=tc.int32)
    tc.save({"s": t._typed_storage(), "t": t}, buf)
    buf.seek(0)
    r = tc.load(buf, map_location="meta")
    assert r["s"].device.type == "meta" and r["s"].nbytes() == 16
    assert r["t"].untyped_storage()._cdata == r["s"]._untyped_storage._cdata


def test_callable_too_small_meta_storage_refused():
    with pytest.raises(RuntimeError, match="at least as large"):
        tc.load(io.BytesIO(checkpoint(tc)),
                map_location=lambda s, loc: tc.UntypedStorage(4, device="meta"))


def test_meta_with_allowlisted_globals():
    import collections
    Point = collections.namedtuple("Point", "x y")
    globals()["Point"] = Point
    Point.__module__ = __name__
    buf = io.BytesIO()
    tc.save({"p": Point(1, 2), "t": tc.arange(3.0)[1:], "m": tc.empty(2, 3, device="meta")}, buf)
    with tc.serialization.safe_globals([Point]):
        buf.seek(0)
        r = tc.load(buf, map_location="meta")
    assert r["p"] == Point(1, 2)
    assert (r["m"].device.type, tuple(r["m"].shape)) == ("meta", (2, 3))
    t = r["t"]
    assert (t.device.type, tuple(t.shape), t.storage_offset(), t.untyped_storage().nbytes()) == (
        "meta", (2,), 1, 12)


def test_meta_tensors_round_trip():
    # A meta tensor is saved without storage (torch's
    # `_rebuild_meta_tensor_no_storage`) and loads as one, wherever mapped.
    buf = io.BytesIO()
    tc.save({"m": tc.empty(3, 2, device="meta")[1:],
             "g": tc.empty(2, device="meta", requires_grad=True)}, buf)
    for loc in (None, "cpu", "meta"):
        r = tc.load(io.BytesIO(buf.getvalue()), map_location=loc)
        assert (r["m"].device.type, tuple(r["m"].shape), r["m"].stride(),
                r["m"].storage_offset()) == ("meta", (2, 2), (2, 1), 0)
        assert r["g"].requires_grad and r["g"].device.type == "meta"


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("loc", ["meta", "device"], ids=["str", "device"])
@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("writer", ["torch", "torchcore"])
def test_same_as_torch(loc, legacy, writer):
    data = checkpoint(torch if writer == "torch" else tc, legacy)
    want = torch.load(io.BytesIO(data), map_location=torch.device("meta") if loc == "device" else loc,
                      weights_only=True)
    got = tc.load(io.BytesIO(data), map_location=tc.device("meta") if loc == "device" else loc)
    assert layout(got) == layout(want)
    assert got["n"] == want["n"]


def test_dict_and_callable_same_as_torch():
    data = checkpoint(torch)
    for loc in ({"cpu": "meta"}, "callable"):
        want = torch.load(io.BytesIO(data), weights_only=True, map_location=loc if loc != "callable"
                          else lambda s, l: torch.UntypedStorage(s.nbytes(), device="meta"))
        got = tc.load(io.BytesIO(data), map_location=loc if loc != "callable"
                      else lambda s, l: tc.UntypedStorage(s.nbytes(), device="meta"))
        assert layout(got) == layout(want)


def test_meta_tensors_across_torch():
    buf = io.BytesIO()
    torch.save({"m": torch.empty(3, 2, device="meta")[1:],
                "p": torch.nn.Parameter(torch.empty(2, device="meta")),
                "g": torch.empty(2, device="meta", requires_grad=True)}, buf)
    for loc in (None, "cpu", "meta"):
        want = torch.load(io.BytesIO(buf.getvalue()), map_location=loc, weights_only=True)
        got = tc.load(io.BytesIO(buf.getvalue()), map_location=loc)
        assert layout(got) == layout(want)
    out = io.BytesIO()
    tc.save({"m": tc.empty(3, 2, device="meta")[1:], "h": tc.empty(4, dtype=tc.float16,
                                                                    device="meta")}, out)
    back = torch.load(io.BytesIO(out.getvalue()), weights_only=True)
    assert layout(back) == layout(tc.load(io.BytesIO(out.getvalue())))
    assert str(back["h"].dtype) == "torch.float16" and back["h"].device.type == "meta"


@pytest.mark.parametrize("loc", ["meta:0", "xla", "cpu:1", "foo"])
def test_unknown_locations_fail_like_torch(loc):
    # torch 2.15: "don't know how to restore data location of
    # torch.storage.UntypedStorage (tagged with LOC)", a RuntimeError at the
    # first storage; a checkpoint without storages loads.
    buf = io.BytesIO()
    tc.save({"a": tc.arange(3)}, buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match=re.escape(
            f"don't know how to restore data location of torch.storage.UntypedStorage (tagged with {loc})")):
        tc.load(buf, map_location=loc)
    buf = io.BytesIO()
    tc.save({"a": 1}, buf)
    buf.seek(0)
    assert tc.load(buf, map_location=loc) == {"a": 1}


def test_requires_grad_underscore_refuses_none():
    t = tc.zeros(2)
    with pytest.raises(TypeError, match=re.escape(
            "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not NoneType")):
        t.requires_grad_(None)
    assert t.requires_grad_() is t and t.requires_grad
    assert t.requires_grad_(False) is t and not t.requires_grad
