//! A small C-ABI library over `torchcore-interop`, loaded through `ctypes`
//! by `tools/interop_test.py` to prove the DLPack and safetensors round
//! trips against a real PyTorch (`cargo xtask interop` builds it and runs
//! the script). It is test scaffolding, not an API: handles are boxed
//! `Tensor`s and `SafetensorsFile`s, errors are reported through
//! [`tc_last_error`], and counters record how often each deleter ran.
//!
//! Every function taking a pointer is an `unsafe extern "C" fn`: the
//! Python side must pass handles this library returned (not yet freed),
//! valid buffers of the stated length, and NUL-terminated strings.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use aten_shape::prelude::*;
use c10_core::{dispatch_dtype, Element, ScalarType, Storage, Tensor};
use torchcore_interop::dlpack::{
    from_dlpack, from_dlpack_versioned, to_dlpack, to_dlpack_versioned, DLManagedTensor,
    DLManagedTensorVersioned,
};
use torchcore_interop::safetensors::{load_mmap, save, SafetensorsFile};

// --- errors and counters ----------------------------------------------------

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Runs the body of a C-ABI function, turning a panic into its error value
/// (`on_panic`) with the message in [`tc_last_error`]: a panic must not
/// reach the C boundary, where Rust aborts the whole (Python) process.
/// This is the last resort; bad input is validated and reported as an
/// error before it can panic.
fn ffi_guard<R>(on_panic: R, body: impl FnOnce() -> R) -> R {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown payload".into());
            set_error(format!(
                "internal error: a panic was caught at the C boundary: {what}"
            ));
            on_panic
        }
    }
}

