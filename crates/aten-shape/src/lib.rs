//! # aten-shape
//!
//! ATen's shape layer over [`c10_core`]'s tensors: every view op with
//! PyTorch's exact geometry and errors, `reshape`, and the strided copy
//! engine behind `contiguous`, `clone` and `copy_`.
//!
//! ## Views and copies
//!
//! A **view** is a new `TensorImpl` over the *same* storage: it allocates
//! one object and copies no data, and a write through it is seen by the
//! base and every other view (PyTorch's aliasing). `view`, `as_strided`,
//! `transpose`/`t`/`permute`/`movedim`, `narrow`/`slice`/`select`,
//! `expand`, `squeeze`/`unsqueeze`, `unflatten`, `diagonal`, `unfold`,
//! `split`/`chunk`/`unbind`, `alias` and `detach` are always views (or an
//! error). A **copy** gets a new storage: `clone`, `contiguous` of a
//! non-contiguous tensor, and `reshape`/`flatten` when the strides do not
//! allow a view. `contiguous` of a tensor that already is contiguous
//! returns the same handle, as PyTorch returns `self`.
//!
//! `view` never copies: it fails when the strides cannot express the new
//! shape (PyTorch's `view size is not compatible with input tensor's size
//! and stride ...`); `reshape` is `view` when possible and a copy
//! otherwise.
//!
//! ```
//! use aten_shape::prelude::*;
//! use c10_core::ScalarType;
//!
//! let m = Tensor::arange(0.0, 6.0, 1.0, ScalarType::Float)?.view(&[2, 3])?;
//! let t = m.t()?; // a view: same storage, strides swapped
//! assert!(t.is_alias_of(&m) && t.strides() == [1, 3]);
//! assert!(t.view(&[6]).is_err()); // the strides do not allow it
//! let flat = t.reshape(&[6])?; // so reshape copies
//! assert!(!flat.is_alias_of(&m));
//! assert_eq!(flat.to_vec::<f32>()?, vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
//! t.narrow(0, 1, 1)?.fill_(9.0)?; // writes through a view land in `m`
//! assert_eq!(m.to_vec::<f32>()?, vec![0.0, 9.0, 2.0, 3.0, 9.0, 5.0]);
//! # Ok::<(), c10_core::TensorError>(())
//! ```
//!
//! ## Memory formats
//!
//! `contiguous_in(MemoryFormat::ChannelsLast)` (and `clone_in`,
//! `empty_like`) lay a 4-d tensor out as NHWC (strides `[HWC, 1, WC, C]`);
//! `MemoryFormat::Preserve` keeps the input's stride order when it is
//! non-overlapping and dense, as PyTorch's `clone()` does.
//!
//! ## Where things are
//!
//! * [`views`]: the view ops, as free functions and as methods through
//!   [`ViewOps`](views::ViewOps) (in the [`prelude`]).
//! * [`indexing`]: Python's basic indexing (`t[1, ..., None, 2:8:2]`) as
//!   views, written with the [`s!`] macro, and indexed assignment, through
//!   [`IndexOps`](indexing::IndexOps).
//! * [`infer`]: `infer_size` (`-1` in a shape), `computeStride` (can this
//!   shape be a view?), `inferExpandGeometry`, broadcasting.
//! * [`copy`]: `contiguous`, `clone`, `empty_like`, `copy_` (broadcasting,
//!   dtype conversion, overlap checks) through [`CopyOps`](copy::CopyOps).
//!   The engine coalesces dims, orders the loops by the destination's
//!   strides, turns contiguous runs into `memcpy` and transposes into a
//!   cache-blocked kernel, and splits copies of at least
//!   [`PARALLEL_MIN_BYTES`](copy::PARALLEL_MIN_BYTES) over rayon's pool.
//!   A destination that is every byte of a lazily initialised storage
//!   (`Tensor::empty`) is written without the storage's zero fill.
//! * [`join`]: `cat` and `stack` (copying, with dtype promotion through
//!   [`promote`]'s `promote_types`/`result_type`).
//! * [`convert`]: [`DtypeOps`](convert::DtypeOps) (in the [`prelude`]):
//!   `t.to(ScalarType)`. `cat` and `stack` are functions only (as
//!   `torch.cat`/`torch.stack`), in the [`prelude`].
//!
//! Every op is a free function (`views::transpose(&t, 0, 1)`, like
//! `torch.transpose`) and a method through a sealed extension trait in the
//! [`prelude`] (`t.transpose(0, 1)`, like `Tensor.transpose`); the traits
//! are implemented for `Tensor` only.

pub mod compare;
pub mod convert;
pub mod copy;
pub mod generic;
pub mod indexing;
pub mod infer;
pub mod join;
mod ops;
pub mod promote;
pub mod views;

/// The extension traits of this crate ([`ViewOps`](views::ViewOps),
/// [`CopyOps`](copy::CopyOps), [`IndexOps`](indexing::IndexOps),
/// [`DtypeOps`](convert::DtypeOps)) are sealed: they add PyTorch's
/// tensor methods to [`Tensor`](c10_core::Tensor), and an implementation
/// for another type would mean nothing to the free functions behind them.
mod sealed {
    pub trait Sealed {}
    impl Sealed for c10_core::Tensor {}
}

/// Everything needed to call the shape ops as methods on `Tensor`.
pub mod prelude {
    pub use crate::compare::CompareOps;
    pub use crate::convert::DtypeOps;
    pub use crate::copy::CopyOps;
    pub use crate::indexing::{IndexOps, TensorIndex};
    pub use crate::join::{cat, stack};
    pub use crate::views::ViewOps;
    pub use c10_core::shape_arg::{IntoShape, IntoSliceBound, IntoSymInt};
    pub use c10_core::{MemoryFormat, Tensor};
}

/// This crate's `README.md`: its example is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadme;
