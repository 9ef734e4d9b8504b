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
/// assert_eq!(Scalar::from(c10_core::scalar_type::Complex128::new(1.0, 2.0)), Scalar::Complex(1.0, 2.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A complex number: real and imaginary parts (c10's
    /// `c10::complex<double>` Scalar).
    Complex(f64, f64),
}

impl Scalar {
    /// As `f64` (integers beyond 2^53 round; a complex value's real part).
    ///
    /// ```
    /// use c10_core::Scalar;
    /// assert_eq!(Scalar::Bool(true).to_f64(), 1.0);
    /// assert_eq!(Scalar::Int(-3).to_f64(), -3.0);
    /// assert_eq!(Scalar::Complex(1.5, 2.0).to_f64(), 1.5);
    /// ```
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => f64::from(u8::from(b)),
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) | Scalar::Complex(f, _) => f,
        }
    }

    /// As `i64` (floats truncate toward zero, saturating; a complex
    /// value's real part).
    ///
    /// ```
    /// use c10_core::Scalar;
    /// assert_eq!(Scalar::Float(-2.7).to_i64(), -2);
    /// assert_eq!(Scalar::Float(1e300).to_i64(), i64::MAX); // saturates
    /// ```
    pub fn to_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => i64::from(b),
            Scalar::Int(i) => i,
            Scalar::Float(f) | Scalar::Complex(f, _) => f as i64,
        }
    }

    /// Whether this is a floating-point value.
    ///
    /// ```
    /// use c10_core::Scalar;
    /// assert!(Scalar::from(2.0).is_floating_point());
    /// assert!(!Scalar::from(2).is_floating_point());
    /// ```
    pub fn is_floating_point(self) -> bool {
        matches!(self, Scalar::Float(_))
    }

    /// Whether this is a complex value.
    ///
    /// ```
    /// use c10_core::Scalar;
    /// assert!(Scalar::Complex(1.0, 0.0).is_complex());
    /// assert!(!Scalar::from(2.0).is_complex());
    /// ```
    pub fn is_complex(self) -> bool {
        matches!(self, Scalar::Complex(..))
    }

    /// Converts to the element type `T` with C++ `static_cast` semantics
    /// (integers go through `i64` so large values stay exact).
    ///
    /// ```
    /// use c10_core::Scalar;
    /// assert_eq!(Scalar::Int(-1).to_element::<u8>(), 255); // wraps, as C++ does
    /// assert_eq!(Scalar::Float(2.9).to_element::<i32>(), 2);
    /// assert_eq!(Scalar::Bool(true).to_element::<f32>(), 1.0);
    /// assert_eq!(Scalar::Complex(1.0, 2.0).to_element::<f64>(), 1.0); // the real part
    /// ```
    pub fn to_element<T: Element>(self) -> T {
        match self {
            Scalar::Float(f) => T::from_f64(f),
            Scalar::Complex(re, im) => T::from_complex(re, im),
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

    /// Encodes this value as the bytes of one element of `dtype`, after
    /// c10's range check ([`Scalar::check_fits`]): what `fill_`, `full`,
    /// `scalar_tensor` and single-element writes store.
    ///
    /// ```
    /// use c10_core::{Scalar, ScalarType};
    /// assert_eq!(Scalar::Int(-1).to_bytes(ScalarType::Byte)?, vec![255]); // wraps, as in c10
    /// let err = Scalar::Int(300).to_bytes(ScalarType::Byte).unwrap_err();
    /// assert_eq!(err.to_string(), "value cannot be converted to type uint8_t without overflow");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn to_bytes(self, dtype: ScalarType) -> Result<Vec<u8>> {
        self.check_fits(dtype)?;
        crate::dispatch_dtype!(dtype, T => Ok(element_bytes(self.to_element::<T>())), {
            Err(TensorError::runtime(format!("cannot store a scalar in a tensor of dtype {dtype}")))
        })
    }

    /// c10's `checked_convert`: whether this value may be stored in `dtype`,
    /// with PyTorch's error (`value cannot be converted to type uint8_t
    /// without overflow`) when it may not. The rule, for each kind of value:
    ///
    /// * a `bool` always fits;
    /// * an integer fits an unsigned type when its magnitude is at most the
    ///   type's maximum (so `-1` fills a `uint8` tensor with 255: c10 lets
    ///   negative values wrap), any other type when it lies between the
    ///   type's lowest and largest value (floating types: their finite
    ///   range, complex types: their component's);
    /// * a float fits a type with infinities when it is infinite, never fits
    ///   a type without NaN when it is NaN (integers); otherwise it fits a
    ///   floating type when it lies within the type's finite range, and an
    ///   integer type when it is not below the lowest value and is below
    ///   the largest plus one (`255.5` fits `uint8` and is stored as 255;
    ///   `256.0` and `-0.5` do not fit);
    /// * a complex value fits a complex type when both parts fit its
    ///   component's floating type; any other type only when its imaginary
    ///   part is zero (NaN is not) and its real part fits as a float;
    /// * nothing is checked for a `bool` destination (any value is
    ///   `!= 0`).
    ///
    /// ```
    /// use c10_core::{Scalar, ScalarType};
    /// assert!(Scalar::Float(1e5).check_fits(ScalarType::Half).is_err());
    /// assert!(Scalar::Float(f64::INFINITY).check_fits(ScalarType::Half).is_ok());
    /// assert!(Scalar::Float(f64::NAN).check_fits(ScalarType::Int).is_err());
    /// assert!(Scalar::Int(-255).check_fits(ScalarType::Byte).is_ok());
    /// assert!(Scalar::Float(-1.0).check_fits(ScalarType::Byte).is_err());
    /// assert!(Scalar::Int(300).check_fits(ScalarType::Bool).is_ok());
    /// assert!(Scalar::Complex(1.0, 2.0).check_fits(ScalarType::Float).is_err());
    /// assert!(Scalar::Complex(1.0, 0.0).check_fits(ScalarType::Float).is_ok());
    /// assert!(Scalar::Complex(1e300, 0.0).check_fits(ScalarType::ComplexFloat).is_err());
    /// ```
    pub fn check_fits(self, dtype: ScalarType) -> Result<()> {
        let Some(r) = c10_range(dtype) else {
            return Ok(());
        };
        let overflows = match self {
            Scalar::Complex(re, im) if dtype.is_complex() => {
                Scalar::Float(re).overflows(r) || Scalar::Float(im).overflows(r)
            }
            Scalar::Complex(_, im) if im != 0.0 => true, // NaN included
            Scalar::Complex(re, _) => Scalar::Float(re).overflows(r),
            other => other.overflows(r),
        };
        if overflows {
            return Err(TensorError::runtime(format!(
                "value cannot be converted to type {} without overflow",
                c10_type_name(dtype)
            )));
        }
        Ok(())
    }

    /// Whether this real value lies outside `r` (see [`Scalar::check_fits`]).
    fn overflows(self, r: Range) -> bool {
        match self {
            Scalar::Bool(_) => false,
            Scalar::Int(i) => match r {
                Range::Signed { lo, hi } => i < lo || i > hi,
                Range::Unsigned { hi } => i.unsigned_abs() > hi,
                Range::Float { hi, .. } => (i as f64) < -hi || (i as f64) > hi,
            },
            Scalar::Float(f) => match r {
                Range::Float { .. } if f.is_infinite() => false,
                _ if f.is_nan() => !matches!(r, Range::Float { .. }),
                Range::Float { hi, .. } => f < -hi || f > hi,
                // Below the lowest value is refused; above the largest only
                // once truncation cannot bring it back (`255.5` fits
                // `uint8`, `-0.5` does not). The bounds are exact in `f64`.
                Range::Signed { lo, hi } => !(f >= lo as f64 && f < (i128::from(hi) + 1) as f64),
                Range::Unsigned { hi } => !(f >= 0.0 && f < (u128::from(hi) + 1) as f64),
            },
            // Complex values are split by `check_fits`.
            Scalar::Complex(..) => false,
        }
    }
}