fn set_error(message: impl std::fmt::Display) {
    let text = message.to_string().replace('\0', " ");
    let c = CString::new(text).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// The message of the last failed call on this thread (valid until the
/// next failing call on this thread).
#[unsafe(no_mangle)]
pub extern "C" fn tc_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// How often a consumer called the deleter of a managed tensor exported by
/// [`tc_to_dlpack`] / [`tc_to_dlpack_versioned`].
static EXPORT_DELETER_CALLS: AtomicU64 = AtomicU64::new(0);
/// How often an imported tensor's storage called the producer's deleter.
static IMPORT_DELETER_CALLS: AtomicU64 = AtomicU64::new(0);
/// How often a buffer made by [`tc_arange_f64`] was freed.
static BUFFER_DROPS: AtomicU64 = AtomicU64::new(0);

/// Deleter calls on our exports so far.
#[unsafe(no_mangle)]
pub extern "C" fn tc_export_deleter_calls() -> u64 {
    EXPORT_DELETER_CALLS.load(Ordering::SeqCst)
}

/// Producer-deleter calls made by our imports so far.
#[unsafe(no_mangle)]
pub extern "C" fn tc_import_deleter_calls() -> u64 {
    IMPORT_DELETER_CALLS.load(Ordering::SeqCst)
}

/// Buffers of [`tc_arange_f64`] freed so far.
#[unsafe(no_mangle)]
pub extern "C" fn tc_buffer_drops() -> u64 {
    BUFFER_DROPS.load(Ordering::SeqCst)
}

// --- tensors -----------------------------------------------------------------

/// The most dims a tensor has here (c10's limit for `SizesAndStrides` is
/// far above what anyone uses; 64 matches the hostile-size tests).
const MAX_FFI_DIMS: usize = 64;

fn into_handle(t: Tensor) -> *mut Tensor {
    Box::into_raw(Box::new(t))
}

/// Borrows a handle.
///
/// # Safety
///
/// `h` must be a live handle from this library.
unsafe fn tensor<'a>(h: *const Tensor) -> Option<&'a Tensor> {
    if h.is_null() {
        set_error("null tensor handle");
        return None;
    }
    // SAFETY: the caller's contract.
    Some(unsafe { &*h })
}

/// `f64` values whose buffer counts its own drop.
struct CountedBuffer(Vec<f64>);

impl AsMut<[u8]> for CountedBuffer {
    fn as_mut(&mut self) -> &mut [u8] {
        let len = std::mem::size_of_val(self.0.as_slice());
        // SAFETY: f64 has no padding and every byte pattern is a valid f64,
        // so the Vec's elements may be seen (and written) as bytes; the
        // slice borrows the Vec mutably.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast::<u8>(), len) }
    }
}

impl Drop for CountedBuffer {
    fn drop(&mut self) {
        BUFFER_DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

/// A 1-d `float64` tensor `0, 1, ..., n-1` over a buffer that counts its
/// drop ([`tc_buffer_drops`]). Null on error, including an `n` whose
/// buffer cannot be allocated (an out-of-memory error naming the bytes;
/// `n = 2^62` once aborted the process).
#[unsafe(no_mangle)]
pub extern "C" fn tc_arange_f64(n: i64) -> *mut Tensor {
    ffi_guard(std::ptr::null_mut(), || {
        let mut values: Vec<f64> =
            match c10_core::access::try_vec_with_capacity(n.max(0) as u64, "tc_arange_f64") {
                Ok(v) => v,
                Err(e) => {
                    set_error(e);
                    return std::ptr::null_mut();
                }
            };
        values.extend((0..n.max(0)).map(|i| i as f64));
        let storage = Storage::from_owner(CountedBuffer(values));
        match Tensor::from_storage(storage, ScalarType::Double, &[n.max(0)], &[1], 0) {
            Ok(t) => into_handle(t),
            Err(e) => {
                set_error(e);
                std::ptr::null_mut()
            }
        }
    })
}

/// `as_strided` view of a tensor. Null on error (including null `sizes` or
/// `strides` with `ndim > 0`, and an `ndim` above 64).
///
/// # Safety
///
/// `h` live; `sizes` and `strides` hold `ndim` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_as_strided(
    h: *const Tensor,
    sizes: *const i64,
    strides: *const i64,
    ndim: usize,
    offset: i64,
) -> *mut Tensor {
    ffi_guard(std::ptr::null_mut(), || {
        // SAFETY: the caller's contract.
        let Some(t) = (unsafe { tensor(h) }) else {
            return std::ptr::null_mut();
        };
        // Checked before making slices: `from_raw_parts` needs non-null
        // pointers even for 0 elements, and a wild `ndim` would make a
        // slice longer than any object.
        if ndim > MAX_FFI_DIMS {
            set_error(format!(
                "ndim {ndim} is above the {MAX_FFI_DIMS} dims a tensor can have"
            ));
            return std::ptr::null_mut();
        }
        let (sizes, strides) = if ndim == 0 {
            (&[][..], &[][..])
        } else if sizes.is_null() || strides.is_null() {
            set_error("null sizes or strides pointer");
            return std::ptr::null_mut();
        } else {
            // SAFETY: non-null, and `ndim <= 64` values each (caller's contract).
            unsafe {
                (
                    std::slice::from_raw_parts(sizes, ndim),
                    std::slice::from_raw_parts(strides, ndim),
                )
            }
        };
        match t.as_strided(sizes, strides, Some(offset)) {
            Ok(v) => into_handle(v),
            Err(e) => {
                set_error(e);
                std::ptr::null_mut()
            }
        }
    })
}

/// Frees a handle (the tensor; its storage goes when its last user does).
///
/// # Safety
///
/// `h` must be a live handle (or null), freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_tensor_free(h: *mut Tensor) {
    ffi_guard((), || {
        if !h.is_null() {
            // SAFETY: the caller's contract.
            drop(unsafe { Box::from_raw(h) });
        }
    })
}

/// Number of dims, or -1.
///
/// # Safety
///
/// `h` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_ndim(h: *const Tensor) -> i64 {
    ffi_guard(-1, || {
        // SAFETY: the caller's contract.
        unsafe { tensor(h) }.map_or(-1, |t| t.dim() as i64)
    })
}

/// Writes sizes, strides (`ndim` each) and the storage offset; -1 on error
/// (including null output pointers).
///
/// # Safety
///
/// `h` live; `sizes` and `strides` writable for `ndim` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_geometry(
    h: *const Tensor,
    sizes: *mut i64,
    strides: *mut i64,
    offset: *mut i64,
) -> i32 {
    ffi_guard(-1, || {
        // SAFETY: the caller's contract.
        let Some(t) = (unsafe { tensor(h) }) else {
            return -1;
        };
        if offset.is_null() || (t.dim() > 0 && (sizes.is_null() || strides.is_null())) {
            set_error("null output pointer");
            return -1;
        }
        // SAFETY: the caller's contract: room for `ndim` values each
        // (non-null, checked).
        unsafe {
            std::ptr::copy_nonoverlapping(t.sizes().as_ptr(), sizes, t.dim());
            std::ptr::copy_nonoverlapping(t.strides().as_ptr(), strides, t.dim());
            *offset = t.storage_offset();
        }
        0
    })
}

