//! [`CachingAllocator`]: PyTorch's `DeviceCachingAllocator` for one device.
//!
//! The algorithm, in PyTorch's terms (`c10/cuda/CUDACachingAllocator.cpp`):
//!
//! * A **segment** is one device allocation (`cudaMalloc`), or the mapped
//!   part of an expandable segment. A segment is a doubly linked list of
//!   **blocks** (`prev`/`next` are the physically adjacent blocks), each
//!   allocated or free.
//! * Requests are rounded ([`round_size`]) and go to the **small pool**
//!   (≤ 1 MiB) or the **large pool**. New segments are 2 MiB (small), 20 MiB
//!   (requests below 10 MiB) or the request rounded up to 2 MiB
//!   ([`get_allocation_size`]).
//! * Free blocks are kept per pool in a set ordered by (stream, size,
//!   address): the first entry at or after (my stream, my size) is the best
//!   fit on my stream. Blocks are only reused by the stream they were
//!   allocated on.
//! * A found block is **split** when the remainder is worth keeping
//!   (≥ 512 bytes in the small pool, > 1 MiB in the large pool and only for
//!   requests below `max_split_size`); on free a block **coalesces** with
//!   free neighbours at once.
//! * When no block fits: free-memory callbacks, garbage collection (with a
//!   memory fraction), a new segment, then — on failure — release cached
//!   oversize blocks and retry, then synchronize every pending event and
//!   release every unsplit cached block and retry, then
//!   [`CudaOutOfMemory`].
//! * `record_stream` makes a free wait for events recorded on the other
//!   streams; [`CachingAllocator::empty_cache`] releases every unsplit cached
//!   block.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use c10_storage::history::{HistoryConfig, HistoryRecorder, TraceAction};

use crate::sync::{Mutex, MutexGuard};

use crate::config::CachingAllocatorConfig;
use crate::device::{DeviceError, DevicePtr, EventId, RawDevice, StreamId};
use crate::error::{CachingAllocatorError, CudaOutOfMemory};
use crate::expandable::ExpandableSegment;
use crate::snapshot::{BlockSnapshot, BlockState, MemorySnapshot, SegmentSnapshot, SegmentType};
use crate::stats::{DeviceStats, StatArray};

mod expandable_ops;
mod snapshot_build;

/// Every request is rounded up to a multiple of this (`kMinBlockSize`); it
/// is also the smallest remainder split off in the small pool.
pub const MIN_BLOCK_SIZE: u64 = 512;
/// Largest request served by the small pool (`kSmallSize`, 1 MiB); in the
/// large pool a remainder must exceed it to be split off.
pub const SMALL_SIZE: u64 = 1 << 20;
/// Segment size of the small pool (`kSmallBuffer`, 2 MiB).
pub const SMALL_BUFFER: u64 = 2 << 20;
/// Segment size for 1–10 MiB requests, default `max_non_split_rounding`,
/// minimum `max_split_size` (`kLargeBuffer`, 20 MiB).
pub const LARGE_BUFFER: u64 = 20 << 20;
/// Requests of at least this size get their own segment (`kMinLargeAlloc`,
/// 10 MiB).
pub const MIN_LARGE_ALLOC: u64 = 10 << 20;
/// Own segments are rounded up to a multiple of this (`kRoundLarge`, 2 MiB).
pub const ROUND_LARGE: u64 = 2 << 20;
/// Number of power-of-two intervals of `roundup_power2_divisions`
/// (`kRoundUpPowerOfTwoIntervals`: 1 MiB, 2 MiB, ..., 32 GiB and above).
pub const ROUNDUP_POWER2_INTERVALS: usize = 16;
/// Requests of 1 EiB or more are refused outright.
pub const ONE_EXABYTE: u64 = 1 << 60;

/// Rounds `size` up to the next of `divisions` equal steps between the
/// surrounding powers of two (PyTorch's `roundup_power2_next_division`):
/// powers of two are kept, and a step that would be 0 bytes gives the next
/// power of two.
///
/// Saturating: when the rounded size does not fit in a `u64` (sizes above
/// 2^63), the result is `u64::MAX`, in debug and release builds alike (no
/// allocation can be that large; [`CachingAllocator::malloc`] refuses
/// anything from [`ONE_EXABYTE`] on before rounding).
///
/// ```
/// use alloc_cuda::roundup_power2_next_division;
/// // 1024 < 1200 < 2048 in 4 steps: 1024, 1280, 1536, 1792.
/// assert_eq!(roundup_power2_next_division(1200, 4), 1280);
/// assert_eq!(roundup_power2_next_division(2048, 4), 2048);
/// assert_eq!(roundup_power2_next_division(u64::MAX, 4), u64::MAX);
/// ```
pub fn roundup_power2_next_division(size: u64, divisions: u64) -> u64 {
    if size.is_power_of_two() || size == 0 {
        return size;
    }
    let floor = 1u64 << size.ilog2();
    let step = floor >> divisions.max(1).ilog2();
    if step == 0 {
        return floor.saturating_mul(2);
    }
    let rounded_floor = size & !(step - 1);
    if rounded_floor == size {
        size
    } else {
        rounded_floor.saturating_add(step)
    }
}

/// The size a request of `size` bytes is rounded to (PyTorch's
/// `round_size`): below 512 → 512; otherwise, if the request's interval
/// has `d > 1` divisions and `size > 512 * d`, the next power-of-two
/// division ([`roundup_power2_next_division`]); else the next multiple of
/// 512. Saturating: a size whose rounding does not fit in a `u64` gives
/// `u64::MAX` (same in debug and release builds).
///
/// ```
/// use alloc_cuda::{round_size, CachingAllocatorConfig};
/// let c = CachingAllocatorConfig::default();
/// assert_eq!(round_size(1, &c), 512);
/// assert_eq!(round_size(513, &c), 1024);
/// let d4 = CachingAllocatorConfig::parse("roundup_power2_divisions:4")?;
/// // 1200 <= 512 * 4, so plain 512-byte rounding still applies.
/// assert_eq!(round_size(1200, &d4), 1536);
/// assert_eq!(round_size((1 << 30) + 1, &d4), 5 << 28); // 1.25 GiB
/// # Ok::<(), alloc_cuda::ConfigError>(())
/// ```
pub fn round_size(size: u64, config: &CachingAllocatorConfig) -> u64 {
    if size < MIN_BLOCK_SIZE {
        return MIN_BLOCK_SIZE;
    }
    let divisions = config.roundup_power2_divisions_for(size);
    if divisions > 1 && size > MIN_BLOCK_SIZE.saturating_mul(divisions) {
        roundup_power2_next_division(size, divisions)
    } else {
        size.div_ceil(MIN_BLOCK_SIZE).saturating_mul(MIN_BLOCK_SIZE)
    }
}

/// The size of a new segment for a rounded request (PyTorch's
/// `get_allocation_size`): ≤ 1 MiB → 2 MiB, < 10 MiB → 20 MiB, else
/// rounded up to 2 MiB (saturating at `u64::MAX` when that does not fit).
///
/// ```
/// use alloc_cuda::get_allocation_size;
/// assert_eq!(get_allocation_size(512 << 10), 2 << 20);
/// assert_eq!(get_allocation_size(3 << 19), 20 << 20);
/// assert_eq!(get_allocation_size((10 << 20) + 512), 12 << 20);
/// ```
pub fn get_allocation_size(size: u64) -> u64 {
    if size <= SMALL_SIZE {
        SMALL_BUFFER
    } else if size < MIN_LARGE_ALLOC {
        LARGE_BUFFER
    } else {
        size.div_ceil(ROUND_LARGE).saturating_mul(ROUND_LARGE)
    }
}

/// A callback run when no cached block fits, before a new segment is
/// requested (PyTorch's `FreeMemoryCallback`, used for IPC cleanup).
/// Returns whether it freed anything; if any did, the search is retried.
/// Callbacks run without the allocator lock, so they may free memory of
/// this allocator.
pub type FreeMemoryCallback = dyn Fn() -> bool + Send + Sync;

/// Called (without the allocator lock) before an out-of-memory error is
/// returned, with `(device, tried_to_allocate, total_or_allowed, free)`
/// (PyTorch's `OutOfMemoryObserver`).
pub type OomObserver = dyn Fn(i8, u64, u64, u64) + Send + Sync;

/// A block's id in the [`Arena`]: its slot and the slot's generation when
/// the block was inserted (ids are never reused: a removed block's slot
/// gets a new generation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct BlockId {
    slot: usize,
    generation: u64,
}

impl std::fmt::Display for BlockId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}v{}", self.slot, self.generation)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum PoolKind {
    #[default]
    Small = 0,
    Large = 1,
}

impl PoolKind {
    fn stat_types(self) -> [usize; 2] {
        match self {
            PoolKind::Small => [0, 1],
            PoolKind::Large => [0, 2],
        }
    }
}

fn inc(arr: &mut StatArray, kind: PoolKind, amount: u64) {
    for t in kind.stat_types() {
        arr[t].increase(amount);
    }
}

fn dec(arr: &mut StatArray, kind: PoolKind, amount: u64) {
    for t in kind.stat_types() {
        arr[t].decrease(amount);
    }
}

