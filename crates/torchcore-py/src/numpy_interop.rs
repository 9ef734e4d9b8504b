//! NumPy without detours: `from_numpy`, `Tensor.numpy()` and `__array__`
//! share memory through NumPy's own C interface (the `_ARRAY_API` function
//! table and the `PyArrayObject` fields, both stable across NumPy 1.x and
//! 2.x), as PyTorch does, instead of a DLPack capsule round trip.
//!
//! Lifetimes: an imported tensor's storage owns a reference to the array
//! (dropped with the storage); an exported array's `base` is a
//! [`NumpyBase`] that owns a clone of the tensor and a pin of its buffer,
//! so the buffer neither dies nor moves (`resize_` refuses) while the array
//! lives.
//!
//! ```python
//! import numpy as np, torchcore as tc
//! a = np.arange(3.0)
//! t = tc.from_numpy(a)      # same memory
//! t[0] = 7.0
//! assert a[0] == 7.0
//! ```

use std::ffi::{c_char, c_int, c_long, c_void};

use c10_core::{DeviceType, ScalarType, Tensor};
use c10_storage::{BufferPin, DataPtr, Device, Storage};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyCapsule;

use crate::tensor::{wrap, PyTensor};

/// `NPY_ARRAY_WRITEABLE`.
const WRITEABLE: c_int = 0x0400;
/// `NPY_ARRAY_ALIGNED`.
const ALIGNED: c_int = 0x0100;

/// The leading fields of NumPy's `PyArrayObject_fields` (unchanged since
/// NumPy 1.7; NumPy 2 kept them).
#[repr(C)]
struct ArrayFields {
    ob_base: ffi::PyObject,
    data: *mut c_char,
    nd: c_int,
    dimensions: *const isize,
    strides: *const isize,
    base: *mut ffi::PyObject,
    descr: *const DescrFields,
    flags: c_int,
}

/// The leading fields of `PyArray_Descr`, laid out alike in NumPy 1.x and
/// 2.x up to `type_num` (what follows differs, and is not read).
#[repr(C)]
struct DescrFields {
    ob_base: ffi::PyObject,
    typeobj: *mut ffi::PyTypeObject,
    kind: c_char,
    ty: c_char,
    byteorder: c_char,
    flags: c_char,
    type_num: c_int,
}

/// NumPy's C function table, read once per process.
struct Api(*const *const c_void);

// SAFETY: the table is immutable static data of the NumPy module, which is
// never unloaded once imported.
unsafe impl Send for Api {}
// SAFETY: as above: only read.
unsafe impl Sync for Api {}

static API: PyOnceLock<Api> = PyOnceLock::new();

