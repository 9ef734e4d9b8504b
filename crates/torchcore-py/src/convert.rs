//! Conversions between Python values and the core's: errors, dtypes,
//! devices, scalars, shapes, nested lists.

use c10_core::scalar_type::NUM_SCALAR_TYPES;
use c10_core::{
    Device, ErrorKind, MemoryFormat, Scalar, ScalarType, Tensor, TensorError, TensorOptions,
};
use pyo3::exceptions::{
    PyIndexError, PyMemoryError, PyNotImplementedError, PyOverflowError, PyRuntimeError,
    PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyComplex, PyComplexMethods, PyFloat, PyInt, PyList, PySequence, PyString, PyTuple,
};

/// A core error as the exception PyTorch raises, with PyTorch's message
/// (`ErrorKind::python_exception` names the class).
pub(crate) fn to_py_err(e: TensorError) -> PyErr {
    let msg = e.to_string();
    match e.kind() {
        ErrorKind::Index => PyIndexError::new_err(msg),
        ErrorKind::Value => PyValueError::new_err(msg),
        ErrorKind::Type => PyTypeError::new_err(msg),
        ErrorKind::NotImplemented => PyNotImplementedError::new_err(msg),
        // torch.OutOfMemoryError is a RuntimeError; device and storage
        // refusals are RuntimeErrors in PyTorch too.
        _ => PyRuntimeError::new_err(msg),
    }
}

/// `Result<T, TensorError>` → `PyResult<T>`.
pub(crate) trait OrPy<T> {
    /// Maps the error with [`to_py_err`].
    fn py(self) -> PyResult<T>;
}

impl<T> OrPy<T> for c10_core::Result<T> {
    #[inline]
    fn py(self) -> PyResult<T> {
        self.map_err(to_py_err)
    }
}

/// `torchcore.dtype`: an element type (`torchcore.float32`, ...). Its
/// `repr` is PyTorch's (`torch.float32`), so tensors print as in torch.
#[pyclass(name = "dtype", module = "torchcore", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyDtype {
    pub(crate) st: ScalarType,
}

/// The one Python object of each dtype, as PyTorch has (`t.dtype is
/// torch.float32`, `torch.float is torch.float32`): every place that hands a
/// dtype to Python goes through this table.
pub(crate) fn dtype_object(py: Python<'_>, st: ScalarType) -> PyResult<Py<PyDtype>> {
    /// One cell per dtype, indexed by its discriminant (`0..48`, pinned by
    /// c10): `t.dtype` is a hot getter, and an array slot answers it
    /// without the lock and hash a map would cost.
    static CACHE: [PyOnceLock<Py<PyDtype>>; NUM_SCALAR_TYPES] =
        [const { PyOnceLock::new() }; NUM_SCALAR_TYPES];
    let Some(cell) = CACHE.get(st as usize) else {
        // Unreachable (every discriminant indexes the array), but an
        // uncached object is still a valid answer.
        return Py::new(py, PyDtype { st });
    };
    Ok(fill_once(cell, py, || Py::new(py, PyDtype { st }))?.clone_ref(py))
}

/// The value of `cell`, made by `make` if the cell is still empty.
///
/// Unlike `PyOnceLock::get_or_try_init`, `make` runs before the cell is
/// touched, so Python code that it runs (a collection triggered by an
/// allocation) may ask for the same cell on this thread without finding
/// an initialisation in progress (which `PyOnceLock` may answer with a
/// deadlock or a panic). A thread that loses the race to fill the cell
/// drops its value and gets the winner's.
pub(crate) fn fill_once<'a, T>(
    cell: &'a PyOnceLock<T>,
    py: Python<'_>,
    make: impl FnOnce() -> PyResult<T>,
) -> PyResult<&'a T> {
    if let Some(v) = cell.get(py) {
        return Ok(v);
    }
    let fresh = make()?;
    // `Err` only hands back `fresh`: another thread filled the cell first.
    let _ = cell.set(py, fresh);
    cell.get(py)
        .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("a filled cell reads empty"))
}

#[pymethods]
impl PyDtype {
    fn __repr__(&self) -> String {
        format!(
            "torch.{}",
            self.st.torch_name().trim_start_matches("torch.")
        )
    }
    #[getter]
    fn is_floating_point(&self) -> bool {
        self.st.is_floating_point()
    }
    #[getter]
    fn is_complex(&self) -> bool {
        self.st.is_complex()
    }
    #[getter]
    fn is_signed(&self) -> bool {
        self.st.is_signed().unwrap_or(false)
    }
    #[getter]
    fn itemsize(&self) -> usize {
        self.st.itemsize()
    }
}

/// `torchcore.device`: a device (`device('cpu')`, `device(type='cuda',
/// index=0)`).
#[pyclass(name = "device", module = "torchcore", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyDevice {
    pub(crate) d: Device,
}

#[pymethods]
impl PyDevice {
    #[new]
    #[pyo3(signature = (r#type, index = None))]
    fn new(r#type: &Bound<'_, PyAny>, index: Option<i64>) -> PyResult<PyDevice> {
        if let Ok(d) = r#type.cast::<PyDevice>() {
            return Ok(*d.get());
        }
        let s: String = r#type.extract()?;
        let full = match index {
            Some(i) => format!("{s}:{i}"),
            None => s,
        };
        let d: Device = full
            .parse()
            .map_err(|e: c10_storage::DeviceParseError| PyRuntimeError::new_err(e.to_string()))?;
        Ok(PyDevice { d })
    }
    #[getter]
    fn r#type(&self) -> String {
        self.d.device_type().to_string()
    }
    #[getter]
    fn index(&self) -> Option<i64> {
        let s = self.d.to_string();
        s.split_once(':').and_then(|(_, i)| i.parse().ok())
    }
    fn __repr__(&self) -> String {
        match self.index() {
            Some(i) => format!("device(type='{}', index={i})", self.r#type()),
            None => format!("device(type='{}')", self.r#type()),
        }
    }
    fn __str__(&self) -> String {
        self.d.to_string()
    }
}

/// `torchcore.memory_format`.
#[pyclass(name = "memory_format", module = "torchcore", frozen, eq)]
#[derive(Clone, Copy, PartialEq)]
pub struct PyMemoryFormat {
    pub(crate) f: MemoryFormat,
}

#[pymethods]
impl PyMemoryFormat {
    fn __repr__(&self) -> &'static str {
        match self.f {
            MemoryFormat::Contiguous => "torch.contiguous_format",
            MemoryFormat::Preserve => "torch.preserve_format",
            MemoryFormat::ChannelsLast => "torch.channels_last",
            MemoryFormat::ChannelsLast3d => "torch.channels_last_3d",
        }
    }
}

/// A device argument: a `device`, a string, or an int (a CUDA index).
pub(crate) fn device_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Device>> {
    let Some(obj) = obj else { return Ok(None) };
    if obj.is_none() {
        return Ok(None);
    }
    if let Ok(d) = obj.cast::<PyDevice>() {
        return Ok(Some(d.get().d));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let s: String = s.extract()?;
        let d: Device = s
            .parse()
            .map_err(|e: c10_storage::DeviceParseError| PyRuntimeError::new_err(e.to_string()))?;
        return Ok(Some(d));
    }
    if let Ok(i) = obj.extract::<i64>() {
        let d: Device = format!("cuda:{i}")
            .parse()
            .map_err(|e: c10_storage::DeviceParseError| PyRuntimeError::new_err(e.to_string()))?;
        return Ok(Some(d));
    }
    Err(PyTypeError::new_err(format!(
        "expected a device, got {}",
        obj.get_type().name()?
    )))
}

