//! # alloc-cpu
//!
//! The host-memory backend of the workspace: the default CPU allocator
//! (c10's `DefaultCPUAllocator`, `alloc_cpu`/`free_cpu`) and storages backed
//! by memory-mapped files. `c10-storage` defines the [`Allocator`] trait and
//! the per-device registry; this crate supplies what sits in the CPU slot
//! unless a user registers something else, and the tensor crates above get
//! their CPU memory through [`cpu_allocator`].
//!
//! ## The allocator and its block header
//!
//! [`CpuAllocator`] returns 64-byte aligned memory ([`ALIGNMENT`], c10's
//! `gAlignment`) from `std::alloc` (so from whatever `#[global_allocator]`
//! the program uses). Every allocation is a "simple"
//! [`DataPtr`](c10_storage::DataPtr), data
//! pointer == context as in c10, so the raw API
//! ([`Allocator::raw_allocate`] / [`Allocator::raw_deallocate`]) works.
//! As in c10, an allocation's deleter is the allocator's
//! [`raw_deleter`](Allocator::raw_deleter), except for allocations counted
//! by the statistics (below), which carry a distinct counting deleter; the
//! raw deleter frees (and counts) both kinds.
//!
//! A deleter receives only the data pointer, but freeing needs to know how
//! the block was obtained and how big it is. So each non-empty block has a
//! header of [`HEADER_SIZE`] = 64 bytes right before the data:
//!
//! ```text
//! start                          data - 64          data (64-aligned)
//! |<- padding (0..64 bytes) ->|<- header ->|<------- size bytes ------->|
//! ```
//!
//! The header records the requested size, a pointer to the statistics
//! block for counted allocations, the block's source, its start and total
//! size; the deleter reads it at `data - 64`. Blocks come from two sources:
//!
//! * **`std::alloc`** with 16-byte alignment (at most `malloc`'s, so zeroed
//!   blocks come from `calloc`, which skips the `memset` for fresh pages;
//!   asking `std::alloc` for 64-byte alignment would turn `alloc_zeroed`
//!   into `posix_memalign` + `memset`), over-allocated by 64 bytes so the
//!   data can be aligned by hand;
//! * **anonymous `mmap`** for blocks of 32 MiB and more on Linux (glibc's
//!   largest dynamic `mmap` threshold: smaller blocks are recycled by
//!   `malloc` without a system call or page fault, larger ones `malloc`
//!   would map and unmap anyway): the kernel hands out zeroed pages for
//!   free, and the mapping is advised as transparent huge pages
//!   (`MADV_HUGEPAGE`), which cuts page faults on first touch 512-fold. Measured here: allocating and filling a
//!   64 MiB buffer took about 76 ms with `posix_memalign` + `memset` and
//!   about 17 ms with huge pages. (c10 does the same only behind
//!   `THP_MEM_ALLOC_ENABLE`.) Under Miri, and off Linux, every block comes
//!   from `std::alloc`.
//!
//! Freed large blocks are not unmapped right away but kept in a bounded
//! cache (see "The large-block cache" below).
//!
//! The cost is 64 to 128 bytes per allocation (negligible for tensors;
//! noticeable only for swarms of tiny ones). The alternative,
//! `posix_memalign` + `free` as c10 does, needs no header but is not
//! portable (Windows needs `_aligned_malloc`/`_aligned_free`), bypasses the
//! program's global allocator, and cannot run under Miri, which checks every
//! allocation and free of this crate.
//!
//! `allocate(0)` returns a null pointer and allocates nothing (c10's
//! `alloc_cpu(0)`). Failure is never an abort: a size whose layout cannot
//! exist (past `isize::MAX`, rejected before any allocation is attempted)
//! or a null from the system allocator gives
//! [`AllocError::OutOfMemory`](c10_storage::AllocError::OutOfMemory) with
//! c10's text: `DefaultCPUAllocator: can't allocate memory: you tried to
//! allocate N bytes. Error code 12 (Cannot allocate memory)`.
//!
//! ## The large-block cache
//!
//! Every fresh mapping costs a page fault per page and the kernel zeroing
//! each page on first touch, which was most of the price of `clone()` of a
//! 64 MiB tensor in a loop (`docs/benchmarks.md`: 86% of `memcpy` without
//! the cache, at `memcpy` speed with it). glibc keeps smaller freed blocks
//! for reuse anyway; the cache extends that to blocks of
//! [`LARGE_BLOCK_BYTES`] (32 MiB) and more, bounded:
//!
//! * **Bounded.** At most [`large_block_cache_limit`] bytes are kept
//!   (default [`DEFAULT_LARGE_BLOCK_CACHE_LIMIT`] = 256 MiB); the least
//!   recently freed blocks are unmapped first. A block is reused for a
//!   request needing at most a quarter less than its size, the smallest
//!   that fits. [`set_large_block_cache_limit`]`(0)` turns the cache off.
//! * **Reclaimable.** A cached block is advised `MADV_FREE`: while it waits
//!   the kernel may take its pages back whenever it needs the memory,
//!   without swapping (a reclaimed page reads as zeros and is faulted in
//!   again on first touch). The cache saves the faults when memory is
//!   plentiful and never forces the system to keep memory it needs.
//! * **Emptied on demand.** [`empty_cache`] unmaps everything cached (the
//!   host-memory counterpart of `torch.cuda.empty_cache()`), and a mapping
//!   the kernel refuses empties the cache and is retried once before
//!   out-of-memory is reported.
//! * **No stale data.** `allocate` zero-fills (or junk-fills) a recycled
//!   block exactly as it would a fresh one; only
//!   [`Allocator::allocate_for_overwrite`], whose caller writes every byte
//!   before reading, gets it as it is.
//!
//! c10's CPU allocator has no such cache (its mobile `CPUCachingAllocator`
//! does, unbounded and scoped); jemalloc and mimalloc keep freed memory the
//! same way, with `MADV_FREE`. The cache is process-wide, shared by every
//! [`CpuAllocator`], because a deleter sees only its block and a block may
//! outlive the allocator that made it. It exists on Linux only and is never
//! used under Miri; elsewhere the functions work and the cache stays empty.
//! [`large_block_cache_stats`] reports its size, hits and misses.
//!
//! ```
//! use alloc_cpu::{empty_cache, large_block_cache_stats, set_large_block_cache_limit};
//!
//! let previous = set_large_block_cache_limit(128 << 20); // keep at most 128 MiB
//! empty_cache(); // give back whatever is cached now
//! assert_eq!(large_block_cache_stats().cached_bytes, 0);
//! set_large_block_cache_limit(previous);
//! ```
//!
//! ## Fill modes
//!
//! c10 leaves fresh CPU memory uninitialised unless a debug flag asks for
//! zero or junk fill. Here memory is **always initialised**, because the
//! [`Allocator`] contract requires it for host memory (safe code reads
//! storage bytes as `&[u8]`; reading uninitialised memory is undefined
//! behaviour in Rust). [`FillMode::Zero`], the default, uses `calloc` or a
//! fresh anonymous mapping (see above), which cost nothing for fresh pages
//! and a `memset` for recycled ones. [`FillMode::Junk`] is
//! c10's junk fill (the pattern [`JUNK_PATTERN`], NaN as `f32`) for
//! catching reads of never-written memory. Being an enum, "both at once"
//! (a fatal error in c10) cannot be expressed.
//!
//! [`Allocator::allocate_for_overwrite`] (what `clone` and `contiguous` use
//! for the destination their copy overwrites in full) skips the zero fill:
//! like c10's `allocate`, it leaves recycled bytes as they are. Junk mode
//! still junk-fills.
//!
//! ## Statistics: cost model
//!
//! Tracking is opt-in per allocator ([`CpuAllocatorBuilder::track_stats`],
//! [`CpuAllocator::set_track_stats`] at run time). While it is off, the
//! only cost is one relaxed atomic load per allocation: the allocation gets
//! the plain deleter and touches no shared counter. An allocation made
//! while it is on gets a different, counting deleter and a reference to the
//! shared statistics block in its header (six relaxed atomic updates and
//! one reference-count increment on allocation, the same on free). Because
//! the choice is recorded per allocation, switching tracking on or off at
//! any time keeps the counts consistent, and counted allocations that
//! outlive their allocator still find their (reference-counted) statistics
//! block. The numbers are [`AllocatorStats`](c10_storage::AllocatorStats)
//! of requested bytes (current, peak, total allocated/freed, counts).
//!
//! ## The default and the registry
//!
//! [`builtin_cpu_allocator`] is a process-wide zero-filling allocator
//! without statistics (c10's `GetDefaultCPUAllocator`). [`cpu_allocator`]
//! makes sure it is installed as the CPU **default** with
//! [`c10_storage::install_default_allocator`] and returns whatever the
//! registry holds for [`DeviceType::Cpu`]: a user registration with
//! [`c10_storage::set_allocator`] (any priority, made before or after)
//! wins over the default.
//!
//! ## Memory-mapped storages
//!
//! [`mmap::map_file`] and [`mmap::map_file_range`] map a file read-only,
//! read-write (changes reach the file) or copy-on-write (they do not) as a
//! CPU storage that unmaps when dropped. They are `unsafe`: the caller
//! promises that nothing else writes or truncates the file while it is
//! mapped (see the [`mmap`] module). [`mmap::read_file`] and
//! [`mmap::read_file_range`] are the safe alternative: they copy the bytes
//! into an ordinary storage.
//!
//! ## Example
//!
//! ```
//! use alloc_cpu::{cpu_allocator, empty_storage, CpuAllocator, FillMode, ALIGNMENT};
//! use c10_storage::{Allocator, Storage};
//!
//! // The registry's CPU allocator (the default unless a user registered one).
//! let p = cpu_allocator().allocate(1000)?;
//! assert_eq!(p.get() as usize % ALIGNMENT, 0);
//!
//! // A resizable storage; growth keeps the old bytes, new ones are zero.
//! let s = empty_storage(4)?;
//! s.write()?.bytes_mut()?.copy_from_slice(&[1, 2, 3, 4]);
//! s.resize(6)?;
//! assert_eq!(s.read()?.bytes()?, &[1, 2, 3, 4, 0, 0]);
//!
//! // A private allocator with junk fill and statistics (storages need a
//! // `&'static` allocator: a `static`, or `CpuAllocator::leak`).
//! static DEBUG: CpuAllocator = CpuAllocator::with_fill(FillMode::Junk);
//! DEBUG.set_track_stats(true);
//! let debug = &DEBUG;
//! let t = Storage::new(16, debug, true)?;
//! assert!(t.read()?.bytes()?.chunks(8).all(|w| w == alloc_cpu::JUNK_PATTERN.to_ne_bytes()));
//! assert_eq!(debug.stats().map(|st| st.current_bytes), Some(16));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod cpu;
mod history;
mod large_cache;
pub mod mmap;

