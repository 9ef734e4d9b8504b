"""`tolist()` fills its new lists through their item arrays where the list
layout is known (CPython 3.10 to 3.14 release builds), as CPython's own
`PyList_SET_ITEM` does: the lists are ordinary, complete lists that own
their items exactly once."""

import gc
import sys
import tracemalloc

import torchcore as tc
from torchcore._testing import _direct_list_items


def test_direct_path_is_on_where_the_layout_is_known():
    known = (
        sys.implementation.name == "cpython"
        and (3, 10) <= sys.version_info[:2] <= (3, 14)
        and not hasattr(sys, "gettotalrefcount")
    )
    assert _direct_list_items() == known


def test_values_and_shapes():
    assert tc.arange(7).tolist() == list(range(7))
    assert tc.arange(12, dtype=tc.float64).reshape(3, 4).tolist() == [
        [float(4 * i + j) for j in range(4)] for i in range(3)
    ]
    assert tc.arange(6, dtype=tc.float32).reshape(6, 1).tolist() == [[float(i)] for i in range(6)]
    assert tc.tensor([True, False, True]).tolist() == [True, False, True]
    z = tc.tensor([1 + 2j, -3.5j], dtype=tc.complex64).tolist()
    assert z == [1 + 2j, -3.5j] and all(type(v) is complex for v in z)
    assert tc.zeros(2, 0).tolist() == [[], []]
    assert tc.tensor(5).tolist() == 5


def test_the_lists_behave_as_lists():
    rows = tc.arange(20, dtype=tc.int64).reshape(4, 5).tolist()
    for i, row in enumerate(rows):
        assert len(row) == 5 and row[-1] == 5 * i + 4 and row[1:3] == [5 * i + 1, 5 * i + 2]
        row.append(-1)
        row.insert(0, -2)
        row.sort()
        assert row[:2] == [-2, -1] and len(row) == 7
        del row[2]
        assert len(row) == 6


def test_items_are_owned_once():
    # A leaked (or missing) item reference would show as memory that grows
    # (or as a crash when the lists die).
    t = tc.arange(1000, dtype=tc.float64)
    c = tc.zeros(300, dtype=tc.complex128)
    t.tolist(), c.tolist()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(50):
            t.tolist()
            c.tolist()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 200_000, grown
    kept = t.tolist()[500:510]
    control = [float(i) + 500.0 for i in range(10)]  # floats only a list holds
    assert [sys.getrefcount(v) for v in kept] == [sys.getrefcount(v) for v in control]
