"""`torchcore.asarray`: aliasing of tensors, NumPy arrays, DLPack
exporters and buffers, copies of scalars and sequences, `copy=` and
`requires_grad=` as torch 2.15; compared with torch where installed."""
import array
import ctypes
import gc
import warnings

import pytest

import torchcore as tc

try:
    import numpy as np
except ImportError:  # pragma: no cover - CI without numpy
    np = None


def test_tensor_alias_and_copies():
    x = tc.arange(4.0)
    assert tc.asarray(x) is x
    assert tc.asarray(x, copy=False) is x
    assert tc.asarray(x, dtype=tc.float32, device="cpu") is x
    c = tc.asarray(x, copy=True)
    assert c is not x and c.data_ptr() != x.data_ptr() and c.tolist() == x.tolist()
    d = tc.asarray(x, dtype=tc.float64)
    assert d.dtype == tc.float64 and d.tolist() == [0.0, 1.0, 2.0, 3.0]
    m = tc.asarray(x, device="meta")
    assert m.device.type == "meta" and m.shape == x.shape
    with pytest.raises(ValueError, match=r"can't alias tensor with dtype 'Float' into dtype 'Double'\."):
        tc.asarray(x, dtype=tc.float64, copy=False)
    with pytest.raises(ValueError, match=r"can't alias tensor from device 'cpu' to 'meta'\."):
        tc.asarray(x, device="meta", copy=False)


def test_requires_grad_rules():
    x = tc.ones(2)
    assert tc.asarray(x, requires_grad=True) is x and x.requires_grad  # in place, as torch
    assert tc.asarray(x, requires_grad=False) is x and not x.requires_grad
    v = tc.ones(2, requires_grad=True)[1:]  # not a leaf
    assert tc.asarray(v, requires_grad=True) is v
    d = tc.asarray(v, requires_grad=False)
    assert d is not v and not d.requires_grad and d.is_leaf and d.data_ptr() == v.data_ptr()
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        tc.asarray(tc.arange(3), requires_grad=True)
    assert tc.asarray([1.0, 2.0], requires_grad=True).requires_grad


