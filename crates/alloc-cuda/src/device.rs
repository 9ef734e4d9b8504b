//! The raw device seam: the few driver calls the caching allocator needs.
//!
//! [`RawDevice`] is everything [`CachingAllocator`](crate::CachingAllocator)
//! asks of a GPU: allocate and free device memory, report free/total memory,
//! create/record/query/synchronize/destroy events on streams, synchronize
//! the device or a stream, and (optionally) the virtual-memory-management
//! calls behind expandable segments. The real implementation is a thin
//! wrapper around the CUDA driver (cudarc, behind the `cuda` feature);
//! [`FakeDevice`](crate::FakeDevice) implements it in plain Rust for tests.
//!
//! Addresses, streams, events and physical handles are opaque integers
//! ([`DevicePtr`], [`StreamId`], [`EventId`], [`PhysHandle`]): the host
//! never dereferences device memory, so nothing here needs a Rust pointer.

use std::fmt;

#[cfg(feature = "snapshot-json")]
use serde::{Deserialize, Serialize};

/// Declares a `u64` newtype of the device interface (an address or a
/// handle CUDA gives as an integer): the derives, its JSON form (the bare
/// number), its zero constant and its `Display`, written once for both.
macro_rules! device_word {
    ($(#[$doc:meta])* $name:ident; $(#[$zero_doc:meta])* $zero:ident; $fmt:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[cfg_attr(feature = "snapshot-json", derive(Serialize, Deserialize))]
        #[cfg_attr(feature = "snapshot-json", serde(transparent))]
        pub struct $name(pub u64);

        impl $name {
            $(#[$zero_doc])*
            pub const $zero: $name = $name(0);
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, $fmt, self.0)
            }
        }
    };
}

device_word! {
    /// An address in device memory (CUDA's `CUdeviceptr`, a `u64`).
    ///
    /// It is only a number: nothing on the host dereferences it.
    ///
    /// ```
    /// use alloc_cuda::DevicePtr;
    /// assert!(DevicePtr::NULL.is_null());
    /// assert_eq!(DevicePtr(0x200).to_string(), "0x200");
    /// ```
    DevicePtr;
    /// The null device pointer.
    NULL;
    "{:#x}"
}

impl DevicePtr {
    /// The address as an integer.
    pub const fn addr(self) -> u64 {
        self.0
    }

    /// Whether this is the null pointer.
    pub const fn is_null(self) -> bool {
        self.0 == 0
    }
}

device_word! {
    /// An opaque stream identifier (CUDA's `cudaStream_t` as an integer).
    /// [`StreamId::DEFAULT`] (0) is the default (null) stream.
    ///
    /// Free blocks are only reused by the stream they were allocated on, and
    /// the allocator orders its free lists by stream id first, like PyTorch
    /// orders them by the `cudaStream_t` value.
    ///
    /// ```
    /// use alloc_cuda::StreamId;
    /// assert_eq!(StreamId::DEFAULT, StreamId(0));
    /// assert_eq!(StreamId(3).to_string(), "stream 3");
    /// ```
    StreamId;
    /// The default (null) stream.
    DEFAULT;
    "stream {}"
}

/// An opaque event identifier (a `cudaEvent_t` created without timing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(pub u64);

/// An opaque handle to a physical memory allocation made for expandable
/// segments (CUDA's `CUmemGenericAllocationHandle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PhysHandle(pub u64);

/// An error reported by a [`RawDevice`].
///
/// [`DeviceError::OutOfMemory`] is the one error the caching allocator
/// recovers from (it frees cached memory and retries, then reports its own
/// out-of-memory error); every other error is passed through to the caller,
/// as PyTorch rethrows every CUDA error but `cudaErrorMemoryAllocation`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// The device could not provide the memory (`cudaErrorMemoryAllocation`,
    /// `CUDA_ERROR_OUT_OF_MEMORY`).
    #[error("CUDA error: out of memory")]
    OutOfMemory,
    /// An argument was invalid (for example freeing an address that is not
    /// a live allocation, or using a destroyed event).
    #[error("CUDA error: invalid argument: {0}")]
    InvalidValue(String),
    /// The device does not support the operation (for example the VMM
    /// calls on a device without virtual memory management).
    #[error("CUDA error: operation not supported: {0}")]
    NotSupported(String),
    /// Any other driver error, with its numeric code and message.
    #[error("CUDA error {code}: {message}")]
    Other {
        /// The driver's error code (`CUresult`/`cudaError_t`).
        code: i32,
        /// The driver's error string.
        message: String,
    },
}

