//! Element types: [`ScalarType`] (c10's dtype enum), [`TypeMeta`] (the 2-byte
//! dtype handle stored in every tensor) and the [`Element`] trait that ties
//! Rust types to scalar types for typed data access.
//!
//! Numbering, item sizes and names follow PyTorch 2.15 exactly (which added
//! `BComplex32 = 46`, moving `Undefined` to 47).
//!
//! ```
//! use c10_core::scalar_type::{Element, ScalarType, TypeMeta};
//!
//! let dtype = ScalarType::Float;
//! assert_eq!(dtype as i8, 6);
//! assert_eq!(dtype.itemsize(), 4);
//! assert_eq!(dtype.to_string(), "torch.float32");
//! assert_eq!(ScalarType::from_torch_name("float"), Ok(ScalarType::Float));
//! assert_eq!(<f32 as Element>::SCALAR_TYPE, ScalarType::Float);
//! assert_eq!(TypeMeta::from_scalar_type(dtype).itemsize(), 4);
//! ```

use std::fmt;
use std::str::FromStr;

use half::{bf16, f16};

/// Errors from converting raw values or names into a [`ScalarType`], and from
/// queries that c10 rejects for some scalar types.
///
/// ```
/// use c10_core::scalar_type::{ScalarType, ScalarTypeError};
/// let err = "float33".parse::<ScalarType>().unwrap_err();
/// assert_eq!(err, ScalarTypeError::UnknownName("float33".into()));
/// assert_eq!(err.to_string(), "unknown dtype name 'float33'");
/// assert_eq!(ScalarType::QInt8.is_signed(), Err(ScalarTypeError::SignednessOfQuantizedType));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScalarTypeError {
    /// An `i8` that is not a valid `ScalarType` discriminant.
    #[error("invalid ScalarType value {0} (expected 0..=47)")]
    InvalidValue(i8),
    /// A dtype name that torch does not know.
    #[error("unknown dtype name '{0}'")]
    UnknownName(String),
    /// c10's `isSignedType` refuses quantized types.
    #[error("isSignedType not supported for quantized types")]
    SignednessOfQuantizedType,
    /// c10's `isSignedType` refuses the opaque `Bits*` types.
    #[error("Bits types are undefined")]
    SignednessOfBitsType,
    /// The query is meaningless for `ScalarType::Undefined` (c10:
    /// `Unknown ScalarType`).
    #[error("Unknown ScalarType {0}")]
    UnknownScalarType(&'static str),
}

/// A tensor element type (c10 `ScalarType`, an `int8_t` enum).
///
/// The discriminants are part of PyTorch's serialization format and type
/// promotion tables, so they are pinned here exactly. `UInt1..UInt7` and
/// `Int1..Int7` are placeholders whose behaviour lives in Python tensor
/// subclasses; they have an item size of 1.
///
/// * [`name`](ScalarType::name) is the C++ `toString` name (`"Float"`).
/// * [`torch_name`](ScalarType::torch_name) is the Python name without the
///   `torch.` prefix (`"float32"`); `Display` prints `torch.float32`.
/// * `Debug` prints the enumerator identifier.
///
/// ```
/// use c10_core::scalar_type::ScalarType;
///
/// assert_eq!(ScalarType::ComplexFloat.torch_name(), "complex64");
/// assert_eq!(ScalarType::ComplexFloat.name(), "ComplexFloat");
/// assert_eq!(ScalarType::try_from(11), Ok(ScalarType::Bool));
/// assert!(ScalarType::BFloat16.is_floating_point());
/// assert_eq!(ScalarType::QUInt4x2.elements_per_byte(), 2);
/// ```
// Enumerator names mirror the C++ ones (Float8_e4m3fn, ...).
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(i8)]
pub enum ScalarType {
    /// `uint8_t` (`torch.uint8`).
    Byte = 0,
    /// `int8_t` (`torch.int8`).
    Char = 1,
    /// `int16_t` (`torch.int16`, `torch.short`).
    Short = 2,
    /// `int32_t` (`torch.int32`, `torch.int`).
    Int = 3,
    /// `int64_t` (`torch.int64`, `torch.long`).
    Long = 4,
    /// IEEE half precision (`torch.float16`, `torch.half`).
    Half = 5,
    /// IEEE single precision (`torch.float32`, `torch.float`).
    Float = 6,
    /// IEEE double precision (`torch.float64`, `torch.double`).
    Double = 7,
    /// `complex<Half>` (`torch.complex32`, `torch.chalf`).
    ComplexHalf = 8,
    /// `complex<float>` (`torch.complex64`, `torch.cfloat`).
    ComplexFloat = 9,
    /// `complex<double>` (`torch.complex128`, `torch.cdouble`).
    ComplexDouble = 10,
    /// `bool` stored as one byte (`torch.bool`).
    Bool = 11,
    /// Quantized signed 8-bit (`torch.qint8`).
    QInt8 = 12,
    /// Quantized unsigned 8-bit (`torch.quint8`).
    QUInt8 = 13,
    /// Quantized signed 32-bit (`torch.qint32`).
    QInt32 = 14,
    /// Brain floating point (`torch.bfloat16`).
    BFloat16 = 15,
    /// Two quantized 4-bit values packed per byte (`torch.quint4x2`).
    QUInt4x2 = 16,
    /// Four quantized 2-bit values packed per byte (`torch.quint2x4`).
    QUInt2x4 = 17,
    /// Opaque 1-byte bits (`torch.bits1x8`).
    Bits1x8 = 18,
    /// Opaque 1-byte bits (`torch.bits2x4`).
    Bits2x4 = 19,
    /// Opaque 1-byte bits (`torch.bits4x2`).
    Bits4x2 = 20,
    /// Opaque 1-byte bits (`torch.bits8`).
    Bits8 = 21,
    /// Opaque 2-byte bits (`torch.bits16`).
    Bits16 = 22,
    /// 8-bit float, 5 exponent and 2 mantissa bits, with infinities (`torch.float8_e5m2`).
    Float8_e5m2 = 23,
    /// 8-bit float, 4 exponent and 3 mantissa bits, finite only (`torch.float8_e4m3fn`).
    Float8_e4m3fn = 24,
    /// 8-bit float e5m2, finite, unsigned zero, bias 16 (`torch.float8_e5m2fnuz`).
    Float8_e5m2fnuz = 25,
    /// 8-bit float e4m3, finite, unsigned zero, bias 8 (`torch.float8_e4m3fnuz`).
    Float8_e4m3fnuz = 26,
    /// `uint16_t` (`torch.uint16`).
    UInt16 = 27,
    /// `uint32_t` (`torch.uint32`).
    UInt32 = 28,
    /// `uint64_t` (`torch.uint64`).
    UInt64 = 29,
    /// Placeholder 1-bit unsigned integer (`torch.uint1`, legacy `torch.bit`).
    UInt1 = 30,
    /// Placeholder 2-bit unsigned integer (`torch.uint2`).
    UInt2 = 31,
    /// Placeholder 3-bit unsigned integer (`torch.uint3`).
    UInt3 = 32,
    /// Placeholder 4-bit unsigned integer (`torch.uint4`).
    UInt4 = 33,
    /// Placeholder 5-bit unsigned integer (`torch.uint5`).
    UInt5 = 34,
    /// Placeholder 6-bit unsigned integer (`torch.uint6`).
    UInt6 = 35,
    /// Placeholder 7-bit unsigned integer (`torch.uint7`).
    UInt7 = 36,
    /// Placeholder 1-bit signed integer (`torch.int1`).
    Int1 = 37,
    /// Placeholder 2-bit signed integer (`torch.int2`).
    Int2 = 38,
    /// Placeholder 3-bit signed integer (`torch.int3`).
    Int3 = 39,
    /// Placeholder 4-bit signed integer (`torch.int4`).
    Int4 = 40,
    /// Placeholder 5-bit signed integer (`torch.int5`).
    Int5 = 41,
    /// Placeholder 6-bit signed integer (`torch.int6`).
    Int6 = 42,
    /// Placeholder 7-bit signed integer (`torch.int7`).
    Int7 = 43,
    /// 8-bit power-of-two scale, exponent only (`torch.float8_e8m0fnu`).
    Float8_e8m0fnu = 44,
    /// Two packed e2m1 4-bit floats per byte (`torch.float4_e2m1fn_x2`).
    Float4_e2m1fn_x2 = 45,
    /// `complex<BFloat16>` (`torch.bcomplex32`; new in 2.15).
    BComplex32 = 46,
    /// No dtype (an uninitialized `TypeMeta`); item size 0.
    #[default]
    Undefined = 47,
}