/// Writes the dtype's PyTorch name (`float32`, ...) NUL-terminated into
/// `buf` of `len` bytes.
///
/// # Safety
///
/// `h` live; `buf` writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_dtype_name(h: *const Tensor, buf: *mut c_char, len: usize) -> i32 {
    ffi_guard(-1, || {
        // SAFETY: the caller's contract.
        let Some(t) = (unsafe { tensor(h) }) else {
            return -1;
        };
        if buf.is_null() {
            set_error("null dtype name buffer");
            return -1;
        }
        let name = t.dtype().torch_name().as_bytes();
        if name.len() + 1 > len {
            set_error("dtype name buffer too small");
            return -1;
        }
        // SAFETY: `buf` has room for the name and the NUL (checked above).
        unsafe {
            std::ptr::copy_nonoverlapping(name.as_ptr().cast::<c_char>(), buf, name.len());
            *buf.add(name.len()) = 0;
        }
        0
    })
}

/// Whether the tensor's storage refuses writes (1), or not (0); -1 on error.
///
/// # Safety
///
/// `h` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_is_read_only(h: *const Tensor) -> i32 {
    ffi_guard(-1, || {
        // SAFETY: the caller's contract.
        unsafe { tensor(h) }.map_or(-1, |t| i32::from(t.storage().is_read_only()))
    })
}

/// Number of bytes of the tensor's elements (`numel * itemsize`); -1 on
/// error, including a count above `i64::MAX` (a huge stride-0 view).
///
/// # Safety
///
/// `h` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_nbytes(h: *const Tensor) -> i64 {
    ffi_guard(-1, || {
        // SAFETY: the caller's contract.
        let Some(t) = (unsafe { tensor(h) }) else {
            return -1;
        };
        let n = t.nbytes();
        i64::try_from(n).unwrap_or_else(|_| {
            set_error(format!("{n} bytes do not fit in an int64"));
            -1
        })
    })
}

/// Copies the elements in row-major order, as raw bytes, into `out`
/// (`len` bytes, at least [`tc_nbytes`]). Returns the bytes written, -1 on
/// error.
///
/// # Safety
///
/// `h` live; `out` writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_copy_bytes(h: *const Tensor, out: *mut u8, len: usize) -> i64 {
    ffi_guard(-1, || {
        // SAFETY: the caller's contract.
        let Some(t) = (unsafe { tensor(h) }) else {
            return -1;
        };
        if out.is_null() && len > 0 {
            set_error("null output buffer");
            return -1;
        }
        let run = || -> Result<i64, String> {
            let c = t.contiguous().map_err(|e| e.to_string())?;
            let n = c.nbytes();
            if n > len {
                return Err(format!("output buffer of {len} bytes, need {n}"));
            }
            let guard = c.storage().read().map_err(|e| e.to_string())?;
            let bytes = guard.bytes().map_err(|e| e.to_string())?;
            let start = usize::try_from(c.storage_offset())
                .ok()
                .and_then(|o| o.checked_mul(c.element_size()));
            let src = start
                .and_then(|s| bytes.get(s..s.checked_add(n)?))
                .ok_or("tensor outside its storage")?;
            if n == 0 {
                return Ok(0); // `out` may be null then
            }
            // SAFETY: `out` has room for `len >= n` bytes (caller, checked).
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), out, n) };
            Ok(n as i64)
        };
        run().unwrap_or_else(|e| {
            set_error(e);
            -1
        })
    })
}

/// Sets the element at row-major position `flat` to `value` (converted to
/// the dtype). 0 on success, -1 on error (see [`tc_last_error`]), including
/// a `flat` outside `0..numel`.
///
/// # Safety
///
/// `h` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_set_f64(h: *const Tensor, flat: i64, value: f64) -> i32 {
    ffi_guard(-1, || {
        // SAFETY: the caller's contract.
        let Some(t) = (unsafe { tensor(h) }) else {
            return -1;
        };
        if flat < 0 || flat >= t.numel() {
            set_error(format!(
                "index {flat} is out of bounds for a tensor of {} elements",
                t.numel()
            ));
            return -1;
        }
        let mut index = vec![0i64; t.dim()];
        let mut rest = flat;
        for (d, &n) in t.sizes().iter().enumerate().rev() {
            if n > 0 {
                index[d] = rest % n;
                rest /= n;
            }
        }
        let result = dispatch_dtype!(t.dtype(), T => {
            t.set::<T>(&index, <T as Element>::from_f64(value))
        }, {
            Err(c10_core::TensorError::Runtime(format!("cannot set elements of dtype {}", t.dtype())))
        });
        match result {
            Ok(()) => 0,
            Err(e) => {
                set_error(e);
                -1
            }
        }
    })
}

