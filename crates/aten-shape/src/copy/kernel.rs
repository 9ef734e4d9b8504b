//! The strided copy engine: plans a copy between two layouts of equal sizes
//! and runs it on raw byte pointers.
//!
//! A copy is described by its sizes and the element strides of both sides.
//! [`CopyPlan::new`] simplifies that description once:
//!
//! 1. size-1 dims are dropped (their strides never matter) and a size-0 dim
//!    makes the copy empty;
//! 2. dims are put in loop order, outermost first, by decreasing destination
//!    stride (ties by source stride), so that writes walk memory forwards;
//! 3. adjacent dims that are contiguous with each other on *both* sides are
//!    merged, so a dense block becomes one long innermost dim;
//! 4. strides become byte strides, and the plan picks a [`Kind`]:
//!    * [`Kind::Runs`]: the innermost dim is contiguous on both sides (and
//!      rows are at least 32 bytes), so each innermost row is one `memcpy`
//!      (a fully dense copy is a single `memcpy`);
//!    * [`Kind::Transpose`]: the destination is contiguous along the
//!      innermost dim and the source along another dim `b`: see below;
//!    * [`Kind::Strided`]: anything else, one element at a time along the
//!      innermost dim, the other dims through an odometer.
//!
//! Transposes run over square tiles (up to 1 KiB of each row, 256 rows),
//! and each tile over *line blocks*: `64 / elem` rows of 64 bytes, a cache
//! line, on both sides. A line block loads each of its source lines in
//! full (four 16-byte loads), transposes 16-byte blocks in SSE2 registers
//! (`log2(16 / elem)` rounds of unpacks; a portable array version serves
//! other targets) and stores each destination line in full. So every line
//! is touched once on each side, even when power-of-two strides map all
//! rows to one cache set. Destinations of at least 16 MiB whose rows are
//! 16-byte aligned are written with streaming (non-temporal) stores and a
//! closing `sfence`: they skip the read-for-ownership of each destination
//! line, which is a third of the memory traffic of a cached transpose.
//! Edges that do not fill a line block use single 16-byte blocks, then
//! scalar copies.
//!
//! Execution ([`copy_same_dtype`]) is monomorphised per element size (1, 2,
//! 4, 8 and 16 bytes, moved as `u8` ... `u128` with unaligned loads and
//! stores, so no alignment is assumed). Every entry point takes a range of
//! the outermost dim, so disjoint ranges can run on different threads
//! (each thread's streaming stores are fenced before it returns).
//!
//! All pointer arithmetic is `wrapping_offset` on `isize` offsets; the
//! callers prove, before calling, that every element of both layouts lies
//! inside its buffer (see the `# Safety` sections).

use std::mem::size_of;
use std::ops::Range;
use std::ptr;

use smallvec::{smallvec, SmallVec};

/// Inline capacity for per-dim data (most tensors have at most 8 dims).
pub(crate) type Dims<T> = SmallVec<[T; 8]>;

/// How a plan is executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Some size is 0: nothing to copy.
    Empty,
    /// The innermost dim is contiguous on both sides: one `memcpy` per
    /// innermost row.
    Runs,
    /// The destination is contiguous along the innermost dim and the source
    /// along dim `b`: tiled 2-d transposes over those two dims.
    Transpose {
        /// The dim along which the source is contiguous.
        b: usize,
    },
    /// Element by element along the innermost dim.
    Strided,
}

/// A simplified copy: dims in loop order (outermost first) with byte
/// strides for both sides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CopyPlan {
    /// Sizes, outermost first; every size is at least 2, except for the
    /// single dim of size 1 that stands for a one-element copy.
    pub(crate) sizes: Dims<usize>,
    /// Destination byte strides.
    pub(crate) dst: Dims<isize>,
    /// Source byte strides.
    pub(crate) src: Dims<isize>,
    /// Destination element size in bytes.
    pub(crate) dst_elem: usize,
    /// Source element size in bytes.
    pub(crate) src_elem: usize,
    /// How to run it.
    pub(crate) kind: Kind,
}

impl CopyPlan {
    /// Calls `f` with the destination and source byte offsets of every
    /// innermost row whose outermost index lies in `first` (the innermost
    /// dim is left to the caller, which copies a whole row per call).
    pub(crate) fn for_each_row(&self, first: Range<usize>, f: impl FnMut(isize, isize)) {
        let last = self.sizes.len() - 1;
        for_each_index(
            &self.sizes[..last],
            &self.dst[..last],
            &self.src[..last],
            first,
            f,
        );
    }

    /// Plans `dst[i] = src[i]` for every index `i` of `sizes`, given element
    /// strides and element sizes of both sides. `None` if a size is negative
    /// or a byte stride does not fit in `isize` (impossible for layouts that
    /// lie inside real buffers).
    pub(crate) fn new(
        sizes: &[i64],
        dst_strides: &[i64],
        src_strides: &[i64],
        dst_elem: usize,
        src_elem: usize,
    ) -> Option<CopyPlan> {
        if sizes.len() != dst_strides.len() || sizes.len() != src_strides.len() {
            return None;
        }
        if sizes.iter().any(|&n| n < 0) {
            return None;
        }
        if sizes.contains(&0) {
            return Some(CopyPlan {
                sizes: smallvec![0],
                dst: smallvec![0],
                src: smallvec![0],
                dst_elem,
                src_elem,
                kind: Kind::Empty,
            });
        }
        // Loop order and merges: c10's copy-dim simplification (shared
        // with the CUDA copies).
        let merged = c10_core::geometry::coalesce_copy_dims(sizes, dst_strides, src_strides);
        let de = i64::try_from(dst_elem).ok()?;
        let se = i64::try_from(src_elem).ok()?;
        let mut plan = CopyPlan {
            sizes: SmallVec::new(),
            dst: SmallVec::new(),
            src: SmallVec::new(),
            dst_elem,
            src_elem,
            kind: Kind::Strided,
        };
        for (n, ds, ss) in merged {
            plan.sizes.push(usize::try_from(n).ok()?);
            plan.dst.push(isize::try_from(ds.checked_mul(de)?).ok()?);
            plan.src.push(isize::try_from(ss.checked_mul(se)?).ok()?);
        }
        if plan.sizes.is_empty() {
            // A single element (0-d tensor, or all sizes 1).
            plan.sizes.push(1);
            plan.dst.push(isize::try_from(dst_elem).ok()?);
            plan.src.push(isize::try_from(src_elem).ok()?);
        }
        plan.kind = plan.pick_kind();
        Some(plan)
    }

