//! A user allocator registered *before* the first `cpu_allocator()` call
//! wins over the default. (One test per file: the registry is process-wide.)

use alloc_cpu::{builtin_cpu_allocator, cpu_allocator, CpuAllocator, FillMode};
use c10_storage::{get_allocator, set_allocator, Allocator, DeviceType};

static USER: CpuAllocator = CpuAllocator::with_fill(FillMode::Junk);

fn is_user(a: &dyn Allocator) -> bool {
    std::ptr::addr_eq(a as *const dyn Allocator, &USER as *const CpuAllocator)
}

#[test]
fn registration_before_first_use_wins() {
    assert!(set_allocator(DeviceType::Cpu, &USER, 0).unwrap());
    assert!(is_user(cpu_allocator()));
    assert!(is_user(get_allocator(DeviceType::Cpu).unwrap()));
    // The storage helper uses it too: junk, not zeros.
    let s = alloc_cpu::empty_storage(8).unwrap();
    assert_eq!(
        s.read().unwrap().bytes().unwrap(),
        &alloc_cpu::JUNK_PATTERN.to_ne_bytes()
    );
    // The default is still reachable directly.
    assert_eq!(builtin_cpu_allocator().fill_mode(), FillMode::Zero);
}
