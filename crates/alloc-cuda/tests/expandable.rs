//! Expandable segments (`expandable_segments:True`) on the fake device's
//! VMM: one reserved range per (stream, pool) grown page by page.

mod common;

use alloc_cuda::FakeDevice;
use common::*;

fn ex(capacity: u64) -> Alloc {
    alloc(capacity, "expandable_segments:True")
}

#[test]
fn first_allocation_reserves_nine_eighths_and_maps_one_page() {
    let a = ex(GIB);
    let p = a.malloc(3 * MIB / 2, S0).unwrap();
    let d = a.device();
    // 9/8 of 1 GiB in 20 MiB pages: ceil(1152 / 20) = 58 pages = 1160 MiB.
    assert_eq!(d.live_reservations(), vec![(p.0, 1160 * MIB)]);
    assert_eq!(d.live_mappings(), vec![(p.0, 20 * MIB)]);
    let c = d.counters();
    assert_eq!(
        (
            c.reserve_calls,
            c.create_physical_calls,
            c.map_calls,
            c.set_access_calls,
            c.malloc_calls
        ),
        (1, 1, 1, 1, 0)
    );
    // The 512-byte split rule applies in the large pool too.
    assert_eq!(layout(&a, p), vec![(3 * MIB / 2, 'A'), (37 * MIB / 2, '.')]);
    let seg = segment_of(&a, p);
    assert!(seg.is_expandable);
    assert_eq!(seg.total_size, 20 * MIB);
    let m = st(&a);
    assert_eq!(m["reserved_bytes.large_pool.current"], (20 * MIB) as i64);
    assert_eq!(
        m["segment.all.current"], 0,
        "expandable segments are not counted as segments"
    );
    assert_eq!(m["num_device_alloc"], 1);
    assert_eq!(
        m["inactive_split.all.current"], 0,
        "excluded for expandable segments"
    );
    check(&a);
}

#[test]
fn growth_is_contiguous_and_empty_cache_unmaps_everything() {
    let a = ex(GIB);
    let p = a.malloc(3 * MIB / 2, S0).unwrap();
    // 30 MiB does not fit the 18.5 MiB free block: one more page is mapped
    // right after it, merged, and the request starts where the free block
    // did.
    let q = a.malloc(30 * MIB, S0).unwrap();
    assert_eq!(q.0, p.0 + 3 * MIB / 2);
    assert_eq!(
        layout(&a, p),
        vec![(3 * MIB / 2, 'A'), (30 * MIB, 'A'), (17 * MIB / 2, '.')]
    );
    assert_eq!(
        a.device().live_mappings(),
        vec![(p.0, 20 * MIB), (p.0 + 20 * MIB, 20 * MIB)]
    );
    assert_eq!(a.memory_reserved(), 40 * MIB);
    check(&a);
    free(&a, p);
    free(&a, q);
    assert_eq!(layout(&a, p), vec![(40 * MIB, '.')]);
    check(&a);
    a.empty_cache().unwrap();
    let c = a.device().counters();
    assert_eq!(
        (c.unmap_calls, c.release_physical_calls, c.stream_syncs),
        (2, 2, 1)
    );
    assert_eq!(c.address_free_calls, 1, "fully unmapped segment released");
    assert!(a.device().live_reservations().is_empty());
    assert_eq!(a.device().live_physical_handles(), 0);
    assert_eq!(a.memory_reserved(), 0);
    assert_eq!(st(&a)["num_device_free"], 1);
    check(&a);
}

#[test]
fn empty_cache_unmaps_only_whole_free_pages() {
    let a = ex(GIB);
    let p = a.malloc(30 * MIB, S0).unwrap(); // 2 pages mapped, 10 MiB free
    let q = a.malloc(20 * MIB, S0).unwrap(); // 10 MiB free + a third page
    assert_eq!(q.0, p.0 + 30 * MIB);
    free(&a, p);
    // Free: [0, 30) MiB; page 0 is whole, page 1 is shared with q.
    a.empty_cache().unwrap();
    assert_eq!(
        a.device().live_mappings(),
        vec![(p.0 + 20 * MIB, 20 * MIB), (p.0 + 40 * MIB, 20 * MIB)]
    );
    assert_eq!(a.memory_reserved(), 40 * MIB);
    // The snapshot shows the mapped range only: 10 MiB free, q, 10 MiB free.
    assert_eq!(
        layout(&a, q),
        vec![(10 * MIB, '.'), (20 * MIB, 'A'), (10 * MIB, '.')]
    );
    check(&a);
    // Refilling the hole maps page 0 again, lowest address first.
    let r = a.malloc(25 * MIB, S0).unwrap();
    assert_eq!(r.0, p.0);
    assert_eq!(a.memory_reserved(), 60 * MIB);
    check(&a);
}

