//! [`ImplArc`]: the reference-counted box behind [`Tensor`](crate::Tensor),
//! with a bounded per-thread cache of freed blocks.
//!
//! A view op builds one new `TensorImpl`, so with `std::sync::Arc` every
//! view paid a `malloc` and, when the view was dropped, a `free` (plus
//! `Arc`'s second, weak, counter decrement). Views are usually short-lived
//! temporaries (`x.view(..).transpose(..)`), so the block a dropped view
//! frees is very likely to be wanted again soon by the same thread. Here a
//! dropped `TensorImpl`'s block goes back to a small stack of blocks owned
//! by the dropping thread, and the next `TensorImpl` built on that thread
//! takes it from there: no allocator call on either side.
//!
//! The cache is [`c10_storage::block_cache`]'s (which `Storage` uses
//! too): one layout per cache, at most
//! [`CACHE_CAP`](c10_storage::block_cache::CACHE_CAP) blocks per thread,
//! blocks free to move between threads, and freed with the thread. Every
//! block here has the layout [`BLOCK`] (a strong count followed by a
//! `TensorImpl`); any payload stored here must fit in it (checked at
//! compile time), so a cached block can hold any payload.
//!
//! The count protocol is `std::sync::Arc`'s without weak references: a
//! relaxed increment to clone (aborting before it can overflow), a release
//! decrement to drop, and an acquire fence before the last owner destroys
//! the value, so every use of the value through other handles happens
//! before its destruction.

use std::alloc::Layout;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::{self, NonNull};
use std::sync::atomic::{self, AtomicUsize, Ordering};

use c10_storage::block_cache::BlockCache;

use crate::binding::{binding, BindingSlot, BindingVTable};
use crate::tensor_impl::TensorImpl;

/// A block: the strong count, then the value. `repr(C)` keeps the count
/// first for every `T`, though nothing depends on the exact offsets.
#[repr(C)]
struct Inner<T> {
    strong: AtomicUsize,
    value: T,
}

/// The layout of every block, cached or live: the one for a `TensorImpl`
/// (the `TensorImpl` plus one count word: 176 bytes, align 8, on 64-bit
/// targets today; `alloc_counting` prints the size).
const BLOCK: Layout = Layout::new::<Inner<TensorImpl>>();

/// This thread's freed blocks (see the module documentation).
type Cache = BlockCache<{ BLOCK.size() }, { BLOCK.align() }>;

thread_local! {
    /// This thread's free blocks (freed by the thread-local's destructor).
    static CACHE: Cache = const { Cache::new() };
}

/// Refcounts above this abort the process, as `std::sync::Arc` does: by
/// then something leaks handles in a loop (`mem::forget`), and the count
/// must never wrap to zero while handles exist. Two bits below the top, so
/// that [`HAS_BINDING`] sits above every legal count and an overflowing
/// count never reaches it.
const MAX_REFCOUNT: usize = usize::MAX >> 2;

/// The count word's "has a binding object" bit (c10's `kHasPyObject`): set
/// once by [`ImplArc::set_binding_bit`], never cleared. While it is set, the
/// count's 1 → 2 and 2 → 1 edges call the binding's `incref`/`decref` (see
/// `binding.rs`). A word with it set is above [`MAX_REFCOUNT`], so the hot
/// paths pay nothing for it: their overflow test already branches away.
const HAS_BINDING: usize = 1 << (usize::BITS - 1);

/// Gives [`ImplArc`] the binding slot of its value, if it has one.
pub(crate) trait SlotOwner {
    /// The value's binding slot (`None` for values that cannot have one).
    fn binding_slot(&self) -> Option<&BindingSlot>;
}

impl SlotOwner for TensorImpl {
    #[inline]
    fn binding_slot(&self) -> Option<&BindingSlot> {
        Some(&self.binding)
    }
}

/// A block of layout [`BLOCK`] for the caller to own: from this thread's
/// cache, else from the global allocator.
#[inline]
fn take_block() -> NonNull<u8> {
    Cache::take(&CACHE)
}

