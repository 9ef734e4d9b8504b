//! PyTorch's caching rules pinned with exact numbers: rounding, pools,
//! segment sizes, best fit, splitting, oversize blocks, coalescing,
//! `empty_cache`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use alloc_cuda::{
    get_allocation_size, round_size, roundup_power2_next_division, BlockState,
    CachingAllocatorConfig, SegmentType,
};
use common::*;

fn cfg(s: &str) -> CachingAllocatorConfig {
    CachingAllocatorConfig::parse(s).unwrap()
}

#[test]
fn rounding_to_512() {
    let c = CachingAllocatorConfig::default();
    assert_eq!(round_size(0, &c), 512);
    assert_eq!(round_size(1, &c), 512);
    assert_eq!(round_size(511, &c), 512);
    assert_eq!(round_size(512, &c), 512);
    assert_eq!(round_size(513, &c), 1024);
    assert_eq!(round_size(1000, &c), 1024);
    assert_eq!(round_size(MIB, &c), MIB);
    assert_eq!(round_size(MIB + 1, &c), MIB + 512);
    assert_eq!(round_size(1_500_000, &c), 1_500_160);
}

#[test]
fn roundup_power2_divisions_examples() {
    // The reference's example: 1200 between 1024 and 2048 in 4 steps.
    assert_eq!(roundup_power2_next_division(1200, 4), 1280);
    assert_eq!(roundup_power2_next_division(1024, 4), 1024);
    assert_eq!(roundup_power2_next_division(1280, 4), 1280);
    assert_eq!(roundup_power2_next_division(1281, 4), 1536);
    assert_eq!(roundup_power2_next_division(1793, 4), 2048);
    // A step of 0 bytes gives the next power of two.
    assert_eq!(roundup_power2_next_division(3, 4), 4);
    // round_size only uses divisions when size > 512 * d: 1200 <= 2048, so
    // a d = 4 configuration still rounds 1200 to 1536.
    let d4 = cfg("roundup_power2_divisions:4");
    assert_eq!(round_size(1200, &d4), 1536);
    assert_eq!(round_size(2049, &d4), 2560);
    assert_eq!(round_size(GIB + 1, &d4), GIB + GIB / 4);
    assert_eq!(round_size(GIB + GIB / 4, &d4), GIB + GIB / 4);
    assert_eq!(round_size(3 * MIB + 1, &d4), 3 * MIB + MIB / 2); // [2,4) MiB in 512 KiB steps
                                                                 // The list form: interval bounds in MiB, '>' for everything larger.
    let list = cfg("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]");
    assert_eq!(
        list.roundup_power2_divisions(),
        &[1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8, 8]
    );
    assert_eq!(round_size(300 * MIB + 1, &list), 300 * MIB + 512); // d = 1
    assert_eq!(round_size(600 * MIB, &list), 768 * MIB); // d = 2
    assert_eq!(round_size(GIB + 1, &list), GIB + GIB / 4); // d = 4
    assert_eq!(round_size(3 * GIB + 1, &list), 3 * GIB + 256 * MIB); // d = 8
    assert_eq!(round_size(40 * GIB + 1, &list), 44 * GIB); // interval 15, d = 8
    assert_eq!(list.roundup_power2_divisions_for(100), 1); // below 1 MiB: interval 0
}

#[test]
fn allocation_sizes() {
    assert_eq!(get_allocation_size(512), 2 * MIB);
    assert_eq!(get_allocation_size(MIB), 2 * MIB);
    assert_eq!(get_allocation_size(MIB + 512), 20 * MIB);
    assert_eq!(get_allocation_size(10 * MIB - 512), 20 * MIB);
    assert_eq!(get_allocation_size(10 * MIB), 10 * MIB);
    assert_eq!(get_allocation_size(11 * MIB + 512), 12 * MIB);
}

