//! The out-of-memory retry ladder with exact device call counts, the exact
//! message, the memory fraction, the garbage-collection threshold,
//! free-memory callbacks and OOM observers.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use alloc_cuda::{CachingAllocatorError, DeviceError, DevicePtr, FakeDevice};
use common::*;

const TAIL: &str = " If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

#[test]
fn ladder_frees_every_unsplit_cached_block_then_retries_once() {
    let a = alloc(100 * MIB, "");
    let x = a.malloc(60 * MIB, S0).unwrap(); // malloc #1
    free(&a, x); // cached
                 // Stream 1 cannot reuse stream 0's block. malloc(50 MiB) fails (#2);
                 // no max_split_size, so no oversize release; then every event is
                 // synchronized and the cached 60 MiB freed; the retry (#3) succeeds.
    let y = a.malloc(50 * MIB, S1).unwrap();
    let c = a.device().counters();
    assert_eq!((c.malloc_calls, c.malloc_failures, c.free_calls), (3, 1, 1));
    let m = st(&a);
    assert_eq!(m["num_alloc_retries"], 1);
    assert_eq!(m["num_sync_all_streams"], 1);
    assert_eq!(m["num_device_alloc"], 2);
    assert_eq!(m["num_device_free"], 1);
    assert_eq!(m["num_ooms"], 0);
    assert_eq!(a.device().live_allocations(), vec![(y.0, 50 * MIB)]);
    check(&a);

    // Now 60 MiB cannot fit at all: malloc (#4) fails, nothing to release,
    // the retry (#5) fails, and the OOM error is PyTorch's message.
    let e = a.malloc(60 * MIB, S1).unwrap_err();
    let c = a.device().counters();
    assert_eq!((c.malloc_calls, c.malloc_failures, c.free_calls), (5, 3, 1));
    assert_eq!(
        e.to_string(),
        format!(
            "CUDA out of memory. Tried to allocate 60.00 MiB. GPU 0 has a total capacity of 100.00 MiB of which 50.00 MiB is free. Of the allocated memory 50.00 MiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.{TAIL}"
        )
    );
    let m = st(&a);
    assert_eq!(m["num_ooms"], 1);
    assert_eq!(m["num_alloc_retries"], 2);
    assert_eq!(m["num_sync_all_streams"], 2);
    check(&a);
}

#[test]
fn oom_message_reports_split_memory_as_reserved_but_unallocated() {
    let a = alloc(GIB, "");
    a.device().set_external_usage(GIB - 40 * MIB);
    a.device().set_process_memory_report(
        "Including non-PyTorch memory, this process has 1000.00 MiB memory in use. ",
    );
    let p = a.malloc(3 * MIB / 2, S0).unwrap(); // 20 MiB segment, 18.5 MiB split off
                                                // (format_size prints exactly 1 GiB as "1024.00 MiB": <= 1 GiB is MiB.)
    let e = a.malloc(30 * MIB, S0).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 has a total capacity of 1024.00 MiB of which 20.00 MiB is free. Including non-PyTorch memory, this process has 1000.00 MiB memory in use. Of the allocated memory 1.50 MiB is allocated by PyTorch, and 18.50 MiB is reserved by PyTorch but unallocated.{TAIL}"
        )
    );
    match e {
        CachingAllocatorError::OutOfMemory(o) => {
            assert_eq!(o.tried_to_allocate, 30 * MIB);
            assert_eq!((o.allocated, o.reserved), (3 * MIB / 2, 20 * MIB));
        }
        other => panic!("{other:?}"),
    }
    // "Tried to allocate" is the segment size: a 2 MiB request needs 20 MiB.
    a.device().set_external_usage(GIB - 20 * MIB - 10 * MIB);
    let _q = a.malloc(17 * MIB, S0).unwrap(); // fits in the 18.5 MiB block
    let e = a.malloc(2 * MIB, S1).unwrap_err();
    assert!(e.to_string().starts_with("CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 1024.00 MiB of which 10.00 MiB is free."), "{e}");
    let _ = p;
    check(&a);
}

