//! # torchcore-py
//!
//! The Python package `torchcore` (module `torchcore._C`): PyTorch's
//! `torch.Tensor` API for everything the Rust core implements (factories,
//! view ops, basic indexing, copies, in-place metadata ops, DLPack and
//! NumPy interchange), with PyTorch 2.15's **PyObject preservation**: a
//! `TensorImpl` that already has a Python object always comes back to
//! Python as that same object.
//!
//! Build and install it with maturin (`pip install ./crates/torchcore-py`);
//! `docs/python.md` is the user guide and describes the design:
//!
//! * every `TensorImpl` has a binding slot (`c10_core::binding`); the
//!   Python object ([`PyTensor`]) owns one handle to its `TensorImpl` and is
//!   published in that slot when it is made;
//! * the `TensorImpl` holds one Python reference to the object while any
//!   Rust handle other than the object's own exists (the handle count's
//!   1 → 2 and 2 → 1 edges call [`binding_incref`]/[`binding_decref`]), so
//!   the object (its `__dict__`, weak references, `id`) survives while Rust
//!   holds the tensor and dies with the last reference of either side;
//! * an in-place metadata op on an object whose `TensorImpl` Rust also
//!   holds copies the `TensorImpl` (copy-on-write), binds the copy to the
//!   same object and keeps the old one bound too ("retired"), so a Rust
//!   holder that hands the old `TensorImpl` back still gets this object,
//!   with the new metadata;
//! * the object is a `frozen` pyclass whose state sits behind its own lock,
//!   waited for with the GIL released and never held while Python code runs
//!   or across the GIL-free part of a read, so threads sharing a tensor wait
//!   for each other's in-place metadata ops instead of failing (no PyO3
//!   borrow errors or `PanicException`); other code reaches the handle
//!   through `PyTensor::handle` or `PyTensor::with`.
//!
//! This crate is not a default member of the workspace and has no Rust
//! tests (a test binary would need libpython); `cargo xtask test` builds it
//! and runs the Python suite in `tests/`.

mod buffer_import;
mod complex_views;
mod convert;
mod dlpack;
mod elements;
mod memory;
mod numpy_interop;
mod object_alloc;
mod random_fill;
mod serialization;
mod short_ops;
mod storage;
mod tensor;
mod view_tracking;

use std::ptr::NonNull;

use c10_core::binding::{register_binding, BindingVTable};
use pyo3::ffi;
use pyo3::prelude::*;

pub use tensor::PyTensor;

/// The binding's `incref` (c10's `PyInterpreterVTable::incref`): takes the
/// GIL (it may be called from any thread, with or without it) and adds a
/// reference. Does nothing once the interpreter is finalised (the object
/// is then leaked, as PyTorch does, rather than touching a dead runtime).
///
/// # Safety
///
/// `obj` must be a live Python object (a [`PyTensor`] bound to a tensor, or
/// a storage object bound to a storage).
pub unsafe fn binding_incref(obj: NonNull<()>) {
    // The common case: called from one of this module's own entry points
    // (a view made or dropped while Python calls us), on a thread pyo3
    // already counts as attached. pyo3's thread-local attach count answers
    // that for a few instructions, where `PyGILState_Ensure`/`Release`
    // cost about a hundred (the limited API has no `PyGILState_Check`).
    if Python::try_attach(|_| {
        // SAFETY: attached (the GIL is held); `obj` is a live object (our
        // contract).
        unsafe { ffi::Py_IncRef(obj.as_ptr().cast()) }
    })
    .is_some()
    {
        return;
    }
    // SAFETY: `Py_IsInitialized` may be called at any time; the GIL state
    // API may be called from any thread while the interpreter is
    // initialised; `obj` is a live object (our contract), and the GIL is
    // held around the increment.
    unsafe {
        if ffi::Py_IsInitialized() == 0 {
            return;
        }
        let gil = ffi::PyGILState_Ensure();
        ffi::Py_IncRef(obj.as_ptr().cast());
        ffi::PyGILState_Release(gil);
    }
}

/// The binding's `decref`: takes the GIL and removes a reference, which may
/// free the object (and so drop its own handle). Does nothing once the
/// interpreter is finalised.
///
/// # Safety
///
/// `obj` must be a live Python object on which the caller owns a reference.
pub unsafe fn binding_decref(obj: NonNull<()>) {
    // The attached fast path, as in `binding_incref`.
    if Python::try_attach(|_| {
        // SAFETY: attached; the caller gives up the reference.
        unsafe { ffi::Py_DecRef(obj.as_ptr().cast()) }
    })
    .is_some()
    {
        return;
    }
    // SAFETY: as in `binding_incref`; the caller gives up the reference.
    unsafe {
        if ffi::Py_IsInitialized() == 0 {
            return;
        }
        let gil = ffi::PyGILState_Ensure();
        ffi::Py_DecRef(obj.as_ptr().cast());
        ffi::PyGILState_Release(gil);
    }
}

/// The process's binding table (one Python interpreter per process, as in
/// PyTorch 2.15).
static VTABLE: BindingVTable = BindingVTable {
    incref: binding_incref,
    decref: binding_decref,
};

/// The storage binding table: the same functions (any live Python object),
/// for `StorageImpl`s' slots (`c10_storage::binding`).
static STORAGE_VTABLE: c10_storage::binding::BindingVTable = c10_storage::binding::BindingVTable {
    incref: binding_incref,
    decref: binding_decref,
};

/// The extension module `torchcore._C`.
#[pymodule]
#[pyo3(name = "_C")]
fn torchcore_c(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // SAFETY: the only pointers ever bound (`tensor::wrap`) are `PyTensor`
    // objects, which own a handle to their `TensorImpl` until they are
    // deallocated; `binding_incref`/`binding_decref` are sound for any live
    // Python object from any thread (they take the GIL).
    unsafe { register_binding(&VTABLE) }.map_err(convert::to_py_err)?;
    // SAFETY: the only pointers ever bound to storages (`storage::bind`)
    // are `StorageBase` objects, which own a handle to their `StorageImpl`
    // until they are deallocated; the functions are sound for any live
    // Python object from any thread.
    if unsafe { c10_storage::binding::register_binding(&STORAGE_VTABLE) }.is_err() {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "a different storage binding is already registered in this process",
        ));
    }
    tensor::register(m)?;
    storage::register(m)?;
    complex_views::register(m)?;
    dlpack::register(m)?;
    serialization::register(m)?;
    memory::register(m)?;
    random_fill::register(m)?;
    buffer_import::register(m)?;
    short_ops::register(m)?;
    Ok(())
}
