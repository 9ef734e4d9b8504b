//! [`CpuAllocator`]: 64-byte aligned host memory from `std::alloc`, with a
//! 64-byte header in front of every block, two fill modes and opt-in
//! statistics. See the crate documentation for the design.

use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::ffi::c_void;
use std::fmt;
use std::ptr;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

use crate::history::{CpuHistory, CpuMemorySnapshot};
#[cfg(all(target_os = "linux", not(miri)))]
use crate::large_cache;
use c10_storage::history::HistoryConfig;
use c10_storage::{AllocError, Allocator, AllocatorStats, DataPtr, DeleterFn, Device, DeviceType};

/// Alignment of every CPU allocation in bytes (c10's `gAlignment` on desktop
/// builds; enough for AVX-512 loads).
///
/// ```
/// use alloc_cpu::{CpuAllocator, ALIGNMENT};
/// use c10_storage::Allocator;
/// let p = CpuAllocator::new().allocate(3)?;
/// assert_eq!(p.get() as usize % ALIGNMENT, 0);
/// # Ok::<(), c10_storage::AllocError>(())
/// ```
pub const ALIGNMENT: usize = 64;

/// Bytes reserved in front of every non-empty allocation for the block
/// header (the requested size and, for counted allocations, the statistics
/// block). Equal to [`ALIGNMENT`] so that the data pointer stays 64-byte
/// aligned.
///
/// ```
/// assert_eq!(alloc_cpu::HEADER_SIZE, alloc_cpu::ALIGNMENT);
/// ```
pub const HEADER_SIZE: usize = ALIGNMENT;

/// The 64-bit junk pattern of [`FillMode::Junk`] (c10's
/// `kJunkPattern64`): `0x7fedbeef` twice. Read back it is a NaN as `f32`,
/// a huge finite value (about 1.67e308) as `f64`, and a huge integer.
///
/// ```
/// use alloc_cpu::JUNK_PATTERN;
/// assert!(f32::from_bits(JUNK_PATTERN as u32).is_nan());
/// assert!(f64::from_bits(JUNK_PATTERN) > 1e308);
/// ```
pub const JUNK_PATTERN: u64 = 0x7fed_beef_7fed_beef;

/// How fresh memory is filled before it is handed out.
///
/// c10 has two flags (`caffe2_cpu_allocator_do_zero_fill`,
/// `caffe2_cpu_allocator_do_junk_fill`), both off by default, so its fresh
/// memory is uninitialised, and setting both is a fatal error. Here memory is
/// always initialised (the [`Allocator`] safety contract requires it for
/// host memory, because safe code reads storage bytes as `&[u8]`), so the
/// choice is between two fills, and asking for both cannot even be written.
///
/// ```
/// use alloc_cpu::{CpuAllocator, FillMode};
/// assert_eq!(FillMode::default(), FillMode::Zero);
/// let junk = CpuAllocator::builder().fill(FillMode::Junk).build();
/// assert_eq!(junk.fill_mode(), FillMode::Junk);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum FillMode {
    /// Zeroes, through `std::alloc::alloc_zeroed` (that is `calloc`, which
    /// is free for fresh pages from the operating system). The default.
    #[default]
    Zero,
    /// c10's junk fill: [`JUNK_PATTERN`] repeated in native byte order,
    /// the trailing `n % 8` bytes copied from the start of that word's
    /// memory image. Makes reads of never-written memory visible (NaNs and
    /// absurd integers) when debugging; costs one pass over the memory.
    Junk,
}

/// The header at the start of every block, `HEADER_SIZE` bytes before the
/// data pointer.
#[repr(C)]
struct Header {
    /// The requested size.
    size: usize,
    /// For counted allocations, a pointer obtained from `Arc::into_raw` on
    /// the allocator's statistics block; null otherwise. Owned by the
    /// allocation: the deleter gives the reference back.
    stats: *const StatsBlock,
    /// How the block was obtained: [`FROM_STD`] or [`FROM_MMAP`].
    source: usize,
    /// Bytes from the start of the underlying allocation to the data.
    data_offset: usize,
    /// Size of the underlying allocation (its `Layout` size, or the length
    /// of the mapping).
    total: usize,
    /// For allocations made while history was recorded, a pointer from
    /// `Arc::into_raw` on the allocator's history; null otherwise. Owned by
    /// the allocation, like `stats`.
    history: *const CpuHistory,
}