// --- DLPack --------------------------------------------------------------------

/// Original deleters of exported / imported managed tensors, by address,
/// so that counting wrappers can chain to them.
static EXPORT_DELETERS: Mutex<Option<HashMap<usize, ClassicDeleter>>> = Mutex::new(None);
type ClassicDeleter = unsafe extern "C" fn(*mut DLManagedTensor);
type VersionedDeleter = unsafe extern "C" fn(*mut DLManagedTensorVersioned);
static EXPORT_DELETERS_V: Mutex<Option<HashMap<usize, VersionedDeleter>>> = Mutex::new(None);
static IMPORT_DELETERS: Mutex<Option<HashMap<usize, ClassicDeleter>>> = Mutex::new(None);
static IMPORT_DELETERS_V: Mutex<Option<HashMap<usize, VersionedDeleter>>> = Mutex::new(None);

fn remember<F>(table: &Mutex<Option<HashMap<usize, F>>>, key: usize, f: F) {
    if let Ok(mut t) = table.lock() {
        t.get_or_insert_with(HashMap::new).insert(key, f);
    }
}

fn take<F>(table: &Mutex<Option<HashMap<usize, F>>>, key: usize) -> Option<F> {
    table.lock().ok()?.as_mut()?.remove(&key)
}

/// Counts, then chains to the original deleter of our classic export.
///
/// # Safety
///
/// `m` must be one of our exports, deleted once.
unsafe extern "C" fn counting_export_deleter(m: *mut DLManagedTensor) {
    ffi_guard((), || {
        EXPORT_DELETER_CALLS.fetch_add(1, Ordering::SeqCst);
        if let Some(d) = take(&EXPORT_DELETERS, m as usize) {
            // SAFETY: the original deleter of `m`, called once.
            unsafe { d(m) }
        }
    })
}

/// Counts, then chains to the original deleter of our versioned export.
///
/// # Safety
///
/// As for [`counting_export_deleter`].
unsafe extern "C" fn counting_export_deleter_v(m: *mut DLManagedTensorVersioned) {
    ffi_guard((), || {
        EXPORT_DELETER_CALLS.fetch_add(1, Ordering::SeqCst);
        if let Some(d) = take(&EXPORT_DELETERS_V, m as usize) {
            // SAFETY: the original deleter of `m`, called once.
            unsafe { d(m) }
        }
    })
}

/// Counts, then chains to the producer's deleter of an imported tensor.
///
/// # Safety
///
/// `m` must be a managed tensor we imported, released once.
unsafe extern "C" fn counting_import_deleter(m: *mut DLManagedTensor) {
    ffi_guard((), || {
        IMPORT_DELETER_CALLS.fetch_add(1, Ordering::SeqCst);
        if let Some(d) = take(&IMPORT_DELETERS, m as usize) {
            // SAFETY: the producer's deleter, called once.
            unsafe { d(m) }
        }
    })
}

/// Versioned form of [`counting_import_deleter`].
///
/// # Safety
///
/// As for [`counting_import_deleter`].
unsafe extern "C" fn counting_import_deleter_v(m: *mut DLManagedTensorVersioned) {
    ffi_guard((), || {
        IMPORT_DELETER_CALLS.fetch_add(1, Ordering::SeqCst);
        if let Some(d) = take(&IMPORT_DELETERS_V, m as usize) {
            // SAFETY: the producer's deleter, called once.
            unsafe { d(m) }
        }
    })
}

