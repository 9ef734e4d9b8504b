//! The large-block cache: freed blocks of 32 MiB and more are reused, within
//! the limit, oldest evicted first, and never hand out a previous tensor's
//! bytes through `allocate`.
//!
//! Linux only (the only place large blocks are mappings), and not under
//! Miri (which never maps). The cache is process-wide, so the tests in this
//! binary take turns through `SERIAL`.

#![cfg(all(target_os = "linux", not(miri)))]

use std::sync::{Mutex, MutexGuard};

use alloc_cpu::{
    empty_cache, large_block_cache_limit, large_block_cache_stats, set_large_block_cache_limit,
    CpuAllocator, FillMode, DEFAULT_LARGE_BLOCK_CACHE_LIMIT, JUNK_PATTERN, LARGE_BLOCK_BYTES,
};
use c10_storage::{Allocator, DataPtr};

static SERIAL: Mutex<()> = Mutex::new(());

/// Takes the cache for one test, empty and at `limit`; restores the
/// default limit when dropped.
struct Exclusive {
    _guard: MutexGuard<'static, ()>,
}

impl Exclusive {
    fn with_limit(limit: usize) -> Exclusive {
        let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        set_large_block_cache_limit(limit);
        empty_cache();
        Exclusive { _guard: guard }
    }
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        set_large_block_cache_limit(DEFAULT_LARGE_BLOCK_CACHE_LIMIT);
        empty_cache();
    }
}

const MIB: usize = 1 << 20;

fn fill(p: &DataPtr, n: usize, byte: u8) {
    // SAFETY: `p` is a live allocation of `n` bytes that nothing else uses.
    unsafe { std::ptr::write_bytes(p.get(), byte, n) };
}

fn bytes(p: &DataPtr, n: usize) -> &[u8] {
    // SAFETY: a live, initialised allocation of `n` bytes, not written
    // while the slice lives.
    unsafe { std::slice::from_raw_parts(p.get(), n) }
}

#[test]
fn default_limit_is_in_force() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(large_block_cache_limit(), DEFAULT_LARGE_BLOCK_CACHE_LIMIT);
}

#[test]
fn freed_block_is_reused_and_zeroed_again() {
    let _x = Exclusive::with_limit(DEFAULT_LARGE_BLOCK_CACHE_LIMIT);
    let a = CpuAllocator::new();
    let n = 40 * MIB + 7;
    let p = a.allocate(n).unwrap();
    let first = p.get() as usize;
    fill(&p, n, 0xAB);
    drop(p);
    let st = large_block_cache_stats();
    assert_eq!(st.cached_blocks, 1);
    assert!(st.cached_bytes >= n, "{st:?}");

    let before = large_block_cache_stats().hits;
    let q = a.allocate(n).unwrap();
    assert_eq!(large_block_cache_stats().hits, before + 1);
    assert_eq!(q.get() as usize, first, "the cached mapping is handed out");
    assert_eq!(q.get() as usize % alloc_cpu::ALIGNMENT, 0);
    assert!(
        bytes(&q, n).iter().all(|&b| b == 0),
        "a recycled block must be zeroed by allocate"
    );
    assert_eq!(large_block_cache_stats().cached_blocks, 0);
}

#[test]
fn overwrite_allocation_reuses_without_fill_and_junk_mode_junk_fills() {
    let _x = Exclusive::with_limit(DEFAULT_LARGE_BLOCK_CACHE_LIMIT);
    let n = 33 * MIB;
    let plain = CpuAllocator::new();
    let p = plain.allocate(n).unwrap();
    let first = p.get() as usize;
    drop(p);
    let q = plain.allocate_for_overwrite(n).unwrap();
    assert_eq!(q.get() as usize, first);
    fill(&q, n, 0x5A);
    assert!(bytes(&q, n).iter().all(|&b| b == 0x5A));
    drop(q);

    static JUNK: CpuAllocator = CpuAllocator::with_fill(FillMode::Junk);
    let j = JUNK.allocate(n).unwrap();
    assert_eq!(j.get() as usize, first, "the cache is shared by allocators");
    assert!(bytes(&j, n)
        .chunks(8)
        .all(|w| w == &JUNK_PATTERN.to_ne_bytes()[..w.len()]));
}

#[test]
fn only_similar_sizes_are_reused() {
    let _x = Exclusive::with_limit(DEFAULT_LARGE_BLOCK_CACHE_LIMIT);
    let a = CpuAllocator::new();
    drop(a.allocate(100 * MIB).unwrap());
    let misses = large_block_cache_stats().misses;
    // Too small for the cached block (more than a quarter would be wasted):
    let small = a.allocate(40 * MIB).unwrap();
    assert_eq!(large_block_cache_stats().misses, misses + 1);
    assert_eq!(large_block_cache_stats().cached_blocks, 1);
    // Too large for it:
    let large = a.allocate(120 * MIB).unwrap();
    assert_eq!(large_block_cache_stats().misses, misses + 2);
    // Within a quarter: reused.
    let close = a.allocate(90 * MIB).unwrap();
    assert_eq!(large_block_cache_stats().cached_blocks, 0);
    assert!(bytes(&close, 90 * MIB).iter().all(|&b| b == 0));
    drop((small, large, close));
}

