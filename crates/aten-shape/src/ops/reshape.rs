//! The view / reshape / flatten / unflatten family: `view`, `view_as`, `reshape`, `reshape_as`, `flatten`, `unflatten`, `ravel`, with ATen's `infer_size` (the `-1` rule) and `computeStride` (can this shape be a view?).
//!
//! The rule is written once, generic over [`ShapeInt`] (`i64` on the
//! concrete path, `SymInt` on the symbolic one), and the faces of each
//! op sit next to it: the concrete free functions (re-exported by
//! [`crate::views`]), the in-place twins, and the symbolic
//! [`Geometry`] methods.

use super::prelude::*;
use crate::copy as copy_api;
use c10_core::sym::rules::is_contiguous_or_false;
use c10_core::{ShapeError, ShapeErrorKind};

/// ATen's message when `view`'s strides cannot express the new shape.
pub(crate) const VIEW_INCOMPATIBLE: &str = "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.";

// ---------------------------------------------------------------------------
// The rule
// ---------------------------------------------------------------------------

/// ATen's `infer_size_impl(shape, numel)`: resolves a single `-1` in
/// `shape` so that the result holds `numel` elements, writing into `out`
/// (of `shape.len()` entries), with PyTorch's errors and, on symbols,
/// PyTorch's guards: `(newsize > 0 && numel % newsize == 0) || numel ==
/// newsize` is `expect_true`'d, a `-1` is recognised with
/// `guard_or_false`.
#[inline(always)]
pub(crate) fn infer_size_into<T: ShapeInt>(shape: &[T], numel: &T, out: &mut [T]) -> Result<()> {
    let mut newsize: T = c(1);
    let mut infer_dim: Option<usize> = None;
    for (i, s) in shape.iter().enumerate() {
        if s.sym_eq(&c(-1))?.guard_or_false()? {
            if infer_dim.is_some() {
                return Err(ShapeError::new(
                    ShapeErrorKind::MultipleInferred,
                    "only one dimension can be inferred",
                )
                .into());
            }
            infer_dim = Some(i);
        } else if s.sym_ge(&c(0))?.expect_true()? {
            // int64 product, wrapping like PyTorch's (a wrapped product can
            // only make a later numel check fail, never succeed wrongly).
            newsize = newsize.mul(s)?;
        } else {
            return Err(shape_error(
                ShapeErrorKind::InvalidSize,
                format!(
                    "invalid shape dimension {s} at index {i} of shape {}",
                    fmt_list(shape)
                ),
                shape,
                None,
            )
            .with_dim(i as i64)
            .into());
        }
    }
    let invalid = || {
        TensorError::from(shape_error(
            ShapeErrorKind::NumelMismatch,
            format!(
                "shape '{}' is invalid for input of size {numel}",
                fmt_list(shape)
            ),
            shape,
            Some(numel),
        ))
    };
    let equal = numel.sym_eq(&newsize)?;
    let ok = match infer_dim {
        None => equal,
        Some(_) => {
            // `numel % newsize` only where `newsize > 0` may hold: a
            // constant 0 would divide by zero.
            let positive = newsize.sym_gt(&c(0))?;
            if positive.maybe_as_bool() == Some(false) {
                equal
            } else {
                let divides = numel.rem(&newsize)?.sym_eq(&c(0))?;
                positive.sym_and(&divides)?.sym_or(&equal)?
            }
        }
    };
    if !ok.expect_true()? {
        return Err(invalid());
    }
    out.clone_from_slice(shape);
    if let Some(d) = infer_dim {
        if !newsize.sym_ne(&c(0))?.guard_bool()? {
            return Err(shape_error(
                ShapeErrorKind::AmbiguousInferred,
                format!(
                    "cannot reshape tensor of {numel} elements into shape {} because the unspecified dimension size -1 can be any value and is ambiguous",
                    fmt_list(shape)
                ),
                shape,
                Some(numel),
            )
            .with_dim(d as i64)
            .into());
        }
        out[d] = numel.div(&newsize)?;
    }
    Ok(())
}

/// A shape error of `infer_size_into`, carrying the shape and numel where
/// they are concrete (symbolic ones stay in the message only).
fn shape_error<T: ShapeInt>(
    kind: ShapeErrorKind,
    message: String,
    shape: &[T],
    numel: Option<&T>,
) -> ShapeError {
    let mut e = ShapeError::new(kind, message);
    let concrete: Option<Vec<i64>> = shape.iter().map(ShapeInt::maybe_as_int).collect();
    if let Some(sizes) = concrete {
        e = e.with_sizes(&sizes);
    }
    if let Some(n) = numel.and_then(ShapeInt::maybe_as_int) {
        e = e.with_numel(n);
    }
    e
}

