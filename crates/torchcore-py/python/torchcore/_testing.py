"""Test helpers: a Rust-side container of tensor handles.

``Holder(t)`` keeps a Rust ``Tensor`` handle to ``t``'s ``TensorImpl``, as a
C++ structure holding an ``at::Tensor`` does in PyTorch; ``holder.get()``
hands it back to Python, which returns the preserved object.
"""

from ._C import Holder, _fast_alloc, _same_impl  # noqa: F401
