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

fn set_error(message: impl std::fmt::Display) {
    let text = message.to_string().replace('\0', " ");
    let c = CString::new(text).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// The message of the last failed call on this thread (valid until the
/// next failing call on this thread).
#[no_mangle]
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
#[no_mangle]
pub extern "C" fn tc_export_deleter_calls() -> u64 {
    EXPORT_DELETER_CALLS.load(Ordering::SeqCst)
}

/// Producer-deleter calls made by our imports so far.
#[no_mangle]
pub extern "C" fn tc_import_deleter_calls() -> u64 {
    IMPORT_DELETER_CALLS.load(Ordering::SeqCst)
}

/// Buffers of [`tc_arange_f64`] freed so far.
#[no_mangle]
pub extern "C" fn tc_buffer_drops() -> u64 {
    BUFFER_DROPS.load(Ordering::SeqCst)
}

// --- tensors -----------------------------------------------------------------

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
/// drop ([`tc_buffer_drops`]). Null on error.
#[no_mangle]
pub extern "C" fn tc_arange_f64(n: i64) -> *mut Tensor {
    let values: Vec<f64> = (0..n.max(0)).map(|i| i as f64).collect();
    let storage = Storage::from_owner(CountedBuffer(values));
    match Tensor::from_storage(storage, ScalarType::Double, &[n.max(0)], &[1], 0) {
        Ok(t) => into_handle(t),
        Err(e) => {
            set_error(e);
            std::ptr::null_mut()
        }
    }
}

/// `as_strided` view of a tensor. Null on error.
///
/// # Safety
///
/// `h` live; `sizes` and `strides` hold `ndim` values.
#[no_mangle]
pub unsafe extern "C" fn tc_as_strided(
    h: *const Tensor,
    sizes: *const i64,
    strides: *const i64,
    ndim: usize,
    offset: i64,
) -> *mut Tensor {
    // SAFETY: the caller's contract.
    let Some(t) = (unsafe { tensor(h) }) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the caller's contract.
    let (sizes, strides) = unsafe {
        (
            std::slice::from_raw_parts(sizes, ndim),
            std::slice::from_raw_parts(strides, ndim),
        )
    };
    match t.as_strided(sizes, strides, Some(offset)) {
        Ok(v) => into_handle(v),
        Err(e) => {
            set_error(e);
            std::ptr::null_mut()
        }
    }
}

/// Frees a handle (the tensor; its storage goes when its last user does).
///
/// # Safety
///
/// `h` must be a live handle (or null), freed once.
#[no_mangle]
pub unsafe extern "C" fn tc_tensor_free(h: *mut Tensor) {
    if !h.is_null() {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(h) });
    }
}

/// Number of dims, or -1.
///
/// # Safety
///
/// `h` live.
#[no_mangle]
pub unsafe extern "C" fn tc_ndim(h: *const Tensor) -> i64 {
    // SAFETY: the caller's contract.
    unsafe { tensor(h) }.map_or(-1, |t| t.dim() as i64)
}

/// Writes sizes, strides (`ndim` each) and the storage offset.
///
/// # Safety
///
/// `h` live; `sizes` and `strides` writable for `ndim` values.
#[no_mangle]
pub unsafe extern "C" fn tc_geometry(
    h: *const Tensor,
    sizes: *mut i64,
    strides: *mut i64,
    offset: *mut i64,
) -> i32 {
    // SAFETY: the caller's contract.
    let Some(t) = (unsafe { tensor(h) }) else {
        return -1;
    };
    // SAFETY: the caller's contract: room for `ndim` values each.
    unsafe {
        std::ptr::copy_nonoverlapping(t.sizes().as_ptr(), sizes, t.dim());
        std::ptr::copy_nonoverlapping(t.strides().as_ptr(), strides, t.dim());
        *offset = t.storage_offset();
    }
    0
}

/// Writes the dtype's PyTorch name (`float32`, ...) NUL-terminated into
/// `buf` of `len` bytes.
///
/// # Safety
///
/// `h` live; `buf` writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn tc_dtype_name(h: *const Tensor, buf: *mut c_char, len: usize) -> i32 {
    // SAFETY: the caller's contract.
    let Some(t) = (unsafe { tensor(h) }) else {
        return -1;
    };
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
}

