//! DLPack: zero-copy exchange of tensors with PyTorch, JAX, CuPy, NumPy and
//! any other DLPack producer or consumer.
//!
//! * [`to_dlpack`] / [`to_dlpack_versioned`] export a [`Tensor`] as a
//!   [`DLManagedTensor`] (classic, DLPack 0.x) or a
//!   [`DLManagedTensorVersioned`] (DLPack 1.x, with flags). No data is
//!   copied: the managed tensor holds a clone of the `Tensor` (which keeps
//!   the storage alive) and owns its shape and strides arrays; its deleter
//!   drops all of that, once.
//! * [`from_dlpack`] / [`from_dlpack_versioned`] import one as a `Tensor`
//!   over a [`Storage`] whose `DataPtr` deleter calls the producer's
//!   deleter, once, when the last tensor viewing the storage is gone.
//!
//! The ABI structs are defined here ([`DLTensor`], [`DLManagedTensor`],
//! [`DLManagedTensorVersioned`], ...) following `dlpack.h` 1.x; their sizes
//! and field offsets are checked at compile time. (Why not the `dlpark`
//! crate: see `docs/interop.md`.)
//!
//! # Layout conventions
//!
//! * Strides are exported in elements, as DLPack requires (never null).
//! * Like PyTorch, the exported `data` points at the tensor's first element
//!   and `byte_offset` is 0 (many consumers ignore `byte_offset`).
//! * On import, the storage starts at `data + byte_offset` (the first
//!   element) and holds exactly the bytes the layout reaches
//!   (`(1 + Σ stride·(size−1)) · itemsize`, 0 for an empty tensor); the
//!   tensor's storage offset is 0. Null strides mean row-major.
//!
//! # What the exporter cannot police
//!
//! Exporting hands a raw pointer to foreign code. From then on:
//!
//! * the foreign side may **write** through it, and does so without taking
//!   the storage's lock: reads and writes on both sides must be ordered by
//!   the program (as in PyTorch, where sharing memory through DLPack is
//!   equally unsynchronised). Writes from safe Rust still go through the
//!   guards, so they cannot race with each other.
//! * the buffer stays where it is. The capsule's `Tensor` clone keeps the
//!   storage alive, and export **pins** the buffer
//!   ([`StorageReadGuard::pin`](c10_storage::StorageReadGuard::pin), taken
//!   under the same guard that read the address) until the consumer calls
//!   the deleter: meanwhile `resize_`, [`Storage::resize`],
//!   [`Storage::reset`] and `set_data_ptr` fail with
//!   [`StorageError::Pinned`](c10_storage::StorageError::Pinned) instead of
//!   freeing memory the consumer still uses (NumPy refuses to resize arrays
//!   whose buffer was exported, for the same reason). Once every export is
//!   released the storage resizes again.
//! * read-only storages (memory-mapped files) must not be written. The
//!   classic form has no way to say so, so [`to_dlpack`] refuses them; the
//!   versioned form sets [`DLPACK_FLAG_BITMASK_READ_ONLY`].
//!
//! ```
//! use c10_core::{ScalarType, Tensor};
//! use torchcore_interop::dlpack::{from_dlpack, to_dlpack};
//!
//! let t = Tensor::arange(0, 6, 1, ScalarType::Long)?;
//! let managed = to_dlpack(&t)?; // what a consumer (PyTorch, JAX) receives
//! // SAFETY: `managed` is a live DLManagedTensor from `to_dlpack`, handed
//! // over exactly once; nothing else touches its memory meanwhile.
//! let back = unsafe { from_dlpack(managed) }?;
//! back.set::<i64>(&[0], 42)?;
//! assert_eq!(t.get::<i64>(&[0])?, 42); // same memory
//! # Ok::<(), torchcore_interop::InteropError>(())
//! ```

use std::ffi::c_void;
use std::ptr;

use c10_core::access::element_offset_range;
use c10_core::geometry::{contiguous_strides, fmt_list, storage_nbytes};
use c10_core::{ScalarType, Tensor};
use c10_storage::{BufferPin, DataPtr, Device, DeviceType, Storage};

use crate::error::{InteropError, Result};

/// The DLPack major version implemented here (`DLPACK_MAJOR_VERSION`).
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// The DLPack minor version exported (`DLPACK_MINOR_VERSION`). Importing
/// accepts any minor version of major version 1: minor versions only add
/// enumeration values, and unknown ones are rejected one by one.
pub const DLPACK_MINOR_VERSION: u32 = 1;

/// Flag: the tensor must not be written (`DLPACK_FLAG_BITMASK_READ_ONLY`).
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
/// Flag: the producer copied the data for this export
/// (`DLPACK_FLAG_BITMASK_IS_COPIED`).
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;
/// Flag: sub-byte elements are padded to a byte each
/// (`DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`).
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: u64 = 1 << 2;

/// The DLPack version of a [`DLManagedTensorVersioned`] (`DLPackVersion`).
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::dlpack::{from_dlpack_versioned, to_dlpack_versioned, DLPackVersion};
/// let m = to_dlpack_versioned(&Tensor::arange(0, 4, 1, ScalarType::Long)?)?;
/// // SAFETY: `m` is a live export, read before it is handed over below.
/// assert_eq!(unsafe { (*m).version }, DLPackVersion { major: 1, minor: 1 });
/// // SAFETY: handed over once; dropping the import calls the deleter.
/// drop(unsafe { from_dlpack_versioned(m) }?);
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLPackVersion {
    /// A different major version means a different struct layout.
    pub major: u32,
    /// Minor versions add enumeration values only.
    pub minor: u32,
}

/// A device type (`DLDeviceType`, a C `enum`, so 4 bytes).
///
/// ```
/// use c10_storage::Device;
/// use torchcore_interop::dlpack::{device_to_dlpack, DLDeviceType};
/// assert_eq!(device_to_dlpack(Device::CPU)?.device_type, DLDeviceType::CPU);
/// assert_eq!(device_to_dlpack(Device::cuda(0))?.device_type, DLDeviceType::CUDA);
/// assert_eq!(DLDeviceType::CUDA, DLDeviceType(2)); // the `dlpack.h` value
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDeviceType(pub u32);

