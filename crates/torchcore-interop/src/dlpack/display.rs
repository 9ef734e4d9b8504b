//! `Display` for the DLPack ABI types: the names the DLPack header uses
//! (`kDLCUDA`, `kDLFloat`), for messages and logs.

use std::fmt;

use super::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLPackVersion};

/// `major.minor`.
///
/// ```
/// use torchcore_interop::dlpack::DLPackVersion;
/// assert_eq!(DLPackVersion { major: 1, minor: 1 }.to_string(), "1.1");
/// ```
impl fmt::Display for DLPackVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The header's enumerator name ([`DLDeviceType::name`]).
///
/// ```
/// use torchcore_interop::dlpack::DLDeviceType;
/// assert_eq!(DLDeviceType::CUDA.to_string(), "kDLCUDA");
/// assert_eq!(DLDeviceType(99).to_string(), "unknown device type 99");
/// ```
impl fmt::Display for DLDeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// `type:id`, as PyTorch writes devices (`kDLCUDA:1`).
///
/// ```
/// use torchcore_interop::dlpack::{DLDevice, DLDeviceType};
/// let d = DLDevice { device_type: DLDeviceType::CPU, device_id: 0 };
/// assert_eq!(d.to_string(), "kDLCPU:0");
/// ```
impl fmt::Display for DLDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.device_type, self.device_id)
    }
}

/// The header's enumerator name ([`DLDataTypeCode::name`]).
///
/// ```
/// use torchcore_interop::dlpack::DLDataTypeCode;
/// assert_eq!(DLDataTypeCode::BFLOAT.to_string(), "kDLBfloat");
/// ```
impl fmt::Display for DLDataTypeCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// The code, the bits and (when not 1) the lanes: `kDLFloat 32-bit`,
/// `kDLInt 8-bit x4`.
///
/// ```
/// use torchcore_interop::dlpack::{DLDataType, DLDataTypeCode};
/// let t = DLDataType { code: DLDataTypeCode::FLOAT, bits: 32, lanes: 1 };
/// assert_eq!(t.to_string(), "kDLFloat 32-bit");
/// let v = DLDataType { code: DLDataTypeCode::INT, bits: 8, lanes: 4 };
/// assert_eq!(v.to_string(), "kDLInt 8-bit x4");
/// ```
impl fmt::Display for DLDataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}-bit", self.code, self.bits)?;
        if self.lanes != 1 {
            write!(f, " x{}", self.lanes)?;
        }
        Ok(())
    }
}
