//! `torchcore._C.StorageBase`: the Rust half of `torchcore.UntypedStorage`
//! (the bytes of a `StorageImpl`), and storage-object preservation.
//!
//! The Python class `torchcore.UntypedStorage` (`python/torchcore/storage.py`)
//! subclasses this one and adds the element-wise methods (indexing,
//! `fill_`, `tolist`, `copy_`, ...), which it runs through a `uint8` tensor
//! viewing the storage. `TypedStorage` is pure Python on top of it.
//!
//! # Preservation
//!
//! As in PyTorch 2.x, a storage's Python object, once made, lives as long
//! as its `StorageImpl` is used anywhere, so every way back to Python
//! (`untyped_storage()` of any tensor over it, a tensor Rust holds, a view
//! made before the object) gives that same object, with its `__dict__`.
//! The mechanism is `c10_storage::binding`, the storage twin of the tensor
//! binding slot: the object owns one `Storage` handle and is published in
//! the `StorageImpl`'s slot ([`bind`]); the `StorageImpl` holds one Python
//! reference to it while any other handle exists (the handle count's
//! 1 → 2 and 2 → 1 edges call `binding_incref`/`binding_decref`, which take
//! the GIL). When the last handle other than the object's goes, so does
//! that reference, and the object, then unreferenced, is freed with the
//! `StorageImpl`.
//!
//! A process-wide `weakref.WeakValueDictionary` from `_cdata` (the
//! `StorageImpl`'s address) to the bound object serves
//! `torchcore._C._storage_Use_Count`, which PyTorch answers by reading the
//! `StorageImpl` at that address; the entry lives exactly as long as the
//! object, hence as long as the `StorageImpl`, so the address is not reused
//! while it exists.

use std::ptr::NonNull;
use std::sync::Mutex;

use c10_core::factories::allocator_for;
use c10_core::{Device, DeviceType, Storage};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyInt, PyTuple, PyType};

use crate::convert::{self, device_arg, PyDevice};

/// `torchcore._C.StorageBase`: one handle to a `StorageImpl`.
#[pyclass(
    name = "StorageBase",
    module = "torchcore._C",
    frozen,
    weakref,
    dict,
    subclass
)]
pub struct PyUntypedStorage {
    pub(crate) storage: Storage,
}

/// A one-shot box carrying a storage handle into `StorageBase.__new__`
/// (how Rust makes an object of the Python subclass without running the
/// subclass's own `__new__` logic on user arguments).
#[pyclass(name = "_StorageCarrier", module = "torchcore._C", frozen)]
pub struct StorageCarrier {
    storage: Mutex<Option<Storage>>,
}

/// The `_cdata` index of bound objects (see the module documentation).
static PRESERVED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn table(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    PRESERVED
        .get_or_try_init(py, || {
            py.import("weakref")?
                .getattr("WeakValueDictionary")?
                .call0()
                .map(Bound::unbind)
        })
        .map(|t| t.bind(py))
}

/// The class Rust-made storage objects get: `torchcore.UntypedStorage`.
static UNTYPED_CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn untyped_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    UNTYPED_CLASS
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("torchcore.storage")?
                    .getattr("UntypedStorage")?
                    .cast_into::<PyType>()?
                    .unbind(),
            )
        })
        .map(|t| t.bind(py))
}

/// `torchcore._C._storage_Use_Count(cdata)`: how many handles share the
/// storage whose `_cdata` is `cdata` (PyTorch's `StorageImpl` use count,
/// which counts the storage object's own handle). A `_cdata` comes from a
/// storage object, and a bound object lives as long as its storage, so the
/// index of bound objects finds every live one.
#[pyfunction]
#[pyo3(name = "_storage_Use_Count")]
fn storage_use_count(py: Python<'_>, cdata: usize) -> PyResult<usize> {
    let obj = table(py)?.call_method1("get", (cdata,))?;
    match obj.cast::<PyUntypedStorage>() {
        Ok(o) => Ok(o.get().storage.use_count()),
        Err(_) => Err(PyRuntimeError::new_err(format!(
            "_storage_Use_Count: no live storage has _cdata {cdata:#x}"
        ))),
    }
}

