"""PyObject preservation (the seed's ``pyobj_slot_``): identity, resurrection,
in-place metadata ops, freeing, threads.  Runs without torch."""

import gc
import sys
import threading
import weakref

import pytest

import torchcore as tc
from torchcore._testing import Holder


def test_contiguous_and_to_return_self():
    t = tc.zeros(2, 3)
    assert t.contiguous() is t
    assert t.to(t.dtype) is t
    assert t.to("cpu") is t
    assert t.float() is t
    assert t.cpu() is t
    assert t.to(tc.float64) is not t
    tt = t.t()
    assert tt.contiguous() is not tt


def test_views_are_new_objects():
    t = tc.zeros(2, 3)
    assert t.view(2, 3) is not t
    assert t.reshape(2, 3) is not t
    assert t[...] is not t
    assert t.detach() is not t


def test_inplace_ops_return_self():
    u = tc.zeros(2, 3)
    assert u.t_() is u
    assert u.unsqueeze_(0) is u
    assert u.resize_(6) is u
    assert u.fill_(1) is u
    assert u.zero_() is u
    assert u.copy_(tc.ones(6)) is u
    assert u.requires_grad_(False) is u


def test_holder_round_trip_is_same_object():
    t = tc.zeros(2)
    h = Holder(t)
    assert h.get() is t
    assert h.get() is h.get()


def test_resurrection_keeps_dict_and_id():
    t = tc.arange(4)
    t.tag = "x"
    ident = id(t)
    w = weakref.ref(t)
    h = Holder(t)
    del t
    gc.collect()
    assert w() is not None
    back = h.get()
    assert id(back) == ident and back.tag == "x" and back is w()
    del back
    h.clear()
    assert w() is None, "the object dies with the last Rust handle"


def test_object_freed_when_no_holder():
    t = tc.zeros(3)
    w = weakref.ref(t)
    del t
    assert w() is None


def test_self_cycle_collected():
    t = tc.zeros(3)
    t.me = t
    w = weakref.ref(t)
    del t
    gc.collect()
    assert w() is None


def test_refcount_edges():
    t = tc.zeros(3)
    base = sys.getrefcount(t)
    h = Holder(t)  # impl count 1 -> 2: the impl takes one reference
    assert sys.getrefcount(t) == base + 1
    h.append(t)  # 2 -> 3: nothing
    assert sys.getrefcount(t) == base + 1
    h.clear()  # 3 -> 1: one reference back
    assert sys.getrefcount(t) == base
    assert t._use_count() == 1


def test_inplace_metadata_seen_by_all_references():
    a = tc.zeros(2, 3)
    b = a
    a.t_()
    assert b.shape == (3, 2)
    b.resize_(6)
    assert a.shape == (6,)


def test_inplace_with_rust_holder_keeps_one_object():
    t = tc.zeros(2, 3)
    t.tag = "kept"
    h = Holder(t)
    t.unsqueeze_(0)
    assert t.shape == (1, 2, 3)
    g = h.get()
    assert g is t and g.shape == (1, 2, 3) and g.tag == "kept"
    # The Rust handle itself still sees the old TensorImpl (copy-on-write).
    assert h.rust_sizes() == [2, 3]
    w = weakref.ref(t)
    del t, g
    gc.collect()
    assert w() is not None, "the holder keeps the object alive"
    assert h.get().shape == (1, 2, 3)
    h.clear()
    gc.collect()
    assert w() is None


def test_views_share_storage_not_object():
    t = tc.arange(6)
    v = t.view(2, 3)
    assert v.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    v[0, 0] = 42
    assert t[0].item() == 42


def test_edges_from_other_threads():
    t = tc.zeros(4)
    t.tag = 1
    w = weakref.ref(t)
    h = Holder(t)
    h.hammer(4, 200)
    del t
    gc.collect()
    assert w() is not None and w().tag == 1
    h.clear_on_thread()
    gc.collect()
    assert w() is None


def test_python_threads_share_identity():
    t = tc.zeros(2)
    h = Holder(t)
    out = []

    def work():
        for _ in range(100):
            out.append(h.get() is t)

    ths = [threading.Thread(target=work) for _ in range(4)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert all(out) and len(out) == 400


def test_no_leak_in_loops():
    import tracemalloc

    def churn(n):
        for i in range(n):
            t = tc.zeros(8)
            t.tag = i
            h = Holder(t)
            del t
            g = h.get()
            g.unsqueeze_(0)
            h.clear()
            v = g.view(-1)[1:]
            del g, v

    churn(2000)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    churn(5000)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert after - before < 64 * 1024, (before, after)


def test_weakref_callback_runs_once_when_holder_releases():
    calls = []
    t = tc.zeros(2)
    h = Holder(t)
    w = weakref.ref(t, lambda _: calls.append(1))
    del t
    gc.collect()
    assert calls == []
    h.clear()
    assert calls == [1]
    assert w() is None


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_rss_stable_over_many_resurrections():
    """Rust-side memory (TensorImpls, storages) is not seen by tracemalloc:
    check the resident set size over tens of thousands of round trips."""

    def churn(n):
        for i in range(n):
            t = tc.zeros(64)
            t.tag = i
            h = Holder(t)
            del t
            g = h.get()
            g.t_()
            g.unsqueeze_(0)  # copy-on-write while the holder shares it
            h.clear()
            del g

    churn(5000)
    gc.collect()
    before = _rss_bytes()
    churn(30000)
    gc.collect()
    after = _rss_bytes()
    assert after - before < 4 * 1024 * 1024, (before, after)


def test_gil_released_around_copies_from_threads():
    src = tc.arange(1 << 16, dtype=tc.float32)
    dsts = [tc.empty(1 << 16) for _ in range(4)]
    h = Holder(src)

    def work(d):
        for _ in range(20):
            d.copy_(src)
            h.get().clone()

    ths = [threading.Thread(target=work, args=(d,)) for d in dsts]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert all(d[-1].item() == float((1 << 16) - 1) for d in dsts)


def test_retired_impls_are_pruned():
    t = tc.zeros(2, 3)
    h = Holder(t)
    t.t_()  # copy-on-write: the old impl stays bound (retired)
    h.clear()  # the holder lets go: only the retired handle is left
    t.unsqueeze_(0)  # prunes it
    assert t.shape == (1, 3, 2) and t._use_count() == 1


def test_new_objects_get_their_dict_on_first_use():
    # New `torchcore.Tensor` objects come straight from `tp_alloc`, with an
    # empty `__dict__` slot (as PyTorch's do), not from `object.__new__`,
    # which makes the dictionary eagerly on CPython 3.11 and 3.12.
    from torchcore._testing import _fast_alloc

    assert _fast_alloc(), "the layout check at import turned the tp_alloc path off"
    base = tc.arange(12)
    views = [base[2:], base.view(3, 4), base.detach(), base.flatten(), tc.empty(3)]
    for v in views:
        assert type(v) is tc.Tensor
        assert vars(v) == {}
        v.note = "kept"
        assert v.__dict__ == {"note": "kept"}
    # The dictionary made on first use is the object's own, kept across a
    # Rust round trip, and a cycle through it is collected.
    h = Holder(views[0])
    assert h.get().note == "kept"
    w = weakref.ref(views[1])
    views[1].me = views[1]
    del views, h
    gc.collect()
    assert w() is None
    # An attribute set first, without reading `__dict__` before.
    t = base[1:]
    t.__dict__["x"] = 1
    assert t.x == 1
