//! The backend choice ([`AllocatorBackend`]) and [`CudaAllocator`], the
//! `c10_storage::Allocator` registered for `DeviceType::Cuda`.

use std::sync::{Arc, OnceLock};

use c10_storage::{AllocError, Allocator, AllocatorStats, DataPtr, DeviceType};
use cudarc::driver::sys;

use super::async_pool::AsyncPoolAllocator;
use super::device::CudaDevice;
use super::driver::call;
use super::error::CudaError;
use super::probe;
use super::raw::RawCudaAllocator;
use super::stream::{current_device, resolve};
use crate::adapter::CachingDeviceAllocator;
use crate::caching::CachingAllocator;
use crate::config::{Backend, CachingAllocatorConfig};
use crate::device::{DevicePtr, StreamId};
use crate::stats::DeviceStats;
use crate::stream::current_stream;

/// PyTorch's switch for the raw backend.
pub const NO_CACHING_ENV: &str = "PYTORCH_NO_CUDA_MEMORY_CACHING";

/// Which allocator serves CUDA memory (PyTorch's `backend` option, plus
/// `PYTORCH_NO_CUDA_MEMORY_CACHING`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AllocatorBackend {
    /// The caching allocator ([`CachingAllocator`] over [`CudaDevice`]),
    /// PyTorch's `backend:native`, the default.
    Native,
    /// No caching: `cuMemAlloc`/`cuMemFree` per allocation
    /// ([`RawCudaAllocator`]), what PyTorch does with
    /// `PYTORCH_NO_CUDA_MEMORY_CACHING=1`.
    Raw,
    /// The driver's stream-ordered pool ([`AsyncPoolAllocator`]),
    /// `backend:cudaMallocAsync`.
    CudaMallocAsync,
}

impl AllocatorBackend {
    /// The backend a configuration asks for: `backend:cudaMallocAsync`
    /// wins, then `no_caching` (PyTorch's `PYTORCH_NO_CUDA_MEMORY_CACHING`
    /// only disables the native allocator's cache), else native.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// use alloc_cuda::cuda::AllocatorBackend;
    /// let c = CachingAllocatorConfig::parse("backend:cudaMallocAsync")?;
    /// assert_eq!(AllocatorBackend::select(&c, true), AllocatorBackend::CudaMallocAsync);
    /// let d = CachingAllocatorConfig::default();
    /// assert_eq!(AllocatorBackend::select(&d, true), AllocatorBackend::Raw);
    /// assert_eq!(AllocatorBackend::select(&d, false), AllocatorBackend::Native);
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn select(config: &CachingAllocatorConfig, no_caching: bool) -> AllocatorBackend {
        match config.backend() {
            Backend::CudaMallocAsync => AllocatorBackend::CudaMallocAsync,
            Backend::Native if no_caching => AllocatorBackend::Raw,
            Backend::Native => AllocatorBackend::Native,
        }
    }

    /// [`select`](AllocatorBackend::select) with `no_caching` read from
    /// `PYTORCH_NO_CUDA_MEMORY_CACHING` (set and not `0`).
    pub fn from_env(config: &CachingAllocatorConfig) -> AllocatorBackend {
        let no_caching =
            std::env::var_os(NO_CACHING_ENV).is_some_and(|v| !v.is_empty() && v != "0");
        AllocatorBackend::select(config, no_caching)
    }

    /// `native`, `raw` or `cudaMallocAsync`.
    pub fn name(self) -> &'static str {
        match self {
            AllocatorBackend::Native => "native",
            AllocatorBackend::Raw => "raw",
            AllocatorBackend::CudaMallocAsync => "cudaMallocAsync",
        }
    }
}

/// One device's allocator, of any backend.
#[derive(Debug, Clone)]
pub enum DeviceAllocator {
    /// The caching allocator.
    Native(CachingDeviceAllocator<Arc<CudaDevice>>),
    /// One `cuMemAlloc` per allocation.
    Raw(RawCudaAllocator),
    /// The driver's stream-ordered pool.
    CudaMallocAsync(AsyncPoolAllocator),
}

impl DeviceAllocator {
    /// A `backend` allocator on `device`.
    pub fn new(
        device: Arc<CudaDevice>,
        backend: AllocatorBackend,
        config: &CachingAllocatorConfig,
    ) -> Result<DeviceAllocator, CudaError> {
        Ok(match backend {
            AllocatorBackend::Native => {
                let index = device.index();
                DeviceAllocator::Native(CachingDeviceAllocator::new(CachingAllocator::new(
                    device,
                    index,
                    config.clone(),
                )))
            }
            AllocatorBackend::Raw => DeviceAllocator::Raw(RawCudaAllocator::new(device)),
            AllocatorBackend::CudaMallocAsync => {
                DeviceAllocator::CudaMallocAsync(AsyncPoolAllocator::new(device)?)
            }
        })
    }

