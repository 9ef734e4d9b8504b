//! [`StorageArc`]: the reference-counted box behind [`Storage`](crate::Storage),
//! `std::sync::Arc`'s protocol plus the binding edges of `binding.rs`.
//!
//! `Arc` gives no hook on its count, and a language binding needs two
//! (see [`crate::binding`]): the 1 → 2 and 2 → 1 edges of the handles other
//! than the binding object's own, once an object is attached. So the count
//! word carries a "has a binding object" bit ([`HAS_BINDING`]), the sign
//! bit: `Arc::clone`'s overflow test (old count above `isize::MAX`) and a
//! signed "was at most 1" test of a drop send every clone and drop of a
//! bound storage to a cold path, while the hot paths keep exactly `Arc`'s
//! code (`lock inc` and a branch on its flags to clone, `lock dec` and a
//! branch to drop; the old count has no other use). The cold paths count
//! the handles other than the object's in a second word (`ext`), whose
//! 0 → 1 and 1 → 0 edges take and give back the object reference.
//!
//! The rest is `Arc`'s protocol: a relaxed increment to clone (aborting
//! before the count can overflow), a release decrement to drop, an acquire
//! fence before the last strong handle drops the value; a weak count that
//! the strong handles share one unit of, and the block is freed with the
//! last weak unit.
//!
//! One difference: a weak handle does not upgrade a storage whose only
//! strong handle is its binding object's (the count 1 with the bit set).
//! That handle belongs to an object that may be in the middle of being
//! destroyed (its own count already 0), and an upgrade would cross the
//! 1 → 2 edge and take a reference to it. Such a storage is only reachable
//! from its binding object then, which is how a binding finds it.

use std::alloc::Layout;
use std::marker::PhantomData;
use std::mem::{offset_of, ManuallyDrop};
use std::ptr::{self, NonNull};
use std::sync::atomic::{self, AtomicUsize, Ordering};

use crate::binding::{binding, BindingVTable};
use crate::block_cache::BlockCache;
use crate::storage::StorageImpl;

/// A block: the counts, then the value.
#[repr(C)]
struct Inner {
    /// Strong handles, with [`HAS_BINDING`] possibly set.
    strong: AtomicUsize,
    /// Weak handles, plus one for all strong handles together.
    weak: AtomicUsize,
    /// Once the has-binding bit is set: the strong handles other than the
    /// binding object's own. Its 0 -> 1 and 1 -> 0 edges are the binding
    /// edges (only the cold paths touch it, so the hot paths need not keep
    /// the old strong count).
    ext: AtomicUsize,
    value: StorageImpl,
}

const LAYOUT: Layout = Layout::new::<Inner>();

/// This thread's freed storage blocks (see [`crate::block_cache`]): a
/// small tensor's storage is made and dropped as often as its `TensorImpl`,
/// and a cached block saves a `malloc`/`free` pair on each.
type Cache = BlockCache<{ LAYOUT.size() }, { LAYOUT.align() }>;

thread_local! {
    static CACHE: Cache = const { Cache::new() };
}

/// Counts above this abort the process (checked on the cold path of a
/// bound storage; an unbound count aborts when it reaches the sign bit, as
/// `std::sync::Arc`'s does at `isize::MAX`).
const MAX_REFCOUNT: usize = usize::MAX >> 2;

/// The strong count word's "has a binding object" bit (c10's
/// `kHasPyObject`): set once by [`StorageArc::set_binding_bit`], never
/// cleared.
const HAS_BINDING: usize = 1 << (usize::BITS - 1);

/// A thread-safe reference-counted pointer to a [`StorageImpl`] (see the
/// module documentation).
pub(crate) struct StorageArc {
    ptr: NonNull<Inner>,
    _owns: PhantomData<Inner>,
}

// SAFETY: as for `Arc<StorageImpl>`: `StorageImpl` is `Send + Sync`, the
// counts are atomic, and the block may be freed on any thread.
unsafe impl Send for StorageArc {}
// SAFETY: as above.
unsafe impl Sync for StorageArc {}

/// The address of the value in block `p` (no dereference).
#[inline]
fn value_addr(p: NonNull<Inner>) -> *const StorageImpl {
    p.as_ptr()
        .cast::<u8>()
        .wrapping_add(offset_of!(Inner, value))
        .cast::<StorageImpl>()
}