/// The block came from `std::alloc` with [`STD_ALIGN`] alignment.
const FROM_STD: usize = 0;
/// The block is an anonymous `mmap` (large blocks on Linux).
#[cfg_attr(any(miri, not(target_os = "linux")), allow(dead_code))]
const FROM_MMAP: usize = 1;
/// Alignment asked of `std::alloc`. At most the platform's `malloc`
/// alignment, so that zeroed blocks come from `calloc` (which skips the
/// memset for fresh pages); the 64-byte data alignment is made by hand.
const STD_ALIGN: usize = 16;
/// Blocks (header and padding included) up to this size are zeroed with
/// `malloc` + `memset` rather than `calloc`: glibc serves `malloc` of up
/// to 1032-byte chunks from its per-thread cache, which `calloc` bypasses.
const ZERO_BY_HAND_MAX: usize = 1024;
/// Blocks of at least this many bytes are mapped straight from the kernel on
/// Linux, advised as transparent huge pages, which cuts first-touch page
/// faults 512-fold for big tensors (PyTorch offers the same behind
/// `THP_MEM_ALLOC_ENABLE`), and recycled through the large-block cache.
/// 32 MiB is glibc's largest dynamic `mmap` threshold: below it `malloc`
/// recycles freed blocks without a system call or a page fault, which is
/// what a loop allocating same-sized tensors wants (mapping 1 MiB blocks
/// ourselves made `empty([1024, 1024])` cost 10 µs against libtorch's
/// 0.2 µs); above it `malloc` maps and unmaps every block anyway.
#[cfg(all(target_os = "linux", not(miri)))]
const MMAP_THRESHOLD: usize = crate::large_cache::LARGE_BLOCK_BYTES;

const _: () = assert!(std::mem::size_of::<Header>() <= HEADER_SIZE);
const _: () = assert!(std::mem::align_of::<Header>() <= ALIGNMENT);
const _: () = assert!(HEADER_SIZE.is_multiple_of(ALIGNMENT));

/// Live statistics counters. Shared (through an `Arc`) by the allocator and
/// every counted allocation, so counts stay right even when a counted
/// allocation outlives its allocator.
#[derive(Default)]
struct StatsBlock {
    current: AtomicU64,
    peak: AtomicU64,
    allocated_bytes: AtomicU64,
    freed_bytes: AtomicU64,
    allocations: AtomicU64,
    frees: AtomicU64,
}

impl StatsBlock {
    fn record_alloc(&self, nbytes: usize) {
        let n = nbytes as u64;
        let now = self.current.fetch_add(n, Ordering::Relaxed).wrapping_add(n);
        self.peak.fetch_max(now, Ordering::Relaxed);
        self.allocated_bytes.fetch_add(n, Ordering::Relaxed);
        self.allocations.fetch_add(1, Ordering::Relaxed);
    }

    fn record_free(&self, nbytes: usize) {
        let n = nbytes as u64;
        self.current.fetch_sub(n, Ordering::Relaxed);
        self.freed_bytes.fetch_add(n, Ordering::Relaxed);
        self.frees.fetch_add(1, Ordering::Relaxed);
    }

    fn snapshot(&self) -> AllocatorStats {
        AllocatorStats {
            current_bytes: self.current.load(Ordering::Relaxed),
            peak_bytes: self.peak.load(Ordering::Relaxed),
            allocated_bytes: self.allocated_bytes.load(Ordering::Relaxed),
            freed_bytes: self.freed_bytes.load(Ordering::Relaxed),
            allocations: self.allocations.load(Ordering::Relaxed),
            frees: self.frees.load(Ordering::Relaxed),
        }
    }

