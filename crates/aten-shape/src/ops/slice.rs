//! The narrow / slice / select family: `slice`, `narrow`, `select`, `index` (integer indices).
//!
//! The rule is written once, generic over [`ShapeInt`] (`i64` on the
//! concrete path, `SymInt` on the symbolic one), and the faces of each
//! op sit next to it: the concrete free functions (re-exported by
//! [`crate::views`]), the in-place twins, and the symbolic
//! [`Geometry`] methods.

use super::prelude::*;

// ---------------------------------------------------------------------------
// The rule
// ---------------------------------------------------------------------------

/// The geometry of one dim after `slice`/`narrow`/`select`: the new
/// storage offset, the dim's new size and stride, and whether some `i64`
/// arithmetic wrapped (then the concrete ops install the view through the
/// checked `as_strided`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DimSlice<T> {
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
#[inline(always)]
pub(crate) fn slice_dim(ndim: usize, dim: i64) -> Result<usize> {
    indexing_dim(ndim, dim, "slice() cannot be applied to a 0-dim tensor.")
}

/// The dim of an indexing op (`slice`, `select`): `message` (an
/// `IndexError`, as ATen raises) on a 0-d tensor, else `dim` wrapped.
#[inline(always)]
fn indexing_dim(ndim: usize, dim: i64, message: &'static str) -> Result<usize> {
    if ndim == 0 {
        return Err(shape_err(ShapeErrorKind::ZeroDim, message)
            .with_error_kind(c10_core::ErrorKind::Index)
            .into());
    }
    wrap(dim, ndim)
}

/// ATen's `slice` on one dim of size `size` and stride `stride` of a
/// tensor at `offset`: `start`/`end` (default `0` and `INT64_MAX`) made
/// non-negative and clamped to `[0, size]`, the end kept at or after the
/// start (each clamp a `guard_bool` site on symbols), then size
/// `ceil((end - start) / step)`, stride `stride * step`, offset `offset +
/// start * stride`. Where a clamp is a data-dependent question (unbacked
/// sizes), PyTorch 2.15's open clamps ([`clamp_open`]), which the concrete
/// path never reaches.
#[inline(always)]
pub(crate) fn slice_rule<T: ShapeInt>(
    size: &T,
    stride: &T,
    offset: &T,
    start: Option<&T>,
    end: Option<&T>,
    step: i64,
) -> Result<DimSlice<T>> {
    if step <= 0 {
        return Err(shape_err(ShapeErrorKind::InvalidStep, "slice step must be positive").into());
    }
    let (s, e) = wrap_bounds(size, start, end)?;
    clamp_decided(size, s.clone(), e.clone())
        .and_then(|(s, e)| finish_slice(&s, &e, stride, offset, step))
        .or_else(|err| match err.shape_error().map(|k| k.kind()) {
            Some(ShapeErrorKind::DataDependent) => {
                let (s, e) = clamp_open(size, s, e)?;
                finish_slice(&s, &e, stride, offset, step)
            }
            _ => Err(err),
        })
}

/// The clamps of [`slice_rule`], each decided by a `guard_bool`: the start
/// to `[0, size]`; each end on its own to `[0, size]`, then kept at or
/// after the start (the guards PyTorch records for `x[1:3]`, `x[10:-11]`:
/// `s >= 3`; `s >= 10`, `s < 11`).
#[inline(always)]
fn clamp_decided<T: ShapeInt>(size: &T, mut s: T, mut e: T) -> Result<(T, T)> {
    let zero: T = T::from_i64(0);
    if s.sym_lt(&zero)?.guard_bool()? {
        s = zero.clone();
    } else if s.sym_gt(size)?.guard_bool()? {
        s = size.clone();
    }
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
    Ok((s, e))
}

/// The clamps of [`slice_rule`] where unbacked sizes leave one open (the
/// decided form failed with a data-dependent error): the clamps each size
/// could not decide become `Max`/`Min` (see [`clamp_bound`]), the length
/// `max(0, end - start)`.
#[cold]
#[inline(never)]
fn clamp_open<T: ShapeInt>(size: &T, s: T, e: T) -> Result<(T, T)> {
    let zero: T = T::from_i64(0);
    let s = clamp_bound(s, &zero, size)?;
    let mut e = if e.maybe_as_int() == Some(i64::MAX) {
        size.clone()
    } else {
        clamp_bound(e, &zero, size)?
    };
    match decide(&e.sym_lt(&s)?)? {
        Some(true) => e = s.clone(),
        Some(false) => {}
        // Undecidable (unbacked sizes): the length `max(0, end - start)`,
        // as PyTorch 2.15 gives it.
        None => e = e.max(&s)?,
    }
    Ok((s, e))
}

