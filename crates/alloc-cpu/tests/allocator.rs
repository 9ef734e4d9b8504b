//! Behaviour of `CpuAllocator`: alignment, fills, deleters, statistics,
//! raw API, errors, storages.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use alloc_cpu::{
    builtin_cpu_allocator, cpu_allocator, empty_storage, CpuAllocator, FillMode, ALIGNMENT,
    JUNK_PATTERN,
};
use c10_storage::{AllocError, Allocator, AllocatorStats, Device, DeviceType, Storage};

/// Fewer iterations under Miri, which is ~1000x slower.
const fn scaled(native: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        native
    }
}

fn stats(a: &CpuAllocator) -> AllocatorStats {
    a.stats().expect("tracking was switched on")
}

fn tracking() -> CpuAllocator {
    CpuAllocator::builder().track_stats(true).build()
}

fn small_sizes() -> Vec<usize> {
    if cfg!(miri) {
        (1..=130)
            .chain([255, 256, 257, 1023, 4095, 4096, 4097])
            .collect()
    } else {
        (1..=4097).collect()
    }
}

#[test]
fn alignment_for_many_sizes() {
    for fill in [FillMode::Zero, FillMode::Junk] {
        let a = CpuAllocator::with_fill(fill);
        for n in small_sizes() {
            let p = a.allocate(n).unwrap();
            assert!(!p.is_null(), "size {n}");
            assert_eq!(p.get() as usize % ALIGNMENT, 0, "size {n} ({fill:?})");
            assert_eq!(p.device(), Device::CPU);
            assert!(p.is_simple());
        }
    }
    let big: &[usize] = if cfg!(miri) {
        &[1 << 16, (1 << 16) + 1]
    } else {
        &[1 << 20, (1 << 21) + 1, 3 << 22, (1 << 26) + 7]
    };
    let a = CpuAllocator::new();
    for &n in big {
        let p = a.allocate(n).unwrap();
        assert_eq!(p.get() as usize % ALIGNMENT, 0, "size {n}");
        // Touch both ends.
        // SAFETY: `p` holds `n` writable bytes.
        unsafe {
            p.get().write(1);
            p.get().add(n - 1).write(2);
        }
    }
}

#[test]
fn default_allocator_is_aligned_and_registered() {
    let a = cpu_allocator();
    assert_eq!(a.device_type(), DeviceType::Cpu);
    for n in [1, 3, 64, 65, 1000, 4096] {
        let p = a.allocate(n).unwrap();
        assert_eq!(p.get() as usize % 64, 0);
    }
    assert_eq!(builtin_cpu_allocator().fill_mode(), FillMode::Zero);
    assert!(!builtin_cpu_allocator().tracks_stats());
}

#[test]
fn zero_size_is_null_and_uncounted() {
    let a = tracking();
    let p = a.allocate(0).unwrap();
    assert!(p.is_null());
    assert!(p.context().is_null());
    assert_eq!(p.device(), Device::CPU);
    drop(p);
    assert_eq!(stats(&a), AllocatorStats::default());
    assert!(cpu_allocator().allocate(0).unwrap().is_null());
}

#[test]
fn zero_fill_is_really_zero() {
    let a = CpuAllocator::new();
    let sizes: &[usize] = if cfg!(miri) {
        &[1, 8, 63, 64, 100, 4096]
    } else {
        &[1, 8, 63, 64, 100, 4096, 1 << 20]
    };
    for _round in 0..3 {
        for &n in sizes {
            let p = a.allocate(n).unwrap();
            // SAFETY: `p` holds `n` initialised bytes.
            let bytes = unsafe { std::slice::from_raw_parts(p.get(), n) };
            assert!(bytes.iter().all(|&b| b == 0), "size {n}");
            // Dirty the memory so that a recycled block would show it.
            // SAFETY: `p` holds `n` writable bytes.
            unsafe { std::ptr::write_bytes(p.get(), 0xAB, n) };
        }
    }
}

