//! The data model's rules written once over [`ShapeInt`], so that the
//! concrete path (`T = i64`, where every comparison is a plain `bool` and
//! the code monomorphises to ordinary integer code) and the symbolic path
//! (`T = SymInt`, where each decision guards exactly where c10's C++
//! guards) share one implementation:
//!
//! * [`compute_contiguous`], [`compute_contiguous_numel`],
//!   [`compute_contiguous_sym`], [`is_contiguous`] — c10's
//!   `_compute_contiguous`, `_compute_contiguous_sym` and
//!   `SymbolicShapeMeta::compute_contiguous`;
//! * [`contiguous_strides_into`] — `c10::contiguous_strides`;
//! * [`check_as_strided_args`] — which geometries a tensor may have at all
//!   (`checkAsStridedArgs`).
//!
//! The op rules (`infer_size`, `computeStride`, `inferExpandGeometry`,
//! every view op's geometry) live with their ops in `aten-shape`.
//!
//! ```
//! use c10_core::sym::{rules, ShapeEnv, SymInt};
//! // Concrete: plain integers, no environment involved.
//! assert!(rules::is_contiguous(&[2i64, 3], &[3, 1])?);
//! // Symbolic: the same code records guards where it must decide.
//! let env = ShapeEnv::new();
//! let n = env.create_symbol(4, "n")?;
//! assert!(!rules::is_contiguous(&[n.clone(), SymInt::from(3)], &[SymInt::from(1), n])?);
//! # Ok::<(), c10_core::TensorError>(())
//! ```

use super::{fmt_list, ShapeBool, ShapeInt};
use crate::error::{Result, TensorError};

#[inline(always)]
fn c<T: ShapeInt>(v: i64) -> T {
    T::from_i64(v)
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

/// `as_strided`'s argument checks, in c10's order: the two lists of equal
/// length (`mismatch in length of strides and shape`), no negative size
/// (c10 reports it as a storage-size overflow), no negative stride, no
/// negative storage offset. On symbols each comparison is a guard site
/// (decided statically for size-like symbols).
///
/// ```
/// use c10_core::sym::rules::check_as_strided_args;
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
