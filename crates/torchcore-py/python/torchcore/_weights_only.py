"""The Python side of ``torchcore.serialization``'s allowlist.

``load`` reads checkpoints with the Rust weights-only VM, which never calls
anything. Globals the user allowlisted with ``add_safe_globals`` /
``safe_globals`` have to be called, so a checkpoint that names them is read
again here, by a restricted unpickler with torch's weights-only rules:
``GLOBAL`` resolves only the built-in allowlist (mapped to torchcore's own
rebuild functions) and the user's globals, modules ``sys``, ``os``,
``posix`` and ``nt`` are refused even when allowlisted, ``REDUCE`` calls
only allowlisted callables, ``NEWOBJ`` creates only allowlisted classes,
``BUILD`` sets state only on instances of them (or of ``OrderedDict``),
and ``INST``, ``OBJ`` and the extension-registry opcodes are refused.

Also here: the opcodes ``save`` writes for objects only Python can pickle,
and ``get_unsafe_globals_in_checkpoint``.
"""

import _compat_pickle
import codecs
import collections
import io
import os
import pickle
import pickletools
import zipfile

import torchcore

from . import serialization as _ser

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")

_STORAGE_DTYPES = {
    "ByteStorage": "uint8", "CharStorage": "int8", "ShortStorage": "int16",
    "IntStorage": "int32", "LongStorage": "int64", "HalfStorage": "float16",
    "FloatStorage": "float32", "DoubleStorage": "float64",
    "ComplexHalfStorage": "complex32", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128", "BoolStorage": "bool",
    "BFloat16Storage": "bfloat16",
}


class _StorageType:
    """What ``GLOBAL torch.FloatStorage`` (or ``UntypedStorage``) stands for
    here: only ever the ``storage_type`` of a persistent id."""

    def __init__(self, dtype, untyped):
        self.dtype = dtype
        self.untyped = untyped


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    return torchcore.empty_strided(size, stride, dtype=dtype, device="meta",
                                   requires_grad=requires_grad)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
                       backward_hooks, metadata=None):
    t = torchcore.empty(0, dtype=storage.dtype, device=storage.device).set_(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad,
                       backward_hooks, dtype, metadata=None):
    typed = torchcore.TypedStorage(wrap_storage=storage.untyped(), dtype=dtype, _internal=True)
    return _rebuild_tensor_v2(typed, storage_offset, size, stride, requires_grad, backward_hooks)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    if requires_grad:
        data.requires_grad_(True)
    return data


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _rebuild_parameter(data, requires_grad, backward_hooks)


def _builtin_allowed():
    """``{"module.name": object}`` of the built-in allowlist (the globals
    the Rust VM accepts), as objects this unpickler uses."""
    out = {
        "collections.OrderedDict": collections.OrderedDict,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._utils._rebuild_meta_tensor_no_storage": _rebuild_meta_tensor_no_storage,
        "torch.Size": torchcore.Size,
        "torch.device": torchcore.device,
        "torch.UntypedStorage": _StorageType(torchcore.uint8, True),
        "torch.storage.UntypedStorage": _StorageType(torchcore.uint8, True),
        "builtins.set": set,
        "builtins.frozenset": frozenset,
        "builtins.complex": complex,
        "builtins.bytearray": bytearray,
        "_codecs.encode": codecs.encode,
    }
    for cls, name in _STORAGE_DTYPES.items():
        out["torch." + cls] = _StorageType(getattr(torchcore, name), False)
    for name in dir(torchcore):
        obj = getattr(torchcore, name)
        if isinstance(obj, torchcore.dtype):
            out["torch." + name] = obj
    return out


def _unsupported(full_path):
    shown = full_path
    if full_path.startswith("builtins."):
        shown = full_path[len("builtins."):]
    return pickle.UnpicklingError(
        f"Weights only load failed: Unsupported global: GLOBAL {shown} was not an allowed global "
        f"by default. Please use `torch.serialization.add_safe_globals([{shown}])` or the "
        f"`torch.serialization.safe_globals([{shown}])` context manager to allowlist this global "
        "if you trust this class/function.")