impl StorageArc {
    /// A handle to `value`.
    pub(crate) fn new(value: StorageImpl) -> StorageArc {
        let slot = StorageArc::new_uninit();
        // SAFETY: the value of the new block is uninitialised and ours
        // alone; writing it initialises it.
        unsafe {
            slot.as_mut_ptr().write(value);
            slot.assume_init()
        }
    }

    /// A block with one strong handle and an uninitialised value.
    #[inline]
    pub(crate) fn new_uninit() -> UninitStorageArc {
        // A block of `LAYOUT` (the cache's), from this thread's cache or
        // the allocator.
        let ptr = Cache::take(&CACHE).cast::<Inner>();
        // SAFETY: the block is fresh, ours alone and laid out for `Inner`;
        // only the counts are written.
        unsafe {
            ptr::addr_of_mut!((*ptr.as_ptr()).strong).write(AtomicUsize::new(1));
            ptr::addr_of_mut!((*ptr.as_ptr()).weak).write(AtomicUsize::new(1));
            ptr::addr_of_mut!((*ptr.as_ptr()).ext).write(AtomicUsize::new(0));
        }
        UninitStorageArc { ptr }
    }

    #[inline]
    fn inner(&self) -> &Inner {
        // SAFETY: the block stays allocated and its value initialised while
        // a strong handle exists.
        unsafe { self.ptr.as_ref() }
    }

    /// The value's address (the storage's identity).
    #[inline]
    pub(crate) fn as_ptr(this: &StorageArc) -> *const StorageImpl {
        value_addr(this.ptr)
    }

    #[inline]
    pub(crate) fn ptr_eq(a: &StorageArc, b: &StorageArc) -> bool {
        a.ptr == b.ptr
    }

    /// The number of strong handles.
    #[inline]
    pub(crate) fn strong_count(this: &StorageArc) -> usize {
        this.inner().strong.load(Ordering::Acquire) & !HAS_BINDING
    }

    /// Whether the has-binding bit is set.
    #[cfg(test)]
    pub(crate) fn has_binding_bit(this: &StorageArc) -> bool {
        this.inner().strong.load(Ordering::Acquire) & HAS_BINDING != 0
    }

    /// The value, if this is the only strong handle and no binding object
    /// is attached (`Arc::try_unwrap`).
    pub(crate) fn try_unwrap(this: StorageArc) -> Result<StorageImpl, StorageArc> {
        if this
            .inner()
            .strong
            .compare_exchange(1, 0, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return Err(this);
        }
        // Pairs with the release decrements of the other (dropped) handles.
        atomic::fence(Ordering::Acquire);
        let this = ManuallyDrop::new(this);
        // SAFETY: the strong count went 1 -> 0 here, so this handle was the
        // last and nothing else reads the value; it is moved out once and
        // never dropped in place (the block is only freed below).
        let value = unsafe { ptr::read(value_addr(this.ptr)) };
        // The strong handles' shared weak unit.
        drop(WeakArc { ptr: this.ptr });
        Ok(value)
    }

    /// A weak handle.
    pub(crate) fn downgrade(this: &StorageArc) -> WeakArc {
        let old = this.inner().weak.fetch_add(1, Ordering::Relaxed);
        if old > MAX_REFCOUNT {
            std::process::abort();
        }
        WeakArc { ptr: this.ptr }
    }

