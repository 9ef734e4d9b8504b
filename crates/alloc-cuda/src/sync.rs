//! The lock used by the allocator and the fake device.
//!
//! It is `parking_lot`'s mutex. Under Miri it is a yielding spin lock with
//! the same (`lock_api`) interface instead: Miri's strict-provenance mode
//! rejects `parking_lot`'s contended path (it keeps queue pointers in
//! integers), and the allocator is meant to be hammered from several
//! threads in the tests, so this keeps alloc-cuda's suite in the strict
//! group of `cargo xtask miri`.

#[cfg(not(miri))]
pub(crate) type RawLock = parking_lot::RawMutex;

#[cfg(miri)]
pub(crate) struct RawLock(std::sync::atomic::AtomicBool);

// SAFETY: a test-and-set lock: `try_lock` succeeds for exactly one thread
// until `unlock` (Acquire/Release order the protected data).
#[cfg(miri)]
unsafe impl parking_lot::lock_api::RawMutex for RawLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: RawLock = RawLock(std::sync::atomic::AtomicBool::new(false));
    type GuardMarker = parking_lot::lock_api::GuardSend;

    fn lock(&self) {
        while !self.try_lock() {
            std::thread::yield_now();
        }
    }

    fn try_lock(&self) -> bool {
        use std::sync::atomic::Ordering;
        self.0
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    unsafe fn unlock(&self) {
        self.0.store(false, std::sync::atomic::Ordering::Release);
    }
}

/// A mutex (see the module docs).
pub(crate) type Mutex<T> = parking_lot::lock_api::Mutex<RawLock, T>;
/// Its guard.
pub(crate) type MutexGuard<'a, T> = parking_lot::lock_api::MutexGuard<'a, RawLock, T>;
