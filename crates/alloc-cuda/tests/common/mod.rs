//! Helpers shared by the integration tests.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(dead_code)]

use std::collections::BTreeMap;

use alloc_cuda::{
    CachingAllocator, CachingAllocatorConfig, DevicePtr, FakeDevice, SegmentSnapshot, Stat,
    StreamId,
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

/// The [`Stat`] named like a `memory_stats()` key without its last part
/// (`"allocated_bytes.large_pool"`, `"oversize_segments"`), read straight
/// from the struct (building the whole flat map is slow under Miri).
pub fn stat(a: &Alloc, name: &str) -> Stat {
    let s = a.stats();
    let (field, pool) = name.split_once('.').unwrap_or((name, ""));
    let arr = match field {
        "allocation" => s.allocation,
        "segment" => s.segment,
        "active" => s.active,
        "inactive_split" => s.inactive_split,
        "allocated_bytes" => s.allocated_bytes,
        "reserved_bytes" => s.reserved_bytes,
        "active_bytes" => s.active_bytes,
        "inactive_split_bytes" => s.inactive_split_bytes,
        "requested_bytes" => s.requested_bytes,
        "oversize_allocations" => return s.oversize_allocations,
        "oversize_segments" => return s.oversize_segments,
        other => panic!("unknown stat {other}"),
    };
    match pool {
        "all" => arr[0],
        "small_pool" => arr[1],
        "large_pool" => arr[2],
        other => panic!("unknown pool {other}"),
    }
}

/// `[current, peak, allocated, freed]` of a stat.
pub fn s4(a: &Alloc, name: &str) -> [i64; 4] {
    let s = stat(a, name);
    [s.current, s.peak, s.allocated, s.freed]
}

/// The current value of a stat.
pub fn cur(a: &Alloc, name: &str) -> i64 {
    stat(a, name).current
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
