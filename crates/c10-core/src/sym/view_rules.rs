//! The geometry rules of the view ops that rearrange, select or drop dims,
//! written once over [`ShapeInt`]: `aten_shape::views` (concrete tensors,
//! `T = i64`, writing in place into the new `TensorImpl`'s sizes and
//! strides) and `aten_shape::generic::Geometry` (symbolic sizes, `T =
//! SymInt`) both call these, so each rule has one implementation.
//!
//! Each rule works on slices (no allocation on the concrete path) and is
//! `#[inline(always)]`, so at `i64` it compiles to the code the concrete
//! op had before.
//!
//! ```
//! use c10_core::sym::view_rules::{transpose_dims, transpose_in_place};
//! let (mut sizes, mut strides) = ([2i64, 3], [3i64, 1]);
//! let (a, b) = transpose_dims(2, 0, -1)?;
//! transpose_in_place(&mut sizes, &mut strides, a, b);
//! assert_eq!((sizes, strides), ([3, 2], [1, 3]));
//! # Ok::<(), c10_core::TensorError>(())
//! ```

use super::{ShapeBool, ShapeInt};
use crate::error::{Result, TensorError};
use crate::geometry::{fmt_list, wrap_dim};

/// c10's `maybe_wrap_dim(dim, ndim, wrap_scalar = true)`, with an inlined
/// fast path for dims already in range.
///
/// ```
/// use c10_core::sym::view_rules::wrap;
/// assert_eq!(wrap(-1, 3)?, 2);
/// assert_eq!(wrap(0, 0)?, 0);
/// assert!(wrap(3, 3).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn wrap(dim: i64, ndim: usize) -> Result<usize> {
    let n = ndim as i64;
    if (0..n).contains(&dim) {
        Ok(dim as usize)
    } else if dim < 0 && dim >= -n {
        Ok((dim + n) as usize)
    } else {
        wrap_dim(dim, n, true)
    }
}

/// A set of dims: a bit mask for up to 64 dims, a `Vec` beyond.
///
/// ```
/// use c10_core::sym::view_rules::DimSet;
/// let mut s = DimSet::new(3);
/// assert!(s.insert(1) && !s.insert(1));
/// assert!(s.contains(1) && !s.contains(0));
/// ```
#[derive(Debug, Clone)]
pub struct DimSet {
    bits: u64,
    big: Vec<bool>,
}

impl DimSet {
    /// An empty set for dims `0..n`.
    #[inline]
    pub fn new(n: usize) -> DimSet {
        DimSet {
            bits: 0,
            big: if n > 64 { vec![false; n] } else { Vec::new() },
        }
    }
    /// Adds `d` (below the `n` of [`DimSet::new`]); false if it was
    /// already there.
    #[inline]
    pub fn insert(&mut self, d: usize) -> bool {
        if self.big.is_empty() {
            let bit = 1u64 << d;
            let fresh = self.bits & bit == 0;
            self.bits |= bit;
            fresh
        } else {
            !std::mem::replace(&mut self.big[d], true)
        }
    }
    /// Whether `d` is in the set.
    #[inline]
    pub fn contains(&self, d: usize) -> bool {
        if self.big.is_empty() {
            self.bits & (1u64 << d) != 0
        } else {
            self.big[d]
        }
    }
}

/// `transpose(dim0, dim1)`, part 1: the two dims, wrapped against `ndim`
/// (c10's errors). Equal dims make the result an alias.
///
/// ```
/// use c10_core::sym::view_rules::transpose_dims;
/// assert_eq!(transpose_dims(3, 0, -1)?, (0, 2));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn transpose_dims(ndim: usize, dim0: i64, dim1: i64) -> Result<(usize, usize)> {
    Ok((wrap(dim0, ndim)?, wrap(dim1, ndim)?))
}

/// `transpose`, part 2: swaps dims `a` and `b` (from [`transpose_dims`])
/// of a geometry in place.
///
/// ```
/// use c10_core::sym::view_rules::transpose_in_place;
/// let (mut sizes, mut strides) = ([2i64, 3, 4], [12i64, 4, 1]);
/// transpose_in_place(&mut sizes, &mut strides, 0, 2);
/// assert_eq!((sizes, strides), ([4, 3, 2], [1, 4, 12]));
/// ```
#[inline(always)]
pub fn transpose_in_place<T>(sizes: &mut [T], strides: &mut [T], a: usize, b: usize) {
    sizes.swap(a, b);
    strides.swap(a, b);
}

/// `permute(dims)`, part 1: ATen's checks (as many dims as the tensor
/// has, each in range, none repeated), with ATen's errors. After it
/// succeeds, [`permute_into`] is a permutation.
///
/// ```
/// use c10_core::sym::view_rules::check_permute;
/// assert!(check_permute(&[2, 0, 1], 3).is_ok());
/// assert_eq!(
///     check_permute(&[0, 0], 2).unwrap_err().to_string(),
///     "permute(): duplicate dims are not allowed."
/// );
/// ```
#[inline(always)]
pub fn check_permute(dims: &[i64], ndim: usize) -> Result<()> {
    if dims.len() != ndim {
        return Err(TensorError::runtime(format!(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to len(dims) = {}",
            dims.len()
        )));
    }
    let mut seen = DimSet::new(ndim);
    for &dim in dims {
        if !seen.insert(wrap(dim, ndim)?) {
            return Err(TensorError::runtime(
                "permute(): duplicate dims are not allowed.",
            ));
        }
    }
    Ok(())
}

