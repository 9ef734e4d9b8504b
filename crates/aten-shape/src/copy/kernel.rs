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
//!    * [`Kind::Runs`]: the innermost dim is contiguous on both sides, so
//!      each innermost row is one `memcpy` (a fully dense copy is a single
//!      `memcpy`);
//!    * [`Kind::Transpose`]: the destination is contiguous along the
//!      innermost dim and the source along another dim `b`; the two dims
//!      are copied in cache-sized tiles made of small register-sized
//!      transposes, so reads and writes both move along whole cache lines;
//!    * [`Kind::Strided`]: anything else, one element at a time along the
//!      innermost dim.
//!
//! Execution ([`copy_same_dtype`]) is monomorphised per element size (1, 2,
//! 4, 8 and 16 bytes, moved as `u8` ... `u128` with unaligned loads and
//! stores, so no alignment is assumed). Every entry point takes a range of
//! the outermost dim, so disjoint ranges can run on different threads.
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
        let mut dims: Dims<(i64, i64, i64)> = SmallVec::new();
        let mut empty = false;
        for ((&n, &ds), &ss) in sizes.iter().zip(dst_strides).zip(src_strides) {
            match n {
                n if n < 0 => return None,
                0 => empty = true,
                1 => {}
                n => dims.push((n, ds, ss)),
            }
        }
        if empty {
            return Some(CopyPlan {
                sizes: smallvec![0],
                dst: smallvec![0],
                src: smallvec![0],
                dst_elem,
                src_elem,
                kind: Kind::Empty,
            });
        }
        // Loop order: outermost = largest destination stride (stable, so
        // ties keep the logical order).
        dims.sort_by(|a, b| {
            b.1.unsigned_abs()
                .cmp(&a.1.unsigned_abs())
                .then(b.2.unsigned_abs().cmp(&a.2.unsigned_abs()))
        });
        // Merge each dim into the previous (outer) one when the outer one
        // steps exactly over the whole inner one on both sides.
        let mut merged: Dims<(i64, i64, i64)> = SmallVec::new();
        for d in dims {
            if let Some(outer) = merged.last_mut() {
                let fits =
                    d.1.checked_mul(d.0) == Some(outer.1) && d.2.checked_mul(d.0) == Some(outer.2);
                if let (true, Some(n)) = (fits, outer.0.checked_mul(d.0)) {
                    *outer = (n, d.1, d.2);
                    continue;
                }
            }
            merged.push(d);
        }
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
            return Kind::Runs;
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
            1 => run::<u8, 16, 64>(plan, dst, src, range),
            2 => run::<u16, 16, 32>(plan, dst, src, range),
            4 => run::<u32, 8, 16>(plan, dst, src, range),
            8 => run::<u64, 8, 8>(plan, dst, src, range),
            16 => run::<u128, 4, 4>(plan, dst, src, range),
            _ => run_bytes(plan, dst, src, range),
        }
    }
}

/// Side of the square tiles of the transpose path, in elements: 1 KiB of
/// each row (tiles of at most 256 KiB per side, which stay in L2 while
/// both sides move along whole cache lines), half that with non-temporal
/// stores.
const fn tile_side(elem: usize, non_temporal: bool) -> usize {
    let t = match elem {
        0..=4 => 256,
        8 => 128,
        _ => 64,
    };
    if non_temporal {
        t / 2
    } else {
        t
    }
}

/// Transposes whose destination has at least this many bytes write it with
/// non-temporal stores (x86-64), which skip reading the destination lines
/// into the cache first; smaller ones are likely to be read again soon
/// and are better left in the cache.
const NON_TEMPORAL_BYTES: usize = 16 << 20;