    /// Sets the has-binding bit, keeping rule 2 of `binding.rs`: the
    /// handles other than the object's are counted in `ext` from then on,
    /// and if there are any the value holds one reference to the object
    /// (taken before the bit is published, so that a concurrent 1 -> 0
    /// edge of `ext` can only give back a reference that exists).
    ///
    /// # Safety
    ///
    /// `obj` is the object just published in this value's binding slot,
    /// valid for `vt`, owning one strong handle (see `Storage::bind_object`).
    pub(crate) unsafe fn set_binding_bit(this: &StorageArc, vt: &BindingVTable, obj: NonNull<()>) {
        let inner = this.inner();
        let mut took = false;
        let mut cur = inner.strong.load(Ordering::Relaxed);
        loop {
            if cur & HAS_BINDING != 0 {
                // Already set (cannot happen: the slot was empty); keep it.
                break;
            }
            let others = cur.saturating_sub(1);
            if others > 0 && !took {
                // SAFETY: `obj` is valid for `vt` (our contract).
                unsafe { (vt.incref)(obj) };
                took = true;
            } else if others == 0 && took {
                // SAFETY: as above; the reference we took just now.
                unsafe { (vt.decref)(obj) };
                took = false;
            }
            // Published by the exchange below (release).
            inner.ext.store(others, Ordering::Relaxed);
            match inner.strong.compare_exchange_weak(
                cur,
                cur | HAS_BINDING,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
    }

    /// The binding object of a word with the bit set, or an abort: the bit
    /// is set only after the slot is filled and the slot is never emptied,
    /// so a sign bit without an object is an unbound count that overflowed.
    fn bound_object(&self) -> NonNull<()> {
        // Pairs with the release publication of the slot, `ext` and the bit.
        atomic::fence(Ordering::Acquire);
        let cur = self.inner().strong.load(Ordering::Relaxed);
        match self.inner().value.binding.get() {
            Some(obj) if cur & !HAS_BINDING <= MAX_REFCOUNT => obj,
            _ => std::process::abort(),
        }
    }

    /// A clone that found the sign bit: a bound storage (maybe the 1 -> 2
    /// edge: `ext` 0 -> 1), or an overflow.
    #[cold]
    #[inline(never)]
    fn clone_cold(&self) {
        let obj = self.bound_object();
        if self.inner().ext.fetch_add(1, Ordering::AcqRel) == 0 {
            if let Some(vt) = binding() {
                // SAFETY: the slot's object is valid for the registered
                // binding (`Storage::bind_object`'s contract); it owns the
                // handle this clone was made from (`ext` was 0), and our
                // caller keeps it alive while using that handle.
                unsafe { (vt.incref)(obj) };
            }
        }
    }

    /// The last strong handle went: drops the value and the strong
    /// handles' weak unit.
    #[cold]
    #[inline(never)]
    fn drop_slow(&mut self) {
        // Pairs with the release decrements of every other handle.
        atomic::fence(Ordering::Acquire);
        // SAFETY: the strong count reached 0: no other strong handle, and
        // weak handles never reach the value without upgrading, which fails
        // from 0. The value is dropped exactly once.
        unsafe { ptr::drop_in_place(value_addr(self.ptr).cast_mut()) };
        drop(WeakArc { ptr: self.ptr });
    }

    /// A drop whose decrement found a count of at most 1 as a signed
    /// number: the last handle of an unbound storage, or any handle of a
    /// bound one. Nothing touches the block after a `decref`, which may
    /// free the object and with it the block.
    #[cold]
    #[inline(never)]
    fn drop_cold(&mut self) {
        let cur = self.inner().strong.load(Ordering::Relaxed);
        if cur & HAS_BINDING == 0 {
            // Unbound, and the count was 1: this was the last handle (a
            // count of 0 never grows again).
            self.drop_slow();
            return;
        }
        let obj = self.bound_object();
        let ext = &self.inner().ext;
        let mut e = ext.load(Ordering::Relaxed);
        loop {
            if e == 0 {
                // The object's own handle (every other live handle is
                // counted in `ext` before its clone returns); it drops it
                // only while being destroyed, when no other handle is left.
                if self.inner().strong.load(Ordering::Relaxed) & !HAS_BINDING == 0 {
                    self.drop_slow();
                }
                return;
            }
            match ext.compare_exchange_weak(e, e - 1, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => e = now,
            }
        }
        if e == 1 {
            if let Some(vt) = binding() {
                // SAFETY: the slot's object is valid for the registered
                // binding, and this gives back the reference the `ext`
                // 0 -> 1 edge (or `set_binding_bit`) took; the object owns
                // the remaining handle, so the value is alive until then.
                unsafe { (vt.decref)(obj) };
            }
        }
    }
}

impl std::ops::Deref for StorageArc {
    type Target = StorageImpl;
    #[inline]
    fn deref(&self) -> &StorageImpl {
        &self.inner().value
    }
}

impl Clone for StorageArc {
    #[inline]
    fn clone(&self) -> StorageArc {
        // Relaxed, as `Arc::clone`: a handle is made from an existing one.
        let old = self.inner().strong.fetch_add(1, Ordering::Relaxed);
        // `Arc::clone`'s overflow test: the bit is the sign bit, so a bound
        // storage, or an unbound count past `isize::MAX` (where `Arc`
        // aborts), goes to the cold path. `old` has no other use, so the
        // test is the flags of the increment itself.
        if old > isize::MAX as usize {
            self.clone_cold();
        }
        StorageArc {
            ptr: self.ptr,
            _owns: PhantomData,
        }
    }
}

impl Drop for StorageArc {
    #[inline]
    fn drop(&mut self) {
        let old = self.inner().strong.fetch_sub(1, Ordering::Release);
        // Common case: other handles remain and no bit (the sign bit). `old`
        // has no other use, so the test is the flags of the decrement.
        if (old as isize) <= 1 {
            self.drop_cold();
        }
    }
}

/// A weak handle to a [`StorageArc`]'s block.
pub(crate) struct WeakArc {
    ptr: NonNull<Inner>,
}

// SAFETY: as for `std::sync::Weak<StorageImpl>`.
unsafe impl Send for WeakArc {}
// SAFETY: as above.
unsafe impl Sync for WeakArc {}

impl WeakArc {
    #[inline]
    fn counts(&self) -> (&AtomicUsize, &AtomicUsize) {
        let p = self.ptr.as_ptr();
        // SAFETY: the block stays allocated while a weak unit exists; only
        // the counts are referenced (the value may be dropped already).
        unsafe { (&*ptr::addr_of!((*p).strong), &*ptr::addr_of!((*p).weak)) }
    }

    /// A strong handle, unless the value is gone or only its binding
    /// object holds it (see the module documentation).
    pub(crate) fn upgrade(&self) -> Option<StorageArc> {
        let (strong, _) = self.counts();
        let mut cur = strong.load(Ordering::Relaxed);
        loop {
            let n = cur & !HAS_BINDING;
            if n == 0 || (n == 1 && cur & HAS_BINDING != 0) {
                return None;
            }
            if n > MAX_REFCOUNT {
                std::process::abort();
            }
            match strong.compare_exchange_weak(cur, cur + 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => {
                    let up = StorageArc {
                        ptr: self.ptr,
                        _owns: PhantomData,
                    };
                    if cur & HAS_BINDING != 0 {
                        // A bound storage with another handle: counted like
                        // a clone of it.
                        up.clone_cold();
                    }
                    return Some(up);
                }
                Err(now) => cur = now,
            }
        }
    }

    /// The number of strong handles.
    pub(crate) fn strong_count(&self) -> usize {
        self.counts().0.load(Ordering::Acquire) & !HAS_BINDING
    }

    /// The value's address (see [`StorageArc::as_ptr`]).
    pub(crate) fn as_ptr(&self) -> *const StorageImpl {
        value_addr(self.ptr)
    }
}

impl Clone for WeakArc {
    fn clone(&self) -> WeakArc {
        let old = self.counts().1.fetch_add(1, Ordering::Relaxed);
        if old > MAX_REFCOUNT {
            std::process::abort();
        }
        WeakArc { ptr: self.ptr }
    }
}

impl Drop for WeakArc {
    fn drop(&mut self) {
        // A count of 1 is this unit alone (the strong handles' shared unit
        // when the last of them drops, with no `WeakStorage` left): nothing
        // can add a unit then (there is no strong handle to downgrade and no
        // other weak handle to clone), so no locked decrement is needed. The
        // acquire load pairs with the release decrements of the units
        // dropped before, as the fence below does.
        let weak = self.counts().1;
        if weak.load(Ordering::Acquire) != 1 {
            if weak.fetch_sub(1, Ordering::Release) != 1 {
                return;
            }
            atomic::fence(Ordering::Acquire);
        }
        // SAFETY: the last weak unit (the strong handles' shared one is
        // gone too, so the value was dropped): nothing refers to the block,
        // which `new_uninit` took from the cache, with its layout.
        unsafe { Cache::release(&CACHE, self.ptr.cast()) };
    }
}

/// A new block whose value is not yet written
/// ([`StorageArc::new_uninit`]). Dropping it frees the block.
pub(crate) struct UninitStorageArc {
    ptr: NonNull<Inner>,
}

impl UninitStorageArc {
    /// Where to write the value (exclusively ours).
    #[inline]
    pub(crate) fn as_mut_ptr(&self) -> *mut StorageImpl {
        value_addr(self.ptr).cast_mut()
    }

    /// The handle, once the value is written.
    ///
    /// # Safety
    ///
    /// The value must have been fully initialised through
    /// [`as_mut_ptr`](Self::as_mut_ptr).
    #[inline]
    pub(crate) unsafe fn assume_init(self) -> StorageArc {
        let this = ManuallyDrop::new(self);
        StorageArc {
            ptr: this.ptr,
            _owns: PhantomData,
        }
    }
}

impl Drop for UninitStorageArc {
    fn drop(&mut self) {
        // SAFETY: the block came from `new_uninit` (the cache's layout), its value
        // was never initialised (else `assume_init` consumed us) and nothing
        // else refers to it.
        unsafe { Cache::release(&CACHE, self.ptr.cast()) };
    }
}
