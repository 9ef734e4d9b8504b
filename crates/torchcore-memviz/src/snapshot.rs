//! Building the snapshot dict of `torch.cuda.memory._snapshot()` from the
//! allocators' snapshots, and writing / reading `_dump_snapshot` files.

use std::path::Path;

use alloc_cpu::CpuMemorySnapshot;
use alloc_cuda::{BlockState, CachingAllocatorConfig, Frame, MemorySnapshot, SegmentType};
use c10_storage::history::{StackFrame, TraceAction, TraceEntry};

use crate::pickle::{from_pickle, to_pickle, PickleError};
use crate::value::Value;

/// Why a snapshot could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not a pickle of plain data.
    #[error("{path}: {source}")]
    Pickle {
        /// The file.
        path: String,
        /// The error.
        source: PickleError,
    },
    /// The pickle is not a snapshot dict (or a bare segment list).
    #[error("{0}: not a memory snapshot (expected a dict with \"segments\")")]
    NotASnapshot(String),
}

fn frame_value(filename: &str, line: u32, name: &str) -> Value {
    Value::dict([
        ("filename", Value::from(filename)),
        ("line", Value::from(u64::from(line))),
        ("name", Value::from(name)),
    ])
}

fn frames_value(frames: &[Frame]) -> Value {
    Value::List(
        frames
            .iter()
            .map(|f| frame_value(&f.filename, f.line, &f.name))
            .collect(),
    )
}

fn stack_frames_value(frames: &[StackFrame]) -> Value {
    Value::List(
        frames
            .iter()
            .map(|f| frame_value(&f.filename, f.line, &f.name))
            .collect(),
    )
}

/// One trace entry as PyTorch writes it: `action`, `addr` (`device_free`
/// for `oom`), `size`, `stream`, `time_us`, `frames`.
fn trace_entry_value(e: &TraceEntry) -> Value {
    let addr_key = if e.action == TraceAction::Oom {
        "device_free"
    } else {
        "addr"
    };
    let frames = e
        .stack
        .as_ref()
        .map_or(Value::List(Vec::new()), |s| stack_frames_value(s.frames()));
    Value::dict([
        ("action", Value::from(e.action.as_str())),
        (addr_key, Value::from(e.addr)),
        ("size", Value::from(e.size)),
        ("stream", Value::from(e.stream)),
        ("time_us", Value::from(e.time_us)),
        ("frames", frames),
    ])
}

fn state_str(s: BlockState) -> &'static str {
    match s {
        BlockState::ActiveAllocated => "active_allocated",
        BlockState::ActivePendingFree => "active_pending_free",
        BlockState::Inactive => "inactive",
    }
}

/// `allocator_settings` as PyTorch reports them.
fn allocator_settings(c: &CachingAllocatorConfig) -> Value {
    let opt = |v: u64| {
        if v == u64::MAX {
            Value::Int(-1)
        } else {
            Value::from(v)
        }
    };
    let mut roundup = Vec::new();
    let mut key = 1u64;
    for d in c.roundup_power2_divisions() {
        roundup.push((Value::from(key.to_string()), Value::from(*d)));
        key *= 2;
    }
    let non_split = c.max_non_split_rounding_size();
    Value::dict([
        (
            "PYTORCH_CUDA_ALLOC_CONF",
            Value::from(c.last_allocator_settings()),
        ),
        ("max_split_size", opt(c.max_split_size())),
        (
            "garbage_collection_threshold",
            Value::from(c.garbage_collection_threshold()),
        ),
        ("expandable_segments", Value::from(c.expandable_segments())),
        (
            "pinned_num_register_threads",
            Value::from(c.pinned_num_register_threads()),
        ),
        (
            "release_lock_on_cudamalloc",
            Value::from(c.release_lock_on_cudamalloc()),
        ),
        (
            "pinned_use_cuda_host_register",
            Value::from(c.pinned_use_cuda_host_register()),
        ),
        (
            "graph_capture_record_stream_reuse",
            Value::from(c.graph_capture_record_stream_reuse()),
        ),
        (
            "max_round_threshold",
            if non_split == alloc_cuda::LARGE_BUFFER {
                Value::Int(-1)
            } else {
                Value::from(non_split)
            },
        ),
        ("max_cached_size", Value::Int(-1)),
        ("roundup_power2_divisions", Value::Dict(roundup)),
    ])
}