#[test]
fn junk_fill_pattern_is_exact() {
    let a = CpuAllocator::with_fill(FillMode::Junk);
    let image = JUNK_PATTERN.to_ne_bytes();
    assert_eq!(JUNK_PATTERN, 0x7fedbeef_7fedbeef);
    let sizes: Vec<usize> = (1..=70).chain([255, 1000, 4097]).collect();
    for n in sizes {
        let p = a.allocate(n).unwrap();
        // SAFETY: `p` holds `n` initialised bytes.
        let bytes = unsafe { std::slice::from_raw_parts(p.get(), n) };
        for (i, &b) in bytes.iter().enumerate() {
            assert_eq!(b, image[i % 8], "size {n}, byte {i}");
        }
        // As 32-bit words, c10's kJunkPattern.
        for w in bytes.chunks_exact(4) {
            assert_eq!(u32::from_ne_bytes([w[0], w[1], w[2], w[3]]), 0x7fed_beef);
        }
    }
    // As f32 it is NaN, as f64 huge.
    let p = a.allocate(16).unwrap();
    // SAFETY: 16 initialised, 64-aligned bytes.
    let (f, d) = unsafe { (p.get().cast::<f32>().read(), p.get().cast::<f64>().read()) };
    assert!(f.is_nan());
    assert!(d > 1e308);
}

#[test]
fn deleter_runs_exactly_once() {
    let a = tracking();
    let n = scaled(1000, 50);
    let ptrs: Vec<_> = (1..=n).map(|i| a.allocate(i).unwrap()).collect();
    let st = stats(&a);
    assert_eq!(st.allocations, n as u64);
    assert_eq!(st.frees, 0);
    drop(ptrs);
    let st = stats(&a);
    assert_eq!(st.frees, n as u64);
    assert_eq!(st.current_bytes, 0);
    assert_eq!(st.freed_bytes, st.allocated_bytes);

    // clear() frees now; the drop afterwards must not free again.
    let mut p = a.allocate(10).unwrap();
    p.clear();
    assert!(p.is_null());
    assert_eq!(stats(&a).frees, n as u64 + 1);
    drop(p);
    assert_eq!(stats(&a).frees, n as u64 + 1);

    // Storage: many handles, one free. (A static rather than `leak()`, so
    // that Miri's leak checker sees the allocator as reachable.)
    static STORAGE_ALLOC: CpuAllocator = CpuAllocator::new();
    STORAGE_ALLOC.set_track_stats(true);
    let a: &'static CpuAllocator = &STORAGE_ALLOC;
    let s = Storage::new(32, a, true).unwrap();
    let handles: Vec<Storage> = (0..10).map(|_| s.clone()).collect();
    drop(s);
    assert_eq!(stats(a).frees, 0);
    drop(handles);
    let st = stats(a);
    assert_eq!((st.allocations, st.frees, st.current_bytes), (1, 1, 0));
}

#[test]
fn stats_follow_an_alloc_free_sequence() {
    let a = tracking();
    let p1 = a.allocate(100).unwrap();
    let p2 = a.allocate(50).unwrap();
    assert_eq!(
        stats(&a),
        AllocatorStats {
            current_bytes: 150,
            peak_bytes: 150,
            allocated_bytes: 150,
            freed_bytes: 0,
            allocations: 2,
            frees: 0
        }
    );
    drop(p1);
    let p3 = a.allocate(30).unwrap();
    assert_eq!(
        stats(&a),
        AllocatorStats {
            current_bytes: 80,
            peak_bytes: 150,
            allocated_bytes: 180,
            freed_bytes: 100,
            allocations: 3,
            frees: 1
        }
    );
    drop((p2, p3));
    let st = stats(&a);
    assert_eq!(st.current_bytes, 0);
    assert_eq!(st.peak_bytes, 150);
    assert_eq!((st.allocated_bytes, st.freed_bytes), (180, 180));
    assert_eq!((st.allocations, st.frees), (3, 3));
    // Failed allocations count nothing.
    assert!(a.allocate(usize::MAX).is_err());
    assert_eq!(stats(&a).allocations, 3);
}

#[test]
fn peak_and_reset_peak_stats() {
    let a = tracking();
    let big = a.allocate(1000).unwrap();
    let small = a.allocate(10).unwrap();
    drop(big);
    assert_eq!(stats(&a).peak_bytes, 1010);
    a.reset_peak_stats();
    assert_eq!(stats(&a).peak_bytes, 10);
    let more = a.allocate(5).unwrap();
    assert_eq!(stats(&a).peak_bytes, 15);
    drop((small, more));
    a.reset_peak_stats();
    assert_eq!(stats(&a).peak_bytes, 0);
    // Without statistics it is a no-op.
    let plain = CpuAllocator::new();
    plain.reset_peak_stats();
    assert_eq!(plain.stats(), None);
}

#[test]
fn stats_none_until_tracking_then_kept() {
    let a = CpuAllocator::new();
    let _p = a.allocate(10).unwrap();
    assert_eq!(a.stats(), None);
    a.set_track_stats(true);
    assert_eq!(a.stats(), Some(AllocatorStats::default()));
    let q = a.allocate(7).unwrap();
    a.set_track_stats(false);
    let st = stats(&a);
    assert_eq!((st.current_bytes, st.allocations), (7, 1));
    drop(q);
    assert_eq!(stats(&a).frees, 1);
}

