"""`torchcore.cuda.FloatStorage` and the other legacy CUDA storage classes
exist as in a torch build on a machine without CUDA: their dtype is known,
nothing here is an instance of them, and using them raises torch's errors."""

import warnings

import pytest

import torchcore as tc

torch = pytest.importorskip(
    "torch", reason="torch is not importable: the side-by-side comparisons with torch are skipped"
)

NAMES = [
    "DoubleStorage", "FloatStorage", "HalfStorage", "BFloat16Storage", "LongStorage", "IntStorage",
    "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage", "ComplexFloatStorage",
    "ComplexDoubleStorage",
]

CALLS = [
    lambda c: c(),
    lambda c: c(3),
    lambda c: c.from_buffer(b"1234"),
    lambda c: c._new_with_weak_ptr(),
    lambda c: c._new_shared_filename(0, 0, 0),
]


def outcome(f):
    try:
        return ("ok", f())
    except Exception as e:  # noqa: BLE001 - the class and text are compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("name", NAMES)
def test_cuda_storage_classes_match_torch(name):
    if torch.cuda.is_available():
        pytest.skip("this torch has CUDA: its classes work there")
    ct, cc = getattr(torch.cuda, name), getattr(tc.cuda, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert str(cc.dtype).split(".")[-1] == str(ct.dtype).split(".")[-1]
        for call in CALLS:
            assert outcome(lambda: call(cc)) == outcome(lambda: call(ct))
        assert isinstance(tc.zeros(2, dtype=cc.dtype).storage(), cc) is False
        assert issubclass(cc, tc.TypedStorage)
    assert cc.__name__ == name
