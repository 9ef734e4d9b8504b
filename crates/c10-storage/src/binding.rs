//! The storage binding slot: c10's `PyObjectSlot` on `StorageImpl`, without
//! Python.
//!
//! A language binding wraps a [`Storage`] in an object of its own (the
//! Python package's `UntypedStorage`). PyTorch 2.x keeps that object
//! *preserved*: once made, it lives as long as the `StorageImpl` is used
//! anywhere, so every way back to Python (`t.untyped_storage()` from any
//! tensor over the storage) gives the same object, with its `__dict__`.
//! Every `StorageImpl` here has one inline word for that object, and the
//! storage handle's count drives the object's lifetime with the same rules
//! as c10-core's tensor binding slot:
//!
//! 1. the binding object owns one [`Storage`] handle for as long as it
//!    lives;
//! 2. the `StorageImpl` owns **one** reference to the object while its
//!    handle count is 2 or more (anybody other than the object holds it):
//!    the count's 1 → 2 edge takes it ([`BindingVTable::incref`]), the
//!    2 → 1 edge gives it back ([`BindingVTable::decref`]);
//! 3. so the object lives while either side uses it: when its last
//!    binding reference goes while tensors still hold the storage, it
//!    survives; when the last of those handles goes, the object's count
//!    falls, it is freed and drops the last handle, freeing the storage.
//!
//! The edges live in the handle's count word (a bit above every legal
//! count, see `storage_arc.rs`), so storages without a binding object pay
//! nothing: cloning and dropping a [`Storage`] costs what `Arc`'s did.
//!
//! # Soundness
//!
//! Safe code can read the slot ([`Storage::binding_object`]) but nothing
//! makes it trust the pointer: storing one ([`Storage::bind_object`]) and
//! installing the functions called with it ([`register_binding`]) are
//! `unsafe fn`s whose contracts say what they must be. This crate never
//! dereferences the pointer. A weak handle
//! ([`WeakStorage::upgrade`](crate::WeakStorage::upgrade)) never crosses the
//! 1 → 2 edge (the only strong handle then belongs to the object, which
//! may be mid-destruction), so the functions are only ever called while the
//! object is provably alive.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use crate::storage::Storage;
use crate::storage_arc::StorageArc;

/// The functions this crate calls on a storage's binding object (c10's
/// `PyInterpreterVTable`, reduced to reference counting); one per process,
/// installed by [`register_binding`].
#[derive(Debug)]
pub struct BindingVTable {
    /// Adds one strong reference to the object. Called on any thread, with
    /// or without the binding's global lock.
    pub incref: unsafe fn(NonNull<()>),
    /// Removes one strong reference from the object (which may free it and
    /// with it its own handle). Called on any thread.
    pub decref: unsafe fn(NonNull<()>),
}

static BINDING: OnceLock<&'static BindingVTable> = OnceLock::new();

/// Installs the process's storage binding functions. One binding per
/// process; installing the same table again is a no-op.
///
/// # Errors
///
/// The table already installed, if it is a different one.
///
/// # Safety
///
/// For every pointer later stored with [`Storage::bind_object`], calling
/// `vtable.incref` and `vtable.decref` with it must be sound from any
/// thread at any time while that object is alive, and an `incref`
/// followed later by a `decref` must keep the object alive in between.
///
/// ```
/// use c10_storage::binding::{register_binding, BindingVTable};
/// unsafe fn nothing(_: std::ptr::NonNull<()>) {}
/// static VT: BindingVTable = BindingVTable { incref: nothing, decref: nothing };
/// // SAFETY: the functions do nothing, which is sound for any pointer.
/// assert!(unsafe { register_binding(&VT) }.is_ok());
/// ```
pub unsafe fn register_binding(
    vtable: &'static BindingVTable,
) -> Result<(), &'static BindingVTable> {
    let installed = BINDING.get_or_init(|| vtable);
    if std::ptr::eq(*installed, vtable) {
        Ok(())
    } else {
        Err(installed)
    }
}

/// The installed binding, if any.
#[inline]
pub(crate) fn binding() -> Option<&'static BindingVTable> {
    BINDING.get().copied()
}

/// The slot: an opaque pointer to the storage's binding object, or null.
/// Written only null → object; never copied.
#[derive(Debug, Default)]
pub(crate) struct BindingSlot {
    obj: AtomicPtr<()>,
}

