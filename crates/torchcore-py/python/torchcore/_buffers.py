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


def _check_device(name, param, value):
    if isinstance(value, (_C.device, str)) or (
            isinstance(value, int) and not isinstance(value, bool)):
        return value if isinstance(value, _C.device) else _C.device(
            value if isinstance(value, str) else f"cuda:{value}")
    raise _must_be(name, param, "torch.device", value)


# The dtype of a buffer's elements, by struct format kind and item size
# (PyTorch's inference for `asarray` of a buffer without `dtype=`).
_KINDS = {
    "?": "bool", "c": "unsigned",
    "b": "signed", "h": "signed", "i": "signed", "l": "signed", "q": "signed", "n": "signed",
    "B": "unsigned", "H": "unsigned", "I": "unsigned", "L": "unsigned", "Q": "unsigned",
    "N": "unsigned",
    "e": "float", "f": "float", "d": "float",
    "Zf": "complex", "Zd": "complex",
}
_BY_KIND = {
    ("bool", 1): "bool",
    ("signed", 1): "int8", ("signed", 2): "int16", ("signed", 4): "int32", ("signed", 8): "int64",
    ("unsigned", 1): "uint8", ("unsigned", 2): "uint16", ("unsigned", 4): "uint32",
    ("unsigned", 8): "uint64",
    ("float", 2): "float16", ("float", 4): "float32", ("float", 8): "float64",
    ("complex", 8): "complex64", ("complex", 16): "complex128",
}


def _buffer_dtype(view):
    """The dtype ``asarray`` gives the elements of the memoryview ``view``
    (its format and item size), with PyTorch's ``ValueError``s."""
    fmt = view.format
    body = fmt[1:] if fmt[:1] in "@=<>!" else fmt
    if fmt[:1] in ">!" if _little else fmt[:1] == "<":
        raise ValueError(
            f"buffer has non-native byte order (format '{fmt}'), which torch.asarray cannot "
            "reinterpret without copying. Convert the buffer to native byte order first (e.g. "
            "with numpy's arr.byteswap().view(arr.dtype.newbyteorder())).")
    name = _BY_KIND.get((_KINDS.get(body), view.itemsize))
    if name is None:
        raise ValueError(
            f"could not infer a dtype from buffer format '{fmt}'. Please pass an explicit "
            "dtype= to torch.asarray.")
    return getattr(_C, name)


_little = __import__("sys").byteorder == "little"
_warned_requires_grad = False


def _numpy():
    import sys
    return sys.modules.get("numpy")


def _from_object(obj, dtype, copy):
    """The tensor ``asarray`` aliases for ``obj`` (a tensor, a NumPy array
    or scalar, a DLPack exporter, a buffer); ``None`` for anything else (a
    scalar or sequence, copied)."""
    if isinstance(obj, _C.Tensor):
        return obj
    np = _numpy()
    if np is not None:
        if isinstance(obj, (np.number, np.bool_)):
            if copy is False:
                raise RuntimeError(
                    "can't alias NumPy scalars. Either remove copy=False or transform it in a "
                    "ndarray. ")
            return _C.from_numpy(np.asarray(obj))
        if isinstance(obj, np.ndarray):
            if obj.ndim == 0:
                # PyTorch copies a 0-d array, even with copy=False.
                return _C.from_numpy(obj).clone()
            return _C.from_numpy(obj)
    if hasattr(obj, "__dlpack__") and not _is_storage(obj):
        return _C.from_dlpack(obj)
    try:
        view = memoryview(obj)
    except TypeError:
        return None
    except Exception:  # noqa: BLE001 - a released memoryview, for one
        return _C._frombuffer(obj, dtype or _C.uint8, -1, 0, False)
    if dtype is None:
        dtype = _buffer_dtype(view)
    view.release()
    return _C._frombuffer(obj, dtype, -1, 0, False)


def _is_storage(obj):
    from .storage import TypedStorage
    return isinstance(obj, (_C.StorageBase, TypedStorage))