    fn pick_kind(&self) -> Kind {
        if self.dst_elem != self.src_elem {
            return Kind::Strided;
        }
        let e = self.dst_elem as isize;
        let last = self.sizes.len() - 1;
        if self.dst[last] == e && self.src[last] == e {
            // Short rows are cheaper element by element than through memcpy.
            let long = self.sizes.len() == 1 || self.sizes[last] * self.dst_elem >= MIN_RUN_BYTES;
            return if long { Kind::Runs } else { Kind::Strided };
        }
        if self.dst[last] == e {
            // The innermost dim along which the source is contiguous.
            if let Some(b) = (0..last).rev().find(|&d| self.src[d] == e) {
                return Kind::Transpose { b };
            }
        }
        Kind::Strided
    }

    /// The size of the outermost dim: the range that
    /// [`copy_same_dtype`] and the conversion kernel split.
    pub(crate) fn outer_len(&self) -> usize {
        match self.kind {
            Kind::Empty => 0,
            _ => self.sizes[0],
        }
    }
}

/// Calls `f(dst_offset, src_offset)` for every index of the dims
/// `sizes`/`dst`/`src` (outermost first), in row-major order, with the
/// outermost index restricted to `first`. With no dims, calls `f(0, 0)`
/// once. The innermost of these dims is a plain loop; only the dims above
/// it go through the odometer.
pub(crate) fn for_each_index(
    sizes: &[usize],
    dst: &[isize],
    src: &[isize],
    first: Range<usize>,
    mut f: impl FnMut(isize, isize),
) {
    let Some(inner) = sizes.len().checked_sub(1) else {
        f(0, 0);
        return;
    };
    let first = first.start..first.end.min(sizes[0]);
    let inner_range = if inner == 0 {
        first.clone()
    } else {
        0..sizes[inner]
    };
    let (di, si) = (dst[inner], src[inner]);
    let start = inner_range.start as isize;
    let count = inner_range.len();
    let mut row = |d: isize, s: isize| {
        let mut d = d.wrapping_add(start.wrapping_mul(di));
        let mut s = s.wrapping_add(start.wrapping_mul(si));
        for _ in 0..count {
            f(d, s);
            d = d.wrapping_add(di);
            s = s.wrapping_add(si);
        }
    };
    if inner == 0 {
        row(0, 0);
    } else {
        odometer(&sizes[..inner], &dst[..inner], &src[..inner], first, row);
    }
}

/// Calls `f(dst_offset, src_offset)` for every index of the (non-empty list
/// of) dims, in row-major order, with the outermost index in `first`.
fn odometer(
    sizes: &[usize],
    dst: &[isize],
    src: &[isize],
    first: Range<usize>,
    mut f: impl FnMut(isize, isize),
) {
    let n = sizes.len();
    if n == 0 || first.is_empty() {
        return;
    }
    let mut idx: Dims<usize> = smallvec![0; n];
    idx[0] = first.start;
    let mut d = (first.start as isize).wrapping_mul(dst[0]);
    let mut s = (first.start as isize).wrapping_mul(src[0]);
    loop {
        f(d, s);
        let mut k = n;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            let end = if k == 0 { first.end } else { sizes[k] };
            if idx[k] < end {
                d = d.wrapping_add(dst[k]);
                s = s.wrapping_add(src[k]);
                break;
            }
            if k == 0 {
                return;
            }
            // Back to index 0 along dim k, then carry into dim k - 1.
            let back = (idx[k] - 1) as isize;
            d = d.wrapping_sub(back.wrapping_mul(dst[k]));
            s = s.wrapping_sub(back.wrapping_mul(src[k]));
            idx[k] = 0;
        }
    }
}

/// Reads an `E` from `p` (any alignment).
///
/// # Safety
///
/// `p` must be valid for reads of `size_of::<E>()` initialised bytes, and
/// every bit pattern must be a valid `E` (true for the integer types and
/// integer arrays used here).
#[inline(always)]
unsafe fn load<E: Copy>(p: *const u8) -> E {
    // SAFETY: guaranteed by the caller; unaligned read.
    unsafe { p.cast::<E>().read_unaligned() }
}

/// Writes an `E` to `p` (any alignment).
///
/// # Safety
///
/// `p` must be valid for writes of `size_of::<E>()` bytes.
#[inline(always)]
unsafe fn store<E: Copy>(p: *mut u8, v: E) {
    // SAFETY: guaranteed by the caller; unaligned write.
    unsafe { p.cast::<E>().write_unaligned(v) }
}

