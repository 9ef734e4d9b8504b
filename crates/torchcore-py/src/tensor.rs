//! `torchcore.Tensor` and the factories.

use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use aten_shape::copy as copy_api;
use aten_shape::indexing::{self, TensorIndex};
use aten_shape::views::{self, ViewOps};
use c10_core::geometry::DimVec;
use c10_core::{MemoryFormat, Scalar, ScalarType, Tensor};
use pyo3::exceptions::{PyIndexError, PyNotImplementedError, PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PySlice, PyString, PyTuple, PyType};
use pyo3::PyTraverseError;

use crate::convert::{
    self, device_arg, dtype_arg, format_arg, int, int_list, options, scalar, OrPy, PyDevice,
    PyDtype, PyMemoryFormat, I64,
};
use crate::object_alloc::TensorAlloc;
use crate::short_ops;
use crate::storage::{wrap_storage, PyUntypedStorage};

/// `torchcore.Tensor`: a Python object bound to one `TensorImpl` (see the
/// crate documentation for the preservation rules).
///
/// The class is `frozen`: PyO3 never borrows the object, so no
/// "Already borrowed" error or `PanicException` can come from it. Its
/// state sits behind its own lock (`PyTensor::lock`), taken only for
/// short, GIL-free-safe stretches of Rust code and, by the in-place
/// metadata ops, for the op itself; a thread that finds the lock taken
/// waits for it with the GIL released, so a read of a tensor that another
/// thread is resizing waits and then succeeds, as in PyTorch.
#[pyclass(name = "Tensor", module = "torchcore", dict, weakref, frozen, subclass)]
pub struct PyTensor {
    /// Taken (with `owner` set) by every writer of `state`; see
    /// [`PyTensor::lock`] and, for the readers that do without it,
    /// [`PyTensor::with`].
    mutex: Mutex<()>,
    state: UnsafeCell<State>,
    /// The Python subclass this object is an instance of (`None` for
    /// `torchcore.Tensor` itself): results of view ops and copies of it are
    /// made of the same class, as PyTorch's default `__torch_function__`
    /// does.
    subtype: Option<Py<PyType>>,
    /// The Python object of this tensor's storage, once `untyped_storage()`
    /// made it or the tensor was built from or `set_` to it: the tensor keeps
    /// it alive, so it is the same object (with its `__dict__`) for as long
    /// as this tensor object lives, the nearest this binding gets to
    /// PyTorch's storage preservation (see `storage.rs`). Never locked while
    /// Python code runs (an old object is dropped after the guard).
    storage_obj: Mutex<Option<Py<PyAny>>>,
    /// The last `torchcore.Size` made for this tensor's shape, with the
    /// sizes it holds: `shape` and `size()` hand it out again while the
    /// sizes are the same (a `Size` is an immutable tuple, so sharing it
    /// is invisible except to `is`), instead of building a tuple subclass
    /// through a type call each time. Validated against the current sizes
    /// on every use, so nothing needs to invalidate it. Read and written
    /// only with the GIL held, and never while Python code runs (see
    /// [`PyTensor::size_object`]).
    shape_cache: UnsafeCell<Option<ShapeCache>>,
    /// The [`thread_token`] of the thread holding `state`, 0 if none: a
    /// thread that asks for the lock it already holds (a finalizer or
    /// callback run while it is held) gets an error instead of waiting on
    /// itself forever.
    owner: AtomicUsize,
}

// SAFETY: `state` is written only through a `Locked`, which holds `mutex`
// and has `owner` set for its whole life; `owner` is set and cleared only
// by a thread attached to the interpreter (holding the GIL: this is an abi3
// module, never loaded by a free-threaded CPython). A reader without the
// lock (`PyTensor::with`) holds the GIL, sees `owner == 0` (no `Locked`
// exists) and keeps the GIL until it is done, so no `Locked` can be made
// while it reads; every other reader takes the lock. Everything in `State`
// is `Send`. `shape_cache` is only touched by a thread holding the GIL,
// in stretches that run no Python code (and so cannot lose the GIL), so
// two threads never reach it at once.
unsafe impl Sync for PyTensor {}

/// A `torchcore.Size` object and the sizes it holds (see
/// `PyTensor::shape_cache`). The sizes are boxed so that the cache adds
/// two words to every tensor object, not a whole inline size array; the
/// box is made only when a `Size` is made, which costs far more.
struct ShapeCache {
    sizes: Box<[i64]>,
    obj: Py<PyAny>,
}

/// What [`PyTensor`]'s lock guards.
pub(crate) struct State {
    /// The object's own handle: the `TensorImpl` it is bound to and shows.
    pub(crate) inner: Tensor,
    /// `TensorImpl`s this object was bound to before an in-place metadata
    /// op copied its (shared) `TensorImpl`: Rust still holds them, and
    /// handing one back to Python must give this object. Pruned when only
    /// this object holds them.
    retired: Vec<Tensor>,
}

/// A held [`PyTensor`] lock. Dropping it clears the owner before the mutex
/// is released (fields drop after `Drop::drop`).
pub(crate) struct Locked<'a> {
    owner: &'a AtomicUsize,
    state: &'a UnsafeCell<State>,
    _guard: MutexGuard<'a, ()>,
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.owner.store(0, Ordering::Release);
    }
}

impl std::ops::Deref for Locked<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        // SAFETY: the lock is held and `owner` set: nobody else writes
        // `state`, and no lock-free reader starts (see `PyTensor`'s `Sync`).
        unsafe { &*self.state.get() }
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut State {
        // SAFETY: as in `deref`; no lock-free reader is running either: one
        // holds the GIL from its `owner` check to its end, and this guard
        // was made (and `owner` set) by a thread holding the GIL.
        unsafe { &mut *self.state.get() }
    }
}

/// A non-zero number that identifies the calling thread among the live
/// ones (the address of a thread-local).
fn thread_token() -> usize {
    thread_local! {
        static TOKEN: u8 = const { 0 };
    }
    TOKEN.with(|t| std::ptr::from_ref(t) as usize)
}

impl PyTensor {
    /// The size and options of a `new_*` factory: the size parsed as the
    /// methods' `*size` (with PyTorch's errors), the dtype and device
    /// `self`'s unless given.
    fn new_args(
        &self,
        py: Python<'_>,
        size: &Bound<'_, PyTuple>,
        name: &str,
        (dtype, device, requires_grad): (
            Option<&Bound<'_, PyAny>>,
            Option<&Bound<'_, PyAny>>,
            bool,
        ),
    ) -> PyResult<(Vec<i64>, c10_core::TensorOptions)> {
        let sizes = dims_of(size, &format!("{name}(): argument 'size'"))?.to_vec();
        Ok((sizes, self.new_options(py, (dtype, device, requires_grad))?))
    }

    /// The options of a `new_*` factory: `self`'s dtype and device unless
    /// given.
    fn new_options(
        &self,
        py: Python<'_>,
        (dtype, device, requires_grad): (
            Option<&Bound<'_, PyAny>>,
            Option<&Bound<'_, PyAny>>,
            bool,
        ),
    ) -> PyResult<c10_core::TensorOptions> {
        let mut o = options(dtype, device, requires_grad)?;
        let (st, dev) = self.with(py, |t| (t.dtype(), t.device()))?;
        if o.dtype.is_none() {
            o = o.dtype(st);
        }
        if convert::device_arg(device)?.is_none() {
            o = o.device(dev);
        }
        Ok(o)
    }
}

/// A `fill_value` argument (complex values included, see
/// [`convert::fill_number`]), with PyTorch's `TypeError` for a non-number
/// (`full(): argument 'fill_value' (position 2) must be Number, not str`).
fn fill_number(
    fill_value: &Bound<'_, PyAny>,
    name: &str,
    dst: Option<ScalarType>,
) -> PyResult<convert::Number> {
    convert::fill_number(fill_value, dst).map_err(|e| {
        if e.is_instance_of::<PyTypeError>(fill_value.py()) {
            PyTypeError::new_err(format!(
                "{name}(): argument 'fill_value' (position 2) must be Number, not {}",
                convert::tp_name(fill_value)
            ))
        } else {
            e
        }
    })
}

impl PyTensor {
    fn new(t: Tensor) -> PyTensor {
        PyTensor {
            mutex: Mutex::new(()),
            state: UnsafeCell::new(State {
                inner: t,
                retired: Vec::new(),
            }),
            owner: AtomicUsize::new(0),
            subtype: None,
            storage_obj: Mutex::new(None),
            shape_cache: UnsafeCell::new(None),
        }
    }

    /// An unbound value over an empty tensor (no bytes): what
    /// [`TensorAlloc::init`] measures the object layout with.
    pub(crate) fn probe() -> c10_core::Result<PyTensor> {
        let t = Tensor::empty(&[0i64][..], c10_core::TensorOptions::new())?;
        Ok(PyTensor::new(t))
    }

    /// Replaces the kept storage object (see `storage_obj`) by `obj`, or
    /// drops it when it is not the object of the storage `storage_id` (the
    /// tensor's current one). The old object is dropped after the guard:
    /// dropping it may run Python code.
    fn keep_storage_object(&self, py: Python<'_>, storage_id: usize, obj: Option<Py<PyAny>>) {
        let stale = |o: &Py<PyAny>| {
            o.bind(py)
                .cast::<PyUntypedStorage>()
                .map_or(true, |s| s.get().storage.id() != storage_id)
        };
        let old = {
            let mut slot = self
                .storage_obj
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match obj {
                Some(o) => slot.replace(o),
                None if slot.as_ref().is_some_and(stale) => slot.take(),
                None => None,
            }
        };
        drop(old);
    }

    /// The kept storage object if it is the one of storage `storage_id`.
    fn kept_storage_object<'py>(
        &self,
        py: Python<'py>,
        storage_id: usize,
    ) -> Option<Bound<'py, PyAny>> {
        let slot = self
            .storage_obj
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.as_ref().map(|o| o.bind(py).clone()).filter(|o| {
            o.cast::<PyUntypedStorage>()
                .is_ok_and(|s| s.get().storage.id() == storage_id)
        })
    }

    /// Wraps `t` as an object of this object's class (see
    /// [`wrap_typed`]).
    pub(crate) fn wrap_out<'py>(
        &self,
        py: Python<'py>,
        t: Tensor,
    ) -> PyResult<Bound<'py, PyTensor>> {
        wrap_typed(py, t, self.subtype.as_ref().map(|c| c.bind(py)))
    }

    /// [`PyTensor::wrap_out`] for each tensor, as a tuple.
    fn wrap_all_out<'py>(&self, py: Python<'py>, ts: Vec<Tensor>) -> PyResult<Bound<'py, PyTuple>> {
        let objs = ts
            .into_iter()
            .map(|t| self.wrap_out(py, t))
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, objs)
    }

    /// Takes the object's lock. If another thread holds it, waits with the
    /// GIL released (the holder may be in a GIL-free section that needs the
    /// GIL to finish, e.g. to drop a handle bound to a Python object). If
    /// this thread holds it, fails: that is a re-entrant call (a weakref
    /// callback or finalizer that ran while the lock was held), and waiting
    /// would never end.
    ///
    /// Rule for callers: while the guard lives, run no Python code (no
    /// argument conversion, no object creation) and take no other tensor's
    /// lock; convert arguments first, copy out what is needed, drop the
    /// guard, then build Python objects.
    pub(crate) fn lock(&self, py: Python<'_>) -> PyResult<Locked<'_>> {
        let me = thread_token();
        if self.owner.load(Ordering::Acquire) == me {
            return Err(PyRuntimeError::new_err(
                "torchcore: this tensor is already in use by an operation further up this \
                 thread's stack (a callback or finalizer re-entered it); retry once that \
                 operation has returned",
            ));
        }
        let guard = loop {
            match self.mutex.try_lock() {
                Ok(g) => break g,
                // A panic while locked (none is expected: library code does
                // not panic) leaves a consistent `State`: every mutation of
                // it is a single assignment or push.
                Err(TryLockError::Poisoned(p)) => break p.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    // Wait for the holder without the GIL, then try again
                    // with it (a guard cannot leave the GIL-free closure:
                    // it is not `Send`).
                    py.detach(|| {
                        drop(self.mutex.lock());
                    });
                }
            }
        };
        self.owner.store(me, Ordering::Release);
        Ok(Locked {
            owner: &self.owner,
            state: &self.state,
            _guard: guard,
        })
    }

    /// `f` applied to the object's handle, under the lock or without it.
    /// `f` must be plain Rust (see [`PyTensor::lock`]): it must not run
    /// Python code or release the GIL.
    ///
    /// When no thread holds the lock (`owner` is 0), the read goes without
    /// it: taking a lock is only ever done with the GIL held, which this
    /// thread keeps until `f` returns, so no writer can start meanwhile.
    /// That saves the two atomic read-modify-writes of the mutex on every
    /// read-only call (views, metadata getters). Otherwise the lock is
    /// taken as before: waited for, or refused on re-entry.
    pub(crate) fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&Tensor) -> R) -> PyResult<R> {
        if self.owner.load(Ordering::Acquire) == 0 {
            // SAFETY: `py` proves this thread holds the GIL; no `Locked`
            // exists (`owner` is set for a guard's whole life, under the
            // GIL), and none can be made until `f`, which runs no Python
            // code and keeps the GIL, returns (see `PyTensor`'s `Sync`).
            let state = unsafe { &*self.state.get() };
            return Ok(f(&state.inner));
        }
        let me = self.lock(py)?;
        Ok(f(&me.inner))
    }

    /// `shape` / `size()`: a `torchcore.Size` of the current sizes, the
    /// cached one when it still holds them.
    fn size_object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let cached = self.with(py, |t| {
            // SAFETY: this thread holds the GIL (`py`) and runs no Python
            // code until the reference ends (a comparison and an
            // increment), so no other access to the cell is in progress
            // or can start (see `PyTensor`'s `Sync`).
            let cache = unsafe { &*self.shape_cache.get() };
            match cache {
                Some(c) if *c.sizes == *t.sizes() => Ok(c.obj.clone_ref(py)),
                _ => Err(DimVec::from_slice(t.sizes())),
            }
        })?;
        let sizes = match cached {
            Ok(obj) => return Ok(obj.into_bound(py)),
            Err(sizes) => sizes,
        };
        // Python code may run here (the `Size` class is Python's).
        let obj = size_obj(py, &sizes)?;
        let fresh = ShapeCache {
            sizes: sizes.as_slice().into(),
            obj: obj.clone().unbind(),
        };
        // SAFETY: as above: the GIL is held, and the swap runs no Python
        // code; the old object is released after the reference ends.
        let old = unsafe { (*self.shape_cache.get()).replace(fresh) };
        drop(old);
        Ok(obj)
    }

    /// A new handle to the object's `TensorImpl`, for work done without
    /// the lock (GIL-free copies, reads of the data, DLPack export): the
    /// lock is never held across such work, so readers never wait on it.
    pub(crate) fn handle(&self, py: Python<'_>) -> PyResult<Tensor> {
        self.with(py, Tensor::clone)
    }

    /// A view (or other new tensor) computed from the handle under the
    /// lock, then wrapped without it.
    fn derive<'py>(
        &self,
        py: Python<'py>,
        f: impl FnOnce(&Tensor) -> c10_core::Result<Tensor>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let r = self.with(py, f)?.py()?;
        self.wrap_out(py, r)
    }
}

/// A one-shot box carrying a tensor handle into `Tensor.__new__`, so that
/// Rust can make an object of a Python subclass without running the
/// subclass's own `__new__`/`__init__` (PyTorch allocates such objects
/// directly too).
#[pyclass(name = "_TensorCarrier", module = "torchcore._C", frozen)]
pub(crate) struct TensorCarrier {
    tensor: Mutex<Option<Tensor>>,
}