#[derive(Debug, Clone, Default)]
struct Block {
    stream: StreamId,
    stream_uses: BTreeSet<StreamId>,
    size: u64,
    requested_size: u64,
    pool: PoolKind,
    ptr: u64,
    allocated: bool,
    mapped: bool,
    prev: Option<BlockId>,
    next: Option<BlockId>,
    event_count: u32,
    gc_count_base: u64,
    expandable: Option<usize>,
}

impl Block {
    fn new(stream: StreamId, size: u64, pool: PoolKind, ptr: u64) -> Block {
        Block {
            stream,
            stream_uses: BTreeSet::new(),
            size,
            requested_size: 0,
            pool,
            ptr,
            allocated: false,
            mapped: true,
            prev: None,
            next: None,
            event_count: 0,
            gc_count_base: 0,
            expandable: None,
        }
    }

    fn is_split(&self) -> bool {
        self.prev.is_some() || self.next.is_some()
    }

    /// Free, with no pending events or stream uses: may be merged or reused.
    fn is_free(&self) -> bool {
        !self.allocated && self.event_count == 0 && self.stream_uses.is_empty()
    }

    fn is_active(&self) -> bool {
        !self.is_free()
    }
}

/// Generational slot storage for blocks.
///
/// A [`BlockId`] is a slot index plus the slot's generation at insertion;
/// removing a block bumps its slot's generation, so an id kept past its
/// block's removal (a stale id) never names the slot's next block: `get`
/// returns `None` for it, and indexing with it (an allocator bug: ids held
/// in `State` always name live blocks, `validate` checks it after every
/// randomized step) does not panic but reads or writes a scratch block and
/// poisons the allocator, whose public operations then return
/// [`CachingAllocatorError::Internal`] instead of continuing on a corrupt
/// state.
#[derive(Debug, Default)]
struct Arena {
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// The first stale id used for indexing, if any.
    stale: Cell<Option<BlockId>>,
    /// What a stale index reads and writes (reset on each use).
    scratch: Block,
}

#[derive(Debug, Default)]
struct Slot {
    generation: u64,
    block: Option<Block>,
}

impl Arena {
    fn insert(&mut self, b: Block) -> BlockId {
        match self.free.pop() {
            Some(slot) => {
                let s = &mut self.slots[slot];
                s.block = Some(b);
                BlockId {
                    slot,
                    generation: s.generation,
                }
            }
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    block: Some(b),
                });
                BlockId {
                    slot: self.slots.len() - 1,
                    generation: 0,
                }
            }
        }
    }

    fn remove(&mut self, id: BlockId) -> Option<Block> {
        let s = self.slots.get_mut(id.slot)?;
        if s.generation != id.generation {
            return None;
        }
        let b = s.block.take()?;
        s.generation = s.generation.wrapping_add(1);
        self.free.push(id.slot);
        Some(b)
    }

    fn get(&self, id: BlockId) -> Option<&Block> {
        let s = self.slots.get(id.slot)?;
        if s.generation != id.generation {
            return None;
        }
        s.block.as_ref()
    }

    fn iter(&self) -> impl Iterator<Item = (BlockId, &Block)> {
        self.slots.iter().enumerate().filter_map(|(slot, s)| {
            s.block.as_ref().map(|b| {
                (
                    BlockId {
                        slot,
                        generation: s.generation,
                    },
                    b,
                )
            })
        })
    }

    fn note_stale(&self, id: BlockId) {
        if self.stale.get().is_none() {
            tracing::error!(target: "alloc_cuda", "alloc-cuda internal error: stale block id {id}");
            self.stale.set(Some(id));
        }
    }

    /// The first stale id used, if any (the allocator is then poisoned).
    fn stale(&self) -> Option<BlockId> {
        self.stale.get()
    }
}

impl std::ops::Index<BlockId> for Arena {
    type Output = Block;
    fn index(&self, id: BlockId) -> &Block {
        match self.get(id) {
            Some(b) => b,
            None => {
                self.note_stale(id);
                &self.scratch
            }
        }
    }
}

impl std::ops::IndexMut<BlockId> for Arena {
    fn index_mut(&mut self, id: BlockId) -> &mut Block {
        let Arena {
            slots,
            stale,
            scratch,
            ..
        } = self;
        if let Some(Slot {
            generation,
            block: Some(b),
        }) = slots.get_mut(id.slot)
        {
            if *generation == id.generation {
                return b;
            }
        }
        if stale.get().is_none() {
            tracing::error!(target: "alloc_cuda", "alloc-cuda internal error: stale block id {id}");
            stale.set(Some(id));
        }
        *scratch = Block::default();
        scratch
    }
}

type SizeKey = (StreamId, u64, u64);

#[derive(Debug)]
struct BlockPool {
    /// Free mapped blocks by (stream, size, address).
    blocks: BTreeMap<SizeKey, BlockId>,
    /// Unmapped blocks of expandable segments by (stream, address).
    unmapped: BTreeMap<(StreamId, u64), BlockId>,
    is_small: bool,
    /// Free-block searches so far (the GC "clock").
    get_free_blocks_call_count: u64,
}

impl BlockPool {
    fn new(is_small: bool) -> BlockPool {
        BlockPool {
            blocks: BTreeMap::new(),
            unmapped: BTreeMap::new(),
            is_small,
            get_free_blocks_call_count: 0,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct AllocParams {
    size: u64,
    stream: StreamId,
    pool: PoolKind,
    alloc_size: u64,
    block: Option<BlockId>,
}

#[derive(Debug)]
struct State {
    config: CachingAllocatorConfig,
    expandable_segments: bool,
    stats: DeviceStats,
    blocks: Arena,
    pools: [BlockPool; 2],
    /// Allocated blocks by address (PyTorch's `allocated_blocks` map).
    allocated: HashMap<u64, BlockId>,
    /// Outstanding (event, block) pairs per stream, in recording order.
    cuda_events: BTreeMap<StreamId, VecDeque<(EventId, BlockId)>>,
    /// Created events not in use (PyTorch pools events per device).
    event_pool: Vec<EventId>,
    total_allocated_memory: u64,
    /// Whether the device was synchronized since the current release batch
    /// began (see [`State::begin_release_batch`]).
    release_synced: bool,
    allowed_memory_maximum: u64,
    set_fraction: bool,
    segments: Vec<Option<ExpandableSegment>>,
    /// Allocation history, when recording (`None`, the default, costs each
    /// hook one branch).
    history: Option<Box<HistoryRecorder>>,
}

/// PyTorch's CUDA caching allocator for one device, over a [`RawDevice`].
///
/// Thread-safe: one lock guards the allocator's state (PyTorch uses one
/// recursive mutex per device); device calls are made under it, except
/// `malloc` when `release_lock_on_cudamalloc` is set and the free-memory
/// callbacks and out-of-memory observers, which run unlocked.
///
/// ```
/// use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
/// let alloc = CachingAllocator::new(FakeDevice::new(1 << 30), 0, CachingAllocatorConfig::default());
/// let s = StreamId::DEFAULT;
/// let a = alloc.malloc(1_500_000, s)?; // 1.5 MB -> a 20 MiB segment, split
/// assert_eq!(alloc.memory_reserved(), 20 << 20);
/// assert_eq!(alloc.memory_allocated(), 1_500_160); // rounded to 512
/// // SAFETY: `a` came from this allocator and nothing uses it any more.
/// unsafe { alloc.free(a)? };
/// assert_eq!(alloc.memory_allocated(), 0);
/// assert_eq!(alloc.memory_reserved(), 20 << 20); // cached
/// alloc.empty_cache()?;
/// assert_eq!(alloc.memory_reserved(), 0);
/// # Ok::<(), alloc_cuda::CachingAllocatorError>(())
/// ```
pub struct CachingAllocator<D: RawDevice> {
    device: D,
    index: i8,
    state: Mutex<State>,
    callbacks: Mutex<Vec<Arc<FreeMemoryCallback>>>,
    oom_observers: Mutex<Vec<Arc<OomObserver>>>,
}

impl<D: RawDevice> std::fmt::Debug for CachingAllocator<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachingAllocator")
            .field("device_index", &self.index)
            .finish_non_exhaustive()
    }
}

impl<D: RawDevice> CachingAllocator<D> {
    /// An allocator for `device`, known to users as CUDA device `index`.
    ///
    /// If `config` asks for expandable segments and the device has no VMM
    /// support, ordinary segments are used (with a warning), as PyTorch does
    /// on platforms without the driver API.
    pub fn new(device: D, index: i8, config: CachingAllocatorConfig) -> CachingAllocator<D> {
        let expandable = config.expandable_segments() && Self::vmm_usable(&device);
        let stats = DeviceStats {
            max_split_size: i64::try_from(config.max_split_size()).unwrap_or(-1),
            ..DeviceStats::default()
        };
        CachingAllocator {
            device,
            index,
            state: Mutex::new(State {
                config,
                expandable_segments: expandable,
                stats,
                blocks: Arena::default(),
                pools: [BlockPool::new(true), BlockPool::new(false)],
                allocated: HashMap::new(),
                cuda_events: BTreeMap::new(),
                event_pool: Vec::new(),
                total_allocated_memory: 0,
                release_synced: false,
                allowed_memory_maximum: 0,
                set_fraction: false,
                segments: Vec::new(),
                history: None,
            }),
            callbacks: Mutex::new(Vec::new()),
            oom_observers: Mutex::new(Vec::new()),
        }
    }

