//! Complex views and the conjugate / negative bits on `torchcore.Tensor`
//! and as `torchcore` functions: `real` / `imag` (with setters that write
//! through), `view_as_real`, `view_as_complex`, `conj`, `_conj`,
//! `_neg_view`, `is_conj`, `is_neg`, `resolve_conj`, `resolve_neg`,
//! `conj_physical`, `adjoint`, `H`, `mH` (the Rust ops are in
//! `aten_shape::views`, family module `ops/complex.rs`).

use aten_shape::copy as copy_api;
use aten_shape::views;
use c10_core::{Result, Tensor};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::convert::OrPy;
use crate::tensor::{as_tensor, wrap, PyTensor};

/// `op` applied to `t`'s handle (taken under its lock, run without it),
/// the result wrapped (preserved if it is an existing tensor, as `conj()`
/// of a real tensor is `t` itself).
fn derive<'py>(
    t: &Bound<'py, PyTensor>,
    op: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> PyResult<Bound<'py, PyTensor>> {
    let py = t.py();
    let h = t.get().handle(py)?;
    let r = op(&h).py()?;
    wrap(py, r)
}

/// `t.real = value` / `t.imag = value`: `value` (a tensor or a number)
/// copied into the view `part` makes of `t`, as PyTorch's setters do.
fn set_part(
    slf: &Bound<'_, PyTensor>,
    value: Option<&Bound<'_, PyAny>>,
    part: fn(&Tensor) -> Result<Tensor>,
    name: &str,
) -> PyResult<()> {
    let Some(value) = value else {
        return Err(PyTypeError::new_err(format!(
            "attribute '{name}' of 'torch._C.TensorBase' objects is not writable"
        )));
    };
    let py = slf.py();
    let t = slf.get().handle(py)?;
    let view = part(&t).py()?;
    let src = as_tensor(value)?;
    py.detach(|| copy_api::copy_(&view, &src)).py()
}

/// Copies that resolve the bits may wait on storage locks: without the GIL.
fn derive_nogil<'py>(
    t: &Bound<'py, PyTensor>,
    op: fn(&Tensor) -> Result<Tensor>,
) -> PyResult<Bound<'py, PyTensor>> {
    let py = t.py();
    let h = t.get().handle(py)?;
    let r = py.detach(|| op(&h)).py()?;
    wrap(py, r)
}

#[pymethods]
impl PyTensor {
    /// `Tensor.real`: the real parts of a complex tensor (a view); the
    /// tensor itself otherwise.
    #[getter(real)]
    fn real_part<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        derive(slf, views::real)
    }

    /// `t.real = value`: copies `value` into `t.real`.
    #[setter(real)]
    fn set_real_part(slf: &Bound<'_, Self>, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        set_part(slf, value, views::real, "real")
    }

    /// `Tensor.imag`: the imaginary parts of a complex tensor (a view;
    /// `TypeError` for other dtypes).
    #[getter(imag)]
    fn imag_part<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        derive(slf, views::imag)
    }

    /// `t.imag = value`: copies `value` into `t.imag`.
    #[setter(imag)]
    fn set_imag_part(slf: &Bound<'_, Self>, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        set_part(slf, value, views::imag, "imag")
    }

    /// `Tensor.conj()`: a lazy conjugate of a complex tensor; `self` for
    /// other dtypes.
    fn conj<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        derive(slf, views::conj)
    }

    /// `Tensor._conj()`: the conjugate bit flipped (complex only).
    fn _conj<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        derive(slf, views::conj_view)
    }

    /// `Tensor._neg_view()`: the negative bit flipped.
    fn _neg_view<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        derive(slf, views::neg_view)
    }

    /// `Tensor.is_conj()`.
    fn is_conj(slf: &Bound<'_, Self>) -> PyResult<bool> {
        slf.get().with(slf.py(), Tensor::is_conj)
    }

    /// `Tensor.is_neg()`.
    fn is_neg(slf: &Bound<'_, Self>) -> PyResult<bool> {
        slf.get().with(slf.py(), Tensor::is_neg)
    }

    /// `Tensor.resolve_conj()`: `self`, or a copy with the conjugate
    /// applied.
    fn resolve_conj<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        derive_nogil(slf, views::resolve_conj)
    }

    /// `Tensor.resolve_neg()`: `self`, or a copy with the negation applied.
    fn resolve_neg<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        derive_nogil(slf, views::resolve_neg)
    }

    /// `Tensor.conj_physical()`: a conjugated copy of a complex tensor;
    /// `self` for other dtypes.
    fn conj_physical<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        derive_nogil(slf, views::conj_physical)
    }

    /// `Tensor.adjoint()`: the conjugate transpose of the last two dims.
    fn adjoint<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        derive(slf, views::adjoint)
    }

    /// `Tensor.mH`: the conjugate transpose of the last two dims.
    #[getter(mH)]
    fn m_h<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        deprecated_0d(
            slf,
            "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().",
        )?;
        derive(slf, views::mh)
    }

    /// `Tensor.H`: the conjugate transpose of a matrix.
    #[getter(H)]
    fn h<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        deprecated_0d(
            slf,
            "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
        )?;
        derive(slf, views::h)
    }
}