/// ATen's `computeStride_impl(oldshape, oldstride, newshape)`: writes the
/// strides that let a tensor with `oldshape`/`oldstride` be viewed as
/// `newshape` into `newstride`; `Ok(Some(wrapped))` when the view is
/// possible (`wrapped`: some `i64` product overflowed), `Ok(None)` when
/// some new dim would span two non-contiguous chunks. Guard sites are
/// ATen's: the zero-numel test (`guard_or_false`), the chunk boundary
/// (`oldshape[d-1] != 1`, `oldstride[d-1] != tensor_numel*base`), the
/// loop (`view_numel < tensor_numel`, `newshape[d] == 1`) and the final
/// `view_numel != tensor_numel`.
#[inline(always)]
pub(crate) fn compute_stride_into<T: ShapeInt>(
    oldshape: &[T],
    oldstride: &[T],
    newshape: &[T],
    newstride: &mut [T],
) -> Result<Option<bool>> {
    let mut wrapped = false;
    if oldshape.is_empty() {
        newstride.iter_mut().for_each(|x| *x = c(1));
        return Ok(Some(false));
    }
    if oldshape.len() != oldstride.len() {
        return Ok(None);
    }
    let mut numel: T = c(1);
    for s in oldshape {
        numel = numel.mul(s)?;
    }
    // ATen: `TORCH_GUARD_SIZE_OBLIVIOUS(sym_eq(numel, 0))`.
    if numel.sym_eq(&c(0))?.guard_size_oblivious()? {
        if oldshape.len() == newshape.len() {
            let mut same = true;
            for (a, b) in oldshape.iter().zip(newshape) {
                if !a.sym_eq(b)?.guard_bool()? {
                    same = false;
                    break;
                }
            }
            if same {
                newstride.clone_from_slice(oldstride);
                return Ok(Some(false));
            }
        }
        // Strides as if computed by resize_.
        let mut running: T = c(1);
        for d in (0..newshape.len()).rev() {
            newstride[d] = running.clone();
            if d > 0 {
                // `std::max<SymInt>(newshape[d], 1)` compares with `<`,
                // a guarding decision on symbols (not a guard-free Max).
                let at_least_one = if newshape[d].sym_lt(&c(1))?.guard_bool()? {
                    c(1)
                } else {
                    newshape[d].clone()
                };
                running = at_least_one.mul_flagged(&running, &mut wrapped)?;
            }
        }
        return Ok(Some(wrapped));
    }
    let Some(last) = oldstride.last() else {
        return Ok(None);
    };
    let mut view_d: isize = newshape.len() as isize - 1;
    let mut chunk_base_stride: T = last.clone();
    let mut tensor_numel: T = c(1);
    let mut view_numel: T = c(1);
    for tensor_d in (0..oldshape.len()).rev() {
        tensor_numel = tensor_numel.mul_flagged(&oldshape[tensor_d], &mut wrapped)?;
        let chunk_end = tensor_d == 0 || {
            oldshape[tensor_d - 1].sym_ne(&c(1))?.guard_or_true()? && {
                let expected = tensor_numel.mul_flagged(&chunk_base_stride, &mut wrapped)?;
                oldstride[tensor_d - 1].sym_ne(&expected)?.guard_or_true()?
            }
        };
        if chunk_end {
            while view_d >= 0 {
                let vd = view_d as usize;
                let go = view_numel.sym_lt(&tensor_numel)?.guard_or_true()?
                    || newshape[vd].sym_eq(&c(1))?.guard_or_false()?;
                if !go {
                    break;
                }
                newstride[vd] = view_numel.mul_flagged(&chunk_base_stride, &mut wrapped)?;
                view_numel = view_numel.mul_flagged(&newshape[vd], &mut wrapped)?;
                view_d -= 1;
            }
            if view_numel.sym_ne(&tensor_numel)?.guard_or_true()? {
                return Ok(None);
            }
            if tensor_d > 0 {
                chunk_base_stride = oldstride[tensor_d - 1].clone();
                tensor_numel = c(1);
                view_numel = c(1);
            }
        }
    }
    if view_d != -1 {
        return Ok(None);
    }
    Ok(Some(wrapped))
}

