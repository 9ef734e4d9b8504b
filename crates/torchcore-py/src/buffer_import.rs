//! `torchcore.frombuffer`: a one-dimensional tensor over the memory of any
//! object with the buffer protocol (`bytearray`, `array.array`, `mmap`,
//! `memoryview`, NumPy arrays), shared, not copied, as PyTorch's.
//!
//! Lifetimes: the storage owns a `memoryview` of the object, and so one
//! buffer export of it, until the storage is freed: the object stays alive
//! and cannot move its memory meanwhile (a `bytearray` refuses to resize,
//! an `mmap` to close, with `BufferError`). PyTorch keeps only a reference
//! to the object and releases its export at once, which lets such an
//! object reallocate under the tensor. A read-only buffer (`bytes`, a
//! read-only array) gives a read-only storage, as `from_numpy` does
//! (PyTorch warns once and lets the tensor write into it).
//!
//! ```python
//! import torchcore as tc
//! b = bytearray(b"\x01\x02\x03\x04")
//! t = tc.frombuffer(b, dtype=tc.int16)   # same memory
//! t[0] = 0
//! assert b[:2] == b"\x00\x00"
//! ```

use std::ffi::{c_char, c_int, c_void};

use c10_core::{ScalarType, Tensor};
use c10_storage::{DataPtr, Device, Storage};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;

use crate::convert::{self, PyDtype, I64};
use crate::tensor::{wrap, PyTensor};

/// CPython's `Py_buffer` (`Include/pybuffer.h`; the same layout in every
/// CPython 3, part of the stable ABI since 3.11). PyO3's abi3 build for
/// 3.10 does not declare it.
#[repr(C)]
struct RawBuffer {
    buf: *mut c_void,
    obj: *mut ffi::PyObject,
    len: ffi::Py_ssize_t,
    itemsize: ffi::Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut ffi::Py_ssize_t,
    strides: *mut ffi::Py_ssize_t,
    suboffsets: *mut ffi::Py_ssize_t,
    internal: *mut c_void,
}

/// `PyBUF_SIMPLE`: a contiguous run of bytes, no format or shape.
const PYBUF_SIMPLE: c_int = 0;

unsafe extern "C" {
    // Exported by every CPython 3 (stable ABI since 3.11).
    fn PyObject_GetBuffer(obj: *mut ffi::PyObject, view: *mut RawBuffer, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut RawBuffer);
}

/// The address and length of the bytes `mv` (a `memoryview`, C-contiguous)
/// exports. They stay valid while `mv` lives: the memoryview holds its own
/// export of the underlying object, which cannot move or free the memory
/// while exported.
fn memoryview_bytes(mv: &Bound<'_, PyAny>) -> PyResult<(*mut u8, usize)> {
    let mut view = std::mem::MaybeUninit::<RawBuffer>::zeroed();
    // SAFETY: the GIL is held and `mv` is a live object; `view` is writable
    // memory of `Py_buffer`'s layout. On success the export is released
    // right after its two fields are read (the memoryview's own export
    // keeps the bytes in place); on failure nothing is held.
    unsafe {
        if PyObject_GetBuffer(mv.as_ptr(), view.as_mut_ptr(), PYBUF_SIMPLE) != 0 {
            return Err(could_not_retrieve(mv.py()));
        }
        let v = view.assume_init_mut();
        let (buf, len) = (v.buf.cast::<u8>(), usize::try_from(v.len).unwrap_or(0));
        PyBuffer_Release(v);
        Ok((buf, len))
    }
}

/// PyTorch's error when an object has the buffer protocol but gives no
/// contiguous buffer (the pending Python error is dropped, as PyTorch's).
fn could_not_retrieve(py: Python<'_>) -> PyErr {
    let _ = PyErr::take(py);
    PyRuntimeError::new_err(
        "could not retrieve a contiguous buffer from the given object (non-contiguous buffers are not supported)",
    )
}

/// Releases the memoryview a `frombuffer` storage owns.
///
/// # Safety
///
/// `ctx` is the `Box<Py<PyAny>>` leaked in [`frombuffer`], freed exactly
/// once (the storage's deleter).
unsafe fn release_view(ctx: *mut c_void) {
    // SAFETY: our contract. Dropping a `Py` without the GIL defers the
    // decrement to PyO3's pool.
    drop(unsafe { Box::from_raw(ctx.cast::<Py<PyAny>>()) });
}

