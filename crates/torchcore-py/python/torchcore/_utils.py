"""The few helpers of ``torch._utils`` that code written for PyTorch reads."""

from . import _C


def _element_size(dtype):
    """``torch._utils._element_size(dtype)``: bytes per element of ``dtype``."""
    return _C.empty(0, dtype=dtype).element_size()
