//! The binding slot: c10's `PyObjectSlot`, without Python.
//!
//! A language binding (the Python package `torchcore`, `crates/torchcore-py`)
//! wraps a [`Tensor`] in an object of its own. PyTorch keeps that wrapper
//! *preserved*: every time C++ hands the same `TensorImpl` back to Python,
//! Python gets the same object (with its `__dict__`, weak references and
//! `id`). This module gives every [`TensorImpl`](crate::TensorImpl) one
//! inline word that remembers its binding object, and the reference
//! counting that keeps that object alive exactly as long as PyTorch 2.15
//! does (`c10/util/intrusive_ptr.h`, "PyObject preservation"):
//!
//! 1. the binding object owns one handle to the `TensorImpl` (its own
//!    [`Tensor`]) for as long as it lives;
//! 2. the `TensorImpl` owns **one** reference to the binding object while
//!    its handle count is 2 or more, that is while anybody other than the
//!    binding object holds it. The handle count's 1 → 2 edge takes that
//!    reference ([`BindingVTable::incref`]), the 2 → 1 edge gives it back
//!    ([`BindingVTable::decref`]);
//! 3. so the object lives as long as the union of its own references and
//!    the Rust handles: when the last Python reference goes while Rust still
//!    holds the tensor, the object survives (PyTorch's replacement for
//!    "resurrection"), and when the last Rust handle goes, the object's
//!    count falls and it is freed, which drops the last handle.
//!
//! The handle count and a "has a binding object" bit share one atomic word
//! (see `impl_arc.rs`), so the edges cost nothing for tensors that have no
//! binding object: the bit sits above every legal count, and the existing
//! overflow test already sends such words to a cold path.
//!
//! # Soundness
//!
//! Safe code can read the slot ([`Tensor::binding_object`]) but never
//! makes anything trust its pointer: storing a pointer
//! ([`Tensor::bind_object`]) and installing the functions that are called
//! with it ([`register_binding`]) are `unsafe fn`s whose contracts say what
//! the pointer and functions must be. c10-core itself never dereferences the
//! pointer; it only passes it to the registered functions.
//!
//! The slot is never copied: a view, a `clone`, and the copy that
//! copy-on-write makes of a shared `TensorImpl` (`TensorImpl::clone`) all
//! start with an empty slot, because a binding object is bound to exactly
//! one `TensorImpl` handle it owns (rule 1), and a copy is a different
//! `TensorImpl` that the binding object does not own.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

/// The functions c10-core calls on a binding object (c10's
/// `PyInterpreterVTable`, reduced to reference counting). There is one per
/// process, installed by [`register_binding`].
#[derive(Debug)]
pub struct BindingVTable {
    /// Adds one strong reference to the object. Called on any thread, with
    /// or without the binding's global lock (the GIL) held.
    pub incref: unsafe fn(NonNull<()>),
    /// Removes one strong reference from the object (which may free it, and
    /// with it drop the object's own handle). Called on any thread.
    pub decref: unsafe fn(NonNull<()>),
}

static BINDING: OnceLock<&'static BindingVTable> = OnceLock::new();

/// Installs the process's binding functions. Only one binding can be
/// installed per process; installing the same table again is a no-op.
///
/// # Errors
///
/// `ErrorKind::Runtime` if a different table is already installed.
///
/// # Safety
///
/// For every pointer later stored with [`Tensor::bind_object`], calling
/// `vtable.incref` and `vtable.decref` with it must be sound from any
/// thread, at any time while that object is alive, and an `incref`
/// followed later by a `decref` must keep the object alive in between.
pub unsafe fn register_binding(vtable: &'static BindingVTable) -> Result<()> {
    let installed = BINDING.get_or_init(|| vtable);
    if std::ptr::eq(*installed, vtable) {
        Ok(())
    } else {
        Err(TensorError::runtime(
            "a different binding is already registered in this process",
        ))
    }
}

/// The installed binding, if any.
pub(crate) fn binding() -> Option<&'static BindingVTable> {
    BINDING.get().copied()
}

/// The slot (c10's `PyObjectSlot`): an opaque pointer to the binding
/// object of a `TensorImpl`, or null. One word, inline in `TensorImpl`.
/// Written only null → object (by [`Tensor::bind_object`] or
/// [`Tensor::bind_object_mut`]); it is never
/// copied (a copied `TensorImpl` gets an empty slot).
#[derive(Debug, Default)]
pub struct BindingSlot {
    obj: AtomicPtr<()>,
}

