//! Soundness review, class 3: a second access to a storage on the thread
//! that already holds one of its guards must fail with a clear error, never
//! wait for itself. Every case runs under a watchdog, so a regression fails
//! the test instead of hanging CI. Other threads still wait as before.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::mpsc;
use std::time::Duration;

use c10_storage::StorageError;
use torchcore::prelude::*;

/// Runs `case` on its own thread and fails if it has not finished within
/// a generous bound (it deadlocked): the deadlocked thread is left behind
/// and the process exits at the end of the test run.
fn within_watchdog(name: &str, case: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        case();
        let _ = done.send(());
    });
    match finished.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => worker.join().expect("case panicked"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The case panicked: re-raise its message.
            if let Err(p) = worker.join() {
                std::panic::resume_unwind(p);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{name}: no answer within 60 s; the thread deadlocked on its own guard")
        }
    }
}

/// The error is the re-entrancy error, with its explanation.
fn assert_reentrant<T: std::fmt::Debug>(what: &str, r: Result<T, TensorError>) {
    let err = r.expect_err(what);
    assert!(
        matches!(err, TensorError::Storage(StorageError::Reentrant { .. })),
        "{what}: {err:?}"
    );
    assert!(err.to_string().contains("would deadlock"), "{what}: {err}");
}

#[test]
fn writes_while_this_thread_reads_are_errors() {
    within_watchdog("read guard held", || {
        let mut t = Tensor::arange(0.0, 8.0, 1.0, ScalarType::Float).unwrap();
        let view = t.narrow(0, 2, 4).unwrap();
        let other = Tensor::zeros(&[4], ScalarType::Float).unwrap();
        let guard = t.read::<f32>().unwrap();
        assert_reentrant("fill_", view.fill_(1.0));
        assert_reentrant("set", view.set::<f32>(&[0], 1.0));
        assert_reentrant("copy_ into a view", view.copy_(&other));
        assert_reentrant(
            "Storage::reset",
            view.storage().reset().map_err(TensorError::from),
        );
        assert_reentrant("write guard", view.write::<f32>().map(|_| ()));
        // Reading again on this thread is fine (several readers).
        assert_eq!(view.get::<f32>(&[0]).unwrap(), 2.0);
        other.copy_(&view).unwrap();
        drop(guard);
        // Growing resize_ reallocates (a write lock): refused while held.
        let g = view.read::<f32>().unwrap();
        assert_reentrant(
            "growing resize_",
            t.resize_(&[100], MemoryFormat::Contiguous),
        );
        drop(g);
        // With the guard gone, every one of them works.
        view.fill_(1.0).unwrap();
        t.resize_(&[100], MemoryFormat::Contiguous).unwrap();
        assert_eq!(t.get::<f32>(&[3]).unwrap(), 1.0);
    });
}

#[test]
fn reads_while_this_thread_writes_are_errors() {
    within_watchdog("write guard held", || {
        let t = Tensor::arange(0.0, 6.0, 1.0, ScalarType::Float).unwrap();
        let m = t.view(&[2, 3]).unwrap();
        let mut u = Tensor::zeros(&[1], ScalarType::Float).unwrap();
        let guard = t.write::<f32>().unwrap();
        assert_reentrant("get", m.get::<f32>(&[1, 1]));
        assert_reentrant("to_vec", m.to_vec::<f32>());
        assert_reentrant("clone_in", m.clone_in(MemoryFormat::Contiguous));
        assert_reentrant("contiguous of a transpose", m.t().unwrap().contiguous());
        assert_reentrant("read guard", m.read::<f32>().map(|_| ()));
        // A growing set_ onto the locked storage reallocates it.
        assert_reentrant("growing set_", u.set_(t.storage(), 0, &[100], &[1]));
        // Printing never fails: it says why the data cannot be shown.
        let shown = format!("{m}");
        assert!(
            shown.contains("data unavailable") && shown.contains("would deadlock"),
            "{shown}"
        );
        drop(guard);
        assert_eq!(m.get::<f32>(&[1, 1]).unwrap(), 4.0);
        assert_eq!(
            format!("{m}"),
            "tensor([[0., 1., 2.],\n        [3., 4., 5.]])"
        );
    });
}

#[test]
fn other_threads_still_wait_for_the_guard() {
    within_watchdog("other thread", || {
        let t = Tensor::zeros(&[4], ScalarType::Int).unwrap();
        let guard = t.read::<i32>().unwrap();
        let (started, wait_started) = mpsc::channel();
        std::thread::scope(|s| {
            let writer = s.spawn(|| {
                started.send(()).unwrap();
                // Blocks until the guard below is dropped, then succeeds.
                t.fill_(7).unwrap();
            });
            wait_started.recv().unwrap();
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(guard.get(&[0]).unwrap(), 0, "the writer waited");
            drop(guard);
            writer.join().unwrap();
        });
        assert_eq!(t.to_vec::<i32>().unwrap(), vec![7; 4]);
    });
}

#[test]
fn guards_of_other_storages_do_not_interfere() {
    within_watchdog("two storages", || {
        let a = Tensor::arange(0, 4, 1, ScalarType::Long).unwrap();
        let b = Tensor::zeros(&[4], ScalarType::Long).unwrap();
        let ga = a.read::<i64>().unwrap();
        b.copy_(&a).unwrap(); // a is only read: allowed
        assert_eq!(b.to_vec::<i64>().unwrap(), vec![0, 1, 2, 3]);
        let gb = b.write::<i64>().unwrap();
        assert_reentrant("copy from a written storage", a.copy_(&b));
        drop((ga, gb));
        a.copy_(&b).unwrap();
    });
}
