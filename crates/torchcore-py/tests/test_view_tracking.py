"""View tracking (``Tensor._base``, ``Tensor._is_view()``), op by op, side by
side with torch where it is importable: which ops make views, that the base
of a view of a view is the first base, and that ``_base`` is the base's own
Python object."""

import gc

import pytest

import torchcore as tc

try:
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

needs_torch = pytest.mark.skipif(
    torch is None, reason="torch is not importable: the side-by-side comparisons with torch are skipped"
)


def base(mod):
    return mod.arange(24.0).reshape(2, 3, 4).clone()


# name -> expression on `t` (evaluated with `mod` bound to tc or torch).
OPS = {
    "view": "t.view(6, 4)",
    "view_as": "t.view_as(t)",
    "reshape_view": "t.reshape(6, 4)",
    "reshape_same": "t.reshape(2, 3, 4)",
    "reshape_copy": "t.transpose(0, 1).reshape(-1)",
    "slice": "t[:, 1:]",
    "slice_full": "t[:]",
    "narrow": "t.narrow(0, 0, 2)",
    "select": "t.select(0, 0)",
    "unbind": "t.unbind(0)[0]",
    "split": "t.split(2, 0)[0]",
    "split_with_sizes": "t.split_with_sizes([1, 1], 0)[0]",
    "chunk": "t.chunk(1, 0)[0]",
    "tensor_split": "t.tensor_split(1, 0)[0]",
    "transpose": "t.transpose(0, 1)",
    "transpose_same": "t.transpose(0, 0)",
    "t_2d": "t[0].t()",
    "mT": "t.mT",
    "permute": "t.permute(0, 1, 2)",
    "movedim": "t.movedim(0, 0)",
    "expand": "t.expand(2, 3, 4)",
    "expand_as": "t.expand_as(t)",
    "broadcast_to": "t.broadcast_to((2, 3, 4))",
    "squeeze": "t.squeeze()",
    "squeeze_dim": "t.squeeze(0)",
    "unsqueeze": "t.unsqueeze(0)",
    "flatten": "t.flatten()",
    "flatten_noop": "t.flatten(0, 0)",
    "flatten_copy": "t.transpose(0, 1).flatten()",
    "unflatten": "t.unflatten(2, (2, 2))",
    "ravel": "t.ravel()",
    "diagonal": "t.diagonal()",
    "unfold": "t.unfold(2, 2, 1)",
    "as_strided": "t.as_strided((2,), (1,))",
    "swapaxes": "t.swapaxes(0, 1)",
    "index_int": "t[0]",
    "index_none": "t[None]",
    "index_ellipsis": "t[...]",
    "view_dtype": "t.view(mod.int32)",
    "view_same_dtype": "t.view(mod.float32)",
    "contiguous": "t.contiguous()",
    "contiguous_copy": "t.transpose(0, 1).contiguous()",
    "detach": "t.detach()",
    "clone": "t.clone()",
}


def facts(mod, expr):
    x = base(mod)
    out = []
    for t in (x, x.view(2, 3, 4)):
        v = eval(expr, {"mod": mod, "t": t})
        out.append((v._is_view(), v._base is x, v._base is None, v is t))
    return out


@needs_torch
@pytest.mark.parametrize("name", sorted(OPS))
def test_is_view_and_base_as_torch(name):
    assert facts(tc, OPS[name]) == facts(torch, OPS[name])


def test_base_is_the_root_and_the_same_object():
    x = tc.arange(24.0)
    v = x.view(2, 3, 4)[1][1:]
    assert v._is_view() and v._base is x
    assert v._base is v._base
    assert not x._is_view() and x._base is None
    x.foo = "kept"  # the object's own state comes back with it
    del x
    gc.collect()
    b = v._base
    assert b.shape == (24,) and b.foo == "kept" and b._base is None


def test_base_made_by_rust_gets_one_object():
    # The base was never a Python object of its own before `_base` asked.
    v = tc.arange(6.0).view(2, 3)
    assert v._base is v._base
    assert v._base.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_base_follows_in_place_metadata_ops_on_the_base():
    x = tc.arange(6.0).view(2, 3).clone()
    v = x[0]
    x.t_()  # the TensorImpl is shared with the view: copied, same object
    assert v._base is x
    assert v._base.shape == (3, 2)


def test_views_of_a_view_after_detach_are_views_of_the_detached_tensor():
    x = tc.arange(6.0)
    d = x.view(2, 3).detach()
    assert d._base is None and not d._is_view()
    w = d[0]
    assert w._base is d


@needs_torch
def test_detach_then_view_as_torch():
    for mod in (tc, torch):
        x = mod.arange(6.0)
        d = x.view(2, 3).detach()
        assert d[0]._base is d and d._base is None


def test_requires_grad_views_are_tracked():
    w = tc.zeros(3, requires_grad=True)
    v = w.view(3)
    assert v._base is w and v._is_view()
    assert not v.detach()._is_view()
