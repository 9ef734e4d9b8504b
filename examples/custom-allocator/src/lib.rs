//! An example of what a downstream crate does to bring its own allocator:
//! implement [`c10_storage::Allocator`], then register it (or pass it to a
//! storage directly). This one caches freed blocks per power-of-two size
//! class, so a steady-state loop of same-sized tensors stops calling the
//! system allocator (the idea behind c10's CPU caching allocator).
//!
//! Walkthrough: `docs/custom-allocator.md` in the workspace.
//!
//! ```
//! use c10_storage::{register_allocator, Storage, DeviceType};
//! use custom_allocator::CachingCpuAllocator;
//!
//! // Registered allocators live for the rest of the process; priority 10
//! // outranks the default CPU allocator (which is only a fallback).
//! let (cache, took) = register_allocator(DeviceType::Cpu, CachingCpuAllocator::new(), 10)?;
//! assert!(took);
//! let s = Storage::with_device_type(1000, DeviceType::Cpu)?;
//! drop(s);                                     // the 1024-byte block goes back to the cache
//! let again = Storage::new(900, cache, true)?; // and is reused
//! assert_eq!(cache.cache_hits(), 1);
//! # Ok::<(), c10_storage::StorageError>(())
//! ```

// No panics on paths user input can reach: library code may not unwrap,
// expect or panic (tests may). The few justified sites carry an
// `#[allow(..., reason = "...")]` saying why they cannot fire.
#![cfg_attr(
    not(test),
    warn(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

use std::alloc::Layout;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use c10_storage::{
    AllocError, Allocator, AllocatorStats, DataPtr, Device, DeviceType, StatsCounter,
};
use parking_lot::Mutex;

/// Blocks are 64-byte aligned, like c10's CPU allocations.
pub const ALIGNMENT: usize = 64;
/// Size classes 64 B, 128 B, ..., 64 MiB; larger requests fail with an
/// out-of-memory error in this example (a real one would fall back).
const CLASSES: usize = 21;

/// A free block kept for reuse.
struct FreeBlock(*mut u8);
// SAFETY: a free block is owned by the cache alone.
unsafe impl Send for FreeBlock {}

/// The shared cache. Every live block's ticket holds an `Arc` to it, so the
/// cache outlives the allocator handle if blocks are still in use.
struct Cache {
    free: [Mutex<Vec<FreeBlock>>; CLASSES],
    hits: AtomicU64,
    misses: AtomicU64,
    /// Bytes live, peak, totals: c10-storage's reusable counter.
    stats: StatsCounter,
}

impl Drop for Cache {
    fn drop(&mut self) {
        for (class, list) in self.free.iter_mut().enumerate() {
            for block in list.get_mut().drain(..) {
                // SAFETY: cached blocks were allocated with `class_layout(class)`
                // and are owned by the cache alone.
                unsafe { std::alloc::dealloc(block.0, class_layout(class)) };
            }
        }
    }
}

/// What the deleter needs to return a block.
struct Ticket {
    data: *mut u8,
    class: usize,
    nbytes: usize,
    cache: Arc<Cache>,
}

/// A CPU allocator that caches freed blocks per power-of-two size class.
pub struct CachingCpuAllocator {
    cache: Arc<Cache>,
}

impl CachingCpuAllocator {
    /// An empty cache.
    pub fn new() -> CachingCpuAllocator {
        CachingCpuAllocator {
            cache: Arc::new(Cache {
                free: std::array::from_fn(|_| Mutex::new(Vec::new())),
                hits: AtomicU64::new(0),
                misses: AtomicU64::new(0),
                stats: StatsCounter::new(),
            }),
        }
    }

    /// Allocations served from the cache.
    pub fn cache_hits(&self) -> u64 {
        self.cache.hits.load(Ordering::Relaxed)
    }

    /// Allocations that went to the system allocator.
    pub fn cache_misses(&self) -> u64 {
        self.cache.misses.load(Ordering::Relaxed)
    }

    /// Returns every cached block to the system (like `empty_cache`).
    pub fn empty_cache(&self) {
        for (class, list) in self.cache.free.iter().enumerate() {
            for block in list.lock().drain(..) {
                // SAFETY: cached blocks were allocated with `class_layout(class)`
                // and are owned by the cache alone.
                unsafe { std::alloc::dealloc(block.0, class_layout(class)) };
            }
        }
    }
}

impl Default for CachingCpuAllocator {
    fn default() -> Self {
        Self::new()
    }
}

fn size_class(nbytes: usize) -> Option<usize> {
    let rounded = nbytes.max(ALIGNMENT).checked_next_power_of_two()?;
    let class =
        (rounded.trailing_zeros() as usize).checked_sub(ALIGNMENT.trailing_zeros() as usize)?;
    (class < CLASSES).then_some(class)
}

fn class_layout(class: usize) -> Layout {
    // Sizes are powers of two from 64 B to 64 MiB with alignment 64, always
    // a valid layout; the fallback is unreachable.
    Layout::from_size_align(ALIGNMENT << class, ALIGNMENT).unwrap_or(Layout::new::<u8>())
}

/// The deleter: returns the block to its cache.
///
/// # Safety
///
/// `ctx` must be a live `Box<Ticket>` made by `allocate`.
unsafe fn give_back(ctx: *mut c_void) {
    // SAFETY: guaranteed by the caller; consumed exactly once.
    let ticket = unsafe { Box::from_raw(ctx.cast::<Ticket>()) };
    let c = &ticket.cache;
    c.stats.record_free(ticket.nbytes);
    c.free[ticket.class].lock().push(FreeBlock(ticket.data));
}

// SAFETY: blocks are `ALIGNMENT << class >= nbytes` bytes, zeroed when fresh
// and initialised when reused, owned by exactly one DataPtr or by the cache
// at any time, tagged CPU; `give_back` may run on any thread (the cache is
// behind mutexes and kept alive by the ticket's Arc).
unsafe impl Allocator for CachingCpuAllocator {
    fn allocate(&self, nbytes: usize) -> Result<DataPtr, AllocError> {
        if nbytes == 0 {
            return Ok(DataPtr::null(Device::CPU));
        }
        let oom = || AllocError::OutOfMemory {
            nbytes,
            message: format!(
                "CachingCpuAllocator: can't allocate memory: you tried to allocate {nbytes} bytes."
            ),
        };
        let class = size_class(nbytes).ok_or_else(oom)?;
        let c = &self.cache;
        let cached = c.free[class].lock().pop();
        let data = match cached {
            Some(FreeBlock(p)) => {
                c.hits.fetch_add(1, Ordering::Relaxed);
                p
            }
            None => {
                c.misses.fetch_add(1, Ordering::Relaxed);
                // SAFETY: the class layout has a non-zero size. Zeroed because
                // the Allocator contract requires initialised host memory
                // (reused blocks hold earlier, initialised contents).
                let p = unsafe { std::alloc::alloc_zeroed(class_layout(class)) };
                if p.is_null() {
                    return Err(oom());
                }
                p
            }
        };
        c.stats.record_alloc(nbytes);
        let ticket = Box::into_raw(Box::new(Ticket {
            data,
            class,
            nbytes,
            cache: Arc::clone(c),
        }));
        // SAFETY: `give_back` consumes the ticket once and returns the block
        // to the cache the ticket keeps alive; it may run on any thread.
        Ok(unsafe { DataPtr::from_raw_parts(data, ticket.cast(), give_back, Device::CPU) })
    }

    fn device_type(&self) -> DeviceType {
        DeviceType::Cpu
    }

    // `copy_data` is not written: the default `memcpy` serves CPU memory.

    fn stats(&self) -> Option<AllocatorStats> {
        Some(self.cache.stats.snapshot())
    }

    fn reset_peak_stats(&self) {
        self.cache.stats.reset_peak();
    }

    fn name(&self) -> &str {
        "CachingCpuAllocator"
    }
}