    fn vmm_usable(device: &D) -> bool {
        let ok = device.supports_vmm();
        if !ok {
            tracing::warn!(
                target: "alloc_cuda",
                "expandable_segments not supported on this platform; using ordinary segments"
            );
        }
        ok
    }

    /// The device.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// The CUDA device index this allocator serves.
    pub fn device_index(&self) -> i8 {
        self.index
    }

    /// A copy of the configuration.
    pub fn config(&self) -> CachingAllocatorConfig {
        self.state.lock().config.clone()
    }

    /// Turns expandable segments on or off for new allocations (PyTorch
    /// allows this at run time; existing expandable blocks stay, and are only
    /// reused while the setting is on). Turning it on has no effect on a
    /// device without VMM support.
    pub fn set_expandable_segments(&self, on: bool) {
        let usable = on && Self::vmm_usable(&self.device);
        self.state.lock().expandable_segments = usable;
    }

    /// Whether new allocations use expandable segments.
    pub fn expandable_segments(&self) -> bool {
        self.state.lock().expandable_segments
    }

    /// Allocates `size` bytes usable on `stream` (PyTorch's
    /// `DeviceCachingAllocator::malloc`; a size of 0 is rounded to 512 like
    /// any other).
    ///
    /// The memory may be used on `stream` right away; using it on another
    /// stream needs [`record_stream`](CachingAllocator::record_stream).
    pub fn malloc(&self, size: u64, stream: StreamId) -> Result<DevicePtr, CachingAllocatorError> {
        if size >= ONE_EXABYTE {
            return Err(CudaOutOfMemory {
                tried_to_allocate: size,
                device: self.index,
                total_capacity: 0,
                free: 0,
                allowed: None,
                process_info: String::new(),
                allocated: 0,
                reserved: 0,
                exceeds_one_exabyte: true,
            }
            .into());
        }
        let dev = &self.device;
        let mut g = self.state.lock();
        g.check_poisoned()?;
        g.process_events(dev)?;
        let rounded = round_size(size, &g.config);
        let pool = if rounded <= SMALL_SIZE {
            PoolKind::Small
        } else {
            PoolKind::Large
        };
        let mut p = AllocParams {
            size: rounded,
            stream,
            pool,
            alloc_size: get_allocation_size(rounded),
            block: None,
        };

        let mut found = g.get_free_block(&mut p);
        if !found && self.trigger_free_memory_callbacks(&mut g) {
            found = g.get_free_block(&mut p);
        }
        if !found {
            if g.set_fraction && g.config.garbage_collection_threshold() > 0.0 {
                g.garbage_collect_cached_blocks(dev)?;
            }
            found = self.alloc_block(&mut g, &mut p, false)?;
            if !found && g.release_available_cached_blocks(dev, &p)? {
                found = self.alloc_block(&mut g, &mut p, false)?;
            }
            if !found && g.release_cached_blocks(dev)? {
                found = self.alloc_block(&mut g, &mut p, true)?;
            }
        }
        let block = match (found, p.block) {
            (true, Some(b)) => b,
            _ => return Err(self.out_of_memory(g, &p)?.into()),
        };
        let split = g.should_split(block, p.size);
        let ptr = g.alloc_found_block(&p, block, size, split);
        g.check_poisoned()?;
        Ok(ptr)
    }

    fn out_of_memory(
        &self,
        mut g: MutexGuard<'_, State>,
        p: &AllocParams,
    ) -> Result<CudaOutOfMemory, CachingAllocatorError> {
        let (free, total) = self.device.mem_get_info()?;
        g.stats.num_ooms += 1;
        if let Some(h) = g.history.as_mut() {
            let stack = h.capture_alloc();
            h.record(TraceAction::Oom, free, p.size, p.stream.0, stack);
        }
        let allowed = g.set_fraction.then_some(g.allowed_memory_maximum);
        let err = CudaOutOfMemory {
            tried_to_allocate: p.alloc_size,
            device: self.index,
            total_capacity: total,
            free,
            allowed,
            process_info: self.device.process_memory_report(),
            allocated: u64::try_from(g.stats.allocated_bytes[0].current).unwrap_or(0),
            reserved: u64::try_from(g.stats.reserved_bytes[0].current).unwrap_or(0),
            exceeds_one_exabyte: false,
        };
        drop(g);
        tracing::warn!(
            target: "alloc_cuda",
            device = self.index,
            requested = p.size,
            stream = p.stream.0,
            "{err}"
        );
        let observers: Vec<Arc<OomObserver>> = self.oom_observers.lock().clone();
        for obs in observers {
            obs(self.index, p.alloc_size, allowed.unwrap_or(total), free);
        }
        Ok(err)
    }

    fn trigger_free_memory_callbacks(&self, g: &mut MutexGuard<'_, State>) -> bool {
        let callbacks: Vec<Arc<FreeMemoryCallback>> = self.callbacks.lock().clone();
        if callbacks.is_empty() {
            return false;
        }
        MutexGuard::unlocked(g, || {
            let mut freed = false;
            for cb in callbacks {
                freed |= cb();
            }
            freed
        })
    }

    /// Gets a new segment (or maps more of an expandable one) for `p`.
    fn alloc_block(
        &self,
        g: &mut MutexGuard<'_, State>,
        p: &mut AllocParams,
        is_retry: bool,
    ) -> Result<bool, DeviceError> {
        let size = p.alloc_size;
        if is_retry {
            g.stats.num_alloc_retries += 1;
        }
        if g.set_fraction
            && g.total_allocated_memory.saturating_add(size) > g.allowed_memory_maximum
        {
            return Ok(false);
        }
        if g.expandable_segments {
            let b = g.try_allocate_expandable_block(&self.device, p.stream, p.pool, p.size)?;
            p.block = b;
            return Ok(b.is_some());
        }
        let res = if g.config.release_lock_on_cudamalloc() {
            MutexGuard::unlocked(g, || self.device.malloc(size))
        } else {
            self.device.malloc(size)
        };
        let ptr = match res {
            Ok(ptr) if !ptr.is_null() => ptr,
            Ok(_) => {
                return Err(DeviceError::InvalidValue(
                    "the device returned a null pointer".into(),
                ))
            }
            Err(DeviceError::OutOfMemory) => return Ok(false),
            Err(e) => return Err(e),
        };
        g.total_allocated_memory += size;
        let id = g
            .blocks
            .insert(Block::new(p.stream, size, p.pool, ptr.addr()));
        inc(&mut g.stats.segment, p.pool, 1);
        inc(&mut g.stats.reserved_bytes, p.pool, size);
        if size >= g.config.max_split_size() {
            g.stats.oversize_segments.increase(1);
        }
        g.stats.num_device_alloc += 1;
        if let Some(h) = g.history.as_mut() {
            h.record_segment(TraceAction::SegmentAlloc, ptr.addr(), size, p.stream.0);
        }
        tracing::debug!(
            target: "alloc_cuda",
            device = self.index,
            address = ptr.addr(),
            size,
            stream = p.stream.0,
            "segment allocated"
        );
        p.block = Some(id);
        Ok(true)
    }

    /// Frees memory from [`malloc`](CachingAllocator::malloc) (PyTorch's
    /// `free`): the block returns to its pool at once (coalescing with free
    /// neighbours), or, if [`record_stream`](CachingAllocator::record_stream)
    /// added other streams, once events recorded now on each of them have
    /// completed.
    ///
    /// # Safety
    ///
    /// `ptr` must not be used (by the host or by work enqueued after this
    /// call) once it is freed, and it must not be owned by a `DataPtr` from
    /// [`CachingDeviceAllocator`](crate::CachingDeviceAllocator) (whose
    /// deleter frees it). Work already enqueued on the allocation stream may
    /// still run: reuse is stream-ordered.
    pub unsafe fn free(&self, ptr: DevicePtr) -> Result<(), CachingAllocatorError> {
        let mut g = self.state.lock();
        g.check_poisoned()?;
        let id = g
            .allocated
            .remove(&ptr.addr())
            .ok_or(CachingAllocatorError::InvalidDevicePointer(ptr))?;
        let (size, kind, has_uses) = {
            let b = &mut g.blocks[id];
            b.allocated = false;
            (b.size, b.pool, !b.stream_uses.is_empty())
        };
        let st = &mut *g;
        if let Some(h) = st.history.as_mut() {
            let b = &st.blocks[id];
            h.record_free_requested(b.ptr, b.requested_size, b.stream.0);
        }
        dec(&mut g.stats.allocation, kind, 1);
        dec(&mut g.stats.allocated_bytes, kind, size);
        if size >= g.config.max_split_size() {
            g.stats.oversize_allocations.decrease(1);
        }
        if has_uses {
            g.insert_events(&self.device, id)?;
        } else {
            g.free_block(id);
        }
        g.check_poisoned()?;
        Ok(())
    }

