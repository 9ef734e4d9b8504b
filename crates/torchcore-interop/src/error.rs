//! The error type of interop operations.

use c10_core::TensorError;
use c10_storage::StorageError;

/// Why an interop operation failed. Every message names the dtype, device,
/// layout, file or field at fault, and says what to do where there is
/// something to do (clone, make contiguous, copy to the CPU).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InteropError {
    /// The dtype has no representation in the other format (or the other
    /// format's type has none here).
    #[error("{0}")]
    Dtype(String),
    /// The device has no representation in the other format.
    #[error("{0}")]
    Device(String),
    /// The layout cannot be expressed on the other side (negative strides,
    /// overlapping elements for a mutable view, misaligned data, ...).
    #[error("{0}")]
    Layout(String),
    /// A foreign structure or file is malformed (null pointers, negative
    /// sizes, an unknown DLPack major version, a bad safetensors header).
    #[error("{0}")]
    Format(String),
    /// A tensor operation failed.
    #[error(transparent)]
    Tensor(#[from] TensorError),
    /// A storage operation failed (for example a write to a read-only
    /// storage, whose message says to clone the tensor first).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Mapping a file failed.
    #[error(transparent)]
    Mmap(#[from] alloc_cpu::mmap::MmapError),
    /// The `safetensors` crate rejected a header or failed to write a file.
    #[cfg(feature = "safetensors")]
    #[cfg_attr(docsrs, doc(cfg(feature = "safetensors")))]
    #[error("safetensors: {0}")]
    Safetensors(#[from] ::safetensors::SafeTensorError),
}

/// Shorthand for results of interop operations.
pub type Result<T, E = InteropError> = std::result::Result<T, E>;