/// `permute(dims)`, part 2: result dim `i` is input dim `dims[i]`. `dims`
/// must have passed [`check_permute`] against `sizes.len()`; the outputs
/// have `dims.len()` entries.
///
/// ```
/// use c10_core::sym::view_rules::permute_into;
/// let (mut sz, mut st) = ([0i64; 3], [0i64; 3]);
/// permute_into(&[2, 3, 4], &[12, 4, 1], &[2, 0, -2], &mut sz, &mut st);
/// assert_eq!((sz, st), ([4, 2, 3], [1, 12, 4]));
/// ```
#[inline(always)]
pub fn permute_into<T: Clone>(
    sizes: &[T],
    strides: &[T],
    dims: &[i64],
    out_sizes: &mut [T],
    out_strides: &mut [T],
) {
    let n = sizes.len() as i64;
    for (i, &dim) in dims.iter().enumerate() {
        // Every dim was wrapped successfully by `check_permute`.
        let d = if dim < 0 { dim + n } else { dim } as usize;
        out_sizes[i] = sizes[d].clone();
        out_strides[i] = strides[d].clone();
    }
}

/// `movedim(source, destination)`: result dim `destination[i]` is input
/// dim `source[i]`; the other input dims, in order, fill the other result
/// dims, in order. ATen's checks and errors (lengths, then every source
/// and every destination wrapped, then repeats). The outputs have
/// `sizes.len()` entries; with no dims nothing is written (the result is
/// an alias).
///
/// ```
/// use c10_core::sym::view_rules::movedim_into;
/// let (mut sz, mut st) = ([0i64; 3], [0i64; 3]);
/// movedim_into(&[2, 3, 4], &[12, 4, 1], &[0], &[-1], &mut sz, &mut st)?;
/// assert_eq!((sz, st), ([3, 4, 2], [4, 1, 12]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn movedim_into<T: Clone>(
    sizes: &[T],
    strides: &[T],
    source: &[i64],
    destination: &[i64],
    out_sizes: &mut [T],
    out_strides: &mut [T],
) -> Result<()> {
    if source.len() != destination.len() {
        return Err(TensorError::runtime(format!(
            "movedim: Invalid source or destination dims: source ({} dims) should contain the same number of dims as destination ({} dims)",
            fmt_list(source),
            fmt_list(destination)
        )));
    }
    let n = sizes.len();
    // PyTorch wraps every source, then every destination, then checks for
    // repeats.
    let mut src_set = DimSet::new(n.max(1));
    let mut dst_set = DimSet::new(n.max(1));
    let src_repeated = wrap_into(source, n, &mut src_set)?;
    let dst_repeated = wrap_into(destination, n, &mut dst_set)?;
    if src_repeated {
        return Err(TensorError::runtime(format!(
            "movedim: repeated dim in `source` ({})",
            fmt_list(source)
        )));
    }
    if dst_repeated {
        return Err(TensorError::runtime(format!(
            "movedim: repeated dim in `destination` ({})",
            fmt_list(destination)
        )));
    }
    if n == 0 {
        return Ok(());
    }
    for (&s, &d) in source.iter().zip(destination) {
        let (s, d) = (wrap(s, n)?, wrap(d, n)?);
        out_sizes[d] = sizes[s].clone();
        out_strides[d] = strides[s].clone();
    }
    let mut next = 0;
    for slot in 0..n {
        if dst_set.contains(slot) {
            continue;
        }
        while src_set.contains(next) {
            next += 1;
        }
        out_sizes[slot] = sizes[next].clone();
        out_strides[slot] = strides[next].clone();
        next += 1;
    }
    Ok(())
}

/// Wraps every dim of `dims` against `n` (into a set of `max(n, 1)`
/// dims); returns whether one repeats.
#[inline(always)]
fn wrap_into(dims: &[i64], n: usize, set: &mut DimSet) -> Result<bool> {
    let mut repeated = false;
    for &d in dims {
        repeated |= !set.insert(wrap(d, n)?);
    }
    Ok(repeated)
}

#[inline(always)]
fn is_one<T: ShapeInt>(s: &T) -> Result<bool> {
    // ATen: `guard_or_false(size == 1)` (a size-1 symbol not known to be 1
    // is kept).
    s.sym_eq(&T::from_i64(1))?.guard_or_false()
}

/// `squeeze()`: writes the dims whose size is 1 (`guard_or_false` on
/// symbols) left out into the front of `out_sizes`/`out_strides` (of at
/// least `sizes.len()` entries) and returns how many it wrote.
///
/// ```
/// use c10_core::sym::view_rules::squeeze_into;
/// let (mut sz, mut st) = ([0i64; 3], [0i64; 3]);
/// let k = squeeze_into(&[1, 3, 1], &[3, 1, 1], &mut sz, &mut st)?;
/// assert_eq!((k, sz[0], st[0]), (1, 3, 1));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn squeeze_into<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    out_sizes: &mut [T],
    out_strides: &mut [T],
) -> Result<usize> {
    let mut k = 0;
    for (s, st) in sizes.iter().zip(strides) {
        if !is_one(s)? {
            out_sizes[k] = s.clone();
            out_strides[k] = st.clone();
            k += 1;
        }
    }
    Ok(k)
}

