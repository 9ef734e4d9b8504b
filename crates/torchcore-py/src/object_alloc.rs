//! New `torchcore.Tensor` objects straight from the type's `tp_alloc`.
//!
//! PyO3 makes an object of a `#[pyclass]` by calling its base type's
//! `tp_new` (`object.__new__`), then writing the Rust value into the object.
//! On CPython 3.11 and 3.12, `object.__new__` of a type with a `__dict__`
//! slot also creates the instance's (empty) `__dict__` eagerly, and that
//! dictionary is freed again with the object: about 250 of the 1,800
//! instructions of a call like `t[2:]`, for a dictionary that almost no
//! tensor ever uses. PyTorch's own `THPVariable` objects come from
//! `tp_alloc` and get their `__dict__` on first use; CPython 3.13 went back
//! to that too.
//!
//! [`TensorAlloc`] does what PyTorch does for `torchcore.Tensor` itself (not
//! for Python subclasses, whose objects keep coming from PyO3): it calls the
//! type's `tp_alloc` (`PyType_GenericAlloc`, which returns zeroed memory)
//! and moves the [`PyTensor`] into it. CPython makes the `__dict__` when an
//! attribute is first set or `__dict__` first read, as for any object whose
//! dictionary slot is still empty.
//!
//! That relies on the object's layout, which PyO3 does not document, so
//! nothing about it is assumed: [`TensorAlloc::init`] measures it once, at
//! import, on an object PyO3 made, and turns the fast path on only if the
//! type's `__basicsize__`, `__dictoffset__` and `__weakrefoffset__` show
//! exactly the Python object header, the `PyTensor` value and the two
//! pointer slots (which an empty object holds as null, the zeroes
//! `tp_alloc` writes), and the type's `tp_alloc` is `PyType_GenericAlloc`.
//! Otherwise every object comes from PyO3, as before.

use std::ffi::c_void;
use std::mem::{align_of, size_of};
use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::PyTypeInfo;

use crate::tensor::PyTensor;

/// Where the [`PyTensor`] value sits in a `torchcore.Tensor` object, once
/// measured: `Some(offset)` when the fast path is on.
static VALUE_OFFSET: OnceLock<Option<usize>> = OnceLock::new();

/// The allocator of new `torchcore.Tensor` objects (see the module docs).
pub(crate) struct TensorAlloc;

impl TensorAlloc {
    /// Measures the object layout (once per process; see the module docs).
    /// Called at import, after the class is registered.
    pub(crate) fn init(py: Python<'_>) -> PyResult<()> {
        if VALUE_OFFSET.get().is_none() {
            let offset = measure(py)?;
            let _ = VALUE_OFFSET.set(offset);
        }
        Ok(())
    }

    /// Whether new objects skip `object.__new__` (for the tests: on every
    /// CPython this package supports).
    pub(crate) fn fast_path_enabled() -> bool {
        matches!(VALUE_OFFSET.get(), Some(Some(_)))
    }

    /// A new `torchcore.Tensor` object holding `value`.
    pub(crate) fn new_object(py: Python<'_>, value: PyTensor) -> PyResult<Bound<'_, PyTensor>> {
        let Some(&Some(offset)) = VALUE_OFFSET.get() else {
            return Bound::new(py, value);
        };
        let ty = PyTensor::type_object_raw(py);
        // SAFETY: the GIL is held; `ty` is `torchcore.Tensor`'s type object,
        // alive for the life of the module, and its `tp_alloc` is
        // `PyType_GenericAlloc` (checked by `measure`).
        let obj = unsafe { ffi::PyType_GenericAlloc(ty, 0) };
        if obj.is_null() {
            return Err(PyErr::fetch(py));
        }
        // SAFETY: `obj` is a new, zeroed object of `__basicsize__` bytes, of
        // which `offset .. offset + size_of::<PyTensor>()` is where PyO3
        // keeps the value (measured by `measure`, aligned for `PyTensor`);
        // every other byte after the header is one of the two pointer slots,
        // which PyO3 leaves null in an object without `__dict__` or weak
        // references. Nothing has seen the object yet (no Python code or
        // allocation ran since `tp_alloc`, so not even the garbage
        // collector), and once the value is written it is exactly the object
        // PyO3 would have made, down to its deallocation.
        unsafe {
            obj.cast::<u8>().add(offset).cast::<PyTensor>().write(value);
            Ok(Bound::from_owned_ptr(py, obj).cast_into_unchecked())
        }
    }
}

/// The value's offset in a `torchcore.Tensor` object if the layout is the
/// one `new_object` builds (see the module docs), else `None`.
fn measure(py: Python<'_>) -> PyResult<Option<usize>> {
    let ty = py.get_type::<PyTensor>();
    let attr = |name: &str| -> PyResult<usize> { ty.getattr(name)?.extract::<usize>() };
    let basicsize = attr("__basicsize__")?;
    let dictoffset = attr("__dictoffset__")?;
    let weaklistoffset = attr("__weakrefoffset__")?;
    // An object PyO3 made, to see where it puts the value.
    let probe = Bound::new(py, PyTensor::probe().map_err(crate::convert::to_py_err)?)?;
    let offset = (std::ptr::from_ref(probe.get()) as usize).wrapping_sub(probe.as_ptr() as usize);
    drop(probe);
    let ptr = size_of::<*mut ffi::PyObject>();
    let value_end = offset.checked_add(size_of::<PyTensor>());
    let slots = [
        dictoffset.min(weaklistoffset),
        dictoffset.max(weaklistoffset),
    ];
    let exact = value_end.is_some_and(|end| {
        offset == size_of::<ffi::PyObject>()
            && offset.is_multiple_of(align_of::<PyTensor>())
            && slots == [end, end + ptr]
            && basicsize == end + 2 * ptr
    });
    // SAFETY: `ty` is a live type object and the GIL is held; reading a slot
    // of a heap type is always allowed.
    let alloc = unsafe { ffi::PyType_GetSlot(ty.as_type_ptr(), ffi::Py_tp_alloc) };
    let generic = alloc == ffi::PyType_GenericAlloc as *mut c_void;
    Ok((exact && generic).then_some(offset))
}