/// `start`/`end` defaulted to `0` and `INT64_MAX` and made non-negative by
/// adding `size` once (each a `guard_bool` site on symbols): the first
/// step of ATen's `slice`, shared by the decided and the open form.
#[inline(always)]
fn wrap_bounds<T: ShapeInt>(size: &T, start: Option<&T>, end: Option<&T>) -> Result<(T, T)> {
    let zero: T = T::from_i64(0);
    let mut s: T = start.cloned().unwrap_or_else(|| T::from_i64(0));
    let mut e: T = end.cloned().unwrap_or_else(|| T::from_i64(i64::MAX));
    if s.sym_lt(&zero)?.guard_bool()? {
        s = s.add(size)?;
    }
    if e.sym_lt(&zero)?.guard_bool()? {
        e = e.add(size)?;
    }
    Ok((s, e))
}

/// The last step of ATen's `slice` once `s <= e` are clamped: size
/// `ceil((e - s) / step)`, stride `stride * step`, offset `offset + s *
/// stride`, with `wrapped` set where int64 arithmetic wrapped.
#[inline(always)]
fn finish_slice<T: ShapeInt>(
    s: &T,
    e: &T,
    stride: &T,
    offset: &T,
    step: i64,
) -> Result<DimSlice<T>> {
    let mut wrapped = false;
    let step_offset = s.mul_flagged(stride, &mut wrapped)?;
    let offset = offset.add_flagged(&step_offset, &mut wrapped)?;
    let len = e.sub(s)?;
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

/// A decision that may stay open: `Some(b)` when the condition is
/// decided (from the ranges, or guarded from the hints as `guard_bool`
/// would, recording the same guard once), `None` when only unbacked
/// sizes could decide it. The identity on plain integers.
#[inline(always)]
fn decide<B: ShapeBool>(b: &B) -> Result<Option<bool>> {
    // A constant (always, on plain integers) is decided as it is.
    if let Some(v) = b.maybe_as_bool() {
        return Ok(Some(v));
    }
    if b.guard_or_false()? {
        return Ok(Some(true));
    }
    if !b.guard_or_true()? {
        return Ok(Some(false));
    }
    Ok(None)
}

/// A slice bound clamped to `[0, size]`: each clamp a decision (a guard on
/// backed sizes); where unbacked sizes leave it open, `max(bound, 0)` and
/// `min(bound, size)` as PyTorch 2.15 writes them (`x[1:]` of an unbacked
/// `u0` starts at `Min(1, u0)`).
#[inline(always)]
fn clamp_bound<T: ShapeInt>(b: T, zero: &T, size: &T) -> Result<T> {
    let below = decide(&b.sym_lt(zero)?)?;
    if below == Some(true) {
        return Ok(zero.clone());
    }
    let above = decide(&b.sym_gt(size)?)?;
    if above == Some(true) {
        return Ok(size.clone());
    }
    let mut b = b;
    if below.is_none() {
        b = b.max(zero)?;
    }
    if above.is_none() {
        b = b.min(size)?;
    }
    Ok(b)
}

/// `narrow(dim, start, length)`, part 1: ATen's checks before the size
/// is read (0-dim tensor, `length >= 0` as `expect_true` on symbols),
/// then `dim` wrapped.
#[inline(always)]
pub(crate) fn narrow_dim<T: ShapeInt>(ndim: usize, dim: i64, length: &T) -> Result<usize> {
    if ndim == 0 {
        return Err(shape_err(
            ShapeErrorKind::ZeroDim,
            "narrow() cannot be applied to a 0-dim tensor.",
        )
        .into());
    }
    if !length.sym_ge(&T::from_i64(0))?.expect_true()? {
        return Err(shape_err(
            ShapeErrorKind::InvalidLength,
            "narrow(): length must be non-negative.",
        )
        .into());
    }
    wrap(dim, ndim)
}

/// `narrow`, part 2: `start` checked against the dim's size `cur`
/// (`-cur <= start <= cur`, then `start + length <= cur`, ATen's errors)
/// and made non-negative; returns `(start, start + length)` for
/// [`slice_rule`] with step 1.
#[inline(always)]
pub(crate) fn narrow_bounds<T: ShapeInt>(cur: &T, start: &T, length: &T) -> Result<(T, T)> {
    let mut st: T = start.clone();
    // One check of both bounds (ATen's `TORCH_SYM_CHECK`): a guard on
    // backed sizes, a runtime assert on unbacked ones.
    // (A lower bound that is already a constant `false` fails at once,
    // which keeps the concrete path's short circuit.)
    let lo = cur.mul(&T::from_i64(-1))?.sym_le(&st)?;
    let in_range =
        lo.maybe_as_bool() != Some(false) && lo.sym_and(&st.sym_le(cur)?)?.expect_true()?;
    if !in_range {
        let lo = match cur.maybe_as_int() {
            Some(v) => v.wrapping_neg().to_string(),
            None => format!("-{cur}"),
        };
        return Err(shape_err(
            ShapeErrorKind::IndexOutOfRange,
            format!(
                "start out of range (expected to be in range of [{lo}, {cur}], but got {start})"
            ),
        )
        .with_index_of(start)
        .into());
    }
    if st.sym_lt(&T::from_i64(0))?.guard_bool()? {
        st = st.add(cur)?;
    }
    if !st.sym_le(&cur.sub(length)?)?.expect_true()? {
        return Err(shape_err(
            ShapeErrorKind::InvalidLength,
            format!("start ({st}) + length ({length}) exceeds dimension size ({cur})."),
        )
        .into());
    }
    let end = st.add(length)?;
    Ok((st, end))
}

/// `select(dim, ...)`'s dim: ATen's 0-dim check (an index error), then
/// `dim` wrapped.
#[inline(always)]
pub(crate) fn select_dim(ndim: usize, dim: i64) -> Result<usize> {
    indexing_dim(ndim, dim, "select() cannot be applied to a 0-dim tensor.")
}

/// `select(dim, index)` on the wrapped dim `d`: ATen's range check
/// (`size <= -1 - index || size <= index` is an index error, each a
/// `guard_or_false` site on symbols: it guards on backed sizes and
/// assumes the index in range on unbacked ones, as PyTorch 2.15 does),
/// then the new storage offset `offset +
/// index * strides[d]` (a negative index counts from the end). The dim
/// itself is dropped by the caller. Returns the offset and whether the
/// `i64` arithmetic wrapped.
#[inline(always)]
pub(crate) fn select_offset<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    offset: &T,
    d: usize,
    index: &T,
) -> Result<(T, bool)> {
    let size = &sizes[d];
    // `-1 - index`, which cannot overflow (`!index` on plain integers).
    let neg_bound: T = match index.maybe_as_int() {
        Some(i) => T::from_i64(!i),
        None => T::from_i64(-1).sub(index)?,
    };
    if size.sym_le(&neg_bound)?.guard_or_false()? || size.sym_le(index)?.guard_or_false()? {
        return Err(shape_err(
            ShapeErrorKind::IndexOutOfRange,
            format!(
                "select(): index {index} out of range for tensor of size {} at dimension {d}",
                fmt_list(sizes)
            ),
        )
        .with_dim(d as i64)
        .with_index_of(index)
        .with_sizes_of(sizes)
        .into());
    }
    let mut wrapped = false;
    let idx = if index.sym_lt(&T::from_i64(0))?.guard_bool()? {
        index.add_flagged(size, &mut wrapped)?
    } else {
        index.clone()
    };
    let step_offset = idx.mul_flagged(&strides[d], &mut wrapped)?;
    let offset = offset.add_flagged(&step_offset, &mut wrapped)?;
    Ok((offset, wrapped))
}

