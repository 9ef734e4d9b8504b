"""Storages as PyTorch 2.x has them: ``UntypedStorage`` (bytes) and the
(deprecated in PyTorch, still used by its tests) ``TypedStorage`` with the
legacy ``FloatStorage``-style classes.

``UntypedStorage`` subclasses ``torchcore._C.StorageBase`` (one handle to a
Rust ``StorageImpl``; ``tensor.untyped_storage()`` returns the same object
each time while it is alive). Everything element-wise here (indexing,
``fill_``, ``tolist``, ``copy_``) runs through a tensor that views the
storage, so it has the core's semantics and errors.
"""

import builtins as _builtins
import copy as _copy
import sys as _sys
import warnings as _warnings

from . import _C

__all__ = ["UntypedStorage", "TypedStorage"]

_UNTYPED_NAME = "torch.storage.UntypedStorage"
_TYPED_NAME = "torch.storage.TypedStorage"


def _meta_refusal(device):
    return NotImplementedError(f"Not available for '{device.type}' device type")


def _index(idx, size):
    """An element index wrapped into ``[0, size)`` (PyTorch's storage rule)."""
    if not isinstance(idx, int) or isinstance(idx, _builtins.bool):
        if hasattr(idx, "__index__") and not isinstance(idx, _builtins.bool):
            idx = idx.__index__()
        else:
            raise TypeError(f"can't index a storage with {type(idx).__name__}")
    if idx < 0:
        idx += size
    if not 0 <= idx < size:
        raise IndexError(f"index {idx} out of range for storage of size {size}")
    return idx


