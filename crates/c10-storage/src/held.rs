//! Which storage guards the current thread holds, so that a second access
//! that would wait for this very thread fails instead of deadlocking.
//!
//! A storage's lock is a reader-writer lock. Another thread's guard makes
//! a caller wait, as it should; but a guard held by the *same* thread can
//! never be released while that thread waits, so the wait would last
//! forever. Each thread therefore keeps a short list of the storages it
//! holds guards of (one entry per storage, usually none or one), consulted
//! before every lock: asking to write while holding any guard of the same
//! storage, or to read while holding its write guard, is refused with
//! [`StorageError::Reentrant`] (in the spirit of `RefCell::try_borrow_mut`).
//! Reading while holding read guards is fine (the lock is taken
//! recursively).
//!
//! Guards are `!Send`, so each is released on the thread that recorded it.
//!
//! The same thread-local also says whether this thread is in no-wait mode
//! ([`without_waiting`]): [`acquire`] answers with it, so the lock that
//! follows either waits for other threads or gives up with
//! [`StorageError::WouldBlock`], at no extra thread-local access.
//!
//! The list lives in a fixed array of `Cell`s: a thread-local without a
//! destructor is a plain offset from the thread pointer (no lazy
//! registration check), and scanning eight words costs less than any map.
//! A thread holding guards of more than [`SLOTS`] storages at once spills
//! the rest into a `Vec`, looked at only while it is in use.

use std::cell::{Cell, RefCell};
use std::fmt;

use crate::storage::StorageError;

/// The two kinds of storage guard, as named in [`StorageError::Reentrant`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardKind {
    /// A shared guard ([`Storage::read`](crate::Storage::read)).
    Read,
    /// An exclusive guard ([`Storage::write`](crate::Storage::write), and
    /// the internal lock of calls that replace the buffer, such as
    /// [`Storage::resize`](crate::Storage::resize)).
    Write,
}

impl fmt::Display for GuardKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GuardKind::Read => "read",
            GuardKind::Write => "write",
        })
    }
}

/// Storages a thread can hold guards of before spilling.
const SLOTS: usize = 8;

/// The state word of a held storage: the write guard's bit, or the number
/// of read guards (the lock is taken recursively for each).
const WRITER: u64 = 1 << 63;

/// One held storage: its [`Storage::id`](crate::Storage::id) (0 = free;
/// storage ids are addresses, never 0) and its state word.
type Entry = (usize, u64);

/// This thread's held storages.
struct Held {
    slots: [Cell<Entry>; SLOTS],
    /// Whether `SPILL` holds entries (so the common path never touches it).
    spilled: Cell<bool>,
    /// Whether this thread is inside [`without_waiting`]. Kept beside the
    /// slots so that [`acquire`], which every lock already calls, reads it
    /// with the same thread-local access.
    no_wait: Cell<bool>,
}

thread_local! {
    static HELD: Held = const {
        Held {
            slots: [const { Cell::new((0, 0)) }; SLOTS],
            spilled: Cell::new(false),
            no_wait: Cell::new(false),
        }
    };
    /// Entries beyond `SLOTS`, for threads holding guards of many storages.
    static SPILL: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// The state word after adding `want` to `state`, or the kind of guard
/// that makes `want` wait for this thread.
#[inline]
fn add(state: u64, want: GuardKind) -> Result<u64, GuardKind> {
    match want {
        _ if state & WRITER != 0 => Err(GuardKind::Write),
        GuardKind::Write if state != 0 => Err(GuardKind::Read),
        GuardKind::Write => Ok(WRITER),
        // More read guards than fit in 63 bits cannot be held in memory.
        GuardKind::Read => Ok(state.saturating_add(1)),
    }
}

/// The state word after releasing one `kind` guard.
#[inline]
fn remove(state: u64, kind: GuardKind) -> u64 {
    match kind {
        GuardKind::Write => state & !WRITER,
        GuardKind::Read => state.saturating_sub(1),
    }
}

/// What a lock may do when another thread holds it: the answer of
/// [`acquire`], decided by [`without_waiting`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnContention {
    /// Wait for the other thread (the default).
    Wait,
    /// Give up with [`StorageError::WouldBlock`] (inside [`without_waiting`]).
    Fail,
}