// ---------------------------------------------------------------------------
// Concrete tensors
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// slice / narrow / select and the list-returning ops
// ---------------------------------------------------------------------------

/// `slice` on an already wrapped dim.
#[inline]
pub(crate) fn slice_at(
    t: &Tensor,
    d: usize,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
) -> Result<Tensor> {
    let r = slice_rule(
        &t.sizes()[d],
        &t.strides()[d],
        &t.storage_offset(),
        start.as_ref(),
        end.as_ref(),
        step,
    )?;
    install_slice(t, d, r)
}

/// Installs the view of `t` whose dim `d` is sliced as `r` says.
#[inline(always)]
fn install_slice(t: &Tensor, d: usize, r: DimSlice<i64>) -> Result<Tensor> {
    let edit = |geometry: &mut SizesAndStrides| {
        let (new_sizes, new_strides) = geometry.sizes_and_strides_mut();
        new_sizes[d] = r.size;
        new_strides[d] = r.stride;
        Ok(())
    };
    if !r.wrapped {
        return install_edit(t, r.offset, edit);
    }
    let mut geometry = geometry_of(t);
    edit(&mut geometry)?;
    make_view_in_place(t, geometry, r.offset, true)
}

/// Free-function form of [`ViewOps::slice`](crate::views::ViewOps::slice).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let s = views::slice(&a, 0, Some(2), Some(100), 3)?; // a[2:100:3]
/// assert_eq!(s.to_vec::<i64>()?, vec![2, 5, 8, 11]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn slice(
    t: &Tensor,
    dim: i64,
    start: impl IntoSliceBound,
    end: impl IntoSliceBound,
    step: impl IntoSymInt,
) -> Result<Tensor> {
    let (start, end) = (start.into_slice_bound()?, end.into_slice_bound()?);
    let step = step.into_sym_int()?;
    if let (Some(s), Some(e), &SymInt::Int(st)) = (int_bound(&start), int_bound(&end), &step) {
        // The retry captures plain integers only (nothing kept alive or
        // address-taken on the concrete path).
        return slice_ints(t, dim, s, e, st).or_else(move |err| {
            on_symbolic(t, err, move || {
                let (s, e) = (s.map(SymInt::Int), e.map(SymInt::Int));
                slice_sym(t, dim, &s, &e, &SymInt::Int(st))
            })
        });
    }
    slice_sym(t, dim, &start, &end, &step)
}