    /// Marks the allocation at `ptr` as used by `stream` (PyTorch's
    /// `recordStream`): when it is freed, an event is recorded on `stream`
    /// and the block is reused only after the event completes. Recording
    /// the allocation stream itself does nothing.
    pub fn record_stream(
        &self,
        ptr: DevicePtr,
        stream: StreamId,
    ) -> Result<(), CachingAllocatorError> {
        let mut g = self.state.lock();
        g.check_poisoned()?;
        let id = *g
            .allocated
            .get(&ptr.addr())
            .ok_or(CachingAllocatorError::InvalidDevicePointer(ptr))?;
        let b = &mut g.blocks[id];
        if b.stream != stream {
            b.stream_uses.insert(stream);
        }
        g.check_poisoned()?;
        Ok(())
    }

    /// Releases every cached block that is a whole segment back to the
    /// device, after synchronizing all pending events (PyTorch's
    /// `emptyCache`). Free pages of expandable segments are unmapped.
    pub fn empty_cache(&self) -> Result<(), CachingAllocatorError> {
        let mut g = self.state.lock();
        g.check_poisoned()?;
        let before = g.total_allocated_memory;
        g.release_cached_blocks(&self.device)?;
        tracing::info!(
            target: "alloc_cuda",
            device = self.index,
            released = before - g.total_allocated_memory,
            reserved = g.total_allocated_memory,
            "cache emptied"
        );
        g.check_poisoned()?;
        Ok(())
    }

    /// Limits this process to `fraction` of the device's total memory
    /// (PyTorch's `setMemoryFraction`): new segments that would take the
    /// reserved total past `fraction × total` fail (and trigger the usual
    /// retries), and the garbage-collection threshold becomes active.
    pub fn set_memory_fraction(&self, fraction: f64) -> Result<(), CachingAllocatorError> {
        if !(0.0..=1.0).contains(&fraction) {
            return Err(CachingAllocatorError::InvalidFraction(fraction));
        }
        let (_, total) = self.device.mem_get_info()?;
        let mut g = self.state.lock();
        g.allowed_memory_maximum = (fraction * total as f64) as u64;
        g.set_fraction = true;
        Ok(())
    }

    /// The memory-fraction limit in bytes, if one is set.
    pub fn allowed_memory_maximum(&self) -> Option<u64> {
        let g = self.state.lock();
        g.set_fraction.then_some(g.allowed_memory_maximum)
    }

    /// Registers a [`FreeMemoryCallback`].
    pub fn add_free_memory_callback(&self, callback: Arc<FreeMemoryCallback>) {
        self.callbacks.lock().push(callback);
    }

    /// Registers an [`OomObserver`].
    pub fn attach_oom_observer(&self, observer: Arc<OomObserver>) {
        self.oom_observers.lock().push(observer);
    }

    /// A copy of the statistics.
    pub fn stats(&self) -> DeviceStats {
        self.state.lock().stats.clone()
    }

    /// `allocated_bytes.all.current` (`torch.cuda.memory_allocated()`).
    pub fn memory_allocated(&self) -> u64 {
        u64::try_from(self.state.lock().stats.allocated_bytes[0].current).unwrap_or(0)
    }

    /// `reserved_bytes.all.current` (`torch.cuda.memory_reserved()`).
    pub fn memory_reserved(&self) -> u64 {
        u64::try_from(self.state.lock().stats.reserved_bytes[0].current).unwrap_or(0)
    }

    /// Sets every peak to the current value.
    pub fn reset_peak_stats(&self) {
        let mut g = self.state.lock();
        for arr in g.stats.arrays_mut() {
            for s in arr.iter_mut() {
                s.reset_peak();
            }
        }
        g.stats.oversize_allocations.reset_peak();
        g.stats.oversize_segments.reset_peak();
    }

    /// Zeroes every `allocated`/`freed` total and the counters
    /// (`num_alloc_retries`, `num_ooms`, `num_sync_all_streams`,
    /// `num_device_alloc`, `num_device_free`).
    pub fn reset_accumulated_stats(&self) {
        let mut g = self.state.lock();
        for arr in g.stats.arrays_mut() {
            for s in arr.iter_mut() {
                s.reset_accumulated();
            }
        }
        g.stats.num_alloc_retries = 0;
        g.stats.num_ooms = 0;
        g.stats.num_sync_all_streams = 0;
        g.stats.num_device_alloc = 0;
        g.stats.num_device_free = 0;
        g.stats.oversize_allocations.reset_accumulated();
        g.stats.oversize_segments.reset_accumulated();
    }

    /// The largest free block PyTorch's `cacheInfo` would report: the
    /// device's free memory or the largest cached block, whichever is larger.
    ///
    /// ```
    /// use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, FakeDevice};
    /// let alloc = CachingAllocator::new(FakeDevice::new(1 << 30), 0, CachingAllocatorConfig::default());
    /// assert_eq!(alloc.cache_info()?, 1 << 30); // nothing cached: the free memory
    /// # Ok::<(), alloc_cuda::CachingAllocatorError>(())
    /// ```
    pub fn cache_info(&self) -> Result<u64, CachingAllocatorError> {
        let (free, _) = self.device.mem_get_info()?;
        let g = self.state.lock();
        let cached = g
            .pools
            .iter()
            .flat_map(|p| p.blocks.keys().map(|k| k.1))
            .max()
            .unwrap_or(0);
        Ok(free.max(cached))
    }

    /// Every segment with its blocks, by address (the `"segments"` list of
    /// `torch.cuda.memory_snapshot()`; an expandable segment appears once
    /// per contiguous mapped range).
    pub fn snapshot(&self) -> Vec<SegmentSnapshot> {
        let g = self.state.lock();
        g.snapshot(self.index)
    }

    /// [`snapshot`](CachingAllocator::snapshot) as JSON, in the shape of
    /// the `"segments"` list of `torch.cuda.memory_snapshot()` (feature
    /// `snapshot-json`, on by default).
    ///
    /// ```
    /// use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
    /// let a = CachingAllocator::new(FakeDevice::new(1 << 30), 0, CachingAllocatorConfig::default());
    /// let _p = a.malloc(1000, StreamId::DEFAULT)?;
    /// let json = a.snapshot_json().unwrap();
    /// assert!(json.contains(r#""segment_type":"small""#));
    /// # Ok::<(), alloc_cuda::CachingAllocatorError>(())
    /// ```
    #[cfg(feature = "snapshot-json")]
    #[cfg_attr(docsrs, doc(cfg(feature = "snapshot-json")))]
    pub fn snapshot_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(&self.snapshot())
    }

    /// Starts (or reconfigures) allocation-history recording with
    /// `Some(config)`, or stops it and drops what was recorded with `None`
    /// (PyTorch's `torch.cuda.memory._record_memory_history`). Off by
    /// default; while off, each alloc and free pays one branch.
    ///
    /// ```
    /// use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
    /// use c10_storage::history::{HistoryConfig, TraceAction};
    /// let a = CachingAllocator::new(FakeDevice::new(1 << 30), 0, CachingAllocatorConfig::default());
    /// a.record_memory_history(Some(HistoryConfig { stacks: false, ..HistoryConfig::default() }));
    /// let p = a.malloc(1000, StreamId::DEFAULT)?;
    /// // SAFETY: `p` is not used any more.
    /// unsafe { a.free(p)? };
    /// let snap = a.memory_snapshot();
    /// let actions: Vec<&str> = snap.device_trace.iter().map(|e| e.action.as_str()).collect();
    /// assert_eq!(actions, ["segment_alloc", "alloc", "free_requested", "free_completed", "snapshot"]);
    /// assert_eq!(snap.device_trace[1].size, 1000);
    /// a.record_memory_history(None);
    /// assert!(a.memory_snapshot().device_trace.is_empty());
    /// # Ok::<(), alloc_cuda::CachingAllocatorError>(())
    /// ```
    pub fn record_memory_history(&self, config: Option<HistoryConfig>) {
        let mut g = self.state.lock();
        match (config, g.history.as_mut()) {
            (None, _) => g.history = None,
            (Some(c), Some(h)) => h.reconfigure(c),
            (Some(c), None) => g.history = Some(Box::new(HistoryRecorder::new(c))),
        }
    }

    /// The recording configuration, if history is being recorded.
    pub fn history_config(&self) -> Option<HistoryConfig> {
        self.state.lock().history.as_ref().map(|h| h.config())
    }