    fn reset_peak(&self) {
        // Not atomic with concurrent allocations: a racing allocation may
        // raise `current` between the two steps, and its own `fetch_max`
        // then restores the peak. The peak is never set below a value
        // `current` had at the time of the reset.
        let now = self.current.load(Ordering::Relaxed);
        self.peak.store(now, Ordering::Relaxed);
        self.peak
            .fetch_max(self.current.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// The layout of a block holding `nbytes` of data, or `None` when it cannot
/// exist (the size overflows `usize` or exceeds `isize::MAX` once rounded).
fn block_layout(nbytes: usize) -> Option<Layout> {
    // Room for the header plus up to ALIGNMENT - STD_ALIGN bytes of padding
    // to reach a 64-byte data address.
    let total = nbytes.checked_add(HEADER_SIZE + ALIGNMENT)?;
    let layout = Layout::from_size_align(total, STD_ALIGN).ok()?;
    // Keep every size representable after the header arithmetic.
    (layout.size() <= isize::MAX as usize - ALIGNMENT).then_some(layout)
}

/// Frees the underlying allocation of the block whose data starts at `data`.
///
/// # Safety
///
/// `data` must be the data pointer of a live block from
/// [`CpuAllocator::allocate`], with `header` read from it, and the block must
/// not be used or freed afterwards.
unsafe fn free_block(data: *mut u8, header: &Header) {
    // SAFETY: `data_offset` is the distance from the allocation start to
    // `data` within the same allocation (written by `allocate`).
    let start = unsafe { data.sub(header.data_offset) };
    #[cfg(all(target_os = "linux", not(miri)))]
    if header.source == FROM_MMAP {
        // SAFETY: `start`/`total` are exactly the mapping made (or taken
        // from the cache) in `obtain_block`, and nothing uses the block any
        // more: it goes to the cache or is unmapped, once.
        unsafe {
            if !large_cache::put(start, header.total) {
                large_cache::unmap(start, header.total);
            }
        }
        return;
    }
    debug_assert_eq!(header.source, FROM_STD);
    // SAFETY: the block was allocated with exactly this layout (it passed
    // `block_layout` then, so it is valid) and is freed only here.
    unsafe {
        dealloc(
            start,
            Layout::from_size_align_unchecked(header.total, STD_ALIGN),
        )
    };
}

/// A large block: a cached mapping if one fits, else a fresh anonymous
/// mapping advised as huge pages. Zeroed when `zero` (fresh mappings come
/// zeroed from the kernel; a recycled one is zero-filled here). Returns what
/// [`obtain_block`] returns.
#[cfg(all(target_os = "linux", not(miri)))]
fn obtain_mapping(nbytes: usize, zero: bool) -> Option<(*mut u8, *mut u8, usize, usize)> {
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
        .unwrap_or(4096)
        .max(4096);
    let total = nbytes
        .checked_add(HEADER_SIZE)?
        .checked_next_multiple_of(page)?;
    if total > isize::MAX as usize {
        return None;
    }
    if let Some((start, mapped)) = large_cache::take(total) {
        // Page-aligned, so `start + HEADER_SIZE` is 64-aligned, and the
        // mapping has at least `total >= nbytes + HEADER_SIZE` bytes.
        // SAFETY: inside the mapping, as just said.
        let data = unsafe { start.add(HEADER_SIZE) };
        if zero {
            // The block holds a previous tensor's bytes (or zeros where the
            // kernel reclaimed pages after MADV_FREE).
            // SAFETY: `data` starts `nbytes` bytes of the mapping, which the
            // cache handed over to us alone.
            unsafe { ptr::write_bytes(data, 0, nbytes) };
        }
        return Some((start, data, FROM_MMAP, mapped));
    }
    let map = || {
        // SAFETY: an anonymous private mapping of `total` bytes at an
        // address of the kernel's choosing; no existing memory is affected.
        unsafe {
            libc::mmap(
                ptr::null_mut(),
                total,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        }
    };
    let mut p = map();
    if p == libc::MAP_FAILED && large_cache::empty_cache() > 0 {
        // Cached blocks may be what stood in the way: give them back and
        // try once more before reporting out-of-memory.
        p = map();
    }
    if p == libc::MAP_FAILED {
        return None;
    }
    if total >= 2 << 20 {
        // Advisory only: failure (THP disabled) just means small pages.
        // SAFETY: the range is exactly our fresh mapping.
        unsafe { libc::madvise(p, total, libc::MADV_HUGEPAGE) };
    }
    let start = p.cast::<u8>();
    // Anonymous mappings are zero-filled by the kernel. Page-aligned, so
    // `start + HEADER_SIZE` is 64-aligned and inside the mapping.
    // SAFETY: `total >= nbytes + HEADER_SIZE`.
    let data = unsafe { start.add(HEADER_SIZE) };
    Some((start, data, FROM_MMAP, total))
}

/// Gets zeroed (or, for junk mode, any) memory for `nbytes` of data plus the
/// header. Returns `(allocation start, data pointer, source, total)`.
fn obtain_block(nbytes: usize, zero: bool) -> Option<(*mut u8, *mut u8, usize, usize)> {
    #[cfg(all(target_os = "linux", not(miri)))]
    if nbytes >= MMAP_THRESHOLD {
        return obtain_mapping(nbytes, zero);
    }
    let layout = block_layout(nbytes)?;
    // Small blocks are zeroed by hand: glibc's `calloc` bypasses its
    // per-thread cache (tcache), so `calloc` of a small block takes the
    // allocator's slow path (measured: it was a quarter of `empty([3, 4])`),
    // while `malloc` + a short `memset` is a cache hit. Large blocks keep
    // `calloc`, which skips the `memset` for fresh pages.
    let zero_by_hand = zero && layout.size() <= ZERO_BY_HAND_MAX;
    // SAFETY: `layout` has a non-zero size (at least HEADER_SIZE + ALIGNMENT).
    let start = unsafe {
        if zero && !zero_by_hand {
            alloc_zeroed(layout)
        } else {
            alloc(layout)
        }
    };
    if start.is_null() {
        return None;
    }
    // First 64-aligned address leaving HEADER_SIZE bytes before it; at most
    // HEADER_SIZE + ALIGNMENT - STD_ALIGN bytes in, so `nbytes` still fit.
    let pad = (start as usize + HEADER_SIZE).next_multiple_of(ALIGNMENT) - start as usize;
    // SAFETY: `pad <= HEADER_SIZE + ALIGNMENT` and the block has
    // `nbytes + HEADER_SIZE + ALIGNMENT` bytes.
    let data = unsafe { start.add(pad) };
    if zero_by_hand {
        // SAFETY: `data` starts `nbytes` bytes inside the fresh block.
        unsafe { ptr::write_bytes(data, 0, nbytes) };
    }
    Some((start, data, FROM_STD, layout.size()))
}

/// c10's out-of-memory error, word for word (`ENOMEM` is 12 on every
/// platform that PyTorch's message came from).
fn out_of_memory(nbytes: usize) -> AllocError {
    AllocError::OutOfMemory {
        nbytes,
        message: format!(
            "DefaultCPUAllocator: can't allocate memory: you tried to allocate {nbytes} bytes. \
             Error code 12 (Cannot allocate memory)"
        ),
    }
}

/// Fills `nbytes` at `data` with [`JUNK_PATTERN`] as c10's `memset_junk`.
///
/// # Safety
///
/// `data` must be valid for writes of `nbytes` bytes and aligned to 8.
unsafe fn junk_fill(data: *mut u8, nbytes: usize) {
    let words = nbytes / 8;
    let tail = nbytes % 8;
    let word_ptr = data.cast::<u64>();
    for i in 0..words {
        // SAFETY: `i < nbytes / 8`, so the 8 bytes at `data + 8 i` are inside
        // the region the caller vouches for, and `data` is 8-aligned.
        unsafe { word_ptr.add(i).write(JUNK_PATTERN) };
    }
    if tail > 0 {
        let image = JUNK_PATTERN.to_ne_bytes();
        // SAFETY: the last `tail < 8` bytes of the region; `image` is a
        // distinct local array, so the ranges cannot overlap.
        unsafe { ptr::copy_nonoverlapping(image.as_ptr(), data.add(words * 8), tail) };
    }
}

/// Frees a block given its data pointer, counting the free if the header
/// names a statistics block. This is the deleter of uncounted allocations
/// and the raw deleter (so a counted allocation freed through
/// [`Allocator::raw_deallocate`] is still counted).
///
/// # Safety
///
/// `ctx` must be null or the data pointer of a live block allocated by a
/// [`CpuAllocator`], and the block must not be used or freed afterwards.
///
/// `#[inline(never)]`: its address identifies our allocations (through
/// [`DataPtr::cast_context`] and `fn_addr_eq`), so it must have one
/// address; a function that may be inlined across crates can be
/// instantiated in several codegen units with different addresses (Miri
/// models exactly that and catches it).
#[inline(never)]
unsafe fn delete_cpu(ctx: *mut c_void) {
    if ctx.is_null() {
        return; // c10's ReportAndDelete ignores null.
    }
    let data = ctx.cast::<u8>();
    // SAFETY: `data` is the data pointer of a live block (caller's
    // contract); its header sits in the HEADER_SIZE bytes before it, inside
    // the same allocation, written by `allocate` and 64-aligned.
    let header = unsafe { data.sub(HEADER_SIZE).cast::<Header>().read() };
    // SAFETY: a live block of ours, freed once (caller's contract).
    unsafe { free_block(data, &header) };
    if !header.stats.is_null() {
        // SAFETY: a non-null header pointer came from `Arc::into_raw` in
        // `allocate` and this allocation owns that reference; it is given
        // back exactly once, here, because the block is freed only once.
        let stats = unsafe { Arc::from_raw(header.stats) };
        stats.record_free(header.size);
    }
    // SAFETY: as above, for the history pointer.
    unsafe { release_history(data, &header) };
}

/// Records the free of a recorded block and gives back the block's
/// reference to the history (nothing for unrecorded blocks).
///
/// # Safety
///
/// `header` must be the header of the block at `data`, being freed now,
/// once; its `history` pointer is then null or owns a reference from
/// `Arc::into_raw`.
unsafe fn release_history(data: *mut u8, header: &Header) {
    if header.history.is_null() {
        return;
    }
    // SAFETY: a non-null history pointer came from `Arc::into_raw` in
    // `allocate`, owned by this allocation, given back once (caller).
    let h = unsafe { Arc::from_raw(header.history) };
    h.on_free(data as u64, header.size as u64);
}

/// The deleter of counted allocations (those made while statistics
/// tracking was on): frees the block and records the free in the statistics
/// block named in the header, then drops the allocation's reference to it.
///
/// It is a different function from [`delete_cpu`] (which also handles
/// counted blocks, via the header) so that
/// [`DataPtr::cast_context`] can tell counted allocations apart, and its
/// code differs (no null check) so that the two cannot be merged into one
/// address by the compiler.
///
/// # Safety
///
/// `ctx` must be the data pointer of a live, **counted** block allocated by
/// a [`CpuAllocator`] (its header names a statistics block), and the block
/// must not be used or freed afterwards.
///
/// `#[inline(never)]` for the same reason as [`delete_cpu`]: its address
/// must be unique.
#[inline(never)]
unsafe fn delete_cpu_counted(ctx: *mut c_void) {
    let data = ctx.cast::<u8>();
    // SAFETY: as in `delete_cpu`.
    let header = unsafe { data.sub(HEADER_SIZE).cast::<Header>().read() };
    debug_assert!(
        !header.stats.is_null(),
        "counting deleter on an uncounted block"
    );
    // SAFETY: as in `delete_cpu`.
    unsafe { free_block(data, &header) };
    // SAFETY: `allocate` attaches this deleter only to blocks whose header
    // holds a pointer from `Arc::into_raw`, owned by the allocation and
    // given back exactly once, here.
    let stats = unsafe { Arc::from_raw(header.stats) };
    stats.record_free(header.size);
    // SAFETY: as in `delete_cpu`.
    unsafe { release_history(data, &header) };
}

/// The default CPU allocator (c10's `DefaultCPUAllocator`): 64-byte aligned
/// blocks from `std::alloc`, zero- or junk-filled, with opt-in statistics.
///
/// * `allocate(0)` returns a null [`DataPtr`] on [`Device::CPU`] and counts
///   nothing (c10's `alloc_cpu(0)` returns `nullptr`).
/// * Every other allocation is "simple" (data pointer == context), so
///   [`raw_allocate`](Allocator::raw_allocate) and
///   [`raw_deallocate`](Allocator::raw_deallocate) work.
/// * Failure is an [`AllocError::OutOfMemory`] with c10's message, never an
///   abort.
///
/// The process-wide instance is [`builtin_cpu_allocator`](crate::builtin_cpu_allocator);
/// build your own with [`CpuAllocator::builder`] and register it with
/// [`c10_storage::set_allocator`] if it should serve all CPU storages.
///
/// ```
/// use alloc_cpu::{CpuAllocator, FillMode};
/// use c10_storage::{Allocator, Storage};
///
/// // Storages need a `&'static` allocator: a `static`, or `leak()`.
/// static TRACKED: CpuAllocator = CpuAllocator::new();
/// TRACKED.set_track_stats(true);
/// let a: &'static CpuAllocator = &TRACKED;
/// let s = Storage::new(100, a, true)?;
/// assert!(s.read()?.bytes()?.iter().all(|&b| b == 0));
/// assert_eq!(a.stats().map(|st| st.current_bytes), Some(100));
/// drop(s);
/// assert_eq!(a.stats().map(|st| st.current_bytes), Some(0));
/// # Ok::<(), c10_storage::StorageError>(())
/// ```
pub struct CpuAllocator {
    fill: FillMode,
    /// [`MODE_TRACK`] | [`MODE_RECORD`]: one load and one branch on the
    /// allocation path when both are off.
    mode: AtomicU8,
    /// Created the first time tracking is switched on; never removed.
    stats: OnceLock<Arc<StatsBlock>>,
    /// Created the first time history recording is switched on.
    history: OnceLock<Arc<CpuHistory>>,
}

/// Statistics tracking is on.
const MODE_TRACK: u8 = 1;
/// History recording is on.
const MODE_RECORD: u8 = 2;

impl CpuAllocator {
    /// A zero-filling allocator without statistics (the configuration of
    /// the process-wide default). Usable in a `static`.
    ///
    /// ```
    /// use alloc_cpu::CpuAllocator;
    /// static MINE: CpuAllocator = CpuAllocator::new();
    /// assert!(!MINE.tracks_stats());
    /// ```
    pub const fn new() -> CpuAllocator {
        CpuAllocator::with_fill(FillMode::Zero)
    }

    /// An allocator with the given fill mode, without statistics. Usable in
    /// a `static`.
    ///
    /// ```
    /// use alloc_cpu::{CpuAllocator, FillMode};
    /// static JUNK: CpuAllocator = CpuAllocator::with_fill(FillMode::Junk);
    /// assert_eq!(JUNK.fill_mode(), FillMode::Junk);
    /// ```
    pub const fn with_fill(fill: FillMode) -> CpuAllocator {
        CpuAllocator {
            fill,
            mode: AtomicU8::new(0),
            stats: OnceLock::new(),
            history: OnceLock::new(),
        }
    }

    /// A builder for a configured allocator.
    ///
    /// ```
    /// use alloc_cpu::{CpuAllocator, FillMode};
    /// let a = CpuAllocator::builder().fill(FillMode::Junk).track_stats(true).build();
    /// assert!(a.tracks_stats());
    /// ```
    pub const fn builder() -> CpuAllocatorBuilder {
        CpuAllocatorBuilder {
            fill: FillMode::Zero,
            track_stats: false,
        }
    }

    /// Moves the allocator to the heap for the rest of the process and
    /// returns the `'static` reference that [`c10_storage::Storage::new`]
    /// and [`c10_storage::set_allocator`] need. (A `static` allocator,
    /// built with the `const` constructors, avoids the leak.)
    ///
    /// ```
    /// # #[cfg(not(miri))] { // Miri reports the (intended) leak.
    /// use alloc_cpu::CpuAllocator;
    /// use c10_storage::Storage;
    /// let a = CpuAllocator::new().leak();
    /// let s = Storage::new(8, a, true)?;
    /// assert_eq!(s.nbytes(), 8);
    /// # }
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    pub fn leak(self) -> &'static CpuAllocator {
        Box::leak(Box::new(self))
    }

    /// The fill mode.
    ///
    /// ```
    /// use alloc_cpu::{CpuAllocator, FillMode};
    /// assert_eq!(CpuAllocator::new().fill_mode(), FillMode::Zero);
    /// ```
    pub const fn fill_mode(&self) -> FillMode {
        self.fill
    }

    /// Whether allocations made now are counted.
    ///
    /// ```
    /// use alloc_cpu::CpuAllocator;
    /// let a = CpuAllocator::new();
    /// a.set_track_stats(true);
    /// assert!(a.tracks_stats());
    /// ```
    pub fn tracks_stats(&self) -> bool {
        self.mode.load(Ordering::Relaxed) & MODE_TRACK != 0
    }

    /// Switches statistics tracking on or off, at any time, from any thread.
    ///
    /// The decision is made per allocation: an allocation made while
    /// tracking is on is counted when it is made **and** when it is freed,
    /// even if tracking was switched off meanwhile; one made while tracking
    /// was off is never counted. So toggling never unbalances the counts:
    /// `current_bytes` is always the size of the live counted allocations.
    ///
    /// Switching tracking on for the first time creates the statistics
    /// block, after which [`Allocator::stats`] returns `Some` for good.
    ///
    /// ```
    /// use alloc_cpu::CpuAllocator;
    /// use c10_storage::Allocator;
    /// let a = CpuAllocator::new();
    /// let uncounted = a.allocate(10)?;
    /// a.set_track_stats(true);
    /// let counted = a.allocate(20)?;
    /// a.set_track_stats(false);
    /// drop(uncounted);
    /// drop(counted); // still counted: it was made while tracking was on
    /// let st = a.stats().unwrap();
    /// assert_eq!((st.allocations, st.frees, st.current_bytes), (1, 1, 0));
    /// # Ok::<(), c10_storage::AllocError>(())
    /// ```
    pub fn set_track_stats(&self, on: bool) {
        if on {
            // Create the block before raising the flag, so that `stats()`
            // is `Some` as soon as anyone can observe tracking.
            let _ = self.stats_block();
        }
        if on {
            self.mode.fetch_or(MODE_TRACK, Ordering::Relaxed);
        } else {
            self.mode.fetch_and(!MODE_TRACK, Ordering::Relaxed);
        }
    }

    /// Starts (or reconfigures) history recording with `Some(config)`, or
    /// stops it and forgets what was recorded with `None` (PyTorch's
    /// `_record_memory_history`). Off by default: while off, the
    /// allocation path pays the one branch it already pays for statistics.
    ///
    /// Allocations made while recording get an `alloc` entry, and their
    /// frees (while still recording) `free_requested` and `free_completed`
    /// entries; allocations made before are not recorded.
    ///
    /// ```
    /// use alloc_cpu::CpuAllocator;
    /// use c10_storage::Allocator;
    /// use c10_storage::history::HistoryConfig;
    /// let a = CpuAllocator::new();
    /// a.record_memory_history(Some(HistoryConfig { stacks: false, ..HistoryConfig::default() }));
    /// let p = a.allocate(100)?;
    /// let q = a.allocate(50)?;
    /// drop(p);
    /// let snap = a.memory_snapshot();
    /// assert_eq!(snap.blocks.len(), 1);
    /// assert_eq!((snap.blocks[0].addr, snap.blocks[0].size), (q.get() as u64, 50));
    /// let actions: Vec<&str> = snap.trace.iter().map(|e| e.action.as_str()).collect();
    /// assert_eq!(actions, ["alloc", "alloc", "free_requested", "free_completed", "snapshot"]);
    /// a.record_memory_history(None);
    /// assert!(a.memory_snapshot().trace.is_empty());
    /// # Ok::<(), c10_storage::AllocError>(())
    /// ```
    pub fn record_memory_history(&self, config: Option<HistoryConfig>) {
        match config {
            Some(c) => {
                self.history_block().set(Some(c));
                self.mode.fetch_or(MODE_RECORD, Ordering::Relaxed);
            }
            None => {
                self.mode.fetch_and(!MODE_RECORD, Ordering::Relaxed);
                if let Some(h) = self.history.get() {
                    h.set(None);
                }
            }
        }
    }

    /// The recording configuration, if history is being recorded.
    pub fn history_config(&self) -> Option<HistoryConfig> {
        self.history
            .get()
            .filter(|h| h.is_recording())
            .map(|h| h.config())
    }

    /// The live allocations made while recording and the recorded trace
    /// (empty when history was never recorded). Appends a `snapshot`
    /// entry to the trace while recording.
    pub fn memory_snapshot(&self) -> CpuMemorySnapshot {
        self.history.get().map(|h| h.snapshot()).unwrap_or_default()
    }

    fn history_block(&self) -> &Arc<CpuHistory> {
        self.history.get_or_init(|| {
            Arc::new(CpuHistory::new(HistoryConfig {
                max_entries: 1,
                ..HistoryConfig::default()
            }))
        })
    }

    fn stats_block(&self) -> &Arc<StatsBlock> {
        self.stats.get_or_init(|| Arc::new(StatsBlock::default()))
    }

    /// The deleter of counted allocations (those made while tracking was
    /// on). Together with [`DataPtr::cast_context`] it tells whether an
    /// allocation is counted; uncounted ones carry
    /// [`Allocator::raw_deleter`]'s function.
    ///
    /// ```
    /// use alloc_cpu::CpuAllocator;
    /// use c10_storage::Allocator;
    /// let a = CpuAllocator::builder().track_stats(true).build();
    /// let p = a.allocate(4)?;
    /// assert!(p.cast_context::<u8>(CpuAllocator::counting_deleter()).is_some());
    /// # Ok::<(), c10_storage::AllocError>(())
    /// ```
    pub fn counting_deleter() -> DeleterFn {
        delete_cpu_counted
    }

    /// The deleter of uncounted allocations, which is also the raw deleter
    /// (it frees any block of any `CpuAllocator`, counting the free if the
    /// block was counted). Same value as [`Allocator::raw_deleter`].
    ///
    /// ```
    /// use alloc_cpu::CpuAllocator;
    /// use c10_storage::Allocator;
    /// let a = CpuAllocator::new();
    /// let p = a.allocate(4)?;
    /// assert!(std::ptr::fn_addr_eq(p.deleter(), CpuAllocator::plain_deleter()));
    /// # Ok::<(), c10_storage::AllocError>(())
    /// ```
    pub fn plain_deleter() -> DeleterFn {
        delete_cpu
    }
}

impl Default for CpuAllocator {
    fn default() -> CpuAllocator {
        CpuAllocator::new()
    }
}

impl fmt::Debug for CpuAllocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CpuAllocator")
            .field("fill", &self.fill)
            .field("track_stats", &self.tracks_stats())
            .field("stats", &self.stats.get().map(|s| s.snapshot()))
            .finish()
    }
}

impl CpuAllocator {
    /// The statistics and history bookkeeping of an allocation made while
    /// tracking or recording is on (`mode != 0`): the header's `stats`
    /// pointer, the deleter, and the header's `history` pointer.
    #[cold]
    fn instrumented_alloc(
        &self,
        mode: u8,
        data: *mut u8,
        nbytes: usize,
    ) -> (*const StatsBlock, DeleterFn, *const CpuHistory) {
        let (stats, deleter): (*const StatsBlock, DeleterFn) = if mode & MODE_TRACK != 0 {
            let block = self.stats_block();
            block.record_alloc(nbytes);
            (Arc::into_raw(Arc::clone(block)), delete_cpu_counted)
        } else {
            (ptr::null(), delete_cpu)
        };
        let history = match self.history.get() {
            Some(h) if mode & MODE_RECORD != 0 && h.is_recording() => {
                h.on_alloc(data as u64, nbytes as u64);
                Arc::into_raw(Arc::clone(h))
            }
            _ => ptr::null(),
        };
        (stats, deleter, history)
    }

