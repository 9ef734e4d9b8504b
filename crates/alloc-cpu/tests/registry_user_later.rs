//! A user allocator registered *after* `cpu_allocator()` installed the
//! default wins over it, at priority 0. (One test per file: the registry is
//! process-wide.)

use alloc_cpu::{builtin_cpu_allocator, cpu_allocator, CpuAllocator};
use c10_storage::{allocator_priority, set_allocator, Allocator, DeviceType};

static USER: CpuAllocator = CpuAllocator::new();

fn same(a: &dyn Allocator, b: &CpuAllocator) -> bool {
    std::ptr::addr_eq(a as *const dyn Allocator, b as *const CpuAllocator)
}

#[test]
fn registration_after_first_use_wins() {
    assert!(same(cpu_allocator(), builtin_cpu_allocator()));
    // The default is not a registration: no priority recorded.
    assert_eq!(allocator_priority(DeviceType::Cpu), None);
    assert!(set_allocator(DeviceType::Cpu, &USER, 0).unwrap());
    assert!(same(cpu_allocator(), &USER));
    assert!(!same(cpu_allocator(), builtin_cpu_allocator()));
}