/// Copies a plan whose two sides have the same element size, restricted to
/// indices whose outermost index lies in `range` (clamped to
/// `0..plan.outer_len()`).
///
/// # Safety
///
/// * `plan.dst_elem == plan.src_elem`.
/// * For every index `(i_0, ..., i_{n-1})` of the plan with `i_0` in
///   `range`, `dst.wrapping_offset(Σ i_k · plan.dst[k])` is valid for writes
///   of `plan.dst_elem` bytes and `src.wrapping_offset(Σ i_k · plan.src[k])`
///   is valid for reads of `plan.src_elem` initialised bytes.
/// * No byte of a destination element is a byte of a source element, and
///   no other thread reads or writes the destination bytes, or writes the
///   source bytes, during the call. (Destination elements may overlap each
///   other: they are then written more than once.)
pub(crate) unsafe fn copy_same_dtype(
    plan: &CopyPlan,
    dst: *mut u8,
    src: *const u8,
    range: Range<usize>,
) {
    // SAFETY: (all arms) forwarded from this function's contract; the
    // element type has exactly `plan.dst_elem` bytes.
    unsafe {
        match plan.dst_elem {
            1 => run::<u8>(plan, dst, src, range),
            2 => run::<u16>(plan, dst, src, range),
            4 => run::<u32>(plan, dst, src, range),
            8 => run::<u64>(plan, dst, src, range),
            16 => run::<u128>(plan, dst, src, range),
            _ => run_bytes(plan, dst, src, range),
        }
    }
}

/// Side of the square tiles of the transpose path, in elements: up to 1 KiB
/// of each row and 256 rows (at most 256 KiB per side, about what L2
/// keeps while both sides move along whole cache lines). A multiple of the
/// line block side `64 / elem`.
const fn tile_side(elem: usize) -> usize {
    let t = 1024 / elem;
    if t > 256 {
        256
    } else {
        t
    }
}

/// Innermost rows shorter than this are copied element by element rather
/// than with `memcpy`.
const MIN_RUN_BYTES: usize = 32;

/// Innermost rows of up to this many bytes (and at least
/// [`MIN_RUN_BYTES`]) are copied with inline 16-byte moves
/// ([`copy_short_run`]) rather than one `memcpy` call each.
const SHORT_RUN_MAX_BYTES: usize = 512;

/// Transposes whose destination has at least this many bytes write it with
/// non-temporal stores (x86-64), which skip reading the destination lines
/// into the cache first; smaller ones are likely to be read again soon
/// and are better left in the cache.
const NON_TEMPORAL_BYTES: usize = 16 << 20;

/// How many line blocks ahead the transpose prefetches its source lines.
/// Measured on the 4096² f32 transpose (one thread): 1 and 2 both beat
/// none by about a third; 2 is a little ahead of 1 and of 4 or 8.
const PREFETCH_BLOCKS: usize = 2;

/// [`copy_same_dtype`] for one element type `E`.
///
/// # Safety
///
/// As for [`copy_same_dtype`], with `size_of::<E>() == plan.dst_elem`.
unsafe fn run<E: Elem>(plan: &CopyPlan, dst: *mut u8, src: *const u8, range: Range<usize>) {
    let range = range.start..range.end.min(plan.outer_len());
    if range.is_empty() {
        return;
    }
    let e = size_of::<E>();
    let n = plan.sizes.len();
    let last = n - 1;
    match plan.kind {
        Kind::Empty => {}
        Kind::Runs if n == 1 => {
            // One dense block: a single memcpy of the range.
            let off = (range.start * e) as isize;
            // SAFETY: elements `range` of the single contiguous dim are
            // valid and disjoint between the sides (contract), and they form
            // one contiguous block of `range.len() * e` bytes on each side.
            unsafe {
                ptr::copy_nonoverlapping(
                    src.wrapping_offset(off),
                    dst.wrapping_offset(off),
                    range.len() * e,
                );
            }
        }
        Kind::Runs if plan.sizes[last] * e <= SHORT_RUN_MAX_BYTES => {
            // Short runs (a 4-d permute that keeps the innermost dim, say
            // 256-byte rows): inline 16-byte moves beat a `memcpy` call
            // per row, whose dispatch and size tests cost as much as
            // moving the row.
            let run_bytes = plan.sizes[last] * e;
            plan.for_each_row(range, |d, s| {
                // SAFETY: as in the arm below; `run_bytes` is at least
                // MIN_RUN_BYTES (Kind::Runs with more than one dim).
                unsafe {
                    copy_short_run(dst.wrapping_offset(d), src.wrapping_offset(s), run_bytes)
                };
            });
        }
        Kind::Runs => {
            let run_bytes = plan.sizes[last] * e;
            plan.for_each_row(range, |d, s| {
                // SAFETY: (d, s) are the offsets of an index whose innermost
                // row is contiguous on both sides (Kind::Runs), valid and
                // disjoint between the sides (contract).
                unsafe { copy_run(dst.wrapping_offset(d), src.wrapping_offset(s), run_bytes) };
            });
        }
        Kind::Strided if n == 1 => {
            let (ds, ss) = (plan.dst[0], plan.src[0]);
            let start = range.start as isize;
            // SAFETY: the elements `range` of the single dim are valid
            // (contract).
            unsafe {
                strided_row::<E>(
                    dst.wrapping_offset(start.wrapping_mul(ds)),
                    ds,
                    src.wrapping_offset(start.wrapping_mul(ss)),
                    ss,
                    range.len(),
                );
            }
        }
        Kind::Strided => {
            let (len, ds, ss) = (plan.sizes[last], plan.dst[last], plan.src[last]);
            plan.for_each_row(range, |d, s| {
                // SAFETY: the innermost row at (d, s) consists of valid
                // elements of the plan (contract).
                unsafe {
                    strided_row::<E>(dst.wrapping_offset(d), ds, src.wrapping_offset(s), ss, len)
                };
            });
        }
        Kind::Transpose { b } => {
            // The dims other than `b` and the innermost one, outermost first.
            let mut sizes: Dims<usize> = SmallVec::new();
            let mut dsts: Dims<isize> = SmallVec::new();
            let mut srcs: Dims<isize> = SmallVec::new();
            for k in (0..last).filter(|&k| k != b) {
                sizes.push(plan.sizes[k]);
                dsts.push(plan.dst[k]);
                srcs.push(plan.src[k]);
            }
            // `range` restricts dim 0, which is either `b` or the first
            // of the other dims.
            let (b_range, outer_range) = if b == 0 {
                (range, 0..sizes.first().copied().unwrap_or(1))
            } else {
                (0..plan.sizes[b], range)
            };
            let total = plan.sizes.iter().fold(e, |acc, &n| acc.saturating_mul(n));
            let t = Transpose2d {
                na: plan.sizes[last],
                b: b_range,
                dsb: plan.dst[b],
                ssa: plan.src[last],
                non_temporal: total >= NON_TEMPORAL_BYTES,
            };
            for_each_index(&sizes, &dsts, &srcs, outer_range, |d, s| {
                // SAFETY: (d, s) locate a valid 2-d slice of the plan over
                // dims (last, b) in which the destination is contiguous along
                // the innermost dim and the source along `b` (Kind::Transpose).
                unsafe { t.run::<E>(dst.wrapping_offset(d), src.wrapping_offset(s)) };
            });
        }
    }
}

