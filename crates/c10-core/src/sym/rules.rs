//! Shape rules written once over [`ShapeInt`], so that the concrete path
//! (`T = i64`, where every comparison is a plain `bool` and the code
//! monomorphises to ordinary integer code) and the symbolic path
//! (`T = SymInt`, where each decision guards exactly where ATen's C++
//! guards) share one implementation.
//!
//! * [`infer_size_into`] — ATen's `infer_size_impl` (the `-1` rule);
//! * [`compute_stride_into`] — ATen's `computeStride_impl` (can a view be
//!   made?);
//! * [`expand_geometry_into`] — ATen's `inferExpandGeometry`;
//! * [`compute_contiguous`], [`compute_contiguous_sym`],
//!   [`is_contiguous`] — c10's `_compute_contiguous`,
//!   `_compute_contiguous_sym` and `SymbolicShapeMeta::compute_contiguous`;
//! * [`contiguous_strides_into`] — `c10::contiguous_strides`.
//!
//! `aten_shape::infer` calls these for `view`, `reshape` and `expand` on
//! concrete tensors; `aten_shape::generic` calls them for symbolic ones.
//!
//! ```
//! use c10_core::sym::{rules, ShapeEnv, SymInt};
//! // Concrete: plain integers, no environment involved.
//! let mut out = [0i64; 2];
//! rules::infer_size_into(&[-1, 4], &24, &mut out)?;
//! assert_eq!(out, [6, 4]);
//! // Symbolic: the same code records guards.
//! let env = ShapeEnv::new();
//! let n = env.create_symbol(24, "n")?;
//! let mut out = [SymInt::from(0), SymInt::from(0)];
//! rules::infer_size_into(&[SymInt::from(-1), SymInt::from(4)], &n, &mut out)?;
//! assert_eq!(out[0].to_string(), "((s0)//4)");
//! # Ok::<(), c10_core::TensorError>(())
//! ```

use super::{fmt_list, ShapeBool, ShapeInt};
use crate::error::{Result, TensorError};

#[inline(always)]
fn c<T: ShapeInt>(v: i64) -> T {
    T::from_i64(v)
}