impl DLDeviceType {
    /// `kDLCPU`.
    pub const CPU: DLDeviceType = DLDeviceType(1);
    /// `kDLCUDA`.
    pub const CUDA: DLDeviceType = DLDeviceType(2);
    /// `kDLCUDAHost`: pinned host memory (`cudaMallocHost`).
    pub const CUDA_HOST: DLDeviceType = DLDeviceType(3);
    /// `kDLOpenCL`.
    pub const OPENCL: DLDeviceType = DLDeviceType(4);
    /// `kDLVulkan`.
    pub const VULKAN: DLDeviceType = DLDeviceType(7);
    /// `kDLMetal`.
    pub const METAL: DLDeviceType = DLDeviceType(8);
    /// `kDLVPI`.
    pub const VPI: DLDeviceType = DLDeviceType(9);
    /// `kDLROCM`.
    pub const ROCM: DLDeviceType = DLDeviceType(10);
    /// `kDLROCMHost`: pinned host memory (`hipMallocHost`).
    pub const ROCM_HOST: DLDeviceType = DLDeviceType(11);
    /// `kDLExtDev`.
    pub const EXT_DEV: DLDeviceType = DLDeviceType(12);
    /// `kDLCUDAManaged`.
    pub const CUDA_MANAGED: DLDeviceType = DLDeviceType(13);
    /// `kDLOneAPI`.
    pub const ONE_API: DLDeviceType = DLDeviceType(14);
    /// `kDLWebGPU`.
    pub const WEB_GPU: DLDeviceType = DLDeviceType(15);
    /// `kDLHexagon`.
    pub const HEXAGON: DLDeviceType = DLDeviceType(16);
    /// `kDLMAIA`.
    pub const MAIA: DLDeviceType = DLDeviceType(17);
    /// `kDLTrn`.
    pub const TRN: DLDeviceType = DLDeviceType(18);

    /// The `dlpack.h` name, for messages.
    ///
    /// ```
    /// use torchcore_interop::dlpack::DLDeviceType;
    /// assert_eq!(DLDeviceType::CUDA_HOST.name(), "kDLCUDAHost");
    /// assert_eq!(DLDeviceType(99).name(), "unknown device type 99");
    /// ```
    pub fn name(self) -> String {
        let known = match self.0 {
            1 => "kDLCPU",
            2 => "kDLCUDA",
            3 => "kDLCUDAHost",
            4 => "kDLOpenCL",
            7 => "kDLVulkan",
            8 => "kDLMetal",
            9 => "kDLVPI",
            10 => "kDLROCM",
            11 => "kDLROCMHost",
            12 => "kDLExtDev",
            13 => "kDLCUDAManaged",
            14 => "kDLOneAPI",
            15 => "kDLWebGPU",
            16 => "kDLHexagon",
            17 => "kDLMAIA",
            18 => "kDLTrn",
            other => return format!("unknown device type {other}"),
        };
        known.to_string()
    }
}

/// A device (`DLDevice`).
///
/// ```
/// use c10_storage::Device;
/// use torchcore_interop::dlpack::{device_from_dlpack, device_to_dlpack, DLDevice, DLDeviceType};
/// let d = DLDevice { device_type: DLDeviceType::CUDA, device_id: 1 };
/// assert_eq!(device_from_dlpack(d)?, Device::cuda(1));
/// assert_eq!(device_to_dlpack(Device::CPU)?, DLDevice { device_type: DLDeviceType::CPU, device_id: 0 });
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDevice {
    /// The device type.
    pub device_type: DLDeviceType,
    /// The device ordinal (0 for CPU memory).
    pub device_id: i32,
}

/// A type code (`DLDataTypeCode`, stored as `uint8_t`).
///
/// ```
/// use c10_core::ScalarType;
/// use torchcore_interop::dlpack::{dtype_to_dlpack, DLDataTypeCode};
/// assert_eq!(dtype_to_dlpack(ScalarType::BFloat16)?.code, DLDataTypeCode::BFLOAT);
/// assert_eq!(dtype_to_dlpack(ScalarType::Byte)?.code, DLDataTypeCode::UINT);
/// assert_eq!(DLDataTypeCode::FLOAT, DLDataTypeCode(2)); // the `dlpack.h` value
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDataTypeCode(pub u8);

/// Declares the type codes once: each line gives the constant, its
/// `dlpack.h` value and name; `name()` reads the same table.
macro_rules! dl_type_codes {
    ($($konst:ident = $value:literal => $name:literal,)*) => {
        impl DLDataTypeCode {
            $(
                #[doc = concat!("`", $name, "`.")]
                pub const $konst: DLDataTypeCode = DLDataTypeCode($value);
            )*

            /// The `dlpack.h` name, for messages.
            ///
            /// ```
            /// use torchcore_interop::dlpack::DLDataTypeCode;
            /// assert_eq!(DLDataTypeCode::FLOAT8_E4M3FN.name(), "kDLFloat8_e4m3fn");
            /// assert_eq!(DLDataTypeCode(200).name(), "unknown type code 200");
            /// ```
            pub fn name(self) -> String {
                match self.0 {
                    $($value => $name.to_string(),)*
                    other => format!("unknown type code {other}"),
                }
            }
        }
    };
}

dl_type_codes! {
    INT = 0 => "kDLInt",
    UINT = 1 => "kDLUInt",
    FLOAT = 2 => "kDLFloat",
    OPAQUE_HANDLE = 3 => "kDLOpaqueHandle",
    BFLOAT = 4 => "kDLBfloat",
    COMPLEX = 5 => "kDLComplex",
    BOOL = 6 => "kDLBool",
    FLOAT8_E3M4 = 7 => "kDLFloat8_e3m4",
    FLOAT8_E4M3 = 8 => "kDLFloat8_e4m3",
    FLOAT8_E4M3B11FNUZ = 9 => "kDLFloat8_e4m3b11fnuz",
    FLOAT8_E4M3FN = 10 => "kDLFloat8_e4m3fn",
    FLOAT8_E4M3FNUZ = 11 => "kDLFloat8_e4m3fnuz",
    FLOAT8_E5M2 = 12 => "kDLFloat8_e5m2",
    FLOAT8_E5M2FNUZ = 13 => "kDLFloat8_e5m2fnuz",
    FLOAT8_E8M0FNU = 14 => "kDLFloat8_e8m0fnu",
    FLOAT6_E2M3FN = 15 => "kDLFloat6_e2m3fn",
    FLOAT6_E3M2FN = 16 => "kDLFloat6_e3m2fn",
    FLOAT4_E2M1FN = 17 => "kDLFloat4_e2m1fn",
}