/// Copies one contiguous run of `bytes` bytes.
///
/// # Safety
///
/// `src` valid for reads and `dst` for writes of `bytes` bytes; the two
/// ranges do not overlap.
#[inline(always)]
unsafe fn copy_run(dst: *mut u8, src: *const u8, bytes: usize) {
    // SAFETY: guaranteed by the caller.
    unsafe { ptr::copy_nonoverlapping(src, dst, bytes) }
}

/// Copies one contiguous run of `bytes` bytes, `16 <= bytes`, with inline
/// 16-byte moves: four at a time, then one at a time, then the last 16
/// bytes of the run once more if `bytes` is not a multiple of 16 (those
/// overlap bytes already written with the same values, which is harmless
/// since the two sides do not overlap).
///
/// # Safety
///
/// `bytes >= 16`; `src` valid for reads and `dst` for writes of `bytes`
/// bytes; the two ranges do not overlap.
#[inline(always)]
unsafe fn copy_short_run(dst: *mut u8, src: *const u8, bytes: usize) {
    let mut i = 0;
    while i + 64 <= bytes {
        // SAFETY: the four 16-byte accesses lie at offsets `i..i + 64`,
        // `i + 64 <= bytes`, so inside both runs (caller); `u128` accepts
        // every bit pattern, and `load`/`store` are unaligned.
        unsafe {
            let x0 = load::<u128>(src.add(i));
            let x1 = load::<u128>(src.add(i + 16));
            let x2 = load::<u128>(src.add(i + 32));
            let x3 = load::<u128>(src.add(i + 48));
            store(dst.add(i), x0);
            store(dst.add(i + 16), x1);
            store(dst.add(i + 32), x2);
            store(dst.add(i + 48), x3);
        }
        i += 64;
    }
    while i + 16 <= bytes {
        // SAFETY: bytes `i..i + 16` of both runs, `i + 16 <= bytes`.
        unsafe { store(dst.add(i), load::<u128>(src.add(i))) };
        i += 16;
    }
    if i < bytes {
        let tail = bytes - 16;
        // SAFETY: bytes `bytes - 16..bytes` of both runs (`bytes >= 16`).
        unsafe { store(dst.add(tail), load::<u128>(src.add(tail))) };
    }
}

/// `dst[i * ds] = src[i * ss]` for `i in 0..len` (byte strides).
///
/// # Safety
///
/// Each of those `len` source elements valid for reads, destination
/// elements for writes; no destination byte is a source byte.
#[inline(always)]
unsafe fn strided_row<E: Copy>(dst: *mut u8, ds: isize, src: *const u8, ss: isize, len: usize) {
    let (mut d, mut s) = (dst, src);
    for _ in 0..len {
        // SAFETY: element i of both rows (caller).
        unsafe { store::<E>(d, load::<E>(s)) };
        d = d.wrapping_offset(ds);
        s = s.wrapping_offset(ss);
    }
}

/// One 2-d transpose: `dst[b][a] = src[a][b]` for `a in 0..na`, `b` in
/// `self.b`, where the destination is contiguous along `a` (row stride
/// `dsb` bytes) and the source along `b` (row stride `ssa` bytes).
struct Transpose2d {
    na: usize,
    b: Range<usize>,
    dsb: isize,
    ssa: isize,
    /// Whether to write with non-temporal stores where possible.
    non_temporal: bool,
}

impl Transpose2d {
    /// Runs the transpose in square tiles of [`tile_side`] elements, each
    /// made of `E::N`×`E::N` block transposes (16 bytes per block row)
    /// plus scalar edges. With `non_temporal`, where streaming stores exist
    /// and every destination block row is 16-byte aligned, blocks are
    /// written with streaming stores, and a store fence follows.
    ///
    /// # Safety
    ///
    /// For `a in 0..na` and `b` in `self.b`, with `e = size_of::<E>()`:
    /// `dst + b·dsb + a·e` valid for writes of `e` bytes and
    /// `src + a·ssa + b·e` valid for reads of `e` initialised bytes; no
    /// destination byte is a source byte.
    unsafe fn run<E: Elem>(&self, dst: *mut u8, src: *const u8) {
        let aligned = dst.addr().is_multiple_of(16) && self.dsb.unsigned_abs().is_multiple_of(16);
        if STREAMING_STORES && self.non_temporal && aligned {
            // SAFETY: forwarded contract; a block's destination rows start at
            // `dst + b·dsb + a·e` with `a` a multiple of N (tiles start at
            // multiples of the tile side, a multiple of N), so at a
            // multiple of 16 bytes from the aligned `dst`.
            unsafe { self.tiles::<E, true>(dst, src) };
            store_fence();
        } else {
            // SAFETY: forwarded contract.
            unsafe { self.tiles::<E, false>(dst, src) };
        }
    }