/// Whether the tensor's storage refuses writes (1), or not (0); -1 on error.
///
/// # Safety
///
/// `h` live.
#[no_mangle]
pub unsafe extern "C" fn tc_is_read_only(h: *const Tensor) -> i32 {
    // SAFETY: the caller's contract.
    unsafe { tensor(h) }.map_or(-1, |t| i32::from(t.storage().is_read_only()))
}

/// Number of bytes of the tensor's elements (`numel * itemsize`).
///
/// # Safety
///
/// `h` live.
#[no_mangle]
pub unsafe extern "C" fn tc_nbytes(h: *const Tensor) -> i64 {
    // SAFETY: the caller's contract.
    unsafe { tensor(h) }.map_or(-1, |t| t.nbytes() as i64)
}

/// Copies the elements in row-major order, as raw bytes, into `out`
/// (`len` bytes, at least [`tc_nbytes`]). Returns the bytes written, -1 on
/// error.
///
/// # Safety
///
/// `h` live; `out` writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn tc_copy_bytes(h: *const Tensor, out: *mut u8, len: usize) -> i64 {
    // SAFETY: the caller's contract.
    let Some(t) = (unsafe { tensor(h) }) else {
        return -1;
    };
    let run = || -> Result<i64, String> {
        let c = t.contiguous().map_err(|e| e.to_string())?;
        let n = c.nbytes();
        if n > len {
            return Err(format!("output buffer of {len} bytes, need {n}"));
        }
        let guard = c.storage().read().map_err(|e| e.to_string())?;
        let bytes = guard.bytes().map_err(|e| e.to_string())?;
        let start = c.storage_offset() as usize * c.element_size();
        let src = bytes
            .get(start..start + n)
            .ok_or("tensor outside its storage")?;
        // SAFETY: `out` has room for `len >= n` bytes (caller, checked).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), out, n) };
        Ok(n as i64)
    };
    run().unwrap_or_else(|e| {
        set_error(e);
        -1
    })
}

/// Sets the element at row-major position `flat` to `value` (converted to
/// the dtype). 0 on success, -1 on error (see [`tc_last_error`]).
///
/// # Safety
///
/// `h` live.
#[no_mangle]
pub unsafe extern "C" fn tc_set_f64(h: *const Tensor, flat: i64, value: f64) -> i32 {
    // SAFETY: the caller's contract.
    let Some(t) = (unsafe { tensor(h) }) else {
        return -1;
    };
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
    EXPORT_DELETER_CALLS.fetch_add(1, Ordering::SeqCst);
    if let Some(d) = take(&EXPORT_DELETERS, m as usize) {
        // SAFETY: the original deleter of `m`, called once.
        unsafe { d(m) }
    }
}

/// Counts, then chains to the original deleter of our versioned export.
///
/// # Safety
///
/// As for [`counting_export_deleter`].
unsafe extern "C" fn counting_export_deleter_v(m: *mut DLManagedTensorVersioned) {
    EXPORT_DELETER_CALLS.fetch_add(1, Ordering::SeqCst);
    if let Some(d) = take(&EXPORT_DELETERS_V, m as usize) {
        // SAFETY: the original deleter of `m`, called once.
        unsafe { d(m) }
    }
}

/// Counts, then chains to the producer's deleter of an imported tensor.
///
/// # Safety
///
/// `m` must be a managed tensor we imported, released once.
unsafe extern "C" fn counting_import_deleter(m: *mut DLManagedTensor) {
    IMPORT_DELETER_CALLS.fetch_add(1, Ordering::SeqCst);
    if let Some(d) = take(&IMPORT_DELETERS, m as usize) {
        // SAFETY: the producer's deleter, called once.
        unsafe { d(m) }
    }
}

/// Versioned form of [`counting_import_deleter`].
///
/// # Safety
///
/// As for [`counting_import_deleter`].
unsafe extern "C" fn counting_import_deleter_v(m: *mut DLManagedTensorVersioned) {
    IMPORT_DELETER_CALLS.fetch_add(1, Ordering::SeqCst);
    if let Some(d) = take(&IMPORT_DELETERS_V, m as usize) {
        // SAFETY: the producer's deleter, called once.
        unsafe { d(m) }
    }
}

