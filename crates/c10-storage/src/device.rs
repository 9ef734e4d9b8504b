//! Device types and devices, with c10's numbering, names and string parsing.

use std::fmt;
use std::str::FromStr;

/// The kind of device a buffer lives on.
///
/// The discriminants are c10's `DeviceType` numbers (they are part of
/// c10's serialization format, so they are fixed).
///
/// ```
/// use c10_storage::DeviceType;
/// assert_eq!(DeviceType::Cuda as i8, 1);
/// assert_eq!(DeviceType::Meta.to_string(), "meta");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i8)]
pub enum DeviceType {
    /// Host memory.
    Cpu = 0,
    /// NVIDIA GPU memory.
    Cuda = 1,
    /// Intel MKL-DNN (deprecated in PyTorch).
    Mkldnn = 2,
    /// OpenGL.
    OpenGl = 3,
    /// OpenCL.
    OpenCl = 4,
    /// IDEEP.
    Ideep = 5,
    /// AMD HIP.
    Hip = 6,
    /// FPGA.
    Fpga = 7,
    /// MAIA.
    Maia = 8,
    /// XLA / TPU.
    Xla = 9,
    /// Vulkan.
    Vulkan = 10,
    /// Apple Metal.
    Metal = 11,
    /// Intel XPU.
    Xpu = 12,
    /// Apple MPS.
    Mps = 13,
    /// The meta device: shapes and strides without any data.
    Meta = 14,
    /// Habana HPU.
    Hpu = 15,
    /// NEC SX-Aurora VE.
    Ve = 16,
    /// Lazy tensors.
    Lazy = 17,
    /// Graphcore IPU.
    Ipu = 18,
    /// Meta training and inference accelerator.
    Mtia = 19,
    /// An out-of-tree backend (`privateuseone`).
    PrivateUse1 = 20,
}

/// Number of device types, c10's `COMPILE_TIME_MAX_DEVICE_TYPES`.
pub const COMPILE_TIME_MAX_DEVICE_TYPES: usize = 21;

impl DeviceType {
    /// Every device type, in c10 numbering order.
    pub const ALL: [DeviceType; COMPILE_TIME_MAX_DEVICE_TYPES] = [
        DeviceType::Cpu,
        DeviceType::Cuda,
        DeviceType::Mkldnn,
        DeviceType::OpenGl,
        DeviceType::OpenCl,
        DeviceType::Ideep,
        DeviceType::Hip,
        DeviceType::Fpga,
        DeviceType::Maia,
        DeviceType::Xla,
        DeviceType::Vulkan,
        DeviceType::Metal,
        DeviceType::Xpu,
        DeviceType::Mps,
        DeviceType::Meta,
        DeviceType::Hpu,
        DeviceType::Ve,
        DeviceType::Lazy,
        DeviceType::Ipu,
        DeviceType::Mtia,
        DeviceType::PrivateUse1,
    ];