fn api(py: Python<'_>) -> PyResult<&'static Api> {
    API.get_or_try_init(py, || {
        let m = py
            .import("numpy._core.multiarray")
            .or_else(|_| py.import("numpy.core.multiarray"))?;
        let cap = m.getattr("_ARRAY_API")?.cast_into::<PyCapsule>()?;
        // SAFETY: `_ARRAY_API` is an unnamed capsule whose pointer is the
        // C-API table (`void **`); the module keeps it alive forever.
        let p = unsafe { ffi::PyCapsule_GetPointer(cap.as_ptr(), std::ptr::null()) };
        if p.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok(Api(p.cast()))
    })
}

impl Api {
    /// Entry `i` of the table (NumPy's `__multiarray_api.h` numbering).
    fn entry(&self, i: usize) -> *const c_void {
        // SAFETY: every index used below is below the table's length in
        // every NumPy since 1.7 (the highest is 282, `PyArray_SetBaseObject`).
        unsafe { *self.0.add(i) }
    }

    /// `&PyArray_Type`.
    fn array_type(&self) -> *mut ffi::PyTypeObject {
        self.entry(2).cast_mut().cast()
    }
}

type DescrFromType = unsafe extern "C" fn(c_int) -> *mut ffi::PyObject;
type NewFromDescr = unsafe extern "C" fn(
    *mut ffi::PyTypeObject,
    *mut ffi::PyObject,
    c_int,
    *const isize,
    *const isize,
    *mut c_void,
    c_int,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;
type SetBaseObject = unsafe extern "C" fn(*mut ffi::PyObject, *mut ffi::PyObject) -> c_int;

/// NumPy's type number for a dtype PyTorch shares, or torch's error.
fn type_num(dtype: ScalarType) -> PyResult<c_int> {
    let long_is_64 = std::mem::size_of::<c_long>() == 8;
    Ok(match dtype {
        ScalarType::Bool => 0,
        ScalarType::Char => 1,
        ScalarType::Byte => 2,
        ScalarType::Short => 3,
        ScalarType::UInt16 => 4,
        ScalarType::Int => 5,
        ScalarType::UInt32 => 6,
        ScalarType::Long if long_is_64 => 7,
        ScalarType::Long => 9,
        ScalarType::UInt64 if long_is_64 => 8,
        ScalarType::UInt64 => 10,
        ScalarType::Float => 11,
        ScalarType::Double => 12,
        ScalarType::ComplexFloat => 14,
        ScalarType::ComplexDouble => 15,
        ScalarType::Half => 23,
        other => {
            return Err(PyTypeError::new_err(format!(
                "Got unsupported ScalarType {other:?}"
            )))
        }
    })
}

/// The dtype of a NumPy type number, if PyTorch shares it.
fn scalar_type(type_num: c_int) -> Option<ScalarType> {
    let long_is_64 = std::mem::size_of::<c_long>() == 8;
    Some(match type_num {
        0 => ScalarType::Bool,
        1 => ScalarType::Char,
        2 => ScalarType::Byte,
        3 => ScalarType::Short,
        4 => ScalarType::UInt16,
        5 => ScalarType::Int,
        6 => ScalarType::UInt32,
        7 if long_is_64 => ScalarType::Long,
        7 => ScalarType::Int,
        8 if long_is_64 => ScalarType::UInt64,
        8 => ScalarType::UInt32,
        9 => ScalarType::Long,
        10 => ScalarType::UInt64,
        11 => ScalarType::Float,
        12 => ScalarType::Double,
        14 => ScalarType::ComplexFloat,
        15 => ScalarType::ComplexDouble,
        23 => ScalarType::Half,
        _ => return None,
    })
}

/// The base object of an exported array: keeps the tensor's storage alive
/// and its buffer pinned for as long as NumPy holds the array.
#[pyclass(frozen, module = "torchcore._C")]
pub(crate) struct NumpyBase {
    _tensor: Tensor,
    _pin: BufferPin,
}

/// `tensor.numpy()` / `__array__`: an array over the tensor's memory, with
/// PyTorch's refusals (device, grad, conjugate and negative bits, dtype).
pub(crate) fn to_numpy<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyTensor>,
    dtype: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let t = obj.get().handle(py)?;
    check_exportable(&t)?;
    let num = type_num(t.dtype())?;
    let api = api(py)?;
    let itemsize = t.element_size() as isize;
    let dims: Vec<isize> = t.sizes().iter().map(|&s| s as isize).collect();
    let strides: Vec<isize> = t.strides().iter().map(|&s| s as isize * itemsize).collect();
    let nd = c_int::try_from(dims.len())
        .map_err(|_| PyValueError::new_err("too many dimensions for NumPy"))?;
    let (data, pin, read_only) = pin_buffer(py, &t)?;
    // NumPy allocates when handed a null pointer: an empty tensor without
    // a buffer gets a dangling, aligned, never-read address instead.
    let data = if data == 0 {
        std::ptr::NonNull::<u64>::dangling()
            .as_ptr()
            .cast::<c_void>()
    } else {
        data as *mut c_void
    };
    let holder = Bound::new(
        py,
        NumpyBase {
            _tensor: t,
            _pin: pin,
        },
    )?;
    let flags = if read_only {
        ALIGNED
    } else {
        ALIGNED | WRITEABLE
    };
    let layout = ArrayLayout {
        num,
        nd,
        dims: &dims,
        strides: &strides,
        data,
        flags,
    };
    // SAFETY: `data` stays valid and in place while `holder` lives: it owns
    // the tensor and a pin of its buffer, which `pin_buffer` checked covers
    // the layout.
    let arr = unsafe { new_array(py, api, &layout, holder) }?;
    match dtype {
        Some(d) if !d.is_none() => arr.call_method1("astype", (d,)),
        _ => Ok(arr),
    }
}

/// PyTorch's refusals of `numpy()`: another device, `requires_grad`, the
/// conjugate or negative bit.
fn check_exportable(t: &Tensor) -> PyResult<()> {
    if t.device().device_type() != DeviceType::Cpu {
        return Err(PyTypeError::new_err(format!(
            "can't convert {} device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.",
            t.device().device_type()
        )));
    }
    if t.requires_grad() {
        return Err(PyRuntimeError::new_err(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
        ));
    }
    if t.is_conj() {
        return Err(PyRuntimeError::new_err(
            "Can't call numpy() on Tensor that has conjugate bit set. Use tensor.resolve_conj().numpy() instead.",
        ));
    }
    if t.is_neg() {
        return Err(PyRuntimeError::new_err(
            "Can't call numpy() on Tensor that has negative bit set. Use tensor.resolve_neg().numpy() instead.",
        ));
    }
    Ok(())
}

/// The address of `t`'s first element, a pin of its buffer and whether the
/// storage is read-only. The storage lock may be held by a thread waiting
/// for the GIL: it is taken without the GIL, the buffer pinned under it,
/// and the layout checked to still fit.
fn pin_buffer(py: Python<'_>, t: &Tensor) -> PyResult<(usize, BufferPin, bool)> {
    {
        let t2 = t.clone();
        py.detach(move || -> PyResult<(usize, BufferPin, bool)> {
            let storage = t2.storage();
            let guard = storage
                .read()
                .map_err(|e| crate::convert::to_py_err(e.into()))?;
            let item = t2.element_size() as i128;
            if t2.numel() > 0 {
                let (mut lo, mut hi) = (t2.storage_offset() as i128, t2.storage_offset() as i128);
                for (&n, &s) in t2.sizes().iter().zip(t2.strides()) {
                    let reach = (n as i128 - 1) * s as i128;
                    if reach < 0 {
                        lo += reach;
                    } else {
                        hi += reach;
                    }
                }
                if lo < 0 || (hi + 1) * item > guard.nbytes() as i128 {
                    return Err(PyRuntimeError::new_err(format!(
                        "tensor does not fit in its storage of {} bytes (was the storage shrunk?)",
                        guard.nbytes()
                    )));
                }
            }
            let base = guard.as_ptr() as usize;
            let off = (t2.storage_offset() as usize).wrapping_mul(t2.element_size());
            Ok((base.wrapping_add(off), guard.pin(), storage.is_read_only()))
        })
    }
}

/// What NumPy is told about an exported array.
struct ArrayLayout<'a> {
    num: c_int,
    nd: c_int,
    dims: &'a [isize],
    strides: &'a [isize],
    data: *mut c_void,
    flags: c_int,
}

