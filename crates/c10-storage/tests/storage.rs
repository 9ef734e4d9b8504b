//! Storage behaviour: sharing, guards, resizing, read-only buffers, and the
//! deleter running exactly once however the handles are spread over threads.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use c10_storage::{Device, Storage, StorageError};
use common::{Counters, TestAllocator};

struct Owner(Arc<AtomicUsize>, Vec<u8>);
impl AsMut<[u8]> for Owner {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.1
    }
}
impl Drop for Owner {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn deleter_runs_once_across_threads() {
    let drops = Arc::new(AtomicUsize::new(0));
    let s = Storage::from_owner(Owner(drops.clone(), vec![0; 64]));
    let threads = if cfg!(miri) { 3 } else { 16 };
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let mine = s.clone();
            std::thread::spawn(move || {
                let copies: Vec<Storage> = (0..10).map(|_| mine.clone()).collect();
                mine.write().unwrap().bytes_mut().unwrap()[i] = i as u8 + 1;
                drop(copies);
                mine
            })
        })
        .collect();
    let back: Vec<Storage> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(s.use_count(), threads + 1);
    drop(back);
    assert_eq!(s.use_count(), 1);
    {
        let g = s.read().unwrap();
        let bytes = g.bytes().unwrap();
        for (i, b) in bytes.iter().enumerate().take(threads) {
            assert_eq!(*b, i as u8 + 1, "every thread's write is visible");
        }
    }
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(s);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn concurrent_readers_and_writers_never_tear() {
    let s = Storage::from_owner(vec![0u8; 256]);
    let rounds = if cfg!(miri) { 5 } else { 500 };
    std::thread::scope(|scope| {
        for w in 0..2u8 {
            let s = &s;
            scope.spawn(move || {
                for r in 0..rounds {
                    let v = (r as u8).wrapping_mul(2).wrapping_add(w);
                    s.write().unwrap().bytes_mut().unwrap().fill(v);
                }
            });
        }
        for _ in 0..2 {
            let s = &s;
            scope.spawn(move || {
                for _ in 0..rounds {
                    let g = s.read().unwrap();
                    let b = g.bytes().unwrap();
                    assert!(
                        b.iter().all(|&x| x == b[0]),
                        "a reader saw a half-written buffer"
                    );
                }
            });
        }
    });
}

#[test]
fn resize_keeps_prefix_and_refuses_non_resizable() {
    static ALLOC: TestAllocator = TestAllocator { stats: None };
    let s = Storage::new(8, &ALLOC, true).unwrap();
    let view = s.clone();
    s.write()
        .unwrap()
        .bytes_mut()
        .unwrap()
        .copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    s.resize(12).unwrap();
    assert_eq!(view.nbytes(), 12, "every handle sees the new buffer");
    assert_eq!(
        view.read().unwrap().bytes().unwrap(),
        &[1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0]
    );
    s.resize(3).unwrap();
    assert_eq!(view.read().unwrap().bytes().unwrap(), &[1, 2, 3]);
    s.resize(0).unwrap();
    assert_eq!(view.read().unwrap().bytes().unwrap(), &[] as &[u8]);

    let fixed = Storage::from_owner(vec![0u8; 4]);
    let e = fixed.resize(8).unwrap_err();
    assert_eq!(e, StorageError::NotResizable);
    assert_eq!(
        e.to_string(),
        "Trying to resize storage that is not resizable"
    );
    assert_eq!(
        fixed.set_resizable(true).unwrap_err(),
        StorageError::NoAllocator
    );
}

#[test]
fn resizable_needs_an_allocator() {
    let dp = c10_storage::DataPtr::null(Device::CPU);
    // SAFETY: a null pointer for zero bytes is a valid (empty) buffer.
    let e = unsafe { Storage::from_data_ptr(dp, 0, None, true) }.unwrap_err();
    assert_eq!(
        e.to_string(),
        "For resizable storage, allocator must be provided"
    );
}

#[test]
fn read_only_refuses_writes() {
    let s = Storage::from_read_only_owner(vec![1u8, 2, 3], "test data");
    assert!(s.is_read_only());
    assert_eq!(s.read().unwrap().bytes().unwrap(), &[1, 2, 3]);
    let e = s.write().err().unwrap();
    assert!(matches!(e, StorageError::ReadOnly { .. }));
    assert!(
        e.to_string().contains("clone"),
        "the message says what to do: {e}"
    );
    assert!(Storage::lock_write_read(&s, &s).is_err());

    let w = Storage::from_owner(vec![0u8; 2])
        .into_read_only("frozen")
        .unwrap();
    assert!(w.write().is_err());
    let shared = Storage::from_owner(vec![0u8; 2]);
    let other = shared.clone();
    assert!(
        shared.into_read_only("x").is_err(),
        "a shared storage cannot be frozen"
    );
    drop(other);
}

#[test]
fn device_memory_is_not_host_accessible() {
    let dp = c10_storage::DataPtr::non_owning(std::ptr::null_mut(), Device::cuda(0));
    // SAFETY: zero bytes; nothing is ever dereferenced.
    let s = unsafe { Storage::from_data_ptr(dp, 0, None, false) }.unwrap();
    let e = s.read().unwrap().bytes().unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot access cuda:0 memory from the host; copy the tensor to the CPU first"
    );
}