    /// The lower-case name c10 prints (`DeviceTypeName(t, /*lower_case=*/true)`).
    ///
    /// ```
    /// use c10_storage::DeviceType;
    /// assert_eq!(DeviceType::PrivateUse1.name(), "privateuseone");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            DeviceType::Cpu => "cpu",
            DeviceType::Cuda => "cuda",
            DeviceType::Mkldnn => "mkldnn",
            DeviceType::OpenGl => "opengl",
            DeviceType::OpenCl => "opencl",
            DeviceType::Ideep => "ideep",
            DeviceType::Hip => "hip",
            DeviceType::Fpga => "fpga",
            DeviceType::Maia => "maia",
            DeviceType::Xla => "xla",
            DeviceType::Vulkan => "vulkan",
            DeviceType::Metal => "metal",
            DeviceType::Xpu => "xpu",
            DeviceType::Mps => "mps",
            DeviceType::Meta => "meta",
            DeviceType::Hpu => "hpu",
            DeviceType::Ve => "ve",
            DeviceType::Lazy => "lazy",
            DeviceType::Ipu => "ipu",
            DeviceType::Mtia => "mtia",
            DeviceType::PrivateUse1 => "privateuseone",
        }
    }

    /// The upper-case name c10 prints (`DeviceTypeName(t)`), e.g. `"CUDA"`.
    pub const fn upper_name(self) -> &'static str {
        match self {
            DeviceType::Cpu => "CPU",
            DeviceType::Cuda => "CUDA",
            DeviceType::Mkldnn => "MKLDNN",
            DeviceType::OpenGl => "OPENGL",
            DeviceType::OpenCl => "OPENCL",
            DeviceType::Ideep => "IDEEP",
            DeviceType::Hip => "HIP",
            DeviceType::Fpga => "FPGA",
            DeviceType::Maia => "MAIA",
            DeviceType::Xla => "XLA",
            DeviceType::Vulkan => "VULKAN",
            DeviceType::Metal => "METAL",
            DeviceType::Xpu => "XPU",
            DeviceType::Mps => "MPS",
            DeviceType::Meta => "META",
            DeviceType::Hpu => "HPU",
            DeviceType::Ve => "VE",
            DeviceType::Lazy => "LAZY",
            DeviceType::Ipu => "IPU",
            DeviceType::Mtia => "MTIA",
            DeviceType::PrivateUse1 => "PRIVATEUSEONE",
        }
    }

    /// The device type with c10 number `index`, if there is one.
    ///
    /// ```
    /// use c10_storage::DeviceType;
    /// assert_eq!(DeviceType::from_index(14), Some(DeviceType::Meta));
    /// assert_eq!(DeviceType::from_index(21), None);
    /// ```
    pub fn from_index(index: i8) -> Option<DeviceType> {
        usize::try_from(index)
            .ok()
            .and_then(|i| DeviceType::ALL.get(i).copied())
    }

    /// Whether the host may read and write this device's memory directly.
    ///
    /// Only CPU memory qualifies: the host never dereferences device memory.
    pub const fn is_host_accessible(self) -> bool {
        matches!(self, DeviceType::Cpu)
    }

    /// Whether tensors on this device support `as_strided` (c10's
    /// `Device::supports_as_strided`: false for IPU, XLA, Lazy and MTIA).
    pub const fn supports_as_strided(self) -> bool {
        !matches!(
            self,
            DeviceType::Ipu | DeviceType::Xla | DeviceType::Lazy | DeviceType::Mtia
        )
    }
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The device-type names `Device` parsing accepts, in c10's order (this
/// order is also the order of the list in the error message).
const PARSE_TABLE: [(&str, DeviceType); 20] = [
    ("cpu", DeviceType::Cpu),
    ("cuda", DeviceType::Cuda),
    ("ipu", DeviceType::Ipu),
    ("xpu", DeviceType::Xpu),
    ("mkldnn", DeviceType::Mkldnn),
    ("opengl", DeviceType::OpenGl),
    ("opencl", DeviceType::OpenCl),
    ("ideep", DeviceType::Ideep),
    ("hip", DeviceType::Hip),
    ("ve", DeviceType::Ve),
    ("fpga", DeviceType::Fpga),
    ("maia", DeviceType::Maia),
    ("xla", DeviceType::Xla),
    ("lazy", DeviceType::Lazy),
    ("vulkan", DeviceType::Vulkan),
    ("mps", DeviceType::Mps),
    ("meta", DeviceType::Meta),
    ("hpu", DeviceType::Hpu),
    ("mtia", DeviceType::Mtia),
    ("privateuseone", DeviceType::PrivateUse1),
];

/// Why a device string could not be parsed. The messages are c10's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceParseError {
    /// The string was empty.
    #[error("Device string must not be empty")]
    Empty,
    /// The string does not match `([a-zA-Z_]+)(?::([1-9]\d*|0))?`.
    #[error("Invalid device string: '{0}'")]
    Invalid(String),
    /// The index does not fit in a C `int`.
    #[error("Could not parse device index '{index}' in device string '{string}'")]
    BadIndex {
        /// The index digits.
        index: String,
        /// The whole device string.
        string: String,
    },
    /// The type name is not a known device type (matching is case-sensitive).
    #[error("Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: {0}")]
    UnknownType(String),
}

impl FromStr for DeviceType {
    type Err = DeviceParseError;

    /// Parses a bare device-type name such as `"cuda"` (case-sensitive, as
    /// c10's `parse_type`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PARSE_TABLE
            .iter()
            .find(|(name, _)| *name == s)
            .map(|&(_, t)| t)
            .ok_or_else(|| DeviceParseError::UnknownType(s.to_owned()))
    }
}

