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

    /// Every `(name, dtype)` torch exposes as `torch.<name>`: each dtype's
    /// primary name ([`torch_name`](Self::torch_name), `"float32"`), then
    /// torch's legacy aliases (`"float"`, `"long"`, `"cfloat"`, ...).
    /// `Undefined` has none. The Python package registers its dtype objects
    /// from this one table.
    ///
    /// ```
    /// use c10_core::ScalarType;
    /// let names: Vec<_> = ScalarType::python_names().collect();
    /// assert!(names.contains(&("float32", ScalarType::Float)));
    /// assert!(names.contains(&("long", ScalarType::Long)));
    /// assert!(names.iter().all(|(_, st)| *st != ScalarType::Undefined));
    /// ```
    pub fn python_names() -> impl Iterator<Item = (&'static str, ScalarType)> {
        ALL_SCALAR_TYPES
            .iter()
            .filter(|&&st| st != ScalarType::Undefined)
            .map(|&st| (st.torch_name(), st))
            .chain(LEGACY_DTYPE_NAMES.iter().copied())
    }

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

mod element;
mod minifloat;
mod type_meta;
mod types;

pub use self::element::*;
#[allow(unused_imports)]
pub(crate) use self::minifloat::*;
pub use self::type_meta::*;
pub use self::types::*;

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of};
    use ScalarType as S;

    #[test]
    fn the_element_type_table_agrees_with_element() {
        // Every dtype the table dispatches has the element type whose
        // `SCALAR_TYPE` is that dtype and whose size is its itemsize; the
        // rest (quantized, sub-byte, bit types) have none.
        let mut dispatched = 0;
        for st in ScalarType::ALL {
            let got = crate::dispatch_dtype!(st, T => {
                assert_eq!(<T as Element>::SCALAR_TYPE, st);
                assert_eq!(size_of::<T>(), st.itemsize());
                Some(st)
            }, { None });
            dispatched += usize::from(got.is_some());
        }
        assert_eq!(dispatched, 22);
    }

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
        // (name, our encoder, c10's bit trick) for each float8 format.
        type Encoders = (&'static str, fn(f64) -> u8, fn(f32) -> u8);
        let formats: [Encoders; 4] = [
            (
                "e4m3fn",
                |v| Float8E4M3fn::from_f64(v).0,
                c10_reference::e4m3fn,
            ),
            ("e5m2", |v| Float8E5M2::from_f64(v).0, c10_reference::e5m2),
            (
                "e4m3fnuz",
                |v| Float8E4M3fnuz::from_f64(v).0,
                c10_reference::e4m3fnuz,
            ),
            (
                "e5m2fnuz",
                |v| Float8E5M2fnuz::from_f64(v).0,
                c10_reference::e5m2fnuz,
            ),
        ];
        for x in inputs {
            if x.is_nan() {
                continue;
            }
            for (name, ours, c10) in formats {
                assert_eq!(ours(f64::from(x)), c10(x), "{name} {x:e}");
            }
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
