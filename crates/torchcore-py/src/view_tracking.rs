//! View tracking on `torchcore.Tensor`: `_base` and `_is_view()`
//! (PyTorch's autograd view metadata, kept by c10-core in every view's
//! `TensorImpl`; see `c10_core::Tensor::view_base`).

use pyo3::prelude::*;

use crate::tensor::{wrap, PyTensor};

#[pymethods]
impl PyTensor {
    /// `Tensor._base`: the tensor this one is a view of (always the root
    /// of a chain of views), or `None`. The base's own Python object comes
    /// back (PyObject preservation), so `v._base is x` holds for
    /// `v = x.view(...)` even once the name `x` is gone.
    #[getter(_base)]
    fn view_base<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, PyTensor>>> {
        let py = slf.py();
        let base = slf.get().with(py, |t| t.view_base().cloned())?;
        base.map(|b| wrap(py, b)).transpose()
    }

    /// `Tensor._is_view()`: whether this tensor is a view of another.
    fn _is_view(slf: &Bound<'_, Self>) -> PyResult<bool> {
        slf.get().with(slf.py(), |t| t.is_view())
    }
}