/// Number of scalar types including `Undefined` (c10 `NumScalarTypes`, the
/// value of `ScalarType::NumOptions`).
pub const NUM_SCALAR_TYPES: usize = 48;

const ALL_SCALAR_TYPES: [ScalarType; NUM_SCALAR_TYPES] = {
    use ScalarType::*;
    [
        Byte,
        Char,
        Short,
        Int,
        Long,
        Half,
        Float,
        Double,
        ComplexHalf,
        ComplexFloat,
        ComplexDouble,
        Bool,
        QInt8,
        QUInt8,
        QInt32,
        BFloat16,
        QUInt4x2,
        QUInt2x4,
        Bits1x8,
        Bits2x4,
        Bits4x2,
        Bits8,
        Bits16,
        Float8_e5m2,
        Float8_e4m3fn,
        Float8_e5m2fnuz,
        Float8_e4m3fnuz,
        UInt16,
        UInt32,
        UInt64,
        UInt1,
        UInt2,
        UInt3,
        UInt4,
        UInt5,
        UInt6,
        UInt7,
        Int1,
        Int2,
        Int3,
        Int4,
        Int5,
        Int6,
        Int7,
        Float8_e8m0fnu,
        Float4_e2m1fn_x2,
        BComplex32,
        Undefined,
    ]
};

/// Python dtype names accepted by [`ScalarType::from_torch_name`] besides the
/// primary names: torch's legacy aliases (c10 `getDtypeNames`' second entry).
const LEGACY_DTYPE_NAMES: [(&str, ScalarType); 10] = [
    ("double", ScalarType::Double),
    ("float", ScalarType::Float),
    ("int", ScalarType::Int),
    ("long", ScalarType::Long),
    ("short", ScalarType::Short),
    ("half", ScalarType::Half),
    ("chalf", ScalarType::ComplexHalf),
    ("cfloat", ScalarType::ComplexFloat),
    ("cdouble", ScalarType::ComplexDouble),
    ("bit", ScalarType::UInt1),
];

impl ScalarType {
    /// Every scalar type in numeric order (`ALL[i] as i8 == i`), `Undefined`
    /// last.
    pub const ALL: [ScalarType; NUM_SCALAR_TYPES] = ALL_SCALAR_TYPES;

    /// Converts a raw discriminant; `None` outside `0..=47`.
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert_eq!(ScalarType::from_i8(4), Some(ScalarType::Long));
    /// assert_eq!(ScalarType::from_i8(48), None);
    /// assert_eq!(ScalarType::from_i8(-1), None);
    /// ```
    pub const fn from_i8(v: i8) -> Option<ScalarType> {
        if v >= 0 && (v as usize) < NUM_SCALAR_TYPES {
            Some(ALL_SCALAR_TYPES[v as usize])
        } else {
            None
        }
    }

    /// Size of one element in bytes (c10 `elementSize`; `Undefined` → 0).
    ///
    /// Sub-byte packed types report the size of their storage unit (one
    /// byte); see [`elements_per_byte`](ScalarType::elements_per_byte).
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert_eq!(ScalarType::Float.itemsize(), 4);
    /// assert_eq!(ScalarType::ComplexDouble.itemsize(), 16);
    /// assert_eq!(ScalarType::QUInt4x2.itemsize(), 1); // two packed elements per byte
    /// ```
    pub const fn itemsize(self) -> usize {
        use ScalarType::*;
        match self {
            Undefined => 0,
            Byte | Char | Bool | QInt8 | QUInt8 | QUInt4x2 | QUInt2x4 | Bits1x8 | Bits2x4
            | Bits4x2 | Bits8 | Float8_e5m2 | Float8_e4m3fn | Float8_e5m2fnuz | Float8_e4m3fnuz
            | UInt1 | UInt2 | UInt3 | UInt4 | UInt5 | UInt6 | UInt7 | Int1 | Int2 | Int3 | Int4
            | Int5 | Int6 | Int7 | Float8_e8m0fnu | Float4_e2m1fn_x2 => 1,
            Short | Half | BFloat16 | UInt16 | Bits16 => 2,
            Int | Float | ComplexHalf | QInt32 | UInt32 | BComplex32 => 4,
            Long | Double | ComplexFloat | UInt64 => 8,
            ComplexDouble => 16,
        }
    }

    /// How many logical elements share one byte: 2 for `QUInt4x2`, 4 for
    /// `QUInt2x4`, 1 otherwise. c10 divides byte counts by this (rounding up)
    /// when bounds-checking storage.
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert_eq!(ScalarType::QUInt2x4.elements_per_byte(), 4);
    /// assert_eq!(ScalarType::Float.elements_per_byte(), 1);
    /// ```
    pub const fn elements_per_byte(self) -> usize {
        match self {
            ScalarType::QUInt4x2 => 2,
            ScalarType::QUInt2x4 => 4,
            _ => 1,
        }
    }

