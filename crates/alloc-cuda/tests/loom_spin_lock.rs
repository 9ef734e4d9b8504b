//! Loom model of `src/sync.rs`'s Miri-only lock: a test-and-set spin lock
//! (`compare_exchange(false, true, Acquire, Relaxed)` to lock, a `Release`
//! store of `false` to unlock, `yield_now` while contended).
//!
//! The lock type is crate-private and compiled only under `cfg(miri)`, so
//! this file replays its three operations on loom's atomics and lets loom
//! explore every interleaving: the protected non-atomic data is never
//! accessed by two threads at once (loom's `UnsafeCell` checks it), and no
//! increment is lost.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p alloc-cuda --test loom_spin_lock --release`.
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;

struct SpinLock<T> {
    locked: AtomicBool,
    data: UnsafeCell<T>,
}

// SAFETY (of the model): the lock serialises every access to `data`.
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T> SpinLock<T> {
    fn new(v: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            data: UnsafeCell::new(v),
        }
    }
    fn try_lock(&self) -> bool {
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }
    fn lock(&self) {
        while !self.try_lock() {
            thread::yield_now();
        }
    }
    fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }
    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.lock();
        // SAFETY: the lock is held.
        let r = self.data.with_mut(|p| f(unsafe { &mut *p }));
        self.unlock();
        r
    }
}

#[test]
fn mutual_exclusion_and_no_lost_update() {
    // Two threads: with three, the spinning makes loom's state space exceed
    // its branch limit (a known loom limitation for spin locks).
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        let lock = Arc::new(SpinLock::new(0u32));
        let hs: Vec<_> = (0..1)
            .map(|_| {
                let lock = lock.clone();
                thread::spawn(move || lock.with(|v| *v += 1))
            })
            .collect();
        lock.with(|v| *v += 1);
        for h in hs {
            h.join().unwrap(); // infallible: the closures do not panic
        }
        assert_eq!(lock.with(|v| *v), 2);
    });
}

#[test]
fn try_lock_fails_while_held() {
    loom::model(|| {
        let lock = Arc::new(SpinLock::new(()));
        assert!(lock.try_lock());
        let other = lock.clone();
        let h = thread::spawn(move || other.try_lock());
        let got = h.join().unwrap(); // infallible: as above
        assert!(!got, "a second thread took a held lock");
        lock.unlock();
    });
}