/// Records that this thread is about to lock `storage` for `want`, or
/// refuses if waiting for that lock would wait for this thread itself.
/// Every successful call must be paired with one [`release`] of the same
/// kind on the same thread (the guards do it in `Drop`). The answer says
/// whether the lock may then wait for another thread's guard.
#[inline]
pub(crate) fn acquire(storage: usize, want: GuardKind) -> Result<OnContention, StorageError> {
    let verdict = HELD
        .try_with(|held| {
            let on_contention = if held.no_wait.get() {
                OnContention::Fail
            } else {
                OnContention::Wait
            };
            let mut free = None;
            for slot in &held.slots {
                let (id, state) = slot.get();
                if id == storage {
                    return match add(state, want) {
                        Ok(state) => {
                            slot.set((id, state));
                            Ok(on_contention)
                        }
                        Err(kind) => Err(kind),
                    };
                }
                if id == 0 && free.is_none() {
                    free = Some(slot);
                }
            }
            if held.spilled.get() {
                if let Some(verdict) = acquire_spilled(storage, want) {
                    return verdict.map_or(Ok(on_contention), Err);
                }
            }
            let fresh = match want {
                GuardKind::Read => (storage, 1),
                GuardKind::Write => (storage, WRITER),
            };
            match free {
                Some(slot) => slot.set(fresh),
                None => {
                    held.spilled.set(true);
                    let _ = SPILL.try_with(|spill| spill.borrow_mut().push(fresh));
                }
            }
            Ok(on_contention)
        })
        // During thread teardown (a guard taken in a thread-local
        // destructor) the list is gone: nothing can be checked, and nothing
        // of this thread can be held either.
        .unwrap_or(Ok(OnContention::Wait));
    verdict.map_err(|held| StorageError::Reentrant {
        storage,
        held,
        wanted: want,
    })
}

/// [`acquire`] for a storage recorded in the spill list: `None` if it is
/// not there, else the verdict (`Some(None)`: recorded; `Some(Some(kind))`:
/// refused because of a `kind` guard).
#[cold]
fn acquire_spilled(storage: usize, want: GuardKind) -> Option<Option<GuardKind>> {
    SPILL
        .try_with(|spill| {
            let mut spill = spill.borrow_mut();
            let entry = spill.iter_mut().find(|(id, _)| *id == storage)?;
            Some(match add(entry.1, want) {
                Ok(state) => {
                    entry.1 = state;
                    None
                }
                Err(kind) => Some(kind),
            })
        })
        .unwrap_or(None)
}

/// Undoes one [`acquire`] of `kind` on `storage`.
#[inline]
pub(crate) fn release(storage: usize, kind: GuardKind) {
    let _ = HELD.try_with(|held| {
        for slot in &held.slots {
            let (id, state) = slot.get();
            if id == storage {
                let state = remove(state, kind);
                slot.set(if state == 0 { (0, 0) } else { (id, state) });
                return;
            }
        }
        if held.spilled.get() {
            release_spilled(held, storage, kind);
        }
    });
}

/// [`release`] for a storage recorded in the spill list.
#[cold]
fn release_spilled(held: &Held, storage: usize, kind: GuardKind) {
    let _ = SPILL.try_with(|spill| {
        let mut spill = spill.borrow_mut();
        if let Some(i) = spill.iter().position(|(id, _)| *id == storage) {
            let state = remove(spill[i].1, kind);
            if state == 0 {
                spill.swap_remove(i);
            } else {
                spill[i].1 = state;
            }
        }
        held.spilled.set(!spill.is_empty());
    });
}