/// `squeeze(dim)`: the dim to remove (wrapped; `None` when its size is
/// not 1, or for a 0-dim tensor: the result is then an alias).
///
/// ```
/// use c10_core::sym::view_rules::squeeze_dim_index;
/// assert_eq!(squeeze_dim_index(&[1i64, 3], -2)?, Some(0));
/// assert_eq!(squeeze_dim_index(&[1i64, 3], 1)?, None);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn squeeze_dim_index<T: ShapeInt>(sizes: &[T], dim: i64) -> Result<Option<usize>> {
    let d = wrap(dim, sizes.len())?;
    if sizes.is_empty() || !is_one(&sizes[d])? {
        return Ok(None);
    }
    Ok(Some(d))
}

/// `squeeze(dims)`: the listed dims (wrapped, each at most once: `dim 0
/// appears multiple times in the list of dims`) that have size 1 are
/// left out; writes the kept dims into the front of
/// `out_sizes`/`out_strides` (of at least `sizes.len()` entries) and
/// returns how many it wrote.
///
/// ```
/// use c10_core::sym::view_rules::squeeze_dims_into;
/// let (mut sz, mut st) = ([0i64; 4], [0i64; 4]);
/// let k = squeeze_dims_into(&[2, 1, 3, 1], &[3, 3, 1, 1], &[1, -1, 0], &mut sz, &mut st)?;
/// assert_eq!((&sz[..k], &st[..k]), (&[2i64, 3][..], &[3i64, 1][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn squeeze_dims_into<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    dims: &[i64],
    out_sizes: &mut [T],
    out_strides: &mut [T],
) -> Result<usize> {
    let n = sizes.len();
    if n > 64 {
        return Err(TensorError::runtime(
            "only tensors with up to 64 dims are supported",
        ));
    }
    let mut mask: u64 = 0;
    for &dim in dims {
        let d = wrap(dim, n)?;
        if mask & (1u64 << d) != 0 {
            return Err(TensorError::runtime(format!(
                "dim {d} appears multiple times in the list of dims"
            )));
        }
        mask |= 1u64 << d;
    }
    let mut k = 0;
    for (d, (s, st)) in sizes.iter().zip(strides).enumerate() {
        if !(mask & (1u64 << d) != 0 && is_one(s)?) {
            out_sizes[k] = s.clone();
            out_strides[k] = st.clone();
            k += 1;
        }
    }
    Ok(k)
}

/// `unsqueeze(dim)`: where the new size-1 dim goes (`dim` wrapped
/// against `ndim + 1`) and its stride, c10's `sizes[d] * strides[d]` (1
/// for a new last dim), with whether that `i64` product wrapped (c10
/// computes it unchecked).
///
/// ```
/// use c10_core::sym::view_rules::unsqueeze_rule;
/// assert_eq!(unsqueeze_rule(&[2i64, 3], &[3, 1], 0)?, (0, 6, false));
/// assert_eq!(unsqueeze_rule(&[2i64, 3], &[3, 1], -1)?, (2, 1, false));
/// assert!(unsqueeze_rule(&[1i64 << 40], &[1 << 40], 0)?.2);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn unsqueeze_rule<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    dim: i64,
) -> Result<(usize, T, bool)> {
    let d = wrap(dim, sizes.len() + 1)?;
    let mut wrapped = false;
    let stride = match (sizes.get(d), strides.get(d)) {
        (Some(s), Some(st)) => s.mul_flagged(st, &mut wrapped)?,
        _ => T::from_i64(1),
    };
    Ok((d, stride, wrapped))
}

/// The geometry of one dim after `slice`/`narrow`/`select`: the new
/// storage offset, the dim's new size and stride, and whether some `i64`
/// arithmetic wrapped (then the concrete ops install the view through the
/// checked `as_strided`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimSlice<T> {
    /// The new storage offset.
    pub offset: T,
    /// The dim's new size (unused by `select`, which drops the dim).
    pub size: T,
    /// The dim's new stride (unused by `select`).
    pub stride: T,
    /// Whether an `i64` product or sum wrapped.
    pub wrapped: bool,
}

/// `slice(dim, ...)`'s dim: ATen's 0-dim check (an index error), then
/// `dim` wrapped.
///
/// ```
/// use c10_core::sym::view_rules::slice_dim;
/// assert_eq!(slice_dim(2, -1)?, 1);
/// assert!(slice_dim(0, 0).unwrap_err().is_index_error());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn slice_dim(ndim: usize, dim: i64) -> Result<usize> {
    if ndim == 0 {
        return Err(TensorError::index(
            "slice() cannot be applied to a 0-dim tensor.",
        ));
    }
    wrap(dim, ndim)
}

