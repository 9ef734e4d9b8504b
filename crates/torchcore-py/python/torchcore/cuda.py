"""``torch.cuda`` as seen from a build without CUDA devices: nothing is
available.  torchcore's CUDA caching allocator is a Rust API
(``alloc-cuda``); the Python package only makes CPU and meta tensors."""


def is_available():
    """``torch.cuda.is_available()``: ``False`` (no CUDA tensors here)."""
    return False


def device_count():
    """``torch.cuda.device_count()``: ``0``."""
    return 0


# The legacy CUDA tensor types exist, and raise when called, as in a torch
# build on a machine without CUDA.
from ._legacy import CUDA_TYPES as _CUDA_TYPES  # noqa: E402

globals().update(_CUDA_TYPES)
