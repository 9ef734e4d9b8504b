"""``torchcore.serialization``: PyTorch checkpoint files.

``save`` writes what ``torch.save`` writes (the ZIP format, pickle protocol
2, every record 64-byte aligned); ``torch.load(weights_only=True)``, with or
without ``mmap=True``, reads it back bit-exactly. ``load`` reads what
``torch.save`` writes, always the way ``torch.load(weights_only=True)``
does: a fixed allowlist of globals, and nothing from the file is ever
imported or called. Both are implemented in Rust (crate ``torchcore-pt``);
see ``docs/checkpoints.md``.
"""

import os

from . import _C

__all__ = ["save", "load", "DEFAULT_PROTOCOL", "get_safe_globals", "add_safe_globals"]

#: The pickle protocol ``save`` writes (torch's default).
DEFAULT_PROTOCOL = 2

_SAFE_GLOBALS = (
    "collections.OrderedDict", "torch._utils._rebuild_tensor_v2",
    "torch._utils._rebuild_tensor_v3", "torch._utils._rebuild_parameter",
    "torch._utils._rebuild_parameter_with_state", "torch.Size", "torch.device",
    "torch.<dtype>", "torch.<Type>Storage", "torch.storage.UntypedStorage",
    "builtins.set", "builtins.frozenset", "builtins.complex", "builtins.bytearray",
    "_codecs.encode",
)


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Saves ``obj`` to ``f`` (a path or a writable binary file) as ``torch.save``.

    ``obj`` may hold tensors, dtypes, devices, ``Size``, lists, tuples,
    sets, dicts, ``OrderedDict`` and plain values. Tensors over one storage
    are saved once, as views (offset and strides kept).
    """
    if pickle_module is not None:
        raise NotImplementedError("torchcore.save: pickle_module is not supported")
    if pickle_protocol != DEFAULT_PROTOCOL:
        raise NotImplementedError("torchcore.save writes pickle protocol 2 (torch's default)")
    if _disable_byteorder_record:
        raise NotImplementedError("torchcore.save always writes the byteorder record")
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    # _use_new_zipfile_serialization=False: the legacy (pre-1.6) format.
    _C._pt_save(obj, f, not _use_new_zipfile_serialization)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Loads a ``torch.save`` file (a path or a readable binary file).

    Always weights-only: ``weights_only=False`` is refused, as it would mean
    running code from the file. ``map_location`` may be ``None`` (storages
    load where they were saved: ``cpu`` only) or ``'cpu'``. ``mmap=True``
    (``f`` must be a path) maps each storage from the file, privately:
    the file must not be modified or truncated while the tensors live.
    """
    if weights_only is False:
        raise ValueError("torchcore.load is always weights-only: it never runs code from the file")
    if pickle_module is not None or pickle_load_args:
        raise NotImplementedError("torchcore.load: pickle_module and pickle arguments are not supported")
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    return _C._pt_load(f, map_location, bool(mmap))


def get_safe_globals():
    """The globals ``load`` accepts (fixed; not extensible)."""
    return list(_SAFE_GLOBALS)


def add_safe_globals(safe_globals):
    """Not supported: torchcore's loader never calls Python code, so it
    cannot rebuild other classes."""
    raise NotImplementedError(
        "torchcore.load accepts a fixed allowlist of globals and never calls Python code; "
        "add_safe_globals is not supported")