impl DeviceError {
    /// Whether this is [`DeviceError::OutOfMemory`].
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, DeviceError::OutOfMemory)
    }
}

/// One device-to-device copy for [`RawDevice::copy_device_to_device`]:
/// `bytes` bytes from `src` to `dst`, both on the same device (the
/// arguments of `cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice)`).
///
/// ```
/// use alloc_cuda::{DeviceCopy, DevicePtr};
/// let c = DeviceCopy { dst: DevicePtr(0x400), src: DevicePtr(0x200), bytes: 64 };
/// assert_eq!(c.bytes, 64);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceCopy {
    /// The buffer written.
    pub dst: DevicePtr,
    /// The buffer read.
    pub src: DevicePtr,
    /// How many bytes are copied.
    pub bytes: u64,
}

/// The minimal driver surface the caching allocator is written against.
///
/// One `RawDevice` value stands for one GPU. The allocator calls it while
/// holding its own lock (except `malloc` when `release_lock_on_cudamalloc`
/// is set), so implementations must be `Send + Sync` but need no ordering
/// guarantees between threads beyond their own internal consistency.
///
/// Every fallible method returns a [`DeviceError`]; only
/// [`DeviceError::OutOfMemory`] from [`malloc`](RawDevice::malloc) and
/// [`create_physical`](RawDevice::create_physical) is treated as
/// recoverable.
///
/// # Safety
///
/// [`CachingDeviceAllocator`](crate::CachingDeviceAllocator) hands out the
/// addresses this trait returns as `c10_storage` allocations, whose contract
/// promises non-overlapping memory that stays valid until freed. Implementors
/// therefore promise:
///
/// 1. a successful `malloc(n)` returns a non-null address of `n` bytes of
///    device memory that overlaps no other live `malloc` allocation and no
///    reserved address range, and stays valid until `free` is called on it;
/// 2. `reserve_address_range(n)` returns a non-null range of `n` bytes of
///    virtual address space that overlaps no live allocation or other
///    reservation, aligned to the requested alignment;
/// 3. after a successful `map` and `set_access`, the mapped bytes are valid
///    device memory until they are unmapped, and two live mappings never
///    share physical memory;
/// 4. `query_event`/`synchronize_event` report an event complete only once
///    all work submitted to its stream before the matching `record_event`
///    has finished (the allocator reuses memory on that promise).
///
/// # Example
///
/// A device that forwards to another and counts `malloc` calls (a real
/// backend wraps `cuMemAlloc`, `cuEventRecord`, ... the same way):
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use alloc_cuda::*;
///
/// struct Counting { inner: FakeDevice, mallocs: AtomicU64 }
/// // SAFETY: every call is forwarded to `FakeDevice`, which upholds the contract.
/// unsafe impl RawDevice for Counting {
///     fn malloc(&self, n: u64) -> Result<DevicePtr, DeviceError> {
///         self.mallocs.fetch_add(1, Ordering::Relaxed);
///         self.inner.malloc(n)
///     }
///     unsafe fn free(&self, p: DevicePtr) -> Result<(), DeviceError> {
///         // SAFETY: forwarded from the caller.
///         unsafe { self.inner.free(p) }
///     }
///     fn mem_get_info(&self) -> Result<(u64, u64), DeviceError> { self.inner.mem_get_info() }
///     fn create_event(&self) -> Result<EventId, DeviceError> { self.inner.create_event() }
///     fn record_event(&self, e: EventId, s: StreamId) -> Result<(), DeviceError> { self.inner.record_event(e, s) }
///     fn query_event(&self, e: EventId) -> Result<bool, DeviceError> { self.inner.query_event(e) }
///     fn synchronize_event(&self, e: EventId) -> Result<(), DeviceError> { self.inner.synchronize_event(e) }
///     fn destroy_event(&self, e: EventId) -> Result<(), DeviceError> { self.inner.destroy_event(e) }
///     fn synchronize_device(&self) -> Result<(), DeviceError> { self.inner.synchronize_device() }
///     fn synchronize_stream(&self, s: StreamId) -> Result<(), DeviceError> { self.inner.synchronize_stream(s) }
/// }
///
/// let dev = Counting { inner: FakeDevice::new(1 << 30), mallocs: AtomicU64::new(0) };
/// let a = CachingAllocator::new(dev, 0, CachingAllocatorConfig::default());
/// for _ in 0..10 {
///     let p = a.malloc(4096, StreamId::DEFAULT)?;
///     // SAFETY: nothing uses `p` any more.
///     unsafe { a.free(p)? };
/// }
/// assert_eq!(a.device().mallocs.load(Ordering::Relaxed), 1); // cached
/// # Ok::<(), CachingAllocatorError>(())
/// ```
pub unsafe trait RawDevice: Send + Sync {
    /// Allocates `nbytes` (> 0) bytes of device memory (`cudaMalloc`).
    ///
    /// Returns [`DeviceError::OutOfMemory`] when the device cannot provide
    /// the memory; the allocator then frees cached blocks and retries.
    fn malloc(&self, nbytes: u64) -> Result<DevicePtr, DeviceError>;

