//! Errors of the CUDA backend.

use std::fmt;

use crate::config::ConfigError;
use crate::device::DeviceError;
use crate::error::CachingAllocatorError;

/// Why CUDA cannot be used in this process (the result of the
/// [probe](crate::cuda::is_available)).
///
/// Its `Display` always starts with `CUDA is not available: `.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CudaUnavailable {
    /// No loadable CUDA driver library (`libcuda.so.1`, `nvcuda.dll`, ...),
    /// or only the toolkit's link stub, or the probe was disabled with the
    /// `ALLOC_CUDA_FORCE_NO_DRIVER` environment variable.
    NoDriver {
        /// What was found (empty when nothing was).
        detail: String,
    },
    /// The driver loaded but reports no device (`CUDA_ERROR_NO_DEVICE`, or a
    /// device count of 0).
    NoDevice,
    /// The driver loaded but failed to initialise (`cuInit` or
    /// `cuDeviceGetCount` returned another error, or a driver call panicked,
    /// for example on a missing symbol).
    Driver {
        /// The `CUresult` code (`-1` for a panic).
        code: i32,
        /// The driver's message.
        message: String,
    },
}

impl fmt::Display for CudaUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CudaUnavailable::NoDriver { detail } if detail.is_empty() => {
                f.write_str("CUDA is not available: no driver library found")
            }
            CudaUnavailable::NoDriver { detail } => {
                write!(
                    f,
                    "CUDA is not available: no driver library found ({detail})"
                )
            }
            CudaUnavailable::NoDevice => f.write_str("CUDA is not available: no CUDA device"),
            CudaUnavailable::Driver { code, message } => write!(
                f,
                "CUDA is not available: the driver failed to initialise (error {code}: {message})"
            ),
        }
    }
}

impl std::error::Error for CudaUnavailable {}

/// An error from the CUDA backend ([`crate::cuda`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CudaError {
    /// CUDA cannot be used at all (no driver, no device).
    #[error(transparent)]
    Unavailable(#[from] CudaUnavailable),
    /// A driver call failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The caching allocator failed (including out of memory).
    #[error(transparent)]
    Allocator(#[from] CachingAllocatorError),
    /// An allocation failed (out of memory for the raw and
    /// `cudaMallocAsync` backends and the pinned allocator).
    #[error("{0}")]
    OutOfMemory(String),
    /// The allocator configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A device index outside `0..count`.
    #[error("Invalid device argument : did you call init? (device {index}, {count} CUDA device(s) available)")]
    InvalidDevice {
        /// The index asked for.
        index: i32,
        /// How many devices there are.
        count: usize,
    },
    /// NVRTC is missing or failed to compile the copy kernels.
    #[error("NVRTC: {0}")]
    Nvrtc(String),
    /// The operation is not supported by this backend or device.
    #[error("{0}")]
    Unsupported(String),
}

impl CudaError {
    /// Whether this error says CUDA is unavailable (no driver or device).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, CudaError::Unavailable(_))
    }

    /// Whether this is an out-of-memory error.
    pub fn is_out_of_memory(&self) -> bool {
        match self {
            CudaError::OutOfMemory(_) => true,
            CudaError::Allocator(e) => e.is_out_of_memory(),
            CudaError::Device(e) => e.is_out_of_memory(),
            _ => false,
        }
    }
}

impl From<CudaError> for c10_core::TensorError {
    fn from(e: CudaError) -> Self {
        if e.is_out_of_memory() {
            c10_core::TensorError::from(c10_storage::AllocError::from(e))
        } else {
            c10_core::TensorError::Runtime(e.to_string())
        }
    }
}

impl From<CudaError> for c10_storage::AllocError {
    fn from(e: CudaError) -> Self {
        match e {
            CudaError::Allocator(CachingAllocatorError::OutOfMemory(oom)) => {
                c10_storage::AllocError::OutOfMemory {
                    nbytes: usize::try_from(oom.tried_to_allocate).unwrap_or(usize::MAX),
                    message: oom.to_string(),
                }
            }
            e if e.is_out_of_memory() => c10_storage::AllocError::OutOfMemory {
                nbytes: 0,
                message: e.to_string(),
            },
            other => c10_storage::AllocError::Unsupported(other.to_string()),
        }
    }
}