#[test]
fn small_request_gets_a_2mib_small_segment_and_splits() {
    let a = alloc(GIB, "");
    let p = a.malloc(512 * KIB, S0).unwrap();
    check(&a);
    let seg = segment_of(&a, p);
    assert_eq!(seg.segment_type, SegmentType::Small);
    assert_eq!(seg.address, p.0);
    assert_eq!(layout(&a, p), vec![(512 * KIB, 'A'), (1536 * KIB, '.')]);
    assert_eq!(a.device().live_allocations(), vec![(p.0, 2 * MIB)]);
    assert_eq!(s4(&a, "segment.small_pool"), [1, 1, 1, 0]);
    assert_eq!(cur(&a, "segment.large_pool"), 0);
    assert_eq!(cur(&a, "inactive_split.small_pool"), 1);
    assert_eq!(
        cur(&a, "inactive_split_bytes.small_pool"),
        1536 * KIB as i64
    );
    // A second small request packs into the same segment, right after.
    let q = a.malloc(100, S0).unwrap();
    assert_eq!(q.0, p.0 + 512 * KIB);
    assert_eq!(
        layout(&a, p),
        vec![(512 * KIB, 'A'), (512, 'A'), (1536 * KIB - 512, '.')]
    );
    assert_eq!(a.device().counters().malloc_calls, 1);
    check(&a);
}

#[test]
fn one_and_a_half_mib_gets_a_20mib_segment_and_splits_off_18_and_a_half() {
    let a = alloc(GIB, "");
    let p = a.malloc(3 * MIB / 2, S0).unwrap();
    let seg = segment_of(&a, p);
    assert_eq!(seg.segment_type, SegmentType::Large);
    assert_eq!(seg.total_size, 20 * MIB);
    assert_eq!(layout(&a, p), vec![(3 * MIB / 2, 'A'), (37 * MIB / 2, '.')]);
    assert_eq!(
        cur(&a, "inactive_split_bytes.large_pool"),
        (37 * MIB / 2) as i64
    );
    // The remainder serves the next large request on the same stream.
    let q = a.malloc(4 * MIB, S0).unwrap();
    assert_eq!(q.0, p.0 + 3 * MIB / 2);
    assert_eq!(a.device().counters().malloc_calls, 1);
    check(&a);
}

#[test]
fn large_pool_remainder_of_exactly_1mib_is_not_split() {
    let a = alloc(GIB, "");
    // 19 MiB gets its own 20 MiB segment; the 1 MiB remainder stays attached.
    let p = a.malloc(19 * MIB, S0).unwrap();
    assert_eq!(layout(&a, p), vec![(20 * MIB, 'A')]);
    assert_eq!(cur(&a, "allocated_bytes.all"), (20 * MIB) as i64);
    assert_eq!(cur(&a, "requested_bytes.all"), (19 * MIB) as i64);
    assert_eq!(cur(&a, "inactive_split.all"), 0);
    // 512 bytes less leaves 1 MiB + 512 > 1 MiB: split.
    let q = a.malloc(19 * MIB - 512, S0).unwrap();
    assert_eq!(layout(&a, q), vec![(19 * MIB - 512, 'A'), (MIB + 512, '.')]);
    check(&a);
}

#[test]
fn small_pool_splits_remainders_of_512_bytes() {
    let a = alloc(GIB, "");
    let x = a.malloc(MIB, S0).unwrap();
    let y = a.malloc(MIB - 512, S0).unwrap();
    assert_eq!(
        layout(&a, x),
        vec![(MIB, 'A'), (MIB - 512, 'A'), (512, '.')]
    );
    let z = a.malloc(1, S0).unwrap();
    assert_eq!(z.0, y.0 + MIB - 512);
    assert_eq!(
        layout(&a, x),
        vec![(MIB, 'A'), (MIB - 512, 'A'), (512, 'A')]
    );
    assert_eq!(cur(&a, "inactive_split.small_pool"), 0);
    check(&a);
}

