//! The `cudaMallocAsync` backend: the driver's stream-ordered allocator
//! (`cuMemAllocAsync`/`cuMemFreeAsync`) on the device's default memory pool.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use c10_storage::{DataPtr, Device};
use cudarc::driver::sys;
use parking_lot::Mutex;

use super::blocks::{
    backend_oom, block_data_ptr, impl_backend_common, log_free_error, BlockOwner, Counters,
};
use super::device::CudaDevice;
use super::driver::{call, error_of, guarded};
use super::error::CudaError;
use super::stream::resolve;
use crate::device::{DeviceError, RawDevice, StreamId};

/// A `CUmemoryPool` handle.
#[derive(Debug, Clone, Copy)]
struct Pool(sys::CUmemoryPool);

// SAFETY: a memory-pool handle is a driver object usable from any thread;
// the value is never changed.
unsafe impl Send for Pool {}
// SAFETY: as above.
unsafe impl Sync for Pool {}

struct Live {
    stream: StreamId,
    uses: HashSet<StreamId>,
}

struct AsyncInner {
    device: Arc<CudaDevice>,
    pool: Pool,
    counters: Counters,
    live: Mutex<HashMap<u64, Live>>,
}

impl AsyncInner {
    fn free_async(&self, addr: u64, live: Live) -> Result<(), DeviceError> {
        self.device.bind()?;
        let index = self.device.index();
        let s = resolve(index, live.stream)?;
        // A block used on other streams is freed on its allocation stream
        // after that stream has waited for the others (PyTorch's
        // mallocAsync frees on a "unifying" stream the same way).
        for u in live.uses {
            let us = resolve(index, u)?;
            let mut ev: sys::CUevent = std::ptr::null_mut();
            // SAFETY: valid out-pointer; context bound.
            call("cuEventCreate", || unsafe {
                sys::cuEventCreate(&mut ev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)
            })?;
            // SAFETY: `ev` is fresh; `us` and `s` are live streams of this
            // device; an event may be destroyed while a wait on it is queued.
            let r =
                call("cuEventRecord", || unsafe { sys::cuEventRecord(ev, us) }).and_then(|()| {
                    // SAFETY: as above.
                    call("cuStreamWaitEvent", || unsafe {
                        sys::cuStreamWaitEvent(s, ev, 0)
                    })
                });
            // SAFETY: as above.
            let d = call("cuEventDestroy", || unsafe { sys::cuEventDestroy_v2(ev) });
            r?;
            d?;
        }
        // SAFETY: `addr` is a live `cuMemAllocAsync` block of this device's
        // pool, released once; the free is ordered after all its uses.
        call("cuMemFreeAsync", || unsafe { sys::cuMemFreeAsync(addr, s) })
    }

    fn pool_attribute(&self, attr: sys::CUmemPool_attribute) -> Result<u64, DeviceError> {
        self.device.bind()?;
        let mut v = 0u64;
        // SAFETY: the reserved/used attributes are `cuuint64_t`.
        call("cuMemPoolGetAttribute", || unsafe {
            sys::cuMemPoolGetAttribute(self.pool.0, attr, (&mut v as *mut u64).cast())
        })?;
        Ok(v)
    }

    fn trim(&self) -> Result<(), DeviceError> {
        self.device.synchronize_device()?;
        // SAFETY: the pool is the device's default pool; trimming to 0
        // releases only memory no allocation uses.
        call("cuMemPoolTrimTo", || unsafe {
            sys::cuMemPoolTrimTo(self.pool.0, 0)
        })
    }
}

impl BlockOwner for AsyncInner {
    fn release(&self, addr: u64, size: u64) {
        let Some(live) = self.live.lock().remove(&addr) else {
            tracing::error!(target: "alloc_cuda", "cudaMallocAsync backend: {addr:#x} is not live");
            return;
        };
        match self.free_async(addr, live) {
            Ok(()) => {
                self.counters.on_free(size);
                tracing::trace!(target: "alloc_cuda", device = self.device.index(), address = addr, "cuMemFreeAsync");
            }
            Err(e) => log_free_error("cudaMallocAsync", &self.device, addr, &e),
        }
    }
}

/// The `cudaMallocAsync` backend for one device (PyTorch's
/// `backend:cudaMallocAsync`): `cuMemAllocAsync` on the current stream from
/// the device's default memory pool, whose release threshold is raised to
/// `u64::MAX` so memory stays cached in the pool across synchronizations,
/// with all three reuse policies on; `cuMemFreeAsync` on the allocation
/// stream when the `DataPtr` is dropped (after waiting for every stream
/// passed to [`record_stream`](AsyncPoolAllocator::record_stream));
/// [`empty_cache`](AsyncPoolAllocator::empty_cache) trims the pool. On out
/// of memory it synchronizes, trims the pool and retries once. Cheap to
/// clone.
#[derive(Clone)]
pub struct AsyncPoolAllocator {
    inner: Arc<AsyncInner>,
}

impl_backend_common!(AsyncPoolAllocator);