    /// `allocate`, zero-filled when `zero` (junk-filled in junk mode, and
    /// otherwise whatever `malloc` or the kernel hands out: zeroes for fresh
    /// pages and mappings, stale or uninitialised bytes for recycled ones).
    fn allocate_block(&self, nbytes: usize, zero: bool) -> Result<DataPtr, AllocError> {
        if nbytes == 0 {
            return Ok(DataPtr::null(Device::CPU));
        }
        // Fails (without trying to allocate) for sizes past isize::MAX.
        let (start, data, source, total) =
            obtain_block(nbytes, zero).ok_or_else(|| out_of_memory(nbytes))?;
        let base = data.wrapping_sub(HEADER_SIZE);
        if self.fill == FillMode::Junk {
            // SAFETY: `data` starts `nbytes` writable bytes of the fresh
            // block and is 64-aligned (base is, HEADER_SIZE is a multiple).
            unsafe { junk_fill(data, nbytes) };
        }
        let mode = self.mode.load(Ordering::Relaxed);
        let (stats, deleter, history): (*const StatsBlock, DeleterFn, *const CpuHistory) =
            if mode == 0 {
                (ptr::null(), delete_cpu, ptr::null())
            } else {
                self.instrumented_alloc(mode, data, nbytes)
            };
        // SAFETY: `base` is 64-aligned and the first HEADER_SIZE bytes of
        // the block belong to the header, which fits (checked at compile
        // time).
        unsafe {
            base.cast::<Header>().write(Header {
                size: nbytes,
                stats,
                source,
                data_offset: data as usize - start as usize,
                total,
                history,
            })
        };
        // SAFETY: `deleter(data)` frees exactly this block (and gives back
        // the `Arc` reference taken above for counted blocks); the block is
        // owned by nothing else, and freeing it from any thread is sound.
        Ok(unsafe { DataPtr::new_simple(data, deleter, Device::CPU) })
    }
}

// SAFETY: for `nbytes > 0`, `allocate` returns a 64-aligned pointer into a
// fresh `std::alloc` block or anonymous mapping with at least `nbytes` bytes
// after it and the header before it (`obtain_block`), so the pointer is
// non-null and valid for reads and writes of `nbytes` bytes until the
// deleter frees the block (1), overlaps no other live allocation (2), is
// tagged `Device::CPU` (3), and the deleters (`delete_cpu`,
// `delete_cpu_counted`) only touch the block and an `Arc`, so they may run on
// any thread, once (4). The bytes are initialised by `alloc_zeroed`, by the
// kernel (anonymous mappings are zero-filled) or by `junk_fill` (5);
// `allocate_for_overwrite` is exempt from (5) by the trait's contract.
unsafe impl Allocator for CpuAllocator {
    fn allocate(&self, nbytes: usize) -> Result<DataPtr, AllocError> {
        self.allocate_block(nbytes, self.fill == FillMode::Zero)
    }