    /// # Safety
    ///
    /// As for [`Transpose2d::run`]; with `NT`, `dst` and `dsb` are 16-byte
    /// aligned.
    unsafe fn tiles<E: Elem, const NT: bool>(&self, dst: *mut u8, src: *const u8) {
        // With streaming stores, tiles are strips one line block tall
        // across the whole `b` range: `l` source rows are each read
        // front to back (streams the prefetchers follow), and every
        // destination line is written once, in full, straight to memory,
        // so nothing needs to stay cached between line blocks. Measured on
        // the 4096² f32 transpose into huge pages, one thread: 6.6 ms
        // against 11.3 ms for square tiles (`memcpy` of the same bytes:
        // 6.0 ms). Without streaming stores the destination lines are
        // cached, and square tiles keep both sides' lines in L2.
        let (ta, tb) = if NT {
            (4 * E::N, self.b.len().max(1))
        } else {
            let t = tile_side(size_of::<E>());
            (t, t)
        };
        let mut a0 = 0;
        while a0 < self.na {
            let a1 = (a0 + ta).min(self.na);
            let mut b0 = self.b.start;
            while b0 < self.b.end {
                let b1 = (b0 + tb).min(self.b.end);
                // SAFETY: a sub-rectangle of the caller's valid rectangle;
                // `a0` is a multiple of `ta` (a tile side or `4·E::N`),
                // hence of `E::N`.
                unsafe { self.tile::<E, NT>(dst, src, a0..a1, b0..b1) };
                b0 = b1;
            }
            a0 = a1;
        }
    }

    /// One tile: line blocks (`4·N`×`4·N` elements, one 64-byte cache line
    /// per row on both sides), then `N`×`N` blocks and scalar copies along
    /// the edges.
    ///
    /// # Safety
    ///
    /// As for [`Transpose2d::tiles`], for `a` in `ar` (starting at a
    /// multiple of `4·E::N`) and `b` in `br`.
    #[inline(always)]
    unsafe fn tile<E: Elem, const NT: bool>(
        &self,
        dst: *mut u8,
        src: *const u8,
        ar: Range<usize>,
        br: Range<usize>,
    ) {
        let l = 4 * E::N;
        let am = ar.start + ar.len() / l * l;
        let bm = br.start + br.len() / l * l;
        let mut b = br.start;
        while b < bm {
            let mut a = ar.start;
            while a < am {
                // Start loading the source lines of the line block
                // `PREFETCH_BLOCKS` steps ahead in this loop's order while
                // this one is transposed: they are one line on each of `l`
                // rows a page or more apart, which the hardware prefetchers
                // do not follow (measured: 15.3 -> 11.3 ms on the 4096²
                // transpose into huge pages). Addresses past the tile are
                // harmless: a prefetch never faults.
                let (mut pa, mut pb) = (a + PREFETCH_BLOCKS * l, b);
                while pa >= am {
                    pa -= am - ar.start;
                    pb += l;
                }
                for r in 0..l {
                    prefetch(self.src_at::<E>(src, pa + r, pb));
                }
                // SAFETY: the line block at (a, b) lies inside the tile
                // (a + l <= am, b + l <= bm); its rows are contiguous along b
                // (source) and a (destination); `a` is a multiple of N, so
                // its destination rows are aligned as NT needs (caller).
                unsafe {
                    E::line_block::<NT>(
                        self.dst_at::<E>(dst, a, b),
                        self.dsb,
                        self.src_at::<E>(src, a, b),
                        self.ssa,
                    )
                };
                a += l;
            }
            b += l;
        }
        // SAFETY: the two edge strips are sub-rectangles of the tile.
        unsafe {
            self.edge::<E>(dst, src, am..ar.end, br.start..bm);
            self.edge::<E>(dst, src, ar.clone(), bm..br.end);
        }
    }

    /// Address of source element (a, b).
    fn src_at<E>(&self, src: *const u8, a: usize, b: usize) -> *const u8 {
        src.wrapping_offset((a as isize) * self.ssa + (b * size_of::<E>()) as isize)
    }

    /// Address of destination element (a, b).
    fn dst_at<E>(&self, dst: *mut u8, a: usize, b: usize) -> *mut u8 {
        dst.wrapping_offset((b as isize) * self.dsb + (a * size_of::<E>()) as isize)
    }

    /// An edge strip: `N`×`N` blocks where they fit, scalar copies
    /// elsewhere (plain stores).
    ///
    /// # Safety
    ///
    /// As for [`Transpose2d::tiles`], for `a` in `ar` and `b` in `br`.
    unsafe fn edge<E: Elem>(
        &self,
        dst: *mut u8,
        src: *const u8,
        ar: Range<usize>,
        br: Range<usize>,
    ) {
        let n = E::N;
        let e = size_of::<E>() as isize;
        let am = ar.start + ar.len() / n * n;
        let bm = br.start + br.len() / n * n;
        let at =
            |a: usize, b: usize| src.wrapping_offset((a as isize) * self.ssa + (b as isize) * e);
        let dt =
            |a: usize, b: usize| dst.wrapping_offset((b as isize) * self.dsb + (a as isize) * e);
        let mut b = br.start;
        while b < bm {
            let mut a = ar.start;
            while a < am {
                // SAFETY: the N×N block at (a, b) lies inside the strip: N
                // source rows of N contiguous elements along b, N
                // destination rows of N contiguous elements along a.
                unsafe { E::block(dt(a, b), self.dsb, at(a, b), self.ssa) };
                a += n;
            }
            for bb in b..b + n {
                for aa in am..ar.end {
                    // SAFETY: (aa, bb) lies inside the strip.
                    unsafe { store::<E>(dt(aa, bb), load::<E>(at(aa, bb))) };
                }
            }
            b += n;
        }
        for bb in bm..br.end {
            for aa in ar.clone() {
                // SAFETY: (aa, bb) lies inside the strip.
                unsafe { store::<E>(dt(aa, bb), load::<E>(at(aa, bb))) };
            }
        }
    }
}

