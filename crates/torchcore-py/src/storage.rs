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
//! PyTorch 2.x hands back the same Python object for a `StorageImpl` every
//! time (`t.untyped_storage() is t.untyped_storage()`). Here a process-wide
//! `weakref.WeakValueDictionary` maps [`Storage::id`] (the `StorageImpl`'s
//! address) to the live Python object of that storage. The key cannot be
//! reused while its entry lives: the object owns a handle to the
//! `StorageImpl`, so the address stays allocated until the object (and with
//! it the entry) is gone. No `unsafe`, nothing added to `StorageImpl`.
//!
//! Each tensor object also keeps the storage object it made with
//! `untyped_storage()`, was built from or was `set_` to (`PyTensor`'s
//! `storage_obj`), so the object and its `__dict__` survive while such a
//! tensor object lives. What differs from PyTorch: a tensor that never
//! touched the object (a view made before it, a tensor Rust holds) does not
//! keep it alive; PyTorch keeps it for as long as the `StorageImpl` lives.
//! `docs/python.md` says so.

use std::collections::HashMap;
use std::sync::Mutex;

use c10_core::factories::allocator_for;
use c10_core::{Device, DeviceType, Storage};
use c10_storage::WeakStorage;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
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

/// The preservation table (see the module documentation).
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

/// Weak handles to every storage that got a Python object, by
/// [`Storage::id`], so that `torchcore._C._storage_Use_Count(_cdata)` can find
/// a storage from its id after the object is gone (PyTorch reads the
/// `StorageImpl` at that address; a weak handle keeps the address from
/// being reused, so the lookup is sound). Dead entries are pruned as the
/// table grows.
static WEAK_STORAGES: Mutex<Option<WeakTable>> = Mutex::new(None);

/// See [`WEAK_STORAGES`].
struct WeakTable {
    map: HashMap<usize, WeakStorage>,
    /// Prune dead entries when the table reaches this size.
    prune_at: usize,
}

/// Records a weak handle to `storage` (see [`WEAK_STORAGES`]).
fn remember(storage: &Storage) {
    let mut guard = WEAK_STORAGES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let table = guard.get_or_insert_with(|| WeakTable {
        map: HashMap::new(),
        prune_at: 64,
    });
    if table.map.len() >= table.prune_at {
        table.map.retain(|_, w| !w.is_dead());
        table.prune_at = (table.map.len() * 2).max(64);
    }
    table.map.insert(storage.id(), storage.downgrade());
}

/// `torchcore._C._storage_Use_Count(cdata)`: how many handles share the
/// storage whose `_cdata` is `cdata` (PyTorch's `StorageImpl` use count).
/// PyTorch keeps a storage's Python object, and its reference, for as long
/// as the storage lives once one was made (a `_cdata` implies one was); here
/// the object may already be gone, so its reference is counted either way.
#[pyfunction]
#[pyo3(name = "_storage_Use_Count")]
fn storage_use_count(py: Python<'_>, cdata: usize) -> PyResult<usize> {
    let object_alive = !table(py)?.call_method1("get", (cdata,))?.is_none();
    let found = WEAK_STORAGES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .as_ref()
        .and_then(|t| t.map.get(&cdata).and_then(WeakStorage::upgrade));
    match found {
        // Minus the handle `upgrade` just made; the Python object's counts
        // once, alive or not.
        Some(s) => Ok(s.use_count() - 1 - usize::from(object_alive) + 1),
        None => Err(PyRuntimeError::new_err(format!(
            "_storage_Use_Count: no live storage has _cdata {cdata:#x}"
        ))),
    }
}

/// The Python object of `storage`: the live one if there is one
/// (preservation), else a new `torchcore.UntypedStorage`, recorded.
pub(crate) fn wrap_storage(py: Python<'_>, storage: Storage) -> PyResult<Bound<'_, PyAny>> {
    let key = storage.id();
    if let Some(obj) = table(py)?.call_method1("get", (key,))?.into_iter_none() {
        return Ok(obj);
    }
    remember(&storage);
    let carrier = StorageCarrier {
        storage: Mutex::new(Some(storage)),
    };
    let base = py.get_type::<PyUntypedStorage>();
    let obj = base
        .getattr("__new__")?
        .call1((untyped_class(py)?, carrier))?;
    table(py)?.set_item(key, &obj)?;
    Ok(obj)
}

/// `Option`-like view of a Python `None`.
trait IntoIterNone<'py> {
    fn into_iter_none(self) -> Option<Bound<'py, PyAny>>;
}

impl<'py> IntoIterNone<'py> for Bound<'py, PyAny> {
    fn into_iter_none(self) -> Option<Bound<'py, PyAny>> {
        (!self.is_none()).then_some(self)
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

/// Records `obj` as the preserved object of its storage unless one is
/// already live (called by `torchcore.UntypedStorage.__new__`).
#[pyfunction]
fn _preserve_storage(obj: &Bound<'_, PyUntypedStorage>) -> PyResult<()> {
    let py = obj.py();
    let key = obj.get().storage.id();
    remember(&obj.get().storage);
    let t = table(py)?;
    if t.call_method1("get", (key,))?.is_none() {
        t.set_item(key, obj)?;
    }
    Ok(())
}

/// Registers the storage classes in `m`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyUntypedStorage>()?;
    m.add_class::<StorageCarrier>()?;
    m.add_function(wrap_pyfunction!(_preserve_storage, m)?)?;
    m.add_function(wrap_pyfunction!(storage_use_count, m)?)?;
    Ok(())
}
