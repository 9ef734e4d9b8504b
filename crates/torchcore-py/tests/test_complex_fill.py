"""Complex fill values in `full`, `full_like`, `new_full` and `fill_`
(c10-core's `Scalar::Complex`): complex64 by default, c10's overflow
check for real dtypes; compared with torch where installed."""
import warnings

import pytest

import torchcore as tc


def test_full_infers_complex64():
    t = tc.full((2,), 1 + 2j)
    assert t.dtype == tc.complex64 and t.tolist() == [1 + 2j, 1 + 2j]
    assert tc.full((), 1 + 2j).item() == 1 + 2j


def test_real_dtype_refuses_an_imaginary_part():
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        tc.full((2,), 1 + 2j, dtype=tc.float32)
    assert tc.full((2,), 1 + 0j, dtype=tc.float32).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="to type float without overflow"):
        tc.zeros(2).fill_(2j)
    assert tc.full((2,), 1j, dtype=tc.bool).tolist() == [True, True]


def test_fill_through_conjugate_view():
    z = tc.zeros(2, dtype=tc.complex64)
    z.conj().fill_(1 + 2j)
    assert z.tolist() == [1 - 2j, 1 - 2j]


def test_complex_tensor_value():
    z = tc.zeros(2, dtype=tc.complex128)
    z.fill_(tc.tensor(1 + 2j))
    assert z.tolist() == [1 + 2j, 1 + 2j]
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        assert tc.zeros(2).fill_(tc.tensor(3 + 2j)).tolist() == [3.0, 3.0]


CASES = [
    "M.full((2,), 1+2j)",
    "M.full((2,), 1+2j, dtype=M.float32)",
    "M.full((2,), 1+0j, dtype=M.float32)",
    "M.full((2,), 1+2j, dtype=M.int64)",
    "M.full((2,), 3+0j, dtype=M.int64)",
    "M.full((2,), 1j, dtype=M.bool)",
    "M.full((2,), 0j, dtype=M.bool)",
    "M.full((2,), -1+0j, dtype=M.uint8)",
    "M.full((2,), 1+2j, dtype=M.complex128)",
    "M.full((2,), 1e5+0j, dtype=M.float16)",
    "M.full((2,), 1e300+1j, dtype=M.complex64)",
    "M.full((2,), complex(float('inf'), 1), dtype=M.complex64)",
    "M.full((2,), complex(float('nan'), 0), dtype=M.int32)",
    "M.full((2,), complex(float('nan'), 0), dtype=M.float32)",
    "M.full((2,), complex(0, float('nan')), dtype=M.float32)",
    "M.full((2,), 1+2j, dtype=M.complex32)",
    "M.full((2,), 1+2j, requires_grad=True)",
    "M.full((), 1+2j)",
    "M.full_like(M.zeros(2), 1+2j)",
    "M.full_like(M.zeros(2, dtype=M.complex64), 1+2j)",
    "M.full_like(M.zeros(2), 1+0j)",
    "M.full_like(M.zeros(2), 1+2j, dtype=M.complex128)",
    "M.zeros(2).new_full((2,), 1+2j)",
    "M.zeros(2, dtype=M.complex64).new_full((2,), 1+2j)",
    "M.zeros(2).new_full((2,), 1+2j, dtype=M.complex64)",
    "M.zeros(2).fill_(1+2j)",
    "M.zeros(2).fill_(1+0j)",
    "M.zeros(2, dtype=M.complex64).fill_(1+2j)",
    "M.zeros(2, dtype=M.complex128).fill_(-1.5-2j)",
    "M.zeros(2, dtype=M.bool).fill_(2j)",
    "M.zeros(2, dtype=M.int32).fill_(2j)",
    "M.zeros(2, dtype=M.int32).fill_(2+0j)",
    "M.zeros(2, dtype=M.complex64).fill_(M.tensor(1+2j))",
    "M.zeros(2).fill_(M.tensor(1+2j))",
    "M.zeros(2, dtype=M.complex64).conj().fill_(1+2j)",
    "M.zeros(2, dtype=M.complex64, device='meta').fill_(1+2j)",
    "M.full((2,), 1+2j, device='meta')",
]


def outcome(m, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = eval(expr, {"M": m, "_set": _set})
        except Exception as e:  # noqa: BLE001 - compared as class and text
            return type(e).__name__, str(e)
    return (str(r.dtype), tuple(r.shape), r.requires_grad, str(r.device),
            None if r.device.type == "meta" else repr(r.tolist()))


@pytest.mark.parametrize("expr", CASES)
def test_same_as_torch(expr):
    torch = pytest.importorskip("torch")
    assert outcome(tc, expr) == outcome(torch, expr)


def test_numpy_complex_scalars_same_as_torch():
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    for v in (np.complex128(1 + 2j), np.complex64(1 + 2j)):
        assert outcome(tc, "M.full((2,), V)".replace("V", repr(v)).replace(
            "np.", "__import__('numpy').")) == outcome(torch, "M.full((2,), V)".replace(
                "V", repr(v)).replace("np.", "__import__('numpy')."))


def _set(x, k, v):
    x[k] = v
    return x


SET_CASES = [
    "S(M.zeros(2, dtype=M.complex64), 0, 1+2j)",
    "S(M.zeros(3, dtype=M.complex128), slice(1, None), 1+2j)",
    "S(M.zeros(2), 0, 1+2j)",
    "S(M.zeros(2), 0, 1+0j)",
    "S(M.zeros(2, dtype=M.int32), 0, 2j)",
    "S(M.zeros(2, dtype=M.bool), 0, 2j)",
    "S(M.zeros(2, dtype=M.complex64), slice(0, 2), M.tensor(1+2j))",
    "S(M.zeros(2), slice(0, 2), M.tensor(3+0j))",
    "S(M.zeros(2, dtype=M.int32), slice(0, 2), M.tensor(3+0j))",
    "M.tensor([M.tensor(1+2j), M.tensor(1+2j)])",
    "M.tensor([M.tensor(1+2j), 1.0])",
    "M.tensor([M.tensor(1+2j), 1j], dtype=M.complex128)",
]


@pytest.mark.parametrize("expr", SET_CASES)
def test_setitem_and_elements_same_as_torch(expr):
    torch = pytest.importorskip("torch")
    assert outcome(tc, expr.replace("S(", "_set(")) == outcome(torch, expr.replace("S(", "_set("))


@pytest.mark.parametrize("conv", ["float", "int", "bool", "complex"])
@pytest.mark.parametrize("v", [1 + 2j, 1 + 0j, 0j, 2.5j])
def test_python_conversions_same_as_torch(conv, v):
    torch = pytest.importorskip("torch")
    got = []
    for m in (tc, torch):
        try:
            got.append(repr(eval(conv)(m.tensor(v))))
        except Exception as e:  # noqa: BLE001
            got.append((type(e).__name__, str(e)))
    assert got[0] == got[1]