impl BindingSlot {
    /// An empty slot.
    pub const fn new() -> BindingSlot {
        BindingSlot {
            obj: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The object, if any (acquire load: pairs with the publishing store).
    #[inline]
    pub fn get(&self) -> Option<NonNull<()>> {
        NonNull::new(self.obj.load(Ordering::Acquire))
    }

    /// Publishes `obj` if the slot is empty; the current object otherwise.
    pub(crate) fn try_set(&self, obj: NonNull<()>) -> std::result::Result<(), NonNull<()>> {
        match self.obj.compare_exchange(
            std::ptr::null_mut(),
            obj.as_ptr(),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Ok(()),
            // A failed exchange read a non-null pointer.
            Err(cur) => Err(NonNull::new(cur).unwrap_or(obj)),
        }
    }

    /// Publishes `obj` in the slot without an atomic read-modify-write, if
    /// the slot is empty; for a caller with exclusive access to the only
    /// handle of the slot's `TensorImpl`, which no other thread can then
    /// reach.
    #[inline]
    fn set_unshared(&self, obj: NonNull<()>) -> std::result::Result<(), NonNull<()>> {
        match NonNull::new(self.obj.load(Ordering::Acquire)) {
            Some(cur) => Err(cur),
            None => {
                self.obj.store(obj.as_ptr(), Ordering::Release);
                Ok(())
            }
        }
    }
}

impl Tensor {
    /// The binding object of this tensor's `TensorImpl` (PyTorch's
    /// `pyobj_slot()->load_pyobj()`), if a binding registered one. Only an
    /// opaque pointer: nothing here makes it valid to dereference.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::empty(&[2], ScalarType::Float)?;
    /// assert!(t.binding_object().is_none());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn binding_object(&self) -> Option<NonNull<()>> {
        self.impl_ref().binding.get()
    }

    /// Binds `obj` to this tensor's `TensorImpl` (PyTorch's
    /// `PyObjectPreservation::get_or_init` after the wrapper was made):
    /// publishes it in the empty slot, then sets the handle count's
    /// has-binding bit, taking the object reference that rule 2 of the
    /// module documentation asks for if the count is already 2 or more.
    ///
    /// # Errors
    ///
    /// `Err(Some(existing))` if the slot already holds an object (nothing
    /// changes; use that one), `Err(None)` if no binding is registered.
    ///
    /// # Safety
    ///
    /// * `obj` must be an object of the registered binding
    ///   ([`register_binding`]) for which its `incref`/`decref` are sound;
    /// * `obj` must own one handle ([`Tensor`]) to this same `TensorImpl`,
    ///   and keep it for as long as it lives: it may drop that handle only
    ///   while being destroyed, and it may be destroyed only when no
    ///   reference taken by `incref` is outstanding;
    /// * it must not be bound to the same `TensorImpl` twice.
    pub unsafe fn bind_object(
        &self,
        obj: NonNull<()>,
    ) -> std::result::Result<(), Option<NonNull<()>>> {
        let vt = binding().ok_or(None)?;
        self.impl_ref().binding.try_set(obj).map_err(Some)?;
        // SAFETY: the slot now holds `obj`, a binding object valid for
        // `vt` (our caller's contract); the count word is this tensor's.
        unsafe { crate::impl_arc::ImplArc::set_binding_bit(&self.imp, vt, obj) };
        Ok(())
    }

    /// [`bind_object`](Self::bind_object) through exclusive access to the
    /// handle: when it is the only handle to its `TensorImpl` (what a view
    /// op or a factory just returned), no other thread can reach the
    /// `TensorImpl`, so the slot and the has-binding bit are written with
    /// plain stores instead of two compare-and-swaps (about 20 ns on the
    /// benchmark machine, per tensor a binding wraps). Otherwise it is
    /// `bind_object`. The same results and errors.
    ///
    /// # Safety
    ///
    /// As [`bind_object`](Self::bind_object).
    pub unsafe fn bind_object_mut(
        &mut self,
        obj: NonNull<()>,
    ) -> std::result::Result<(), Option<NonNull<()>>> {
        binding().ok_or(None)?;
        if crate::impl_arc::ImplArc::is_unique(&mut self.imp) {
            self.impl_ref().binding.set_unshared(obj).map_err(Some)?;
            // SAFETY: the slot now holds `obj`, which owns this handle (our
            // caller's contract), and the handle is the only one.
            unsafe { crate::impl_arc::ImplArc::set_binding_bit_unique(&mut self.imp) };
            return Ok(());
        }
        // SAFETY: forwarded (our caller's contract).
        unsafe { self.bind_object(obj) }
    }
}

#[cfg(test)]
mod tests {
    //! A fake binding (a reference-counted heap object holding a handle),
    //! exercised under Miri: edges, resurrection, freeing, threads.
    use super::*;
    use crate::{ScalarType, TensorOptions};
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;

