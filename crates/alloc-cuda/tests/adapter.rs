//! The `c10_storage::Allocator` adapter: the conformance kit, deleters,
//! `record_stream` through a `DataPtr`, the current stream, storages.

mod common;

use std::sync::Arc;

use alloc_cuda::{
    CachingAllocator, CachingAllocatorConfig, CachingDeviceAllocator, FakeDevice, StreamGuard,
    StreamId,
};
use c10_storage::testing::{check_allocator, KitOptions};
use c10_storage::{AllocError, Allocator, DataPtr, Device, DeviceType, Storage, StorageError};
use common::*;

fn adapter(capacity: u64) -> CachingDeviceAllocator<FakeDevice> {
    CachingDeviceAllocator::new(CachingAllocator::new(
        FakeDevice::new(capacity),
        0,
        CachingAllocatorConfig::default(),
    ))
}

#[test]
fn passes_the_conformance_kit() {
    let a = adapter(4 * GIB);
    let report = check_allocator(&a, &KitOptions::default());
    report.assert_ok();
    // CUDA memory is not host-accessible, and there is no raw deleter.
    assert_eq!(report.skipped, vec!["read_write", "copy_data", "raw_api"]);
    assert!(report.passed.contains(&"stats"));
    assert!(report.passed.contains(&"threads"));
    check(a.inner());
    assert_eq!(a.inner().memory_allocated(), 0);
}

#[test]
fn passes_the_kit_with_expandable_segments() {
    let a = CachingDeviceAllocator::new(CachingAllocator::new(
        FakeDevice::new(4 * GIB),
        1,
        CachingAllocatorConfig::parse("expandable_segments:True").unwrap(),
    ));
    check_allocator(&a, &KitOptions::default()).assert_ok();
    let inner = a.inner();
    inner.validate().unwrap();
    inner.empty_cache().unwrap();
    assert_eq!(inner.memory_reserved(), 0);
    assert!(inner.device().live_reservations().is_empty());
}

#[test]
fn data_ptrs_are_cuda_and_free_back_into_the_cache() {
    let a = adapter(GIB);
    let p = a.allocate(1000).unwrap();
    assert_eq!(p.device(), Device::new(DeviceType::Cuda, 0));
    assert!(!p.is_null());
    assert!(!p.is_simple());
    assert_eq!(a.inner().memory_allocated(), 1024);
    let addr = p.get() as usize as u64;
    assert_eq!(
        segment_of(a.inner(), alloc_cuda::DevicePtr(addr)).address,
        addr
    );
    // Freed from another thread.
    std::thread::spawn(move || drop(p)).join().unwrap();
    assert_eq!(a.inner().memory_allocated(), 0);
    assert_eq!(a.inner().memory_reserved(), 2 * MIB, "cached, not released");
    // Zero bytes: a null pointer and no allocation.
    let z = a.allocate(0).unwrap();
    assert!(z.is_null());
    assert_eq!(z.device(), Device::cuda(0));
    assert_eq!(a.inner().stats().allocation[0].allocated, 1);
    check(a.inner());
}

#[test]
fn record_stream_through_a_data_ptr() {
    let a = adapter(GIB);
    let p = a.allocate(4 << 20).unwrap();
    a.record_stream(&p, StreamId(9)).unwrap();
    let addr = p.get() as usize as u64;
    drop(p);
    assert_eq!(
        layout(a.inner(), alloc_cuda::DevicePtr(addr)),
        vec![(4 * MIB, 'P'), (16 * MIB, '.')]
    );
    a.inner().device().complete_stream_work(StreamId(9));
    let q = a.allocate(4 << 20).unwrap();
    assert_eq!(
        q.get() as usize as u64,
        addr,
        "reused once the event completed"
    );
    // Pointers that are not ours are ignored.
    let foreign = DataPtr::from_owner(vec![0u8; 16]);
    a.record_stream(&foreign, StreamId(9)).unwrap();
    a.record_stream(&DataPtr::null(Device::cuda(0)), StreamId(9))
        .unwrap();
    let other = adapter(GIB);
    let theirs = other.allocate(100).unwrap();
    a.record_stream(&theirs, StreamId(9)).unwrap();
    drop(theirs);
    assert_eq!(other.inner().device().counters().event_records, 0);
    check(a.inner());
}