#[test]
fn toggling_tracking_keeps_counts_consistent() {
    let a = CpuAllocator::new();
    let mut live = Vec::new();
    let mut expected_current = 0u64;
    let rounds = scaled(200, 30);
    for i in 0..rounds {
        if i % 7 == 0 {
            a.set_track_stats(!a.tracks_stats());
        }
        let n = 1 + (i * 37) % 500;
        let counted = a.tracks_stats();
        live.push((a.allocate(n).unwrap(), n, counted));
        if counted {
            expected_current += n as u64;
        }
        if i % 3 == 0 {
            let (p, n, counted) = live.remove((i * 13) % live.len());
            drop(p);
            if counted {
                expected_current -= n as u64;
            }
        }
        assert_eq!(stats(&a).current_bytes, expected_current, "round {i}");
    }
    let counted_live = live.iter().filter(|(p, _, c)| {
        assert_eq!(
            p.cast_context::<u8>(CpuAllocator::counting_deleter())
                .is_some(),
            *c
        );
        *c
    });
    assert_eq!(counted_live.count() as u64, {
        let st = stats(&a);
        st.allocations - st.frees
    });
    drop(live);
    let st = stats(&a);
    assert_eq!(st.current_bytes, 0);
    assert_eq!(st.allocations, st.frees);
    assert_eq!(st.allocated_bytes, st.freed_bytes);
}

#[test]
fn stats_across_threads() {
    let a: Arc<CpuAllocator> = Arc::new(tracking());
    let threads = 8;
    let iters = scaled(2000, 40);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let a = Arc::clone(&a);
            std::thread::spawn(move || {
                let mut keep = Vec::new();
                let mut bytes = 0u64;
                for i in 0..iters {
                    let n = 1 + (t * 131 + i * 17) % 1024;
                    let p = a.allocate(n).unwrap();
                    bytes += n as u64;
                    // Keep every 4th, free the rest at once.
                    if i % 4 == 0 {
                        keep.push(p);
                    }
                }
                // Free half of what we kept on another thread's clock.
                let half = keep.len() / 2;
                keep.truncate(half);
                (bytes, keep)
            })
        })
        .collect();
    let mut total = 0u64;
    let mut survivors = Vec::new();
    for h in handles {
        let (bytes, keep) = h.join().unwrap();
        total += bytes;
        survivors.extend(keep);
    }
    let st = stats(&a);
    assert_eq!(st.allocations, (threads * iters) as u64);
    assert_eq!(st.allocated_bytes, total);
    assert_eq!(st.allocations - st.frees, survivors.len() as u64);
    assert_eq!(st.allocated_bytes - st.freed_bytes, st.current_bytes);
    assert!(st.peak_bytes >= st.current_bytes);
    assert!(st.peak_bytes <= total);
    // Free the survivors from other threads too.
    let chunks: Vec<Vec<_>> = {
        let mut v: Vec<Vec<_>> = (0..4).map(|_| Vec::new()).collect();
        for (i, p) in survivors.into_iter().enumerate() {
            v[i % 4].push(p);
        }
        v
    };
    let joins: Vec<_> = chunks
        .into_iter()
        .map(|c| std::thread::spawn(move || drop(c)))
        .collect();
    for j in joins {
        j.join().unwrap();
    }
    let st = stats(&a);
    assert_eq!(st.current_bytes, 0);
    assert_eq!(st.frees, st.allocations);
    assert_eq!(st.freed_bytes, total);
}

#[test]
fn counted_allocations_outlive_their_allocator() {
    let a = tracking();
    let p = a.allocate(64).unwrap();
    let q = a.allocate(8).unwrap();
    drop(a);
    // The stats block is kept alive by the two allocations; freeing them
    // must neither crash nor leak (Miri checks both).
    drop(p);
    drop(q);
}

