"""`torchcore.frombuffer`: a tensor sharing the memory of a buffer-protocol
object, keeping a buffer export of it alive while its storage lives, with
PyTorch's errors; compared with torch where installed."""
import array
import gc
import mmap
import weakref

import pytest

import torchcore as tc


def test_shares_memory_both_ways():
    b = bytearray(b"\x01\x02\x03\x04\x05\x06\x07\x08\x09")
    t = tc.frombuffer(b, dtype=tc.int8)
    assert t.tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    b[0] = 100
    assert t[0].item() == 100
    t[1] = 50
    assert b[1] == 50
    assert (t.stride(), t.storage_offset(), t.is_contiguous()) == ((1,), 0, True)
    s = t.untyped_storage()
    assert s.nbytes() == 9 and not s.resizable()


def test_offset_and_count():
    b = bytearray(range(1, 10))
    t = tc.frombuffer(b, dtype=tc.int16, count=2, offset=1)
    assert t.tolist() == [0x0302, 0x0504]
    assert t.untyped_storage().nbytes() == 4
    t[0] = 0
    assert b[1:3] == b"\x00\x00" and b[0] == 1
    t2 = tc.frombuffer(b, dtype=tc.int8, offset=3)
    assert t2.storage_offset() == 0 and t2.untyped_storage().data_ptr() == t2.data_ptr()
    assert t2.data_ptr() - tc.frombuffer(b, dtype=tc.int8).data_ptr() == 3


def test_export_held_while_the_storage_lives():
    b = bytearray(8)
    t = tc.frombuffer(b, dtype=tc.float32)
    with pytest.raises(BufferError):
        b.append(1)  # would reallocate under the tensor
    v = t[1:]
    del t
    gc.collect()
    with pytest.raises(BufferError):
        b.append(1)  # the view keeps the storage
    del v
    gc.collect()
    b.append(1)
    assert len(b) == 9


def test_releasing_the_callers_memoryview_keeps_the_export():
    b = bytearray(8)
    mv = memoryview(b)
    t = tc.frombuffer(mv, dtype=tc.int32)
    mv.release()
    with pytest.raises(BufferError):
        b.append(1)
    t[0] = 7
    assert b[:4] == (7).to_bytes(4, "little")
    m = mmap.mmap(-1, 8)
    u = tc.frombuffer(m, dtype=tc.uint8)
    with pytest.raises(BufferError):
        m.resize(16)
    del t, u
    gc.collect()
    b.append(1)
    m.close()


def test_object_kept_alive():
    a = array.array("d", [1.5, 2.5])
    r = weakref.ref(a)
    t = tc.frombuffer(a, dtype=tc.float64)
    del a
    gc.collect()
    assert r() is not None
    assert t.tolist() == [1.5, 2.5]
    del t
    gc.collect()
    assert r() is None


def test_mmap_cannot_close_under_the_tensor():
    m = mmap.mmap(-1, 16)
    t = tc.frombuffer(m, dtype=tc.int32)
    t[3] = 7
    assert m[12:16] == (7).to_bytes(4, "little")
    with pytest.raises(BufferError):
        m.close()
    del t
    gc.collect()
    m.close()


def test_read_only_buffer_gives_read_only_tensor():
    data = b"abcd"
    t = tc.frombuffer(data, dtype=tc.uint8)
    assert t.tolist() == [97, 98, 99, 100]
    with pytest.raises(RuntimeError, match="read-only"):
        t[0] = 1
    with pytest.raises(RuntimeError, match="read-only"):
        t.fill_(0)
    assert data == b"abcd"
    assert t.clone().fill_(1).tolist() == [1, 1, 1, 1]
    ro = tc.frombuffer(memoryview(bytearray(b"xy")).toreadonly(), dtype=tc.uint8)
    with pytest.raises(RuntimeError, match="read-only"):
        ro[0] = 1


def test_other_dtypes_and_bool_bytes():
    assert tc.frombuffer(array.array("d", [1.5, 2.5]), dtype=tc.complex128).tolist() == [1.5 + 2.5j]
    # Bytes other than 0 and 1 read as True (no invalid Rust bool).
    assert tc.frombuffer(bytearray(b"\x00\x01\x02"), dtype=tc.bool).tolist() == [False, True, True]
    assert tc.frombuffer(bytearray(b"\x80\x3f"), dtype=tc.bfloat16).tolist() == [1.0]