/// An element type of the engine (an unsigned integer of the element's
/// size: every bit pattern is valid) with its block transposes.
trait Elem: Copy {
    /// Side of the square block transposed in registers: the elements in
    /// 16 bytes (one SSE register per block row).
    const N: usize;

    /// Transposes one `N`×`N` block with plain stores: `dst[j][i] =
    /// src[i][j]`, where source row `i` is at `src + i·ssa` and destination
    /// row `j` at `dst + j·dsb`, each `N` contiguous elements.
    ///
    /// # Safety
    ///
    /// For `i in 0..N`, `src + i·ssa` valid for reads of `N` elements; for
    /// `j in 0..N`, `dst + j·dsb` valid for writes of `N` elements; no
    /// destination byte is a source byte.
    unsafe fn block(dst: *mut u8, dsb: isize, src: *const u8, ssa: isize);

    /// Transposes one `4N`×`4N` block (rows of 64 bytes, a cache line):
    /// reads every source row in full first, then writes every destination
    /// row in full, so each line is touched once on each side even when
    /// the rows map to the same cache set. With `NT`, writes with streaming
    /// stores where available (the caller fences).
    ///
    /// # Safety
    ///
    /// As for [`Elem::block`] with `4N` rows of `4N` elements on each side;
    /// with `NT`, every `dst + j·dsb` is 16-byte aligned.
    unsafe fn line_block<const NT: bool>(dst: *mut u8, dsb: isize, src: *const u8, ssa: isize);
}

macro_rules! elem_impl {
    ($($t:ty => $n:literal),*) => {$(
        impl Elem for $t {
            const N: usize = $n;
            #[inline(always)]
            unsafe fn block(dst: *mut u8, dsb: isize, src: *const u8, ssa: isize) {
                // SAFETY: forwarded contract; N elements of this type are 16
                // bytes.
                unsafe { simd::block::<$t, $n>(dst, dsb, src, ssa) }
            }
            #[inline(always)]
            unsafe fn line_block<const NT: bool>(dst: *mut u8, dsb: isize, src: *const u8, ssa: isize) {
                // SAFETY: forwarded contract; N elements of this type are 16
                // bytes.
                unsafe { simd::line_block::<$t, $n, NT>(dst, dsb, src, ssa) }
            }
        }
    )*};
}
elem_impl!(u8 => 16, u16 => 8, u32 => 4, u64 => 2, u128 => 1);

/// `k` with its `log2(n)` low bits reversed: the destination row of the
/// `k`-th register after the unpack network of `simd::transpose`.
#[inline(always)]
const fn bit_reverse(k: usize, n: usize) -> usize {
    let bits = n.trailing_zeros();
    if bits == 0 {
        0
    } else {
        k.reverse_bits() >> (usize::BITS - bits)
    }
}

/// Block transposes in SSE2 registers (x86-64 baseline).
#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_setzero_si128, _mm_storeu_si128, _mm_unpackhi_epi16,
        _mm_unpackhi_epi32, _mm_unpackhi_epi64, _mm_unpackhi_epi8, _mm_unpacklo_epi16,
        _mm_unpacklo_epi32, _mm_unpacklo_epi64, _mm_unpacklo_epi8,
    };
    use std::mem::size_of;

    use super::{bit_reverse, store_streaming};

    /// Transposes `N` registers of `N` elements of `E` each (`N ·
    /// size_of::<E>() == 16`): `log2(N)` rounds of interleaving pairs of
    /// rows at growing widths leave column `bit_reverse(k)` in register `k`.
    #[inline(always)]
    fn transpose<E, const N: usize>(mut v: [__m128i; N]) -> [__m128i; N] {
        let mut width = size_of::<E>();
        while width < 16 {
            let prev = v;
            for k in 0..N / 2 {
                let (x, y) = (prev[2 * k], prev[2 * k + 1]);
                // SAFETY: register-only shuffles; SSE2 is part of the x86-64
                // baseline.
                let (lo, hi) = unsafe {
                    match width {
                        1 => (_mm_unpacklo_epi8(x, y), _mm_unpackhi_epi8(x, y)),
                        2 => (_mm_unpacklo_epi16(x, y), _mm_unpackhi_epi16(x, y)),
                        4 => (_mm_unpacklo_epi32(x, y), _mm_unpackhi_epi32(x, y)),
                        _ => (_mm_unpacklo_epi64(x, y), _mm_unpackhi_epi64(x, y)),
                    }
                };
                v[k] = lo;
                v[k + N / 2] = hi;
            }
            width *= 2;
        }
        v
    }

    /// See [`super::Elem::block`].
    ///
    /// # Safety
    ///
    /// As for [`super::Elem::block`], with `N · size_of::<E>() == 16`.
    #[inline(always)]
    pub(super) unsafe fn block<E, const N: usize>(
        dst: *mut u8,
        dsb: isize,
        src: *const u8,
        ssa: isize,
    ) {
        // SAFETY: source row i is valid for 16 bytes (caller); unaligned load.
        let rows: [__m128i; N] = std::array::from_fn(|i| unsafe {
            _mm_loadu_si128(src.wrapping_offset(i as isize * ssa).cast())
        });
        for (k, x) in transpose::<E, N>(rows).into_iter().enumerate() {
            let p = dst.wrapping_offset(bit_reverse(k, N) as isize * dsb);
            // SAFETY: destination row bit_reverse(k) is valid for 16 bytes
            // (caller); unaligned store.
            unsafe { _mm_storeu_si128(p.cast(), x) };
        }
    }

    /// See [`super::Elem::line_block`].
    ///
    /// # Safety
    ///
    /// As for [`super::Elem::line_block`], with `N · size_of::<E>() == 16`.
    #[inline(always)]
    pub(super) unsafe fn line_block<E, const N: usize, const NT: bool>(
        dst: *mut u8,
        dsb: isize,
        src: *const u8,
        ssa: isize,
    ) {
        // The 4N source rows, as `chunks[c][g][r]`: 16-byte column c of
        // row g·N + r (rows in 4 groups of N).
        // SAFETY: register-only (SSE2 baseline).
        let zero = unsafe { _mm_setzero_si128() };
        let mut chunks = [[[zero; N]; 4]; 4];
        for g in 0..4 {
            for r in 0..N {
                let p = src.wrapping_offset((g * N + r) as isize * ssa);
                for (c, chunk) in chunks.iter_mut().enumerate() {
                    // SAFETY: source row g·N + r is valid for 64 bytes
                    // (caller); unaligned load.
                    chunk[g][r] = unsafe { _mm_loadu_si128(p.wrapping_add(16 * c).cast()) };
                }
            }
        }
        // Destination rows come in 4 groups of N, one per source column c;
        // each row gets one register from each row group g.
        for (c, chunk) in chunks.iter().enumerate() {
            let cols: [[__m128i; N]; 4] = std::array::from_fn(|g| transpose::<E, N>(chunk[g]));
            for k in 0..N {
                let p = dst.wrapping_offset((c * N + bit_reverse(k, N)) as isize * dsb);
                for (g, col) in cols.iter().enumerate() {
                    let q = p.wrapping_add(16 * g);
                    if NT {
                        // SAFETY: destination row c·N + bit_reverse(k) is
                        // valid for 64 bytes and 16-byte aligned (caller).
                        unsafe { store_streaming(q, col[k]) };
                    } else {
                        // SAFETY: as above; unaligned store.
                        unsafe { _mm_storeu_si128(q.cast(), col[k]) };
                    }
                }
            }
        }
    }
}