    /// The device.
    pub fn device(&self) -> &Arc<CudaDevice> {
        match self {
            DeviceAllocator::Native(a) => a.inner().device(),
            DeviceAllocator::Raw(a) => a.device(),
            DeviceAllocator::CudaMallocAsync(a) => a.device(),
        }
    }

    /// The backend.
    pub fn backend(&self) -> AllocatorBackend {
        match self {
            DeviceAllocator::Native(_) => AllocatorBackend::Native,
            DeviceAllocator::Raw(_) => AllocatorBackend::Raw,
            DeviceAllocator::CudaMallocAsync(_) => AllocatorBackend::CudaMallocAsync,
        }
    }

    /// Allocates `nbytes` for use on `stream`.
    pub fn allocate_on_stream(
        &self,
        nbytes: usize,
        stream: StreamId,
    ) -> Result<DataPtr, CudaError> {
        resolve(self.device().index(), stream)?;
        match self {
            DeviceAllocator::Native(a) => Ok(a.allocate_on_stream(nbytes, stream)?),
            DeviceAllocator::Raw(a) => a.allocate(nbytes),
            DeviceAllocator::CudaMallocAsync(a) => a.allocate_on_stream(nbytes, stream),
        }
    }

    /// Marks the allocation starting at `addr` as used on `stream` (no-op
    /// for the raw backend, which synchronizes before every free).
    pub fn record_stream_at(&self, addr: u64, stream: StreamId) -> Result<(), CudaError> {
        resolve(self.device().index(), stream)?;
        match self {
            DeviceAllocator::Native(a) => Ok(a.inner().record_stream(DevicePtr(addr), stream)?),
            DeviceAllocator::Raw(_) => Ok(()),
            DeviceAllocator::CudaMallocAsync(a) => a.record_stream(addr, stream),
        }
    }

    /// Returns cached memory to the device (`torch.cuda.empty_cache()`).
    pub fn empty_cache(&self) -> Result<(), CudaError> {
        match self {
            DeviceAllocator::Native(a) => Ok(a.inner().empty_cache()?),
            DeviceAllocator::Raw(_) => Ok(()),
            DeviceAllocator::CudaMallocAsync(a) => a.empty_cache(),
        }
    }

    /// Bytes in live allocations (`torch.cuda.memory_allocated()`; for the
    /// native backend the rounded block sizes, otherwise the requested
    /// sizes).
    pub fn memory_allocated(&self) -> u64 {
        match self {
            DeviceAllocator::Native(a) => a.inner().memory_allocated(),
            DeviceAllocator::Raw(a) => a.memory_allocated(),
            DeviceAllocator::CudaMallocAsync(a) => a.memory_allocated(),
        }
    }

    /// Bytes held from the device (`torch.cuda.memory_reserved()`).
    pub fn memory_reserved(&self) -> Result<u64, CudaError> {
        match self {
            DeviceAllocator::Native(a) => Ok(a.inner().memory_reserved()),
            DeviceAllocator::Raw(a) => Ok(a.memory_allocated()),
            DeviceAllocator::CudaMallocAsync(a) => a.memory_reserved(),
        }
    }

    /// Requested-byte statistics.
    pub fn stats(&self) -> AllocatorStats {
        match self {
            DeviceAllocator::Native(a) => a.stats().unwrap_or_default(),
            DeviceAllocator::Raw(a) => a.stats(),
            DeviceAllocator::CudaMallocAsync(a) => a.stats(),
        }
    }

    /// PyTorch's full statistics (native backend only).
    pub fn device_stats(&self) -> Option<DeviceStats> {
        match self {
            DeviceAllocator::Native(a) => Some(a.inner().stats()),
            _ => None,
        }
    }

    /// Sets every peak to its current value.
    pub fn reset_peak_stats(&self) {
        match self {
            DeviceAllocator::Native(a) => a.inner().reset_peak_stats(),
            DeviceAllocator::Raw(a) => a.reset_peak_stats(),
            DeviceAllocator::CudaMallocAsync(a) => a.reset_peak_stats(),
        }
    }
}

/// The CUDA allocator for every device: one [`DeviceAllocator`] of the
/// chosen backend per device, created at the device's first use (so no
/// context is made on GPUs that are never used). As a
/// `c10_storage::Allocator` it allocates on the thread's
/// [current device](crate::cuda::current_device) and
/// [current stream](crate::current_stream), like c10's CUDA allocator.
/// [`init`](crate::cuda::init) registers one for `DeviceType::Cuda`.
#[derive(Debug)]
pub struct CudaAllocator {
    backend: AllocatorBackend,
    config: CachingAllocatorConfig,
    devices: Vec<OnceLock<Result<DeviceAllocator, CudaError>>>,
}

