//! `Storage`'s `StorageImpl` blocks come from a per-thread cache
//! (`c10_storage::block_cache`): a dropped storage's block is the next one
//! its thread makes, never while a weak handle still needs it, and blocks
//! dropped on other threads neither leak nor come back wrong (Miri runs
//! these tests and checks both).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use c10_storage::Storage;

fn small(byte: u8) -> Storage {
    Storage::from_owner(vec![byte; 16])
}

#[test]
fn a_dropped_storage_block_is_the_next_one_made_on_the_thread() {
    let a = small(1);
    let id = a.id();
    drop(a);
    let b = small(2);
    assert_eq!(b.id(), id, "the freed block is reused (last in, first out)");
    assert!(b.read().unwrap().bytes().unwrap().iter().all(|&x| x == 2));
}

#[test]
fn a_weak_handle_keeps_the_block_out_of_the_cache() {
    let a = small(1);
    let id = a.id();
    let weak = a.downgrade();
    drop(a);
    assert!(weak.upgrade().is_none());
    let b = small(2);
    assert_ne!(b.id(), id, "the block still holds the weak handle's counts");
    assert_eq!(weak.id(), id);
    drop(weak);
    let c = small(3);
    assert_eq!(c.id(), id, "the last weak unit gave the block back");
    drop(b);
}

#[test]
fn storages_dropped_on_other_threads_go_to_their_caches() {
    let made: Vec<Storage> = (0..40).map(|i| small(i as u8)).collect();
    let clones: Vec<Storage> = made.iter().map(Storage::clone).collect();
    let weak: Vec<_> = made.iter().map(Storage::downgrade).collect();
    std::thread::spawn(move || drop(made)).join().unwrap();
    // The clones here keep every storage alive and intact.
    for (i, s) in clones.iter().enumerate() {
        assert_eq!(s.use_count(), 1);
        assert!(s
            .read()
            .unwrap()
            .bytes()
            .unwrap()
            .iter()
            .all(|&x| x == i as u8));
    }
    // The last handles go on yet another thread; the weak handles, here.
    std::thread::spawn(move || drop(clones)).join().unwrap();
    assert!(weak.iter().all(|w| w.upgrade().is_none()));
    drop(weak);
    // This thread's cache works on as before.
    let a = small(9);
    let id = a.id();
    drop(a);
    assert_eq!(small(9).id(), id);
}
