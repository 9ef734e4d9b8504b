//! [`CudaDevice`]: the [`RawDevice`] seam implemented with the CUDA driver
//! API (through cudarc's `sys` bindings).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::driver::sys;
use parking_lot::Mutex;

use super::driver::{call, context, cu_event, error_of, event_id, guarded, mem_get_info, Context};
use super::error::CudaError;
use super::stream::resolve;
use crate::device::{DeviceCopy, DeviceError, DevicePtr, EventId, PhysHandle, RawDevice, StreamId};

const MIB: u64 = 1 << 20;

/// One GPU, as the caching allocator sees it: `cuMemAlloc`/`cuMemFree`,
/// `cuMemGetInfo`, events, synchronization, and the virtual-memory calls
/// behind expandable segments.
///
/// Every call binds the device's primary context to the calling thread
/// first, so a `CudaDevice` can be used from any thread. Streams and events
/// passed in are checked: only the default stream, streams made by
/// [`CudaStream::new`](crate::cuda::CudaStream::new) on this device and
/// events made by this device's [`create_event`](RawDevice::create_event)
/// reach the driver, so no made-up id can crash it.
///
/// ```no_run
/// use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, RawDevice, StreamId};
/// use alloc_cuda::cuda::CudaDevice;
/// let dev = CudaDevice::new(0)?;
/// println!("{} with {} bytes", dev.name(), dev.total_memory());
/// let alloc = CachingAllocator::new(dev, 0, CachingAllocatorConfig::default());
/// let p = alloc.malloc(1 << 20, StreamId::DEFAULT)?;
/// // SAFETY: nothing uses `p` any more.
/// unsafe { alloc.free(p)? };
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct CudaDevice {
    index: i8,
    ctx: &'static Context,
    name: String,
    total_memory: u64,
    compute_capability: (i32, i32),
    vmm: bool,
    granularity: u64,
    memory_pools: bool,
    events: Mutex<HashSet<u64>>,
    mallocs: AtomicU64,
    frees: AtomicU64,
}

/// Allocation properties for `cuMemCreate` on `ordinal`: pinned device
/// memory, no shareable handle.
pub(crate) fn vmm_prop(ordinal: i32) -> sys::CUmemAllocationProp {
    sys::CUmemAllocationProp {
        type_: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: sys::CUmemAllocationHandleType_enum(0),
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: ordinal,
        },
        win32HandleMetaData: std::ptr::null_mut(),
        allocFlags: sys::CUmemAllocationProp_st__bindgen_ty_1 {
            compressionType: 0,
            gpuDirectRDMACapable: 0,
            usage: 0,
            reserved: [0; 4],
        },
    }
}