/// What `flatten(start_dim, end_dim)` makes of a tensor (ATen's
/// `flatten`), decided once for concrete and symbolic sizes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FlattenPlan<T> {
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
#[inline]
pub(crate) fn flatten_plan<T: ShapeInt>(
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
#[inline]
pub(crate) fn unflatten_shape<T: ShapeInt>(
    old: &[T],
    dim: i64,
    sizes: &[T],
) -> Result<smallvec::SmallVec<[T; 8]>> {
    if sizes.is_empty() {
        return Err(shape_err(
            ShapeErrorKind::InvalidUnflatten,
            "unflatten: sizes must be non-empty",
        )
        .into());
    }
    let n = old.len();
    let d = wrap(dim, n)?;
    if n == 0 {
        return Err(shape_err(ShapeErrorKind::NoDims, format!(
            "unflatten got an unexpected error:\nDimension specified as {d} but tensor has no dimensions"
        )).with_error_kind(c10_core::ErrorKind::Runtime).into());
    }
    let dim_size = &old[d];
    let mut shape: smallvec::SmallVec<[T; 8]> =
        smallvec::SmallVec::with_capacity(n - 1 + sizes.len());
    shape.extend(old[..d].iter().cloned());
    shape.extend(sizes.iter().cloned());
    shape.extend(old[d + 1..].iter().cloned());
    infer_size_into(sizes, dim_size, &mut shape[d..d + sizes.len()]).map_err(|e| {
        let e = match e.shape_error().map(ShapeError::kind) {
            Some(ShapeErrorKind::NumelMismatch) => shape_err(ShapeErrorKind::InvalidUnflatten, format!(
                "unflatten: Provided sizes {} don't multiply up to the size of dim {d} ({dim_size}) in the input tensor",
                fmt_list(sizes)
            )),
            // PyTorch wraps infer_size's other errors in this text.
            kind => shape_err(
                kind.unwrap_or(ShapeErrorKind::InvalidUnflatten),
                format!("unflatten got an unexpected error:\n{e}"),
            ),
        };
        TensorError::from(e.with_dim(d as i64).with_sizes_of(sizes))
    })?;
    Ok(shape)
}

// ---------------------------------------------------------------------------
// Concrete tensors
// ---------------------------------------------------------------------------

/// ATen's `infer_size_dv(shape, numel)`: resolves a single `-1` in `shape`
/// so that the result holds `numel` elements, with PyTorch's errors.
///
/// ```
/// use aten_shape::infer::infer_size;
/// assert_eq!(infer_size(&[-1, 4], 24).unwrap().as_slice(), &[6, 4]);
/// assert_eq!(
///     infer_size(&[5, 5], 24).unwrap_err().to_string(),
///     "shape '[5, 5]' is invalid for input of size 24"
/// );
/// assert_eq!(
///     infer_size(&[-1, 0], 0).unwrap_err().to_string(),
///     "cannot reshape tensor of 0 elements into shape [-1, 0] because the \
///      unspecified dimension size -1 can be any value and is ambiguous"
/// );
/// ```
#[inline]
pub fn infer_size(shape: &[i64], numel: i64) -> Result<DimVec> {
    let mut res = DimVec::from_slice(shape);
    infer_size_into(shape, &numel, &mut res)?;
    Ok(res)
}

/// ATen's `computeStride(oldshape, oldstride, newshape)`: the strides that
/// let a tensor with `oldshape`/`oldstride` be viewed as `newshape` (which
/// must hold the same number of elements), or `None` when some new dim would
/// span two non-contiguous chunks of the old layout.
///
/// ```
/// use aten_shape::infer::compute_stride;
/// // A transposed (3,2,4) tensor can be viewed as (3,2,2,2) ...
/// let s = compute_stride(&[3, 2, 4], &[4, 12, 1], &[3, 2, 2, 2]).unwrap();
/// assert_eq!(s.as_slice(), &[4, 12, 2, 1]);
/// // ... but not as (12, 2).
/// assert!(compute_stride(&[3, 2, 4], &[4, 12, 1], &[12, 2]).is_none());
/// ```
pub fn compute_stride(oldshape: &[i64], oldstride: &[i64], newshape: &[i64]) -> Option<DimVec> {
    compute_stride_flagged(oldshape, oldstride, newshape).map(|(s, _)| s)
}

/// [`compute_stride`], also reporting whether any `int64` product wrapped.
#[inline]
pub(crate) fn compute_stride_flagged(
    oldshape: &[i64],
    oldstride: &[i64],
    newshape: &[i64],
) -> Option<(DimVec, bool)> {
    // (every entry is overwritten when a view is possible)
    let mut newstride = DimVec::from_slice(newshape);
    let wrapped = compute_stride_into(oldshape, oldstride, newshape, &mut newstride)
        .ok()
        .flatten()?;
    Some((newstride, wrapped))
}

/// Installs the geometry of a `view`/`reshape` whose stride products
/// wrapped (PyTorch's `alias_with_sizes_and_strides`, which does not go
/// through `as_strided`): c10's `set_sizes_and_strides` replaces negative
/// strides as it always does (last dim 1, else the next dim's stride times
/// `max(size, 1)`, failing with `Stride calculation overflowed`), and the
/// result is then checked against the storage.
fn repaired_alias(t: &Tensor, sizes: &[i64], strides: &[i64], offset: i64) -> Result<Tensor> {
    let mut strides = DimVec::from_slice(strides);
    let n = strides.len();
    let mut overflowed = false;
    for d in (0..n).rev() {
        if strides[d] < 0 {
            strides[d] = if d + 1 == n {
                1
            } else {
                let (r, o) = strides[d + 1].overflowing_mul(sizes[d + 1].max(1));
                overflowed |= o;
                r
            };
        }
    }
    if overflowed {
        return Err(TensorError::runtime("Stride calculation overflowed"));
    }
    t.as_strided(sizes, &strides, Some(offset))
}

// ---------------------------------------------------------------------------
// as_strided / view / reshape
// ---------------------------------------------------------------------------

/// `view`'s geometry built in place: `Ok(Some((geometry, wrapped)))` when
/// `t` can be viewed as `shape`, `Ok(None)` when its strides do not allow
/// it, `Err` when `shape` is invalid for `t`'s number of elements.
#[inline]
fn view_geometry(t: &Tensor, shape: &[i64]) -> Result<Option<(SizesAndStrides, bool)>> {
    let (sizes, strides, numel) = (t.sizes(), t.strides(), t.numel());
    let mut outcome: Result<Option<bool>> = Ok(None);
    let geometry = SizesAndStrides::from_fn(shape.len(), |new_sizes, new_strides| {
        outcome = infer_size_into(shape, &numel, new_sizes).map(|()| {
            compute_stride_into(sizes, strides, new_sizes, new_strides)
                .ok()
                .flatten()
        });
    })?;
    Ok(outcome?.map(|wrapped| (geometry, wrapped)))
}

/// `view(shape)` of a strictly row-major `t` with elements (every stride,
/// those of size-1 dims included, is the product of the later sizes: what
/// `empty`, `from_vec` and row-major views make): `computeStride` then
/// always succeeds and yields the row-major strides of the new sizes (the
/// old dims form one chunk of base stride 1, and each new stride is the
/// product of the later new sizes), so the view is built row-major in one
/// pass, without `computeStride` or the contiguity scan. `Ok(None)` when
/// `t` is not such a tensor, or when the sizes are unusual (see
/// `TensorImpl::view_tensor_row_major_or_abandon`); errors of
/// `infer_size` are returned, as by [`try_view_in_place`].
#[inline(always)]
fn try_view_row_major(t: &Tensor, shape: &[i64]) -> Result<Option<Tensor>> {
    let numel = t.numel();
    // The cached contiguity flag first: one load for the tensors that
    // fail (a transpose), the stride walk only for contiguous ones.
    if !t.is_contiguous() || numel <= 0 || !strictly_row_major(t.sizes(), t.strides()) {
        return Ok(None);
    }
    view_row_major(t, shape, numel)
}

/// The build of [`try_view_row_major`], out of line so that the callers
/// whose tensor fails the test (`reshape` of a transpose) keep their code
/// as it was.
#[inline(never)]
fn view_row_major(t: &Tensor, shape: &[i64], numel: i64) -> Result<Option<Tensor>> {
    TensorImpl::view_tensor_row_major_or_abandon(t, shape.len(), |new_sizes| {
        infer_size_into(shape, &numel, new_sizes)?;
        Ok(true)
    })
}

/// Whether `strides` are exactly the row-major strides of `sizes` (all
/// sizes at least 1, as in a tensor with elements).
#[inline(always)]
fn strictly_row_major(sizes: &[i64], strides: &[i64]) -> bool {
    let mut expected: i64 = 1;
    for (&n, &st) in sizes.iter().zip(strides).rev() {
        if st != expected {
            return false;
        }
        expected = expected.wrapping_mul(n);
    }
    true
}

/// `view(shape)` built in place when `t` can be viewed as `shape` and no
/// arithmetic wrapped (`Ok(None)` otherwise; errors of `infer_size` are
/// returned).
#[inline]
fn try_view_in_place(t: &Tensor, shape: &[i64]) -> Result<Option<Tensor>> {
    let (sizes, strides, numel) = (t.sizes(), t.strides(), t.numel());
    TensorImpl::view_tensor_fill_or_abandon(
        t,
        t.storage_offset(),
        shape.len(),
        |new_sizes, new_strides| {
            infer_size_into(shape, &numel, new_sizes)?;
            Ok(compute_stride_into(sizes, strides, new_sizes, new_strides)
                .ok()
                .flatten()
                == Some(false))
        },
    )
}

/// Free-function form of [`ViewOps::view`](crate::views::ViewOps::view).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let v = views::view(&a, &[3, -1])?;
/// assert_eq!((v.sizes(), v.strides()), (&[3i64, 4][..], &[4i64, 1][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn view(t: &Tensor, shape: impl IntoShape) -> Result<Tensor> {
    match shape.into_shape()? {
        Shape::Ints(s) => view_ints(t, s.as_ref())
            .or_else(|e| on_symbolic(t, e, || view_sym(t, &sym_ints(s.as_ref())))),
        Shape::Sym(s) => view_sym(t, &s),
    }
}

