"""Storage slices: ``untyped_storage[a:b]`` is a new storage over the same
bytes (PyTorch 2.x), checked side by side with torch where it is importable;
the torch-free checks run everywhere."""

import gc
import os
import re
import warnings

import pytest

import torchcore as tc

try:
    import torch
except ImportError:  # pragma: no cover - the differential tests skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")

MODULES = [tc] if torch is None else [tc, torch]

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "torchcore-pt", "tests", "fixtures",
                       "torch-legacy-storage-slices.pt")


def counting(m, n=10):
    u = m.UntypedStorage(n)
    for i in range(n):
        u[i] = i
    return u


def outcome(f):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", f())
    except Exception as e:  # noqa: BLE001
        return ("err", type(e).__name__, re.sub(r"\s+", " ", str(e).split("\n")[0]))


# ---- without torch ---------------------------------------------------------


def test_slice_aliases_its_parent():
    u = counting(tc)
    s = u[2:5]
    assert isinstance(s, tc.UntypedStorage)
    assert s.nbytes() == 3 and s.tolist() == [2, 3, 4]
    assert s.data_ptr() == u.data_ptr() + 2
    s[0] = 99
    assert u[2] == 99
    u[3] = 77
    assert s[1] == 77
    assert not s._is_same(u)
    root, offset = s._slice_of()
    assert root is u and offset == 2
    assert u._slice_of() is None


def test_slice_keeps_its_parent_alive_and_preserves_its_object():
    u = counting(tc)
    s = u[4:8]
    s.marker = "kept"
    t = tc.empty(0, dtype=tc.uint8).set_(s)
    del s
    gc.collect()
    again = t.untyped_storage()
    assert again.marker == "kept"
    del u
    gc.collect()
    assert again.tolist() == [4, 5, 6, 7]


def test_parent_resize_is_refused_while_slices_live():
    # torch reallocates the parent and leaves the slice dangling; torchcore
    # refuses (docs/pytorch-map.md).
    u = counting(tc)
    s = u[1:3]
    with pytest.raises(RuntimeError, match="storage slices"):
        u.resize_(100)
    del s
    gc.collect()
    u.resize_(100)
    assert u.nbytes() == 100


def test_slices_of_slices_and_copies_between_overlapping_slices():
    u = counting(tc)
    ss = u[2:8][1:3]
    assert ss.data_ptr() == u.data_ptr() + 3 and ss.tolist() == [3, 4]
    assert ss._slice_of()[0] is u and ss._slice_of()[1] == 3
    u[2:6].copy_(u[0:4])  # overlapping ranges of one root
    assert u.tolist() == [0, 1, 0, 1, 2, 3, 6, 7, 8, 9]
    u[0:4].copy_(u[0:4])  # two slices over the same bytes
    assert u.tolist()[:4] == [0, 1, 0, 1]


def test_typed_storage_over_a_slice():
    u = tc.UntypedStorage(16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = tc.TypedStorage(wrap_storage=u[4:12], dtype=tc.float32, _internal=True)
        ts[1] = 2.5
        assert ts.size() == 2 and ts.data_ptr() == u.data_ptr() + 4
    t = tc.empty(0).set_(u)
    assert t.view(tc.float32).tolist()[2] == 2.5


# ---- against torch ---------------------------------------------------------


SLICES = ["u[2:5]", "u[-3:]", "u[5:100]", "u[7:3]", "u[100:200]", "u[-100:3]", "u[1:1]",
          "u[2:5:1]", "u[:]", "u[True:3]", "u[::2]", "u[2:5:2]", "u[::-1]", "u[0:10:0]",
          "u[1.5:3]", "u[None:None:None]"]


@needs_torch
@pytest.mark.parametrize("expr", SLICES)
def test_slice_bounds_like_torch(expr):
    def run(m):
        u = counting(m)

        def f():
            r = eval(expr)
            return (type(r).__name__, r.nbytes(), r.data_ptr() - u.data_ptr(), r.tolist(),
                    r.device.type, r.resizable())

        return outcome(f)

    assert run(tc) == run(torch)


@needs_torch
@pytest.mark.parametrize(
    "expr",
    [
        "s.resize_(10)", "s.resize_(3)", "s.resize_(0)", "s.nbytes()", "s.size()", "len(s)",
        "s is u[2:5]", "u[2:5] is u[2:5]", "s[0:2].data_ptr() - u.data_ptr()",
        "s.clone().data_ptr() == s.data_ptr()", "copy.copy(s).data_ptr() == s.data_ptr()",
        "s.fill_(7) and u.tolist()", "s.copy_(m.UntypedStorage([9, 8, 7])) and u.tolist()",
        "repr(s)", "s.tolist()", "s.is_shared()", "s.element_size()", "s.type()",
        "m.UntypedStorage(4, device='meta')[1:2]", "u[2:5][5]", "u[2:5][-1]",
        "m.ones(3).storage()[0:2]", "m.ones(3).storage()[::2]",
    ],
)
def test_slice_behaviour_like_torch(expr):
    import copy  # noqa: F401 - used by the expressions

    def run(m):
        u = counting(m)
        s = u[2:5]  # noqa: F841 - used by the expressions
        return outcome(lambda: eval(expr))

    a, b = run(tc), run(torch)
    if a[0] == "ok" and isinstance(a[1], str) and "UntypedStorage" in a[1]:
        # repr's header names the module (torch.storage in both) and the
        # bytes (zeros in torchcore's fresh storages, garbage in torch's).
        assert a[1].splitlines()[-1] == b[1].splitlines()[-1]
        return
    assert a == b


@needs_torch
def test_tensor_set_to_a_slice_like_torch():
    def run(m):
        u = counting(m)
        s = u[2:6]
        t = m.empty(0, dtype=m.uint8).set_(s)
        t[1] = 50
        v = m.empty(0, dtype=m.int16).set_(s, 1, (1,), (1,))
        return (t.tolist(), t.storage_offset(), t.data_ptr() - u.data_ptr(),
                t.untyped_storage() is s, t.untyped_storage().nbytes(), u.tolist(),
                v.data_ptr() - u.data_ptr(), outcome(lambda: t.resize_(10)))

    assert run(tc) == run(torch)


@needs_torch
def test_legacy_bare_storage_views_load_as_torch_loads_them():
    def run(m, weights_only):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a, b, c = m.load(FIXTURE, weights_only=weights_only)
            out = [type(a).__name__, a.dtype == m.float32, a.size(), b.size(), a.tolist(),
                   b.tolist(), a is c, b.data_ptr() - a.data_ptr(),
                   type(a._untyped_storage).__name__, a._untyped_storage.nbytes(),
                   b._untyped_storage.nbytes(), a._untyped_storage is c._untyped_storage]
            b[0] = 50.0
            out += [b.tolist(), outcome(lambda: b.resize_(10))]
        return out

    for weights_only in (True, False):
        assert run(tc, weights_only) == run(torch, weights_only)
