//! More conversions into [`Tensor`] (beside those of [`convert`](crate::convert)):
//!
//! * `From<&[T]>` and `From<&Vec<T>>`: a 1-d tensor copied from a slice;
//! * `From<T>` for every element type: a 0-d tensor, like
//!   `torch.tensor(3.5)` (`Tensor::from(3.5f32)`);
//! * `From` for nested arrays of 4, 5 and 6 dims (1 to 3 are in
//!   [`convert`](crate::convert));
//! * the [`tensor!`](crate::tensor!) macro: `tensor![[1, 2], [3, 4]]`.
//!
//! As everywhere, the Rust element type decides the dtype (see
//! [`convert`](crate::convert)).
//!
//! ```
//! use c10_core::{ScalarType, Tensor};
//! let v = vec![1.0f32, 2.0, 3.0];
//! assert_eq!(Tensor::from(&v[1..]).to_vec::<f32>()?, vec![2.0, 3.0]);
//! let s = Tensor::from(7i64);
//! assert_eq!((s.dim(), s.item::<i64>()?), (0, 7));
//! let t4 = Tensor::from([[[[1u8, 2]]], [[[3, 4]]]]);
//! assert_eq!(t4.sizes(), &[2, 1, 1, 2]);
//! # Ok::<(), c10_core::TensorError>(())
//! ```

use crate::convert::build;
use crate::scalar_type::Element;
use crate::tensor::Tensor;

/// A 1-d tensor copied from the slice; the dtype is `T`'s.
///
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// let data = [1i16, 2, 3, 4];
/// let t = Tensor::from(&data[..2]);
/// assert_eq!((t.sizes(), t.dtype()), (&[2i64][..], ScalarType::Short));
/// ```
impl<T: Element> From<&[T]> for Tensor {
    fn from(v: &[T]) -> Tensor {
        build(v.to_vec(), &[v.len() as i64])
    }
}

/// A 1-d tensor copied from the vector (`From<Vec<T>>` adopts it instead).
///
///
/// ```
/// use c10_core::Tensor;
/// let v = vec![true, false];
/// assert_eq!(Tensor::from(&v).to_vec::<bool>()?, v);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
impl<T: Element> From<&Vec<T>> for Tensor {
    fn from(v: &Vec<T>) -> Tensor {
        Tensor::from(v.as_slice())
    }
}

macro_rules! scalar_from {
    ($($t:ty),* $(,)?) => {$(
        /// A 0-d tensor holding the value (`torch.tensor(value)`); the
        /// dtype is the Rust type's.
        ///
        /// ```
        /// use c10_core::Tensor;
        /// let t = Tensor::from(2.5f64);
        /// assert_eq!((t.dim(), t.item::<f64>()?), (0, 2.5));
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        impl From<$t> for Tensor {
            fn from(v: $t) -> Tensor {
                build(vec![v], &[])
            }
        }
    )*};
}

scalar_from!(
    u8,
    i8,
    i16,
    i32,
    i64,
    u16,
    u32,
    u64,
    f32,
    f64,
    bool,
    half::f16,
    half::bf16,
    crate::scalar_type::Complex32,
    crate::scalar_type::BComplex32,
    crate::scalar_type::Complex64,
    crate::scalar_type::Complex128,
    crate::scalar_type::Float8E5M2,
    crate::scalar_type::Float8E4M3fn,
    crate::scalar_type::Float8E5M2fnuz,
    crate::scalar_type::Float8E4M3fnuz,
    crate::scalar_type::Float8E8M0fnu,
);

/// The nested array type `[[..[T; innermost]..]; outermost]`, its dims
/// listed innermost first.
macro_rules! nested_array {
    ($t:ty;) => { $t };
    ($t:ty; $inner:ident $($outer:ident)*) => { nested_array!([$t; $inner]; $($outer)*) };
}

/// `$e` flattened once per listed dim.
macro_rules! flattened {
    ($e:expr;) => { $e };
    ($e:expr; $_d:ident $($rest:ident)*) => { flattened!($e.as_flattened(); $($rest)*) };
}

/// `From` for one rank of nested arrays: the const dims outermost first
/// (the sizes), then the same innermost first (how the type nests).
macro_rules! nested_from {
    ($(#[$doc:meta])* [$first:ident $($rest:ident)*] [$($inner:ident)*]) => {
        $(#[$doc])*
        impl<T: Element, $(const $inner: usize),*> From<nested_array!(T; $($inner)*)> for Tensor {
            fn from(a: nested_array!(T; $($inner)*)) -> Tensor {
                let flat = flattened!(a; $($rest)*);
                build(flat.to_vec(), &[$first as i64 $(, $rest as i64)*])
            }
        }
    };
}

nested_from! {
    /// A 4-d tensor of sizes `[A, B, C, D]` copied from the nested array.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from([[[[1.0f32; 5]; 4]; 3]; 2]);
    /// assert_eq!(t.sizes(), &[2, 3, 4, 5]);
    /// ```
    [A B C D] [D C B A]
}

nested_from! {
    /// A 5-d tensor copied from the nested array.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from([[[[[7i32; 2]; 1]; 3]; 1]; 2]);
    /// assert_eq!(t.sizes(), &[2, 1, 3, 1, 2]);
    /// assert_eq!(t.get::<i32>(&[1, 0, 2, 0, 1])?, 7);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    [A B C D E] [E D C B A]
}

nested_from! {
    /// A 6-d tensor copied from the nested array.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from([[[[[[0u8; 1]; 2]; 1]; 2]; 1]; 2]);
    /// assert_eq!(t.sizes(), &[2, 1, 2, 1, 2, 1]);
    /// ```
    [A B C D E F] [F E D C B A]
}

/// Builds a CPU tensor from a (nested) list of values, like
/// `torch.tensor([[1, 2], [3, 4]])`: `tensor![[1, 2], [3, 4]]` is
/// `Tensor::from([[1, 2], [3, 4]])`, for 1 to 6 dims. The element type
/// decides the dtype; unsuffixed literals are Rust's `i32` and `f64`, so
/// write `1i64` or `1.0f32` for PyTorch's defaults. A 0-d tensor is
/// `Tensor::from(value)` (`tensor![x]` is the 1-d `torch.tensor([x])`).
///
/// ```
/// use c10_core::{tensor, ScalarType};
/// let t = tensor![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
/// assert_eq!((t.sizes(), t.dtype()), (&[2i64, 3][..], ScalarType::Float));
/// assert_eq!(tensor![1i64, 2, 3].to_vec::<i64>()?, vec![1, 2, 3]);
/// assert_eq!(tensor![5u8].sizes(), &[1]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[macro_export]
macro_rules! tensor {
    ($($elem:expr),+ $(,)?) => {
        $crate::Tensor::from([$($elem),+])
    };
}
