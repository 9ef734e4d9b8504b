//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::BTreeMap;

use alloc_cuda::{
    CachingAllocator, CachingAllocatorConfig, DevicePtr, FakeDevice, SegmentSnapshot, StreamId,
};

pub const KIB: u64 = 1 << 10;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;

pub const S0: StreamId = StreamId(0);
pub const S1: StreamId = StreamId(1);
pub const S2: StreamId = StreamId(2);

pub type Alloc = CachingAllocator<FakeDevice>;

/// An allocator over a fake device of `capacity` bytes with `conf`
/// (`PYTORCH_CUDA_ALLOC_CONF` syntax).
pub fn alloc(capacity: u64, conf: &str) -> Alloc {
    let config = CachingAllocatorConfig::parse(conf).expect("valid config");
    CachingAllocator::new(FakeDevice::new(capacity), 0, config)
}

/// Like [`alloc`] with a given fake device.
pub fn alloc_on(dev: FakeDevice, conf: &str) -> Alloc {
    let config = CachingAllocatorConfig::parse(conf).expect("valid config");
    CachingAllocator::new(dev, 0, config)
}

/// Flat `memory_stats()` map.
pub fn st(a: &Alloc) -> BTreeMap<String, i64> {
    a.stats().to_flat_map()
}

/// `[current, peak, allocated, freed]` of a flat stat.
pub fn s4(a: &Alloc, name: &str) -> [i64; 4] {
    let m = st(a);
    let g = |f: &str| m[&format!("{name}.{f}")];
    [g("current"), g("peak"), g("allocated"), g("freed")]
}

pub fn cur(a: &Alloc, name: &str) -> i64 {
    st(a)[&format!("{name}.current")]
}

/// Checks the allocator's invariants and that its segments are exactly the
/// fake device's live allocations (classic) and mappings (expandable).
pub fn check(a: &Alloc) {
    if let Err(e) = a.validate() {
        panic!("invariant violated: {e}\nsnapshot: {:#?}", a.snapshot());
    }
    let snap = a.snapshot();
    let classic: Vec<(u64, u64)> = snap
        .iter()
        .filter(|s| !s.is_expandable)
        .map(|s| (s.address, s.total_size))
        .collect();
    assert_eq!(
        classic,
        a.device().live_allocations(),
        "classic segments vs device"
    );
    let mapped: u64 = snap
        .iter()
        .filter(|s| s.is_expandable)
        .map(|s| s.total_size)
        .sum();
    let device_mapped: u64 = a.device().live_mappings().iter().map(|m| m.1).sum();
    // Mapped pages may extend past the last mapped block only when a block
    // ends mid-page, which never happens: blocks tile whole pages.
    assert_eq!(mapped, device_mapped, "expandable mapped bytes vs device");
    assert_eq!(
        a.memory_reserved(),
        classic.iter().map(|s| s.1).sum::<u64>() + mapped
    );
}

/// The segment containing `ptr`.
pub fn segment_of(a: &Alloc, ptr: DevicePtr) -> SegmentSnapshot {
    a.snapshot()
        .into_iter()
        .find(|s| s.address <= ptr.0 && ptr.0 < s.address + s.total_size)
        .expect("pointer inside a segment")
}

/// Block sizes of the segment containing `ptr`, with `A` for allocated,
/// `P` for pending free, `.` for inactive.
pub fn layout(a: &Alloc, ptr: DevicePtr) -> Vec<(u64, char)> {
    segment_of(a, ptr)
        .blocks
        .iter()
        .map(|b| {
            (
                b.size,
                match b.state {
                    alloc_cuda::BlockState::ActiveAllocated => 'A',
                    alloc_cuda::BlockState::ActivePendingFree => 'P',
                    alloc_cuda::BlockState::Inactive => '.',
                },
            )
        })
        .collect()
}

/// Frees `p`.
pub fn free(a: &Alloc, p: DevicePtr) {
    // SAFETY: tests never use freed pointers (nothing dereferences them).
    unsafe { a.free(p) }.expect("free");
}