/// A destination's range for [`Scalar::check_fits`].
#[derive(Clone, Copy)]
enum Range {
    Signed {
        lo: i64,
        hi: i64,
    },
    Unsigned {
        hi: u64,
    },
    /// Largest finite value (the lowest is its negation).
    Float {
        hi: f64,
    },
}

/// The range c10's `checked_convert` tests against (`None`: unchecked).
fn c10_range(dtype: ScalarType) -> Option<Range> {
    use ScalarType as S;
    Some(match dtype {
        S::Byte => Range::Unsigned { hi: u8::MAX.into() },
        S::UInt16 => Range::Unsigned {
            hi: u16::MAX.into(),
        },
        S::UInt32 => Range::Unsigned {
            hi: u32::MAX.into(),
        },
        S::UInt64 => Range::Unsigned { hi: u64::MAX },
        S::Char => Range::Signed {
            lo: i8::MIN.into(),
            hi: i8::MAX.into(),
        },
        S::Short => Range::Signed {
            lo: i16::MIN.into(),
            hi: i16::MAX.into(),
        },
        S::Int => Range::Signed {
            lo: i32::MIN.into(),
            hi: i32::MAX.into(),
        },
        S::Long => Range::Signed {
            lo: i64::MIN,
            hi: i64::MAX,
        },
        S::Half | S::ComplexHalf => Range::Float { hi: 65504.0 },
        S::BFloat16 => Range::Float {
            hi: f64::from(half::bf16::MAX.to_f32()),
        },
        S::Float | S::ComplexFloat => Range::Float {
            hi: f64::from(f32::MAX),
        },
        S::Double | S::ComplexDouble => Range::Float { hi: f64::MAX },
        _ => return None,
    })
}

