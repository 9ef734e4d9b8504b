//! Python values of elements that a `Scalar` cannot carry, for `tolist()`
//! and `item()`: unsigned 16/32/64-bit ints (Python ints up to
//! 2**64 - 1), complex numbers of every width (Python `complex`), and the
//! float8 formats (Python `float`), as torch gives them.

use aten_shape::copy::to_dtype;
use c10_core::scalar_type::{Complex128, Complex64};
use c10_core::{ScalarType, Tensor};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyComplex;

use crate::convert::OrPy;
use crate::short_ops;

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
    /// Reads every element of `t`, row-major, with the GIL released when
    /// the read is long or would wait on the storage's lock (see
    /// `short_ops`); `None` for dtypes without a
    /// direct reading here (float8 formats: see [`flat_py_values`]).
    ///
    /// ```ignore
    /// let Some(Typed::Float(v)) = Typed::read(py, &t)? else { unreachable!() };
    /// ```
    pub(crate) fn read(py: Python<'_>, t: &Tensor) -> PyResult<Option<Typed>> {
        use half::{bf16, f16};
        use ScalarType as S;
        // One pass over the elements: a plain slice walk when the tensor
        // is contiguous (the common case; the strided walk costs several
        // times more per element), the strided walk otherwise.
        fn map<T: c10_core::Element, U>(
            t: &Tensor,
            f: impl Fn(T) -> U,
        ) -> c10_core::Result<Vec<U>> {
            let g = t.read::<T>()?;
            let mut out =
                c10_core::access::try_vec_with_capacity(t.numel().max(0) as u64, "tolist")?;
            match g.as_slice() {
                Ok(s) => out.extend(s.iter().map(|&x| f(x))),
                Err(_) => out.extend(g.iter().map(f)),
            }
            Ok(out)
        }
        short_ops::run(py, short_ops::bytes_of(t), || {
            Ok(Some(match t.dtype() {
                S::Bool => Typed::Bool(map(t, |b: bool| b)?),
                S::Long => Typed::Int(map(t, |x: i64| x)?),
                S::Int => Typed::Int(map::<i32, _>(t, i64::from)?),
                S::Short => Typed::Int(map::<i16, _>(t, i64::from)?),
                S::Char => Typed::Int(map::<i8, _>(t, i64::from)?),
                S::Byte => Typed::Int(map::<u8, _>(t, i64::from)?),
                S::UInt16 => Typed::Int(map::<u16, _>(t, i64::from)?),
                S::UInt32 => Typed::Int(map::<u32, _>(t, i64::from)?),
                S::UInt64 => Typed::UInt(map(t, |x: u64| x)?),
                S::Double => Typed::Float(map(t, |x: f64| x)?),
                S::Float => Typed::Float(map::<f32, _>(t, f64::from)?),
                S::Half => Typed::Float(map::<f16, _>(t, f64::from)?),
                S::BFloat16 => Typed::Float(map::<bf16, _>(t, f64::from)?),
                S::ComplexDouble => Typed::Complex(map(t, |c: Complex128| c)?),
                S::ComplexFloat => Typed::Complex(map(t, |c: Complex64| {
                    Complex128::new(f64::from(c.re), f64::from(c.im))
                })?),
                S::ComplexHalf | S::BComplex32 => Typed::Complex(
                    to_dtype(t, S::ComplexDouble).and_then(|c| c.to_vec::<Complex128>())?,
                ),
                _ => return Ok(None),
            }))
        })
    }

    /// Element `i` as a new Python object (a new reference), or null with
    /// a Python error set (out of memory). `i` must be below the count read.
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

    /// The innermost lists of `tolist()`: (count read) / `width` lists of `width`
    /// numbers each (`width` > 0), in order.
    pub(crate) fn rows<'py>(
        &self,
        py: Python<'py>,
        width: usize,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        // SAFETY: `rows_of`'s contract: the constructors in the closures take
        // plain values and return a new reference or null with an error set;
        // the GIL is held (`py`).
        unsafe {
            match self {
                Typed::Bool(v) => rows_of(py, v, width, |b| {
                    let o = if b { ffi::Py_True() } else { ffi::Py_False() };
                    ffi::Py_IncRef(o);
                    o
                }),
                Typed::Int(v) => rows_of(py, v, width, |x| ffi::PyLong_FromLongLong(x)),
                Typed::UInt(v) => rows_of(py, v, width, |x| ffi::PyLong_FromUnsignedLongLong(x)),
                Typed::Float(v) => rows_of(py, v, width, |x| ffi::PyFloat_FromDouble(x)),
                Typed::Complex(v) => {
                    rows_of(py, v, width, |c| ffi::PyComplex_FromDoubles(c.re, c.im))
                }
            }
        }
    }
}