/// The dict `torch.cuda.memory._snapshot()` returns, for the devices
/// whose caching-allocator snapshots are given (each at its device index
/// in `device_traces`).
///
/// Keys, as PyTorch: `segments` (each with `device`, `address`,
/// `total_size`, `allocated_size`, `active_size`, `requested_size`,
/// `stream`, `segment_type`, `segment_pool_id`, `is_expandable`, `frames`,
/// `blocks`; each block with `address`, `size`, `requested_size`, `state`,
/// `frames`), `device_traces`, `allocator_settings` (of the first
/// snapshot), and empty `external_annotations`, `host_segments` and
/// `host_traces`.
///
/// ```
/// use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
/// use c10_storage::history::HistoryConfig;
/// use torchcore_memviz::cuda_snapshot;
/// let a = CachingAllocator::new(FakeDevice::new(1 << 30), 0, CachingAllocatorConfig::default());
/// a.record_memory_history(Some(HistoryConfig::default()));
/// let _p = a.malloc(3 << 20, StreamId::DEFAULT)?;
/// let snap = cuda_snapshot(&[a.memory_snapshot()]);
/// let seg = &snap.get("segments").unwrap().as_list().unwrap()[0];
/// assert_eq!(seg.get("total_size").and_then(|v| v.as_u64()), Some(20 << 20));
/// let trace = snap.get("device_traces").unwrap().as_list().unwrap()[0].as_list().unwrap();
/// assert_eq!(trace[1].get("action").and_then(|v| v.as_str()), Some("alloc"));
/// # Ok::<(), alloc_cuda::CachingAllocatorError>(())
/// ```
pub fn cuda_snapshot(devices: &[MemorySnapshot]) -> Value {
    let mut segments = Vec::new();
    let ndev = devices
        .iter()
        .map(|d| usize::try_from(d.device).unwrap_or(0) + 1)
        .max()
        .unwrap_or(0);
    let mut traces = vec![Value::List(Vec::new()); ndev];
    for d in devices {
        for s in &d.segments {
            let blocks = s
                .blocks
                .iter()
                .map(|b| {
                    Value::dict([
                        ("address", Value::from(b.address)),
                        ("size", Value::from(b.size)),
                        ("requested_size", Value::from(b.requested_size)),
                        ("state", Value::from(state_str(b.state))),
                        ("frames", frames_value(&b.frames)),
                    ])
                })
                .collect();
            segments.push(Value::dict([
                ("device", Value::from(i64::from(s.device))),
                ("address", Value::from(s.address)),
                ("total_size", Value::from(s.total_size)),
                ("allocated_size", Value::from(s.allocated_size)),
                ("active_size", Value::from(s.active_size)),
                ("requested_size", Value::from(s.requested_size)),
                ("stream", Value::from(s.stream)),
                (
                    "segment_type",
                    Value::from(match s.segment_type {
                        SegmentType::Large => "large",
                        SegmentType::Small => "small",
                    }),
                ),
                (
                    "segment_pool_id",
                    Value::Tuple(vec![
                        Value::from(s.segment_pool_id.0),
                        Value::from(s.segment_pool_id.1),
                    ]),
                ),
                ("is_expandable", Value::from(s.is_expandable)),
                ("frames", frames_value(&s.frames)),
                ("blocks", Value::List(blocks)),
            ]));
        }
        if let Some(slot) = usize::try_from(d.device)
            .ok()
            .and_then(|i| traces.get_mut(i))
        {
            *slot = Value::List(d.device_trace.iter().map(trace_entry_value).collect());
        }
    }
    let settings = devices.first().map_or_else(
        || allocator_settings(&CachingAllocatorConfig::default()),
        |d| allocator_settings(&d.config),
    );
    Value::dict([
        ("segments", Value::List(segments)),
        ("device_traces", Value::List(traces)),
        ("allocator_settings", settings),
        ("external_annotations", Value::List(Vec::new())),
        ("host_segments", Value::List(Vec::new())),
        ("host_traces", Value::List(Vec::new())),
    ])
}

