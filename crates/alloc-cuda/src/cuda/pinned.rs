//! [`PinnedHostAllocator`]: a caching allocator of page-locked host memory
//! (PyTorch's `CachingHostAllocator`, with a different size rule).

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::sync::Arc;

use c10_storage::{AllocError, Allocator, AllocatorStats, DataPtr, Device, DeviceType};
use cudarc::driver::sys;
use parking_lot::Mutex;

use super::driver::{call, context, error_of, guarded, Context};
use super::error::CudaError;
use super::stream::resolve;
use crate::device::{DeviceError, StreamId};

/// Requests up to this size are rounded up to a power of two.
pub const PINNED_POW2_LIMIT: usize = 4 << 20;
/// Larger requests are rounded up to a multiple of this.
pub const PINNED_CHUNK: usize = 2 << 20;
/// The smallest block (one page: every `cuMemHostAlloc` takes at least a
/// page anyway).
pub const PINNED_MIN_BLOCK: usize = 4096;

/// The block size the pinned allocator uses for a request of `n` bytes
/// (`n > 0`), or `None` on overflow:
///
/// * up to [`PINNED_MIN_BLOCK`] (4 KiB): 4 KiB;
/// * up to [`PINNED_POW2_LIMIT`] (4 MiB): the next power of two, as
///   PyTorch does for every size;
/// * above: the next multiple of [`PINNED_CHUNK`] (2 MiB), so the waste is
///   under 2 MiB (under 50 % just above 4 MiB, under 1 % from 200 MiB on)
///   instead of up to 100 % (PyTorch turns 4 GiB + 1 byte into 8 GiB).
///
/// ```
/// use alloc_cuda::cuda::pinned_round_size;
/// assert_eq!(pinned_round_size(1), Some(4096));
/// assert_eq!(pinned_round_size(5000), Some(8192));
/// assert_eq!(pinned_round_size(4 << 20), Some(4 << 20));
/// assert_eq!(pinned_round_size((4 << 20) + 1), Some(6 << 20));
/// assert_eq!(pinned_round_size((4usize << 30) + 1), Some((4usize << 30) + (2 << 20)));
/// ```
pub fn pinned_round_size(n: usize) -> Option<usize> {
    if n <= PINNED_MIN_BLOCK {
        Some(PINNED_MIN_BLOCK)
    } else if n <= PINNED_POW2_LIMIT {
        n.checked_next_power_of_two()
    } else {
        n.div_ceil(PINNED_CHUNK).checked_mul(PINNED_CHUNK)
    }
}

/// The largest cached block a request whose block size is `size` may take:
/// the same size class up to [`PINNED_POW2_LIMIT`], and up to 1/8 more
/// above it.
pub fn pinned_reuse_limit(size: usize) -> usize {
    if size <= PINNED_POW2_LIMIT {
        size
    } else {
        size.saturating_add(size / 8)
    }
}

/// Statistics of the pinned allocator beyond `AllocatorStats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PinnedStats {
    /// Page-locked bytes held (live and cached blocks).
    pub reserved_bytes: u64,
    /// Bytes in cached (free) blocks.
    pub cached_bytes: u64,
    /// Live `cuMemHostAlloc` blocks (in use or cached).
    pub segments: u64,
    /// `cuMemHostAlloc` calls made.
    pub host_alloc_calls: u64,
    /// `cuMemFreeHost` calls made.
    pub host_free_calls: u64,
    /// Allocations served from the cache.
    pub cache_hits: u64,
}

/// A recorded event on some device.
struct Pending {
    device: i8,
    event: sys::CUevent,
}

struct Block {
    ptr: *mut u8,
    size: usize,
    requested: usize,
    allocated: bool,
    events: Vec<Pending>,
}