def _full_path(module, name, proto):
    if proto < 3:
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
    return module, f"{module}.{name}"


class _Unpickler(pickle._Unpickler):
    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, records, big_endian, meta=False):
        super().__init__(file, encoding="utf-8")
        self._records = records
        self._big = big_endian
        self._meta = meta
        self._storages = {}
        self._builtin = _builtin_allowed()
        self._user = _ser._user_allowed_globals()
        self._allowed = list(self._builtin.values()) + list(self._user.values())

    def _is_allowed(self, obj):
        # Equal also counts (as torch's `in`): a classmethod such as
        # `ZoneInfo._unpickle` is a new bound method at each access. Only
        # objects of one type are compared, so no tensor compares itself.
        return any(obj is a or (type(obj) is type(a) and obj == a) for a in self._allowed)

    def find_class(self, module, name):
        module, full = _full_path(module, name, self.proto)
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Weights only load failed: Trying to load unsupported GLOBAL {full} whose module "
                f"{module} is blocked.")
        if full in self._builtin:
            return self._builtin[full]
        if full in self._user:
            return self._user[full]
        raise _unsupported(full)

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) < 5 or pid[0] != "storage":
            raise pickle.UnpicklingError(f"Weights only load failed: unknown persistent id {pid!r}")
        storage_type, key, location, numel = pid[1], str(pid[2]), pid[3], pid[4]
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError("Weights only load failed: a persistent id without a storage type")
        if self._meta:
            # map_location='meta': no record is read (as torch).
            if key not in self._storages:
                nbytes = numel * (1 if storage_type.untyped else storage_type.dtype.itemsize)
                self._storages[key] = torchcore.UntypedStorage(nbytes, device="meta")
            return torchcore.TypedStorage(wrap_storage=self._storages[key],
                                          dtype=storage_type.dtype, _internal=True)
        if location != "cpu" and not str(location).startswith("cpu"):
            raise RuntimeError(
                f"Attempting to deserialize object on a {str(location).split(':')[0].upper()} device "
                "torchcore cannot load to; use map_location='cpu'")
        if key in self._storages:
            untyped = self._storages[key]
        else:
            raw = self._records(f"data/{key}")
            untyped = torchcore.tensor(memoryview(raw).tolist(), dtype=torchcore.uint8).untyped_storage()
            if self._big and not storage_type.untyped:
                untyped.byteswap(storage_type.dtype)
            self._storages[key] = untyped
        return torchcore.TypedStorage(wrap_storage=untyped, dtype=storage_type.dtype, _internal=True)

    def load_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        if not self._is_allowed(func):
            msg = f"Weights only load failed: Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                msg += f" which belongs to {func.__self__}"
            raise pickle.UnpicklingError(msg)
        self.stack[-1] = func(*args)
    dispatch[pickle.REDUCE[0]] = load_reduce

    def _new(self, cls, args, kwargs):
        if not isinstance(cls, type) or not self._is_allowed(cls):
            raise pickle.UnpicklingError(
                "Weights only load failed: Can only create new object for nn.Parameter or classes "
                f"allowlisted via `add_safe_globals` but got {cls}")
        return cls.__new__(cls, *args, **kwargs)

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, {}))
    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load_newobj_ex(self):
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, kwargs))
    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex

    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is collections.OrderedDict:
            inst.__dict__.update(state)
        elif self._is_allowed(type(inst)):
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None and getattr(type(inst), "__setstate__", None) is not None:
                setstate(state)
                return
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                inst.__dict__.update(state)
            if slotstate:
                for k, v in slotstate.items():
                    setattr(inst, k, v)
        else:
            raise pickle.UnpicklingError(
                "Weights only load failed: Can only build Tensor, Parameter, OrderedDict or types "
                f"allowlisted via `add_safe_globals`, but got {type(inst)}")
    dispatch[pickle.BUILD[0]] = load_build

    def _refused(self):
        raise pickle.UnpicklingError(
            "Weights only load failed: Unsupported operand (INST, OBJ and the extension registry "
            "are not supported)")

    for _op in (pickle.INST, pickle.OBJ, pickle.EXT1, pickle.EXT2, pickle.EXT4, pickle.PERSID):
        dispatch[_op[0]] = _refused
    del _op


