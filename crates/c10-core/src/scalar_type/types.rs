//! The element types Rust lacks: complex numbers and the float8 formats.

use super::*;

// ---------------------------------------------------------------------------
// Element types Rust lacks
// ---------------------------------------------------------------------------

/// `c10::complex<c10::Half>` (`torch.complex32`, `ScalarType::ComplexHalf`).
///
/// Like C++'s `c10::complex<T>`, it is aligned to its full size.
///
/// ```
/// use c10_core::scalar_type::{Complex32, Element, ScalarType};
/// use half::f16;
/// let z = Complex32::new(f16::from_f32(1.0), f16::from_f32(-1.0));
/// assert_eq!(Complex32::SCALAR_TYPE, ScalarType::ComplexHalf);
/// assert_eq!(z.to_f64(), 1.0);
/// assert_eq!(std::mem::align_of::<Complex32>(), 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C, align(4))]
pub struct Complex32 {
    /// Real part.
    pub re: f16,
    /// Imaginary part.
    pub im: f16,
}

/// `c10::complex<c10::BFloat16>` (`torch.bcomplex32`, `ScalarType::BComplex32`).
///
/// ```
/// use c10_core::scalar_type::{BComplex32, Element, ScalarType};
/// use half::bf16;
/// let z = BComplex32::new(bf16::from_f32(2.0), bf16::ZERO);
/// assert_eq!(BComplex32::SCALAR_TYPE, ScalarType::BComplex32);
/// assert_eq!(z.re.to_f32(), 2.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C, align(4))]
pub struct BComplex32 {
    /// Real part.
    pub re: bf16,
    /// Imaginary part.
    pub im: bf16,
}

/// `c10::complex<float>` (`torch.complex64`, `ScalarType::ComplexFloat`).
///
/// ```
/// use c10_core::scalar_type::{Complex64, Element, ScalarType};
/// let z = Complex64::new(1.5, -2.0);
/// assert_eq!(Complex64::SCALAR_TYPE, ScalarType::ComplexFloat);
/// assert_eq!(z.to_f64(), 1.5); // the real part, like a C++ cast
/// assert_eq!(std::mem::size_of::<Complex64>(), 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C, align(8))]
pub struct Complex64 {
    /// Real part.
    pub re: f32,
    /// Imaginary part.
    pub im: f32,
}

/// `c10::complex<double>` (`torch.complex128`, `ScalarType::ComplexDouble`).
///
/// ```
/// use c10_core::scalar_type::{Complex128, Element, ScalarType};
/// let i = Complex128::new(0.0, 1.0);
/// assert_eq!(Complex128::SCALAR_TYPE, ScalarType::ComplexDouble);
/// assert_eq!((i.re, i.im), (0.0, 1.0));
/// assert_eq!(std::mem::size_of::<Complex128>(), 16);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C, align(16))]
pub struct Complex128 {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

macro_rules! complex_new {
    ($($ty:ident: $component:ty),*) => {$(
        impl $ty {
            /// Builds the value from its real and imaginary parts.
            ///
            /// ```
            /// use c10_core::scalar_type::{Complex128, Complex64};
            /// assert_eq!(Complex64::new(1.0, 2.0).im, 2.0);
            /// assert_eq!(Complex128::new(-1.0, 0.5).re, -1.0);
            /// ```
            pub const fn new(re: $component, im: $component) -> $ty {
                $ty { re, im }
            }
        }
    )*};
}
complex_new!(Complex32: f16, BComplex32: bf16, Complex64: f32, Complex128: f64);

macro_rules! float8_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// A raw-bits wrapper: the byte is stored as is; conversions to and
        /// from `f64` go through [`Element`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[repr(transparent)]
        pub struct $name(pub u8);