/// The symbolic face of [`view`].
#[cold]
#[inline(never)]
fn view_sym(t: &Tensor, shape: &[SymInt]) -> Result<Tensor> {
    sym_op(t, |g| g.view(shape))
}

/// The symbolic face of [`reshape`].
#[cold]
#[inline(never)]
fn reshape_sym(t: &Tensor, shape: &[SymInt]) -> Result<Tensor> {
    // ATen's reshape asks `is_contiguous()`: a flag c10 already holds
    // (a fake input's, decided when it was made) records nothing.
    if t.cached_is_contiguous() == Some(true) {
        return view_sym(t, shape);
    }
    crate::generic::sym_reshape(t, shape)
}

/// Whether either tensor has symbolic sizes (the `*_as` ops then take
/// the symbolic path with `other`'s `SymInt` sizes).
#[inline]
fn either_symbolic(t: &Tensor, other: &Tensor) -> bool {
    t.has_symbolic_sizes_strides() || other.has_symbolic_sizes_strides()
}

/// [`view`] with concrete sizes on a concrete tensor.
pub(crate) fn view_ints(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    if let Some(v) = try_view_row_major(t, shape)? {
        return Ok(v);
    }
    if let Some(v) = try_view_in_place(t, shape)? {
        return Ok(v);
    }
    match view_geometry(t, shape)? {
        Some((geometry, wrapped)) => {
            install_unless_wrapped(t, geometry, t.storage_offset(), wrapped, repaired_alias)
        }
        None => Err(
            shape_err(ShapeErrorKind::ViewIncompatible, VIEW_INCOMPATIBLE)
                .with_sizes(shape)
                .into(),
        ),
    }
}