/// A `dtype=` argument.
pub(crate) fn dtype_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<ScalarType>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => match o.cast::<PyDtype>() {
            Ok(d) => Ok(Some(d.get().st)),
            // PyTorch also takes the Python scalar types, as NumPy does.
            Err(_) => python_type_dtype(o).map(Some).ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "dtype must be torchcore.dtype, not {}",
                    o.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            }),
        },
    }
}

/// The dtype PyTorch gives a Python scalar type used as `dtype=`:
/// `float` -> float64, `int` -> int64, `bool` -> bool, `complex` -> complex128.
fn python_type_dtype(o: &Bound<'_, PyAny>) -> Option<ScalarType> {
    let py = o.py();
    if o.is(py.get_type::<pyo3::types::PyBool>()) {
        Some(ScalarType::Bool)
    } else if o.is(py.get_type::<pyo3::types::PyFloat>()) {
        Some(ScalarType::Double)
    } else if o.is(py.get_type::<pyo3::types::PyInt>()) {
        Some(ScalarType::Long)
    } else if o.is(py.get_type::<pyo3::types::PyComplex>()) {
        Some(ScalarType::ComplexDouble)
    } else {
        None
    }
}

/// A `memory_format=` argument.
pub(crate) fn format_arg(
    obj: Option<&Bound<'_, PyAny>>,
    default: MemoryFormat,
) -> PyResult<MemoryFormat> {
    match obj {
        None => Ok(default),
        Some(o) if o.is_none() => Ok(default),
        Some(o) => Ok(o.cast::<PyMemoryFormat>()?.get().f),
    }
}

/// Factory options (`dtype`, `device`, `requires_grad`).
pub(crate) fn options(
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<TensorOptions> {
    let mut o = TensorOptions::new();
    if let Some(st) = dtype_arg(dtype)? {
        o = o.dtype(st);
    }
    if let Some(d) = device_arg(device)? {
        o = o.device(d);
    }
    if requires_grad {
        o = o.requires_grad(true);
    }
    Ok(o)
}

/// PyTorch's message for a Python int outside `int64` where an `int64` is
/// unpacked (`THPUtils_unpackLong`), raised as `ValueError`.
pub(crate) const OVERFLOW_LONG_LONG: &str = "Overflow when unpacking long long";

/// The `ValueError` PyTorch raises for an int outside `int64`.
pub(crate) fn overflow_long_long() -> PyErr {
    PyValueError::new_err(OVERFLOW_LONG_LONG)
}

/// A Python number as PyTorch's argument parser reads a `Scalar`: like
/// [`scalar`], but an int in `[2**63, 2**64)` is kept as the `uint64` it
/// is (PyTorch makes a `uint64` `Scalar` of it), for the caller to convert
/// to the destination dtype with [`resolve_number`]. Ints outside
/// `[-2**63, 2**64)` raise CPython's `OverflowError` from unpacking an
/// `unsigned long long` ("int too big to convert", "can't convert
/// negative int to unsigned"), as in PyTorch.
pub(crate) enum Number {
    /// Fits the core's `Scalar`.
    Scalar(Scalar),
    /// An int in `[2**63, 2**64)`.
    U64(u64),
}

/// Reads `obj` as a [`Number`].
pub(crate) fn number(obj: &Bound<'_, PyAny>) -> PyResult<Number> {
    if obj.is_instance_of::<PyInt>() && obj.cast::<PyBool>().is_err() {
        return match obj.extract::<i64>() {
            Ok(i) => Ok(Number::Scalar(Scalar::Int(i))),
            Err(_) => obj.extract::<u64>().map(Number::U64),
        };
    }
    scalar(obj).map(Number::Scalar)
}

/// A fill value (`full`, `full_like`, `new_full`, `fill_`) as a
/// [`Number`]: what [`number`] reads, plus a Python `complex` (or a
/// subclass, such as NumPy's `complex128`) and a one-element complex
/// tensor, as `Scalar::Complex`. A complex tensor filling a real tensor
/// gives its real part with PyTorch's `UserWarning` ("Casting complex
/// values to real discards the imaginary part"); `dst` is the dtype filled.
pub(crate) fn fill_number(obj: &Bound<'_, PyAny>, dst: Option<ScalarType>) -> PyResult<Number> {
    if let Ok(c) = obj.cast::<PyComplex>() {
        return Ok(Number::Scalar(Scalar::Complex(c.real(), c.imag())));
    }
    if let Ok(t) = obj.cast::<crate::tensor::PyTensor>() {
        let py = obj.py();
        let t = t.get().handle(py)?;
        if t.numel() == 1 && t.dtype().is_complex() {
            refuse_meta_item(&t)?;
            let z = py
                .detach(|| {
                    aten_shape::copy::to_dtype(&t, ScalarType::ComplexDouble)
                        .and_then(|c| c.to_vec::<c10_core::scalar_type::Complex128>())
                })
                .py()?;
            let (re, im) = z.first().map_or((0.0, 0.0), |z| (z.re, z.im));
            if dst.is_some_and(|d| !d.is_complex()) {
                PyErr::warn(
                    py,
                    &py.get_type::<pyo3::exceptions::PyUserWarning>(),
                    c"Casting complex values to real discards the imaginary part",
                    1,
                )?;
                return Ok(Number::Scalar(Scalar::Float(re)));
            }
            return Ok(Number::Scalar(Scalar::Complex(re, im)));
        }
    }
    number(obj)
}

/// C's name for an integral dtype, as PyTorch's overflow message spells it.
fn c_type_name(st: ScalarType) -> &'static str {
    match st {
        ScalarType::Byte => "uint8_t",
        ScalarType::Char => "int8_t",
        ScalarType::Short => "int16_t",
        ScalarType::Int => "int32_t",
        ScalarType::UInt16 => "uint16_t",
        ScalarType::UInt32 => "uint32_t",
        ScalarType::UInt64 => "uint64_t",
        _ => "int64_t",
    }
}

/// A [`Number`] as the `Scalar` to write into a tensor of dtype `st`: an
/// int past `int64` becomes a float for floating and complex dtypes,
/// `True` for bool, and for integral dtypes PyTorch's `RuntimeError`
/// ("value cannot be converted to type int64_t without overflow").
pub(crate) fn resolve_number(n: Number, st: ScalarType) -> PyResult<Scalar> {
    match n {
        Number::Scalar(s) => Ok(s),
        Number::U64(u) if st.is_floating_point() || st.is_complex() => Ok(Scalar::Float(u as f64)),
        Number::U64(u) if st == ScalarType::Bool => Ok(Scalar::Bool(u != 0)),
        Number::U64(_) => Err(PyRuntimeError::new_err(format!(
            "value cannot be converted to type {} without overflow",
            c_type_name(st)
        ))),
    }
}