    /// Segments with their blocks, the recorded trace and the allocator
    /// settings: what `torch.cuda.memory._snapshot()` returns for one
    /// device (torchcore-memviz turns it into that dict and its pickle).
    /// When recording, a `snapshot` entry is appended to the trace first,
    /// and live blocks and segments carry their allocation stacks (resolved
    /// here, after the allocator lock is released).
    pub fn memory_snapshot(&self) -> MemorySnapshot {
        let (mut segments, block_stacks, segment_stacks, device_trace, config) = {
            let mut g = self.state.lock();
            let active = u64::try_from(g.stats.active_bytes[0].current).unwrap_or(0);
            if let Some(h) = g.history.as_mut() {
                h.record(TraceAction::Snapshot, 0, active, 0, None);
            }
            let segments = g.snapshot(self.index);
            let mut block_stacks = Vec::new();
            let mut segment_stacks = Vec::new();
            if let Some(h) = g.history.as_ref() {
                for (si, seg) in segments.iter().enumerate() {
                    if let Some(st) = h.segment_stack(seg.address) {
                        segment_stacks.push((si, st));
                    }
                    for (bi, b) in seg.blocks.iter().enumerate() {
                        if b.state == BlockState::Inactive {
                            continue;
                        }
                        if let Some(st) = h.block_stack(b.address) {
                            block_stacks.push((si, bi, st));
                        }
                    }
                }
            }
            let trace = g.history.as_ref().map(|h| h.entries()).unwrap_or_default();
            (
                segments,
                block_stacks,
                segment_stacks,
                trace,
                g.config.clone(),
            )
        };
        let to_frames = |st: &c10_storage::history::CapturedStack| {
            st.frames()
                .iter()
                .map(|f| crate::snapshot::Frame {
                    filename: f.filename.clone(),
                    line: f.line,
                    name: f.name.clone(),
                })
                .collect::<Vec<_>>()
        };
        for (si, st) in segment_stacks {
            if let Some(seg) = segments.get_mut(si) {
                seg.frames = to_frames(&st);
            }
        }
        for (si, bi, st) in block_stacks {
            if let Some(b) = segments.get_mut(si).and_then(|s| s.blocks.get_mut(bi)) {
                b.frames = to_frames(&st);
            }
        }
        MemorySnapshot {
            device: self.index,
            segments,
            device_trace,
            config,
        }
    }

    /// Checks every internal invariant and returns a description of the
    /// first violation: blocks tile their segments with consistent links,
    /// segments do not overlap, no two free neighbours are left unmerged,
    /// every free block is in exactly one pool under the right key, every
    /// pending block has as many queued events as its count, and every
    /// statistic's current value equals a recount. Meant for tests and
    /// fuzzers; it walks everything.
    pub fn validate(&self) -> Result<(), String> {
        self.state.lock().validate()
    }
}

impl<D: RawDevice> Drop for CachingAllocator<D> {
    fn drop(&mut self) {
        let dev = &self.device;
        let st = self.state.get_mut();
        // Give cached memory back; segments with live allocations (raw
        // pointers still held by users) are leaked rather than freed under
        // them.
        if let Err(e) = st
            .release_cached_blocks(dev)
            .and_then(|_| st.release_unmapped_segments(dev))
        {
            tracing::error!(target: "alloc_cuda", "releasing cached blocks on drop failed: {e}");
        }
        for ev in st.event_pool.drain(..) {
            if let Err(e) = dev.destroy_event(ev) {
                tracing::error!(target: "alloc_cuda", "destroying an event on drop failed: {e}");
            }
        }
        if st.total_allocated_memory > 0 {
            tracing::warn!(
                target: "alloc_cuda",
                device = self.index,
                leaked = st.total_allocated_memory,
                "caching allocator dropped with live allocations; their segments are leaked"
            );
        }
    }
}

impl State {
    fn key(&self, id: BlockId) -> SizeKey {
        let b = &self.blocks[id];
        (b.stream, b.size, b.ptr)
    }

    fn pool(&self, kind: PoolKind) -> &BlockPool {
        &self.pools[kind as usize]
    }

    fn pool_mut(&mut self, kind: PoolKind) -> &mut BlockPool {
        &mut self.pools[kind as usize]
    }

    /// PyTorch's `insert_into_blocks`: also stamps the GC clock.
    fn insert_into_blocks(&mut self, id: BlockId) {
        let key = self.key(id);
        let kind = self.blocks[id].pool;
        let clock = self.pool(kind).get_free_blocks_call_count;
        self.blocks[id].gc_count_base = clock;
        self.pool_mut(kind).blocks.insert(key, id);
    }

    fn erase_from_blocks(&mut self, id: BlockId) {
        let key = self.key(id);
        let kind = self.blocks[id].pool;
        self.pool_mut(kind).blocks.remove(&key);
    }

    fn gc_count(&self, id: BlockId) -> u64 {
        let b = &self.blocks[id];
        self.pool(b.pool)
            .get_free_blocks_call_count
            .saturating_sub(b.gc_count_base)
    }

    fn max_split_size(&self) -> u64 {
        self.config.max_split_size()
    }

    // ---- events ----------------------------------------------------------

    fn process_events<D: RawDevice>(&mut self, dev: &D) -> Result<(), DeviceError> {
        let streams: Vec<StreamId> = self.cuda_events.keys().copied().collect();
        for s in streams {
            while let Some(&(ev, id)) = self.cuda_events.get(&s).and_then(VecDeque::front) {
                if !dev.query_event(ev)? {
                    break;
                }
                if let Some(q) = self.cuda_events.get_mut(&s) {
                    q.pop_front();
                }
                self.event_pool.push(ev);
                self.event_done(id);
            }
            if self.cuda_events.get(&s).is_some_and(VecDeque::is_empty) {
                self.cuda_events.remove(&s);
            }
        }
        Ok(())
    }

    fn event_done(&mut self, id: BlockId) {
        let b = &mut self.blocks[id];
        b.event_count = b.event_count.saturating_sub(1);
        if b.event_count == 0 {
            self.free_block(id);
        }
    }

    fn insert_events<D: RawDevice>(&mut self, dev: &D, id: BlockId) -> Result<(), DeviceError> {
        let streams = std::mem::take(&mut self.blocks[id].stream_uses);
        let mut pending: Vec<StreamId> = streams.into_iter().collect();
        while let Some(&s) = pending.first() {
            let ev = match self.event_pool.pop() {
                Some(ev) => ev,
                None => match dev.create_event() {
                    Ok(ev) => ev,
                    Err(e) => {
                        self.blocks[id].stream_uses.extend(pending);
                        return Err(e);
                    }
                },
            };
            if let Err(e) = dev.record_event(ev, s) {
                self.event_pool.push(ev);
                self.blocks[id].stream_uses.extend(pending);
                return Err(e);
            }
            pending.remove(0);
            self.blocks[id].event_count += 1;
            self.cuda_events.entry(s).or_default().push_back((ev, id));
        }
        Ok(())
    }

    fn synchronize_and_free_events<D: RawDevice>(&mut self, dev: &D) -> Result<(), DeviceError> {
        self.stats.num_sync_all_streams += 1;
        let streams: Vec<StreamId> = self.cuda_events.keys().copied().collect();
        for s in streams {
            while let Some(&(ev, id)) = self.cuda_events.get(&s).and_then(VecDeque::front) {
                dev.synchronize_event(ev)?;
                if let Some(q) = self.cuda_events.get_mut(&s) {
                    q.pop_front();
                }
                self.event_pool.push(ev);
                self.event_done(id);
            }
            self.cuda_events.remove(&s);
        }
        Ok(())
    }

    // ---- finding, splitting, freeing --------------------------------------

    fn get_free_block(&mut self, p: &mut AllocParams) -> bool {
        let gc_on = self.set_fraction && self.config.garbage_collection_threshold() > 0.0;
        let max_split = self.max_split_size();
        let non_split = self.config.max_non_split_rounding_size();
        let expandable_on = self.expandable_segments;
        let blocks = &self.blocks;
        let pool = &mut self.pools[p.pool as usize];
        if gc_on {
            pool.get_free_blocks_call_count += 1;
        }
        let mut it = pool
            .blocks
            .range((p.stream, p.size, 0)..)
            .take_while(|(k, _)| k.0 == p.stream)
            .map(|(_, &id)| id)
            .peekable();
        let Some(mut cur) = it.next() else {
            return false;
        };
        if blocks[cur].expandable.is_some() {
            if expandable_on {
                // Compare expandable blocks by the size they could grow to.
                let expandable_size = |id: BlockId| {
                    let b = &blocks[id];
                    b.size
                        + b.next
                            .map(|n| &blocks[n])
                            .filter(|n| !n.mapped)
                            .map_or(0, |n| n.size)
                };
                while blocks[cur].expandable.is_some() {
                    match it.peek() {
                        Some(&next) if expandable_size(next) < expandable_size(cur) => {
                            cur = next;
                            it.next();
                        }
                        _ => break,
                    }
                }
            } else {
                // Expandable segments were turned off: skip their blocks.
                match it.find(|&id| blocks[id].expandable.is_none()) {
                    Some(id) => cur = id,
                    None => return false,
                }
            }
        }
        let bsize = blocks[cur].size;
        // Do not return an oversize block for a smaller request.
        if p.size < max_split && bsize >= max_split {
            return false;
        }
        // Reuse an oversize block only within max_non_split_rounding.
        if p.size >= max_split && bsize >= p.size.saturating_add(non_split) {
            return false;
        }
        let key = (blocks[cur].stream, bsize, blocks[cur].ptr);
        pool.blocks.remove(&key);
        p.block = Some(cur);
        true
    }

    fn should_split(&self, id: BlockId, size: u64) -> bool {
        let b = &self.blocks[id];
        let remaining = b.size - size;
        if b.pool == PoolKind::Small || self.expandable_segments {
            remaining >= MIN_BLOCK_SIZE
        } else {
            size < self.max_split_size() && remaining > SMALL_SIZE
        }
    }