/// The Python object for `t` as an instance of `cls` (a subclass of
/// `torchcore.Tensor`; `None` or the base class: [`wrap`]). A `TensorImpl`
/// that already has an object gives that object, whatever its class
/// (preservation wins, as in PyTorch).
pub(crate) fn wrap_typed<'py>(
    py: Python<'py>,
    t: Tensor,
    cls: Option<&Bound<'py, PyType>>,
) -> PyResult<Bound<'py, PyTensor>> {
    let Some(cls) = cls else {
        return wrap(py, t);
    };
    if t.binding_object().is_some() || cls.is(py.get_type::<PyTensor>()) {
        return wrap(py, t);
    }
    let carrier = TensorCarrier {
        tensor: Mutex::new(Some(t)),
    };
    let obj = py
        .get_type::<PyTensor>()
        .getattr("__new__")?
        .call1((cls, carrier))?
        .cast_into::<PyTensor>()?;
    {
        let mut me = obj.get().lock(py)?;
        if me.inner.binding_object().is_none() {
            bind(&obj, &mut me.inner)?;
        }
    }
    Ok(obj)
}

/// The Python object for `t`: the one already bound to its `TensorImpl`
/// if there is one (PyTorch's `THPVariable_Wrap`), else a new one, bound.
pub(crate) fn wrap(py: Python<'_>, t: Tensor) -> PyResult<Bound<'_, PyTensor>> {
    if let Some(p) = t.binding_object() {
        // SAFETY: only `PyTensor` objects are ever bound (`bind`), and this
        // one is alive: it owns a handle to the `TensorImpl`, and `t` is
        // another handle, so the `TensorImpl` holds a reference to it (rule
        // 2 of `c10_core::binding`). The GIL is held; we take a new
        // reference before `t` (and maybe that rule-2 reference) goes.
        let obj = unsafe { Bound::from_borrowed_ptr(py, p.as_ptr().cast::<ffi::PyObject>()) };
        drop(t);
        // SAFETY: the object is a `PyTensor` (see above).
        return Ok(unsafe { obj.cast_into_unchecked::<PyTensor>() });
    }
    let obj = TensorAlloc::new_object(py, PyTensor::new(t))?;
    // SAFETY: the object was made just above and no reference to it has
    // left this function: no other code (another thread, a finalizer, a
    // `Locked`) can read or write its state until we return, so this is
    // the only reference to `inner`, as `bind_object_mut` wants.
    let t = unsafe { &mut (*obj.get().state.get()).inner };
    bind(&obj, t)?;
    Ok(obj)
}

/// Publishes `obj` in the slot of `t`, which `obj` owns (`t` is borrowed
/// from `obj`'s state, exclusively: the object is new).
fn bind(obj: &Bound<'_, PyTensor>, t: &mut Tensor) -> PyResult<()> {
    let Some(p) = NonNull::new(obj.as_ptr().cast::<()>()) else {
        return Err(PyRuntimeError::new_err("null object"));
    };
    // SAFETY: `p` is a `PyTensor` whose state (`inner` or `retired`) owns
    // `t`'s handle and keeps it until the object is deallocated, which can
    // only happen once its Python count is 0, so when no reference taken
    // by the binding's `incref` is outstanding; `binding_incref`/`decref`
    // are sound for it (registered at import).
    match unsafe { t.bind_object_mut(p) } {
        Ok(()) => Ok(()),
        Err(Some(_)) => Err(PyRuntimeError::new_err(
            "this TensorImpl is already bound to another Python object",
        )),
        Err(None) => Err(PyRuntimeError::new_err(
            "torchcore binding is not registered",
        )),
    }
}

/// Runs an in-place metadata op on `slf`'s `TensorImpl` so that every
/// Python reference sees it: unique → edited in place (the slot stays);
/// shared with Rust → copy-on-write gives a new `TensorImpl`, which is
/// bound to this same object, and the old one stays bound ("retired") so
/// that Rust handing it back still yields this object.
fn inplace<'py>(
    slf: &Bound<'py, PyTensor>,
    f: impl FnOnce(&mut Tensor) -> c10_core::Result<()>,
) -> PyResult<Bound<'py, PyTensor>> {
    inplace_with(slf, |t, _| f(t))
}

/// [`inplace`] for ops that may take a storage's lock (`resize_`, `set_`):
/// the op runs with the GIL released. The object's lock stays held, so
/// other threads' calls on this object wait for the op (with the GIL
/// released too) and then see its result.
fn inplace_nogil<'py>(
    slf: &Bound<'py, PyTensor>,
    f: impl FnOnce(&mut Tensor) -> c10_core::Result<()> + Send,
) -> PyResult<Bound<'py, PyTensor>> {
    inplace_with(slf, |t, py| py.detach(|| f(t)))
}

fn inplace_with<'py>(
    slf: &Bound<'py, PyTensor>,
    f: impl FnOnce(&mut Tensor, Python<'py>) -> c10_core::Result<()>,
) -> PyResult<Bound<'py, PyTensor>> {
    let py = slf.py();
    let mut guard = slf.get().lock(py)?;
    let me = &mut *guard;
    me.retired.retain(|r| r.use_count() > 1);
    let old = (me.inner.use_count() > 1).then(|| me.inner.clone());
    let result = f(&mut me.inner, py);
    if let Some(old) = old {
        if !old.is_same(&me.inner) {
            me.retired.push(old);
        }
    }
    if me.inner.binding_object().is_none() {
        bind(slf, &mut me.inner)?;
    }
    let storage_id = me.inner.storage().id();
    drop(guard);
    // A `set_` may have swapped the storage: forget the old one's object.
    slf.get().keep_storage_object(py, storage_id, None);
    result.py()?;
    Ok(slf.clone())
}

static SIZE_CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `torchcore.strided`, looked up once.
static STRIDED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `torchcore.strided` (the only layout; see `Tensor.layout`).
fn strided(py: Python<'_>) -> PyResult<&Py<PyAny>> {
    STRIDED.get_or_try_init(py, || {
        py.import("torchcore")
            .and_then(|m| m.getattr("strided"))
            .map(Bound::unbind)
    })
}

/// A `torchcore.Size` (a tuple subclass printed as `torch.Size([...])`).
fn size_obj<'py>(py: Python<'py>, sizes: &[i64]) -> PyResult<Bound<'py, PyAny>> {
    let cls = SIZE_CLASS.get_or_try_init(py, || {
        py.import("torchcore")
            .and_then(|m| m.getattr("Size"))
            .map(Bound::unbind)
    })?;
    let tup = PyTuple::new(py, sizes)?;
    cls.bind(py).call1((tup,))
}

fn memory_format_const(f: MemoryFormat) -> PyMemoryFormat {
    PyMemoryFormat { f }
}

/// A size or dims argument (`f(2, 3)`, `f((2, 3))`, ...) as parsed by
/// [`dims_of`]: on the stack when short, else the general parser's vector.
enum Dims {
    Small([i64; SMALL_DIMS], usize),
    Heap(Vec<i64>),
}

/// The most dims [`small_dims`] parses on the stack.
const SMALL_DIMS: usize = 8;

impl std::ops::Deref for Dims {
    type Target = [i64];
    fn deref(&self) -> &[i64] {
        match self {
            Dims::Small(buf, n) => &buf[..*n],
            Dims::Heap(v) => v,
        }
    }
}

/// `args` (a `*shape`/`*dims` tuple) as ints: [`small_dims`] when it
/// applies, else `int_list` (which also gives PyTorch's errors).
fn dims_of(args: &Bound<'_, PyTuple>, what: &str) -> PyResult<Dims> {
    match small_dims(args) {
        Some(d) => Ok(d),
        // No argument at all: PyTorch's missing-argument `TypeError`.
        None if args.is_empty() => Err(convert::missing_argument(what)),
        None => int_list(args, what).map(Dims::Heap),
    }
}

/// The common case of a `*shape`/`*dims` argument, parsed without pyo3's
/// extraction machinery or a heap allocation: at most [`SMALL_DIMS`] items,
/// each an exact Python `int` that fits `i64`, given inline (`f(2, 3)`) or
/// as one exact tuple (`f((2, 3))`). `None` for anything else (bools,
/// `__index__` objects, lists, overflow...), which the general parser then
/// handles, errors included; no Python error is left set.
fn small_dims(args: &Bound<'_, PyTuple>) -> Option<Dims> {
    // SAFETY: the GIL is held (`args` is bound); `args` and, when taken,
    // its single item are live tuples (type-checked exactly), indices are
    // in range, so `PyTuple_GetItem` returns borrowed, live references that
    // the tuples keep alive for this call; `PyLong_AsLongLongAndOverflow`
    // is given exact `int`s, for which it sets no error (an overflow is
    // reported through `overflow`).
    unsafe {
        let mut tup = args.as_ptr();
        let mut n = ffi::PyTuple_Size(tup);
        if n == 0 {
            // No argument: an error, reported by the general parser.
            return None;
        }
        if n == 1 {
            let only = ffi::PyTuple_GetItem(tup, 0);
            if !only.is_null() && ffi::Py_TYPE(only) == &raw mut ffi::PyTuple_Type {
                tup = only;
                n = ffi::PyTuple_Size(tup);
            }
        }
        // `tup` is an exact tuple with `n` items, live for this call.
        small_items(tup, n, ffi::PyTuple_GetItem)
    }
}

/// A one-argument sequence of ints (the `size` and `stride` of
/// `as_strided`, `as_strided_` and `empty_strided`):
/// [`small_seq`] when it applies, else `convert::seq_ints` (which also
/// gives PyTorch's errors).
fn seq_dims(a: &Bound<'_, PyAny>, what: &str) -> PyResult<Dims> {
    match small_seq(a) {
        Some(d) => Ok(d),
        None => convert::seq_ints(a, what).map(Dims::Heap),
    }
}

/// The common case of a sequence-of-ints argument, parsed on the stack:
/// an exact `tuple` or `list` of at most [`SMALL_DIMS`] exact `int`s that
/// fit `i64` (an empty one included). `None` for anything else, which the
/// general parser then handles, errors included; no Python error is left
/// set.
fn small_seq(a: &Bound<'_, PyAny>) -> Option<Dims> {
    let p = a.as_ptr();
    // SAFETY: the GIL is held (`a` is bound) and `p` is a live object, so
    // reading its type is sound.
    let ty = unsafe { ffi::Py_TYPE(p) };
    if ty == &raw mut ffi::PyTuple_Type {
        // SAFETY: `p` is an exact tuple (checked above), alive while `a` is.
        unsafe { small_items(p, ffi::PyTuple_Size(p), ffi::PyTuple_GetItem) }
    } else if ty == &raw mut ffi::PyList_Type {
        // SAFETY: `p` is an exact list (checked above), alive while `a` is;
        // no Python code runs while its items are read, so it cannot change.
        unsafe { small_items(p, ffi::PyList_Size(p), ffi::PyList_GetItem) }
    } else {
        None
    }
}

/// The `n` items of `seq` (read with `get`) as exact `int`s fitting `i64`,
/// on the stack; `None` if there are more than [`SMALL_DIMS`] or any is
/// not such an `int`.
///
/// # Safety
///
/// The GIL is held, `seq` is a live object of the exact type `get` is made
/// for (tuple or list) with `n` items, and no Python code can run on other
/// threads meanwhile (it cannot: the GIL is not released here).
unsafe fn small_items(
    seq: *mut ffi::PyObject,
    n: ffi::Py_ssize_t,
    get: unsafe extern "C" fn(*mut ffi::PyObject, ffi::Py_ssize_t) -> *mut ffi::PyObject,
) -> Option<Dims> {
    let n = usize::try_from(n).ok().filter(|&n| n <= SMALL_DIMS)?;
    let mut buf = [0i64; SMALL_DIMS];
    for (i, slot) in buf.iter_mut().enumerate().take(n) {
        // SAFETY: per this function's contract, `seq` is live with `n` items
        // and `i < n`, so `get` returns a borrowed, live reference; for an
        // exact `int`, `PyLong_AsLongLongAndOverflow` sets no error (an
        // overflow is reported through `overflow`).
        unsafe {
            let x = get(seq, i as ffi::Py_ssize_t);
            if x.is_null() || ffi::Py_TYPE(x) != &raw mut ffi::PyLong_Type {
                return None;
            }
            let mut overflow = 0;
            let v = ffi::PyLong_AsLongLongAndOverflow(x, &mut overflow);
            if overflow != 0 {
                return None;
            }
            *slot = v;
        }
    }
    Some(Dims::Small(buf, n))
}

/// A one-element value read by [`read_one`].
enum One {
    Bool(bool),
    Int(i64),
    Float(f64),
    Complex(f64, f64),
}

/// The one element of `t` (one element, any shape, contiguous), read
/// under the GIL without waiting: `None` when another thread holds the
/// storage's write guard, for dtypes not covered here, or on any error;
/// the general `item()` path then reads it (with the GIL released) or
/// reports PyTorch's error. Plain Rust: no Python code runs.
fn read_one(t: &Tensor) -> Option<One> {
    use c10_core::scalar_type::{Complex128, Complex64};
    use half::{bf16, f16};
    use ScalarType as S;
    fn get<T: c10_core::Element>(t: &Tensor) -> Option<T> {
        let g = t.try_read::<T>().ok()??;
        g.as_slice().ok()?.first().copied()
    }
    if t.numel() != 1 {
        return None;
    }
    Some(match t.dtype() {
        S::Bool => One::Bool(get(t)?),
        S::Long => One::Int(get(t)?),
        S::Int => One::Int(get::<i32>(t)?.into()),
        S::Short => One::Int(get::<i16>(t)?.into()),
        S::Char => One::Int(get::<i8>(t)?.into()),
        S::Byte => One::Int(get::<u8>(t)?.into()),
        S::Double => One::Float(get(t)?),
        S::Float => One::Float(get::<f32>(t)?.into()),
        S::Half => One::Float(get::<f16>(t)?.into()),
        S::BFloat16 => One::Float(get::<bf16>(t)?.into()),
        S::ComplexDouble => {
            let c = get::<Complex128>(t)?;
            One::Complex(c.re, c.im)
        }
        S::ComplexFloat => {
            let c = get::<Complex64>(t)?;
            One::Complex(c.re.into(), c.im.into())
        }
        _ => return None,
    })
}

impl One {
    /// The Python number (`bool`, `int`, `float`, `complex`).
    fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(match self {
            One::Bool(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
            One::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
            One::Float(f) => pyo3::types::PyFloat::new(py, f).into_any().unbind(),
            One::Complex(re, im) => pyo3::types::PyComplex::from_doubles(py, re, im)
                .into_any()
                .unbind(),
        })
    }
}

/// One Python index (`int`, `slice`, `None`, `...`, `bool`, tensor).
fn one_index(py: Python<'_>, k: &Bound<'_, PyAny>) -> PyResult<TensorIndex> {
    if k.is_instance_of::<PyInt>() {
        if let Ok(b) = k.cast::<PyBool>() {
            return Ok(TensorIndex::Bool(b.is_true()));
        }
        return Ok(TensorIndex::Int(int(k)?));
    }
    if let Ok(s) = k.cast::<PySlice>() {
        let (mut start, mut stop, mut step) = (0isize, 0isize, 0isize);
        // SAFETY: `s` is a live slice object (the GIL is held); the out
        // pointers are valid locals.
        let rc = unsafe { ffi::PySlice_Unpack(s.as_ptr(), &mut start, &mut stop, &mut step) };
        if rc < 0 {
            return Err(PyErr::fetch(py));
        }
        if step <= 0 {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "step must be greater than zero",
            ));
        }
        // With a positive step, `PySlice_Unpack` turns a `None` start into
        // 0 and a `None` stop into `PY_SSIZE_T_MAX`: the same as "from the
        // start" and "to the end" once clamped, and no attribute lookups.
        let start = Some(start as i64);
        let stop = (stop != isize::MAX).then_some(stop as i64);
        return Ok(TensorIndex::slice(start, stop, step as i64));
    }
    if k.is_none() {
        return Ok(TensorIndex::None);
    }
    if k.is(py.Ellipsis()) {
        return Ok(TensorIndex::Ellipsis);
    }
    if let Ok(t) = k.cast::<PyTensor>() {
        return Ok(TensorIndex::Tensor(t.get().handle(py)?));
    }
    if k.cast::<PyString>().is_ok() {
        // PyTorch tries to make an index tensor of it.
        return Err(PyTypeError::new_err("new(): invalid data type 'str'"));
    }
    if k.cast::<PyList>().is_ok() {
        return Err(PyNotImplementedError::new_err(
            "advanced indexing (tensor, list or boolean-mask indices) is not implemented in torchcore",
        ));
    }
    match int(k) {
        Ok(i) => return Ok(TensorIndex::Int(i)),
        // An int-like (`__index__`) past `int64`: PyTorch's ValueError.
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyValueError>(py) => return Err(e),
        Err(_) => {}
    }
    Err(PyIndexError::new_err(format!(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got {})",
        k.get_type().name()?
    )))
}