#[test]
fn ten_mib_and_more_get_their_own_segment_rounded_to_2mib() {
    let a = alloc(GIB, "");
    let p = a.malloc(10 * MIB, S0).unwrap();
    assert_eq!(segment_of(&a, p).total_size, 10 * MIB);
    assert_eq!(layout(&a, p), vec![(10 * MIB, 'A')]);
    let q = a.malloc(11 * MIB + 1, S0).unwrap();
    // 11 MiB + 512 in a 12 MiB segment: remainder 1 MiB - 512, not split.
    assert_eq!(layout(&a, q), vec![(12 * MIB, 'A')]);
    let r = a.malloc(100 * MIB + 3, S0).unwrap();
    assert_eq!(segment_of(&a, r).total_size, 102 * MIB);
    assert_eq!(
        layout(&a, r),
        vec![(100 * MIB + 512, 'A'), (2 * MIB - 512, '.')]
    );
    // Just below 10 MiB: a 20 MiB segment.
    let s = a.malloc(10 * MIB - 512, S0).unwrap();
    assert_eq!(
        layout(&a, s),
        vec![(10 * MIB - 512, 'A'), (10 * MIB + 512, '.')]
    );
    let sizes: Vec<u64> = a.device().live_allocations().iter().map(|x| x.1).collect();
    assert_eq!(sizes, vec![10 * MIB, 12 * MIB, 102 * MIB, 20 * MIB]);
    check(&a);
}

#[test]
fn best_fit_on_the_same_stream_with_lowest_address_tie_break() {
    let a = alloc(GIB, "");
    let pa = a.malloc(4 * MIB, S0).unwrap();
    let pb = a.malloc(2 * MIB, S0).unwrap();
    let pc = a.malloc(6 * MIB, S0).unwrap();
    let pd = a.malloc(2 * MIB, S0).unwrap();
    assert_eq!(
        layout(&a, pa),
        vec![
            (4 * MIB, 'A'),
            (2 * MIB, 'A'),
            (6 * MIB, 'A'),
            (2 * MIB, 'A'),
            (6 * MIB, '.')
        ]
    );
    free(&a, pa);
    free(&a, pc);
    // Free: 4 MiB at pa, 6 MiB at pc, 6 MiB tail. 3 MiB takes the 4 MiB
    // block whole (remainder exactly 1 MiB: no split).
    let x = a.malloc(3 * MIB, S0).unwrap();
    assert_eq!(x, pa);
    assert_eq!(cur(&a, "allocated_bytes.all"), (8 * MIB) as i64); // 2 + 2 + the whole 4
                                                                  // 5 MiB: two 6 MiB candidates, the lower address wins, 1 MiB stays.
    let y = a.malloc(5 * MIB, S0).unwrap();
    assert_eq!(y, pc);
    // Another 6 MiB goes to the tail.
    let z = a.malloc(6 * MIB, S0).unwrap();
    assert_eq!(z.0, pd.0 + 2 * MIB);
    assert_eq!(a.device().counters().malloc_calls, 1);
    let _ = pb;
    check(&a);
}

#[test]
fn streams_do_not_share_free_blocks() {
    let a = alloc(GIB, "");
    let p = a.malloc(4 * MIB, S1).unwrap();
    free(&a, p);
    let q = a.malloc(4 * MIB, S2).unwrap();
    assert_ne!(segment_of(&a, q).address, segment_of(&a, p).address);
    assert_eq!(a.device().counters().malloc_calls, 2);
    assert_eq!(segment_of(&a, q).stream, 2);
    let r = a.malloc(4 * MIB, S1).unwrap();
    assert_eq!(r, p, "stream 1 reuses its own block");
    check(&a);
}

