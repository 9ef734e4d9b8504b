"""NumPy interchange without copies: `from_numpy`, `.numpy()` and
`np.asarray(t)` share memory both ways, keep the other side alive, and keep
PyTorch's refusals."""

import gc
import warnings

import numpy as np
import pytest

import torchcore as tc

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

DTYPES = ["float64", "float32", "float16", "complex64", "complex128", "int64", "int32",
          "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_from_numpy_shares_memory_both_ways(dtype):
    a = np.zeros((3, 4), dtype=dtype)
    t = tc.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data
    assert t.shape == (3, 4) and t.stride() == (4, 1)
    one = np.ones((), dtype=dtype)
    a[1, 2] = one
    assert t[1, 2].item() == one.item()
    t[2, 3] = 1
    assert a[2, 3] == one


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_shares_memory_both_ways(dtype):
    t = tc.zeros(2, 5, dtype=getattr(tc, "bool" if dtype == "bool" else dtype))
    for arr in (t.numpy(), np.asarray(t)):
        assert arr.dtype == np.dtype(dtype)
        assert arr.ctypes.data == t.data_ptr()
        assert arr.flags.writeable and arr.flags.c_contiguous
        arr[1, 4] = 1
        assert t[1, 4].item() == 1
        t[0, 0] = 1
        assert arr[0, 0] == 1
        t.zero_()


def test_numpy_of_views_keeps_strides_and_offset():
    t = tc.arange(24, dtype=tc.float32).reshape(4, 6)
    v = t[1:, ::2].t()
    a = v.numpy()
    assert a.shape == (3, 3)
    assert a.strides == tuple(s * 4 for s in v.stride())
    assert a.tolist() == v.tolist()
    a[0, 0] = -1
    assert t[1, 0].item() == -1


def test_from_numpy_of_views_keeps_strides():
    base = np.arange(24, dtype=np.int64).reshape(4, 6)
    a = base[1:, ::2].T
    t = tc.from_numpy(a)
    assert t.stride() == tuple(s // 8 for s in a.strides)
    assert t.tolist() == a.tolist()
    if torch is not None:
        assert t.stride() == torch.from_numpy(a).stride()


def test_array_outlives_tensor():
    t = tc.arange(5, dtype=tc.float64)
    a = t.numpy()
    del t
    gc.collect()
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    a[0] = 9  # still valid memory
    assert a[0] == 9


def test_tensor_outlives_array():
    a = np.arange(5, dtype=np.float32)
    t = tc.from_numpy(a)
    del a
    gc.collect()
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    t[4] = 7
    assert t[4].item() == 7


def test_export_pins_the_storage():
    t = tc.zeros(4)
    a = t.numpy()
    with pytest.raises(RuntimeError):
        t.resize_(1000)
    del a
    gc.collect()
    t.resize_(1000)
    assert t.shape == (1000,)


def test_array_base_owns_the_tensor_storage():
    t = tc.ones(3)
    a = t.numpy()
    assert a.base is not None
    b = a[1:]
    del a, t
    gc.collect()
    assert b.tolist() == [1.0, 1.0]


def test_empty_and_scalar():
    assert tc.zeros(0).numpy().shape == (0,)
    assert tc.tensor(2.5).numpy().shape == ()
    assert float(tc.tensor(2.5).numpy()) == 2.5
    assert tc.from_numpy(np.zeros((0, 3))).shape == (0, 3)
    assert tc.from_numpy(np.full((), 1.5)).item() == 1.5


def test_read_only_array_gives_read_only_tensor():
    a = np.zeros(3)
    a.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = tc.from_numpy(a)
    with pytest.raises(RuntimeError):
        t[0] = 1
    assert a[0] == 0


def test_asarray_dtype_and_copy():
    t = tc.arange(3, dtype=tc.int32)
    a = np.asarray(t, dtype=np.float64)
    assert a.dtype == np.float64 and a.tolist() == [0.0, 1.0, 2.0]
    c = t.__array__(copy=True)
    c[0] = 5
    assert t[0].item() == 0


@pytest.mark.skipif(torch is None, reason="torch is not importable")
@pytest.mark.parametrize("make", [
    "np.arange(4)[::-1]",
    "np.arange(4, dtype='>i4')",
    "np.array([1, 'a'], dtype=object)",
    "np.lib.stride_tricks.as_strided(np.zeros(8, dtype=np.int32), shape=(3,), strides=(6,))",
    "3",
])
def test_from_numpy_refusals_match_torch(make):
    arr = eval(make)
    with pytest.raises(Exception) as ours:
        tc.from_numpy(arr)
    with pytest.raises(Exception) as theirs:
        torch.from_numpy(arr)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.skipif(torch is None, reason="torch is not importable")
@pytest.mark.parametrize("make", [
    "m.ones(2, requires_grad=True)",
    "m.ones(2, dtype=m.complex64).conj()",
    "m.ones(2, dtype=m.bfloat16)",
    "m.ones(2, device='meta')",
])
def test_numpy_refusals_match_torch(make):
    with pytest.raises(Exception) as ours:
        eval(make, {"m": tc}).numpy()
    with pytest.raises(Exception) as theirs:
        eval(make, {"m": torch}).numpy()
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)