/// Exports a tensor as a classic `DLManagedTensor*` (null on error) whose
/// deleter is counted by [`tc_export_deleter_calls`].
///
/// # Safety
///
/// `h` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_to_dlpack(h: *const Tensor) -> *mut DLManagedTensor {
    ffi_guard(std::ptr::null_mut(), || {
        // SAFETY: the caller's contract.
        let Some(t) = (unsafe { tensor(h) }) else {
            return std::ptr::null_mut();
        };
        match to_dlpack(t) {
            Ok(m) => {
                // SAFETY: `m` is a fresh, live export owned by us until returned.
                unsafe {
                    if let Some(d) = (*m).deleter {
                        remember(&EXPORT_DELETERS, m as usize, d);
                    }
                    (*m).deleter = Some(counting_export_deleter);
                }
                m
            }
            Err(e) => {
                set_error(e);
                std::ptr::null_mut()
            }
        }
    })
}

/// Exports a tensor as a `DLManagedTensorVersioned*` (null on error).
///
/// # Safety
///
/// `h` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_to_dlpack_versioned(h: *const Tensor) -> *mut DLManagedTensorVersioned {
    ffi_guard(std::ptr::null_mut(), || {
        // SAFETY: the caller's contract.
        let Some(t) = (unsafe { tensor(h) }) else {
            return std::ptr::null_mut();
        };
        match to_dlpack_versioned(t) {
            Ok(m) => {
                // SAFETY: as in `tc_to_dlpack`.
                unsafe {
                    if let Some(d) = (*m).deleter {
                        remember(&EXPORT_DELETERS_V, m as usize, d);
                    }
                    (*m).deleter = Some(counting_export_deleter_v);
                }
                m
            }
            Err(e) => {
                set_error(e);
                std::ptr::null_mut()
            }
        }
    })
}

/// The flags of a versioned managed tensor (for the test to inspect);
/// `u64::MAX` (every flag) for a null pointer, with the error set.
///
/// # Safety
///
/// `m` must be a live `DLManagedTensorVersioned`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_dlpack_versioned_flags(m: *const DLManagedTensorVersioned) -> u64 {
    ffi_guard(u64::MAX, || {
        if m.is_null() {
            set_error("null DLManagedTensorVersioned");
            return u64::MAX;
        }
        // SAFETY: non-null and live (the caller's contract).
        unsafe { (*m).flags }
    })
}

/// Imports a classic `DLManagedTensor*` (from `torch.utils.dlpack.to_dlpack`)
/// and returns a tensor handle; the producer's deleter is counted by
/// [`tc_import_deleter_calls`]. On error returns null and leaves ownership
/// (and the original deleter) with the caller.
///
/// # Safety
///
/// `m` must be a live managed tensor whose ownership the caller hands over
/// (see `torchcore_interop::dlpack::from_dlpack`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_from_dlpack(m: *mut DLManagedTensor) -> *mut Tensor {
    ffi_guard(std::ptr::null_mut(), || {
        if m.is_null() {
            set_error("null DLManagedTensor");
            return std::ptr::null_mut();
        }
        // SAFETY: live, ours to modify (caller's contract).
        let original = unsafe { (*m).deleter };
        if let Some(d) = original {
            remember(&IMPORT_DELETERS, m as usize, d);
            // SAFETY: as above.
            unsafe { (*m).deleter = Some(counting_import_deleter) };
        }
        // SAFETY: the caller's contract.
        match unsafe { from_dlpack(m) } {
            Ok(t) => into_handle(t),
            Err(e) => {
                let _ = take(&IMPORT_DELETERS, m as usize);
                // SAFETY: still the caller's: restore its deleter.
                unsafe { (*m).deleter = original };
                set_error(e);
                std::ptr::null_mut()
            }
        }
    })
}

/// Imports a `DLManagedTensorVersioned*`, as [`tc_from_dlpack`] does.
///
/// # Safety
///
/// As for [`tc_from_dlpack`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_from_dlpack_versioned(m: *mut DLManagedTensorVersioned) -> *mut Tensor {
    ffi_guard(std::ptr::null_mut(), || {
        if m.is_null() {
            set_error("null DLManagedTensorVersioned");
            return std::ptr::null_mut();
        }
        // SAFETY: live, ours to modify (caller's contract).
        let original = unsafe { (*m).deleter };
        if let Some(d) = original {
            remember(&IMPORT_DELETERS_V, m as usize, d);
            // SAFETY: as above.
            unsafe { (*m).deleter = Some(counting_import_deleter_v) };
        }
        // SAFETY: the caller's contract.
        match unsafe { from_dlpack_versioned(m) } {
            Ok(t) => into_handle(t),
            Err(e) => {
                let _ = take(&IMPORT_DELETERS_V, m as usize);
                // SAFETY: still the caller's: restore its deleter.
                unsafe { (*m).deleter = original };
                set_error(e);
                std::ptr::null_mut()
            }
        }
    })
}