#[test]
fn allocates_on_the_current_stream() {
    let a = adapter(GIB);
    let p = {
        let _g = StreamGuard::new(0, StreamId(7));
        a.allocate(100).unwrap()
    };
    let q = a.allocate(100).unwrap();
    let addr = p.get() as usize as u64;
    assert_eq!(segment_of(a.inner(), alloc_cuda::DevicePtr(addr)).stream, 7);
    let addr_q = q.get() as usize as u64;
    assert_eq!(
        segment_of(a.inner(), alloc_cuda::DevicePtr(addr_q)).stream,
        0
    );
    let r = a.allocate_on_stream(100, StreamId(3)).unwrap();
    assert_eq!(
        segment_of(a.inner(), alloc_cuda::DevicePtr(r.get() as usize as u64)).stream,
        3
    );
}

#[test]
fn out_of_memory_becomes_an_alloc_error_with_pytorchs_message() {
    let a = adapter(100 * MIB);
    let e = a.allocate(200 << 20).unwrap_err();
    match e {
        AllocError::OutOfMemory { nbytes, message } => {
            assert_eq!(nbytes, 200 << 20);
            assert!(message.starts_with(
                "CUDA out of memory. Tried to allocate 200.00 MiB. GPU 0 has a total capacity of 100.00 MiB of which 100.00 MiB is free."
            ));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn stats_through_the_allocator_trait() {
    let a = adapter(GIB);
    let p = a.allocate(1000).unwrap();
    let q = a.allocate(3000).unwrap();
    drop(p);
    let s = a.stats().unwrap();
    assert_eq!(
        (
            s.current_bytes,
            s.peak_bytes,
            s.allocated_bytes,
            s.freed_bytes,
            s.allocations,
            s.frees
        ),
        (3000, 4000, 4000, 1000, 2, 1)
    );
    a.reset_peak_stats();
    assert_eq!(a.stats().unwrap().peak_bytes, 3000);
    drop(q);
    assert_eq!(a.name(), "CachingDeviceAllocator");
    assert_eq!(a.device_type(), DeviceType::Cuda);
}

#[test]
fn storages_on_the_fake_device() {
    // Storages want a `&'static dyn Allocator`; a static keeps it reachable.
    static ADAPTER: std::sync::OnceLock<CachingDeviceAllocator<FakeDevice>> =
        std::sync::OnceLock::new();
    let a: &'static CachingDeviceAllocator<FakeDevice> = ADAPTER.get_or_init(|| adapter(GIB));
    let s = Storage::new(1000, a, true).unwrap();
    assert_eq!(s.device(), Device::cuda(0));
    assert!(matches!(
        s.read().unwrap().bytes(),
        Err(StorageError::NotHostAccessible { .. })
    ));
    // Growing copies the old bytes on the device.
    s.resize(5000).unwrap();
    assert_eq!(s.nbytes(), 5000);
    assert_eq!(a.inner().device().counters().copy_calls, 1);
    assert_eq!(a.inner().memory_allocated(), 5120);
    drop(s);
    assert_eq!(a.inner().memory_allocated(), 0);
    check(a.inner());
}

#[test]
fn shared_allocators_and_arc_devices() {
    let dev = Arc::new(FakeDevice::new(GIB));
    let inner = Arc::new(CachingAllocator::new(
        Arc::clone(&dev),
        2,
        CachingAllocatorConfig::default(),
    ));
    let a = CachingDeviceAllocator::from_arc(Arc::clone(&inner));
    let b = a.clone();
    let p = b.allocate(64).unwrap();
    assert_eq!(p.device(), Device::cuda(2));
    assert_eq!(dev.counters().malloc_calls, 1);
    drop(p);
    drop((a, b));
    drop(inner);
    assert!(
        dev.live_allocations().is_empty(),
        "dropping the allocator released its cache"
    );
}