    /// The C++ name printed by c10's `toString(ScalarType)`: the enumerator
    /// name (`"Float"`, `"Float8_e4m3fn"`, `"BComplex32"`).
    ///
    /// `Undefined` prints `"UNKNOWN_SCALAR"`, as in c10 (it is not part of
    /// the X-macro that generates the names).
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert_eq!(ScalarType::Float.name(), "Float");
    /// assert_eq!(ScalarType::Float8_e4m3fn.name(), "Float8_e4m3fn");
    /// assert_eq!(ScalarType::Undefined.name(), "UNKNOWN_SCALAR");
    /// ```
    pub const fn name(self) -> &'static str {
        use ScalarType::*;
        match self {
            Byte => "Byte",
            Char => "Char",
            Short => "Short",
            Int => "Int",
            Long => "Long",
            Half => "Half",
            Float => "Float",
            Double => "Double",
            ComplexHalf => "ComplexHalf",
            ComplexFloat => "ComplexFloat",
            ComplexDouble => "ComplexDouble",
            Bool => "Bool",
            QInt8 => "QInt8",
            QUInt8 => "QUInt8",
            QInt32 => "QInt32",
            BFloat16 => "BFloat16",
            QUInt4x2 => "QUInt4x2",
            QUInt2x4 => "QUInt2x4",
            Bits1x8 => "Bits1x8",
            Bits2x4 => "Bits2x4",
            Bits4x2 => "Bits4x2",
            Bits8 => "Bits8",
            Bits16 => "Bits16",
            Float8_e5m2 => "Float8_e5m2",
            Float8_e4m3fn => "Float8_e4m3fn",
            Float8_e5m2fnuz => "Float8_e5m2fnuz",
            Float8_e4m3fnuz => "Float8_e4m3fnuz",
            UInt16 => "UInt16",
            UInt32 => "UInt32",
            UInt64 => "UInt64",
            UInt1 => "UInt1",
            UInt2 => "UInt2",
            UInt3 => "UInt3",
            UInt4 => "UInt4",
            UInt5 => "UInt5",
            UInt6 => "UInt6",
            UInt7 => "UInt7",
            Int1 => "Int1",
            Int2 => "Int2",
            Int3 => "Int3",
            Int4 => "Int4",
            Int5 => "Int5",
            Int6 => "Int6",
            Int7 => "Int7",
            Float8_e8m0fnu => "Float8_e8m0fnu",
            Float4_e2m1fn_x2 => "Float4_e2m1fn_x2",
            BComplex32 => "BComplex32",
            Undefined => "UNKNOWN_SCALAR",
        }
    }

    /// The Python dtype name without the `torch.` prefix (c10
    /// `getDtypeNames(..).first`): `"float32"`, `"int64"`, `"bool"`,
    /// `"complex64"`, `"float8_e4m3fn"`, `"quint4x2"`, ...
    ///
    /// `Undefined` has no Python dtype; it returns `"undefined"`, which
    /// [`from_torch_name`](ScalarType::from_torch_name) does not accept.
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert_eq!(ScalarType::Long.torch_name(), "int64");
    /// assert_eq!(ScalarType::ComplexFloat.torch_name(), "complex64");
    /// assert_eq!(ScalarType::Float.to_string(), "torch.float32"); // `Display` adds the prefix
    /// ```
    pub const fn torch_name(self) -> &'static str {
        use ScalarType::*;
        match self {
            Byte => "uint8",
            Char => "int8",
            Short => "int16",
            Int => "int32",
            Long => "int64",
            Half => "float16",
            Float => "float32",
            Double => "float64",
            ComplexHalf => "complex32",
            ComplexFloat => "complex64",
            ComplexDouble => "complex128",
            Bool => "bool",
            QInt8 => "qint8",
            QUInt8 => "quint8",
            QInt32 => "qint32",
            BFloat16 => "bfloat16",
            QUInt4x2 => "quint4x2",
            QUInt2x4 => "quint2x4",
            Bits1x8 => "bits1x8",
            Bits2x4 => "bits2x4",
            Bits4x2 => "bits4x2",
            Bits8 => "bits8",
            Bits16 => "bits16",
            Float8_e5m2 => "float8_e5m2",
            Float8_e4m3fn => "float8_e4m3fn",
            Float8_e5m2fnuz => "float8_e5m2fnuz",
            Float8_e4m3fnuz => "float8_e4m3fnuz",
            UInt16 => "uint16",
            UInt32 => "uint32",
            UInt64 => "uint64",
            UInt1 => "uint1",
            UInt2 => "uint2",
            UInt3 => "uint3",
            UInt4 => "uint4",
            UInt5 => "uint5",
            UInt6 => "uint6",
            UInt7 => "uint7",
            Int1 => "int1",
            Int2 => "int2",
            Int3 => "int3",
            Int4 => "int4",
            Int5 => "int5",
            Int6 => "int6",
            Int7 => "int7",
            Float8_e8m0fnu => "float8_e8m0fnu",
            Float4_e2m1fn_x2 => "float4_e2m1fn_x2",
            BComplex32 => "bcomplex32",
            Undefined => "undefined",
        }
    }

    /// Parses a Python dtype name: a primary name (`"float32"`), a legacy
    /// alias (`"float"`, `"double"`, `"half"`, `"long"`, `"int"`, `"short"`,
    /// `"cfloat"`, `"cdouble"`, `"chalf"`, `"bit"`), optionally with the
    /// `torch.` prefix so that `Display` output round-trips. Matching is
    /// exact and case-sensitive, as attribute lookup on `torch` is.
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert_eq!(ScalarType::from_torch_name("int64"), Ok(ScalarType::Long));
    /// assert_eq!(ScalarType::from_torch_name("torch.cdouble"), Ok(ScalarType::ComplexDouble));
    /// assert!(ScalarType::from_torch_name("Float").is_err());
    /// ```
    pub fn from_torch_name(name: &str) -> Result<ScalarType, ScalarTypeError> {
        let bare = name.strip_prefix("torch.").unwrap_or(name);
        ALL_SCALAR_TYPES
            .iter()
            .copied()
            .filter(|t| *t != ScalarType::Undefined)
            .find(|t| t.torch_name() == bare)
            .or_else(|| {
                LEGACY_DTYPE_NAMES
                    .iter()
                    .find(|(alias, _)| *alias == bare)
                    .map(|(_, t)| *t)
            })
            .ok_or_else(|| ScalarTypeError::UnknownName(name.to_owned()))
    }

    /// c10 `isFloatingType`: `Double`, `Float` and the reduced floating
    /// types (`Half`, `BFloat16`, the five float8 types and
    /// `Float4_e2m1fn_x2`). Complex types are not floating point.
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert!(ScalarType::BFloat16.is_floating_point());
    /// assert!(!ScalarType::ComplexFloat.is_floating_point());
    /// assert!(!ScalarType::Int.is_floating_point());
    /// ```
    pub const fn is_floating_point(self) -> bool {
        matches!(
            self,
            ScalarType::Double | ScalarType::Float | ScalarType::Half | ScalarType::BFloat16
        ) || self.is_float8()
            || matches!(self, ScalarType::Float4_e2m1fn_x2)
    }

    /// c10 `isComplexType`: `ComplexHalf`, `ComplexFloat`, `ComplexDouble`,
    /// `BComplex32`.
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert!(ScalarType::ComplexHalf.is_complex());
    /// assert!(!ScalarType::Double.is_complex());
    /// ```
    pub const fn is_complex(self) -> bool {
        matches!(
            self,
            ScalarType::ComplexHalf
                | ScalarType::ComplexFloat
                | ScalarType::ComplexDouble
                | ScalarType::BComplex32
        )
    }

    /// c10 `isIntegralType`: `Byte`, `Char`, `Short`, `Int`, `Long`,
    /// `UInt16`, `UInt32`, `UInt64`, plus `Bool` when `include_bool`. The
    /// placeholder `UInt1..7`/`Int1..7` and the quantized types are not
    /// integral.
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert!(ScalarType::UInt16.is_integral(false));
    /// assert!(!ScalarType::Bool.is_integral(false));
    /// assert!(ScalarType::Bool.is_integral(true));
    /// assert!(!ScalarType::QInt8.is_integral(true));
    /// ```
    pub const fn is_integral(self, include_bool: bool) -> bool {
        matches!(
            self,
            ScalarType::Byte
                | ScalarType::Char
                | ScalarType::Short
                | ScalarType::Int
                | ScalarType::Long
                | ScalarType::UInt16
                | ScalarType::UInt32
                | ScalarType::UInt64
        ) || (include_bool && matches!(self, ScalarType::Bool))
    }

    /// c10 `isSignedType` (what Python's `dtype.is_signed` returns).
    ///
    /// Follows `std::numeric_limits<T>::is_signed` of the C++ element type:
    /// signed integers, `Half`, `BFloat16`, `Float`, `Double` and the signed
    /// float8 types are signed; `Bool`, unsigned integers and
    /// `Float8_e8m0fnu` are not. Complex types report `false` because
    /// `numeric_limits` is not specialised for `c10::complex`.
    /// `Int1..Int7` and `Float4_e2m1fn_x2` are signed, `UInt1..UInt7` are not.
    ///
    /// # Errors
    ///
    /// Quantized types, `Bits*` types and `Undefined` are rejected with the
    /// same messages as c10.
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert_eq!(ScalarType::Char.is_signed(), Ok(true));
    /// assert_eq!(ScalarType::Byte.is_signed(), Ok(false));
    /// assert!(ScalarType::Bits8.is_signed().is_err());
    /// ```
    pub const fn is_signed(self) -> Result<bool, ScalarTypeError> {
        use ScalarType::*;
        match self {
            QInt8 | QUInt8 | QInt32 | QUInt4x2 | QUInt2x4 => {
                Err(ScalarTypeError::SignednessOfQuantizedType)
            }
            Bits1x8 | Bits2x4 | Bits4x2 | Bits8 | Bits16 => {
                Err(ScalarTypeError::SignednessOfBitsType)
            }
            Undefined => Err(ScalarTypeError::UnknownScalarType(Undefined.name())),
            Char | Short | Int | Long | Half | Float | Double | BFloat16 | Float8_e5m2
            | Float8_e4m3fn | Float8_e5m2fnuz | Float8_e4m3fnuz | Int1 | Int2 | Int3 | Int4
            | Int5 | Int6 | Int7 | Float4_e2m1fn_x2 => Ok(true),
            Byte | Bool | UInt16 | UInt32 | UInt64 | UInt1 | UInt2 | UInt3 | UInt4 | UInt5
            | UInt6 | UInt7 | Float8_e8m0fnu | ComplexHalf | ComplexFloat | ComplexDouble
            | BComplex32 => Ok(false),
        }
    }

    /// c10 `isQIntType`: `QInt8`, `QUInt8`, `QInt32`, `QUInt4x2`, `QUInt2x4`.
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert!(ScalarType::QUInt8.is_quantized());
    /// assert!(!ScalarType::Byte.is_quantized());
    /// ```
    pub const fn is_quantized(self) -> bool {
        matches!(
            self,
            ScalarType::QInt8
                | ScalarType::QUInt8
                | ScalarType::QInt32
                | ScalarType::QUInt4x2
                | ScalarType::QUInt2x4
        )
    }

    /// c10 `isFloat8Type`: the five 8-bit float types.
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert!(ScalarType::Float8_e4m3fn.is_float8());
    /// assert!(!ScalarType::Half.is_float8());
    /// ```
    pub const fn is_float8(self) -> bool {
        matches!(
            self,
            ScalarType::Float8_e5m2
                | ScalarType::Float8_e4m3fn
                | ScalarType::Float8_e5m2fnuz
                | ScalarType::Float8_e4m3fnuz
                | ScalarType::Float8_e8m0fnu
        )
    }

    /// c10 `isBitsType`: `Bits1x8`, `Bits2x4`, `Bits4x2`, `Bits8`, `Bits16`.
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert!(ScalarType::Bits16.is_bits());
    /// assert!(!ScalarType::UInt16.is_bits());
    /// ```
    pub const fn is_bits(self) -> bool {
        matches!(
            self,
            ScalarType::Bits1x8
                | ScalarType::Bits2x4
                | ScalarType::Bits4x2
                | ScalarType::Bits8
                | ScalarType::Bits16
        )
    }

    /// c10 `toRealValueType`: the component type of a complex type
    /// (`ComplexFloat` → `Float`, `BComplex32` → `BFloat16`); every other type
    /// maps to itself.
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert_eq!(ScalarType::ComplexDouble.to_real_value_type(), ScalarType::Double);
    /// assert_eq!(ScalarType::Int.to_real_value_type(), ScalarType::Int);
    /// ```
    pub const fn to_real_value_type(self) -> ScalarType {
        match self {
            ScalarType::ComplexHalf => ScalarType::Half,
            ScalarType::BComplex32 => ScalarType::BFloat16,
            ScalarType::ComplexFloat => ScalarType::Float,
            ScalarType::ComplexDouble => ScalarType::Double,
            other => other,
        }
    }

    /// c10 `toComplexType`: the complex type whose components have this type
    /// (`Float` → `ComplexFloat`); complex types map to themselves; `None`
    /// for everything else (c10 throws `Unknown Complex ScalarType`).
    ///
    /// ```
    /// use c10_core::scalar_type::ScalarType;
    /// assert_eq!(ScalarType::Half.to_complex_type(), Some(ScalarType::ComplexHalf));
    /// assert_eq!(ScalarType::ComplexFloat.to_complex_type(), Some(ScalarType::ComplexFloat));
    /// assert_eq!(ScalarType::Long.to_complex_type(), None);
    /// ```
    pub const fn to_complex_type(self) -> Option<ScalarType> {
        match self {
            ScalarType::BFloat16 | ScalarType::BComplex32 => Some(ScalarType::BComplex32),
            ScalarType::Half | ScalarType::ComplexHalf => Some(ScalarType::ComplexHalf),
            ScalarType::Float | ScalarType::ComplexFloat => Some(ScalarType::ComplexFloat),
            ScalarType::Double | ScalarType::ComplexDouble => Some(ScalarType::ComplexDouble),
            _ => None,
        }
    }
}