/// The element count PyTorch's `frombuffer` takes from a buffer of `len`
/// bytes, with its `ValueError`s; a `count * elsize` past `usize` is
/// refused as too long (PyTorch's product wraps around).
fn element_count(len: usize, elsize: usize, count: i64, offset: i64) -> PyResult<usize> {
    if len == 0 || count == 0 {
        return Err(PyValueError::new_err(format!(
            "both buffer length ({len}) and count ({count}) must not be 0"
        )));
    }
    let off = usize::try_from(offset).ok().filter(|&o| o < len).ok_or_else(|| {
        PyValueError::new_err(format!(
            "offset ({offset} bytes) must be non-negative and no greater than buffer length ({len} bytes) minus 1"
        ))
    })?;
    let rest = len - off;
    if count < 0 {
        if !rest.is_multiple_of(elsize) {
            return Err(PyValueError::new_err(format!(
                "buffer length ({rest} bytes) after offset ({offset} bytes) must be a multiple of element size ({elsize})"
            )));
        }
        return Ok(rest / elsize);
    }
    let n = usize::try_from(count).unwrap_or(usize::MAX);
    match n.checked_mul(elsize) {
        Some(bytes) if bytes <= rest => Ok(n),
        _ => Err(PyValueError::new_err(format!(
            "requested buffer length ({count} * {elsize} bytes) after offset ({offset} bytes) must not be greater than actual buffer length ({len} bytes)"
        ))),
    }
}

/// `torchcore._C._frombuffer(buffer, dtype, count, offset, requires_grad)`:
/// `torchcore.frombuffer` once its arguments are parsed (in Python, for
/// PyTorch's parser errors).
#[pyfunction]
#[pyo3(name = "_frombuffer")]
fn frombuffer<'py>(
    py: Python<'py>,
    buffer: &Bound<'py, PyAny>,
    dtype: &Bound<'py, PyDtype>,
    count: I64,
    offset: I64,
    requires_grad: bool,
) -> PyResult<Bound<'py, PyTensor>> {
    let st: ScalarType = dtype.get().st;
    // SAFETY: the GIL is held and `buffer` is live; a new reference or
    // null with an exception set.
    let mv =
        unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyMemoryView_FromObject(buffer.as_ptr())) };
    let mv = match mv {
        Ok(mv) => mv,
        Err(e) if e.is_instance_of::<PyTypeError>(py) => {
            return Err(PyValueError::new_err(
                "object does not implement Python buffer protocol.",
            ));
        }
        Err(_) => return Err(could_not_retrieve(py)),
    };
    if !mv.getattr("c_contiguous")?.is_truthy()? {
        return Err(could_not_retrieve(py));
    }
    let read_only = mv.getattr("readonly")?.is_truthy()?;
    let (base, len) = memoryview_bytes(&mv)?;
    let elsize = st.itemsize();
    let n = element_count(len, elsize, count.0, offset.0)?;
    // No overflow: at most `len`.
    let nbytes = n * elsize;
    // `offset < len` (checked), so the address stays inside the buffer.
    let data = base.wrapping_add(offset.0 as usize);
    let keeper = Box::into_raw(Box::new(mv.unbind()));
    // SAFETY: the memoryview's bytes span `len` bytes from `base` and stay
    // in place while it lives (`memoryview_bytes`); `[offset, offset +
    // nbytes)` lies inside them (`element_count`). The context keeps the
    // memoryview alive until the deleter frees it, exactly once. Writes
    // through other views of the buffer meanwhile are the sharing
    // `frombuffer` promises (as in PyTorch); a read-only buffer gives a
    // read-only storage below.
    let storage = unsafe {
        let owner = DataPtr::from_raw_parts(data.cast(), keeper.cast(), release_view, Device::CPU);
        Storage::from_data_ptr(owner, nbytes, None, false)
    }
    .map_err(|e| convert::to_py_err(e.into()))?;
    let storage = if read_only {
        storage
            .into_read_only("a read-only buffer")
            .map_err(|_| PyRuntimeError::new_err("a fresh storage was unexpectedly shared"))?
    } else {
        storage
    };
    let len_i64 = i64::try_from(n).map_err(|_| convert::overflow_long_long())?;
    let mut t =
        Tensor::from_storage(storage, st, &[len_i64], &[1], 0).map_err(convert::to_py_err)?;
    if requires_grad {
        t.set_requires_grad(true).map_err(convert::to_py_err)?;
    }
    wrap(py, t)
}

/// Registers `_frombuffer` in `m`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(frombuffer, m)?)
}
