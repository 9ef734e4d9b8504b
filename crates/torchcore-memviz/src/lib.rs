//! # torchcore-memviz
//!
//! Memory snapshots of torchcore's allocators in PyTorch's format, and
//! pictures of them.
//!
//! * [`cuda_snapshot`] / [`cpu_snapshot`]: the dict that
//!   `torch.cuda.memory._snapshot()` returns (`segments` with their
//!   `blocks`, `device_traces`, `allocator_settings`), as a [`Value`],
//!   from [`alloc_cuda::CachingAllocator::memory_snapshot`] or
//!   [`alloc_cpu::CpuAllocator::memory_snapshot`]. Record history first
//!   with `record_memory_history` on the allocator.
//! * [`dump_snapshot`] writes it as the pickle `_dump_snapshot` writes, so
//!   that PyTorch's `python -m torch.cuda._memory_viz stats|segments|trace_plot|segment_plot`
//!   and the viewer at pytorch.org/memory_viz read it unchanged;
//!   [`load_snapshot`] reads ours or PyTorch's.
//! * [`render_html`]: a self-contained HTML page (inline SVG, no script,
//!   no network) with active memory over time, the segment map, a legend
//!   and the allocation stacks. The `torchcore-memviz` binary writes it
//!   from a dump: `cargo run -p torchcore-memviz -- snapshot.pickle -o memory.html`.
//!
//! ```
//! use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
//! use c10_storage::history::HistoryConfig;
//! use torchcore_memviz::{cuda_snapshot, dump_snapshot, load_snapshot, render_html, HtmlOptions};
//!
//! let alloc = CachingAllocator::new(FakeDevice::new(1 << 30), 0, CachingAllocatorConfig::default());
//! alloc.record_memory_history(Some(HistoryConfig::default()));
//! let p = alloc.malloc(5 << 20, StreamId::DEFAULT)?;
//! let snap = cuda_snapshot(&[alloc.memory_snapshot()]);
//! let dir = tempfile::tempdir()?;
//! dump_snapshot(&snap, dir.path().join("snapshot.pickle"))?;
//! assert_eq!(load_snapshot(dir.path().join("snapshot.pickle"))?, snap);
//! let html = render_html(&snap, &HtmlOptions::default());
//! assert!(html.contains("Segment map"));
//! // SAFETY: `p` is not used any more.
//! unsafe { alloc.free(p)? };
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

mod html;
mod pickle;
mod snapshot;
mod value;

pub use html::{format_bytes, render_html, HtmlOptions};
pub use pickle::{from_pickle, to_pickle, PickleError};
pub use snapshot::{cpu_snapshot, cuda_snapshot, dump_snapshot, load_snapshot, SnapshotError};
pub use value::Value;
