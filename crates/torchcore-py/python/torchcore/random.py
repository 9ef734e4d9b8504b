"""Random factories: ``rand``, ``randn``, ``randint`` and their ``*_like``
forms, with ``manual_seed`` / ``initial_seed``.

They exist so that code written for PyTorch can make test inputs; they are not
a random-number library.  The values come from Python's Mersenne Twister
(``random.Random``): one draw per element in row-major order, or, for the
real floating dtypes on the CPU, one 64-bit seed for a generator in Rust that
draws the elements (``_C._random_tensor``). A seed gives the same tensor on
every run, but NOT the numbers PyTorch's generator gives
for that seed (see ``docs/pytorch-map.md``).  Shapes, dtypes, devices,
``requires_grad`` and the ``*_like`` memory formats follow PyTorch.
"""

import builtins as _builtins
import random as _random

from . import _C

_default_seed = 67280421310721  # torch's default_generator seed
_gen = _random.Random(_default_seed)
_seed = _default_seed


def manual_seed(seed):
    """``torch.manual_seed(seed)``: reseed the factories' generator (negative
    seeds wrap to ``uint64`` as in PyTorch); returns ``None``."""
    global _seed
    seed = _builtins.int(seed)
    if seed < -(1 << 63) or seed >= (1 << 64):
        raise RuntimeError("Overflow when unpacking long")
    _seed = seed % (1 << 64)
    _gen.seed(_seed)


def initial_seed():
    """``torch.initial_seed()``: the last seed given to ``manual_seed``."""
    return _seed


def seed():
    """``torch.seed()``: reseed from the OS and return the new seed."""
    s = _random.SystemRandom().getrandbits(63)
    manual_seed(s)
    return s


def _size(size):
    if len(size) == 1 and not isinstance(size[0], _builtins.int) and hasattr(size[0], "__iter__"):
        size = tuple(size[0])
    return tuple(s.__index__() for s in size)


# Elements drawn per chunk by `_build` (bounded memory for huge tensors).
_CHUNK = 1 << 16


# The dtypes `_C._random_tensor` draws in Rust (name as it takes them).
_BULK = {
    _C.float32: "float32",
    _C.float64: "float64",
    _C.float16: "float16",
    _C.bfloat16: "bfloat16",
}


def _build(shape, dtype, device, requires_grad, draw, law=None):
    """A new tensor of ``shape`` filled with ``draw()`` values (row-major),
    or, for ``law = (name, a, b)`` and a real dtype of ``_BULK`` on the CPU,
    drawn in Rust from one seed taken from this module's generator (a
    microsecond per element less, and no Python list)."""
    # `empty` first: its checks and errors (sizes, dtype, device, memory).
    t = _C.empty(shape, dtype=dtype, device=device)
    n = t.numel()
    if law is not None and n > 0 and t.device.type == "cpu" and t.dtype in _BULK:
        name, a, b = law
        t = _C._random_tensor(list(t.shape), _BULK[t.dtype], name, _gen.getrandbits(64), a, b)
    elif t.device.type != "meta" and n > 0:
        # In chunks: a list of Python floats costs about 32 bytes per
        # element, so a whole 2 GiB float32 tensor's list would need 16 GiB.
        flat = t.view(-1)
        value_dtype = _value_dtype(t.dtype)
        for start in range(0, n, _CHUNK):
            stop = min(start + _CHUNK, n)
            values = [draw() for _ in range(stop - start)]
            flat[start:stop].copy_(_C.tensor(values, dtype=value_dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _value_dtype(dtype):
    # The Python values are made at full precision and rounded by copy_.
    if dtype.is_complex:
        return _C.complex128
    if dtype.is_floating_point:
        return _C.float64
    return _C.int64


def _float_dtype(dtype, name):
    from . import get_default_dtype

    # `_C.empty` resolves Python scalar types (`dtype=float`) as PyTorch does.
    dtype = get_default_dtype() if dtype is None else _C.empty(0, dtype=dtype).dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise NotImplementedError(f'"{name}" not implemented for \'{_scalar_name(dtype)}\'')
    return dtype


def _scalar_name(dtype):
    return _C.empty(0, dtype=dtype).type().split(".")[-1].replace("Tensor", "")


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None,
          layout=None, pin_memory=False, out=None):
    """``torch.randn``: standard normal values (complex: real and imaginary
    parts each with variance 1/2)."""
    dtype = _float_dtype(dtype, "normal_kernel_cpu")
    if dtype.is_complex:
        sd = 0.5 ** 0.5

        def draw():
            return complex(_gen.gauss(0.0, sd), _gen.gauss(0.0, sd))
    else:
        def draw():
            return _gen.gauss(0.0, 1.0)
    return _build(_size(size), dtype, device, requires_grad, draw, ("normal", 0.0, 1.0))


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None,
         layout=None, pin_memory=False, out=None):
    """``torch.rand``: uniform values in ``[0, 1)``."""
    dtype = _float_dtype(dtype, "check_uniform_bounds")
    if dtype.is_complex:
        def draw():
            return complex(_gen.random(), _gen.random())
    else:
        draw = _gen.random
    return _build(_size(size), dtype, device, requires_grad, draw, ("uniform", 0.0, 1.0))


def randint(*args, size=None, dtype=None, device=None, requires_grad=False,
            generator=None, layout=None, pin_memory=False, out=None):
    """``torch.randint([low=0,] high, size)``: integers in ``[low, high)``
    (default dtype ``int64``)."""
    args = list(args)
    if size is None:
        if not args:
            raise TypeError("randint() missing required argument 'size'")
        size = args.pop()
    if len(args) == 1:
        low, high = 0, args[0]
    elif len(args) == 2:
        low, high = args
    else:
        raise TypeError("randint() received an invalid combination of arguments")
    low, high = _builtins.int(low), _builtins.int(high)
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    dtype = _C.int64 if dtype is None else dtype

    def draw():
        return _gen.randrange(low, high)
    return _build(_size((size,)), dtype, device, requires_grad, draw)


def _like_from(factory):
    def f(t, *args, dtype=None, layout=None, device=None, requires_grad=False,
          memory_format=_C.preserve_format, pin_memory=False, generator=None):
        r = _C._empty_like(t, memory_format, dtype, device)
        if factory is randint:
            src = randint(*args, tuple(r.shape), dtype=r.dtype, device=r.device)
        else:
            src = factory(tuple(r.shape), dtype=r.dtype, device=r.device)
        if r.device.type != "meta":
            r.copy_(src)
        if requires_grad:
            r.requires_grad_(True)
        return r
    f.__name__ = factory.__name__ + "_like"
    f.__doc__ = (
        f"``torch.{f.__name__}``: ``{factory.__name__}`` values in the layout "
        "``empty_like`` gives (``memory_format`` defaults to ``preserve_format``)."
    )
    return f


randn_like = _like_from(randn)
rand_like = _like_from(rand)
randint_like = _like_from(randint)


def _uniform_(self, from_=0.0, to=1.0, *, generator=None):
    """``Tensor.uniform_(from_=0, to=1)``: fill with uniform values in
    ``[from_, to)`` (this module's generator)."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise NotImplementedError(
            f'"check_uniform_bounds" not implemented for \'{_scalar_name(self.dtype)}\''
        )
    if from_ > to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}"
        )
    src = _build(tuple(self.shape), self.dtype, self.device, False,
                 lambda: _gen.uniform(from_, to), ("uniform", float(from_), float(to)))
    if self.device.type != "meta":
        self.copy_(src)
    return self


_C.Tensor.uniform_ = _uniform_