_C10_NAMES = {
    "torch.bool": "Bool", "torch.uint8": "Byte", "torch.int8": "Char", "torch.int16": "Short",
    "torch.int32": "Int", "torch.int64": "Long", "torch.uint16": "UInt16",
    "torch.uint32": "UInt32", "torch.uint64": "UInt64", "torch.float16": "Half",
    "torch.bfloat16": "BFloat16", "torch.float32": "Float", "torch.float64": "Double",
    "torch.complex32": "ComplexHalf", "torch.complex64": "ComplexFloat",
    "torch.complex128": "ComplexDouble",
}


def _set_requires_grad(t, requires_grad):
    """PyTorch's last step of ``asarray``: a leaf gets the flag in place
    (the object passed in, when aliased); a computed tensor that must not
    require grad is detached."""
    if requires_grad and not (t.is_floating_point() or t.is_complex()):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    if t.is_leaf:
        if t.requires_grad != requires_grad:
            t.requires_grad_(requires_grad)
        return t
    return t if requires_grad else t.detach()


def asarray(*args, **kwargs):
    """``torch.asarray(obj, *, dtype=None, device=None, copy=None,
    requires_grad=None)``: ``obj`` as a tensor, sharing its memory when it
    can.

    * a tensor is returned itself, a NumPy array (``from_numpy``), a DLPack
      exporter (``from_dlpack``) or a buffer-protocol object
      (``frombuffer``, its dtype taken from the buffer's format unless
      ``dtype`` is given, which reinterprets the bytes) aliased; a dtype or
      device change copies, ``copy=True`` always copies, ``copy=False``
      refuses to copy (``ValueError``);
    * Python scalars and (nested) sequences are copied as by ``tensor``
      (``copy=False`` is a ``ValueError``).

    ``requires_grad`` unset keeps the tensor's flag (with PyTorch's
    once-per-process warning when it is set); set, it is applied to the
    result in place when that is a leaf, which may be ``obj`` itself.

    >>> import torchcore as tc
    >>> x = tc.arange(3.0)
    >>> tc.asarray(x) is x
    True
    >>> tc.asarray([1, 2], dtype=tc.float64).tolist()
    [1.0, 2.0]
    """
    obj, dtype, device, copy, requires_grad = _parse(
        "asarray", args, kwargs,
        [("obj", _MISSING, None), ("dtype", None, _check_dtype),
         ("device", None, _check_device), ("copy", None, _check_bool),
         ("requires_grad", None, _check_bool)], 1)
    t = _from_object(obj, dtype, copy)
    if t is None:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        t = _C.tensor(obj, dtype=dtype)
        if device is not None and device != t.device:
            t = t.to(device)
        return _set_requires_grad(t, True) if requires_grad else t
    was_grad = t.requires_grad
    wrong_device = device is not None and device != t.device
    wrong_dtype = dtype is not None and dtype != t.dtype
    if copy or (copy is None and (wrong_device or wrong_dtype)):
        if wrong_device or wrong_dtype:
            t = t.to(device=device or t.device, dtype=dtype or t.dtype, copy=bool(copy))
        else:
            t = t.clone()
    elif wrong_device:
        raise ValueError(f"can't alias tensor from device '{t.device}' to '{device}'.")
    elif wrong_dtype:
        raise ValueError(
            f"can't alias tensor with dtype '{_C10_NAMES.get(str(t.dtype))}' into dtype "
            f"'{_C10_NAMES.get(str(dtype))}'.")
    if requires_grad is None:
        if was_grad:
            global _warned_requires_grad
            if not _warned_requires_grad:
                _warned_requires_grad = True
                import warnings
                warnings.warn(
                    "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad "
                    "instead of False. Pass requires_grad=False explicitly to get the old behavior "
                    "and silence this warning.", UserWarning, stacklevel=2)
        return t
    return _set_requires_grad(t, requires_grad)