/// ATen's `slice` on one dim of size `size` and stride `stride` of a
/// tensor at `offset`: `start`/`end` (default `0` and `INT64_MAX`) made
/// non-negative and clamped to `[0, size]`, the end kept at or after the
/// start (each clamp a `guard_bool` site on symbols), then size
/// `ceil((end - start) / step)`, stride `stride * step`, offset `offset +
/// start * stride`.
///
/// ```
/// use c10_core::sym::view_rules::slice_rule;
/// let r = slice_rule(&10i64, &1, &0, Some(&2), None, 3)?;
/// assert_eq!((r.offset, r.size, r.stride), (2, 3, 3));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn slice_rule<T: ShapeInt>(
    size: &T,
    stride: &T,
    offset: &T,
    start: Option<&T>,
    end: Option<&T>,
    step: i64,
) -> Result<DimSlice<T>> {
    if step <= 0 {
        return Err(TensorError::runtime("slice step must be positive"));
    }
    let zero: T = T::from_i64(0);
    let mut s: T = start.cloned().unwrap_or_else(|| T::from_i64(0));
    let mut e: T = end.cloned().unwrap_or_else(|| T::from_i64(i64::MAX));
    if s.sym_lt(&zero)?.guard_bool()? {
        s = s.add(size)?;
    }
    if e.sym_lt(&zero)?.guard_bool()? {
        e = e.add(size)?;
    }
    if s.sym_lt(&zero)?.guard_bool()? {
        s = zero.clone();
    } else if s.sym_gt(size)?.guard_bool()? {
        s = size.clone();
    }
    // Each end is clamped to [0, size] on its own, then the end is kept
    // at or after the start (the guards PyTorch records for `x[1:3]`,
    // `x[10:-11]`: `s >= 3`; `s >= 10`, `s < 11`).
    if e.maybe_as_int() == Some(i64::MAX) {
        e = size.clone();
    } else if e.sym_lt(&zero)?.guard_bool()? {
        e = zero;
    } else if e.sym_gt(size)?.guard_bool()? {
        e = size.clone();
    }
    if e.sym_lt(&s)?.guard_bool()? {
        e = s.clone();
    }
    let mut wrapped = false;
    let step_offset = s.mul_flagged(stride, &mut wrapped)?;
    let offset = offset.add_flagged(&step_offset, &mut wrapped)?;
    let len = e.sub(&s)?;
    // Ceil division (`step >= 1`). A huge step wraps `len + step - 1` as
    // PyTorch's int64 arithmetic does; when the wrapped quotient is
    // negative PyTorch would build a tensor with a negative size, which
    // is refused here.
    let new_size = len
        .add_flagged(&T::from_i64(step - 1), &mut wrapped)?
        .div(&T::from_i64(step))?;
    if let Some(v) = new_size.maybe_as_int() {
        if v < 0 {
            return Err(TensorError::runtime(format!(
                "slice: the size computed for step {step} overflowed (got {v})"
            )));
        }
    }
    let new_stride = stride.mul_flagged(&T::from_i64(step), &mut wrapped)?;
    Ok(DimSlice {
        offset,
        size: new_size,
        stride: new_stride,
        wrapped,
    })
}

/// `narrow(dim, start, length)`, part 1: ATen's checks before the size
/// is read (0-dim tensor, `length >= 0` as `expect_true` on symbols),
/// then `dim` wrapped.
///
/// ```
/// use c10_core::sym::view_rules::narrow_dim;
/// assert_eq!(narrow_dim(2, -1, &3i64)?, 1);
/// assert!(narrow_dim(2, 0, &-1i64).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn narrow_dim<T: ShapeInt>(ndim: usize, dim: i64, length: &T) -> Result<usize> {
    if ndim == 0 {
        return Err(TensorError::runtime(
            "narrow() cannot be applied to a 0-dim tensor.",
        ));
    }
    if !length.sym_ge(&T::from_i64(0))?.expect_true()? {
        return Err(TensorError::runtime(
            "narrow(): length must be non-negative.",
        ));
    }
    wrap(dim, ndim)
}

/// `narrow`, part 2: `start` checked against the dim's size `cur`
/// (`-cur <= start <= cur`, then `start + length <= cur`, ATen's errors)
/// and made non-negative; returns `(start, start + length)` for
/// [`slice_rule`] with step 1.
///
/// ```
/// use c10_core::sym::view_rules::narrow_bounds;
/// assert_eq!(narrow_bounds(&6i64, -2, &2)?, (4, 6));
/// assert!(narrow_bounds(&6i64, 5, &2).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn narrow_bounds<T: ShapeInt>(cur: &T, start: i64, length: &T) -> Result<(T, T)> {
    let mut st: T = T::from_i64(start);
    let lo_ok = cur.mul(&T::from_i64(-1))?.sym_le(&st)?.guard_bool()?;
    if !(lo_ok && st.sym_le(cur)?.guard_bool()?) {
        let lo = match cur.maybe_as_int() {
            Some(v) => v.wrapping_neg().to_string(),
            None => format!("-{cur}"),
        };
        return Err(TensorError::index(format!(
            "start out of range (expected to be in range of [{lo}, {cur}], but got {start})"
        )));
    }
    if st.sym_lt(&T::from_i64(0))?.guard_bool()? {
        st = st.add(cur)?;
    }
    if !st.sym_le(&cur.sub(length)?)?.expect_true()? {
        return Err(TensorError::runtime(format!(
            "start ({st}) + length ({length}) exceeds dimension size ({cur})."
        )));
    }
    let end = st.add(length)?;
    Ok((st, end))
}