/// A Python number as a `Scalar` (`bool` before `int`, as it subclasses it;
/// objects with `__index__` are integers, others with `__float__` floats).
/// An int outside `int64` is PyTorch's `ValueError` ("Overflow when
/// unpacking long long"); [`number`] accepts the `uint64` range too.
pub(crate) fn scalar(obj: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Scalar::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Scalar::Int(int(obj)?));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Scalar::Float(f.value()));
    }
    if let Ok(t) = obj.cast::<crate::tensor::PyTensor>() {
        let t = t.get().handle(obj.py())?;
        if t.numel() == 1 {
            return item(obj.py(), &t);
        }
    }
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Scalar::Int(i));
    }
    if let Ok(f) = obj.extract::<f64>() {
        return Ok(Scalar::Float(f));
    }
    Err(PyTypeError::new_err(format!(
        "expected a number, got {}",
        obj.get_type().name()?
    )))
}

/// An `int` argument, read through `__index__` (so `True`, NumPy integers
/// and 0-d integer tensors work, floats do not). An int outside `int64`
/// raises PyTorch's `ValueError` ("Overflow when unpacking long long"),
/// not PyO3's `OverflowError`.
#[inline]
pub(crate) fn int(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    obj.extract::<i64>().map_err(|e| {
        if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) {
            overflow_long_long()
        } else {
            e
        }
    })
}

/// An `int` parameter of a Python-facing function: extracted like [`int`],
/// so a value outside `int64` raises `ValueError("Overflow when unpacking
/// long long")` as in PyTorch (a plain `i64` parameter would raise PyO3's
/// `OverflowError`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct I64(pub(crate) i64);

impl<'py> FromPyObject<'_, 'py> for I64 {
    type Error = PyErr;
    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<I64> {
        int(&obj).map(I64)
    }
}

/// The type name PyTorch's argument errors print for `x` (C `tp_name`):
/// the bare name for builtins and Python classes (`bool`, `Tensor`,
/// `MyIndex`), `numpy.`-qualified for NumPy's scalar types
/// (`numpy.float64`, `numpy.bool`).
pub(crate) fn tp_name(x: &Bound<'_, PyAny>) -> String {
    let ty = x.get_type();
    let name = ty.name().map(|n| n.to_string()).unwrap_or_default();
    match ty.module() {
        Ok(m) if m.to_cow().is_ok_and(|m| m == "numpy") => format!("numpy.{name}"),
        _ => name,
    }
}

/// PyTorch's test of a size list's *first* element (`is_int_or_symint`),
/// which decides whether the argument is a size list at all: an `int` that
/// is not a `bool` (NumPy integers too), an object whose `__index__`
/// works, or a one-element integral (or bool) tensor. Floats, bools, NumPy
/// bools and objects with only `__int__` are refused.
pub(crate) fn int_like(x: &Bound<'_, PyAny>) -> bool {
    if x.is_instance_of::<PyBool>() {
        return false;
    }
    if x.is_instance_of::<PyInt>() {
        return true;
    }
    if let Ok(t) = x.cast::<crate::tensor::PyTensor>() {
        return t
            .get()
            .handle(x.py())
            .is_ok_and(|t| t.numel() == 1 && t.dtype().is_integral(true));
    }
    match x.extract::<i64>() {
        Ok(_) => true,
        Err(e) => e.is_instance_of::<pyo3::exceptions::PyOverflowError>(x.py()),
    }
}

/// PyTorch's error for a bool tensor read as a size (its `item<int64_t>`).
const BOOL_TENSOR_AS_INT: &str = "Expected scalar.isIntegral( false) to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)";

/// One element of a size list, read as PyTorch reads them once the first
/// element passed [`int_like`]: ints (a `bool` too, past the first
/// position), `__index__` objects, one-element integer tensors. Anything
/// else is PyTorch's `TypeError` (`view(): argument 'size' failed to unpack
/// the object at pos 2 with error "type must be tuple of ints,but got
/// float"`, `pos` counting from 1; an int past `int64` gives "Overflow when
/// unpacking long long"; PyTorch appends a C++ backtrace inside the quotes,
/// left out here); a one-element bool tensor its `RuntimeError`.
fn size_elem(x: &Bound<'_, PyAny>, what: &str, index: usize) -> PyResult<i64> {
    let unpack = |msg: &str| {
        PyTypeError::new_err(format!(
            "{what} failed to unpack the object at pos {} with error \"{msg}\"",
            index + 1
        ))
    };
    let refused = || {
        unpack(&format!(
            "type must be tuple of ints,but got {}",
            tp_name(x)
        ))
    };
    if let Ok(t) = x.cast::<crate::tensor::PyTensor>() {
        let t = t.get().handle(x.py())?;
        if t.numel() != 1 || !t.dtype().is_integral(true) {
            return Err(refused());
        }
        if t.dtype() == ScalarType::Bool {
            return Err(PyRuntimeError::new_err(BOOL_TENSOR_AS_INT));
        }
        return Ok(item(x.py(), &t)?.to_i64());
    }
    x.extract::<i64>().map_err(|e| {
        if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(x.py()) {
            unpack(OVERFLOW_LONG_LONG)
        } else {
            refused()
        }
    })
}

/// `obj` as an int if it is one (a Python `int`, or not a sequence and
/// convertible through `__index__`); `None` for sequences. Testing the type
/// first avoids building (and discarding) a `TypeError` for sequences.
#[inline]
pub(crate) fn maybe_int(obj: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    if obj.is_instance_of::<PyInt>() {
        return int(obj).map(Some);
    }
    if obj.cast::<PyTuple>().is_ok() || obj.cast::<PyList>().is_ok() {
        return Ok(None);
    }
    match int(obj) {
        Ok(i) => Ok(Some(i)),
        // An int-like that overflows is an error, not "not an int".
        Err(e) if e.is_instance_of::<PyValueError>(obj.py()) => Err(e),
        Err(_) => Ok(None),
    }
}

/// PyTorch's `TypeError` for a call without its size argument, from a
/// `what` such as `"reshape(): argument 'shape'"`: `reshape() missing 1
/// required positional arguments: "shape"`.
pub(crate) fn missing_argument(what: &str) -> PyErr {
    let param = what.split('\'').nth(1).unwrap_or("size");
    PyTypeError::new_err(format!(
        "{}() missing 1 required positional arguments: \"{param}\"",
        fn_name(what)
    ))
}

/// The function name in a `what` such as `"view(): argument 'size'"`.
fn fn_name(what: &str) -> &str {
    what.split("()").next().unwrap_or(what)
}

