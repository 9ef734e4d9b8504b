//! Memory history and snapshots for `torchcore.memory`
//! (`_record_memory_history`, `_snapshot`, `_dump_snapshot`): thin
//! bindings over the allocators' recorders and torchcore-memviz. The
//! argument checking and PyTorch's signatures live in
//! `python/torchcore/memory.py`; these functions take the decoded
//! settings.
//!
//! Devices: `"cpu"` is the process-wide default CPU allocator (the one
//! torchcore's CPU tensors use); `"cuda"` is the CUDA caching allocator of
//! every device, with the `cuda` feature (built without it, `"cuda"` is a
//! `RuntimeError`).

use c10_storage::history::HistoryConfig;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use torchcore_memviz::{cpu_snapshot, from_pickle, render_html, to_pickle, HtmlOptions, Value};

fn config(trace: bool, stacks: bool, stacks_on_free: bool, max_entries: usize) -> HistoryConfig {
    HistoryConfig {
        trace,
        // `enabled="state"` keeps one entry, as PyTorch does.
        max_entries: if trace { max_entries.max(1) } else { 1 },
        stacks,
        stacks_on_free,
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::*;
    use alloc_cuda::cuda::{init, DeviceAllocator};

    /// The caching allocators of every device (creating them: this makes a
    /// context on each GPU, as recording in PyTorch does).
    pub(super) fn each_native(
        mut f: impl FnMut(&alloc_cuda::CachingAllocator<std::sync::Arc<alloc_cuda::cuda::CudaDevice>>),
    ) -> PyResult<()> {
        let rt = init().map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let alloc = rt.allocator();
        for i in 0..rt.device_count() {
            let index = i8::try_from(i).map_err(|_| PyRuntimeError::new_err("too many devices"))?;
            match alloc
                .device(index)
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?
            {
                DeviceAllocator::Native(a) => f(a.inner()),
                other => {
                    return Err(PyRuntimeError::new_err(format!(
                        "memory history needs the native caching allocator; the backend is {}",
                        other.backend().name()
                    )))
                }
            }
        }
        Ok(())
    }
}

fn unknown_device(device: &str) -> PyErr {
    PyValueError::new_err(format!(
        "memory history is available for 'cpu' and 'cuda', not {device:?}"
    ))
}

#[cfg(not(feature = "cuda"))]
fn no_cuda() -> PyErr {
    PyRuntimeError::new_err(
        "this torchcore was built without CUDA (the `cuda` feature of torchcore-py); only the 'cpu' allocator records history",
    )
}

/// Starts, reconfigures or stops recording on `device`'s allocator.
#[pyfunction]
#[pyo3(signature = (device, enabled, trace, stacks, stacks_on_free, max_entries, clear_history))]
#[allow(clippy::too_many_arguments)]
fn _memory_record_history(
    device: &str,
    enabled: bool,
    trace: bool,
    stacks: bool,
    stacks_on_free: bool,
    max_entries: usize,
    clear_history: bool,
) -> PyResult<()> {
    let cfg = enabled.then(|| config(trace, stacks, stacks_on_free, max_entries));
    match device {
        "cpu" => {
            let a = alloc_cpu::builtin_cpu_allocator();
            if clear_history {
                a.record_memory_history(None);
            }
            a.record_memory_history(cfg);
            Ok(())
        }
        "cuda" => {
            #[cfg(feature = "cuda")]
            {
                cuda::each_native(|a| {
                    if clear_history {
                        a.record_memory_history(None);
                    }
                    a.record_memory_history(cfg);
                })
            }
            #[cfg(not(feature = "cuda"))]
            {
                let _ = (cfg, clear_history);
                Err(no_cuda())
            }
        }
        other => Err(unknown_device(other)),
    }
}

fn snapshot_value(device: &str) -> PyResult<Value> {
    match device {
        "cpu" => Ok(cpu_snapshot(
            &alloc_cpu::builtin_cpu_allocator().memory_snapshot(),
        )),
        "cuda" => {
            #[cfg(feature = "cuda")]
            {
                let mut snaps = Vec::new();
                cuda::each_native(|a| snaps.push(a.memory_snapshot()))?;
                Ok(torchcore_memviz::cuda_snapshot(&snaps))
            }
            #[cfg(not(feature = "cuda"))]
            Err(no_cuda())
        }
        other => Err(unknown_device(other)),
    }
}

/// The snapshot dict of `device`'s allocator, pickled (protocol 2, the
/// bytes `_dump_snapshot` writes).
#[pyfunction]
fn _memory_snapshot_pickle<'py>(py: Python<'py>, device: &str) -> PyResult<Bound<'py, PyBytes>> {
    let v = snapshot_value(device)?;
    Ok(PyBytes::new(py, &to_pickle(&v)))
}

/// The HTML picture of a pickled snapshot (ours or PyTorch's).
#[pyfunction]
#[pyo3(signature = (pickled, title = "Memory snapshot"))]
fn _memory_render_html(pickled: &[u8], title: &str) -> PyResult<String> {
    let v = from_pickle(pickled).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let v = match v {
        Value::List(segs) => Value::dict([
            ("segments", Value::List(segs)),
            ("device_traces", Value::List(Vec::new())),
        ]),
        v if v.get("segments").is_some() => v,
        _ => {
            return Err(PyValueError::new_err(
                "not a memory snapshot (expected a dict with \"segments\")",
            ))
        }
    };
    Ok(render_html(
        &v,
        &HtmlOptions {
            title: title.to_string(),
            ..HtmlOptions::default()
        },
    ))
}

/// Adds the functions to `torchcore._C`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_memory_record_history, m)?)?;
    m.add_function(wrap_pyfunction!(_memory_snapshot_pickle, m)?)?;
    m.add_function(wrap_pyfunction!(_memory_render_html, m)?)?;
    Ok(())
}
