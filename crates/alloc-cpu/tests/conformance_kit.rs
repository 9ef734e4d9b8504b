//! The allocator conformance kit of `c10-storage` (feature "testing") run
//! on this crate's allocators.

use alloc_cpu::{builtin_cpu_allocator, CpuAllocator, FillMode, ALIGNMENT};
use c10_storage::testing::{check_allocator, KitOptions};
use c10_storage::Allocator;

fn options() -> KitOptions {
    let mut opts = KitOptions {
        alignment: ALIGNMENT,
        ..KitOptions::default()
    };
    if cfg!(miri) {
        opts.threads = opts.threads.min(2);
        opts.iterations = opts.iterations.min(20);
        opts.max_size = opts.max_size.min(4096);
    }
    opts
}

#[test]
fn default_allocator_conforms() {
    // Shared, process-wide allocator: statistics are not exclusive to us.
    let shared = KitOptions {
        exclusive_stats: false,
        ..options()
    };
    let report = check_allocator(alloc_cpu::cpu_allocator(), &shared);
    report.assert_ok();
    assert!(report.failures.is_empty() && report.passed.contains(&"alignment"));
    let report = check_allocator(builtin_cpu_allocator(), &options());
    assert!(report.is_ok());
}

#[test]
fn junk_fill_allocator_conforms() {
    let a = CpuAllocator::with_fill(FillMode::Junk);
    check_allocator(&a, &options()).assert_ok();
}

#[test]
fn stats_tracking_allocator_conforms() {
    let a = CpuAllocator::builder().track_stats(true).build();
    let report = check_allocator(&a, &options());
    report.assert_ok();
    assert!(report.passed.contains(&"stats"), "{report}");
    assert!(report.passed.contains(&"raw_api"), "{report}");
    let st = a.stats().expect("tracking is on");
    assert!(st.allocations > 0);
    assert_eq!(st.current_bytes, 0, "the kit frees everything it allocates");
    assert_eq!(st.allocations, st.frees);
}

#[test]
fn junk_fill_with_stats_conforms() {
    let a = CpuAllocator::builder()
        .fill(FillMode::Junk)
        .track_stats(true)
        .build();
    check_allocator(&a, &options()).assert_ok();
}
