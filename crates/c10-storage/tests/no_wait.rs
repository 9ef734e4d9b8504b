//! No-wait mode (`without_waiting`): every lock that another thread holds
//! fails with `WouldBlock` instead of waiting, leaves this thread's
//! bookkeeping as it was (so the same call succeeds once the other thread
//! lets go), and the mode ends with the call, unwinding included.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::mpsc;

use c10_storage::{is_waiting_allowed, without_waiting, Storage, StorageError};
use common::TestAllocator;

static HEAP: TestAllocator = TestAllocator { stats: None };

/// The guard another thread holds.
#[derive(Clone, Copy)]
enum Hold {
    Read,
    Write,
}

/// Runs `probe` on this thread while another thread holds a `hold` guard
/// of `storage`, then again after that thread let go.
fn while_held_elsewhere(
    storage: &Storage,
    hold: Hold,
    probe: impl Fn() -> Result<(), StorageError>,
) -> (Result<(), StorageError>, Result<(), StorageError>) {
    std::thread::scope(|scope| {
        let (held_tx, held_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let holder = scope.spawn(move || {
            let wait = || {
                held_tx.send(()).unwrap();
                done_rx.recv().unwrap();
            };
            match hold {
                Hold::Read => {
                    let _g = storage.read().unwrap();
                    wait();
                }
                Hold::Write => {
                    let _g = storage.write().unwrap();
                    wait();
                }
            }
        });
        held_rx.recv().unwrap();
        let during = probe();
        done_tx.send(()).unwrap();
        holder.join().unwrap();
        (during, probe())
    })
}

fn would_block(r: &Result<(), StorageError>, s: &Storage) -> bool {
    matches!(r, Err(StorageError::WouldBlock { storage }) if *storage == s.id())
}

/// `probe` fails with `WouldBlock` (naming `storage`) while another thread
/// holds a `hold` guard of `storage`, and succeeds once it let go.
fn blocks_then_works(storage: &Storage, hold: Hold, probe: impl Fn() -> Result<(), StorageError>) {
    let (during, after) = while_held_elsewhere(storage, hold, probe);
    assert!(would_block(&during, storage), "{during:?}");
    assert_eq!(after, Ok(()));
}

#[test]
fn each_lock_fails_instead_of_waiting_and_works_afterwards() {
    let s = Storage::from_owner(vec![7u8; 8]);
    let read = || without_waiting(|| s.read().map(drop));
    let write = || without_waiting(|| s.write().map(drop));
    let write_uninit = || without_waiting(|| s.write_uninit().map(drop));
    let resize = || without_waiting(|| Storage::new(4, &HEAP, true)?.resize(2));

    // Another thread's write guard blocks readers and writers.
    blocks_then_works(&s, Hold::Write, read);
    blocks_then_works(&s, Hold::Write, write_uninit);
    // Another thread's read guard blocks writers only.
    blocks_then_works(&s, Hold::Read, write);
    let (during, _) = while_held_elsewhere(&s, Hold::Read, read);
    assert_eq!(during, Ok(()));
    // Free locks are taken as usual.
    assert_eq!(resize(), Ok(()));
    assert_eq!(s.read().unwrap().bytes().unwrap(), &[7; 8]);
}

#[test]
fn a_failed_lock_leaves_no_record_on_this_thread() {
    // After each refusal this thread must be able to take the write guard
    // (a stale "held" record would make that a `Reentrant` error).
    let s = Storage::from_owner(vec![0u8; 4]);
    let probe = || {
        let r = without_waiting(|| s.read().map(drop));
        if r.is_err() {
            // Still refused for the same reason, not for re-entrancy.
            let again = without_waiting(|| s.write().map(drop));
            assert!(matches!(again, Err(StorageError::WouldBlock { .. })));
        }
        r
    };
    let (during, after) = while_held_elsewhere(&s, Hold::Write, probe);
    assert!(during.is_err());
    assert_eq!(after, Ok(()));
    s.write().unwrap().bytes_mut().unwrap()[0] = 1;
    assert_eq!(s.read().unwrap().bytes().unwrap(), &[1, 0, 0, 0]);
}

#[test]
fn pairs_release_the_first_lock_when_the_second_would_wait() {
    let (a, b) = (
        Storage::from_owner(vec![1u8; 4]),
        Storage::from_owner(vec![2u8; 4]),
    );
    // Whichever of the two is locked first (address order), the other one
    // is held elsewhere: the pair fails, and nothing stays locked.
    for (dst, src, busy) in [(&a, &b, &b), (&a, &b, &a), (&b, &a, &a), (&b, &a, &b)] {
        let copy = || {
            without_waiting(|| {
                let mut g = Storage::lock_write_read(dst, src)?;
                // SAFETY: both buffers hold 4 bytes, are locked, and are
                // distinct storages.
                unsafe { std::ptr::copy_nonoverlapping(g.src_ptr(), g.dst_ptr(), 4) };
                Ok(())
            })
        };
        blocks_then_works(busy, Hold::Write, copy);
        // Neither storage is held by this thread now.
        drop(a.write().unwrap());
        drop(b.write().unwrap());
    }
}

#[test]
fn slices_fail_on_their_roots_lock() {
    let root = Storage::from_owner((0u8..10).collect::<Vec<_>>());
    let part = root.slice(2..5).unwrap();
    let read = || without_waiting(|| part.read().map(drop));
    let write = || without_waiting(|| part.write().map(drop));
    blocks_then_works(&root, Hold::Write, read);
    blocks_then_works(&root, Hold::Read, write);
}

#[test]
fn the_first_read_of_lazy_bytes_fails_while_another_thread_writes() {
    let s = Storage::new_uninit(16, &HEAP, false).unwrap();
    let read = || without_waiting(|| s.read().map(|g| assert_eq!(g.bytes().unwrap(), &[0; 16])));
    blocks_then_works(&s, Hold::Write, read);
}

#[test]
fn the_mode_nests_ends_with_the_call_and_survives_unwinding() {
    assert!(is_waiting_allowed());
    without_waiting(|| {
        assert!(!is_waiting_allowed());
        without_waiting(|| assert!(!is_waiting_allowed()));
        assert!(
            !is_waiting_allowed(),
            "an inner call restores the outer mode"
        );
    });
    assert!(is_waiting_allowed());
    let unwound = std::panic::catch_unwind(|| without_waiting(|| panic!("inside")));
    assert!(unwound.is_err());
    assert!(is_waiting_allowed(), "unwinding ends the mode too");
    // Re-entrancy is refused as before, whatever the mode.
    let s = Storage::from_owner(vec![0u8; 2]);
    let g = s.read().unwrap();
    let r = without_waiting(|| s.write().map(drop));
    assert!(matches!(r, Err(StorageError::Reentrant { .. })), "{r:?}");
    drop(g);
}

#[test]
fn the_error_says_what_happened() {
    let e = StorageError::WouldBlock { storage: 0x1000 };
    let text = e.to_string();
    assert!(
        text.contains("0x1000") && text.contains("another thread"),
        "{text}"
    );
    assert!(text.contains("without_waiting"), "{text}");
}