    /// Frees memory returned by [`malloc`](RawDevice::malloc) (`cudaFree`,
    /// which also synchronizes the device).
    ///
    /// # Safety
    ///
    /// `ptr` must come from `malloc` on this device and not have been freed,
    /// and no queued or running device work may still use it.
    unsafe fn free(&self, ptr: DevicePtr) -> Result<(), DeviceError>;

    /// `(free, total)` bytes of device memory (`cudaMemGetInfo`).
    fn mem_get_info(&self) -> Result<(u64, u64), DeviceError>;

    /// Creates an event without timing (`cudaEventCreateWithFlags(...,
    /// cudaEventDisableTiming)`). The allocator pools events and reuses them.
    fn create_event(&self) -> Result<EventId, DeviceError>;

    /// Records `event` on `stream` (`cudaEventRecord`): the event completes
    /// when all work submitted to `stream` so far has finished. Recording an
    /// event again replaces its previous recording.
    fn record_event(&self, event: EventId, stream: StreamId) -> Result<(), DeviceError>;

    /// Whether `event` has completed (`cudaEventQuery`: `cudaSuccess` →
    /// `true`, `cudaErrorNotReady` → `false`). An event that was never
    /// recorded is complete.
    fn query_event(&self, event: EventId) -> Result<bool, DeviceError>;

    /// Blocks until `event` has completed (`cudaEventSynchronize`).
    fn synchronize_event(&self, event: EventId) -> Result<(), DeviceError>;

    /// Destroys an event (`cudaEventDestroy`). The allocator only destroys
    /// events it created and no longer uses.
    fn destroy_event(&self, event: EventId) -> Result<(), DeviceError>;

    /// Blocks until all work on the device has finished
    /// (`cudaDeviceSynchronize`).
    fn synchronize_device(&self) -> Result<(), DeviceError>;

    /// Blocks until all work submitted to `stream` has finished
    /// (`cudaStreamSynchronize`). Expandable segments call it before
    /// unmapping pages, because `cuMemUnmap` does not synchronize.
    fn synchronize_stream(&self, stream: StreamId) -> Result<(), DeviceError>;

    /// Text describing per-process memory use for the out-of-memory message
    /// (PyTorch asks NVML; for example `"Including non-PyTorch memory, this
    /// process has 7.75 GiB memory in use. "`, ending in a space). The
    /// default is empty, which PyTorch also prints when NVML is missing.
    fn process_memory_report(&self) -> String {
        String::new()
    }

