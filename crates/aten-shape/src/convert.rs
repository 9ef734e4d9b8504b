//! The method form of the dtype conversion, through the [`DtypeOps`]
//! extension trait (in the [`prelude`](crate::prelude)). The joining ops
//! are functions, as in PyTorch (`torch.cat`, `torch.stack`):
//! [`join::cat`] and [`join::stack`], both in the prelude.

use c10_core::{Result, ScalarType, Tensor};

use crate::{copy, join};

/// The conversion method on [`Tensor`] (and the deprecated `cat_with`).
///
/// ```
/// use aten_shape::prelude::*;
/// use c10_core::ScalarType;
/// let t = Tensor::from([1.7f32, -2.2]);
/// let i = t.to(ScalarType::Long)?;
/// assert_eq!(i.to_vec::<i64>()?, vec![1, -2]);
/// assert_eq!(cat(&[&t, &t], 0)?.sizes(), &[4]);
/// assert_eq!(stack(&[&t, &t], 0)?.sizes(), &[2, 2]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait DtypeOps: crate::sealed::Sealed {
    /// `t.to(dtype)` ([`copy::to_dtype`]): the same tensor (same
    /// `TensorImpl`) when it already has `dtype`, else a converted copy.
    ///
    /// ```
    /// use aten_shape::prelude::*;
    /// use c10_core::ScalarType;
    /// let t = Tensor::from([[1i64, 2], [3, 4]]);
    /// let f = t.to(ScalarType::Float)?;
    /// assert_eq!(f.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
    /// assert!(t.to(ScalarType::Long)?.is_same(&t));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    fn to(&self, dtype: ScalarType) -> Result<Tensor>;

    /// [`join::cat`] of `self` followed by `others` along `dim`.
    /// Deprecated: `cat` and `stack` are functions only, as in PyTorch.
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// use aten_shape::prelude::*;
    /// let a = Tensor::from([[1u8, 2]]);
    /// let c = a.cat_with(&[&a, &a], 0)?;
    /// assert_eq!(c.sizes(), &[3, 2]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[deprecated(
        since = "0.2.0",
        note = "use `join::cat(&[&a, &b], dim)` (in the prelude): cat and stack are functions, as torch.cat and torch.stack"
    )]
    fn cat_with(&self, others: &[&Tensor], dim: i64) -> Result<Tensor>;
}

/// The old name of [`DtypeOps`] (kept so that existing imports compile;
/// it said nothing about what the trait holds).
#[doc(hidden)]
pub use DtypeOps as TensorExt;

impl DtypeOps for Tensor {
    fn to(&self, dtype: ScalarType) -> Result<Tensor> {
        copy::to_dtype(self, dtype)
    }

    fn cat_with(&self, others: &[&Tensor], dim: i64) -> Result<Tensor> {
        let mut all = Vec::with_capacity(others.len() + 1);
        all.push(self);
        all.extend_from_slice(others);
        join::cat(&all, dim)
    }
}
