//! Conversions between Rust collections and [`Tensor`]s.
//!
//! * `From<Vec<T>>` adopts a vector as a 1-d tensor without copying;
//! * `From<[T; N]>`, `From<[[T; N]; M]>` and `From<[[[T; N]; M]; K]>` build
//!   1-, 2- and 3-d tensors from (nested) arrays, like `torch.tensor([[1, 2],
//!   [3, 4]])`;
//! * `TryFrom<&Tensor> for Vec<T>` reads every element back in logical
//!   (row-major) order, whatever the layout.
//!
//! **The Rust element type decides the dtype.** PyTorch infers the dtype
//! from the Python values (`torch.tensor([1, 2])` is `int64`,
//! `torch.tensor([1.0])` is `float32`); here `T` maps to its
//! [`ScalarType`](crate::ScalarType) through [`Element`]: `i64` gives
//! `Long` (`torch.int64`), `f32` gives `Float` (`torch.float32`), `bool`
//! gives `Bool`, and so on. Unsuffixed literals take Rust's defaults, `i32`
//! and `f64`, so `Tensor::from([1, 2])` is `Int` (`torch.int32`) and
//! `Tensor::from([1.0, 2.0])` is `Double` (`torch.float64`): write
//! `[1i64, 2]` or `[1.0f32, 2.0]` to get PyTorch's defaults.
//!
//! ```
//! use c10_core::{ScalarType, Tensor};
//! let t = Tensor::from([[1i64, 2], [3, 4]]);
//! assert_eq!((t.sizes(), t.dtype()), (&[2i64, 2][..], ScalarType::Long));
//! assert_eq!(Tensor::from([1, 2]).dtype(), ScalarType::Int); // Rust's i32 default
//! assert_eq!(Tensor::from([1.0, 2.0]).dtype(), ScalarType::Double); // Rust's f64 default
//! let back: Vec<i64> = Vec::try_from(&t)?;
//! assert_eq!(back, vec![1, 2, 3, 4]);
//! # Ok::<(), c10_core::TensorError>(())
//! ```

use crate::error::{Result, TensorError};
use crate::scalar_type::Element;
use crate::tensor::Tensor;

/// Builds a CPU tensor from elements in row-major order, for the `From`
/// conversions here and in [`from_impls`](crate::from_impls). The panic
/// cannot fire: `Tensor::from_vec` adopts the vector (it allocates nothing
/// through an allocator, so a failing or user-registered CPU allocator
/// cannot make it fail), the sizes always match the element count (every
/// caller computes them from it, and data that exists in memory cannot
/// overflow `i64`), and the registry's CPU slot only ever holds a CPU
/// allocator (checked on registration), which is all `from_vec` checks.
#[allow(
    clippy::panic,
    reason = "cannot fire: sizes match the data, and the CPU allocator is always present and CPU"
)]
pub(crate) fn build<T: Element>(v: Vec<T>, sizes: &[i64]) -> Tensor {
    match Tensor::from_vec(v, sizes) {
        Ok(t) => t,
        // Cannot fire: see above (sizes come from the data; nothing is allocated).
        Err(e) => panic!("could not build a tensor of sizes {sizes:?}: {e}"),
    }
}

/// Adopts the vector as a 1-d CPU tensor of `v.len()` elements without
/// copying ([`Tensor::from_vec`]); the dtype is `T`'s (see the
/// [module docs](self)). The storage is resizable.
///
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// let t = Tensor::from(vec![1.5f32, 2.5, 3.5]);
/// assert_eq!((t.sizes(), t.dtype()), (&[3i64][..], ScalarType::Float));
/// assert_eq!(t.get::<f32>(&[2])?, 3.5);
/// let e = Tensor::from(Vec::<u8>::new());
/// assert_eq!((e.sizes(), e.dtype()), (&[0i64][..], ScalarType::Byte));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
impl<T: Element> From<Vec<T>> for Tensor {
    fn from(v: Vec<T>) -> Tensor {
        let n = v.len() as i64;
        build(v, &[n])
    }
}

/// A 1-d tensor of `N` elements copied from the array; the dtype is `T`'s
/// (see the [module docs](self)).
///
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// let t = Tensor::from([true, false, true]);
/// assert_eq!((t.sizes(), t.dtype()), (&[3i64][..], ScalarType::Bool));
/// assert_eq!(t.to_vec::<bool>()?, vec![true, false, true]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
impl<T: Element, const N: usize> From<[T; N]> for Tensor {
    fn from(a: [T; N]) -> Tensor {
        build(a.to_vec(), &[N as i64])
    }
}

/// A 2-d tensor of sizes `[M, N]` (rows first, as written) copied from the
/// nested array; the dtype is `T`'s (see the [module docs](self)).
///
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// let t = Tensor::from([[1i64, 2, 3], [4, 5, 6]]);
/// assert_eq!((t.sizes(), t.dtype()), (&[2i64, 3][..], ScalarType::Long));
/// assert_eq!(t.get::<i64>(&[1, 0])?, 4);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
impl<T: Element, const N: usize, const M: usize> From<[[T; N]; M]> for Tensor {
    fn from(a: [[T; N]; M]) -> Tensor {
        build(a.as_flattened().to_vec(), &[M as i64, N as i64])
    }
}