/// A size or dims argument given as `f(2, 3)` or `f((2, 3))`/`f([2, 3])`
/// (the slow path of the Python fast paths: anything but plain ints),
/// with PyTorch's parser's rules and errors: the first element decides
/// (see [`int_like`]); a single argument that is neither a list nor
/// int-like is "`f(): argument 'size' (position 1) must be tuple of ints,
/// not float`", several whose first is not int-like "`f() takes 1
/// positional argument but 2 were given`".
pub(crate) fn int_list(args: &Bound<'_, PyTuple>, what: &str) -> PyResult<Vec<i64>> {
    let n = args.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let a0 = args.get_item(0)?;
    if n == 1 {
        if a0.cast::<PyTuple>().is_ok() || a0.cast::<PyList>().is_ok() {
            return list_ints(&a0, what, " (position 1)");
        }
        if int_like(&a0) {
            return Ok(vec![size_elem(&a0, what, 0)?]);
        }
        return Err(PyTypeError::new_err(format!(
            "{what} (position 1) must be tuple of ints, not {}",
            tp_name(&a0)
        )));
    }
    if !int_like(&a0) {
        return Err(PyTypeError::new_err(format!(
            "{}() takes 1 positional argument but {n} were given",
            fn_name(what)
        )));
    }
    args.iter()
        .enumerate()
        .map(|(i, x)| size_elem(&x, what, i))
        .collect()
}

/// A tuple or list of ints, its first element checked with [`int_like`]
/// (`position` is the argument's " (position N)" in the error, or "").
fn list_ints(a: &Bound<'_, PyAny>, what: &str, position: &str) -> PyResult<Vec<i64>> {
    let items: Vec<Bound<'_, PyAny>> = if let Ok(t) = a.cast::<PyTuple>() {
        t.iter().collect()
    } else {
        a.try_iter()?.collect::<PyResult<_>>()?
    };
    if let Some(first) = items.first() {
        if !int_like(first) {
            return Err(PyTypeError::new_err(format!(
                "{what}{position} must be tuple of ints, but found element of type {} at pos 0",
                tp_name(first)
            )));
        }
    }
    items
        .iter()
        .enumerate()
        .map(|(i, x)| size_elem(x, what, i))
        .collect()
}

/// A size given as one argument (`full(size, ...)`, `new_full(size,
/// ...)`): a tuple or list (see [`list_ints`]), else PyTorch's `TypeError`
/// ("`full(): argument 'size' (position 1) must be tuple of ints, not
/// int`"); `position` is the argument's place in the call.
pub(crate) fn size_arg(a: &Bound<'_, PyAny>, what: &str, position: usize) -> PyResult<Vec<i64>> {
    size_arg_check(a, what, position)?;
    list_ints(a, what, "")
}

/// The type check PyTorch's parser makes of a one-argument size before any
/// other argument is converted (see [`size_arg`]): a tuple or list whose
/// first element passes [`int_like`]. The elements are read later, after
/// the other arguments (so `full((2**63,), None)` reports the fill value).
pub(crate) fn size_arg_check(a: &Bound<'_, PyAny>, what: &str, position: usize) -> PyResult<()> {
    let first = if let Ok(t) = a.cast::<PyTuple>() {
        t.iter().next()
    } else if let Ok(l) = a.cast::<PyList>() {
        l.iter().next()
    } else {
        return Err(PyTypeError::new_err(format!(
            "{what} (position {position}) must be tuple of ints, not {}",
            tp_name(a)
        )));
    };
    match first {
        Some(x) if !int_like(&x) => Err(PyTypeError::new_err(format!(
            "{what} (position {position}) must be tuple of ints, but found element of type {} at pos 0",
            tp_name(&x)
        ))),
        _ => Ok(()),
    }
}

/// A sequence of ints (tuples and lists with PyTorch's rules, see
/// [`list_ints`]; other sequences element by element).
pub(crate) fn seq_ints(a: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<i64>> {
    if a.cast::<PyTuple>().is_ok() || a.cast::<PyList>().is_ok() {
        return list_ints(a, what, "");
    }
    if let Ok(s) = a.cast::<PySequence>() {
        let mut out = Vec::new();
        for i in 0..s.len()? {
            out.push(size_elem(&s.get_item(i)?, what, i)?);
        }
        return Ok(out);
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be tuple of ints, not {}",
        tp_name(a)
    )))
}

/// The single element of a tensor as a `Scalar`.
pub(crate) fn item(py: Python<'_>, t: &Tensor) -> PyResult<Scalar> {
    if t.numel() != 1 {
        return Err(PyRuntimeError::new_err(format!(
            "a Tensor with {} elements cannot be converted to Scalar",
            t.numel()
        )));
    }
    refuse_meta_item(t)?;
    let flat = t.as_strided(&[], &[], None).py()?;
    Ok(flat_values(py, &flat)?
        .into_iter()
        .next()
        .unwrap_or(Scalar::Int(0)))
}

/// PyTorch's refusal to read a meta tensor's (absent) data in `item()`.
fn refuse_meta_item(t: &Tensor) -> PyResult<()> {
    if t.device().device_type() == c10_core::DeviceType::Meta {
        return Err(PyRuntimeError::new_err(
            "Tensor.item() cannot be called on meta tensors",
        ));
    }
    Ok(())
}

/// PyTorch's refusal to copy a meta tensor's (absent) data out
/// (`tolist()`, `.cpu()`).
pub(crate) fn refuse_meta_copy(t: &Tensor) -> PyResult<()> {
    if t.device().device_type() == c10_core::DeviceType::Meta {
        return Err(PyNotImplementedError::new_err(
            "Cannot copy out of meta tensor; no data!",
        ));
    }
    Ok(())
}

/// `item()`: the single element of a tensor as a Python number (an
/// `int` up to 2**64 - 1 for the unsigned types, a `complex` for complex
/// dtypes).
pub(crate) fn item_py(py: Python<'_>, t: &Tensor) -> PyResult<Py<PyAny>> {
    if t.numel() == 1 {
        refuse_meta_item(t)?;
        // One element, whatever the shape: read it straight from `t`.
        if let Some(v) = crate::elements::Typed::read(py, t)? {
            return Ok(v.get(py, 0)?.unbind());
        }
        let flat = t.as_strided(&[], &[], None).py()?;
        if let Some(v) = crate::elements::flat_py_values(py, &flat)? {
            if let Some(x) = v.into_iter().next() {
                return Ok(x);
            }
        }
    }
    scalar_to_py(py, item(py, t)?)
}

/// Every element of `t`, row-major, as `Scalar`s; reads the storage with
/// the GIL released (it may wait on the storage's lock).
pub(crate) fn flat_values(py: Python<'_>, t: &Tensor) -> PyResult<Vec<Scalar>> {
    py.detach(|| flat_values_nogil(t))
}