/// Free-function form of [`ViewOps::view_as`](crate::views::ViewOps::view_as).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let like = Tensor::zeros(&[2, 6], ScalarType::Float)?;
/// assert_eq!(views::view_as(&a, &like)?.sizes(), &[2, 6]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn view_as(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    if either_symbolic(t, other) {
        return view_sym(t, &other.sym_sizes());
    }
    view_ints(t, other.sizes())
}

/// Free-function form of [`ViewOps::reshape`](crate::views::ViewOps::reshape).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// let r = views::reshape(&views::t(&m)?, &[12])?; // not viewable: copies
/// assert!(!r.is_alias_of(&m));
/// assert_eq!(r.get::<i64>(&[1])?, 4);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn reshape(t: &Tensor, shape: impl IntoShape) -> Result<Tensor> {
    match shape.into_shape()? {
        Shape::Ints(s) => reshape_ints(t, s.as_ref())
            .or_else(|e| on_symbolic(t, e, || reshape_sym(t, &sym_ints(s.as_ref())))),
        Shape::Sym(s) => reshape_sym(t, &s),
    }
}

/// [`reshape`] with concrete sizes on a concrete tensor.
pub(crate) fn reshape_ints(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    if let Some(v) = try_view_row_major(t, shape)? {
        return Ok(v);
    }
    if let Some(v) = try_view_in_place(t, shape)? {
        return Ok(v);
    }
    if let Some((geometry, wrapped)) = view_geometry(t, shape)? {
        return install_unless_wrapped(t, geometry, t.storage_offset(), wrapped, repaired_alias);
    }
    let inferred = infer_size(shape, t.numel())?;
    // `_unsafe_view(self.clone(MemoryFormat::Contiguous), shape)`.
    let copy = copy_api::clone(t, MemoryFormat::Contiguous)?;
    match compute_stride_flagged(copy.sizes(), copy.strides(), &inferred) {
        Some((strides, wrapped)) => {
            let offset = copy.storage_offset();
            let mut v = if wrapped {
                repaired_alias(&copy, &inferred, &strides, offset)?
            } else {
                copy.view_with_geometry(&inferred, &strides, offset)?
            };
            // `_unsafe_view` is not a view: PyTorch's result has no `_base`.
            v.edit_metadata().untrack_view();
            Ok(v)
        }
        None => Err(
            shape_err(ShapeErrorKind::ViewIncompatible, VIEW_INCOMPATIBLE)
                .with_sizes(shape)
                .into(),
        ),
    }
}

/// Free-function form of [`ViewOps::reshape_as`](crate::views::ViewOps::reshape_as).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let like = Tensor::zeros(&[4, 3], ScalarType::Float)?;
/// assert_eq!(views::reshape_as(&a, &like)?.sizes(), &[4, 3]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn reshape_as(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    if either_symbolic(t, other) {
        return reshape_sym(t, &other.sym_sizes());
    }
    reshape_ints(t, other.sizes())
}

/// Free-function form of [`ViewOps::flatten`](crate::views::ViewOps::flatten).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
/// assert_eq!(views::flatten(&b, 1, -1)?.sizes(), &[2, 12]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn flatten(t: &Tensor, start_dim: i64, end_dim: i64) -> Result<Tensor> {
    flatten_ints(t, start_dim, end_dim)
        .or_else(move |e| on_symbolic(t, e, move || flatten_sym(t, start_dim, end_dim)))
}

/// The concrete face of [`flatten`] (which returns `t` itself for
/// `start == end`, right for symbolic tensors too; every other outcome
/// builds a view, which a symbolic tensor makes fail).
fn flatten_ints(t: &Tensor, start_dim: i64, end_dim: i64) -> Result<Tensor> {
    let n = t.dim();
    if let (Ok(s), Ok(e)) = (wrap(start_dim, n), wrap(end_dim, n)) {
        if s < e && t.is_contiguous() && t.numel() > 0 && strictly_row_major(t.sizes(), t.strides())
        {
            if let Some(v) = flatten_row_major(t, s, e)? {
                return Ok(v);
            }
        }
    }
    match flatten_plan(t.sizes(), start_dim, end_dim)? {
        FlattenPlan::Scalar => reshape_ints(t, &[1]),
        FlattenPlan::Unchanged => Ok(t.clone()),
        FlattenPlan::Reshape(shape) => reshape_ints(t, &shape),
    }
}

