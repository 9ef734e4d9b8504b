//! Bounded per-thread caches of freed heap blocks of one layout: what lets
//! the reference-counted boxes behind [`Storage`](crate::Storage) and
//! `c10_core::Tensor` skip the global allocator for short-lived values.
//!
//! Small tensors come and go in pairs on one thread (a temporary view or
//! result is built, used and dropped), so the block a dropped value frees
//! is very likely to be wanted again soon by the same thread. A box that
//! takes its blocks with [`BlockCache::take`] and gives them back with
//! [`BlockCache::release`] pays a `malloc`/`free` pair only when its
//! thread's cache is empty or full.
//!
//! What keeps it sound and bounded:
//!
//! * a cache serves one layout ([`BlockCache::LAYOUT`], from its `SIZE`
//!   and `ALIGN` parameters, checked at compile time): every cached block
//!   was allocated by the global allocator with that layout, and is freed
//!   with it;
//! * a cache holds at most [`CACHE_CAP`] blocks; a block released into a
//!   full cache goes back to the global allocator;
//! * a block released on another thread than the one that took it goes to
//!   the releasing thread's cache: blocks come from the global allocator,
//!   which lets any thread free them;
//! * a cache lives in a `thread_local!` whose destructor frees the blocks
//!   it still holds when its thread exits. Once that destructor has run
//!   (or while it runs), `LocalKey::try_with` fails, and blocks go straight
//!   to and from the global allocator, so a value dropped by a later
//!   thread-local destructor neither leaks nor touches a dead cache.
//!
//! ```
//! use std::ptr::NonNull;
//! use c10_storage::block_cache::BlockCache;
//!
//! type Cache = BlockCache<48, 8>;
//! thread_local! {
//!     static CACHE: Cache = const { Cache::new() };
//! }
//!
//! let block: NonNull<u8> = Cache::take(&CACHE);
//! // SAFETY: 48 bytes, align 8: room for six `u64`s, which we own.
//! unsafe { block.cast::<[u64; 6]>().write([7; 6]) };
//! // SAFETY: the block came from `take` on this cache and is not used again
//! // (a `[u64; 6]` needs no drop).
//! unsafe { Cache::release(&CACHE, block) };
//! assert_eq!(Cache::cached(&CACHE), 1);
//! // The next block of this thread is the same one, with no allocator call.
//! assert_eq!(Cache::take(&CACHE), block);
//! # unsafe { Cache::release(&CACHE, block) };
//! ```

use std::alloc::{self, Layout};
use std::cell::Cell;
use std::ptr::{self, NonNull};
use std::thread::LocalKey;

/// The most blocks one thread's cache holds. A chain of view ops keeps
/// only a few temporaries alive at once, so a handful of blocks already
/// serves the common case; 32 also covers short bursts (a batch of values
/// dropped together, a `Vec` of them rebuilt) without letting a thread that
/// drops thousands of values hoard memory: beyond the cap, blocks go back
/// to the global allocator. For the 176-byte `TensorImpl` block that is
/// under 6 KiB per thread.
pub const CACHE_CAP: usize = 32;

/// One thread's stack of free blocks of layout [`LAYOUT`](Self::LAYOUT):
/// `blocks[..len]` hold blocks that nothing else refers to (their contents
/// are uninitialised). Meant to live in a `thread_local!` (see the module
/// documentation); only `Cell`s, so no borrow is held across a call and
/// re-entrant use (a value's drop releasing nested values' blocks) is fine.
pub struct BlockCache<const SIZE: usize, const ALIGN: usize> {
    len: Cell<usize>,
    blocks: [Cell<*mut u8>; CACHE_CAP],
}

impl<const SIZE: usize, const ALIGN: usize> BlockCache<SIZE, ALIGN> {
    /// The layout of every block this cache serves. A zero `SIZE` or an
    /// `ALIGN` that is not a power of two fails to compile.
    pub const LAYOUT: Layout = match Layout::from_size_align(SIZE, ALIGN) {
        Ok(layout) if SIZE > 0 => layout,
        // Cannot fire at run time: a `const` is evaluated by the compiler,
        // so a bad `SIZE` or `ALIGN` is a build error of the crate that
        // names this cache, never a panic in a running program.
        _ => panic!("BlockCache needs a non-zero SIZE and a power-of-two ALIGN"),
    };

    /// An empty cache (for a `thread_local!` with a `const` initialiser).
    #[allow(clippy::new_without_default)] // Only ever built in a `const` block.
    pub const fn new() -> Self {
        // Evaluates (so checks) the layout for every cache that is built.
        let _ = Self::LAYOUT;
        BlockCache {
            len: Cell::new(0),
            blocks: [const { Cell::new(ptr::null_mut()) }; CACHE_CAP],
        }
    }

    /// A block of layout [`LAYOUT`](Self::LAYOUT) for the caller to own,
    /// from this thread's cache in `key`, else from the global allocator.
    /// Its contents are uninitialised. Give it back with
    /// [`release`](Self::release), or free it with
    /// `std::alloc::dealloc(block, LAYOUT)`.
    #[inline]
    pub fn take(key: &'static LocalKey<Self>) -> NonNull<u8> {
        match key.try_with(Self::pop) {
            Ok(Some(block)) => block,
            _ => Self::fresh(),
        }
    }