fn flat_values_nogil(t: &Tensor) -> PyResult<Vec<Scalar>> {
    use half::{bf16, f16};
    Ok(match t.dtype() {
        ScalarType::Bool => t
            .to_vec::<bool>()
            .py()?
            .into_iter()
            .map(Scalar::Bool)
            .collect(),
        ScalarType::Byte => ints(t.to_vec::<u8>().py()?),
        ScalarType::Char => ints(t.to_vec::<i8>().py()?),
        ScalarType::Short => ints(t.to_vec::<i16>().py()?),
        ScalarType::Int => ints(t.to_vec::<i32>().py()?),
        ScalarType::UInt16 => ints(t.to_vec::<u16>().py()?),
        ScalarType::UInt32 => ints(t.to_vec::<u32>().py()?),
        ScalarType::Long => t
            .to_vec::<i64>()
            .py()?
            .into_iter()
            .map(Scalar::Int)
            .collect(),
        ScalarType::Half => floats(t.to_vec::<f16>().py()?.into_iter().map(f64::from)),
        ScalarType::BFloat16 => floats(t.to_vec::<bf16>().py()?.into_iter().map(f64::from)),
        ScalarType::Float => floats(t.to_vec::<f32>().py()?.into_iter().map(f64::from)),
        ScalarType::Double => floats(t.to_vec::<f64>().py()?),
        ScalarType::UInt64 => t
            .to_vec::<u64>()
            .py()?
            .into_iter()
            .map(|x| {
                i64::try_from(x).map(Scalar::Int).map_err(|_| {
                    pyo3::exceptions::PyOverflowError::new_err(format!(
                        "value cannot be converted to type int64 without overflow: {x}"
                    ))
                })
            })
            .collect::<PyResult<_>>()?,
        ScalarType::ComplexHalf | ScalarType::ComplexFloat | ScalarType::ComplexDouble => {
            aten_shape::copy::to_dtype(t, ScalarType::ComplexDouble)
                .and_then(|c| c.to_vec::<c10_core::scalar_type::Complex128>())
                .py()?
                .into_iter()
                .map(|z| Scalar::Complex(z.re, z.im))
                .collect()
        }
        ScalarType::Float8_e4m3fn
        | ScalarType::Float8_e5m2
        | ScalarType::Float8_e4m3fnuz
        | ScalarType::Float8_e5m2fnuz
        | ScalarType::Float8_e8m0fnu => floats(
            aten_shape::copy::to_dtype(t, ScalarType::Double)
                .and_then(|d| d.to_vec::<f64>())
                .py()?,
        ),
        other => {
            return Err(PyNotImplementedError::new_err(format!(
                "tolist/item is not implemented for {}",
                other.torch_name()
            )))
        }
    })
}

fn ints<T: Into<i64>>(v: Vec<T>) -> Vec<Scalar> {
    v.into_iter().map(|x| Scalar::Int(x.into())).collect()
}

fn floats(v: impl IntoIterator<Item = f64>) -> Vec<Scalar> {
    v.into_iter().map(Scalar::Float).collect()
}