/// PyTorch's `UserWarning` for `H` / `mH` of a 0-dim tensor.
fn deprecated_0d(t: &Bound<'_, PyTensor>, msg: &str) -> PyResult<()> {
    let py = t.py();
    if t.get().with(py, |h| h.dim() == 0)? {
        let cat = py.get_type::<pyo3::exceptions::PyUserWarning>();
        let msg = std::ffi::CString::new(msg).unwrap_or_default();
        PyErr::warn(py, &cat, &msg, 1)?;
    }
    Ok(())
}

/// `torchcore.view_as_real(t)`.
#[pyfunction]
fn view_as_real<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
    derive(t, views::view_as_real)
}

/// `torchcore.view_as_complex(t)`.
#[pyfunction]
fn view_as_complex<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
    derive(t, views::view_as_complex)
}

/// `torchcore.real(t)`.
#[pyfunction]
fn real<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
    derive(t, views::real)
}

/// `torchcore.imag(t)`.
#[pyfunction]
fn imag<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
    derive(t, views::imag)
}

/// `torchcore.conj(t)`.
#[pyfunction]
fn conj<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
    derive(t, views::conj)
}

/// `torchcore._conj(t)`.
#[pyfunction]
fn _conj<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
    derive(t, views::conj_view)
}

/// `torchcore._neg_view(t)`.
#[pyfunction]
fn _neg_view<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
    derive(t, views::neg_view)
}

/// `torchcore.is_conj(t)`.
#[pyfunction]
fn is_conj(t: &Bound<'_, PyTensor>) -> PyResult<bool> {
    t.get().with(t.py(), Tensor::is_conj)
}

/// `torchcore.is_neg(t)`.
#[pyfunction]
fn is_neg(t: &Bound<'_, PyTensor>) -> PyResult<bool> {
    t.get().with(t.py(), Tensor::is_neg)
}

/// `torchcore.resolve_conj(t)`.
#[pyfunction]
fn resolve_conj<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
    derive_nogil(t, views::resolve_conj)
}

/// `torchcore.resolve_neg(t)`.
#[pyfunction]
fn resolve_neg<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
    derive_nogil(t, views::resolve_neg)
}

/// `torchcore.conj_physical(t)`.
#[pyfunction]
fn conj_physical<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
    derive_nogil(t, views::conj_physical)
}

/// `torchcore.adjoint(t)`.
#[pyfunction]
fn adjoint<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
    derive(t, views::adjoint)
}

/// Adds the functions to `torchcore._C`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(view_as_real, m)?,
        wrap_pyfunction!(view_as_complex, m)?,
        wrap_pyfunction!(real, m)?,
        wrap_pyfunction!(imag, m)?,
        wrap_pyfunction!(conj, m)?,
        wrap_pyfunction!(_conj, m)?,
        wrap_pyfunction!(_neg_view, m)?,
        wrap_pyfunction!(is_conj, m)?,
        wrap_pyfunction!(is_neg, m)?,
        wrap_pyfunction!(resolve_conj, m)?,
        wrap_pyfunction!(resolve_neg, m)?,
        wrap_pyfunction!(conj_physical, m)?,
        wrap_pyfunction!(adjoint, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
