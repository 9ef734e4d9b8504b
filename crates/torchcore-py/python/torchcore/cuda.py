"""``torch.cuda`` as seen from a build without CUDA devices: nothing is
available.  torchcore's CUDA caching allocator is a Rust API
(``alloc-cuda``); the Python package only makes CPU and meta tensors."""


def is_available():
    """``torch.cuda.is_available()``: ``False`` (no CUDA tensors here)."""
    return False


def device_count():
    """``torch.cuda.device_count()``: ``0``."""
    return 0