#[test]
fn small_pool_uses_2mib_pages_and_streams_get_their_own_segments() {
    let a = ex(GIB);
    let s = a.malloc(1000, S0).unwrap();
    let t = a.malloc(1000, S1).unwrap();
    let l = a.malloc(5 * MIB, S0).unwrap();
    let d = a.device();
    assert_eq!(
        d.live_reservations().len(),
        3,
        "small/stream 0, small/stream 1, large/stream 0"
    );
    let small_pages: Vec<u64> = d.live_mappings().iter().map(|m| m.1).collect();
    assert_eq!(small_pages.iter().filter(|&&s| s == 2 * MIB).count(), 2);
    assert_eq!(small_pages.iter().filter(|&&s| s == 20 * MIB).count(), 1);
    // 9/8 GiB in 2 MiB pages: 576 pages.
    assert!(d.live_reservations().contains(&(s.0, 576 * 2 * MIB)));
    assert_eq!(layout(&a, s), vec![(1024, 'A'), (2 * MIB - 1024, '.')]);
    let _ = (t, l);
    check(&a);
}

#[test]
fn oom_while_mapping_runs_the_ladder() {
    let a = ex(60 * MIB);
    let p = a.malloc(30 * MIB, S0).unwrap(); // 40 MiB mapped
    free(&a, p);
    // Another stream needs 40 MiB: its own segment cannot map 2 pages while
    // 40 of 60 MiB are mapped; release-all unmaps stream 0's pages, the
    // retry maps.
    let q = a.malloc(40 * MIB, S1).unwrap();
    let c = a.device().counters();
    assert!(c.create_physical_failures >= 1);
    assert_eq!(st(&a)["num_alloc_retries"], 1);
    assert_eq!(a.memory_reserved(), 40 * MIB);
    assert_eq!(segment_of(&a, q).stream, 1);
    check(&a);
    // And a real OOM reports the usual message.
    let e = a.malloc(30 * MIB, S1).unwrap_err();
    assert!(e.to_string().starts_with("CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 has a total capacity of 60.00 MiB of which 20.00 MiB is free."), "{e}");
    check(&a);
}

#[test]
fn turning_expandable_segments_off_at_run_time() {
    let a = ex(GIB);
    let p = a.malloc(5 * MIB, S0).unwrap();
    free(&a, p);
    a.set_expandable_segments(false);
    assert!(!a.expandable_segments());
    // The cached expandable block is skipped; a classic segment is made.
    let q = a.malloc(5 * MIB, S0).unwrap();
    assert_ne!(q, p);
    assert!(!segment_of(&a, q).is_expandable);
    assert_eq!(a.device().counters().malloc_calls, 1);
    check(&a);
    a.set_expandable_segments(true);
    // Best fit across both kinds: the classic 15 MiB remainder first...
    let r = a.malloc(5 * MIB, S0).unwrap();
    assert_eq!(r.0, q.0 + 5 * MIB);
    // ...then the 20 MiB free expandable block.
    let s = a.malloc(20 * MIB, S0).unwrap();
    assert_eq!(s, p);
    assert_eq!(a.device().counters().map_calls, 1);
    check(&a);
}

#[test]
fn without_vmm_expandable_segments_fall_back_to_malloc() {
    let a = alloc_on(
        FakeDevice::new(GIB).without_vmm(),
        "expandable_segments:True",
    );
    assert!(!a.expandable_segments());
    let p = a.malloc(5 * MIB, S0).unwrap();
    assert_eq!(a.device().live_allocations(), vec![(p.0, 20 * MIB)]);
    assert_eq!(layout(&a, p), vec![(5 * MIB, 'A'), (15 * MIB, '.')]);
    check(&a);
}

#[test]
fn record_stream_on_expandable_blocks() {
    let a = ex(GIB);
    let p = a.malloc(4 * MIB, S0).unwrap();
    a.record_stream(p, S1).unwrap();
    free(&a, p);
    a.empty_cache().unwrap(); // synchronizes, then unmaps the whole page
    assert!(a.device().live_mappings().is_empty());
    assert!(a.device().live_reservations().is_empty());
    check(&a);
}

#[test]
fn a_segment_whose_first_mapping_failed_is_reused_then_released_on_drop() {
    use alloc_cuda::{CachingAllocator, CachingAllocatorConfig};
    use std::sync::Arc;
    let dev = Arc::new(FakeDevice::new(GIB));
    let a = CachingAllocator::new(
        Arc::clone(&dev),
        0,
        CachingAllocatorConfig::parse("expandable_segments:True").unwrap(),
    );
    dev.fail_create_physical_call(1);
    dev.fail_create_physical_call(2);
    assert!(a.malloc(5 * MIB, S0).unwrap_err().is_out_of_memory());
    assert_eq!(
        dev.live_reservations().len(),
        1,
        "the empty reservation stays"
    );
    a.empty_cache().unwrap();
    assert_eq!(dev.live_reservations().len(), 1);
    a.validate().unwrap();
    let p = a.malloc(5 * MIB, S0).unwrap();
    assert_eq!(
        dev.live_reservations()[0].0,
        p.0,
        "reused by the next growth"
    );
    assert_eq!(dev.counters().reserve_calls, 1);
    // SAFETY: unused fake memory.
    unsafe { a.free(p).unwrap() };
    drop(a);
    assert!(dev.live_reservations().is_empty());
    assert!(dev.live_mappings().is_empty());
    assert_eq!(dev.live_physical_handles(), 0);
}
