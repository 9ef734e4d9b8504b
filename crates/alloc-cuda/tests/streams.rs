//! `record_stream`, events recorded on free, per-stream FIFO processing,
//! and `empty_cache` synchronizing outstanding events.

mod common;

use alloc_cuda::BlockState;
use common::*;

const S3: alloc_cuda::StreamId = alloc_cuda::StreamId(3);

#[test]
fn a_block_used_on_other_streams_is_reused_only_after_their_events() {
    let a = alloc(GIB, "");
    let p = a.malloc(4 * MIB, S0).unwrap();
    a.record_stream(p, S1).unwrap();
    a.record_stream(p, S2).unwrap();
    a.record_stream(p, S0).unwrap(); // the allocation stream: ignored
    free(&a, p);
    let c = a.device().counters();
    assert_eq!((c.event_creates, c.event_records), (2, 2));
    // Freed by the user, still active until the events complete.
    assert_eq!(cur(&a, "allocation.all"), 0);
    assert_eq!(cur(&a, "allocated_bytes.all"), 0);
    assert_eq!(cur(&a, "active.all"), 1);
    assert_eq!(cur(&a, "active_bytes.all"), (4 * MIB) as i64);
    assert_eq!(cur(&a, "requested_bytes.all"), (4 * MIB) as i64);
    assert_eq!(layout(&a, p), vec![(4 * MIB, 'P'), (16 * MIB, '.')]);
    check(&a);

    // Stream 0 cannot have the block back yet: the next request is carved
    // from the segment's free tail.
    let q = a.malloc(4 * MIB, S0).unwrap();
    assert_eq!(q.0, p.0 + 4 * MIB);
    assert_eq!(
        a.device().counters().event_queries,
        2,
        "one query per stream"
    );

    // Stream 1 done, stream 2 not: still pending.
    a.device().complete_stream_work(S1);
    let r = a.malloc(4 * MIB, S0).unwrap();
    assert_eq!(r.0, p.0 + 8 * MIB);
    assert_eq!(layout(&a, p)[0], (4 * MIB, 'P'));
    check(&a);

    // Both done: the next malloc processes the events, frees the block,
    // and reuses it (best fit: exactly 4 MiB at the lowest address).
    a.device().complete_stream_work(S2);
    let s = a.malloc(4 * MIB, S0).unwrap();
    assert_eq!(s, p);
    assert_eq!(cur(&a, "active.all"), 3);
    assert!(a
        .device()
        .live_events()
        .iter()
        .all(|&e| !a.device().is_event_pending(e)));
    check(&a);

    // Pooled events are reused: recording two streams again creates none.
    a.record_stream(s, S1).unwrap();
    a.record_stream(s, S2).unwrap();
    free(&a, s);
    assert_eq!(a.device().counters().event_creates, 2);
    assert_eq!(a.device().counters().event_records, 4);
    check(&a);
}

#[test]
fn events_are_processed_in_fifo_order_per_stream() {
    let a = alloc(GIB, "");
    let x = a.malloc(2 * MIB, S0).unwrap();
    let y = a.malloc(2 * MIB, S0).unwrap();
    let z = a.malloc(2 * MIB, S0).unwrap();
    a.record_stream(x, S1).unwrap();
    a.record_stream(y, S1).unwrap();
    a.record_stream(z, S2).unwrap();
    free(&a, x);
    free(&a, y);
    free(&a, z);
    let evs = a.device().live_events();
    assert_eq!(evs.len(), 3);
    // y's event (second on stream 1) completes first: FIFO per stream means
    // it waits behind x's.
    a.device().set_event_complete(evs[1]);
    // z's stream completes: no head-of-line blocking across streams.
    a.device().complete_stream_work(S2);
    let _ = a.malloc(512, S0).unwrap(); // any malloc processes events
    let l = layout(&a, x);
    assert_eq!(l[0], (2 * MIB, 'P'), "x still pending");
    assert_eq!(l[1], (2 * MIB, 'P'), "y waits behind x");
    assert_eq!(l[2], (16 * MIB, '.'), "z freed and merged with the tail");
    check(&a);
    a.device().set_event_complete(evs[0]);
    let _ = a.malloc(512, S0).unwrap();
    assert_eq!(layout(&a, x), vec![(20 * MIB, '.')]);
    check(&a);
}

#[test]
fn empty_cache_synchronizes_pending_events_first() {
    let a = alloc(GIB, "");
    let p = a.malloc(30 * MIB, S0).unwrap();
    a.record_stream(p, S1).unwrap();
    a.record_stream(p, S3).unwrap();
    free(&a, p);
    assert_eq!(
        segment_of(&a, p).blocks[0].state,
        BlockState::ActivePendingFree
    );
    a.empty_cache().unwrap();
    let c = a.device().counters();
    assert_eq!(c.event_syncs, 2);
    assert_eq!(c.free_calls, 1);
    assert_eq!(a.memory_reserved(), 0);
    assert_eq!(cur(&a, "active.all"), 0);
    assert_eq!(st(&a)["num_sync_all_streams"], 1);
    check(&a);
}

#[test]
fn a_pending_block_does_not_merge_until_its_events_complete() {
    let a = alloc(GIB, "");
    let x = a.malloc(2 * MIB, S0).unwrap();
    let y = a.malloc(2 * MIB, S0).unwrap();
    a.record_stream(x, S1).unwrap();
    free(&a, x);
    free(&a, y); // y merges with the tail, not with pending x
    assert_eq!(layout(&a, x), vec![(2 * MIB, 'P'), (18 * MIB, '.')]);
    assert_eq!(cur(&a, "inactive_split.all"), 1);
    a.device().complete_all_work();
    let _ = a.malloc(512, S0).unwrap();
    assert_eq!(layout(&a, x), vec![(20 * MIB, '.')]);
    assert_eq!(cur(&a, "inactive_split.large_pool"), 0);
    check(&a);
}

#[test]
fn dropping_the_allocator_releases_cache_and_events() {
    use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, FakeDevice};
    use std::sync::Arc;
    let dev = Arc::new(FakeDevice::new(GIB));
    let a = CachingAllocator::new(Arc::clone(&dev), 0, CachingAllocatorConfig::default());
    let p = a.malloc(4 * MIB, S0).unwrap();
    a.record_stream(p, S1).unwrap();
    // SAFETY: unused fake memory.
    unsafe { a.free(p).unwrap() };
    let cached = a.malloc(30 * MIB, S0).unwrap();
    // SAFETY: as above.
    unsafe { a.free(cached).unwrap() };
    let _leaked = a.malloc(100, S0).unwrap(); // a raw pointer never freed
    assert_eq!(dev.live_allocations().len(), 3);
    drop(a);
    let c = dev.counters();
    assert_eq!(c.event_syncs, 1, "pending event synchronized");
    assert_eq!(c.event_destroys, 1, "pooled event destroyed");
    assert_eq!(c.free_calls, 2, "the 20 MiB and 30 MiB segments released");
    assert_eq!(
        dev.live_allocations().len(),
        1,
        "the live small segment is leaked, not freed"
    );
    assert!(dev.live_events().is_empty());
}