#[derive(Default)]
struct State {
    blocks: HashMap<usize, Block>,
    /// Free blocks by size: size → addresses.
    free: BTreeMap<usize, Vec<usize>>,
    /// Freed blocks waiting for their events.
    pending: Vec<usize>,
    /// Event pool per device.
    events: Vec<Pending>,
    stats: AllocatorStats,
    extra: PinnedStats,
}

// SAFETY: the raw pointers are page-locked host memory owned by the
// allocator and driver event handles; both may be used from any thread,
// and the state is only reached through the mutex.
unsafe impl Send for State {}

struct Inner {
    ctx: &'static Context,
    state: Mutex<State>,
}

fn bind_device(device: i8) -> Result<(), CudaError> {
    context(device)?.bind()?;
    Ok(())
}

/// Whether `p`'s event has completed: `CUDA_SUCCESS` → `true`,
/// `CUDA_ERROR_NOT_READY` → `false`, anything else is an error.
fn event_done(p: &Pending) -> Result<bool, CudaError> {
    bind_device(p.device)?;
    // SAFETY: `p.event` is a live event created by `record_event`.
    let r = guarded("cuEventQuery", || unsafe { sys::cuEventQuery(p.event) })?;
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(true),
        sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
        other => Err(CudaError::Device(error_of("cuEventQuery", other))),
    }
}

impl Inner {
    /// Moves freed blocks whose events have all completed to the free
    /// lists (PyTorch's `process_events`). `cuEventQuery` returning
    /// `CUDA_SUCCESS` means done and `CUDA_ERROR_NOT_READY` not yet; any
    /// other result (a sticky error from a failed kernel, a destroyed
    /// context) is returned as an error, as PyTorch's `C10_CUDA_CHECK`
    /// does, and the block stays waiting (it is never handed out on an
    /// error).
    fn process_events(&self, st: &mut State) -> Result<(), CudaError> {
        let mut still = Vec::new();
        let mut first_err: Option<CudaError> = None;
        for addr in std::mem::take(&mut st.pending) {
            let Some(b) = st.blocks.get_mut(&addr) else {
                continue;
            };
            let mut keep = Vec::new();
            for p in b.events.drain(..) {
                let done = if first_err.is_some() {
                    Ok(false)
                } else {
                    event_done(&p)
                };
                match done {
                    Ok(true) => st.events.push(p),
                    Ok(false) => keep.push(p),
                    Err(e) => {
                        first_err = Some(e);
                        keep.push(p);
                    }
                }
            }
            b.events = keep;
            if b.events.is_empty() {
                let size = b.size;
                st.free.entry(size).or_default().push(addr);
                st.extra.cached_bytes += size as u64;
            } else {
                still.push(addr);
            }
        }
        st.pending = still;
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn free_block(&self, addr: usize) {
        let mut st = self.state.lock();
        let st = &mut *st;
        let Some(b) = st.blocks.get_mut(&addr) else {
            tracing::error!(target: "alloc_cuda", "pinned allocator: {addr:#x} is not a block");
            return;
        };
        b.allocated = false;
        let (size, requested, waiting) = (b.size, b.requested, !b.events.is_empty());
        st.stats.current_bytes = st.stats.current_bytes.saturating_sub(requested as u64);
        st.stats.freed_bytes += requested as u64;
        st.stats.frees += 1;
        if waiting {
            st.pending.push(addr);
        } else {
            st.free.entry(size).or_default().push(addr);
            st.extra.cached_bytes += size as u64;
        }
    }
}

/// What a pinned `DataPtr`'s context holds.
struct PinnedCtx {
    addr: usize,
    owner: Arc<Inner>,
}

/// # Safety
///
/// `ctx` must be a `Box<PinnedCtx>` made by [`PinnedHostAllocator`], not
/// freed before.
#[inline(never)]
unsafe fn pinned_delete(ctx: *mut c_void) {
    // SAFETY: guaranteed by the caller.
    let ctx = unsafe { Box::from_raw(ctx.cast::<PinnedCtx>()) };
    ctx.owner.free_block(ctx.addr);
}

/// A caching allocator of page-locked ("pinned") host memory, for fast and
/// asynchronous copies between host and device (PyTorch's
/// `CachingHostAllocator`, `pin_memory()`).
///
/// * Memory comes from `cuMemHostAlloc` with
///   `CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP`: usable from
///   every context and mapped into the device address space, and **not**
///   write-combined, so the CPU reads it at normal speed (cudarc's
///   `alloc_pinned` is write-combined, which makes CPU reads very slow).
/// * Sizes follow [`pinned_round_size`] (powers of two up to 4 MiB, then
///   multiples of 2 MiB); a freed block is cached and reused by a request
///   of the same size class (up to 1/8 larger above 4 MiB). Blocks are
///   never split. New blocks are zero-filled (host memory must be
///   initialised, see the `Allocator` contract); reused blocks keep their
///   old bytes.
/// * A block used by an asynchronous copy is marked with
///   [`record_event`](PinnedHostAllocator::record_event) (PyTorch's
///   `CachingHostAllocator_recordEvent`): when freed, it is reused only
///   after the events complete.
/// * [`empty_cache`](PinnedHostAllocator::empty_cache) returns every cached
///   block with `cuMemFreeHost`.
///
/// It is an `Allocator` for `DeviceType::Cpu`, so it can back any CPU
/// storage: `Storage::new(n, pinned, false)`. It is not registered as the
/// CPU allocator. Cheap to clone.
#[derive(Clone)]
pub struct PinnedHostAllocator {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PinnedHostAllocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedHostAllocator")
            .field("stats", &self.pinned_stats())
            .finish()
    }
}