// --- safetensors -----------------------------------------------------------------

/// Reads a NUL-terminated path.
///
/// # Safety
///
/// `path` must be a valid C string.
unsafe fn path_arg(path: *const c_char) -> Option<String> {
    if path.is_null() {
        set_error("null path");
        return None;
    }
    // SAFETY: the caller's contract.
    match unsafe { CStr::from_ptr(path) }.to_str() {
        Ok(s) => Some(s.to_string()),
        Err(e) => {
            set_error(e);
            None
        }
    }
}

/// The tensors `tools/interop_test.py` expects from [`tc_st_save_demo`],
/// built the same way on both sides (several dtypes; transposed, sliced
/// and expanded sources that are made contiguous on save; a 0-d and an
/// empty tensor).
fn demo_tensors() -> c10_core::Result<Vec<(&'static str, Tensor)>> {
    let f = Tensor::arange(0.0, 12.0, 1.0, ScalarType::Float)?.view(&[3, 4])?;
    Ok(vec![
        ("f32", f.clone()),
        ("f32_t", f.t()?),
        (
            "f64_t",
            Tensor::arange(0.0, 6.0, 1.0, ScalarType::Double)?
                .view(&[2, 3])?
                .t()?,
        ),
        (
            "i64_sliced",
            Tensor::arange(0, 20, 1, ScalarType::Long)?
                .view(&[4, 5])?
                .slice(1, Some(1), None, 2)?,
        ),
        ("i32", Tensor::arange(-5, 5, 1, ScalarType::Int)?),
        (
            "i16_expanded",
            Tensor::arange(0, 3, 1, ScalarType::Short)?
                .unsqueeze(0)?
                .expand(&[2, 3])?,
        ),
        ("i8", Tensor::arange(-4, 4, 1, ScalarType::Char)?),
        ("u8", Tensor::arange(250, 256, 1, ScalarType::Byte)?),
        ("bf16", Tensor::arange(0.0, 4.0, 0.5, ScalarType::BFloat16)?),
        ("f16", Tensor::arange(-2.0, 2.0, 0.25, ScalarType::Half)?),
        (
            "bool",
            Tensor::from_vec(vec![true, false, false, true], &[2, 2])?,
        ),
        ("scalar", Tensor::scalar_tensor(7.5, ScalarType::Float)?),
        ("empty", Tensor::empty(&[0, 3], ScalarType::Float)?),
    ])
}

/// Saves the demo tensors to `path`. 0 on success, -1 on error.
///
/// # Safety
///
/// `path` must be a valid C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_st_save_demo(path: *const c_char) -> i32 {
    ffi_guard(-1, || {
        // SAFETY: the caller's contract.
        let Some(path) = (unsafe { path_arg(path) }) else {
            return -1;
        };
        let run = || -> Result<(), String> {
            let tensors = demo_tensors().map_err(|e| e.to_string())?;
            let meta = HashMap::from([("producer".to_string(), "torchcore".to_string())]);
            save(tensors.iter().map(|(n, t)| (*n, t)), Some(meta), &path).map_err(|e| e.to_string())
        };
        match run() {
            Ok(()) => 0,
            Err(e) => {
                set_error(e);
                -1
            }
        }
    })
}

/// Loads a safetensors file (one read-only mapping). Null on error.
///
/// # Safety
///
/// `path` must be a valid C string, and the file must not be written or
/// truncated by anyone while tensors from it are alive
/// (`torchcore_interop::safetensors::load_mmap`'s contract).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_st_load(path: *const c_char) -> *mut SafetensorsFile {
    ffi_guard(std::ptr::null_mut(), || {
        // SAFETY: the caller's contract.
        let Some(path) = (unsafe { path_arg(path) }) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the caller's contract (the test driver writes the file
        // once, before this call, and never again while it is mapped).
        match unsafe { load_mmap(&path) } {
            Ok(f) => Box::into_raw(Box::new(f)),
            Err(e) => {
                set_error(e);
                std::ptr::null_mut()
            }
        }
    })
}