/// The Python object of `storage`: the one bound to its `StorageImpl` if
/// there is one (preservation), else a new `torchcore.UntypedStorage`,
/// bound.
pub(crate) fn wrap_storage(py: Python<'_>, storage: Storage) -> PyResult<Bound<'_, PyAny>> {
    if let Some(p) = storage.binding_object() {
        // SAFETY: only `PyUntypedStorage` objects are ever bound (`bind`),
        // and this one is alive: it owns a handle to the `StorageImpl` and
        // `storage` is another, so the `StorageImpl` holds a reference to it
        // (rule 2 of `c10_storage::binding`). The GIL is held; the new
        // reference is taken before `storage` (and maybe that one) goes.
        let obj = unsafe { Bound::from_borrowed_ptr(py, p.as_ptr().cast::<ffi::PyObject>()) };
        drop(storage);
        return Ok(obj);
    }
    let carrier = StorageCarrier {
        storage: Mutex::new(Some(storage)),
    };
    let base = py.get_type::<PyUntypedStorage>();
    let obj = base
        .getattr("__new__")?
        .call1((untyped_class(py)?, carrier))?
        .cast_into::<PyUntypedStorage>()?;
    // Another thread may have bound an object meanwhile: that one wins.
    Ok(bind(&obj)?.unwrap_or_else(|| obj.into_any()))
}

/// Binds `obj` to its storage and records it in the `_cdata` index;
/// `Some(existing)` if the storage already has an object (then `obj` stays
/// unbound: a second object of the same storage).
fn bind<'py>(obj: &Bound<'py, PyUntypedStorage>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = obj.py();
    let Some(p) = NonNull::new(obj.as_ptr().cast::<()>()) else {
        return Err(PyRuntimeError::new_err("null object"));
    };
    let storage = &obj.get().storage;
    // SAFETY: `p` is a `PyUntypedStorage` (a frozen pyclass) whose
    // `storage` field owns a handle to this `StorageImpl` until the object
    // is deallocated, which happens only once its Python count is 0, so
    // when no reference taken by the binding's `incref` is outstanding;
    // `binding_incref`/`binding_decref` are sound for any live object
    // (registered at import).
    match unsafe { storage.bind_object(p) } {
        Ok(()) => {
            table(py)?.set_item(storage.id(), obj)?;
            Ok(None)
        }
        Err(Some(existing)) => {
            // SAFETY: a bound object, alive: `obj` owns another handle to
            // the storage, so the storage holds a reference to it.
            let e =
                unsafe { Bound::from_borrowed_ptr(py, existing.as_ptr().cast::<ffi::PyObject>()) };
            Ok(Some(e))
        }
        Err(None) => Err(PyRuntimeError::new_err(
            "torchcore storage binding is not registered",
        )),
    }
}

/// A storage of `nbytes` on `device` (resizable, lazily zeroed on the CPU;
/// no memory at all on the meta device).
pub(crate) fn new_storage(nbytes: usize, device: Device) -> PyResult<Storage> {
    let alloc = allocator_for(device).map_err(convert::to_py_err)?;
    if device.device_type() == DeviceType::Cpu {
        Storage::new_uninit(nbytes, alloc, true)
    } else {
        Storage::new(nbytes, alloc, true)
    }
    .map_err(|e| convert::to_py_err(e.into()))
}

#[pymethods]
impl PyUntypedStorage {
    /// `UntypedStorage()`, `UntypedStorage(nbytes)`,
    /// `UntypedStorage(sequence_of_bytes)`, each with `device=`.
    #[new]
    #[pyo3(signature = (*args, device = None))]
    fn py_new(args: &Bound<'_, PyTuple>, device: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let dev = device_arg(device)?.unwrap_or(Device::CPU);
        if args.len() > 1 {
            return Err(PyRuntimeError::new_err("Too many positional arguments"));
        }
        let Some(arg) = args.iter().next() else {
            return Ok(PyUntypedStorage {
                storage: new_storage(0, dev)?,
            });
        };
        if let Ok(c) = arg.cast::<StorageCarrier>() {
            let taken = c
                .get()
                .storage
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            return match taken {
                Some(storage) => Ok(PyUntypedStorage { storage }),
                None => Err(PyRuntimeError::new_err("storage carrier already used")),
            };
        }
        if arg.is_instance_of::<PyInt>() {
            let n = convert::int(&arg)?;
            let n = usize::try_from(n).map_err(|_| {
                PyRuntimeError::new_err(format!(
                    "Trying to create tensor with negative dimension {n}: [{n}]"
                ))
            })?;
            return Ok(PyUntypedStorage {
                storage: new_storage(n, dev)?,
            });
        }
        let bytes = bytes_from_sequence(&arg)?;
        let storage = new_storage(bytes.len(), dev)?;
        if dev.device_type() == DeviceType::Meta {
            // No memory to write: the size alone, as PyTorch does.
            return Ok(PyUntypedStorage { storage });
        }
        storage
            .write()
            .and_then(|mut w| {
                w.bytes_mut()?.copy_from_slice(&bytes);
                Ok(())
            })
            .map_err(|e| convert::to_py_err(e.into()))?;
        Ok(PyUntypedStorage { storage })
    }