/// `select(dim, ...)`'s dim: ATen's 0-dim check (an index error), then
/// `dim` wrapped.
///
/// ```
/// use c10_core::sym::view_rules::select_dim;
/// assert_eq!(select_dim(2, -2)?, 0);
/// assert!(select_dim(0, 0).unwrap_err().is_index_error());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn select_dim(ndim: usize, dim: i64) -> Result<usize> {
    if ndim == 0 {
        return Err(TensorError::index(
            "select() cannot be applied to a 0-dim tensor.",
        ));
    }
    wrap(dim, ndim)
}

/// `select(dim, index)` on the wrapped dim `d`: ATen's range check
/// (`size <= -1 - index || size <= index` is an index error, each a
/// `guard_bool` site on symbols), then the new storage offset `offset +
/// index * strides[d]` (a negative index counts from the end). The dim
/// itself is dropped by the caller. Returns the offset and whether the
/// `i64` arithmetic wrapped.
///
/// ```
/// use c10_core::sym::view_rules::select_offset;
/// assert_eq!(select_offset(&[4i64, 6], &[6, 1], &0, 1, -1)?, (5, false));
/// assert!(select_offset(&[4i64, 6], &[6, 1], &0, 1, 6).unwrap_err().is_index_error());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn select_offset<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    offset: &T,
    d: usize,
    index: i64,
) -> Result<(T, bool)> {
    let size = &sizes[d];
    let idx: T = T::from_i64(index);
    // `!index` is `-1 - index` without overflow.
    if size.sym_le(&T::from_i64(!index))?.guard_bool()? || size.sym_le(&idx)?.guard_bool()? {
        return Err(TensorError::index(format!(
            "select(): index {index} out of range for tensor of size {} at dimension {d}",
            super::fmt_list(sizes)
        )));
    }
    let mut wrapped = false;
    let idx = if index < 0 {
        idx.add_flagged(size, &mut wrapped)?
    } else {
        idx
    };
    let step_offset = idx.mul_flagged(&strides[d], &mut wrapped)?;
    let offset = offset.add_flagged(&step_offset, &mut wrapped)?;
    Ok((offset, wrapped))
}

/// Integers whose value can be forced to a plain `i64` (c10's
/// `guard_int`): the count of pieces `split` returns must be one.
///
/// ```
/// use c10_core::sym::view_rules::GuardInt;
/// assert_eq!(5i64.guard_int()?, 5);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait GuardInt: ShapeInt {
    /// The value; on symbols decided from the hints and guarded with
    /// `Eq(self, value)`.
    fn guard_int(&self) -> Result<i64>;
}

impl GuardInt for i64 {
    #[inline]
    fn guard_int(&self) -> Result<i64> {
        Ok(*self)
    }
}

impl GuardInt for super::SymInt {
    fn guard_int(&self) -> Result<i64> {
        super::SymInt::guard_int(self)
    }
}

/// How `split(split_size, dim)` cuts: the wrapped dim, the number of
/// pieces and the last piece's length (every other piece has
/// `split_size`; the last may be shorter). See [`split_plan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitPlan<T> {
    /// The wrapped dim.
    pub dim: usize,
    /// The number of pieces (at least 1).
    pub num_splits: i64,
    /// The last piece's length.
    pub last: T,
}

/// `split(split_size, dim)`: ATen's checks and errors (a 0-dim tensor;
/// `split_size >= 0`; `split_size` 0 only for a dim of size 0, each a
/// `guard_bool` site on symbols), then `max(ceil(size / split_size), 1)`
/// pieces (`guard_int`'d) and the last piece's length `split_size -
/// (split_size * num_splits - size)`. Piece `i` is then `narrow(dim,
/// i * split_size, length)`.
///
/// ```
/// use c10_core::sym::view_rules::split_plan;
/// let p = split_plan(&[5i64, 2], &2, 0)?;
/// assert_eq!((p.dim, p.num_splits, p.last), (0, 3, 1));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn split_plan<T: GuardInt>(sizes: &[T], split_size: &T, dim: i64) -> Result<SplitPlan<T>> {
    if sizes.is_empty() {
        return Err(TensorError::runtime(
            "split expects at least a 1-dimensional tensor",
        ));
    }
    let zero = T::from_i64(0);
    if !split_size.sym_ge(&zero)?.guard_bool()? {
        return Err(TensorError::runtime(format!(
            "split expects split_size be non-negative, but got split_size={split_size}"
        )));
    }
    let d = wrap(dim, sizes.len())?;
    let dim_size = &sizes[d];
    if !(split_size.sym_gt(&zero)?.guard_bool()? || dim_size.sym_eq(&zero)?.guard_bool()?) {
        return Err(TensorError::runtime(format!(
            "split_size can only be 0 if dimension size is 0, but got dimension size of {dim_size}"
        )));
    }
    let mut num_splits: i64 = 1;
    if split_size.sym_ne(&zero)?.guard_bool()? {
        let n = dim_size
            .add(split_size)?
            .sub(&T::from_i64(1))?
            .div(split_size)?;
        num_splits = n.guard_int()?.max(1);
    }
    let last = split_size.sub(&split_size.mul(&T::from_i64(num_splits))?.sub(dim_size)?)?;
    Ok(SplitPlan {
        dim: d,
        num_splits,
        last,
    })
}

