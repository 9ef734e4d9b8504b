//! History recording of the CPU allocator: what is recorded, and that the
//! statistics and the history pointer in each block's header stay
//! balanced however recording and statistics are toggled (also under Miri:
//! the header's history reference is given back exactly once).

use alloc_cpu::CpuAllocator;
use c10_storage::history::{HistoryConfig, TraceAction};
use c10_storage::{Allocator, Storage};

fn no_stacks() -> HistoryConfig {
    HistoryConfig {
        stacks: false,
        ..HistoryConfig::default()
    }
}

fn actions(a: &CpuAllocator) -> Vec<TraceAction> {
    a.memory_snapshot()
        .trace
        .iter()
        .map(|e| e.action)
        .filter(|&x| x != TraceAction::Snapshot)
        .collect()
}

#[test]
fn records_allocs_and_frees_with_sizes() {
    let a = CpuAllocator::new();
    a.record_memory_history(Some(no_stacks()));
    let p = a.allocate(100).expect("allocate");
    let addr = p.get() as u64;
    drop(p);
    let snap = a.memory_snapshot();
    assert!(snap.blocks.is_empty());
    let e: Vec<(TraceAction, u64, u64, u64)> = snap
        .trace
        .iter()
        .map(|e| (e.action, e.addr, e.size, e.stream))
        .collect();
    assert_eq!(
        e,
        [
            (TraceAction::Alloc, addr, 100, 0),
            (TraceAction::FreeRequested, addr, 100, 0),
            (TraceAction::FreeCompleted, addr, 100, 0),
            (TraceAction::Snapshot, 0, 0, 0),
        ]
    );
    assert!(snap.trace.windows(2).all(|w| w[0].time_us <= w[1].time_us));
}

#[test]
fn zero_byte_allocations_are_not_recorded() {
    let a = CpuAllocator::new();
    a.record_memory_history(Some(no_stacks()));
    let p = a.allocate(0).expect("allocate");
    assert!(p.is_null());
    assert!(actions(&a).is_empty());
}

#[test]
fn statistics_and_recording_toggle_independently() {
    let a = CpuAllocator::new();
    a.set_track_stats(true);
    a.record_memory_history(Some(no_stacks()));
    let both = a.allocate(10).expect("allocate");
    a.set_track_stats(false);
    let recorded_only = a.allocate(20).expect("allocate");
    a.record_memory_history(None);
    let neither = a.allocate(30).expect("allocate");
    a.set_track_stats(true);
    let counted_only = a.allocate(40).expect("allocate");
    let st = a.stats().expect("stats");
    assert_eq!((st.allocations, st.current_bytes), (2, 50));
    a.record_memory_history(Some(no_stacks()));
    drop(both); // recorded in the first session only: not in this trace
    drop(recorded_only);
    drop(neither);
    drop(counted_only);
    let st = a.stats().expect("stats");
    assert_eq!((st.frees, st.current_bytes), (2, 0));
    assert!(actions(&a).is_empty(), "{:?}", actions(&a));
    assert!(a.memory_snapshot().blocks.is_empty());
}

#[test]
fn blocks_outliving_the_allocator_free_cleanly() {
    let a = CpuAllocator::new();
    a.record_memory_history(Some(no_stacks()));
    let p = a.allocate(64).expect("allocate");
    drop(a);
    drop(p); // the header's history reference keeps the recorder alive
}

#[test]
fn storages_are_recorded_and_the_ring_buffer_is_bounded() {
    static A: CpuAllocator = CpuAllocator::new();
    A.record_memory_history(Some(HistoryConfig {
        max_entries: 4,
        ..no_stacks()
    }));
    let keep = Storage::new(256, &A, true).expect("storage");
    for _ in 0..3 {
        drop(Storage::new(8, &A, true).expect("storage"));
    }
    let snap = A.memory_snapshot();
    assert_eq!(snap.trace.len(), 4);
    assert_eq!(snap.blocks.len(), 1);
    assert_eq!(snap.blocks[0].size, 256);
    assert_eq!(A.history_config().map(|c| c.max_entries), Some(4));
    drop(keep);
    A.record_memory_history(None);
    assert_eq!(A.history_config(), None);
}

#[test]
fn stacks_name_the_allocating_function() {
    let a = CpuAllocator::new();
    a.record_memory_history(Some(HistoryConfig::default()));
    let _p = a.allocate(16).expect("allocate");
    let snap = a.memory_snapshot();
    let stack = snap.blocks[0].stack.as_ref().expect("a stack");
    let frames = stack.frames();
    assert!(
        !frames.iter().any(|f| f.name.contains("::history::")),
        "recorder frames are dropped"
    );
    #[cfg(not(miri))]
    assert!(
        frames
            .iter()
            .any(|f| f.name.contains("stacks_name_the_allocating_function")),
        "{frames:?}"
    );
}