/// A bound that is absent or concrete (`Some(None)` is "absent").
#[inline(always)]
pub(crate) fn int_bound(b: &Option<SymInt>) -> Option<Option<i64>> {
    match b {
        None => Some(None),
        Some(SymInt::Int(v)) => Some(Some(*v)),
        Some(SymInt::Sym(_)) => None,
    }
}

/// [`slice`] with concrete bounds on a concrete tensor.
#[inline]
pub(crate) fn slice_ints(
    t: &Tensor,
    dim: i64,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
) -> Result<Tensor> {
    let d = slice_dim(t.dim(), dim)?;
    slice_at(t, d, start, end, step)
}

/// The symbolic face of [`slice`]. A symbolic `step` stays symbolic, as
/// in ATen: its `step > 0` check (a guarding decision), the clamps of a
/// step-1 slice, then size `(len + step - 1) // step` and stride
/// `stride * step`.
#[cold]
#[inline(never)]
fn slice_sym(
    t: &Tensor,
    dim: i64,
    start: &Option<SymInt>,
    end: &Option<SymInt>,
    step: &SymInt,
) -> Result<Tensor> {
    if let SymInt::Int(st) = step {
        let st = *st;
        return sym_op(t, |g| g.slice(dim, start.as_ref(), end.as_ref(), st));
    }
    if !step.sym_gt(&SymInt::from(0))?.guard_bool()? {
        return Err(shape_err(ShapeErrorKind::InvalidStep, "slice step must be positive").into());
    }
    sym_op(t, |g| {
        let d = slice_dim(g.dim(), dim)?;
        let mut r = g.slice_at(d, start.as_ref(), end.as_ref(), 1)?;
        let len = r.sizes[d].clone();
        // An empty slice stays of size 0 (PyTorch's `(0 + s - 1)//s`
        // simplifies to 0 for a positive step).
        if len.maybe_as_int() != Some(0) {
            r.sizes[d] = len.add(&step.sub(&SymInt::from(1))?)?.floordiv(step)?;
        }
        r.strides[d] = r.strides[d].mul(step)?;
        Ok(r)
    })
}

/// Free-function form of [`ViewOps::narrow`](crate::views::ViewOps::narrow).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let n = views::narrow(&a, 0, 3, 2)?;
/// assert_eq!((n.storage_offset(), n.to_vec::<i64>()?), (3, vec![3, 4]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn narrow(
    t: &Tensor,
    dim: i64,
    start: impl IntoSymInt,
    length: impl IntoSymInt,
) -> Result<Tensor> {
    match (start.into_sym_int()?, length.into_sym_int()?) {
        (SymInt::Int(s), SymInt::Int(l)) => narrow_ints(t, dim, s, l)
            .or_else(move |e| on_symbolic(t, e, move || narrow_sym(t, dim, &s.into(), &l.into()))),
        (s, l) => narrow_sym(t, dim, &s, &l),
    }
}