impl CudaDevice {
    /// Opens device `index` (retaining its primary context) and reads its
    /// properties. Fails with `CUDA is not available: ...` without a driver
    /// or device.
    pub fn new(index: i8) -> Result<CudaDevice, CudaError> {
        let ctx = context(index)?;
        ctx.bind()?;
        let mut buf = [0 as std::ffi::c_char; 256];
        // SAFETY: `buf` holds 256 bytes; the driver writes a NUL-terminated
        // name of at most that many.
        call("cuDeviceGetName", || unsafe {
            sys::cuDeviceGetName(buf.as_mut_ptr(), buf.len() as i32, ctx.device)
        })?;
        // SAFETY: `c_char` and `u8` have the same size; the buffer is
        // initialised (zeroed, then written by the driver).
        let bytes: Vec<u8> = buf
            .iter()
            .map(|&c| c as u8)
            .take_while(|&b| b != 0)
            .collect();
        let name = String::from_utf8_lossy(&bytes).into_owned();
        let mut total = 0usize;
        // SAFETY: valid out-pointer and device.
        call("cuDeviceTotalMem", || unsafe {
            sys::cuDeviceTotalMem_v2(&mut total, ctx.device)
        })?;
        let major =
            ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor =
            ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let vmm_attr = ctx
            .attribute(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED,
            )
            .unwrap_or(0);
        let memory_pools = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)
            .unwrap_or(0)
            != 0;
        let mut granularity = 0u64;
        if vmm_attr != 0 {
            let prop = vmm_prop(i32::from(index));
            let mut g = 0usize;
            // SAFETY: valid out-pointer and property struct.
            let r = call("cuMemGetAllocationGranularity", || unsafe {
                sys::cuMemGetAllocationGranularity(
                    &mut g,
                    &prop,
                    sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
                )
            });
            if r.is_ok() {
                granularity = g as u64;
            }
        }
        // Expandable segments map 2 MiB and 20 MiB pages.
        let vmm = vmm_attr != 0 && granularity > 0 && (2 * MIB).is_multiple_of(granularity);
        tracing::info!(
            target: "alloc_cuda",
            device = index,
            name = %name,
            total_memory = total,
            vmm,
            memory_pools,
            "CUDA device opened"
        );
        Ok(CudaDevice {
            index,
            ctx,
            name,
            total_memory: total as u64,
            compute_capability: (major, minor),
            vmm,
            granularity: if granularity == 0 {
                2 * MIB
            } else {
                granularity
            },
            memory_pools,
            events: Mutex::new(HashSet::new()),
            mallocs: AtomicU64::new(0),
            frees: AtomicU64::new(0),
        })
    }

    /// The device index.
    pub fn index(&self) -> i8 {
        self.index
    }

    /// The device's name (`cuDeviceGetName`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Total device memory in bytes.
    pub fn total_memory(&self) -> u64 {
        self.total_memory
    }

    /// `(major, minor)` compute capability.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// Whether the device supports the stream-ordered allocator
    /// (`cuMemAllocAsync`, the `cudaMallocAsync` backend).
    pub fn supports_memory_pools(&self) -> bool {
        self.memory_pools
    }

    /// How many `cuMemAlloc` / `cuMemFree` calls this device made.
    pub fn driver_alloc_counts(&self) -> (u64, u64) {
        (
            self.mallocs.load(Ordering::Relaxed),
            self.frees.load(Ordering::Relaxed),
        )
    }

    /// Binds the primary context to this thread.
    pub(crate) fn bind(&self) -> Result<(), DeviceError> {
        self.ctx.bind()
    }

    pub(crate) fn context(&self) -> &'static Context {
        self.ctx
    }

    fn stream(&self, s: StreamId) -> Result<sys::CUstream, DeviceError> {
        resolve(self.index, s)
    }

    fn event(&self, e: EventId) -> Result<sys::CUevent, DeviceError> {
        if self.events.lock().contains(&e.0) {
            Ok(cu_event(e))
        } else {
            Err(DeviceError::InvalidValue(format!(
                "event {:#x} was not created by cuda:{}",
                e.0, self.index
            )))
        }
    }
}

// SAFETY: every method forwards to the CUDA driver with this device's
// primary context bound, and the driver provides the promised guarantees:
// (1) `cuMemAlloc` returns fresh device memory of the requested size that
// overlaps no other live allocation or reservation, valid until `cuMemFree`;
// (2) `cuMemAddressReserve` returns a fresh, aligned virtual range that
// overlaps no allocation or other reservation; (3) after `cuMemMap` and
// `cuMemSetAccess` the range is backed by the handle's physical memory,
// readable and writable by this device, until `cuMemUnmap`, and each
// `cuMemCreate` handle is distinct physical memory that the allocator maps
// once; (4) `cuEventQuery`/`cuEventSynchronize` report an event complete
// only when the work recorded before it on its stream has finished. Made-up
// stream and event ids are rejected before they reach the driver.
unsafe impl RawDevice for CudaDevice {
    fn malloc(&self, nbytes: u64) -> Result<DevicePtr, DeviceError> {
        self.bind()?;
        let n = usize::try_from(nbytes).map_err(|_| DeviceError::OutOfMemory)?;
        let mut p: sys::CUdeviceptr = 0;
        // SAFETY: valid out-pointer; the context is bound.
        let r = guarded("cuMemAlloc", || unsafe { sys::cuMemAlloc_v2(&mut p, n) })?;
        if r != sys::CUresult::CUDA_SUCCESS {
            let e = error_of("cuMemAlloc", r);
            if e.is_out_of_memory() {
                tracing::warn!(target: "alloc_cuda", device = self.index, size = nbytes, "cuMemAlloc: out of memory");
            }
            return Err(e);
        }
        self.mallocs.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(target: "alloc_cuda", device = self.index, address = p, size = nbytes, "segment allocated (cuMemAlloc)");
        Ok(DevicePtr(p))
    }