    /// No zero fill in [`FillMode::Zero`]: `malloc`'s recycled bytes are
    /// left as they are (and under Miri, left uninitialised, so a caller
    /// that reads before writing is caught). [`FillMode::Junk`] still
    /// junk-fills, which is its point.
    fn allocate_for_overwrite(&self, nbytes: usize) -> Result<DataPtr, AllocError> {
        self.allocate_block(nbytes, false)
    }

    fn device_type(&self) -> DeviceType {
        DeviceType::Cpu
    }

    // No `copy_data`: the trait's default memcpy serves CPU memory.

    fn raw_deleter(&self) -> Option<DeleterFn> {
        Some(delete_cpu)
    }

    /// True in [`FillMode::Zero`] (the default): `zeros` can skip its fill.
    fn zeroes_memory(&self) -> bool {
        matches!(self.fill_mode(), FillMode::Zero)
    }

    /// `Some` once tracking has been switched on (by the builder or
    /// [`CpuAllocator::set_track_stats`]), and from then on for good, even
    /// while it is off (frees of counted allocations keep being counted);
    /// `None` for an allocator that never tracked.
    ///
    /// Each field is read atomically, but not all together: while other
    /// threads allocate, the fields may be from slightly different moments.
    fn stats(&self) -> Option<AllocatorStats> {
        self.stats.get().map(|s| s.snapshot())
    }