/// Borrows a file handle.
///
/// # Safety
///
/// `f` must be a live handle from [`tc_st_load`].
unsafe fn file<'a>(f: *const SafetensorsFile) -> Option<&'a SafetensorsFile> {
    if f.is_null() {
        set_error("null file handle");
        return None;
    }
    // SAFETY: the caller's contract.
    Some(unsafe { &*f })
}

/// Frees a file handle (tensors taken from it stay valid).
///
/// # Safety
///
/// `f` must be a live handle (or null), freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_st_free(f: *mut SafetensorsFile) {
    ffi_guard((), || {
        if !f.is_null() {
            // SAFETY: the caller's contract.
            drop(unsafe { Box::from_raw(f) });
        }
    })
}

/// Number of tensors in the file, and of those that were copied rather
/// than viewed (`copied` may be null).
///
/// # Safety
///
/// `f` live; `copied` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_st_len(f: *const SafetensorsFile, copied: *mut i64) -> i64 {
    ffi_guard(-1, || {
        // SAFETY: the caller's contract.
        let Some(f) = (unsafe { file(f) }) else {
            return -1;
        };
        if !copied.is_null() {
            // SAFETY: the caller's contract.
            unsafe { *copied = f.copied().len() as i64 };
        }
        f.len() as i64
    })
}

/// A handle to the tensor `name` (null if absent); `is_view` (if non-null)
/// receives 1 when it views the file's mapping.
///
/// # Safety
///
/// `f` live; `name` a valid C string; `is_view` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_st_get(
    f: *const SafetensorsFile,
    name: *const c_char,
    is_view: *mut i32,
) -> *mut Tensor {
    ffi_guard(std::ptr::null_mut(), || {
        // SAFETY: the caller's contract.
        let (Some(f), Some(name)) = (unsafe { file(f) }, unsafe { path_arg(name) }) else {
            return std::ptr::null_mut();
        };
        let Some(t) = f.get(&name) else {
            set_error(format!("no tensor {name:?} in the file"));
            return std::ptr::null_mut();
        };
        if !is_view.is_null() {
            // SAFETY: the caller's contract.
            unsafe { *is_view = i32::from(t.storage().is_alias_of(f.storage())) };
        }
        into_handle(t.clone())
    })
}