/// A `Scalar` as a Python number.
pub(crate) fn scalar_to_py(py: Python<'_>, s: Scalar) -> PyResult<Py<PyAny>> {
    Ok(match s {
        Scalar::Bool(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
        Scalar::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Scalar::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        Scalar::Complex(re, im) => PyComplex::from_doubles(py, re, im).into_any().unbind(),
    })
}

/// `tolist()`: nested lists of Python numbers (a number for 0-d).
///
/// Built bottom-up, one level of lists per dim, without recursion: a
/// tensor with tens of thousands of (size-1) dims gives its deeply nested
/// list, as in PyTorch, instead of overflowing the stack.
pub(crate) fn tolist(py: Python<'_>, t: &Tensor) -> PyResult<Py<PyAny>> {
    refuse_meta_copy(t)?;
    let sizes = t.sizes();
    // The common case: typed values, innermost lists built from them
    // directly (see `elements::Typed`).
    let fast = match sizes.last() {
        Some(&w) if w > 0 => crate::elements::Typed::read(py, t)?,
        _ => None,
    };
    if let Some(v) = fast {
        let width = usize::try_from(sizes[sizes.len() - 1]).unwrap_or(1);
        let rows = v.rows(py, width)?;
        return nest(py, &sizes[..sizes.len() - 1], rows);
    }
    let vals = match crate::elements::flat_py_values(py, t)? {
        Some(objs) => objs,
        None => flat_values(py, t)?
            .into_iter()
            .map(|s| scalar_to_py(py, s))
            .collect::<PyResult<_>>()?,
    };
    if sizes.is_empty() {
        return match vals.into_iter().next() {
            Some(s) => Ok(s),
            None => Err(PyRuntimeError::new_err("empty 0-d tensor")),
        };
    }
    let items: Vec<Bound<'_, PyAny>> = vals.into_iter().map(|o| o.into_bound(py)).collect();
    nest(py, sizes, items)
}

/// Groups `items` (the elements, or the innermost lists, in row-major
/// order) into nested lists of `sizes`, innermost dim first, without
/// recursion (any number of dims).
fn nest(py: Python<'_>, sizes: &[i64], items: Vec<Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
    let mut items = items;
    let too_many = || {
        PyMemoryError::new_err(format!(
            "tolist(): a tensor of size {sizes:?} needs more lists than fit in memory"
        ))
    };
    // `lists[d]`: how many lists of dim `d` there are (the product of the
    // sizes before it); `None` when that overflows.
    let mut lists: Vec<Option<usize>> = Vec::with_capacity(sizes.len());
    let mut acc = Some(1usize);
    for &n in sizes {
        lists.push(acc);
        acc = acc.and_then(|a| a.checked_mul(usize::try_from(n).ok()?));
    }
    for (d, &n) in sizes.iter().enumerate().rev() {
        let count = lists[d].ok_or_else(too_many)?;
        let width = usize::try_from(n).unwrap_or(0);
        let mut next = Vec::new();
        next.try_reserve_exact(count).map_err(|_| too_many())?;
        let mut it = items.into_iter();
        for _ in 0..count {
            next.push(PyList::new(py, it.by_ref().take(width))?.into_any());
        }
        items = next;
    }
    match items.into_iter().next() {
        Some(list) => Ok(list.unbind()),
        None if sizes.is_empty() => Err(PyRuntimeError::new_err("tolist(): nothing to return")),
        None => Err(PyRuntimeError::new_err("tolist(): no outer list was built")),
    }
}

/// The most dims `tensor(data)` reads from nested sequences: PyTorch's
/// `MAX_DIMS` in `torch/csrc/utils/tensor_new.cpp` (deeper data raises
/// `ValueError: too many dimensions 'list'`). It also bounds the recursion
/// of [`walk`], which could otherwise overflow the stack on a list nested
/// tens of thousands deep.
pub(crate) const MAX_DATA_DIMS: usize = 128;

/// What `torch.tensor(data)` infers: the kinds of the leaves seen.
#[derive(Default)]
struct Leaves {
    sizes: Vec<i64>,
    vals: Vec<Scalar>,
    any_float: bool,
    any_int: bool,
    /// An int outside `int64` was seen (stored in `vals` as its nearest
    /// float): an error unless the tensor is floating.
    big_int: bool,
    /// An int too large even for a float was seen.
    huge_int: bool,
    /// The imaginary parts, parallel to `vals`, once a `complex` was seen
    /// (`None` before: no cost for real data).
    ims: Option<Vec<f64>>,
    /// `sizes` is complete: the first path reached a leaf or an empty
    /// sequence (PyTorch's `compute_sizes` follows element 0 down).
    sizes_done: bool,
    /// The first place the data does not fit `sizes`. PyTorch finds it
    /// while storing, after inferring the dtype from every element, and
    /// never when the tensor has no elements (`[[], [1]]` is a 2x0
    /// tensor), so it is raised at the end, and leaves stop being stored.
    ragged: Option<Ragged>,
    /// The promoted dtype of the tensor elements (PyTorch's inference
    /// takes a tensor element's own dtype, not its value's Python type).
    tensor_dtype: Option<ScalarType>,
    /// A leaf or empty sequence that is not a tensor was seen (so the
    /// Python-value inference takes part).
    any_py_leaf: bool,
    /// A tensor element with more than one element (or none): PyTorch
    /// fails when storing it, with an error that depends on the target
    /// dtype.
    multi_element_tensor: bool,
    /// The first leaf whose dtype PyTorch cannot infer (`None`, a `dict`,
    /// a `Decimal`): its inference error, raised when no dtype is given.
    uninferable: Option<PyErr>,
    /// The first leaf that is a number only through `__float__` (a
    /// `Decimal`, `numpy.float32`, a floating tensor): PyTorch cannot
    /// store it in an integer tensor, nor in a bool one unless it is a
    /// NumPy bool (the flag); the message of its `TypeError`.
    float_only: Option<(String, bool)>,
}

impl Leaves {
    /// Records a sequence of `n` elements met at `depth`: a new size while
    /// the first path is followed, else checked against the sizes (a
    /// mismatch is remembered in [`Leaves::ragged`]).
    fn sequence(&mut self, obj: &Bound<'_, PyAny>, depth: usize, n: i64) {
        if n == 0 {
            // PyTorch infers an empty sequence as the default (float) dtype.
            self.any_float = true;
            self.any_py_leaf = true;
        }
        match self.sizes.get(depth) {
            None if !self.sizes_done => {
                self.sizes.push(n);
                self.sizes_done = n == 0;
            }
            None => {
                let ty = obj
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default();
                self.ragged.get_or_insert(Ragged::SequenceForNumber(ty));
            }
            Some(&expected) if expected != n => {
                self.ragged.get_or_insert(Ragged::Length {
                    dim: depth,
                    expected,
                    got: n,
                });
            }
            Some(_) => {}
        }
    }
}

/// How nested data fails to be rectangular (see [`Leaves::ragged`]).
enum Ragged {
    /// A sequence where the sizes want a number: the sequence's type name.
    SequenceForNumber(String),
    /// A number where the sizes want a sequence.
    NumberForSequence,
    /// A sequence of the wrong length.
    Length { dim: usize, expected: i64, got: i64 },
}

impl Ragged {
    /// PyTorch's error: its message depends on the dtype being stored
    /// (`THPUtils_unpackDouble` against `unpackLong`).
    fn into_err(self, dtype: ScalarType) -> PyErr {
        match self {
            Ragged::SequenceForNumber(ty) if dtype.is_floating_point() || dtype.is_complex() => {
                PyTypeError::new_err(format!("must be real number, not {ty}"))
            }
            Ragged::SequenceForNumber(ty) => {
                PyTypeError::new_err(format!("'{ty}' object cannot be interpreted as an integer"))
            }
            Ragged::NumberForSequence => PyTypeError::new_err("not a sequence"),
            Ragged::Length { dim, expected, got } => PyValueError::new_err(format!(
                "expected sequence of length {expected} at dim {dim} (got {got})"
            )),
        }
    }
}

fn walk(obj: &Bound<'_, PyAny>, depth: usize, acc: &mut Leaves) -> PyResult<()> {
    // The common leaves first, by exact type (one pointer comparison
    // each): plain floats, bools and ints that fit `int64`.
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        return leaf(Scalar::Float(f.value()), depth, acc, false);
    }
    if let Ok(b) = obj.cast_exact::<PyBool>() {
        return leaf(Scalar::Bool(b.is_true()), depth, acc, false);
    }
    if obj.cast_exact::<PyInt>().is_ok() {
        if let Ok(i) = obj.extract::<i64>() {
            return leaf(Scalar::Int(i), depth, acc, false);
        }
    }
    if obj.is_instance_of::<PyInt>() && obj.cast::<PyBool>().is_err() {
        if let Err(e) = obj.extract::<i64>() {
            if !e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) {
                return Err(e);
            }
            // PyTorch reads it as a double when the tensor is floating and
            // fails otherwise; which one is known once all leaves are seen.
            acc.big_int = true;
            let f = obj.extract::<f64>().unwrap_or_else(|_| {
                acc.huge_int = true;
                f64::INFINITY
            });
            return leaf(Scalar::Float(f), depth, acc, true);
        }
    }
    if let Ok(t) = obj.cast::<crate::tensor::PyTensor>() {
        return tensor_leaf(&t.get().handle(obj.py())?, obj.py(), depth, acc);
    }
    if let Ok(c) = obj.cast::<PyComplex>() {
        acc.any_float = true;
        acc.any_py_leaf = true;
        let ims = acc.ims.get_or_insert_with(|| vec![0.0; acc.vals.len()]);
        if acc.sizes.len() > depth {
            acc.ragged.get_or_insert(Ragged::NumberForSequence);
        }
        acc.sizes_done = true;
        if acc.ragged.is_none() {
            ims.push(c.imag());
            acc.vals.push(Scalar::Float(c.real()));
        }
        return Ok(());
    }
    if obj.cast::<PyString>().is_ok() && depth > 0 && !acc.sizes_done {
        // PyTorch reads a `str` met on the first element path as one more
        // (sequence) dim, then refuses it.
        return Err(PyValueError::new_err("too many dimensions 'str'"));
    }
    let is_seq = obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok();
    if !is_seq {
        return other_leaf(obj, depth, acc);
    }
    if depth >= MAX_DATA_DIMS {
        return Err(PyValueError::new_err(format!(
            "too many dimensions '{}'",
            obj.get_type().name()?
        )));
    }
    let seq = obj.cast::<PySequence>()?;
    let n = seq.len()? as i64;
    acc.sequence(obj, depth, n);
    // The elements are walked even past a ragged spot: PyTorch infers the
    // dtype (and refuses invalid elements) over all of them first.
    if let Ok(list) = obj.cast::<PyList>() {
        // A list's items directly (no sequence protocol per item); a list
        // resized by a leaf's conversion is caught by the length check.
        for i in 0..n as usize {
            walk(&list.get_item(i)?, depth + 1, acc)?;
        }
        return Ok(());
    }
    for i in 0..n {
        walk(&seq.get_item(i as usize)?, depth + 1, acc)?;
    }
    Ok(())
}