#[test]
fn lock_write_read_handles_aliasing_and_order() {
    let a = Storage::from_owner(vec![1u8; 4]);
    let b = Storage::from_owner(vec![2u8; 4]);
    {
        let mut g = Storage::lock_write_read(&a, &a).unwrap();
        assert!(g.is_same());
        assert_eq!(g.dst_ptr().cast_const(), g.src_ptr());
    }
    // Opposite directions from two threads, many times: no deadlock.
    let rounds = if cfg!(miri) { 5 } else { 2000 };
    std::thread::scope(|scope| {
        let (a, b) = (&a, &b);
        scope.spawn(move || {
            for _ in 0..rounds {
                let mut g = Storage::lock_write_read(a, b).unwrap();
                // SAFETY: both buffers hold 4 bytes; the guards give exclusive
                // access to `a` and shared access to `b`; distinct storages.
                unsafe { std::ptr::copy_nonoverlapping(g.src_ptr(), g.dst_ptr(), 4) };
            }
        });
        scope.spawn(move || {
            for _ in 0..rounds {
                let mut g = Storage::lock_write_read(b, a).unwrap();
                // SAFETY: as above with the roles swapped.
                unsafe { std::ptr::copy_nonoverlapping(g.src_ptr(), g.dst_ptr(), 4) };
            }
        });
    });
}

#[test]
fn storage_from_allocator_tracks_stats_and_frees_once() {
    static COUNTERS: Counters = Counters {
        current: std::sync::atomic::AtomicU64::new(0),
        peak: std::sync::atomic::AtomicU64::new(0),
        allocated: std::sync::atomic::AtomicU64::new(0),
        freed: std::sync::atomic::AtomicU64::new(0),
        allocations: std::sync::atomic::AtomicU64::new(0),
        frees: std::sync::atomic::AtomicU64::new(0),
    };
    static ALLOC: TestAllocator = TestAllocator {
        stats: Some(&COUNTERS),
    };
    let s = Storage::new(100, &ALLOC, true).unwrap();
    let views: Vec<Storage> = (0..5).map(|_| s.clone()).collect();
    s.resize(200).unwrap();
    assert_eq!(
        COUNTERS.frees.load(Ordering::SeqCst),
        1,
        "resize frees the old buffer once"
    );
    drop(s);
    drop(views);
    assert_eq!(COUNTERS.allocations.load(Ordering::SeqCst), 2);
    assert_eq!(COUNTERS.frees.load(Ordering::SeqCst), 2);
    assert_eq!(COUNTERS.current.load(Ordering::SeqCst), 0);
}

#[test]
fn reset_and_set_data_ptr() {
    static ALLOC: TestAllocator = TestAllocator { stats: None };
    let s = Storage::new(16, &ALLOC, true).unwrap();
    let replacement = c10_storage::Allocator::allocate(&ALLOC, 16).unwrap();
    let new_addr = replacement.get();
    // SAFETY: a fresh 16-byte allocation for a 16-byte storage.
    let old = unsafe { s.set_data_ptr(replacement) }.unwrap();
    assert_eq!(s.read().unwrap().as_ptr(), new_addr.cast_const());
    assert!(!old.is_null());
    drop(old);
    let cuda = c10_storage::DataPtr::null(Device::cuda(0));
    assert!(matches!(
        // SAFETY: rejected before use (device mismatch).
        unsafe { s.set_data_ptr(cuda) },
        Err(StorageError::DeviceMismatch { .. })
    ));
    s.reset().unwrap();
    assert_eq!(s.nbytes(), 0);
    assert!(s.read().unwrap().as_ptr().is_null());
    // SAFETY: shrinking the recorded size is always fine.
    unsafe { s.set_nbytes(0) }.unwrap();
}

#[test]
fn debug_output_names_the_fields() {
    let s = Storage::from_owner(vec![0u8; 3]);
    let d = format!("{s:?}");
    assert!(
        d.contains("nbytes: 3") && d.contains("device: Device"),
        "{d}"
    );
}

/// An allocator of device memory (host-backed here, so the test can look
/// at it) that, like a careless downstream backend, does not write
/// `copy_data`: growing its storage must fail with an error, never panic,
/// and leave the storage as it was.
struct NoCopyDevice;

// SAFETY: every block is a fresh zeroed `Vec` owned by its `DataPtr`; the
// device is not host-accessible, so nothing in c10-storage dereferences it.
unsafe impl c10_storage::Allocator for NoCopyDevice {
    fn allocate(&self, n: usize) -> Result<c10_storage::DataPtr, c10_storage::AllocError> {
        let mut p = c10_storage::DataPtr::from_owner(vec![0u8; n]);
        // SAFETY: tagging host memory as a device the host does not
        // address only makes the host stop dereferencing it.
        unsafe { p.set_device(Device::new(c10_storage::DeviceType::Fpga, 0)) };
        Ok(p)
    }
    fn device_type(&self) -> c10_storage::DeviceType {
        c10_storage::DeviceType::Fpga
    }
}

#[test]
fn resize_through_an_allocator_without_a_device_copy_is_an_error() {
    static ALLOC: NoCopyDevice = NoCopyDevice;
    let s = Storage::new(16, &ALLOC, true).unwrap();
    let before = s.data_addr().unwrap();
    let e = s.resize(32).unwrap_err();
    assert!(
        matches!(
            e,
            StorageError::Alloc(c10_storage::AllocError::CopyFailed { count: 16, .. })
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("does not implement Allocator::copy_data"),
        "{e}"
    );
    assert_eq!((s.nbytes(), s.data_addr().unwrap()), (16, before));
    // Nothing to keep: no copy is needed, so growing an empty storage works.
    let empty = Storage::new(0, &ALLOC, true).unwrap();
    empty.resize(8).unwrap();
    assert_eq!(empty.nbytes(), 8);
}