    unsafe fn free(&self, ptr: DevicePtr) -> Result<(), DeviceError> {
        // No synchronization here: the caller guarantees no queued work
        // uses `ptr` (the caching allocator synchronizes the device once
        // per release batch, the raw backend before each free).
        // SAFETY: the caller guarantees `ptr` is a live `malloc` allocation
        // of this device that no queued or running work uses.
        call("cuMemFree", || unsafe { sys::cuMemFree_v2(ptr.0) })?;
        self.frees.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(target: "alloc_cuda", device = self.index, address = ptr.0, "segment freed (cuMemFree)");
        Ok(())
    }

    fn mem_get_info(&self) -> Result<(u64, u64), DeviceError> {
        self.bind()?;
        mem_get_info()
    }

    fn create_event(&self) -> Result<EventId, DeviceError> {
        self.bind()?;
        let mut ev: sys::CUevent = std::ptr::null_mut();
        // SAFETY: valid out-pointer; context bound.
        call("cuEventCreate", || unsafe {
            sys::cuEventCreate(&mut ev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)
        })?;
        let id = event_id(ev);
        self.events.lock().insert(id.0);
        Ok(id)
    }

    fn record_event(&self, event: EventId, stream: StreamId) -> Result<(), DeviceError> {
        self.bind()?;
        let (e, s) = (self.event(event)?, self.stream(stream)?);
        // SAFETY: `e` is a live event and `s` a live stream of this device.
        call("cuEventRecord", || unsafe { sys::cuEventRecord(e, s) })
    }

    fn query_event(&self, event: EventId) -> Result<bool, DeviceError> {
        self.bind()?;
        let e = self.event(event)?;
        // SAFETY: `e` is a live event of this device.
        let r = guarded("cuEventQuery", || unsafe { sys::cuEventQuery(e) })?;
        match r {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            other => Err(error_of("cuEventQuery", other)),
        }
    }

    fn synchronize_event(&self, event: EventId) -> Result<(), DeviceError> {
        self.bind()?;
        let e = self.event(event)?;
        // SAFETY: `e` is a live event of this device.
        call("cuEventSynchronize", || unsafe {
            sys::cuEventSynchronize(e)
        })
    }

    fn destroy_event(&self, event: EventId) -> Result<(), DeviceError> {
        self.bind()?;
        let e = self.event(event)?;
        // SAFETY: `e` is a live event of this device, forgotten below.
        call("cuEventDestroy", || unsafe { sys::cuEventDestroy_v2(e) })?;
        self.events.lock().remove(&event.0);
        Ok(())
    }

    fn synchronize_device(&self) -> Result<(), DeviceError> {
        self.bind()?;
        // SAFETY: the context is bound.
        call("cuCtxSynchronize", || unsafe { sys::cuCtxSynchronize() })
    }

    fn synchronize_stream(&self, stream: StreamId) -> Result<(), DeviceError> {
        self.bind()?;
        let s = self.stream(stream)?;
        // SAFETY: a live stream of this device (or the default stream).
        call("cuStreamSynchronize", || unsafe {
            sys::cuStreamSynchronize(s)
        })
    }

