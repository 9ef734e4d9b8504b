//! [`CachingDeviceAllocator`]: the caching allocator as a
//! `c10_storage::Allocator` for CUDA storages.

use std::ffi::c_void;
use std::sync::Arc;

use c10_storage::{AllocError, Allocator, AllocatorStats, DataPtr, Device, DeviceType};

use crate::caching::CachingAllocator;
use crate::device::{DeviceCopy, DevicePtr, RawDevice, StreamId};
use crate::error::CachingAllocatorError;
use crate::stream::current_stream;

/// What a deleter needs: a way back into the allocator, whatever its
/// device type parameter.
trait FreeBack: Send + Sync {
    fn free_back(&self, ptr: DevicePtr);
}

impl<D: RawDevice> FreeBack for CachingAllocator<D> {
    fn free_back(&self, ptr: DevicePtr) {
        // SAFETY: called only from `caching_allocator_delete`, when the one
        // `DataPtr` that owned `ptr` is dropped: nothing refers to it now.
        if let Err(e) = unsafe { self.free(ptr) } {
            tracing::error!(target: "alloc_cuda", "freeing {ptr} from a DataPtr deleter failed: {e}");
        }
    }
}

/// The context of every `DataPtr` from a [`CachingDeviceAllocator`].
struct DeleterContext {
    ptr: DevicePtr,
    owner: Arc<dyn FreeBack>,
}

/// The deleter of every `DataPtr` from a [`CachingDeviceAllocator`]:
/// frees the block back into its caching allocator. Non-generic and never
/// inlined so that `DataPtr::cast_context` can recognise it.
///
/// # Safety
///
/// `ctx` must be a `Box<DeleterContext>` made by
/// [`CachingDeviceAllocator::allocate`], not freed before.
#[inline(never)]
unsafe fn caching_allocator_delete(ctx: *mut c_void) {
    // SAFETY: guaranteed by the caller (only our `DataPtr`s pair this
    // deleter with such a context, and `DataPtr` runs it once).
    let ctx = unsafe { Box::from_raw(ctx.cast::<DeleterContext>()) };
    ctx.owner.free_back(ctx.ptr);
}

/// A [`CachingAllocator`] as a `c10_storage::Allocator` for
/// `DeviceType::Cuda`.
///
/// `allocate(n)` allocates on the calling thread's
/// [current stream](crate::current_stream) and returns a `DataPtr` on
/// `cuda:<index>` whose deleter frees the block back into the caching
/// allocator (from any thread). `allocate(0)` returns a null pointer, as
/// PyTorch does. Cheap to clone (one `Arc`).
///
/// ```
/// use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, CachingDeviceAllocator, FakeDevice, StreamId};
/// use c10_storage::{Allocator, Device};
/// let dev = FakeDevice::new(1 << 30);
/// let alloc = CachingDeviceAllocator::new(CachingAllocator::new(dev, 0, CachingAllocatorConfig::default()));
/// let p = alloc.allocate(1000)?;
/// assert_eq!(p.device(), Device::cuda(0));
/// alloc.record_stream(&p, StreamId(5)).unwrap();
/// assert_eq!(alloc.inner().memory_allocated(), 1024);
/// drop(p); // freed back into the cache, pending the event on stream 5
/// assert_eq!(alloc.inner().memory_allocated(), 0);
/// # Ok::<(), c10_storage::AllocError>(())
/// ```
pub struct CachingDeviceAllocator<D: RawDevice + 'static> {
    inner: Arc<CachingAllocator<D>>,
}

impl<D: RawDevice + 'static> Clone for CachingDeviceAllocator<D> {
    fn clone(&self) -> Self {
        CachingDeviceAllocator {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<D: RawDevice + 'static> std::fmt::Debug for CachingDeviceAllocator<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachingDeviceAllocator")
            .field("inner", &self.inner)
            .finish()
    }
}

fn to_alloc_error(e: CachingAllocatorError, nbytes: usize) -> AllocError {
    match e {
        CachingAllocatorError::OutOfMemory(oom) => AllocError::OutOfMemory {
            nbytes,
            message: oom.to_string(),
        },
        // c10-storage has no variant for a backend failure other than
        // running out of memory; report it as unsupported with the message.
        other => AllocError::Unsupported(other.to_string()),
    }
}

