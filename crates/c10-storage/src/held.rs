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

use std::cell::RefCell;
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

/// One storage this thread holds guards of.
#[derive(Clone, Copy)]
struct Held {
    /// [`Storage::id`](crate::Storage::id) of the storage.
    storage: usize,
    /// Read guards alive (the lock is taken recursively for each).
    readers: u32,
    /// Whether the write guard is alive.
    writer: bool,
}

thread_local! {
    /// This thread's guards. A `Vec` rather than a map: a thread rarely holds
    /// guards of more than two storages (a copy's source and destination),
    /// and the scan of so short a list costs less than hashing.
    static HELD: RefCell<Vec<Held>> = const { RefCell::new(Vec::new()) };
}

/// Records that this thread is about to lock `storage` for `want`, or
/// refuses if waiting for that lock would wait for this thread itself.
/// Every successful call must be paired with one [`release`] of the same
/// kind on the same thread (the guards do it in `Drop`).
#[inline]
pub(crate) fn acquire(storage: usize, want: GuardKind) -> Result<(), StorageError> {
    let refused = HELD
        .try_with(|held| {
            let mut held = held.borrow_mut();
            match held.iter_mut().find(|h| h.storage == storage) {
                None => {
                    held.push(Held {
                        storage,
                        readers: u32::from(want == GuardKind::Read),
                        writer: want == GuardKind::Write,
                    });
                    None
                }
                Some(h) if h.writer => Some(GuardKind::Write),
                Some(h) => match want {
                    GuardKind::Write => Some(GuardKind::Read),
                    GuardKind::Read => {
                        // More than 4 billion read guards of one storage on
                        // one thread cannot be held in memory; saturate.
                        h.readers = h.readers.saturating_add(1);
                        None
                    }
                },
            }
        })
        // During thread teardown (a guard taken in a thread-local
        // destructor) the list is gone: nothing can be checked, and nothing
        // of this thread can be held either.
        .unwrap_or(None);
    match refused {
        None => Ok(()),
        Some(held) => Err(StorageError::Reentrant {
            storage,
            held,
            wanted: want,
        }),
    }
}

/// Undoes one [`acquire`] of `kind` on `storage`.
#[inline]
pub(crate) fn release(storage: usize, kind: GuardKind) {
    let _ = HELD.try_with(|held| {
        let mut held = held.borrow_mut();
        if let Some(i) = held.iter().position(|h| h.storage == storage) {
            let h = &mut held[i];
            match kind {
                GuardKind::Write => h.writer = false,
                GuardKind::Read => h.readers = h.readers.saturating_sub(1),
            }
            if !h.writer && h.readers == 0 {
                held.swap_remove(i);
            }
        }
    });
}

/// Which guard of `storage` this thread holds, if any (the write guard
/// takes precedence).
pub(crate) fn held_by_this_thread(storage: usize) -> Option<GuardKind> {
    HELD.try_with(|held| {
        held.borrow()
            .iter()
            .find(|h| h.storage == storage)
            .map(|h| {
                if h.writer {
                    GuardKind::Write
                } else {
                    GuardKind::Read
                }
            })
    })
    .unwrap_or(None)
}