/// [`narrow`] with a concrete start and length on a concrete tensor.
#[inline]
pub(crate) fn narrow_ints(t: &Tensor, dim: i64, start: i64, length: i64) -> Result<Tensor> {
    let d = narrow_dim(t.dim(), dim, &length)?;
    narrow_at(t, d, start, length)
}

/// The symbolic face of [`narrow`].
#[cold]
#[inline(never)]
fn narrow_sym(t: &Tensor, dim: i64, start: &SymInt, length: &SymInt) -> Result<Tensor> {
    sym_op(t, |g| g.narrow(dim, start, length))
}

/// `narrow` on an already wrapped dim (of a tensor with at least one dim),
/// `length >= 0`.
pub(crate) fn narrow_at(t: &Tensor, d: usize, start: i64, length: i64) -> Result<Tensor> {
    let (start, end) = narrow_bounds(&t.sizes()[d], &start, &length)?;
    // `narrow_bounds` left `0 <= start <= end <= size`, so the slice
    // rule's wrapping and clamps would change nothing (and concrete sizes
    // record no guards): only its last step, with step 1.
    let r = finish_slice(&start, &end, &t.strides()[d], &t.storage_offset(), 1)?;
    install_slice(t, d, r)
}

/// Free-function form of [`ViewOps::select`](crate::views::ViewOps::select).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// let col = views::select(&m, 1, -1)?;
/// assert_eq!(col.to_vec::<i64>()?, vec![3, 7, 11]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn select(t: &Tensor, dim: i64, index: impl IntoSymInt) -> Result<Tensor> {
    match index.into_sym_int()? {
        SymInt::Int(i) => select_ints(t, dim, i)
            .or_else(move |e| on_symbolic(t, e, move || select_sym(t, dim, &i.into()))),
        i => select_sym(t, dim, &i),
    }
}

/// [`select`] with a concrete index on a concrete tensor.
#[inline]
pub(crate) fn select_ints(t: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
    let d = select_dim(t.dim(), dim)?;
    select_at(t, d, index)
}

/// The symbolic face of [`select`].
#[cold]
#[inline(never)]
fn select_sym(t: &Tensor, dim: i64, index: &SymInt) -> Result<Tensor> {
    sym_op(t, |g| g.select(dim, index))
}

/// `select` on an already wrapped dim.
pub(crate) fn select_at(t: &Tensor, d: usize, index: i64) -> Result<Tensor> {
    let (offset, wrapped) = select_offset(t.sizes(), t.strides(), &t.storage_offset(), d, &index)?;
    if !wrapped {
        return install_edit(t, offset, |geometry| Ok(geometry.remove_dim(d)?));
    }
    let mut geometry = geometry_of(t);
    geometry.remove_dim(d)?;
    make_view_in_place(t, geometry, offset, true)
}

/// Free-function form of [`ViewOps::index_ints`](crate::views::ViewOps::index_ints): [`crate::indexing::index`]
/// with integer entries, as Python's tuple `t[(i, j)]` (so `t[(0,)]` of a
/// 0-dim tensor is `too many indices for tensor of dimension 0`).
/// Symbolic indices (or a symbolic tensor) select dim by dim.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// assert_eq!(views::index_ints(&m, [2, -1])?.item::<i64>()?, 11);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn index_ints(t: &Tensor, indices: impl IntoShape) -> Result<Tensor> {
    match indices.into_shape()? {
        Shape::Ints(i) if !t.has_symbolic_sizes_strides() => index_concrete(t, i.as_ref()),
        i => index_sym(t, &i.to_sym_ints()),
    }
}

/// The old name of [`index_ints`] (ATen's `index` is advanced indexing,
/// which this is not).
///
/// ```
/// # #![allow(deprecated)]
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 4, 1, ScalarType::Long)?;
/// assert_eq!(views::index(&m, &[1])?.item::<i64>()?, 1);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[deprecated(
    since = "0.2.0",
    note = "renamed `index_ints` (ATen's `index` is advanced indexing)"
)]
#[inline]
pub fn index(t: &Tensor, indices: impl IntoShape) -> Result<Tensor> {
    index_ints(t, indices)
}

/// The symbolic face of [`index_ints`]: one `select(0, i)` per index,
/// after the same "too many indices" check.
#[cold]
#[inline(never)]
fn index_sym(t: &Tensor, indices: &[SymInt]) -> Result<Tensor> {
    if indices.len() > t.dim() {
        return Err(shape_err(
            ShapeErrorKind::TooManyIndices,
            format!("too many indices for tensor of dimension {}", t.dim()),
        )
        .into());
    }
    sym_op(t, |g| {
        let mut g = g.clone();
        for i in indices {
            g = g.select(0, i)?;
        }
        Ok(g)
    })
}

