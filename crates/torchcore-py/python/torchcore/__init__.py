"""torchcore: torch.Tensor's strided core (views, indexing, copies, in-place
metadata ops, DLPack/NumPy interchange) over a Rust rebuild of c10/ATen.

The API mirrors ``torch`` for everything the Rust core implements; see
``docs/python.md`` in the repository.  A ``TensorImpl`` that already has a
Python object always comes back to Python as that same object (PyTorch's
PyObject preservation).
"""

from . import _C
from ._C import (  # noqa: F401
    Tensor,
    UntypedStorage,
    device,
    dtype,
    memory_format,
    tensor,
    empty,
    zeros,
    ones,
    full,
    empty_strided,
    arange,
    linspace,
    eye,
    from_dlpack,
    from_numpy,
    float32,
    float,
    float64,
    double,
    float16,
    half,
    bfloat16,
    int64,
    long,
    int32,
    int,
    int16,
    short,
    int8,
    uint8,
    bool,
    complex64,
    cfloat,
    complex128,
    cdouble,
    contiguous_format,
    preserve_format,
    channels_last,
    channels_last_3d,
)

__version__ = "0.1.0"

import builtins as _builtins


class Size(tuple):
    """``torch.Size``: a tuple of ints printed as ``torch.Size([...])``."""

    __slots__ = ()

    def __repr__(self):
        return "torch.Size([" + ", ".join(_builtins.str(int_) for int_ in self) + "])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r


def is_tensor(obj):
    """``torch.is_tensor``."""
    return isinstance(obj, Tensor)


def numel(t):
    """``torch.numel``."""
    return t.numel()


def _method(name):
    def f(t, *args, **kwargs):
        return getattr(t, name)(*args, **kwargs)

    f.__name__ = name
    f.__doc__ = f"``torch.{name}``: the function form of ``Tensor.{name}``."
    return f


for _name in (
    "reshape", "t", "transpose", "swapaxes", "swapdims", "permute", "narrow",
    "select", "squeeze", "unsqueeze", "flatten", "unflatten", "ravel", "split",
    "chunk", "tensor_split", "unbind", "diagonal", "movedim", "moveaxis",
    "as_strided", "clone", "broadcast_to",
):
    globals()[_name] = _method(_name)
del _name


def _like(fn):
    def f(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
        return fn(*t.shape, dtype=dtype if dtype is not None else t.dtype,
                  device=device, requires_grad=requires_grad)

    return f


empty_like = _like(empty)
zeros_like = _like(zeros)
ones_like = _like(ones)


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False):
    """``torch.full_like``."""
    return full(t.shape, fill_value, dtype=dtype if dtype is not None else t.dtype,
                device=device, requires_grad=requires_grad)

# Checkpoint files (torch.save / torch.load) and the dtypes the loader can
# produce; see torchcore.serialization and docs/checkpoints.md.
from ._C import (  # noqa: F401,E402
    equal,
    uint16,
    uint32,
    uint64,
    float8_e4m3fn,
    float8_e5m2,
    float8_e4m3fnuz,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    complex32,
    chalf,
    bcomplex32,
    float4_e2m1fn_x2,
    bits1x8,
    bits2x4,
    bits4x2,
    bits8,
    bits16,
)
# Complex views and the conjugate / negative bits (crates/torchcore-py/src/complex_views.rs).
from ._C import (  # noqa: F401,E402
    view_as_real,
    view_as_complex,
    real,
    imag,
    conj,
    _conj,
    _neg_view,
    is_conj,
    is_neg,
    resolve_conj,
    resolve_neg,
    conj_physical,
    adjoint,
)
from . import serialization  # noqa: E402
from .serialization import save, load  # noqa: F401,E402
from . import memory  # noqa: E402,F401  (torchcore.memory)