/// c10's C++ name of a dtype's element type, as its errors print it.
pub(crate) fn c10_type_name(dtype: ScalarType) -> &'static str {
    use ScalarType as S;
    match dtype {
        S::Byte => "uint8_t",
        S::Char => "int8_t",
        S::Short => "int16_t",
        S::Int => "int",
        S::Long => "int64_t",
        S::UInt16 => "uint16_t",
        S::UInt32 => "uint32_t",
        S::UInt64 => "uint64_t",
        S::Half => "c10::Half",
        S::BFloat16 => "c10::BFloat16",
        S::Float => "float",
        S::Double => "double",
        S::Bool => "bool",
        S::ComplexHalf => "c10::complex<c10::Half>",
        S::ComplexFloat => "c10::complex<float>",
        S::ComplexDouble => "c10::complex<double>",
        other => other.name(),
    }
}

/// The type names c10's `set_` error prints (`toString` of the CPU type:
/// `long int`, `unsigned char`, ...): a dtype's C++ name, for the op
/// crate's messages.
///
/// ```
/// use c10_core::{scalar::c10_type_name_long, ScalarType};
/// assert_eq!(c10_type_name_long(ScalarType::Long), "long int");
/// assert_eq!(c10_type_name_long(ScalarType::Float), "float");
/// ```
pub fn c10_type_name_long(dtype: ScalarType) -> &'static str {
    use ScalarType as S;
    match dtype {
        S::Byte => "unsigned char",
        S::Char => "signed char",
        S::Short => "short int",
        S::Int => "int",
        S::Long => "long int",
        S::UInt16 => "unsigned short",
        S::UInt32 => "unsigned int",
        S::UInt64 => "unsigned long",
        other => c10_type_name(other),
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
impl From<crate::scalar_type::Complex64> for Scalar {
    fn from(v: crate::scalar_type::Complex64) -> Self {
        Scalar::Complex(f64::from(v.re), f64::from(v.im))
    }
}
impl From<crate::scalar_type::Complex128> for Scalar {
    fn from(v: crate::scalar_type::Complex128) -> Self {
        Scalar::Complex(v.re, v.im)
    }
}
impl From<half::bf16> for Scalar {
    fn from(v: half::bf16) -> Self {
        Scalar::Float(v.to_f64())
    }
}
