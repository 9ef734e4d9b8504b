"""Legacy constructors (``torchcore.FloatTensor(...)``, ``Tensor(...)``,
``Tensor.new(...)``, ``Tensor.new_tensor``, ``torchcore.autograd.Variable``),
``torchcore.equal`` on every dtype with the conjugate and negative bits, and
view tracking after in-place metadata ops, side by side with torch where it
is importable."""

import warnings

import numpy as np
import pytest

import torchcore as tc

try:
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

needs_torch = pytest.mark.skipif(
    torch is None, reason="torch is not importable: the side-by-side comparisons with torch are skipped"
)


def outcome(f):
    """What `f()` gives, in a form comparable across torch and torchcore:
    (class name, dtype name, shape, values or None) or (error class, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = f()
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return (type(e).__name__, str(e).split("\n")[0])
    vals = r.tolist() if r.numel() and r.dtype.is_floating_point is False else None
    return (type(r).__name__, str(r.dtype).split(".")[-1], tuple(r.shape), vals)


# Expressions evaluated with `m` bound to torch or torchcore (values of
# uninitialised memory are not compared: only integer/bool results' are).
LEGACY = [
    "m.ByteTensor()",
    "m.FloatTensor(2, 3)",
    "m.LongTensor([1, 2])",
    "m.IntTensor((3, 4))",
    "m.BoolTensor([1, 0])",
    "m.HalfTensor(1)",
    "m.BFloat16Tensor(2)",
    "m.CharTensor([-1])",
    "m.DoubleTensor(m.Size([2, 2]))",
    "m.ShortTensor(m.Size([2, 0]))",
    "m.DoubleTensor(size=(2,))",
    "m.LongTensor(np.array([5, 6]))",
    "m.LongTensor(m.tensor([1, 2]))",
    "m.LongTensor(m.tensor([1.0]))",
    "m.IntTensor(m.tensor([7, 8], dtype=m.int32).storage())",
    "m.IntTensor(m.tensor([7, 8], dtype=m.int64).storage())",
    "m.ByteTensor(m.tensor([7, 8], dtype=m.uint8).untyped_storage())",
    "m.FloatTensor(2, dtype=m.float64)",
    "m.FloatTensor(2, device='meta')",
    "m.FloatTensor(-1)",
    "m.FloatTensor(2.5)",
    "m.FloatTensor(None)",
    "m.FloatTensor('ab')",
    "m.FloatTensor(2, 'a')",
    "m.cuda.FloatTensor(2)",
    "m.cuda.LongTensor([1])",
    "m.Tensor(2, 3)",
    "m.Tensor([1, 2])",
    "m.Tensor(m.tensor([1, 2]))",
    "m.Tensor(size=(3,))",
    "m.Tensor()",
]

NEW = [
    "x.new()",
    "x.new(1, 2)",
    "x.new(m.Size([3, 4]))",
    "x.new([3, 4])",
    "x.new((3, 4))",
    "x.new(())",
    "x.new(size=(3, 4))",
    "x.new([np.int32(3), np.float64(4)])",
    "x.new(np.array((3, 4)))",
    "x.new(np.int64(3))",
    "x.new(z)",
    "x.new(z.storage())",
    "x.new(2, dtype=m.int64)",
    "x.new(2, size=(3,))",
    "x.new(2, device='meta')",
    "x.new(x[0])",
    "z.new([1.5, 2.7])",
    "x.new_tensor([1, 2])",
    "x.new_tensor([1, 2], dtype=m.int32)",
    "x.new_tensor(z)",
    "x.new_tensor(3)",
]


@needs_torch
@pytest.mark.parametrize("expr", LEGACY)
def test_legacy_constructors_as_torch(expr):
    got = outcome(lambda: eval(expr, {"m": tc, "np": np}))
    want = outcome(lambda: eval(expr, {"m": torch, "np": np}))
    assert got == want


@needs_torch
@pytest.mark.parametrize("expr", NEW)
def test_tensor_new_as_torch(expr):
    def run(m):
        x = m.tensor([1.0, 2.0])
        z = m.tensor([1, 2, 3], dtype=m.int32)
        return outcome(lambda: eval(expr, {"m": m, "np": np, "x": x, "z": z}))

    assert run(tc) == run(torch)


def test_legacy_types_are_isinstance_checks():
    assert isinstance(tc.zeros(2), tc.FloatTensor)
    assert not isinstance(tc.zeros(2, dtype=tc.int64), tc.FloatTensor)
    assert isinstance(tc.zeros(2, dtype=tc.int64), tc.LongTensor)
    assert not isinstance(tc.zeros(2), tc.cuda.FloatTensor)
    assert type(tc.FloatTensor(1)) is tc.Tensor
    assert tc.FloatTensor.dtype == tc.float32 and not tc.FloatTensor.is_cuda
    assert type(tc.FloatTensor) is tc.tensortype


def test_aliasing_forms_share_memory_and_track_the_base():
    x = tc.tensor([1.0, 2.0])
    for make in (lambda: x.new(x), lambda: tc.Tensor(x), lambda: tc.FloatTensor(x)):
        a = make()
        assert a is not x and a.data_ptr() == x.data_ptr() and a._base is x
    s = x.new(x.storage())
    assert s.data_ptr() == x.data_ptr() and s._base is None
    assert tc.FloatTensor(x[1:]).storage_offset() == 1
    # new_tensor always copies.
    with pytest.warns(UserWarning, match="recommended to use sourceTensor.detach"):
        c = x.new_tensor(x)
    assert c.data_ptr() != x.data_ptr() and c.tolist() == [1.0, 2.0]


def test_new_keeps_the_subclass():
    class MyTensor(tc.Tensor):
        pass

    m = MyTensor(tc.empty(2))
    assert type(m) is MyTensor and m.shape == (2,)
    assert type(m.new(2)) is MyTensor
    assert type(m.new_tensor([1])) is MyTensor
    assert type(MyTensor(2, 3)) is MyTensor and MyTensor([1, 2]).tolist() == [1.0, 2.0]


def test_variable():
    x = tc.tensor([1.0, 2.0])
    v = tc.autograd.Variable(x)
    assert v is not x and v.data_ptr() == x.data_ptr() and v._base is None
    assert not v.requires_grad
    r = tc.autograd.Variable(x, requires_grad=True)
    assert r.requires_grad and not x.requires_grad
    assert isinstance(x, tc.autograd.Variable)
    assert tc.autograd.Variable().shape == (0,)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        tc.autograd.Variable(1)


# ---- torch.equal -------------------------------------------------------

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool", "complex64", "complex128"]


def equal_facts(m, dtype):
    d = getattr(m, dtype)
    a = m.tensor([1, 0, 3], dtype=d)
    b = m.tensor([1, 0, 2], dtype=d)
    facts = [m.equal(a, a.clone()), m.equal(a, b), a.equal(a), m.equal(a, a[:2]),
             m.equal(a, m.tensor([1, 0, 3]))]
    if d.is_complex:
        c = m.tensor([1 + 2j, 3 - 1j], dtype=d)
        facts += [m.equal(c, c.conj()), m.equal(c.conj(), c.conj().resolve_conj()),
                  m.equal(c, c.conj().conj()), m.equal(c.conj(), m.tensor([1 - 2j, 3 + 1j]))]
    if d.is_floating_point or d.is_complex:
        n = a._neg_view()
        facts += [m.equal(a, n), m.equal(a, n._neg_view()), m.equal(n, -1 * a if False else n.clone())]
    return facts


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_equal_as_torch(dtype):
    assert equal_facts(tc, dtype) == equal_facts(torch, dtype)


def test_equal_conj_and_neg_without_torch():
    c = tc.tensor([1 + 2j, 2 + 1j])
    assert not tc.equal(c, c.conj())
    assert tc.equal(c, c.conj().conj())
    x = tc.tensor([1.0, 2.0, 3.0])
    assert not tc.equal(x, x._neg_view())
    assert tc.equal(x, x._neg_view()._neg_view())
    f = tc.zeros(2, 3)
    assert not tc.equal(f, f.view(dtype=tc.int32).view(dtype=tc.float32).t())
    assert tc.equal(tc.tensor([1.0, 2.0]), tc.tensor([1, 2]))


# ---- view tracking after in-place metadata ops --------------------------

IN_PLACE = {
    "t_": "v.t_()",
    "transpose_": "v.transpose_(0, 1)",
    "unsqueeze_": "v.unsqueeze_(0)",
    "squeeze_": "v.squeeze_()",
    "as_strided_": "v.as_strided_((2,), (1,))",
    "resize_same": "v.resize_(2, 2)",
    "resize_grow": "v.resize_(4, 4)",
    "set_tensor": "v.set_(m.zeros(3))",
    "set_storage": "v.set_(m.zeros(3).untyped_storage())",
    "set_empty": "v.set_()",
    "detach": "v.detach()",
}


def in_place_facts(m, expr):
    b = m.zeros(2, 3)
    v = b[:, :2]
    r = eval(expr, {"m": m, "v": v})
    facts = [v._base is b, v._is_view(), b._base is None, r is v, r._base is b, r._is_view()]
    # The same op on the base: its views keep naming it.
    b2 = m.zeros(2, 3)
    w = b2[0]
    eval(expr, {"m": m, "v": b2})
    return facts + [w._base is b2, b2._is_view()]


@needs_torch
@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_view_tracking_after_in_place_ops_as_torch(name):
    assert in_place_facts(tc, IN_PLACE[name]) == in_place_facts(torch, IN_PLACE[name])


@needs_torch
@pytest.mark.parametrize("sl", [slice(0, 6, 2), slice(None, None, -1), slice(2, 5), slice(5, 2)])
def test_untyped_storage_slice_steps_as_torch(sl):
    def run(m):
        s = m.arange(10, dtype=m.uint8).untyped_storage()
        try:
            r = s[sl]
        except RuntimeError as e:
            return ("RuntimeError", str(e))
        return (r.nbytes(), r.tolist())

    assert run(tc) == run(torch)