    /// A binding object: a count of references and its own handle.
    struct Obj {
        refs: AtomicUsize,
        tensor: Mutex<Option<Tensor>>,
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
            // SAFETY: the last reference: the `Box` made in `new_obj` is
            // ours to free; its handle drops with it.
            let b = unsafe { Box::from_raw(o.as_ptr()) };
            b.freed.fetch_add(1, Ordering::SeqCst);
            drop(b);
        }
    }

    static VT: BindingVTable = BindingVTable { incref, decref };

    fn setup() {
        // SAFETY: `incref`/`decref` are sound for the `Obj`s of `new_obj`.
        unsafe { register_binding(&VT) }.unwrap();
    }

    /// A new object with one (Python-like) reference, owning `t`'s handle,
    /// bound to it.
    fn new_obj(t: Tensor, freed: &'static AtomicUsize) -> NonNull<()> {
        let probe = t.clone();
        let o = Box::new(Obj {
            refs: AtomicUsize::new(1),
            tensor: Mutex::new(Some(t)),
            freed,
        });
        let p = NonNull::from(Box::leak(o)).cast::<()>();
        // SAFETY: `p` owns a handle to the impl and lives until its last
        // reference goes (then `decref` frees it and its handle).
        unsafe { probe.bind_object(p) }.unwrap();
        p
    }

    fn refs(p: NonNull<()>) -> usize {
        // SAFETY: only called on live objects.
        unsafe { p.cast::<Obj>().as_ref() }
            .refs
            .load(Ordering::SeqCst)
    }

    fn handle(p: NonNull<()>) -> Tensor {
        // SAFETY: only called on live objects.
        let o = unsafe { p.cast::<Obj>().as_ref() };
        o.tensor.lock().unwrap().clone().unwrap()
    }

    /// An object owning `t`, bound through `bind_object_mut` on the handle
    /// it holds (as the Python package binds a new object).
    fn new_obj_mut(t: Tensor, freed: &'static AtomicUsize) -> NonNull<()> {
        let o = Box::new(Obj {
            refs: AtomicUsize::new(1),
            tensor: Mutex::new(Some(t)),
            freed,
        });
        let p = NonNull::from(Box::leak(o)).cast::<()>();
        // SAFETY: `p` is live (we hold its only reference).
        let o = unsafe { p.cast::<Obj>().as_ref() };
        let mut guard = o.tensor.lock().unwrap();
        let held = guard.as_mut().unwrap();
        // SAFETY: `p` owns this very handle and lives until its last
        // reference goes (then `decref` frees it and its handle).
        unsafe { held.bind_object_mut(p) }.unwrap();
        // A second bind finds the object.
        // SAFETY: as above (it changes nothing: the slot is taken).
        let again = unsafe { held.bind_object_mut(p) };
        assert_eq!(again, Err(Some(p)));
        drop(guard);
        p
    }

