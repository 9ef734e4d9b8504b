//! `TypeMeta`: c10's runtime type descriptor.

use super::*;

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
