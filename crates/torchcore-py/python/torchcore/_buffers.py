"""``torchcore.frombuffer`` and ``torchcore.asarray``: tensors over the
memory of other objects, with PyTorch's argument parser errors (see
``docs/python.md``, "Tensors from buffers, arrays and objects")."""

import operator

from . import _C

_MISSING = object()


def _type_name(value):
    kind = type(value)
    return f"numpy.{kind.__name__}" if kind.__module__ == "numpy" else kind.__name__


def _must_be(name, param, what, value):
    return TypeError(f"{name}(): argument '{param}' must be {what}, not {_type_name(value)}")


def _check_int(name, param, value):
    if not isinstance(value, bool):
        if isinstance(value, _C.Tensor):
            if value.numel() == 1 and not (value.is_floating_point() or value.is_complex()):
                return value
        else:
            try:
                operator.index(value)
                return value
            except TypeError:
                pass
    raise _must_be(name, param, "int", value)


def _check_bool(name, param, value):
    if isinstance(value, bool):
        return value
    raise _must_be(name, param, "bool", value)


def _check_dtype(name, param, value):
    if isinstance(value, _C.dtype):
        return value
    raise _must_be(name, param, "torch.dtype", value)


def _parse(name, args, kwargs, params, n_positional):
    """PyTorch's argument parser for ``name(p0, ..., *, ...)``: ``params``
    is ``[(param, default or _MISSING, check or None)]``, the first
    ``n_positional`` positional-or-keyword. Returns the values in order,
    with PyTorch's errors (its exact wording, quirks included)."""
    required = [p for p, d, _ in params if d is _MISSING]
    if len(args) > n_positional:
        if len(required) != n_positional:
            raise TypeError(
                f"{name}() takes from {len(required)} to {n_positional} positional arguments "
                f"but {len(args)} were given")
        s = "" if n_positional == 1 else "s"
        were = "was" if len(args) == 1 else "were"
        raise TypeError(
            f"{name}() takes {n_positional} positional argument{s} but {len(args)} {were} given")
    rest = dict(kwargs)
    values = []
    for i, (param, default, check) in enumerate(params):
        if i < len(args):
            value = args[i]
        else:
            value = rest.pop(param, default)
        if value is _MISSING:
            # PyTorch lists every required parameter from this one on,
            # given by keyword or not, and its plural is the other way round.
            missing = [p for p, d, _ in params[i:] if d is _MISSING]
            s = "s" if len(missing) == 1 else ""
            names = ", ".join(f'"{p}"' for p in missing)
            raise TypeError(f"{name}() missing {len(missing)} required positional argument{s}: {names}")
        if check is not None and not (value is default and default is None):
            value = check(name, param, value)
        values.append(value)
    for key in rest:
        if key in [p for p, _, _ in params[: len(args)]]:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    return values


def frombuffer(*args, **kwargs):
    """``torch.frombuffer(buffer, *, dtype, count=-1, offset=0,
    requires_grad=False)``: a one-dimensional tensor over the bytes of
    ``buffer`` (any object with the buffer protocol, C-contiguous), from
    byte ``offset``, ``count`` elements (``-1``: all that remain). The
    memory is shared, not copied: writes through either side show on the
    other. The tensor's storage keeps a buffer export of the object until
    it is freed, so the object stays alive and cannot resize or close
    meanwhile (``BufferError``). A read-only buffer (``bytes``) gives a
    read-only tensor (PyTorch warns and lets it write).

    >>> import torchcore as tc
    >>> b = bytearray(b"\\x01\\x00\\x02\\x00")
    >>> tc.frombuffer(b, dtype=tc.int16).tolist()
    [1, 2]
    """
    buffer, dtype, count, offset, requires_grad = _parse(
        "frombuffer", args, kwargs,
        [("buffer", _MISSING, None), ("dtype", _MISSING, _check_dtype),
         ("count", -1, _check_int), ("offset", 0, _check_int),
         ("requires_grad", False, _check_bool)], 1)
    return _C._frombuffer(buffer, dtype, count, offset, requires_grad)