/// A NumPy array over `layout`, owning `holder` as its base.
///
/// # Safety
///
/// `layout.dims`/`strides` hold `layout.nd` entries each and describe
/// bytes from `layout.data` that stay valid and in place while `holder`
/// lives.
unsafe fn new_array<'py>(
    py: Python<'py>,
    api: &Api,
    layout: &ArrayLayout<'_>,
    holder: Bound<'py, NumpyBase>,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: entries 45, 94 and 282 of the table have these signatures
    // (`__multiarray_api.h`). `PyArray_DescrFromType` returns a new
    // reference (or null with an error), which `PyArray_NewFromDescr`
    // steals; `dims`/`strides` hold `nd` entries and are copied by NumPy;
    // the bytes stay valid while `holder` lives (the caller's contract),
    // and `PyArray_SetBaseObject` makes the array own `holder` (stealing
    // the reference we pass, also on failure).
    unsafe {
        let descr_from_type: DescrFromType = std::mem::transmute(api.entry(45));
        let new_from_descr: NewFromDescr = std::mem::transmute(api.entry(94));
        let set_base: SetBaseObject = std::mem::transmute(api.entry(282));
        let descr = descr_from_type(layout.num);
        if descr.is_null() {
            return Err(PyErr::fetch(py));
        }
        let arr = new_from_descr(
            api.array_type(),
            descr,
            layout.nd,
            layout.dims.as_ptr(),
            layout.strides.as_ptr(),
            layout.data,
            layout.flags,
            std::ptr::null_mut(),
        );
        let arr = Bound::from_owned_ptr_or_err(py, arr)?;
        if set_base(arr.as_ptr(), holder.into_ptr()) != 0 {
            return Err(PyErr::fetch(py));
        }
        Ok(arr)
    }
}

/// Releases the array reference an imported storage owns.
unsafe fn release_array(ctx: *mut c_void) {
    // SAFETY: `ctx` is the `Box<Py<PyAny>>` leaked in `from_numpy`, freed
    // exactly once (the storage's deleter). Dropping a `Py` without the GIL
    // defers the decrement to PyO3's pool.
    drop(unsafe { Box::from_raw(ctx.cast::<Py<PyAny>>()) });
}

