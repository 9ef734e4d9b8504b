"""`torchcore.tensor(data)` of data beyond lists and tuples, as PyTorch's
`infer_scalar_type`/`recursive_store`: any sequence (`range`,
`bytearray`, `array.array`, NumPy arrays, classes with `__len__` and
`__getitem__`), NumPy scalars by their dtype, and PyTorch's errors for
what it cannot infer or store; compared with torch where installed."""
import array
import decimal
import fractions
import warnings

import pytest

import torchcore as tc


class Seq:
    def __len__(self):
        return 2

    def __getitem__(self, i):
        if i >= 2:
            raise IndexError
        return i


def test_sequences_and_errors():
    assert tc.tensor(range(3)).tolist() == [0, 1, 2]
    assert tc.tensor([Seq(), Seq()]).tolist() == [[0, 1], [0, 1]]
    assert tc.tensor(bytearray(b"ab")).dtype == tc.int64
    assert tc.tensor(array.array("d", [1.5])).dtype == tc.float32
    with pytest.raises(RuntimeError, match="^Could not infer dtype of NoneType$"):
        tc.tensor([1, None])
    with pytest.raises(TypeError, match="^must be real number, not NoneType$"):
        tc.tensor([1, None], dtype=tc.float32)
    with pytest.raises(TypeError, match="^'dict' object cannot be interpreted as an integer$"):
        tc.tensor({1: 2}, dtype=tc.int64)
    with pytest.raises(RuntimeError, match="^Could not infer dtype of decimal.Decimal$"):
        tc.tensor(decimal.Decimal(1))
    assert tc.tensor(decimal.Decimal(1), dtype=tc.float64).item() == 1.0


DATA = ["None", "object()", "[None]", "[1, None]", "{1: 2}", "{1, 2}", "range(3)",
        "[range(2), range(2)]", "iter([1])", "b'ab'", "bytearray(b'ab')", "'ab'", "['a']",
        "[[1], 'a']", "decimal.Decimal(1)", "fractions.Fraction(1, 2)", "Seq()",
        "[Seq(), Seq()]", "array.array('d', [1.5])", "[array.array('d', [1.5])]",
        "memoryview(b'ab')", "[1, 'a']", "[[1, 2], None]", "(x for x in [1])", "[[1, 2], 'ab']",
        "[[1, 2], 'abc']", "[b'ab']", "[M.tensor(1.0), M.tensor(0.0)]", "[M.tensor(2), True]"]
NP_DATA = ["np.array([1, 2])", "np.arange(3)[::-1]", "np.zeros(0)", "[np.float64(1)]",
           "[np.float64(1), 2.0]", "[np.int32(1), 2]", "[np.array(1.0)]", "np.array(2.0)",
           "[np.float16(1)]", "np.arange(2, dtype='>f8')", "[np.arange(2, dtype=np.float32)]",
           "[[1], np.arange(1, dtype=np.float32)]", "[True, np.bool_(False)]",
           "[np.arange(2.), np.arange(2.)]", "np.array([1, 'a'], dtype=object)"]
DTYPES = ["", ", dtype=M.float32", ", dtype=M.int64", ", dtype=M.bool"]


def outcome(m, expr):
    env = {"M": m, "array": array, "decimal": decimal, "fractions": fractions, "Seq": Seq}
    try:
        import numpy as np
        env["np"] = np
    except ImportError:
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = eval(f"M.tensor({expr})", env)
        except Exception as e:  # noqa: BLE001 - compared as class and text
            return type(e).__name__, str(e)
    return str(r.dtype), tuple(r.shape), repr(r.tolist())


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("data", DATA)
def test_same_as_torch(data, dt):
    torch = pytest.importorskip("torch")
    assert outcome(tc, data + dt) == outcome(torch, data + dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("data", NP_DATA)
def test_numpy_same_as_torch(data, dt):
    pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    assert outcome(tc, data + dt) == outcome(torch, data + dt)
