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


# The legacy CUDA storage classes (``torch.cuda.FloatStorage`` ...): they
# exist, their dtype is known, and using them raises what PyTorch raises on
# a machine without CUDA.
from . import storage as _storage  # noqa: E402

_NO_DRIVER = (
    "Found no NVIDIA driver on your system. Please check that you have an "
    "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"
)


class _CudaLegacyStorageMeta(_storage._LegacyStorageMeta):
    def __instancecheck__(cls, instance):
        # No storage here is on a CUDA device.
        return type(instance) is cls


class _CudaLegacyStorage(_storage._LegacyStorage, metaclass=_CudaLegacyStorageMeta):
    """Base of ``torchcore.cuda.FloatStorage`` and friends."""

    def __new__(cls, *args, **kwargs):
        raise RuntimeError(_NO_DRIVER)

    @classmethod
    def from_buffer(cls, *args, **kwargs):
        raise RuntimeError("from_buffer: Not available for CUDA storage")

    @classmethod
    def _new_with_weak_ptr(cls, *args, **kwargs):
        raise RuntimeError("_new_with_weak_ptr: Not available for CUDA storage")

    @classmethod
    def _new_shared_filename(cls, *args, **kwargs):
        raise RuntimeError("_new_shared_filename: Not available for CUDA storage")


def _make_cuda_storage(name, dtype):
    return _CudaLegacyStorageMeta(
        name, (_CudaLegacyStorage,), {"_dtype": dtype, "__module__": "torchcore.cuda"}
    )


for _name in (
    "DoubleStorage", "FloatStorage", "HalfStorage", "BFloat16Storage", "LongStorage",
    "IntStorage", "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage",
    "ComplexFloatStorage", "ComplexDoubleStorage",
):
    globals()[_name] = _make_cuda_storage(_name, getattr(_storage, _name)._dtype)
del _name
