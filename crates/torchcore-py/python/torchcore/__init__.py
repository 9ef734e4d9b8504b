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
    "as_strided", "clone", "broadcast_to", "hsplit", "vsplit", "dsplit",
):
    globals()[_name] = _method(_name)
del _name

# Storages (torchcore.storage): UntypedStorage, TypedStorage and the legacy
# FloatStorage-style classes.
from . import storage  # noqa: E402
from . import _utils  # noqa: E402,F401
from .storage import (  # noqa: E402,F401
    UntypedStorage,
    TypedStorage,
    DoubleStorage,
    FloatStorage,
    HalfStorage,
    BFloat16Storage,
    LongStorage,
    IntStorage,
    ShortStorage,
    CharStorage,
    ByteStorage,
    BoolStorage,
    ComplexFloatStorage,
    ComplexDoubleStorage,
    _storage_classes,
)


def is_storage(obj):
    """``torch.is_storage``."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


from ._C import broadcast_tensors  # noqa: E402,F401


def _atleast(n):
    def f(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return _C._atleast(tensors[0], n)
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        return tuple(_C._atleast(t, n) for t in tensors)

    f.__name__ = f"atleast_{n}d"
    f.__doc__ = (
        f"``torch.atleast_{n}d(*tensors)``: views with at least {n} dims (a tensor "
        "that has them comes back itself); one tensor gives a tensor, several "
        "tensors or one sequence of them a tuple."
    )
    return f


atleast_1d = _atleast(1)
atleast_2d = _atleast(2)
atleast_3d = _atleast(3)


def broadcast_shapes(*shapes):
    """``torch.broadcast_shapes(*shapes)``: the shape every given shape (an
    int or a sequence of ints) broadcasts to, as a ``Size``."""
    lists = []
    for s in shapes:
        if isinstance(s, _builtins.int) or (hasattr(s, "__index__") and not isinstance(s, (tuple, list))):
            lists.append([s.__index__()])
        elif isinstance(s, (tuple, list)):
            for i, d in enumerate(s):
                if not isinstance(d, _builtins.int):
                    raise TypeError(
                        f"torch.Size() takes an iterable of 'int' (item {i} is "
                        f"'{type(d).__name__}')"
                    )
            lists.append(list(s))
        else:
            raise RuntimeError(
                "Input shapes should be of type ints, a tuple of ints, or a list of ints, "
                f"got {s}"
            )
    return Size(_C._broadcast_shapes(lists))


def _like(fill):
    def f(t, *, dtype=None, layout=None, device=None, requires_grad=False,
          memory_format=preserve_format, pin_memory=False):
        r = _C._empty_like(t, memory_format, dtype, device)
        if fill is not None:
            fill(r)
        if requires_grad:
            r.requires_grad_(True)
        return r

    return f


empty_like = _like(None)
zeros_like = _like(lambda r: r.zero_())
ones_like = _like(lambda r: r.fill_(1))
empty_like.__doc__ = "``torch.empty_like``: ``preserve_format`` keeps a dense input's strides."
zeros_like.__doc__ = "``torch.zeros_like`` (``memory_format`` as ``empty_like``)."
ones_like.__doc__ = "``torch.ones_like`` (``memory_format`` as ``empty_like``)."


def full_like(t, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=preserve_format, pin_memory=False):
    """``torch.full_like`` (``memory_format`` as ``empty_like``)."""
    r = _C._empty_like(t, memory_format, dtype, device)
    r.fill_(fill_value)
    if requires_grad:
        r.requires_grad_(True)
    return r

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
from ._tensor_types import *  # noqa: F401,F403,E402  (FloatTensor, ...)
from . import memory  # noqa: E402,F401  (torchcore.memory)