    fn data_ptr(&self) -> PyResult<usize> {
        self.storage
            .data_addr()
            .map_err(|e| convert::to_py_err(e.into()))
    }

    fn nbytes(&self) -> usize {
        self.storage.nbytes()
    }

    fn resizable(&self) -> bool {
        self.storage.resizable()
    }

    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice {
            d: self.storage.device(),
        }
    }

    /// An integer identifying the `StorageImpl` (its address).
    #[getter]
    fn _cdata(&self) -> usize {
        self.storage.id()
    }

    /// How many handles (tensors, storage objects) share the `StorageImpl`.
    fn _use_count(&self) -> usize {
        self.storage.use_count()
    }

    /// Resizes the bytes in place (PyTorch's `resize_`); returns `self`.
    fn resize_<'py>(
        slf: &Bound<'py, Self>,
        nbytes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let n = convert::int(nbytes)?;
        let n = usize::try_from(n).map_err(|_| {
            PyRuntimeError::new_err(format!("Storage size must be non-negative, got {n}"))
        })?;
        let s = slf.get().storage.clone();
        slf.py()
            .detach(|| s.resize(n))
            .map_err(|e| convert::to_py_err(e.into()))?;
        Ok(slf.clone())
    }

    /// A new storage object whose bytes are bytes `start..stop` of this
    /// one, shared (PyTorch's `untyped_storage[start:stop]`); the bounds
    /// are already normalised by `UntypedStorage.__getitem__`.
    fn _slice<'py>(
        slf: &Bound<'py, Self>,
        start: usize,
        stop: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        // Without the GIL: slicing takes the parent's read lock, which a
        // writer on another thread may hold while it waits for the GIL.
        let parent = slf.get().storage.clone();
        let piece = slf
            .py()
            .detach(|| parent.slice(start..stop))
            .map_err(|e| convert::to_py_err(e.into()))?;
        wrap_storage(slf.py(), piece)
    }

    /// For a slice: `(root storage object, byte offset)`; `None` otherwise.
    fn _slice_of<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<(Bound<'py, PyAny>, usize)>> {
        match slf.get().storage.slice_of() {
            Some((root, offset)) => Ok(Some((wrap_storage(slf.py(), root.clone())?, offset))),
            None => Ok(None),
        }
    }

    /// Whether two storage objects share one `StorageImpl`.
    fn _is_same(&self, other: &Bound<'_, PyUntypedStorage>) -> bool {
        self.storage.is_alias_of(&other.get().storage)
    }
}

/// The bytes of a sequence of ints in `0..=255`.
fn bytes_from_sequence(seq: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let Ok(it) = seq.try_iter() else {
        return Err(PyTypeError::new_err(format!(
            "invalid data type '{}'",
            seq.get_type().name()?
        )));
    };
    let mut out = Vec::new();
    for v in it {
        let v = v?;
        let i = convert::int(&v).map_err(|_| {
            PyTypeError::new_err(format!(
                "invalid data type '{}'",
                v.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        // PyTorch wraps values into a byte.
        out.push(i.rem_euclid(256) as u8);
    }
    Ok(out)
}

/// Binds `obj` as the preserved object of its storage unless the storage
/// already has one (called by `torchcore.UntypedStorage.__new__`).
#[pyfunction]
fn _preserve_storage(obj: &Bound<'_, PyUntypedStorage>) -> PyResult<()> {
    bind(obj).map(drop)
}

/// Registers the storage classes in `m`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyUntypedStorage>()?;
    m.add_class::<StorageCarrier>()?;
    m.add_function(wrap_pyfunction!(_preserve_storage, m)?)?;
    m.add_function(wrap_pyfunction!(storage_use_count, m)?)?;
    Ok(())
}