#[test]
fn raw_allocate_and_deallocate_round_trip() {
    for track in [false, true] {
        let a = CpuAllocator::builder().track_stats(track).build();
        let deleter = a.raw_deleter().expect("CPU allocator supports the raw API");
        assert!(std::ptr::fn_addr_eq(deleter, CpuAllocator::plain_deleter()));
        let p = a.raw_allocate(100).unwrap();
        assert!(!p.is_null());
        assert_eq!(p as usize % ALIGNMENT, 0);
        // SAFETY: `p` holds 100 writable bytes until raw_deallocate.
        unsafe {
            std::ptr::write_bytes(p, 7, 100);
            assert_eq!(*p.add(99), 7);
        }
        if track {
            assert_eq!(stats(&a).current_bytes, 100);
        }
        // SAFETY: `p` is from raw_allocate and is freed once.
        unsafe { a.raw_deallocate(p) }.unwrap();
        if track {
            let st = stats(&a);
            assert_eq!((st.current_bytes, st.frees), (0, 1));
        }
        // Zero bytes: null, and freeing null is fine.
        let z = a.raw_allocate(0).unwrap();
        assert!(z.is_null());
        // SAFETY: null is ignored by the raw deleter.
        unsafe { a.raw_deallocate(z) }.unwrap();
    }
    // A tracked allocation freed after tracking was switched off, via the raw
    // deleter, is still counted.
    let a = tracking();
    let p = a.raw_allocate(10).unwrap();
    a.set_track_stats(false);
    // SAFETY: as above.
    unsafe { a.raw_deallocate(p) }.unwrap();
    assert_eq!(stats(&a).current_bytes, 0);
    // c10: the CPU DataPtr's deleter is the raw deleter (when uncounted).
    let p = builtin_cpu_allocator().allocate(3).unwrap();
    assert!(std::ptr::fn_addr_eq(
        p.deleter(),
        builtin_cpu_allocator().raw_deleter().unwrap()
    ));
    assert!(builtin_cpu_allocator().is_simple_data_ptr(&p));
}

fn oom_text(n: usize) -> String {
    format!(
        "DefaultCPUAllocator: can't allocate memory: you tried to allocate {n} bytes. \
         Error code 12 (Cannot allocate memory)"
    )
}

#[test]
fn out_of_memory_is_an_error_with_c10_text() {
    for fill in [FillMode::Zero, FillMode::Junk] {
        let a = CpuAllocator::builder().fill(fill).track_stats(true).build();
        for n in [
            usize::MAX,
            isize::MAX as usize,
            isize::MAX as usize - 10,
            usize::MAX - 63,
        ] {
            let err = a.allocate(n).unwrap_err();
            assert_eq!(err.to_string(), oom_text(n));
            match err {
                AllocError::OutOfMemory { nbytes, .. } => assert_eq!(nbytes, n),
                other => panic!("unexpected error {other:?}"),
            }
        }
        assert!(a.raw_allocate(usize::MAX).is_err());
        assert_eq!(stats(&a), AllocatorStats::default());
    }
    let err = empty_storage(usize::MAX).unwrap_err();
    assert_eq!(err.to_string(), oom_text(usize::MAX));
}

/// A size that passes the layout check but that no system can provide: the
/// system allocator returns null and we report it (Miri would report the
/// huge allocation itself, so this runs natively only).
#[test]
#[cfg_attr(miri, ignore)]
fn system_allocator_failure_is_an_error() {
    let n = 1usize << 62;
    let err = CpuAllocator::new().allocate(n).unwrap_err();
    assert_eq!(err.to_string(), oom_text(n));
    let err = CpuAllocator::with_fill(FillMode::Junk)
        .allocate(n)
        .unwrap_err();
    assert_eq!(err.to_string(), oom_text(n));
}

