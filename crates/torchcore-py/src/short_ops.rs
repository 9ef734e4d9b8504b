//! Short copies and fills with the GIL held.
//!
//! An operation that locks a storage (a copy, a fill, a reshape that
//! copies) normally runs with the GIL released: the thread holding that
//! storage's lock may be waiting for the GIL itself (a binding edge, which
//! takes or drops a Python reference), so waiting for the lock with the GIL
//! held could deadlock. But releasing and retaking the GIL costs about 700
//! instructions and a hand-off of the GIL's mutex, which is most of a small
//! `clone()`.
//!
//! So a short operation (at most [`GIL_HELD_MAX_BYTES`] bytes) first runs
//! with the GIL held, in c10-storage's no-wait mode
//! ([`c10_storage::without_waiting`]): a storage lock that another thread
//! holds makes it fail with `WouldBlock` instead of waiting, and it then
//! runs again with the GIL released, where it waits as usual. A failed
//! attempt has written nothing (every operation takes the locks it writes
//! under before it writes), so the retry is the whole effect. Longer
//! operations release the GIL from the start, as PyTorch's bindings do,
//! so that other Python threads run meanwhile.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use c10_core::{Tensor, TensorError};
use c10_storage::StorageError;
use pyo3::prelude::*;

use crate::convert::OrPy;
use crate::tensor::PyTensor;

/// How many short operations found a lock held and ran again with the GIL
/// released (for `_testing`).
static RETRIES: AtomicUsize = AtomicUsize::new(0);

/// Bytes up to which an operation runs with the GIL held (if no lock is
/// contended): 64 KiB, about 2–3 µs of copying on one core, against the
/// GIL's 5 ms switch interval; above it the release is under 10% of the
/// operation.
pub(crate) const GIL_HELD_MAX_BYTES: u64 = 64 * 1024;

/// The bytes of `numel` elements of `widest` bytes each (0 for a
/// symbolic count, whose tensors have no data to copy).
pub(crate) fn bytes(numel: i64, widest: usize) -> u64 {
    u64::try_from(numel)
        .unwrap_or(0)
        .saturating_mul(widest as u64)
}

/// The bytes that writing every element of `t` touches.
pub(crate) fn bytes_of(t: &Tensor) -> u64 {
    bytes(t.numel(), t.element_size())
}

/// The bytes a copy from `src` into `dst` touches on its wider side
/// (`dst`'s element count, since `src` broadcasts to it, times the larger
/// element size).
pub(crate) fn copy_bytes(dst: &Tensor, src: &Tensor) -> u64 {
    bytes(dst.numel(), dst.element_size().max(src.element_size()))
}

/// Runs `op`, which touches about `bytes` bytes: with the GIL held and
/// without waiting for storage locks when it is short, else (or when a
/// lock was held by another thread) with the GIL released. `op` must be
/// plain Rust that may be run twice (it runs again only after failing to
/// lock, before writing anything).
pub(crate) fn run<R: Send>(
    py: Python<'_>,
    bytes: u64,
    op: impl Fn() -> c10_core::Result<R> + Send + Sync,
) -> PyResult<R> {
    if bytes <= GIL_HELD_MAX_BYTES {
        match c10_storage::without_waiting(&op) {
            Err(TensorError::Storage(StorageError::WouldBlock { .. })) => {
                RETRIES.fetch_add(1, Ordering::Relaxed);
            }
            done => return done.py(),
        }
    }
    py.detach(op).py()
}

/// `torchcore._testing._short_op_retries()`: how many short operations so
/// far found a storage lock held by another thread and ran again with the
/// GIL released.
#[pyfunction]
fn _short_op_retries() -> usize {
    RETRIES.load(Ordering::Relaxed)
}

/// `torchcore._testing._hold_storage_lock(t, write, seconds, on_locked=None)`:
/// with the GIL released, locks `t`'s storage (for writing, or reading);
/// then calls `on_locked()` (taking the GIL for it), keeps the lock
/// `seconds`, and, still holding it, waits for the GIL once more to run a
/// little Python (what a binding edge does while a lock is held) before
/// letting go. Tests call it on another thread: a thread that waited for
/// this lock with the GIL held would never get it.
#[pyfunction]
#[pyo3(signature = (t, write, seconds, on_locked = None))]
fn _hold_storage_lock(
    py: Python<'_>,
    t: &Bound<'_, PyTensor>,
    write: bool,
    seconds: f64,
    on_locked: Option<Py<PyAny>>,
) -> PyResult<()> {
    let t = t.get().handle(py)?;
    let pause = Duration::try_from_secs_f64(seconds)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    py.detach(|| -> PyResult<()> {
        let storage = t.storage();
        let hold = || -> PyResult<()> {
            if let Some(f) = &on_locked {
                Python::attach(|py| f.call0(py).map(drop))?;
            }
            std::thread::sleep(pause);
            Python::attach(|py| py.run(c"_ = [0] * 10", None, None))
        };
        if write {
            let _g = storage.write().map_err(TensorError::from).py()?;
            hold()
        } else {
            let _g = storage.read().map_err(TensorError::from).py()?;
            hold()
        }
    })
}

/// Adds the `_testing` hooks to `torchcore._C`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_short_op_retries, m)?)?;
    m.add_function(wrap_pyfunction!(_hold_storage_lock, m)?)?;
    Ok(())
}
