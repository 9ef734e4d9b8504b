//! The real CUDA backend (feature `cuda`), on the driver API through
//! [cudarc](https://docs.rs/cudarc) with run-time loading: building needs
//! no CUDA toolkit, and a program built with it runs on machines without a
//! driver or GPU, where every entry point returns
//! `CUDA is not available: no driver library found` (or
//! `... no CUDA device`) instead of panicking.
//!
//! ## Start
//!
//! [`init`] probes the driver, builds the configured allocator and
//! registers it with the device operations, after which CUDA tensors work
//! through the ordinary APIs:
//!
//! ```no_run
//! use alloc_cuda::cuda;
//! use c10_core::{Device, ScalarType, Tensor, TensorOptions};
//! cuda::init()?;
//! let x = Tensor::zeros(&[1024, 1024], TensorOptions::new().dtype(ScalarType::Float).device(Device::cuda(0)))?;
//! let host = Tensor::arange(0, 6, 1, ScalarType::Float)?;
//! let dev = cuda::to_device(&host, Device::cuda(0))?;
//! println!("{} bytes allocated on cuda:0", cuda::memory_allocated(0)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## What is here
//!
//! * [`is_available`]: the probe (never panics; see there for the steps).
//! * [`CudaDevice`]: [`RawDevice`](crate::RawDevice) over the driver
//!   (`cuMemAlloc`/`cuMemFree`, events, `cuMemGetInfo`, synchronization,
//!   and the VMM calls for expandable segments).
//! * Allocator backends, chosen like PyTorch's `backend` option
//!   ([`AllocatorBackend`]): the caching allocator over `CudaDevice`
//!   (native), [`RawCudaAllocator`] (`PYTORCH_NO_CUDA_MEMORY_CACHING=1`)
//!   and [`AsyncPoolAllocator`] (`backend:cudaMallocAsync`), all behind
//!   [`CudaAllocator`], the `c10_storage::Allocator` for CUDA.
//! * [`PinnedHostAllocator`]: caching page-locked host memory.
//! * [`CudaDeviceOps`] and [`to_device`]: copies between any layouts on
//!   the host and the devices, with NVRTC-compiled strided kernels
//!   ([`KERNEL_SOURCE`]), and fills.
//! * [`CudaStream`], [`synchronize`], [`current_device`] / [`set_device`] /
//!   [`DeviceGuard`], and the `torch.cuda` helpers [`empty_cache`],
//!   [`memory_allocated`], [`memory_reserved`], [`memory_stats`],
//!   [`record_stream`].
//!
//! Every driver call runs inside `catch_unwind` (cudarc panics when a
//! library or symbol is missing), and its `CUresult` becomes an error.
//! `tracing` events (target `alloc_cuda`) report segment allocations and
//! frees, out-of-memory, cache flushes, kernel compilation and the probe.
//!
//! The registered allocator allocates on the thread's current device
//! ([`current_device`], set with [`set_device`] or a [`DeviceGuard`]):
//! c10-core's factories do not pass a device index to the allocator, so
//! `Tensor::empty(.., Device::cuda(1))` needs `DeviceGuard::new(1)`
//! around it ([`to_device`] does that itself).

mod allocator;
mod async_pool;
mod blocks;
mod device;
mod driver;
mod error;
mod kernels;
mod layout;
mod nvrtc;
mod ops;
mod pinned;
mod probe;
mod raw;
mod runtime;
mod stream;

pub use allocator::{AllocatorBackend, CudaAllocator, DeviceAllocator, NO_CACHING_ENV};
pub use async_pool::AsyncPoolAllocator;
pub use device::CudaDevice;
pub use error::{CudaError, CudaUnavailable};
pub use kernels::{
    compile_kernels, compile_kernels_for, host_staging_fallbacks, kernel_names, load_kernels,
    nvrtc_available, KERNEL_SOURCE,
};
pub use layout::{KernelLayout, MAX_KERNEL_DIMS};
pub use nvrtc::{
    choose_arch, nvrtc_candidates, nvrtc_candidates_with, nvrtc_info, Nvrtc, NvrtcCandidate,
    NvrtcInfo, NvrtcSource, NVRTC_ENV, NVRTC_STACK,
};
pub use ops::{to_device, CudaDeviceOps};
pub use pinned::{
    pinned_reuse_limit, pinned_round_size, PinnedHostAllocator, PinnedStats, PINNED_CHUNK,
    PINNED_MIN_BLOCK, PINNED_POW2_LIMIT,
};
pub use probe::{
    device_count, driver_library, driver_version, is_available, DeviceCount, DRIVER_ENV,
    FORCE_NO_DRIVER_ENV,
};
pub use raw::RawCudaAllocator;
pub use runtime::{
    empty_cache, init, init_with, memory_allocated, memory_reserved, memory_stats,
    pinned_allocator, record_stream, runtime, CudaRuntime, InitOptions,
};
pub use stream::{current_device, set_device, synchronize, CudaStream, DeviceGuard};

pub use crate::config::{Backend, CachingAllocatorConfig};
pub use crate::stats::DeviceStats;
pub use crate::stream::{current_stream, set_current_stream, StreamGuard};
pub use crate::StreamId;