/// Prints the Python form, e.g. `torch.float32`.
impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "torch.{}", self.torch_name())
    }
}

impl FromStr for ScalarType {
    type Err = ScalarTypeError;

    /// Same as [`ScalarType::from_torch_name`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ScalarType::from_torch_name(s)
    }
}

impl TryFrom<i8> for ScalarType {
    type Error = ScalarTypeError;

    fn try_from(v: i8) -> Result<Self, Self::Error> {
        ScalarType::from_i8(v).ok_or(ScalarTypeError::InvalidValue(v))
    }
}

impl From<ScalarType> for i8 {
    fn from(t: ScalarType) -> i8 {
        t as i8
    }
}

// ---------------------------------------------------------------------------
// TypeMeta
// ---------------------------------------------------------------------------

/// The dtype handle stored in a tensor (caffe2 `TypeMeta`): a 2-byte index.
///
/// For scalar types the index equals the `ScalarType` discriminant, so
/// conversion both ways is free. c10 can also register arbitrary C++ types at
/// indices `>= NUM_SCALAR_TYPES`; this port does not support that, so every
/// `TypeMeta` corresponds to a `ScalarType` (the conversion still returns an
/// `Option` to keep that door open). The default is `Undefined`, an
/// "uninitialized dtype" with item size 0.
///
/// ```
/// use c10_core::scalar_type::{ScalarType, TypeMeta};
///
/// let meta = TypeMeta::from_scalar_type(ScalarType::Double);
/// assert_eq!(meta.index(), 7);
/// assert_eq!(meta.itemsize(), 8);
/// assert_eq!(meta.to_scalar_type(), Some(ScalarType::Double));
/// assert_eq!(TypeMeta::default().to_scalar_type(), Some(ScalarType::Undefined));
/// assert_eq!(std::mem::size_of::<TypeMeta>(), 2);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct TypeMeta {
    index: u16,
}

const _: () = assert!(std::mem::size_of::<TypeMeta>() == 2);

impl TypeMeta {
    /// The `TypeMeta` of a scalar type.
    ///
    /// ```
    /// use c10_core::scalar_type::{ScalarType, TypeMeta};
    /// let meta = TypeMeta::from_scalar_type(ScalarType::Half);
    /// assert_eq!(meta, ScalarType::Half);
    /// assert_eq!(meta.itemsize(), 2);
    /// ```
    pub const fn from_scalar_type(t: ScalarType) -> TypeMeta {
        // Discriminants are 0..=47, so the i8 -> u16 cast is lossless.
        TypeMeta {
            index: t as u8 as u16,
        }
    }

    /// The `TypeMeta` of an [`Element`] type, e.g. `TypeMeta::of::<f32>()`.
    ///
    /// ```
    /// use c10_core::scalar_type::{ScalarType, TypeMeta};
    /// assert_eq!(TypeMeta::of::<f32>(), TypeMeta::from_scalar_type(ScalarType::Float));
    /// assert_eq!(TypeMeta::of::<bool>().to_string(), "torch.bool");
    /// ```
    pub const fn of<T: Element>() -> TypeMeta {
        TypeMeta::from_scalar_type(T::SCALAR_TYPE)
    }

    /// The raw 16-bit index.
    ///
    /// ```
    /// use c10_core::scalar_type::{ScalarType, TypeMeta};
    /// assert_eq!(TypeMeta::of::<i64>().index(), ScalarType::Long as u16);
    /// assert_eq!(TypeMeta::from(ScalarType::Byte).index(), 0);
    /// ```
    pub const fn index(self) -> u16 {
        self.index
    }

    /// The scalar type, or `None` for an index that is not a scalar type
    /// (impossible to construct in this port; c10 throws there).
    ///
    /// ```
    /// use c10_core::scalar_type::{ScalarType, TypeMeta};
    /// assert_eq!(TypeMeta::of::<u8>().to_scalar_type(), Some(ScalarType::Byte));
    /// ```
    pub const fn to_scalar_type(self) -> Option<ScalarType> {
        if self.index < NUM_SCALAR_TYPES as u16 {
            ScalarType::from_i8(self.index as i8)
        } else {
            None
        }
    }

    /// Size of one element in bytes (0 for `Undefined`).
    ///
    /// ```
    /// use c10_core::scalar_type::TypeMeta;
    /// assert_eq!(TypeMeta::of::<f64>().itemsize(), 8);
    /// assert_eq!(TypeMeta::default().itemsize(), 0); // Undefined
    /// ```
    pub const fn itemsize(self) -> usize {
        match self.to_scalar_type() {
            Some(t) => t.itemsize(),
            None => 0,
        }
    }

    /// Whether this is a scalar type (always true in this port).
    ///
    /// ```
    /// use c10_core::scalar_type::TypeMeta;
    /// assert!(TypeMeta::of::<i16>().is_scalar_type());
    /// assert!(TypeMeta::default().is_scalar_type()); // even Undefined
    /// ```
    pub const fn is_scalar_type(self) -> bool {
        self.to_scalar_type().is_some()
    }

    /// The type's name: `"nullptr (uninitialized)"` for `Undefined` (as c10
    /// prints an uninitialized `TypeMeta`), otherwise the `ScalarType`'s C++
    /// name (`"Float"`). c10 itself reports the demangled C++ type name
    /// (`"float"`, `"c10::Half"`), which is compiler dependent, so the
    /// portable enumerator name is used instead.
    ///
    /// ```
    /// use c10_core::scalar_type::TypeMeta;
    /// assert_eq!(TypeMeta::of::<f32>().name(), "Float");
    /// assert_eq!(TypeMeta::default().name(), "nullptr (uninitialized)");
    /// ```
    pub const fn name(self) -> &'static str {
        match self.to_scalar_type() {
            Some(ScalarType::Undefined) | None => "nullptr (uninitialized)",
            Some(t) => t.name(),
        }
    }
}

impl Default for TypeMeta {
    fn default() -> TypeMeta {
        TypeMeta::from_scalar_type(ScalarType::Undefined)
    }
}

impl From<ScalarType> for TypeMeta {
    fn from(t: ScalarType) -> TypeMeta {
        TypeMeta::from_scalar_type(t)
    }
}

impl PartialEq<ScalarType> for TypeMeta {
    fn eq(&self, other: &ScalarType) -> bool {
        *self == TypeMeta::from_scalar_type(*other)
    }
}

impl fmt::Debug for TypeMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TypeMeta({})", self.name())
    }
}

/// Prints the Python form of the dtype (`torch.float32`).
impl fmt::Display for TypeMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_scalar_type() {
            Some(t) => fmt::Display::fmt(&t, f),
            None => f.write_str(self.name()),
        }
    }
}

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

