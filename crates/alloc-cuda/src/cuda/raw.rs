//! The raw backend: one `cuMemAlloc` per allocation, `cuMemFree` when it
//! is dropped (PyTorch's `PYTORCH_NO_CUDA_MEMORY_CACHING=1`).

use std::sync::Arc;

use c10_storage::{DataPtr, Device};

use super::blocks::{
    backend_oom, block_data_ptr, impl_backend_common, log_free_error, BlockOwner, Counters,
};
use super::device::CudaDevice;
use super::error::CudaError;
use crate::device::{DevicePtr, RawDevice};

struct RawInner {
    device: Arc<CudaDevice>,
    counters: Counters,
}

impl BlockOwner for RawInner {
    fn release(&self, addr: u64, size: u64) {
        // The block may be in use by queued work on any stream: wait for
        // the device first, as PyTorch's no-caching path does.
        let r = self.device.synchronize_device().and_then(|()| {
            // SAFETY: `addr` is a live `cuMemAlloc` block of this device
            // (made by `allocate`), released once by its `DataPtr`; after
            // the synchronization no queued work still uses it.
            unsafe { self.device.free(DevicePtr(addr)) }
        });
        match r {
            Ok(()) => self.counters.on_free(size),
            Err(e) => log_free_error("raw", &self.device, addr, &e),
        }
    }
}

/// The non-caching backend for one device: every allocation is its own
/// `cuMemAlloc`, every free a device synchronization and a `cuMemFree`.
/// Slow, but every byte is returned at once and tools such as
/// compute-sanitizer see each allocation; the baseline the caching
/// allocator's latency is compared with. Cheap to clone.
#[derive(Clone)]
pub struct RawCudaAllocator {
    inner: Arc<RawInner>,
}

impl_backend_common!(RawCudaAllocator);

impl RawCudaAllocator {
    /// The raw backend on `device`.
    pub fn new(device: Arc<CudaDevice>) -> RawCudaAllocator {
        RawCudaAllocator {
            inner: Arc::new(RawInner {
                device,
                counters: Counters::default(),
            }),
        }
    }

    /// The device.
    pub fn device(&self) -> &Arc<CudaDevice> {
        &self.inner.device
    }

    /// Allocates `nbytes` (`allocate(0)` is a null pointer). Out of memory
    /// is reported with PyTorch's message (reserved = allocated here).
    pub fn allocate(&self, nbytes: usize) -> Result<DataPtr, CudaError> {
        let dev = &self.inner.device;
        let device = Device::cuda(dev.index());
        if nbytes == 0 {
            return Ok(DataPtr::null(device));
        }
        let p = match dev.malloc(nbytes as u64) {
            Ok(p) => p,
            Err(e) if e.is_out_of_memory() => {
                // Every byte it holds is allocated: reserved is allocated.
                let used = self.inner.counters.current();
                return Err(backend_oom("raw", dev, nbytes, used, used).into());
            }
            Err(e) => return Err(e.into()),
        };
        self.inner.counters.on_alloc(nbytes as u64);
        let owner: Arc<dyn BlockOwner> = self.inner.clone();
        // SAFETY: `p` is a fresh `cuMemAlloc` block of `nbytes` bytes on this
        // device; `RawInner::release` frees it once, from any thread.
        Ok(unsafe { block_data_ptr(p.0, nbytes as u64, device, owner) })
    }
}
