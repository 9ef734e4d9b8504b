//! Zero-copy interchange: the DLPack Python protocol (`__dlpack__`,
//! `__dlpack_device__`, `from_dlpack`) over `torchcore_interop::dlpack`
//! (NumPy has its own direct path: `numpy_interop.rs`).

use std::ffi::{c_void, CStr};

use c10_core::Tensor;
use pyo3::exceptions::{PyBufferError, PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use torchcore_interop::dlpack::{self as dl, DLManagedTensor, DLManagedTensorVersioned};
use torchcore_interop::InteropError;

use crate::tensor::{wrap, PyTensor};

const NAME: &CStr = c"dltensor";
const USED: &CStr = c"used_dltensor";
const NAME_V: &CStr = c"dltensor_versioned";
const USED_V: &CStr = c"used_dltensor_versioned";

fn interop_err(e: InteropError) -> PyErr {
    match e {
        InteropError::Tensor(t) => crate::convert::to_py_err(t),
        InteropError::Dtype(m) | InteropError::Layout(m) => PyBufferError::new_err(m),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// A raw pointer carried out of a GIL-free section.
struct SendPtr<T>(*mut T);

// SAFETY: the managed tensor it points to is owned by whoever holds the
// pointer (it is handed over, never shared); `Tensor`s inside are `Send`.
unsafe impl<T> Send for SendPtr<T> {}

/// The capsule destructor of a classic export: frees the managed tensor
/// unless a consumer took it (and renamed the capsule).
unsafe extern "C" fn drop_classic(capsule: *mut ffi::PyObject) {
    // SAFETY: called by CPython with a live capsule (GIL held). Only an
    // unconsumed capsule still has the name "dltensor"; its pointer is then
    // the managed tensor from `to_dlpack`, which nobody else deletes.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, NAME.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(capsule, NAME.as_ptr()).cast::<DLManagedTensor>();
            if let Some(del) = (*m).deleter {
                del(m);
            }
        } else {
            ffi::PyErr_Clear();
        }
    }
}

/// As [`drop_classic`], for a versioned export.
unsafe extern "C" fn drop_versioned(capsule: *mut ffi::PyObject) {
    // SAFETY: as in `drop_classic`, for "dltensor_versioned".
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, NAME_V.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(capsule, NAME_V.as_ptr())
                .cast::<DLManagedTensorVersioned>();
            if let Some(del) = (*m).deleter {
                del(m);
            }
        } else {
            ffi::PyErr_Clear();
        }
    }
}

/// `tensor.__dlpack__(stream=None, max_version=None, ...)`: a capsule over
/// the tensor's memory (versioned when the consumer accepts DLPack 1.x).
/// The export pins the buffer until the consumer releases it.
pub(crate) fn export(
    py: Python<'_>,
    t: &Tensor,
    max_version: Option<(u32, u32)>,
) -> PyResult<Py<PyAny>> {
    let versioned = max_version.is_some_and(|(major, _)| major >= 1);
    let cap = if versioned {
        // The export reads the storage under its guard: without the GIL.
        let m = py
            .detach(|| dl::to_dlpack_versioned(t).map(SendPtr))
            .map_err(interop_err)?
            .0;
        // SAFETY: the pointer comes from `to_dlpack_versioned`, is live and
        // owned by the capsule from here on; the name is a static C string;
        // the destructor frees it only if no consumer took it.
        unsafe { ffi::PyCapsule_New(m.cast::<c_void>(), NAME_V.as_ptr(), Some(drop_versioned)) }
    } else {
        let m = py
            .detach(|| dl::to_dlpack(t).map(SendPtr))
            .map_err(interop_err)?
            .0;
        // SAFETY: as above, for `to_dlpack`'s classic managed tensor.
        unsafe { ffi::PyCapsule_New(m.cast::<c_void>(), NAME.as_ptr(), Some(drop_classic)) }
    };
    // SAFETY: `PyCapsule_New` returns a new reference or null with an
    // exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, cap) }.map(Bound::unbind)
}

/// Consumes a DLPack capsule: takes its managed tensor (renaming the
/// capsule so its destructor leaves it alone) and imports it zero-copy.
fn import_capsule(cap: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let p = cap.as_ptr();
    // SAFETY: `p` is a live object (GIL held); `PyCapsule_IsValid` accepts
    // any object. A valid "dltensor[_versioned]" capsule's pointer is a
    // managed tensor that the capsule's consumer (us) owns once it renames
    // the capsule; on import failure the name is restored so the
    // producer's destructor still frees it.
    unsafe {
        if ffi::PyCapsule_IsValid(p, NAME_V.as_ptr()) == 1 {
            let m =
                ffi::PyCapsule_GetPointer(p, NAME_V.as_ptr()).cast::<DLManagedTensorVersioned>();
            if ffi::PyCapsule_SetName(p, USED_V.as_ptr()) != 0 {
                return Err(PyErr::fetch(cap.py()));
            }
            return dl::from_dlpack_versioned(m).map_err(|e| {
                ffi::PyCapsule_SetName(p, NAME_V.as_ptr());
                interop_err(e)
            });
        }
        if ffi::PyCapsule_IsValid(p, NAME.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(p, NAME.as_ptr()).cast::<DLManagedTensor>();
            if ffi::PyCapsule_SetName(p, USED.as_ptr()) != 0 {
                return Err(PyErr::fetch(cap.py()));
            }
            return dl::from_dlpack(m).map_err(|e| {
                ffi::PyCapsule_SetName(p, NAME.as_ptr());
                interop_err(e)
            });
        }
    }
    Err(PyRuntimeError::new_err(
        "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, so you might have already constructed a tensor from it once.",
    ))
}

/// `torchcore.from_dlpack(obj)`: a tensor sharing `obj`'s memory (for a
/// `torchcore.Tensor`, a new tensor over the same memory, through its own
/// DLPack export, as in PyTorch).
#[pyfunction]
pub(crate) fn from_dlpack<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTensor>> {
    if obj.hasattr("__dlpack__")? {
        let kwargs = PyDict::new(py);
        kwargs.set_item("max_version", (1u32, 0u32))?;
        let cap = match obj.call_method("__dlpack__", (), Some(&kwargs)) {
            Ok(c) => c,
            Err(e) if e.is_instance_of::<PyTypeError>(py) => obj.call_method0("__dlpack__")?,
            Err(e) => return Err(e),
        };
        return wrap(py, import_capsule(&cap)?);
    }
    wrap(py, import_capsule(obj)?)
}

/// `__dlpack_device__`: `(device_type, index)` in DLPack's numbering.
pub(crate) fn device<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyTuple>> {
    let d = dl::device_to_dlpack(t.device()).map_err(interop_err)?;
    PyTuple::new(py, [d.device_type.0 as i64, d.device_id as i64])
}

/// Registers `from_dlpack` and `from_numpy`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(crate::numpy_interop::from_numpy, m)?)?;
    Ok(())
}