impl PinnedHostAllocator {
    /// A new, empty pinned allocator (host allocations go through device
    /// 0's primary context; the memory is portable to all contexts).
    pub fn new() -> Result<PinnedHostAllocator, CudaError> {
        let ctx = context(0)?;
        Ok(PinnedHostAllocator {
            inner: Arc::new(Inner {
                ctx,
                state: Mutex::new(State::default()),
            }),
        })
    }

    /// Allocates at least `nbytes` of page-locked memory (`nbytes == 0`
    /// gives a null pointer).
    pub fn allocate_pinned(&self, nbytes: usize) -> Result<DataPtr, CudaError> {
        if nbytes == 0 {
            return Ok(DataPtr::null(Device::CPU));
        }
        let size = pinned_round_size(nbytes).ok_or_else(|| {
            CudaError::OutOfMemory(format!(
                "pinned host allocator: a request of {nbytes} bytes overflows"
            ))
        })?;
        let inner = &self.inner;
        let reused = {
            let mut st = inner.state.lock();
            inner.process_events(&mut st)?;
            let limit = pinned_reuse_limit(size);
            let found = st
                .free
                .range_mut(size..=limit)
                .find_map(|(&s, v)| v.pop().map(|a| (s, a)));
            if let Some((s, addr)) = found {
                if st.free.get(&s).is_some_and(Vec::is_empty) {
                    st.free.remove(&s);
                }
                st.extra.cached_bytes -= s as u64;
                st.extra.cache_hits += 1;
                Some(addr)
            } else {
                None
            }
        };
        let addr = match reused {
            Some(a) => a,
            None => self.host_alloc(size)?,
        };
        let ptr = {
            let mut st = inner.state.lock();
            let st = &mut *st;
            let b = st.blocks.get_mut(&addr).ok_or_else(|| {
                CudaError::Unsupported(format!("pinned allocator lost block {addr:#x}"))
            })?;
            b.allocated = true;
            b.requested = nbytes;
            st.stats.current_bytes += nbytes as u64;
            st.stats.peak_bytes = st.stats.peak_bytes.max(st.stats.current_bytes);
            st.stats.allocated_bytes += nbytes as u64;
            st.stats.allocations += 1;
            b.ptr
        };
        let ctx = Box::into_raw(Box::new(PinnedCtx {
            addr,
            owner: inner.clone(),
        }));
        // SAFETY: `ptr` is a live block of at least `nbytes` page-locked,
        // initialised bytes handed to exactly this `DataPtr`;
        // `pinned_delete` returns it to the cache once, from any thread.
        Ok(unsafe { DataPtr::from_raw_parts(ptr, ctx.cast(), pinned_delete, Device::CPU) })
    }

