//! The allocator conformance kit passes a correct allocator and catches
//! deliberately broken ones.

mod common;

use std::sync::atomic::AtomicU64;

use c10_storage::testing::{check_allocator, KitOptions, CHECKS};
use c10_storage::{
    default_copy_data, AllocError, Allocator, AllocatorStats, DataPtr, Device, DeviceType,
};
use common::{Counters, TestAllocator};

fn opts() -> KitOptions {
    KitOptions::default()
}

#[test]
fn a_correct_allocator_passes_every_check() {
    static C: Counters = Counters {
        current: AtomicU64::new(0),
        peak: AtomicU64::new(0),
        allocated: AtomicU64::new(0),
        freed: AtomicU64::new(0),
        allocations: AtomicU64::new(0),
        frees: AtomicU64::new(0),
    };
    let report = check_allocator(&TestAllocator { stats: Some(&C) }, &opts());
    report.assert_ok();
    // No raw deleter, so the raw API check is the one that cannot run.
    assert_eq!(report.passed.len(), CHECKS.len() - 1, "{report:?}");
    assert_eq!(report.skipped, vec!["raw_api"]);
    let plain = check_allocator(&TestAllocator { stats: None }, &opts());
    plain.assert_ok();
    assert_eq!(plain.skipped, vec!["raw_api", "stats"]);
}

/// Hands out memory 1 byte past a 64-byte boundary.
struct Misaligned;
// SAFETY: each block is a fresh owned Vec with one spare byte in front.
unsafe impl Allocator for Misaligned {
    fn allocate(&self, n: usize) -> Result<DataPtr, AllocError> {
        let inner = TestAllocator { stats: None }.allocate(n + 1)?;
        let (data, ctx, del, dev) = inner.into_raw_parts();
        let shifted = if n == 0 { data } else { data.wrapping_add(1) };
        // SAFETY: the same context and deleter; the data pointer moved by one
        // byte inside the `n + 1`-byte block.
        Ok(unsafe { DataPtr::from_raw_parts(shifted, ctx, del, dev) })
    }
    fn device_type(&self) -> DeviceType {
        DeviceType::Cpu
    }
    unsafe fn copy_data(
        &self,
        d: *mut u8,
        s: *const u8,
        n: usize,
    ) -> Result<(), c10_storage::AllocError> {
        // SAFETY: forwarded.
        unsafe { default_copy_data(d, s, n) }
    }
}

/// Every allocation is the same buffer.
struct Overlapping<'a>(&'a [std::cell::UnsafeCell<u8>]);
// SAFETY: deliberately broken (overlapping allocations) for this test only;
// the kit touches the memory through raw pointers, so no references alias.
unsafe impl Sync for Overlapping<'_> {}
// SAFETY: as above.
unsafe impl Send for Overlapping<'_> {}
// SAFETY: as above.
unsafe impl Allocator for Overlapping<'_> {
    fn allocate(&self, n: usize) -> Result<DataPtr, AllocError> {
        if n > self.0.len() {
            return Err(AllocError::OutOfMemory {
                nbytes: n,
                message: "too big".into(),
            });
        }
        Ok(DataPtr::non_owning(
            self.0.as_ptr().cast::<u8>().cast_mut(),
            Device::CPU,
        ))
    }
    fn device_type(&self) -> DeviceType {
        DeviceType::Cpu
    }
    unsafe fn copy_data(
        &self,
        d: *mut u8,
        s: *const u8,
        n: usize,
    ) -> Result<(), c10_storage::AllocError> {
        // SAFETY: forwarded.
        unsafe { std::ptr::copy(s, d, n) };
        Ok(())
    }
}

/// Says CPU, returns pointers tagged as meta.
struct Mislabelled;
// SAFETY: the memory itself is fine; only the label is wrong (the test's point).
unsafe impl Allocator for Mislabelled {
    fn allocate(&self, n: usize) -> Result<DataPtr, AllocError> {
        let mut p = TestAllocator { stats: None }.allocate(n)?;
        // SAFETY: deliberately wrong, and never dereferenced as meta memory.
        unsafe { p.set_device(Device::META) };
        Ok(p)
    }
    fn device_type(&self) -> DeviceType {
        DeviceType::Cpu
    }
    unsafe fn copy_data(
        &self,
        d: *mut u8,
        s: *const u8,
        n: usize,
    ) -> Result<(), c10_storage::AllocError> {
        // SAFETY: forwarded.
        unsafe { default_copy_data(d, s, n) }
    }
}

/// Correct memory, but statistics that never see a free.
struct LyingStats(TestAllocator);
// SAFETY: delegates the memory to a correct allocator.
unsafe impl Allocator for LyingStats {
    fn allocate(&self, n: usize) -> Result<DataPtr, AllocError> {
        self.0.allocate(n)
    }
    fn device_type(&self) -> DeviceType {
        DeviceType::Cpu
    }
    unsafe fn copy_data(
        &self,
        d: *mut u8,
        s: *const u8,
        n: usize,
    ) -> Result<(), c10_storage::AllocError> {
        // SAFETY: forwarded.
        unsafe { default_copy_data(d, s, n) }
    }
    fn stats(&self) -> Option<AllocatorStats> {
        self.0.stats().map(|mut s| {
            s.current_bytes = s.allocated_bytes;
            s.freed_bytes = 0;
            s.frees = 0;
            s.peak_bytes = s.peak_bytes.max(s.current_bytes);
            s
        })
    }
}

#[test]
fn broken_allocators_are_caught() {
    let r = check_allocator(&Misaligned, &opts());
    assert!(r.failed("alignment"), "{r}");
    assert!(!r.failed("read_write"), "the memory itself is usable: {r}");

    // Room for the kit's largest request (4 KiB under Miri, where
    // building a 1 MiB buffer byte by byte takes minutes).
    let buf: Vec<std::cell::UnsafeCell<u8>> = (0..opts().max_size)
        .map(|_| std::cell::UnsafeCell::new(0))
        .collect();
    let r = check_allocator(&Overlapping(&buf), &opts());
    assert!(r.failed("no_overlap"), "{r}");
    assert!(
        r.skipped.contains(&"threads"),
        "the racy thread check must not run on an overlapping allocator: {r}"
    );

    let r = check_allocator(&Mislabelled, &opts());
    assert!(r.failed("device_type"), "{r}");

    static C: Counters = Counters {
        current: AtomicU64::new(0),
        peak: AtomicU64::new(0),
        allocated: AtomicU64::new(0),
        freed: AtomicU64::new(0),
        allocations: AtomicU64::new(0),
        frees: AtomicU64::new(0),
    };
    let r = check_allocator(&LyingStats(TestAllocator { stats: Some(&C) }), &opts());
    assert!(r.failed("stats"), "{r}");
    let text = r.to_string();
    assert!(text.contains("FAILED stats"), "{text}");
}
