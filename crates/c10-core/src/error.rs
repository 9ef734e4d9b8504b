//! The error type of tensor operations.

use c10_storage::{AllocError, StorageError};

/// Why a tensor operation failed. Messages follow PyTorch's wording where
/// PyTorch has one, with the values involved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TensorError {
    /// PyTorch raises `IndexError` for this one (dimension wrapping, select,
    /// narrow start, element indices).
    #[error("{0}")]
    Index(String),
    /// PyTorch raises `RuntimeError` (or `ValueError`) for this one.
    #[error("{0}")]
    Runtime(String),
    /// PyTorch raises `NotImplementedError`: the operation has no kernel for
    /// this dtype (`"arange_cpu" not implemented for 'Bool'`).
    #[error("{0}")]
    NotImplemented(String),
    /// The element type asked for is not the tensor's dtype.
    #[error("expected a tensor of dtype {expected} but this tensor has dtype {actual}")]
    DtypeMismatch {
        /// The dtype the caller's element type maps to.
        expected: String,
        /// The tensor's dtype.
        actual: String,
    },
    /// A storage-level failure (allocation, read-only, device memory).
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl From<AllocError> for TensorError {
    fn from(e: AllocError) -> Self {
        TensorError::Storage(StorageError::Alloc(e))
    }
}

/// A geometry container failure (too many dims to allocate, a dim out of
/// range) surfaces as PyTorch's `RuntimeError` with the container's message.
impl From<crate::sizes_and_strides::SizesAndStridesError> for TensorError {
    fn from(e: crate::sizes_and_strides::SizesAndStridesError) -> Self {
        TensorError::runtime(e.to_string())
    }
}

impl TensorError {
    /// Whether PyTorch would raise `IndexError` here.
    pub fn is_index_error(&self) -> bool {
        matches!(self, TensorError::Index(_))
    }

    pub(crate) fn runtime(msg: impl Into<String>) -> TensorError {
        TensorError::Runtime(msg.into())
    }

    pub(crate) fn index(msg: impl Into<String>) -> TensorError {
        TensorError::Index(msg.into())
    }
}

/// Shorthand for results of tensor operations.
pub type Result<T, E = TensorError> = std::result::Result<T, E>;
