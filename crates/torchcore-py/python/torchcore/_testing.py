"""Test helpers: a Rust-side container of tensor handles, and hooks.

``Holder(t)`` keeps a Rust ``Tensor`` handle to ``t``'s ``TensorImpl``, as a
C++ structure holding an ``at::Tensor`` does in PyTorch; ``holder.get()``
hands it back to Python, which returns the preserved object.

``_hold_storage_lock(t, write, seconds, on_locked=None)`` holds ``t``'s
storage lock from the calling thread (with the GIL released), calls
``on_locked()`` once it holds it, and takes the GIL again before letting go; ``_short_op_retries()`` counts the short copies that
found a lock held and ran again with the GIL released.
``_fast_alloc()`` and ``_direct_list_items()`` say whether the layout
checks at first use turned on the direct object allocation and the direct
filling of ``tolist()``'s lists.
"""

from ._C import (  # noqa: F401
    Holder,
    _direct_list_items,
    _fast_alloc,
    _hold_storage_lock,
    _same_impl,
    _short_op_retries,
)