/// An element that is neither a plain number nor a list or tuple, as
/// PyTorch's `infer_scalar_type` and `recursive_store` take it: `str` and
/// `bytes` are refused (`new(): invalid data type 'str'`), NumPy scalars
/// are leaves of their own dtype, any other sequence (`range`,
/// `bytearray`, `array.array`, an ndarray, a class with `__len__` and
/// `__getitem__`) is walked as one, other numbers (`Decimal`) are stored
/// but cannot give a dtype, and anything else cannot be stored either.
fn other_leaf(obj: &Bound<'_, PyAny>, depth: usize, acc: &mut Leaves) -> PyResult<()> {
    let py = obj.py();
    if obj.cast::<PyString>().is_ok() || obj.cast::<pyo3::types::PyBytes>().is_ok() {
        // PyTorch's inference refuses them, and so does its store of
        // `bytes` or of the data itself; with a dtype, a nested `str` is
        // the store's error instead (a `str` is a sequence of `str`s).
        let err = PyTypeError::new_err(format!(
            "new(): invalid data type '{}'",
            obj.get_type().name()?
        ));
        if depth == 0 {
            return Err(err);
        }
        acc.uninferable.get_or_insert(err);
        if obj.cast::<pyo3::types::PyBytes>().is_ok() {
            // A sequence of ints for the store.
            return walk_sequence(obj, depth, acc);
        }
        let n = obj.len()? as i64;
        match acc.sizes.get(depth) {
            Some(&want) if want != n => {
                acc.ragged.get_or_insert(Ragged::Length {
                    dim: depth,
                    expected: want,
                    got: n,
                });
            }
            _ => {
                acc.ragged
                    .get_or_insert(Ragged::SequenceForNumber("str".to_string()));
            }
        }
        acc.sizes_done = true;
        acc.any_py_leaf = true;
        return Ok(());
    }
    // SAFETY: the GIL is held and `obj` is live.
    let is_sequence = unsafe { pyo3::ffi::PySequence_Check(obj.as_ptr()) } == 1;
    if !is_sequence {
        if let Some(dt) = numpy_scalar_dtype(obj)? {
            return match scalar(obj) {
                Ok(s) => {
                    note_float_only(obj, acc)?;
                    typed_leaf(dt, s, depth, acc)
                }
                Err(_) => bad_leaf(type_tp_name(obj)?, depth, acc),
            };
        }
        let number = obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyFloat>();
        return match scalar(obj) {
            Ok(s) if number => leaf(s, depth, acc, false),
            Ok(s) => {
                acc.uninferable.get_or_insert(could_not_infer(obj)?);
                note_float_only(obj, acc)?;
                leaf(s, depth, acc, false)
            }
            Err(_) => {
                acc.uninferable.get_or_insert(could_not_infer(obj)?);
                bad_leaf(type_tp_name(obj)?, depth, acc)
            }
        };
    }
    let _ = py;
    walk_sequence(obj, depth, acc)
}

/// Walks a sequence other than a list or tuple, through `len` and
/// `__getitem__` (PyTorch's `PySequence_Fast`).
fn walk_sequence(obj: &Bound<'_, PyAny>, depth: usize, acc: &mut Leaves) -> PyResult<()> {
    if depth >= MAX_DATA_DIMS {
        return Err(PyValueError::new_err(format!(
            "too many dimensions '{}'",
            obj.get_type().name()?
        )));
    }
    let n = obj.len()?;
    acc.sequence(obj, depth, n as i64);
    for i in 0..n {
        walk(&obj.get_item(i)?, depth + 1, acc)?;
    }
    Ok(())
}

/// Notes `obj` in [`Leaves::float_only`] when it is neither a Python
/// `int`/`float` (or subclass) nor has a working `__index__`.
fn note_float_only(obj: &Bound<'_, PyAny>, acc: &mut Leaves) -> PyResult<()> {
    if acc.float_only.is_some()
        || obj.is_instance_of::<PyInt>()
        || obj.is_instance_of::<PyFloat>()
        || obj.call_method0("__index__").is_ok()
    {
        return Ok(());
    }
    let name = type_tp_name(obj)?;
    let np_bool = name == "numpy.bool" || name == "numpy.bool_";
    acc.float_only = Some((
        format!("'{name}' object cannot be interpreted as an integer"),
        np_bool,
    ));
    Ok(())
}

/// PyTorch's inference error for `obj` (`Could not infer dtype of
/// NoneType`).
fn could_not_infer(obj: &Bound<'_, PyAny>) -> PyResult<PyErr> {
    Ok(PyRuntimeError::new_err(format!(
        "Could not infer dtype of {}",
        type_tp_name(obj)?
    )))
}

/// A leaf that cannot be stored: PyTorch's store error once the target
/// dtype is known (or "not a sequence" where the sizes want one).
fn bad_leaf(name: String, depth: usize, acc: &mut Leaves) -> PyResult<()> {
    if acc.sizes.len() > depth {
        acc.ragged.get_or_insert(Ragged::NumberForSequence);
    } else {
        acc.ragged.get_or_insert(Ragged::SequenceForNumber(name));
    }
    acc.sizes_done = true;
    acc.any_py_leaf = true;
    Ok(())
}

/// The C `tp_name` of `obj`'s type, as PyTorch's messages print it: the
/// bare name for builtins and classes defined in Python, `module.name` for
/// other extension types (`decimal.Decimal`, `numpy.ndarray`).
pub(crate) fn type_tp_name(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let ty = obj.get_type();
    let name = ty.name()?.to_string();
    let module = ty.module()?.to_string();
    // `Py_TPFLAGS_HEAPTYPE`: a class made at run time (Python code).
    let heap = ty.getattr("__flags__")?.extract::<u64>()? & (1 << 9) != 0;
    if module == "builtins" || heap {
        Ok(name)
    } else {
        Ok(format!("{module}.{name}"))
    }
}

/// The dtype of a NumPy scalar (`numpy.float64(1)`: float64), which
/// PyTorch's inference takes as it takes a tensor's; `None` for anything
/// else, and for NumPy complex scalars (read as other numbers).
fn numpy_scalar_dtype(obj: &Bound<'_, PyAny>) -> PyResult<Option<ScalarType>> {
    let ty = obj.get_type();
    if !ty
        .module()
        .is_ok_and(|m| m.to_cow().is_ok_and(|m| m == "numpy"))
    {
        return Ok(None);
    }
    let Ok(name) = obj
        .getattr("dtype")
        .and_then(|d| d.getattr("name"))
        .and_then(|n| n.extract::<String>())
    else {
        return Ok(None);
    };
    Ok(ScalarType::python_names()
        .find(|(n, _)| *n == name)
        .map(|(_, st)| st)
        .filter(|st| !st.is_complex()))
}

/// A leaf of a known dtype (a NumPy scalar): inferred as a tensor
/// element of that dtype, stored as its value.
fn typed_leaf(dt: ScalarType, s: Scalar, depth: usize, acc: &mut Leaves) -> PyResult<()> {
    acc.tensor_dtype = Some(match acc.tensor_dtype {
        Some(prev) => aten_shape::promote::promote_types(prev, dt).py()?,
        None => dt,
    });
    record_leaf(s, depth, acc)
}

/// A tensor met as an element of the data: PyTorch's inference takes its
/// dtype, and its value is stored as a scalar (whatever its dims), which
/// needs exactly one element (PyTorch's error, by the target dtype, is
/// raised once that is known).
fn tensor_leaf(t: &Tensor, py: Python<'_>, depth: usize, acc: &mut Leaves) -> PyResult<()> {
    let dt = t.dtype();
    acc.tensor_dtype = Some(match acc.tensor_dtype {
        Some(prev) => aten_shape::promote::promote_types(prev, dt).py()?,
        None => dt,
    });
    if t.numel() != 1 {
        acc.multi_element_tensor = true;
        acc.sizes_done = true;
        return Ok(());
    }
    if (dt.is_floating_point() || dt.is_complex()) && acc.float_only.is_none() {
        // Stored in an integer or bool tensor through `__index__`.
        acc.float_only = Some((
            "only integer tensors of a single element can be converted to an index".to_string(),
            false,
        ));
    }
    let s = item(py, t)?;
    record_leaf(s, depth, acc)
}