/// A device: a type plus an optional index (c10's `Device`, 2 bytes).
///
/// Index `-1` means "no index" (the current device of that type). As in c10
/// the index is an `i8`, and parsing casts the parsed `int` to it, so
/// `"cuda:300"` gives index 44 exactly as PyTorch does.
///
/// ```
/// use c10_storage::{Device, DeviceType};
/// let d: Device = "cuda:1".parse()?;
/// assert_eq!(d.device_type(), DeviceType::Cuda);
/// assert_eq!(d.index(), 1);
/// assert_eq!(d.to_string(), "cuda:1");
/// assert_eq!(Device::CPU.to_string(), "cpu");
/// let err = "cuda:01".parse::<Device>().unwrap_err();
/// assert_eq!(err.to_string(), "Invalid device string: 'cuda:01'");
/// # Ok::<(), c10_storage::DeviceParseError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    ty: DeviceType,
    index: i8,
}

impl Device {
    /// The CPU device (`Device(kCPU)`, index -1).
    pub const CPU: Device = Device::new(DeviceType::Cpu, -1);
    /// The meta device.
    pub const META: Device = Device::new(DeviceType::Meta, -1);

    /// A device of type `ty` with index `index` (-1 for none).
    ///
    /// Like release builds of c10, no validation is done (`cpu:1` is
    /// accepted); see [`Device::validate`].
    pub const fn new(ty: DeviceType, index: i8) -> Device {
        Device { ty, index }
    }

    /// A CUDA device with the given ordinal.
    pub const fn cuda(index: i8) -> Device {
        Device::new(DeviceType::Cuda, index)
    }

    /// The device type.
    pub const fn device_type(self) -> DeviceType {
        self.ty
    }

    /// The index, or -1 when the device has none.
    pub const fn index(self) -> i8 {
        self.index
    }

    /// Whether an explicit index was given.
    pub const fn has_index(self) -> bool {
        self.index != -1
    }

    /// Whether this is a CPU device.
    pub const fn is_cpu(self) -> bool {
        matches!(self.ty, DeviceType::Cpu)
    }

    /// Whether this is a CUDA device.
    pub const fn is_cuda(self) -> bool {
        matches!(self.ty, DeviceType::Cuda)
    }

    /// Whether this is the meta device.
    pub const fn is_meta(self) -> bool {
        matches!(self.ty, DeviceType::Meta)
    }

    /// c10's debug-build check: the index is -1 or non-negative, and a CPU
    /// device has index -1 or 0.
    pub fn validate(self) -> Result<(), String> {
        if self.index < -1 {
            return Err(format!(
                "Device index must be -1 or non-negative, got {}",
                self.index
            ));
        }
        if self.is_cpu() && self.index > 0 {
            return Err(format!(
                "CPU device index must be -1 or zero, got {}",
                self.index
            ));
        }
        Ok(())
    }
}

impl Default for Device {
    fn default() -> Self {
        Device::CPU
    }
}

impl From<DeviceType> for Device {
    fn from(ty: DeviceType) -> Self {
        Device::new(ty, -1)
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.ty.name())?;
        if self.has_index() {
            write!(f, ":{}", self.index)?;
        }
        Ok(())
    }
}

#[derive(PartialEq, Eq)]
enum ParseState {
    Start,
    IndexStart,
    IndexRest,
    Error,
}

impl FromStr for Device {
    type Err = DeviceParseError;