/// `flatten` of a row-major tensor with elements (what `reshape_ints`
/// would view through [`try_view_row_major`]), with the merged sizes
/// written straight into the view: no shape is built and none inferred.
/// `Ok(None)` when the view build gives up on the sizes, as there.
#[inline(never)]
fn flatten_row_major(t: &Tensor, s: usize, e: usize) -> Result<Option<Tensor>> {
    let sizes = t.sizes();
    // Every size is at least 1 and their product is the numel, so no
    // partial product overflows.
    let merged: i64 = sizes.iter().skip(s).take(e.saturating_sub(s) + 1).product();
    let ndim = sizes.len().saturating_sub(e.saturating_sub(s));
    TensorImpl::view_tensor_row_major_or_abandon(t, ndim, |new_sizes| {
        let merged_dims = (sizes.iter().take(s))
            .chain(std::iter::once(&merged))
            .chain(sizes.iter().skip(e + 1));
        for (d, &n) in new_sizes.iter_mut().zip(merged_dims) {
            *d = n;
        }
        Ok(true)
    })
}

/// The symbolic face of [`flatten`] (`start == end` returns `t` itself,
/// as on the concrete path).
#[cold]
#[inline(never)]
fn flatten_sym(t: &Tensor, start_dim: i64, end_dim: i64) -> Result<Tensor> {
    // `reshape` on the tensor (not its geometry), so that a contiguity
    // flag c10 already holds is read, as ATen's flatten does.
    match flatten_plan(&t.sym_sizes(), start_dim, end_dim)? {
        FlattenPlan::Unchanged => Ok(t.clone()),
        FlattenPlan::Scalar => reshape_sym(t, &[SymInt::from(1)]),
        FlattenPlan::Reshape(shape) => reshape_sym(t, &shape),
    }
}

/// Free-function form of [`ViewOps::unflatten`](crate::views::ViewOps::unflatten).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// assert_eq!(views::unflatten(&a, 0, &[2, -1, 3])?.sizes(), &[2, 2, 3]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn unflatten(t: &Tensor, dim: i64, sizes: impl IntoShape) -> Result<Tensor> {
    match sizes.into_shape()? {
        Shape::Ints(s) => unflatten_ints(t, dim, s.as_ref())
            .or_else(|e| on_symbolic(t, e, || unflatten_sym(t, dim, &sym_ints(s.as_ref())))),
        Shape::Sym(s) => unflatten_sym(t, dim, &s),
    }
}

/// [`unflatten`] with concrete sizes on a concrete tensor.
fn unflatten_ints(t: &Tensor, dim: i64, sizes: &[i64]) -> Result<Tensor> {
    view_ints(t, &unflatten_shape(t.sizes(), dim, sizes)?)
}

/// The symbolic face of [`unflatten`].
#[cold]
#[inline(never)]
fn unflatten_sym(t: &Tensor, dim: i64, sizes: &[SymInt]) -> Result<Tensor> {
    sym_op(t, |g| g.unflatten(dim, sizes))
}

/// Free-function form of [`ViewOps::ravel`](crate::views::ViewOps::ravel).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// let r = views::ravel(&m)?; // contiguous: a view
/// assert!(r.is_alias_of(&m) && r.sizes() == [12]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn ravel(t: &Tensor) -> Result<Tensor> {
    if t.has_symbolic_sizes_strides() {
        return ravel_sym(t);
    }
    let c = copy_api::contiguous(t, MemoryFormat::Contiguous)?;
    view_ints(&c, &[-1])
}

/// The symbolic face of [`ravel`]: `contiguous()` (itself when
/// `is_contiguous()`, a guarding decision) then `view(-1)`.
#[cold]
#[inline(never)]
fn ravel_sym(t: &Tensor) -> Result<Tensor> {
    let g = Geometry::of(t);
    let minus_one = [SymInt::from(-1)];
    if g.is_contiguous()? {
        return g.view(&minus_one)?.view_of(t);
    }
    let flat = Geometry::contiguous(&g.sizes)?.view(&minus_one)?;
    crate::generic::view_or_copy(t, flat, true)
}

// ---------------------------------------------------------------------------
// Symbolic geometry
// ---------------------------------------------------------------------------