def test_unset_requires_grad_keeps_the_flag_and_warns_once():
    import torchcore._buffers as b
    b._warned_requires_grad = False
    g = tc.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert tc.asarray(g) is g and g.requires_grad
        tc.asarray(g)
    assert [str(x.message)[:60] for x in w] == [
        "torch.asarray: unspecified requires_grad now defaults to obj"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tc.asarray(tc.ones(2))  # no flag, no warning


def test_buffers_alias_with_the_format_dtype():
    b = bytearray(b"\x01\x02")
    t = tc.asarray(b)
    assert t.dtype == tc.uint8 and t.tolist() == [1, 2]
    b[0] = 9
    assert t[0].item() == 9
    with pytest.raises(BufferError):
        b.append(0)
    del t
    gc.collect()
    c = tc.asarray(b, copy=True)
    b[0] = 1
    assert c.tolist()[0] == 9
    a = array.array("d", [1.5, 2.5])
    assert tc.asarray(a).dtype == tc.float64
    assert tc.asarray(a, dtype=tc.int8).shape == (16,)  # a reinterpretation, as torch
    ro = tc.asarray(b"ab")
    with pytest.raises(RuntimeError, match="read-only"):
        ro[0] = 0


def test_sequences_and_scalars():
    assert tc.asarray([1, 2]).dtype == tc.int64
    assert tc.asarray(3.5).shape == ()
    with pytest.raises(ValueError, match="can't alias arbitrary sequence into a tensor."):
        tc.asarray([1, 2], copy=False)


@pytest.mark.skipif(np is None, reason="needs numpy")
def test_numpy_alias():
    a = np.arange(6.0).reshape(2, 3)
    t = tc.asarray(a)
    assert t.data_ptr() == a.ctypes.data
    t[0, 0] = 7
    assert a[0, 0] == 7
    assert tc.asarray(a, copy=True).data_ptr() != a.ctypes.data
    with pytest.raises(RuntimeError, match="can't alias NumPy scalars"):
        tc.asarray(np.float64(1), copy=False)


def _describe(m, r, src):
    if not isinstance(r, m.Tensor):
        return repr(r)
    out = [str(r.dtype), tuple(r.shape), r.stride(), str(r.device), r.requires_grad, r.is_leaf,
           r is src]
    if r.device.type != "meta":
        out.append(r.tolist())
    return tuple(out)


# (source expression, asarray keyword arguments): X is the module, S the
# source object (made fresh for each module).
CASES = [
    ("X.arange(4.0)", ""),
    ("X.arange(4.0)", "copy=True"),
    ("X.arange(4.0)", "copy=False"),
    ("X.arange(4.0)", "dtype=X.float32"),
    ("X.arange(4.0)", "dtype=X.float64"),
    ("X.arange(4.0)", "dtype=X.float64, copy=False"),
    ("X.arange(4.0)", "dtype=X.float64, copy=True"),
    ("X.arange(4.0)", "device='meta'"),
    ("X.arange(4.0)", "device='meta', copy=False"),
    ("X.arange(4.0)", "device='cpu'"),
    ("X.arange(4.0)", "device=X.device('cpu'), copy=False"),
    ("X.arange(4.0)[1:]", ""),
    ("X.arange(4.0)", "requires_grad=True"),
    ("X.arange(4.0)", "requires_grad=False"),
    ("X.arange(4)", "requires_grad=True"),
    ("X.ones(2, requires_grad=True)", "requires_grad=False"),
    ("X.ones(2, requires_grad=True)", "requires_grad=True"),
    ("X.ones(2, requires_grad=True)[0:]", "requires_grad=True"),
    ("X.ones(2, requires_grad=True)[0:]", "requires_grad=False"),
    ("X.ones(2, requires_grad=True)", "copy=True, requires_grad=False"),
    ("X.ones(2)", "copy=True, requires_grad=True"),
    ("X.ones(3)[1:]", "requires_grad=True"),
    ("[1, 2]", ""),
    ("[1.0, 2]", ""),
    ("[1, 2]", "dtype=X.float64"),
    ("[1, 2]", "copy=False"),
    ("[1, 2]", "copy=True"),
    ("[1.0, 2.0]", "requires_grad=True"),
    ("[1, 2]", "requires_grad=True"),
    ("[1.0, 2.0]", "requires_grad=None"),
    ("3", ""),
    ("3.5", ""),
    ("1 + 2j", ""),
    ("True", ""),
    ("3", "copy=False"),
    ("(1, 2)", ""),
    ("[[1, 2], [3, 4]]", ""),
    ("[[1, 2], [3]]", ""),
    ("[X.tensor(1.0), X.tensor(2.0)]", ""),
    ("[]", ""),
    ("[2**63]", ""),
    ("[2**63]", "dtype=X.float64"),
    ("[1, 2j]", ""),
    ("'ab'", ""),
    ("None", ""),
    ("[1, None]", "dtype=X.float32"),
    ("range(3)", ""),
    ("bytearray(b'ab')", "dtype=X.float32, copy=True"),
    ("[1, 2]", "device='cpu'"),
    ("[1, 2]", "device='meta'"),
    ("X.UntypedStorage(16).fill_(1)", ""),
    ("X.UntypedStorage(16).fill_(1)", "dtype=X.float32"),
    ("X.UntypedStorage(16).fill_(1)", "copy=True"),
    ("X.UntypedStorage(16).fill_(1)", "copy=False"),
    ("bytearray(8)", ""),
    ("bytearray(b'\\x01\\x02')", "dtype=X.uint8"),
    ("bytearray(3)", ""),
    ("bytearray(b'\\x01\\x02')", "copy=True"),
    ("bytearray(b'\\x01\\x02')", "copy=False"),
    ("bytearray(4)", "dtype=X.int16, copy=False"),
    ("bytearray()", ""),
    ("bytearray(8)", "requires_grad=True"),
    ("array.array('b', [1])", ""),
    ("array.array('B', [1])", ""),
    ("array.array('h', [1])", ""),
    ("array.array('H', [1])", ""),
    ("array.array('i', [1])", ""),
    ("array.array('I', [1])", ""),
    ("array.array('l', [1])", ""),
    ("array.array('L', [1])", ""),
    ("array.array('q', [1])", ""),
    ("array.array('Q', [1])", ""),
    ("array.array('f', [1.5])", ""),
    ("array.array('d', [1.5])", ""),
    ("array.array('d', [1.5, 2.5])", "dtype=X.int8"),
    ("array.array('d', [1.5, 2.5])", "dtype=X.float32, copy=False"),
    ("array.array('d', [1.5])", "requires_grad=True"),
    ("memoryview(bytearray(b'\\x01\\x00')).cast('?')", ""),
    ("memoryview(bytearray(6)).cast('B', (2, 3))", ""),
    ("memoryview(bytearray(4)).cast('c')", ""),
    ("memoryview(bytearray(8)).cast('n')", ""),
    ("memoryview(bytearray(8)).cast('N')", ""),
    ("memoryview(bytearray(8)).cast('P')", ""),
    ("memoryview(bytearray(4))[::2]", "dtype=X.uint8"),
    ("(ctypes.c_double * 2)(1.5, 2.5)", ""),
    ("(ctypes.c_long * 2)(1, 2)", ""),
    ("(ctypes.c_bool * 2)(True, False)", ""),
    ("(ctypes.c_char * 2)(b'a', b'b')", ""),
    ("(ctypes.c_longdouble * 2)(1, 2)", ""),
    ("(ctypes.c_int16.__ctype_be__ * 2)(1, 2)", ""),
    ("(ctypes.c_int16.__ctype_be__ * 2)(1, 2)", "dtype=X.int16"),
]


def outcome(m, src, kwargs):
    env = {"X": m, "array": array, "ctypes": ctypes}
    try:
        s = eval(src, env)
    except Exception as e:  # noqa: BLE001
        return "source", type(e).__name__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = eval(f"X.asarray(S{', ' if kwargs else ''}{kwargs})", {**env, "S": s})
        except Exception as e:  # noqa: BLE001 - compared as class and text
            return type(e).__name__, str(e)
    return _describe(m, r, s)


@pytest.mark.parametrize("src,kwargs", CASES)
def test_same_as_torch(src, kwargs):
    torch = pytest.importorskip("torch")
    assert outcome(tc, src, kwargs) == outcome(torch, src, kwargs)


NP_CASES = [
    ("np.arange(6.0).reshape(2, 3)", ""),
    ("np.arange(6.0).reshape(2, 3)", "copy=True"),
    ("np.arange(6.0).reshape(2, 3).T", ""),
    ("np.arange(6.0).reshape(2, 3)[:, ::-1]", ""),
    ("np.arange(6.0).reshape(2, 3)", "dtype=X.float32"),
    ("np.arange(6.0).reshape(2, 3)", "dtype=X.float32, copy=False"),
    ("np.arange(6.0).reshape(2, 3)", "dtype=X.float64, copy=False"),
    ("np.arange(2, dtype='>f8')", ""),
    ("np.array([1, 'a'], dtype=object)", ""),
    ("np.arange(2, dtype=np.float16)", ""),
    ("np.array(3.0)", ""),
    ("np.array(3.0)", "copy=False"),
    ("np.zeros((2, 0))", ""),
    ("np.float64(3.0)", ""),
    ("np.int32(3)", ""),
    ("np.float64(3.0)", "copy=False"),
    ("np.bool_(True)", ""),
    ("np.arange(2.0)", "requires_grad=True"),
    ("[np.float32(1), np.float32(2)]", ""),
    ("np.zeros(0)", ""),
    ("memoryview(np.zeros(2, 'f2'))", ""),
    ("memoryview(np.zeros(2, 'c8'))", ""),
    ("memoryview(np.zeros(2, 'c16'))", ""),
    ("memoryview(np.zeros(2, '>f8'))", ""),
    ("memoryview(np.zeros(2, '>f8'))", "dtype=X.float64"),
    ("memoryview(np.zeros(2, '>f8'))", "copy=True"),
    ("memoryview(np.zeros(2, 'g'))", ""),
    ("memoryview(np.zeros((), 'f4'))", ""),
    ("memoryview(np.zeros((2, 2), 'f4').T)", ""),
]


@pytest.mark.skipif(np is None, reason="needs numpy")
@pytest.mark.parametrize("src,kwargs", NP_CASES)
def test_numpy_same_as_torch(src, kwargs):
    torch = pytest.importorskip("torch")
    got = []
    for m in (tc, torch):
        env = {"X": m, "np": np}
        s = eval(src, env)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                r = eval(f"X.asarray(S{', ' if kwargs else ''}{kwargs})", {**env, "S": s})
                got.append(_describe(m, r, s) + (
                    isinstance(s, np.ndarray) and r.data_ptr() == s.ctypes.data,))
            except Exception as e:  # noqa: BLE001
                got.append((type(e).__name__, str(e)))
    assert got[0] == got[1]


ARG_CASES = [
    "[1], X.int8",
    "",
    "[1], foo=1",
    "[1], dtype='x'",
    "[1], device=1.5",
    "[1], copy=1",
    "[1.0], requires_grad=1",
    "[1], copy=None",
    "[1], dtype=None, device=None",
    "obj=[1]",
    "[1], obj=[1]",
]


@pytest.mark.parametrize("args", ARG_CASES)
def test_argument_errors_same_as_torch(args):
    torch = pytest.importorskip("torch")
    got = []
    for m in (tc, torch):
        try:
            r = eval(f"X.asarray({args})", {"X": m})
            got.append(_describe(m, r, None))
        except Exception as e:  # noqa: BLE001
            got.append((type(e).__name__, str(e)))
    assert got[0] == got[1]


def test_dlpack_exporter_is_aliased():
    torch = pytest.importorskip("torch")
    x = torch.arange(3.0)
    t = tc.asarray(x)
    assert t.data_ptr() == x.data_ptr() and t.tolist() == [0.0, 1.0, 2.0]
    x[0] = 5
    assert t[0].item() == 5