/// `chunk(chunks, dim)`: ATen's checks and errors (a 0-dim tensor;
/// `chunks > 0`), then the wrapped dim and the `split` size
/// `ceil(size / chunks)`; the flag says every piece is empty (split size
/// and dim size both 0: `chunks` empty pieces, `split_with_sizes` of
/// zeros), else the result is `split(split_size, dim)`.
///
/// ```
/// use c10_core::sym::view_rules::chunk_split_size;
/// assert_eq!(chunk_split_size(&[5i64], 2, 0)?, (0, 3, false));
/// assert_eq!(chunk_split_size(&[0i64], 3, -1)?, (0, 0, true));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn chunk_split_size<T: ShapeInt>(
    sizes: &[T],
    chunks: i64,
    dim: i64,
) -> Result<(usize, T, bool)> {
    if sizes.is_empty() {
        return Err(TensorError::runtime(
            "chunk expects at least a 1-dimensional tensor",
        ));
    }
    if chunks <= 0 {
        return Err(TensorError::runtime(format!(
            "chunk expects `chunks` to be greater than 0, got: {chunks}"
        )));
    }
    let d = wrap(dim, sizes.len())?;
    let dim_size = &sizes[d];
    let split_size = dim_size
        .add(&T::from_i64(chunks.wrapping_sub(1)))?
        .div(&T::from_i64(chunks))?;
    let zero = T::from_i64(0);
    let all_empty =
        split_size.sym_eq(&zero)?.guard_bool()? && dim_size.sym_eq(&zero)?.guard_bool()?;
    Ok((d, split_size, all_empty))
}

/// The plan of `diagonal` (see [`diagonal_plan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagonalPlan<T> {
    /// The wrapped `dim1`.
    pub d1: usize,
    /// The wrapped `dim2`.
    pub d2: usize,
    /// The diagonal's length.
    pub size: T,
    /// The diagonal's stride.
    pub stride: T,
    /// The new storage offset.
    pub offset: T,
    /// Whether some `i64` arithmetic wrapped.
    pub wrapped: bool,
}

/// `diagonal(offset, dim1, dim2)`: ATen's checks (`dim1`, `dim2` wrapped,
/// not identical), the diagonal's length `max(min(size1, size2 -
/// offset), 0)` (or `max(min(size1 + offset, size2), 0)` for a negative
/// offset) and stride `stride1 + stride2`. An empty diagonal keeps the
/// input's storage offset (decided only when statically known, with no
/// guard: PyTorch's fake path records none here); otherwise the offset
/// moves by `offset * stride2` (or `-offset * stride1`). The result's
/// dims are then written by [`diagonal_fill`].
///
/// ```
/// use c10_core::sym::view_rules::diagonal_plan;
/// let p = diagonal_plan(&[3i64, 4], &[4, 1], &0, 1, 0, 1)?;
/// assert_eq!((p.size, p.stride, p.offset), (3, 5, 1));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn diagonal_plan<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    storage_offset: &T,
    offset: i64,
    dim1: i64,
    dim2: i64,
) -> Result<DiagonalPlan<T>> {
    let n = sizes.len();
    let d1 = wrap(dim1, n)?;
    let d2 = wrap(dim2, n)?;
    if d1 == d2 {
        return Err(TensorError::runtime(format!(
            "diagonal dimensions cannot be identical {dim1}, {dim2}"
        )));
    }
    let mut wrapped = false;
    let zero = T::from_i64(0);
    let off: T = T::from_i64(offset);
    let (s1, s2) = (&sizes[d1], &sizes[d2]);
    let diag = if offset >= 0 {
        s1.min(&s2.sub_flagged(&off, &mut wrapped)?)?.max(&zero)?
    } else {
        s1.add_flagged(&off, &mut wrapped)?.min(s2)?.max(&zero)?
    };
    let mut storage = storage_offset.clone();
    if diag.sym_eq(&zero)?.statically_known_true()? {
    } else if offset >= 0 {
        let step = off.mul_flagged(&strides[d2], &mut wrapped)?;
        storage = storage.add_flagged(&step, &mut wrapped)?;
    } else {
        let step = off.mul_flagged(&strides[d1], &mut wrapped)?;
        storage = storage.sub_flagged(&step, &mut wrapped)?;
    }
    let stride = strides[d1].add_flagged(&strides[d2], &mut wrapped)?;
    Ok(DiagonalPlan {
        d1,
        d2,
        size: diag,
        stride,
        offset: storage,
        wrapped,
    })
}

/// `diagonal`, part 2: the dims other than `plan.d1`, `plan.d2`, in
/// order, then the diagonal, written into `out_sizes`/`out_strides` (of
/// `sizes.len() - 1` entries).
///
/// ```
/// use c10_core::sym::view_rules::{diagonal_fill, diagonal_plan};
/// let p = diagonal_plan(&[2i64, 3, 4], &[12, 4, 1], &0, 0, 0, 2)?;
/// let (mut sz, mut st) = ([0i64; 2], [0i64; 2]);
/// diagonal_fill(&[2, 3, 4], &[12, 4, 1], &p, &mut sz, &mut st);
/// assert_eq!((sz, st), ([3, 2], [4, 13]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn diagonal_fill<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    plan: &DiagonalPlan<T>,
    out_sizes: &mut [T],
    out_strides: &mut [T],
) {
    let mut k = 0;
    for (i, (s, st)) in sizes.iter().zip(strides).enumerate() {
        if i != plan.d1 && i != plan.d2 {
            out_sizes[k] = s.clone();
            out_strides[k] = st.clone();
            k += 1;
        }
    }
    out_sizes[k] = plan.size.clone();
    out_strides[k] = plan.stride.clone();
}

