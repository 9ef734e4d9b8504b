//! # alloc-cuda
//!
//! PyTorch's CUDA caching allocator (`c10/cuda/CUDACachingAllocator.cpp`,
//! the "native" backend) in Rust, written against a small trait instead of
//! the CUDA runtime, so that the whole algorithm runs and is tested on any
//! machine.
//!
//! ## The seam: [`RawDevice`]
//!
//! A caching allocator needs very little from the driver: `malloc`/`free`,
//! free/total memory, events recorded on streams (create, record, query,
//! synchronize, destroy), device and stream synchronization, and, for
//! expandable segments, the virtual-memory calls (reserve an address range,
//! create physical memory, map, set access, unmap, release).
//! [`RawDevice`] is exactly that surface, with each method's contract
//! documented against the CUDA call it stands for. Addresses, streams and
//! events are opaque integers; the host never dereferences device memory.
//! The real implementation (cudarc, behind the `cuda` feature) is a thin
//! wrapper; everything with a decision in it lives in this crate.
//!
//! ## Why a fake device
//!
//! The interesting behaviour of a caching allocator is in its decisions:
//! which block a request gets, when it splits, when free blocks coalesce,
//! which memory is released under pressure and in which order, when a block
//! used on another stream may be reused. None of that needs a GPU, and all
//! of it is hard to observe on one. [`FakeDevice`] implements [`RawDevice`]
//! in plain Rust with a capacity, driver-like aligned fake addresses,
//! streams and events whose completion the test controls, failure
//! injection and call counters, and it checks every call (freeing an
//! unknown address or mapping a page twice is an error). The tests pin
//! PyTorch's rules with exact numbers, and a randomized test checks the
//! allocator's invariants ([`CachingAllocator::validate`]) after every step;
//! all of it also runs under Miri.
//!
//! ## What is here
//!
//! * [`CachingAllocator`]: one device's allocator — 512-byte rounding and
//!   `roundup_power2_divisions` ([`round_size`]), small (≤ 1 MiB) and large
//!   pools, 2 MiB / 20 MiB / rounded segments ([`get_allocation_size`]),
//!   best fit per stream, PyTorch's split rules, immediate coalescing,
//!   `max_split_size` oversize blocks and `max_non_split_rounding`, the
//!   garbage-collection threshold with a memory fraction, the out-of-memory
//!   retry ladder and PyTorch's message ([`CudaOutOfMemory`]),
//!   `record_stream` with per-stream event queues, `empty_cache`,
//!   statistics with PyTorch's names ([`DeviceStats`]), snapshots
//!   ([`SegmentSnapshot`], JSON via serde with the `snapshot-json`
//!   feature), and expandable segments.
//! * [`CachingAllocatorConfig`]: the `PYTORCH_CUDA_ALLOC_CONF` /
//!   `PYTORCH_ALLOC_CONF` syntax with PyTorch's validation messages.
//! * [`CachingDeviceAllocator`]: the allocator as a
//!   [`c10_storage::Allocator`] for CUDA storages, allocating on the
//!   thread's [current stream](current_stream).
//! * [`FakeDevice`]: the simulated device.
//!
//! * History recording ([`CachingAllocator::record_memory_history`]):
//!   PyTorch's trace entries (`alloc`, `free_requested`, `free_completed`,
//!   `segment_alloc`, `segment_free`, `segment_map`, `segment_unmap`,
//!   `oom`, `snapshot`) with optional Rust stacks, and
//!   [`CachingAllocator::memory_snapshot`] (the torchcore-memviz crate
//!   writes it as PyTorch's `_dump_snapshot` pickle).
//!
//! Not ported: CUDA graph private pools, IPC handles. The pinned host
//! allocator, the `cudaMallocAsync` and raw backends and the device
//! operations live in the `cuda` module (feature `cuda`).
//!
//! ```
//! use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
//! let dev = FakeDevice::new(1 << 30);
//! let alloc = CachingAllocator::new(dev, 0, CachingAllocatorConfig::parse("max_split_size_mb:64")?);
//! let s = StreamId::DEFAULT;
//! let small = alloc.malloc(300, s)?;         // 512 bytes from a 2 MiB small segment
//! let big = alloc.malloc(100 << 20, s)?;     // its own 100 MiB segment (oversize)
//! let stats = alloc.stats().to_flat_map();
//! assert_eq!(stats["segment.all.current"], 2);
//! assert_eq!(stats["reserved_bytes.all.current"], (2 << 20) + (100 << 20));
//! assert_eq!(stats["oversize_allocations.current"], 1);
//! // SAFETY: nothing uses these any more.
//! unsafe {
//!     alloc.free(small)?;
//!     alloc.free(big)?;
//! }
//! alloc.empty_cache()?;
//! assert_eq!(alloc.device().counters().free_calls, 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Crate features
//!
//! * `snapshot-json` (default): [`CachingAllocator::snapshot_json`] and
//!   serde `Serialize`/`Deserialize` for [`SegmentSnapshot`],
//!   [`BlockSnapshot`], [`DeviceStats`], [`Stat`], the configuration types,
//!   [`DevicePtr`] and [`StreamId`]. It is what pulls in `serde` and
//!   `serde_json`; build with `default-features = false` to leave them
//!   out. (`tracing` is always a dependency: the allocator reports its
//!   warnings and debug events through it.)
//! * `cuda`: the real backend on cudarc, the `cuda` module: the driver
//!   probe, `CudaDevice`, the native / raw / `cudaMallocAsync` allocator
//!   backends, the pinned host allocator, and the device operations with
//!   NVRTC strided-copy kernels. It loads `libcuda` and `libnvrtc` at run
//!   time, so it builds without a CUDA toolkit and reports
//!   `CUDA is not available: ...` on machines without a driver or GPU.
//!   See `docs/cuda.md`.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod adapter;
mod caching;
pub mod config;
#[cfg(feature = "cuda")]
#[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
pub mod cuda;
mod device;
mod error;
mod expandable;
pub mod fake;
mod snapshot;
mod stats;
mod stream;
mod sync;

pub use adapter::CachingDeviceAllocator;
pub use caching::{
    get_allocation_size, round_size, roundup_power2_next_division, CachingAllocator,
    FreeMemoryCallback, OomObserver, LARGE_BUFFER, MIN_BLOCK_SIZE, MIN_LARGE_ALLOC, ONE_EXABYTE,
    ROUNDUP_POWER2_INTERVALS, ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE,
};
pub use config::{Backend, CachingAllocatorConfig, CachingAllocatorConfigBuilder, ConfigError};
pub use device::{DeviceCopy, DeviceError, DevicePtr, EventId, PhysHandle, RawDevice, StreamId};
pub use error::{format_size, CachingAllocatorError, CudaOutOfMemory};
pub use fake::{FakeCounters, FakeDevice};
pub use snapshot::{
    BlockSnapshot, BlockState, Frame, MemorySnapshot, SegmentSnapshot, SegmentType,
};
pub use stats::{DeviceStats, Stat, StatArray, StatType};
pub use stream::{current_stream, set_current_stream, StreamGuard};

/// This crate's `README.md`: its example is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadme;