impl<D: RawDevice + 'static> CachingDeviceAllocator<D> {
    /// Wraps `allocator`.
    pub fn new(allocator: CachingAllocator<D>) -> Self {
        Self::from_arc(Arc::new(allocator))
    }

    /// Wraps a shared allocator.
    pub fn from_arc(inner: Arc<CachingAllocator<D>>) -> Self {
        CachingDeviceAllocator { inner }
    }

    /// The caching allocator (statistics, `empty_cache`, snapshots, ...).
    pub fn inner(&self) -> &Arc<CachingAllocator<D>> {
        &self.inner
    }

    /// The device this allocator's pointers are on (`cuda:<index>`).
    pub fn device(&self) -> Device {
        Device::new(DeviceType::Cuda, self.inner.device_index())
    }

    /// Allocates `nbytes` on `stream` (instead of the current stream).
    pub fn allocate_on_stream(
        &self,
        nbytes: usize,
        stream: StreamId,
    ) -> Result<DataPtr, CachingAllocatorError> {
        let device = self.device();
        if nbytes == 0 {
            return Ok(DataPtr::null(device));
        }
        let ptr = self.inner.malloc(nbytes as u64, stream)?;
        let addr = match usize::try_from(ptr.addr()) {
            Ok(a) => a,
            Err(_) => {
                // SAFETY: just allocated and not handed out.
                unsafe { self.inner.free(ptr)? };
                return Err(CachingAllocatorError::InvalidDevicePointer(ptr));
            }
        };
        let owner: Arc<dyn FreeBack> = self.inner.clone();
        let ctx = Box::into_raw(Box::new(DeleterContext { ptr, owner }));
        // Device memory has no host provenance: the host never dereferences
        // it (CUDA is not host-accessible, so storages refuse byte views).
        let data = std::ptr::without_provenance_mut::<u8>(addr);
        // SAFETY: `caching_allocator_delete` frees exactly the box created
        // above, once, and may run on any thread (the allocator is
        // `Send + Sync`).
        Ok(unsafe { DataPtr::from_raw_parts(data, ctx.cast(), caching_allocator_delete, device) })
    }

    /// Marks the allocation behind `ptr` as used on `stream` (PyTorch's
    /// `recordStream(DataPtr, stream)`): its memory is reused only after the
    /// work queued on `stream` before the free has finished. Null pointers
    /// and pointers from other allocators are ignored, as in PyTorch.
    pub fn record_stream(
        &self,
        ptr: &DataPtr,
        stream: StreamId,
    ) -> Result<(), CachingAllocatorError> {
        if ptr.is_null() {
            return Ok(());
        }
        let Some(ctx) = ptr.cast_context::<DeleterContext>(caching_allocator_delete) else {
            return Ok(());
        };
        if ctx.is_null() {
            return Ok(());
        }
        // SAFETY: the deleter is ours, so the context is a live
        // `Box<DeleterContext>` owned by `ptr`, which we borrow.
        let ctx = unsafe { &*ctx };
        if !std::ptr::addr_eq(Arc::as_ptr(&ctx.owner), Arc::as_ptr(&self.inner)) {
            return Ok(());
        }
        self.inner.record_stream(ctx.ptr, stream)
    }
}

// SAFETY: for `n > 0`, `allocate` returns a block of at least `n` bytes
// carved out of memory the `RawDevice` promised to be valid and exclusively
// ours (its safety contract); the caching algorithm hands each byte to at
// most one live block (checked by `CachingAllocator::validate` in the
// tests), and only after work on other streams that used it has completed.
// The pointer is tagged `cuda:<index>`, matching `device_type()`. The
// deleter can run once from any thread. CUDA memory is not host-accessible,
// so point 5 (initialised host bytes) does not apply.
unsafe impl<D: RawDevice + 'static> Allocator for CachingDeviceAllocator<D> {
    fn allocate(&self, nbytes: usize) -> Result<DataPtr, AllocError> {
        let stream = current_stream(self.inner.device_index());
        self.allocate_on_stream(nbytes, stream)
            .map_err(|e| to_alloc_error(e, nbytes))
    }

    fn device_type(&self) -> DeviceType {
        DeviceType::Cuda
    }

    unsafe fn copy_data(&self, dst: *mut u8, src: *const u8, n: usize) -> Result<(), AllocError> {
        crate::device::copy_data_with(n, || {
            let copy = DeviceCopy {
                dst: DevicePtr(dst.addr() as u64),
                src: DevicePtr(src.addr() as u64),
                bytes: n as u64,
            };
            // SAFETY: forwarded from the caller's contract.
            unsafe { self.inner.device().copy_device_to_device(copy) }
        })
    }

    /// Byte counts are `requested_bytes.all` (what users asked for, as the
    /// trait wants); `allocations`/`frees` are `allocation.all`'s
    /// allocated/freed totals. A block freed while waiting for stream events
    /// keeps counting in `current_bytes` until the events complete, as
    /// PyTorch's `requested_bytes` does.
    fn stats(&self) -> Option<AllocatorStats> {
        let s = self.inner.stats();
        let r = s.requested_bytes[0];
        let a = s.allocation[0];
        let u = |v: i64| u64::try_from(v).unwrap_or(0);
        Some(AllocatorStats {
            current_bytes: u(r.current),
            peak_bytes: u(r.peak),
            allocated_bytes: u(r.allocated),
            freed_bytes: u(r.freed),
            allocations: u(a.allocated),
            frees: u(a.freed),
        })
    }

    fn reset_peak_stats(&self) {
        self.inner.reset_peak_stats();
    }

    fn name(&self) -> &str {
        "CachingDeviceAllocator"
    }
}