/// The plan of `unfold` (see [`unfold_plan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnfoldPlan<T> {
    /// The wrapped dim (0 for a 0-dim tensor).
    pub dim: usize,
    /// The unfolded dim's new size and stride (`None` for a 0-dim
    /// tensor).
    pub folded: Option<(T, T)>,
    /// The new last dim: `size`, with the dim's old stride (1 for a 0-dim
    /// tensor).
    pub window: (T, T),
    /// Whether some `i64` arithmetic wrapped.
    pub wrapped: bool,
}

/// `unfold(dimension, size, step)`: ATen's checks and errors (`size >=
/// 0`; `size <= max_size`, a `guard_bool` site on symbols; `step > 0`),
/// then the dim's new size `(size_d - size) / step + 1` and stride
/// `stride_d * step`, and a new last dim of `size` with stride
/// `stride_d`. The result's dims are written by [`unfold_fill`].
///
/// ```
/// use c10_core::sym::view_rules::unfold_plan;
/// let p = unfold_plan(&[8i64], &[1], 0, 3, 2)?;
/// assert_eq!((p.folded, p.window), (Some((3, 2)), (3, 1)));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn unfold_plan<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    dimension: i64,
    size: i64,
    step: i64,
) -> Result<UnfoldPlan<T>> {
    let n = sizes.len();
    let d = wrap(dimension, n)?;
    if size < 0 {
        return Err(TensorError::runtime(format!(
            "size is {size} but must be >= 0"
        )));
    }
    let one = T::from_i64(1);
    let max_size: &T = if n == 0 { &one } else { &sizes[d] };
    if !T::from_i64(size).sym_le(max_size)?.guard_bool()? {
        return Err(TensorError::runtime(format!(
            "maximum size for tensor at dimension {d} is {max_size} but size is {size}"
        )));
    }
    if step <= 0 {
        return Err(TensorError::runtime(format!(
            "step is {step} but must be > 0"
        )));
    }
    let mut wrapped = false;
    let (folded, window_stride) = if n == 0 {
        (None, T::from_i64(1))
    } else {
        // `size <= sizes[d]` and `step >= 1`: no overflow, no division
        // trap.
        let new_size = sizes[d]
            .sub(&T::from_i64(size))?
            .div(&T::from_i64(step))?
            .add_flagged(&one, &mut wrapped)?;
        let new_stride = strides[d].mul_flagged(&T::from_i64(step), &mut wrapped)?;
        (Some((new_size, new_stride)), strides[d].clone())
    };
    Ok(UnfoldPlan {
        dim: d,
        folded,
        window: (T::from_i64(size), window_stride),
        wrapped,
    })
}

/// `unfold`, part 2: the input's dims with the unfolded one changed, then
/// the window dim, written into `out_sizes`/`out_strides` (of
/// `sizes.len() + 1` entries).
///
/// ```
/// use c10_core::sym::view_rules::{unfold_fill, unfold_plan};
/// let p = unfold_plan(&[8i64], &[1], 0, 3, 2)?;
/// let (mut sz, mut st) = ([0i64; 2], [0i64; 2]);
/// unfold_fill(&[8], &[1], &p, &mut sz, &mut st);
/// assert_eq!((sz, st), ([3, 3], [2, 1]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn unfold_fill<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    plan: &UnfoldPlan<T>,
    out_sizes: &mut [T],
    out_strides: &mut [T],
) {
    let n = sizes.len();
    out_sizes[..n].clone_from_slice(sizes);
    out_strides[..n].clone_from_slice(strides);
    if let Some((s, st)) = &plan.folded {
        out_sizes[plan.dim] = s.clone();
        out_strides[plan.dim] = st.clone();
    }
    out_sizes[n] = plan.window.0.clone();
    out_strides[n] = plan.window.1.clone();
}

/// What `flatten(start_dim, end_dim)` makes of a tensor (ATen's
/// `flatten`), decided once for concrete and symbolic sizes.
#[derive(Clone, Debug, PartialEq)]
pub enum FlattenPlan<T> {
    /// A 0-dim tensor: `reshape([1])`.
    Scalar,
    /// `start_dim == end_dim`: the tensor itself.
    Unchanged,
    /// `reshape` to these sizes: dims `start..=end` merged into their
    /// product.
    Reshape(smallvec::SmallVec<[T; 8]>),
}

