//! Fuzz target 3: the CUDA caching-allocator algorithm on `FakeDevice`.
//! Random malloc / free / record_stream / stream and event completion /
//! empty_cache sequences with injected device failures, over a config picked
//! by the input; `validate()` (the allocator's own invariant checker) runs
//! after every step, live allocations must never overlap, and once
//! everything is freed and the cache emptied nothing may remain.
#![no_main]

use alloc_cuda::{
    round_size, CachingAllocator, CachingAllocatorConfig, CachingAllocatorError, DevicePtr,
    FakeDevice, StreamId,
};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

const MIB: u64 = 1 << 20;

#[derive(Debug, Arbitrary)]
enum Op {
    Malloc { size: u32, scale: u8, stream: u8 },
    Free(u16),
    Record(u16, u8),
    CompleteStream(u8),
    CompleteEvent(u16),
    EmptyCache,
    FailNextMalloc,
    FailNextMap,
    External(u8),
    ToggleExpandable,
    MemoryFraction(u8),
    HugeMalloc(u64),
}

#[derive(Debug, Arbitrary)]
struct Input {
    config: u8,
    capacity_mib: u8,
    ops: Vec<Op>,
}

const CONFIGS: [&str; 6] = [
    "",
    "max_split_size_mb:20",
    "max_split_size_mb:24,max_non_split_rounding_mb:40,garbage_collection_threshold:0.6",
    "roundup_power2_divisions:[1:4,8:2,>:8]",
    "expandable_segments:True",
    "expandable_segments:True,max_split_size_mb:32,release_lock_on_cudamalloc:True",
];

fn check(a: &CachingAllocator<FakeDevice>, live: &[(DevicePtr, u64)]) {
    if let Err(e) = a.validate() {
        panic!("invariant violated: {e}\nsnapshot: {:#?}", a.snapshot());
    }
    let config = a.config();
    let mut ranges: Vec<(u64, u64)> = live
        .iter()
        .map(|&(p, size)| (p.0, p.0 + round_size(size, &config)))
        .collect();
    ranges.sort_unstable();
    for w in ranges.windows(2) {
        assert!(w[0].1 <= w[1].0, "live allocations overlap: {w:?}");
    }
}

fuzz_target!(|input: Input| {
    let conf = CONFIGS[usize::from(input.config) % CONFIGS.len()];
    let expandable_conf = conf.contains("expandable_segments:True");
    let config = CachingAllocatorConfig::parse(conf).expect("the fixed configs parse");
    let capacity = (u64::from(input.capacity_mib % 128) + 16) * MIB;
    let a = CachingAllocator::new(FakeDevice::new(capacity).with_alignment(512), 0, config);
    let mut live: Vec<(DevicePtr, u64)> = Vec::new();
    for op in input.ops.iter().take(400) {
        match *op {
            Op::Malloc {
                size,
                scale,
                stream,
            } => {
                let size = u64::from(size) >> (scale % 24);
                match a.malloc(size, StreamId(u64::from(stream % 4))) {
                    Ok(p) => {
                        if size > 0 {
                            live.push((p, size));
                        } else {
                            // SAFETY: fresh pointer, freed once, never used.
                            let _ = unsafe { a.free(p) };
                        }
                    }
                    Err(CachingAllocatorError::OutOfMemory(_)) => {}
                    Err(e) => panic!("unexpected error: {e}"),
                }
            }
            Op::HugeMalloc(size) => {
                if let Ok(p) = a.malloc(size, StreamId(0)) {
                    // SAFETY: fresh pointer, freed once, never used.
                    unsafe { a.free(p) }.expect("free");
                }
            }
            Op::Free(i) => {
                if !live.is_empty() {
                    let (p, _) = live.swap_remove(usize::from(i) % live.len());
                    // SAFETY: each live pointer is freed exactly once.
                    unsafe { a.free(p) }.expect("free of a live pointer");
                }
            }
            Op::Record(i, s) => {
                if !live.is_empty() {
                    let (p, _) = live[usize::from(i) % live.len()];
                    a.record_stream(p, StreamId(u64::from(s % 4)))
                        .expect("record_stream");
                }
            }
            Op::CompleteStream(s) => a.device().complete_stream_work(StreamId(u64::from(s % 4))),
            Op::CompleteEvent(i) => {
                let evs = a.device().live_events();
                if !evs.is_empty() {
                    a.device()
                        .set_event_complete(evs[usize::from(i) % evs.len()]);
                }
            }
            Op::EmptyCache => a.empty_cache().expect("empty_cache"),
            Op::FailNextMalloc => a.device().fail_next_mallocs(1),
            Op::FailNextMap => {
                let next = a.device().counters().create_physical_calls + 1;
                a.device().fail_create_physical_call(next);
            }
            Op::External(n) => a.device().set_external_usage(u64::from(n % 8) * 8 * MIB),
            Op::ToggleExpandable => {
                if expandable_conf {
                    a.set_expandable_segments(!a.expandable_segments());
                }
            }
            Op::MemoryFraction(f) => {
                let _ = a.set_memory_fraction(f64::from(f) / 200.0);
            }
        }
        check(&a, &live);
    }
    for (p, _) in live.drain(..) {
        // SAFETY: each live pointer is freed exactly once.
        unsafe { a.free(p) }.expect("free");
    }
    a.set_expandable_segments(expandable_conf);
    a.device().complete_all_work();
    a.empty_cache().expect("empty_cache");
    check(&a, &live);
    assert_eq!(a.memory_allocated(), 0);
    assert_eq!(a.memory_reserved(), 0);
    assert!(a.device().live_allocations().is_empty());
    assert!(a.device().live_mappings().is_empty());
    assert_eq!(a.device().live_physical_handles(), 0);
});