/// The same dict for the CPU allocator, which has no cache: every live
/// recorded allocation is a segment of one `active_allocated` block
/// (`segment_type` `"small"` up to 1 MiB, else `"large"`; device 0,
/// stream 0), and in the trace each `alloc` is preceded by a
/// `segment_alloc` and each `free_completed` followed by a `segment_free`
/// of the same range, so that PyTorch's tools, which replay segments from
/// the trace, see a consistent history. `allocator_settings` are the
/// caching allocator's defaults (the CPU allocator has none of its own).
///
/// ```
/// use alloc_cpu::CpuAllocator;
/// use c10_storage::Allocator;
/// use c10_storage::history::HistoryConfig;
/// use torchcore_memviz::cpu_snapshot;
/// let a = CpuAllocator::new();
/// a.record_memory_history(Some(HistoryConfig { stacks: false, ..HistoryConfig::default() }));
/// let _p = a.allocate(4096)?;
/// let snap = cpu_snapshot(&a.memory_snapshot());
/// let seg = &snap.get("segments").unwrap().as_list().unwrap()[0];
/// assert_eq!(seg.get("allocated_size").and_then(|v| v.as_u64()), Some(4096));
/// let trace = snap.get("device_traces").unwrap().as_list().unwrap()[0].as_list().unwrap();
/// let actions: Vec<_> = trace.iter().map(|e| e.get("action").unwrap().as_str().unwrap()).collect();
/// assert_eq!(actions, ["segment_alloc", "alloc", "snapshot"]);
/// # Ok::<(), c10_storage::AllocError>(())
/// ```
pub fn cpu_snapshot(snap: &CpuMemorySnapshot) -> Value {
    let segments = snap
        .blocks
        .iter()
        .map(|b| {
            let frames = b
                .stack
                .as_ref()
                .map_or(Value::List(Vec::new()), |s| stack_frames_value(s.frames()));
            Value::dict([
                ("device", Value::Int(0)),
                ("address", Value::from(b.addr)),
                ("total_size", Value::from(b.size)),
                ("allocated_size", Value::from(b.size)),
                ("active_size", Value::from(b.size)),
                ("requested_size", Value::from(b.size)),
                ("stream", Value::Int(0)),
                (
                    "segment_type",
                    Value::from(if b.size <= alloc_cuda::SMALL_SIZE {
                        "small"
                    } else {
                        "large"
                    }),
                ),
                (
                    "segment_pool_id",
                    Value::Tuple(vec![Value::Int(0), Value::Int(0)]),
                ),
                ("is_expandable", Value::Bool(false)),
                ("frames", frames.clone()),
                (
                    "blocks",
                    Value::List(vec![Value::dict([
                        ("address", Value::from(b.addr)),
                        ("size", Value::from(b.size)),
                        ("requested_size", Value::from(b.size)),
                        ("state", Value::from("active_allocated")),
                        ("frames", frames),
                    ])]),
                ),
            ])
        })
        .collect();
    let mut trace = Vec::new();
    for e in &snap.trace {
        let seg = |action: &str| {
            Value::dict([
                ("action", Value::from(action)),
                ("addr", Value::from(e.addr)),
                ("size", Value::from(e.size)),
                ("stream", Value::Int(0)),
                ("time_us", Value::from(e.time_us)),
                ("frames", Value::List(Vec::new())),
            ])
        };
        match e.action {
            TraceAction::Alloc => {
                trace.push(seg("segment_alloc"));
                trace.push(trace_entry_value(e));
            }
            TraceAction::FreeCompleted => {
                trace.push(trace_entry_value(e));
                trace.push(seg("segment_free"));
            }
            _ => trace.push(trace_entry_value(e)),
        }
    }
    Value::dict([
        ("segments", Value::List(segments)),
        ("device_traces", Value::List(vec![Value::List(trace)])),
        (
            "allocator_settings",
            allocator_settings(&CachingAllocatorConfig::default()),
        ),
        ("external_annotations", Value::List(Vec::new())),
        ("host_segments", Value::List(Vec::new())),
        ("host_traces", Value::List(Vec::new())),
    ])
}

/// Writes `snapshot` to `path` as a pickle (what `_dump_snapshot` does).
///
/// ```
/// use torchcore_memviz::{dump_snapshot, load_snapshot, Value};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("snap.pickle");
/// let snap = Value::dict([("segments", Value::List(vec![])), ("device_traces", Value::List(vec![]))]);
/// dump_snapshot(&snap, &path)?;
/// assert_eq!(load_snapshot(&path)?, snap);
/// # Ok::<(), torchcore_memviz::SnapshotError>(())
/// ```
pub fn dump_snapshot(snapshot: &Value, path: impl AsRef<Path>) -> Result<(), SnapshotError> {
    let path = path.as_ref();
    std::fs::write(path, to_pickle(snapshot)).map_err(|source| SnapshotError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Reads a `_dump_snapshot` pickle (ours or PyTorch's). A bare list of
/// segments (what `torch.cuda.memory_snapshot()` gives) is wrapped as
/// `{"segments": [...], "device_traces": []}`, as `_memory_viz` does.
pub fn load_snapshot(path: impl AsRef<Path>) -> Result<Value, SnapshotError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| SnapshotError::Io {
        path: name.clone(),
        source,
    })?;
    let v = from_pickle(&bytes).map_err(|source| SnapshotError::Pickle {
        path: name.clone(),
        source,
    })?;
    match v {
        Value::List(segs) => Ok(Value::dict([
            ("segments", Value::List(segs)),
            ("device_traces", Value::List(Vec::new())),
        ])),
        v if v.get("segments").is_some() => Ok(v),
        _ => Err(SnapshotError::NotASnapshot(name)),
    }
}