/// Runs `f` with this thread's storage locks in *no-wait mode*: a lock
/// that another thread holds makes the call that wanted it fail with
/// [`StorageError::WouldBlock`] instead of waiting (locks that are free are
/// taken as usual, and the re-entrancy rules are unchanged). The previous
/// mode comes back when `f` returns or unwinds; calls nest.
///
/// This is for a caller that holds something another thread's lock holder
/// may need before it can let go, such as the Python GIL: a thread that
/// locked a storage and then waits for the GIL (to take or drop a Python
/// reference) would never let go while the GIL's holder waited for its
/// lock. The Python bindings run short copies this way with the GIL held,
/// and run them again with the GIL released when they fail with
/// `WouldBlock`; such a retry is sound because a call that fails to lock
/// has written nothing yet (each operation takes the locks it writes under
/// before it writes).
///
/// Only storage locks are affected: whatever else `f` does (allocating,
/// for instance) behaves as usual.
///
/// ```
/// use c10_storage::{is_waiting_allowed, without_waiting, Storage, StorageError};
/// let s = Storage::from_owner(vec![1u8, 2, 3]);
/// let held = s.write()?; // as if another thread held it...
/// std::thread::scope(|scope| {
///     scope.spawn(|| {
///         // ...which it does for this thread: fail instead of waiting.
///         let err = without_waiting(|| s.read().map(|g| g.bytes().map(<[u8]>::to_vec)));
///         assert!(matches!(err, Err(StorageError::WouldBlock { .. })));
///         assert!(is_waiting_allowed()); // the mode ended with the call
///     });
/// });
/// drop(held);
/// assert_eq!(without_waiting(|| s.read()?.bytes().map(<[u8]>::to_vec))?, vec![1, 2, 3]);
/// # Ok::<(), StorageError>(())
/// ```
pub fn without_waiting<R>(f: impl FnOnce() -> R) -> R {
    /// Restores the previous mode, also when `f` unwinds.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = HELD.try_with(|held| held.no_wait.set(self.0));
        }
    }
    let previous = HELD
        .try_with(|held| held.no_wait.replace(true))
        .unwrap_or(false);
    let _restore = Restore(previous);
    f()
}

/// Whether storage locks taken on this thread now wait for other threads
/// (`false` inside [`without_waiting`]).
///
/// ```
/// use c10_storage::{is_waiting_allowed, without_waiting};
/// assert!(is_waiting_allowed());
/// assert!(!without_waiting(is_waiting_allowed));
/// ```
pub fn is_waiting_allowed() -> bool {
    HELD.try_with(|held| !held.no_wait.get()).unwrap_or(true)
}

/// Which guard of `storage` this thread holds, if any (the write guard
/// takes precedence).
pub(crate) fn held_by_this_thread(storage: usize) -> Option<GuardKind> {
    let state = HELD
        .try_with(|held| {
            if let Some(slot) = held.slots.iter().find(|s| s.get().0 == storage) {
                return slot.get().1;
            }
            if !held.spilled.get() {
                return 0;
            }
            SPILL
                .try_with(|spill| {
                    spill
                        .borrow()
                        .iter()
                        .find(|(id, _)| *id == storage)
                        .map_or(0, |e| e.1)
                })
                .unwrap_or(0)
        })
        .unwrap_or(0);
    match state {
        0 => None,
        s if s & WRITER != 0 => Some(GuardKind::Write),
        _ => Some(GuardKind::Read),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More storages than there are slots: the spill list keeps the rules.
    #[test]
    fn many_storages_spill_and_keep_the_rules() {
        let ids: Vec<usize> = (1..=3 * SLOTS).map(|i| i * 64).collect();
        for &id in &ids {
            acquire(id, GuardKind::Read).unwrap();
        }
        for &id in &ids {
            assert_eq!(held_by_this_thread(id), Some(GuardKind::Read));
            acquire(id, GuardKind::Read).unwrap();
            let err = acquire(id, GuardKind::Write).unwrap_err();
            assert!(matches!(
                err,
                StorageError::Reentrant {
                    held: GuardKind::Read,
                    wanted: GuardKind::Write,
                    ..
                }
            ));
        }
        for &id in &ids {
            release(id, GuardKind::Read);
            release(id, GuardKind::Read);
            assert_eq!(held_by_this_thread(id), None);
        }
        // Everything released: writers are welcome again, in slots.
        let last = *ids.last().unwrap_or(&64);
        acquire(last, GuardKind::Write).unwrap();
        assert!(acquire(last, GuardKind::Read).is_err());
        release(last, GuardKind::Write);
        assert_eq!(held_by_this_thread(last), None);
        assert!(HELD.with(|h| !h.spilled.get()));
    }
}