def _archive(f):
    """``(records(name) -> bytes, has_record(name))`` of the ZIP archive
    ``f`` (a path or a file object at the archive's start)."""
    z = zipfile.ZipFile(f)
    names = z.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pkl) != 1:
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    prefix = pkl[0][: -len("data.pkl")]

    def record(name):
        return z.read(prefix + name)

    return record, lambda name: (prefix + name) in z.NameToInfo


def load_with_user_globals(f, map_location, unmarked_big_endian, refused):
    """Loads a ZIP checkpoint naming globals the user allowlisted; other
    files raise ``refused`` (the Rust loader's error)."""
    is_zip = zipfile.is_zipfile(f) if isinstance(f, str) else _ser._is_zipfile(f)
    if not is_zip:
        raise refused
    meta = _is_meta_location(map_location)
    if not meta and map_location not in (None, "cpu") and str(map_location) != "cpu":
        raise NotImplementedError(
            "torchcore.load: map_location other than 'cpu' or 'meta' with allowlisted globals")
    record, has = _archive(f)
    big = record("byteorder") == b"big" if has("byteorder") else unmarked_big_endian
    return _Unpickler(io.BytesIO(record("data.pkl")), record, big, meta).load()


def _is_meta_location(map_location):
    """Whether ``map_location`` is the meta device itself (``'meta'`` or a
    meta ``device``), as torch's ``_is_meta_location``."""
    if isinstance(map_location, str):
        return map_location == "meta"
    return getattr(map_location, "type", None) == "meta" and not isinstance(map_location, dict)


def unsafe_globals(f):
    """The globals ``f``'s pickle names that ``load`` refuses."""
    with _ser._open_file_like(f, "rb") as opened:
        if not _ser._is_zipfile(opened):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        record, _ = _archive(opened)
        data = record("data.pkl")
    allowed = set(_builtin_allowed()) | set(_ser._user_allowed_globals())
    found = set()
    strings = []
    memo = {}
    proto = 2
    for op, arg, _ in pickletools.genops(data):
        if op.name == "PROTO":
            proto = arg
        elif op.name == "GLOBAL":
            module, name = arg.split(" ", 1)
            found.add(_full_path(module, name, proto)[1])
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
            strings.append(arg)
        elif op.name == "MEMOIZE" and strings:
            memo[len(memo)] = strings[-1]
        elif op.name in ("BINPUT", "LONG_BINPUT", "PUT") and strings:
            memo[arg] = strings[-1]
        elif op.name in ("BINGET", "LONG_BINGET", "GET") and arg in memo:
            strings.append(memo[arg])
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            found.add(f"{strings[-2]}.{strings[-1]}")
    return sorted(found - allowed)


class _FragmentPickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, torchcore.Tensor) or torchcore.is_storage(obj):
            raise TypeError(
                "torchcore.save cannot save a tensor or storage inside a "
                "Python object other than a list, tuple, set, dict or OrderedDict")
        return None


_MEMO_OPS = {"PUT", "BINPUT", "LONG_BINPUT", "GET", "BINGET", "LONG_BINGET", "MEMOIZE",
             "PERSID", "BINPERSID", "FRAME"}


def pickle_opcodes(obj):
    """See ``serialization._pickle_opcodes``."""
    buf = io.BytesIO()
    p = _FragmentPickler(buf, protocol=2)
    p.fast = True  # no memo: the opcodes are spliced into another pickle
    p.dump(obj)
    data = buf.getvalue()
    for op, _, _ in pickletools.genops(data):
        if op.name in _MEMO_OPS:
            raise TypeError(
                f"torchcore.save cannot save a {type(obj).__name__}: its pickle uses {op.name}")
    if not (data.startswith(b"\x80\x02") and data.endswith(b".")):
        raise TypeError(f"torchcore.save cannot save a {type(obj).__name__}")
    return data[2:-1]