#[test]
fn oversize_blocks_are_never_split_and_reused_only_within_20mib() {
    let a = alloc(GIB, "max_split_size_mb:40");
    let p = a.malloc(50 * MIB, S0).unwrap();
    assert_eq!(cur(&a, "oversize_segments"), 1);
    assert_eq!(cur(&a, "oversize_allocations"), 1);
    free(&a, p);
    assert_eq!(cur(&a, "oversize_allocations"), 0);
    // A 45 MiB request reuses the cached 50 MiB block whole (50 < 45 + 20).
    let q = a.malloc(45 * MIB, S0).unwrap();
    assert_eq!(q, p);
    assert_eq!(layout(&a, q), vec![(50 * MIB, 'A')]);
    assert_eq!(cur(&a, "requested_bytes.all"), (45 * MIB) as i64);
    free(&a, q);
    // A request below max_split_size never takes an oversize block.
    let r = a.malloc(30 * MIB, S0).unwrap();
    assert_ne!(segment_of(&a, r).address, p.0);
    assert_eq!(segment_of(&a, r).total_size, 30 * MIB);
    // 30 MiB is below 40 MiB: not oversize, and its own segment is split
    // normally when reused by a smaller request.
    free(&a, r);
    let r2 = a.malloc(12 * MIB, S0).unwrap();
    assert_eq!(r2, r);
    assert_eq!(layout(&a, r2), vec![(12 * MIB, 'A'), (18 * MIB, '.')]);
    // An oversize request of exactly block - 20 MiB does not reuse it.
    let s = a.malloc(30 * MIB + 512, S0).unwrap(); // < 40 MiB: new segment
    assert_ne!(segment_of(&a, s).address, p.0);
    let t = a.malloc(40 * MIB, S0).unwrap(); // 50 < 40 + 20: reuse
    assert_eq!(t, p);
    free(&a, t);
    let big = a.malloc(70 * MIB, S0).unwrap(); // 50 MiB block too small
    assert_ne!(big, p);
    free(&a, big);
    let u = a.malloc(50 * MIB, S0).unwrap(); // 50 MiB exact fit
    assert_eq!(u, p);
    let v = a.malloc(50 * MIB, S0).unwrap(); // 70 MiB block: 70 >= 50 + 20, rejected
    assert_ne!(v, big);
    assert_eq!(cur(&a, "oversize_allocations"), 2);
    check(&a);
}

#[test]
fn max_non_split_rounding_widens_oversize_reuse() {
    for (conf, reused) in [
        ("max_split_size_mb:40", false),
        ("max_split_size_mb:40,max_non_split_rounding_mb:60", true),
    ] {
        let a = alloc(GIB, conf);
        let p = a.malloc(100 * MIB, S0).unwrap();
        free(&a, p);
        let q = a.malloc(50 * MIB, S0).unwrap();
        assert_eq!(q == p, reused, "{conf}");
        if reused {
            assert_eq!(layout(&a, q), vec![(100 * MIB, 'A')], "never split");
        }
        check(&a);
    }
}