    fn reset_peak_stats(&self) {
        if let Some(s) = self.stats.get() {
            s.reset_peak();
        }
    }

    fn name(&self) -> &str {
        "CpuAllocator"
    }
}

/// Configures a [`CpuAllocator`]; from [`CpuAllocator::builder`].
///
/// ```
/// use alloc_cpu::{CpuAllocator, FillMode};
/// let a = CpuAllocator::builder().fill(FillMode::Zero).track_stats(false).build();
/// assert_eq!(a.fill_mode(), FillMode::Zero);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct CpuAllocatorBuilder {
    fill: FillMode,
    track_stats: bool,
}

impl CpuAllocatorBuilder {
    /// Sets the fill mode (default [`FillMode::Zero`]).
    ///
    /// ```
    /// use alloc_cpu::{CpuAllocator, FillMode};
    /// assert_eq!(CpuAllocator::builder().fill(FillMode::Junk).build().fill_mode(), FillMode::Junk);
    /// ```
    pub const fn fill(mut self, fill: FillMode) -> CpuAllocatorBuilder {
        self.fill = fill;
        self
    }

    /// Whether to track statistics from the start (default off); see
    /// [`CpuAllocator::set_track_stats`].
    ///
    /// ```
    /// use alloc_cpu::CpuAllocator;
    /// use c10_storage::Allocator;
    /// let a = CpuAllocator::builder().track_stats(true).build();
    /// assert_eq!(a.stats(), Some(Default::default()));
    /// ```
    pub const fn track_stats(mut self, on: bool) -> CpuAllocatorBuilder {
        self.track_stats = on;
        self
    }