/// [`copy_same_dtype`] for one element type `E`; `M` is the side of the
/// register-sized transposes of the tiled path, and `NA` the number of
/// elements in 64 bytes (a cache line, the row length of the transposes
/// done with non-temporal stores).
///
/// # Safety
///
/// As for [`copy_same_dtype`], with `size_of::<E>() == plan.dst_elem`.
unsafe fn run<E: Copy, const M: usize, const NA: usize>(
    plan: &CopyPlan,
    dst: *mut u8,
    src: *const u8,
    range: Range<usize>,
) {
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
        Kind::Runs => {
            let run_bytes = plan.sizes[last] * e;
            for_each_index(
                &plan.sizes[..last],
                &plan.dst[..last],
                &plan.src[..last],
                range,
                |d, s| {
                    // SAFETY: (d, s) are the offsets of an index whose innermost
                    // row is contiguous on both sides (Kind::Runs), valid and
                    // disjoint between the sides (contract).
                    unsafe { copy_run(dst.wrapping_offset(d), src.wrapping_offset(s), run_bytes) };
                },
            );
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
            for_each_index(
                &plan.sizes[..last],
                &plan.dst[..last],
                &plan.src[..last],
                range,
                |d, s| {
                    // SAFETY: the innermost row at (d, s) consists of valid
                    // elements of the plan (contract).
                    unsafe {
                        strided_row::<E>(
                            dst.wrapping_offset(d),
                            ds,
                            src.wrapping_offset(s),
                            ss,
                            len,
                        )
                    };
                },
            );
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
                unsafe { t.run::<E, M, NA>(dst.wrapping_offset(d), src.wrapping_offset(s)) };
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
    /// Runs the transpose in square tiles, each made of small transposes
    /// through registers plus scalar edges. With `non_temporal` (x86-64
    /// only, and only when every destination row segment is 16-byte
    /// aligned), the small transposes write whole cache lines (`NA`
    /// elements) with streaming stores, followed by a store fence.
    ///
    /// # Safety
    ///
    /// For `a in 0..na` and `b` in `self.b`, with `e = size_of::<E>()`:
    /// `dst + b·dsb + a·e` valid for writes of `e` bytes and
    /// `src + a·ssa + b·e` valid for reads of `e` initialised bytes; no
    /// destination byte is a source byte. `NA · e == 64`.
    unsafe fn run<E: Copy, const M: usize, const NA: usize>(&self, dst: *mut u8, src: *const u8) {
        let aligned = dst.addr().is_multiple_of(16) && self.dsb.unsigned_abs().is_multiple_of(16);
        if STREAMING_STORES && self.non_temporal && aligned {
            // SAFETY: forwarded contract; every destination row of an
            // NA×M block starts at `dst + b·dsb + a·e` with `a` a multiple
            // of NA (tiles are multiples of NA), so it is 16-byte aligned,
            // and it is NA·e = 64 bytes long.
            unsafe { self.tiles::<E, NA, M, true>(dst, src, tile_side(size_of::<E>(), true)) };
            store_fence();
            return;
        }
        // SAFETY: forwarded contract.
        unsafe { self.tiles::<E, M, M, false>(dst, src, tile_side(size_of::<E>(), false)) };
    }

    /// Runs `MA`×`MB` blocks over tiles of side `t` (a multiple of both).
    ///
    /// # Safety
    ///
    /// As for [`Transpose2d::run`]; with `NT`, destination row segments of
    /// `MA` elements at `a` multiple of `MA` are 16-byte aligned and
    /// `MA · e` is a multiple of 16.
    unsafe fn tiles<E: Copy, const MA: usize, const MB: usize, const NT: bool>(
        &self,
        dst: *mut u8,
        src: *const u8,
        t: usize,
    ) {
        let mut a0 = 0;
        while a0 < self.na {
            let a1 = (a0 + t).min(self.na);
            let mut b0 = self.b.start;
            while b0 < self.b.end {
                let b1 = (b0 + t).min(self.b.end);
                // SAFETY: a sub-rectangle of the caller's valid rectangle;
                // `a0` is a multiple of `t`, hence of `MA`.
                unsafe { self.tile::<E, MA, MB, NT>(dst, src, a0..a1, b0..b1) };
                b0 = b1;
            }
            a0 = a1;
        }
    }

    /// One tile.
    ///
    /// # Safety
    ///
    /// As for [`Transpose2d::tiles`], for `a` in `ar` (starting at a
    /// multiple of `MA`) and `b` in `br`.
    #[inline(always)]
    unsafe fn tile<E: Copy, const MA: usize, const MB: usize, const NT: bool>(
        &self,
        dst: *mut u8,
        src: *const u8,
        ar: Range<usize>,
        br: Range<usize>,
    ) {
        let e = size_of::<E>() as isize;
        let am = ar.start + ar.len() / MA * MA;
        let bm = br.start + br.len() / MB * MB;
        let at = |p: *const u8, a: usize, b: usize| {
            p.wrapping_offset((a as isize) * self.ssa + (b as isize) * e)
        };
        let dt = |p: *mut u8, a: usize, b: usize| {
            p.wrapping_offset((b as isize) * self.dsb + (a as isize) * e)
        };
        let mut b = br.start;
        while b < bm {
            let mut a = ar.start;
            while a < am {
                // SAFETY: the MA×MB block at (a, b) lies inside the tile
                // (a + MA <= am, b + MB <= bm); its source rows are MB
                // contiguous elements along b, its destination rows MA
                // contiguous elements along a (the layout this type
                // describes), aligned as NT needs (caller).
                unsafe { micro::<E, MA, MB, NT>(dt(dst, a, b), self.dsb, at(src, a, b), self.ssa) };
                a += MA;
            }
            for bb in b..b + MB {
                for aa in am..ar.end {
                    // SAFETY: (aa, bb) lies inside the tile.
                    unsafe { store::<E>(dt(dst, aa, bb), load::<E>(at(src, aa, bb))) };
                }
            }
            b += MB;
        }
        for bb in bm..br.end {
            for aa in ar.clone() {
                // SAFETY: (aa, bb) lies inside the tile.
                unsafe { store::<E>(dt(dst, aa, bb), load::<E>(at(src, aa, bb))) };
            }
        }
    }
}

/// Transposes an `MA`×`MB` block through registers: loads `MA` source rows
/// of `MB` contiguous elements, stores `MB` destination rows of `MA`
/// contiguous elements (with streaming stores if `NT`).
///
/// # Safety
///
/// For `i in 0..MA`, `src + i·ssa` is valid for reads of `MB` elements; for
/// `j in 0..MB`, `dst + j·dsb` is valid for writes of `MA` elements (of
/// `size_of::<E>()` bytes each, contiguous); no destination byte is a
/// source byte. With `NT`, every `dst + j·dsb` is 16-byte aligned and
/// `MA · size_of::<E>()` is a multiple of 16.
#[inline(always)]
unsafe fn micro<E: Copy, const MA: usize, const MB: usize, const NT: bool>(
    dst: *mut u8,
    dsb: isize,
    src: *const u8,
    ssa: isize,
) {
    // SAFETY: source row i is valid for MB elements (caller); `[E; MB]`
    // has every bit pattern valid when `E` does.
    let rows: [[E; MB]; MA] =
        std::array::from_fn(|i| unsafe { load::<[E; MB]>(src.wrapping_offset(i as isize * ssa)) });
    let cols: [[E; MA]; MB] = std::array::from_fn(|j| std::array::from_fn(|i| rows[i][j]));
    for (j, col) in cols.into_iter().enumerate() {
        let d = dst.wrapping_offset(j as isize * dsb);
        if NT {
            // SAFETY: destination row j is valid for MA elements, 16-byte
            // aligned, a multiple of 16 bytes long (caller).
            unsafe { store_streaming(d, col) };
        } else {
            // SAFETY: destination row j is valid for MA elements (caller).
            unsafe { store::<[E; MA]>(d, col) };
        }
    }
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

/// Writes `v` to `p` with non-temporal (streaming) 16-byte stores where
/// available (x86-64 outside Miri), plain stores otherwise. The caller
/// fences after the last one.
///
/// # Safety
///
/// `p` valid for writes of `size_of::<T>()` bytes, 16-byte aligned;
/// `size_of::<T>()` a multiple of 16.
#[inline(always)]
unsafe fn store_streaming<T: Copy>(p: *mut u8, v: T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        use std::arch::x86_64::{__m128i, _mm_stream_si128};
        let bytes = (&raw const v).cast::<u8>();
        for k in 0..size_of::<T>() / 16 {
            // SAFETY: chunk k of `v` (16 bytes, read unaligned) and of the
            // destination, which is 16-byte aligned and valid (caller);
            // SSE2 is part of the x86-64 baseline.
            unsafe {
                let x = bytes.add(16 * k).cast::<__m128i>().read_unaligned();
                _mm_stream_si128(p.add(16 * k).cast::<__m128i>(), x);
            }
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    // SAFETY: `p` is valid for the write (caller).
    unsafe {
        store::<T>(p, v)
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
        // 0-d: one element.
        let p = CopyPlan::new(&[], &[], &[], 8, 8).unwrap();
        assert_eq!((p.sizes.as_slice(), p.kind), (&[1usize][..], Kind::Runs));
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
