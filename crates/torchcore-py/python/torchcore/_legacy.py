"""PyTorch's legacy tensor types: ``torchcore.FloatTensor(...)`` and friends,
``torchcore.cuda.FloatTensor`` (which raise without CUDA, as in torch), and
``torchcore.autograd.Variable``.

A legacy type is not a class of its own: calling it builds a plain
``Tensor`` of its dtype (``FloatTensor(2, 3)``, ``LongTensor([1, 2])``,
``FloatTensor(storage)``, ``FloatTensor(t)`` aliasing a tensor of that
dtype), and ``isinstance(t, FloatTensor)`` asks whether ``t`` is a CPU
tensor of that dtype, as PyTorch's ``torch.tensortype`` objects do.
"""

from . import _C

# (name, dtype) pairs PyTorch 2.15 defines in both torch and torch.cuda.
_NAMES = [
    ("DoubleTensor", _C.float64),
    ("FloatTensor", _C.float32),
    ("HalfTensor", _C.float16),
    ("BFloat16Tensor", _C.bfloat16),
    ("LongTensor", _C.int64),
    ("IntTensor", _C.int32),
    ("ShortTensor", _C.int16),
    ("CharTensor", _C.int8),
    ("ByteTensor", _C.uint8),
    ("BoolTensor", _C.bool),
]


class tensortype(type):
    """The metaclass of the legacy types (``type(torch.FloatTensor)`` is
    ``torch.tensortype``)."""

    def __call__(cls, *args, **kwargs):
        if cls._is_cuda:
            # What PyTorch raises on a machine without an NVIDIA driver.
            raise RuntimeError(
                "Found no NVIDIA driver on your system. Please check that you "
                "have an NVIDIA GPU and installed a driver from "
                "http://www.nvidia.com/Download/index.aspx"
            )
        return _C._legacy_new(cls.dtype, args, kwargs or None)

    def __instancecheck__(cls, obj):
        return (
            isinstance(obj, _C.Tensor)
            and obj.dtype == cls.dtype
            and obj.device.type == ("cuda" if cls._is_cuda else "cpu")
        )

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _make(name, dtype, cuda):
    return tensortype(
        name,
        (),
        {
            "dtype": dtype,
            "is_cuda": cuda,
            "is_sparse": False,
            "layout": _C.strided if hasattr(_C, "strided") else "torch.strided",
            "_is_cuda": cuda,
            "__module__": "torch.cuda" if cuda else "torch",
        },
    )


CPU_TYPES = {name: _make(name, dt, False) for name, dt in _NAMES}
CUDA_TYPES = {name: _make(name, dt, True) for name, dt in _NAMES}


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor)


class Variable(metaclass=_VariableMeta):
    """``torch.autograd.Variable(data, requires_grad=False)``: PyTorch's
    deprecated wrapper, which returns ``data.detach()`` (with
    ``requires_grad`` set when asked); every tensor is a ``Variable``."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            return _C.empty(0)
        if not isinstance(data, _C.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