/// Hands a block back: to this thread's cache if it has room, else to the
/// global allocator.
///
/// # Safety
///
/// `block` must have come from [`take_block`], its contents must already be
/// dropped (or never initialised), and nothing may use it afterwards.
#[inline]
unsafe fn release_block(block: NonNull<u8>) {
    // SAFETY: from `take_block`, so allocated with the cache's layout; the
    // caller gives up every use of it.
    unsafe { Cache::release(&CACHE, block) };
}

/// Blocks in this thread's cache (0 once its destructor has run).
#[cfg(test)]
fn cached_blocks() -> usize {
    Cache::cached(&CACHE)
}

/// A thread-safe reference-counted pointer to a `T` (in practice a
/// [`TensorImpl`]) whose blocks are recycled through a bounded per-thread
/// cache (see the module documentation). Like `Arc<T>` without weak
/// references.
pub(crate) struct ImplArc<T: SlotOwner> {
    ptr: NonNull<Inner<T>>,
    /// Owns an `Inner<T>` (for drop check and variance, as `Arc` does).
    _owns: PhantomData<Inner<T>>,
}

// SAFETY: as for `Arc<T>`: handles on several threads give shared access
// to the `T` (so `T: Sync`) and the last handle, on any thread, drops it
// (so `T: Send`). The count is atomic, and the block itself may be freed
// on any thread (the global allocator allows it; see the module docs).
unsafe impl<T: Send + Sync + SlotOwner> Send for ImplArc<T> {}
// SAFETY: `&ImplArc<T>` allows cloning a handle on another thread, so the
// same bounds as `Send`.
unsafe impl<T: Send + Sync + SlotOwner> Sync for ImplArc<T> {}

impl<T: SlotOwner> ImplArc<T> {
    /// Refuses (at compile time) a payload that does not fit a block.
    const FITS: () = assert!(
        std::mem::size_of::<Inner<T>>() <= BLOCK.size()
            && std::mem::align_of::<Inner<T>>() <= BLOCK.align(),
        "ImplArc payload must fit a TensorImpl-sized block"
    );

    /// A handle to `value`.
    #[inline]
    pub(crate) fn new(value: T) -> ImplArc<T> {
        let slot = ImplArc::<T>::new_uninit();
        // SAFETY: `as_mut_ptr` points to the uninitialised, exclusively
        // owned value of the new block; writing it initialises it.
        unsafe {
            slot.as_mut_ptr().write(value);
            slot.assume_init()
        }
    }

    /// A block with a count of 1 and an uninitialised value, for building
    /// a `T` in place (see [`UninitImplArc`]).
    #[inline]
    pub(crate) fn new_uninit() -> UninitImplArc<T> {
        #[allow(clippy::let_unit_value)] // Forces the compile-time check.
        let () = Self::FITS;
        let ptr = take_block().cast::<Inner<T>>();
        // SAFETY: the block is exclusively ours, and large and aligned
        // enough for an `Inner<T>` (`FITS`); only the count is written.
        unsafe { ptr::addr_of_mut!((*ptr.as_ptr()).strong).write(AtomicUsize::new(1)) };
        UninitImplArc {
            ptr,
            _owns: PhantomData,
        }
    }

    #[inline]
    fn inner(&self) -> &Inner<T> {
        // SAFETY: the block stays allocated and its value initialised
        // while this handle exists (it holds one count).
        unsafe { self.ptr.as_ref() }
    }

    /// Whether both handles point to the same value.
    #[inline]
    pub(crate) fn ptr_eq(a: &ImplArc<T>, b: &ImplArc<T>) -> bool {
        a.ptr == b.ptr
    }

    /// The number of handles to this value.
    #[inline]
    pub(crate) fn strong_count(this: &ImplArc<T>) -> usize {
        this.inner().strong.load(Ordering::Acquire) & !HAS_BINDING
    }

    /// Whether `this` is the only handle to its value, with no binding
    /// bit (a count of exactly 1). Through `&mut`: the answer then stays
    /// true until `this` is shared, since no other handle exists to clone
    /// from (there are no weak handles).
    #[inline]
    pub(crate) fn is_unique(this: &mut ImplArc<T>) -> bool {
        this.inner().strong.load(Ordering::Acquire) == 1
    }