#[test]
fn storage_from_the_allocator_resizes() {
    let s = empty_storage(8).unwrap();
    assert!(s.resizable());
    assert_eq!(s.device(), Device::CPU);
    s.write()
        .unwrap()
        .bytes_mut()
        .unwrap()
        .copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    s.resize(20).unwrap();
    assert_eq!(s.nbytes(), 20);
    {
        let r = s.read().unwrap();
        let b = r.bytes().unwrap();
        assert_eq!(&b[..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(b[8..].iter().all(|&x| x == 0));
        assert_eq!(r.as_ptr() as usize % ALIGNMENT, 0);
    }
    s.resize(3).unwrap();
    assert_eq!(s.read().unwrap().bytes().unwrap(), &[1, 2, 3]);
    s.resize(0).unwrap();
    assert_eq!(s.nbytes(), 0);
    assert!(s.read().unwrap().bytes().unwrap().is_empty());
    s.resize(4).unwrap();
    assert_eq!(s.read().unwrap().bytes().unwrap(), &[0, 0, 0, 0]);

    // With statistics, the resize frees the old buffer.
    static RESIZE_ALLOC: CpuAllocator = CpuAllocator::new();
    RESIZE_ALLOC.set_track_stats(true);
    let a: &'static CpuAllocator = &RESIZE_ALLOC;
    let s = Storage::new(10, a, true).unwrap();
    s.resize(30).unwrap();
    let st = stats(a);
    assert_eq!(
        (st.current_bytes, st.peak_bytes, st.allocations, st.frees),
        (30, 40, 2, 1)
    );
    drop(s);
    assert_eq!(stats(a).current_bytes, 0);
}

#[test]
fn clone_data_copies() {
    let a = CpuAllocator::new();
    let src: Vec<u8> = (0..200u8).collect();
    // SAFETY: `src` is valid for 200 bytes.
    let p = unsafe { a.clone_data(src.as_ptr(), src.len()) }.unwrap();
    // SAFETY: `p` holds 200 initialised bytes.
    let copy = unsafe { std::slice::from_raw_parts(p.get(), 200) };
    assert_eq!(copy, &src[..]);
}

#[test]
fn debug_and_name() {
    let a = tracking();
    assert_eq!(a.name(), "CpuAllocator");
    let text = format!("{a:?}");
    assert!(
        text.contains("CpuAllocator") && text.contains("Zero"),
        "{text}"
    );
}

#[test]
fn zeroes_memory_reports_the_fill_mode() {
    use alloc_cpu::{CpuAllocator, FillMode};
    use c10_storage::Allocator;
    assert!(CpuAllocator::new().zeroes_memory());
    assert!(!CpuAllocator::with_fill(FillMode::Junk).zeroes_memory());
    assert!(alloc_cpu::cpu_allocator().zeroes_memory());
}

#[test]
// The mmap path it targets is compiled out under Miri, and scanning
// megabytes byte by byte is slow there.
#[cfg_attr(miri, ignore)]
fn large_blocks_are_zeroed_aligned_and_freed_once() {
    use alloc_cpu::{CpuAllocator, FillMode};
    use c10_storage::Allocator;
    static TRACKED: CpuAllocator = CpuAllocator::new();
    TRACKED.set_track_stats(true);
    for n in [(32usize << 20) - 1, 32 << 20, 33 << 20, (40 << 20) + 7] {
        let p = TRACKED.allocate(n).unwrap();
        assert_eq!(p.get() as usize % 64, 0);
        // SAFETY: `n` initialised bytes owned by `p`.
        let bytes = unsafe { std::slice::from_raw_parts_mut(p.get(), n) };
        assert!(bytes.iter().all(|&b| b == 0), "{n} bytes not zeroed");
        bytes.fill(0xAB);
        drop(p);
    }
    let s = c10_storage::Allocator::stats(&TRACKED).unwrap();
    assert_eq!((s.allocations, s.frees, s.current_bytes), (4, 4, 0));
    let junk = CpuAllocator::with_fill(FillMode::Junk);
    let p = junk.allocate(32 << 20).unwrap();
    // SAFETY: 8 initialised bytes at the start of the block.
    let first = unsafe { p.get().cast::<u64>().read() };
    assert_eq!(first, alloc_cpu::JUNK_PATTERN);
}

#[test]
fn allocate_for_overwrite_is_aligned_counted_and_junk_filled_in_junk_mode() {
    use alloc_cpu::{CpuAllocator, FillMode, JUNK_PATTERN};
    use c10_storage::Allocator;
    let a = CpuAllocator::builder().track_stats(true).build();
    assert!(a.allocate_for_overwrite(0).unwrap().is_null());
    let sizes: &[usize] = if cfg!(miri) {
        &[1, 64, 1000]
    } else {
        &[1, 64, 4096, 1 << 20, 33 << 20]
    };
    for &n in sizes {
        let p = a.allocate_for_overwrite(n).unwrap();
        assert_eq!(p.get() as usize % 64, 0, "{n}");
        // Written in full through the raw pointer before any read, as the
        // contract asks (under Miri the bytes really are uninitialised).
        // SAFETY: `n` writable bytes owned by `p`.
        unsafe { std::ptr::write_bytes(p.get(), 0x5A, n) };
        // SAFETY: now `n` initialised bytes.
        let bytes = unsafe { std::slice::from_raw_parts(p.get(), n) };
        assert!(bytes.iter().all(|&b| b == 0x5A), "{n}");
    }
    let s = a.stats().unwrap();
    assert_eq!(
        (s.allocations, s.frees),
        (sizes.len() as u64, sizes.len() as u64)
    );
    let junk = CpuAllocator::with_fill(FillMode::Junk);
    let p = junk.allocate_for_overwrite(64).unwrap();
    // SAFETY: junk mode initialises the bytes.
    let first = unsafe { p.get().cast::<u64>().read() };
    assert_eq!(first, JUNK_PATTERN);
}