/// Whether `v` is a NumPy integer scalar (`numpy.integer`), which
/// PyTorch's `THPUtils_checkLong` accepts; NumPy is imported only here, on
/// the rare values that are not Python numbers.
fn is_numpy_integer(v: &Bound<'_, PyAny>) -> bool {
    v.py()
        .import("numpy")
        .and_then(|np| np.getattr("integer"))
        .and_then(|integer| v.is_instance(&integer))
        .unwrap_or(false)
}

/// PyTorch's legacy type name of a tensor (`torch.FloatTensor`,
/// `torch.cuda.LongTensor`, `torch.meta.FloatTensor`), as its messages
/// print it.
fn legacy_type_name(t: &Tensor) -> String {
    let device = match t.device().device_type() {
        c10_core::DeviceType::Cpu => String::new(),
        other => format!("{}.", other.to_string().to_lowercase()),
    };
    format!("torch.{device}{}Tensor", t.dtype().name())
}

/// Python's tuple form of a one-entry key: `t[(i,)]` and `t[(a:b,)]`
/// count against the dims of a 0-dim tensor ("too many indices"), where
/// `t[i]` and `t[a:b]` have errors of their own, and aten-shape's
/// one-entry lists follow `t[i]` (see `aten_shape::indexing`). On other
/// tensors the two forms agree.
fn tuple_key_check(t: &Tensor, tuple: bool, idx: &[TensorIndex]) -> c10_core::Result<()> {
    if tuple && t.dim() == 0 && matches!(idx, [TensorIndex::Int(_) | TensorIndex::Slice { .. }]) {
        return Err(c10_core::TensorError::index(
            "too many indices for tensor of dimension 0",
        ));
    }
    Ok(())
}

/// A converted key: up to four entries (`m[3, 1:5]`, `x[..., None, ::2]`)
/// on the stack.
type Key = smallvec::SmallVec<[TensorIndex; 4]>;

/// The entries of `key` (a tuple's items, or `key` itself), pushed onto
/// `out`. A plain loop into a caller's vector: collecting the `Result`s
/// through an iterator moved each 48-byte entry several times (about 300
/// instructions of a two-entry key).
fn indices(py: Python<'_>, key: &Bound<'_, PyAny>, out: &mut Key) -> PyResult<()> {
    if let Ok(t) = key.cast::<PyTuple>() {
        for i in 0..t.len() {
            let item = t.get_borrowed_item(i)?;
            out.push(one_index(py, &item)?);
        }
    } else {
        out.push(one_index(py, key)?);
    }
    Ok(())
}