    /// A fresh `cuMemHostAlloc` block of `size` bytes, zero-filled and
    /// registered (not allocated yet); returns its address.
    fn host_alloc(&self, size: usize) -> Result<usize, CudaError> {
        let inner = &self.inner;
        inner.ctx.bind()?;
        let flags = sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer; a context is bound.
        let r = guarded("cuMemHostAlloc", || unsafe {
            sys::cuMemHostAlloc(&mut p, size, flags)
        })?;
        if r != sys::CUresult::CUDA_SUCCESS || p.is_null() {
            let e = error_of("cuMemHostAlloc", r);
            // Free the cache and retry once, as PyTorch does.
            tracing::info!(target: "alloc_cuda", size, "pinned allocator: cuMemHostAlloc failed ({e}); emptying the cache and retrying");
            self.empty_cache()?;
            inner.ctx.bind()?;
            // SAFETY: as above.
            let r = guarded("cuMemHostAlloc", || unsafe {
                sys::cuMemHostAlloc(&mut p, size, flags)
            })?;
            if r != sys::CUresult::CUDA_SUCCESS || p.is_null() {
                let e = error_of("cuMemHostAlloc", r);
                tracing::warn!(target: "alloc_cuda", size, "pinned allocator: out of memory: {e}");
                return Err(CudaError::OutOfMemory(format!(
                    "CUDA out of memory. Tried to allocate {} of pinned host memory: {e}",
                    crate::format_size(size as u64)
                )));
            }
        }
        let ptr = p.cast::<u8>();
        // SAFETY: `ptr` is a fresh allocation of `size` writable bytes.
        unsafe { std::ptr::write_bytes(ptr, 0, size) };
        let addr = ptr.addr();
        let mut st = inner.state.lock();
        st.blocks.insert(
            addr,
            Block {
                ptr,
                size,
                requested: 0,
                allocated: false,
                events: Vec::new(),
            },
        );
        st.extra.reserved_bytes += size as u64;
        st.extra.segments += 1;
        st.extra.host_alloc_calls += 1;
        tracing::debug!(target: "alloc_cuda", address = addr, size, "pinned segment allocated (cuMemHostAlloc)");
        Ok(addr)
    }

    /// Records an event on `stream` of `device` for the block that starts
    /// at `ptr` (PyTorch's `CachingHostAllocator_recordEvent`): once freed,
    /// the block is reused only after the work queued on `stream` so far has
    /// finished. Call it after queueing an asynchronous copy from or to the
    /// block.
    pub fn record_event(
        &self,
        ptr: *const u8,
        device: i8,
        stream: StreamId,
    ) -> Result<(), CudaError> {
        let ctx = context(device)?;
        ctx.bind()?;
        let s = resolve(device, stream)?;
        let mut st = self.inner.state.lock();
        let st = &mut *st;
        if !st.blocks.get(&ptr.addr()).is_some_and(|b| b.allocated) {
            return Err(CudaError::Unsupported(format!(
                "{:#x} is not the start of a live pinned block",
                ptr.addr()
            )));
        }
        let event = match st.events.iter().position(|p| p.device == device) {
            Some(i) => st.events.swap_remove(i).event,
            None => {
                let mut ev: sys::CUevent = std::ptr::null_mut();
                // SAFETY: valid out-pointer; the device's context is bound.
                call("cuEventCreate", || unsafe {
                    sys::cuEventCreate(&mut ev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)
                })?;
                ev
            }
        };
        // SAFETY: `event` is a live event of `device`, `s` a live stream of it.
        if let Err(e) = call("cuEventRecord", || unsafe { sys::cuEventRecord(event, s) }) {
            st.events.push(Pending { device, event });
            return Err(e.into());
        }
        if let Some(b) = st.blocks.get_mut(&ptr.addr()) {
            b.events.push(Pending { device, event });
        }
        Ok(())
    }