/// Block transposes through arrays, for targets without SSE2 (and compiled
/// in tests, to check them against the SSE2 versions).
#[cfg(any(not(target_arch = "x86_64"), test))]
mod portable {
    use super::{load, store};

    /// See [`super::Elem::block`].
    ///
    /// # Safety
    ///
    /// As for [`super::Elem::block`].
    #[inline(always)]
    pub(super) unsafe fn block<E: Copy, const N: usize>(
        dst: *mut u8,
        dsb: isize,
        src: *const u8,
        ssa: isize,
    ) {
        // SAFETY: source row i is valid for N elements (caller); every bit
        // pattern of `[E; N]` is valid when it is for `E`.
        let rows: [[E; N]; N] = std::array::from_fn(|i| unsafe {
            load::<[E; N]>(src.wrapping_offset(i as isize * ssa))
        });
        let cols: [[E; N]; N] = std::array::from_fn(|j| std::array::from_fn(|i| rows[i][j]));
        for (j, col) in cols.into_iter().enumerate() {
            // SAFETY: destination row j is valid for N elements (caller).
            unsafe { store::<[E; N]>(dst.wrapping_offset(j as isize * dsb), col) };
        }
    }

    /// See [`super::Elem::line_block`] (plain stores only).
    ///
    /// # Safety
    ///
    /// As for [`super::Elem::line_block`].
    #[inline(always)]
    pub(super) unsafe fn line_block<E: Copy, const N: usize, const NT: bool>(
        dst: *mut u8,
        dsb: isize,
        src: *const u8,
        ssa: isize,
    ) {
        let e = std::mem::size_of::<E>();
        for bj in 0..4 {
            for ai in 0..4 {
                let d = dst.wrapping_offset((bj * N) as isize * dsb + (ai * N * e) as isize);
                let s = src.wrapping_offset((ai * N) as isize * ssa + (bj * N * e) as isize);
                // SAFETY: an N×N sub-block of the caller's line block.
                unsafe { block::<E, N>(d, dsb, s, ssa) };
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
use portable as simd;

/// Hints that the cache line at `p` will be read soon. A hint only: `p`
/// need not be valid (a prefetch never faults), so it takes no `unsafe`.
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `prefetcht0` reads nothing architecturally and cannot fault,
    // whatever the address; SSE is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = p;
}

/// Whether [`store_streaming`] really streams (x86-64 outside Miri).
const STREAMING_STORES: bool = cfg!(all(target_arch = "x86_64", not(miri)));

/// Orders earlier streaming stores before later stores (the guard release
/// that publishes the copy); nothing to do without streaming stores.
#[inline]
fn store_fence() {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `sfence` has no preconditions; SSE is part of the x86-64
    // baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Writes the 16 bytes of `v` to `p` with a non-temporal (streaming) store
/// where available (x86-64 outside Miri), a plain store otherwise. The
/// caller fences after the last one.
///
/// # Safety
///
/// `p` valid for writes of 16 bytes and 16-byte aligned.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn store_streaming(p: *mut u8, v: std::arch::x86_64::__m128i) {
    #[cfg(not(miri))]
    // SAFETY: `p` is valid and 16-byte aligned (caller); SSE2 is part of
    // the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_stream_si128(p.cast(), v)
    };
    #[cfg(miri)]
    // SAFETY: `p` is valid for the write (caller).
    unsafe {
        std::arch::x86_64::_mm_storeu_si128(p.cast(), v)
    };
}

/// Fallback for element sizes other than 1, 2, 4, 8, 16: each element is a
/// `memcpy` of its bytes.
///
/// # Safety
///
/// As for [`copy_same_dtype`].
unsafe fn run_bytes(plan: &CopyPlan, dst: *mut u8, src: *const u8, range: Range<usize>) {
    if plan.kind == Kind::Empty {
        return;
    }
    let e = plan.dst_elem;
    for_each_index(&plan.sizes, &plan.dst, &plan.src, range, |d, s| {
        // SAFETY: (d, s) are the offsets of a valid element of each side,
        // disjoint between the sides (caller).
        unsafe { ptr::copy_nonoverlapping(src.wrapping_offset(s), dst.wrapping_offset(d), e) };
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_merges_dense_and_orders_by_destination() {
        // Contiguous 2x3x4 to contiguous: one run of 24 elements.
        let p = CopyPlan::new(&[2, 3, 4], &[12, 4, 1], &[12, 4, 1], 4, 4).unwrap();
        assert_eq!((p.sizes.as_slice(), p.kind), (&[24usize][..], Kind::Runs));
        // Transposed source: the destination order wins, source contiguous
        // along dim 0 of the plan.
        let p = CopyPlan::new(&[5, 7], &[7, 1], &[1, 5], 4, 4).unwrap();
        assert_eq!(p.sizes.as_slice(), &[5, 7]);
        assert_eq!(p.kind, Kind::Transpose { b: 0 });
        // Narrowed rows merge the trailing dims on both sides.
        let p = CopyPlan::new(&[8, 512, 64], &[32768, 64, 1], &[33792, 64, 1], 4, 4).unwrap();
        assert_eq!(
            (p.sizes.as_slice(), p.kind),
            (&[8usize, 32768][..], Kind::Runs)
        );
        // Size-1 dims vanish; size 0 empties.
        let p = CopyPlan::new(&[1, 3, 1], &[99, 1, 7], &[5, 2, 3], 2, 2).unwrap();
        assert_eq!((p.sizes.as_slice(), p.kind), (&[3usize][..], Kind::Strided));
        let p = CopyPlan::new(&[4, 0], &[1, 1], &[1, 1], 2, 2).unwrap();
        assert_eq!((p.kind, p.outer_len()), (Kind::Empty, 0));
        // Short contiguous rows go element by element.
        let p = CopyPlan::new(&[100, 3], &[3, 1], &[5, 1], 4, 4).unwrap();
        assert_eq!(p.kind, Kind::Strided);
        let p = CopyPlan::new(&[100, 8], &[8, 1], &[9, 1], 4, 4).unwrap();
        assert_eq!(p.kind, Kind::Runs);
        // 0-d: one element.
        let p = CopyPlan::new(&[], &[], &[], 8, 8).unwrap();
        assert_eq!((p.sizes.as_slice(), p.kind), (&[1usize][..], Kind::Runs));
    }

    /// The SSE2 and portable block transposes agree with the definition.
    fn check_blocks<E: Elem + PartialEq + std::fmt::Debug, const N: usize>(make: fn(usize) -> E) {
        let l = 4 * N;
        // Source: l rows of l + 3 elements (padding between rows).
        let ss = l + 3;
        let src: Vec<E> = (0..l * ss).map(make).collect();
        let sp = src.as_ptr().cast::<u8>();
        let e = size_of::<E>();
        let ssa = (ss * e) as isize;
        let dsb = ((l + 5) * e) as isize;
        let zero = make(usize::MAX);
        let want: Vec<E> = (0..l * (l + 5))
            .map(|k| {
                let (b, a) = (k / (l + 5), k % (l + 5));
                if a < l {
                    src[a * ss + b]
                } else {
                    zero
                }
            })
            .collect();
        let small = |k: usize| {
            let (b, a) = (k / (l + 5), k % (l + 5));
            if a < N && b < N {
                want[k]
            } else {
                zero
            }
        };
        type Kernel = unsafe fn(*mut u8, isize, *const u8, isize);
        let kernels: [(Kernel, bool); 4] = [
            (E::block, false),
            (E::line_block::<false>, true),
            (portable::block::<E, N>, false),
            (portable::line_block::<E, N, false>, true),
        ];
        for (i, (kernel, line)) in kernels.into_iter().enumerate() {
            let mut dst = vec![zero; l * (l + 5)];
            // SAFETY: `src` holds l rows of `ss >= l` elements and `dst` l
            // rows of `l + 5` elements: every block row is inside; the two
            // vectors are distinct allocations.
            unsafe { kernel(dst.as_mut_ptr().cast(), dsb, sp, ssa) };
            let expected: Vec<E> = if line {
                want.clone()
            } else {
                (0..want.len()).map(small).collect()
            };
            assert_eq!(dst, expected, "kernel {i} for {}-byte elements", e);
        }
    }

    #[test]
    fn block_transposes_agree() {
        check_blocks::<u8, 16>(|i| i as u8);
        check_blocks::<u16, 8>(|i| i as u16);
        check_blocks::<u32, 4>(|i| i as u32);
        check_blocks::<u64, 2>(|i| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        check_blocks::<u128, 1>(|i| i as u128 * 3);
    }

    #[test]
    fn odometer_visits_in_row_major_order() {
        let mut seen = Vec::new();
        for_each_index(&[2, 3], &[10, 1], &[1, 2], 0..2, |d, s| seen.push((d, s)));
        assert_eq!(
            seen,
            vec![(0, 0), (1, 2), (2, 4), (10, 1), (11, 3), (12, 5)]
        );
        let mut seen = Vec::new();
        for_each_index(&[3, 2], &[2, 1], &[2, 1], 1..3, |d, _| seen.push(d));
        assert_eq!(seen, vec![2, 3, 4, 5]);
    }
}
