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
use crate::short_ops;
use crate::tensor::{as_tensor, wrap, PyTensor};

/// `op` applied to `t`'s handle (taken under its lock, run without it),
/// the result wrapped (preserved if it is an existing tensor, as `conj()`
/// of a real tensor is `t` itself).
fn derive<'py>(
    t: &Bound<'py, PyTensor>,
    op: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> PyResult<Bound<'py, PyTensor>> {
    let py = t.py();
    // `None`: the op gave the tensor itself (`conj()` of a real tensor),
    // whose object is `t`.
    let r = t
        .get()
        .with(py, |h| op(h).map(|r| (!r.is_same(h)).then_some(r)))?
        .py()?;
    match r {
        None => Ok(t.clone()),
        Some(r) => wrap(py, r),
    }
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
    short_ops::run(py, short_ops::copy_bytes(&view, &src), || {
        copy_api::copy_(&view, &src)
    })
}

/// Copies that resolve the bits may wait on storage locks: see
/// `short_ops`.
fn derive_copying<'py>(
    t: &Bound<'py, PyTensor>,
    op: fn(&Tensor) -> Result<Tensor>,
) -> PyResult<Bound<'py, PyTensor>> {
    let py = t.py();
    let h = t.get().handle(py)?;
    let r = short_ops::run(py, short_ops::bytes_of(&h), || op(&h))?;
    if r.is_same(&h) {
        // Nothing to resolve: the tensor itself, whose object is `t`.
        return Ok(t.clone());
    }
    wrap(py, r)
}

/// `t` itself when `needed` does not hold (the op has nothing to do),
/// else `run(t, op)`. The check runs under the object's lock without
/// taking a handle, since a handle of a tensor whose object is alive takes
/// and drops a reference to that object (the preservation edge), which
/// costs more than the whole call otherwise.
fn itself_unless<'py, F>(
    t: &Bound<'py, PyTensor>,
    needed: fn(&Tensor) -> bool,
    op: F,
    run: fn(&Bound<'py, PyTensor>, F) -> PyResult<Bound<'py, PyTensor>>,
) -> PyResult<Bound<'py, PyTensor>> {
    if t.get().with(t.py(), needed)? {
        run(t, op)
    } else {
        Ok(t.clone())
    }
}

fn is_complex(t: &Tensor) -> bool {
    t.dtype().is_complex()
}

type Op = fn(&Tensor) -> Result<Tensor>;

/// [`derive`] for `conj`: the tensor itself unless it is complex.
fn derive_if_complex<'py>(t: &Bound<'py, PyTensor>, op: Op) -> PyResult<Bound<'py, PyTensor>> {
    itself_unless(t, is_complex, op, derive)
}

/// [`derive_copying`] for `conj_physical`: the tensor itself unless it is
/// complex.
fn derive_copying_if_complex<'py>(
    t: &Bound<'py, PyTensor>,
    op: Op,
) -> PyResult<Bound<'py, PyTensor>> {
    itself_unless(t, is_complex, op, derive_copying)
}

/// [`derive_copying`] for `resolve_conj`: the tensor itself unless its
/// conjugate bit is set.
fn derive_copying_if_conj<'py>(t: &Bound<'py, PyTensor>, op: Op) -> PyResult<Bound<'py, PyTensor>> {
    itself_unless(t, Tensor::is_conj, op, derive_copying)
}

/// [`derive_copying`] for `resolve_neg`: the tensor itself unless its
/// negative bit is set.
fn derive_copying_if_neg<'py>(t: &Bound<'py, PyTensor>, op: Op) -> PyResult<Bound<'py, PyTensor>> {
    itself_unless(t, Tensor::is_neg, op, derive_copying)
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

    /// `Tensor.is_conj()`.
    fn is_conj(slf: &Bound<'_, Self>) -> PyResult<bool> {
        is_conj(slf)
    }

    /// `Tensor.is_neg()`.
    fn is_neg(slf: &Bound<'_, Self>) -> PyResult<bool> {
        is_neg(slf)
    }

    /// `Tensor.mH`: the conjugate transpose of the last two dims.
    #[getter(mH)]
    fn m_h<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        conj_transpose(slf, "mH", views::mh)
    }

    /// `Tensor.H`: the conjugate transpose of a matrix.
    #[getter(H)]
    fn h<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        conj_transpose(slf, "H", views::h)
    }
}