/// [`FlattenPlan`] for `sizes`: both dims wrapped first, then
/// `flatten() has invalid args: start_dim cannot come after end_dim`; the
/// merged size is c10's `multiply_integers` (a wrapping `int64` product on
/// concrete sizes).
///
/// ```
/// use c10_core::sym::view_rules::{flatten_plan, FlattenPlan};
/// let p = flatten_plan(&[2i64, 3, 4], 0, 1)?;
/// assert_eq!(p, FlattenPlan::Reshape([6i64, 4].into_iter().collect()));
/// assert_eq!(flatten_plan::<i64>(&[], 0, -1)?, FlattenPlan::Scalar);
/// assert_eq!(flatten_plan(&[2i64, 3], 1, 1)?, FlattenPlan::Unchanged);
/// assert!(flatten_plan(&[2i64, 3], 1, 0).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn flatten_plan<T: ShapeInt>(
    sizes: &[T],
    start_dim: i64,
    end_dim: i64,
) -> Result<FlattenPlan<T>> {
    let n = sizes.len();
    let s = wrap(start_dim, n)?;
    let e = wrap(end_dim, n)?;
    if s > e {
        return Err(TensorError::runtime(
            "flatten() has invalid args: start_dim cannot come after end_dim",
        ));
    }
    if n == 0 {
        return Ok(FlattenPlan::Scalar);
    }
    if s == e {
        return Ok(FlattenPlan::Unchanged);
    }
    let mut merged = T::from_i64(1);
    for x in &sizes[s..=e] {
        merged = merged.mul(x)?;
    }
    let mut shape = smallvec::SmallVec::with_capacity(n - (e - s));
    shape.extend(sizes[..s].iter().cloned());
    shape.push(merged);
    shape.extend(sizes[e + 1..].iter().cloned());
    Ok(FlattenPlan::Reshape(shape))
}

/// The sizes `unflatten(dim, sizes)` views a tensor of sizes `old` as
/// (Python's `Tensor.unflatten`): `sizes` checked before `dim`, one `-1`
/// inferred from the size of `dim`, with PyTorch's messages (`unflatten:
/// Provided sizes [..] don't multiply up to the size of dim d (n) in the
/// input tensor`).
///
/// ```
/// use c10_core::sym::view_rules::unflatten_shape;
/// assert_eq!(&unflatten_shape(&[2i64, 12], 1, &[3, -1])?[..], &[2, 3, 4]);
/// assert_eq!(
///     unflatten_shape(&[2i64, 12], 1, &[5, -1]).unwrap_err().to_string(),
///     "unflatten: Provided sizes [5, -1] don't multiply up to the size of dim 1 (12) in the input tensor"
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn unflatten_shape<T: ShapeInt>(
    old: &[T],
    dim: i64,
    sizes: &[T],
) -> Result<smallvec::SmallVec<[T; 8]>> {
    if sizes.is_empty() {
        return Err(TensorError::runtime("unflatten: sizes must be non-empty"));
    }
    let n = old.len();
    let d = wrap(dim, n)?;
    if n == 0 {
        return Err(TensorError::runtime(format!(
            "unflatten got an unexpected error:\nDimension specified as {d} but tensor has no dimensions"
        )));
    }
    let dim_size = &old[d];
    let mut shape: smallvec::SmallVec<[T; 8]> =
        smallvec::SmallVec::with_capacity(n - 1 + sizes.len());
    shape.extend(old[..d].iter().cloned());
    shape.extend(sizes.iter().cloned());
    shape.extend(old[d + 1..].iter().cloned());
    super::rules::infer_size_into(sizes, dim_size, &mut shape[d..d + sizes.len()]).map_err(|e| {
        let msg = e.to_string();
        if msg.contains("is invalid for input of size") {
            TensorError::runtime(format!(
                "unflatten: Provided sizes {} don't multiply up to the size of dim {d} ({dim_size}) in the input tensor",
                fmt_list(sizes)
            ))
        } else {
            TensorError::runtime(format!("unflatten got an unexpected error:\n{msg}"))
        }
    })?;
    Ok(shape)
}

/// `as_strided`'s argument checks, in c10's order: the two lists of equal
/// length (`mismatch in length of strides and shape`), no negative size
/// (c10 reports it as a storage-size overflow), no negative stride, no
/// negative storage offset. On symbols each comparison is a guard site
/// (decided statically for size-like symbols).
///
/// ```
/// use c10_core::sym::view_rules::check_as_strided_args;
/// assert!(check_as_strided_args(&[2i64, 3], &[3, 1], &0).is_ok());
/// assert_eq!(
///     check_as_strided_args(&[2i64, 3], &[3, -1], &0).unwrap_err().to_string(),
///     "as_strided: Negative strides are not supported at the moment, got strides: [3, -1]"
/// );
/// assert!(check_as_strided_args(&[2i64], &[1, 1], &0).is_err());
/// ```
#[inline]
pub fn check_as_strided_args<T: ShapeInt>(sizes: &[T], strides: &[T], offset: &T) -> Result<()> {
    if sizes.len() != strides.len() {
        return Err(TensorError::runtime(
            "mismatch in length of strides and shape",
        ));
    }
    let zero = T::from_i64(0);
    let negative = |x: &T| -> Result<bool> { x.sym_lt(&zero)?.guard_bool() };
    for s in sizes {
        // c10 reaches `computeStorageNbytes` with a negative size and
        // reports the overflow, except when a zero size comes first and it
        // returns early, leaving a tensor with a negative size; every
        // negative size is refused here (found by fuzz/shape_ops).
        if negative(s)? {
            return Err(TensorError::runtime(format!(
                "Storage size calculation overflowed with sizes={} and strides={}",
                fmt_list(sizes),
                fmt_list(strides)
            )));
        }
    }
    for s in strides {
        if negative(s)? {
            return Err(TensorError::runtime(format!(
                "as_strided: Negative strides are not supported at the moment, got strides: {}",
                fmt_list(strides)
            )));
        }
    }
    if negative(offset)? {
        return Err(TensorError::runtime(format!(
            "Tensor: invalid storage offset {offset}"
        )));
    }
    Ok(())
}