    #[test]
    fn bind_object_mut_on_the_only_handle_and_on_a_shared_one() {
        setup();
        static FREED: AtomicUsize = AtomicUsize::new(0);
        // The only handle: plain stores, no reference owed (count 1).
        let p = new_obj_mut(Tensor::zeros(&[2], ScalarType::Float).unwrap(), &FREED);
        assert_eq!(refs(p), 1);
        let h = handle(p);
        assert_eq!(h.binding_object(), Some(p));
        assert_eq!(
            refs(p),
            2,
            "the 1 -> 2 edge took a reference: the bit is set"
        );
        drop(h);
        assert_eq!(refs(p), 1, "the 2 -> 1 edge gave it back");
        // SAFETY: the object's own (Python-like) reference.
        unsafe { decref(p) };
        assert_eq!(FREED.load(Ordering::SeqCst), 1);

        // A shared handle: `bind_object`'s path, which takes the reference
        // that a count of 2 owes.
        static FREED2: AtomicUsize = AtomicUsize::new(0);
        let t = Tensor::zeros(&[2], ScalarType::Float).unwrap();
        let extra = t.clone();
        let q = new_obj_mut(t, &FREED2);
        assert_eq!(refs(q), 2);
        drop(extra);
        assert_eq!(refs(q), 1);
        // SAFETY: as above.
        unsafe { decref(q) };
        assert_eq!(FREED2.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn edges_keep_the_object_alive_while_rust_holds_the_impl() {
        setup();
        static FREED: AtomicUsize = AtomicUsize::new(0);
        let t = Tensor::empty(&[2, 3], TensorOptions::from(ScalarType::Float)).unwrap();
        let p = new_obj(t, &FREED);
        assert_eq!(refs(p), 1, "bound while unique: no extra reference");
        let held = handle(p); // 1 -> 2: the impl takes a reference
        assert_eq!(refs(p), 2);
        assert_eq!(held.binding_object(), Some(p));
        let more = held.clone(); // 2 -> 3: nothing
        assert_eq!(refs(p), 2);
        drop(more); // 3 -> 2: nothing
        assert_eq!(refs(p), 2);
        // The last "Python" reference goes: the object survives.
        // SAFETY: we own that reference.
        unsafe { decref(p) };
        assert_eq!(refs(p), 1);
        assert_eq!(FREED.load(Ordering::SeqCst), 0);
        // Read back: the same object.
        assert_eq!(held.binding_object(), Some(p));
        // The last Rust handle goes: 2 -> 1 frees the object, which drops
        // the impl's last handle.
        drop(held);
        assert_eq!(FREED.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn binding_a_shared_impl_takes_a_reference_and_views_start_empty() {
        setup();
        static FREED: AtomicUsize = AtomicUsize::new(0);
        let t = Tensor::empty(&[4], TensorOptions::from(ScalarType::Float)).unwrap();
        let rust_side = t.clone(); // shared before binding
        let p = new_obj(t, &FREED);
        assert_eq!(refs(p), 2, "count >= 2 when bound: the impl holds one");
        let v = rust_side.as_strided(&[2], &[1], None).unwrap();
        assert!(v.binding_object().is_none(), "a view is a new impl");
        let mut cow = rust_side.clone();
        // copy-on-write: a new impl
        cow.edit_metadata()
            .set_sizes_and_strides(&[1, 4], &[4, 1], None)
            .unwrap();
        assert!(cow.binding_object().is_none(), "a copy has an empty slot");
        // A second bind is refused with the existing object.
        // SAFETY: refused before anything is stored.
        let again = unsafe { rust_side.bind_object(NonNull::<u64>::dangling().cast()) };
        assert_eq!(again, Err(Some(p)));
        // SAFETY: we own the "Python" reference.
        unsafe { decref(p) };
        assert_eq!(FREED.load(Ordering::SeqCst), 0);
        drop(rust_side);
        // The view keeps its base (this impl) alive, and with it the
        // object (PyTorch: `v._base` is still the base's object).
        assert_eq!(FREED.load(Ordering::SeqCst), 0);
        assert_eq!(v.view_base().and_then(Tensor::binding_object), Some(p));
        drop(v);
        assert_eq!(FREED.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn edges_across_threads() {
        setup();
        static FREED: AtomicUsize = AtomicUsize::new(0);
        let t = Tensor::empty(&[1], TensorOptions::from(ScalarType::Float)).unwrap();
        let p = new_obj(t, &FREED);
        let held = handle(p);
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let h = held.clone();
                std::thread::spawn(move || {
                    for _ in 0..5 {
                        let c = h.clone();
                        drop(c);
                    }
                    h.binding_object().is_some()
                })
            })
            .collect();
        for th in threads {
            assert!(th.join().unwrap());
        }
        assert_eq!(refs(p), 2);
        // SAFETY: we own the "Python" reference.
        unsafe { decref(p) };
        drop(held);
        assert_eq!(FREED.load(Ordering::SeqCst), 1);
    }
}