/// Exports a tensor as a classic `DLManagedTensor*` (null on error) whose
/// deleter is counted by [`tc_export_deleter_calls`].
///
/// # Safety
///
/// `h` live.
#[no_mangle]
pub unsafe extern "C" fn tc_to_dlpack(h: *const Tensor) -> *mut DLManagedTensor {
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
}

/// Exports a tensor as a `DLManagedTensorVersioned*` (null on error).
///
/// # Safety
///
/// `h` live.
#[no_mangle]
pub unsafe extern "C" fn tc_to_dlpack_versioned(h: *const Tensor) -> *mut DLManagedTensorVersioned {
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
}

/// The flags of a versioned managed tensor (for the test to inspect).
///
/// # Safety
///
/// `m` must be a live `DLManagedTensorVersioned`.
#[no_mangle]
pub unsafe extern "C" fn tc_dlpack_versioned_flags(m: *const DLManagedTensorVersioned) -> u64 {
    // SAFETY: the caller's contract.
    unsafe { (*m).flags }
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
#[no_mangle]
pub unsafe extern "C" fn tc_from_dlpack(m: *mut DLManagedTensor) -> *mut Tensor {
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
}

/// Imports a `DLManagedTensorVersioned*`, as [`tc_from_dlpack`] does.
///
/// # Safety
///
/// As for [`tc_from_dlpack`].
#[no_mangle]
pub unsafe extern "C" fn tc_from_dlpack_versioned(m: *mut DLManagedTensorVersioned) -> *mut Tensor {
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
#[no_mangle]
pub unsafe extern "C" fn tc_st_save_demo(path: *const c_char) -> i32 {
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
}

/// Loads a safetensors file (one read-only mapping). Null on error.
///
/// # Safety
///
/// `path` must be a valid C string, and the file must not be written or
/// truncated by anyone while tensors from it are alive
/// (`torchcore_interop::safetensors::load_mmap`'s contract).
#[no_mangle]
pub unsafe extern "C" fn tc_st_load(path: *const c_char) -> *mut SafetensorsFile {
    // SAFETY: the caller's contract.
    let Some(path) = (unsafe { path_arg(path) }) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the caller's contract (the test driver writes the file once,
    // before this call, and never again while it is mapped).
    match unsafe { load_mmap(&path) } {
        Ok(f) => Box::into_raw(Box::new(f)),
        Err(e) => {
            set_error(e);
            std::ptr::null_mut()
        }
    }
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
#[no_mangle]
pub unsafe extern "C" fn tc_st_free(f: *mut SafetensorsFile) {
    if !f.is_null() {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(f) });
    }
}

/// Number of tensors in the file, and of those that were copied rather
/// than viewed (`copied` may be null).
///
/// # Safety
///
/// `f` live; `copied` null or writable.
#[no_mangle]
pub unsafe extern "C" fn tc_st_len(f: *const SafetensorsFile, copied: *mut i64) -> i64 {
    // SAFETY: the caller's contract.
    let Some(f) = (unsafe { file(f) }) else {
        return -1;
    };
    if !copied.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *copied = f.copied().len() as i64 };
    }
    f.len() as i64
}

/// A handle to the tensor `name` (null if absent); `is_view` (if non-null)
/// receives 1 when it views the file's mapping.
///
/// # Safety
///
/// `f` live; `name` a valid C string; `is_view` null or writable.
#[no_mangle]
pub unsafe extern "C" fn tc_st_get(
    f: *const SafetensorsFile,
    name: *const c_char,
    is_view: *mut i32,
) -> *mut Tensor {
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
}

/// Saves every tensor of a loaded file, with its metadata, to `path`.
///
/// # Safety
///
/// `f` live; `path` a valid C string.
#[no_mangle]
pub unsafe extern "C" fn tc_st_resave(f: *const SafetensorsFile, path: *const c_char) -> i32 {
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

    #[test]
    fn errors_are_reported_through_last_error() {
        // SAFETY: null is accepted and refused.
        assert!(unsafe { tc_from_dlpack(std::ptr::null_mut()) }.is_null());
        // SAFETY: tc_last_error returns a valid C string.
        let msg = unsafe { CStr::from_ptr(tc_last_error()) };
        assert_eq!(msg.to_str().unwrap(), "null DLManagedTensor");
    }
}