impl AsyncPoolAllocator {
    /// The backend on `device`; fails when the device has no memory-pool
    /// support.
    pub fn new(device: Arc<CudaDevice>) -> Result<AsyncPoolAllocator, CudaError> {
        if !device.supports_memory_pools() {
            return Err(CudaError::Unsupported(format!(
                "cuda:{} does not support memory pools (cudaMallocAsync)",
                device.index()
            )));
        }
        device.bind()?;
        let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
        let dev = device.context().device;
        // SAFETY: valid out-pointer and device handle.
        call("cuDeviceGetDefaultMemPool", || unsafe {
            sys::cuDeviceGetDefaultMemPool(&mut pool, dev)
        })?;
        let mut threshold = u64::MAX;
        // SAFETY: the release threshold is a `cuuint64_t`.
        call("cuMemPoolSetAttribute", || unsafe {
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut threshold as *mut u64).cast(),
            )
        })?;
        for attr in [
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
        ] {
            let mut on: i32 = 1;
            // SAFETY: the reuse policies are `int`s.
            call("cuMemPoolSetAttribute", || unsafe {
                sys::cuMemPoolSetAttribute(pool, attr, (&mut on as *mut i32).cast())
            })?;
        }
        tracing::info!(target: "alloc_cuda", device = device.index(), "cudaMallocAsync backend: default pool, release threshold u64::MAX");
        Ok(AsyncPoolAllocator {
            inner: Arc::new(AsyncInner {
                device,
                pool: Pool(pool),
                counters: Counters::default(),
                live: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The device.
    pub fn device(&self) -> &Arc<CudaDevice> {
        &self.inner.device
    }

    /// Allocates `nbytes` on `stream` (`allocate(0)` is a null pointer).
    pub fn allocate_on_stream(
        &self,
        nbytes: usize,
        stream: StreamId,
    ) -> Result<DataPtr, CudaError> {
        let inner = &self.inner;
        let dev = &inner.device;
        let device = Device::cuda(dev.index());
        if nbytes == 0 {
            return Ok(DataPtr::null(device));
        }
        dev.bind()?;
        let s = resolve(dev.index(), stream)?;
        let try_alloc = || -> Result<u64, DeviceError> {
            let mut p: sys::CUdeviceptr = 0;
            // SAFETY: valid out-pointer; `s` is a live stream of this device.
            let r = guarded("cuMemAllocAsync", || unsafe {
                sys::cuMemAllocAsync(&mut p, nbytes, s)
            })?;
            match r {
                sys::CUresult::CUDA_SUCCESS => Ok(p),
                other => Err(error_of("cuMemAllocAsync", other)),
            }
        };
        let p = match try_alloc() {
            Ok(p) => p,
            Err(e) if e.is_out_of_memory() => {
                tracing::info!(target: "alloc_cuda", device = dev.index(), "cudaMallocAsync: out of memory, trimming the pool and retrying");
                inner.trim()?;
                match try_alloc() {
                    Ok(p) => p,
                    Err(e) if e.is_out_of_memory() => {
                        let reserved = inner
                            .pool_attribute(
                                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                            )
                            .unwrap_or(0);
                        let allocated = inner.counters.current();
                        let oom = backend_oom("cudaMallocAsync", dev, nbytes, allocated, reserved);
                        return Err(oom.into());
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        };
        inner.live.lock().insert(
            p,
            Live {
                stream,
                uses: HashSet::new(),
            },
        );
        inner.counters.on_alloc(nbytes as u64);
        let owner: Arc<dyn BlockOwner> = inner.clone();
        // SAFETY: `p` is a fresh pool block of `nbytes` bytes on this device,
        // freed once by `AsyncInner::release` (from any thread: it binds the
        // context and frees stream-ordered).
        Ok(unsafe { block_data_ptr(p, nbytes as u64, device, owner) })
    }

    /// Marks the live block at `addr` as used on `stream`: it is freed only
    /// after the work queued on `stream` before the free.
    pub fn record_stream(&self, addr: u64, stream: StreamId) -> Result<(), CudaError> {
        resolve(self.inner.device.index(), stream)?;
        let mut live = self.inner.live.lock();
        let l = live.get_mut(&addr).ok_or_else(|| {
            CudaError::Unsupported(format!(
                "{addr:#x} is not a live allocation of the cudaMallocAsync backend"
            ))
        })?;
        if l.stream != stream {
            l.uses.insert(stream);
        }
        Ok(())
    }

    /// Whether `addr` is a live allocation of this backend.
    pub fn owns(&self, addr: u64) -> bool {
        self.inner.live.lock().contains_key(&addr)
    }

    /// Synchronizes the device and trims the pool to nothing
    /// (`cuMemPoolTrimTo(pool, 0)`).
    pub fn empty_cache(&self) -> Result<(), CudaError> {
        let before = self.memory_reserved().unwrap_or(0);
        self.inner.trim()?;
        let after = self.memory_reserved().unwrap_or(0);
        tracing::info!(target: "alloc_cuda", device = self.inner.device.index(), released = before.saturating_sub(after), reserved = after, "cudaMallocAsync pool trimmed");
        Ok(())
    }

    /// Bytes the pool holds from the device
    /// (`CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT`).
    pub fn memory_reserved(&self) -> Result<u64, CudaError> {
        Ok(self
            .inner
            .pool_attribute(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?)
    }
}
