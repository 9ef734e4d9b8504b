//! Whole-tensor equality: `PartialEq` for [`Tensor`] and
//! [`values_equal`].
//!
//! `a == b` holds when both tensors have the same dtype, sizes and device,
//! and equal elements in logical order (the layouts may differ: a
//! transposed view equals its contiguous copy). Floating-point elements
//! compare as numbers, so `NaN != NaN` and `0.0 == -0.0`, as in
//! `torch.equal`. Tensors of different dtypes are never `==`; PyTorch's
//! `torch.equal`, which promotes both to a common dtype first, is
//! `aten_shape`'s `equal` (`t.equal(&u)?` through its prelude), with
//! `allclose` beside it.
//!
//! ```
//! use c10_core::Tensor;
//! let a = Tensor::from([[1.0f32, 2.0], [3.0, 4.0]]);
//! assert_eq!(a, Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?);
//! assert_ne!(a, Tensor::from([[1.0f64, 2.0], [3.0, 4.0]])); // another dtype
//! assert_ne!(a, Tensor::from([1.0f32, 2.0, 3.0, 4.0])); // other sizes
//! let nan = Tensor::from([f32::NAN]);
//! assert_ne!(nan, nan.clone()); // NaN is not equal to itself
//! assert_eq!(Tensor::from([0.0f32]), Tensor::from([-0.0f32]));
//! # Ok::<(), c10_core::TensorError>(())
//! ```

use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

/// Whether `a` and `b` hold equal elements in logical order: `Ok(false)`
/// when their dtypes or sizes differ, an error when their devices differ
/// (PyTorch: *"Cannot compare two tensors on different devices"*) or their
/// memory cannot be read from the host (meta, CUDA).
///
/// Floating-point and complex elements compare as numbers (`NaN` equals
/// nothing, `-0.0 == 0.0`); other dtypes compare exactly. The two storages'
/// read locks are taken in storage-address order, so concurrent
/// comparisons cannot deadlock; for two views of one storage, `b` is read
/// into a vector first so that the lock is never taken twice.
///
/// ```
/// use c10_core::{compare::values_equal, Tensor};
/// let m = Tensor::from([[1i64, 2], [3, 4]]);
/// let t = Tensor::from([[1i64, 3], [2, 4]]);
/// assert!(!values_equal(&m, &t)?);
/// assert!(values_equal(&m, &m.clone())?);
/// assert!(!values_equal(&m, &Tensor::from([1i64, 2, 3, 4]))?); // sizes differ
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn values_equal(a: &Tensor, b: &Tensor) -> Result<bool> {
    if a.device() != b.device() {
        return Err(TensorError::runtime(format!(
            "Cannot compare two tensors on different devices. Got: {} and {}",
            a.device(),
            b.device()
        )));
    }
    if a.dtype() != b.dtype() || a.sizes() != b.sizes() {
        return Ok(false);
    }
    let floating = a.dtype().is_floating_point();
    crate::dispatch_dtype!(a.dtype(), T => {
        let same = |x: T, y: T| {
            if floating {
                crate::scalar_type::Element::to_f64(x) == crate::scalar_type::Element::to_f64(y)
            } else {
                x == y
            }
        };
        if a.storage().is_alias_of(b.storage()) {
            // One storage: read `b` first (its lock released), then `a`, so
            // that this thread never holds the same lock twice.
            let ys = b.to_vec::<T>()?;
            let ga = a.read::<T>()?;
            let equal = match ga.as_slice() {
                Ok(xs) => xs.iter().zip(ys).all(|(&x, y)| same(x, y)),
                Err(_) => ga.iter().zip(ys).all(|(x, y)| same(x, y)),
            };
            Ok(equal)
        } else {
            let (first, second) = if a.storage().id() <= b.storage().id() {
                (a, b)
            } else {
                (b, a)
            };
            let g1 = first.read::<T>()?;
            let g2 = second.read::<T>()?;
            // Contiguous sides are compared as slices (the common case);
            // the strided walk costs several times more per element.
            let equal = match (g1.as_slice(), g2.as_slice()) {
                (Ok(xs), Ok(ys)) => xs.iter().zip(ys).all(|(&x, &y)| same(x, y)),
                _ => g1.iter().zip(g2.iter()).all(|(x, y)| same(x, y)),
            };
            Ok(equal)
        }
    }, {
        Err(TensorError::NotImplemented(format!(
            "comparing elements of dtype {} is not supported",
            a.dtype()
        )))
    })
}

/// `torch.equal` for tensors of one dtype ([`values_equal`]); any error
/// (different devices, memory the host cannot read) makes the tensors
/// unequal. See the [module docs](self).
///
/// ```
/// use c10_core::Tensor;
/// assert_eq!(Tensor::from([1u8, 2]), Tensor::from(vec![1u8, 2]));
/// assert_ne!(Tensor::from([1u8, 2]), Tensor::from([1u8, 3]));
/// ```
impl PartialEq for Tensor {
    fn eq(&self, other: &Tensor) -> bool {
        values_equal(self, other).unwrap_or(false)
    }
}