use std::sync::Once;

use c10_storage::{
    get_allocator, install_default_allocator, Allocator, DeviceType, Storage, StorageError,
};

pub use cpu::{CpuAllocator, CpuAllocatorBuilder, FillMode, ALIGNMENT, HEADER_SIZE, JUNK_PATTERN};
pub use history::{CpuBlock, CpuMemorySnapshot};
pub use large_cache::{
    empty_cache, large_block_cache_limit, large_block_cache_stats, set_large_block_cache_limit,
    LargeBlockCacheStats, DEFAULT_LARGE_BLOCK_CACHE_LIMIT, LARGE_BLOCK_BYTES,
};

/// The process-wide default: zero fill, no statistics.
static DEFAULT_CPU_ALLOCATOR: CpuAllocator = CpuAllocator::new();
static INSTALL_DEFAULT: Once = Once::new();

/// The [`CpuAllocator`] this crate ships, as a process-wide static (c10's
/// `GetDefaultCPUAllocator`): zero fill, statistics off (switch them on
/// with [`CpuAllocator::set_track_stats`] if you need them).
///
/// It is always this crate's allocator, even when a user registered another
/// CPU allocator; [`cpu_allocator`] returns the one currently registered,
/// which is what storages use. (Before 0.2 this function was called
/// `default_cpu_allocator`, a name that read like "the allocator in use".)
///
/// ```
/// use alloc_cpu::{builtin_cpu_allocator, FillMode};
/// assert_eq!(builtin_cpu_allocator().fill_mode(), FillMode::Zero);
/// assert!(std::ptr::eq(builtin_cpu_allocator(), builtin_cpu_allocator()));
/// ```
pub fn builtin_cpu_allocator() -> &'static CpuAllocator {
    &DEFAULT_CPU_ALLOCATOR
}

