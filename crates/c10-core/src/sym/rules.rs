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
use crate::error::{Result, ShapeError, ShapeErrorKind, TensorError};

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
    if all_hinted(sizes, strides) {
        return compute_contiguous(sizes, strides);
    }
    r.guard_bool()
}

/// [`is_contiguous`], but `false` without a guard where the answer
/// depends on unbacked symbols (c10's `is_contiguous_or_false`, which
/// ATen's `reshape` asks): on backed symbols it guards exactly like
/// [`is_contiguous`].
///
/// ```
/// use c10_core::sym::{rules::is_contiguous_or_false, ShapeEnv, SymInt};
/// let env = ShapeEnv::new();
/// let (a, b) = (env.create_unbacked_symint("a"), env.create_unbacked_symint("b"));
/// // The transpose of a contiguous (a, b): contiguous only if a or b is 1.
/// assert!(!is_contiguous_or_false(&[b.clone(), a.clone()], &[SymInt::from(1), b.clone()])?);
/// assert!(env.guards().is_empty());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn is_contiguous_or_false<T: ShapeInt>(sizes: &[T], strides: &[T]) -> Result<bool> {
    let r = compute_contiguous_sym(sizes, strides)?;
    if let Some(b) = r.maybe_as_bool() {
        return Ok(b);
    }
    if all_hinted(sizes, strides) {
        return compute_contiguous(sizes, strides);
    }
    r.guard_or_false()
}

/// Whether every size and stride has a hint (c10's `all_hinted`).
fn all_hinted<T: ShapeInt>(sizes: &[T], strides: &[T]) -> bool {
    sizes.iter().chain(strides).all(ShapeInt::has_hint)
}

/// The dims c10 visits for channels-last contiguity, innermost first:
/// `{1, 3, 2, 0}` (NHWC) for 4 dims, `{1, 4, 3, 2, 0}` (NDHWC) for 5;
/// `None` for other ranks (never channels-last contiguous).
fn channels_last_order(rank: usize) -> Option<&'static [usize]> {
    match rank {
        4 => Some(&[1, 3, 2, 0]),
        5 => Some(&[1, 4, 3, 2, 0]),
        _ => None,
    }
}

/// c10's eager `_compute_channels_last_contiguous_2d`/`_3d<T>`: strides
/// are the row-major strides of the channels-last order (size-1 dims
/// skipped). On symbols every comparison guards.
///
/// ```
/// use c10_core::sym::rules::compute_channels_last_contiguous;
/// // An NCHW (2, 3, 4, 5) laid out as NHWC: strides (60, 1, 15, 3).
/// assert!(compute_channels_last_contiguous(&[2i64, 3, 4, 5], &[60, 1, 15, 3])?);
/// assert!(!compute_channels_last_contiguous(&[2i64, 3, 4, 5], &[60, 20, 5, 1])?);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn compute_channels_last_contiguous<T: ShapeInt>(sizes: &[T], strides: &[T]) -> Result<bool> {
    let Some(order) = channels_last_order(sizes.len()) else {
        return Ok(false);
    };
    channels_last_walk(
        sizes,
        strides,
        order,
        <T::Bool as ShapeBool>::guard_bool,
        <T::Bool as ShapeBool>::guard_bool,
    )
}

/// The channels-last walk over the dims of `order`: a dim whose size
/// `skip` decides is 1 is passed over, one whose stride `differs` decides
/// is not the product of the sizes walked so far makes it `false`. The
/// eager rule decides both by guarding; the fast try of the symbolic one
/// never guards an unknown (`guard_or_false`, `guard_or_true`).
#[inline]
fn channels_last_walk<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    order: &[usize],
    skip: impl Fn(&T::Bool) -> Result<bool>,
    differs: impl Fn(&T::Bool) -> Result<bool>,
) -> Result<bool> {
    let mut expected: T = c(1);
    for &d in order {
        if skip(&sizes[d].sym_eq(&c(1))?)? {
            continue;
        }
        if differs(&strides[d].sym_ne(&expected)?)? {
            return Ok(false);
        }
        expected = expected.mul(&sizes[d])?;
    }
    Ok(true)
}