    unsafe fn copy_device_to_device(&self, copy: DeviceCopy) -> Result<(), DeviceError> {
        let DeviceCopy { dst, src, bytes } = copy;
        self.bind()?;
        let n = usize::try_from(bytes)
            .map_err(|_| DeviceError::InvalidValue(format!("copy of {bytes} bytes")))?;
        // SAFETY: the caller guarantees both ranges are valid device memory
        // of this device and do not overlap. `cuMemcpyDtoD` is ordered with
        // the legacy default stream.
        call("cuMemcpyDtoD", || unsafe {
            sys::cuMemcpyDtoD_v2(dst.0, src.0, n)
        })?;
        self.synchronize_stream(StreamId::DEFAULT)
    }

    fn supports_vmm(&self) -> bool {
        self.vmm
    }

    fn vmm_granularity(&self) -> u64 {
        self.granularity
    }

    fn reserve_address_range(&self, size: u64, alignment: u64) -> Result<DevicePtr, DeviceError> {
        self.bind()?;
        let (n, a) = (to_usize(size)?, to_usize(alignment)?);
        let mut p: sys::CUdeviceptr = 0;
        // SAFETY: valid out-pointer; no fixed address is requested.
        call("cuMemAddressReserve", || unsafe {
            sys::cuMemAddressReserve(&mut p, n, a, 0, 0)
        })?;
        tracing::debug!(target: "alloc_cuda", device = self.index, address = p, size, "address range reserved");
        Ok(DevicePtr(p))
    }

    unsafe fn free_address_range(&self, ptr: DevicePtr, size: u64) -> Result<(), DeviceError> {
        self.bind()?;
        let n = to_usize(size)?;
        // SAFETY: the caller guarantees an exact, unmapped reservation.
        call("cuMemAddressFree", || unsafe {
            sys::cuMemAddressFree(ptr.0, n)
        })?;
        tracing::debug!(target: "alloc_cuda", device = self.index, address = ptr.0, size, "address range released");
        Ok(())
    }

    fn create_physical(&self, size: u64) -> Result<PhysHandle, DeviceError> {
        self.bind()?;
        let n = to_usize(size)?;
        let prop = vmm_prop(i32::from(self.index));
        let mut h: sys::CUmemGenericAllocationHandle = 0;
        // SAFETY: valid out-pointer and property struct.
        call("cuMemCreate", || unsafe {
            sys::cuMemCreate(&mut h, n, &prop, 0)
        })?;
        tracing::debug!(target: "alloc_cuda", device = self.index, size, "physical memory created (cuMemCreate)");
        Ok(PhysHandle(h))
    }

    unsafe fn release_physical(&self, handle: PhysHandle) -> Result<(), DeviceError> {
        self.bind()?;
        // SAFETY: the caller guarantees a live, unmapped handle.
        call("cuMemRelease", || unsafe { sys::cuMemRelease(handle.0) })
    }

    fn map(&self, ptr: DevicePtr, size: u64, handle: PhysHandle) -> Result<(), DeviceError> {
        self.bind()?;
        let n = to_usize(size)?;
        // SAFETY: the driver validates the range (it must lie in a
        // reservation and be unmapped) and the handle, and reports errors.
        call("cuMemMap", || unsafe {
            sys::cuMemMap(ptr.0, n, 0, handle.0, 0)
        })
    }

    fn set_access(&self, ptr: DevicePtr, size: u64) -> Result<(), DeviceError> {
        self.bind()?;
        let n = to_usize(size)?;
        let desc = sys::CUmemAccessDesc {
            location: sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: i32::from(self.index),
            },
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: one valid descriptor; the driver validates the range.
        call("cuMemSetAccess", || unsafe {
            sys::cuMemSetAccess(ptr.0, n, &desc, 1)
        })
    }

    unsafe fn unmap(&self, ptr: DevicePtr, size: u64) -> Result<(), DeviceError> {
        self.bind()?;
        let n = to_usize(size)?;
        // SAFETY: the caller guarantees no device work uses the range.
        call("cuMemUnmap", || unsafe { sys::cuMemUnmap(ptr.0, n) })
    }
}

fn to_usize(v: u64) -> Result<usize, DeviceError> {
    usize::try_from(v).map_err(|_| DeviceError::InvalidValue(format!("{v} does not fit in usize")))
}