/// [`index_ints`] on a concrete tensor with concrete indices.
fn index_concrete(t: &Tensor, indices: &[i64]) -> Result<Tensor> {
    let list: Vec<crate::indexing::TensorIndex> = indices
        .iter()
        .map(|&i| crate::indexing::TensorIndex::Int(i))
        .collect();
    crate::indexing::index_as(t, &list, true)
}

// ---------------------------------------------------------------------------
// Symbolic geometry
// ---------------------------------------------------------------------------

impl<T: ShapeInt> Geometry<T> {
    /// `slice(dim, start, end, step)` with the clamping of ATen's
    /// `slice` (each clamp a guard site on symbols).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let s = Geometry::<i64>::contiguous(&[10])?.slice(0, Some(&2), None, 3)?;
    /// assert_eq!((s.sizes, s.strides, s.offset), (vec![3], vec![3], 2));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn slice(
        &self,
        dim: i64,
        start: Option<&T>,
        end: Option<&T>,
        step: i64,
    ) -> Result<Geometry<T>> {
        let d = slice_dim(self.dim(), dim)?;
        self.slice_at(d, start, end, step)
    }

    /// `slice` on the wrapped dim `d`.
    pub(crate) fn slice_at(
        &self,
        d: usize,
        start: Option<&T>,
        end: Option<&T>,
        step: i64,
    ) -> Result<Geometry<T>> {
        let r = slice_rule(
            &self.sizes[d],
            &self.strides[d],
            &self.offset,
            start,
            end,
            step,
        )?;
        let mut g = self.clone();
        g.offset = r.offset;
        g.sizes[d] = r.size;
        g.strides[d] = r.stride;
        Ok(g)
    }

    /// `narrow(dim, start, length)`: ATen's checks, then `slice`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let n = Geometry::<i64>::contiguous(&[4, 6])?.narrow(1, &1, &3)?;
    /// assert_eq!((n.sizes, n.offset), (vec![4, 3], 1));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn narrow(&self, dim: i64, start: &T, length: &T) -> Result<Geometry<T>> {
        let d = narrow_dim(self.dim(), dim, length)?;
        let (st, end) = narrow_bounds(&self.sizes[d], start, length)?;
        self.slice_at(d, Some(&st), Some(&end), 1)
    }

    /// `select(dim, index)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let s = Geometry::<i64>::contiguous(&[4, 6])?.select(1, &-1)?;
    /// assert_eq!((s.sizes, s.offset), (vec![4], 5));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn select(&self, dim: i64, index: &T) -> Result<Geometry<T>> {
        let d = select_dim(self.dim(), dim)?;
        let (offset, _) = select_offset(&self.sizes, &self.strides, &self.offset, d, index)?;
        let mut g = self.clone();
        g.offset = offset;
        g.sizes.remove(d);
        g.strides.remove(d);
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_slice_dim() -> Result<()> {
        assert_eq!(slice_dim(2, -1)?, 1);
        assert!(slice_dim(0, 0).unwrap_err().is_index_error());
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_slice_rule() -> Result<()> {
        let r = slice_rule(&10i64, &1, &0, Some(&2), None, 3)?;
        assert_eq!((r.offset, r.size, r.stride), (2, 3, 3));
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_narrow_dim() -> Result<()> {
        assert_eq!(narrow_dim(2, -1, &3i64)?, 1);
        assert!(narrow_dim(2, 0, &-1i64).is_err());
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_narrow_bounds() -> Result<()> {
        assert_eq!(narrow_bounds(&6i64, &-2, &2)?, (4, 6));
        assert!(narrow_bounds(&6i64, &5, &2).is_err());
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_select_dim() -> Result<()> {
        assert_eq!(select_dim(2, -2)?, 0);
        assert!(select_dim(0, 0).unwrap_err().is_index_error());
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_select_offset() -> Result<()> {
        assert_eq!(select_offset(&[4i64, 6], &[6, 1], &0, 1, &-1)?, (5, false));
        assert!(select_offset(&[4i64, 6], &[6, 1], &0, 1, &6)
            .unwrap_err()
            .is_index_error());
        Ok::<(), c10_core::TensorError>(())
    }
}
