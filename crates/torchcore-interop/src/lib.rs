//! # torchcore-interop
//!
//! Tensors in and out of torchcore without copying:
//!
//! | module | feature | what |
//! |---|---|---|
//! | [`dlpack`] | always | DLPack export and import (classic and versioned 1.x): PyTorch, JAX, CuPy, NumPy |
//! | `ndarray` | `ndarray` | `ArrayViewD`/`ArrayViewMutD` of a tensor under its storage guard; tensors from `ndarray` arrays |
//! | `safetensors` | `safetensors` | `load` a `.safetensors` file into one writable storage (every tensor a view of it), or `unsafe load_mmap` it as views of one read-only memory map; save tensors of any layout |
//!
//! Everything keeps the workspace's soundness model (see
//! `docs/ARCHITECTURE.md`): bytes are reached through storage guards,
//! foreign memory enters as a `DataPtr` whose deleter runs exactly once,
//! and read-only memory (a mapped file, a DLPack tensor flagged read-only)
//! becomes a read-only storage whose writes fail with an error that says to
//! clone first. Where a raw pointer must leave Rust (DLPack export), the
//! limits of what can be enforced are documented in [`dlpack`].
//!
//! The guide, with the design decisions (own DLPack ABI structs rather than
//! `dlpark`, the reference `safetensors` crate for the file format), is
//! `docs/interop.md`; `cargo xtask interop` proves the DLPack and
//! safetensors round trips against a real PyTorch.
//!
//! ```
//! use c10_core::{ScalarType, Tensor};
//! use torchcore_interop::dlpack;
//!
//! let t = Tensor::arange(0.0, 4.0, 1.0, ScalarType::Float)?;
//! let capsule = dlpack::to_dlpack(&t)?; // hand this to a consumer
//! // SAFETY: a live export, handed over once.
//! let shared = unsafe { dlpack::from_dlpack(capsule) }?;
//! assert!(shared.to_vec::<f32>()? == t.to_vec::<f32>()?);
//! # Ok::<(), torchcore_interop::InteropError>(())
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod dlpack;
mod error;
#[cfg(feature = "ndarray")]
#[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
pub mod ndarray;
#[cfg(feature = "safetensors")]
#[cfg_attr(docsrs, doc(cfg(feature = "safetensors")))]
pub mod safetensors;

pub use error::{InteropError, Result};

/// `docs/interop.md`: its Rust snippets are compiled (and, where they need
/// no files, run) as doctests of this crate, so the guide cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/interop.md")]
pub struct InteropGuide;

/// This crate's `README.md`: its example is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadme;