    /// Parses `"cpu"`, `"cuda"`, `"cuda:1"` with c10's state machine and
    /// error messages (see the type-level docs).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.is_empty() {
            return Err(DeviceParseError::Empty);
        }
        let mut name = String::new();
        let mut index = String::new();
        let mut state = ParseState::Start;
        // c10 walks bytes with the C-locale `isalpha`/`isdigit`: non-ASCII
        // bytes are neither, so they make the string invalid.
        for &b in s.as_bytes() {
            state = match state {
                ParseState::Start => {
                    if b == b':' {
                        ParseState::IndexStart
                    } else if b.is_ascii_alphabetic() || b == b'_' {
                        name.push(char::from(b));
                        ParseState::Start
                    } else {
                        ParseState::Error
                    }
                }
                ParseState::IndexStart => {
                    if b.is_ascii_digit() {
                        index.push(char::from(b));
                        ParseState::IndexRest
                    } else {
                        ParseState::Error
                    }
                }
                ParseState::IndexRest => {
                    // A leading zero may not be followed by anything.
                    if index.starts_with('0') || !b.is_ascii_digit() {
                        ParseState::Error
                    } else {
                        index.push(char::from(b));
                        ParseState::IndexRest
                    }
                }
                ParseState::Error => break,
            };
        }
        let has_error = name.is_empty()
            || state == ParseState::Error
            || (state == ParseState::IndexStart && index.is_empty());
        if has_error {
            return Err(DeviceParseError::Invalid(s.to_owned()));
        }
        let parsed_index = if index.is_empty() {
            -1
        } else {
            // `std::stoi` then a narrowing cast to int8: values outside
            // `int` fail, values inside wrap modulo 256.
            let v: i32 = index.parse().map_err(|_| DeviceParseError::BadIndex {
                index: index.clone(),
                string: s.to_owned(),
            })?;
            v as i8
        };
        let ty: DeviceType = name.parse()?;
        Ok(Device::new(ty, parsed_index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        let d: Device = "cuda:0".parse().unwrap();
        assert_eq!((d.device_type(), d.index()), (DeviceType::Cuda, 0));
        assert_eq!(d.to_string(), "cuda:0");
        let d: Device = "cuda".parse().unwrap();
        assert_eq!(d.index(), -1);
        assert_eq!(d.to_string(), "cuda");
        assert_eq!("cpu".parse::<Device>().unwrap(), Device::CPU);
        assert_eq!("meta".parse::<Device>().unwrap(), Device::META);
        assert_eq!(
            "privateuseone:3".parse::<Device>().unwrap().to_string(),
            "privateuseone:3"
        );
        // Release builds of c10 accept a CPU index.
        assert_eq!("cpu:1".parse::<Device>().unwrap().index(), 1);
    }

    #[test]
    fn index_wraps_like_int8() {
        assert_eq!("cuda:128".parse::<Device>().unwrap().index(), -128);
        assert_eq!("cuda:300".parse::<Device>().unwrap().index(), 44);
        assert_eq!("cuda:127".parse::<Device>().unwrap().index(), 127);
    }

    #[test]
    fn invalid_strings() {
        for s in [
            "cuda:01", "cuda:", "cuda:-1", "cuda:0:1", " cuda", "cuda:1a", ":1", "cu da", "cüda",
            "cuda:00",
        ] {
            let e = s.parse::<Device>().unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("Invalid device string: '{s}'"),
                "{s}"
            );
        }
        assert_eq!(
            "".parse::<Device>().unwrap_err().to_string(),
            "Device string must not be empty"
        );
    }

    #[test]
    fn unknown_types() {
        for s in ["CUDA", "foo", "c_uda", "Cpu"] {
            let e = s.parse::<Device>().unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: {s}")
            );
        }
        // The type name is reported without the index.
        let e = "gpu:1".parse::<Device>().unwrap_err();
        assert!(e.to_string().ends_with("device string: gpu"));
    }

    #[test]
    fn index_out_of_int_range() {
        let e = "cuda:99999999999".parse::<Device>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "Could not parse device index '99999999999' in device string 'cuda:99999999999'"
        );
    }

    #[test]
    fn numbering_and_names() {
        for (i, t) in DeviceType::ALL.iter().enumerate() {
            assert_eq!(*t as usize, i);
            assert_eq!(DeviceType::from_index(i as i8), Some(*t));
        }
        assert_eq!(DeviceType::from_index(-1), None);
        assert_eq!(DeviceType::PrivateUse1 as i8, 20);
        assert_eq!(DeviceType::Meta as i8, 14);
        assert_eq!(DeviceType::Cuda.upper_name(), "CUDA");
        assert_eq!(std::mem::size_of::<Device>(), 2);
        for (name, t) in PARSE_TABLE {
            assert_eq!(t.name(), name);
        }
    }

    #[test]
    fn validate_like_debug_c10() {
        assert!(Device::new(DeviceType::Cpu, 1).validate().is_err());
        assert!(Device::cuda(-2).validate().is_err());
        assert!(Device::cuda(3).validate().is_ok());
    }
}
