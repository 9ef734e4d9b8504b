//! Whole-tensor comparisons and iteration along a dim, through
//! [`CompareOps`] (in the [`prelude`](crate::prelude)):
//!
//! * [`equal`]: `torch.equal`: same sizes and equal values, after
//!   promoting both to a common dtype ([`promote_types`]); `NaN` equals
//!   nothing. (`a == b`, c10-core's `PartialEq`, also asks for the same
//!   dtype.)
//! * [`allclose`]: `torch.allclose(a, b, rtol, atol, equal_nan)`:
//!   broadcasting, then for every pair `|a - b| <= atol + rtol * |b|`, or
//!   equal (infinities of one sign), or both `NaN` with `equal_nan`.
//! * [`iter_dim`]: the sub-tensors along a dim, as `select` views
//!   (`for row in t` in Python iterates along dim 0).
//!
//! Elementwise comparisons returning tensors (`eq`, `lt`, `isclose`) are
//! not here: torchcore has no elementwise kernels (see the README).
//!
//! ```
//! use aten_shape::prelude::*;
//! let a = Tensor::from([1.0f32, 2.0, 3.0]);
//! assert!(a.equal(&Tensor::from([1i64, 2, 3]))?); // promoted, as in torch.equal
//! assert!(a.allclose(&Tensor::from([1.0f32, 2.0, 3.000001]), 1e-5, 1e-8, false)?);
//! let m = Tensor::from([[1, 2], [3, 4]]);
//! let rows: Vec<Vec<i32>> = m.iter_dim(0)?.map(|r| r?.to_vec::<i32>()).collect::<Result<_, _>>()?;
//! assert_eq!(rows, vec![vec![1, 2], vec![3, 4]]);
//! # Ok::<(), c10_core::TensorError>(())
//! ```

use c10_core::{Result, Tensor, TensorError};

use crate::convert::DtypeOps;
use crate::infer::broadcast_shapes;
use crate::promote::promote_types;
use crate::views;

/// `torch.equal(a, b)`: `true` when the sizes are equal and so are the
/// values after promoting both tensors to their common dtype; `NaN` equals
/// nothing, `-0.0 == 0.0`. Errors: different devices (*"Cannot compare two
/// tensors on different devices. Got: cpu and meta"*), memory the host
/// cannot read.
///
/// ```
/// use aten_shape::compare::equal;
/// use c10_core::Tensor;
/// assert!(equal(&Tensor::from([1i32, 2]), &Tensor::from([1.0f64, 2.0]))?);
/// assert!(!equal(&Tensor::from([1i32, 2]), &Tensor::from([1i32, 2, 3]))?);
/// assert!(!equal(&Tensor::from([f32::NAN]), &Tensor::from([f32::NAN]))?);
/// // A negative view's values are the negated stored ones.
/// let x = Tensor::from([1.0f32, 2.0]);
/// let n = aten_shape::views::neg_view(&x)?;
/// assert!(!equal(&x, &n)? && equal(&x, &aten_shape::views::neg_view(&n)?)?);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn equal(a: &Tensor, b: &Tensor) -> Result<bool> {
    if a.device() != b.device() {
        return Err(TensorError::runtime(format!(
            "Cannot compare two tensors on different devices. Got: {} and {}",
            a.device(),
            b.device()
        )));
    }
    if a.sizes() != b.sizes() {
        return Ok(false);
    }
    let common = promote_types(a.dtype(), b.dtype())?;
    // The stored values of a conjugate or negative view are not its
    // values: resolve the bits first (a no-op without them).
    let resolved = |t: &Tensor| -> Result<Tensor> {
        crate::ops::complex::resolve_neg(&crate::ops::complex::resolve_conj(t)?)?.to(common)
    };
    c10_core::compare::values_equal(&resolved(a)?, &resolved(b)?)
}