    /// Whether `[ptr, ptr + len)` lies inside one live block.
    pub fn contains(&self, ptr: *const u8, len: usize) -> bool {
        let a = ptr.addr();
        let st = self.inner.state.lock();
        st.blocks
            .iter()
            .any(|(&start, b)| b.allocated && a >= start && a.saturating_add(len) <= start + b.size)
    }

    /// Frees every cached block with `cuMemFreeHost` (after processing
    /// completed events; blocks still waiting for events stay).
    pub fn empty_cache(&self) -> Result<(), CudaError> {
        let inner = &self.inner;
        inner.ctx.bind()?;
        let mut st = inner.state.lock();
        inner.process_events(&mut st)?;
        let st = &mut *st;
        let mut released = 0u64;
        let mut first_err: Option<DeviceError> = None;
        for (_, addrs) in std::mem::take(&mut st.free) {
            for addr in addrs {
                let Some(b) = st.blocks.remove(&addr) else {
                    continue;
                };
                // SAFETY: `b.ptr` is a cached (unused) `cuMemHostAlloc` block,
                // freed once and forgotten.
                match call("cuMemFreeHost", || unsafe {
                    sys::cuMemFreeHost(b.ptr.cast())
                }) {
                    Ok(()) => {
                        released += b.size as u64;
                        st.extra.reserved_bytes -= b.size as u64;
                        st.extra.cached_bytes -= b.size as u64;
                        st.extra.segments -= 1;
                        st.extra.host_free_calls += 1;
                    }
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
        }
        for p in st.events.drain(..) {
            if bind_device(p.device).is_ok() {
                // SAFETY: a pooled, unused event.
                let _ = call("cuEventDestroy", || unsafe {
                    sys::cuEventDestroy_v2(p.event)
                });
            }
        }
        tracing::info!(target: "alloc_cuda", released, reserved = st.extra.reserved_bytes, "pinned cache emptied");
        match first_err {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Statistics beyond `AllocatorStats`.
    pub fn pinned_stats(&self) -> PinnedStats {
        self.inner.state.lock().extra
    }
}

// SAFETY: (1) every non-null pointer is a live `cuMemHostAlloc` block of at
// least `n` bytes, readable and writable from the host until the deleter
// runs; (2) a block is handed to one `DataPtr` at a time and blocks are
// distinct allocations, so live allocations never overlap; (3) pointers are
// tagged `Device::CPU`, matching `device_type()`; (4) the deleter only
// returns the block to the cache under a mutex, from any thread; (5) new
// blocks are zero-filled and reused ones hold bytes written before, so the
// bytes are initialised.
unsafe impl Allocator for PinnedHostAllocator {
    fn allocate(&self, nbytes: usize) -> Result<DataPtr, AllocError> {
        self.allocate_pinned(nbytes).map_err(|e| match e {
            CudaError::OutOfMemory(message) => AllocError::OutOfMemory { nbytes, message },
            other => AllocError::from(other),
        })
    }

    fn device_type(&self) -> DeviceType {
        DeviceType::Cpu
    }

    // No `copy_data`: pinned memory is host memory (`DeviceType::Cpu`),
    // which the trait's default memcpy serves.

    fn stats(&self) -> Option<AllocatorStats> {
        Some(self.inner.state.lock().stats)
    }

    fn reset_peak_stats(&self) {
        let mut st = self.inner.state.lock();
        st.stats.peak_bytes = st.stats.current_bytes;
    }

    fn name(&self) -> &str {
        "PinnedHostAllocator"
    }
}