def test_requires_grad():
    t = tc.frombuffer(array.array("d", [1.0]), dtype=tc.float64, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        tc.frombuffer(bytearray(2), dtype=tc.int8, requires_grad=True)


def test_count_overflow_is_refused():
    # PyTorch's count * element size wraps around here and gives a tensor
    # far larger than the buffer; torchcore refuses it.
    with pytest.raises(ValueError, match="requested buffer length"):
        tc.frombuffer(bytearray(9), dtype=tc.int64, count=2**61)


np = None
try:
    import numpy as np
except ImportError:
    pass


@pytest.mark.skipif(np is None, reason="needs numpy")
def test_numpy_arrays():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = tc.frombuffer(a, dtype=tc.int32)
    assert t.tolist() == list(range(6))
    t[0] = 9
    assert a[0, 0] == 9
    a.flags.writeable = False
    with pytest.raises(RuntimeError, match="read-only"):
        tc.frombuffer(a, dtype=tc.int32)[0] = 1


CASES = [
    ("bytearray(9)", "dtype=X.int8"),
    ("bytearray(range(9))", "dtype=X.int16"),
    ("bytearray(range(9))", "dtype=X.int16, offset=1"),
    ("bytearray(range(9))", "dtype=X.int16, offset=2"),
    ("bytearray(range(9))", "dtype=X.int16, count=2, offset=1"),
    ("bytearray(range(9))", "dtype=X.int16, count=5"),
    ("bytearray(range(9))", "dtype=X.int16, count=4, offset=2"),
    ("bytearray(range(9))", "dtype=X.int16, count=0"),
    ("bytearray(range(9))", "dtype=X.int16, count=-2"),
    ("bytearray(range(9))", "dtype=X.int8, count=-2**62"),
    ("bytearray(range(9))", "dtype=X.int8, offset=9"),
    ("bytearray(range(9))", "dtype=X.int16, count=1, offset=9"),
    ("bytearray(range(9))", "dtype=X.int16, count=0, offset=9"),
    ("bytearray(range(9))", "dtype=X.int8, offset=-1"),
    ("bytearray(range(9))", "dtype=X.int8, count=2**63"),
    ("bytearray()", "dtype=X.int8"),
    ("bytearray()", "dtype=X.int16, count=0, offset=5"),
    ("array.array('i')", "dtype=X.int8"),
    ("array.array('d', [1.5, 2.5])", "dtype=X.float64"),
    ("array.array('d', [1.5, 2.5])", "dtype=X.int8, count=3, offset=2"),
    ("memoryview(bytearray(range(9)))[2:]", "dtype=X.int8"),
    ("memoryview(bytearray(range(9)))[::2]", "dtype=X.int8"),
    ("[1, 2]", "dtype=X.uint8"),
    ("None", "dtype=X.uint8"),
    ("'abc'", "dtype=X.uint8"),
    ("X.zeros(2)", "dtype=X.uint8"),
    ("bytearray(4)", ""),
    ("", "dtype=X.int8"),
    ("bytearray(4), X.uint8", ""),
    ("bytearray(4), X.uint8, 3", ""),
    ("bytearray(4)", "buffer=bytearray(4), dtype=X.int8"),
    ("", "buffer=bytearray(4), dtype=X.int8"),
    ("", "buffer=bytearray(4)"),
    ("", "count=1"),
    ("bytearray(4)", "buffer=1, dtype=X.int8, foo=1"),
    ("bytearray(4)", "dtype=X.int8, device='cpu'"),
    ("bytearray(4)", "dtype='int8'"),
    ("bytearray(4)", "dtype=None"),
    ("bytearray(4)", "dtype='x', device=1"),
    ("bytearray(4)", "device=1"),
    ("bytearray(4)", "count='x'"),
    ("bytearray(4)", "dtype=X.int8, count='1'"),
    ("bytearray(4)", "dtype=X.int8, count=1.0"),
    ("bytearray(4)", "dtype=X.int8, count=True"),
    ("bytearray(4)", "dtype=X.int8, count=None"),
    ("bytearray(4)", "dtype=X.int8, count=X.tensor(3)"),
    ("bytearray(4)", "dtype=X.int8, offset=1.0"),
    ("bytearray(4)", "dtype=X.int8, offset=None"),
    ("bytearray(4)", "dtype=X.float32, requires_grad=1"),
    ("bytearray(4)", "dtype=X.float32, requires_grad=None"),
    ("bytearray(4)", "dtype=X.int8, requires_grad=True"),
]


def outcome(m, args, kwargs):
    env = {"X": m, "array": array}
    try:
        t = eval(f"m.frombuffer({args}{', ' if args and kwargs else ''}{kwargs})",
                 {"m": m, **env})
    except Exception as e:  # noqa: BLE001 - compared as class and text
        return type(e).__name__, str(e)
    return str(t.dtype), tuple(t.shape), t.tolist(), t.requires_grad


@pytest.mark.parametrize("args,kwargs", CASES)
def test_same_as_torch(args, kwargs):
    torch = pytest.importorskip("torch")
    assert outcome(tc, args, kwargs) == outcome(torch, args, kwargs)


@pytest.mark.skipif(np is None, reason="needs numpy")
@pytest.mark.parametrize("expr", [
    "np.zeros((2, 3), dtype=np.int8)",
    "np.zeros((2, 3), dtype=np.int8)[:, ::2]",
    "np.zeros((2, 3), dtype=np.int8, order='F')",
    "np.zeros((), dtype=np.int8)",
    "np.arange(4, dtype=np.int32)",
])
def test_numpy_same_as_torch(expr):
    torch = pytest.importorskip("torch")
    out = []
    for m in (tc, torch):
        try:
            t = m.frombuffer(eval(expr), dtype=m.int8)
            out.append((str(t.dtype), tuple(t.shape), t.tolist()))
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    assert out[0] == out[1]