/// A 3-d tensor of sizes `[K, M, N]` copied from the nested array; the
/// dtype is `T`'s (see the [module docs](self)).
///
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// let t = Tensor::from([[[1.0f32, 2.0]], [[3.0, 4.0]]]);
/// assert_eq!((t.sizes(), t.dtype()), (&[2i64, 1, 2][..], ScalarType::Float));
/// assert_eq!(t.get::<f32>(&[1, 0, 1])?, 4.0);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
impl<T: Element, const N: usize, const M: usize, const K: usize> From<[[[T; N]; M]; K]> for Tensor {
    fn from(a: [[[T; N]; M]; K]) -> Tensor {
        build(
            a.as_flattened().as_flattened().to_vec(),
            &[K as i64, M as i64, N as i64],
        )
    }
}

/// Every element in logical (row-major) order, whatever the layout
/// ([`Tensor::to_vec`]). The tensor's dtype must be `T`'s: otherwise the
/// error is [`TensorError::DtypeMismatch`], carrying both dtypes (convert
/// first with `aten_shape`'s `to`). Host-inaccessible tensors (meta, CUDA)
/// are refused as by `to_vec`.
///
/// ```
/// use c10_core::{Tensor, TensorError};
/// let t = Tensor::from([[1i32, 2], [3, 4]]);
/// let tt = t.as_strided(&[2, 2], &[1, 2], None)?; // transposed view
/// assert_eq!(Vec::<i32>::try_from(&tt)?, vec![1, 3, 2, 4]);
/// let err = Vec::<f32>::try_from(&t).unwrap_err();
/// assert!(matches!(err, TensorError::DtypeMismatch { .. }));
/// assert!(err
///     .to_string()
///     .starts_with("expected a tensor of dtype torch.float32 but this tensor has dtype torch.int32; convert it first with `t.to(ScalarType::Float)?`"));
/// # Ok::<(), TensorError>(())
/// ```
impl<T: Element> TryFrom<&Tensor> for Vec<T> {
    type Error = TensorError;

    fn try_from(t: &Tensor) -> Result<Vec<T>> {
        if t.dtype() != T::SCALAR_TYPE {
            return Err(TensorError::DtypeMismatch {
                expected: T::SCALAR_TYPE,
                actual: t.dtype(),
            });
        }
        t.to_vec::<T>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScalarType;
    use half::{bf16, f16};

    #[test]
    fn dtype_follows_the_element_type() {
        assert_eq!(Tensor::from(vec![1u8]).dtype(), ScalarType::Byte);
        assert_eq!(Tensor::from(vec![1i8]).dtype(), ScalarType::Char);
        assert_eq!(Tensor::from(vec![1i16]).dtype(), ScalarType::Short);
        assert_eq!(Tensor::from(vec![1i32]).dtype(), ScalarType::Int);
        assert_eq!(Tensor::from(vec![1i64]).dtype(), ScalarType::Long);
        assert_eq!(Tensor::from(vec![1u16]).dtype(), ScalarType::UInt16);
        assert_eq!(Tensor::from(vec![1u32]).dtype(), ScalarType::UInt32);
        assert_eq!(Tensor::from(vec![1u64]).dtype(), ScalarType::UInt64);
        assert_eq!(Tensor::from(vec![f16::ONE]).dtype(), ScalarType::Half);
        assert_eq!(Tensor::from(vec![bf16::ONE]).dtype(), ScalarType::BFloat16);
        assert_eq!(Tensor::from(vec![1.0f64]).dtype(), ScalarType::Double);
    }

    #[test]
    fn nested_arrays_are_row_major() {
        let t = Tensor::from([[[1i16, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]);
        assert_eq!(t.sizes(), &[2, 2, 3]);
        assert_eq!(t.strides(), &[6, 3, 1]);
        assert_eq!(t.get::<i16>(&[1, 0, 2]).unwrap(), 9);
        assert_eq!(
            Vec::<i16>::try_from(&t).unwrap(),
            (1..=12).collect::<Vec<_>>()
        );
        let e = Tensor::from([[0u8; 0]; 3]);
        assert_eq!(e.sizes(), &[3, 0]);
        let e = Tensor::from([[[0u8; 2]; 0]; 3]);
        assert_eq!(e.sizes(), &[3, 0, 2]);
    }

    #[test]
    fn from_vec_storage_is_resizable() {
        let mut t = Tensor::from(vec![1i64, 2]);
        assert!(t.storage().resizable());
        t.storage().resize(32).unwrap();
        assert_eq!(t.storage().nbytes(), 32);
        t.edit_metadata()
            .set_sizes_and_strides(&[4], &[1], None)
            .unwrap();
        assert_eq!(t.get::<i64>(&[1]).unwrap(), 2);
    }

    #[test]
    fn try_from_reports_both_dtypes() {
        let t = Tensor::from(vec![1u8, 2]);
        match Vec::<i64>::try_from(&t) {
            Err(TensorError::DtypeMismatch { expected, actual }) => {
                assert_eq!((expected, actual), (ScalarType::Long, ScalarType::Byte));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
