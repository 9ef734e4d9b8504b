//! # c10-core
//!
//! PyTorch's c10 tensor object model in Rust: a cheap handle ([`Tensor`])
//! to metadata ([`TensorImpl`]) over bytes ([`Storage`], from
//! `c10-storage`). Element `(i0, i1, ...)` of a tensor lives at byte
//!
//! ```text
//! data_ptr + (storage_offset + Σ i_k · stride_k) · itemsize
//! ```
//!
//! of its storage. A view (built by `aten-shape`, or here with
//! [`Tensor::as_strided`]) is a new `TensorImpl` over the same storage, so a
//! write through any view shows in every other one.
//!
//! ## What is here
//!
//! * dtypes: [`ScalarType`] (c10's list and numbering), [`TypeMeta`], and
//!   [`Element`], which maps Rust types (including `half::f16`/`bf16`) to
//!   scalar types;
//! * [`SizesAndStrides`]: up to 5 dims inline (no heap), heap beyond;
//! * [`DispatchKey`], [`BackendComponent`], [`DispatchKeySet`]: c10's 64-bit
//!   key-set layout and the key set a new tensor gets;
//! * [`VersionCounter`] and [`InferenceMode`];
//! * [`TensorImpl`] with c10's cached contiguity flags, and the [`Tensor`]
//!   handle (clone = one atomic increment);
//! * factories ([`Tensor::empty`], [`Tensor::zeros`], [`Tensor::arange`],
//!   [`Tensor::from_vec`], ...), conversions from `Vec`s and nested arrays
//!   and back ([`convert`]: `Tensor::from([[1i64, 2], [3, 4]])`), typed element access ([`Tensor::get`],
//!   [`Tensor::read`], [`Tensor::write`]), and printing (`Display` like
//!   `print(tensor)`, [`Tensor::explain`]);
//! * the copy-on-write hook [`Tensor::edit_metadata`] through which the op
//!   crate (`aten-shape`) implements the in-place metadata ops (`t_`,
//!   `resize_`, `set_`, ...). The op rules (every view op's geometry,
//!   `infer_size`, `computeStride`, `inferExpandGeometry`) live there too;
//!   c10-core keeps the data model and its own rules (contiguity and
//!   layout flags, generic over `SymInt` in [`sym::rules`]).
//!
//! ## Soundness
//!
//! Bytes are reached only through the storage's guards: [`Tensor::read`]
//! takes the storage's shared lock, [`Tensor::write`] its exclusive lock and
//! bumps the version counter. Every guard re-checks that the layout lies
//! inside the storage, and typed slices are only handed out for contiguous,
//! aligned data. A `TensorImpl` shared by several handles is never mutated:
//! in-place metadata operations copy it first (see [`Tensor`] for how this
//! differs from PyTorch).
//!
//! ```
//! use c10_core::{Tensor, ScalarType};
//! let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
//! let v = a.as_strided(&[3, 4], &[4, 1], None)?;
//! v.set::<i64>(&[1, 1], 99)?;
//! assert_eq!(a.get::<i64>(&[5])?, 99);
//! assert_eq!(a.version()?, 1); // the base and its view share the counter
//! # Ok::<(), c10_core::TensorError>(())
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod access;
pub mod autograd;
pub mod binding;
pub mod compare;
mod conj_neg;
pub mod convert;
pub mod device_ops;
pub mod dispatch_key;
pub mod error;
mod explain;
mod extra_meta;
pub mod factories;
pub mod from_impls;
pub mod geometry;
mod impl_arc;
pub mod iter;
pub mod options;
pub mod printing;
mod ranges;
pub mod scalar;
pub mod scalar_type;
#[cfg(feature = "serde")]
mod serde_impls;
pub mod shape_arg;
pub mod sizes_and_strides;
pub mod sym;
pub mod tensor;
pub mod tensor_impl;
pub mod version;

