//! Python values of elements that a `Scalar` cannot carry, for `tolist()`
//! and `item()`: unsigned 16/32/64-bit ints (Python ints up to
//! 2**64 - 1), complex numbers of every width (Python `complex`), and the
//! float8 formats (Python `float`), as torch gives them.

use aten_shape::copy::to_dtype;
use c10_core::scalar_type::Complex128;
use c10_core::{ScalarType, Tensor};
use pyo3::prelude::*;
use pyo3::types::PyComplex;

use crate::convert::OrPy;

/// Every element of `t`, row-major, as Python objects, for the dtypes
/// above; `None` for the others (read through `convert::flat_values`).
/// The storage is read with the GIL released.
///
/// ```ignore
/// // torchcore.tensor([1, 2], dtype=torchcore.uint64).tolist() == [1, 2]
/// let vals = flat_py_values(py, &t)?.unwrap();
/// ```
pub(crate) fn flat_py_values(py: Python<'_>, t: &Tensor) -> PyResult<Option<Vec<Py<PyAny>>>> {
    use ScalarType as S;
    let ints = |v: Vec<u64>| -> PyResult<Vec<Py<PyAny>>> {
        v.into_iter()
            .map(|x| Ok(x.into_pyobject(py)?.into_any().unbind()))
            .collect()
    };
    Ok(Some(match t.dtype() {
        S::UInt16 => ints(widen(py.detach(|| t.to_vec::<u16>()).py()?))?,
        S::UInt32 => ints(widen(py.detach(|| t.to_vec::<u32>()).py()?))?,
        S::UInt64 => ints(py.detach(|| t.to_vec::<u64>()).py()?)?,
        S::ComplexHalf | S::BComplex32 | S::ComplexFloat | S::ComplexDouble => {
            let vals = py
                .detach(|| to_dtype(t, S::ComplexDouble).and_then(|c| c.to_vec::<Complex128>()))
                .py()?;
            vals.into_iter()
                .map(|c| PyComplex::from_doubles(py, c.re, c.im).into_any().unbind())
                .collect()
        }
        S::Float8_e4m3fn
        | S::Float8_e5m2
        | S::Float8_e4m3fnuz
        | S::Float8_e5m2fnuz
        | S::Float8_e8m0fnu => {
            let vals = py
                .detach(|| to_dtype(t, S::Double).and_then(|d| d.to_vec::<f64>()))
                .py()?;
            vals.into_iter()
                .map(|x| Ok(x.into_pyobject(py)?.into_any().unbind()))
                .collect::<PyResult<_>>()?
        }
        _ => return Ok(None),
    }))
}

fn widen<T: Into<u64>>(v: Vec<T>) -> Vec<u64> {
    v.into_iter().map(Into::into).collect()
}