fn dims_arg(dim: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<i64>>> {
    match dim {
        None => Ok(None),
        Some(d) if d.is_none() => Ok(None),
        Some(d) => match convert::maybe_int(d)? {
            Some(i) => Ok(Some(vec![i])),
            None => convert::seq_ints(d, "dim").map(Some),
        },
    }
}

#[pymethods]
impl PyTensor {
    /// `Tensor(*sizes)`, `Tensor(data)`, `Tensor()` (PyTorch's legacy
    /// constructor: float32), for `torchcore.Tensor` and its subclasses.
    #[new]
    #[classmethod]
    #[pyo3(signature = (*args, **kwargs))]
    fn py_new(
        cls: &Bound<'_, PyType>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let py = cls.py();
        let subtype = (!cls.is(py.get_type::<PyTensor>())).then(|| cls.clone().unbind());
        let t = if let Some(c) = args
            .iter()
            .next()
            .and_then(|a| a.cast_into::<TensorCarrier>().ok())
        {
            let taken = c
                .get()
                .tensor
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            taken.ok_or_else(|| PyRuntimeError::new_err("tensor carrier already used"))?
        } else {
            let how = Legacy {
                dtype: ScalarType::Float,
                device: c10_core::Device::CPU,
                strict: false,
            };
            legacy_new(&how, args, kwargs)?
        };
        let mut me = PyTensor::new(t);
        me.subtype = subtype;
        Ok(me)
    }

    /// Binds an object made by `Tensor(...)`/`Sub(...)` to its
    /// `TensorImpl` (objects Rust makes are bound when made).
    #[pyo3(signature = (*_args, **_kwargs))]
    fn __init__(
        slf: &Bound<'_, Self>,
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let mut me = slf.get().lock(slf.py())?;
        if me.inner.binding_object().is_none() {
            bind(slf, &mut me.inner)?;
        }
        Ok(())
    }

    /// Attribute assignment: names PyTorch defines as read-only tensor
    /// properties raise as there even when torchcore lacks the property
    /// (instead of landing in the instance `__dict__`); properties PyTorch
    /// lets you set but torchcore does not implement raise
    /// `NotImplementedError`. Everything else is Python's generic rule.
    fn __setattr__(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyString>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        check_settable(slf.as_any(), name)?;
        generic_setattr(slf.as_any(), name, Some(value))
    }

    fn __delattr__(slf: &Bound<'_, Self>, name: &Bound<'_, PyString>) -> PyResult<()> {
        check_settable(slf.as_any(), name)?;
        generic_setattr(slf.as_any(), name, None)
    }

    /// `t.as_subclass(cls)`: a new object of class `cls` over an alias of
    /// this tensor (same data, new `TensorImpl`), as in PyTorch.
    fn as_subclass<'py>(
        &self,
        py: Python<'py>,
        cls: &Bound<'py, PyType>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        if !cls.is_subclass(&py.get_type::<PyTensor>())? {
            return Err(PyTypeError::new_err(format!(
                "as_subclass(): argument 'cls' must be a subclass of torchcore.Tensor, not {}",
                cls.name()?
            )));
        }
        let t = self.with(py, views::alias)?.py()?;
        wrap_typed(py, t, Some(cls))
    }

    /// `Tensor._make_subclass(cls, data, require_grad=False)`: an object of
    /// class `cls` over a detached alias of `data`.
    #[staticmethod]
    #[pyo3(signature = (cls, data, require_grad = false))]
    fn _make_subclass<'py>(
        cls: &Bound<'py, PyType>,
        data: &Bound<'py, PyTensor>,
        require_grad: bool,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let py = cls.py();
        let mut t = data.get().with(py, Tensor::detach)?;
        t.set_requires_grad(require_grad).py()?;
        let obj = wrap_typed(py, t, Some(cls))?;
        Ok(obj)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // The TensorImpl → object edge is never reported (PyTorch's rule:
        // a tensor Rust holds is always reachable); the subclass and the
        // kept storage object are. (`try_lock`: a traversal never waits; the
        // lock is only held for a swap, never across Python code.)
        if let Some(c) = &self.subtype {
            visit.call(c)?;
        }
        if let Ok(slot) = self.storage_obj.try_lock() {
            if let Some(o) = slot.as_ref() {
                visit.call(o)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        let old = self
            .storage_obj
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        drop(old);
    }

    // ---- attributes -------------------------------------------------

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.size_object(py)
    }

    #[pyo3(signature = (dim = None))]
    fn size<'py>(&self, py: Python<'py>, dim: Option<I64>) -> PyResult<Bound<'py, PyAny>> {
        let dim = dim.map(|v| v.0);
        match dim {
            None => self.size_object(py),
            Some(d) => Ok(self
                .with(py, |t| t.size(d))?
                .py()?
                .into_pyobject(py)?
                .into_any()),
        }
    }

    #[pyo3(signature = (dim = None))]
    fn stride<'py>(&self, py: Python<'py>, dim: Option<I64>) -> PyResult<Bound<'py, PyAny>> {
        let dim = dim.map(|v| v.0);
        match dim {
            None => {
                // Copied out on the stack (building the tuple may run
                // Python code, which `with` must not be held across).
                let strides = self.with(py, |t| DimVec::from_slice(t.strides()))?;
                Ok(PyTuple::new(py, strides.as_slice())?.into_any())
            }
            Some(d) => Ok(self
                .with(py, |t| t.stride(d))?
                .py()?
                .into_pyobject(py)?
                .into_any()),
        }
    }

    fn storage_offset(&self, py: Python<'_>) -> PyResult<i64> {
        self.with(py, |t| t.storage_offset())
    }

    fn dim(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |t| t.dim())
    }

    #[getter]
    fn ndim(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |t| t.dim())
    }

    fn ndimension(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |t| t.dim())
    }

    fn numel(&self, py: Python<'_>) -> PyResult<i64> {
        self.with(py, |t| t.numel())
    }

    fn nelement(&self, py: Python<'_>) -> PyResult<i64> {
        self.with(py, |t| t.numel())
    }

    fn element_size(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |t| t.element_size())
    }

    /// `Tensor.layout`: `torchcore.strided`, the only layout here (no
    /// sparse or quantized tensors).
    #[getter]
    fn layout<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(strided(py)?.bind(py).clone())
    }

    #[getter]
    fn itemsize(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |t| t.element_size())
    }

    #[getter]
    fn nbytes(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |t| t.nbytes())
    }

    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<Py<PyDtype>> {
        let st = self.with(py, Tensor::dtype)?;
        crate::convert::dtype_object(py, st)
    }

    #[getter]
    fn device<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDevice>> {
        /// The `cpu` device object, made once: device objects are
        /// immutable, so every CPU tensor can hand out the same one (torch
        /// makes a new one per call; only `is` tells them apart).
        static CPU: PyOnceLock<Py<PyDevice>> = PyOnceLock::new();
        let d = self.with(py, Tensor::device)?;
        if d == c10_core::Device::CPU {
            let cpu = CPU.get_or_try_init(py, || Py::new(py, PyDevice { d }))?;
            return Ok(cpu.bind(py).clone());
        }
        Bound::new(py, PyDevice { d })
    }

    #[getter]
    fn is_cuda(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |t| {
            t.device().device_type() == c10_core::DeviceType::Cuda
        })
    }

    #[getter]
    fn is_cpu(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |t| {
            t.device().device_type() == c10_core::DeviceType::Cpu
        })
    }

    #[getter]
    fn is_meta(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |t| {
            t.device().device_type() == c10_core::DeviceType::Meta
        })
    }

    fn is_floating_point(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |t| t.dtype().is_floating_point())
    }

    fn is_complex(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |t| t.dtype().is_complex())
    }

    #[pyo3(signature = (memory_format = None))]
    fn is_contiguous(
        &self,
        py: Python<'_>,
        memory_format: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let f = format_arg(memory_format, MemoryFormat::Contiguous)?;
        self.with(py, |t| t.is_contiguous_in(f))
    }

    fn is_non_overlapping_and_dense(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |t| t.is_non_overlapping_and_dense())
    }

    fn data_ptr(&self, py: Python<'_>) -> PyResult<usize> {
        let (base, offset, itemsize, numel) = self.with(py, |t| {
            (
                t.storage().data_addr(),
                t.storage_offset(),
                t.element_size(),
                t.numel(),
            )
        })?;
        let base = base.map_err(|e| convert::to_py_err(e.into()))?;
        // PyTorch's `data_ptr()` is null for a tensor without elements,
        // whatever its offset.
        if numel == 0 {
            return Ok(0);
        }
        // Checked: an offset set through `set_`/`as_strided_` is validated
        // against the storage, but a wrapped address must not be possible
        // even if it were not (and overflow would panic in debug builds).
        usize::try_from(offset)
            .ok()
            .and_then(|o| o.checked_mul(itemsize))
            .and_then(|b| base.checked_add(b))
            .ok_or_else(|| {
                PyRuntimeError::new_err(format!(
                    "data_ptr(): storage offset {offset} (element size {itemsize}) is outside \
                     the address space"
                ))
            })
    }

    /// The storage's Python object: the same one each time while it lives
    /// (see `storage.rs`).
    fn untyped_storage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // The id first: the common case (the object is kept) needs no
        // storage handle.
        let id = self.with(py, |t| t.storage().id())?;
        if let Some(o) = self.kept_storage_object(py, id) {
            return Ok(o);
        }
        let storage = self.with(py, |t| t.storage().clone())?;
        let id = storage.id();
        if let Some(o) = self.kept_storage_object(py, id) {
            return Ok(o);
        }
        let obj = wrap_storage(py, storage)?;
        self.keep_storage_object(py, id, Some(obj.clone().unbind()));
        Ok(obj)
    }

    /// `tensor.storage()`: a `torchcore.TypedStorage` of this tensor's
    /// dtype over `untyped_storage()` (with PyTorch's deprecation warning).
    fn storage<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py()
            .import("torchcore.storage")?
            .getattr("_typed_storage_of")?
            .call1((slf, true))
    }

    /// `tensor.storage_type()`: the legacy storage class of the dtype
    /// (`torchcore.FloatStorage`, ...).
    fn storage_type<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py()
            .import("torchcore.storage")?
            .getattr("_storage_type_of")?
            .call1((slf,))
    }

    /// `storage()` without the deprecation warning (PyTorch's internal
    /// spelling).
    fn _typed_storage<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py()
            .import("torchcore.storage")?
            .getattr("_typed_storage_of")?
            .call1((slf, false))
    }

    fn is_set_to(&self, py: Python<'_>, other: &Bound<'_, PyTensor>) -> PyResult<bool> {
        // Never two tensors' locks at once (`other` may be `self`).
        let other = other.get().handle(py)?;
        self.with(py, |t| t.is_set_to(&other))
    }

    #[getter]
    fn _version(&self, py: Python<'_>) -> PyResult<u32> {
        self.with(py, Tensor::version)?.py()
    }

    #[getter]
    fn get_requires_grad(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |t| t.requires_grad())
    }

    /// `t.requires_grad = flag`, with PyTorch's setter errors, in its
    /// order: a non-`bool` (`requires_grad must be a bool`), a non-leaf
    /// (`you can only change requires_grad flags of leaf variables.`, with
    /// the `detach()` hint when turning it off), a dtype that cannot
    /// require gradients (`only Tensors of floating point and complex
    /// dtype can require gradients`).
    #[setter]
    fn set_requires_grad(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let Ok(flag) = value.cast::<PyBool>().map(|b| b.is_true()) else {
            return Err(PyRuntimeError::new_err("requires_grad must be a bool"));
        };
        let py = slf.py();
        let (leaf, dtype) = slf.get().with(py, |t| (t.is_leaf(), t.dtype()))?;
        if !leaf {
            let hint = if flag {
                ""
            } else {
                " If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            };
            return Err(PyRuntimeError::new_err(format!(
                "you can only change requires_grad flags of leaf variables.{hint}"
            )));
        }
        if flag && !(dtype.is_floating_point() || dtype.is_complex()) {
            return Err(PyRuntimeError::new_err(
                "only Tensors of floating point and complex dtype can require gradients",
            ));
        }
        inplace(slf, |t| t.set_requires_grad(flag)).map(|_| ())
    }

    /// `requires_grad_(flag=True)`; a non-`bool` flag, `None` included, is
    /// PyTorch's parser `TypeError`.
    #[pyo3(signature = (requires_grad = GradFlag(true)))]
    fn requires_grad_<'py>(
        slf: &Bound<'py, Self>,
        requires_grad: GradFlag,
    ) -> PyResult<Bound<'py, Self>> {
        inplace(slf, |t| t.requires_grad_(requires_grad.0))
    }

    #[getter]
    fn is_leaf(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |t| t.is_leaf())
    }

    #[getter]
    fn grad(&self, py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    fn _use_count(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |t| t.use_count())
    }

    fn detach<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTensor>> {
        let r = self.with(py, Tensor::detach)?;
        self.wrap_out(py, r)
    }

    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTensor>> {
        let r = self.with(py, Tensor::data)?;
        self.wrap_out(py, r)
    }

    fn tolist(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let t = self.handle(py)?;
        convert::tolist(py, &t)
    }

    fn item(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        // Read in place under the GIL when nobody writes the storage (no
        // handle clone, no GIL release); otherwise the general path.
        if let Some(v) = self.with(py, read_one)? {
            return v.into_py(py);
        }
        let t = self.handle(py)?;
        convert::item_py(py, &t)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        // Printing walks the dims iteratively (any number of dims prints;
        // PyTorch's recursive printer raises `RecursionError` from about
        // 500 dims).
        let t = self.handle(py)?;
        let text = py.detach(|| t.to_string());
        match &self.subtype {
            None => Ok(text),
            Some(cls) => Ok(subclass_repr(&text, &cls.bind(py).name()?.to_cow()?)),
        }
    }

    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        self.__repr__(py)
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        match self.with(py, |t| t.sizes().first().copied())? {
            Some(n) => usize::try_from(n)
                .map_err(|_| PyRuntimeError::new_err(format!("len(): negative size {n} in dim 0"))),
            None => Err(PyTypeError::new_err("len() of a 0-d tensor")),
        }
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let parts = self.with(py, |t| (t.dim() != 0).then(|| views::unbind(t, 0)))?;
        let Some(parts) = parts else {
            return Err(PyTypeError::new_err("iteration over a 0-d tensor"));
        };
        self.wrap_all_out(py, parts.py()?)?
            .as_any()
            .try_iter()
            .map(Bound::into_any)
    }

    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        let t = self.handle(py)?;
        if t.numel() != 1 {
            return Err(PyRuntimeError::new_err(format!(
                "Boolean value of Tensor with {} values is ambiguous",
                if t.numel() == 0 {
                    "no"
                } else {
                    "more than one"
                }
            )));
        }
        Ok(match convert::item(py, &t)? {
            Scalar::Complex(re, im) => re != 0.0 || im != 0.0,
            s => s.to_f64() != 0.0,
        })
    }

    fn __int__(&self, py: Python<'_>) -> PyResult<i64> {
        let t = self.handle(py)?;
        let s = convert::item(py, &t)?;
        if s.is_complex() {
            // c10's `checked_convert`: only a zero imaginary part converts.
            s.check_fits(ScalarType::Long).py()?;
        }
        Ok(s.to_i64())
    }

    fn __float__(&self, py: Python<'_>) -> PyResult<f64> {
        let t = self.handle(py)?;
        let s = convert::item(py, &t)?;
        if s.is_complex() {
            s.check_fits(ScalarType::Double).py()?;
        }
        Ok(s.to_f64())
    }

    fn __complex__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyComplex>> {
        let t = self.handle(py)?;
        let (re, im) = match convert::item(py, &t)? {
            Scalar::Complex(re, im) => (re, im),
            s => (s.to_f64(), 0.0),
        };
        Ok(pyo3::types::PyComplex::from_doubles(py, re, im))
    }

    fn __index__(&self, py: Python<'_>) -> PyResult<i64> {
        let t = self.handle(py)?;
        if !t.dtype().is_integral(true) || t.numel() != 1 {
            return Err(PyTypeError::new_err(
                "only integer tensors of a single element can be converted to an index",
            ));
        }
        Ok(convert::item(py, &t)?.to_i64())
    }

    // ---- views ------------------------------------------------------

    #[pyo3(signature = (*shape, **kwargs))]
    fn view<'py>(
        &self,
        py: Python<'py>,
        shape: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        if let Some(kw) = kwargs.filter(|k| !k.is_empty()) {
            // The keyword forms `view(dtype=...)`, `view(size=...)`, alone.
            let one = view_keyword(shape, kw)?;
            return self.view(py, &one, None).map_err(|e| {
                if e.is_instance_of::<PyTypeError>(py)
                    && !e.to_string().contains("failed to unpack")
                {
                    view_invalid_combination(shape, Some(kw))
                } else {
                    e
                }
            });
        }
        if shape.len() == 1 {
            if let Ok(d) = shape.get_item(0)?.cast::<PyDtype>() {
                let st = d.get().st;
                // PyTorch drops `requires_grad` (`view(dtype)` has no
                // backward): the view is a new `TensorImpl`, edited alone.
                return self.derive(py, |t| {
                    let mut v = t.view_dtype(st)?;
                    if v.requires_grad() {
                        v.set_requires_grad(false)?;
                    }
                    Ok(v)
                });
            }
        }
        let dims = dims_of(shape, "view(): argument 'size'").map_err(|e| {
            // `view` has two overloads: PyTorch reports an argument that is
            // neither a dtype nor a size list as a failed overload match;
            // only an element past the first "fails to unpack".
            if e.is_instance_of::<PyTypeError>(py) && !e.to_string().contains("failed to unpack") {
                view_invalid_combination(shape, None)
            } else {
                e
            }
        })?;
        self.derive(py, |t| views::view(t, &*dims))
    }

    /// `Tensor.new_empty(*size, dtype=None, device=None,
    /// requires_grad=False)`: an uninitialized tensor with `self`'s dtype
    /// and device unless given.
    ///
    /// ```python
    /// t = torchcore.zeros(2, dtype=torchcore.float64)
    /// assert t.new_empty(3, 4).dtype == torchcore.float64
    /// ```
    #[pyo3(signature = (*size, dtype = None, device = None, requires_grad = false, layout = None, pin_memory = false))]
    #[allow(clippy::too_many_arguments)]
    fn new_empty<'py>(
        &self,
        py: Python<'py>,
        size: &Bound<'py, PyTuple>,
        dtype: Option<&Bound<'py, PyAny>>,
        device: Option<&Bound<'py, PyAny>>,
        requires_grad: bool,
        layout: Option<&Bound<'py, PyAny>>,
        pin_memory: bool,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let _ = (layout, pin_memory);
        let (sizes, o) = self.new_args(py, size, "new_empty", (dtype, device, requires_grad))?;
        wrap(py, Tensor::empty(&sizes, o).py()?)
    }

    /// `Tensor.new_zeros(*size, dtype=None, device=None,
    /// requires_grad=False)`: zeros with `self`'s dtype and device unless
    /// given.
    #[pyo3(signature = (*size, dtype = None, device = None, requires_grad = false, layout = None, pin_memory = false))]
    #[allow(clippy::too_many_arguments)]
    fn new_zeros<'py>(
        &self,
        py: Python<'py>,
        size: &Bound<'py, PyTuple>,
        dtype: Option<&Bound<'py, PyAny>>,
        device: Option<&Bound<'py, PyAny>>,
        requires_grad: bool,
        layout: Option<&Bound<'py, PyAny>>,
        pin_memory: bool,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let _ = (layout, pin_memory);
        let (sizes, o) = self.new_args(py, size, "new_zeros", (dtype, device, requires_grad))?;
        // PyTorch's `new_zeros` is `empty` + `zero_`: its negative-size
        // error is `empty`'s, not `zeros`'s.
        wrap(py, Tensor::full(&sizes, Scalar::Int(0), o).py()?)
    }

    /// `Tensor.new_ones(*size, dtype=None, device=None,
    /// requires_grad=False)`: ones with `self`'s dtype and device unless
    /// given.
    #[pyo3(signature = (*size, dtype = None, device = None, requires_grad = false, layout = None, pin_memory = false))]
    #[allow(clippy::too_many_arguments)]
    fn new_ones<'py>(
        &self,
        py: Python<'py>,
        size: &Bound<'py, PyTuple>,
        dtype: Option<&Bound<'py, PyAny>>,
        device: Option<&Bound<'py, PyAny>>,
        requires_grad: bool,
        layout: Option<&Bound<'py, PyAny>>,
        pin_memory: bool,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let _ = (layout, pin_memory);
        let (sizes, o) = self.new_args(py, size, "new_ones", (dtype, device, requires_grad))?;
        wrap(py, Tensor::ones(&sizes, o).py()?)
    }

    /// `Tensor.new_full(size, fill_value, dtype=None, device=None,
    /// requires_grad=False)`: `fill_value` everywhere, with `self`'s dtype
    /// and device unless given (the size is one tuple or list, as in
    /// PyTorch).
    #[pyo3(signature = (size, fill_value, *, dtype = None, device = None, requires_grad = false, layout = None, pin_memory = false))]
    #[allow(clippy::too_many_arguments)]
    fn new_full<'py>(
        &self,
        py: Python<'py>,
        size: &Bound<'py, PyAny>,
        fill_value: &Bound<'py, PyAny>,
        dtype: Option<&Bound<'py, PyAny>>,
        device: Option<&Bound<'py, PyAny>>,
        requires_grad: bool,
        layout: Option<&Bound<'py, PyAny>>,
        pin_memory: bool,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let _ = (layout, pin_memory);
        convert::size_arg_check(size, "new_full(): argument 'size'", 1)?;
        // The dtype filled, for the warning of a complex tensor value (an
        // invalid `dtype` is reported after `fill_value`, as PyTorch's
        // parser does).
        let dst = dtype_arg(dtype)
            .ok()
            .flatten()
            .or_else(|| self.with(py, Tensor::dtype).ok());
        let n = fill_number(fill_value, "new_full", dst)?;
        let sizes = convert::size_arg(size, "new_full(): argument 'size'", 1)?;
        let o = self.new_options(py, (dtype, device, requires_grad))?;
        let st = o.dtype.unwrap_or(ScalarType::Float);
        let v = convert::resolve_number(n, st)?;
        wrap(py, Tensor::full(&sizes, v, o).py()?)
    }

    fn view_as<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyTensor>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let sizes = other.get().with(py, |o| o.sizes().to_vec())?;
        self.derive(py, |t| views::view(t, &sizes))
    }

    #[pyo3(signature = (*shape))]
    fn reshape<'py>(
        &self,
        py: Python<'py>,
        shape: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let dims = dims_of(shape, "reshape(): argument 'shape'")?;
        // A contiguous tensor is viewed, never copied (ATen asks
        // `is_contiguous()` first too): no GIL-free section is needed, and
        // releasing and retaking the GIL would cost more than the view.
        if let Some(r) = self.with(py, |t| t.is_contiguous().then(|| views::reshape(t, &*dims)))? {
            return self.wrap_out(py, r.py()?);
        }
        // A handle of our own: the object's lock is not held across the op.
        let t = &self.handle(py)?;
        let r = short_ops::run(py, short_ops::bytes_of(t), || views::reshape(t, &*dims))?;
        self.wrap_out(py, r)
    }

    fn reshape_as<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyTensor>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let sizes = other.get().with(py, |o| o.sizes().to_vec())?;
        // A handle of our own: the object's lock is not held across the op.
        let t = &self.handle(py)?;
        let r = short_ops::run(py, short_ops::bytes_of(t), || views::reshape(t, &sizes))?;
        self.wrap_out(py, r)
    }

    fn t<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTensor>> {
        self.derive(py, views::t)
    }

    #[getter(T)]
    fn big_t<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTensor>> {
        // PyTorch's deprecation warnings (`TORCH_WARN_ONCE`: once per process).
        static WARNED_0D: AtomicBool = AtomicBool::new(false);
        static WARNED_ND: AtomicBool = AtomicBool::new(false);
        let (flag, msg) = match self.with(py, Tensor::dim)? {
            2 => (None, c""),
            0 => (
                Some(&WARNED_0D),
                c"Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
            ),
            _ => (
                Some(&WARNED_ND),
                c"The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
            ),
        };
        if let Some(flag) = flag {
            if !flag.swap(true, Ordering::Relaxed) {
                let cat = py.get_type::<pyo3::exceptions::PyUserWarning>();
                PyErr::warn(py, &cat, msg, 1)?;
            }
        }
        self.derive(py, views::numpy_t)
    }

    #[getter(mT)]
    fn m_t<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTensor>> {
        self.derive(py, views::mt)
    }

    // `mH` (with conjugation) is in `complex_views.rs`.

    fn transpose<'py>(
        &self,
        py: Python<'py>,
        dim0: I64,
        dim1: I64,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let dim0 = dim0.0;
        let dim1 = dim1.0;
        self.derive(py, |t| views::transpose(t, dim0, dim1))
    }

    #[pyo3(signature = (axis0, axis1))]
    fn swapaxes<'py>(
        &self,
        py: Python<'py>,
        axis0: I64,
        axis1: I64,
    ) -> PyResult<Bound<'py, PyTensor>> {
        // NumPy's and PyTorch's aliases of `transpose`.
        self.transpose(py, axis0, axis1)
    }

    #[pyo3(signature = (dim0, dim1))]
    fn swapdims<'py>(
        &self,
        py: Python<'py>,
        dim0: I64,
        dim1: I64,
    ) -> PyResult<Bound<'py, PyTensor>> {
        // NumPy's and PyTorch's aliases of `transpose`.
        self.transpose(py, dim0, dim1)
    }

    #[pyo3(signature = (*dims))]
    fn permute<'py>(
        &self,
        py: Python<'py>,
        dims: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let dims = dims_of(dims, "permute(): argument 'dims'")?;
        self.derive(py, |t| views::permute(t, &dims))
    }

    fn narrow<'py>(
        &self,
        py: Python<'py>,
        dim: I64,
        start: &Bound<'py, PyAny>,
        length: I64,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let dim = dim.0;
        let length = length.0;
        let start = if let Ok(st) = start.cast::<PyTensor>() {
            let st = st.get().handle(py)?;
            if st.dim() != 0 || !st.dtype().is_integral(false) {
                return Err(PyRuntimeError::new_err(
                    "start must be an 0-dim integral Tensor.",
                ));
            }
            convert::item(py, &st)?.to_i64()
        } else {
            int(start)?
        };
        self.derive(py, |t| views::narrow(t, dim, start, length))
    }

    fn select<'py>(&self, py: Python<'py>, dim: I64, index: I64) -> PyResult<Bound<'py, PyTensor>> {
        let dim = dim.0;
        let index = index.0;
        self.derive(py, |t| views::select(t, dim, index))
    }

    #[pyo3(signature = (*sizes))]
    fn expand<'py>(
        &self,
        py: Python<'py>,
        sizes: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let sizes = dims_of(sizes, "expand(): argument 'size'")?;
        self.derive(py, |t| views::expand(t, &*sizes))
    }

    fn expand_as<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyTensor>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let sizes = other.get().with(py, |o| o.sizes().to_vec())?;
        self.derive(py, |t| views::expand(t, &sizes))
    }

    fn broadcast_to<'py>(
        &self,
        py: Python<'py>,
        size: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let sizes = convert::seq_ints(size, "broadcast_to(): argument 'size'")?;
        self.derive(py, |t| views::broadcast_to(t, &sizes))
    }

    #[pyo3(signature = (dim = None))]
    fn squeeze<'py>(
        &self,
        py: Python<'py>,
        dim: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let dims = dims_arg(dim)?;
        let single = dim.is_some_and(|x| x.is_instance_of::<PyInt>());
        self.derive(py, |t| match dims {
            None => views::squeeze(t),
            Some(d) if single => views::squeeze_dim(t, d.first().copied().unwrap_or(0)),
            Some(d) => views::squeeze_dims(t, &d),
        })
    }

    fn unsqueeze<'py>(&self, py: Python<'py>, dim: I64) -> PyResult<Bound<'py, PyTensor>> {
        let dim = dim.0;
        self.derive(py, |t| views::unsqueeze(t, dim))
    }

    #[pyo3(signature = (start_dim = I64(0), end_dim = I64(-1)))]
    // The defaults as Python shows them (`I64(0)` would print as `...`).
    #[pyo3(text_signature = "($self, start_dim=0, end_dim=-1)")]
    fn flatten<'py>(
        &self,
        py: Python<'py>,
        start_dim: I64,
        end_dim: I64,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let start_dim = start_dim.0;
        let end_dim = end_dim.0;
        // A contiguous tensor is viewed, never copied (as in `reshape`): no
        // GIL-free section, whose release and retake cost more than the view.
        let view = self.with(py, |t| {
            t.is_contiguous()
                .then(|| views::flatten(t, start_dim, end_dim))
        })?;
        if let Some(r) = view {
            return self.wrap_out(py, r.py()?);
        }
        // A handle of our own: the object's lock is not held across the op.
        let t = &self.handle(py)?;
        let r = short_ops::run(py, short_ops::bytes_of(t), || {
            views::flatten(t, start_dim, end_dim)
        })?;
        self.wrap_out(py, r)
    }

    fn ravel<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTensor>> {
        // As `flatten`: a contiguous tensor is viewed without a GIL-free
        // section.
        let view = self.with(py, |t| t.is_contiguous().then(|| views::ravel(t)))?;
        if let Some(r) = view {
            return self.wrap_out(py, r.py()?);
        }
        // A handle of our own: the object's lock is not held across the op.
        let t = &self.handle(py)?;
        let r = short_ops::run(py, short_ops::bytes_of(t), || views::ravel(t))?;
        self.wrap_out(py, r)
    }

    fn unflatten<'py>(
        &self,
        py: Python<'py>,
        dim: I64,
        sizes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let dim = dim.0;
        let sizes = convert::seq_ints(sizes, "unflatten(): argument 'sizes'")?;
        self.derive(py, |t| views::unflatten(t, dim, &sizes))
    }

    #[pyo3(signature = (split_size_or_sections, dim = I64(0)))]
    // The defaults as Python shows them (`I64(0)` would print as `...`).
    #[pyo3(text_signature = "($self, split_size_or_sections, dim=0)")]
    fn split<'py>(
        &self,
        py: Python<'py>,
        split_size_or_sections: &Bound<'py, PyAny>,
        dim: I64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let dim = dim.0;
        let parts = if let Some(n) = convert::maybe_int(split_size_or_sections)? {
            self.with(py, |t| views::split(t, n, dim))?
        } else {
            let s = convert::seq_ints(split_size_or_sections, "split_size_or_sections")?;
            self.with(py, |t| views::split_with_sizes(t, &s, dim))?
        };
        self.wrap_all_out(py, parts.py()?)
    }

    #[pyo3(signature = (split_sizes, dim = I64(0)))]
    // The defaults as Python shows them (`I64(0)` would print as `...`).
    #[pyo3(text_signature = "($self, split_sizes, dim=0)")]
    fn split_with_sizes<'py>(
        &self,
        py: Python<'py>,
        split_sizes: &Bound<'py, PyAny>,
        dim: I64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let dim = dim.0;
        let s = convert::seq_ints(split_sizes, "split_sizes")?;
        self.wrap_all_out(
            py,
            self.with(py, |t| views::split_with_sizes(t, &s, dim))?
                .py()?,
        )
    }

    #[pyo3(signature = (chunks, dim = I64(0)))]
    // The defaults as Python shows them (`I64(0)` would print as `...`).
    #[pyo3(text_signature = "($self, chunks, dim=0)")]
    fn chunk<'py>(&self, py: Python<'py>, chunks: I64, dim: I64) -> PyResult<Bound<'py, PyTuple>> {
        let chunks = chunks.0;
        let dim = dim.0;
        self.wrap_all_out(py, self.with(py, |t| views::chunk(t, chunks, dim))?.py()?)
    }

    #[pyo3(signature = (indices_or_sections, dim = I64(0)))]
    // The defaults as Python shows them (`I64(0)` would print as `...`).
    #[pyo3(text_signature = "($self, indices_or_sections, dim=0)")]
    fn tensor_split<'py>(
        &self,
        py: Python<'py>,
        indices_or_sections: &Bound<'py, PyAny>,
        dim: I64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let dim = dim.0;
        if let Ok(ix) = indices_or_sections.cast::<PyTensor>() {
            let ix = ix.get().handle(py)?;
            let parts = split_by_tensor(
                py,
                &ix,
                |n| self.with(py, |t| views::tensor_split(t, n, dim)),
                |s| self.with(py, |t| views::tensor_split_indices(t, s, dim)),
            )?;
            return self.wrap_all_out(py, parts.py()?);
        }
        let parts = if let Some(n) = convert::maybe_int(indices_or_sections)? {
            self.with(py, |t| views::tensor_split(t, n, dim))?
        } else {
            let s = convert::seq_ints(indices_or_sections, "indices")?;
            self.with(py, |t| views::tensor_split_indices(t, &s, dim))?
        };
        self.wrap_all_out(py, parts.py()?)
    }

    /// `hsplit(sections)` / `hsplit(indices)`.
    fn hsplit<'py>(
        &self,
        py: Python<'py>,
        indices_or_sections: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        self.directional(
            py,
            indices_or_sections,
            views::hsplit,
            views::hsplit_indices,
        )
    }

    /// `vsplit(sections)` / `vsplit(indices)`.
    fn vsplit<'py>(
        &self,
        py: Python<'py>,
        indices_or_sections: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        self.directional(
            py,
            indices_or_sections,
            views::vsplit,
            views::vsplit_indices,
        )
    }

    /// `dsplit(sections)` / `dsplit(indices)`.
    fn dsplit<'py>(
        &self,
        py: Python<'py>,
        indices_or_sections: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        self.directional(
            py,
            indices_or_sections,
            views::dsplit,
            views::dsplit_indices,
        )
    }

    #[pyo3(signature = (dim = I64(0)))]
    // The defaults as Python shows them (`I64(0)` would print as `...`).
    #[pyo3(text_signature = "($self, dim=0)")]
    fn unbind<'py>(&self, py: Python<'py>, dim: I64) -> PyResult<Bound<'py, PyTuple>> {
        let dim = dim.0;
        self.wrap_all_out(py, self.with(py, |t| views::unbind(t, dim))?.py()?)
    }

    #[pyo3(signature = (offset = I64(0), dim1 = I64(0), dim2 = I64(1)))]
    // The defaults as Python shows them (`I64(0)` would print as `...`).
    #[pyo3(text_signature = "($self, offset=0, dim1=0, dim2=1)")]
    fn diagonal<'py>(
        &self,
        py: Python<'py>,
        offset: I64,
        dim1: I64,
        dim2: I64,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let offset = offset.0;
        let dim1 = dim1.0;
        let dim2 = dim2.0;
        self.derive(py, |t| views::diagonal(t, offset, dim1, dim2))
    }

    fn unfold<'py>(
        &self,
        py: Python<'py>,
        dimension: I64,
        size: I64,
        step: I64,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let dimension = dimension.0;
        let size = size.0;
        let step = step.0;
        self.derive(py, |t| views::unfold(t, dimension, size, step))
    }

    fn movedim<'py>(
        &self,
        py: Python<'py>,
        source: &Bound<'py, PyAny>,
        destination: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let s = dims_arg(Some(source))?.unwrap_or_default();
        let d = dims_arg(Some(destination))?.unwrap_or_default();
        self.derive(py, |t| views::movedim(t, &s, &d))
    }

    fn moveaxis<'py>(
        &self,
        py: Python<'py>,
        source: &Bound<'py, PyAny>,
        destination: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        self.movedim(py, source, destination)
    }

    #[pyo3(signature = (size, stride, storage_offset = None))]
    fn as_strided<'py>(
        &self,
        py: Python<'py>,
        size: &Bound<'py, PyAny>,
        stride: &Bound<'py, PyAny>,
        storage_offset: Option<I64>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let storage_offset = storage_offset.map(|v| v.0);
        let size = seq_dims(size, "as_strided(): argument 'size'")?;
        let stride = seq_dims(stride, "as_strided(): argument 'stride'")?;
        self.derive(py, |t| t.as_strided(&*size, &*stride, storage_offset))
    }

    fn alias<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTensor>> {
        self.derive(py, views::alias)
    }

    // ---- copies -----------------------------------------------------

    #[pyo3(signature = (memory_format = None))]
    fn contiguous<'py>(
        slf: &Bound<'py, Self>,
        memory_format: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let py = slf.py();
        let f = format_arg(memory_format, MemoryFormat::Contiguous)?;
        // Already contiguous: the tensor itself (PyTorch returns `self`),
        // with no handle taken.
        let me = slf.get();
        if me.with(py, |t| t.is_contiguous_in(f))? {
            return Ok(slf.clone());
        }
        // A handle of our own: the lock is not held across the copy.
        let t = &me.handle(py)?;
        let r = short_ops::run(py, short_ops::bytes_of(t), || copy_api::contiguous(t, f))?;
        me.wrap_out(py, r)
    }

    #[pyo3(signature = (memory_format = None))]
    fn clone<'py>(
        &self,
        py: Python<'py>,
        memory_format: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let f = format_arg(memory_format, MemoryFormat::Preserve)?;
        // A handle of our own: the object's lock is not held across the op.
        let t = &self.handle(py)?;
        // The copy may wait on the storages' locks, and a thread holding one
        // may be waiting for the GIL (a binding edge): short copies run with
        // the GIL held only if they need not wait (see `short_ops`).
        let r = short_ops::run(py, short_ops::bytes_of(t), || copy_api::clone(t, f))?;
        self.wrap_out(py, r)
    }

    #[pyo3(signature = (src, non_blocking = false))]
    fn copy_<'py>(
        slf: &Bound<'py, Self>,
        src: &Bound<'py, PyAny>,
        non_blocking: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let _ = non_blocking;
        let py = slf.py();
        let src_t = as_tensor(src)?;
        // Handles of our own: a data write needs no lock on the object (the
        // storage's lock orders it against other writers and readers).
        let dst = slf.get().handle(py)?;
        short_ops::run(py, short_ops::copy_bytes(&dst, &src_t), || {
            copy_api::copy_(&dst, &src_t)
        })?;
        Ok(slf.clone())
    }

    fn fill_<'py>(slf: &Bound<'py, Self>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        let py = slf.py();
        if let Ok(v) = value.cast::<PyTensor>() {
            let d = v.get().with(py, Tensor::dim)?;
            if d != 0 {
                return Err(PyRuntimeError::new_err(format!(
                    "fill_ only supports 0-dimension value tensor but got tensor with {d} dimensions."
                )));
            }
        }
        let t = slf.get().handle(py)?;
        let n = convert::fill_number(value, Some(t.dtype()))?;
        let v = convert::resolve_number(n, t.dtype())?;
        short_ops::run(py, short_ops::bytes_of(&t), || t.fill_(v))?;
        Ok(slf.clone())
    }

    fn zero_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        let py = slf.py();
        let t = slf.get().handle(py)?;
        short_ops::run(py, short_ops::bytes_of(&t), || t.zero_())?;
        Ok(slf.clone())
    }

    /// `to(dtype)`, `to(device)`, `to(other)`, `to(device, dtype)`, each
    /// with `memory_format=`; returns `self` when nothing changes, as
    /// PyTorch does. The CPU and the meta device are supported (`to('meta')`
    /// makes a tensor with the geometry and no data).
    #[pyo3(signature = (*args, dtype = None, device = None, non_blocking = false, copy = false, memory_format = None))]
    #[allow(clippy::too_many_arguments)]
    fn to<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        dtype: Option<&Bound<'py, PyAny>>,
        device: Option<&Bound<'py, PyAny>>,
        non_blocking: bool,
        copy: bool,
        memory_format: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = non_blocking;
        let py = slf.py();
        let mut want_dtype = dtype_arg(dtype)?;
        let mut want_device = device_arg(device)?;
        for a in args.iter() {
            if let Ok(d) = a.cast::<PyDtype>() {
                want_dtype = Some(d.get().st);
            } else if let Ok(o) = a.cast::<PyTensor>() {
                let (st, d) = o.get().with(py, |o| (o.dtype(), o.device()))?;
                want_dtype = Some(st);
                want_device = Some(d);
            } else if a.is_instance_of::<PyBool>() {
                // `to(dtype, non_blocking, copy)` positional flags.
                continue;
            } else {
                want_device = device_arg(Some(&a))?;
            }
        }
        let format = format_arg(memory_format, MemoryFormat::Preserve)?;
        let t = &slf.get().handle(py)?;
        let st = want_dtype.unwrap_or(t.dtype());
        if let Some(d) = want_device {
            if d != t.device() {
                let r = to_device(py, t, d, st, format)?;
                return Ok(slf.get().wrap_out(py, r)?.into_any());
            }
        }
        let format_changes =
            format != MemoryFormat::Preserve && t.suggest_memory_format() != format;
        if st == t.dtype() && !copy && !format_changes {
            return Ok(slf.clone().into_any());
        }
        let bytes = short_ops::bytes(t.numel(), t.element_size().max(st.itemsize()));
        let r = short_ops::run(py, bytes, || {
            let r = if st == t.dtype() {
                copy_api::clone(t, format)?
            } else {
                copy_api::to_dtype(t, st)?
            };
            if format != MemoryFormat::Preserve && !r.is_contiguous_in(format) {
                copy_api::contiguous(&r, format)
            } else {
                Ok(r)
            }
        })?;
        Ok(slf.get().wrap_out(py, r)?.into_any())
    }

    #[pyo3(signature = (dtype = None))]
    fn r#type<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match dtype_arg(dtype)? {
            None => {
                let name = slf.get().with(slf.py(), Tensor::type_name)?;
                Ok(pyo3::types::PyString::new(slf.py(), &name).into_any())
            }
            Some(st) => convert_dtype(slf, st),
        }
    }

    fn float<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert_dtype(slf, ScalarType::Float)
    }
    fn double<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert_dtype(slf, ScalarType::Double)
    }
    fn half<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert_dtype(slf, ScalarType::Half)
    }
    fn bfloat16<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert_dtype(slf, ScalarType::BFloat16)
    }
    fn long<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert_dtype(slf, ScalarType::Long)
    }
    fn int<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert_dtype(slf, ScalarType::Int)
    }
    fn short<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert_dtype(slf, ScalarType::Short)
    }
    fn char<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert_dtype(slf, ScalarType::Char)
    }
    fn byte<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert_dtype(slf, ScalarType::Byte)
    }
    fn bool<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert_dtype(slf, ScalarType::Bool)
    }
    fn cpu<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        let t = slf.get().handle(slf.py())?;
        convert::refuse_meta_copy(&t)?;
        Ok(slf.clone())
    }

    // ---- in-place metadata ops (every Python reference sees them) ----

    fn t_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        inplace(slf, views::t_)
    }

    fn transpose_<'py>(slf: &Bound<'py, Self>, dim0: I64, dim1: I64) -> PyResult<Bound<'py, Self>> {
        let dim0 = dim0.0;
        let dim1 = dim1.0;
        inplace(slf, |t| t.transpose_(dim0, dim1))
    }

    /// `swapaxes_(axis0, axis1)`: `transpose_` under NumPy's name.
    fn swapaxes_<'py>(
        slf: &Bound<'py, Self>,
        axis0: I64,
        axis1: I64,
    ) -> PyResult<Bound<'py, Self>> {
        let (a, b) = (axis0.0, axis1.0);
        inplace(slf, |t| t.swapaxes_(a, b))
    }

    /// `swapdims_(dim0, dim1)`: `transpose_` under another name.
    fn swapdims_<'py>(slf: &Bound<'py, Self>, dim0: I64, dim1: I64) -> PyResult<Bound<'py, Self>> {
        let (a, b) = (dim0.0, dim1.0);
        inplace(slf, |t| t.swapdims_(a, b))
    }

    fn unsqueeze_<'py>(slf: &Bound<'py, Self>, dim: I64) -> PyResult<Bound<'py, Self>> {
        let dim = dim.0;
        inplace(slf, |t| t.unsqueeze_(dim))
    }

    #[pyo3(signature = (dim = None))]
    fn squeeze_<'py>(
        slf: &Bound<'py, Self>,
        dim: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let single = dim.is_some_and(|x| x.is_instance_of::<PyInt>());
        match dims_arg(dim)? {
            None => inplace(slf, |t| t.squeeze_(None)),
            Some(d) if single => {
                let d0 = d.first().copied().unwrap_or(0);
                inplace(slf, |t| t.squeeze_(Some(d0)))
            }
            Some(d) => inplace(slf, |t| t.squeeze_dims_(&d)),
        }
    }

    #[pyo3(signature = (*sizes, memory_format = None))]
    fn resize_<'py>(
        slf: &Bound<'py, Self>,
        sizes: &Bound<'py, PyTuple>,
        memory_format: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let sizes = int_list(sizes, "resize_(): argument 'size'")?;
        // None stays None: PyTorch keeps the strides of a same-size resize
        // unless a memory format is given.
        let f = match memory_format {
            Some(o) if !o.is_none() => Some(format_arg(Some(o), MemoryFormat::Contiguous)?),
            _ => None,
        };
        inplace_nogil(slf, |t| t.resize_(&sizes, f))
    }

    /// `resize_as_(other, memory_format=None)`: `resize_` to `other`'s sizes,
    /// then (as ATen's `resize_as_`) restride to `memory_format` when one is
    /// given; `preserve_format` means `other`'s suggested format.
    #[pyo3(signature = (other, memory_format = None))]
    fn resize_as_<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyTensor>,
        memory_format: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let (sizes, suggested) = other.get().with(slf.py(), |o| {
            (o.sizes().to_vec(), o.suggest_memory_format())
        })?;
        let f = match memory_format {
            Some(o) if !o.is_none() => match format_arg(Some(o), MemoryFormat::Contiguous)? {
                MemoryFormat::Preserve => Some(suggested),
                f => Some(f),
            },
            _ => None,
        };
        inplace_nogil(slf, |t| {
            t.resize_(&sizes, None)?;
            match f {
                Some(f) => t.resize_(&sizes, Some(f)),
                None => Ok(()),
            }
        })
    }

    #[pyo3(signature = (size, stride, storage_offset = None))]
    fn as_strided_<'py>(
        slf: &Bound<'py, Self>,
        size: &Bound<'py, PyAny>,
        stride: &Bound<'py, PyAny>,
        storage_offset: Option<I64>,
    ) -> PyResult<Bound<'py, Self>> {
        let storage_offset = storage_offset.map(|v| v.0);
        let size = seq_dims(size, "as_strided_(): argument 'size'")?;
        let stride = seq_dims(stride, "as_strided_(): argument 'stride'")?;
        inplace(slf, |t| t.as_strided_(&*size, &*stride, storage_offset))
    }

    /// `set_()`, `set_(tensor)`, `set_(storage, offset, size, stride)`.
    #[pyo3(signature = (source = None, storage_offset = I64(0), size = None, stride = None))]
    // The defaults as Python shows them (`I64(0)` would print as `...`).
    #[pyo3(text_signature = "($self, source=None, storage_offset=0, size=None, stride=None)")]
    fn set_<'py>(
        slf: &Bound<'py, Self>,
        source: Option<&Bound<'py, PyAny>>,
        storage_offset: I64,
        size: Option<&Bound<'py, PyAny>>,
        stride: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let storage_offset = storage_offset.0;
        let Some(source) = source else {
            return inplace(slf, |t| {
                let o = c10_core::TensorOptions::new()
                    .dtype(t.dtype())
                    .device(t.device());
                let empty = Tensor::empty(&[0], o)?;
                t.set_storage(empty.storage())
            });
        };
        if let Ok(src) = source.cast::<PyTensor>() {
            if src.is(slf) {
                return Ok(slf.clone());
            }
            let src_t = src.get().handle(slf.py())?;
            return inplace_nogil(slf, |t| t.set_to(&src_t));
        }
        let typed;
        let source = if source.cast::<PyUntypedStorage>().is_err()
            && source.hasattr("_untyped_storage")?
        {
            // A `TypedStorage`: its dtype must be the tensor's.
            let want = slf.get().with(slf.py(), Tensor::dtype)?;
            let got = dtype_arg(Some(&source.getattr("dtype")?))?;
            if got != Some(want) {
                return Err(PyRuntimeError::new_err(format!(
                    "Expected a Storage of type {} or an UntypedStorage, but got type {} for argument 1 'storage'",
                    cpp_type_name(want),
                    got.map(ScalarType::name).unwrap_or("unknown")
                )));
            }
            typed = source.getattr("_untyped_storage")?;
            &typed
        } else {
            source
        };
        if let Ok(st) = source.cast::<PyUntypedStorage>() {
            let storage = st.get().storage.clone();
            let kept = st.clone().into_any().unbind();
            let sizes = match size {
                Some(s) => Some(convert::seq_ints(s, "size")?),
                None => None,
            };
            let strides = match stride {
                Some(s) => Some(convert::seq_ints(s, "stride")?),
                None => None,
            };
            let id = storage.id();
            let r = inplace_nogil(slf, |t| match sizes {
                None => t.set_storage(&storage),
                Some(sz) => {
                    let strides = match strides {
                        Some(s) => s,
                        None => c10_core::geometry::contiguous_strides(&sz)?.to_vec(),
                    };
                    t.set_(&storage, storage_offset, &sz, &strides)
                }
            })?;
            slf.get().keep_storage_object(slf.py(), id, Some(kept));
            return Ok(r);
        }
        Err(PyTypeError::new_err(
            "set_(): expected a Tensor, a TypedStorage or an UntypedStorage",
        ))
    }

    // ---- interchange -------------------------------------------------

    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<&Bound<'_, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let _ = (stream, dl_device);
        // A handle of our own: the object's lock is not held across the op.
        let t = &self.handle(py)?;
        if copy == Some(true) {
            let c = short_ops::run(py, short_ops::bytes_of(t), || {
                copy_api::clone(t, MemoryFormat::Contiguous)
            })?;
            return crate::dlpack::export(py, &c, max_version);
        }
        crate::dlpack::export(py, t, max_version)
    }

    fn __dlpack_device__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let t = self.handle(py)?;
        crate::dlpack::device(py, &t)
    }

    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arr = crate::numpy_interop::to_numpy(slf.py(), slf, dtype)?;
        if copy == Some(true) {
            return arr.call_method0("copy");
        }
        Ok(arr)
    }

    fn numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        crate::numpy_interop::to_numpy(slf.py(), slf, None)
    }

    // ---- indexing ----------------------------------------------------

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        // The key is converted before the lock is taken: it may run Python
        // code (`__index__`) or name this very tensor. A single key (not a
        // tuple) stays on the stack.
        let (single, mut many);
        let tuple = key.cast::<PyTuple>().is_ok();
        let idx: &[TensorIndex] = if tuple {
            many = Key::new();
            indices(py, key, &mut many)?;
            &many
        } else {
            single = [one_index(py, key)?];
            &single
        };
        self.derive(py, |t| match idx {
            // The commonest key, one slice: straight to the view.
            &[TensorIndex::Slice { start, stop, step }] if t.dim() > 0 => {
                views::slice(t, 0, start, stop, step)
            }
            _ => {
                tuple_key_check(t, tuple, idx)?;
                indexing::index(t, idx)
            }
        })
    }

    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let mut idx = Key::new();
        indices(py, key, &mut idx)?;
        let tuple = key.cast::<PyTuple>().is_ok();
        // A handle of our own: the object's lock is not held across the op.
        let t = &self.handle(py)?;
        // After the value's conversion, as PyTorch's order of errors.
        let check = || tuple_key_check(t, tuple, &idx).py();
        if let Ok(src) = value.cast::<PyTensor>() {
            let src = src.get().handle(py)?;
            check()?;
            let bytes = short_ops::copy_bytes(t, &src);
            return short_ops::run(py, bytes, || indexing::index_put_tensor(t, &idx, &src));
        }
        if let Ok(c) = value.cast::<pyo3::types::PyComplex>() {
            // c10's complex Scalar: `fill_`'s check refuses a nonzero
            // imaginary part for a real tensor, as PyTorch's.
            let s = Scalar::Complex(c.real(), c.imag());
            check()?;
            let bytes = short_ops::bytes_of(t);
            return short_ops::run(py, bytes, || indexing::index_put_scalar(t, &idx, s));
        }
        // PyTorch's `valueToTensor`: a tensor, a complex (above), an `int`
        // (`bool` and NumPy integers included) or a `float` (NumPy's
        // `float64` is one); anything else, sequences and other NumPy
        // scalars included, is refused.
        if !(value.is_instance_of::<PyInt>()
            || value.is_instance_of::<pyo3::types::PyFloat>()
            || is_numpy_integer(value))
        {
            return Err(PyTypeError::new_err(format!(
                "can't assign a {} to a {}",
                convert::type_tp_name(value)?,
                legacy_type_name(t)
            )));
        }
        // An int past `int64` fails here: PyTorch's ValueError.
        let s = scalar(value)?;
        check()?;
        short_ops::run(py, short_ops::bytes_of(t), || {
            indexing::index_put_scalar(t, &idx, s)
        })
    }
}

