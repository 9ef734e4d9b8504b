//! The downstream allocator passes the workspace's allocator conformance kit
//! and serves storages once registered.

use c10_storage::testing::{check_allocator, KitOptions};
use c10_storage::{Allocator, Storage};
use custom_allocator::CachingCpuAllocator;

#[test]
fn passes_the_conformance_kit() {
    let a = CachingCpuAllocator::new();
    check_allocator(&a, &KitOptions::default()).assert_ok();
}

#[test]
fn reuses_blocks_and_frees_them_at_the_end() {
    // A static (storages need a `&'static dyn Allocator`) that leak
    // checkers (Miri, LeakSanitizer) see as reachable.
    static A: std::sync::OnceLock<CachingCpuAllocator> = std::sync::OnceLock::new();
    let a: &'static CachingCpuAllocator = A.get_or_init(CachingCpuAllocator::new);
    for _ in 0..10 {
        let s = Storage::new(3000, a, true).unwrap();
        s.write().unwrap().bytes_mut().unwrap().fill(1);
    }
    assert_eq!(a.cache_misses(), 1);
    assert_eq!(a.cache_hits(), 9);
    let stats = a.stats().unwrap();
    assert_eq!(stats.current_bytes, 0);
    assert_eq!(stats.peak_bytes, 3000);
    a.empty_cache();
}

#[test]
fn outlived_by_its_blocks() {
    let a = CachingCpuAllocator::new();
    let block = a.allocate(100).unwrap();
    drop(a); // the cache stays alive through the block's ticket
    drop(block); // returns the block, then frees the cache and its blocks
}