/// `torchcore.from_numpy(array)`: a tensor sharing the array's memory,
/// keeping the array alive, with PyTorch's refusals (a read-only array
/// gives a read-only tensor).
#[pyfunction]
pub(crate) fn from_numpy<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTensor>> {
    let (data, sizes, byte_strides, type_num, byteorder, flags) = array_fields(py, array)?;
    let Some(dtype) = scalar_type(type_num) else {
        let ty = array.getattr("dtype")?.getattr("type")?;
        let full = format!("{}.{}", ty.getattr("__module__")?, ty.getattr("__name__")?);
        return Err(PyTypeError::new_err(format!(
            "can't convert np.ndarray of type {full}. The only supported types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool."
        )));
    };
    let swapped = if cfg!(target_endian = "little") {
        b'>'
    } else {
        b'<'
    };
    if byteorder as u8 == swapped {
        return Err(PyValueError::new_err(
            "given numpy array has byte order different from the native byte order. Conversion between byte orders is currently not supported.",
        ));
    }
    let itemsize = dtype.itemsize() as isize;
    let strides = element_strides(&byte_strides, itemsize)?;
    let sizes: Vec<i64> = sizes.iter().map(|&s| s as i64).collect();
    // The bytes the layout reaches from the first element.
    let nbytes = if sizes.contains(&0) {
        0
    } else {
        let last: i128 = sizes
            .iter()
            .zip(&byte_strides)
            .map(|(&n, &s)| (n as i128 - 1) * s as i128)
            .sum();
        usize::try_from(last + itemsize as i128)
            .map_err(|_| PyValueError::new_err("numpy array too large"))?
    };
    let keeper = Box::into_raw(Box::new(array.clone().unbind()));
    // SAFETY: the array's buffer spans `nbytes` bytes from `data` (NumPy's
    // invariant for its own layout) and lives while the array does, which
    // the context keeps alive until the deleter frees it, exactly once.
    // Writes through NumPy meanwhile are the sharing `from_numpy` promises
    // (as in PyTorch); a read-only array gives a read-only storage.
    let storage = unsafe {
        let owner = DataPtr::from_raw_parts(data.cast(), keeper.cast(), release_array, Device::CPU);
        Storage::from_data_ptr(owner, nbytes, None, false)
    }
    .map_err(|e| crate::convert::to_py_err(e.into()))?;
    let storage = if flags & WRITEABLE == 0 {
        storage
            .into_read_only("a read-only NumPy array")
            .map_err(|_| PyRuntimeError::new_err("a fresh storage was unexpectedly shared"))?
    } else {
        storage
    };
    let t = Tensor::from_storage(storage, dtype, &sizes, &strides, 0)
        .map_err(crate::convert::to_py_err)?;
    wrap(py, t)
}

/// What `from_numpy` reads of an ndarray: data pointer, dims, byte
/// strides, type number, byte order and flags (`TypeError` for anything
/// that is not an ndarray).
type Fields = (*mut c_char, Vec<isize>, Vec<isize>, c_int, c_char, c_int);

fn array_fields(py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<Fields> {
    let api = api(py)?;
    let p = array.as_ptr();
    // SAFETY: `p` is live (GIL held); the array type is a static type
    // object of NumPy's.
    let is_array = unsafe {
        ffi::Py_TYPE(p) == api.array_type()
            || ffi::PyType_IsSubtype(ffi::Py_TYPE(p), api.array_type()) != 0
    };
    if !is_array {
        return Err(PyTypeError::new_err(format!(
            "expected np.ndarray (got {})",
            array.get_type().name()?
        )));
    }
    // SAFETY: `p` is an ndarray, so it starts with `PyArrayObject_fields`
    // and its descriptor with the leading `PyArray_Descr` fields; the
    // arrays of `nd` dims and strides live as long as the array.
    unsafe {
        let a = &*p.cast::<ArrayFields>();
        let nd = usize::try_from(a.nd).unwrap_or(0);
        let (dims, strides) = if nd == 0 {
            (&[][..], &[][..])
        } else {
            (
                std::slice::from_raw_parts(a.dimensions, nd),
                std::slice::from_raw_parts(a.strides, nd),
            )
        };
        let d = &*a.descr;
        Ok((
            a.data,
            dims.to_vec(),
            strides.to_vec(),
            d.type_num,
            d.byteorder,
            a.flags,
        ))
    }
}

/// Byte strides as element strides, with PyTorch's refusals of negative
/// strides and strides that are not a multiple of the element size.
fn element_strides(byte_strides: &[isize], itemsize: isize) -> PyResult<Vec<i64>> {
    let mut strides = Vec::with_capacity(byte_strides.len());
    for &s in byte_strides {
        if s < 0 {
            return Err(PyValueError::new_err(
                "At least one stride in the given numpy array is negative, and tensors with negative strides are not currently supported. (You can probably work around this by making a copy of your array  with array.copy().) ",
            ));
        }
        if s % itemsize != 0 {
            return Err(PyValueError::new_err(
                "given numpy array strides not a multiple of the element byte size. Copy the numpy array to reallocate the memory.",
            ));
        }
        strides.push((s / itemsize) as i64);
    }
    Ok(strides)
}