    /// Sets the has-binding bit of the only handle ([`is_unique`] was
    /// true): a plain store, since no other thread can read or change the
    /// count; with a count of 1 the value owes the object no reference
    /// (rule 2 of `binding.rs`).
    ///
    /// # Safety
    ///
    /// [`is_unique`] was true for `this` and it has not been cloned since;
    /// the value's binding slot holds the object that owns `this`, as for
    /// [`set_binding_bit`](Self::set_binding_bit).
    ///
    /// [`is_unique`]: Self::is_unique
    #[inline]
    pub(crate) unsafe fn set_binding_bit_unique(this: &mut ImplArc<T>) {
        debug_assert_eq!(this.inner().strong.load(Ordering::Relaxed), 1);
        this.inner()
            .strong
            .store(1 | HAS_BINDING, Ordering::Release);
    }

    /// Sets the has-binding bit, keeping rule 2 of `binding.rs`: if the
    /// count is 2 or more when the bit appears, the value holds one
    /// reference to the object (taken before the bit is published, given
    /// back if the count fell to 1 meanwhile).
    ///
    /// # Safety
    ///
    /// `obj` is the object just published in this value's binding slot,
    /// valid for `vt` (see `Tensor::bind_object`).
    pub(crate) unsafe fn set_binding_bit(this: &ImplArc<T>, vt: &BindingVTable, obj: NonNull<()>) {
        let strong = &this.inner().strong;
        let mut took = false;
        let mut cur = strong.load(Ordering::Relaxed);
        loop {
            if cur & HAS_BINDING != 0 {
                // Already set (cannot happen: the slot was empty); keep it.
                break;
            }
            if cur > 1 && !took {
                // SAFETY: `obj` is valid for `vt` (our contract).
                unsafe { (vt.incref)(obj) };
                took = true;
            }
            match strong.compare_exchange_weak(
                cur,
                cur | HAS_BINDING,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
        if took && cur & !HAS_BINDING == 1 {
            // The count fell to 1 before the bit was set: no reference is
            // owed after all.
            // SAFETY: as above; we took this reference just now.
            unsafe { (vt.decref)(obj) };
        }
    }

    /// The count edge 1 -> 2 with the bit set (or an overflow): the value
    /// takes a reference to its binding object.
    #[cold]
    #[inline(never)]
    fn clone_cold(&self, old: usize) {
        if old & HAS_BINDING == 0 || old & !HAS_BINDING > MAX_REFCOUNT {
            std::process::abort();
        }
        if old & !HAS_BINDING != 1 {
            return;
        }
        // Pairs with the release publication of the slot and the bit.
        atomic::fence(Ordering::Acquire);
        if let (Some(vt), Some(obj)) = (
            binding(),
            self.inner().value.binding_slot().and_then(BindingSlot::get),
        ) {
            // SAFETY: the bit is only set by `set_binding_bit`, after the
            // slot holds an object valid for the registered binding
            // (`Tensor::bind_object`'s contract); that object owns the
            // other handle, so it is alive (it cannot die before dropping
            // it, and we hold a handle too).
            unsafe { (vt.incref)(obj) };
        }
    }
}

impl<T: Clone + SlotOwner> ImplArc<T> {
    /// A mutable reference to the value, cloned into a new block first if
    /// other handles share it (as `Arc::make_mut`, without weak handles).
    #[inline]
    pub(crate) fn make_mut(this: &mut ImplArc<T>) -> &mut T {
        // Acquire pairs with the release decrements of handles dropped
        // earlier, so their reads of the value happen before our writes.
        // A count of 1 cannot grow meanwhile: the only handle is `this`,
        // borrowed mutably here.
        if this.inner().strong.load(Ordering::Acquire) & !HAS_BINDING != 1 {
            *this = ImplArc::new(T::clone(this));
        }
        // SAFETY: the count is 1 and `this` is borrowed mutably, so no
        // other handle or reference to the value exists for the lifetime
        // of the result; the pointer keeps the block's write provenance.
        unsafe { &mut *ptr::addr_of_mut!((*this.ptr.as_ptr()).value) }
    }
}

impl<T: SlotOwner> Deref for ImplArc<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.inner().value
    }
}

