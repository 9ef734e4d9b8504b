//! `Element`: the Rust types that hold each dtype's elements.

use super::*;

// ---------------------------------------------------------------------------
// Element
// ---------------------------------------------------------------------------

/// A Rust type that is the in-memory element type of a [`ScalarType`].
///
/// Typed tensor accessors use this trait to reinterpret storage bytes, and
/// printing / conformance tests use the conversion helpers, which follow
/// C++ `static_cast` semantics: integer conversions from `f64` use Rust's
/// saturating `as` (where C++ is undefined on overflow), `bool` is
/// `v != 0.0` (so NaN is `true`), complex values convert via their real
/// part, and `Half` / `BFloat16` / float8 conversions from `f64` first
/// round to `f32` (C++ converts `double` to these types through `float`).
///
/// # Safety
///
/// An implementor guarantees that
/// * `size_of::<Self>() == Self::SCALAR_TYPE.itemsize()`,
/// * `Self` has no padding bytes, and
/// * if [`ALL_BIT_PATTERNS_VALID`](Element::ALL_BIT_PATTERNS_VALID) is
///   `true` (the default), every bit pattern of that size is a valid `Self`.
///
/// Readers may then view any suitably aligned, initialized storage bytes as
/// `Self`. `bool` is the one exception (`ALL_BIT_PATTERNS_VALID = false`):
/// only 0 and 1 are valid, so readers must load such elements as `u8` and
/// convert (`b != 0`). Alignment is *not* guaranteed by storage; readers must
/// check `align_of::<Self>()` themselves.
///
/// # Sealed
///
/// The trait is sealed: it is implemented for exactly the element types
/// listed here (one per [`ScalarType`] that has a Rust type), and no other
/// crate can add one. The unsafe readers (`as_slice`, typed guards,
/// `to_vec`) rely on more than the three promises above (for instance that
/// `bool` is the only type whose bytes need checking, and how), so a
/// downstream implementation, even one that kept every promise, could
/// make them hand out invalid values. Use one of these types, or convert
/// after reading.
///
/// ```compile_fail
/// use c10_core::scalar_type::{Element, ScalarType};
/// #[derive(Clone, Copy, Debug)]
/// #[repr(u8)]
/// enum Mine { A = 0, B = 1 }
/// // error: the trait `Sealed` is private to c10-core.
/// unsafe impl Element for Mine {
///     const SCALAR_TYPE: ScalarType = ScalarType::Byte;
///     const ALL_BIT_PATTERNS_VALID: bool = false;
///     fn to_f64(self) -> f64 { self as u8 as f64 }
///     fn from_f64(_: f64) -> Self { Mine::A }
///     fn from_i64(_: i64) -> Self { Mine::A }
///     fn to_i64(self) -> i64 { self as i64 }
/// }
/// ```
///
/// ```
/// use c10_core::scalar_type::{Element, ScalarType};
///
/// assert_eq!(<i64 as Element>::SCALAR_TYPE, ScalarType::Long);
/// assert_eq!(i8::from_f64(300.0), 127); // saturating
/// assert!(bool::from_f64(0.5));
/// assert!(!<bool as Element>::ALL_BIT_PATTERNS_VALID);
/// assert_eq!(half::f16::from_f64(1.5).to_f64(), 1.5);
/// ```
pub unsafe trait Element:
    sealed::Sealed + Copy + Send + Sync + 'static + fmt::Debug
{
    /// The scalar type whose elements have this representation.
    const SCALAR_TYPE: ScalarType;

    /// Whether every bit pattern of `size_of::<Self>()` bytes is a valid
    /// value; `false` only for `bool`.
    const ALL_BIT_PATTERNS_VALID: bool = true;

    /// `static_cast<double>(self)` (real part for complex types).
    ///
    /// ```
    /// use c10_core::scalar_type::{Complex64, Element};
    /// assert_eq!(7i32.to_f64(), 7.0);
    /// assert_eq!(Complex64::new(2.5, 1.0).to_f64(), 2.5); // the real part
    /// ```
    fn to_f64(self) -> f64;

    /// `static_cast<Self>(v)` with saturating integer conversion.
    ///
    /// ```
    /// use c10_core::scalar_type::Element;
    /// assert_eq!(u8::from_f64(-3.0), 0); // saturates
    /// assert_eq!(<f32 as Element>::from_f64(0.5), 0.5);
    /// ```
    fn from_f64(v: f64) -> Self;

    /// `static_cast<Self>(c10::complex<double>(re, im))`: complex types
    /// take both parts, `bool` is `re != 0 || im != 0`, every other type
    /// takes the real part as [`from_f64`](Element::from_f64) does (c10's
    /// `checked_convert` refuses a nonzero imaginary part first, see
    /// [`Scalar::check_fits`](crate::Scalar::check_fits)).
    ///
    /// ```
    /// use c10_core::scalar_type::{Complex64, Element};
    /// assert_eq!(Complex64::from_complex(1.0, 2.0), Complex64::new(1.0, 2.0));
    /// assert!(bool::from_complex(0.0, 2.0));
    /// assert_eq!(<f32 as Element>::from_complex(1.5, 0.0), 1.5);
    /// ```
    fn from_complex(re: f64, im: f64) -> Self {
        let _ = im;
        Self::from_f64(re)
    }

    /// `static_cast<Self>(v)`: integers wrap modulo their width (C++20
    /// semantics, Rust `as`), floating types round to nearest (via `f32` for
    /// `Half`, `BFloat16` and float8, as C++ does), `bool` is `v != 0`,
    /// complex types get a zero imaginary part. Unlike going through
    /// [`from_f64`](Element::from_f64), integers beyond 2^53 stay exact.
    ///
    /// ```
    /// use c10_core::scalar_type::Element;
    /// assert_eq!(u8::from_i64(300), 44); // wraps modulo 256
    /// assert_eq!(i8::from_i64(-129), 127);
    /// assert!(bool::from_i64(2));
    /// ```
    fn from_i64(v: i64) -> Self;

    /// `static_cast<int64_t>(self)`: integers convert exactly (`u64` wraps,
    /// like C++), floating values truncate toward zero and saturate (NaN →
    /// 0), complex values use their real part.
    ///
    /// ```
    /// use c10_core::scalar_type::Element;
    /// assert_eq!((-2.7f64).to_i64(), -2); // truncates toward zero
    /// assert_eq!(f32::NAN.to_i64(), 0);
    /// assert_eq!(u64::MAX.to_i64(), -1); // wraps like C++
    /// ```
    fn to_i64(self) -> i64;

    /// `-self`, as PyTorch's `neg` computes it: integers wrap (two's
    /// complement), floating and complex values flip their sign bits,
    /// `bool` is unchanged. What a tensor with the negative bit
    /// ([`Tensor::is_neg`](crate::Tensor::is_neg)) shows of a stored value.
    ///
    /// ```
    /// use c10_core::scalar_type::{Complex64, Element};
    /// assert_eq!(3i8.neg_value(), -3);
    /// assert_eq!(i8::MIN.neg_value(), i8::MIN); // wraps
    /// assert_eq!(Complex64::new(1.0, -2.0).neg_value(), Complex64::new(-1.0, 2.0));
    /// ```
    fn neg_value(self) -> Self {
        Self::from_f64(-self.to_f64())
    }

    /// The complex conjugate (the imaginary part's sign flipped); real
    /// values are their own conjugate. What a tensor with the conjugate bit
    /// ([`Tensor::is_conj`](crate::Tensor::is_conj)) shows of a stored value.
    ///
    /// ```
    /// use c10_core::scalar_type::{Complex128, Element};
    /// assert_eq!(Complex128::new(1.0, 2.0).conj_value(), Complex128::new(1.0, -2.0));
    /// assert_eq!(2.5f32.conj_value(), 2.5);
    /// ```
    fn conj_value(self) -> Self {
        self
    }

    /// The value seen through a tensor's conjugate and negative bits
    /// (`conj` then `neg`; both are involutions, so the same call turns a
    /// value to store into the bits it is stored as).
    ///
    /// ```
    /// use c10_core::scalar_type::{Complex64, Element};
    /// let z = Complex64::new(1.0, 2.0);
    /// assert_eq!(z.through_bits(true, true), Complex64::new(-1.0, 2.0));
    /// assert_eq!(z.through_bits(false, false), z);
    /// ```
    #[inline]
    fn through_bits(self, conj: bool, neg: bool) -> Self {
        let v = if conj { self.conj_value() } else { self };
        if neg {
            v.neg_value()
        } else {
            v
        }
    }
}