    fn alloc_found_block(
        &mut self,
        p: &AllocParams,
        found: BlockId,
        orig_size: u64,
        split: bool,
    ) -> DevicePtr {
        let size = p.size;
        let kind = p.pool;
        let mut id = found;
        let already_split = self.blocks[id].is_split();
        let expandable = self.blocks[id].expandable.is_some();
        if split {
            let remaining = id;
            let (ptr, prev) = {
                let r = &self.blocks[remaining];
                (r.ptr, r.prev)
            };
            let mut nb = Block::new(p.stream, size, kind, ptr);
            nb.expandable = self.blocks[remaining].expandable;
            nb.prev = prev;
            nb.next = Some(remaining);
            let new_id = self.blocks.insert(nb);
            if let Some(pr) = prev {
                self.blocks[pr].next = Some(new_id);
            }
            let rem_size = {
                let r = &mut self.blocks[remaining];
                r.prev = Some(new_id);
                r.ptr += size;
                r.size -= size;
                r.size
            };
            self.insert_into_blocks(remaining);
            if already_split && !expandable {
                // An already-split inactive block shrinks by `size`.
                dec(&mut self.stats.inactive_split_bytes, kind, size);
            } else if !expandable {
                // A new inactive split block appears.
                inc(&mut self.stats.inactive_split_bytes, kind, rem_size);
                inc(&mut self.stats.inactive_split, kind, 1);
            }
            id = new_id;
        } else if already_split && !expandable {
            // An already-split block becomes active.
            let bsize = self.blocks[id].size;
            dec(&mut self.stats.inactive_split_bytes, kind, bsize);
            dec(&mut self.stats.inactive_split, kind, 1);
        }
        let (ptr, bsize) = {
            let b = &mut self.blocks[id];
            b.allocated = true;
            b.requested_size = orig_size;
            (b.ptr, b.size)
        };
        self.allocated.insert(ptr, id);
        if let Some(h) = self.history.as_mut() {
            h.record_alloc(ptr, orig_size, p.stream.0);
        }
        inc(&mut self.stats.allocation, kind, 1);
        inc(&mut self.stats.allocated_bytes, kind, bsize);
        inc(&mut self.stats.active, kind, 1);
        inc(&mut self.stats.active_bytes, kind, bsize);
        inc(&mut self.stats.requested_bytes, kind, orig_size);
        if bsize >= self.max_split_size() {
            self.stats.oversize_allocations.increase(1);
        }
        DevicePtr(ptr)
    }

    /// Moves a block that is no longer in use into its pool, merging it with
    /// free neighbours (PyTorch's `free_block`).
    fn free_block(&mut self, id: BlockId) {
        if let Some(h) = self.history.as_mut() {
            let b = &self.blocks[id];
            h.record_free_completed(b.ptr, b.requested_size, b.stream.0);
        }
        let (orig_size, requested, kind, prev, next, expandable) = {
            let b = &self.blocks[id];
            (
                b.size,
                b.requested_size,
                b.pool,
                b.prev,
                b.next,
                b.expandable.is_some(),
            )
        };
        let mut net_blocks: i64 = 0;
        let mut net_bytes: i64 = 0;
        for cand in [prev, next].into_iter().flatten() {
            let subsumed = self.try_merge_blocks(id, cand);
            if subsumed > 0 {
                net_blocks -= 1;
                net_bytes -= subsumed as i64;
            }
        }
        self.insert_into_blocks(id);
        let (is_split, size) = {
            let b = &self.blocks[id];
            (b.is_split(), b.size)
        };
        if is_split {
            net_blocks += 1;
            net_bytes += size as i64;
        }
        if !expandable {
            let s = &mut self.stats;
            match net_blocks {
                n if n > 0 => inc(&mut s.inactive_split, kind, n as u64),
                n if n < 0 => dec(&mut s.inactive_split, kind, n.unsigned_abs()),
                _ => {}
            }
            match net_bytes {
                n if n > 0 => inc(&mut s.inactive_split_bytes, kind, n as u64),
                n if n < 0 => dec(&mut s.inactive_split_bytes, kind, n.unsigned_abs()),
                _ => {}
            }
        }
        dec(&mut self.stats.active, kind, 1);
        dec(&mut self.stats.active_bytes, kind, orig_size);
        dec(&mut self.stats.requested_bytes, kind, requested);
    }

    /// Merges `src` (a neighbour of `dst`) into `dst` if it is free and in
    /// the same mapped state; returns the bytes subsumed (0 if not merged).
    /// `dst` must not be in a pool set (its key changes).
    fn try_merge_blocks(&mut self, dst: BlockId, src: BlockId) -> u64 {
        {
            let s = &self.blocks[src];
            if !s.is_free() || s.mapped != self.blocks[dst].mapped {
                return 0;
            }
        }
        let kind = self.blocks[src].pool;
        if self.blocks[src].mapped {
            let key = self.key(src);
            self.pool_mut(kind).blocks.remove(&key);
        } else {
            let (st, ptr) = (self.blocks[src].stream, self.blocks[src].ptr);
            self.pool_mut(kind).unmapped.remove(&(st, ptr));
        }
        let Some(s) = self.blocks.remove(src) else {
            return 0;
        };
        let is_prev = self.blocks[dst].prev == Some(src);
        if is_prev {
            let d = &mut self.blocks[dst];
            d.ptr = s.ptr;
            d.prev = s.prev;
            if let Some(p) = s.prev {
                self.blocks[p].next = Some(dst);
            }
        } else {
            self.blocks[dst].next = s.next;
            if let Some(n) = s.next {
                self.blocks[n].prev = Some(dst);
            }
        }
        self.blocks[dst].size += s.size;
        s.size
    }

    // ---- releasing --------------------------------------------------------

    /// Starts a batch of segment releases (`empty_cache`, the out-of-memory
    /// path, garbage collection): the device is synchronized once, before
    /// the batch's first `free`, and not again for the rest of it (PyTorch
    /// synchronizes once before releasing a batch, not per segment). A
    /// batch that frees nothing does not synchronize.
    fn begin_release_batch(&mut self) {
        self.release_synced = false;
    }

    /// `cudaFree`s an unsplit cached block (PyTorch's `release_block`),
    /// synchronizing the device first if this batch has not yet.
    fn release_block<D: RawDevice>(&mut self, dev: &D, id: BlockId) -> Result<(), DeviceError> {
        let (ptr, size, kind, stream) = {
            let b = &self.blocks[id];
            (b.ptr, b.size, b.pool, b.stream)
        };
        if !self.release_synced {
            // A cached block may have been last used by work queued on any
            // stream (its events only cover `record_stream` uses), so no
            // work may still be queued when it goes back to the driver.
            dev.synchronize_device()?;
            self.release_synced = true;
        }
        self.stats.num_device_free += 1;
        // SAFETY: the block is a whole cached segment (unsplit, free, no
        // pending events), so nothing of ours uses it, it came from
        // `malloc` on this device, and the device was synchronized in this
        // release batch, so no queued work uses it.
        unsafe { dev.free(DevicePtr(ptr))? };
        if let Some(h) = self.history.as_mut() {
            h.record_segment(TraceAction::SegmentFree, ptr, size, stream.0);
        }
        self.total_allocated_memory -= size;
        dec(&mut self.stats.segment, kind, 1);
        dec(&mut self.stats.reserved_bytes, kind, size);
        if size >= self.max_split_size() {
            self.stats.oversize_segments.decrease(1);
        }
        self.erase_from_blocks(id);
        self.blocks.remove(id);
        tracing::debug!(
            target: "alloc_cuda",
            address = ptr,
            size,
            stream = stream.0,
            "segment freed"
        );
        Ok(())
    }

    fn releasable(&self, id: BlockId) -> bool {
        let b = &self.blocks[id];
        !b.is_split() && b.expandable.is_none()
    }

    /// Frees one cached oversize block big enough for `p`, or several of
    /// the largest (PyTorch's `release_available_cached_blocks`; only with
    /// `max_split_size` set). Expandable blocks are skipped (#134338).
    fn release_available_cached_blocks<D: RawDevice>(
        &mut self,
        dev: &D,
        p: &AllocParams,
    ) -> Result<bool, DeviceError> {
        let max_split = self.max_split_size();
        if max_split == u64::MAX {
            return Ok(false);
        }
        self.begin_release_batch();
        let key_size = p.size.max(max_split);
        let kind = p.pool;
        let single = self
            .pool(kind)
            .blocks
            .range((p.stream, key_size, 0)..)
            .take_while(|(k, _)| k.0 == p.stream)
            .map(|(_, &id)| id)
            .find(|&id| self.releasable(id));
        if let Some(id) = single {
            self.release_block(dev, id)?;
            return Ok(true);
        }
        // No single block is large enough: free oversize blocks of this
        // stream, largest first, until enough is released.
        let mut to_release = Vec::new();
        let mut total = 0u64;
        for (k, &id) in self
            .pool(kind)
            .blocks
            .range(..(p.stream, key_size, 0))
            .rev()
        {
            if total >= key_size || k.1 < max_split || k.0 != p.stream {
                break;
            }
            if !self.releasable(id) {
                continue;
            }
            total += k.1;
            to_release.push(id);
        }
        for id in to_release {
            self.release_block(dev, id)?;
        }
        Ok(total >= key_size)
    }