/// An element type (`DLDataType`): code, bits per lane, lanes.
///
/// ```
/// use c10_core::ScalarType;
/// use torchcore_interop::dlpack::{dtype_from_dlpack, dtype_to_dlpack, DLDataType, DLDataTypeCode};
/// let half = DLDataType { code: DLDataTypeCode::FLOAT, bits: 16, lanes: 1 };
/// assert_eq!(dtype_to_dlpack(ScalarType::Half)?, half);
/// assert_eq!(dtype_from_dlpack(half)?, ScalarType::Half);
/// assert!(dtype_from_dlpack(DLDataType { lanes: 4, ..half }).is_err()); // no vector types
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDataType {
    /// The type code.
    pub code: DLDataTypeCode,
    /// Bits per lane (8, 16, 32, 64, 128).
    pub bits: u8,
    /// Lanes per element; 1 for everything but vector types.
    pub lanes: u16,
}

impl DLDataType {
    const fn new(code: DLDataTypeCode, bits: u8) -> DLDataType {
        DLDataType {
            code,
            bits,
            lanes: 1,
        }
    }
}

/// The plain tensor description (`DLTensor`); owns nothing.
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::dlpack::{from_dlpack, to_dlpack, DLTensor};
/// let t = Tensor::arange(0, 6, 1, ScalarType::Long)?.as_strided(&[2, 3], &[1, 2], None)?;
/// let m = to_dlpack(&t)?;
/// // SAFETY: `m` is a live export; its shape and strides hold `ndim` values.
/// let dl: DLTensor = unsafe { (*m).dl_tensor };
/// let strides = unsafe { std::slice::from_raw_parts(dl.strides, dl.ndim as usize) };
/// assert_eq!((dl.ndim, strides, dl.byte_offset), (2, &[1, 2][..], 0));
/// // SAFETY: handed over once; dropping the import calls the deleter.
/// drop(unsafe { from_dlpack(m) }?);
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DLTensor {
    /// Base pointer of the data (add `byte_offset` to reach the first
    /// element). Opaque for device memory.
    pub data: *mut c_void,
    /// Where the data lives.
    pub device: DLDevice,
    /// Number of dimensions.
    pub ndim: i32,
    /// Element type.
    pub dtype: DLDataType,
    /// `ndim` sizes.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or null for row-major.
    pub strides: *mut i64,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// The classic managed tensor (`DLManagedTensor`), DLPack's unit of
/// exchange before 1.0, still what `torch.utils.dlpack.to_dlpack` returns.
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::dlpack::{to_dlpack, DLManagedTensor};
/// let t = Tensor::arange(0.0, 3.0, 1.0, ScalarType::Double)?;
/// let m: *mut DLManagedTensor = to_dlpack(&t)?;
/// assert_eq!(t.storage().pin_count(), 1);
/// // SAFETY: `m` is live; a consumer that is done calls the deleter once.
/// unsafe { ((*m).deleter.expect("exports have a deleter"))(m) };
/// assert_eq!(t.storage().pin_count(), 0);
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The tensor.
    pub dl_tensor: DLTensor,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Called once by the consumer when it is done; may be null.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// The versioned managed tensor (`DLManagedTensorVersioned`, DLPack 1.x),
/// with a version and flags such as [`DLPACK_FLAG_BITMASK_READ_ONLY`].
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::dlpack::{to_dlpack_versioned, DLPACK_FLAG_BITMASK_READ_ONLY};
/// let m = to_dlpack_versioned(&Tensor::arange(0, 3, 1, ScalarType::Int)?)?;
/// // SAFETY: `m` is live; the consumer calls the deleter once when done.
/// unsafe {
///     assert_eq!((*m).flags & DLPACK_FLAG_BITMASK_READ_ONLY, 0); // writable
///     assert_eq!((*m).dl_tensor.ndim, 1);
///     ((*m).deleter.expect("exports have a deleter"))(m);
/// }
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// The DLPack version the producer used; a consumer must refuse a major
    /// version it does not know (after calling the deleter).
    pub version: DLPackVersion,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Called once by the consumer when it is done; may be null.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_BITMASK_*` bits.
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: DLTensor,
}

// `dlpack.h`'s layout, checked on the 64-bit targets it is used on.
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<DLPackVersion>() == 8);
    assert!(size_of::<DLDevice>() == 8 && align_of::<DLDevice>() == 4);
    assert!(size_of::<DLDataType>() == 4 && align_of::<DLDataType>() == 2);
    assert!(offset_of!(DLDataType, bits) == 1 && offset_of!(DLDataType, lanes) == 2);
    assert!(size_of::<DLTensor>() == 48);
    assert!(offset_of!(DLTensor, device) == 8);
    assert!(offset_of!(DLTensor, ndim) == 16);
    assert!(offset_of!(DLTensor, dtype) == 20);
    assert!(offset_of!(DLTensor, shape) == 24);
    assert!(offset_of!(DLTensor, strides) == 32);
    assert!(offset_of!(DLTensor, byte_offset) == 40);
    assert!(size_of::<DLManagedTensor>() == 64);
    assert!(offset_of!(DLManagedTensor, manager_ctx) == 48);
    assert!(offset_of!(DLManagedTensor, deleter) == 56);
    assert!(size_of::<DLManagedTensorVersioned>() == 80);
    assert!(offset_of!(DLManagedTensorVersioned, manager_ctx) == 8);
    assert!(offset_of!(DLManagedTensorVersioned, deleter) == 16);
    assert!(offset_of!(DLManagedTensorVersioned, flags) == 24);
    assert!(offset_of!(DLManagedTensorVersioned, dl_tensor) == 32);
};

// ---------------------------------------------------------------------------
// dtypes and devices

/// The dtype ↔ DLPack type pairs (PyTorch's `getDLDataType` and
/// `toScalarType`), written once for both directions.
const DTYPES: [(ScalarType, DLDataTypeCode, u8); 21] = {
    use DLDataTypeCode as C;
    use ScalarType as S;
    [
        (S::Byte, C::UINT, 8),
        (S::UInt16, C::UINT, 16),
        (S::UInt32, C::UINT, 32),
        (S::UInt64, C::UINT, 64),
        (S::Char, C::INT, 8),
        (S::Short, C::INT, 16),
        (S::Int, C::INT, 32),
        (S::Long, C::INT, 64),
        (S::Half, C::FLOAT, 16),
        (S::Float, C::FLOAT, 32),
        (S::Double, C::FLOAT, 64),
        (S::BFloat16, C::BFLOAT, 16),
        (S::ComplexHalf, C::COMPLEX, 32),
        (S::ComplexFloat, C::COMPLEX, 64),
        (S::ComplexDouble, C::COMPLEX, 128),
        (S::Bool, C::BOOL, 8),
        (S::Float8_e5m2, C::FLOAT8_E5M2, 8),
        (S::Float8_e4m3fn, C::FLOAT8_E4M3FN, 8),
        (S::Float8_e5m2fnuz, C::FLOAT8_E5M2FNUZ, 8),
        (S::Float8_e4m3fnuz, C::FLOAT8_E4M3FNUZ, 8),
        (S::Float8_e8m0fnu, C::FLOAT8_E8M0FNU, 8),
    ]
};

/// The DLPack type of `dtype` (PyTorch's `getDLDataType`): integers,
/// unsigned integers, floats, `bfloat16`, complex (32/64/128 bits), `bool`
/// (8 bits) and the five float8 types that DLPack has codes for.
///
/// Quantized, sub-byte (`uint1`..`int7`, `float4_e2m1fn_x2`), bit and
/// `bcomplex32` dtypes have no DLPack code and are refused.
///
/// ```
/// use c10_core::ScalarType;
/// use torchcore_interop::dlpack::{dtype_to_dlpack, DLDataTypeCode};
/// let t = dtype_to_dlpack(ScalarType::BFloat16)?;
/// assert_eq!((t.code, t.bits, t.lanes), (DLDataTypeCode::BFLOAT, 16, 1));
/// assert!(dtype_to_dlpack(ScalarType::QInt8).is_err());
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub fn dtype_to_dlpack(dtype: ScalarType) -> Result<DLDataType> {
    DTYPES
        .iter()
        .find(|(st, _, _)| *st == dtype)
        .map(|&(_, code, bits)| DLDataType::new(code, bits))
        .ok_or_else(|| {
            InteropError::Dtype(format!(
                "DLPack has no type code for dtype {dtype}; convert the tensor to a supported dtype first"
            ))
        })
}

/// The dtype of a DLPack type (the inverse of [`dtype_to_dlpack`]).
///
/// Vector types (`lanes != 1`) and codes without a dtype here
/// (`kDLOpaqueHandle`, `kDLFloat8_e3m4`, `kDLFloat8_e4m3`,
/// `kDLFloat8_e4m3b11fnuz`, the float6 and float4 codes) are refused, as
/// are unusual bit widths.
///
/// ```
/// use c10_core::ScalarType;
/// use torchcore_interop::dlpack::{dtype_from_dlpack, DLDataType, DLDataTypeCode};
/// let t = DLDataType { code: DLDataTypeCode::COMPLEX, bits: 64, lanes: 1 };
/// assert_eq!(dtype_from_dlpack(t)?, ScalarType::ComplexFloat);
/// let v = DLDataType { code: DLDataTypeCode::FLOAT, bits: 32, lanes: 4 };
/// assert!(dtype_from_dlpack(v).unwrap_err().to_string().contains("lanes"));
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub fn dtype_from_dlpack(t: DLDataType) -> Result<ScalarType> {
    if t.lanes != 1 {
        return Err(InteropError::Dtype(format!(
            "DLPack vector types are not supported: {} with {} bits has {} lanes (only lanes = 1 maps to a dtype)",
            t.code.name(),
            t.bits,
            t.lanes
        )));
    }
    DTYPES
        .iter()
        .find(|(_, code, bits)| (*code, *bits) == (t.code, t.bits))
        .map(|&(st, _, _)| st)
        .ok_or_else(|| {
            InteropError::Dtype(format!(
                "unsupported DLPack dtype: {} with {} bits has no dtype here",
                t.code.name(),
                t.bits
            ))
        })
}

/// The DLPack device of `device` (PyTorch's `getDLDevice`): CPU →
/// `kDLCPU` (id 0), CUDA → `kDLCUDA` with the device index, HIP →
/// `kDLROCM`, XPU → `kDLOneAPI`, MPS → `kDLMetal`, OpenCL → `kDLOpenCL`,
/// MAIA → `kDLMAIA`, PrivateUse1 → `kDLExtDev`. Other devices (meta, XLA,
/// ...) are refused.
///
/// ```
/// use c10_storage::Device;
/// use torchcore_interop::dlpack::{device_to_dlpack, DLDeviceType};
/// let d = device_to_dlpack(Device::cuda(3))?;
/// assert_eq!((d.device_type, d.device_id), (DLDeviceType::CUDA, 3));
/// assert!(device_to_dlpack(Device::META).is_err());
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub fn device_to_dlpack(device: Device) -> Result<DLDevice> {
    let device_type = match device.device_type() {
        DeviceType::Cpu => DLDeviceType::CPU,
        DeviceType::Cuda => DLDeviceType::CUDA,
        DeviceType::Hip => DLDeviceType::ROCM,
        DeviceType::Xpu => DLDeviceType::ONE_API,
        DeviceType::Mps => DLDeviceType::METAL,
        DeviceType::OpenCl => DLDeviceType::OPENCL,
        DeviceType::Maia => DLDeviceType::MAIA,
        DeviceType::PrivateUse1 => DLDeviceType::EXT_DEV,
        _ => {
            return Err(InteropError::Device(format!(
                "Cannot pack tensors on {device}: DLPack has no device type for it"
            )))
        }
    };
    let device_id = if device.is_cpu() {
        0
    } else {
        i32::from(device.index().max(0))
    };
    Ok(DLDevice {
        device_type,
        device_id,
    })
}

/// The device of a DLPack device (the inverse of [`device_to_dlpack`]).
///
/// Pinned host memory (`kDLCUDAHost`, `kDLROCMHost`) is ordinary host
/// memory and imports as CPU. Device ids must fit c10's 8-bit index.
/// `kDLCUDAManaged`, Vulkan, WebGPU and the other device types without a
/// c10 device are refused.
///
/// ```
/// use c10_storage::Device;
/// use torchcore_interop::dlpack::{device_from_dlpack, DLDevice, DLDeviceType};
/// let d = DLDevice { device_type: DLDeviceType::CUDA, device_id: 1 };
/// assert_eq!(device_from_dlpack(d)?, Device::cuda(1));
/// let v = DLDevice { device_type: DLDeviceType::VULKAN, device_id: 0 };
/// assert!(device_from_dlpack(v).unwrap_err().to_string().contains("kDLVulkan"));
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub fn device_from_dlpack(d: DLDevice) -> Result<Device> {
    let ty = match d.device_type {
        DLDeviceType::CPU | DLDeviceType::CUDA_HOST | DLDeviceType::ROCM_HOST => {
            return Ok(Device::CPU)
        }
        DLDeviceType::CUDA => DeviceType::Cuda,
        DLDeviceType::ROCM => DeviceType::Hip,
        DLDeviceType::ONE_API => DeviceType::Xpu,
        DLDeviceType::METAL => DeviceType::Mps,
        DLDeviceType::OPENCL => DeviceType::OpenCl,
        DLDeviceType::MAIA => DeviceType::Maia,
        DLDeviceType::EXT_DEV => DeviceType::PrivateUse1,
        other => {
            return Err(InteropError::Device(format!(
                "Unsupported DLPack device type {}: there is no device for it here",
                other.name()
            )))
        }
    };
    let index = i8::try_from(d.device_id).map_err(|_| {
        InteropError::Device(format!(
            "DLPack device id {} of {} does not fit a device index (0..=127)",
            d.device_id,
            d.device_type.name()
        ))
    })?;
    if index < 0 {
        return Err(InteropError::Device(format!(
            "DLPack device id {} of {} is negative",
            d.device_id,
            d.device_type.name()
        )));
    }
    Ok(Device::new(ty, index))
}

// ---------------------------------------------------------------------------
// export

/// What an exported managed tensor owns besides the struct itself.
struct ExportParts {
    /// Keeps the storage (and the tensor's geometry) alive.
    _tensor: Tensor,
    /// Keeps the buffer in place until the consumer calls the deleter:
    /// `resize_`, `Storage::reset` and `set_data_ptr` refuse meanwhile.
    _pin: BufferPin,
    /// Pointed to by `dl_tensor.shape`; never resized after export.
    shape: Vec<i64>,
    /// Pointed to by `dl_tensor.strides`; never resized after export.
    strides: Vec<i64>,
}

/// The classic export: the `DLManagedTensor` first (so a pointer to the
/// holder is a pointer to it), then what it owns.
#[repr(C)]
struct ClassicHolder {
    managed: DLManagedTensor,
    parts: ExportParts,
}

/// The versioned export, laid out like [`ClassicHolder`].
#[repr(C)]
struct VersionedHolder {
    managed: DLManagedTensorVersioned,
    parts: ExportParts,
}

/// Builds the `DLTensor` (with null shape and strides, filled in once the
/// holder has its final address) and the parts it will own.
fn prepare_export(t: &Tensor) -> Result<(DLTensor, ExportParts)> {
    // DLPack has no conjugate flag: PyTorch refuses rather than hand out
    // values that are not the ones the tensor shows. (A negative view is
    // exported with its stored values, as PyTorch 2.15 does.)
    if t.is_conj() {
        return Err(InteropError::Layout(
            "Can't export tensors with the conjugate bit set".into(),
        ));
    }
    let dtype = dtype_to_dlpack(t.dtype())?;
    let device = device_to_dlpack(t.device())?;
    let ndim = i32::try_from(t.dim()).map_err(|_| {
        InteropError::Layout(format!(
            "a tensor with {} dims cannot be exported to DLPack",
            t.dim()
        ))
    })?;
    // The base address through a guard, after checking (as every guard
    // does) that the layout still fits the storage, and the pin taken under
    // that same guard, so no resize can slip in between; then the guard
    // goes: from here on the consumer's accesses are outside the lock
    // (module docs), and the pin alone keeps the buffer where it is.
    let guard = t.storage().read()?;
    if let Some((lo, hi)) = element_offset_range(t.sizes(), t.strides(), t.storage_offset()) {
        let itemsize = t.element_size() as i128;
        if lo < 0 || (hi + 1) * itemsize > guard.nbytes() as i128 {
            return Err(InteropError::Layout(format!(
                "tensor with sizes {}, strides {} and storage offset {} does not fit in its storage of {} bytes (was the storage shrunk?)",
                fmt_list(t.sizes()),
                fmt_list(t.strides()),
                t.storage_offset(),
                guard.nbytes()
            )));
        }
    }
    let pin = guard.pin();
    let base = guard.as_ptr().cast_mut();
    drop(guard);
    let offset_bytes = (t.storage_offset() as usize).wrapping_mul(t.element_size());
    let data = if base.is_null() {
        ptr::null_mut()
    } else {
        base.wrapping_add(offset_bytes)
    };
    let dl = DLTensor {
        data: data.cast(),
        device,
        ndim,
        dtype,
        shape: ptr::null_mut(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    let parts = ExportParts {
        _tensor: t.clone(),
        _pin: pin,
        shape: t.sizes().to_vec(),
        strides: t.strides().to_vec(),
    };
    Ok((dl, parts))
}

/// Exports `t` as a classic [`DLManagedTensor`], zero-copy.
///
/// The result owns a clone of `t` and its own shape and strides arrays; its
/// deleter (which the consumer must call exactly once) frees them. `data`
/// points at the first element, `byte_offset` is 0, strides are in
/// elements. The buffer is pinned until the deleter runs (see the module
/// docs).
///
/// Fails for dtypes and devices DLPack cannot describe, and for read-only
/// storages (a memory-mapped safetensors file, a read-only import): the
/// classic form cannot tell the consumer not to write; use
/// [`to_dlpack_versioned`], or clone the tensor first.
///
/// CUDA tensors map to `kDLCUDA` with their device index; the pointer is
/// the device pointer, never dereferenced here.
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::dlpack::{dtype_to_dlpack, from_dlpack, to_dlpack};
/// let t = Tensor::arange(0, 4, 1, ScalarType::Int)?;
/// let m = to_dlpack(&t)?;
/// // SAFETY: `m` is live until it is handed over below.
/// assert_eq!(unsafe { (*m).dl_tensor.dtype }, dtype_to_dlpack(ScalarType::Int)?);
/// assert!(t.storage().resize(0).is_err()); // pinned while exported
/// // SAFETY: a live export, handed over once.
/// drop(unsafe { from_dlpack(m) }?);
/// assert_eq!(t.storage().pin_count(), 0);
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub fn to_dlpack(t: &Tensor) -> Result<*mut DLManagedTensor> {
    if t.storage().is_read_only() {
        return Err(InteropError::Layout(
            "this tensor's storage is read-only and the classic DLManagedTensor cannot mark it so (a consumer could write to it); export it with to_dlpack_versioned, which sets DLPACK_FLAG_BITMASK_READ_ONLY, or clone the tensor first".into(),
        ));
    }
    let (dl_tensor, parts) = prepare_export(t)?;
    let holder = box_export(
        ClassicHolder {
            managed: DLManagedTensor {
                dl_tensor,
                manager_ctx: ptr::null_mut(),
                deleter: Some(delete_classic_export),
            },
            parts,
        },
        |h| {
            let m = &mut h.managed;
            (&mut m.dl_tensor, &mut m.manager_ctx, &mut h.parts)
        },
    );
    // `managed` is the first field of a `repr(C)` struct: same address.
    Ok(holder.cast())
}

/// Moves `holder` into a box and points the exported tensor's shape,
/// strides and manager context (`fields` picks them and the parts out of
/// the holder) at the box's contents, which stay at that address until
/// the deleter frees the box.
fn box_export<H>(
    holder: H,
    fields: impl FnOnce(&mut H) -> (&mut DLTensor, &mut *mut c_void, &mut ExportParts),
) -> *mut H {
    let holder = Box::into_raw(Box::new(holder));
    // SAFETY: `holder` comes from `Box::into_raw` just above: valid and
    // unaliased. The shape and strides vectors are never touched again until
    // the deleter drops them, so pointers to their buffers stay valid.
    let (dl_tensor, ctx, parts) = fields(unsafe { &mut *holder });
    dl_tensor.shape = parts.shape.as_mut_ptr();
    dl_tensor.strides = parts.strides.as_mut_ptr();
    *ctx = holder.cast();
    holder
}

/// Exports `t` as a versioned [`DLManagedTensorVersioned`] (DLPack 1.1),
/// zero-copy, as [`to_dlpack`] does; read-only storages are exported with
/// [`DLPACK_FLAG_BITMASK_READ_ONLY`] set instead of being refused.
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::dlpack::{from_dlpack_versioned, to_dlpack_versioned};
/// let t = Tensor::arange(0.0, 3.0, 1.0, ScalarType::Float)?;
/// let m = to_dlpack_versioned(&t)?;
/// // SAFETY: a live export, handed over once.
/// let back = unsafe { from_dlpack_versioned(m) }?;
/// assert_eq!(back.to_vec::<f32>()?, vec![0.0, 1.0, 2.0]);
/// assert_eq!(back.storage().data_addr()?, t.storage().data_addr()?); // zero-copy
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub fn to_dlpack_versioned(t: &Tensor) -> Result<*mut DLManagedTensorVersioned> {
    let flags = if t.storage().is_read_only() {
        DLPACK_FLAG_BITMASK_READ_ONLY
    } else {
        0
    };
    let (dl_tensor, parts) = prepare_export(t)?;
    let holder = box_export(
        VersionedHolder {
            managed: DLManagedTensorVersioned {
                version: DLPackVersion {
                    major: DLPACK_MAJOR_VERSION,
                    minor: DLPACK_MINOR_VERSION,
                },
                manager_ctx: ptr::null_mut(),
                deleter: Some(delete_versioned_export),
                flags,
                dl_tensor,
            },
            parts,
        },
        |h| {
            let m = &mut h.managed;
            (&mut m.dl_tensor, &mut m.manager_ctx, &mut h.parts)
        },
    );
    // `managed` is the first field of a `repr(C)` struct: same address.
    Ok(holder.cast())
}

/// The deleter of [`to_dlpack`]'s managed tensors: frees the holder (the
/// tensor clone, shape and strides) once.
///
/// # Safety
///
/// `managed` must come from [`to_dlpack`] and not have been deleted yet.
unsafe extern "C" fn delete_classic_export(managed: *mut DLManagedTensor) {
    if managed.is_null() {
        return;
    }
    // SAFETY: the caller passes a pointer from `to_dlpack`, i.e. the
    // `Box::into_raw` of a `ClassicHolder` (whose first field it is), not yet
    // freed.
    drop(unsafe { Box::from_raw(managed.cast::<ClassicHolder>()) });
}

/// The deleter of [`to_dlpack_versioned`]'s managed tensors.
///
/// # Safety
///
/// `managed` must come from [`to_dlpack_versioned`] and not have been
/// deleted yet.
unsafe extern "C" fn delete_versioned_export(managed: *mut DLManagedTensorVersioned) {
    if managed.is_null() {
        return;
    }
    // SAFETY: as in `delete_classic_export`, for a `VersionedHolder`.
    drop(unsafe { Box::from_raw(managed.cast::<VersionedHolder>()) });
}

// ---------------------------------------------------------------------------
// import

/// The `DataPtr` deleter of tensors imported with [`from_dlpack`]: calls
/// the producer's deleter on the managed tensor (once, as `DataPtr`
/// guarantees). Non-generic and `#[inline(never)]` so that
/// `DataPtr::cast_context` can recognise it.
///
/// # Safety
///
/// `ctx` must be a live `DLManagedTensor` whose ownership was handed to
/// [`from_dlpack`].
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::dlpack::{release_dlpack, to_dlpack};
/// let t = Tensor::arange(0, 3, 1, ScalarType::Long)?;
/// let m = to_dlpack(&t)?;
/// // SAFETY: `m` is a live export that nobody imported; released once.
/// unsafe { release_dlpack(m.cast()) };
/// assert_eq!(t.storage().pin_count(), 0); // the export is gone
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
#[inline(never)]
pub unsafe fn release_dlpack(ctx: *mut c_void) {
    let managed = ctx.cast::<DLManagedTensor>();
    // SAFETY: `from_dlpack`'s contract: `managed` is live and ours to release.
    if let Some(deleter) = unsafe { (*managed).deleter } {
        // SAFETY: the producer's deleter, called once on its own tensor.
        unsafe { deleter(managed) }
    }
}

/// The `DataPtr` deleter of tensors imported with
/// [`from_dlpack_versioned`]; see [`release_dlpack`].
///
/// # Safety
///
/// `ctx` must be a live `DLManagedTensorVersioned` whose ownership was
/// handed to [`from_dlpack_versioned`].
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::dlpack::{release_dlpack_versioned, to_dlpack_versioned};
/// let t = Tensor::arange(0, 3, 1, ScalarType::Long)?;
/// let m = to_dlpack_versioned(&t)?;
/// // SAFETY: `m` is a live export that nobody imported; released once.
/// unsafe { release_dlpack_versioned(m.cast()) };
/// assert_eq!(t.storage().pin_count(), 0); // the export is gone
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
#[inline(never)]
pub unsafe fn release_dlpack_versioned(ctx: *mut c_void) {
    let managed = ctx.cast::<DLManagedTensorVersioned>();
    // SAFETY: as in `release_dlpack`.
    if let Some(deleter) = unsafe { (*managed).deleter } {
        // SAFETY: as in `release_dlpack`.
        unsafe { deleter(managed) }
    }
}

/// A checked description of a `DLTensor`, made before taking ownership.
struct ImportPlan {
    dtype: ScalarType,
    device: Device,
    sizes: Vec<i64>,
    strides: Vec<i64>,
    first: *mut u8,
    nbytes: usize,
}

/// Reads and checks a `DLTensor`.
///
/// # Safety
///
/// `dl.shape` (and `dl.strides`, when non-null) must point to `dl.ndim`
/// readable `i64`s.
unsafe fn plan_import(dl: &DLTensor) -> Result<ImportPlan> {
    let dtype = dtype_from_dlpack(dl.dtype)?;
    let device = device_from_dlpack(dl.device)?;
    let ndim = usize::try_from(dl.ndim)
        .map_err(|_| InteropError::Format(format!("DLTensor has a negative ndim ({})", dl.ndim)))?;
    let sizes: Vec<i64> = if ndim == 0 {
        Vec::new()
    } else if dl.shape.is_null() {
        return Err(InteropError::Format(format!(
            "DLTensor has ndim {ndim} but a null shape pointer"
        )));
    } else {
        // SAFETY: the caller guarantees `ndim` readable i64s at `shape`.
        unsafe { std::slice::from_raw_parts(dl.shape, ndim) }.to_vec()
    };
    if let Some(&bad) = sizes.iter().find(|&&s| s < 0) {
        return Err(InteropError::Format(format!(
            "DLTensor has a negative size {bad} in shape {}",
            fmt_list(&sizes)
        )));
    }
    let strides: Vec<i64> = if ndim == 0 || dl.strides.is_null() {
        contiguous_strides(&sizes)?.to_vec()
    } else {
        // SAFETY: as for the shape.
        unsafe { std::slice::from_raw_parts(dl.strides, ndim) }.to_vec()
    };
    if strides.iter().any(|&s| s < 0) {
        return Err(InteropError::Layout(format!(
            "DLTensor has negative strides {} (shape {}), which tensors here cannot express; make it non-negative on the producer side (e.g. .copy() / .contiguous()) first",
            fmt_list(&strides),
            fmt_list(&sizes)
        )));
    }
    let nbytes = storage_nbytes(&sizes, &strides, dtype.itemsize(), 0)?;
    let offset = usize::try_from(dl.byte_offset).map_err(|_| {
        InteropError::Format(format!(
            "DLTensor byte_offset {} does not fit in memory",
            dl.byte_offset
        ))
    })?;
    if nbytes > 0 && dl.data.is_null() {
        return Err(InteropError::Format(format!(
            "DLTensor of shape {} has a null data pointer",
            fmt_list(&sizes)
        )));
    }
    // The storage will span `[data + byte_offset, data + byte_offset +
    // nbytes)` (strides are non-negative here, so the layout's extent lies
    // above its first element). Checked address arithmetic: a hostile
    // `byte_offset` (u64::MAX) used to wrap the pointer to just before the
    // buffer and pass; now every address of the span must exist without
    // wrapping, and the span (from `data`) must be at most `isize::MAX`
    // bytes, the most one Rust object can be.
    let span_fits = offset
        .checked_add(nbytes)
        .filter(|&n| isize::try_from(n).is_ok())
        .and_then(|n| dl.data.addr().checked_add(n))
        .is_some();
    if !span_fits {
        return Err(InteropError::Layout(format!(
            "DLTensor byte_offset {} plus the {nbytes} bytes its layout reaches (shape {}, strides {}) overflows the address space from data pointer {:p}",
            dl.byte_offset,
            fmt_list(&sizes),
            fmt_list(&strides),
            dl.data
        )));
    }
    let first = dl.data.cast::<u8>().wrapping_add(offset);
    Ok(ImportPlan {
        dtype,
        device,
        sizes,
        strides,
        first,
        nbytes,
    })
}

/// Builds the tensor of a checked plan over a storage that does not own its
/// memory yet, then hands the storage `owner` (the last, infallible step).
///
/// # Safety
///
/// `plan.first` must satisfy [`Storage::from_data_ptr`]'s contract for
/// `plan.nbytes` bytes on `plan.device` for as long as `owner` is not
/// dropped (read-only memory only when `read_only`), and `owner` must be a
/// `DataPtr` over `plan.first` on `plan.device`.
unsafe fn build_import(plan: ImportPlan, read_only: bool, owner: DataPtr) -> Result<Tensor> {
    // Everything that can fail happens while the storage borrows the
    // memory: on error, `owner` is released with `release_context` below and
    // the caller keeps ownership of the managed tensor.
    let built = (|| -> Result<Tensor> {
        let borrowed = DataPtr::non_owning(plan.first, plan.device);
        // SAFETY: forwarded to the caller (this function's contract).
        let mut storage = unsafe { Storage::from_data_ptr(borrowed, plan.nbytes, None, false) }?;
        if read_only {
            storage = storage
                .into_read_only("imported through DLPack with DLPACK_FLAG_BITMASK_READ_ONLY")
                .map_err(|_| {
                    InteropError::Format("a fresh storage was unexpectedly shared".into())
                })?;
        }
        Ok(Tensor::from_storage(
            storage,
            plan.dtype,
            &plan.sizes,
            &plan.strides,
            0,
        )?)
    })();
    match built {
        Ok(t) => {
            // SAFETY: `owner` points at the same memory on the same device as
            // the non-owning pointer it replaces (caller's contract).
            let old = unsafe { t.storage().set_data_ptr(owner) }?;
            drop(old); // non-owning: frees nothing
            Ok(t)
        }
        Err(e) => {
            let mut owner = owner;
            // Give ownership back: the deleter must not run.
            let _ctx = owner.release_context();
            Err(e)
        }
    }
}

/// Imports a classic [`DLManagedTensor`] (for example from
/// `torch.utils.dlpack.to_dlpack`) as a tensor, zero-copy.
///
/// The tensor's storage owns the managed tensor: when the last tensor
/// viewing it is dropped, the producer's deleter is called exactly once
/// (from whichever thread drops it). Its storage starts at the first
/// element (`data + byte_offset`), spans exactly the bytes the layout
/// reaches, and is not resizable.
///
/// On `Err`, ownership is **not** taken: the caller still owns the managed
/// tensor and must release it (call its deleter, or leave a Python capsule
/// unconsumed so that its destructor does).
///
/// # Errors
///
/// Null pointers (with elements), negative `ndim` or sizes, negative
/// strides, vector types (`lanes != 1`), dtypes or devices without a
/// counterpart here (see [`dtype_from_dlpack`], [`device_from_dlpack`]),
/// a layout whose byte extent overflows, and a `byte_offset` that, with the
/// extent, runs past the end of the address space or past `isize::MAX`
/// bytes from `data` (checked, never wrapped).
///
/// # Safety
///
/// * `managed` must be null or point to a valid `DLManagedTensor` whose
///   ownership the caller hands over (on success) exactly once;
/// * its `shape` (and `strides`, if non-null) must hold `ndim` values, and
///   `data + byte_offset` must be valid for reads and writes of every
///   element of the layout, on its device, until the deleter is called;
/// * on the CPU those bytes must be initialised (Rust reads them as plain
///   bytes; PyTorch's `torch.empty` memory is not, until written);
/// * nothing may access the memory concurrently with guards of the
///   returned tensor (the producer keeps its own view of the memory;
///   accesses on the two sides must be ordered by the program);
/// * the deleter (if any) must be sound to call from any thread.
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::dlpack::{from_dlpack, to_dlpack};
/// let t = Tensor::arange(0, 3, 1, ScalarType::Long)?;
/// // SAFETY: a live export, handed over once.
/// let back = unsafe { from_dlpack(to_dlpack(&t)?) }?;
/// assert_eq!(back.to_vec::<i64>()?, vec![0, 1, 2]);
/// // SAFETY: a null pointer is refused without being read.
/// assert!(unsafe { from_dlpack(std::ptr::null_mut()) }.is_err());
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub unsafe fn from_dlpack(managed: *mut DLManagedTensor) -> Result<Tensor> {
    if managed.is_null() {
        return Err(InteropError::Format(
            "from_dlpack: the DLManagedTensor pointer is null".into(),
        ));
    }
    // SAFETY: non-null and valid by the caller's contract.
    let dl = unsafe { (*managed).dl_tensor };
    // SAFETY: shape/strides validity is the caller's contract.
    let plan = unsafe { plan_import(&dl) }?;
    // SAFETY: `release_dlpack(managed)` calls the producer's deleter, which
    // the caller lets us call once, from any thread.
    let owner =
        unsafe { DataPtr::from_raw_parts(plan.first, managed.cast(), release_dlpack, plan.device) };
    // SAFETY: the memory contract is the caller's (see above); `owner`
    // points at `plan.first` on `plan.device`.
    unsafe { build_import(plan, false, owner) }
}

/// Imports a versioned [`DLManagedTensorVersioned`] (DLPack 1.x, for
/// example from `tensor.__dlpack__(max_version=(1, 0))`), as
/// [`from_dlpack`] does. [`DLPACK_FLAG_BITMASK_READ_ONLY`] gives a
/// read-only storage (writes fail with an error that says to clone first).
///
/// A major version other than [`DLPACK_MAJOR_VERSION`] is refused without
/// reading anything else; as for every error, the caller keeps ownership
/// and must call the deleter (which the DLPack spec says is safe).
///
/// # Safety
///
/// As for [`from_dlpack`].
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::dlpack::*;
/// let m = to_dlpack_versioned(&Tensor::arange(0, 3, 1, ScalarType::Long)?)?;
/// // SAFETY: `m` is live; marking it read-only only restricts the consumer.
/// unsafe { (*m).flags |= DLPACK_FLAG_BITMASK_READ_ONLY };
/// // SAFETY: a live export, handed over once.
/// let t = unsafe { from_dlpack_versioned(m) }?;
/// assert!(t.storage().is_read_only() && t.set::<i64>(&[0], 7).is_err());
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub unsafe fn from_dlpack_versioned(managed: *mut DLManagedTensorVersioned) -> Result<Tensor> {
    if managed.is_null() {
        return Err(InteropError::Format(
            "from_dlpack_versioned: the DLManagedTensorVersioned pointer is null".into(),
        ));
    }
    // SAFETY: non-null and valid by the caller's contract; the version is
    // at the same place in every major version.
    let version = unsafe { (*managed).version };
    if version.major != DLPACK_MAJOR_VERSION {
        return Err(InteropError::Format(format!(
            "unsupported DLPack version {}.{}: only major version {DLPACK_MAJOR_VERSION} is understood; call the tensor's deleter and ask the producer for an older version",
            version.major, version.minor
        )));
    }
    // SAFETY: major version 1: the layout of `DLManagedTensorVersioned`.
    let (dl, flags) = unsafe { ((*managed).dl_tensor, (*managed).flags) };
    // SAFETY: as in `from_dlpack`.
    let plan = unsafe { plan_import(&dl) }?;
    // SAFETY: as in `from_dlpack`, with the versioned deleter.
    let owner = unsafe {
        DataPtr::from_raw_parts(
            plan.first,
            managed.cast(),
            release_dlpack_versioned,
            plan.device,
        )
    };
    let read_only = flags & DLPACK_FLAG_BITMASK_READ_ONLY != 0;
    // SAFETY: as in `from_dlpack`; a read-only flag makes the storage
    // refuse writes, so read-only memory is never written through it.
    unsafe { build_import(plan, read_only, owner) }
}

mod display;
#[cfg(test)]
mod tests;