#[test]
fn with_max_split_size_one_big_enough_oversize_block_is_released_first() {
    let a = alloc(90 * MIB, "max_split_size_mb:20");
    let pa = a.malloc(30 * MIB, S0).unwrap();
    let pb = a.malloc(40 * MIB, S0).unwrap();
    let _pc = a.malloc(10 * MIB, S0).unwrap(); // not oversize, stays live
    free(&a, pa);
    free(&a, pb);
    // 15 MiB < max_split: oversize blocks cannot serve it. malloc(16 MiB)
    // fails (#4); the smallest cached oversize block >= max(15, 20) MiB on
    // this stream (A, 30 MiB) is released; the retry (#5) succeeds. No
    // synchronize-all step, no "retry" counted.
    let d = a.malloc(15 * MIB, S0).unwrap();
    let c = a.device().counters();
    assert_eq!((c.malloc_calls, c.malloc_failures, c.free_calls), (5, 1, 1));
    assert!(!a.device().live_allocations().iter().any(|x| x.0 == pa.0));
    assert!(a.device().live_allocations().contains(&(pb.0, 40 * MIB)));
    assert!(a.device().live_allocations().contains(&(d.0, 16 * MIB)));
    let m = st(&a);
    assert_eq!((m["num_alloc_retries"], m["num_sync_all_streams"]), (0, 0));
    assert_eq!(m["oversize_segments.current"], 1);
    check(&a);
}

#[test]
fn with_max_split_size_several_oversize_blocks_are_released_largest_first() {
    let a = alloc(90 * MIB, "max_split_size_mb:20");
    let pa = a.malloc(30 * MIB, S0).unwrap();
    let pb = a.malloc(40 * MIB, S0).unwrap();
    let pc = a.malloc(10 * MIB, S0).unwrap();
    free(&a, pa);
    free(&a, pb);
    // 60 MiB: no cached block is big enough; malloc fails (#4); B (40) then
    // A (30) are released (70 >= 60); the retry (#5) succeeds.
    let d = a.malloc(60 * MIB, S0).unwrap();
    let c = a.device().counters();
    assert_eq!((c.malloc_calls, c.malloc_failures, c.free_calls), (5, 1, 2));
    assert_eq!(
        a.device().live_allocations(),
        vec![(pc.0, 10 * MIB), (d.0, 60 * MIB)]
    );
    assert_eq!(st(&a)["num_sync_all_streams"], 0);
    check(&a);
}

#[test]
fn oversize_release_that_is_not_enough_falls_through_to_release_all() {
    let a = alloc(100 * MIB, "max_split_size_mb:20");
    let pa = a.malloc(22 * MIB, S0).unwrap();
    let small = a.malloc(MIB, S0).unwrap(); // 2 MiB small segment, cached below
    let _pc = a.malloc(40 * MIB, S1).unwrap();
    free(&a, pa);
    free(&a, small);
    // 40 MiB on stream 0: 36 MiB free on the device. Oversize release frees
    // A (22 MiB, not enough on its own: returns false); then release-all
    // frees the small segment; the retry succeeds.
    let _d = a.malloc(40 * MIB, S0).unwrap();
    let c = a.device().counters();
    assert_eq!((c.malloc_calls, c.malloc_failures, c.free_calls), (5, 1, 2));
    let m = st(&a);
    assert_eq!((m["num_alloc_retries"], m["num_sync_all_streams"]), (1, 1));
    check(&a);
}

