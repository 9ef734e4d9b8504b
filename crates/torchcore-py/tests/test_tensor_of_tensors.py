"""`tensor(data)` where the data holds tensors: PyTorch infers the dtype
from the tensor elements' own dtypes (promoted with the Python values'),
stores each as one scalar whatever its dims, and refuses tensor elements
with more than one element (`ValueError` into a floating tensor,
`TypeError` into an integer or bool one). Checked against torch."""

import warnings

import pytest

import torchcore as tc

try:
    import torch
except ImportError:  # pragma: no cover - the differential tests skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")

CASES = [
    "m.tensor([m.ones(2), m.zeros(2)])",
    "m.tensor([m.ones(2, dtype=m.int32), m.ones(2, dtype=m.int32)])",
    "m.tensor([m.ones(2, dtype=m.bool)])",
    "m.tensor([m.ones(2, dtype=m.int32), [1, 2]])",
    "m.tensor([m.ones(2), 1], dtype=m.int64)",
    "m.tensor([m.tensor(1, dtype=m.float64), 2])",
    "m.tensor([2, m.tensor(1.5, dtype=m.float64)])",
    "m.tensor([m.tensor(1, dtype=m.int32), 2])",
    "m.tensor([m.tensor(1, dtype=m.int32)])",
    "m.tensor([m.tensor(1, dtype=m.float16), 2.5])",
    "m.tensor([m.tensor(1, dtype=m.int8), m.tensor(1, dtype=m.uint8)])",
    "m.tensor([m.tensor(1, dtype=m.int16), 2.5])",
    "m.tensor([m.tensor(1, dtype=m.bfloat16), m.tensor(1, dtype=m.float16)])",
    "m.tensor([[m.tensor(1, dtype=m.float64)], [3]])",
    "m.tensor([m.tensor(1, dtype=m.float64), 2], dtype=m.float32)",
    "m.tensor([m.tensor(True), m.tensor(2, dtype=m.uint8)])",
    "m.tensor([m.tensor(True), True])",
    "m.tensor([m.ones(1, dtype=m.float64), 2])",
    "m.tensor([m.ones(1, 1), 2])",
    "m.tensor([m.tensor(7, dtype=m.int64), 2.5])",
]


def run(m, expr):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = eval(expr)
        return ("ok", str(v.dtype).split(".")[-1], v.tolist())
    except Exception as e:  # noqa: BLE001
        return ("err", type(e).__name__, str(e))


@needs_torch
@pytest.mark.parametrize("expr", CASES)
def test_matches_torch(expr):
    assert run(tc, expr) == run(torch, expr)


def test_without_torch():
    t = tc.tensor([tc.tensor(1, dtype=tc.float64), 2])
    assert t.dtype == tc.float64 and t.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="only one element tensors"):
        tc.tensor([tc.ones(2), tc.zeros(2)])
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        tc.tensor([tc.ones(2, dtype=tc.int32)])
