//! What the non-caching backends share: byte counters and `DataPtr`s whose
//! deleter hands the block back to its owner.

use std::ffi::c_void;
use std::sync::Arc;

use c10_storage::{AllocatorStats, DataPtr, Device};
use parking_lot::Mutex;

/// What the non-caching backend handles (whose `inner` holds their
/// `device` and `counters`) share: the statistics accessors, and `Debug`
/// (the type's name, the device index and the statistics).
macro_rules! impl_backend_common {
    ($t:ident) => {
        impl $t {
            /// Bytes currently allocated (requested sizes).
            pub fn memory_allocated(&self) -> u64 {
                self.inner.counters.current()
            }

            /// Requested-byte statistics.
            pub fn stats(&self) -> c10_storage::AllocatorStats {
                self.inner.counters.get()
            }

            /// Sets the peak to the current value.
            pub fn reset_peak_stats(&self) {
                self.inner.counters.reset_peak();
            }
        }

        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($t))
                    .field("device", &self.inner.device.index())
                    .field("stats", &self.inner.counters.get())
                    .finish()
            }
        }
    };
}
pub(crate) use impl_backend_common;

/// The out-of-memory error of non-caching backend `backend` on `dev`,
/// logged as a warning: `nbytes` asked for, the `allocated` and `reserved`
/// bytes the backend counts, the device's free and total memory as the
/// driver reports them.
pub(crate) fn backend_oom(
    backend: &str,
    dev: &super::device::CudaDevice,
    nbytes: usize,
    allocated: u64,
    reserved: u64,
) -> crate::error::CachingAllocatorError {
    use crate::device::RawDevice;
    let (free, total) = dev.mem_get_info().unwrap_or((0, 0));
    let oom = crate::error::CudaOutOfMemory {
        tried_to_allocate: nbytes as u64,
        device: dev.index(),
        total_capacity: total,
        free,
        allowed: None,
        process_info: String::new(),
        allocated,
        reserved,
        exceeds_one_exabyte: false,
    };
    tracing::warn!(target: "alloc_cuda", device = dev.index(), "{backend} backend: {oom}");
    crate::error::CachingAllocatorError::OutOfMemory(oom)
}

/// Logs a free that `backend` could not make (from a `DataPtr`'s drop,
/// where nothing else can be done: the block stays allocated).
pub(crate) fn log_free_error(
    backend: &str,
    device: &super::device::CudaDevice,
    addr: u64,
    e: &dyn std::fmt::Display,
) {
    tracing::error!(
        target: "alloc_cuda",
        device = device.index(),
        "{backend} backend: freeing {addr:#x} failed: {e}"
    );
}

/// Requested-byte statistics (the `c10_storage::AllocatorStats` view).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    stats: Mutex<AllocatorStats>,
}

impl Counters {
    pub(crate) fn on_alloc(&self, n: u64) {
        let mut s = self.stats.lock();
        s.current_bytes += n;
        s.peak_bytes = s.peak_bytes.max(s.current_bytes);
        s.allocated_bytes += n;
        s.allocations += 1;
    }

    pub(crate) fn on_free(&self, n: u64) {
        let mut s = self.stats.lock();
        s.current_bytes = s.current_bytes.saturating_sub(n);
        s.freed_bytes += n;
        s.frees += 1;
    }

    pub(crate) fn get(&self) -> AllocatorStats {
        *self.stats.lock()
    }

    pub(crate) fn current(&self) -> u64 {
        self.stats.lock().current_bytes
    }

    pub(crate) fn reset_peak(&self) {
        let mut s = self.stats.lock();
        s.peak_bytes = s.current_bytes;
    }
}

/// Whoever takes a block back when its `DataPtr` is dropped.
pub(crate) trait BlockOwner: Send + Sync {
    /// Releases the block at `addr` of `size` requested bytes.
    fn release(&self, addr: u64, size: u64);
}

/// The context of a backend `DataPtr`.
pub(crate) struct BlockCtx {
    pub(crate) addr: u64,
    pub(crate) size: u64,
    pub(crate) owner: Arc<dyn BlockOwner>,
}

/// The deleter of backend `DataPtr`s.
///
/// # Safety
///
/// `ctx` must be a `Box<BlockCtx>` made by [`block_data_ptr`], not freed
/// before.
#[inline(never)]
pub(crate) unsafe fn block_delete(ctx: *mut c_void) {
    // SAFETY: guaranteed by the caller (`DataPtr` runs the deleter once on
    // the context it was made with).
    let ctx = unsafe { Box::from_raw(ctx.cast::<BlockCtx>()) };
    ctx.owner.release(ctx.addr, ctx.size);
}

/// A `DataPtr` for device memory at `addr` that `owner` takes back.
///
/// # Safety
///
/// `addr` must be a live block of at least `size` bytes on `device` that
/// `owner.release(addr, size)` frees exactly once, from any thread.
pub(crate) unsafe fn block_data_ptr(
    addr: u64,
    size: u64,
    device: Device,
    owner: Arc<dyn BlockOwner>,
) -> DataPtr {
    let ctx = Box::into_raw(Box::new(BlockCtx { addr, size, owner }));
    // Device memory has no host provenance: the host never dereferences it.
    let data = std::ptr::without_provenance_mut::<u8>(addr as usize);
    // SAFETY: `block_delete` frees exactly this box once and releases the
    // block (the caller's promise makes that sound from any thread).
    unsafe { DataPtr::from_raw_parts(data, ctx.cast(), block_delete, device) }
}