/// `torch.allclose(a, b, rtol, atol, equal_nan)`: whether every pair of
/// elements (after broadcasting `a` and `b` together) satisfies
/// `|a - b| <= atol + rtol * |b|`, or is equal (so infinities of the same
/// sign are close), or, with `equal_nan`, is `NaN` on both sides.
/// PyTorch's defaults are `rtol = 1e-5`, `atol = 1e-8`, `equal_nan =
/// false`.
///
/// As in PyTorch, both tensors must have the same dtype (*"Float did not
/// match Double"*), `rtol` and `atol` must not be negative, and shapes
/// that do not broadcast are an error. The arithmetic is done in `f64`
/// (PyTorch computes in the tensors' dtype; results can differ only for
/// pairs within one rounding of the tolerance). Complex tensors are not
/// supported yet (an error says so).
///
/// ```
/// use aten_shape::compare::allclose;
/// use c10_core::Tensor;
/// let a = Tensor::from([[1.0f64, 2.0], [3.0, 4.0]]);
/// assert!(allclose(&a, &Tensor::from([[1.0, 2.0], [3.0, 4.0 + 1e-6]]), 1e-5, 1e-8, false)?);
/// assert!(!allclose(&a, &Tensor::from([[1.0, 2.0], [3.0, 4.1]]), 1e-5, 1e-8, false)?);
/// // Broadcasting: every row of `a` against one row.
/// assert!(!allclose(&a, &Tensor::from([1.0f64, 2.0]), 1e-5, 1e-8, false)?);
/// let nan = Tensor::from([f64::NAN, 1.0]);
/// assert!(!allclose(&nan, &nan, 1e-5, 1e-8, false)?);
/// assert!(allclose(&nan, &nan, 1e-5, 1e-8, true)?);
/// let err = allclose(&a, &Tensor::from([1.0f32]), 1e-5, 1e-8, false).unwrap_err();
/// assert_eq!(err.to_string(), "Double did not match Float");
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn allclose(a: &Tensor, b: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<bool> {
    if a.dtype() != b.dtype() {
        return Err(TensorError::runtime(format!(
            "{} did not match {}",
            a.dtype().name(),
            b.dtype().name()
        )));
    }
    if a.dtype().is_complex() {
        return Err(TensorError::NotImplemented(format!(
            "allclose of complex tensors ({}) is not supported yet",
            a.dtype()
        )));
    }
    if rtol.is_nan() || rtol < 0.0 {
        return Err(TensorError::runtime(format!(
            "rtol must be greater than or equal to zero, but got {rtol}"
        )));
    }
    if atol.is_nan() || atol < 0.0 {
        return Err(TensorError::runtime(format!(
            "atol must be greater than or equal to zero, but got {atol}"
        )));
    }
    if a.device() != b.device() {
        return Err(TensorError::runtime(format!(
            "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
            a.device(),
            b.device()
        )));
    }
    let shape = broadcast_shapes(&[a.sizes(), b.sizes()])?;
    // Each side is read on its own (its storage lock released before the
    // other is taken), as f64 values in logical order.
    let xs = views::expand(a, &shape)?.to_f64_vec()?;
    let ys = views::expand(b, &shape)?.to_f64_vec()?;
    Ok(xs.iter().zip(&ys).all(|(&x, &y)| {
        if x == y {
            return true;
        }
        if x.is_nan() || y.is_nan() {
            return equal_nan && x.is_nan() && y.is_nan();
        }
        let error = (x - y).abs();
        error.is_finite() && error <= atol + rtol * y.abs()
    }))
}

/// The sub-tensors of `t` along `dim`, in order: `select(dim, 0)`,
/// `select(dim, 1)`, ... (views of `t`, like `t.unbind(dim)`, produced
/// lazily). Errors: a 0-d tensor (*"iteration over a 0-d tensor"*, as
/// PyTorch says), a dim out of range.
///
/// ```
/// use aten_shape::compare::iter_dim;
/// use c10_core::Tensor;
/// let m = Tensor::from([[1i64, 2, 3], [4, 5, 6]]);
/// let cols: Vec<Tensor> = iter_dim(&m, 1)?.collect::<Result<_, _>>()?;
/// assert_eq!(cols.len(), 3);
/// assert_eq!(cols[2].to_vec::<i64>()?, vec![3, 6]);
/// assert!(cols[2].is_alias_of(&m));
/// assert!(iter_dim(&Tensor::from(1i64), 0).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn iter_dim(t: &Tensor, dim: i64) -> Result<impl Iterator<Item = Result<Tensor>> + '_> {
    if t.dim() == 0 {
        return Err(TensorError::runtime("iteration over a 0-d tensor"));
    }
    let n = t.size(dim)?;
    Ok((0..n).map(move |i| views::select(t, dim, i)))
}

/// [`equal`], [`allclose`] and [`iter_dim`] as methods on [`Tensor`].
///
/// ```
/// use aten_shape::prelude::*;
/// let t = Tensor::from([[1.0f32, 2.0], [3.0, 4.0]]);
/// assert!(t.equal(&t.t()?.t()?)?);
/// assert!(t.allclose(&t, 0.0, 0.0, false)?);
/// assert_eq!(t.iter_dim(-1)?.count(), 2);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait CompareOps: crate::sealed::Sealed {
    /// [`equal`]: `torch.equal(self, other)`.
    ///
    /// ```
    /// use aten_shape::prelude::*;
    /// assert!(Tensor::from([1u8, 2]).equal(&Tensor::from([1i64, 2]))?);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    fn equal(&self, other: &Tensor) -> Result<bool>;

    /// [`allclose`]: `torch.allclose(self, other, rtol, atol, equal_nan)`.
    ///
    /// ```
    /// use aten_shape::prelude::*;
    /// let a = Tensor::from([1.0f32, f32::INFINITY]);
    /// assert!(a.allclose(&Tensor::from([1.0f32 + 1e-7, f32::INFINITY]), 1e-5, 1e-8, false)?);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    fn allclose(&self, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<bool>;

    /// [`iter_dim`]: the `select` views along `dim`.
    ///
    /// ```
    /// use aten_shape::prelude::*;
    /// let t = Tensor::from([[1i32, 2], [3, 4]]);
    /// let firsts: Vec<i32> = t.iter_dim(0)?.map(|r| r?.get::<i32>(&[0])).collect::<Result<_, _>>()?;
    /// assert_eq!(firsts, vec![1, 3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    fn iter_dim(&self, dim: i64) -> Result<impl Iterator<Item = Result<Tensor>> + '_>;
}

impl CompareOps for Tensor {
    fn equal(&self, other: &Tensor) -> Result<bool> {
        equal(self, other)
    }

    fn allclose(&self, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<bool> {
        allclose(self, other, rtol, atol, equal_nan)
    }

    fn iter_dim(&self, dim: i64) -> Result<impl Iterator<Item = Result<Tensor>> + '_> {
        iter_dim(self, dim)
    }
}