impl<T: SlotOwner> Clone for ImplArc<T> {
    #[inline]
    fn clone(&self) -> ImplArc<T> {
        // Relaxed, as `Arc::clone`: a new handle is made from an existing
        // one, which already keeps the value alive; no data is published.
        let old = self.inner().strong.fetch_add(1, Ordering::Relaxed);
        if old > MAX_REFCOUNT {
            // An overflow (abort), or the has-binding bit (maybe an edge).
            self.clone_cold(old);
        }
        ImplArc {
            ptr: self.ptr,
            _owns: PhantomData,
        }
    }
}

impl<T: SlotOwner> Drop for ImplArc<T> {
    #[inline]
    fn drop(&mut self) {
        // The only handle (a count of 1, with or without the binding bit:
        // a temporary view, or the handle a binding object gives back when
        // it is freed) needs no atomic read-modify-write: no other handle
        // exists, so no other thread can clone, drop or set the binding
        // bit concurrently (each needs a handle), and nothing else
        // increments the count (there are no weak handles). The acquire
        // load pairs with the release decrements of the handles dropped
        // before, as the fence in `finish_drop` does; `finish_drop` then
        // destroys the value, exactly as after a decrement that found this
        // count. A locked decrement costs about 10 ns on the benchmark
        // machine, an eighth of a whole view op.
        let strong = &self.inner().strong;
        let cur = strong.load(Ordering::Acquire);
        let old = if cur & !HAS_BINDING == 1 {
            cur
        } else {
            strong.fetch_sub(1, Ordering::Release)
        };
        self.finish_drop(old);
    }
}

impl<T: SlotOwner> ImplArc<T> {
    /// Drops a handle that a value of the same type holds (a view's
    /// base, held by the view's `TensorImpl`): the common case (other
    /// handles remain, no binding object) inline, the rest out of line.
    /// A plain drop there would be a recursive call of the whole drop
    /// glue, which the compiler cannot inline.
    #[inline]
    pub(crate) fn drop_nested(this: ImplArc<T>) {
        let this = std::mem::ManuallyDrop::new(this);
        let old = this.inner().strong.fetch_sub(1, Ordering::Release);
        if old != 1 && old <= MAX_REFCOUNT {
            return;
        }
        Self::finish_drop_cold(std::mem::ManuallyDrop::into_inner(this), old);
    }

    /// [`drop_nested`](Self::drop_nested)'s rare cases: the last handle,
    /// or a count with the has-binding bit.
    #[cold]
    #[inline(never)]
    fn finish_drop_cold(this: ImplArc<T>, old: usize) {
        // The decrement was made: only the rest of `drop` remains to run.
        std::mem::ManuallyDrop::new(this).finish_drop(old);
    }

    /// What `drop` does after its decrement, which found `old`.
    #[inline(always)]
    fn finish_drop(&mut self, old: usize) {
        if old != 1 && (old <= MAX_REFCOUNT || old & !HAS_BINDING != 1) {
            if old > MAX_REFCOUNT && old & !HAS_BINDING == 2 {
                self.drop_edge();
            }
            return;
        }
        // Pairs with the release decrements of every other handle: all
        // their uses of the value happen before it is dropped below.
        atomic::fence(Ordering::Acquire);
        let p = self.ptr.as_ptr();
        // SAFETY: the count reached 0, so this was the last handle and no
        // reference to the value remains; the value was initialised
        // (`assume_init`) and is dropped exactly once. The block came from
        // `take_block` and is not used after `release_block`.
        unsafe {
            ptr::drop_in_place(ptr::addr_of_mut!((*p).value));
            release_block(self.ptr.cast());
        }
    }
}

impl<T: SlotOwner> ImplArc<T> {
    /// The count edge 2 -> 1 with the bit set: the value gives back the
    /// reference it held on its binding object, whose own handle is now the
    /// only one.
    #[cold]
    #[inline(never)]
    fn drop_edge(&self) {
        atomic::fence(Ordering::Acquire);
        // The value is still alive: the binding object owns the remaining
        // handle and cannot be freed before the `decref` below gives back
        // the reference this value held (rule 2 of `binding.rs`).
        if let (Some(vt), Some(obj)) = (
            binding(),
            self.inner().value.binding_slot().and_then(BindingSlot::get),
        ) {
            // SAFETY: the slot's object is valid for the registered binding
            // (`Tensor::bind_object`'s contract), and this is the reference
            // the 1 -> 2 edge (or `set_binding_bit`) took.
            unsafe { (vt.decref)(obj) };
        }
    }
}

