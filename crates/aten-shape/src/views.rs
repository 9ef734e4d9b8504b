//! View ops with PyTorch's exact semantics: every op here returns a tensor
//! over the same storage as its input (sharing its version counter), with
//! the sizes, strides and storage offset PyTorch 2.15 gives, and fails with
//! PyTorch's error texts (`IndexError`s as [`TensorError::Index`](c10_core::TensorError::Index)).
//!
//! Each op exists twice: as a method of the [`ViewOps`] trait (implemented
//! for [`Tensor`]) and as a free function taking `&Tensor` first. The
//! in-place metadata ops (`t_`, `transpose_`, `swapaxes_`, `squeeze_`,
//! `unsqueeze_`, `as_strided_`, `resize_`, `set_`) take `&mut Tensor` and
//! are here too, next to `view_dtype`. Each op's code lives in its
//! family's module (with the rule it shares with the symbolic path); this
//! module is the public face. `as_strided` and `detach` are inherent
//! methods of [`Tensor`] ([`Tensor::as_strided`], [`Tensor::detach`]): the
//! data model's checked geometry constructor and alias.
//!
//! ```
//! use aten_shape::views::ViewOps;
//! use c10_core::{ScalarType, Tensor};
//! let x = Tensor::arange(0, 24, 1, ScalarType::Long)?.view(&[2, 3, 4])?;
//! let y = x.transpose(0, 2)?.select(1, 1)?; // sizes (4, 2), strides (1, 12), offset 4
//! assert_eq!((y.sizes(), y.strides(), y.storage_offset()), (&[4, 2][..], &[1, 12][..], 4));
//! assert!(y.is_alias_of(&x) && y.shares_version_counter_with(&x));
//! # Ok::<(), c10_core::TensorError>(())
//! ```
//!
//! **Dims** are `i64` and may be negative; they wrap with c10's
//! `maybe_wrap_dim` (0-dim tensors accept `0` and `-1`).
//!
//! **Sizes and indices take what you have.** A shape is any
//! [`IntoShape`]: `&[i64]`, `&[2, 3]`, `[2usize, 3]`, `Vec<usize>`,
//! `(2, 3)`, `-1` (a 1-d shape), or `SymInt`s; a size, index or offset
//! (`narrow`'s `start`/`length`, `select`'s `index`, `split`'s size,
//! `slice`'s bounds and step) is any [`IntoSymInt`] (`i64`, `i32`,
//! `usize`, ..., `SymInt`). `usize` values above `i64::MAX` are an error.
//!
//! ```
//! use aten_shape::views::ViewOps;
//! use c10_core::{ScalarType, Tensor};
//! let x = Tensor::arange(0, 24, 1, ScalarType::Long)?;
//! let dims: Vec<usize> = vec![2, 3, 4];
//! assert_eq!(x.view(&dims)?.sizes(), x.view((2, 3, 4))?.sizes());
//! assert_eq!(x.narrow(0, 2usize, 3usize)?.storage_offset(), 2);
//! # Ok::<(), c10_core::TensorError>(())
//! ```
//!
//! **Concrete and symbolic tensors alike.** On a tensor with symbolic
//! sizes (a fake tensor made with a [`ShapeEnv`](c10_core::sym::ShapeEnv),
//! e.g. [`Tensor::empty_symint`]), or with symbolic arguments, every op
//! here returns a symbolic view, recording in the `ShapeEnv` the guards
//! ATen's C++ records (the op's rule on [`Geometry<SymInt>`](crate::generic::Geometry)),
//! as PyTorch's ops do on fake tensors. The concrete path pays nothing
//! for this: the concrete face runs first, and a symbolic tensor makes it
//! fail in the view constructor before anything is built; only then is
//! the tensor's symbolic flag read and the symbolic face run. The
//! in-place ops and `view_dtype` stay concrete-only (an error on
//! symbolic sizes).
//!
//! ```
//! use aten_shape::views::ViewOps;
//! use c10_core::sym::ShapeEnv;
//! use c10_core::{Device, Tensor, TensorOptions};
//! let env = ShapeEnv::new();
//! let (a, b) = (env.create_symbol(4, "x.size(0)")?, env.create_symbol(6, "x.size(1)")?);
//! let x = Tensor::empty_symint(&[a.clone(), b.clone()], TensorOptions::new().device(Device::META))?;
//! let y = x.view(-1)?.narrow(0, 2, &b)?; // x.view(-1)[2 : 2 + s1]
//! assert!(y.is_alias_of(&x));
//! assert_eq!((y.sym_sizes()[0].to_string(), y.sym_storage_offset().to_string()), ("s1".into(), "2".into()));
//! let z = x.view((-1, 3))?; // decides that 3 divides s0*s1: a guard
//! assert!(z.has_symbolic_sizes_strides());
//! assert!(!env.guards().is_empty());
//! # Ok::<(), c10_core::TensorError>(())
//! ```
//!
//! **Cost.** Geometry is computed on the stack ([`DimVec`](crate::infer::DimVec)); a view op makes
//! exactly one heap allocation (its `TensorImpl`) for tensors of up to 5
//! dims. List-returning ops add the `Vec`.
//!
//! **Overflow.** Offsets and strides are computed in wrapping `i64`
//! arithmetic, exactly like PyTorch's C++. When nothing wraps, the new
//! geometry only reaches elements the input reaches, so it is installed
//! without a storage check ([`Tensor::view_with_geometry`]). When something
//! does wrap (possible only for zero-element tensors with absurd sizes, or
//! tensors made with huge strides), the geometry goes through the checked
//! [`Tensor::as_strided`] instead, which rejects negative strides or offsets
//! and anything outside the storage with PyTorch's messages, as PyTorch's
//! own `as_strided` call inside these ops does. No op panics.