/// Lists of `width` (> 0) objects made by `make` from consecutive values
/// (one match per call, not per element).
///
/// # Safety
///
/// `make` must return a new reference, or null with a Python error set;
/// the GIL must be held.
unsafe fn rows_of<'py, T: Copy>(
    py: Python<'py>,
    vals: &[T],
    width: usize,
    make: impl Fn(T) -> *mut ffi::PyObject,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let len = ffi::Py_ssize_t::try_from(width)
        .map_err(|_| pyo3::exceptions::PyMemoryError::new_err("list too long"))?;
    let direct = ListItems::direct(py);
    let mut rows = Vec::with_capacity(vals.len() / width);
    for chunk in vals.chunks_exact(width) {
        // SAFETY: `PyList_New` returns a new reference (or null with an
        // error); every slot is filled below before the list is used, and a
        // list dropped early (on error) tolerates its null slots.
        let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(len)) }?;
        // The new list's item array, where `PyList_SET_ITEM` writes, if the
        // layout check passed (`width` slots, all null).
        // SAFETY: `list` is a list object, and `direct` says its item array
        // pointer is the word `ListItems::WORD` of the object.
        let items = direct.then(|| unsafe { ListItems::of(list.as_ptr()) });
        for (j, &x) in chunk.iter().enumerate() {
            let o = make(x);
            if o.is_null() {
                return Err(PyErr::fetch(py));
            }
            match items {
                // SAFETY: `j` < `width`, the length `PyList_New` made the
                // array with, and slot `j` is still null: the list takes
                // over the new reference `o`, as `PyList_SET_ITEM` does.
                Some(items) => unsafe { items.add(j).write(o) },
                None => {
                    // SAFETY: `j` < `width`, the list's length;
                    // `PyList_SetItem` steals `o` (a new reference).
                    let r = unsafe { ffi::PyList_SetItem(list.as_ptr(), j as ffi::Py_ssize_t, o) };
                    if r != 0 {
                        return Err(PyErr::fetch(py));
                    }
                }
            }
        }
        rows.push(list);
    }
    Ok(rows)
}

/// Filling new lists through their item array, as CPython's own
/// `PyList_SET_ITEM` does, instead of one `PyList_SetItem` call per
/// element (its type and bounds checks and the release of the old, null,
/// item: about 15 of the 170 instructions an element of `tolist()` costs).
///
/// The limited API this abi3 package is built against hides the list
/// layout. The direct path is used only where that layout is known: on
/// the CPython releases whose headers this was checked against (3.10 to
/// 3.14, release builds: a debug build's objects carry two more pointers),
/// where a list object is exactly five words (`ob_refcnt`, `ob_type`,
/// `ob_size`, `ob_item`, `allocated`), which its `__basicsize__` must
/// confirm. On those, the first use also checks a list filled through the
/// API: its length word and item array must hold exactly the items that
/// were set. Anywhere else every item goes through `PyList_SetItem`, as
/// before.
pub(crate) struct ListItems;

impl ListItems {
    /// The item array pointer's place in a list object, in words
    /// (`ob_refcnt`, `ob_type`, `ob_size`, then `ob_item`).
    const WORD: usize = 3;

    /// Whether new lists are filled through their item array (measured
    /// once per process).
    pub(crate) fn direct(py: Python<'_>) -> bool {
        static DIRECT: PyOnceLock<bool> = PyOnceLock::new();
        // A measurement that fails (it cannot, short of a broken `sys`)
        // leaves the ordinary path on.
        crate::convert::fill_once(&DIRECT, py, || Ok(Self::measure(py).unwrap_or(false)))
            .is_ok_and(|d| *d)
    }

    /// The item array of the list object `list`.
    ///
    /// # Safety
    ///
    /// `list` is a live list object and [`direct`](Self::direct) returned
    /// true.
    unsafe fn of(list: *mut ffi::PyObject) -> *mut *mut ffi::PyObject {
        // SAFETY: the measurement found the item array pointer at word
        // `WORD`, inside the object's `__basicsize__` (our contract).
        unsafe {
            list.cast::<*mut *mut ffi::PyObject>()
                .add(Self::WORD)
                .read()
        }
    }

    /// Checks the layout on a list of three distinct objects set through
    /// the API (see the type's documentation).
    fn measure(py: Python<'_>) -> PyResult<bool> {
        let sys = py.import("sys")?;
        let cpython = sys
            .getattr("implementation")?
            .getattr("name")?
            .extract::<String>()?
            == "cpython";
        let version = sys.getattr("version_info")?;
        let major: u32 = version.getattr("major")?.extract()?;
        let minor: u32 = version.getattr("minor")?.extract()?;
        let debug_build = sys.hasattr("gettotalrefcount")?;
        let word = std::mem::size_of::<usize>();
        let basicsize: usize = py
            .get_type::<pyo3::types::PyList>()
            .getattr("__basicsize__")?
            .extract()?;
        if !cpython
            || major != 3
            || !(10..=14).contains(&minor)
            || debug_build
            || basicsize != (Self::WORD + 2) * word
        {
            return Ok(false);
        }
        let objs = [
            py.None(),
            1234567_i64.into_pyobject(py)?.into_any().unbind(),
            "torchcore".into_pyobject(py)?.into_any().unbind(),
        ];
        let list = pyo3::types::PyList::new(py, objs.iter().map(|o| o.bind(py)))?;
        let p = list.as_ptr();
        // SAFETY: `p` is a live list object of `__basicsize__` bytes, five
        // words (checked above), so words 2 and `WORD` are inside it; on
        // these releases they are `ob_size` and `ob_item`.
        let (size, items) = unsafe {
            (
                p.cast::<isize>().add(2).read(),
                p.cast::<*mut *mut ffi::PyObject>().add(Self::WORD).read(),
            )
        };
        if size != 3 || items.is_null() {
            return Ok(false);
        }
        // SAFETY: on these releases `items` is the list's `ob_item`, an
        // array of (length) 3 item pointers; reading them confirms it.
        let same = (0..3).all(|i| unsafe { items.add(i).read() } == objs[i].as_ptr());
        Ok(same)
    }
}
