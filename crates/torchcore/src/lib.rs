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
//! | [`caching`] | `alloc-cuda` | PyTorch's CUDA caching allocator algorithm, runnable on any machine with its simulated device (`FakeDevice`) |
//! | `cuda` | `alloc-cuda` | the CUDA backend (feature `cuda`): `torchcore::cuda::init()`, allocators, `to_device`; see `docs/cuda.md` |
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

#![cfg_attr(docsrs, feature(doc_cfg))]

#[doc(inline)]
pub use alloc_cpu as cpu;
/// PyTorch's CUDA caching allocator algorithm (`CachingAllocator`), with
/// its simulated device (`FakeDevice`) so it runs on any machine; the real
/// backend is the `cuda` module (feature `cuda`).
///
/// ```
/// use torchcore::caching::{CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
/// let cache = CachingAllocator::new(FakeDevice::new(1 << 30), 0, CachingAllocatorConfig::default());
/// let p = cache.malloc(300, StreamId::DEFAULT)?;
/// assert_eq!(cache.device().counters().malloc_calls, 1);
/// // SAFETY: nothing uses `p` any more.
/// unsafe { cache.free(p)? };
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[doc(inline)]
pub use alloc_cuda as caching;
#[doc(inline)]
pub use aten_shape as shape;
#[doc(inline)]
pub use c10_core as core;
#[doc(inline)]
pub use c10_storage as storage;
/// Zero-copy interop: DLPack, and with their features `ndarray` views and
/// `safetensors` files (see `docs/interop.md`).
#[cfg(feature = "dlpack")]
#[cfg_attr(docsrs, doc(cfg(feature = "dlpack")))]
#[doc(inline)]
pub use torchcore_interop as interop;

/// The CUDA backend (feature `cuda`; see `docs/cuda.md`): everything in
/// `alloc_cuda::cuda`. Call [`cuda::init()`] once; it returns
/// `CUDA is not available: ...` on machines without a driver or GPU.
///
/// ```no_run
/// use torchcore::prelude::*;
/// torchcore::cuda::init()?;
/// let x = Tensor::arange(0, 6, 1, ScalarType::Float)?;
/// let g = torchcore::cuda::to_device(&x, Device::cuda(0))?;
/// let back = torchcore::cuda::to_device(&g.t()?.contiguous()?, Device::CPU)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "cuda")]
#[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
pub mod cuda {
    /// The caching allocator crate (the algorithm, its configuration and
    /// statistics, the fake device).
    pub use alloc_cuda as caching;
    pub use alloc_cuda::cuda::*;
}

/// The types and traits most programs need: the tensor type, options,
/// dtypes, devices, errors and their [`ErrorKind`](c10_core::ErrorKind),
/// every shape op as a method, and the [`s!`](aten_shape::s) indexing macro.
///
/// ```
/// use torchcore::prelude::*;
/// let x = Tensor::arange(0, 12, 1, ScalarType::Long)?.view(&[3, 4])?;
/// assert_eq!(x.i(s![1.., 2])?.to_vec::<i64>()?, vec![6, 10]); // x[1:, 2]
/// let err = x.select(0, 3).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Index);
/// # Ok::<(), TensorError>(())
/// ```
pub mod prelude {
    pub use aten_shape::prelude::*;
    pub use aten_shape::s;
    pub use c10_core::tensor;
    pub use c10_core::{
        Device, DeviceType, Element, InferenceMode, MemoryFormat, Scalar, ScalarType, Storage,
        Tensor, TensorError, TensorOptions,
    };
    pub use c10_core::{ErrorKind, ShapeErrorKind};
}

/// `docs/cuda.md`: its Rust snippet is compiled (not run: it needs a GPU)
/// as a doctest with the `cuda` feature (`cargo xtask ci` runs
/// `cargo test -p torchcore --features cuda --doc`).
#[cfg(all(doctest, feature = "cuda"))]
#[doc = include_str!("../../../docs/cuda.md")]
pub struct CudaGuide;

/// `README.md`: its Rust example (handing a tensor to `ndarray`) is
/// compiled and run as a doctest (the dev-dependency on
/// `torchcore-interop` turns its `ndarray` feature on for tests).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeExamples;

/// This crate's `README.md`: its example is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadme;