use c10_core::{MemoryFormat, Result, ScalarType, Storage, Tensor};

pub use crate::infer::broadcast_shapes;
pub use crate::ops::alias;
// Each op lives with its family's rule in `crate::ops` (one module per
// family: the rule, the concrete, in-place and symbolic faces).
pub use crate::ops::as_strided::{as_strided, as_strided_};
pub use crate::ops::complex::{
    adjoint, conj, conj_physical, conj_view, h, imag, mh, neg_view, real, resolve_conj,
    resolve_neg, view_as_complex, view_as_real,
};
pub use crate::ops::diagonal::{diagonal, unfold};
pub use crate::ops::dtype_view::view_dtype;
pub use crate::ops::expand::{broadcast_tensors, broadcast_to, expand, expand_as};
pub use crate::ops::reshape::{flatten, ravel, reshape, reshape_as, unflatten, view, view_as};
#[allow(deprecated)]
pub use crate::ops::slice::index;
pub use crate::ops::slice::{index_ints, narrow, select, slice};
pub use crate::ops::split::{
    chunk, split, split_with_sizes, tensor_split, tensor_split_indices, unbind,
};
pub use crate::ops::split::{
    dsplit, dsplit_indices, hsplit, hsplit_indices, vsplit, vsplit_indices,
};
pub use crate::ops::squeeze::{atleast_1d, atleast_2d, atleast_3d};
pub use crate::ops::squeeze::{squeeze, squeeze_dim, squeeze_dims, unsqueeze};
pub use crate::ops::squeeze::{squeeze_, squeeze_dims_, unsqueeze_};
pub use crate::ops::storage::{resize_, set_, set_storage, set_to};
pub use crate::ops::transpose::{
    moveaxis, movedim, mt, numpy_t, permute, swapaxes, swapaxes_, swapdims, swapdims_, t, t_,
    transpose, transpose_,
};
pub use c10_core::shape_arg::{IntoShape, IntoSliceBound, IntoSymInt, Shape, SliceBound};

// ---------------------------------------------------------------------------
// The trait
// ---------------------------------------------------------------------------

/// One entry of [`VIEW_OPS`].
///
/// ```
/// use aten_shape::views::VIEW_OPS;
/// assert!(VIEW_OPS.iter().all(|op| !op.name.is_empty()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewOpInfo {
    /// The method's (and free function's) name.
    pub name: &'static str,
    /// The arguments after `self`, as written in the table.
    pub args: &'static str,
    /// Whether the op changes `self` in place (takes `&mut self`).
    pub in_place: bool,
}

