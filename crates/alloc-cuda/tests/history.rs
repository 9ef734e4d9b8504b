//! History recording of the caching allocator on the fake device: every
//! kind of trace entry with PyTorch's addresses and sizes, the pending free
//! of `record_stream`, out-of-memory, expandable segments, stacks of live
//! blocks in the snapshot, and recording left off by default.

use alloc_cuda::{BlockState, CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
use c10_storage::history::{HistoryConfig, TraceAction};

fn no_stacks() -> HistoryConfig {
    HistoryConfig {
        stacks: false,
        ..HistoryConfig::default()
    }
}

fn trace(a: &CachingAllocator<FakeDevice>) -> Vec<(TraceAction, u64, u64, u64)> {
    a.memory_snapshot()
        .device_trace
        .iter()
        .map(|e| (e.action, e.addr, e.size, e.stream))
        .collect()
}

#[test]
fn off_by_default() {
    let a = CachingAllocator::new(
        FakeDevice::new(1 << 30),
        0,
        CachingAllocatorConfig::default(),
    );
    assert_eq!(a.history_config(), None);
    let p = a.malloc(1000, StreamId::DEFAULT).expect("malloc");
    let snap = a.memory_snapshot();
    assert!(snap.device_trace.is_empty());
    assert!(snap.segments[0].blocks[0].frames.is_empty());
    // SAFETY: unused.
    unsafe { a.free(p).expect("free") };
}

#[test]
fn record_stream_delays_free_completed() {
    let dev = FakeDevice::new(1 << 30);
    let a = CachingAllocator::new(dev, 0, CachingAllocatorConfig::default());
    a.record_memory_history(Some(no_stacks()));
    let s1 = StreamId(1);
    let p = a.malloc(3 << 20, s1).expect("malloc");
    a.record_stream(p, StreamId(2)).expect("record_stream");
    // SAFETY: unused.
    unsafe { a.free(p).expect("free") };
    let seg = p.addr();
    assert_eq!(
        trace(&a),
        [
            (TraceAction::SegmentAlloc, seg, 20 << 20, 1),
            (TraceAction::Alloc, seg, 3 << 20, 1),
            (TraceAction::FreeRequested, seg, 3 << 20, 1),
            (TraceAction::Snapshot, 0, 3 << 20, 0),
        ]
    );
    let snap = a.memory_snapshot();
    assert_eq!(
        snap.segments[0].blocks[0].state,
        BlockState::ActivePendingFree
    );
    a.device().complete_all_work();
    a.empty_cache().expect("empty_cache");
    let t = trace(&a);
    assert_eq!(t[5], (TraceAction::FreeCompleted, seg, 3 << 20, 1));
    assert_eq!(t[6], (TraceAction::SegmentFree, seg, 20 << 20, 1));
    assert_eq!(t.len(), 8);
}

#[test]
fn out_of_memory_records_the_free_bytes() {
    let a = CachingAllocator::new(
        FakeDevice::new(64 << 20),
        0,
        CachingAllocatorConfig::default(),
    );
    a.record_memory_history(Some(no_stacks()));
    assert!(a.malloc(100 << 20, StreamId::DEFAULT).is_err());
    assert_eq!(
        trace(&a)[0],
        (TraceAction::Oom, 64 << 20, 100 << 20, 0),
        "addr holds the device's free bytes"
    );
}

#[test]
fn expandable_segments_map_and_unmap() {
    let a = CachingAllocator::new(
        FakeDevice::new(1 << 30),
        0,
        CachingAllocatorConfig::parse("expandable_segments:True").expect("config"),
    );
    a.record_memory_history(Some(no_stacks()));
    let p = a.malloc(30 << 20, StreamId::DEFAULT).expect("malloc");
    // SAFETY: unused.
    unsafe { a.free(p).expect("free") };
    a.empty_cache().expect("empty_cache");
    let t = trace(&a);
    let kinds: Vec<TraceAction> = t.iter().map(|e| e.0).collect();
    assert_eq!(
        kinds,
        [
            TraceAction::SegmentMap,
            TraceAction::Alloc,
            TraceAction::FreeRequested,
            TraceAction::FreeCompleted,
            TraceAction::SegmentUnmap,
            TraceAction::Snapshot,
        ]
    );
    assert_eq!((t[0].1, t[0].2), (p.addr(), 40 << 20), "two 20 MiB pages");
    assert_eq!((t[4].1, t[4].2), (p.addr(), 40 << 20));
}

#[test]
fn live_blocks_carry_their_stacks_and_the_ring_is_bounded() {
    let a = CachingAllocator::new(
        FakeDevice::new(1 << 30),
        0,
        CachingAllocatorConfig::default(),
    );
    a.record_memory_history(Some(HistoryConfig {
        max_entries: 3,
        ..HistoryConfig::default()
    }));
    let p = a.malloc(1000, StreamId::DEFAULT).expect("malloc");
    for _ in 0..5 {
        let q = a.malloc(1000, StreamId::DEFAULT).expect("malloc");
        // SAFETY: unused.
        unsafe { a.free(q).expect("free") };
    }
    let snap = a.memory_snapshot();
    assert_eq!(snap.device_trace.len(), 3);
    assert_eq!(snap.device_trace[2].action, TraceAction::Snapshot);
    let seg = &snap.segments[0];
    assert!(!seg.frames.is_empty(), "the segment's stack");
    let live = &seg.blocks[0];
    assert_eq!(
        (live.address, live.state),
        (p.addr(), BlockState::ActiveAllocated)
    );
    assert!(!live.frames.is_empty());
    assert!(seg.blocks[1].frames.is_empty(), "inactive blocks have none");
    #[cfg(not(miri))]
    assert!(
        live.frames
            .iter()
            .any(|f| f.name.contains("live_blocks_carry_their_stacks")),
        "{:?}",
        live.frames
    );
    a.record_memory_history(None);
    assert!(a.memory_snapshot().segments[0].blocks[0].frames.is_empty());
    // SAFETY: unused.
    unsafe { a.free(p).expect("free") };
}