#[test]
fn coalescing_on_free_and_empty_cache() {
    let a = alloc(GIB, "");
    let pa = a.malloc(2 * MIB, S0).unwrap();
    let pb = a.malloc(2 * MIB, S0).unwrap();
    let pc = a.malloc(2 * MIB, S0).unwrap();
    assert_eq!(
        layout(&a, pa),
        vec![
            (2 * MIB, 'A'),
            (2 * MIB, 'A'),
            (2 * MIB, 'A'),
            (14 * MIB, '.')
        ]
    );
    assert_eq!(cur(&a, "inactive_split.large_pool"), 1);
    // Freeing the middle block leaves two inactive split blocks.
    free(&a, pb);
    assert_eq!(
        layout(&a, pa),
        vec![
            (2 * MIB, 'A'),
            (2 * MIB, '.'),
            (2 * MIB, 'A'),
            (14 * MIB, '.')
        ]
    );
    assert_eq!(cur(&a, "inactive_split.large_pool"), 2);
    assert_eq!(
        cur(&a, "inactive_split_bytes.large_pool"),
        (16 * MIB) as i64
    );
    // empty_cache cannot release a split segment.
    a.empty_cache().unwrap();
    assert_eq!(a.device().counters().free_calls, 0);
    assert_eq!(a.memory_reserved(), 20 * MIB);
    // Freeing the first merges it with the middle one.
    free(&a, pa);
    assert_eq!(
        layout(&a, pa),
        vec![(4 * MIB, '.'), (2 * MIB, 'A'), (14 * MIB, '.')]
    );
    assert_eq!(cur(&a, "inactive_split.large_pool"), 2);
    assert_eq!(
        cur(&a, "inactive_split_bytes.large_pool"),
        (18 * MIB) as i64
    );
    check(&a);
    // Freeing the last live block merges both neighbours: one whole segment.
    free(&a, pc);
    assert_eq!(layout(&a, pa), vec![(20 * MIB, '.')]);
    assert_eq!(cur(&a, "inactive_split.large_pool"), 0);
    assert_eq!(cur(&a, "inactive_split_bytes.large_pool"), 0);
    check(&a);
    a.empty_cache().unwrap();
    assert_eq!(a.device().counters().free_calls, 1);
    assert_eq!(a.memory_reserved(), 0);
    assert!(a.snapshot().is_empty());
    assert_eq!(s4(&a, "segment.large_pool"), [0, 1, 1, 1]);
    check(&a);
}

#[test]
fn empty_cache_releases_unsplit_blocks_of_both_pools_only() {
    let a = alloc(GIB, "");
    let small = a.malloc(1000, S0).unwrap();
    let big = a.malloc(30 * MIB, S0).unwrap();
    let kept = a.malloc(5 * MIB, S0).unwrap(); // 20 MiB segment, stays split
    free(&a, small);
    free(&a, big);
    a.empty_cache().unwrap();
    assert_eq!(a.device().counters().free_calls, 2);
    assert_eq!(a.device().live_allocations(), vec![(kept.0, 20 * MIB)]);
    assert_eq!(st(&a)["num_device_free"], 2);
    assert_eq!(st(&a)["num_sync_all_streams"], 1);
    check(&a);
}

#[test]
fn snapshot_states_and_sizes() {
    let a = alloc(GIB, "");
    let p = a.malloc(3 * MIB, S1).unwrap();
    let segs = a.snapshot();
    assert_eq!(segs.len(), 1);
    let s = &segs[0];
    assert_eq!(
        (
            s.total_size,
            s.allocated_size,
            s.active_size,
            s.requested_size
        ),
        (20 * MIB, 3 * MIB, 3 * MIB, 3 * MIB)
    );
    assert_eq!((s.stream, s.device, s.is_expandable), (1, 0, false));
    assert_eq!(s.blocks[0].address, p.0);
    assert_eq!(s.blocks[0].state, BlockState::ActiveAllocated);
    assert_eq!(s.blocks[1].address, p.0 + 3 * MIB);
    assert_eq!(s.blocks[1].state, BlockState::Inactive);
}

#[test]
fn zero_byte_and_exabyte_requests() {
    let a = alloc(GIB, "");
    let p = a.malloc(0, S0).unwrap();
    assert_eq!(layout(&a, p)[0], (512, 'A'));
    let e = a.malloc(1 << 60, S0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "CUDA out of memory. Tried to allocate more than 1EB memory."
    );
    assert_eq!(cur(&a, "allocation.all"), 1);
    // SAFETY: fake memory; freeing a pointer into the middle of a block is
    // the error being tested.
    let bad = unsafe { a.free(alloc_cuda::DevicePtr(p.0 + 512)) }.unwrap_err();
    assert_eq!(
        bad.to_string(),
        format!("invalid device pointer: {:#x}", p.0 + 512)
    );
    assert!(a.record_stream(alloc_cuda::DevicePtr(12345), S1).is_err());
}