impl CudaAllocator {
    /// An allocator of `backend` for every device. Fails with
    /// `CUDA is not available: ...` without a driver or device.
    pub fn new(
        backend: AllocatorBackend,
        config: CachingAllocatorConfig,
    ) -> Result<CudaAllocator, CudaError> {
        let count = probe::device_count()?;
        Ok(CudaAllocator {
            backend,
            config,
            devices: (0..count).map(|_| OnceLock::new()).collect(),
        })
    }

    /// The backend.
    pub fn backend(&self) -> AllocatorBackend {
        self.backend
    }

    /// The configuration.
    pub fn config(&self) -> &CachingAllocatorConfig {
        &self.config
    }

    /// Device `index`'s allocator (opened at first use).
    pub fn device(&self, index: i8) -> Result<&DeviceAllocator, CudaError> {
        let count = self.devices.len();
        let cell = usize::try_from(index)
            .ok()
            .and_then(|i| self.devices.get(i))
            .ok_or(CudaError::InvalidDevice {
                index: i32::from(index),
                count,
            })?;
        cell.get_or_init(|| {
            let dev = Arc::new(CudaDevice::new(index)?);
            DeviceAllocator::new(dev, self.backend, &self.config)
        })
        .as_ref()
        .map_err(Clone::clone)
    }

    /// Allocates `nbytes` on device `index` for use on `stream`.
    pub fn allocate_on(
        &self,
        index: i8,
        nbytes: usize,
        stream: StreamId,
    ) -> Result<DataPtr, CudaError> {
        self.device(index)?.allocate_on_stream(nbytes, stream)
    }

    /// Marks the allocation at `addr` on device `index` as used on `stream`
    /// (PyTorch's `recordStream`).
    pub fn record_stream(&self, index: i8, addr: u64, stream: StreamId) -> Result<(), CudaError> {
        self.device(index)?.record_stream_at(addr, stream)
    }

    /// Empties the cache of every device opened so far.
    pub fn empty_cache(&self) -> Result<(), CudaError> {
        for cell in &self.devices {
            if let Some(Ok(d)) = cell.get() {
                d.empty_cache()?;
            }
        }
        Ok(())
    }
}

// SAFETY: every pointer comes from one device's backend allocator
// (`CachingDeviceAllocator`, whose safety argument is in `adapter.rs`;
// `RawCudaAllocator`: a fresh `cuMemAlloc` block per `DataPtr`;
// `AsyncPoolAllocator`: a fresh `cuMemAllocAsync` block per `DataPtr`),
// each non-null for `n > 0`, valid for `n` bytes of device memory until its
// deleter runs, overlapping nothing live, tagged `cuda:<index>`, and freed
// once from any thread by its deleter (which binds the device's context).
// CUDA memory is not host-accessible, so point 5 does not apply.
unsafe impl Allocator for CudaAllocator {
    fn allocate(&self, nbytes: usize) -> Result<DataPtr, AllocError> {
        let index = current_device();
        let stream = current_stream(index);
        self.allocate_on(index, nbytes, stream)
            .map_err(AllocError::from)
    }

    fn device_type(&self) -> DeviceType {
        DeviceType::Cuda
    }

    unsafe fn copy_data(&self, dst: *mut u8, src: *const u8, n: usize) -> Result<(), AllocError> {
        let index = current_device();
        crate::device::copy_data_with(n, || -> Result<(), CudaError> {
            let d = self.device(index)?;
            d.device().bind()?;
            let s = resolve(index, current_stream(index))?;
            // SAFETY: the caller guarantees both ranges are valid device
            // memory of `n` bytes that do not overlap; with unified
            // addressing the copy works between any two devices.
            call("cuMemcpyDtoDAsync", || unsafe {
                sys::cuMemcpyDtoDAsync_v2(dst.addr() as u64, src.addr() as u64, n, s)
            })?;
            // SAFETY: `s` is a live stream of this device.
            call("cuStreamSynchronize", || unsafe {
                sys::cuStreamSynchronize(s)
            })?;
            Ok(())
        })
    }

    /// The current device's requested-byte statistics.
    fn stats(&self) -> Option<AllocatorStats> {
        self.device(current_device())
            .ok()
            .map(DeviceAllocator::stats)
    }

    fn reset_peak_stats(&self) {
        if let Ok(d) = self.device(current_device()) {
            d.reset_peak_stats();
        }
    }

    fn name(&self) -> &str {
        match self.backend {
            AllocatorBackend::Native => "CudaAllocator(native)",
            AllocatorBackend::Raw => "CudaAllocator(raw)",
            AllocatorBackend::CudaMallocAsync => "CudaAllocator(cudaMallocAsync)",
        }
    }
}