/// The op table: every method of [`ViewOps`] is written here once, with
/// its documentation, and the macro emits the trait and its
/// implementation for [`Tensor`], each method calling the free function
/// of the same name and arguments (the op itself, in its family's module
/// under `crate::ops`). Adding an op is one entry here plus its free
/// function.
macro_rules! view_ops_table {
    (
        $(#[$trait_attr:meta])*
        pub trait ViewOps {
            $( $(#[$attr:meta])* fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty; )*
            in_place:
            $( $(#[$mattr:meta])* fn $mname:ident(&mut self $(, $marg:ident: $mty:ty)* $(,)?) -> $mret:ty; )*
        }
    ) => {
        $(#[$trait_attr])*
        pub trait ViewOps: crate::sealed::Sealed {
            $( $(#[$attr])* fn $name(&self $(, $arg: $ty)*) -> $ret; )*
            $( $(#[$mattr])* fn $mname(&mut self $(, $marg: $mty)*) -> $mret; )*
        }

        /// Every op of the [`ViewOps`] table, in table order: its name and
        /// its arguments as written there (after `self`). The conformance
        /// runners and the Python package are checked against this list
        /// (an op's name and signature are written once, here).
        ///
        /// ```
        /// use aten_shape::views::VIEW_OPS;
        /// let narrow = VIEW_OPS.iter().find(|op| op.name == "narrow").unwrap();
        /// // As `stringify!` writes it (a space before each colon).
        /// assert_eq!(narrow.args, "dim : i64, start : impl IntoSymInt, length : impl IntoSymInt");
        /// assert!(VIEW_OPS.iter().any(|op| op.name == "transpose_" && op.in_place));
        /// ```
        pub const VIEW_OPS: &[ViewOpInfo] = &[
            $( ViewOpInfo {
                name: stringify!($name),
                args: stringify!($($arg: $ty),*),
                in_place: false,
            }, )*
            $( ViewOpInfo {
                name: stringify!($mname),
                args: stringify!($($marg: $mty),*),
                in_place: true,
            }, )*
        ];

        #[allow(deprecated)]
        impl ViewOps for Tensor {
            $( #[inline] fn $name(&self $(, $arg: $ty)*) -> $ret { $name(self $(, $arg)*) } )*
            $( #[inline] fn $mname(&mut self $(, $marg: $mty)*) -> $mret { $mname(self $(, $marg)*) } )*
        }
    };
}

view_ops_table! {
    /// PyTorch's view ops as methods on [`Tensor`], for concrete and
    /// symbolic tensors alike (see the [module docs](self)). Every method
    /// is also a free function of this module with the tensor as first
    /// argument.
    pub trait ViewOps {
        /// `view(shape)`: same elements, new shape (one `-1` is inferred);
        /// fails when the strides do not allow it (use `reshape`).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 24, 1, ScalarType::Long)?.view(&[3, 2, 4])?;
        /// let y = x.transpose(0, 1)?; // (2, 3, 4) / (4, 8, 1)
        /// assert_eq!(y.view(&[2, 3, 2, 2])?.strides(), &[4, 8, 2, 1]);
        /// assert!(y.view(&[6, 4]).is_err());
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn view(&self, shape: impl IntoShape) -> Result<Tensor>;

        /// `view_as(other)` = `view(other.sizes())`.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 6, 1, ScalarType::Long)?;
        /// let o = Tensor::zeros(&[2, 3], ScalarType::Float)?;
        /// assert_eq!(x.view_as(&o)?.sizes(), &[2, 3]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn view_as(&self, other: &Tensor) -> Result<Tensor>;

        /// `reshape(shape)`: a view when the strides allow one, else a
        /// contiguous copy (with its own storage and version counter).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 24, 1, ScalarType::Long)?.view(&[3, 2, 4])?;
        /// let y = x.transpose(0, 1)?;
        /// assert!(y.reshape(&[2, 3, 2, 2])?.is_alias_of(&x)); // a view
        /// let c = y.reshape(&[6, 4])?; // a copy
        /// assert!(!c.is_alias_of(&x));
        /// assert_eq!(c.strides(), &[4, 1]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn reshape(&self, shape: impl IntoShape) -> Result<Tensor>;

        /// `reshape_as(other)` = `reshape(other.sizes())`.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 6, 1, ScalarType::Long)?;
        /// let o = Tensor::zeros(&[3, 2], ScalarType::Float)?;
        /// assert_eq!(x.reshape_as(&o)?.sizes(), &[3, 2]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn reshape_as(&self, other: &Tensor) -> Result<Tensor>;

        /// `slice(dim, start, end, step)` (Python's `x[start:end:step]` on
        /// `dim`): out-of-range bounds clamp, `None` means the end; `step > 0`.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 10, 1, ScalarType::Long)?;
        /// let s = x.slice(0, Some(1), Some(8), 3)?;
        /// assert_eq!((s.sizes(), s.strides(), s.storage_offset()), (&[3][..], &[3][..], 1));
        /// assert_eq!(x.slice(0, Some(-100), None, 1)?.sizes(), &[10]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn slice(
            &self,
            dim: i64,
            start: impl IntoSliceBound,
            end: impl IntoSliceBound,
            step: impl IntoSymInt,
        ) -> Result<Tensor>;

        /// `narrow(dim, start, length)`: `length` elements from `start`
        /// (negative `start` counts from the end).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 4, 1, ScalarType::Long)?;
        /// assert_eq!(x.narrow(0, -3, 2)?.to_vec::<i64>()?, vec![1, 2]);
        /// assert_eq!(x.narrow(0, 4, 0)?.storage_offset(), 4);
        /// assert!(x.narrow(0, 3, 2).is_err());
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn narrow(&self, dim: i64, start: impl IntoSymInt, length: impl IntoSymInt) -> Result<Tensor>;

        /// `select(dim, index)`: drops `dim`, keeping position `index`.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 24, 1, ScalarType::Long)?.view(&[2, 3, 4])?;
        /// let s = x.select(1, 2)?;
        /// assert_eq!((s.sizes(), s.strides(), s.storage_offset()), (&[2, 4][..], &[12, 1][..], 8));
        /// assert!(x.select(1, 3).unwrap_err().is_index_error());
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn select(&self, dim: i64, index: impl IntoSymInt) -> Result<Tensor>;

        /// `unbind(dim)`: every `select(dim, i)`.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 6, 1, ScalarType::Long)?.view(&[2, 3])?;
        /// let rows = x.unbind(0)?;
        /// assert_eq!(rows[1].to_vec::<i64>()?, vec![3, 4, 5]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn unbind(&self, dim: i64) -> Result<Vec<Tensor>>;

        /// `split(split_size, dim)`: pieces of `split_size` (the last may be
        /// shorter).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 5, 1, ScalarType::Long)?;
        /// let p = x.split(2, 0)?;
        /// let lens: Vec<i64> = p.iter().map(|t| t.sizes()[0]).collect();
        /// assert_eq!(lens, vec![2, 2, 1]);
        /// assert_eq!(p[2].storage_offset(), 4);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn split(&self, split_size: impl IntoSymInt, dim: i64) -> Result<Vec<Tensor>>;

        /// `split_with_sizes(split_sizes, dim)`: pieces of the given lengths,
        /// which must add up to the dim's size.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 5, 1, ScalarType::Long)?;
        /// let p = x.split_with_sizes(&[1, 4], 0)?;
        /// assert_eq!(p[1].to_vec::<i64>()?, vec![1, 2, 3, 4]);
        /// assert!(x.split_with_sizes(&[1, 3], 0).is_err());
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn split_with_sizes(&self, split_sizes: impl IntoShape, dim: i64) -> Result<Vec<Tensor>>;

        /// `chunk(chunks, dim)`: `split(ceil(n / chunks))`, so possibly fewer
        /// than `chunks` pieces.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 6, 1, ScalarType::Long)?;
        /// assert_eq!(x.chunk(4, 0)?.len(), 3); // 6 into 4 -> [2, 2, 2]
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn chunk(&self, chunks: i64, dim: i64) -> Result<Vec<Tensor>>;

        /// `tensor_split(sections, dim)`: exactly `sections` pieces, the first
        /// `n % sections` one longer.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 5, 1, ScalarType::Long)?;
        /// let lens: Vec<i64> = x.tensor_split(3, 0)?.iter().map(|t| t.sizes()[0]).collect();
        /// assert_eq!(lens, vec![2, 2, 1]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn tensor_split(&self, sections: i64, dim: i64) -> Result<Vec<Tensor>>;

        /// `tensor_split(indices, dim)`: pieces `[0:i0]`, `[i0:i1]`, ...,
        /// `[ik:]`, each sliced with `slice`'s clamping.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 5, 1, ScalarType::Long)?;
        /// let lens: Vec<i64> = x.tensor_split_indices(&[1, 4], 0)?.iter().map(|t| t.sizes()[0]).collect();
        /// assert_eq!(lens, vec![1, 3, 1]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn tensor_split_indices(&self, indices: impl IntoShape, dim: i64) -> Result<Vec<Tensor>>;

        /// `hsplit(sections)`: equal pieces along dim 1 (dim 0 of a 1-d
        /// tensor); the dim must divide evenly.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[2, 4], ScalarType::Float)?;
        /// assert_eq!(x.hsplit(2)?[0].sizes(), &[2, 2]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn hsplit(&self, sections: i64) -> Result<Vec<Tensor>>;

        /// `hsplit(indices)`: `tensor_split(indices)` along `hsplit`'s dim.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[2, 4], ScalarType::Float)?;
        /// assert_eq!(x.hsplit_indices(&[1])?[1].sizes(), &[2, 3]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn hsplit_indices(&self, indices: &[i64]) -> Result<Vec<Tensor>>;

        /// `vsplit(sections)`: equal pieces along dim 0 (at least 2 dims).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[4, 2], ScalarType::Float)?;
        /// assert_eq!(x.vsplit(2)?[0].sizes(), &[2, 2]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn vsplit(&self, sections: i64) -> Result<Vec<Tensor>>;

        /// `vsplit(indices)`: `tensor_split(indices)` along dim 0.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[4, 2], ScalarType::Float)?;
        /// assert_eq!(x.vsplit_indices(&[3])?[0].sizes(), &[3, 2]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn vsplit_indices(&self, indices: &[i64]) -> Result<Vec<Tensor>>;

        /// `dsplit(sections)`: equal pieces along dim 2 (at least 3 dims).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[1, 1, 4], ScalarType::Float)?;
        /// assert_eq!(x.dsplit(4)?.len(), 4);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn dsplit(&self, sections: i64) -> Result<Vec<Tensor>>;

        /// `dsplit(indices)`: `tensor_split(indices)` along dim 2.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[1, 1, 4], ScalarType::Float)?;
        /// assert_eq!(x.dsplit_indices(&[1, 2])?.len(), 3);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn dsplit_indices(&self, indices: &[i64]) -> Result<Vec<Tensor>>;

        /// `transpose(dim0, dim1)`: swaps two dims (equal dims give an alias).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 24, 1, ScalarType::Long)?.view(&[2, 3, 4])?;
        /// let y = x.transpose(0, -1)?;
        /// assert_eq!((y.sizes(), y.strides()), (&[4, 3, 2][..], &[1, 4, 12][..]));
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn transpose(&self, dim0: i64, dim1: i64) -> Result<Tensor>;

        /// `swapaxes` = `transpose`.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[2, 3], ScalarType::Float)?;
        /// assert_eq!(x.swapaxes(0, 1)?.sizes(), &[3, 2]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn swapaxes(&self, axis0: i64, axis1: i64) -> Result<Tensor>;

        /// `swapdims` = `transpose`.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[2, 3], ScalarType::Float)?;
        /// assert_eq!(x.swapdims(1, 0)?.strides(), &[1, 3]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn swapdims(&self, dim0: i64, dim1: i64) -> Result<Tensor>;

        /// `t()`: transpose of a tensor with at most 2 dims (0-d and 1-d
        /// tensors come back as an alias).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[2, 3], ScalarType::Float)?;
        /// assert_eq!(x.t()?.sizes(), &[3, 2]);
        /// let e = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?.t().unwrap_err();
        /// assert_eq!(e.to_string(), "t() expects a tensor with <= 2 dimensions, but self is 3D");
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn t(&self) -> Result<Tensor>;

        /// `mT`: transpose of the last two dims (a 0-d tensor is returned
        /// itself; 1-d fails).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[5, 2, 3], ScalarType::Float)?;
        /// assert_eq!(x.mt()?.sizes(), &[5, 3, 2]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn mt(&self) -> Result<Tensor>;

        /// `numpy_T` (`.T`): all dims reversed.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
        /// assert_eq!(x.numpy_t()?.strides(), &[1, 4, 12]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn numpy_t(&self) -> Result<Tensor>;

        /// `permute(dims)`: dim `i` of the result is dim `dims[i]` of the input.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
        /// let y = x.permute(&[2, 0, 1])?;
        /// assert_eq!((y.sizes(), y.strides()), (&[4, 2, 3][..], &[1, 12, 4][..]));
        /// assert!(x.permute(&[0, 0, 1]).is_err());
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn permute(&self, dims: &[i64]) -> Result<Tensor>;

        /// `movedim(source, destination)`: moves the `source` dims to positions
        /// `destination`, the others keep their relative order.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[2, 3, 4, 5], ScalarType::Float)?;
        /// let y = x.movedim(&[0, 1], &[2, 3])?;
        /// assert_eq!((y.sizes(), y.strides()), (&[4, 5, 2, 3][..], &[5, 1, 60, 20][..]));
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn movedim(&self, source: &[i64], destination: &[i64]) -> Result<Tensor>;

        /// `expand(size)`: size-1 dims repeat (stride 0), `-1` keeps a size,
        /// new dims may be added in front.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[3, 1], ScalarType::Float)?;
        /// let y = x.expand(&[2, -1, 4])?;
        /// assert_eq!((y.sizes(), y.strides()), (&[2, 3, 4][..], &[0, 1, 0][..]));
        /// assert!(x.expand(&[4, 4]).is_err());
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn expand(&self, size: impl IntoShape) -> Result<Tensor>;

        /// `expand_as(other)` = `expand(other.sizes())`.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[3, 1], ScalarType::Float)?;
        /// let o = Tensor::zeros(&[3, 5], ScalarType::Float)?;
        /// assert_eq!(x.expand_as(&o)?.sizes(), &[3, 5]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn expand_as(&self, other: &Tensor) -> Result<Tensor>;

        /// `broadcast_to(size)` = `expand(size)`.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[3], ScalarType::Float)?;
        /// assert_eq!(x.broadcast_to(&[2, 3])?.strides(), &[0, 1]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn broadcast_to(&self, size: impl IntoShape) -> Result<Tensor>;

        /// `squeeze()`: drops every size-1 dim.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[1, 3, 1, 2], ScalarType::Float)?;
        /// assert_eq!(x.squeeze()?.sizes(), &[3, 2]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn squeeze(&self) -> Result<Tensor>;

        /// `squeeze(dim)`: drops `dim` if its size is 1 (else an alias).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[1, 3, 1], ScalarType::Float)?;
        /// assert_eq!(x.squeeze_dim(-1)?.sizes(), &[1, 3]);
        /// assert_eq!(x.squeeze_dim(1)?.sizes(), &[1, 3, 1]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn squeeze_dim(&self, dim: i64) -> Result<Tensor>;

        /// `squeeze(dims)`: drops those of `dims` whose size is 1.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[1, 3, 1], ScalarType::Float)?;
        /// assert_eq!(x.squeeze_dims(&[0, 1])?.sizes(), &[3, 1]);
        /// let e = x.squeeze_dims(&[0, -3]).unwrap_err();
        /// assert_eq!(e.to_string(), "dim 0 appears multiple times in the list of dims");
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn squeeze_dims(&self, dims: &[i64]) -> Result<Tensor>;

        /// Basic integer indexing, `t[i, j]` in Python: selects along the first
        /// `indices.len()` dims (negative indices count from the end), a view.
        /// Errors as PyTorch's indexing: `too many indices for tensor of
        /// dimension 2`, `index 3 is out of bounds for dimension 1 with size 3`
        /// (both `IndexError`). The list is a Python tuple (`t[(0,)]`); for
        /// slices, `None` and `...` see [`crate::indexing`]. (Named for
        /// what it takes: ATen's `index` is advanced indexing with index
        /// tensors, which this crate does not have.)
        ///
        /// ```
        /// use aten_shape::views::ViewOps;
        /// use c10_core::{ScalarType, Tensor};
        /// let t = Tensor::arange(0, 6, 1, ScalarType::Long)?.view((2, 3))?;
        /// assert_eq!(t.index_ints([1, -1])?.item::<i64>()?, 5);
        /// assert_eq!(t.index_ints(1)?.to_vec::<i64>()?, vec![3, 4, 5]);
        /// let e = t.index_ints(&[0, 0, 0]).unwrap_err();
        /// assert_eq!(e.to_string(), "too many indices for tensor of dimension 2");
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn index_ints(&self, indices: impl IntoShape) -> Result<Tensor>;

        /// The old name of [`index_ints`](ViewOps::index_ints).
        #[deprecated(since = "0.2.0", note = "renamed `index_ints` (ATen's `index` is advanced indexing)")]
        fn index(&self, indices: impl IntoShape) -> Result<Tensor>;

        /// `unsqueeze(dim)`: inserts a size-1 dim at `dim` (which wraps against
        /// `dim() + 1`).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
        /// assert_eq!(x.unsqueeze(1)?.strides(), &[12, 12, 4, 1]);
        /// assert_eq!(x.unsqueeze(-1)?.sizes(), &[2, 3, 4, 1]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn unsqueeze(&self, dim: i64) -> Result<Tensor>;

        /// `flatten(start_dim, end_dim)`: merges dims `start..=end` (a view
        /// when possible, else a copy; `start == end` returns the same tensor).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
        /// assert_eq!(x.flatten(1, -1)?.sizes(), &[2, 12]);
        /// assert!(x.flatten(1, 1)?.is_same(&x));
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn flatten(&self, start_dim: i64, end_dim: i64) -> Result<Tensor>;

        /// `unflatten(dim, sizes)`: splits `dim` into `sizes` (one `-1`
        /// allowed); always a view (fails rather than copies).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[2, 12], ScalarType::Float)?;
        /// assert_eq!(x.unflatten(1, &[3, -1])?.sizes(), &[2, 3, 4]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn unflatten(&self, dim: i64, sizes: impl IntoShape) -> Result<Tensor>;

        /// `ravel()` = `contiguous().view(-1)`.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 6, 1, ScalarType::Long)?.view(&[2, 3])?;
        /// assert_eq!(x.t()?.ravel()?.to_vec::<i64>()?, vec![0, 3, 1, 4, 2, 5]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn ravel(&self) -> Result<Tensor>;

        /// `diagonal(offset, dim1, dim2)`: the diagonal of the `(dim1, dim2)`
        /// planes as a new last dim (`offset > 0` above the main diagonal).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 12, 1, ScalarType::Long)?.view(&[3, 4])?;
        /// let d = x.diagonal(-1, 0, 1)?;
        /// assert_eq!((d.sizes(), d.strides(), d.storage_offset()), (&[2][..], &[5][..], 4));
        /// assert_eq!(d.to_vec::<i64>()?, vec![4, 9]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor>;

        /// `unfold(dimension, size, step)`: windows of `size` every `step`
        /// along `dimension`, as a new last dim.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::arange(0, 10, 1, ScalarType::Long)?;
        /// let u = x.unfold(0, 3, 2)?;
        /// assert_eq!((u.sizes(), u.strides()), (&[4, 3][..], &[2, 1][..]));
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn unfold(&self, dimension: i64, size: i64, step: i64) -> Result<Tensor>;

        /// `alias()`: a new view with identical geometry.
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[2, 3], ScalarType::Float)?;
        /// let a = x.alias()?;
        /// assert!(a.is_set_to(&x) && !a.is_same(&x));
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn alias(&self) -> Result<Tensor>;
        /// `moveaxis(source, destination)`: NumPy's name for
        /// [`movedim`](ViewOps::movedim).
        ///
        /// ```
        /// use aten_shape::views::ViewOps;
        /// use c10_core::{ScalarType, Tensor};
        /// let t = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
        /// assert_eq!(t.moveaxis(&[0], &[-1])?.sizes(), &[3, 4, 2]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn moveaxis(&self, source: &[i64], destination: &[i64]) -> Result<Tensor>;
        /// `view(dtype)`: the same bytes as another dtype (see [`view_dtype`]).
        fn view_dtype(&self, dtype: ScalarType) -> Result<Tensor>;
        /// `torch.view_as_real(t)`: a complex tensor as (real, imaginary)
        /// pairs, a view (see [`view_as_real`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let c = Tensor::zeros(&[3], ScalarType::ComplexDouble)?;
        /// let r = c.view_as_real()?;
        /// assert_eq!((r.sizes(), r.dtype()), (&[3i64, 2][..], ScalarType::Double));
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn view_as_real(&self) -> Result<Tensor>;
        /// `torch.view_as_complex(t)`: pairs of reals as complex numbers,
        /// a view (see [`view_as_complex`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let x = Tensor::zeros(&[3, 2], ScalarType::Float)?;
        /// assert_eq!(x.view_as_complex()?.dtype(), ScalarType::ComplexFloat);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn view_as_complex(&self) -> Result<Tensor>;
        /// `t.real`: the real parts of a complex tensor as a view; any other
        /// tensor itself (see [`real`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let c = Tensor::zeros(&[3], ScalarType::ComplexFloat)?;
        /// assert_eq!(c.real()?.strides(), &[2]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn real(&self) -> Result<Tensor>;
        /// `t.imag`: the imaginary parts of a complex tensor as a view (see
        /// [`imag`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let c = Tensor::zeros(&[3], ScalarType::ComplexFloat)?;
        /// assert_eq!(c.imag()?.storage_offset(), 1);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn imag(&self) -> Result<Tensor>;
        /// `conj()`: a lazy conjugate of a complex tensor, any other tensor
        /// itself (see [`conj`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// assert!(Tensor::zeros(&[2], ScalarType::ComplexFloat)?.conj()?.is_conj());
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn conj(&self) -> Result<Tensor>;
        /// `_conj()`: the conjugate bit flipped, complex tensors only (see
        /// [`conj_view`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// assert!(Tensor::zeros(&[2], ScalarType::ComplexFloat)?.conj_view()?.is_conj());
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn conj_view(&self) -> Result<Tensor>;
        /// `_neg_view()`: the negative bit flipped (see [`neg_view`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// assert!(Tensor::zeros(&[2], ScalarType::Float)?.neg_view()?.is_neg());
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn neg_view(&self) -> Result<Tensor>;
        /// `resolve_conj()`: itself, or a copy with the conjugate applied
        /// (see [`resolve_conj`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let c = Tensor::zeros(&[2], ScalarType::ComplexFloat)?.conj()?;
        /// assert!(!c.resolve_conj()?.is_conj());
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn resolve_conj(&self) -> Result<Tensor>;
        /// `resolve_neg()`: itself, or a copy with the negation applied (see
        /// [`resolve_neg`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let n = Tensor::zeros(&[2], ScalarType::Float)?.neg_view()?;
        /// assert!(!n.resolve_neg()?.is_neg());
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn resolve_neg(&self) -> Result<Tensor>;
        /// `conj_physical()`: a conjugated copy of a complex tensor, any
        /// other tensor itself (see [`conj_physical`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let c = Tensor::zeros(&[2], ScalarType::ComplexFloat)?;
        /// assert!(!c.conj_physical()?.is_alias_of(&c));
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn conj_physical(&self) -> Result<Tensor>;
        /// `adjoint()`: the conjugate transpose of the last two dims, a view
        /// (see [`adjoint`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let m = Tensor::zeros(&[2, 3], ScalarType::ComplexFloat)?;
        /// assert_eq!(m.adjoint()?.sizes(), &[3, 2]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn adjoint(&self) -> Result<Tensor>;
        /// `mH`: [`adjoint`](ViewOps::adjoint) under its property name (see
        /// [`mh`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let m = Tensor::zeros(&[4, 2, 3], ScalarType::Float)?;
        /// assert_eq!(m.mh()?.sizes(), &[4, 3, 2]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn mh(&self) -> Result<Tensor>;
        /// `H`: the conjugate transpose of a matrix (see [`h`]).
        ///
        /// ```
        /// # use aten_shape::views::ViewOps; use c10_core::{ScalarType, Tensor};
        /// let m = Tensor::zeros(&[2, 3], ScalarType::ComplexFloat)?;
        /// assert_eq!(m.h()?.sizes(), &[3, 2]);
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn h(&self) -> Result<Tensor>;

        // In place: each changes this handle's metadata (its `TensorImpl` is
        // copied first when shared) and bumps the version (`resize_` only when
        // the sizes change).
        in_place:

        /// In-place `t_()` (see [`t_`]).
        fn t_(&mut self) -> Result<()>;
        /// In-place `transpose_(dim0, dim1)` (see [`transpose_`]).
        fn transpose_(&mut self, dim0: i64, dim1: i64) -> Result<()>;
        /// In-place `swapaxes_(axis0, axis1)`, an alias of `transpose_`.
        ///
        /// ```
        /// use aten_shape::views::ViewOps;
        /// use c10_core::{ScalarType, Tensor};
        /// let mut t = Tensor::zeros(&[2, 3], ScalarType::Float)?;
        /// t.swapaxes_(0, 1)?;
        /// assert_eq!((t.sizes(), t.version()?), (&[3i64, 2][..], 1));
        /// # Ok::<(), c10_core::TensorError>(())
        /// ```
        fn swapaxes_(&mut self, axis0: i64, axis1: i64) -> Result<()>;
        /// In-place `swapdims_(dim0, dim1)`, an alias of `transpose_`.
        fn swapdims_(&mut self, dim0: i64, dim1: i64) -> Result<()>;
        /// In-place `squeeze_()` / `squeeze_(dim)` (see [`squeeze_`]).
        fn squeeze_(&mut self, dim: Option<i64>) -> Result<()>;
        /// In-place `squeeze_(dims)` (see [`squeeze_dims_`]).
        fn squeeze_dims_(&mut self, dims: &[i64]) -> Result<()>;
        /// In-place `unsqueeze_(dim)` (see [`unsqueeze_`]).
        fn unsqueeze_(&mut self, dim: i64) -> Result<()>;
        /// In-place `as_strided_(size, stride, storage_offset)` (see
        /// [`as_strided_`]).
        fn as_strided_(
            &mut self,
            sizes: impl IntoShape,
            strides: impl IntoShape,
            offset: impl IntoSliceBound,
        ) -> Result<()>;
        /// `resize_(sizes, memory_format)` (see [`resize_`]; `None` is
        /// PyTorch's default).
        fn resize_(
            &mut self,
            sizes: impl IntoShape,
            format: impl Into<Option<MemoryFormat>>,
        ) -> Result<()>;
        /// `set_(storage, storage_offset, sizes, strides)` (see [`set_`]).
        fn set_(
            &mut self,
            storage: &Storage,
            offset: impl IntoSymInt,
            sizes: impl IntoShape,
            strides: impl IntoShape,
        ) -> Result<()>;
        /// `set_(source)` (see [`set_to`]).
        fn set_to(&mut self, source: &Tensor) -> Result<()>;
        /// `set_(storage)` (see [`set_storage`]).
        fn set_storage(&mut self, storage: &Storage) -> Result<()>;
    }
}
