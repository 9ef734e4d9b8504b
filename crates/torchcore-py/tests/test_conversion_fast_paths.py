"""`tolist()`, `item()` and `tensor(list)` through their typed fast paths
give exactly torch's values and types, for every dtype and layout."""

import math

import pytest

import torchcore as tc

torch = pytest.importorskip(
    "torch", reason="torch is not importable: the side-by-side comparisons with torch are skipped"
)

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


def same(a, b):
    """Equal values of the same Python types, nested lists alike."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


def pair(vals, dtype, shape):
    a = tc.tensor(vals, dtype=getattr(tc, dtype)).reshape(*shape)
    b = torch.tensor(vals, dtype=getattr(torch, dtype)).reshape(*shape)
    return a, b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(24,), (2, 3, 4), (4, 6), (1, 24, 1)])
def test_tolist_matches_torch(dtype, shape):
    a, b = pair([i % 5 for i in range(24)], dtype, shape)
    same(a.tolist(), b.tolist())
    # Non-contiguous: the strided walk.
    if len(shape) > 1:
        same(a.transpose(0, -1).tolist(), b.transpose(0, -1).tolist())
    same(a[..., ::2].tolist(), b[..., ::2].tolist())


@pytest.mark.parametrize("dtype", DTYPES)
def test_item_matches_torch(dtype):
    a, b = pair([3], dtype, (1, 1))
    same(a.item(), b.item())
    same(a[0, 0].item(), b[0, 0].item())
    same(a.reshape(()).tolist(), b.reshape(()).tolist())


def test_tolist_of_empty_and_zero_dims():
    for shape in [(0,), (2, 0), (0, 3), (2, 0, 3)]:
        same(tc.zeros(*shape).tolist(), torch.zeros(*shape).tolist())


def test_unsigned_and_extreme_values():
    np = pytest.importorskip("numpy")
    big = np.array([2**64 - 1, 0, 2**63], dtype=np.uint64)
    same(tc.from_numpy(big).tolist(), torch.from_numpy(big).tolist())
    same(tc.from_numpy(big)[0].item(), torch.from_numpy(big)[0].item())
    ext = [-(2**63), 2**63 - 1]
    same(tc.tensor(ext).tolist(), torch.tensor(ext).tolist())
    f = [float("inf"), -0.0, float("nan"), 1e-310]
    same(tc.tensor(f, dtype=tc.float64).tolist(), torch.tensor(f, dtype=torch.float64).tolist())


@pytest.mark.parametrize("data", [
    [1.5, 2.25, -3.0],
    [1, 2.5, True],
    [[1.0, 2.0], [3.0, 4.0]],
    [1, 2, 3],
    [True, False],
    [1, True],
    [2**62, 1.0],
    [1e40, 1.0],            # overflows float32: inf, as torch
    (1.0, 2.0),
    [[1, 2], (3, 4)],
    [0.1, 1 / 3],
])
def test_tensor_from_list_matches_torch(data):
    a, b = tc.tensor(data), torch.tensor(data)
    assert str(a.dtype) == str(b.dtype)
    same(a.tolist(), b.tolist())


def test_tensor_from_list_refusals_match_torch():
    for data in ([[1.0, 2.0], [3.0]], [2**64, 1], [[1, 2], [3]]):
        with pytest.raises(Exception) as ours:
            tc.tensor(data)
        with pytest.raises(Exception) as theirs:
            torch.tensor(data)
        assert type(ours.value) is type(theirs.value), data
        assert str(ours.value) == str(theirs.value), data


RAGGED = [
    ([1.0, [2.0]], None), ([1, [2]], None), ([True, [False]], None), ([1, (2,)], None),
    ([1.0, [2.0]], "int64"), ([1, [2]], "float64"), ([1, [2]], "bool"), ([1, [2]], "uint8"),
    ([1, [2]], "complex64"), ([1j, [2]], None), ([1, []], None),
    ([[1], 2], None), ([[1], 2], "float32"), ([[2.0], 1.0], None), ([[[1]], [2]], None),
    ([[1, 2], 3], None), ([[1], [2, 3]], None), ([[1, 2], [3]], None), ([[1], []], None),
    ([[1, 2], "ab"], None), ([1, "ab"], None), ([[], ["a"]], None),
    ([[], [1]], None), ([[], [1.5]], None), ([[], [1, 2]], None), ([[], [[1]]], None),
    ([[], 3], None), ([[[]], [[1, 2]]], None), ([[], [1j]], None), ([[], [True]], None),
]


@pytest.mark.parametrize("data,dtype", RAGGED)
def test_ragged_data_is_refused_or_empty_as_in_torch(data, dtype):
    """Data that is not rectangular: torch infers the dtype from every
    element first, raises the dtype's own message where a sequence stands
    for a number (or `not a sequence` for the reverse), and builds an empty
    tensor without looking when the first path has a zero size."""
    kw = {} if dtype is None else {"dtype": getattr(tc, dtype)}
    tkw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    try:
        theirs = torch.tensor(data, **tkw)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        with pytest.raises(type(e)) as ours:
            tc.tensor(data, **kw)
        assert str(ours.value) == str(e), data
        return
    ours = tc.tensor(data, **kw)
    assert (tuple(ours.shape), str(ours.dtype)) == (tuple(theirs.shape), str(theirs.dtype)), data