/// Records one leaf; `big` marks an int outside `int64` (passed as its
/// float value, but an int for inference).
fn leaf(s: Scalar, depth: usize, acc: &mut Leaves, big: bool) -> PyResult<()> {
    acc.any_py_leaf = true;
    match s {
        _ if big => acc.any_int = true,
        // (Python complex leaves are walked apart, with their imaginary part.)
        Scalar::Float(_) | Scalar::Complex(..) => acc.any_float = true,
        Scalar::Int(_) => acc.any_int = true,
        Scalar::Bool(_) => {}
    }
    record_leaf(s, depth, acc)
}

/// Stores one leaf's value (shared by [`leaf`] and [`tensor_leaf`]).
fn record_leaf(s: Scalar, depth: usize, acc: &mut Leaves) -> PyResult<()> {
    if acc.sizes.len() > depth {
        acc.ragged.get_or_insert(Ragged::NumberForSequence);
    }
    acc.sizes_done = true;
    if acc.ragged.is_some() {
        return Ok(());
    }
    if let Scalar::Complex(re, im) = s {
        // A complex tensor element: both parts (the imaginary parts start
        // here if no `complex` came before).
        let n = acc.vals.len();
        acc.ims.get_or_insert_with(|| vec![0.0; n]).push(im);
        acc.vals.push(Scalar::Float(re));
        return Ok(());
    }
    if let Some(ims) = acc.ims.as_mut() {
        ims.push(0.0);
    }
    acc.vals.push(s);
    Ok(())
}

/// `torch.tensor(data, dtype=...)`: PyTorch's inference (any float →
/// the default float dtype, float32; else any int → int64; else bool; an
/// empty list → float32).
pub(crate) fn tensor_from_data(
    data: &Bound<'_, PyAny>,
    dtype: Option<ScalarType>,
) -> PyResult<Tensor> {
    let mut acc = Leaves::default();
    walk(data, 0, &mut acc)?;
    if dtype.is_none() {
        if let Some(e) = acc.uninferable.take() {
            return Err(e);
        }
    }
    let sizes = acc.sizes.clone();
    let inferred = inferred_dtype(&acc)?;
    if acc.multi_element_tensor {
        return Err(multi_element_error(dtype.unwrap_or(inferred)));
    }
    if let Some(ragged) = acc.ragged.take() {
        if sizes.contains(&0) {
            // No element is stored, so PyTorch never looks (`[[], [1]]`).
            return Tensor::empty(sizes.as_slice(), dtype.unwrap_or(inferred)).py();
        }
        return Err(ragged.into_err(dtype.unwrap_or(inferred)));
    }
    let target = dtype.unwrap_or(inferred);
    if let Some((msg, np_bool)) = acc.float_only.take() {
        let stores = target.is_floating_point()
            || target.is_complex()
            || (target == ScalarType::Bool && np_bool);
        if !stores {
            return Err(PyTypeError::new_err(msg));
        }
    }
    if let Some(ims) = acc.ims.take() {
        return complex_from_parts(&acc.vals, &ims, &sizes, Some(target));
    }
    // Tensor elements can make the target differ from the Python values'
    // kind (`[tensor(1, dtype=float64), 2]`): store by the target's kind.
    if acc.tensor_dtype.is_some() {
        acc.any_float |= target.is_floating_point() || target.is_complex();
        acc.any_int |= !acc.any_float && target != ScalarType::Bool;
    }
    if acc.big_int {
        // PyTorch reads ints as doubles only into a floating tensor.
        if !(target.is_floating_point() || target.is_complex()) {
            return Err(overflow_long_long());
        }
        if acc.huge_int {
            return Err(PyOverflowError::new_err(
                "int too large to convert to float",
            ));
        }
    }
    let t = if target == ScalarType::Float && acc.any_float && !acc.big_int {
        // Straight to float32 (the default): each double rounded once, as
        // the conversion below would, without the float64 intermediate.
        let v: Vec<f32> = acc.vals.iter().map(|s| s.to_f64() as f32).collect();
        Tensor::from_vec(v, &sizes).py()?
    } else if acc.any_float || acc.big_int || acc.vals.is_empty() {
        let v: Vec<f64> = acc.vals.iter().map(|s| s.to_f64()).collect();
        Tensor::from_vec(v, &sizes).py()?
    } else if acc.any_int {
        let v: Vec<i64> = acc.vals.iter().map(|s| s.to_i64()).collect();
        Tensor::from_vec(v, &sizes).py()?
    } else {
        let v: Vec<bool> = acc
            .vals
            .iter()
            .map(|s| match *s {
                // Values of tensor or NumPy elements, converted as a cast.
                Scalar::Bool(b) => b,
                Scalar::Int(i) => i != 0,
                Scalar::Float(f) => f != 0.0,
                Scalar::Complex(re, im) => re != 0.0 || im != 0.0,
            })
            .collect();
        Tensor::from_vec(v, &sizes).py()?
    };
    if t.dtype() == target {
        Ok(t)
    } else {
        aten_shape::copy::to_dtype(&t, target).py()
    }
}

/// PyTorch's inference over the leaves: the Python values' kind (any
/// float → the default float dtype, float32; else any int → int64; else
/// bool; an empty list → float32; a complex → complex64), promoted with
/// the dtypes of the tensor elements.
fn inferred_dtype(acc: &Leaves) -> PyResult<ScalarType> {
    let py_kind = if acc.ims.is_some() {
        ScalarType::ComplexFloat
    } else if acc.any_float || (acc.vals.is_empty() && acc.tensor_dtype.is_none()) {
        ScalarType::Float
    } else if acc.any_int {
        ScalarType::Long
    } else {
        ScalarType::Bool
    };
    match acc.tensor_dtype {
        None => Ok(py_kind),
        Some(td) if !acc.any_py_leaf => Ok(td),
        Some(td) => aten_shape::promote::promote_types(py_kind, td).py(),
    }
}

/// PyTorch's error for storing a tensor of several elements (or none) as
/// one element of a `target` tensor: `float()` or `__index__` of it.
fn multi_element_error(target: ScalarType) -> PyErr {
    if target.is_floating_point() || target.is_complex() {
        PyValueError::new_err("only one element tensors can be converted to Python scalars")
    } else {
        PyTypeError::new_err(
            "only integer tensors of a single element can be converted to an index",
        )
    }
}

/// `torch.tensor` of data with a `complex` in it: PyTorch's default
/// complex dtype (complex64), or `dtype`.
fn complex_from_parts(
    res: &[Scalar],
    ims: &[f64],
    sizes: &[i64],
    dtype: Option<ScalarType>,
) -> PyResult<Tensor> {
    use c10_core::scalar_type::Complex128;
    let v: Vec<Complex128> = res
        .iter()
        .zip(ims)
        .map(|(r, &i)| Complex128::new(r.to_f64(), i))
        .collect();
    let t = Tensor::from_vec(v, sizes).py()?;
    let target = dtype.unwrap_or(ScalarType::ComplexFloat);
    if target == ScalarType::ComplexDouble {
        Ok(t)
    } else {
        aten_shape::copy::to_dtype(&t, target).py()
    }
}