pub use access::{StridedOffsets, TensorReadGuard, TensorWriteGuard};
pub use autograd::{AutogradMeta, AutogradMetaInterface};
pub use c10_storage::{Device, DeviceType, Storage};
pub use device_ops::{device_ops, register_device_ops, DeviceOps};
pub use dispatch_key::{BackendComponent, DispatchKey, DispatchKeySet};
pub use error::{ErrorKind, Result, ShapeError, ShapeErrorKind, TensorError};

/// `half`, for [`dispatch_dtype!`]'s expansion (callers need not depend on
/// `half` themselves).
#[doc(hidden)]
pub use half as __half;
pub use options::{MemoryFormat, TensorOptions};
pub use scalar::Scalar;
pub use scalar_type::{Element, ScalarType, TypeMeta};
pub use shape_arg::{IntoShape, IntoSliceBound, IntoSymInt, Shape, SliceBound};
pub use sizes_and_strides::SizesAndStrides;
pub use tensor::Tensor;
pub use tensor_impl::{LayoutFlags, TensorImpl};
pub use version::{GradMode, InferenceMode, VersionCounter};

/// Runs `$body` with `$T` bound to the Rust element type of `$dtype`, or
/// `$otherwise` for dtypes without one (quantized, sub-byte, bit types).
///
/// The dtype → type pairs come from one table, [`__element_types!`]'s,
/// which also seals [`Element`](scalar_type::Element): adding an element
/// type is one line there.
///
/// ```
/// use c10_core::{dispatch_dtype, ScalarType};
/// let size = dispatch_dtype!(ScalarType::Double, T => std::mem::size_of::<T>(), { 0 });
/// assert_eq!(size, 8);
/// assert_eq!(dispatch_dtype!(ScalarType::QInt8, T => std::mem::size_of::<T>(), { 0 }), 0);
/// ```
#[macro_export]
macro_rules! dispatch_dtype {
    ($dtype:expr, $T:ident => $body:expr, $otherwise:block) => {
        $crate::__element_types! { @table dispatch (($dtype) $T ($body) $otherwise) }
    };
}

/// The table of element types: every `ScalarType` that has a Rust element
/// type, with that type, written once. `@table MODE ARGS` expands
/// `@MODE ARGS` followed by the table; the modes are `dispatch` (the arms
/// of [`dispatch_dtype!`]) and `seal` (the `Element` seal). Not an API:
/// use [`dispatch_dtype!`].
#[doc(hidden)]
#[macro_export]
macro_rules! __element_types {
    (@table $mode:ident $args:tt) => {
        $crate::__element_types! { @$mode $args
            Byte => u8,
            Char => i8,
            Short => i16,
            Int => i32,
            Long => i64,
            UInt16 => u16,
            UInt32 => u32,
            UInt64 => u64,
            Half => $crate::__half::f16,
            BFloat16 => $crate::__half::bf16,
            Float => f32,
            Double => f64,
            Bool => bool,
            ComplexHalf => $crate::scalar_type::Complex32,
            BComplex32 => $crate::scalar_type::BComplex32,
            ComplexFloat => $crate::scalar_type::Complex64,
            ComplexDouble => $crate::scalar_type::Complex128,
            Float8_e5m2 => $crate::scalar_type::Float8E5M2,
            Float8_e4m3fn => $crate::scalar_type::Float8E4M3fn,
            Float8_e5m2fnuz => $crate::scalar_type::Float8E5M2fnuz,
            Float8_e4m3fnuz => $crate::scalar_type::Float8E4M3fnuz,
            Float8_e8m0fnu => $crate::scalar_type::Float8E8M0fnu,
        }
    };
    (@dispatch (($dtype:expr) $T:ident ($body:expr) $otherwise:block) $($st:ident => $ty:ty,)*) => {{
        match $dtype {
            $(
                $crate::scalar_type::ScalarType::$st => {
                    type $T = $ty;
                    $body
                }
            )*
            _ => $otherwise,
        }
    }};
    (@seal () $($st:ident => $ty:ty,)*) => {
        $(impl sealed::Sealed for $ty {})*
    };
}

/// This crate's `README.md`: its example is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadme;