/// A fresh block whose value is not yet initialised (from
/// [`ImplArc::new_uninit`]): write the value through
/// [`as_mut_ptr`](Self::as_mut_ptr), then [`assume_init`](Self::assume_init).
/// Dropped before that, it gives its block back without dropping a value.
pub(crate) struct UninitImplArc<T: SlotOwner> {
    ptr: NonNull<Inner<T>>,
    _owns: PhantomData<Inner<T>>,
}

impl<T: SlotOwner> UninitImplArc<T> {
    /// The value's place. Writes through it are exclusive: no handle to
    /// this block exists yet. The pointer has the block's full provenance
    /// (it is not derived from a shared reference).
    #[inline]
    pub(crate) fn as_mut_ptr(&self) -> *mut T {
        // SAFETY: `ptr` points to a live block (we own it); computing a
        // field address reads nothing.
        unsafe { ptr::addr_of_mut!((*self.ptr.as_ptr()).value) }
    }

    /// The handle to the now initialised value.
    ///
    /// # Safety
    ///
    /// The value must be fully initialised through
    /// [`as_mut_ptr`](Self::as_mut_ptr).
    #[inline]
    pub(crate) unsafe fn assume_init(self) -> ImplArc<T> {
        let ptr = self.ptr;
        // The block now belongs to the handle: no `UninitImplArc::drop`.
        std::mem::forget(self);
        ImplArc {
            ptr,
            _owns: PhantomData,
        }
    }
}