impl PyTensor {
    /// `hsplit`/`vsplit`/`dsplit` with an int (sections) or a sequence of
    /// ints (indices).
    fn directional<'py>(
        &self,
        py: Python<'py>,
        arg: &Bound<'py, PyAny>,
        sections: fn(&Tensor, i64) -> c10_core::Result<Vec<Tensor>>,
        indices: fn(&Tensor, &[i64]) -> c10_core::Result<Vec<Tensor>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let parts = if let Some(n) = convert::maybe_int(arg)? {
            self.with(py, |t| sections(t, n))?
        } else {
            let ix = convert::seq_ints(arg, "indices")?;
            self.with(py, |t| indices(t, &ix))?
        };
        self.wrap_all_out(py, parts.py()?)
    }
}

/// `tensor_split` by a tensor: a 0-d `int64` tensor is a number of
/// sections, a 1-d one the indices (PyTorch's checks and messages).
fn split_by_tensor<R>(
    py: Python<'_>,
    ix: &Tensor,
    by_sections: impl FnOnce(i64) -> PyResult<R>,
    by_indices: impl FnOnce(&[i64]) -> PyResult<R>,
) -> PyResult<R> {
    if ix.device().device_type() != c10_core::DeviceType::Cpu {
        return Err(PyRuntimeError::new_err(format!(
            "tensor_split expected tensor_indices_or_sections to be on cpu, but it's on {}",
            ix.device()
        )));
    }
    if ix.dtype() != ScalarType::Long {
        return Err(PyRuntimeError::new_err(format!(
            "tensor_split expected tensor_indices_or_sections to have dtype of long, but got {}",
            ix.dtype().name()
        )));
    }
    match ix.dim() {
        0 => by_sections(convert::item(py, ix)?.to_i64()),
        1 => {
            let v = short_ops::run(py, short_ops::bytes_of(ix), || ix.to_vec::<i64>())?;
            by_indices(&v)
        }
        d => Err(PyRuntimeError::new_err(format!(
            "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, but got a tensor with {d} dims"
        ))),
    }
}

