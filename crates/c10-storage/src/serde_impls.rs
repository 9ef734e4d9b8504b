//! `serde` support (feature `serde`): a [`Device`] is its PyTorch string,
//! `"cpu"`, `"cuda:0"`, `"meta"`, and is parsed back with its `FromStr`
//! (so `"cuda"` and `"cuda:01"` behave as in `torch.device`).

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::device::Device;

/// Serialises as the device string (`"cuda:1"`).
///
/// ```
/// use c10_storage::Device;
/// assert_eq!(serde_json::to_string(&Device::cuda(1))?, "\"cuda:1\"");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Serialize for Device {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Parses a device string as `"cuda:0".parse::<Device>()` does.
///
/// ```
/// use c10_storage::Device;
/// let d: Device = serde_json::from_str("\"cuda:2\"")?;
/// assert_eq!(d, Device::cuda(2));
/// let err = serde_json::from_str::<Device>("\"cuda:01\"").unwrap_err();
/// assert!(err.to_string().contains("Invalid device string: 'cuda:01'"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> Deserialize<'de> for Device {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Device, D::Error> {
        struct DeviceVisitor;
        impl Visitor<'_> for DeviceVisitor {
            type Value = Device;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a device string such as \"cpu\" or \"cuda:0\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Device, E> {
                v.parse::<Device>().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(DeviceVisitor)
    }
}