/// ATen's `infer_size_impl(shape, numel)`: resolves a single `-1` in
/// `shape` so that the result holds `numel` elements, writing into `out`
/// (of `shape.len()` entries), with PyTorch's errors and, on symbols,
/// PyTorch's guards: `(newsize > 0 && numel % newsize == 0) || numel ==
/// newsize` is `expect_true`'d, a `-1` is recognised with
/// `guard_or_false`.
///
/// ```
/// use c10_core::sym::rules::infer_size_into;
/// let mut out = [0i64; 2];
/// assert_eq!(
///     infer_size_into(&[5, 5], &24, &mut out).unwrap_err().to_string(),
///     "shape '[5, 5]' is invalid for input of size 24"
/// );
/// ```
#[inline(always)]
pub fn infer_size_into<T: ShapeInt>(shape: &[T], numel: &T, out: &mut [T]) -> Result<()> {
    let mut newsize: T = c(1);
    let mut infer_dim: Option<usize> = None;
    for (i, s) in shape.iter().enumerate() {
        if s.sym_eq(&c(-1))?.guard_or_false()? {
            if infer_dim.is_some() {
                return Err(TensorError::runtime("only one dimension can be inferred"));
            }
            infer_dim = Some(i);
        } else if s.sym_ge(&c(0))?.expect_true()? {
            // int64 product, wrapping like PyTorch's (a wrapped product can
            // only make a later numel check fail, never succeed wrongly).
            newsize = newsize.mul(s)?;
        } else {
            return Err(TensorError::runtime(format!(
                "invalid shape dimension {s} at index {i} of shape {}",
                fmt_list(shape)
            )));
        }
    }
    let invalid = || {
        TensorError::runtime(format!(
            "shape '{}' is invalid for input of size {numel}",
            fmt_list(shape)
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
            return Err(TensorError::runtime(format!(
                "cannot reshape tensor of {numel} elements into shape {} because the unspecified dimension size -1 can be any value and is ambiguous",
                fmt_list(shape)
            )));
        }
        out[d] = numel.div(&newsize)?;
    }
    Ok(())
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
///
/// ```
/// use c10_core::sym::rules::compute_stride_into;
/// let mut s = [0i64; 4];
/// assert_eq!(compute_stride_into(&[3, 2, 4], &[4, 12, 1], &[3, 2, 2, 2], &mut s)?, Some(false));
/// assert_eq!(s, [4, 12, 2, 1]);
/// let mut s = [0i64; 2];
/// assert_eq!(compute_stride_into(&[3, 2, 4], &[4, 12, 1], &[12, 2], &mut s)?, None);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn compute_stride_into<T: ShapeInt>(
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
    if numel.sym_eq(&c(0))?.guard_or_false()? {
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
                running = newshape[d]
                    .max(&c(1))?
                    .mul_flagged(&running, &mut wrapped)?;
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
                let go = view_numel.sym_lt(&tensor_numel)?.guard_or_false()?
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

/// ATen's `inferExpandGeometry(tensor_sizes, tensor_strides, sizes)`,
/// writing into `out_sizes`/`out_strides` (of `sizes.len()` entries);
/// returns whether a stride product wrapped. A size-1 dim takes the
/// target with stride 0; any other dim must equal the target (a guard
/// on symbols); `-1` keeps the size.
///
/// ```
/// use c10_core::sym::rules::expand_geometry_into;
/// let (mut sz, mut st) = ([0i64; 3], [0i64; 3]);
/// expand_geometry_into(&[3, 1], &[1, 1], &[2, 3, 4], &mut sz, &mut st)?;
/// assert_eq!((sz, st), ([2, 3, 4], [0, 1, 0]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn expand_geometry_into<T: ShapeInt>(
    tensor_sizes: &[T],
    tensor_strides: &[T],
    sizes: &[T],
    out_sizes: &mut [T],
    out_strides: &mut [T],
) -> Result<bool> {
    let ndim = sizes.len();
    let tensor_dim = tensor_sizes.len();
    if tensor_dim == 0 {
        out_sizes.clone_from_slice(sizes);
        out_strides.iter_mut().for_each(|x| *x = c(0));
        return Ok(false);
    }
    if ndim < tensor_dim || tensor_strides.len() != tensor_dim {
        return Err(TensorError::runtime(format!(
            "expand: the number of sizes provided ({ndim}) must be greater or equal to the number of dimensions in the tensor ({tensor_dim})"
        )));
    }
    let mut wrapped = false;
    let lead = ndim - tensor_dim;
    for i in (0..ndim).rev() {
        let existing = i >= lead;
        let is_keep = |t: &T| -> Result<bool> {
            Ok(t.sym_eq(&c(1))?.guard_or_false()? || t.sym_eq(&c(-1))?.guard_or_false()?)
        };
        let (mut size, mut stride) = if existing {
            (
                tensor_sizes[i - lead].clone(),
                tensor_strides[i - lead].clone(),
            )
        } else {
            // New dims are leading, so dim i + 1 is already computed
            // (and exists: tensor_dim >= 1). The product only matters
            // (and only counts as wrapped) if the stride is kept below.
            let mut w = false;
            let p = out_sizes[i + 1].mul_flagged(&out_strides[i + 1], &mut w)?;
            if w && is_keep(&sizes[i])? {
                wrapped = true;
            }
            (c(1), p)
        };
        let mut target = sizes[i].clone();
        if target.sym_eq(&c(-1))?.guard_or_false()? {
            if !existing {
                return Err(TensorError::runtime(format!(
                    "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                )));
            }
            target = size.clone();
        }
        if size.sym_ne(&target)?.guard_bool()? {
            if size.sym_ne(&c(1))?.guard_bool()? {
                return Err(TensorError::runtime(format!(
                    "The expanded size of the tensor ({target}) must match the existing size ({size}) at non-singleton dimension {i}.  Target sizes: {}.  Tensor sizes: {}",
                    fmt_list(sizes),
                    fmt_list(tensor_sizes)
                )));
            }
            size = target;
            stride = c(0);
        }
        out_sizes[i] = size;
        out_strides[i] = stride;
    }
    Ok(wrapped)
}

/// c10's eager `_compute_contiguous<T>`: row-major, ignoring size-1
/// dims, true without elements. On symbols every comparison guards.
///
/// ```
/// use c10_core::sym::rules::compute_contiguous;
/// assert!(compute_contiguous(&[2i64, 3], &[3, 1])?);
/// assert!(!compute_contiguous(&[2i64, 3], &[1, 2])?);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn compute_contiguous<T: ShapeInt>(sizes: &[T], strides: &[T]) -> Result<bool> {
    let mut numel: T = c(1);
    for s in sizes {
        numel = numel.mul(s)?;
    }
    compute_contiguous_numel(sizes, strides, &numel)
}

/// [`compute_contiguous`] with the element count already known (c10
/// passes its cached `numel_`); `c10_core::geometry::is_contiguous` is
/// this rule at `T = i64`.
///
/// ```
/// use c10_core::sym::rules::compute_contiguous_numel;
/// assert!(compute_contiguous_numel(&[2i64, 0], &[5, 7], &0)?);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline(always)]
pub fn compute_contiguous_numel<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    numel: &T,
) -> Result<bool> {
    if numel.sym_eq(&c(0))?.guard_bool()? {
        return Ok(true);
    }
    let mut expected: T = c(1);
    for d in (0..sizes.len()).rev() {
        if sizes[d].sym_eq(&c(1))?.guard_bool()? {
            continue;
        }
        if strides[d].sym_ne(&expected)?.guard_bool()? {
            return Ok(false);
        }
        expected = expected.mul(&sizes[d])?;
    }
    Ok(true)
}

/// c10's `_compute_contiguous_sym`: the contiguity condition as a
/// boolean that never fails on unbacked symbols. A fast try decides with
/// `guard_or_false`/`guard_or_true` (which guard on backed symbols);
/// only if it cannot prove contiguity is the full condition
/// `numel == 0 || AND_d (size_d == 1 || stride_d == expected_d)` built.
///
/// ```
/// use c10_core::sym::{rules::compute_contiguous_sym, ShapeEnv, SymInt};
/// let env = ShapeEnv::new();
/// let (a, b) = (env.create_symbol(4, "a")?, env.create_symbol(6, "b")?);
/// let r = compute_contiguous_sym(&[a.clone(), b.clone()], &[b.clone(), SymInt::from(1)])?;
/// assert_eq!(r.maybe_as_bool(), Some(true));
/// assert!(env.guards().is_empty());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn compute_contiguous_sym<T: ShapeInt>(sizes: &[T], strides: &[T]) -> Result<T::Bool> {
    let mut numel: T = c(1);
    for s in sizes {
        numel = numel.mul(s)?;
    }
    // Fast try (`is_contiguous_or_false`).
    let fast = (|| -> Result<bool> {
        if numel.sym_eq(&c(0))?.guard_or_false()? {
            return Ok(true);
        }
        let (mut expected, mut expected_max): (T, T) = (c(1), c(1));
        for d in (0..sizes.len()).rev() {
            if sizes[d].sym_eq(&c(1))?.guard_or_false()? {
                continue;
            }
            if strides[d].sym_ne(&expected)?.guard_or_true()?
                && strides[d].sym_ne(&expected_max)?.guard_or_true()?
            {
                return Ok(false);
            }
            expected = expected.mul(&sizes[d])?;
            expected_max = expected_max.mul(&sizes[d].max(&c(1))?)?;
        }
        Ok(true)
    })()?;
    if fast {
        return Ok(T::Bool::from_bool(true));
    }
    let mut all: T::Bool = T::Bool::from_bool(true);
    let mut expected: T = c(1);
    for d in (0..sizes.len()).rev() {
        let one = sizes[d].sym_eq(&c(1))?;
        let ok = one.sym_or(&strides[d].sym_eq(&expected)?)?;
        all = all.sym_and(&ok)?;
        expected = expected.mul(&sizes[d])?;
    }
    numel.sym_eq(&c(0))?.sym_or(&all)
}

/// `SymbolicShapeMeta::compute_contiguous` + `TensorImpl::is_contiguous`
/// as PyTorch 2.15 runs them: [`compute_contiguous_sym`]; if that is not
/// a constant and every value has a hint, the eager
/// [`compute_contiguous`] decides (guarding), else the symbolic
/// condition is `guard_bool`'ed.
///
/// ```
/// use c10_core::sym::{rules::is_contiguous, ShapeEnv, SymInt};
/// let env = ShapeEnv::new();
/// let (a, b) = (env.create_symbol(4, "a")?, env.create_symbol(8, "b")?);
/// // x[:, :4] of a contiguous (a, b): sizes (a, 4), strides (b, 1)
/// assert!(!is_contiguous(&[a.clone(), SymInt::from(4)], &[b.clone(), SymInt::from(1)])?);
/// assert_eq!(env.guards()[0].to_string(), "Ne(s1, 4)");
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn is_contiguous<T: ShapeInt>(sizes: &[T], strides: &[T]) -> Result<bool> {
    let r = compute_contiguous_sym(sizes, strides)?;
    if let Some(b) = r.maybe_as_bool() {
        return Ok(b);
    }
    // `all_hinted`: decide eagerly rather than through a big expression.
    compute_contiguous(sizes, strides).or_else(|_| r.guard_bool())
}

/// `c10::contiguous_strides`: row-major strides for `sizes`, each stride
/// the product of the later sizes clamped below at 1 (as
/// `make_contiguous_strides_for` does), written into `out`.
///
/// ```
/// use c10_core::sym::rules::contiguous_strides_into;
/// let mut out = [0i64; 3];
/// contiguous_strides_into(&[2, 0, 4], &mut out)?;
/// assert_eq!(out, [4, 4, 1]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn contiguous_strides_into<T: ShapeInt>(sizes: &[T], out: &mut [T]) -> Result<()> {
    let mut running: T = c(1);
    for d in (0..sizes.len()).rev() {
        out[d] = running.clone();
        running = running.mul(&sizes[d].max(&c(1))?)?;
    }
    Ok(())
}
