//! The large-block cache: freed blocks of [`LARGE_BLOCK_BYTES`] and more
//! are kept, up to a byte limit, and handed out again instead of mapping
//! fresh memory from the kernel. The design and its trade-offs are in the
//! crate documentation (section "The large-block cache").

use std::sync::{Mutex, MutexGuard};

/// The limit the cache starts with: 256 MiB.
///
/// ```
/// assert_eq!(alloc_cpu::DEFAULT_LARGE_BLOCK_CACHE_LIMIT, 256 << 20);
/// ```
pub const DEFAULT_LARGE_BLOCK_CACHE_LIMIT: usize = 256 << 20;

/// Blocks whose requested size is at least this many bytes (32 MiB) are
/// mapped from the kernel on Linux and go through the cache. 32 MiB is
/// glibc's largest dynamic `mmap` threshold: below it `malloc` recycles
/// freed blocks itself.
///
/// ```
/// assert_eq!(alloc_cpu::LARGE_BLOCK_BYTES, 32 << 20);
/// ```
pub const LARGE_BLOCK_BYTES: usize = 32 << 20;

/// A snapshot of the cache, from [`large_block_cache_stats`].
///
/// ```
/// let st = alloc_cpu::large_block_cache_stats();
/// assert!(st.cached_bytes <= st.limit);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct LargeBlockCacheStats {
    /// The byte limit in force.
    pub limit: usize,
    /// Bytes held by cached blocks (whole mappings, header page included).
    pub cached_bytes: usize,
    /// Number of cached blocks.
    pub cached_blocks: usize,
    /// Large allocations served from the cache since the process started.
    pub hits: u64,
    /// Large allocations that had to map fresh memory.
    pub misses: u64,
}

/// One cached mapping: its start and length.
struct Block {
    start: *mut u8,
    total: usize,
}

// SAFETY: a `Block` is an owned, currently unused anonymous mapping; the
// address is only ever used to unmap or hand out the whole mapping, from
// whichever thread holds the cache lock.
unsafe impl Send for Block {}

struct Cache {
    limit: usize,
    bytes: usize,
    hits: u64,
    misses: u64,
    /// Oldest first.
    blocks: Vec<Block>,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    limit: DEFAULT_LARGE_BLOCK_CACHE_LIMIT,
    bytes: 0,
    hits: 0,
    misses: 0,
    blocks: Vec::new(),
});

fn lock() -> MutexGuard<'static, Cache> {
    // A panic while the lock is held cannot leave the cache inconsistent
    // (every update is a push, a remove or a counter change), so a
    // poisoned lock is still usable.
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Unmaps blocks taken out of the cache (outside the lock: `munmap` of a
/// large mapping takes a while).
fn unmap_all(blocks: Vec<Block>) -> usize {
    let mut bytes = 0;
    for b in blocks {
        bytes += b.total;
        // SAFETY: each block is a whole mapping that the cache owned and
        // nobody else references; it is unmapped once.
        unsafe { unmap(b.start, b.total) };
    }
    bytes
}

/// Unmaps one mapping.
///
/// # Safety
///
/// `start`/`total` must be exactly one live anonymous mapping made by this
/// crate, not used afterwards.
#[cfg(all(target_os = "linux", not(miri)))]
pub(crate) unsafe fn unmap(start: *mut u8, total: usize) {
    // SAFETY: the caller vouches for the range. munmap of a valid mapping
    // cannot fail in a way we could handle here.
    unsafe { libc::munmap(start.cast(), total) };
}

/// Off Linux (and under Miri) no mapping is ever made, so no block can
/// reach the cache.
///
/// # Safety
///
/// Never called with a real block; nothing to uphold.
#[cfg(not(all(target_os = "linux", not(miri))))]
pub(crate) unsafe fn unmap(_start: *mut u8, _total: usize) {}

/// Takes a cached mapping of at least `total` bytes (and not wastefully
/// larger: at most a quarter more), the smallest that fits. Counts a hit or
/// a miss. Returns `(start, mapping length)`.
#[cfg_attr(any(miri, not(target_os = "linux")), allow(dead_code))]
pub(crate) fn take(total: usize) -> Option<(*mut u8, usize)> {
    let mut cache = lock();
    let max = total.saturating_add(total / 4);
    let best = cache
        .blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.total >= total && b.total <= max)
        .min_by_key(|(_, b)| b.total)
        .map(|(i, _)| i);
    match best {
        Some(i) => {
            let b = cache.blocks.remove(i);
            cache.bytes -= b.total;
            cache.hits += 1;
            Some((b.start, b.total))
        }
        None => {
            cache.misses += 1;
            None
        }
    }
}