impl BindingSlot {
    /// An empty slot.
    pub(crate) const fn new() -> BindingSlot {
        BindingSlot {
            obj: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The object, if any (acquire: pairs with the publishing exchange).
    #[inline]
    pub(crate) fn get(&self) -> Option<NonNull<()>> {
        NonNull::new(self.obj.load(Ordering::Acquire))
    }

    /// Publishes `obj` if the slot is empty; the current object otherwise.
    fn try_set(&self, obj: NonNull<()>) -> Result<(), NonNull<()>> {
        match self.obj.compare_exchange(
            std::ptr::null_mut(),
            obj.as_ptr(),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Ok(()),
            Err(cur) => Err(NonNull::new(cur).unwrap_or(obj)),
        }
    }
}

impl Storage {
    /// The binding object of this storage (PyTorch's
    /// `pyobj_slot()->load_pyobj()`), if a binding attached one. An opaque
    /// pointer: nothing makes it valid to dereference.
    ///
    /// ```
    /// let s = c10_storage::Storage::from_owner(vec![0u8; 4]);
    /// assert!(s.binding_object().is_none());
    /// ```
    #[inline]
    pub fn binding_object(&self) -> Option<NonNull<()>> {
        self.imp().binding.get()
    }

    /// Attaches `obj` to this storage: publishes it in the empty slot, then
    /// sets the count's has-binding bit, taking the reference that rule 2
    /// of the module documentation asks for if the count is already 2 or
    /// more.
    ///
    /// # Errors
    ///
    /// `Err(Some(existing))` if the slot already holds an object (nothing
    /// changes), `Err(None)` if no binding is registered.
    ///
    /// # Safety
    ///
    /// * `obj` must be an object of the registered binding
    ///   ([`register_binding`]) for which its functions are sound;
    /// * `obj` must own one [`Storage`] handle to this same storage and keep
    ///   it for as long as it lives: it may drop it only while being
    ///   destroyed, and it may be destroyed only when no reference taken by
    ///   `incref` is outstanding.
    ///
    /// ```
    /// use c10_storage::binding::{register_binding, BindingVTable};
    /// use c10_storage::Storage;
    /// unsafe fn nothing(_: std::ptr::NonNull<()>) {}
    /// static VT: BindingVTable = BindingVTable { incref: nothing, decref: nothing };
    /// // SAFETY: the functions do nothing.
    /// unsafe { register_binding(&VT) }.unwrap();
    /// let s = Storage::from_owner(vec![0u8; 4]);
    /// // An object that owns `s` and lives forever (leaked).
    /// let obj = std::ptr::NonNull::from(Box::leak(Box::new(s.clone()))).cast::<()>();
    /// // SAFETY: `obj` owns a handle to the storage and is never freed.
    /// unsafe { s.bind_object(obj) }.unwrap();
    /// assert_eq!(s.binding_object(), Some(obj));
    /// ```
    pub unsafe fn bind_object(&self, obj: NonNull<()>) -> Result<(), Option<NonNull<()>>> {
        let vt = binding().ok_or(None)?;
        self.imp().binding.try_set(obj).map_err(Some)?;
        // SAFETY: the slot now holds `obj`, valid for `vt` (our contract).
        unsafe { StorageArc::set_binding_bit(self.arc(), vt, obj) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! A fake binding (a reference-counted heap object owning a handle),
    //! run under Miri: edges, survival, freeing, weak handles, threads.
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;

    struct Obj {
        refs: AtomicUsize,
        storage: Mutex<Option<Storage>>,
        freed: &'static AtomicUsize,
    }

    unsafe fn incref(p: NonNull<()>) {
        // SAFETY: test objects are live `Obj`s while referenced.
        let o = unsafe { p.cast::<Obj>().as_ref() };
        o.refs.fetch_add(1, Ordering::SeqCst);
    }

    unsafe fn decref(p: NonNull<()>) {
        let o = p.cast::<Obj>();
        // SAFETY: as in `incref`.
        let last = unsafe { o.as_ref() }.refs.fetch_sub(1, Ordering::SeqCst) == 1;
        if last {
            // SAFETY: the last reference: the `Box` of `new_obj` is ours.
            let b = unsafe { Box::from_raw(o.as_ptr()) };
            b.freed.fetch_add(1, Ordering::SeqCst);
            drop(b);
        }
    }

    static VT: BindingVTable = BindingVTable { incref, decref };

    fn setup() {
        // SAFETY: sound for the `Obj`s of `new_obj`.
        unsafe { register_binding(&VT) }.unwrap();
    }

    /// A new object with one (binding-side) reference, owning `s`, bound.
    fn new_obj(s: Storage, freed: &'static AtomicUsize) -> NonNull<()> {
        let probe = s.clone();
        let o = Box::new(Obj {
            refs: AtomicUsize::new(1),
            storage: Mutex::new(Some(s)),
            freed,
        });
        let p = NonNull::from(Box::leak(o)).cast::<()>();
        // SAFETY: `p` owns a handle and lives until its last reference.
        unsafe { probe.bind_object(p) }.unwrap();
        p
    }

    fn refs(p: NonNull<()>) -> usize {
        // SAFETY: only called on live objects.
        unsafe { p.cast::<Obj>().as_ref() }
            .refs
            .load(Ordering::SeqCst)
    }

    fn handle(p: NonNull<()>) -> Storage {
        // SAFETY: only called on live objects.
        let o = unsafe { p.cast::<Obj>().as_ref() };
        o.storage.lock().unwrap().clone().unwrap()
    }

    #[test]
    fn the_object_lives_as_long_as_the_storage_is_used() {
        setup();
        static FREED: AtomicUsize = AtomicUsize::new(0);
        let p = new_obj(Storage::from_owner(vec![1u8; 8]), &FREED);
        assert_eq!(refs(p), 1, "bound while unique: no extra reference");
        let held = handle(p); // 1 -> 2
        assert_eq!(refs(p), 2);
        assert_eq!(held.use_count(), 2);
        let more = held.clone();
        assert_eq!(refs(p), 2);
        drop(more);
        assert_eq!(refs(p), 2);
        // The binding's own last reference goes: the object survives.
        // SAFETY: we own that reference.
        unsafe { decref(p) };
        assert_eq!(FREED.load(Ordering::SeqCst), 0);
        assert_eq!(held.binding_object(), Some(p));
        assert_eq!(held.read().unwrap().bytes().unwrap()[0], 1);
        // The last other handle goes: 2 -> 1 frees the object and its
        // handle, the last one.
        let weak = held.downgrade();
        drop(held);
        assert_eq!(FREED.load(Ordering::SeqCst), 1);
        assert!(weak.is_dead());
        assert!(weak.upgrade().is_none());
    }

    #[test]
    fn binding_a_shared_storage_takes_a_reference_and_weak_handles_stop_at_the_edge() {
        setup();
        static FREED: AtomicUsize = AtomicUsize::new(0);
        let s = Storage::from_owner(vec![0u8; 4]);
        let other = s.clone();
        let weak = s.downgrade();
        let p = new_obj(s, &FREED);
        assert_eq!(refs(p), 2, "count >= 2 when bound: the storage holds one");
        // A second bind is refused with the existing object.
        // SAFETY: refused before anything is stored.
        let again = unsafe { other.bind_object(NonNull::<u64>::dangling().cast()) };
        assert_eq!(again, Err(Some(p)));
        // Upgrading past 2 is fine; the 2 -> 3 -> 2 moves cross no edge.
        let up = weak.upgrade().unwrap();
        drop(up);
        assert_eq!(refs(p), 2);
        drop(other); // 2 -> 1: the storage gives its reference back
        assert_eq!(refs(p), 1);
        // Only the object holds the storage: a weak handle cannot upgrade.
        assert!(weak.upgrade().is_none());
        assert!(!weak.is_dead());
        // SAFETY: we own the last reference.
        unsafe { decref(p) };
        assert_eq!(FREED.load(Ordering::SeqCst), 1);
        assert!(weak.is_dead());
    }

    #[test]
    fn edges_across_threads() {
        setup();
        static FREED: AtomicUsize = AtomicUsize::new(0);
        let p = new_obj(Storage::from_owner(vec![0u8; 2]), &FREED);
        let held = handle(p);
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let h = held.clone();
                std::thread::spawn(move || {
                    for _ in 0..5 {
                        drop(h.clone());
                    }
                    h.binding_object().is_some()
                })
            })
            .collect();
        for th in threads {
            assert!(th.join().unwrap());
        }
        assert_eq!(refs(p), 2);
        // SAFETY: we own the binding-side reference.
        unsafe { decref(p) };
        drop(held);
        assert_eq!(FREED.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn binding_while_other_threads_clone_and_drop() {
        setup();
        static FREED: AtomicUsize = AtomicUsize::new(0);
        let s = Storage::from_owner(vec![0u8; 2]);
        let shared = s.clone();
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let h = shared.clone();
                std::thread::spawn(move || {
                    for _ in 0..8 {
                        drop(h.clone());
                    }
                    h
                })
            })
            .collect();
        let p = new_obj(s, &FREED);
        let kept: Vec<Storage> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(refs(p), 2, "other handles exist: the storage holds one");
        drop(shared);
        drop(kept);
        assert_eq!(refs(p), 1, "only the object's handle is left");
        // SAFETY: we own the binding-side reference.
        unsafe { decref(p) };
        assert_eq!(FREED.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn storages_without_a_binding_object_count_as_before() {
        let s = Storage::from_owner(vec![0u8; 2]);
        let t = s.clone();
        assert_eq!(s.use_count(), 2);
        assert!(!StorageArc::has_binding_bit(s.arc()));
        drop(t);
        assert!(s.is_unique());
        let s = s.into_read_only("test").unwrap();
        assert!(s.is_read_only());
        let w = s.downgrade();
        assert_eq!(w.upgrade().map(|u| u.use_count()), Some(2));
        drop(s);
        assert!(w.is_dead());
    }
}
