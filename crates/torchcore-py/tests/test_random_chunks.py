"""Random factories on big tensors: real floating dtypes are drawn in Rust
from one seed taken from the module's generator, the other dtypes chunk by
chunk in Python (bounded memory); both reproducible under manual_seed."""
import math

import pytest

import torchcore as tc
from torchcore import random as tcr


def test_python_path_chunks_do_not_change_the_values(monkeypatch):
    tc.manual_seed(11)
    whole = tc.randn(300, dtype=tc.complex64).tolist()
    monkeypatch.setattr(tcr, "_CHUNK", 7)  # many chunks, the last one short
    tc.manual_seed(11)
    assert tc.randn(300, dtype=tc.complex64).tolist() == whole
    vals = tc.rand(130, dtype=tc.complex128).tolist()
    assert len(set(vals)) == 130  # no chunk left at empty's contents


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_bulk_path_is_reproducible_and_in_range(dtype):
    dt = getattr(tc, dtype)
    tc.manual_seed(5)
    a = tc.rand(4, 5000, dtype=dt)
    tc.manual_seed(5)
    b = tc.rand(4, 5000, dtype=dt)
    assert a.dtype is dt and tuple(a.shape) == (4, 5000) and a.is_contiguous()
    va = [v for row in a.tolist() for v in row]
    assert va == [v for row in b.tolist() for v in row]
    # [0, 1) in the dtype itself: a draw that rounds up to 1 is redrawn.
    assert 0.0 <= min(va) and max(va) < 1.0
    assert len(set(va)) > 50
    assert a._version == 0  # a factory's writes are not in-place ops


def test_bulk_normal_moments_and_following_draws():
    tc.manual_seed(123)
    x = tc.randn(200_000, dtype=tc.float64).tolist()
    mean = sum(x) / len(x)
    var = sum((v - mean) ** 2 for v in x) / len(x)
    assert abs(mean) < 0.02 and abs(var - 1.0) < 0.02  # about 9 and 3 sigma
    assert all(math.isfinite(v) for v in x)
    # Each bulk tensor takes its own seed: two calls differ.
    assert tc.randn(10).tolist() != tc.randn(10).tolist()


def test_uniform_fill_of_an_existing_tensor():
    t = tc.empty(3, 1000, dtype=tc.float16).uniform_(2, 3)
    vals = [v for row in t.tolist() for v in row]
    assert 2.0 <= min(vals) and max(vals) < 3.0 and t._version == 1
    narrow = tc.empty(100).uniform_(0.5, 0.5)
    assert set(narrow.tolist()) == {0.5}
