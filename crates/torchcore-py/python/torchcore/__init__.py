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
import operator as _operator


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


class layout:
    """``torch.layout``: how a tensor's elements are laid out. torchcore has
    one layout, ``strided`` (no sparse or quantized tensors); like PyTorch's,
    the type cannot be instantiated and its objects pickle by name."""

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.layout' instances")

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


strided = object.__new__(layout)
strided._name = "strided"

# PyTorch's math constants (``from torch import inf, nan``).
inf = _builtins.float("inf")
nan = _builtins.float("nan")
pi = 3.141592653589793
e = 2.718281828459045
newaxis = None


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


def _type_name(value):
    kind = type(value)
    return f"numpy.{kind.__name__}" if kind.__module__ == "numpy" else kind.__name__


def _index_like(value):
    """PyTorch's test of a size list's first element: not a bool, and an
    int, a one-element integral tensor or an object with ``__index__``."""
    if isinstance(value, _builtins.bool):
        return False
    if isinstance(value, Tensor):
        return value.numel() == 1 and not value.is_floating_point() and not value.is_complex()
    try:
        _operator.index(value)
    except OverflowError:
        return True
    except Exception:
        return False
    return True


def _list_function(name, param):
    """``torch.reshape``/``torch.permute``: unlike the methods, PyTorch's
    functions take the list as one argument (``torch.reshape(t, (2, 3))``,
    never ``torch.reshape(t, 2, 3)``), with its parser's errors."""

    def f(input, *args, **kwargs):
        if param in kwargs:
            if args:
                raise TypeError(f"{name}() got multiple values for argument '{param}'")
            args = (kwargs.pop(param),)
        if kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if not args:
            raise TypeError(f'{name}() missing 1 required positional arguments: "{param}"')
        if len(args) > 1:
            raise TypeError(f"{name}() takes 2 positional arguments but {len(args) + 1} were given")
        value = args[0]
        if not isinstance(value, (tuple, list)):
            raise TypeError(
                f"{name}(): argument '{param}' (position 2) must be tuple of ints, "
                f"not {_type_name(value)}"
            )
        if len(value) and not _index_like(value[0]):
            raise TypeError(
                f"{name}(): argument '{param}' (position 2) must be tuple of ints, "
                f"but found element of type {_type_name(value[0])} at pos 0"
            )
        return getattr(input, name)(value)

    f.__name__ = name
    f.__doc__ = f"``torch.{name}(input, {param})``: the function form of ``Tensor.{name}``."
    return f


reshape = _list_function("reshape", "shape")
permute = _list_function("permute", "dims")

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
from ._buffers import frombuffer, asarray  # noqa: E402,F401
from . import serialization  # noqa: E402
from .serialization import save, load  # noqa: F401,E402
from . import memory  # noqa: E402,F401  (torchcore.memory)


def get_default_dtype():
    """``torch.get_default_dtype()``: the dtype float factories use
    (always ``float32`` here: ``set_default_dtype`` is not supported)."""
    return float32


from . import cpu, cuda  # noqa: E402,F401  (device modules)

# Random factories for making inputs (not PyTorch's generator stream);
# see torchcore/random.py.
from . import random  # noqa: E402,F401
from .random import (  # noqa: E402,F401
    manual_seed,
    initial_seed,
    seed,
    rand,
    randn,
    randint,
    rand_like,
    randn_like,
    randint_like,
)


def _repeat(self, *sizes):
    """``Tensor.repeat(*sizes)``: a new contiguous tensor holding ``self``
    tiled ``sizes[i]`` times along each dim (leading dims added as needed);
    built from the core's ``reshape``/``expand``/``clone``, always a copy."""
    if len(sizes) == 1 and not isinstance(sizes[0], _builtins.int):
        sizes = tuple(sizes[0])
    sizes = [s.__index__() for s in sizes]
    if len(sizes) < self.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number "
            "of dimensions of tensor"
        )
    for s in sizes:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {sizes}"
            )
    src = self.reshape((1,) * (len(sizes) - self.dim()) + tuple(self.shape))
    pairs, expanded = [], []
    for r, s in zip(sizes, src.shape):
        pairs += [1, s]
        expanded += [r, s]
    out = [r * s for r, s in zip(sizes, src.shape)]
    return src.reshape(pairs).expand(expanded).clone(memory_format=contiguous_format).view(out)


Tensor.repeat = _repeat


def _equal_method(self, other):
    """``Tensor.equal(other)``: ``torchcore.equal(self, other)``."""
    return equal(self, other)


Tensor.equal = _equal_method

# The legacy constructors (torch.FloatTensor(2, 3), ...) and
# torch.autograd.Variable; see torchcore/_legacy.py.
from ._legacy import CPU_TYPES as _CPU_TYPES, tensortype  # noqa: E402,F401

globals().update(_CPU_TYPES)
from . import autograd  # noqa: E402,F401


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False,
                layout=None, pin_memory=False):
    """``Tensor.new_tensor(data, ...)``: always a copy of ``data``, with this
    tensor's dtype and device unless given (a tensor argument warns, as in
    torch, and is copied detached)."""
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    if isinstance(data, Tensor):
        import warnings

        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than "
            "tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        out = data.detach().to(dtype=dtype, device=device).clone()
    else:
        out = tensor(data, dtype=dtype, device=device)
    if requires_grad:
        out.requires_grad_(True)
    if type(self) is not Tensor and type(out) is Tensor:
        out = out.as_subclass(type(self))
    return out


Tensor.new_tensor = _new_tensor