impl<T: SlotOwner> Drop for UninitImplArc<T> {
    fn drop(&mut self) {
        // SAFETY: the block came from `take_block` and is owned by `self`;
        // its value was never initialised as far as we know (a partly
        // written value is the caller's to drop, as `build_view` does), so
        // there is nothing to drop; nothing uses the block afterwards.
        unsafe { release_block(self.ptr.cast()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use c10_storage::block_cache::CACHE_CAP;
    use std::cell::Cell;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    /// Counts its drops in a shared counter.
    #[derive(Debug)]
    struct Counted {
        drops: Arc<AtomicUsize>,
        value: u64,
    }

    impl Clone for Counted {
        fn clone(&self) -> Counted {
            Counted {
                drops: Arc::clone(&self.drops),
                value: self.value,
            }
        }
    }

    impl SlotOwner for Counted {
        fn binding_slot(&self) -> Option<&BindingSlot> {
            None
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            self.drops.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counted(value: u64) -> (ImplArc<Counted>, Arc<AtomicUsize>) {
        let drops = Arc::new(AtomicUsize::new(0));
        let a = ImplArc::new(Counted {
            drops: Arc::clone(&drops),
            value,
        });
        (a, drops)
    }

    #[test]
    fn clone_and_drop_count() {
        let (a, drops) = counted(7);
        assert_eq!(ImplArc::strong_count(&a), 1);
        let b = a.clone();
        let c = b.clone();
        assert_eq!(ImplArc::strong_count(&a), 3);
        assert!(ImplArc::ptr_eq(&a, &c));
        assert_eq!(c.value, 7);
        drop(a);
        drop(b);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        assert_eq!(ImplArc::strong_count(&c), 1);
        drop(c);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn make_mut_unique_edits_in_place() {
        let (mut a, drops) = counted(1);
        let before = a.ptr;
        ImplArc::make_mut(&mut a).value = 2;
        assert_eq!(a.ptr, before, "a unique handle is not copied");
        assert_eq!(a.value, 2);
        drop(a);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn make_mut_shared_copies() {
        let (mut a, drops) = counted(1);
        let b = a.clone();
        ImplArc::make_mut(&mut a).value = 2;
        assert!(!ImplArc::ptr_eq(&a, &b));
        assert_eq!((a.value, b.value), (2, 1));
        assert_eq!(ImplArc::strong_count(&a), 1);
        assert_eq!(ImplArc::strong_count(&b), 1);
        drop(b);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        drop(a);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn blocks_are_reused_on_the_same_thread() {
        let (a, _drops) = counted(1);
        let first = a.ptr.cast::<u8>();
        drop(a);
        assert!(cached_blocks() >= 1);
        let (b, _drops) = counted(2);
        assert_eq!(b.ptr.cast::<u8>(), first, "the freed block comes back");
        assert_eq!(b.value, 2);
    }

    #[test]
    fn uninit_dropped_returns_its_block_without_a_drop() {
        let slot = ImplArc::<Counted>::new_uninit();
        // Taken from the cache (or allocated), so there is room for it.
        let taken = cached_blocks();
        assert!(taken < CACHE_CAP);
        drop(slot); // nothing initialised: `Counted::drop` must not run
        assert_eq!(cached_blocks(), taken + 1);
    }

    #[test]
    fn cache_never_exceeds_its_cap() {
        let drops = Arc::new(AtomicUsize::new(0));
        let n = CACHE_CAP * 2 + 3;
        let many: Vec<ImplArc<Counted>> = (0..n)
            .map(|i| {
                ImplArc::new(Counted {
                    drops: Arc::clone(&drops),
                    value: i as u64,
                })
            })
            .collect();
        assert_eq!(cached_blocks(), 0, "all cached blocks are in use");
        for (i, a) in many.into_iter().enumerate() {
            assert_eq!(a.value, i as u64);
            drop(a);
            assert!(cached_blocks() <= CACHE_CAP);
        }
        assert_eq!(cached_blocks(), CACHE_CAP);
        assert_eq!(drops.load(Ordering::SeqCst), n);
    }

    #[test]
    fn drop_on_another_thread_fills_that_threads_cache() {
        let (a, drops) = counted(5);
        let b = a.clone();
        let t = std::thread::spawn(move || {
            assert_eq!(b.value, 5);
            drop(b);
            // Not the last handle: nothing freed here yet.
            assert_eq!(cached_blocks(), 0);
            let (c, _d) = counted(6);
            let moved = c.clone();
            drop(c);
            moved
        });
        let moved = t.join().unwrap();
        drop(a);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        // The other thread has exited (its cache freed); the last handle
        // to its value is dropped here and the block joins our cache.
        let before = cached_blocks();
        assert_eq!(moved.value, 6);
        drop(moved);
        assert_eq!(cached_blocks(), (before + 1).min(CACHE_CAP));
    }

    #[test]
    fn shared_across_threads() {
        let (a, drops) = counted(9);
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let a = a.clone();
                std::thread::spawn(move || {
                    for _ in 0..10 {
                        let b = a.clone();
                        assert_eq!(b.value, 9);
                    }
                    a.value
                })
            })
            .collect();
        drop(a);
        for h in handles {
            assert_eq!(h.join().unwrap(), 9);
        }
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    /// A thread-local destructor that runs after the cache's own drops the
    /// last handle: the block must go to the allocator (Miri checks that
    /// nothing leaks and no dead cache is touched), and blocks cached when
    /// the thread exits are freed by the cache's destructor.
    #[test]
    fn thread_exit_frees_cached_and_late_blocks() {
        struct LateDrop(Cell<Option<ImplArc<Counted>>>);
        impl Drop for LateDrop {
            fn drop(&mut self) {
                drop(self.0.take());
            }
        }
        thread_local! {
            static LATE: LateDrop = const { LateDrop(Cell::new(None)) };
        }
        let drops = Arc::new(AtomicUsize::new(0));
        let d = Arc::clone(&drops);
        std::thread::spawn(move || {
            let mk = |v| {
                ImplArc::new(Counted {
                    drops: Arc::clone(&d),
                    value: v,
                })
            };
            // Registered before the cache is first used, so (destructors
            // running in reverse order of registration on most platforms)
            // it may run after the cache is gone; either order must work.
            LATE.with(|l| l.0.set(Some(mk(1))));
            for v in 0..4 {
                drop(mk(v)); // fills the cache
            }
            assert!(cached_blocks() >= 1);
        })
        .join()
        .unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), 5);
    }

    #[test]
    fn send_and_sync_follow_the_payload() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<ImplArc<TensorImpl>>();
        send_sync::<ImplArc<Counted>>();
    }

    #[test]
    fn tensor_impl_fits_the_block() {
        assert_eq!(
            Layout::new::<Inner<TensorImpl>>(),
            BLOCK,
            "the cached block is exactly a TensorImpl's"
        );
    }
}