/// The old name of [`builtin_cpu_allocator`].
///
/// ```
/// #![allow(deprecated)]
/// assert!(std::ptr::eq(alloc_cpu::default_cpu_allocator(), alloc_cpu::builtin_cpu_allocator()));
/// ```
#[deprecated(
    since = "0.2.0",
    note = "renamed `builtin_cpu_allocator`: it is this crate's allocator, not necessarily the one in use (`cpu_allocator`)"
)]
pub fn default_cpu_allocator() -> &'static CpuAllocator {
    builtin_cpu_allocator()
}

/// The allocator for CPU storages (c10's `GetCPUAllocator`): whatever the
/// registry holds for [`DeviceType::Cpu`].
///
/// The first call installs [`builtin_cpu_allocator`] as the CPU default
/// with [`c10_storage::install_default_allocator`], so it is what you get
/// unless a user registered an allocator with [`c10_storage::set_allocator`]
/// (at any priority, before or after that first call): a registration
/// always wins over the default.
///
/// ```
/// use alloc_cpu::cpu_allocator;
/// use c10_storage::{Allocator, DeviceType};
/// let a = cpu_allocator();
/// assert_eq!(a.device_type(), DeviceType::Cpu);
/// assert!(a.allocate(0)?.is_null()); // like c10's alloc_cpu(0)
/// # Ok::<(), c10_storage::AllocError>(())
/// ```
#[inline]
pub fn cpu_allocator() -> &'static dyn Allocator {
    install_default();
    match get_allocator(DeviceType::Cpu) {
        Ok(a) => a,
        // Unreachable: a default was installed just above (ours or an
        // earlier one). Fall back to ours rather than fail.
        Err(_) => &DEFAULT_CPU_ALLOCATOR,
    }
}

