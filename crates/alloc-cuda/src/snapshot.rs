//! Snapshots of the allocator's segments and blocks, in the shape of the
//! `"segments"` list of `torch.cuda.memory_snapshot()`.

#[cfg(feature = "snapshot-json")]
use serde::{Deserialize, Serialize};

/// State of a block in a snapshot (PyTorch's strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "snapshot-json", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "snapshot-json", serde(rename_all = "snake_case"))]
pub enum BlockState {
    /// Handed out to a user.
    ActiveAllocated,
    /// Freed by the user but waiting for events of other streams.
    ActivePendingFree,
    /// Free and cached.
    Inactive,
}

/// A stack frame of an allocation (recorded while history recording is on,
/// see [`CachingAllocator::record_memory_history`](crate::CachingAllocator::record_memory_history)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "snapshot-json", derive(Serialize, Deserialize))]
pub struct Frame {
    /// Source file.
    pub filename: String,
    /// Line number.
    pub line: u32,
    /// Function name.
    pub name: String,
}

/// One block of a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "snapshot-json", derive(Serialize, Deserialize))]
pub struct BlockSnapshot {
    /// Device address.
    pub address: u64,
    /// Size in bytes (after rounding).
    pub size: u64,
    /// Bytes the user asked for (stale for inactive blocks, as in PyTorch).
    pub requested_size: u64,
    /// Allocated, pending free, or inactive.
    pub state: BlockState,
    /// Allocation stack (empty unless recorded).
    #[cfg_attr(feature = "snapshot-json", serde(default))]
    pub frames: Vec<Frame>,
}

/// `"large"` or `"small"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "snapshot-json", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "snapshot-json", serde(rename_all = "snake_case"))]
pub enum SegmentType {
    /// From the large pool.
    Large,
    /// From the small pool (2 MiB segments).
    Small,
}

/// One segment: a device allocation, or one contiguous mapped range of an
/// expandable segment.
///
/// ```
/// use alloc_cuda::{BlockState, CachingAllocator, CachingAllocatorConfig, FakeDevice, SegmentType, StreamId};
/// let a = CachingAllocator::new(FakeDevice::new(1 << 30), 0, CachingAllocatorConfig::default());
/// let p = a.malloc(3 << 20, StreamId(1))?;
/// let segs = a.snapshot();
/// assert_eq!(segs.len(), 1);
/// let s = &segs[0];
/// assert_eq!((s.address, s.total_size, s.stream), (p.addr(), 20 << 20, 1));
/// assert_eq!(s.segment_type, SegmentType::Large);
/// assert_eq!(s.blocks[0].state, BlockState::ActiveAllocated);
/// assert_eq!(s.blocks[1].size, 17 << 20);
/// # #[cfg(feature = "snapshot-json")] {
/// let json = a.snapshot_json().unwrap();
/// assert!(json.contains(r#""state":"inactive""#));
/// # }
/// # Ok::<(), alloc_cuda::CachingAllocatorError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "snapshot-json", derive(Serialize, Deserialize))]
pub struct SegmentSnapshot {
    /// Device index.
    pub device: i8,
    /// Base address.
    pub address: u64,
    /// Sum of its blocks' sizes.
    pub total_size: u64,
    /// Bytes in allocated blocks.
    pub allocated_size: u64,
    /// Bytes in active blocks (allocated or pending free).
    pub active_size: u64,
    /// Requested bytes of active blocks.
    pub requested_size: u64,
    /// The stream the segment belongs to.
    pub stream: u64,
    /// Pool.
    pub segment_type: SegmentType,
    /// Private pool id (always `(0, 0)`: no CUDA graphs here).
    pub segment_pool_id: (u64, u64),
    /// Whether this is (part of) an expandable segment.
    pub is_expandable: bool,
    /// Stack when the segment was allocated (empty unless recorded).
    #[cfg_attr(feature = "snapshot-json", serde(default))]
    pub frames: Vec<Frame>,
    /// Blocks in address order.
    pub blocks: Vec<BlockSnapshot>,
}

/// Everything `torch.cuda.memory._snapshot()` reports for one device: the
/// segments, the recorded trace and the configuration
/// ([`CachingAllocator::memory_snapshot`](crate::CachingAllocator::memory_snapshot)).
#[derive(Debug, Clone)]
pub struct MemorySnapshot {
    /// The device index.
    pub device: i8,
    /// Segments by address, with their blocks.
    pub segments: Vec<SegmentSnapshot>,
    /// The recorded events, oldest first (empty unless recording).
    pub device_trace: Vec<c10_storage::history::TraceEntry>,
    /// The allocator's configuration (`allocator_settings`).
    pub config: crate::CachingAllocatorConfig,
}
