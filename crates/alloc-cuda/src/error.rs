//! Errors of the caching allocator, with PyTorch's messages.

use std::fmt;

use crate::device::{DeviceError, DevicePtr};

/// Formats a byte count as PyTorch's `format_size` does: up to 1024 →
/// `"N bytes"`, up to 1 MiB → KiB, up to 1 GiB → MiB, else GiB, with two
/// decimals (C++ `std::fixed` with precision 2, which rounds exact ties to
/// even like Rust's formatter).
///
/// ```
/// use alloc_cuda::format_size;
/// assert_eq!(format_size(1024), "1024 bytes");
/// assert_eq!(format_size(1025), "1.00 KiB");
/// assert_eq!(format_size(20 << 20), "20.00 MiB");
/// assert_eq!(format_size((1 << 30) + 1), "1.00 GiB");
/// assert_eq!(format_size(3 << 29), "1.50 GiB");
/// ```
pub fn format_size(size: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    const GIB: u64 = 1024 * 1024 * 1024;
    if size <= KIB {
        format!("{size} bytes")
    } else if size <= MIB {
        format!("{:.2} KiB", size as f64 / KIB as f64)
    } else if size <= GIB {
        format!("{:.2} MiB", size as f64 / MIB as f64)
    } else {
        format!("{:.2} GiB", size as f64 / GIB as f64)
    }
}

/// PyTorch's `torch.OutOfMemoryError` for the CUDA caching allocator.
///
/// `Display` is PyTorch's message (mid-2024 wording, the one that
/// recommends `expandable_segments`), for example:
///
/// ```text
/// CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity
/// of 64.00 MiB of which 4.00 MiB is free. Of the allocated memory 40.00 MiB is
/// allocated by PyTorch, and 20.00 MiB is reserved by PyTorch but unallocated.
/// If reserved but unallocated memory is large try setting
/// PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See
/// documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
/// ```
///
/// (one line; "Tried to allocate" reports the size of the device allocation
/// that failed, i.e. the segment size, as PyTorch does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaOutOfMemory {
    /// The device allocation size that could not be obtained.
    pub tried_to_allocate: u64,
    /// Device index.
    pub device: i8,
    /// Total device memory (`cudaMemGetInfo`).
    pub total_capacity: u64,
    /// Free device memory (`cudaMemGetInfo`).
    pub free: u64,
    /// The memory-fraction limit, if one is set.
    pub allowed: Option<u64>,
    /// NVML per-process text (may be empty).
    pub process_info: String,
    /// `allocated_bytes.all.current` at the time.
    pub allocated: u64,
    /// `reserved_bytes.all.current` at the time.
    pub reserved: u64,
    /// Set for requests of 1 EiB or more, which get PyTorch's short message.
    pub exceeds_one_exabyte: bool,
}

impl fmt::Display for CudaOutOfMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.exceeds_one_exabyte {
            return f.write_str("CUDA out of memory. Tried to allocate more than 1EB memory.");
        }
        let allowed = match self.allowed {
            Some(a) => format!("{} allowed; ", format_size(a)),
            None => String::new(),
        };
        write!(
            f,
            "CUDA out of memory. Tried to allocate {}. GPU {} has a total capacity of {} of which {} is free. {}{}Of the allocated memory {} is allocated by PyTorch, and {} is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
            format_size(self.tried_to_allocate),
            self.device,
            format_size(self.total_capacity),
            format_size(self.free),
            self.process_info,
            allowed,
            format_size(self.allocated),
            format_size(self.reserved.saturating_sub(self.allocated)),
        )
    }
}

impl std::error::Error for CudaOutOfMemory {}

/// An error from [`CachingAllocator`](crate::CachingAllocator).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CachingAllocatorError {
    /// Out of memory after every retry (PyTorch's `OutOfMemoryError`).
    #[error(transparent)]
    OutOfMemory(#[from] CudaOutOfMemory),
    /// A device error other than running out of memory.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The pointer is not a live allocation of this allocator.
    #[error("invalid device pointer: {0}")]
    InvalidDevicePointer(DevicePtr),
    /// `set_memory_fraction` outside `[0, 1]`.
    #[error("invalid fraction:{0}. Please set within (0, 1).")]
    InvalidFraction(f64),
    /// An allocator bug was caught (a stale internal block id); the
    /// allocator refuses further work rather than continue on a state it
    /// cannot trust.
    #[error("alloc-cuda internal error: {0}")]
    Internal(String),
}

impl CachingAllocatorError {
    /// Whether this is an out-of-memory error.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, CachingAllocatorError::OutOfMemory(_))
    }
}