    /// Builds the allocator.
    ///
    /// ```
    /// use alloc_cpu::CpuAllocator;
    /// let a = CpuAllocator::builder().build();
    /// assert!(!a.tracks_stats());
    /// ```
    pub fn build(self) -> CpuAllocator {
        let a = CpuAllocator::with_fill(self.fill);
        if self.track_stats {
            a.set_track_stats(true);
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fits_and_keeps_alignment() {
        assert!(std::mem::size_of::<Header>() <= HEADER_SIZE);
        assert!(HEADER_SIZE.is_multiple_of(ALIGNMENT));
    }

    #[test]
    fn deleters_are_distinct_functions() {
        assert!(!std::ptr::fn_addr_eq(
            CpuAllocator::plain_deleter(),
            CpuAllocator::counting_deleter()
        ));
    }

    #[test]
    fn header_records_size_and_stats() {
        let a = CpuAllocator::new();
        let p = a.allocate(100).unwrap();
        // SAFETY: reading the header this module wrote in front of `p`.
        let h = unsafe { p.get().sub(HEADER_SIZE).cast::<Header>().read() };
        assert_eq!(h.size, 100);
        assert!(h.stats.is_null());
        a.set_track_stats(true);
        let q = a.allocate(7).unwrap();
        // SAFETY: as above.
        let h = unsafe { q.get().sub(HEADER_SIZE).cast::<Header>().read() };
        assert_eq!(h.size, 7);
        assert!(!h.stats.is_null());
        // The allocator holds one reference, the live counted block another.
        assert_eq!(Arc::strong_count(a.stats_block()), 2);
        drop(q);
        assert_eq!(Arc::strong_count(a.stats_block()), 1);
        drop(p);
    }

    #[test]
    fn layout_rejects_impossible_sizes() {
        assert!(block_layout(usize::MAX).is_none());
        assert!(block_layout(isize::MAX as usize).is_none());
        // Header, alignment padding and a 64-byte margin must fit below
        // isize::MAX.
        let largest = isize::MAX as usize - HEADER_SIZE - 2 * ALIGNMENT;
        assert!(block_layout(largest).is_some());
        assert!(block_layout(largest + 1).is_none());
        assert!(block_layout(1).is_some());
    }

    #[test]
    fn junk_fill_tail_is_word_image_prefix() {
        let mut buf = [0u64; 3];
        // SAFETY: 20 bytes of a 24-byte, 8-aligned local buffer.
        unsafe { junk_fill(buf.as_mut_ptr().cast(), 20) };
        let bytes: Vec<u8> = buf.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let img = JUNK_PATTERN.to_ne_bytes();
        assert_eq!(&bytes[0..8], &img);
        assert_eq!(&bytes[8..16], &img);
        assert_eq!(&bytes[16..20], &img[..4]);
        assert_eq!(&bytes[20..24], &[0, 0, 0, 0]);
    }

    #[test]
    fn delete_cpu_ignores_null() {
        // SAFETY: null is explicitly allowed.
        unsafe { delete_cpu(ptr::null_mut()) };
    }
}