// ---------------------------------------------------------------------------
// Minifloat conversions (bit-exact with c10's float8 / bfloat16 converters)
// ---------------------------------------------------------------------------

/// Exactly `2^e` for `-1074 <= e <= 1023` (`powi` has unspecified precision,
/// and Miri exercises that; these conversions must be bit-exact).
fn exp2i(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        // Subnormal: a single mantissa bit.
        f64::from_bits(1u64 << (e + 1074).clamp(0, 51))
    }
}

/// Decodes a finite sign/exponent/mantissa byte with `man_bits` mantissa bits
/// and exponent bias `bias` (exponent field 0 = subnormal).
fn decode_minifloat(bits: u8, man_bits: u32, bias: i32) -> f64 {
    let magnitude_bits = bits & 0x7F;
    let exponent = i32::from(magnitude_bits >> man_bits);
    let mantissa = f64::from(magnitude_bits & ((1u8 << man_bits) - 1));
    let scale = f64::from(1u32 << man_bits);
    let magnitude = if exponent == 0 {
        mantissa / scale * exp2i(1 - bias)
    } else {
        (1.0 + mantissa / scale) * exp2i(exponent - bias)
    };
    if bits & 0x80 != 0 {
        -magnitude
    } else {
        magnitude
    }
}

/// Rounds a finite, non-negative `a` to the nearest value of a minifloat with
/// `man_bits` mantissa bits and bias `bias` (ties to even, subnormals
/// included) and returns its magnitude code `exponent_field << man_bits |
/// mantissa` without any upper bound: the caller decides what an overflowing
/// code becomes (infinity, NaN), as each c10 converter does differently.
fn round_minifloat_magnitude(a: f64, man_bits: u32, bias: i32) -> u32 {
    if a == 0.0 {
        return 0;
    }
    let min_exponent = 1 - bias;
    // `a` comes from an f32, so it is a normal f64 and its unbiased exponent
    // is floor(log2(a)).
    let exponent = ((a.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    let effective = exponent.max(min_exponent);
    // Dividing by a power of two is exact, so the only rounding is here.
    let steps = (a / exp2i(effective - man_bits as i32)).round_ties_even();
    // `steps` is in [2^man_bits, 2^(man_bits+1)] for normal results (the top
    // value is the carry into the next binade) or below 2^man_bits for
    // subnormals; adding it to the binade offset yields the code either way.
    // Saturating so that even an (unexpected) infinite input cannot
    // overflow; callers treat huge codes as overflow anyway.
    ((effective - min_exponent) as u32)
        .saturating_mul(1u32 << man_bits)
        .saturating_add(steps as u32)
}

fn f32_to_e5m2(x: f32) -> u8 {
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    if x.is_nan() {
        return sign | 0x7F;
    }
    if x.is_infinite() {
        return sign | 0x7C;
    }
    let code = round_minifloat_magnitude(f64::from(x.abs()), 2, 15);
    // Anything that rounds past the largest finite value (57344) is infinity.
    sign | code.min(0x7C) as u8
}

fn f32_to_e4m3fn(x: f32) -> u8 {
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    if !x.is_finite() {
        return sign | 0x7F;
    }
    let code = round_minifloat_magnitude(f64::from(x.abs()), 3, 7);
    // No infinities: overflow (|x| rounding to >= 480) becomes NaN, keeping
    // the sign as c10 does.
    sign | code.min(0x7F) as u8
}

fn f32_to_fnuz(x: f32, man_bits: u32, bias: i32) -> u8 {
    if !x.is_finite() {
        return 0x80;
    }
    let code = round_minifloat_magnitude(f64::from(x.abs()), man_bits, bias);
    if code >= 0x80 {
        // Overflow lands on the single NaN encoding.
        0x80
    } else if code == 0 {
        // No negative zero in fnuz formats.
        0
    } else if x.is_sign_negative() {
        0x80 | code as u8
    } else {
        code as u8
    }
}

/// c10 `fp8e8m0fnu_from_fp32_value`: keeps the f32 exponent, rounding to
/// nearest-even on the mantissa (the implicit bit acts as the LSB).
fn f32_to_e8m0fnu(x: f32) -> u8 {
    let bits = x.to_bits();
    let exponent = ((bits >> 23) & 0xFF) as u8;
    if exponent == 0xFF {
        return 0xFF;
    }
    let guard = bits & 0x40_0000 != 0;
    let round_or_sticky = bits & 0x3F_FFFF != 0;
    let lsb = exponent > 0;
    if guard && (round_or_sticky || lsb) {
        // exponent < 0xFF here, so this cannot overflow (0xFE + 1 = NaN, as
        // in c10).
        exponent + 1
    } else {
        exponent
    }
}

fn e8m0fnu_to_f64(bits: u8) -> f64 {
    if bits == 0xFF {
        f64::NAN
    } else {
        exp2i(i32::from(bits) - 127)
    }
}

/// c10 `round_to_nearest_even(float)` used by `BFloat16(float)`.
fn f32_to_bf16(x: f32) -> bf16 {
    if x.is_nan() {
        return bf16::from_bits(0x7FC0);
    }
    let bits = x.to_bits();
    let rounding_bias = ((bits >> 16) & 1) + 0x7FFF;
    bf16::from_bits((bits.wrapping_add(rounding_bias) >> 16) as u16)
}

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
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn to_i64(self) -> i64 {
        i64::from(self)
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
}

// SAFETY: repr(C) pair of f16 = 4 bytes (ComplexHalf's itemsize); align(4)
// equals the size, so there is no padding; any bits are valid f16s.
unsafe impl Element for Complex32 {
    const SCALAR_TYPE: ScalarType = ScalarType::ComplexHalf;
    fn to_f64(self) -> f64 {
        self.re.to_f64()
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
}

// SAFETY: repr(C) pair of bf16 = 4 bytes (BComplex32's itemsize); align(4)
// equals the size, so there is no padding; any bits are valid bf16s.
unsafe impl Element for BComplex32 {
    const SCALAR_TYPE: ScalarType = ScalarType::BComplex32;
    fn to_f64(self) -> f64 {
        self.re.to_f64()
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
}

// SAFETY: repr(C) pair of f32 = 8 bytes (ComplexFloat's itemsize); align(8)
// equals the size, so there is no padding; any bits are valid f32s.
unsafe impl Element for Complex64 {
    const SCALAR_TYPE: ScalarType = ScalarType::ComplexFloat;
    fn to_f64(self) -> f64 {
        f64::from(self.re)
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
}

// SAFETY: repr(C) pair of f64 = 16 bytes (ComplexDouble's itemsize);
// align(16) equals the size, so there is no padding; any bits are valid f64s.
unsafe impl Element for Complex128 {
    const SCALAR_TYPE: ScalarType = ScalarType::ComplexDouble;
    fn to_f64(self) -> f64 {
        self.re
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

macro_rules! seal_elements {
    ($($ty:ty),* $(,)?) => {$(impl sealed::Sealed for $ty {})*};
}
seal_elements!(
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
    f16,
    bf16,
    Complex32,
    BComplex32,
    Complex64,
    Complex128,
    Float8E5M2,
    Float8E4M3fn,
    Float8E5M2fnuz,
    Float8E4M3fnuz,
    Float8E8M0fnu,
);

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of};
    use ScalarType as S;

    #[test]
    fn numbering_matches_c10() {
        let expected = [
            (S::Byte, 0),
            (S::Char, 1),
            (S::Short, 2),
            (S::Int, 3),
            (S::Long, 4),
            (S::Half, 5),
            (S::Float, 6),
            (S::Double, 7),
            (S::ComplexHalf, 8),
            (S::ComplexFloat, 9),
            (S::ComplexDouble, 10),
            (S::Bool, 11),
            (S::QInt8, 12),
            (S::QUInt8, 13),
            (S::QInt32, 14),
            (S::BFloat16, 15),
            (S::QUInt4x2, 16),
            (S::QUInt2x4, 17),
            (S::Bits1x8, 18),
            (S::Bits2x4, 19),
            (S::Bits4x2, 20),
            (S::Bits8, 21),
            (S::Bits16, 22),
            (S::Float8_e5m2, 23),
            (S::Float8_e4m3fn, 24),
            (S::Float8_e5m2fnuz, 25),
            (S::Float8_e4m3fnuz, 26),
            (S::UInt16, 27),
            (S::UInt32, 28),
            (S::UInt64, 29),
            (S::UInt1, 30),
            (S::UInt7, 36),
            (S::Int1, 37),
            (S::Int7, 43),
            (S::Float8_e8m0fnu, 44),
            (S::Float4_e2m1fn_x2, 45),
            (S::BComplex32, 46),
            (S::Undefined, 47),
        ];
        for (t, v) in expected {
            assert_eq!(t as i8, v, "{t:?}");
        }
        assert_eq!(NUM_SCALAR_TYPES, 48);
        for (i, t) in ScalarType::ALL.iter().enumerate() {
            assert_eq!(*t as usize, i);
            assert_eq!(ScalarType::try_from(i as i8), Ok(*t));
            assert_eq!(i8::from(*t), i as i8);
        }
        assert_eq!(
            ScalarType::try_from(48),
            Err(ScalarTypeError::InvalidValue(48))
        );
        assert_eq!(
            ScalarType::try_from(-1),
            Err(ScalarTypeError::InvalidValue(-1))
        );
        assert_eq!(
            ScalarType::try_from(i8::MIN),
            Err(ScalarTypeError::InvalidValue(i8::MIN))
        );
        assert_eq!(ScalarType::default(), S::Undefined);
    }

    #[test]
    fn itemsizes_match_checklist_59() {
        let ones = [
            S::Byte,
            S::Char,
            S::Bool,
            S::QInt8,
            S::QUInt8,
            S::QUInt4x2,
            S::QUInt2x4,
            S::Bits1x8,
            S::Bits2x4,
            S::Bits4x2,
            S::Bits8,
            S::Float8_e5m2,
            S::Float8_e4m3fn,
            S::Float8_e5m2fnuz,
            S::Float8_e4m3fnuz,
            S::Float8_e8m0fnu,
            S::Float4_e2m1fn_x2,
        ];
        for t in ones {
            assert_eq!(t.itemsize(), 1, "{t:?}");
        }
        for v in 30..=43 {
            assert_eq!(ScalarType::ALL[v].itemsize(), 1);
        }
        for t in [S::Short, S::Half, S::BFloat16, S::UInt16, S::Bits16] {
            assert_eq!(t.itemsize(), 2, "{t:?}");
        }
        for t in [
            S::Int,
            S::Float,
            S::ComplexHalf,
            S::QInt32,
            S::UInt32,
            S::BComplex32,
        ] {
            assert_eq!(t.itemsize(), 4, "{t:?}");
        }
        for t in [S::Long, S::Double, S::ComplexFloat, S::UInt64] {
            assert_eq!(t.itemsize(), 8, "{t:?}");
        }
        assert_eq!(S::ComplexDouble.itemsize(), 16);
        assert_eq!(S::Undefined.itemsize(), 0);
        assert_eq!(S::QUInt4x2.elements_per_byte(), 2);
        assert_eq!(S::QUInt2x4.elements_per_byte(), 4);
        assert_eq!(S::Byte.elements_per_byte(), 1);
        assert_eq!(S::Float4_e2m1fn_x2.elements_per_byte(), 1);
    }

    #[test]
    fn names() {
        assert_eq!(S::Float.name(), "Float");
        assert_eq!(S::Float8_e4m3fn.name(), "Float8_e4m3fn");
        assert_eq!(S::Undefined.name(), "UNKNOWN_SCALAR");
        let torch = [
            (S::Byte, "uint8"),
            (S::Char, "int8"),
            (S::Short, "int16"),
            (S::Int, "int32"),
            (S::Long, "int64"),
            (S::Half, "float16"),
            (S::Float, "float32"),
            (S::Double, "float64"),
            (S::ComplexHalf, "complex32"),
            (S::ComplexFloat, "complex64"),
            (S::ComplexDouble, "complex128"),
            (S::Bool, "bool"),
            (S::BFloat16, "bfloat16"),
            (S::QUInt4x2, "quint4x2"),
            (S::Float8_e4m3fn, "float8_e4m3fn"),
            (S::Float8_e8m0fnu, "float8_e8m0fnu"),
            (S::Float4_e2m1fn_x2, "float4_e2m1fn_x2"),
            (S::UInt16, "uint16"),
            (S::UInt3, "uint3"),
            (S::Int5, "int5"),
            (S::Bits16, "bits16"),
            (S::BComplex32, "bcomplex32"),
        ];
        for (t, name) in torch {
            assert_eq!(t.torch_name(), name);
            assert_eq!(t.to_string(), format!("torch.{name}"));
        }
        // Every defined type round-trips through both name forms.
        for t in ScalarType::ALL
            .iter()
            .copied()
            .filter(|t| *t != S::Undefined)
        {
            assert_eq!(ScalarType::from_torch_name(t.torch_name()), Ok(t));
            assert_eq!(t.to_string().parse::<ScalarType>(), Ok(t));
        }
        let aliases = [
            ("float", S::Float),
            ("double", S::Double),
            ("half", S::Half),
            ("long", S::Long),
            ("int", S::Int),
            ("short", S::Short),
            ("cfloat", S::ComplexFloat),
            ("cdouble", S::ComplexDouble),
            ("chalf", S::ComplexHalf),
            ("bit", S::UInt1),
        ];
        for (alias, t) in aliases {
            assert_eq!(ScalarType::from_torch_name(alias), Ok(t));
        }
        for bad in [
            "undefined",
            "Float",
            "float31",
            "",
            "torch.",
            "byte",
            "char",
        ] {
            assert_eq!(
                ScalarType::from_torch_name(bad),
                Err(ScalarTypeError::UnknownName(bad.to_owned()))
            );
        }
        assert_eq!(
            ScalarTypeError::UnknownName("x".into()).to_string(),
            "unknown dtype name 'x'"
        );
    }

    #[test]
    fn predicates() {
        let floating: Vec<_> = ScalarType::ALL
            .iter()
            .copied()
            .filter(|t| t.is_floating_point())
            .collect();
        assert_eq!(
            floating,
            [
                S::Half,
                S::Float,
                S::Double,
                S::BFloat16,
                S::Float8_e5m2,
                S::Float8_e4m3fn,
                S::Float8_e5m2fnuz,
                S::Float8_e4m3fnuz,
                S::Float8_e8m0fnu,
                S::Float4_e2m1fn_x2
            ]
        );
        let complex: Vec<_> = ScalarType::ALL
            .iter()
            .copied()
            .filter(|t| t.is_complex())
            .collect();
        assert_eq!(
            complex,
            [
                S::ComplexHalf,
                S::ComplexFloat,
                S::ComplexDouble,
                S::BComplex32
            ]
        );
        let integral: Vec<_> = ScalarType::ALL
            .iter()
            .copied()
            .filter(|t| t.is_integral(false))
            .collect();
        assert_eq!(
            integral,
            [
                S::Byte,
                S::Char,
                S::Short,
                S::Int,
                S::Long,
                S::UInt16,
                S::UInt32,
                S::UInt64
            ]
        );
        assert!(S::Bool.is_integral(true));
        assert!(!S::Bool.is_integral(false));
        assert_eq!(
            ScalarType::ALL.iter().filter(|t| t.is_quantized()).count(),
            5
        );
        assert_eq!(ScalarType::ALL.iter().filter(|t| t.is_float8()).count(), 5);
        assert_eq!(ScalarType::ALL.iter().filter(|t| t.is_bits()).count(), 5);
        assert!(!S::Float4_e2m1fn_x2.is_float8());

        assert_eq!(S::Char.is_signed(), Ok(true));
        assert_eq!(S::Byte.is_signed(), Ok(false));
        assert_eq!(S::Bool.is_signed(), Ok(false));
        assert_eq!(S::Half.is_signed(), Ok(true));
        assert_eq!(S::BFloat16.is_signed(), Ok(true));
        assert_eq!(S::UInt64.is_signed(), Ok(false));
        assert_eq!(S::Float8_e8m0fnu.is_signed(), Ok(false));
        assert_eq!(S::Float8_e4m3fn.is_signed(), Ok(true));
        assert_eq!(S::ComplexFloat.is_signed(), Ok(false));
        assert_eq!(S::Int4.is_signed(), Ok(true));
        assert_eq!(S::UInt4.is_signed(), Ok(false));
        assert_eq!(
            S::QInt8.is_signed(),
            Err(ScalarTypeError::SignednessOfQuantizedType)
        );
        assert_eq!(
            S::Bits8.is_signed(),
            Err(ScalarTypeError::SignednessOfBitsType)
        );
        let undefined = S::Undefined.is_signed();
        assert_eq!(
            undefined.map_err(|e| e.to_string()),
            Err("Unknown ScalarType UNKNOWN_SCALAR".to_owned())
        );

        assert_eq!(S::ComplexFloat.to_real_value_type(), S::Float);
        assert_eq!(S::BComplex32.to_real_value_type(), S::BFloat16);
        assert_eq!(S::Long.to_real_value_type(), S::Long);
        assert_eq!(S::Half.to_complex_type(), Some(S::ComplexHalf));
        assert_eq!(S::BFloat16.to_complex_type(), Some(S::BComplex32));
        assert_eq!(S::ComplexDouble.to_complex_type(), Some(S::ComplexDouble));
        assert_eq!(S::Long.to_complex_type(), None);
    }

    #[test]
    fn type_meta() {
        assert_eq!(size_of::<TypeMeta>(), 2);
        let d = TypeMeta::default();
        assert_eq!(d.to_scalar_type(), Some(S::Undefined));
        assert_eq!(d.itemsize(), 0);
        assert_eq!(d.index(), 47);
        assert_eq!(d.name(), "nullptr (uninitialized)");
        for t in ScalarType::ALL {
            let m = TypeMeta::from(t);
            assert_eq!(m.index(), t as u16);
            assert_eq!(m.to_scalar_type(), Some(t));
            assert_eq!(m.itemsize(), t.itemsize());
            assert!(m.is_scalar_type());
            assert_eq!(m, t);
        }
        assert_eq!(TypeMeta::of::<f32>(), TypeMeta::from_scalar_type(S::Float));
        assert_ne!(TypeMeta::of::<f32>(), TypeMeta::of::<f64>());
        assert_eq!(TypeMeta::of::<i64>().name(), "Long");
        assert_eq!(format!("{:?}", TypeMeta::of::<i64>()), "TypeMeta(Long)");
        assert_eq!(TypeMeta::of::<bool>().to_string(), "torch.bool");
    }

    fn check_layout<T: Element>() {
        assert_eq!(
            size_of::<T>(),
            T::SCALAR_TYPE.itemsize(),
            "{:?}",
            T::SCALAR_TYPE
        );
        assert!(align_of::<T>() <= size_of::<T>());
    }

    #[test]
    fn element_layouts() {
        check_layout::<u8>();
        check_layout::<i8>();
        check_layout::<i16>();
        check_layout::<i32>();
        check_layout::<i64>();
        check_layout::<u16>();
        check_layout::<u32>();
        check_layout::<u64>();
        check_layout::<f32>();
        check_layout::<f64>();
        check_layout::<bool>();
        check_layout::<f16>();
        check_layout::<bf16>();
        check_layout::<Complex32>();
        check_layout::<BComplex32>();
        check_layout::<Complex64>();
        check_layout::<Complex128>();
        check_layout::<Float8E5M2>();
        check_layout::<Float8E4M3fn>();
        check_layout::<Float8E5M2fnuz>();
        check_layout::<Float8E4M3fnuz>();
        check_layout::<Float8E8M0fnu>();
        assert_eq!(align_of::<Complex128>(), 16);
        assert_eq!(align_of::<Complex64>(), 8);
        assert_eq!(align_of::<Complex32>(), 4);
        const { assert!(<f32 as Element>::ALL_BIT_PATTERNS_VALID) };
        const { assert!(!<bool as Element>::ALL_BIT_PATTERNS_VALID) };
    }

    #[test]
    fn integer_conversions() {
        assert_eq!(u8::from_f64(-1.0), 0);
        assert_eq!(u8::from_f64(255.9), 255);
        assert_eq!(i8::from_f64(-300.0), -128);
        assert_eq!(i32::from_f64(f64::NAN), 0);
        assert_eq!(i64::from_f64(-2.7), -2);
        assert_eq!(u64::from_f64(1e30), u64::MAX);
        assert_eq!(u64::MAX.to_i64(), -1);
        assert_eq!(u16::MAX.to_f64(), 65535.0);
        assert_eq!((-5i16).to_i64(), -5);
        assert!(bool::from_f64(f64::NAN));
        assert!(!bool::from_f64(0.0));
        assert!(!bool::from_f64(-0.0));
        assert_eq!(true.to_f64(), 1.0);
        assert_eq!(true.to_i64(), 1);
        assert_eq!(f64::from_f64(0.1), 0.1);
        assert_eq!(f32::from_f64(0.1).to_f64(), f64::from(0.1f32));
        assert_eq!(f32::from_f64(1e40), f32::INFINITY);
        assert_eq!((-1.9f32).to_i64(), -1);
        assert_eq!(f64::NAN.to_i64(), 0);
        // from_i64: modular for integers, exact beyond 2^53.
        assert_eq!(u8::from_i64(256 + 7), 7);
        assert_eq!(i8::from_i64(-129), 127);
        assert_eq!(u64::from_i64(-1), u64::MAX);
        assert_eq!(i64::from_i64((1 << 60) + 1), (1 << 60) + 1);
        assert_eq!(f64::from_i64((1 << 53) + 1), 9007199254740992.0);
        assert_eq!(f32::from_i64(3), 3.0);
        assert!(bool::from_i64(-5));
        assert!(!bool::from_i64(0));
        assert_eq!(f16::from_i64(70000).to_f64(), f64::INFINITY);
        assert_eq!(<bf16 as Element>::from_i64(257).to_f64(), 256.0);
        assert_eq!(Complex128::from_i64(-4), Complex128::new(-4.0, 0.0));
        assert_eq!(Complex64::from_i64(2).re, 2.0);
        assert_eq!(Complex32::from_i64(2).re.to_f64(), 2.0);
        assert_eq!(BComplex32::from_i64(2).im.to_f64(), 0.0);
        assert_eq!(Float8E4M3fn::from_i64(1000).0, 0x7F);
        assert_eq!(Float8E8M0fnu::from_i64(8).0, 130);
    }

    #[test]
    fn half_and_complex_conversions() {
        assert_eq!(f16::from_f64(65504.0).to_f64(), 65504.0);
        assert!(f16::from_f64(1e6).to_f64().is_infinite());
        assert_eq!(f16::from_f64(2.5).to_i64(), 2);
        // BFloat16 rounds to nearest even from f32 bits, NaN is 0x7FC0.
        assert_eq!(bf16::from_f64(1.0).to_bits(), 0x3F80);
        assert_eq!(<bf16 as Element>::from_f64(f64::NAN).to_bits(), 0x7FC0);
        // 1 + 2^-8 is a tie between 1.0 and 1 + 2^-7: rounds to even (1.0).
        assert_eq!(
            <bf16 as Element>::from_f64(1.0 + exp2i(-8)).to_bits(),
            0x3F80
        );
        assert_eq!(
            <bf16 as Element>::from_f64(1.0 + 3.0 * exp2i(-8)).to_bits(),
            0x3F82
        );
        let z = Complex128::from_f64(-3.5);
        assert_eq!(z, Complex128::new(-3.5, 0.0));
        assert_eq!(z.to_i64(), -3);
        assert_eq!(Complex64::new(2.0, 9.0).to_f64(), 2.0);
        assert_eq!(Complex32::from_f64(1.5).re.to_f64(), 1.5);
        assert_eq!(BComplex32::from_f64(-2.0).to_f64(), -2.0);
    }

    /// Every byte decodes to a value that encodes back to the same byte
    /// (NaNs to the canonical NaN encoding).
    fn roundtrip_all_bytes<T: Element + PartialEq>(
        to_bits: fn(T) -> u8,
        from_bits: fn(u8) -> T,
        nan: fn(u8) -> u8,
    ) {
        for b in 0..=255u8 {
            let v = from_bits(b).to_f64();
            let back = to_bits(T::from_f64(v));
            if v.is_nan() {
                // Rust leaves the sign of a NaN produced by a float
                // conversion unspecified (hardware keeps it; Miri flips it at
                // random), so under Miri only NaN-ness is checked.
                let expected = nan(b);
                if cfg!(miri) {
                    assert!(
                        from_bits(back).to_f64().is_nan(),
                        "{:?} byte {b:#04x}",
                        T::SCALAR_TYPE
                    );
                    let _ = expected;
                } else {
                    assert_eq!(back, expected, "{:?} byte {b:#04x}", T::SCALAR_TYPE);
                }
            } else {
                assert_eq!(back, b, "{:?} byte {b:#04x} value {v}", T::SCALAR_TYPE);
            }
        }
    }

    #[test]
    fn float8_roundtrip() {
        roundtrip_all_bytes::<Float8E5M2>(Float8E5M2::to_bits, Float8E5M2, |b| (b & 0x80) | 0x7F);
        roundtrip_all_bytes::<Float8E4M3fn>(Float8E4M3fn::to_bits, Float8E4M3fn, |b| b);
        // The fnuz "negative zero" byte is their NaN.
        roundtrip_all_bytes::<Float8E5M2fnuz>(Float8E5M2fnuz::to_bits, Float8E5M2fnuz, |_| 0x80);
        roundtrip_all_bytes::<Float8E4M3fnuz>(Float8E4M3fnuz::to_bits, Float8E4M3fnuz, |_| 0x80);
        roundtrip_all_bytes::<Float8E8M0fnu>(Float8E8M0fnu::to_bits, Float8E8M0fnu, |_| 0xFF);
    }

    /// Independent ports of c10's bit-trick float8 encoders, used to
    /// cross-check the generic rounding in this module.
    mod c10_reference {
        fn f(bits: u32) -> f32 {
            f32::from_bits(bits)
        }

        /// (fp8_max, denorm_mask, min_normal, mantissa shift, exponent bias)
        fn encode_ocp(
            x: f32,
            max_bits: u32,
            denorm: u32,
            min_normal: u32,
            shift: u32,
            bias: u32,
        ) -> u32 {
            let mut b = x.to_bits();
            let sign = b & 0x8000_0000;
            b ^= sign;
            if b >= max_bits {
                u32::MAX // caller decides
            } else if b < min_normal {
                (f(b) + f(denorm)).to_bits().wrapping_sub(denorm)
            } else {
                let odd = (b >> shift) & 1;
                let b = b
                    .wrapping_add((bias.wrapping_sub(127)) << 23)
                    .wrapping_add((1 << (shift - 1)) - 1)
                    .wrapping_add(odd);
                b >> shift
            }
        }

        pub fn e4m3fn(x: f32) -> u8 {
            let sign = (x.to_bits() >> 24) as u8 & 0x80;
            let r = encode_ocp(x, 1087 << 20, 141 << 23, 121 << 23, 20, 7);
            (if r == u32::MAX { 0x7F } else { r as u8 }) | sign
        }

        pub fn e5m2(x: f32) -> u8 {
            let sign = (x.to_bits() >> 24) as u8 & 0x80;
            let abs = x.to_bits() & 0x7FFF_FFFF;
            let r = encode_ocp(x, 143 << 23, 134 << 23, 113 << 23, 21, 15);
            let r = if r == u32::MAX {
                if abs > 255 << 23 {
                    0x7F
                } else {
                    0x7C
                }
            } else {
                r as u8
            };
            r | sign
        }

        fn fnuz(x: f32, max_bits: u32, denorm: u32, min_normal: u32, shift: u32, bias: u32) -> u8 {
            let sign = (x.to_bits() >> 24) as u8 & 0x80;
            let abs = x.to_bits() & 0x7FFF_FFFF;
            let r = encode_ocp(x, max_bits, denorm, min_normal, shift, bias);
            if r == u32::MAX {
                return 0x80;
            }
            if abs < min_normal && r == 0 {
                return 0;
            }
            r as u8 | sign
        }

        pub fn e4m3fnuz(x: f32) -> u8 {
            fnuz(x, 0x87 << 23, 140 << 23, 0x78 << 23, 20, 8)
        }

        pub fn e5m2fnuz(x: f32) -> u8 {
            fnuz(x, 0x8F << 23, 0x85 << 23, 0x70 << 23, 21, 16)
        }
    }

    #[test]
    fn float8_encoders_match_c10_bit_tricks() {
        // A stride coprime to 2 visits every exponent and many mantissas;
        // then every f32 within 64 ulps of each float8 value and midpoint.
        // Under Miri (an interpreter) a far sparser sweep keeps this quick.
        let (stride, per_byte) = if cfg!(miri) {
            (u32::MAX / 64, 2u32)
        } else {
            (2053, 128)
        };
        let mut inputs: Vec<f32> = (0..=u32::MAX / stride)
            .map(|i| f32::from_bits(i.wrapping_mul(stride)))
            .collect();
        for b in (0..=255u8).step_by(if cfg!(miri) { 37 } else { 1 }) {
            for center in [
                Float8E4M3fn(b).to_f64(),
                Float8E5M2(b).to_f64(),
                Float8E4M3fnuz(b).to_f64(),
                Float8E5M2fnuz(b).to_f64(),
            ] {
                for c in [
                    center,
                    center * (1.0 + 1.0 / 16.0),
                    center * (1.0 + 1.0 / 8.0),
                ] {
                    let base = (c as f32).to_bits();
                    for d in 0..per_byte {
                        inputs.push(f32::from_bits(
                            base.wrapping_add(d).wrapping_sub(per_byte / 2),
                        ));
                    }
                }
            }
        }
        for x in inputs {
            if x.is_nan() {
                continue;
            }
            let v = f64::from(x);
            assert_eq!(
                Float8E4M3fn::from_f64(v).0,
                c10_reference::e4m3fn(x),
                "e4m3fn {x:e}"
            );
            assert_eq!(
                Float8E5M2::from_f64(v).0,
                c10_reference::e5m2(x),
                "e5m2 {x:e}"
            );
            assert_eq!(
                Float8E4M3fnuz::from_f64(v).0,
                c10_reference::e4m3fnuz(x),
                "e4m3fnuz {x:e}"
            );
            assert_eq!(
                Float8E5M2fnuz::from_f64(v).0,
                c10_reference::e5m2fnuz(x),
                "e5m2fnuz {x:e}"
            );
        }
    }

    #[test]
    fn float8_known_values() {
        // e4m3fn: max 448, overflow to NaN with sign, subnormal 2^-9.
        assert_eq!(Float8E4M3fn(0x7E).to_f64(), 448.0);
        assert_eq!(Float8E4M3fn::from_f64(464.0).0, 0x7E); // tie -> even
        assert_eq!(Float8E4M3fn::from_f64(470.0).0, 0x7F);
        assert_eq!(Float8E4M3fn::from_f64(-1e9).0, 0xFF);
        assert_eq!(Float8E4M3fn::from_f64(f64::INFINITY).0, 0x7F);
        assert_eq!(Float8E4M3fn(0x01).to_f64(), exp2i(-9));
        assert_eq!(Float8E4M3fn::from_f64(exp2i(-10)).0, 0x00); // tie -> even 0
        assert_eq!(Float8E4M3fn::from_f64(-0.0).0, 0x80);
        assert_eq!(Float8E4M3fn::from_f64(1.0).0, 0x38);
        // e5m2: infinities.
        assert_eq!(Float8E5M2(0x7B).to_f64(), 57344.0);
        assert_eq!(Float8E5M2::from_f64(61440.0).0, 0x7C); // tie -> even = inf
        assert_eq!(Float8E5M2::from_f64(1e9).0, 0x7C);
        assert_eq!(Float8E5M2::from_f64(f64::NEG_INFINITY).0, 0xFC);
        // The sign of a converted NaN is unspecified in Rust (Miri randomises it).
        assert_eq!(Float8E5M2::from_f64(f64::NAN).0 & 0x7F, 0x7F);
        assert!(Float8E5M2(0xFC).to_f64().is_infinite());
        // fnuz: max 240 / 57344, overflow and infinities to 0x80, no -0.
        assert_eq!(Float8E4M3fnuz(0x7F).to_f64(), 240.0);
        assert_eq!(Float8E4M3fnuz::from_f64(248.0).0, 0x80);
        assert_eq!(Float8E4M3fnuz::from_f64(-0.0).0, 0x00);
        assert_eq!(Float8E4M3fnuz::from_f64(-1e-30).0, 0x00);
        assert_eq!(Float8E4M3fnuz::from_f64(-1.0).0, 0xC0);
        assert_eq!(Float8E5M2fnuz(0x7F).to_f64(), 57344.0);
        assert_eq!(Float8E5M2fnuz::from_f64(f64::INFINITY).0, 0x80);
        // e8m0fnu: powers of two, round to nearest even on the mantissa.
        assert_eq!(Float8E8M0fnu(127).to_f64(), 1.0);
        assert_eq!(Float8E8M0fnu(0).to_f64(), exp2i(-127));
        assert_eq!(Float8E8M0fnu::from_f64(1.0).0, 127);
        assert_eq!(Float8E8M0fnu::from_f64(1.5).0, 128); // tie, lsb 1 -> up
        assert_eq!(Float8E8M0fnu::from_f64(1.4).0, 127);
        assert_eq!(Float8E8M0fnu::from_f64(-4.0).0, 129); // sign ignored
        assert_eq!(Float8E8M0fnu::from_f64(0.0).0, 0);
        assert_eq!(Float8E8M0fnu::from_f64(f64::INFINITY).0, 0xFF);
        assert_eq!(Float8E8M0fnu::from_f64(f64::from(f32::MAX)).0, 0xFF); // rounds into NaN, as c10
        assert_eq!(Float8E8M0fnu(0x10).to_i64(), 0);
    }
}