    /// Copies `copy.bytes` bytes between two device buffers
    /// (`cudaMemcpy(..., cudaMemcpyDeviceToDevice)`), for
    /// `Allocator::copy_data`. The default reports
    /// [`DeviceError::NotSupported`].
    ///
    /// # Safety
    ///
    /// `copy.src` must be valid for reads and `copy.dst` for writes of
    /// `copy.bytes` bytes on this device, and the ranges must not overlap.
    unsafe fn copy_device_to_device(&self, copy: DeviceCopy) -> Result<(), DeviceError> {
        let _ = copy;
        Err(DeviceError::NotSupported("device-to-device copy".into()))
    }

    // ---- Virtual memory management (expandable segments) ----------------

    /// Whether the VMM calls below work on this device (CUDA's
    /// `CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED`). When this
    /// is `false`, `expandable_segments:True` falls back to ordinary
    /// segments. Default: `false`.
    fn supports_vmm(&self) -> bool {
        false
    }

    /// The physical allocation granularity in bytes
    /// (`cuMemGetAllocationGranularity`, 2 MiB on current GPUs). Expandable
    /// segments use pages of 2 MiB (small pool) and 20 MiB (large pool),
    /// which must be multiples of it. Default: 2 MiB.
    fn vmm_granularity(&self) -> u64 {
        2 << 20
    }

    /// Reserves `size` bytes of virtual address space aligned to
    /// `alignment` (`cuMemAddressReserve`). No memory is backed yet.
    fn reserve_address_range(&self, size: u64, alignment: u64) -> Result<DevicePtr, DeviceError> {
        let _ = (size, alignment);
        Err(DeviceError::NotSupported("cuMemAddressReserve".into()))
    }

    /// Releases a range from [`reserve_address_range`](RawDevice::reserve_address_range)
    /// (`cuMemAddressFree`).
    ///
    /// # Safety
    ///
    /// `ptr`/`size` must be exactly a live reservation, and nothing may be
    /// mapped in it any more.
    unsafe fn free_address_range(&self, ptr: DevicePtr, size: u64) -> Result<(), DeviceError> {
        let _ = (ptr, size);
        Err(DeviceError::NotSupported("cuMemAddressFree".into()))
    }

    /// Creates `size` bytes of physical device memory (`cuMemCreate`,
    /// pinned device memory); `size` is a multiple of
    /// [`vmm_granularity`](RawDevice::vmm_granularity). Returns
    /// [`DeviceError::OutOfMemory`] when the device has no room.
    fn create_physical(&self, size: u64) -> Result<PhysHandle, DeviceError> {
        let _ = size;
        Err(DeviceError::NotSupported("cuMemCreate".into()))
    }

    /// Releases physical memory (`cuMemRelease`).
    ///
    /// # Safety
    ///
    /// `handle` must come from `create_physical` and no longer be mapped.
    unsafe fn release_physical(&self, handle: PhysHandle) -> Result<(), DeviceError> {
        let _ = handle;
        Err(DeviceError::NotSupported("cuMemRelease".into()))
    }

    /// Maps the whole of `handle` (which is `size` bytes) at `ptr`
    /// (`cuMemMap`); `ptr` lies in a reservation and is aligned to the
    /// granularity, and nothing is mapped there yet.
    fn map(&self, ptr: DevicePtr, size: u64, handle: PhysHandle) -> Result<(), DeviceError> {
        let _ = (ptr, size, handle);
        Err(DeviceError::NotSupported("cuMemMap".into()))
    }

    /// Makes `[ptr, ptr + size)` readable and writable by this device
    /// (`cuMemSetAccess`); every byte of it is mapped.
    fn set_access(&self, ptr: DevicePtr, size: u64) -> Result<(), DeviceError> {
        let _ = (ptr, size);
        Err(DeviceError::NotSupported("cuMemSetAccess".into()))
    }

    /// Unmaps `[ptr, ptr + size)` (`cuMemUnmap`), which is exactly one
    /// earlier mapping.
    ///
    /// # Safety
    ///
    /// No queued or running device work may still use the range (the
    /// allocator synchronizes the owning stream first).
    unsafe fn unmap(&self, ptr: DevicePtr, size: u64) -> Result<(), DeviceError> {
        let _ = (ptr, size);
        Err(DeviceError::NotSupported("cuMemUnmap".into()))
    }
}