    /// Synchronizes every pending event, then frees every unsplit cached
    /// block of both pools and unmaps free pages of expandable segments
    /// (PyTorch's `release_cached_blocks`).
    fn release_cached_blocks<D: RawDevice>(&mut self, dev: &D) -> Result<bool, DeviceError> {
        self.begin_release_batch();
        self.synchronize_and_free_events(dev)?;
        self.release_blocks(dev, PoolKind::Large)?;
        self.release_blocks(dev, PoolKind::Small)?;
        Ok(true)
    }

    fn release_blocks<D: RawDevice>(&mut self, dev: &D, kind: PoolKind) -> Result<(), DeviceError> {
        let ids: Vec<BlockId> = self.pool(kind).blocks.values().copied().collect();
        let mut to_unmap = Vec::new();
        for id in ids {
            let b = &self.blocks[id];
            if b.expandable.is_some() {
                to_unmap.push(id);
            } else if !b.is_split() {
                self.release_block(dev, id)?;
            }
        }
        for id in to_unmap {
            // Unmapping merges blocks; re-check the block is still a free
            // mapped expandable block in this pool before touching it.
            let still = self.blocks.get(id).is_some_and(|b| {
                b.expandable.is_some() && b.mapped && b.is_free() && b.pool == kind
            }) && self.pool(kind).blocks.get(&self.key(id)) == Some(&id);
            if !still {
                continue;
            }
            self.unmap_block(dev, id)?;
            let b = &self.blocks[id];
            if !b.mapped && !b.is_split() {
                self.release_expandable_segment(dev, id)?;
            }
        }
        Ok(())
    }

    /// Frees old unsplit cached large blocks when the reserved total passes
    /// `garbage_collection_threshold × allowed` (PyTorch's
    /// `garbage_collect_cached_blocks`; no synchronization).
    fn garbage_collect_cached_blocks<D: RawDevice>(&mut self, dev: &D) -> Result<(), DeviceError> {
        let threshold = (self.config.garbage_collection_threshold()
            * self.allowed_memory_maximum as f64) as u64;
        if self.total_allocated_memory <= threshold {
            return Ok(());
        }
        let target = self.total_allocated_memory - threshold;
        self.begin_release_batch();
        let mut reclaimed = 0u64;
        let mut total_age = 0u64;
        let mut count = 0u64;
        let candidates: Vec<BlockId> = self
            .pool(PoolKind::Large)
            .blocks
            .values()
            .copied()
            .collect();
        for &id in &candidates {
            if self.releasable(id) {
                total_age += self.gc_count(id);
                count += 1;
            }
        }
        if count == 0 {
            return Ok(());
        }
        let mut freed_one = true;
        while reclaimed < target && freed_one && count > 0 {
            let age_threshold = total_age as f64 / count as f64;
            freed_one = false;
            let ids: Vec<BlockId> = self
                .pool(PoolKind::Large)
                .blocks
                .values()
                .copied()
                .collect();
            for id in ids {
                if self.releasable(id) && self.gc_count(id) as f64 >= age_threshold {
                    freed_one = true;
                    reclaimed += self.blocks[id].size;
                    total_age -= self.gc_count(id);
                    count -= 1;
                    self.release_block(dev, id)?;
                }
            }
        }
        tracing::debug!(target: "alloc_cuda", reclaimed, target, "garbage collection");
        Ok(())
    }

    // ---- expandable segments ----------------------------------------------

    /// The error for a poisoned allocator (a stale block id was used; see
    /// [`Arena`]).
    fn check_poisoned(&self) -> Result<(), CachingAllocatorError> {
        match self.blocks.stale() {
            None => Ok(()),
            Some(id) => Err(CachingAllocatorError::Internal(format!(
                "a stale block id ({id}) was used; the allocator's state may be corrupt, so it refuses further work"
            ))),
        }
    }

    /// Checks every invariant of the allocator's state (the blocks' links,
    /// the segments' tiling, expandable pages, pool membership, statistics),
    /// step by step; the first broken one is the error.
    fn validate(&self) -> Result<(), String> {
        if let Some(id) = self.blocks.stale() {
            return Err(format!("a stale block id ({id}) was used"));
        }
        self.validate_links()?;
        let segs = self.validate_segments()?;
        self.validate_pages()?;
        self.validate_membership()?;
        self.validate_stats(&segs)
    }

    /// Step 1: links and adjacency.
    fn validate_links(&self) -> Result<(), String> {
        let blocks = &self.blocks;
        for (id, b) in blocks.iter() {
            if b.size == 0 || !b.size.is_multiple_of(MIN_BLOCK_SIZE) {
                return Err(format!("block {id} at {:#x} has size {}", b.ptr, b.size));
            }
            if let Some(n) = b.next {
                let nb = blocks
                    .get(n)
                    .ok_or_else(|| format!("block {id} links to dead next {n}"))?;
                if nb.prev != Some(id) {
                    return Err(format!("block {id}'s next {n} does not link back"));
                }
                if b.ptr + b.size != nb.ptr {
                    return Err(format!(
                        "block {id} [{:#x}+{}] is not adjacent to its next at {:#x}",
                        b.ptr, b.size, nb.ptr
                    ));
                }
                if nb.stream != b.stream || nb.pool != b.pool || nb.expandable != b.expandable {
                    return Err(format!("blocks {id} and {n} differ in stream/pool/segment"));
                }
                if nb.is_free() && b.is_free() && nb.mapped == b.mapped {
                    return Err(format!(
                        "adjacent free blocks {id} at {:#x} and {n} at {:#x} were not coalesced",
                        b.ptr, nb.ptr
                    ));
                }
            }
            if let Some(p) = b.prev {
                let pb = blocks
                    .get(p)
                    .ok_or_else(|| format!("block {id} links to dead prev {p}"))?;
                if pb.next != Some(id) {
                    return Err(format!("block {id}'s prev {p} does not link back"));
                }
            }
            if b.expandable.is_none() && !b.mapped {
                return Err(format!("classic block {id} is unmapped"));
            }
        }
        Ok(())
    }

    /// Step 2: segments tile, and do not overlap. Returns the segments.
    fn validate_segments(&self) -> Result<Vec<SegmentSpan>, String> {
        let blocks = &self.blocks;
        let mut segs: Vec<SegmentSpan> = Vec::new();
        let mut visited = 0usize;
        for (id, b) in blocks.iter() {
            if b.prev.is_some() {
                continue;
            }
            let mut total = 0;
            let mut cur = Some(id);
            while let Some(c) = cur {
                total += blocks[c].size;
                visited += 1;
                cur = blocks[c].next;
            }
            segs.push((b.ptr, total, b.expandable, b.pool));
        }
        if visited != blocks.iter().count() {
            return Err("some blocks are not reachable from a segment head".into());
        }
        segs.sort_by_key(|s| s.0);
        for w in segs.windows(2) {
            if w[0].0 + w[0].1 > w[1].0 {
                return Err(format!(
                    "segments at {:#x} (+{}) and {:#x} overlap",
                    w[0].0, w[0].1, w[1].0
                ));
            }
        }
        for (base, total, seg, _) in &segs {
            if let Some(s) = seg {
                let es = self
                    .segments
                    .get(*s)
                    .and_then(Option::as_ref)
                    .ok_or_else(|| format!("blocks of dead expandable segment {s}"))?;
                if *base != es.base || *total != es.size() {
                    return Err(format!(
                        "expandable segment {s} is tiled as [{base:#x}+{total}], reserved [{:#x}+{}]",
                        es.base,
                        es.size()
                    ));
                }
            }
        }
        let live_segments = self.segments.iter().flatten().count();
        let tiled = segs.iter().filter(|s| s.2.is_some()).count();
        if live_segments != tiled {
            return Err(format!(
                "{live_segments} expandable segments exist but {tiled} are tiled by blocks"
            ));
        }
        Ok(segs)
    }

    /// Step 3 (after step 2).
    fn validate_pages(&self) -> Result<(), String> {
        let blocks = &self.blocks;
        // 3. Expandable pages are mapped exactly under mapped blocks. (Step
        // 2 showed every expandable block lies inside its reservation, so
        // the subtractions below cannot underflow.)
        for (_, b) in blocks.iter() {
            let Some(es) = b
                .expandable
                .and_then(|s| self.segments.get(s))
                .and_then(Option::as_ref)
            else {
                continue;
            };
            let first = (b.ptr - es.base) / es.page_size;
            let last = (b.ptr + b.size - 1 - es.base) / es.page_size;
            for page in first..=last {
                if es.is_mapped(page) != b.mapped {
                    return Err(format!(
                        "page {page} of the expandable segment at {:#x} is {} under a {} block",
                        es.base,
                        if es.is_mapped(page) {
                            "mapped"
                        } else {
                            "unmapped"
                        },
                        if b.mapped { "mapped" } else { "unmapped" }
                    ));
                }
            }
            if !b.mapped
                && (!(b.ptr - es.base).is_multiple_of(es.page_size)
                    || !b.size.is_multiple_of(es.page_size))
            {
                return Err(format!(
                    "unmapped block at {:#x} is not page aligned",
                    b.ptr
                ));
            }
        }
        Ok(())
    }