class UntypedStorage(_C.StorageBase):
    """``torch.UntypedStorage``: the bytes of a storage.

    ``UntypedStorage(n)`` makes ``n`` bytes (zeros here; PyTorch leaves them
    uninitialised), ``UntypedStorage([1, 2, 3])`` those bytes,
    ``UntypedStorage(n, device='meta')`` a storage without data.
    """

    is_sparse = False

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls, *args, **kwargs)
        _C._preserve_storage(self)
        return self

    # ---- size and placement ------------------------------------------
    def size(self):
        return self.nbytes()

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_meta(self):
        return self.device.type == "meta"

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return _UNTYPED_NAME
        raise NotImplementedError("UntypedStorage.type(dtype) is not implemented in torchcore")

    def is_shared(self):
        return False

    def is_pinned(self, device="cuda"):
        return False

    def untyped(self):
        return self

    def share_memory_(self):
        """Not available: torchcore has no shared-memory storages."""
        if self.device.type != "cpu":
            raise RuntimeError("_share_fd_: only available on CPU")
        raise NotImplementedError("share_memory_ is not implemented in torchcore")

    def _write_file(self, f, is_real_file, save_size, element_size):
        """Writes the bytes to the file object ``f``, preceded by the element
        count (``int64``, native order) when ``save_size``: PyTorch's legacy
        raw storage format."""
        if self.device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        if save_size:
            f.write((self.nbytes() // element_size).to_bytes(8, _sys.byteorder, signed=True))
        f.write(bytes(self.tolist()))

    def _share_fd_cpu_(self, *args, **kwargs):
        if self.device.type != "cpu":
            raise RuntimeError("_share_fd_: only available on CPU")
        raise NotImplementedError("_share_fd_cpu_ is not implemented in torchcore")

    def _share_filename_cpu_(self, *args, **kwargs):
        if self.device.type != "cpu":
            raise RuntimeError("_share_filename_: only available on CPU")
        raise NotImplementedError("_share_filename_cpu_ is not implemented in torchcore")

    def cpu(self):
        if self.device.type == "cpu":
            return self
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    # ---- element access ----------------------------------------------
    def _bytes(self):
        """A ``uint8`` tensor viewing every byte of this storage."""
        t = _C.empty(0, dtype=_C.uint8, device=self.device)
        return t.set_(self, 0, (self.nbytes(),), (1,))

    def _data(self):
        if self.device.type == "meta":
            raise _meta_refusal(self.device)
        return self._bytes()

    def byteswap(self, dtype):
        """Reverse the byte order of each ``dtype`` element in place (for a
        complex dtype, of each real and imaginary part), as PyTorch's
        ``UntypedStorage.byteswap``."""
        n = _C.empty(0, dtype=dtype).element_size()
        if dtype.is_complex:
            n //= 2
        if n <= 1:
            return
        if self.nbytes() % n:
            raise RuntimeError(
                f"nbytes ({self.nbytes()}) must be divisible by the element size ({n})"
            )
        rows = self._data().view(-1, n)
        # Swap byte columns j and n-1-j through a copy of one of them.
        for j in range(n // 2):
            keep = rows[:, j].clone()
            rows[:, j].copy_(rows[:, n - 1 - j])
            rows[:, n - 1 - j].copy_(keep)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            if self.device.type == "meta":
                raise _meta_refusal(self.device)
            # Python's slice rules first (a zero step, non-integer bounds),
            # then PyTorch's step check, as PyTorch orders them.
            start, stop, step = idx.indices(self.nbytes())
            if step != 1:
                raise RuntimeError(
                    f"Trying to slice with a step of {step}, but only a step of 1 is supported"
                )
            # A new storage over the same bytes (it keeps this one alive).
            return self._slice(start, max(start, stop))
        return self._data()[_index(idx, self.nbytes())].item()

    def __setitem__(self, idx, value):
        data = self._data()
        if isinstance(value, (UntypedStorage, TypedStorage)):
            value = value._as_tensor_of(data.dtype) if isinstance(value, TypedStorage) else value._bytes()
        if isinstance(idx, slice):
            data[idx] = value
        else:
            data[_index(idx, self.nbytes())] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._data().tolist()

    def fill_(self, value):
        self._data().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        src = source._untyped_storage if isinstance(source, TypedStorage) else source
        if not isinstance(src, UntypedStorage):
            raise TypeError(f"copy_(): expected a storage, got {type(source).__name__}")
        if src.device.type == "meta" and self.device.type != "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        if src.nbytes() != self.nbytes():
            raise RuntimeError("size does not match")
        if self.nbytes():
            self._data().copy_(src._data())
        return self

    def clone(self):
        out = UntypedStorage(self.nbytes(), device=self.device)
        if self.device.type != "meta" and self.nbytes():
            out.copy_(self)
        return out

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        memo = {} if memo is None else memo
        if self._cdata in memo:
            return memo[self._cdata]
        out = self.clone()
        memo[self._cdata] = out
        return out

    def __sizeof__(self):
        return super().__sizeof__() + self.nbytes()

    def __repr__(self):
        info = f"[{_UNTYPED_NAME}(device={self.device}) of size {len(self)}]"
        if self.device.type == "meta":
            return "...\n" + info
        return " " + "\n ".join(str(b) for b in self.tolist()) + "\n" + info

    __str__ = __repr__


# ---------------------------------------------------------------------------
# TypedStorage
# ---------------------------------------------------------------------------

_warned_typed_storage = False
_always_warn_typed_storage = False


def _warn_typed_storage_removal(stacklevel=2):
    """PyTorch's deprecation warning, once per process."""
    global _warned_typed_storage
    if _warned_typed_storage and not _always_warn_typed_storage:
        return
    _warned_typed_storage = True
    _warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
        "be the only storage class. This should only matter to you if you are using storages "
        "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
        "of tensor.storage()",
        UserWarning,
        stacklevel=stacklevel + 1,
    )


def _set_always_warn_typed_storage_removal(always):
    global _always_warn_typed_storage
    _always_warn_typed_storage = _builtins.bool(always)


def _get_always_warn_typed_storage_removal():
    """Whether every TypedStorage use warns (``torch.storage``'s getter)."""
    return _always_warn_typed_storage


def _reset_warn_typed_storage_removal():
    global _warned_typed_storage
    _warned_typed_storage = False


_TYPED_USAGE = (
    "TypedStorage.__init__ received an invalid combination of arguments. Expected one of:\n"
    " * (*, torch.device device, torch.dtype dtype)\n"
    " * (int size, *, torch.device device, torch.dtype dtype)\n"
    " * (Sequence data, *, torch.device device, torch.dtype dtype)\n"
    " * (*, UntypedStorage wrap_storage, torch.dtype dtype)\n"
)


def _is_int(x):
    return isinstance(x, int) or (
        hasattr(x, "__index__") and not isinstance(x, _C.Tensor) and not hasattr(x, "__len__")
    )


def _is_sequence(x):
    import collections.abc

    return isinstance(x, collections.abc.Sequence)


def _get_device(device):
    if device is None:
        return _C.device("cpu")
    if isinstance(device, _C.device):
        return device
    if isinstance(device, str) and device.split(":")[0] not in ("cpu", "meta", "cuda"):
        raise RuntimeError(f"torch.UntypedStorage(): Storage device not recognized: {device}")
    return _C.device(device)


class TypedStorage:
    """``torch.TypedStorage``: an :class:`UntypedStorage` read as elements
    of one dtype (``_untyped_storage`` holds the bytes)."""

    is_sparse = False

    def __new__(cls, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        usage = _TYPED_USAGE
        if wrap_storage is not None:
            if args:
                raise RuntimeError(
                    usage + "No positional arguments should be given when using 'wrap_storage'"
                )
            if dtype is None:
                raise RuntimeError(usage + "Argument 'dtype' must be specified")
            if not isinstance(dtype, _C.dtype):
                raise TypeError(usage + f"Argument 'dtype' must be torch.dtype, not {type(dtype)}")
            if device is not None:
                raise RuntimeError(
                    usage + "Argument 'device' should not be specified when 'wrap_storage' is given"
                )
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(
                    usage + f"Argument 'wrap_storage' must be UntypedStorage, but got {type(wrap_storage)}"
                )
            self = object.__new__(TypedStorage)
            self._untyped_storage = wrap_storage
            self.dtype = dtype
            return self
        if dtype is None:
            dtype = _C.float32
        if not isinstance(dtype, _C.dtype):
            raise TypeError(usage + f"Argument 'dtype' must be torch.dtype, not {type(dtype)}")
        if len(args) > 1:
            raise RuntimeError(usage + "Too many positional arguments")
        if args and not _is_int(args[0]) and not _is_sequence(args[0]):
            raise TypeError(usage + f"Argument type not recognized: {type(args[0])}")
        dev = _get_device(device)
        self = object.__new__(TypedStorage)
        self.dtype = dtype
        if not args:
            self._untyped_storage = UntypedStorage(0, device=dev)
        elif _is_int(args[0]):
            self._untyped_storage = UntypedStorage(
                args[0].__index__() * _element_size(dtype), device=dev
            )
        else:
            data = _C.tensor(args[0] if isinstance(args[0], str) else list(args[0]), dtype=dtype)
            if dev.type != "cpu":
                data = data.to(dev)
            self._untyped_storage = data.untyped_storage()
        return self

    @classmethod
    def _legacy_new(cls, args, wrap_storage, dtype, device):
        """``FloatStorage(...)`` and friends: a CPU TypedStorage of the
        class's dtype (with PyTorch's argument errors)."""
        usage = (
            f"{cls}.__new__ received an invalid combination of arguments. Expected one of:\n"
            " * no arguments\n * (int size)\n * (Sequence data)\n"
            " * (*, UntypedStorage wrap_storage)\n"
        )
        if device is not None:
            raise RuntimeError(usage + "Keyword argument 'device' cannot be specified")
        if dtype is not None:
            raise RuntimeError(usage + "Keyword argument 'dtype' cannot be specified")
        if wrap_storage is None:
            if len(args) > 1:
                raise RuntimeError(usage + "Too many positional arguments")
            if args and not _is_int(args[0]) and not _is_sequence(args[0]):
                raise TypeError(usage + f"Argument type not recognized: {type(args[0])}")
            return TypedStorage(*args, dtype=cls._dtype, _internal=True)
        if args:
            raise RuntimeError(
                usage + "No positional arguments should be given when using 'wrap_storage'"
            )
        if not isinstance(wrap_storage, UntypedStorage):
            raise TypeError(
                usage + f"Argument 'wrap_storage' must be UntypedStorage, but got {type(wrap_storage)}"
            )
        if wrap_storage.device.type != "cpu":
            raise RuntimeError(
                usage + f"Device of 'wrap_storage' must be cpu, but got {wrap_storage.device.type}"
            )
        return TypedStorage(wrap_storage=wrap_storage, dtype=cls._dtype, _internal=True)

    # Public methods warn as PyTorch's do (TypedStorage is deprecated
    # there); the `_`-prefixed internals PyTorch itself uses do not.

    # ---- identity and geometry ---------------------------------------
    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        _warn_typed_storage_removal()
        return self.device.type == "cuda"

    @property
    def filename(self):
        return None

    def untyped(self):
        _warn_typed_storage_removal()
        return self._untyped_storage

    def _new_wrapped_storage(self, untyped_storage):
        return TypedStorage(wrap_storage=untyped_storage, dtype=self.dtype, _internal=True)

    def _element_size(self):
        return _element_size(self.dtype)

    def element_size(self):
        _warn_typed_storage_removal()
        return self._element_size()

    def _size(self):
        return self._untyped_storage.nbytes() // self._element_size()

    def size(self):
        _warn_typed_storage_removal()
        return self._size()

    def __len__(self):
        _warn_typed_storage_removal()
        return self._size()

    def _nbytes(self):
        return self._untyped_storage.nbytes()

    def nbytes(self):
        _warn_typed_storage_removal()
        return self._nbytes()

    def _data_ptr(self):
        return self._untyped_storage.data_ptr()

    def data_ptr(self):
        _warn_typed_storage_removal()
        return self._data_ptr()

    def resizable(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.resizable()

    @property
    def _cdata(self):
        return self._untyped_storage._cdata

    def _is_shared(self):
        return False

    def is_shared(self):
        _warn_typed_storage_removal()
        return False

    def is_pinned(self, device="cuda"):
        _warn_typed_storage_removal()
        return False

    def _pickle_storage_type(self):
        return _legacy_name(self.dtype)[len("torch.") :]

    def pickle_storage_type(self):
        _warn_typed_storage_removal()
        return self._pickle_storage_type()

    def type(self, dtype=None, non_blocking=False):
        _warn_typed_storage_removal()
        if dtype is None:
            return _legacy_name(self.dtype)
        if isinstance(dtype, str):
            for cls in _storage_classes:
                if cls not in (UntypedStorage, TypedStorage) and _legacy_name(cls._dtype) == dtype:
                    return self._to(cls._dtype)
            raise RuntimeError(f"invalid storage type {dtype}")
        return self._to(dtype._dtype if isinstance(dtype, _LegacyStorageMeta) else dtype)

    # ---- element access ----------------------------------------------
    def _as_tensor(self):
        """A 1-d tensor of this storage's dtype viewing every element."""
        t = _C.empty(0, dtype=self.dtype, device=self.device)
        return t.set_(self._untyped_storage, 0, (self._size(),), (1,))

    def _as_tensor_of(self, dtype):
        return self._as_tensor() if dtype == self.dtype else self._as_tensor().to(dtype)

    def _data(self):
        if self.device.type == "meta":
            raise _meta_refusal(self.device)
        return self._as_tensor()

    def _getitem(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return self._data()[_index(idx, self._size())].item()

    def __getitem__(self, idx):
        _warn_typed_storage_removal()
        return self._getitem(idx)

    def _setitem(self, idx, value):
        if not isinstance(idx, (int, slice)):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        if isinstance(value, (UntypedStorage, TypedStorage)):
            raise RuntimeError(f"cannot set item with value type {type(value)}")
        data = self._data()
        if isinstance(idx, slice):
            data[idx] = value
        else:
            data[_index(idx, self._size())] = value

    def __setitem__(self, idx, value):
        _warn_typed_storage_removal()
        self._setitem(idx, value)

    def fill_(self, value):
        _warn_typed_storage_removal()
        self._setitem(slice(0, self._size()), value)
        return self

    def __iter__(self):
        _warn_typed_storage_removal()
        return iter(self._data().tolist())

    def tolist(self):
        _warn_typed_storage_removal()
        return self._data().tolist()

    def copy_(self, source, non_blocking=None):
        _warn_typed_storage_removal()
        if isinstance(source, (TypedStorage, UntypedStorage)) and source.device.type == "meta" \
                and self.device.type != "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        if isinstance(source, TypedStorage):
            src = source._as_tensor()
        elif isinstance(source, UntypedStorage):
            self._untyped_storage.copy_(source)
            return self
        else:
            raise TypeError(f"copy_(): expected a storage, got {type(source).__name__}")
        if src.numel() != self._size():
            raise RuntimeError("size does not match")
        if self._size():
            self._data().copy_(src)
        return self

    def clone(self):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.clone())

    def _resize_(self, size):
        self._untyped_storage.resize_(size * self._element_size())

    def resize_(self, size):
        """Resizes in place; returns ``None`` as PyTorch's does."""
        _warn_typed_storage_removal()
        self._resize_(size)

    def _share_memory_(self):
        return self._untyped_storage.share_memory_()

    def share_memory_(self):
        _warn_typed_storage_removal()
        return self._share_memory_()

    def _share_fd_cpu_(self, *args, **kwargs):
        return self._untyped_storage._share_fd_cpu_(*args, **kwargs)

    def _write_file(self, f, is_real_file, save_size, element_size):
        return self._untyped_storage._write_file(f, is_real_file, save_size, element_size)

    def _share_filename_cpu_(self, *args, **kwargs):
        return self._untyped_storage._share_filename_cpu_(*args, **kwargs)

    def cpu(self):
        _warn_typed_storage_removal()
        if self.device.type == "cpu":
            return self
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def _to(self, dtype):
        if dtype == self.dtype:
            return self
        converted = self._data().to(dtype)
        return TypedStorage(
            wrap_storage=converted.untyped_storage(), dtype=dtype, _internal=True
        )

    def double(self):
        _warn_typed_storage_removal()
        return self._to(_C.double)

    def float(self):
        _warn_typed_storage_removal()
        return self._to(_C.float)

    def half(self):
        _warn_typed_storage_removal()
        return self._to(_C.half)

    def bfloat16(self):
        _warn_typed_storage_removal()
        return self._to(_C.bfloat16)

    def long(self):
        _warn_typed_storage_removal()
        return self._to(_C.long)

    def int(self):
        _warn_typed_storage_removal()
        return self._to(_C.int)

    def short(self):
        _warn_typed_storage_removal()
        return self._to(_C.short)

    def char(self):
        _warn_typed_storage_removal()
        return self._to(_C.int8)

    def byte(self):
        _warn_typed_storage_removal()
        return self._to(_C.uint8)

    def bool(self):
        _warn_typed_storage_removal()
        return self._to(_C.bool)

    def complex_float(self):
        _warn_typed_storage_removal()
        return self._to(_C.cfloat)

    def complex_double(self):
        _warn_typed_storage_removal()
        return self._to(_C.cdouble)

    def __copy__(self):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.clone())

    def _deepcopy(self, memo):
        return self._new_wrapped_storage(_copy.deepcopy(self._untyped_storage, memo))

    def __deepcopy__(self, memo):
        _warn_typed_storage_removal()
        return self._deepcopy(memo)

    def __sizeof__(self):
        _warn_typed_storage_removal()
        return object.__sizeof__(self) + self._nbytes()

    def __repr__(self):
        _warn_typed_storage_removal()
        info = f"[{_TYPED_NAME}(dtype={self.dtype}, device={self.device}) of size {self._size()}]"
        if self.device.type == "meta":
            return "...\n" + info
        return " " + "\n ".join(str(x) for x in self._data().tolist()) + "\n" + info

    __str__ = __repr__

    @classmethod
    def from_buffer(cls, buffer, byte_order="native", count=-1, offset=0, dtype=None):
        """The elements packed in ``buffer`` (``byte_order`` ``'native'``,
        ``'little'`` or ``'big'``), as in ``torch.FloatStorage.from_buffer``."""
        if cls is not TypedStorage and issubclass(cls, _LegacyStorage):
            dtype = cls._dtype
        elif dtype is None:
            raise RuntimeError("from_buffer: must specify a 'dtype'")
        raw = bytes(memoryview(buffer))[offset:]
        size = _element_size(dtype)
        if count < 0:
            count = len(raw) // size
        raw = raw[: count * size]
        if byte_order not in ("native", _sys.byteorder) and size > 1:
            raw = b"".join(raw[i : i + size][::-1] for i in range(0, len(raw), size))
        if dtype == _C.bool:
            raw = bytes(1 if b else 0 for b in raw)
        untyped = UntypedStorage(list(raw))
        return cls._wrap(untyped, dtype)

    @classmethod
    def _wrap(cls, untyped, dtype):
        return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)


def _element_size(dtype):
    return _C.empty(0, dtype=dtype).element_size()


_LEGACY_NAMES = {}


def _legacy_name(dtype):
    return _LEGACY_NAMES.get(dtype, f"torch.{dtype}Storage")


class _LegacyStorageMeta(type):
    _dtype = None

    @property
    def dtype(cls):
        """The class's dtype (warns, as PyTorch's does; ``_dtype`` does not)."""
        _warn_typed_storage_removal()
        return cls._dtype

    def __instancecheck__(cls, instance):
        if type(instance) is cls:
            return True
        return (
            isinstance(instance, TypedStorage)
            and cls._dtype is not None
            and instance.dtype == cls._dtype
            and instance.device.type == "cpu"
        )


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """Base of ``FloatStorage`` and friends (fixed dtype, CPU)."""

    _dtype = None

    def __new__(cls, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        if cls is _LegacyStorage:
            raise RuntimeError("Only child classes of _LegacyStorage can be instantiated")
        return cls._legacy_new(args, wrap_storage, dtype, device)


_storage_classes = set()


def _make_legacy(name, dtype):
    cls = _LegacyStorageMeta(name, (_LegacyStorage,), {"_dtype": dtype, "__module__": "torchcore"})
    _LEGACY_NAMES[dtype] = f"torch.{name}"
    _storage_classes.add(cls)
    return cls


DoubleStorage = _make_legacy("DoubleStorage", _C.float64)
FloatStorage = _make_legacy("FloatStorage", _C.float32)
HalfStorage = _make_legacy("HalfStorage", _C.float16)
BFloat16Storage = _make_legacy("BFloat16Storage", _C.bfloat16)
LongStorage = _make_legacy("LongStorage", _C.int64)
IntStorage = _make_legacy("IntStorage", _C.int32)
ShortStorage = _make_legacy("ShortStorage", _C.int16)
CharStorage = _make_legacy("CharStorage", _C.int8)
ByteStorage = _make_legacy("ByteStorage", _C.uint8)
BoolStorage = _make_legacy("BoolStorage", _C.bool)
ComplexFloatStorage = _make_legacy("ComplexFloatStorage", _C.complex64)
ComplexDoubleStorage = _make_legacy("ComplexDoubleStorage", _C.complex128)

_storage_classes.update({UntypedStorage, TypedStorage})


def _typed_storage_of(tensor, warn=True):
    """``tensor.storage()``: a TypedStorage of the tensor's dtype."""
    if warn:
        _warn_typed_storage_removal(stacklevel=3)
    return TypedStorage(wrap_storage=tensor.untyped_storage(), dtype=tensor.dtype, _internal=True)


def _dtype_to_storage_type_map():
    """``torch.storage._dtype_to_storage_type_map()``: dtype → legacy class name."""
    return {cls._dtype: cls.__name__ for cls in _storage_classes if isinstance(cls, _LegacyStorageMeta)
            and cls._dtype is not None}


def _storage_type_of(tensor):
    """``tensor.storage_type()``: the legacy storage class of its dtype."""
    name = _dtype_to_storage_type_map()[tensor.dtype]
    return globals()[name]
