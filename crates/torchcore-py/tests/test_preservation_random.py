"""Random interleavings of Python references, Rust holders and in-place
metadata ops (Hypothesis): one object per tensor, every view of it agrees,
and the object dies exactly when the last reference of either side goes."""

import gc
import weakref

from hypothesis import given, settings, strategies as st

import torchcore as tc
from torchcore._testing import Holder

OPS = st.lists(
    st.sampled_from(
        ["hold", "release", "drop_name", "get", "t_", "unsqueeze_", "squeeze_", "resize_", "view", "gc"]
    ),
    min_size=1,
    max_size=15,
)


def step(op, names, holders, w):
    if op == "hold" and names:
        holders.append(Holder(names[0]))
    elif op == "release" and holders:
        holders.pop().clear()
    elif op == "drop_name" and names:
        names.pop()
    elif op == "get" and holders:
        g = holders[-1].get()
        assert g is w() and g.tag == "obj"
        names.append(g)
    elif op in ("t_", "unsqueeze_", "squeeze_", "resize_") and names:
        obj = names[0]
        shape = tuple(obj.shape)
        if op == "t_":
            if obj.dim() <= 2:
                assert obj.t_() is obj
                assert tuple(obj.shape) == shape[::-1]
        elif op == "unsqueeze_":
            if obj.dim() < 5:
                assert obj.unsqueeze_(0) is obj
        elif op == "squeeze_":
            obj.squeeze_()
        else:
            obj.resize_(obj.numel())
    elif op == "view" and names:
        v = names[0].reshape(-1)
        assert v is not names[0] and v.numel() == names[0].numel()
    elif op == "gc":
        gc.collect()


def check(names, holders, w):
    """Every reference and every holder show one object, alive exactly
    while some reference of either side exists."""
    alive = bool(names) or bool(holders)
    # No gc.collect(): without cycles the object dies by reference counting
    # alone, the moment the last reference of either side goes.
    assert (w() is not None) == alive
    if alive:
        obj = w()
        assert all(n is obj for n in names)
        for h in holders:
            got = h.get()
            assert got is obj and tuple(got.shape) == tuple(obj.shape)


@settings(max_examples=60)
@given(OPS)
def test_random_preservation(ops):
    t = tc.arange(6, dtype=tc.float32).view(2, 3)
    t.tag = "obj"
    w = weakref.ref(t)
    names = [t]
    holders = []
    del t
    for op in ops:
        step(op, names, holders, w)
        check(names, holders, w)
    names.clear()
    for h in holders:
        h.clear()
    holders.clear()
    gc.collect()
    assert w() is None