/// Saves every tensor of a loaded file, with its metadata, to `path`.
///
/// # Safety
///
/// `f` live; `path` a valid C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tc_st_resave(f: *const SafetensorsFile, path: *const c_char) -> i32 {
    ffi_guard(-1, || {
        // SAFETY: the caller's contract.
        let (Some(f), Some(path)) = (unsafe { file(f) }, unsafe { path_arg(path) }) else {
            return -1;
        };
        match save(f.tensors().iter(), f.metadata().cloned(), &path) {
            Ok(()) => 0,
            Err(e) => {
                set_error(e);
                -1
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C functions chained without Python: export, import back, write,
    /// and count each deleter (the Python script does the same with torch).
    #[test]
    fn round_trip_through_the_c_api_counts_each_deleter_once() {
        let (e0, i0, b0) = (
            tc_export_deleter_calls(),
            tc_import_deleter_calls(),
            tc_buffer_drops(),
        );
        let h = tc_arange_f64(4);
        // SAFETY: every handle below comes from this library and is freed
        // once; the export is handed to the importer once.
        unsafe {
            let m = tc_to_dlpack(h);
            assert!(!m.is_null());
            let back = tc_from_dlpack(m);
            assert!(!back.is_null());
            assert_eq!(tc_set_f64(back, 2, 20.0), 0);
            let mut out = [0u8; 32];
            assert_eq!(tc_copy_bytes(h, out.as_mut_ptr(), out.len()), 32);
            assert_eq!(f64::from_ne_bytes(out[16..24].try_into().unwrap()), 20.0);
            tc_tensor_free(h);
            assert_eq!(tc_buffer_drops(), b0, "the import keeps the buffer alive");
            tc_tensor_free(back);
        }
        assert_eq!(tc_export_deleter_calls(), e0 + 1);
        assert_eq!(tc_import_deleter_calls(), i0 + 1);
        assert_eq!(tc_buffer_drops(), b0 + 1);
    }

    fn last_error() -> String {
        // SAFETY: tc_last_error returns a valid C string.
        unsafe { CStr::from_ptr(tc_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    #[cfg_attr(miri, ignore = "spawns a child process")]
    fn arange_of_2_pow_62_is_an_error_not_an_abort() {
        // Issue #20: this aborted the (Python) process with "capacity
        // overflow" inside an `extern "C" fn`.
        let name = "tests::arange_of_2_pow_62_is_an_error_not_an_abort";
        c10_storage::testing::hostile::in_child_process(name, || {
            for n in [1i64 << 62, 1 << 61, i64::MAX] {
                assert!(tc_arange_f64(n).is_null(), "{n}");
                let msg = last_error();
                assert!(msg.contains("can't allocate memory"), "{n}: {msg}");
            }
            let h = tc_arange_f64(-5);
            // SAFETY: a live handle, freed once.
            unsafe {
                assert_eq!(tc_ndim(h), 1);
                assert_eq!(tc_nbytes(h), 0);
                tc_tensor_free(h);
            }
        });
    }

    #[test]
    fn bad_arguments_are_error_codes() {
        let h = tc_arange_f64(6);
        let (sizes, strides) = ([2i64, 3], [3i64, 1]);
        // SAFETY: `h` is live and freed once; every pointer passed is
        // null, or valid for the length passed.
        unsafe {
            let null = std::ptr::null();
            assert!(tc_as_strided(h, null, strides.as_ptr(), 2, 0).is_null());
            assert_eq!(last_error(), "null sizes or strides pointer");
            assert!(tc_as_strided(h, sizes.as_ptr(), null, 2, 0).is_null());
            assert!(tc_as_strided(h, sizes.as_ptr(), strides.as_ptr(), usize::MAX, 0).is_null());
            assert!(last_error().contains("ndim"), "{}", last_error());
            // 0 dims with null pointers: a 0-d view.
            let s = tc_as_strided(h, null, null, 0, 5);
            assert!(!s.is_null());
            assert_eq!(tc_ndim(s), 0);
            assert_eq!(
                tc_geometry(
                    s,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut()
                ),
                -1
            );
            let mut off = 0i64;
            assert_eq!(
                tc_geometry(s, std::ptr::null_mut(), std::ptr::null_mut(), &mut off),
                0
            );
            assert_eq!(off, 5);
            tc_tensor_free(s);
            let mut out = [0i64; 2];
            assert_eq!(
                tc_geometry(h, std::ptr::null_mut(), out.as_mut_ptr(), &mut off),
                -1
            );
            assert_eq!(tc_dtype_name(h, std::ptr::null_mut(), 16), -1);
            // A broadcast of i64::MAX elements: its byte count does not fit.
            let wide = tc_as_strided(h, [i64::MAX].as_ptr(), [0i64].as_ptr(), 1, 0);
            assert!(!wide.is_null());
            assert_eq!(tc_nbytes(wide), -1);
            assert!(last_error().contains("do not fit"), "{}", last_error());
            assert_eq!(tc_copy_bytes(wide, std::ptr::null_mut(), 0), -1);
            assert_eq!(tc_set_f64(wide, i64::MAX - 1, 1.0), 0, "one location");
            tc_tensor_free(wide);
            for flat in [-1, 6, i64::MIN, i64::MAX] {
                assert_eq!(tc_set_f64(h, flat, 1.0), -1, "{flat}");
                assert!(last_error().contains("out of bounds"), "{}", last_error());
            }
            assert_eq!(tc_copy_bytes(h, std::ptr::null_mut(), 48), -1);
            assert_eq!(tc_dlpack_versioned_flags(std::ptr::null()), u64::MAX);
            assert!(tc_st_load(std::ptr::null()).is_null());
            assert_eq!(tc_st_len(std::ptr::null(), std::ptr::null_mut()), -1);
            tc_tensor_free(h);
        }
    }

    #[test]
    fn a_panic_stops_at_the_c_boundary() {
        let r = ffi_guard(-1, || -> i32 { panic!("boom {}", 7) });
        assert_eq!(r, -1);
        assert_eq!(
            last_error(),
            "internal error: a panic was caught at the C boundary: boom 7"
        );
        assert_eq!(ffi_guard(-1, || 3), 3);
    }

    #[test]
    fn errors_are_reported_through_last_error() {
        // SAFETY: null is accepted and refused.
        assert!(unsafe { tc_from_dlpack(std::ptr::null_mut()) }.is_null());
        // SAFETY: tc_last_error returns a valid C string.
        let msg = unsafe { CStr::from_ptr(tc_last_error()) };
        assert_eq!(msg.to_str().unwrap(), "null DLManagedTensor");
    }
}