impl<T: ShapeInt> Geometry<T> {
    /// `view(shape)`: ATen's `view_impl` (`infer_size` then
    /// `computeStride`).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let v = Geometry::<i64>::contiguous(&[2, 3])?.view(&[-1])?;
    /// assert_eq!(v.sizes, vec![6]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn view(&self, shape: &[T]) -> Result<Geometry<T>> {
        let numel = self.numel()?;
        let mut sizes = shape.to_vec();
        infer_size_into(shape, &numel, &mut sizes)?;
        if let Some(g) = self.unbacked_contiguous_view(&numel, &sizes)? {
            return Ok(g);
        }
        let mut strides = sizes.clone();
        match compute_stride_into(&self.sizes, &self.strides, &sizes, &mut strides)? {
            Some(_) => Ok(Geometry {
                sizes,
                strides,
                offset: self.offset.clone(),
            }),
            None => Err(shape_err(ShapeErrorKind::ViewIncompatible, VIEW_INCOMPATIBLE).into()),
        }
    }

    /// `reshape(shape)`: a view when `computeStride` allows one, else a
    /// contiguous copy (offset 0). The flag says whether it copied.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let t = Geometry::<i64>::contiguous(&[2, 3])?.transpose(0, 1)?;
    /// let (r, copied) = t.reshape(&[-1])?;
    /// assert!(copied && r.strides == vec![1]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn reshape(&self, shape: &[T]) -> Result<(Geometry<T>, bool)> {
        // ATen's reshape asks `is_contiguous()` first (a guarding decision
        // on symbols: the `Ne(size, 1)` guards PyTorch records); a
        // contiguous input is viewed.
        if is_contiguous_or_false(&self.sizes, &self.strides)? {
            return Ok((self.view(shape)?, false));
        }
        let numel = self.numel()?;
        let mut sizes = shape.to_vec();
        infer_size_into(shape, &numel, &mut sizes)?;
        let mut strides = sizes.clone();
        if compute_stride_into(&self.sizes, &self.strides, &sizes, &mut strides)?.is_some() {
            return Ok((
                Geometry {
                    sizes,
                    strides,
                    offset: self.offset.clone(),
                },
                false,
            ));
        }
        // `_unsafe_view(clone(Contiguous), shape)`: the clone has
        // contiguous strides, and viewing it records what ATen's
        // `view_impl` records there.
        Ok((Geometry::contiguous(&self.sizes)?.view(&sizes)?, true))
    }

    /// The view PyTorch 2.15 gives without `computeStride` on unbacked
    /// sizes (observed: `view(-1)` and `view(u1, u0)` of a contiguous
    /// `(u0, u1)` succeed with contiguous strides and no guard, where
    /// `computeStride` could decide nothing): when some size has no hint,
    /// the input is contiguous without a guard and the element counts
    /// are statically equal. `None` elsewhere (always at `i64`).
    fn unbacked_contiguous_view(&self, numel: &T, sizes: &[T]) -> Result<Option<Geometry<T>>> {
        if self.sizes.iter().all(ShapeInt::has_hint) {
            return Ok(None);
        }
        // Contiguous strides, statically (a clone's `max(size, 1)`
        // strides do not count: PyTorch fails to view those).
        let mut expected: T = c(1);
        for d in (0..self.sizes.len()).rev() {
            if !self.strides[d].sym_eq(&expected)?.statically_known_true()? {
                return Ok(None);
            }
            expected = expected.mul(&self.sizes[d])?;
        }
        let mut n: T = c(1);
        for s in sizes {
            n = n.mul(s)?;
        }
        if !numel.sym_eq(&n)?.statically_known_true()? {
            return Ok(None);
        }
        let mut strides = sizes.to_vec();
        let mut running: T = c(1);
        for d in (0..sizes.len()).rev() {
            strides[d] = running.clone();
            running = running.mul(&sizes[d])?;
        }
        Ok(Some(Geometry {
            sizes: sizes.to_vec(),
            strides,
            offset: self.offset.clone(),
        }))
    }

    /// `flatten(start_dim, end_dim)`: a `reshape` (so possibly a copy).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let (f, copied) = Geometry::<i64>::contiguous(&[2, 3, 4])?.flatten(1, -1)?;
    /// assert_eq!((f.sizes, copied), (vec![2, 12], false));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn flatten(&self, start_dim: i64, end_dim: i64) -> Result<(Geometry<T>, bool)> {
        match flatten_plan(&self.sizes, start_dim, end_dim)? {
            FlattenPlan::Scalar => self.reshape(&[c(1)]),
            FlattenPlan::Unchanged => Ok((self.clone(), false)),
            FlattenPlan::Reshape(shape) => self.reshape(&shape),
        }
    }

    /// `unflatten(dim, sizes)`: `infer_size` on the dim, then `view`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let u = Geometry::<i64>::contiguous(&[2, 12])?.unflatten(1, &[3, -1])?;
    /// assert_eq!(u.sizes, vec![2, 3, 4]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn unflatten(&self, dim: i64, sizes: &[T]) -> Result<Geometry<T>> {
        self.view(&unflatten_shape(&self.sizes, dim, sizes)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use c10_core::sym::rules::is_contiguous;
    use c10_core::sym::{ShapeEnv, SymInt};

    #[test]
    fn doc_infer_size_into() -> Result<()> {
        let mut out = [0i64; 2];
        assert_eq!(
            infer_size_into(&[5, 5], &24, &mut out)
                .unwrap_err()
                .to_string(),
            "shape '[5, 5]' is invalid for input of size 24"
        );
        Ok(())
    }

    #[test]
    fn doc_compute_stride_into() -> Result<()> {
        let mut s = [0i64; 4];
        assert_eq!(
            compute_stride_into(&[3, 2, 4], &[4, 12, 1], &[3, 2, 2, 2], &mut s)?,
            Some(false)
        );
        assert_eq!(s, [4, 12, 2, 1]);
        let mut s = [0i64; 2];
        assert_eq!(
            compute_stride_into(&[3, 2, 4], &[4, 12, 1], &[12, 2], &mut s)?,
            None
        );
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_flatten_plan() -> Result<()> {
        let p = flatten_plan(&[2i64, 3, 4], 0, 1)?;
        assert_eq!(p, FlattenPlan::Reshape([6i64, 4].into_iter().collect()));
        assert_eq!(flatten_plan::<i64>(&[], 0, -1)?, FlattenPlan::Scalar);
        assert_eq!(flatten_plan(&[2i64, 3], 1, 1)?, FlattenPlan::Unchanged);
        assert!(flatten_plan(&[2i64, 3], 1, 0).is_err());
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_unflatten_shape() -> Result<()> {
        assert_eq!(&unflatten_shape(&[2i64, 12], 1, &[3, -1])?[..], &[2, 3, 4]);
        assert_eq!(
            unflatten_shape(&[2i64, 12], 1, &[5, -1]).unwrap_err().to_string(),
            "unflatten: Provided sizes [5, -1] don't multiply up to the size of dim 1 (12) in the input tensor"
        );
        Ok::<(), c10_core::TensorError>(())
    }

    /// s0, s1, s2: the sizes of an `x` of hints (4, 6, 8).
    fn sym3(env: &std::sync::Arc<ShapeEnv>) -> [SymInt; 3] {
        let hints = [4, 6, 8];
        std::array::from_fn(|d| {
            env.create_symbol(hints[d], &format!("x.size({d})"))
                .unwrap()
        })
    }

    fn guards(env: &ShapeEnv) -> Vec<String> {
        env.guards().iter().map(|g| g.to_string()).collect()
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code only (symbolic sizes), and slow under the interpreter"
    )]
    fn view_minus_one_8_records_the_cpp_guards() {
        let env = ShapeEnv::new();
        let [a, b, c] = sym3(&env);
        let numel = a.mul(&b).unwrap().mul(&c).unwrap();
        let shape = [SymInt::from(-1), SymInt::from(8)];
        let mut out = shape.clone();
        infer_size_into(&shape, &numel, &mut out).unwrap();
        assert_eq!(out[0].to_string(), "((s0*s1*s2)//8)");
        let sizes = [a.clone(), b.clone(), c.clone()];
        let strides = [b.mul(&c).unwrap(), c.clone(), SymInt::from(1)];
        let mut st = out.clone();
        let r = compute_stride_into(&sizes, &strides, &out, &mut st).unwrap();
        assert_eq!(r, Some(false));
        assert_eq!(st[0].to_string(), "8");
        assert_eq!(st[1].to_string(), "1");
        let g = guards(&env);
        assert_eq!(g[0], "Eq(Mod(s0*s1*s2, 8), 0) | Eq(s0*s1*s2, 8)");
        // Semantically the C++ set: divisibility, 8 < numel, 8*(numel//8) == numel.
        for (vals, ok) in [
            ([4, 6, 8], true),
            ([5, 7, 8], true),
            ([3, 3, 3], false),
            ([2, 2, 2], false),
            ([2, 2, 4], true),
        ] {
            assert_eq!(
                env.evaluate_guards(&|s| Some(vals[s as usize])).unwrap(),
                ok,
                "{vals:?}: {g:?}"
            );
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code only (symbolic sizes), and slow under the interpreter"
    )]
    fn view_minus_one_5_fails_with_negated_guard() {
        let env = ShapeEnv::new();
        let [a, b, c] = sym3(&env);
        let numel = a.mul(&b).unwrap().mul(&c).unwrap();
        let shape = [SymInt::from(-1), SymInt::from(5)];
        let mut out = shape.clone();
        let e = infer_size_into(&shape, &numel, &mut out).unwrap_err();
        assert_eq!(
            e.to_string(),
            "shape '[-1, 5]' is invalid for input of size s0*s1*s2"
        );
        assert_eq!(
            guards(&env),
            ["~(Eq(Mod(s0*s1*s2, 5), 0) | Eq(s0*s1*s2, 5))"]
        );
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code only (symbolic sizes), and slow under the interpreter"
    )]
    fn transposed_view_is_decided_statically() {
        let env = ShapeEnv::new();
        let [a, b, c] = sym3(&env);
        let sizes = [b.clone(), a.clone(), c.clone()];
        let strides = [c.clone(), b.mul(&c).unwrap(), SymInt::from(1)];
        let numel = a.mul(&b).unwrap().mul(&c).unwrap();
        let mut st = [SymInt::from(0)];
        let r = compute_stride_into(&sizes, &strides, &[numel], &mut st).unwrap();
        assert_eq!(r, None);
        eprintln!("{:?}", guards(&env));
        assert!(env.guards().is_empty(), "{:?}", guards(&env));
        assert!(!is_contiguous(&sizes, &strides).unwrap());
        assert!(env.guards().is_empty(), "{:?}", guards(&env));
    }

    #[test]
    fn concrete_rules_are_plain_integer_code() {
        let mut out = [0i64; 3];
        infer_size_into(&[2, -1, 3], &24, &mut out).unwrap();
        assert_eq!(out, [2, 4, 3]);
        assert_eq!(
            infer_size_into(&[-1, -1], &24, &mut [0; 2])
                .unwrap_err()
                .to_string(),
            "only one dimension can be inferred"
        );
        assert_eq!(
            infer_size_into(&[-2, 3], &24, &mut [0; 2])
                .unwrap_err()
                .to_string(),
            "invalid shape dimension -2 at index 0 of shape [-2, 3]"
        );
        assert_eq!(
            infer_size_into(&[-1, 0], &0, &mut [0; 2]).unwrap_err().to_string(),
            "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 can be any value and is ambiguous"
        );
    }
}