/// `to(device)` across devices: CPU → meta makes a data-less tensor of
/// the same geometry (`preserve_format` keeps dense strides); reading a
/// meta tensor's data is PyTorch's error; CUDA is not available here.
fn to_device(
    py: Python<'_>,
    t: &Tensor,
    d: c10_core::Device,
    st: ScalarType,
    format: MemoryFormat,
) -> PyResult<Tensor> {
    use c10_core::DeviceType;
    convert::refuse_meta_copy(t)?;
    match d.device_type() {
        DeviceType::Meta => {
            let o = c10_core::TensorOptions::new().dtype(st).device(d);
            let r = match format {
                MemoryFormat::Preserve if t.is_non_overlapping_and_dense() => {
                    Tensor::empty_strided(t.sizes(), t.strides(), o)
                }
                MemoryFormat::Preserve => {
                    Tensor::empty(t.sizes(), o.memory_format(t.suggest_memory_format()))
                }
                f => Tensor::empty(t.sizes(), o.memory_format(f)),
            };
            let _ = py;
            r.py()
        }
        DeviceType::Cuda => Err(PyRuntimeError::new_err(
            "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
        )),
        _ => Err(PyNotImplementedError::new_err(format!(
            "to(): copying between devices ({} -> {d}) is not implemented in torchcore's Python layer",
            t.device()
        ))),
    }
}

/// Refuses what PyTorch refuses to set on a tensor (see
/// `PyTensor::__setattr__`): read-only properties of `torch.Tensor`, and
/// writable ones torchcore does not implement. Names the object's class
/// defines (torchcore's own properties, a subclass's) are left to Python.
fn check_settable(obj: &Bound<'_, PyAny>, name: &Bound<'_, PyString>) -> PyResult<()> {
    let n: String = name.extract()?;
    let n = n.as_str();
    if !(TORCH_READ_ONLY.contains(&n) || TORCH_WRITABLE.contains(&n)) {
        return Ok(());
    }
    let cls = obj.get_type();
    let defined = cls
        .getattr("__mro__")?
        .try_iter()?
        .map(|c| c.and_then(|c| c.getattr("__dict__")?.contains(name)))
        .collect::<PyResult<Vec<bool>>>()?
        .into_iter()
        .any(|b| b);
    if defined {
        return Ok(());
    }
    if TORCH_READ_ONLY.contains(&n) {
        return Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "attribute '{n}' of 'torchcore.Tensor' objects is not writable"
        )));
    }
    Err(PyNotImplementedError::new_err(format!(
        "setting Tensor.{n} is not implemented in torchcore"
    )))
}

/// Python's generic attribute assignment (`object.__setattr__`), or
/// deletion when `value` is `None`.
fn generic_setattr(
    obj: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let v = value.map_or(std::ptr::null_mut(), Bound::as_ptr);
    // SAFETY: `obj` and `name` are live objects (GIL held); a null value
    // asks for deletion, as the C API documents.
    let rc = unsafe { ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), v) };
    if rc < 0 {
        return Err(PyErr::fetch(obj.py()));
    }
    Ok(())
}

/// A tensor's text with the class name in place of `tensor(` (PyTorch
/// prints a subclass object as `Sub([1., 2.])`), continuation lines
/// re-indented to the new prefix's width.
fn subclass_repr(text: &str, name: &str) -> String {
    let Some(rest) = text.strip_prefix("tensor(") else {
        return text.to_string();
    };
    let old_indent = "tensor(".len();
    let new_indent = name.len() + 1;
    let mut out = format!("{name}({}", rest.lines().next().unwrap_or(""));
    for line in rest.lines().skip(1) {
        out.push('\n');
        let spaces = line.len() - line.trim_start_matches(' ').len();
        if line.is_empty() || spaces < old_indent {
            out.push_str(line);
        } else {
            out.push_str(&" ".repeat(spaces - old_indent + new_indent));
            out.push_str(&line[spaces..]);
        }
    }
    out
}

/// `torch.tensor(storage)`: a 1-d tensor over the storage's elements
/// (sharing them, as PyTorch does). A typed storage must have `dtype`'s
/// type; an untyped one is read as `dtype` (`int64` when none is given).
fn tensor_from_storage(
    data: &Bound<'_, PyAny>,
    dtype: Option<ScalarType>,
) -> PyResult<Option<Tensor>> {
    let (untyped, typed_dtype) = if data.cast::<PyUntypedStorage>().is_ok() {
        (data.clone(), None)
    } else if data.hasattr("_untyped_storage")? && data.hasattr("dtype")? {
        let d = dtype_arg(Some(&data.getattr("dtype")?))?;
        (data.getattr("_untyped_storage")?, d)
    } else {
        return Ok(None);
    };
    let st = dtype.or(typed_dtype).unwrap_or(ScalarType::Long);
    if let Some(got) = typed_dtype {
        if got != st {
            return Err(PyRuntimeError::new_err(format!(
                "Expected a Storage of type {} or an UntypedStorage, but got {}",
                st.name(),
                got.name()
            )));
        }
    }
    let storage = untyped.cast::<PyUntypedStorage>()?.get().storage.clone();
    let o = c10_core::TensorOptions::new()
        .dtype(st)
        .device(storage.device());
    let mut t = Tensor::empty(&[0], o).py()?;
    views::set_storage(&mut t, &storage).py()?;
    Ok(Some(t))
}

/// The C++ element type's name as PyTorch's `set_` message prints it
/// (the compiler's `typeid` name), for the dtypes it uses.
fn cpp_type_name(st: ScalarType) -> &'static str {
    match st {
        ScalarType::Float => "float",
        ScalarType::Double => "double",
        ScalarType::Half => "c10::Half",
        ScalarType::BFloat16 => "c10::BFloat16",
        ScalarType::Long => "long int",
        ScalarType::Int => "int",
        ScalarType::Short => "short int",
        ScalarType::Char => "signed char",
        ScalarType::Byte => "unsigned char",
        ScalarType::Bool => "bool",
        ScalarType::ComplexFloat => "c10::complex<float>",
        ScalarType::ComplexDouble => "c10::complex<double>",
        ScalarType::UInt16 => "short unsigned int",
        ScalarType::UInt32 => "unsigned int",
        ScalarType::UInt64 => "long unsigned int",
        other => other.name(),
    }
}