macro_rules! element_int {
    ($($ty:ty => $st:ident),* $(,)?) => {$(
        // SAFETY: a primitive integer has exactly itemsize() bytes (checked
        // by a unit test), no padding, and every bit pattern is valid.
        unsafe impl Element for $ty {
            const SCALAR_TYPE: ScalarType = ScalarType::$st;
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(v: f64) -> Self {
                v as $ty
            }
            fn from_i64(v: i64) -> Self {
                v as $ty
            }
            fn to_i64(self) -> i64 {
                self as i64
            }
            fn neg_value(self) -> Self {
                self.wrapping_neg()
            }
        }
    )*};
}
element_int!(
    u8 => Byte,
    i8 => Char,
    i16 => Short,
    i32 => Int,
    i64 => Long,
    u16 => UInt16,
    u32 => UInt32,
    u64 => UInt64,
);

// SAFETY: f32 is 4 bytes (Float's itemsize), has no padding, and every bit
// pattern is a valid f32.
unsafe impl Element for f32 {
    const SCALAR_TYPE: ScalarType = ScalarType::Float;
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn from_i64(v: i64) -> Self {
        v as f32
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn neg_value(self) -> Self {
        -self
    }
}

// SAFETY: f64 is 8 bytes (Double's itemsize), has no padding, and every bit
// pattern is a valid f64.
unsafe impl Element for f64 {
    const SCALAR_TYPE: ScalarType = ScalarType::Double;
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
    fn from_i64(v: i64) -> Self {
        v as f64
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn neg_value(self) -> Self {
        -self
    }
}

// SAFETY: bool is 1 byte (Bool's itemsize) with no padding. Not every bit
// pattern is valid, which ALL_BIT_PATTERNS_VALID = false declares, as the
// trait contract requires.
unsafe impl Element for bool {
    const SCALAR_TYPE: ScalarType = ScalarType::Bool;
    const ALL_BIT_PATTERNS_VALID: bool = false;
    fn to_f64(self) -> f64 {
        if self {
            1.0
        } else {
            0.0
        }
    }
    fn from_complex(re: f64, im: f64) -> Self {
        re != 0.0 || im != 0.0
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn to_i64(self) -> i64 {
        i64::from(self)
    }
    fn neg_value(self) -> Self {
        self
    }
}

// SAFETY: half::f16 is a 2-byte transparent wrapper over u16 (Half's
// itemsize), no padding, every bit pattern is a valid (possibly NaN) value.
unsafe impl Element for f16 {
    const SCALAR_TYPE: ScalarType = ScalarType::Half;
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
    fn from_f64(v: f64) -> Self {
        f16::from_f32(v as f32)
    }
    fn from_i64(v: i64) -> Self {
        f16::from_f32(v as f32)
    }
    fn to_i64(self) -> i64 {
        f16::to_f32(self) as i64
    }
    fn neg_value(self) -> Self {
        -self
    }
}

// SAFETY: half::bf16 is a 2-byte transparent wrapper over u16 (BFloat16's
// itemsize), no padding, every bit pattern is a valid (possibly NaN) value.
unsafe impl Element for bf16 {
    const SCALAR_TYPE: ScalarType = ScalarType::BFloat16;
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
    fn from_f64(v: f64) -> Self {
        f32_to_bf16(v as f32)
    }
    fn from_i64(v: i64) -> Self {
        f32_to_bf16(v as f32)
    }
    fn to_i64(self) -> i64 {
        bf16::to_f32(self) as i64
    }
    fn neg_value(self) -> Self {
        -self
    }
}

// SAFETY: repr(C) pair of f16 = 4 bytes (ComplexHalf's itemsize); align(4)
// equals the size, so there is no padding; any bits are valid f16s.
unsafe impl Element for Complex32 {
    const SCALAR_TYPE: ScalarType = ScalarType::ComplexHalf;
    fn to_f64(self) -> f64 {
        self.re.to_f64()
    }
    fn from_complex(re: f64, im: f64) -> Self {
        Complex32::new(f16::from_f32(re as f32), f16::from_f32(im as f32))
    }
    fn from_f64(v: f64) -> Self {
        Complex32::new(f16::from_f32(v as f32), f16::ZERO)
    }
    fn from_i64(v: i64) -> Self {
        Complex32::new(f16::from_f32(v as f32), f16::ZERO)
    }
    fn to_i64(self) -> i64 {
        self.re.to_f32() as i64
    }
    fn neg_value(self) -> Self {
        Complex32::new(-self.re, -self.im)
    }
    fn conj_value(self) -> Self {
        Complex32::new(self.re, -self.im)
    }
}

// SAFETY: repr(C) pair of bf16 = 4 bytes (BComplex32's itemsize); align(4)
// equals the size, so there is no padding; any bits are valid bf16s.
unsafe impl Element for BComplex32 {
    const SCALAR_TYPE: ScalarType = ScalarType::BComplex32;
    fn to_f64(self) -> f64 {
        self.re.to_f64()
    }
    fn from_complex(re: f64, im: f64) -> Self {
        BComplex32::new(f32_to_bf16(re as f32), f32_to_bf16(im as f32))
    }
    fn from_f64(v: f64) -> Self {
        BComplex32::new(f32_to_bf16(v as f32), bf16::ZERO)
    }
    fn from_i64(v: i64) -> Self {
        BComplex32::new(f32_to_bf16(v as f32), bf16::ZERO)
    }
    fn to_i64(self) -> i64 {
        self.re.to_f32() as i64
    }
    fn neg_value(self) -> Self {
        BComplex32::new(-self.re, -self.im)
    }
    fn conj_value(self) -> Self {
        BComplex32::new(self.re, -self.im)
    }
}

// SAFETY: repr(C) pair of f32 = 8 bytes (ComplexFloat's itemsize); align(8)
// equals the size, so there is no padding; any bits are valid f32s.
unsafe impl Element for Complex64 {
    const SCALAR_TYPE: ScalarType = ScalarType::ComplexFloat;
    fn to_f64(self) -> f64 {
        f64::from(self.re)
    }
    fn from_complex(re: f64, im: f64) -> Self {
        Complex64::new(re as f32, im as f32)
    }
    fn from_f64(v: f64) -> Self {
        Complex64::new(v as f32, 0.0)
    }
    fn from_i64(v: i64) -> Self {
        Complex64::new(v as f32, 0.0)
    }
    fn to_i64(self) -> i64 {
        self.re as i64
    }
    fn neg_value(self) -> Self {
        Complex64::new(-self.re, -self.im)
    }
    fn conj_value(self) -> Self {
        Complex64::new(self.re, -self.im)
    }
}

// SAFETY: repr(C) pair of f64 = 16 bytes (ComplexDouble's itemsize);
// align(16) equals the size, so there is no padding; any bits are valid f64s.
unsafe impl Element for Complex128 {
    const SCALAR_TYPE: ScalarType = ScalarType::ComplexDouble;
    fn to_f64(self) -> f64 {
        self.re
    }
    fn from_complex(re: f64, im: f64) -> Self {
        Complex128::new(re, im)
    }
    fn from_f64(v: f64) -> Self {
        Complex128::new(v, 0.0)
    }
    fn from_i64(v: i64) -> Self {
        Complex128::new(v as f64, 0.0)
    }
    fn to_i64(self) -> i64 {
        self.re as i64
    }
    fn neg_value(self) -> Self {
        Complex128::new(-self.re, -self.im)
    }
    fn conj_value(self) -> Self {
        Complex128::new(self.re, -self.im)
    }
}

macro_rules! element_float8 {
    ($($ty:ident => $st:ident, decode: $decode:expr, encode: $encode:expr;)*) => {$(
        // SAFETY: a repr(transparent) wrapper over u8: 1 byte (the itemsize
        // of every float8 type), no padding, and every byte is a valid value
        // (NaN encodings included).
        unsafe impl Element for $ty {
            const SCALAR_TYPE: ScalarType = ScalarType::$st;
            fn to_f64(self) -> f64 {
                let decode: fn(u8) -> f64 = $decode;
                decode(self.0)
            }
            fn from_f64(v: f64) -> Self {
                let encode: fn(f32) -> u8 = $encode;
                $ty(encode(v as f32))
            }
            fn from_i64(v: i64) -> Self {
                let encode: fn(f32) -> u8 = $encode;
                $ty(encode(v as f32))
            }
            fn to_i64(self) -> i64 {
                self.to_f64() as i64
            }
        }
    )*};
}

element_float8! {
    Float8E5M2 => Float8_e5m2,
        decode: |b| f16::from_bits(u16::from(b) << 8).to_f64(),
        encode: f32_to_e5m2;
    Float8E4M3fn => Float8_e4m3fn,
        decode: |b| match b {
            // NaN keeps its sign, as c10's decoder does.
            0x7F => f64::NAN,
            0xFF => -f64::NAN,
            _ => decode_minifloat(b, 3, 7),
        },
        encode: f32_to_e4m3fn;
    Float8E5M2fnuz => Float8_e5m2fnuz,
        decode: |b| if b == 0x80 { f64::NAN } else { decode_minifloat(b, 2, 16) },
        encode: |x| f32_to_fnuz(x, 2, 16);
    Float8E4M3fnuz => Float8_e4m3fnuz,
        decode: |b| if b == 0x80 { f64::NAN } else { decode_minifloat(b, 3, 8) },
        encode: |x| f32_to_fnuz(x, 3, 8);
    Float8E8M0fnu => Float8_e8m0fnu,
        decode: e8m0fnu_to_f64,
        encode: f32_to_e8m0fnu;
}

/// The seal of [`Element`]: a public trait in a private module, so other
/// crates can name neither it nor an implementation of it.
mod sealed {
    /// Implemented by exactly the types that implement `Element`.
    pub trait Sealed {}
}

// Exactly the types of the element-type table (the one `dispatch_dtype!`
// reads), so the seal and the dispatch cannot disagree.
crate::__element_types! { @table seal () }