#[test]
fn small_blocks_never_enter_the_cache() {
    let _x = Exclusive::with_limit(DEFAULT_LARGE_BLOCK_CACHE_LIMIT);
    let a = CpuAllocator::new();
    drop(a.allocate(LARGE_BLOCK_BYTES - 1).unwrap());
    assert_eq!(large_block_cache_stats().cached_blocks, 0);
    drop(a.allocate(LARGE_BLOCK_BYTES).unwrap());
    assert_eq!(large_block_cache_stats().cached_blocks, 1);
}

#[test]
fn limit_bounds_the_cache_and_evicts_oldest_first() {
    let _x = Exclusive::with_limit(100 * MIB);
    let a = CpuAllocator::new();
    let blocks: Vec<DataPtr> = (0..3).map(|_| a.allocate(40 * MIB).unwrap()).collect();
    let addrs: Vec<usize> = blocks.iter().map(|p| p.get() as usize).collect();
    drop(blocks); // freed in order 0, 1, 2: block 0 is the oldest
    let st = large_block_cache_stats();
    assert_eq!(st.cached_blocks, 2, "{st:?}");
    assert!(st.cached_bytes <= 100 * MIB);
    // Both survivors are handed out again; block 0 was evicted.
    let again: Vec<DataPtr> = (0..2).map(|_| a.allocate(40 * MIB).unwrap()).collect();
    let again_addrs: Vec<usize> = again.iter().map(|p| p.get() as usize).collect();
    assert!(
        again_addrs.contains(&addrs[1]) && again_addrs.contains(&addrs[2]),
        "{again_addrs:x?} vs {addrs:x?}"
    );
    assert_eq!(large_block_cache_stats().cached_blocks, 0);

    // A block larger than the limit is unmapped, not cached.
    drop(a.allocate(120 * MIB).unwrap());
    assert_eq!(large_block_cache_stats().cached_blocks, 0);
    drop(again);
    assert_eq!(large_block_cache_stats().cached_blocks, 2);
}

#[test]
fn zero_limit_turns_the_cache_off_and_empty_cache_releases() {
    let _x = Exclusive::with_limit(DEFAULT_LARGE_BLOCK_CACHE_LIMIT);
    let a = CpuAllocator::new();
    drop(a.allocate(40 * MIB).unwrap());
    drop(a.allocate(60 * MIB).unwrap());
    let held = large_block_cache_stats().cached_bytes;
    assert!(held >= 100 * MIB);
    assert_eq!(empty_cache(), held);
    assert_eq!(large_block_cache_stats().cached_bytes, 0);
    assert_eq!(empty_cache(), 0);

    drop(a.allocate(40 * MIB).unwrap());
    assert_eq!(large_block_cache_stats().cached_blocks, 1);
    assert_eq!(
        set_large_block_cache_limit(0),
        DEFAULT_LARGE_BLOCK_CACHE_LIMIT
    );
    assert_eq!(
        large_block_cache_stats().cached_blocks,
        0,
        "lowering the limit evicts"
    );
    drop(a.allocate(40 * MIB).unwrap());
    assert_eq!(
        large_block_cache_stats().cached_blocks,
        0,
        "limit 0 caches nothing"
    );
}

#[test]
fn statistics_count_requested_bytes_not_cached_ones() {
    let _x = Exclusive::with_limit(DEFAULT_LARGE_BLOCK_CACHE_LIMIT);
    let a = CpuAllocator::builder().track_stats(true).build();
    let p = a.allocate(40 * MIB).unwrap();
    drop(p);
    let q = a.allocate(40 * MIB).unwrap();
    let st = a.stats().unwrap();
    assert_eq!(
        (st.current_bytes, st.allocations, st.frees),
        (40 * MIB as u64, 2, 1)
    );
    drop(q);
    assert_eq!(a.stats().unwrap().current_bytes, 0);
}

#[test]
fn threads_share_the_cache_soundly() {
    let _x = Exclusive::with_limit(DEFAULT_LARGE_BLOCK_CACHE_LIMIT);
    static A: CpuAllocator = CpuAllocator::new();
    let handles: Vec<_> = (0..4u8)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..8u8 {
                    let n = 32 * MIB + usize::from(t) * 4096;
                    let p = A.allocate(n).unwrap();
                    assert!(bytes(&p, n).iter().step_by(4096).all(|&b| b == 0));
                    fill(&p, n, t.wrapping_mul(31).wrapping_add(i) | 1);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let st = large_block_cache_stats();
    assert!(st.cached_bytes <= st.limit);
    assert!(st.hits > 0, "{st:?}");
}