/// `Tensor.H` / `Tensor.mH` (`name`): `op` of `t`, after PyTorch's
/// `UserWarning` for a 0-dim tensor.
fn conj_transpose<'py>(
    t: &Bound<'py, PyTensor>,
    name: &str,
    op: fn(&Tensor) -> Result<Tensor>,
) -> PyResult<Bound<'py, PyTensor>> {
    let py = t.py();
    if t.get().with(py, |h| h.dim() == 0)? {
        let cat = py.get_type::<pyo3::exceptions::PyUserWarning>();
        let msg = format!("Tensor.{name} is deprecated on 0-D tensors. Consider using x.conj().");
        let msg = std::ffi::CString::new(msg).unwrap_or_default();
        PyErr::warn(py, &cat, &msg, 1)?;
    }
    derive(t, op)
}

/// The one-tensor ops that are both a `Tensor` method and a module
/// function (`t.conj()` and `torchcore.conj(t)`), and the module-only ones:
/// each written once, with how it runs (`derive`, or `derive_copying` for
/// the copies; the `derive_*if_*` forms give the tensor itself when there is
/// nothing to do), and the registration of the module functions.
macro_rules! unary_views {
    (
        methods { $($(#[$doc:meta])* $m:ident: $mhow:ident($mop:path);)* }
        functions { $($f:ident: $fhow:ident($fop:path);)* }
    ) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[$doc])*
                fn $m<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
                    $mhow(slf, $mop)
                }
            )*
        }

        /// The module-level forms of the methods above.
        mod function_forms {
            use super::*;
            $(
                #[doc = concat!("`torchcore.", stringify!($m), "(t)`.")]
                #[pyfunction]
                pub(super) fn $m<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
                    $mhow(t, $mop)
                }
            )*
            $(
                #[doc = concat!("`torchcore.", stringify!($f), "(t)`.")]
                #[pyfunction]
                pub(super) fn $f<'py>(t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyTensor>> {
                    $fhow(t, $fop)
                }
            )*
        }

        /// Adds the functions to `torchcore._C`.
        pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!(function_forms::$m, m)?)?;)*
            $(m.add_function(wrap_pyfunction!(function_forms::$f, m)?)?;)*
            m.add_function(wrap_pyfunction!(is_conj, m)?)?;
            m.add_function(wrap_pyfunction!(is_neg, m)?)?;
            Ok(())
        }
    };
}

unary_views! {
    methods {
        /// `Tensor.conj()`: a lazy conjugate of a complex tensor; `self` for
        /// other dtypes.
        conj: derive_if_complex(views::conj);
        /// `Tensor._conj()`: the conjugate bit flipped (complex only).
        _conj: derive(views::conj_view);
        /// `Tensor._neg_view()`: the negative bit flipped.
        _neg_view: derive(views::neg_view);
        /// `Tensor.resolve_conj()`: `self`, or a copy with the conjugate
        /// applied.
        resolve_conj: derive_copying_if_conj(views::resolve_conj);
        /// `Tensor.resolve_neg()`: `self`, or a copy with the negation applied.
        resolve_neg: derive_copying_if_neg(views::resolve_neg);
        /// `Tensor.conj_physical()`: a conjugated copy of a complex tensor;
        /// `self` for other dtypes.
        conj_physical: derive_copying_if_complex(views::conj_physical);
        /// `Tensor.adjoint()`: the conjugate transpose of the last two dims.
        adjoint: derive(views::adjoint);
    }
    functions {
        view_as_real: derive(views::view_as_real);
        view_as_complex: derive(views::view_as_complex);
        real: derive(views::real);
        imag: derive(views::imag);
    }
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