    /// Gives `block` back: to this thread's cache in `key` if it has room,
    /// else to the global allocator.
    ///
    /// # Safety
    ///
    /// `block` was allocated by the global allocator with
    /// [`LAYOUT`](Self::LAYOUT) (as every block from [`take`](Self::take)
    /// is), whatever it held has been dropped (or was never initialised),
    /// and nothing uses it afterwards.
    #[inline]
    pub unsafe fn release(key: &'static LocalKey<Self>, block: NonNull<u8>) {
        let rejected = match key.try_with(|c| c.push(block)) {
            Ok(Ok(())) => return,
            Ok(Err(b)) => b,
            Err(_) => block,
        };
        // SAFETY: the block was allocated with `LAYOUT` and the caller
        // gives up every use of it (our contract).
        unsafe { alloc::dealloc(rejected.as_ptr(), Self::LAYOUT) };
    }

    /// How many blocks this thread's cache in `key` holds (0 once its
    /// destructor has run).
    pub fn cached(key: &'static LocalKey<Self>) -> usize {
        key.try_with(|c| c.len.get()).unwrap_or(0)
    }

    /// A new block from the global allocator.
    #[cold]
    fn fresh() -> NonNull<u8> {
        // SAFETY: `LAYOUT` has a non-zero size (checked where it is made).
        let p = unsafe { alloc::alloc(Self::LAYOUT) };
        NonNull::new(p).unwrap_or_else(|| alloc::handle_alloc_error(Self::LAYOUT))
    }

    /// A cached block, if any.
    #[inline]
    fn pop(&self) -> Option<NonNull<u8>> {
        let last = self.len.get().checked_sub(1)?;
        self.len.set(last);
        NonNull::new(self.blocks[last].get())
    }

    /// Keeps `block` if there is room; hands it back otherwise.
    #[inline]
    fn push(&self, block: NonNull<u8>) -> Result<(), NonNull<u8>> {
        let n = self.len.get();
        match self.blocks.get(n) {
            Some(slot) => {
                slot.set(block.as_ptr());
                self.len.set(n + 1);
                Ok(())
            }
            None => Err(block),
        }
    }
}

impl<const SIZE: usize, const ALIGN: usize> Drop for BlockCache<SIZE, ALIGN> {
    fn drop(&mut self) {
        while let Some(block) = self.pop() {
            // SAFETY: every cached block was allocated by the global
            // allocator with `LAYOUT` and nothing refers to it any more
            // (`release`'s contract).
            unsafe { alloc::dealloc(block.as_ptr(), Self::LAYOUT) };
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    type Small = BlockCache<24, 8>;
    thread_local! {
        static SMALL: Small = const { Small::new() };
    }

    #[test]
    fn a_released_block_is_taken_again_on_the_same_thread() {
        let a = Small::take(&SMALL);
        let before = Small::cached(&SMALL);
        // SAFETY: from `take`, nothing initialised, not used again.
        unsafe { Small::release(&SMALL, a) };
        assert_eq!(Small::cached(&SMALL), before + 1);
        assert_eq!(Small::take(&SMALL), a);
        assert_eq!(Small::cached(&SMALL), before);
        // SAFETY: as above.
        unsafe { Small::release(&SMALL, a) };
    }

    #[test]
    fn the_cache_never_exceeds_its_cap_and_frees_the_rest() {
        let blocks: Vec<_> = (0..CACHE_CAP * 2 + 3)
            .map(|_| Small::take(&SMALL))
            .collect();
        assert_eq!(Small::cached(&SMALL), 0, "every cached block is in use");
        for b in blocks {
            // SAFETY: each block came from `take` and is released once.
            unsafe { Small::release(&SMALL, b) };
            assert!(Small::cached(&SMALL) <= CACHE_CAP);
        }
        assert_eq!(Small::cached(&SMALL), CACHE_CAP);
    }

    #[test]
    fn blocks_move_between_threads_and_die_with_the_thread() {
        // Taken here, released on another thread into that thread's cache,
        // which frees it when the thread exits (Miri checks for leaks and
        // for a wrong layout on free).
        struct Owned(NonNull<u8>);
        // SAFETY: the block is owned memory, with no thread affinity.
        unsafe impl Send for Owned {}
        let b = Small::take(&SMALL);
        // SAFETY: 24 bytes, align 8, ours: room for a `u64`.
        unsafe { b.cast::<u64>().write(5) };
        let owned = Owned(b);
        std::thread::spawn(move || {
            let owned = owned;
            let b = owned.0;
            // SAFETY: we own the block (moved here by address).
            assert_eq!(unsafe { b.cast::<u64>().read() }, 5);
            assert_eq!(Small::cached(&SMALL), 0);
            // SAFETY: from `take` on the same cache type, not used again.
            unsafe { Small::release(&SMALL, b) };
            assert_eq!(Small::cached(&SMALL), 1);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn layouts_follow_the_parameters() {
        assert_eq!(
            BlockCache::<24, 8>::LAYOUT,
            Layout::from_size_align(24, 8).unwrap()
        );
        assert_eq!(BlockCache::<176, 16>::LAYOUT.align(), 16);
    }
}
