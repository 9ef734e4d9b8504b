//! `serde` support (feature `serde`): a [`ScalarType`] is its PyTorch
//! name without the `torch.` prefix (`"float32"`, `"bfloat16"`), parsed
//! back with [`ScalarType::from_torch_name`] (which also accepts aliases
//! such as `"float"` and the prefixed form). [`Device`](crate::Device)'s
//! support is c10-storage's (its `serde` feature, which this one enables).

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::scalar_type::ScalarType;

/// Serialises as the torch name (`"int64"`).
///
/// ```
/// use c10_core::ScalarType;
/// assert_eq!(serde_json::to_string(&ScalarType::Long)?, "\"int64\"");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Serialize for ScalarType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.torch_name())
    }
}

/// Parses a torch dtype name (`"float32"`, `"torch.float32"`, `"float"`).
///
/// ```
/// use c10_core::ScalarType;
/// let t: ScalarType = serde_json::from_str("\"bfloat16\"")?;
/// assert_eq!(t, ScalarType::BFloat16);
/// assert_eq!(serde_json::from_str::<ScalarType>("\"torch.double\"")?, ScalarType::Double);
/// assert!(serde_json::from_str::<ScalarType>("\"Float\"").is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> Deserialize<'de> for ScalarType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ScalarType, D::Error> {
        struct ScalarTypeVisitor;
        impl Visitor<'_> for ScalarTypeVisitor {
            type Value = ScalarType;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a torch dtype name such as \"float32\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ScalarType, E> {
                ScalarType::from_torch_name(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(ScalarTypeVisitor)
    }
}
