"""``torchcore.serialization``: PyTorch checkpoint files.

``save`` writes what ``torch.save`` writes (the ZIP format, pickle protocol
2, every record 64-byte aligned); ``torch.load(weights_only=True)``, with or
without ``mmap=True``, reads it back bit-exactly. ``load`` reads what
``torch.save`` writes, always the way ``torch.load(weights_only=True)``
does: a fixed allowlist of globals, and nothing from the file is ever
imported or called. Both are implemented in Rust (crate ``torchcore-pt``);
see ``docs/checkpoints.md``.
"""

import enum
import io
import os
import pickle
import sys
import threading
import zipfile

from . import _C

__all__ = ["save", "load", "DEFAULT_PROTOCOL", "get_safe_globals", "add_safe_globals",
           "clear_safe_globals", "safe_globals", "get_unsafe_globals_in_checkpoint", "skip_data",
           "LoadEndianness", "get_default_load_endianness", "set_default_load_endianness",
           "get_default_mmap_options", "set_default_mmap_options",
           "get_crc32_options", "set_crc32_options"]


class LoadEndianness(enum.Enum):
    """``torch.serialization.LoadEndianness``: the byte order ``load``
    assumes for a checkpoint without a ``byteorder`` record (files written
    before torch 1.13, or with ``_disable_byteorder_record=True``). A
    recorded byte order always wins."""

    NATIVE = 1
    LITTLE = 2
    BIG = 3


_default_load_endianness = None


def get_default_load_endianness():
    """``torch.serialization.get_default_load_endianness``: the
    ``LoadEndianness`` set, or ``None`` (little-endian, torch's default)."""
    return _default_load_endianness


def set_default_load_endianness(endianness):
    """``torch.serialization.set_default_load_endianness(endianness)``:
    ``None`` or a ``LoadEndianness``."""
    global _default_load_endianness
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _default_load_endianness = endianness


def _unmarked_big_endian():
    e = _default_load_endianness
    if e is LoadEndianness.BIG:
        return True
    if e is LoadEndianness.NATIVE:
        return sys.byteorder == "big"
    return False


_mmap_flags = None  # None: mmap.MAP_PRIVATE


def get_default_mmap_options():
    """``torch.serialization.get_default_mmap_options``: the flags
    ``load(mmap=True)`` maps with (``mmap.MAP_PRIVATE`` by default)."""
    import mmap as _mmap
    return _mmap.MAP_PRIVATE if _mmap_flags is None else _mmap_flags


