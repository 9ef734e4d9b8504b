"""Storage objects live as long as their `StorageImpl` (PyTorch 2.x's
storage PyObject preservation): same `id` and `__dict__` back from any
tensor, freed together with the storage, safe across threads."""

import gc
import threading
import weakref

import pytest

import torchcore as tc

try:
    import torch
except ImportError:  # pragma: no cover - the differential tests skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")


def test_id_and_dict_survive_del_while_a_detached_tensor_holds_the_storage():
    t = tc.ones(4)
    d = t.detach()  # made before the storage object; never touches it
    s = t.untyped_storage()
    s.tag = "kept"
    ident = id(s)
    del s, t
    gc.collect()
    again = d.untyped_storage()
    assert id(again) == ident
    assert again.tag == "kept"


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_views_made_before_the_object_get_it_back():
    base = tc.arange(6.0)
    views = [base[1:], base.view(2, 3), base.detach()[::2]]
    s = base.untyped_storage()
    s.x = 3
    ident = id(s)
    del s, base
    gc.collect()
    for v in views:
        assert id(v.untyped_storage()) == ident
        assert v.untyped_storage().x == 3
        assert v.storage().untyped() is v.untyped_storage()


def test_object_is_freed_with_the_last_tensor():
    t = tc.ones(3)
    v = t[1:]
    s = t.untyped_storage()
    w = weakref.ref(s)
    del s
    gc.collect()
    assert w() is not None  # the storage is still used
    del t
    gc.collect()
    assert w() is not None  # `v` still uses it
    del v
    # No cycle: freed by reference counting alone, without `gc.collect()`.
    assert w() is None


def test_standalone_storage_is_freed_at_once():
    s = tc.UntypedStorage(16)
    w = weakref.ref(s)
    del s
    assert w() is None
    t = tc.tensor([1.0, 2.0])
    s = t.untyped_storage()
    w = weakref.ref(s)
    del t
    assert w() is not None  # only the object holds the storage now
    del s
    assert w() is None


def test_no_storage_objects_leak_over_many_rounds():
    gc.collect()
    before = sum(type(o) is tc.UntypedStorage for o in gc.get_objects())
    for _ in range(200):
        t = tc.ones(5)
        d = t.detach()
        s = t.untyped_storage()
        s.tag = 1
        del s, t
        assert d.untyped_storage().tag == 1
        del d
    gc.collect()
    after = sum(type(o) is tc.UntypedStorage for o in gc.get_objects())
    assert after <= before


def test_set_and_storage_constructor_share_the_object():
    s = tc.UntypedStorage(8)
    s.mark = 1
    t = tc.empty(0)
    t.set_(s)
    ident = id(s)
    del s
    gc.collect()
    other = t.detach()
    del t
    gc.collect()
    assert id(other.untyped_storage()) == ident
    assert other.untyped_storage().mark == 1


def test_use_count_counts_the_object_once():
    t = tc.ones(2)
    s = t.untyped_storage()
    # `t` and the storage object.
    assert tc._C._storage_Use_Count(s._cdata) == 2
    v = t[1:]
    assert tc._C._storage_Use_Count(s._cdata) == 3
    del v


def test_threads_fetch_and_drop_the_same_object():
    t = tc.ones(8)
    keep = t.detach()
    s = t.untyped_storage()
    s.tag = 7
    ident = id(s)
    del s, t
    errors = []

    def work():
        try:
            for _ in range(300):
                x = keep[1:]
                st = x.untyped_storage()
                if id(st) != ident or st.tag != 7:
                    errors.append("different object")
                del x, st
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    w = weakref.ref(keep.untyped_storage())
    del keep
    gc.collect()
    assert w() is None


def test_threads_dropping_the_last_tensor_free_the_object():
    objs = []
    for _ in range(50):
        t = tc.ones(4)
        s = t.untyped_storage()
        objs.append((weakref.ref(s), t))
        del s, t

    def drop(chunk):
        for i in chunk:
            objs[i] = (objs[i][0], None)

    threads = [threading.Thread(target=drop, args=(range(k, 50, 4),)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    gc.collect()
    assert all(w() is None for w, _ in objs)


@needs_torch
def test_matches_torch():
    def run(m):
        t = m.ones(4)
        d = t.detach()
        s = t.untyped_storage()
        s.tag = 1
        ident = id(s)
        del s, t
        gc.collect()
        again = d.untyped_storage()
        return (id(again) == ident, getattr(again, "tag", None))

    assert run(tc) == run(torch)