/// Installs [`builtin_cpu_allocator`] as the CPU default (once; later calls
/// do nothing). [`cpu_allocator`] calls it, so you only need it to make
/// `c10_storage::get_allocator(DeviceType::Cpu)` work before any call to
/// [`cpu_allocator`].
///
/// ```
/// use c10_storage::{get_allocator, DeviceType};
/// alloc_cpu::install_default();
/// assert!(get_allocator(DeviceType::Cpu).is_ok());
/// ```
#[inline]
pub fn install_default() {
    INSTALL_DEFAULT.call_once(|| {
        // Cannot fail: the CPU allocator's device type is CPU.
        let _ = install_default_allocator(DeviceType::Cpu, &DEFAULT_CPU_ALLOCATOR);
    });
}

/// A resizable CPU storage of `nbytes` bytes from [`cpu_allocator`]: zeros
/// with the default allocator (a registered allocator fills as it likes).
///
/// ```
/// let s = alloc_cpu::empty_storage(24)?;
/// assert_eq!(s.nbytes(), 24);
/// assert!(s.resizable());
/// let e = alloc_cpu::empty_storage(0)?;
/// assert_eq!(e.nbytes(), 0);
/// # Ok::<(), c10_storage::StorageError>(())
/// ```
pub fn empty_storage(nbytes: usize) -> Result<Storage, StorageError> {
    Storage::new(nbytes, cpu_allocator(), true)
}

/// This crate's `README.md`: its example is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadme;