/// `torch.Tensor`'s read-only properties (data descriptors without a
/// setter in PyTorch 2.15).
const TORCH_READ_ONLY: &[&str] = &[
    "H",
    "T",
    "__cuda_array_interface__",
    "_base",
    "_cdata",
    "_has_grad_dtype_override",
    "_has_symbolic_sizes_strides",
    "_python_dispatch",
    "_version",
    "device",
    "dtype",
    "grad_fn",
    "is_cpu",
    "is_cuda",
    "is_ipu",
    "is_leaf",
    "is_maia",
    "is_meta",
    "is_mkldnn",
    "is_mps",
    "is_mtia",
    "is_nested",
    "is_quantized",
    "is_sparse",
    "is_sparse_csr",
    "is_vulkan",
    "is_xla",
    "is_xpu",
    "itemsize",
    "layout",
    "mH",
    "mT",
    "name",
    "nbytes",
    "ndim",
    "output_nr",
    "retains_grad",
    "shape",
];

/// `torch.Tensor`'s writable properties.
const TORCH_WRITABLE: &[&str] = &[
    "_backward_hooks",
    "_grad",
    "_grad_fn",
    "_post_accumulate_grad_hooks",
    "data",
    "grad",
    "grad_dtype",
    "imag",
    "real",
    "requires_grad",
    "volatile",
];

/// The Python class-free part of `Tensor(...)` (PyTorch's legacy
/// constructor): `()` an empty float32 tensor, ints (or one `Size`) the
/// sizes of an uninitialised one, anything else data for `tensor()`, as
/// float32.
/// What a legacy constructor makes (PyTorch's `legacy_tensor_ctor` /
/// `legacy_tensor_new`): its dtype, the device type it insists on, and
/// whether a tensor argument must already have that dtype (`FloatTensor(t)`,
/// `t.new(u)`) or may have any (`torch.Tensor(t)`).
pub(crate) struct Legacy {
    pub(crate) dtype: ScalarType,
    pub(crate) device: c10_core::Device,
    pub(crate) strict: bool,
}

/// The legacy constructors: `Tensor()`, `Tensor(*sizes)`, `Tensor(size=)`,
/// `Tensor(torch.Size)`, `Tensor(sequence)`, `Tensor(storage)` and
/// `Tensor(tensor)` (an alias: a view of it), with PyTorch's checks.
pub(crate) fn legacy_new(
    how: &Legacy,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Tensor> {
    let (device, size_kw) = legacy_kwargs(args, kwargs)?;
    if let Some(d) = device {
        if d.device_type() != how.device.device_type() {
            return Err(PyRuntimeError::new_err(format!(
                "legacy constructor expects device type: {} but device type: {} was passed",
                how.device.device_type(),
                d.device_type()
            )));
        }
    }
    let device = device.unwrap_or(how.device);
    let o = c10_core::TensorOptions::new()
        .dtype(how.dtype)
        .device(device);
    if let Some(sz) = size_kw {
        return Tensor::empty(&convert::seq_ints(&sz, "size")?, o).py();
    }
    let Some(first) = args.iter().next() else {
        return Tensor::empty(&[0], o).py();
    };
    if args.len() == 1 {
        return legacy_one(how, &first, o, device);
    }
    for (i, a) in args.iter().enumerate() {
        if convert::maybe_int(&a)?.is_none() || a.cast::<PyTensor>().is_ok() {
            return Err(PyTypeError::new_err(if i == 0 {
                invalid_combination(args, None)?
            } else {
                format!(
                    "new(): argument 'size' failed to unpack the object at pos {} with error \"type must be tuple of ints,but got {}\"",
                    i + 1,
                    a.get_type().name()?
                )
            }));
        }
    }
    Tensor::empty(&int_list(args, "new(): argument 'size'")?, o).py()
}

/// The keyword arguments a legacy constructor takes: `device` and `size`
/// (the latter only without positional arguments).
fn legacy_kwargs<'py>(
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<(Option<c10_core::Device>, Option<Bound<'py, PyAny>>)> {
    let Some(k) = kwargs else {
        return Ok((None, None));
    };
    let mut device = None;
    let mut size = None;
    for (key, v) in k.iter() {
        match key.extract::<String>()?.as_str() {
            "device" => device = device_arg(Some(&v))?,
            "size" if args.is_empty() => size = Some(v),
            _ => return Err(PyTypeError::new_err(invalid_combination(args, Some(k))?)),
        }
    }
    Ok((device, size))
}

/// The argument of `view(dtype=...)` or `view(size=...)` (one keyword,
/// no positional argument; a dtype, or a size tuple or list), as a
/// one-element tuple; anything else is PyTorch's invalid-combination error
/// (`view(2, 3, dtype=None)` included).
fn view_keyword<'py>(
    shape: &Bound<'py, PyTuple>,
    kw: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyTuple>> {
    if shape.is_empty() && kw.len() == 1 {
        if let Some((k, v)) = kw.iter().next() {
            let fits = match k.extract::<String>().as_deref() {
                Ok("dtype") => v.cast::<PyDtype>().is_ok(),
                Ok("size") => v.cast::<PyTuple>().is_ok() || v.cast::<PyList>().is_ok(),
                _ => false,
            };
            if fits {
                return PyTuple::new(shape.py(), [v]);
            }
        }
    }
    Err(view_invalid_combination(shape, Some(kw)))
}

/// PyTorch's `TypeError` for `view(...)` arguments matching neither
/// overload (`view(True, 6)`, `view(2.0)`, `view()`).
fn view_invalid_combination(
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyErr {
    let type_name = |v: &Bound<'_, PyAny>| {
        if v.cast::<PyDtype>().is_ok() {
            "torch.dtype".to_string()
        } else {
            convert::tp_name(v)
        }
    };
    let mut got: Vec<String> = args.iter().map(|a| type_name(&a)).collect();
    // (PyTorch lists the keywords last first.)
    let mut keywords: Vec<String> = kwargs
        .into_iter()
        .flat_map(|k| k.iter())
        .map(|(k, v)| format!("{k}={}", type_name(&v)))
        .collect();
    keywords.reverse();
    got.extend(keywords);
    if args.is_empty() && !got.is_empty() {
        // PyTorch's quirk: keywords alone are listed with a trailing ", ".
        got.push(String::new());
    }
    PyTypeError::new_err(format!(
        "view() received an invalid combination of arguments - got ({}), but expected one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n",
        got.join(", ")
    ))
}

/// PyTorch's "invalid combination of arguments" message (its first line).
fn invalid_combination(
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    let mut got: Vec<String> = Vec::new();
    for a in args.iter() {
        got.push(a.get_type().name()?.to_string());
    }
    if let Some(k) = kwargs {
        for (key, v) in k.iter() {
            let ty = if v.get_type().name()?.to_cow()? == "dtype" {
                "torch.dtype".to_string()
            } else {
                v.get_type().name()?.to_string()
            };
            got.push(format!("{}={ty}", key.str()?));
        }
    }
    Ok(format!(
        "new() received an invalid combination of arguments - got ({}), but expected one of:\n * (*, torch.device device = None)\n * (torch.Storage storage)\n * (Tensor other)\n * (tuple of ints size, *, torch.device device = None)\n * (object data, *, torch.device device = None)",
        got.join(", ")
    ))
}

/// A legacy constructor's single positional argument.
fn legacy_one(
    how: &Legacy,
    a: &Bound<'_, PyAny>,
    o: c10_core::TensorOptions,
    device: c10_core::Device,
) -> PyResult<Tensor> {
    if let Ok(src) = a.cast::<PyTensor>() {
        let t = src.get().handle(a.py())?;
        if how.strict && t.dtype() != how.dtype {
            return Err(PyTypeError::new_err(format!(
                "expected TensorOptions(dtype={}, device={}, layout=Strided, requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)) (got TensorOptions(dtype={}, device={}, layout=Strided, requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))",
                cpp_type_name(how.dtype),
                how.device,
                cpp_type_name(t.dtype()),
                t.device()
            )));
        }
        // PyTorch's `alias()`: a view of the argument.
        return views::alias(&t).py();
    }
    let is_storage = a.cast::<PyUntypedStorage>().is_ok()
        || (a.hasattr("_untyped_storage")? && a.hasattr("dtype")?);
    if is_storage {
        if a.cast::<PyUntypedStorage>().is_err() {
            let got = dtype_arg(Some(&a.getattr("dtype")?))?;
            if got != Some(how.dtype) {
                return Err(PyRuntimeError::new_err(format!(
                    "Expected a Storage of type {} or an UntypedStorage, but got type {} for argument 1 'storage'",
                    how.dtype.name(),
                    got.map(ScalarType::name).unwrap_or("unknown")
                )));
            }
        }
        return tensor_from_storage(a, Some(how.dtype))?
            .ok_or_else(|| PyTypeError::new_err("new(): expected a storage"));
    }
    if a.get_type().name()?.to_cow()? == "Size" {
        return Tensor::empty(&convert::seq_ints(a, "size")?, o).py();
    }
    if let Some(n) = convert::maybe_int(a)? {
        return Tensor::empty(&[n], o).py();
    }
    if a.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("new(): invalid data type 'str'"));
    }
    if a.hasattr("__array_interface__")? && a.hasattr("tolist")? {
        // A NumPy array: its values, converted to the legacy dtype.
        return convert::tensor_from_data(&a.call_method0("tolist")?, Some(how.dtype));
    }
    if a.try_iter().is_err() && !a.hasattr("__array_interface__")? {
        return Err(PyTypeError::new_err(format!(
            "new(): data must be a sequence (got {})",
            a.get_type().name()?
        )));
    }
    let t = convert::tensor_from_data(a, Some(how.dtype))?;
    if t.device() == device {
        return Ok(t);
    }
    let out = Tensor::empty(t.sizes(), o).py()?;
    copy_api::copy_(&out, &t).py()?;
    Ok(out)
}

#[pymethods]
impl PyTensor {
    /// `t.new(...)`: PyTorch's legacy constructor with this tensor's dtype
    /// and device (sizes, data, a storage, or a tensor of the same dtype,
    /// which it aliases); the result has this object's class.
    #[pyo3(name = "new", signature = (*args, **kwargs))]
    fn legacy_new_method<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let me = self.handle(py)?;
        let how = Legacy {
            dtype: me.dtype(),
            device: me.device(),
            strict: true,
        };
        let r = legacy_new(&how, args, kwargs)?;
        self.wrap_out(py, r)
    }
}

/// `torchcore._C._legacy_new(dtype, args, kwargs)`: the typed legacy
/// constructors (`torchcore.FloatTensor(...)` and friends; CPU only).
#[pyfunction]
#[pyo3(name = "_legacy_new", signature = (dtype, args, kwargs = None))]
fn legacy_new_py<'py>(
    dtype: &Bound<'py, PyAny>,
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyTensor>> {
    let how = Legacy {
        dtype: dtype_arg(Some(dtype))?.unwrap_or(ScalarType::Float),
        device: c10_core::Device::CPU,
        strict: true,
    };
    let r = legacy_new(&how, args, kwargs)?;
    wrap(dtype.py(), r)
}

/// `self` converted to `st` (`self` itself when it already has that dtype).
fn convert_dtype<'py>(slf: &Bound<'py, PyTensor>, st: ScalarType) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let t = &slf.get().handle(py)?;
    if t.dtype() == st {
        return Ok(slf.clone().into_any());
    }
    let bytes = short_ops::bytes(t.numel(), t.element_size().max(st.itemsize()));
    let r = short_ops::run(py, bytes, || copy_api::to_dtype(t, st))?;
    Ok(slf.get().wrap_out(py, r)?.into_any())
}

/// A tensor argument: a `Tensor`, or data `tensor()` accepts.
pub(crate) fn as_tensor(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return t.get().handle(obj.py());
    }
    convert::tensor_from_data(obj, None)
}

/// `torchcore._testing.Holder`: a Rust-side container of tensor handles
/// (what a C++ structure holding `at::Tensor`s is in PyTorch), for tests.
///
/// Frozen, with its own lock: the lock is only held to read or swap the
/// list, never while Python code runs or handles are dropped (dropping a
/// handle may free a Python object and run its callbacks), so waiting for
/// it with the GIL held cannot deadlock.
#[pyclass(name = "Holder", module = "torchcore._testing", frozen)]
#[derive(Default)]
pub struct PyHolder {
    items: Mutex<Vec<Tensor>>,
}

impl PyHolder {
    /// The list, locked. A poisoned lock (a panic while it was held; none
    /// is expected) still holds a valid list.
    fn items(&self) -> MutexGuard<'_, Vec<Tensor>> {
        self.items
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A copy of the `i`-th handle.
    fn item(&self, i: usize) -> PyResult<Tensor> {
        match self.items().get(i) {
            Some(t) => Ok(t.clone()),
            None => Err(PyIndexError::new_err("Holder index out of range")),
        }
    }
}

#[pymethods]
impl PyHolder {
    #[new]
    #[pyo3(signature = (*tensors))]
    fn new(tensors: &Bound<'_, PyTuple>) -> PyResult<PyHolder> {
        let mut items = Vec::with_capacity(tensors.len());
        for t in tensors.iter() {
            items.push(t.cast::<PyTensor>()?.get().handle(t.py())?);
        }
        Ok(PyHolder {
            items: Mutex::new(items),
        })
    }
    /// Keeps a handle to `t`'s `TensorImpl` (replacing any held ones).
    fn set(&self, t: &Bound<'_, PyTensor>) -> PyResult<()> {
        let h = t.get().handle(t.py())?;
        let old = std::mem::replace(&mut *self.items(), vec![h]);
        drop(old);
        Ok(())
    }
    /// Adds a handle.
    fn append(&self, t: &Bound<'_, PyTensor>) -> PyResult<()> {
        let h = t.get().handle(t.py())?;
        self.items().push(h);
        Ok(())
    }
    /// Hands the `i`-th held `TensorImpl` back to Python.
    #[pyo3(signature = (i = 0))]
    fn get<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyTensor>> {
        wrap(py, self.item(i)?)
    }
    /// The sizes the Rust handle itself sees.
    #[pyo3(signature = (i = 0))]
    fn rust_sizes(&self, i: usize) -> PyResult<Vec<i64>> {
        Ok(self.item(i)?.sizes().to_vec())
    }
    /// The handle count of the `i`-th held `TensorImpl`.
    #[pyo3(signature = (i = 0))]
    fn use_count(&self, i: usize) -> PyResult<usize> {
        match self.items().get(i) {
            Some(t) => Ok(t.use_count()),
            None => Err(PyIndexError::new_err("Holder index out of range")),
        }
    }
    /// Drops every handle (on this thread, with the GIL held).
    fn clear(&self) {
        let items = std::mem::take(&mut *self.items());
        drop(items);
    }
    /// Drops every handle on another thread, without the GIL (the 2 → 1
    /// edge then takes the GIL from that thread).
    fn clear_on_thread(&self, py: Python<'_>) -> PyResult<()> {
        let items = std::mem::take(&mut *self.items());
        py.detach(move || {
            std::thread::spawn(move || drop(items))
                .join()
                .map_err(|_| PyRuntimeError::new_err("thread panicked"))
        })
    }
    /// Clones and drops the held handles from `n` threads, `k` times each,
    /// without the GIL.
    fn hammer(&self, py: Python<'_>, n: usize, k: usize) -> PyResult<()> {
        let items = self.items().clone();
        py.detach(move || {
            let hs: Vec<_> = (0..n)
                .map(|_| {
                    let mine = items.clone();
                    std::thread::spawn(move || {
                        for _ in 0..k {
                            let c = mine.clone();
                            drop(c);
                        }
                    })
                })
                .collect();
            for h in hs {
                h.join()
                    .map_err(|_| PyRuntimeError::new_err("thread panicked"))?;
            }
            Ok(())
        })
    }
    fn __len__(&self) -> usize {
        self.items().len()
    }
}

// ---- factories -----------------------------------------------------------

/// Whether `obj` is a NumPy array (NumPy already imported: an array
/// cannot exist otherwise).
fn is_ndarray(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = obj.py();
    let modules = py.import("sys")?.getattr("modules")?;
    match modules.get_item("numpy") {
        Ok(np) => obj.is_instance(&np.getattr("ndarray")?),
        Err(_) => Ok(false),
    }
}

