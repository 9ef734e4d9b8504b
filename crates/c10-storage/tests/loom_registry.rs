//! Loom model of the allocator registry's publication protocol
//! (`src/allocator.rs`): writers, serialised by a mutex, leak a boxed
//! `&'static dyn Allocator` and publish its address with a `Release`
//! store into an `AtomicPtr`; readers `Acquire`-load the pointer and
//! dereference it without any lock; replaced values are never freed.
//!
//! The production code uses `std`/`parking_lot` types that loom cannot
//! see, so this file replays the same protocol, step for step, on loom's
//! types and lets loom explore every interleaving and every weak-memory
//! outcome: a reader must never see a pointer whose pointee it cannot yet
//! see (it would read an uninitialised fat pointer), and the registered
//! value with the highest priority must win.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p c10-storage --test loom_registry --release`.
#![cfg(loom)]

use loom::sync::atomic::{AtomicPtr, AtomicU8, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

/// Stand-in for the leaked `&'static dyn Allocator`: a value written
/// before publication, with a non-atomic payload loom checks.
struct Entry {
    id: loom::cell::UnsafeCell<u32>,
}

struct Slot {
    current: AtomicPtr<Entry>,
    priority: AtomicU8,
    write_lock: Mutex<Vec<*mut Entry>>,
}

// SAFETY (of the model): entries are only written before publication.
unsafe impl Send for Slot {}
// SAFETY (of the model): as above; published entries are read-only.
unsafe impl Sync for Slot {}

impl Slot {
    fn new() -> Slot {
        Slot {
            current: AtomicPtr::new(std::ptr::null_mut()),
            priority: AtomicU8::new(0),
            write_lock: Mutex::new(Vec::new()),
        }
    }

    /// `set_allocator`: the priority check and the store are one step
    /// under the writers' lock.
    fn set(&self, id: u32, priority: u8) -> bool {
        let mut kept = self.write_lock.lock().unwrap(); // infallible: the model never poisons
        let occupied = !self.current.load(Ordering::Acquire).is_null();
        if occupied && priority < self.priority.load(Ordering::Relaxed) {
            return false;
        }
        let e = Box::into_raw(Box::new(Entry {
            id: loom::cell::UnsafeCell::new(0),
        }));
        // SAFETY: not yet published.
        unsafe { (*e).id.with_mut(|p| *p = id) };
        kept.push(e);
        self.priority.store(priority, Ordering::Relaxed);
        self.current.store(e, Ordering::Release);
        true
    }

    /// `get_allocator`: one lock-free `Acquire` load.
    fn get(&self) -> Option<u32> {
        let p = self.current.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: published entries are never freed while the slot lives.
        Some(unsafe { (*p).id.with(|v| *v) })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        for e in self.write_lock.lock().unwrap().drain(..) {
            // infallible: the model never poisons
            // SAFETY: each entry was boxed once and is freed once, here.
            drop(unsafe { Box::from_raw(e) });
        }
    }
}

#[test]
fn readers_never_see_an_unpublished_entry() {
    loom::model(|| {
        let slot = Arc::new(Slot::new());
        let w = {
            let slot = slot.clone();
            thread::spawn(move || {
                slot.set(1, 1);
            })
        };
        let r = {
            let slot = slot.clone();
            thread::spawn(move || {
                // Either nothing yet or the fully written entry.
                let got = slot.get();
                assert!(got.is_none() || got == Some(1), "saw {got:?}");
            })
        };
        w.join().unwrap(); // infallible: loom threads do not panic here
        r.join().unwrap(); // infallible: as above
        assert_eq!(slot.get(), Some(1));
    });
}

#[test]
fn the_highest_priority_registration_wins() {
    loom::model(|| {
        let slot = Arc::new(Slot::new());
        let hs: Vec<_> = [(1u32, 1u8), (2, 3)]
            .into_iter()
            .map(|(id, prio)| {
                let slot = slot.clone();
                thread::spawn(move || {
                    slot.set(id, prio);
                    // A reader right after its own registration sees some
                    // registered value.
                    assert!(slot.get().is_some());
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap(); // infallible: as above
        }
        assert_eq!(
            slot.get(),
            Some(2),
            "priority 3 must win whatever the order"
        );
    });
}
