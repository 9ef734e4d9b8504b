//! `Scalar`: a number of any kind, converted to a tensor's dtype on use.

use crate::error::{Result, TensorError};
use crate::scalar_type::{Element, ScalarType};

/// A number of any kind (c10's `Scalar`), for factories and fills that take
/// a value whatever the tensor's dtype.
///
/// ```
/// use c10_core::Scalar;
/// assert_eq!(Scalar::from(3), Scalar::Int(3));
/// assert_eq!(Scalar::from(2.5f32), Scalar::Float(2.5));
/// assert_eq!(Scalar::from(true), Scalar::Bool(true));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
}

impl Scalar {
    /// As `f64` (integers beyond 2^53 round).
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => f64::from(u8::from(b)),
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }

    /// As `i64` (floats truncate toward zero, saturating).
    pub fn to_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => i64::from(b),
            Scalar::Int(i) => i,
            Scalar::Float(f) => f as i64,
        }
    }

    /// Whether this is a floating-point value.
    pub fn is_floating_point(self) -> bool {
        matches!(self, Scalar::Float(_))
    }

    /// Converts to the element type `T` with C++ `static_cast` semantics
    /// (integers go through `i64` so large values stay exact).
    pub fn to_element<T: Element>(self) -> T {
        match self {
            Scalar::Float(f) => T::from_f64(f),
            Scalar::Bool(b) => T::from_f64(f64::from(u8::from(b))),
            Scalar::Int(i) => {
                if T::SCALAR_TYPE.is_floating_point() || T::SCALAR_TYPE.is_complex() {
                    T::from_f64(i as f64)
                } else {
                    T::from_i64(i)
                }
            }
        }
    }

    /// Little helper for dtype-dispatched writes: encodes this value as the
    /// bytes of one element of `dtype`.
    pub fn to_bytes(self, dtype: ScalarType) -> Result<Vec<u8>> {
        crate::dispatch_dtype!(dtype, T => Ok(element_bytes(self.to_element::<T>())), {
            Err(TensorError::runtime(format!("cannot store a scalar in a tensor of dtype {dtype}")))
        })
    }
}

/// The native-endian bytes of one element.
pub(crate) fn element_bytes<T: Element>(v: T) -> Vec<u8> {
    let n = std::mem::size_of::<T>();
    let mut out = vec![0u8; n];
    // SAFETY: `out` has room for one `T`; an unaligned write is fine.
    unsafe { out.as_mut_ptr().cast::<T>().write_unaligned(v) };
    out
}

impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}
macro_rules! scalar_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Scalar {
            fn from(v: $t) -> Self {
                Scalar::Int(v as i64)
            }
        }
    )*};
}
scalar_from_int!(i8, i16, i32, i64, u8, u16, u32, isize);
impl From<f32> for Scalar {
    fn from(v: f32) -> Self {
        Scalar::Float(f64::from(v))
    }
}
impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::Float(v)
    }
}
impl From<half::f16> for Scalar {
    fn from(v: half::f16) -> Self {
        Scalar::Float(v.to_f64())
    }
}
impl From<half::bf16> for Scalar {
    fn from(v: half::bf16) -> Self {
        Scalar::Float(v.to_f64())
    }
}
