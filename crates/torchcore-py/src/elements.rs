//! Python values of elements that a `Scalar` cannot carry, for `tolist()`
//! and `item()`: unsigned 16/32/64-bit ints (Python ints up to
//! 2**64 - 1), complex numbers of every width (Python `complex`), and the
//! float8 formats (Python `float`), as torch gives them.

use aten_shape::copy::to_dtype;
use c10_core::scalar_type::Complex128;
use c10_core::{ScalarType, Tensor};
use pyo3::ffi;
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

/// A tensor's elements read out in one pass, in the widest type each
/// Python number needs (`int` ← `i64`/`u64`, `float` ← `f64`, `complex` ←
/// two `f64`), for `tolist()` and `item()`: typed vectors, then one Python
/// object per element made straight from them (no intermediate `Scalar`s
/// or object vectors).
pub(crate) enum Typed {
    Bool(Vec<bool>),
    Int(Vec<i64>),
    UInt(Vec<u64>),
    Float(Vec<f64>),
    Complex(Vec<Complex128>),
}

impl Typed {
    /// Reads every element of `t`, row-major, with the GIL released (the
    /// read may wait on the storage's lock); `None` for dtypes without a
    /// direct reading here (float8 formats: see [`flat_py_values`]).
    ///
    /// ```ignore
    /// let Some(Typed::Float(v)) = Typed::read(py, &t)? else { unreachable!() };
    /// ```
    pub(crate) fn read(py: Python<'_>, t: &Tensor) -> PyResult<Option<Typed>> {
        use half::{bf16, f16};
        use ScalarType as S;
        fn map<T: c10_core::Element, U>(
            t: &Tensor,
            f: impl Fn(T) -> U,
        ) -> c10_core::Result<Vec<U>> {
            Ok(t.to_vec::<T>()?.into_iter().map(f).collect())
        }
        py.detach(|| {
            Ok(Some(match t.dtype() {
                S::Bool => Typed::Bool(t.to_vec::<bool>()?),
                S::Long => Typed::Int(t.to_vec::<i64>()?),
                S::Int => Typed::Int(map::<i32, _>(t, i64::from)?),
                S::Short => Typed::Int(map::<i16, _>(t, i64::from)?),
                S::Char => Typed::Int(map::<i8, _>(t, i64::from)?),
                S::Byte => Typed::Int(map::<u8, _>(t, i64::from)?),
                S::UInt16 => Typed::Int(map::<u16, _>(t, i64::from)?),
                S::UInt32 => Typed::Int(map::<u32, _>(t, i64::from)?),
                S::UInt64 => Typed::UInt(t.to_vec::<u64>()?),
                S::Double => Typed::Float(t.to_vec::<f64>()?),
                S::Float => Typed::Float(map::<f32, _>(t, f64::from)?),
                S::Half => Typed::Float(map::<f16, _>(t, f64::from)?),
                S::BFloat16 => Typed::Float(map::<bf16, _>(t, f64::from)?),
                S::ComplexDouble => Typed::Complex(t.to_vec::<Complex128>()?),
                S::ComplexHalf | S::BComplex32 | S::ComplexFloat => Typed::Complex(
                    to_dtype(t, S::ComplexDouble).and_then(|c| c.to_vec::<Complex128>())?,
                ),
                _ => return Ok(None),
            }))
        })
        .py()
    }

    /// How many elements were read.
    pub(crate) fn len(&self) -> usize {
        match self {
            Typed::Bool(v) => v.len(),
            Typed::Int(v) => v.len(),
            Typed::UInt(v) => v.len(),
            Typed::Float(v) => v.len(),
            Typed::Complex(v) => v.len(),
        }
    }

    /// Element `i` as a new Python object (a new reference), or null with
    /// a Python error set (out of memory). `i` must be below `len()`.
    fn object(&self, i: usize) -> *mut ffi::PyObject {
        // SAFETY: the constructors take plain values and return a new
        // reference or null with an exception set; the bool singletons are
        // immortal or kept alive by the new reference taken here. The GIL
        // is held by the callers (they hold a `Python` token).
        unsafe {
            match self {
                Typed::Bool(v) => {
                    let b = if v[i] {
                        ffi::Py_True()
                    } else {
                        ffi::Py_False()
                    };
                    ffi::Py_IncRef(b);
                    b
                }
                Typed::Int(v) => ffi::PyLong_FromLongLong(v[i]),
                Typed::UInt(v) => ffi::PyLong_FromUnsignedLongLong(v[i]),
                Typed::Float(v) => ffi::PyFloat_FromDouble(v[i]),
                Typed::Complex(v) => ffi::PyComplex_FromDoubles(v[i].re, v[i].im),
            }
        }
    }

    /// Element `i` as a Python number (`item()`, 0-d `tolist()`).
    pub(crate) fn get<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: `object` returns a new reference or null with an error.
        unsafe { Bound::from_owned_ptr_or_err(py, self.object(i)) }
    }

    /// The innermost lists of `tolist()`: `len() / width` lists of `width`
    /// numbers each (`width` > 0), in order.
    pub(crate) fn rows<'py>(
        &self,
        py: Python<'py>,
        width: usize,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let count = self.len() / width;
        let mut rows = Vec::with_capacity(count);
        for r in 0..count {
            let len = ffi::Py_ssize_t::try_from(width)
                .map_err(|_| pyo3::exceptions::PyMemoryError::new_err("list too long"))?;
            // SAFETY: `PyList_New` returns a new reference (or null with an
            // error); every slot is filled below before the list is used.
            let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(len)) }?;
            for j in 0..width {
                let x = self.object(r * width + j);
                if x.is_null() {
                    return Err(PyErr::fetch(py));
                }
                // SAFETY: `list` is a fresh list of `width` slots and `j` <
                // `width`; `PyList_SetItem` steals `x` (a new reference).
                // The slots not yet set are null, which a list being
                // dropped early (on error) tolerates.
                if unsafe { ffi::PyList_SetItem(list.as_ptr(), j as ffi::Py_ssize_t, x) } != 0 {
                    return Err(PyErr::fetch(py));
                }
            }
            rows.push(list);
        }
        Ok(rows)
    }
}
