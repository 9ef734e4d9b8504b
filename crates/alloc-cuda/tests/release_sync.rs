//! Releasing cached segments synchronizes the device once per batch
//! (`empty_cache`, the out-of-memory path, garbage collection), not once
//! per `cudaFree` (issue #18, item 5), and never when nothing is released.

mod common;
use common::*;

fn syncs(a: &Alloc) -> (u64, u64) {
    let c = a.device().counters();
    (c.device_syncs, c.free_calls)
}

#[test]
fn empty_cache_synchronizes_once_for_many_segments() {
    let a = alloc(8 * GIB, "");
    // Three 30 MiB segments, two 2 MiB small segments, all cached.
    let ps: Vec<_> = [30 * MIB, 30 * MIB, 30 * MIB, 100, 100]
        .iter()
        .map(|&n| a.malloc(n, S0).expect("malloc"))
        .collect();
    let small2 = a.malloc(MIB, S1).expect("malloc on another stream");
    for p in ps {
        // SAFETY: unused.
        unsafe { a.free(p).expect("free") };
    }
    // SAFETY: unused.
    unsafe { a.free(small2).expect("free") };
    let seg = st(&a)["segment.all.current"] as u64;
    assert_eq!(seg, 5, "3 large + a small segment per stream");
    let (s0, f0) = syncs(&a);
    a.empty_cache().expect("empty_cache");
    let (s1, f1) = syncs(&a);
    assert_eq!(f1 - f0, seg, "every cached segment is freed");
    assert_eq!(s1 - s0, 1, "one device synchronization for the batch");
    // Nothing cached: no synchronization, no free.
    a.empty_cache().expect("empty_cache");
    assert_eq!(syncs(&a), (s1, f1));
}

#[test]
fn the_oom_path_synchronizes_once_before_freeing_the_cache() {
    let a = alloc(200 * MIB, "");
    // Fill the device with cached 40 MiB segments, then ask for 150 MiB:
    // the retry ladder frees the whole cache (release_cached_blocks).
    let ps: Vec<_> = (0..4)
        .map(|_| a.malloc(40 * MIB, S0).expect("malloc"))
        .collect();
    for p in ps {
        // SAFETY: unused.
        unsafe { a.free(p).expect("free") };
    }
    let (s0, f0) = syncs(&a);
    let big = a
        .malloc(150 * MIB, S0)
        .expect("fits after the cache is freed");
    let (s1, f1) = syncs(&a);
    assert_eq!(f1 - f0, 4);
    assert_eq!(s1 - s0, 1, "one synchronization before the batch of frees");
    // SAFETY: unused.
    unsafe { a.free(big).expect("free") };
}

#[test]
fn oversize_release_synchronizes_once() {
    // max_split_size: oversize blocks are freed by
    // release_available_cached_blocks before the whole cache.
    let a = alloc(300 * MIB, "max_split_size_mb:20");
    let ps: Vec<_> = (0..5)
        .map(|_| a.malloc(50 * MIB, S0).expect("malloc"))
        .collect();
    for p in ps {
        // SAFETY: unused.
        unsafe { a.free(p).expect("free") };
    }
    let (s0, f0) = syncs(&a);
    // 120 MiB: no cached block fits (oversize blocks are not split) and the
    // device has 50 MiB free, so largest oversize blocks are released.
    let p = a
        .malloc(120 * MIB, S0)
        .expect("fits after releasing oversize blocks");
    let (s1, f1) = syncs(&a);
    assert!(f1 - f0 >= 2, "several oversize blocks freed ({})", f1 - f0);
    assert_eq!(s1 - s0, 1);
    // SAFETY: unused.
    unsafe { a.free(p).expect("free") };
}

#[test]
fn a_cache_hit_never_synchronizes() {
    let a = alloc(GIB, "");
    let p = a.malloc(10 * MIB, S0).expect("malloc");
    // SAFETY: unused.
    unsafe { a.free(p).expect("free") };
    let before = syncs(&a);
    for _ in 0..100 {
        let p = a.malloc(10 * MIB, S0).expect("malloc");
        // SAFETY: unused.
        unsafe { a.free(p).expect("free") };
    }
    assert_eq!(syncs(&a), before);
}
