//! `torchcore.save` / `torchcore.load` (PyTorch checkpoint files, through
//! `torchcore-pt`), and pickling and copying of tensors, dtypes and
//! devices.
//!
//! Python values map to `torchcore_pt::Value` and back: `None`, `bool`,
//! `int` (up to 128 bits), `float`, `complex`, `str`, `bytes`/`bytearray`,
//! `list`, `tuple`, `set`/`frozenset`, `dict`, `collections.OrderedDict`
//! (with its attributes, such as a state dict's `_metadata`),
//! `torchcore.Size`, `torchcore.dtype`, `torchcore.device` and
//! `torchcore.Tensor`. Loaded parameters come back as tensors with their
//! `requires_grad`.

use std::io::Cursor;
use std::sync::{Arc, Mutex};

use c10_core::{ScalarType, Tensor};
use pyo3::exceptions::{PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyComplex, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet,
    PyString, PyTuple,
};
use torchcore_pt::{
    LoadOptions, MapLocation, OrderedDict, PtError, Py2Strings, StorageValue, Value,
};

use crate::convert::{PyDevice, PyDtype};
use crate::storage::{wrap_storage, PyUntypedStorage};
use crate::tensor::{wrap, PyTensor};

/// Deepest Python structure converted (deeper is refused, not recursed).
const MAX_DEPTH: usize = 1000;

fn pt_err(py: Python<'_>, e: PtError) -> PyErr {
    if let PtError::UnsupportedGlobal { .. } = e {
        // torch raises pickle.UnpicklingError for weights-only refusals.
        if let Ok(cls) = py
            .import("pickle")
            .and_then(|m| m.getattr("UnpicklingError"))
        {
            return PyErr::from_value(cls.call1((e.to_string(),)).unwrap_or(cls));
        }
    }
    PyRuntimeError::new_err(e.to_string())
}

fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "torchcore.save: values nested more than {MAX_DEPTH} deep"
        )));
    }
    let py = obj.py();
    let rec = |x: &Bound<'_, PyAny>| to_value(x, depth + 1);
    if obj.is_none() {
        return Ok(Value::None);
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(Value::Tensor(t.get().handle(py)?));
    }
    if let Some(sv) = typed_storage_value(obj)? {
        return Ok(Value::Storage(sv));
    }
    if let Ok(d) = obj.cast::<PyDtype>() {
        return Ok(Value::Dtype(d.get().st));
    }
    if let Ok(d) = obj.cast::<PyDevice>() {
        return Ok(Value::Device(d.get().d.to_string()));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.extract()?));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Int(i));
        }
        return obj
            .extract::<i128>()
            .map(Value::BigInt)
            .map_err(|_| PyValueError::new_err("torchcore.save: ints must fit in 128 bits"));
    }
    if obj.is_exact_instance_of::<PyFloat>() {
        return Ok(Value::Float(obj.extract()?));
    }
    if let Ok(c) = obj.cast_exact::<PyComplex>() {
        return Ok(Value::Complex(c.real(), c.imag()));
    }
    if obj.is_exact_instance_of::<PyString>() {
        return Ok(Value::Str(obj.extract()?));
    }
    if let Ok(b) = obj.cast_exact::<PyBytes>() {
        return Ok(Value::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(b) = obj.cast_exact::<PyByteArray>() {
        return Ok(Value::Bytes(b.to_vec()));
    }
    let size_cls = py.import("torchcore")?.getattr("Size")?;
    if obj.is_instance(&size_cls)? {
        return Ok(Value::Size(obj.extract()?));
    }
    if let Ok(t) = obj.cast_exact::<PyTuple>() {
        return Ok(Value::Tuple(
            t.iter().map(|x| rec(&x)).collect::<PyResult<_>>()?,
        ));
    }
    if let Ok(l) = obj.cast_exact::<PyList>() {
        return Ok(Value::List(
            l.iter().map(|x| rec(&x)).collect::<PyResult<_>>()?,
        ));
    }
    if let Ok(s) = obj.cast_exact::<PySet>() {
        return Ok(Value::Set(
            s.iter().map(|x| rec(&x)).collect::<PyResult<_>>()?,
        ));
    }
    if let Ok(s) = obj.cast_exact::<PyFrozenSet>() {
        return Ok(Value::Set(
            s.iter().map(|x| rec(&x)).collect::<PyResult<_>>()?,
        ));
    }
    let odict = py.import("collections")?.getattr("OrderedDict")?;
    let dict_like = obj.is_exact_instance_of::<PyDict>() || obj.get_type().is(&odict);
    if let (Ok(d), true) = (obj.cast::<PyDict>(), dict_like) {
        let items = d
            .iter()
            .map(|(k, v)| Ok((rec(&k)?, rec(&v)?)))
            .collect::<PyResult<Vec<_>>>()?;
        if obj.get_type().is(&odict) {
            let mut attrs = Vec::new();
            if let Ok(vars) = obj.getattr("__dict__") {
                if let Ok(vars) = vars.cast::<PyDict>() {
                    for (k, v) in vars.iter() {
                        attrs.push((k.extract::<String>()?, rec(&v)?));
                    }
                }
            }
            return Ok(Value::OrderedDict(OrderedDict { items, attrs }));
        }
        return Ok(Value::Dict(items));
    }
    pickled(obj)
}

/// Any other object (a class instance, a function, a subclass of a
/// container or of a plain type): pickled by Python as `torch.save` would
/// (`torchcore.serialization._pickle_opcodes`), its opcodes written as they
/// are. A weights-only load refuses its globals unless they are allowlisted
/// (`add_safe_globals`), as torch's.
fn pickled(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let ops = obj
        .py()
        .import("torchcore.serialization")?
        .getattr("_pickle_opcodes")?
        .call1((obj,))?;
    Ok(Value::Pickled(ops.extract::<Vec<u8>>()?))
}

/// A `torchcore.TypedStorage` (what `tensor.storage()` and the
/// `FloatStorage`-style classes give) as the storage torch pickles: its
/// bytes and its dtype. Tensors and storages over the same bytes are saved
/// once, as torch does.
fn typed_storage_value(obj: &Bound<'_, PyAny>) -> PyResult<Option<StorageValue>> {
    let py = obj.py();
    let typed = py.import("torchcore.storage")?.getattr("TypedStorage")?;
    if !obj.is_instance(&typed)? {
        return Ok(None);
    }
    let untyped = obj.getattr("_untyped_storage")?;
    let storage = untyped
        .cast::<PyUntypedStorage>()
        .map_err(|_| PyTypeError::new_err("TypedStorage without an UntypedStorage"))?
        .get()
        .storage
        .clone();
    let dtype = obj.getattr("dtype")?;
    let dtype = dtype
        .cast::<PyDtype>()
        .map_err(|_| PyTypeError::new_err("TypedStorage.dtype is not a dtype"))?
        .get()
        .st;
    if storage.device() != c10_storage::Device::CPU {
        return Err(PyNotImplementedError::new_err(
            "torchcore.save: only CPU storages can be saved",
        ));
    }
    Ok(Some(StorageValue { storage, dtype }))
}

/// A loaded storage as torch gives it: a `TypedStorage` of its dtype over
/// the `UntypedStorage` object of its bytes (the same object for every
/// storage and tensor sharing them).
fn typed_storage_obj(py: Python<'_>, sv: &StorageValue) -> PyResult<Py<PyAny>> {
    let untyped = wrap_storage(py, sv.storage.clone())?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("wrap_storage", untyped)?;
    kwargs.set_item("dtype", dtype_obj(py, sv.dtype)?)?;
    kwargs.set_item("_internal", true)?;
    Ok(py
        .import("torchcore.storage")?
        .getattr("TypedStorage")?
        .call((), Some(&kwargs))?
        .unbind())
}

fn dtype_obj(py: Python<'_>, st: ScalarType) -> PyResult<Py<PyAny>> {
    // The one object per dtype, so that `is` comparisons work.
    Ok(crate::convert::dtype_object(py, st)?.into_any())
}

/// The loaded storages' Python objects, by (storage, dtype): torch makes
/// one `TypedStorage` per storage key, so a storage (or a legacy storage
/// view) that appears twice in the value is the same object twice.
type StorageMemo = Vec<((usize, ScalarType), Py<PyAny>)>;

fn from_value(py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
    from_value_in(py, &mut StorageMemo::new(), v)
}

fn from_value_in(py: Python<'_>, memo: &mut StorageMemo, v: &Value) -> PyResult<Py<PyAny>> {
    Ok(match v {
        Value::None => py.None(),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any().unbind(),
        Value::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::BigInt(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::Float(f) => PyFloat::new(py, *f).into_any().unbind(),
        Value::Complex(a, b) => PyComplex::from_doubles(py, *a, *b).into_any().unbind(),
        Value::Str(s) => PyString::new(py, s).into_any().unbind(),
        Value::Bytes(b) => PyBytes::new(py, b).into_any().unbind(),
        Value::List(xs) => {
            let items = xs
                .iter()
                .map(|x| from_value_in(py, memo, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
        Value::Tuple(xs) => {
            let items = xs
                .iter()
                .map(|x| from_value_in(py, memo, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)?.into_any().unbind()
        }
        Value::Set(xs) => {
            let items = xs
                .iter()
                .map(|x| from_value_in(py, memo, x))
                .collect::<PyResult<Vec<_>>>()?;
            PySet::new(py, items)?.into_any().unbind()
        }
        Value::Dict(items) => {
            let d = PyDict::new(py);
            for (k, x) in items {
                d.set_item(from_value_in(py, memo, k)?, from_value_in(py, memo, x)?)?;
            }
            d.into_any().unbind()
        }
        Value::OrderedDict(od) => {
            let d = py.import("collections")?.getattr("OrderedDict")?.call0()?;
            for (k, x) in &od.items {
                d.set_item(from_value_in(py, memo, k)?, from_value_in(py, memo, x)?)?;
            }
            for (k, x) in &od.attrs {
                d.setattr(k.as_str(), from_value_in(py, memo, x)?)?;
            }
            d.unbind()
        }
        Value::Size(s) => py
            .import("torchcore")?
            .getattr("Size")?
            .call1((PyTuple::new(py, s)?,))?
            .unbind(),
        Value::Dtype(d) => dtype_obj(py, *d)?,
        Value::Device(d) => {
            let dev: c10_storage::Device =
                d.parse().map_err(|e: c10_storage::DeviceParseError| {
                    PyRuntimeError::new_err(e.to_string())
                })?;
            Bound::new(py, PyDevice { d: dev })?.into_any().unbind()
        }
        Value::Tensor(t) | Value::Parameter(t) => wrap(py, t.clone())?.into_any().unbind(),
        Value::Storage(sv) => {
            let key = (sv.storage.id(), sv.dtype);
            if let Some((_, obj)) = memo.iter().find(|(k, _)| *k == key) {
                return Ok(obj.clone_ref(py));
            }
            let obj = typed_storage_obj(py, sv)?;
            memo.push((key, obj.clone_ref(py)));
            obj
        }
        _ => {
            return Err(PyNotImplementedError::new_err(
                "torchcore.load: an unknown value kind",
            ))
        }
    })
}

/// A path argument: `str` or `os.PathLike`.
fn as_path(f: &Bound<'_, PyAny>) -> PyResult<Option<std::path::PathBuf>> {
    if f.is_instance_of::<PyString>() {
        return Ok(Some(f.extract::<String>()?.into()));
    }
    if f.hasattr("__fspath__")? {
        let p = f.call_method0("__fspath__")?;
        return Ok(Some(p.extract::<String>()?.into()));
    }
    Ok(None)
}

/// A location given as `str`, `torchcore.device` or a device-like object
/// (`torch.device`), as text.
fn location_text(m: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if let Ok(d) = m.cast::<PyDevice>() {
        return Ok(Some(d.get().d.to_string()));
    }
    if m.is_instance_of::<PyString>() {
        return Ok(Some(m.extract::<String>()?));
    }
    if m.hasattr("type")? && m.hasattr("index")? {
        return Ok(Some(m.str()?.extract::<String>()?));
    }
    Ok(None)
}

/// Where a storage goes once `map_location` has said: the CPU loads it;
/// `meta` gives a meta storage of its size (torch's `_meta_deserialize`);
/// any other target is an error naming the storage and the target.
fn restore(
    key: &str,
    target: &str,
    storage: &c10_core::Storage,
) -> torchcore_pt::Result<Option<c10_core::Storage>> {
    if target == "cpu" {
        Ok(Some(storage.clone()))
    } else if target == "meta" {
        let alloc = c10_core::factories::allocator_for(c10_core::Device::META)?;
        Ok(Some(c10_core::Storage::new(storage.nbytes(), alloc, true)?))
    } else {
        Err(PtError::Location {
            key: key.to_string(),
            location: target.to_string(),
        })
    }
}

/// The Python exception a `map_location` callable raised, kept to be
/// raised again once the load has unwound.
type Raised = Arc<Mutex<Option<PyErr>>>;

/// `torch.load`'s `map_location`: `None` (storages load where they were
/// saved: `cpu` only), a location (`'cpu'`, a cpu device), a dict from
/// location tags to locations (tags not in it stay as saved), or a
/// callable `f(storage, location)` returning a storage or `None` (as
/// saved).
fn load_options(m: Option<&Bound<'_, PyAny>>, raised: &Raised) -> PyResult<LoadOptions> {
    let opts = LoadOptions::default();
    let Some(m) = m.filter(|m| !m.is_none()) else {
        return Ok(opts);
    };
    if let Some(text) = location_text(m)? {
        if text == "cpu" {
            return Ok(opts.map_location(MapLocation::Cpu));
        }
        if text == "meta" {
            // torch's `_is_meta_location`: no record is read.
            return Ok(opts.map_location(MapLocation::Meta));
        }
        // Every storage to another device (`cuda`, `meta:0`, `xla`, ...):
        // torch's error at the first storage ("Attempting to deserialize
        // object on a CUDA device", "don't know how to restore data
        // location"; this package makes CPU and meta tensors only), none
        // for a checkpoint without storages, as torch.
        return Ok(opts.storage_map(move |key, _, storage| restore(key, &text, storage)));
    }
    if let Ok(d) = m.cast::<PyDict>() {
        let mut table = Vec::new();
        for (k, v) in d.iter() {
            let from: String = k.extract()?;
            let to = location_text(&v)?.ok_or_else(|| {
                PyTypeError::new_err(
                    "torchcore.load: map_location dict values must be locations (str or device)",
                )
            })?;
            table.push((from, to));
        }
        return Ok(opts.storage_map(move |key, location, storage| {
            let target = table
                .iter()
                .find(|(from, _)| from == location)
                .map_or(location, |(_, to)| to.as_str());
            restore(key, target, storage)
        }));
    }
    if m.is_callable() {
        let f: Py<PyAny> = m.clone().unbind();
        let raised = raised.clone();
        return Ok(opts.storage_map(move |key, location, storage| {
            Python::attach(|py| {
                let arg = wrap_storage(py, storage.clone())?;
                let r = f.call1(py, (arg, location))?;
                let r = r.bind(py);
                if r.is_none() {
                    return Ok(None);
                }
                match r.cast::<PyUntypedStorage>() {
                    Ok(s) => Ok(Some(s.get().storage.clone())),
                    Err(_) => Err(PyTypeError::new_err(format!(
                        "torchcore.load: map_location returned a {} for storage '{key}'; expected an UntypedStorage or None",
                        r.get_type().name()?
                    ))),
                }
            })
            .map_err(|e: PyErr| {
                let msg = e.to_string();
                *raised.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e);
                PtError::Tensor(format!("map_location raised {msg}"))
            })
        }));
    }
    Err(PyTypeError::new_err(format!(
        "torchcore.load: map_location must be None, a location (str or device), a dict or a callable, not {}",
        m.get_type().name()?
    )))
}

/// `torchcore.save(obj, f)`; `legacy` writes the pre-1.6 format
/// (`_use_new_zipfile_serialization=False`); `crc32=False` writes 0 in
/// every CRC field (`serialization.set_crc32_options(False)`);
/// `skip_data=True` writes storage records as zeros
/// (`serialization.skip_data()`).
#[pyfunction]
#[pyo3(name = "_pt_save", signature = (obj, f, legacy = false, crc32 = true, skip_data = false))]
fn pt_save(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    f: &Bound<'_, PyAny>,
    legacy: bool,
    crc32: bool,
    skip_data: bool,
) -> PyResult<()> {
    let v = to_value(obj, 0)?;
    let path = as_path(f)?;
    let opts = torchcore_pt::SaveOptions::default()
        .crc32(crc32)
        .skip_data(skip_data);
    if let (Some(path), false) = (&path, legacy) {
        return py
            .detach(|| torchcore_pt::save_with(&v, path, None, &opts))
            .map_err(|e| pt_err(py, e));
    }
    let bytes = py
        .detach(|| {
            if legacy {
                torchcore_pt::save_legacy_to_writer(&v, Vec::new())
            } else {
                torchcore_pt::save_to_writer_with(&v, Cursor::new(Vec::new()), &opts)
                    .map(Cursor::into_inner)
            }
        })
        .map_err(|e| pt_err(py, e))?;
    match path {
        Some(path) => std::fs::write(&path, &bytes).map_err(|e| {
            PyRuntimeError::new_err(format!("torchcore.save: {}: {e}", path.display()))
        }),
        None => {
            f.call_method1("write", (PyBytes::new(py, &bytes),))?;
            Ok(())
        }
    }
}

/// `torchcore.load(f, map_location=None, mmap=False)`; `unmarked_big_endian`
/// is the byte order assumed for archives without a `byteorder` record
/// (`torchcore.serialization.set_default_load_endianness`), `mmap_shared`
/// maps shared (`set_default_mmap_options(mmap.MAP_SHARED)`).
#[pyfunction]
#[pyo3(name = "_pt_load", signature = (f, map_location = None, mmap = false, unmarked_big_endian = false, mmap_shared = false, encoding = "utf-8"))]
fn pt_load(
    py: Python<'_>,
    f: &Bound<'_, PyAny>,
    map_location: Option<&Bound<'_, PyAny>>,
    mmap: bool,
    unmarked_big_endian: bool,
    mmap_shared: bool,
    encoding: &str,
) -> PyResult<Py<PyAny>> {
    let raised: Raised = Arc::default();
    let py2 = match encoding.to_ascii_lowercase().replace('_', "-").as_str() {
        "utf-8" | "utf8" => Py2Strings::Utf8,
        "latin1" | "latin-1" | "iso-8859-1" | "l1" => Py2Strings::Latin1,
        "ascii" | "us-ascii" => Py2Strings::Ascii,
        "bytes" => Py2Strings::Bytes,
        other => {
            return Err(PyNotImplementedError::new_err(format!(
                "torchcore.load: encoding={other:?} is not supported ('utf-8', 'latin1', 'ascii' or 'bytes')"
            )))
        }
    };
    let opts = load_options(map_location, &raised)?
        .unmarked_big_endian(unmarked_big_endian)
        .mmap_shared(mmap_shared)
        .py2_strings(py2);
    let v =
        match as_path(f)? {
            Some(path) if mmap => {
                // SAFETY: `torchcore.load(f, mmap=True)` documents torch's own
                // contract for `torch.load(mmap=True)` to its callers: the file
                // must not be written or truncated (by anyone else, when
                // shared) while the loaded tensors live. The mapping is
                // private (copy-on-write) unless MAP_SHARED was asked for.
                py.detach(|| unsafe { torchcore_pt::load_mmap(&path, &opts) })
            }
            Some(path) => py.detach(|| torchcore_pt::load_with(&path, &opts)),
            None if mmap => return Err(PyValueError::new_err(
                "torchcore.load: mmap=True needs a path (str or os.PathLike), not a file object",
            )),
            None => load_file_object(py, f, &opts)?,
        }
        .map_err(|e| {
            // A map_location callable's own exception comes back as it was.
            let own = raised
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            own.unwrap_or_else(|| pt_err(py, e))
        })?;
    from_value(py, &v)
}

/// Loads from a binary file object, from its position. After a legacy
/// (pre-1.6) checkpoint the position is where its data end, as torch
/// leaves it (so a stream of several checkpoints and other pickles reads
/// on); after a ZIP archive, at the end of the stream.
fn load_file_object(
    py: Python<'_>,
    f: &Bound<'_, PyAny>,
    opts: &LoadOptions,
) -> PyResult<Result<Value, PtError>> {
    let start: u64 = f.call_method0("tell")?.extract()?;
    let bytes = read_rest(f)?;
    let legacy = !bytes.starts_with(b"PK\x03\x04");
    let mut cur = Cursor::new(bytes);
    let v = py.detach(|| torchcore_pt::load_from_reader_with(&mut cur, opts));
    if legacy && v.is_ok() {
        f.call_method1("seek", (start + cur.position(),))?;
    }
    Ok(v)
}

/// The rest of a binary file object, from its position: through
/// `readinto` into one buffer when it has it (as torch reads file objects),
/// else through `read()`.
fn read_rest(f: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let py = f.py();
    if !f.hasattr("readinto")? {
        return f.call_method0("read")?.extract();
    }
    let start: u64 = f.call_method0("tell")?.extract()?;
    let end: u64 = f.call_method1("seek", (0, 2))?.extract()?;
    f.call_method1("seek", (start,))?;
    let n = usize::try_from(end.saturating_sub(start))
        .map_err(|_| PyValueError::new_err("torchcore.load: the file is too large"))?;
    let buf = pyo3::types::PyByteArray::new_with(py, n, |_| Ok(()))?;
    let view = py
        .import("builtins")?
        .getattr("memoryview")?
        .call1((&buf,))?;
    let mut filled = 0usize;
    let idx = |i: usize| {
        isize::try_from(i)
            .map_err(|_| PyValueError::new_err("torchcore.load: the file is too large"))
    };
    while filled < n {
        let part = view.get_item(pyo3::types::PySlice::new(py, idx(filled)?, idx(n)?, 1))?;
        let got: Option<usize> = f.call_method1("readinto", (part,))?.extract()?;
        match got {
            Some(0) | None => break,
            Some(k) => filled += k,
        }
    }
    // A short read (the file shrank) leaves a short archive: the loader
    // reports it.
    let mut v = buf.to_vec();
    v.truncate(filled);
    Ok(v)
}

/// Rebuilds a tensor from `torchcore.save` bytes (`Tensor.__reduce__`).
#[pyfunction]
#[pyo3(name = "_rebuild_tensor_from_pt")]
fn rebuild_tensor_from_pt<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyTensor>> {
    let v =
        torchcore_pt::load_from_reader(Cursor::new(data.to_vec())).map_err(|e| pt_err(py, e))?;
    match v {
        Value::Tensor(t) | Value::Parameter(t) => wrap(py, t),
        other => Err(PyRuntimeError::new_err(format!(
            "pickled tensor data holds a {}",
            other.type_name()
        ))),
    }
}

/// The exported dtype object named `name` (unpickling a dtype).
#[pyfunction]
#[pyo3(name = "_dtype_from_name")]
fn dtype_from_name(py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
    let st = ScalarType::from_torch_name(name).map_err(|e| PyValueError::new_err(e.to_string()))?;
    dtype_obj(py, st)
}

/// `torchcore.equal(a, b)`: same sizes and equal elements (NaN is not
/// equal to itself; -0.0 equals 0.0; dtypes may differ, as in torch).
#[pyfunction]
fn equal(py: Python<'_>, a: &Bound<'_, PyTensor>, b: &Bound<'_, PyTensor>) -> PyResult<bool> {
    // Handles taken one at a time: two tensors' locks are never held at once.
    let a = a.get().handle(py)?;
    let b = b.get().handle(py)?;
    // Promotion, conjugate/negative bits and every dtype (complex included)
    // are aten-shape's `equal`.
    let bytes = crate::short_ops::bytes_of(&a).max(crate::short_ops::bytes_of(&b));
    crate::short_ops::run(py, bytes, || aten_shape::compare::equal(&a, &b))
}

fn alias(t: &Tensor) -> PyResult<Tensor> {
    let mut out = t
        .as_strided(t.sizes(), t.strides(), Some(t.storage_offset()))
        .map_err(crate::convert::to_py_err)?;
    if t.requires_grad() {
        out.set_requires_grad(true)
            .map_err(crate::convert::to_py_err)?;
    }
    Ok(out)
}

#[pymethods]
impl PyTensor {
    /// Pickling: the tensor as a one-tensor checkpoint (its storage, dtype,
    /// sizes, strides, offset and `requires_grad`), and its instance
    /// attributes as the pickle's state when it has any (restored into the
    /// new object's `__dict__`, as torch's `__reduce_ex__` does). Each
    /// tensor is pickled on its own: two tensors sharing a storage do not
    /// share it after unpickling (use `torchcore.save` for that).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let v = Value::Tensor(slf.get().handle(py)?);
        let bytes = py
            .detach(|| torchcore_pt::save_to_writer(&v, Cursor::new(Vec::new())))
            .map_err(|e| pt_err(py, e))?
            .into_inner();
        let f = py
            .import("torchcore._C")?
            .getattr("_rebuild_tensor_from_pt")?;
        let args = PyTuple::new(py, [PyBytes::new(py, &bytes)])?;
        match instance_attrs(slf)? {
            Some(state) => PyTuple::new(py, [f, args.into_any(), state.into_any()]),
            None => PyTuple::new(py, [f, args.into_any()]),
        }
    }

    /// `copy.copy`: a new tensor of the same class over the same storage,
    /// with the same instance attributes (each set on the copy, the values
    /// shared), as in torch.
    fn __copy__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTensor>> {
        let py = slf.py();
        let me = slf.get();
        let out = me.wrap_out(py, alias(&me.handle(py)?)?)?;
        if let Some(attrs) = instance_attrs(slf)? {
            for (k, v) in attrs.iter() {
                out.setattr(k.cast_into::<PyString>()?, v)?;
            }
        }
        Ok(out)
    }

    /// `copy.deepcopy`: a tensor over a copy of the storage; tensors that
    /// share a storage still share (one copy) within one `deepcopy`. A
    /// `torchcore.Tensor`'s instance attributes are deep-copied with the
    /// same `memo` into the new object's `__dict__`, as in torch.
    fn __deepcopy__<'py>(
        slf: &Bound<'py, Self>,
        memo: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let out = deepcopy_tensor(slf.get(), slf.py(), memo)?;
        // Only for the exact class. A subclass's copy is a plain `Tensor`
        // without attributes, as before: torch refuses to deep-copy a
        // subclass that does not override `new_empty` (a known difference,
        // left as it was).
        if slf.get_type().is(slf.py().get_type::<PyTensor>()) {
            if let Some(attrs) = instance_attrs(slf)? {
                let copied = slf
                    .py()
                    .import("copy")?
                    .getattr("deepcopy")?
                    .call1((attrs, memo))?;
                out.setattr("__dict__", copied)?;
            }
        }
        Ok(out)
    }
}

/// `self`'s instance attributes (its `__dict__`), `None` when there are none.
fn instance_attrs<'py>(slf: &Bound<'py, PyTensor>) -> PyResult<Option<Bound<'py, PyDict>>> {
    let d = slf.getattr(pyo3::intern!(slf.py(), "__dict__"))?;
    let d = d.cast_into::<PyDict>()?;
    Ok((!d.is_empty()).then_some(d))
}

/// The tensor part of `Tensor.__deepcopy__` (see there).
fn deepcopy_tensor<'py>(
    me: &PyTensor,
    py: Python<'py>,
    memo: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyTensor>> {
    let t = &me.handle(py)?;
    let key = ("torchcore.storage", t.storage().id());
    let base: Tensor = match memo.get_item(key)? {
        Some(b) => b.cast::<PyTensor>()?.get().handle(py)?,
        None => {
            let n = t.storage().nbytes();
            let st = alloc_cpu_copy(t.storage(), n)?;
            let base = Tensor::from_storage(st, ScalarType::Byte, &[n as i64], &[1], 0)
                .map_err(crate::convert::to_py_err)?;
            memo.set_item(key, wrap(py, base.clone())?)?;
            base
        }
    };
    let mut out = Tensor::from_storage(
        base.storage().clone(),
        t.dtype(),
        t.sizes(),
        t.strides(),
        t.storage_offset(),
    )
    .map_err(crate::convert::to_py_err)?;
    if t.requires_grad() {
        out.set_requires_grad(true)
            .map_err(crate::convert::to_py_err)?;
    }
    wrap(py, out)
}

fn alloc_cpu_copy(src: &c10_core::Storage, n: usize) -> PyResult<c10_core::Storage> {
    let err = |e: c10_storage::StorageError| PyRuntimeError::new_err(e.to_string());
    let dst = alloc_cpu::empty_storage(n).map_err(err)?;
    {
        let s = src.read().map_err(err)?;
        let mut d = dst.write().map_err(err)?;
        d.bytes_mut()
            .map_err(err)?
            .copy_from_slice(s.bytes().map_err(err)?);
    }
    Ok(dst)
}

#[pymethods]
impl PyDtype {
    /// Pickles as `torchcore._C._dtype_from_name(name)`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (&'static str,))> {
        let f = py.import("torchcore._C")?.getattr("_dtype_from_name")?;
        Ok((f, (self.st.torch_name(),)))
    }
    fn __copy__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }
    fn __deepcopy__<'py>(slf: Bound<'py, Self>, _memo: &Bound<'py, PyAny>) -> Bound<'py, Self> {
        slf
    }
}

#[pymethods]
impl PyDevice {
    /// Pickles as `torchcore.device(str(self))`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        Ok((
            py.import("torchcore")?.getattr("device")?,
            (self.d.to_string(),),
        ))
    }
    fn __copy__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }
    fn __deepcopy__<'py>(slf: Bound<'py, Self>, _memo: &Bound<'py, PyAny>) -> Bound<'py, Self> {
        slf
    }
}

/// Registers the checkpoint functions (every dtype the loader can produce
/// is registered with the others, from c10-core's table).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pt_save, m)?)?;
    m.add_function(wrap_pyfunction!(pt_load, m)?)?;
    m.add_function(wrap_pyfunction!(rebuild_tensor_from_pt, m)?)?;
    m.add_function(wrap_pyfunction!(equal, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_from_name, m)?)?;
    Ok(())
}
