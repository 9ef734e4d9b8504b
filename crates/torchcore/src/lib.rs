//! # torchcore
//!
//! PyTorch's tensor core in Rust, in one dependency. This crate re-exports
//! the workspace's layers:
//!
//! | module | crate | what |
//! |---|---|---|
//! | [`storage`] | `c10-storage` | `Device`, `DataPtr`, the `Allocator` trait and registry, `Storage` |
//! | [`cpu`] | `alloc-cpu` | the default CPU allocator, memory-mapped storages |
//! | [`core`] | `c10-core` | `Tensor`, `TensorImpl`, dtypes, dispatch keys, factories |
//! | [`shape`] | `aten-shape` | every view op, `reshape`, `contiguous`, `clone`, `copy_` |
//! | `interop` | `torchcore-interop` | DLPack (feature `dlpack`, on by default), `ndarray` and `safetensors` (features of the same names) |
//!
//! `use torchcore::prelude::*;` brings the tensor type, options, dtypes,
//! devices and every shape op (as methods) into scope.
//!
//! ```
//! use torchcore::prelude::*;
//! let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
//! let v = a.as_strided(&[3, 4], &[4, 1], None)?;
//! v.set::<i64>(&[1, 1], 99)?;
//! assert_eq!(a.get::<i64>(&[5])?, 99);
//! # Ok::<(), TensorError>(())
//! ```
//!
//! Run the guided tour: `cargo run --example tour`.

pub use alloc_cpu as cpu;
pub use aten_shape as shape;
pub use c10_core as core;
pub use c10_storage as storage;
/// Zero-copy interop: DLPack, and with their features `ndarray` views and
/// `safetensors` files (see `docs/interop.md`).
#[cfg(feature = "dlpack")]
pub use torchcore_interop as interop;

/// The types and traits most programs need.
pub mod prelude {
    pub use aten_shape::prelude::*;
    pub use c10_core::{
        Device, DeviceType, Element, InferenceMode, MemoryFormat, Scalar, ScalarType, Storage,
        Tensor, TensorError, TensorOptions,
    };
}