class set_default_mmap_options:
    """``torch.serialization.set_default_mmap_options(flags)``:
    ``mmap.MAP_PRIVATE`` (copy-on-write; the default) or ``mmap.MAP_SHARED``
    (writes to the loaded tensors go to the file). Also a context manager
    that restores the previous flags on exit, as torch's."""

    def __init__(self, flags):
        import mmap as _mmap
        if flags != _mmap.MAP_PRIVATE and flags != _mmap.MAP_SHARED:
            raise ValueError(
                "Invalid argument in function set_default_mmap_options, "
                f"expected mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        global _mmap_flags
        self.prev = _mmap_flags
        _mmap_flags = flags

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        global _mmap_flags
        _mmap_flags = self.prev


_ZIP_MAGIC = b"PK\x03\x04"


_crc32_enabled = True


def get_crc32_options():
    """Whether ``save`` computes the CRC-32 of each record (default ``True``)."""
    return _crc32_enabled


def set_crc32_options(compute_crc32):
    """``torch.serialization.set_crc32_options``: with ``False``, ``save``
    skips the checksums and writes 0 in every CRC field, as torch does.
    ``load`` (and ``torch.load``) read such files: a record whose CRC field
    is 0 is not checked."""
    global _crc32_enabled
    # Stored as given (torch keeps the value in its config unconverted).
    _crc32_enabled = compute_crc32


def _is_zipfile(f):
    """``torch.serialization._is_zipfile``: whether the readable binary
    file ``f`` starts with a ZIP local header (the position is restored).
    Only the first four bytes are looked at, as torch does: a file that
    merely contains a ZIP directory further on is not one."""
    start = f.tell()
    magic = f.read(len(_ZIP_MAGIC))
    f.seek(start)
    return magic == _ZIP_MAGIC


class _open_file_like:
    """``torch.serialization._open_file_like(name_or_buffer, mode)``: a
    context manager giving a file opened from a path (closed on exit) or
    the buffer itself (left open)."""

    def __init__(self, name_or_buffer, mode):
        self._own = isinstance(name_or_buffer, (str, os.PathLike))
        self.file_like = open(os.fspath(name_or_buffer), mode) if self._own else name_or_buffer

    def __enter__(self):
        return self.file_like

    def __exit__(self, *args):
        if self._own:
            self.file_like.close()
        elif "w" in getattr(self.file_like, "mode", "") and hasattr(self.file_like, "flush"):
            self.file_like.flush()


class _open_zipfile_writer:
    """``torch.serialization._open_zipfile_writer``: writes named records
    (bytes, ``str`` or storages) into a checkpoint-style archive under the
    top folder ``archive/``, stored uncompressed (written with ``zipfile``;
    ``save`` writes checkpoints itself)."""

    def __init__(self, name_or_buffer):
        self._own = isinstance(name_or_buffer, (str, os.PathLike))
        self._file = open(os.fspath(name_or_buffer), "wb") if self._own else name_or_buffer
        self._zip = zipfile.ZipFile(self._file, "w", zipfile.ZIP_STORED)

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.write_end_of_file()

    def write_record(self, name, data, nbytes):
        if isinstance(data, str):
            data = data.encode()
        elif hasattr(data, "untyped"):  # a storage
            data = bytes(data.untyped().tolist())
        data = bytes(memoryview(data).cast("B")[:nbytes])
        self._zip.writestr("archive/" + name, data)

    def write_end_of_file(self):
        if self._zip is None:
            return
        if "archive/version" not in self._zip.NameToInfo:
            # What torch's writer adds at the end (its reader requires it).
            self._zip.writestr("archive/version", b"3\n")
        self._zip.close()
        self._zip = None
        if self._own:
            self._file.close()
        elif hasattr(self._file, "flush"):
            self._file.flush()


class _open_zipfile_reader:
    """``torch.serialization._open_zipfile_reader``: the records of a
    checkpoint archive by name, without its top folder (read with
    ``zipfile``; for inspection, not for loading tensors)."""

    def __init__(self, name_or_buffer):
        if isinstance(name_or_buffer, (str, os.PathLike)):
            name_or_buffer = os.fspath(name_or_buffer)
        self._zip = zipfile.ZipFile(name_or_buffer)
        names = self._zip.namelist()
        tops = {n.split("/", 1)[0] for n in names if "/" in n}
        if len(tops) != 1:
            raise RuntimeError("PytorchStreamReader failed locating file: archive has no single top folder")
        self._prefix = tops.pop() + "/"

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self._zip.close()

    def has_record(self, name):
        return (self._prefix + name) in self._zip.NameToInfo

    def get_record(self, name):
        if not self.has_record(name):
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        info = self._zip.getinfo(self._prefix + name)
        if info.compress_type != zipfile.ZIP_STORED or info.CRC != 0:
            return self._zip.read(self._prefix + name)
        # A record without a CRC (``set_crc32_options(False)``): read as
        # stored, unchecked (``zipfile`` would compare it with 0).
        fp = self._zip.fp
        pos = fp.tell()
        fp.seek(self.get_record_offset(name))
        data = fp.read(info.file_size)
        fp.seek(pos)
        return data

    def get_all_records(self):
        return [n[len(self._prefix):] for n in self._zip.namelist()]

    def get_record_offset(self, name):
        info = self._zip.getinfo(self._prefix + name)
        # The data follow the local header: 30 bytes, the name, the extra field.
        fp = self._zip.fp
        pos = fp.tell()
        fp.seek(info.header_offset + 26)
        head = fp.read(4)
        fp.seek(pos)
        return info.header_offset + 30 + int.from_bytes(head[:2], "little") + int.from_bytes(head[2:], "little")


#: The pickle protocol ``save`` writes (torch's default).
DEFAULT_PROTOCOL = 2


class _SerializationState(threading.local):
    def __init__(self):
        self.skip_data = False


_tls = _SerializationState()


class skip_data:
    """``torch.serialization.skip_data()``: a context manager under which
    ``save`` writes the archive's layout and pickle but zeros in place of
    every storage's bytes (sizes, strides, dtypes and sharing are kept), and
    ``load`` gives tensors whose values are unspecified (torchcore reads the
    records as they are). ``materialize_fake_tensors`` is accepted for
    torch's signature (torchcore has no fake tensors)."""

    def __init__(self, materialize_fake_tensors=False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._prev = _tls.skip_data
        _tls.skip_data = True
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _tls.skip_data = self._prev


def _pickle_opcodes(obj):
    """The protocol-2 opcodes ``pickle`` writes for ``obj``, without the
    ``PROTO`` header, the ``STOP`` and any memo opcode (``save`` splices
    them into its own pickle): what ``torch.save`` writes for an object
    that is not a tensor, a storage or a plain container. Tensors and
    storages inside such an object are refused (``save`` writes those
    itself, as shared records)."""
    from ._weights_only import pickle_opcodes
    return pickle_opcodes(obj)


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Saves ``obj`` to ``f`` (a path or a writable binary file) as ``torch.save``.

    ``obj`` may hold tensors, dtypes, devices, ``Size``, lists, tuples,
    sets, dicts, ``OrderedDict`` and plain values. Tensors over one storage
    are saved once, as views (offset and strides kept). Any other object
    (an instance of a class, a function, a ``namedtuple``) is pickled by
    Python's ``pickle`` as torch writes it; loading it needs its class
    allowlisted (``add_safe_globals``), as with ``torch.load``.
    """
    if pickle_module is not None:
        raise NotImplementedError("torchcore.save: pickle_module is not supported")
    if pickle_protocol != DEFAULT_PROTOCOL:
        raise NotImplementedError("torchcore.save writes pickle protocol 2 (torch's default)")
    if _disable_byteorder_record:
        raise NotImplementedError("torchcore.save always writes the byteorder record")
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    elif not hasattr(f, "write"):
        # torch checks the destination before pickling anything.
        raise AttributeError(
            f"expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    # _use_new_zipfile_serialization=False: the legacy (pre-1.6) format.
    _C._pt_save(obj, f, not _use_new_zipfile_serialization, bool(_crc32_enabled),
                bool(_tls.skip_data))
    if not isinstance(f, str) and hasattr(f, "flush"):
        # As torch: the bytes are in the file once save returns (a file
        # object reopened by name sees them).
        f.flush()


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Loads a ``torch.save`` file (a path or a readable binary file).

    Always weights-only: ``weights_only=False`` loads with the same
    allowlist (what a weights-only load accepts loads exactly as torch's
    unrestricted load would; anything else is refused rather than run).
    Globals allowlisted with ``add_safe_globals`` / ``safe_globals`` are
    accepted as torch's weights-only unpickler accepts them. ``map_location`` may be ``None`` (storages
    load where they were saved: ``cpu`` only) or ``'cpu'``. ``mmap=True``
    (``f`` must be a path) maps each storage from the file, privately:
    the file must not be modified or truncated while the tensors live.
    """
    # weights_only=False: no code from the file is ever run here, so the
    # weights-only loader serves both (docs/pytorch-map.md).
    # torch reads Python 2 strings as UTF-8 unless told otherwise.
    encoding = pickle_load_args.pop("encoding", "utf-8")
    if pickle_module is not None or pickle_load_args:
        raise NotImplementedError(
            "torchcore.load: pickle_module and pickle arguments other than encoding are not supported")
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    elif not (hasattr(f, "seek") and hasattr(f, "tell")):
        missing = "seek" if not hasattr(f, "seek") else "tell"
        raise AttributeError(
            f"'{type(f).__name__}' object has no attribute '{missing}'. You can only torch.load from a file "
            "that is seekable. Please pre-load the data into a buffer like io.BytesIO and try to "
            "load from it instead.")
    import mmap as _mmap
    shared = bool(mmap) and get_default_mmap_options() == _mmap.MAP_SHARED
    start = None if isinstance(f, str) else f.tell()
    try:
        return _C._pt_load(f, map_location, bool(mmap), _unmarked_big_endian(), shared, encoding)
    except pickle.UnpicklingError as e:
        # A global outside the built-in allowlist: with globals allowlisted
        # by the user, a ZIP checkpoint is read again by the Python
        # weights-only unpickler, which accepts those too (as torch's).
        if not _user_safe_globals or mmap:
            raise
        refused = e
    if start is not None:
        f.seek(start)
    from ._weights_only import load_with_user_globals
    return load_with_user_globals(f, map_location, _unmarked_big_endian(), refused)


# The globals the user allowlisted: objects, or (object, "module.name").
_user_safe_globals = []


def _global_name(g):
    if isinstance(g, tuple):
        return g[1]
    return f"{g.__module__}.{g.__qualname__}"


def _user_allowed_globals():
    """``{"module.name": object}`` of the allowlisted globals."""
    out = {}
    for g in _user_safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2 or not isinstance(g[1], str):
                raise ValueError(
                    "Expected tuple of length 2 where the second element is a string, "
                    f"but got {g}")
            out[g[1]] = g[0]
        else:
            out[_global_name(g)] = g
    return out


def get_safe_globals():
    """``torch.serialization.get_safe_globals()``: the globals allowlisted
    with ``add_safe_globals`` (the built-in allowlist is not listed)."""
    return list(_user_safe_globals)


def add_safe_globals(safe_globals):
    """``torch.serialization.add_safe_globals(globals)``: lets ``load``
    accept these classes and functions (or ``(object, "module.name")``
    pairs), as torch's weights-only unpickler does: ``load`` then calls
    them (``REDUCE``), creates instances of them (``NEWOBJ``) and sets
    their state (``BUILD``). Only add what you trust: this is the one way
    a checkpoint makes torchcore run code."""
    for g in safe_globals:
        if g not in _user_safe_globals:
            _user_safe_globals.append(g)


def clear_safe_globals():
    """``torch.serialization.clear_safe_globals()``."""
    _user_safe_globals.clear()


class safe_globals:
    """``torch.serialization.safe_globals(globals)``: a context manager
    that allowlists ``globals`` (as ``add_safe_globals``) inside it only."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        self._before = list(_user_safe_globals)
        add_safe_globals(self.safe_globals)

    def __exit__(self, exc_type, exc_value, traceback):
        _user_safe_globals[:] = self._before


def get_unsafe_globals_in_checkpoint(f):
    """``torch.serialization.get_unsafe_globals_in_checkpoint(f)``: the
    ``"module.name"`` strings of the globals ``f``'s pickle names that
    ``load`` would refuse (neither in the built-in allowlist nor added
    with ``add_safe_globals``). Nothing is unpickled."""
    from ._weights_only import unsafe_globals
    return unsafe_globals(f)