    /// Step 4: pool membership, allocated map, event queues.
    fn validate_membership(&self) -> Result<(), String> {
        let blocks = &self.blocks;
        let mut queued: HashMap<BlockId, u32> = HashMap::new();
        for q in self.cuda_events.values() {
            for &(_, id) in q {
                *queued.entry(id).or_default() += 1;
            }
        }
        let mut in_pools = 0usize;
        let mut in_unmapped = 0usize;
        for (id, b) in blocks.iter() {
            let pool = self.pool(b.pool);
            let in_blocks = pool.blocks.get(&(b.stream, b.size, b.ptr)) == Some(&id);
            let in_unm = pool.unmapped.get(&(b.stream, b.ptr)) == Some(&id);
            let is_alloc = self.allocated.get(&b.ptr) == Some(&id);
            let expect_blocks = b.mapped && b.is_free();
            let expect_unm = !b.mapped;
            if in_blocks != expect_blocks || in_unm != expect_unm || is_alloc != b.allocated {
                return Err(format!(
                    "block {id} at {:#x} (allocated {}, events {}, uses {}, mapped {}): in pool {in_blocks}, in unmapped {in_unm}, in allocated map {is_alloc}",
                    b.ptr,
                    b.allocated,
                    b.event_count,
                    b.stream_uses.len(),
                    b.mapped
                ));
            }
            if !b.mapped && !b.is_free() {
                return Err(format!("unmapped block {id} is in use"));
            }
            if queued.get(&id).copied().unwrap_or(0) != b.event_count {
                return Err(format!(
                    "block {id} counts {} events but {} are queued",
                    b.event_count,
                    queued.get(&id).copied().unwrap_or(0)
                ));
            }
            if b.event_count > 0 && b.allocated {
                return Err(format!("allocated block {id} has pending events"));
            }
            in_pools += usize::from(in_blocks);
            in_unmapped += usize::from(in_unm);
        }
        let pool_total: usize = self.pools.iter().map(|p| p.blocks.len()).sum();
        let unmapped_total: usize = self.pools.iter().map(|p| p.unmapped.len()).sum();
        if pool_total != in_pools || unmapped_total != in_unmapped {
            return Err("a pool holds an entry for a block that is not free".into());
        }
        if self.allocated.len() != blocks.iter().filter(|(_, b)| b.allocated).count() {
            return Err("the allocated map has stale entries".into());
        }
        for (i, p) in self.pools.iter().enumerate() {
            if p.is_small != (i == PoolKind::Small as usize) {
                return Err("pool kinds swapped".into());
            }
        }
        Ok(())
    }

    /// Step 5: statistics recount.
    fn validate_stats(&self, segs: &[SegmentSpan]) -> Result<(), String> {
        let blocks = &self.blocks;
        let mut want = DeviceStats::default();
        let max_split = self.max_split_size();
        let mut oversize_alloc = 0i64;
        let mut oversize_seg = 0i64;
        let cur = |arr: &mut StatArray, kind: PoolKind, v: u64| {
            for t in kind.stat_types() {
                arr[t].current += v as i64;
            }
        };
        for (_, b) in blocks.iter() {
            let k = b.pool;
            if b.allocated {
                cur(&mut want.allocation, k, 1);
                cur(&mut want.allocated_bytes, k, b.size);
                if b.size >= max_split {
                    oversize_alloc += 1;
                }
            }
            if b.is_active() {
                cur(&mut want.active, k, 1);
                cur(&mut want.active_bytes, k, b.size);
                cur(&mut want.requested_bytes, k, b.requested_size);
            }
            if b.is_free() && b.mapped && b.is_split() && b.expandable.is_none() {
                cur(&mut want.inactive_split, k, 1);
                cur(&mut want.inactive_split_bytes, k, b.size);
            }
            if b.expandable.is_some() && b.mapped {
                cur(&mut want.reserved_bytes, k, b.size);
            }
        }
        for (_, total, seg, kind) in segs {
            if seg.is_none() {
                cur(&mut want.segment, *kind, 1);
                cur(&mut want.reserved_bytes, *kind, *total);
                if *total >= max_split {
                    oversize_seg += 1;
                }
            }
        }
        let names = [
            "allocation",
            "segment",
            "active",
            "inactive_split",
            "allocated_bytes",
            "reserved_bytes",
            "active_bytes",
            "inactive_split_bytes",
            "requested_bytes",
        ];
        let mut have = self.stats.clone();
        for ((name, w), h) in names.iter().zip(want.arrays_mut()).zip(have.arrays_mut()) {
            for t in 0..3 {
                if w[t].current != h[t].current {
                    return Err(format!(
                        "stat {name}[{t}].current is {} but a recount gives {}",
                        h[t].current, w[t].current
                    ));
                }
                if h[t].peak < h[t].current {
                    return Err(format!("stat {name}[{t}] has peak below current"));
                }
            }
        }
        if self.stats.oversize_allocations.current != oversize_alloc
            || self.stats.oversize_segments.current != oversize_seg
        {
            return Err("oversize statistics disagree with a recount".into());
        }
        let reserved = u64::try_from(self.stats.reserved_bytes[0].current).unwrap_or(u64::MAX);
        if reserved != self.total_allocated_memory {
            return Err(format!(
                "reserved_bytes {reserved} != total_allocated_memory {}",
                self.total_allocated_memory
            ));
        }
        Ok(())
    }
}

/// A segment as `validate` sees it: `(base, size in bytes, expandable
/// segment index, pool)`.
type SegmentSpan = (u64, u64, Option<usize>, PoolKind);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FakeDevice;

    fn block(size: u64) -> Block {
        Block::new(StreamId::DEFAULT, size, PoolKind::Large, 0x1000)
    }

    #[test]
    fn a_stale_id_never_names_the_slots_next_block() {
        let mut a = Arena::default();
        let x = a.insert(block(1));
        assert_eq!(a.remove(x).map(|b| b.size), Some(1));
        let y = a.insert(block(2));
        assert_eq!(x.slot, y.slot, "the slot is reused");
        assert_ne!(x, y, "with a new generation");
        assert!(a.get(x).is_none());
        assert!(a.remove(x).is_none());
        assert_eq!(a.get(y).map(|b| b.size), Some(2));
        assert_eq!(a.iter().map(|(id, _)| id).collect::<Vec<_>>(), [y]);
        assert!(a.stale().is_none());
        // Indexing with the stale id: no panic, the scratch block, poisoned.
        assert_eq!(a[x].size, 0);
        a[x].size = 99;
        assert_eq!(a[y].size, 2, "the live block is untouched");
        assert_eq!(a.stale(), Some(x));
        assert_eq!(x.to_string(), "0v0");
        assert_eq!(y.to_string(), "0v1");
    }

    #[test]
    fn cache_info_is_the_larger_of_free_memory_and_the_largest_cached_block() {
        let alloc = CachingAllocator::new(
            FakeDevice::new(24 << 20),
            0,
            CachingAllocatorConfig::default(),
        );
        // Nothing cached: the device's free memory.
        assert_eq!(alloc.cache_info().expect("info"), 24 << 20);
        let p = alloc.malloc(3 << 20, StreamId::DEFAULT).expect("malloc");
        // SAFETY: `p` is not used again.
        unsafe { alloc.free(p) }.expect("free");
        let (free, _) = alloc.device.mem_get_info().expect("mem_get_info");
        let reserved = u64::try_from(alloc.stats().reserved_bytes[0].current).expect("reserved");
        // One cached segment (PyTorch's 20 MiB for a 1-10 MiB request),
        // larger than what the device has left.
        assert_eq!(reserved, 20 << 20);
        assert_eq!(free, 4 << 20);
        assert_eq!(alloc.cache_info().expect("info"), reserved);
        // Once the cache is emptied, the free memory again.
        alloc.empty_cache().expect("empty_cache");
        assert_eq!(alloc.cache_info().expect("info"), 24 << 20);
    }

    #[test]
    fn a_poisoned_allocator_returns_errors_not_panics() {
        let alloc = CachingAllocator::new(
            FakeDevice::new(1 << 30),
            0,
            CachingAllocatorConfig::default(),
        );
        let p = alloc.malloc(1000, StreamId::DEFAULT).expect("malloc");
        {
            let g = alloc.state.lock();
            let id = *g.allocated.get(&p.addr()).expect("live");
            let stale = BlockId {
                slot: id.slot,
                generation: id.generation + 1,
            };
            // An allocator bug: a stale id used for indexing.
            let _ = g.blocks[stale].size;
        }
        let e = alloc.malloc(1000, StreamId::DEFAULT).expect_err("poisoned");
        assert!(matches!(e, CachingAllocatorError::Internal(_)), "{e}");
        assert!(e.to_string().contains("stale block id"), "{e}");
        // SAFETY: `p` is unused.
        assert!(unsafe { alloc.free(p) }.is_err());
        assert!(alloc.empty_cache().is_err());
        assert!(alloc.validate().is_err());
    }
}