/// Offers a freed mapping to the cache. Returns `false` (the caller then
/// unmaps it) when the cache is off or the block alone exceeds the limit.
///
/// # Safety
///
/// `start`/`total` must be exactly one live anonymous read-write mapping
/// made by this crate that nothing references any more; on `true` the
/// cache owns it.
#[cfg_attr(any(miri, not(target_os = "linux")), allow(dead_code))]
pub(crate) unsafe fn put(start: *mut u8, total: usize) -> bool {
    if total > lock().limit {
        return false;
    }
    // Let the kernel reclaim the pages while the block waits (outside the
    // lock: the call walks the page tables). Advisory: on kernels without
    // MADV_FREE the block simply stays resident.
    #[cfg(all(target_os = "linux", not(miri)))]
    // SAFETY: the range is exactly the caller's mapping, unused now.
    unsafe {
        libc::madvise(start.cast(), total, libc::MADV_FREE)
    };
    let evicted = {
        let mut cache = lock();
        if total > cache.limit {
            // The limit was lowered meanwhile.
            return false;
        }
        cache.blocks.push(Block { start, total });
        cache.bytes += total;
        let limit = cache.limit;
        evict_to(&mut cache, limit)
    };
    unmap_all(evicted);
    true
}

/// Removes the oldest blocks until at most `limit` bytes stay cached.
fn evict_to(cache: &mut Cache, limit: usize) -> Vec<Block> {
    let mut evicted = Vec::new();
    while cache.bytes > limit {
        let b = cache.blocks.remove(0);
        cache.bytes -= b.total;
        evicted.push(b);
    }
    evicted
}

/// Sets how many bytes of freed large blocks the cache may keep, unmapping
/// the oldest blocks beyond it, and returns the previous limit. `0` turns
/// the cache off (and empties it).
///
/// ```
/// use alloc_cpu::{large_block_cache_stats, set_large_block_cache_limit};
/// let previous = set_large_block_cache_limit(0); // off
/// assert_eq!(large_block_cache_stats().cached_bytes, 0);
/// set_large_block_cache_limit(previous);
/// ```
pub fn set_large_block_cache_limit(bytes: usize) -> usize {
    let (previous, evicted) = {
        let mut cache = lock();
        let previous = std::mem::replace(&mut cache.limit, bytes);
        (previous, evict_to(&mut cache, bytes))
    };
    unmap_all(evicted);
    previous
}

/// The current limit of the cache in bytes.
///
/// ```
/// use alloc_cpu::{large_block_cache_limit, set_large_block_cache_limit};
/// let previous = set_large_block_cache_limit(64 << 20);
/// assert_eq!(large_block_cache_limit(), 64 << 20);
/// set_large_block_cache_limit(previous);
/// ```
pub fn large_block_cache_limit() -> usize {
    lock().limit
}

/// Unmaps every cached block and returns how many bytes that gave back to
/// the operating system. The limit stays as it is.
///
/// ```
/// let released = alloc_cpu::empty_cache();
/// assert_eq!(alloc_cpu::large_block_cache_stats().cached_bytes, 0);
/// # let _ = released;
/// ```
pub fn empty_cache() -> usize {
    let evicted = evict_to(&mut lock(), 0);
    unmap_all(evicted)
}

/// The limit, what is cached now, and the hit and miss counts.
///
/// ```
/// let st = alloc_cpu::large_block_cache_stats();
/// assert_eq!(st.limit, alloc_cpu::large_block_cache_limit());
/// ```
pub fn large_block_cache_stats() -> LargeBlockCacheStats {
    let cache = lock();
    LargeBlockCacheStats {
        limit: cache.limit,
        cached_bytes: cache.bytes,
        cached_blocks: cache.blocks.len(),
        hits: cache.hits,
        misses: cache.misses,
    }
}
