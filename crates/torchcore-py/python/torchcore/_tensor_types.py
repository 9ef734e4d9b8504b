"""The legacy CPU tensor-type classes (``torch.FloatTensor`` and friends).

PyTorch keeps them for old code and its own tests: ``FloatTensor()`` makes
an empty float32 CPU tensor, ``FloatTensor(2, 3)`` one of that shape,
``FloatTensor([1, 2])`` one from data, and ``isinstance(t, FloatTensor)``
is true for every float32 CPU tensor (the classes are type checks, not
subclasses).
"""

from . import _C

__all__ = [
    "DoubleTensor", "FloatTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
    "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
]


class _LegacyTensorType(type):
    def __instancecheck__(cls, obj):
        return (isinstance(obj, _C.Tensor) and obj.dtype == cls.dtype
                and obj.device.type == "cpu")

    def __call__(cls, *args, device=None):
        if device is not None and _C.device(device).type != "cpu":
            raise RuntimeError(
                f"legacy constructor expects device type: cpu but device type: "
                f"{_C.device(device).type} was passed")
        if not args:
            return _C.empty(0, dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            return _C.tensor(list(args[0]), dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], _C.Tensor):
            return args[0]
        return _C.empty(*args, dtype=cls.dtype)

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _make(name, dtype_name):
    return _LegacyTensorType(name, (), {"dtype": getattr(_C, dtype_name), "__module__": "torch"})


DoubleTensor = _make("DoubleTensor", "float64")
FloatTensor = _make("FloatTensor", "float32")
HalfTensor = _make("HalfTensor", "float16")
BFloat16Tensor = _make("BFloat16Tensor", "bfloat16")
LongTensor = _make("LongTensor", "int64")
IntTensor = _make("IntTensor", "int32")
ShortTensor = _make("ShortTensor", "int16")
CharTensor = _make("CharTensor", "int8")
ByteTensor = _make("ByteTensor", "uint8")
BoolTensor = _make("BoolTensor", "bool")
