"""Memory history and snapshots, following ``torch.cuda.memory``.

``_record_memory_history``, ``_snapshot`` and ``_dump_snapshot`` take
PyTorch's arguments and produce PyTorch's snapshot dict and pickle, so
PyTorch's tools read them unchanged::

    import torchcore
    torchcore.memory._record_memory_history(max_entries=100_000)
    ...  # run the code to debug
    torchcore.memory._dump_snapshot("snapshot.pickle")
    # python -m torch.cuda._memory_viz trace_plot snapshot.pickle -o trace.html
    # or drag snapshot.pickle onto https://pytorch.org/memory_viz
    torchcore.memory._dump_html("memory.html")  # torchcore's own picture

Differences from PyTorch:

* ``device`` chooses the allocator: ``None`` or ``"cpu"`` is the CPU
  allocator that torchcore's CPU tensors use; ``"cuda"`` (or
  ``"cuda:N"``) is the CUDA caching allocator of every device, in a
  torchcore built with the ``cuda`` feature.
* The recorded stacks are Rust stacks (``stacks="all"``); Python frames
  are not captured, so ``stacks="python"`` records no frames.
* On the CPU there is no cache: each live allocation is a segment of one
  block, and the trace holds ``segment_alloc``/``segment_free`` around each
  allocation and free.
"""

import sys

from . import _C

__all__ = ["_record_memory_history", "_snapshot", "_dump_snapshot", "_dump_html"]


def _device_kind(device):
    if device is None:
        return "cpu"
    d = str(device)
    kind = d.split(":", 1)[0]
    if kind.isdigit():
        return "cuda"
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"memory history is available for 'cpu' and 'cuda', not {d!r}")
    return kind


def _check_option_in(option, valid, error):
    if option not in valid:
        raise RuntimeError(error)


def _record_memory_history(
    enabled="all",
    context="all",
    stacks="all",
    max_entries=sys.maxsize,
    device=None,
    clear_history=False,
    *args,
    **kwargs,
):
    """Start (``enabled="all"`` or ``"state"``) or stop (``None``) recording
    the allocator's history, as ``torch.cuda.memory._record_memory_history``.

    ``enabled="all"`` keeps a trace of every alloc/free/segment event (at
    most ``max_entries``, the oldest overwritten); ``"state"`` keeps only
    the stacks of live allocations. ``context`` chooses which events carry
    a stack (``None``, ``"state"``, ``"alloc"``, ``"all"``); ``stacks="all"``
    records Rust stacks. The legacy boolean form
    (``_record_memory_history(True, trace_alloc_max_entries=...)``) is
    accepted too. Other keyword arguments of PyTorch's signature
    (``compile_context``, ``skip_actions``, ...) are accepted and ignored.
    """
    if isinstance(enabled, bool):
        # PyTorch's legacy form: (enabled, record_context=True,
        # trace_alloc_max_entries=1, trace_alloc_record_context=False, ...).
        record_context = context if isinstance(context, bool) else kwargs.get("record_context", True)
        trace_max = kwargs.get("trace_alloc_max_entries", 1)
        trace_ctx = kwargs.get("trace_alloc_record_context", False)
        _C._memory_record_history(
            _device_kind(device),
            enabled,
            trace_max > 1,
            bool(record_context or trace_ctx),
            False,
            int(trace_max),
            False,
        )
        return
    if enabled is not None:
        _check_option_in(enabled, ("state", "all"), "expected state to be 'state', 'all', or None")
    if context is not None:
        _check_option_in(
            context,
            ("state", "alloc", "all"),
            "expected context to be 'state', 'alloc', 'all', or None",
        )
    _check_option_in(stacks, ("python", "all"), "expected stacks to be 'python', or 'all'")
    want_stacks = context is not None and stacks == "all"
    _C._memory_record_history(
        _device_kind(device),
        enabled is not None,
        enabled == "all",
        want_stacks,
        want_stacks and context == "all",
        int(max_entries),
        bool(clear_history),
    )


def _snapshot_bytes(device):
    return _C._memory_snapshot_pickle(_device_kind(device))


def _snapshot(device=None, augment_with_fx_traces=False):
    """The snapshot dict, as ``torch.cuda.memory._snapshot()``: ``segments``
    (with their ``blocks``), ``device_traces``, ``allocator_settings``."""
    import pickle

    return pickle.loads(_snapshot_bytes(device))


def _dump_snapshot(filename="dump_snapshot.pickle", augment_with_fx_traces=False, device=None):
    """Write the snapshot pickle (what ``torch.cuda.memory._dump_snapshot``
    writes), for ``python -m torch.cuda._memory_viz`` or
    https://pytorch.org/memory_viz."""
    data = _snapshot_bytes(device)
    with open(filename, "wb") as f:
        f.write(data)


def _dump_html(filename="memory.html", snapshot=None, device=None, title="Memory snapshot"):
    """Write torchcore's self-contained HTML picture (inline SVG, no
    script) of ``snapshot`` (a dict from ``_snapshot``, the path of a dumped
    pickle, or ``None`` for a fresh snapshot of ``device``)."""
    import pickle

    if snapshot is None:
        data = _snapshot_bytes(device)
    elif isinstance(snapshot, (str, bytes)) or hasattr(snapshot, "__fspath__"):
        with open(snapshot, "rb") as f:
            data = f.read()
    else:
        data = pickle.dumps(snapshot, protocol=2)
    html = _C._memory_render_html(data, title)
    with open(filename, "w", encoding="utf-8") as f:
        f.write(html)
