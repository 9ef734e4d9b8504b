//! [`init`]: the process-wide CUDA backend (allocator, pinned allocator,
//! device operations) and the `torch.cuda`-style helpers on it.

use std::sync::OnceLock;

use c10_core::Tensor;
use c10_storage::{set_allocator, DeviceType};
use parking_lot::Mutex;

use super::allocator::{AllocatorBackend, CudaAllocator};
use super::error::CudaError;
use super::ops::CudaDeviceOps;
use super::pinned::PinnedHostAllocator;
use super::probe;
use super::stream::CudaStream;
use crate::config::CachingAllocatorConfig;
use crate::stats::DeviceStats;

/// Options for [`init_with`]. The default reads the configuration from the
/// environment (`PYTORCH_ALLOC_CONF`, or `PYTORCH_CUDA_ALLOC_CONF`, and
/// `PYTORCH_NO_CUDA_MEMORY_CACHING`), uses the NVRTC kernels and registers
/// the allocator and device operations.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// The allocator backend (`None`: from the configuration and
    /// `PYTORCH_NO_CUDA_MEMORY_CACHING`).
    pub backend: Option<AllocatorBackend>,
    /// The caching allocator's configuration (`None`: from the
    /// environment).
    pub config: Option<CachingAllocatorConfig>,
    /// Whether strided copies and fills may use the NVRTC kernels.
    pub kernels: bool,
    /// Whether to register the allocator (`c10_storage::set_allocator`,
    /// priority 0) and the device operations
    /// (`c10_core::register_device_ops`).
    pub register: bool,
}

impl Default for InitOptions {
    fn default() -> Self {
        InitOptions {
            backend: None,
            config: None,
            kernels: true,
            register: true,
        }
    }
}

/// The process-wide CUDA backend made by [`init`].
#[derive(Debug)]
pub struct CudaRuntime {
    allocator: CudaAllocator,
    pinned: PinnedHostAllocator,
    ops: CudaDeviceOps,
}

impl CudaRuntime {
    /// The CUDA allocator (registered for `DeviceType::Cuda`).
    pub fn allocator(&self) -> &CudaAllocator {
        &self.allocator
    }

    /// The pinned host allocator used for staging (not registered).
    pub fn pinned(&self) -> &PinnedHostAllocator {
        &self.pinned
    }

    /// The device operations (registered for `DeviceType::Cuda`).
    pub fn ops(&self) -> &CudaDeviceOps {
        &self.ops
    }

    /// The number of devices.
    pub fn device_count(&self) -> usize {
        probe::device_count().unwrap_or(0)
    }
}

static RUNTIME: OnceLock<CudaRuntime> = OnceLock::new();
static INIT: Mutex<()> = Mutex::new(());

/// Initialises the CUDA backend with the default [`InitOptions`] (PyTorch's
/// lazy CUDA init): probes the driver, builds the configured allocator
/// (created per device at its first use), a pinned host allocator and the
/// device operations, and registers the allocator for `DeviceType::Cuda`
/// (`c10_storage::set_allocator`, priority 0) and the operations
/// (`c10_core::register_device_ops`), so that `Tensor::empty(..,
/// Device::cuda(0))`, `contiguous()`, `clone()`, `copy_()` and `fill_`
/// work on CUDA tensors.
///
/// Idempotent: the first successful call wins and later calls return the
/// same runtime. Without a driver or device it returns
/// `CUDA is not available: ...` and registers nothing.
///
/// ```
/// match alloc_cuda::cuda::init() {
///     Ok(rt) => println!("CUDA with {} device(s), {:?} allocator", rt.device_count(), rt.allocator().backend()),
///     Err(e) => println!("{e}"),
/// }
/// ```
pub fn init() -> Result<&'static CudaRuntime, CudaError> {
    init_with(InitOptions::default())
}

/// [`init`] with explicit options (used only by the first successful call).
pub fn init_with(options: InitOptions) -> Result<&'static CudaRuntime, CudaError> {
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    probe::is_available()?;
    let _lock = INIT.lock();
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let config = match options.config {
        Some(c) => c,
        None => CachingAllocatorConfig::from_env()?,
    };
    let backend = options
        .backend
        .unwrap_or_else(|| AllocatorBackend::from_env(&config));
    let allocator = CudaAllocator::new(backend, config)?;
    // Open the first device now, so that a broken setup fails here.
    allocator.device(0)?;
    let pinned = PinnedHostAllocator::new()?;
    let rt = CudaRuntime {
        allocator,
        pinned,
        ops: CudaDeviceOps::unchecked(options.kernels),
    };
    let _ = RUNTIME.set(rt);
    let rt = RUNTIME
        .get()
        .ok_or_else(|| CudaError::Unsupported("the CUDA runtime could not be stored".into()))?;
    if options.register {
        set_allocator(DeviceType::Cuda, &rt.allocator, 0)
            .map_err(|e| CudaError::Unsupported(e.to_string()))?;
        c10_core::register_device_ops(&rt.ops);
    }
    tracing::info!(
        target: "alloc_cuda",
        devices = rt.device_count(),
        backend = backend.name(),
        registered = options.register,
        "CUDA backend initialised"
    );
    Ok(rt)
}

/// The runtime, initialising it if needed (same as [`init`]).
pub fn runtime() -> Result<&'static CudaRuntime, CudaError> {
    init()
}

/// The pinned host allocator of the runtime.
pub fn pinned_allocator() -> Result<&'static PinnedHostAllocator, CudaError> {
    Ok(init()?.pinned())
}

/// `torch.cuda.empty_cache()`: returns the cached memory of every opened
/// device and the pinned cache.
pub fn empty_cache() -> Result<(), CudaError> {
    let rt = init()?;
    rt.allocator().empty_cache()?;
    rt.pinned().empty_cache()
}

/// `torch.cuda.memory_allocated(device)`.
pub fn memory_allocated(device: i8) -> Result<u64, CudaError> {
    Ok(init()?.allocator().device(device)?.memory_allocated())
}

/// `torch.cuda.memory_reserved(device)`.
pub fn memory_reserved(device: i8) -> Result<u64, CudaError> {
    init()?.allocator().device(device)?.memory_reserved()
}

/// `torch.cuda.memory_stats(device)` (native backend; `None` for the
/// others).
pub fn memory_stats(device: i8) -> Result<Option<DeviceStats>, CudaError> {
    Ok(init()?.allocator().device(device)?.device_stats())
}

/// `tensor.record_stream(stream)`: the tensor's memory is used on `stream`,
/// so when it is freed it is reused (or released) only after the work
/// queued on `stream` by then. The storage must come from the runtime's
/// allocator.
pub fn record_stream(t: &Tensor, stream: CudaStream) -> Result<(), CudaError> {
    let rt = init()?;
    let d = t.device();
    if d.device_type() != DeviceType::Cuda {
        return Err(CudaError::Unsupported(format!(
            "record_stream needs a CUDA tensor, got one on {d}"
        )));
    }
    if d.index() != stream.device() {
        return Err(CudaError::Unsupported(format!(
            "record_stream: the tensor is on {d} but the stream on cuda:{}",
            stream.device()
        )));
    }
    let addr = t
        .storage()
        .read()
        .map_err(|e| CudaError::Unsupported(e.to_string()))?
        .as_ptr()
        .addr() as u64;
    if addr == 0 {
        return Ok(());
    }
    rt.allocator()
        .record_stream(stream.device(), addr, stream.id())
}