/// c10's `_compute_channels_last_contiguous_2d_sym`/`_3d_sym`: the
/// channels-last condition as a boolean that never fails on unbacked
/// symbols, with the same fast try as [`compute_contiguous_sym`].
///
/// ```
/// use c10_core::sym::{rules::compute_channels_last_contiguous_sym, ShapeEnv};
/// let env = ShapeEnv::new();
/// let (sizes, strides, _) = env.create_symbolic_sizes_strides_storage_offset(
///     &[2, 3, 4, 5], &[60, 1, 15, 3], 0, "x", c10_core::sym::DimDynamic::Dynamic)?;
/// assert_eq!(compute_channels_last_contiguous_sym(&sizes, &strides)?.maybe_as_bool(), Some(true));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn compute_channels_last_contiguous_sym<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
) -> Result<T::Bool> {
    let Some(order) = channels_last_order(sizes.len()) else {
        return Ok(T::Bool::from_bool(false));
    };
    let fast = channels_last_walk(
        sizes,
        strides,
        order,
        <T::Bool as ShapeBool>::guard_or_false,
        <T::Bool as ShapeBool>::guard_or_true,
    )?;
    if fast {
        return Ok(T::Bool::from_bool(true));
    }
    let mut all: T::Bool = T::Bool::from_bool(true);
    let mut expected: T = c(1);
    for &d in order {
        let one = sizes[d].sym_eq(&c(1))?;
        all = all.sym_and(&one.sym_or(&strides[d].sym_eq(&expected)?)?)?;
        expected = expected.mul(&sizes[d])?;
    }
    Ok(all)
}

/// `TensorImpl::is_contiguous(ChannelsLast)` (or `ChannelsLast3d` for 5
/// dims) as PyTorch 2.15 runs it on symbols: the symbolic condition; if
/// not a constant and every value has a hint, the eager rule decides
/// (guarding), else the condition is `guard_bool`'ed.
///
/// ```
/// use c10_core::sym::rules::is_channels_last_contiguous;
/// assert!(is_channels_last_contiguous(&[2i64, 3, 4, 5], &[60, 1, 15, 3])?);
/// assert!(!is_channels_last_contiguous(&[2i64, 3, 4], &[12, 4, 1])?);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn is_channels_last_contiguous<T: ShapeInt>(sizes: &[T], strides: &[T]) -> Result<bool> {
    let r = compute_channels_last_contiguous_sym(sizes, strides)?;
    if let Some(b) = r.maybe_as_bool() {
        return Ok(b);
    }
    if all_hinted(sizes, strides) {
        return compute_channels_last_contiguous(sizes, strides);
    }
    r.guard_bool()
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
    let invalid = |message: String| -> TensorError {
        ShapeError::new(ShapeErrorKind::InvalidGeometry, message)
            .with_sizes_of(sizes)
            .into()
    };
    if sizes.len() != strides.len() {
        return Err(invalid("mismatch in length of strides and shape".into()));
    }
    let zero = T::from_i64(0);
    // `guard_or_false`: a guard on backed values; unbacked ones are taken
    // to be non-negative, with no guard (PyTorch 2.15 accepts
    // `as_strided([2, u0 - 1], ...)` on an unbacked `u0`).
    let negative = |x: &T| -> Result<bool> { x.sym_lt(&zero)?.guard_or_false() };
    for s in sizes {
        // c10 reaches `computeStorageNbytes` with a negative size and
        // reports the overflow, except when a zero size comes first and it
        // returns early, leaving a tensor with a negative size; every
        // negative size is refused here (found by fuzz/shape_ops).
        if negative(s)? {
            return Err(invalid(format!(
                "Storage size calculation overflowed with sizes={} and strides={}",
                fmt_list(sizes),
                fmt_list(strides)
            )));
        }
    }
    for s in strides {
        if negative(s)? {
            return Err(invalid(format!(
                "as_strided: Negative strides are not supported at the moment, got strides: {}",
                fmt_list(strides)
            )));
        }
    }
    if negative(offset)? {
        return Err(invalid(format!("Tensor: invalid storage offset {offset}")));
    }
    Ok(())
}