#[test]
fn non_oom_device_errors_are_returned_without_retrying() {
    let a = alloc(GIB, "");
    let cached = a.malloc(30 * MIB, S0).unwrap();
    free(&a, cached);
    let err = DeviceError::Other {
        code: 700,
        message: "an illegal memory access was encountered".into(),
    };
    a.device().fail_next_malloc_with(err.clone());
    let e = a.malloc(5 * MIB, S1).unwrap_err();
    assert_eq!(e, CachingAllocatorError::Device(err));
    let c = a.device().counters();
    assert_eq!(
        (c.malloc_calls, c.free_calls),
        (2, 0),
        "no release, no retry"
    );
    assert_eq!(st(&a)["num_ooms"], 0);
    check(&a);
}

#[test]
fn double_free_is_an_invalid_device_pointer() {
    let a = alloc(GIB, "");
    let p = a.malloc(MIB, S0).unwrap();
    free(&a, p);
    // SAFETY: fake memory; the double free is the point.
    let e = unsafe { a.free(p) }.unwrap_err();
    assert!(matches!(e, CachingAllocatorError::InvalidDevicePointer(q) if q == p));
    check(&a);
}

#[test]
fn memory_fraction_limits_new_segments_before_calling_the_device() {
    let a = alloc(100 * MIB, "");
    a.set_memory_fraction(0.5).unwrap();
    assert_eq!(a.allowed_memory_maximum(), Some(50 * MIB));
    let x = a.malloc(30 * MIB, S0).unwrap();
    // 30 + 30 > 50: refused without a device call, retried after
    // release-all (nothing cached), then OOM with "allowed".
    let e = a.malloc(30 * MIB, S0).unwrap_err();
    assert_eq!(a.device().counters().malloc_calls, 1);
    assert_eq!(
        e.to_string(),
        format!(
            "CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 has a total capacity of 100.00 MiB of which 70.00 MiB is free. 50.00 MiB allowed; Of the allocated memory 30.00 MiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.{TAIL}"
        )
    );
    // A cached block on another stream is released to make room.
    free(&a, x);
    let y = a.malloc(30 * MIB, S1).unwrap();
    let c = a.device().counters();
    assert_eq!((c.malloc_calls, c.free_calls), (2, 1));
    assert_eq!(a.device().live_allocations(), vec![(y.0, 30 * MIB)]);
    // Within the limit exactly: 30 + 20 = 50.
    let _z = a.malloc(20 * MIB, S1).unwrap();
    assert_eq!(a.memory_reserved(), 50 * MIB);
    check(&a);

    assert_eq!(
        a.set_memory_fraction(1.5).unwrap_err().to_string(),
        "invalid fraction:1.5. Please set within (0, 1)."
    );
    assert!(a.set_memory_fraction(-0.1).is_err());
}

#[test]
fn gc_frees_old_unsplit_large_blocks_when_over_the_threshold() {
    let a = alloc(200 * MIB, "garbage_collection_threshold:0.5");
    a.set_memory_fraction(0.5).unwrap(); // allowed 100 MiB, GC above 50 MiB
    let pa = a.malloc(20 * MIB, S0).unwrap(); // large-pool search #1
    let pb = a.malloc(22 * MIB, S0).unwrap(); // #2
    free(&a, pa); // A's age counts from 2
    let px = a.malloc(22 * MIB, S0).unwrap(); // #3: A does not fit; 42 <= 50, no GC
    free(&a, pb); // from 3
    free(&a, px); // from 3
    assert_eq!(a.memory_reserved(), 64 * MIB);
    // #4: nothing fits 30 MiB; 64 > 50 so GC reclaims >= 14 MiB. Ages: A 2,
    // B 1, X 1; the average is 4/3, so only A (the oldest) goes.
    let _r = a.malloc(30 * MIB, S0).unwrap();
    let live: Vec<u64> = a.device().live_allocations().iter().map(|x| x.0).collect();
    assert!(!live.contains(&pa.0));
    assert!(live.contains(&pb.0) && live.contains(&px.0));
    let c = a.device().counters();
    assert_eq!((c.free_calls, c.event_syncs), (1, 0));
    assert_eq!(st(&a)["num_sync_all_streams"], 0, "GC does not synchronize");
    check(&a);
}