// SAFETY: forwards every call to `T`, which upholds the contract.
unsafe impl<T: RawDevice + ?Sized> RawDevice for std::sync::Arc<T> {
    fn malloc(&self, nbytes: u64) -> Result<DevicePtr, DeviceError> {
        (**self).malloc(nbytes)
    }
    unsafe fn free(&self, ptr: DevicePtr) -> Result<(), DeviceError> {
        // SAFETY: forwarded from the caller.
        unsafe { (**self).free(ptr) }
    }
    fn mem_get_info(&self) -> Result<(u64, u64), DeviceError> {
        (**self).mem_get_info()
    }
    fn create_event(&self) -> Result<EventId, DeviceError> {
        (**self).create_event()
    }
    fn record_event(&self, event: EventId, stream: StreamId) -> Result<(), DeviceError> {
        (**self).record_event(event, stream)
    }
    fn query_event(&self, event: EventId) -> Result<bool, DeviceError> {
        (**self).query_event(event)
    }
    fn synchronize_event(&self, event: EventId) -> Result<(), DeviceError> {
        (**self).synchronize_event(event)
    }
    fn destroy_event(&self, event: EventId) -> Result<(), DeviceError> {
        (**self).destroy_event(event)
    }
    fn synchronize_device(&self) -> Result<(), DeviceError> {
        (**self).synchronize_device()
    }
    fn synchronize_stream(&self, stream: StreamId) -> Result<(), DeviceError> {
        (**self).synchronize_stream(stream)
    }
    fn process_memory_report(&self) -> String {
        (**self).process_memory_report()
    }
    unsafe fn copy_device_to_device(&self, copy: DeviceCopy) -> Result<(), DeviceError> {
        // SAFETY: forwarded from the caller.
        unsafe { (**self).copy_device_to_device(copy) }
    }
    fn supports_vmm(&self) -> bool {
        (**self).supports_vmm()
    }
    fn vmm_granularity(&self) -> u64 {
        (**self).vmm_granularity()
    }
    fn reserve_address_range(&self, size: u64, alignment: u64) -> Result<DevicePtr, DeviceError> {
        (**self).reserve_address_range(size, alignment)
    }
    unsafe fn free_address_range(&self, ptr: DevicePtr, size: u64) -> Result<(), DeviceError> {
        // SAFETY: forwarded from the caller.
        unsafe { (**self).free_address_range(ptr, size) }
    }
    fn create_physical(&self, size: u64) -> Result<PhysHandle, DeviceError> {
        (**self).create_physical(size)
    }
    unsafe fn release_physical(&self, handle: PhysHandle) -> Result<(), DeviceError> {
        // SAFETY: forwarded from the caller.
        unsafe { (**self).release_physical(handle) }
    }
    fn map(&self, ptr: DevicePtr, size: u64, handle: PhysHandle) -> Result<(), DeviceError> {
        (**self).map(ptr, size, handle)
    }
    fn set_access(&self, ptr: DevicePtr, size: u64) -> Result<(), DeviceError> {
        (**self).set_access(ptr, size)
    }
    unsafe fn unmap(&self, ptr: DevicePtr, size: u64) -> Result<(), DeviceError> {
        // SAFETY: forwarded from the caller.
        unsafe { (**self).unmap(ptr, size) }
    }
}

/// The body of `Allocator::copy_data` for device memory, shared by the
/// CUDA allocators: nothing to do for zero bytes, else `copy`, whose error
/// becomes [`AllocError::CopyFailed`](c10_storage::AllocError::CopyFailed)
/// for `n` bytes.
pub(crate) fn copy_data_with<E: fmt::Display>(
    n: usize,
    copy: impl FnOnce() -> Result<(), E>,
) -> Result<(), c10_storage::AllocError> {
    if n == 0 {
        return Ok(());
    }
    copy().map_err(|e| c10_storage::AllocError::CopyFailed {
        count: n,
        message: format!("device-to-device copy failed: {e}"),
    })
}