        impl $name {
            /// Wraps a raw bit pattern.
            ///
            /// ```
            /// use c10_core::scalar_type::{Element, Float8E4M3fn, Float8E8M0fnu};
            /// assert_eq!(Float8E4M3fn::from_bits(0x38).to_f64(), 1.0);
            /// assert_eq!(Float8E8M0fnu::from_bits(0x7F).to_f64(), 1.0); // 2^(127 - 127)
            /// ```
            pub const fn from_bits(bits: u8) -> $name {
                $name(bits)
            }

            /// The raw bit pattern.
            ///
            /// ```
            /// use c10_core::scalar_type::{Element, Float8E4M3fn, Float8E5M2};
            /// assert_eq!(Float8E5M2::from_f64(1.0).to_bits(), 0x3C);
            /// assert_eq!(Float8E4M3fn::from_f64(448.0).to_bits(), 0x7E); // largest finite
            /// ```
            pub const fn to_bits(self) -> u8 {
                self.0
            }
        }
    };
}

float8_type!(
    /// `c10::Float8_e5m2` (`torch.float8_e5m2`): 1 sign, 5 exponent (bias 15)
    /// and 2 mantissa bits, with infinities and NaNs (the top byte of an IEEE
    /// half).
    ///
    /// ```
    /// use c10_core::scalar_type::{Element, Float8E5M2, ScalarType};
    /// assert_eq!(Float8E5M2::SCALAR_TYPE, ScalarType::Float8_e5m2);
    /// assert_eq!(Float8E5M2::from_f64(-2.0).to_bits(), 0xC0);
    /// assert!(Float8E5M2::from_bits(0x7C).to_f64().is_infinite());
    /// ```
    Float8E5M2
);
float8_type!(
    /// `c10::Float8_e4m3fn` (`torch.float8_e4m3fn`): 1 sign, 4 exponent
    /// (bias 7) and 3 mantissa bits; no infinities, NaN is `S.1111.111`,
    /// largest finite 448.
    ///
    /// ```
    /// use c10_core::scalar_type::{Element, Float8E4M3fn};
    /// assert_eq!(Float8E4M3fn::from_bits(0x7E).to_f64(), 448.0);
    /// assert!(Float8E4M3fn::from_bits(0x7F).to_f64().is_nan());
    /// ```
    Float8E4M3fn
);
float8_type!(
    /// `c10::Float8_e5m2fnuz` (`torch.float8_e5m2fnuz`): e5m2 with bias 16,
    /// no infinities, no negative zero; `0x80` is the only NaN.
    ///
    /// ```
    /// use c10_core::scalar_type::{Element, Float8E5M2fnuz};
    /// assert_eq!(Float8E5M2fnuz::from_f64(1.0).to_bits(), 0x40); // bias 16
    /// assert!(Float8E5M2fnuz::from_bits(0x80).to_f64().is_nan());
    /// ```
    Float8E5M2fnuz
);
float8_type!(
    /// `c10::Float8_e4m3fnuz` (`torch.float8_e4m3fnuz`): e4m3 with bias 8,
    /// no infinities, no negative zero; `0x80` is the only NaN.
    ///
    /// ```
    /// use c10_core::scalar_type::{Element, Float8E4M3fnuz};
    /// assert_eq!(Float8E4M3fnuz::from_f64(1.0).to_bits(), 0x40); // bias 8
    /// assert!(Float8E4M3fnuz::from_bits(0x80).to_f64().is_nan());
    /// ```
    Float8E4M3fnuz
);
float8_type!(
    /// `c10::Float8_e8m0fnu` (`torch.float8_e8m0fnu`): an unsigned power of
    /// two `2^(bits - 127)`; `0xFF` is NaN. Used as an MX block scale.
    ///
    /// ```
    /// use c10_core::scalar_type::{Element, Float8E8M0fnu};
    /// assert_eq!(Float8E8M0fnu::from_f64(8.0).to_bits(), 130); // 2^(130 - 127)
    /// assert!(Float8E8M0fnu::from_bits(0xFF).to_f64().is_nan());
    /// ```
    Float8E8M0fnu
);