#[test]
fn gc_needs_a_memory_fraction() {
    let a = alloc(200 * MIB, "garbage_collection_threshold:0.5");
    let pa = a.malloc(60 * MIB, S0).unwrap();
    free(&a, pa);
    let _r = a.malloc(30 * MIB, S1).unwrap();
    assert_eq!(a.device().counters().free_calls, 0);
    check(&a);
}

#[test]
fn free_memory_callbacks_run_before_a_new_segment() {
    let a = Arc::new(alloc(GIB, ""));
    let held: Arc<Mutex<Option<DevicePtr>>> = Arc::new(Mutex::new(None));
    let p = a.malloc(30 * MIB, S0).unwrap();
    *held.lock().unwrap() = Some(p);
    let calls = Arc::new(AtomicUsize::new(0));
    {
        let (a2, held, calls) = (Arc::downgrade(&a), Arc::clone(&held), Arc::clone(&calls));
        a.add_free_memory_callback(Arc::new(move || {
            calls.fetch_add(1, Ordering::SeqCst);
            // Frees memory of the same allocator: callbacks run unlocked.
            match (held.lock().unwrap().take(), a2.upgrade()) {
                (Some(p), Some(a)) => {
                    // SAFETY: the test's own fake pointer, no longer used.
                    unsafe { a.free(p).unwrap() };
                    true
                }
                _ => false,
            }
        }));
    }
    // No free block fits: the callback frees p and the search finds it.
    let q = a.malloc(30 * MIB, S0).unwrap();
    assert_eq!(q, p);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(a.device().counters().malloc_calls, 1);
    // Fitting requests do not run callbacks.
    free(&a, q);
    let _ = a.malloc(30 * MIB, S0).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    check(&a);
}

#[test]
fn oom_observers_see_the_failure() {
    let a = alloc(100 * MIB, "");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = Arc::clone(&seen);
    a.attach_oom_observer(Arc::new(move |dev, size, total, free| {
        s2.lock().unwrap().push((dev, size, total, free));
    }));
    assert!(a.malloc(200 * MIB, S0).unwrap_err().is_out_of_memory());
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(0, 200 * MIB, 100 * MIB, 100 * MIB)]
    );
}

#[test]
fn injected_device_failures_are_absorbed_by_the_retry() {
    let a = alloc(GIB, "");
    a.device().fail_next_mallocs(1);
    let p = a.malloc(5 * MIB, S0).unwrap();
    let c = a.device().counters();
    assert_eq!((c.malloc_calls, c.malloc_failures), (2, 1));
    assert_eq!(st(&a)["num_alloc_retries"], 1);
    let _ = p;
    a.device().fail_next_mallocs(2);
    assert!(a.malloc(50 * MIB, S0).unwrap_err().is_out_of_memory());
    check(&a);
}

#[test]
fn release_lock_on_cudamalloc_under_threads() {
    let a = Arc::new(alloc_on(
        FakeDevice::new(4 * GIB),
        "release_lock_on_cudamalloc:True",
    ));
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let a = Arc::clone(&a);
            s.spawn(move || {
                let n = if cfg!(miri) { 5 } else { 200 };
                let mut held = Vec::new();
                for i in 0..n {
                    let size = ((i * 7919 + t * 104_729) % (24 * MIB)) + 1;
                    held.push(a.malloc(size, alloc_cuda::StreamId(t % 2)).unwrap());
                    if i % 3 == 2 {
                        let p = held.swap_remove((i as usize * 13) % held.len());
                        free(&a, p);
                    }
                }
                for p in held {
                    free(&a, p);
                }
            });
        }
    });
    check(&a);
    assert_eq!(a.memory_allocated(), 0);
    a.empty_cache().unwrap();
    assert_eq!(a.memory_reserved(), 0);
    assert!(a.device().live_allocations().is_empty());
}