/// `torchcore.tensor(data, dtype=None, device=None, requires_grad=False)`.
#[pyfunction]
#[pyo3(signature = (data, *, dtype = None, device = None, requires_grad = false))]
fn tensor<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    device: Option<&Bound<'py, PyAny>>,
    requires_grad: bool,
) -> PyResult<Bound<'py, PyTensor>> {
    let _ = device_arg(device)?;
    let st = dtype_arg(dtype)?;
    if let Some(t) = tensor_from_storage(data, st)? {
        let id = t.storage().id();
        let obj = wrap(py, t)?;
        // The tensor keeps the storage object it was built from.
        let src = if data.cast::<PyUntypedStorage>().is_ok() {
            data.clone()
        } else {
            data.getattr("_untyped_storage")?
        };
        obj.get().keep_storage_object(py, id, Some(src.unbind()));
        return Ok(obj);
    }
    let mut t = if let Ok(src) = data.cast::<PyTensor>() {
        let s = src.get().handle(py)?;
        short_ops::run(py, short_ops::bytes_of(&s), || {
            copy_api::clone(&s, MemoryFormat::Contiguous)
        })?
    } else if is_ndarray(data)? {
        // PyTorch's NumPy path: the array's dtype, `from_numpy`'s
        // refusals, then a copy.
        let s = crate::numpy_interop::from_numpy(py, data)?
            .get()
            .handle(py)?;
        short_ops::run(py, short_ops::bytes_of(&s), || {
            copy_api::clone(&s, MemoryFormat::Contiguous)
        })?
    } else {
        convert::tensor_from_data(data, st)?
    };
    if let Some(st) = st {
        if t.dtype() != st {
            let src = t;
            let bytes = short_ops::bytes(src.numel(), src.element_size().max(st.itemsize()));
            t = short_ops::run(py, bytes, || copy_api::to_dtype(&src, st))?;
        }
    }
    if requires_grad {
        t.set_requires_grad(true).py()?;
    }
    wrap(py, t)
}

/// A factory's `layout=` argument: `None` or `torchcore.strided` (the only
/// layout here), else PyTorch's `TypeError`.
fn check_layout(layout: &Bound<'_, PyAny>, name: &str) -> PyResult<()> {
    let py = layout.py();
    if layout.is_none() {
        return Ok(());
    }
    if layout.is(strided(py)?.bind(py)) {
        return Ok(());
    }
    Err(PyTypeError::new_err(format!(
        "{name}(): argument 'layout' must be torch.layout, not {}",
        convert::tp_name(layout)
    )))
}

macro_rules! sized_factory {
    ($name:ident, $doc:literal, |$sizes:ident, $o:ident| $body:expr) => {
        #[doc = $doc]
        #[pyfunction]
        #[pyo3(signature = (*size, dtype = None, device = None, requires_grad = false, memory_format = None, pin_memory = false, layout = None))]
        #[allow(clippy::too_many_arguments)]
        fn $name<'py>(
            py: Python<'py>,
            size: &Bound<'py, PyTuple>,
            dtype: Option<&Bound<'py, PyAny>>,
            device: Option<&Bound<'py, PyAny>>,
            requires_grad: bool,
            memory_format: Option<&Bound<'py, PyAny>>,
            pin_memory: bool,
            layout: Option<&Bound<'py, PyAny>>,
        ) -> PyResult<Bound<'py, PyTensor>> {
            let _ = pin_memory;
            if let Some(l) = layout {
                check_layout(l, stringify!($name))?;
            }
            let $sizes = dims_of(size, concat!(stringify!($name), "(): argument 'size'"))?;
            let mut $o = options(dtype, device, requires_grad)?;
            if memory_format.is_some() {
                $o = $o.memory_format(format_arg(memory_format, MemoryFormat::Contiguous)?);
            }
            wrap(py, $body.py()?)
        }
    };
}

sized_factory!(
    empty,
    "`torchcore.empty(*size, dtype=None, ...)`.",
    |s, o| { Tensor::empty(&*s, o) }
);
sized_factory!(
    zeros,
    "`torchcore.zeros(*size, dtype=None, ...)`.",
    |s, o| { Tensor::zeros(&*s, o) }
);
sized_factory!(ones, "`torchcore.ones(*size, dtype=None, ...)`.", |s, o| {
    Tensor::ones(&*s, o)
});

/// `torchcore.full(size, fill_value, dtype=None, ...)`.
#[pyfunction]
#[pyo3(signature = (size, fill_value, *, dtype = None, device = None, requires_grad = false))]
fn full<'py>(
    py: Python<'py>,
    size: &Bound<'py, PyAny>,
    fill_value: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    device: Option<&Bound<'py, PyAny>>,
    requires_grad: bool,
) -> PyResult<Bound<'py, PyTensor>> {
    convert::size_arg_check(size, "full(): argument 'size'", 1)?;
    let n = fill_number(fill_value, "full", dtype_arg(dtype).ok().flatten())?;
    let sizes = convert::size_arg(size, "full(): argument 'size'", 1)?;
    // An int past `int64` fills a float tensor, and is PyTorch's overflow
    // error for the `int64` tensor an int fill value makes by default.
    let v = convert::resolve_number(n, dtype_arg(dtype)?.unwrap_or(ScalarType::Long))?;
    let o = options(dtype, device, requires_grad)?;
    wrap(py, Tensor::full(&sizes, v, o).py()?)
}

/// `torchcore.empty_strided(size, stride, dtype=None, ...)`.
#[pyfunction]
#[pyo3(signature = (size, stride, *, dtype = None, device = None, requires_grad = false))]
fn empty_strided<'py>(
    py: Python<'py>,
    size: &Bound<'py, PyAny>,
    stride: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    device: Option<&Bound<'py, PyAny>>,
    requires_grad: bool,
) -> PyResult<Bound<'py, PyTensor>> {
    let sizes = seq_dims(size, "empty_strided(): argument 'size'")?;
    let strides = seq_dims(stride, "empty_strided(): argument 'stride'")?;
    let o = options(dtype, device, requires_grad)?;
    wrap(py, Tensor::empty_strided(&*sizes, &*strides, o).py()?)
}

/// `torchcore.arange(end)`, `arange(start, end, step=1)`.
#[pyfunction]
#[pyo3(signature = (start, end = None, step = None, *, dtype = None, device = None, requires_grad = false))]
fn arange<'py>(
    py: Python<'py>,
    start: &Bound<'py, PyAny>,
    end: Option<&Bound<'py, PyAny>>,
    step: Option<&Bound<'py, PyAny>>,
    dtype: Option<&Bound<'py, PyAny>>,
    device: Option<&Bound<'py, PyAny>>,
    requires_grad: bool,
) -> PyResult<Bound<'py, PyTensor>> {
    use convert::Number;
    let (s, e) = match end {
        Some(e) => (convert::number(start)?, convert::number(e)?),
        None => (Number::Scalar(Scalar::Int(0)), convert::number(start)?),
    };
    let st = match step {
        Some(k) => convert::number(k)?,
        None => Number::Scalar(Scalar::Int(1)),
    };
    // The dtype PyTorch computes in (ints past `int64` are its overflow
    // error unless the result is floating).
    let any_float = [&s, &e, &st]
        .iter()
        .any(|n| matches!(n, Number::Scalar(Scalar::Float(_))));
    let target = dtype_arg(dtype)?.unwrap_or(if any_float {
        ScalarType::Float
    } else {
        ScalarType::Long
    });
    let s = convert::resolve_number(s, target)?;
    let e = convert::resolve_number(e, target)?;
    let st = convert::resolve_number(st, target)?;
    let o = options(dtype, device, requires_grad)?;
    wrap(py, Tensor::arange(s, e, st, o).py()?)
}

/// `torchcore.linspace(start, end, steps, dtype=None, ...)`.
#[pyfunction]
#[pyo3(signature = (start, end, steps, *, dtype = None, device = None, requires_grad = false))]
fn linspace<'py>(
    py: Python<'py>,
    start: &Bound<'py, PyAny>,
    end: &Bound<'py, PyAny>,
    steps: I64,
    dtype: Option<&Bound<'py, PyAny>>,
    device: Option<&Bound<'py, PyAny>>,
    requires_grad: bool,
) -> PyResult<Bound<'py, PyTensor>> {
    let steps = steps.0;
    let target = dtype_arg(dtype)?.unwrap_or(ScalarType::Float);
    let start = convert::resolve_number(convert::number(start)?, target)?;
    let end = convert::resolve_number(convert::number(end)?, target)?;
    let o = options(dtype, device, requires_grad)?;
    wrap(py, Tensor::linspace(start, end, steps, o).py()?)
}

/// `torchcore.eye(n, m=None, dtype=None, ...)`.
#[pyfunction]
#[pyo3(signature = (n, m = None, *, dtype = None, device = None, requires_grad = false))]
fn eye<'py>(
    py: Python<'py>,
    n: I64,
    m: Option<I64>,
    dtype: Option<&Bound<'py, PyAny>>,
    device: Option<&Bound<'py, PyAny>>,
    requires_grad: bool,
) -> PyResult<Bound<'py, PyTensor>> {
    let n = n.0;
    let m = m.map(|v| v.0);
    let o = options(dtype, device, requires_grad)?;
    wrap(py, Tensor::eye(n, m, o).py()?)
}

/// `torchcore._C._atleast(t, n)`: `atleast_1d/2d/3d` of one tensor (`n` =
/// 1, 2, 3); the tensor itself when it has `n` dims or more.
#[pyfunction]
fn _atleast<'py>(
    py: Python<'py>,
    t: &Bound<'py, PyTensor>,
    n: u8,
) -> PyResult<Bound<'py, PyTensor>> {
    let f = match n {
        1 => views::atleast_1d,
        2 => views::atleast_2d,
        _ => views::atleast_3d,
    };
    let r = t.get().with(py, f)?.py()?;
    t.get().wrap_out(py, r)
}

/// `torchcore.broadcast_tensors(*tensors)`: every tensor expanded to the
/// common broadcast shape (views; a tensor of that shape is returned
/// itself).
#[pyfunction]
#[pyo3(signature = (*tensors))]
fn broadcast_tensors<'py>(
    py: Python<'py>,
    tensors: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyTuple>> {
    let objs = tensors
        .iter()
        .map(|o| o.cast_into::<PyTensor>().map_err(PyErr::from))
        .collect::<PyResult<Vec<_>>>()?;
    let handles = objs
        .iter()
        .map(|o| o.get().handle(py))
        .collect::<PyResult<Vec<_>>>()?;
    let out = views::broadcast_tensors(&handles).py()?;
    let wrapped = out
        .into_iter()
        .zip(&objs)
        .map(|(t, o)| o.get().wrap_out(py, t))
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, wrapped)
}

/// `torchcore._C._broadcast_shapes(shapes)`: the common shape of a list of
/// int lists, with PyTorch's errors (a negative size is its `ValueError`).
#[pyfunction]
fn _broadcast_shapes(shapes: Vec<Vec<i64>>) -> PyResult<Vec<i64>> {
    let refs: Vec<&[i64]> = shapes.iter().map(Vec::as_slice).collect();
    views::broadcast_shapes(&refs).map_err(|e| {
        match e.shape_error().map(c10_core::ShapeError::kind) {
            Some(c10_core::ShapeErrorKind::BroadcastNegative) => {
                pyo3::exceptions::PyValueError::new_err(e.to_string())
            }
            _ => convert::to_py_err(e),
        }
    })
}

/// `torchcore._C._empty_like(t, memory_format, dtype, device)`: ATen's
/// `empty_like` (`preserve_format` keeps a dense tensor's strides, infers
/// dense strides in the same dim order otherwise), with another dtype or
/// device if given (same strides). The `*_like` functions fill it.
#[pyfunction]
#[pyo3(signature = (t, memory_format = None, dtype = None, device = None))]
fn _empty_like<'py>(
    py: Python<'py>,
    t: &Bound<'py, PyTensor>,
    memory_format: Option<&Bound<'py, PyAny>>,
    dtype: Option<&Bound<'py, PyAny>>,
    device: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTensor>> {
    let f = format_arg(memory_format, MemoryFormat::Preserve)?;
    let st = dtype_arg(dtype)?;
    let dev = device_arg(device)?;
    let src = t.get().handle(py)?;
    let r = py
        .detach(|| {
            let meta = c10_core::TensorOptions::new()
                .dtype(src.dtype())
                .device(c10_core::Device::META);
            // The geometry first, computed on a data-less copy of `src`'s
            // layout (no allocation), then the real tensor.
            let shape_src = Tensor::empty_strided(src.sizes(), src.strides(), meta)?;
            let g = copy_api::empty_like(&shape_src, f)?;
            let o = c10_core::TensorOptions::new()
                .dtype(st.unwrap_or(src.dtype()))
                .device(dev.unwrap_or(src.device()));
            Tensor::empty_strided(g.sizes(), g.strides(), o)
        })
        .py()?;
    t.get().wrap_out(py, r)
}

/// Whether new `torchcore.Tensor` objects come straight from `tp_alloc`
/// (see `object_alloc`): exposed for `_testing`.
#[pyfunction]
fn _fast_alloc() -> bool {
    TensorAlloc::fast_path_enabled()
}

/// Whether `tolist()` fills its lists through their item arrays (see
/// `elements::ListItems`): exposed for `_testing`.
#[pyfunction]
fn _direct_list_items(py: Python<'_>) -> bool {
    crate::elements::ListItems::direct(py)
}

/// Wraps a handle: exposed for `_testing` (returns the preserved object).
#[pyfunction]
fn _same_impl(py: Python<'_>, a: &Bound<'_, PyTensor>, b: &Bound<'_, PyTensor>) -> PyResult<bool> {
    // One lock at a time (`a` and `b` may be the same object).
    let b = b.get().handle(py)?;
    a.get().with(py, |a| a.is_same(&b))
}

/// Registers the classes, dtypes and factories in `m`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyTensor>()?;
    m.add_class::<PyDtype>()?;
    m.add_class::<PyDevice>()?;
    m.add_class::<PyMemoryFormat>()?;
    m.add_class::<TensorCarrier>()?;
    m.add_class::<PyHolder>()?;
    TensorAlloc::init(py)?;
    for f in [
        wrap_pyfunction!(tensor, m)?,
        wrap_pyfunction!(legacy_new_py, m)?,
        wrap_pyfunction!(empty, m)?,
        wrap_pyfunction!(zeros, m)?,
        wrap_pyfunction!(ones, m)?,
        wrap_pyfunction!(full, m)?,
        wrap_pyfunction!(empty_strided, m)?,
        wrap_pyfunction!(arange, m)?,
        wrap_pyfunction!(linspace, m)?,
        wrap_pyfunction!(eye, m)?,
        wrap_pyfunction!(_same_impl, m)?,
        wrap_pyfunction!(_fast_alloc, m)?,
        wrap_pyfunction!(_direct_list_items, m)?,
        wrap_pyfunction!(_atleast, m)?,
        wrap_pyfunction!(_empty_like, m)?,
        wrap_pyfunction!(broadcast_tensors, m)?,
        wrap_pyfunction!(_broadcast_shapes, m)?,
    ] {
        m.add_function(f)?;
    }
    // dtypes under PyTorch's names and aliases (c10-core's one table).
    for (name, st) in ScalarType::python_names() {
        m.add(name, crate::convert::dtype_object(m.py(), st)?)?;
    }
    for (name, f) in [
        ("contiguous_format", MemoryFormat::Contiguous),
        ("preserve_format", MemoryFormat::Preserve),
        ("channels_last", MemoryFormat::ChannelsLast),
        ("channels_last_3d", MemoryFormat::ChannelsLast3d),
    ] {
        m.add(name, memory_format_const(f))?;
    }
    let _ = py;
    Ok(())
}

/// `requires_grad_`'s argument: a Python `bool` and nothing else, not even
/// `None` (an `Option` parameter could not tell an explicit `None` from a
/// missing argument), with PyTorch's parser `TypeError`.
struct GradFlag(bool);

impl<'py> FromPyObject<'_, 'py> for GradFlag {
    type Error = PyErr;
    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<GradFlag> {
        obj.cast::<PyBool>()
            .map(|b| GradFlag(b.is_true()))
            .map_err(|_| {
                PyTypeError::new_err(format!(
                    "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not {}",
                    convert::tp_name(&obj)
                ))
            })
    }
}
