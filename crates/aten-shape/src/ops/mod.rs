//! The op rules, one module per op family (PyTorch keeps them in ATen's
//! `TensorShape.cpp`; c10-core holds only the data model they act on).
//!
//! Each family module holds its rule once, generic over [`ShapeInt`]
//! (`i64` for concrete tensors, where it compiles to plain integer code;
//! `SymInt` for symbolic ones, where each decision guards where ATen's C++
//! guards), and next to it every face of its ops: the concrete free
//! functions (re-exported by [`crate::views`] and called by the
//! [`ViewOps`](crate::views::ViewOps) methods), the in-place twins (which
//! edit a tensor's metadata through c10-core's copy-on-write hook
//! [`Tensor::edit_metadata`]), and the symbolic [`Geometry`] methods.
//! The rules are crate-private: users call the ops.
//!
//! | family | module |
//! |---|---|
//! | transpose / permute / movedim | `transpose` |
//! | squeeze / unsqueeze | `squeeze` |
//! | narrow / slice / select | `slice` |
//! | split / chunk | `split` |
//! | view / reshape / flatten / unflatten | `reshape` |
//! | expand / broadcast | `expand` |
//! | diagonal / unfold | `diagonal` |
//! | as_strided | `as_strided` |
//! | dtype views | `dtype_view` |
//! | complex views, conjugate / negative bits | `complex` |
//! | storage-swapping ops (`resize_`, `set_`) | `storage` |

pub(crate) mod as_strided;
pub(crate) mod complex;
pub(crate) mod diagonal;
pub(crate) mod dtype_view;
pub(crate) mod expand;
pub(crate) mod reshape;
pub(crate) mod slice;
pub(crate) mod split;
pub(crate) mod squeeze;
pub(crate) mod storage;
pub(crate) mod transpose;

/// What every family module uses: the data model's types and the shared
/// view-building helpers below. A family that builds on another's rule
/// (`split` on `slice`) imports it by name.
pub(crate) mod prelude {
    pub(crate) use super::{
        alias, geometry_of, in_place_sym, install_edit, install_rearranged, install_unless_wrapped,
        make_view, make_view_in_place, on_symbolic, retry_symbolic, shape_err, sym_ints, sym_op,
        sym_ops, wrap, DimSet,
    };
    pub(crate) use crate::generic::{c, Geometry};
    pub(crate) use crate::infer::DimVec;
    pub(crate) use c10_core::geometry::{check_same_rank, fmt_list, wrap_dim};
    pub(crate) use c10_core::shape_arg::{IntoShape, IntoSliceBound, IntoSymInt, Shape};
    pub(crate) use c10_core::sym::{ShapeBool, ShapeInt, SymInt};
    pub(crate) use c10_core::{
        MemoryFormat, Result, ScalarType, ShapeErrorKind, SizesAndStrides, Storage, Tensor,
        TensorError, TensorImpl,
    };
}

use crate::generic::Geometry;
use c10_core::geometry::wrap_dim;
use c10_core::sym::SymInt;
use c10_core::{
    Result, ShapeError, ShapeErrorKind, SizesAndStrides, Tensor, TensorError, TensorImpl,
};

/// c10's `maybe_wrap_dim(dim, ndim, wrap_scalar = true)`, with an inlined
/// fast path for dims already in range.
#[inline]
pub(crate) fn wrap(dim: i64, ndim: usize) -> Result<usize> {
    let n = ndim as i64;
    if (0..n).contains(&dim) {
        Ok(dim as usize)
    } else if dim < 0 && dim >= -n {
        Ok((dim + n) as usize)
    } else {
        wrap_dim(dim, n, true)
    }
}

/// The symbolic face of a view op: `op` on the geometry of `t` (its
/// `SymInt` sizes, strides and offset), installed as a view of `t`. Every
/// op calls it when `t` has symbolic sizes or an argument is symbolic;
/// kept out of line so the concrete path pays one flag test.
#[cold]
#[inline(never)]
pub(crate) fn sym_op(
    t: &Tensor,
    op: impl FnOnce(&Geometry<SymInt>) -> Result<Geometry<SymInt>>,
) -> Result<Tensor> {
    crate::generic::sym_view_op(t, op)
}

/// The symbolic face of a view op, run after its concrete face failed:
/// when `t` has symbolic sizes (the concrete face then fails in the view
/// constructor, which refuses symbolic tensors before building anything),
/// [`sym_op`]`(t, op)`; otherwise the concrete error `e`. This keeps the
/// concrete path free of any test: the dispatch costs nothing until an
/// op fails.
#[cold]
#[inline(never)]
pub(crate) fn retry_symbolic(
    t: &Tensor,
    e: TensorError,
    op: impl FnOnce(&Geometry<SymInt>) -> Result<Geometry<SymInt>>,
) -> Result<Tensor> {
    on_symbolic(t, e, || crate::generic::sym_view_op(t, op))
}

/// [`retry_symbolic`] for symbolic faces that are not one geometry rule
/// (`reshape`, which may copy; ops with symbolic arguments): `f()` when
/// `t` has symbolic sizes, else the concrete error `e`.
#[cold]
#[inline(never)]
pub(crate) fn on_symbolic<R>(
    t: &Tensor,
    e: TensorError,
    f: impl FnOnce() -> Result<R>,
) -> Result<R> {
    if t.has_symbolic_sizes_strides() {
        f()
    } else {
        Err(e)
    }
}

/// Concrete values as `SymInt`s (for a symbolic face called with them).
pub(crate) fn sym_ints(v: &[i64]) -> Vec<SymInt> {
    v.iter().map(|&x| SymInt::Int(x)).collect()
}

/// [`sym_op`] for the list-returning ops (`split`, `chunk`, `unbind`, ...).
#[cold]
#[inline(never)]
pub(crate) fn sym_ops(
    t: &Tensor,
    op: impl FnOnce(&Geometry<SymInt>) -> Result<Vec<Geometry<SymInt>>>,
) -> Result<Vec<Tensor>> {
    op(&Geometry::of(t))?.iter().map(|g| g.view_of(t)).collect()
}

/// A set of dims: a bit mask for up to 64 dims, a `Vec` beyond.
#[derive(Debug, Clone)]
pub(crate) struct DimSet {
    bits: u64,
    big: Vec<bool>,
}

impl DimSet {
    /// An empty set for dims `0..n`.
    #[inline]
    pub fn new(n: usize) -> DimSet {
        DimSet {
            bits: 0,
            big: if n > 64 { vec![false; n] } else { Vec::new() },
        }
    }
    /// Adds `d` (below the `n` of [`DimSet::new`]); false if it was
    /// already there.
    #[inline]
    pub fn insert(&mut self, d: usize) -> bool {
        if self.big.is_empty() {
            let bit = 1u64 << d;
            let fresh = self.bits & bit == 0;
            self.bits |= bit;
            fresh
        } else {
            !std::mem::replace(&mut self.big[d], true)
        }
    }
    /// Whether `d` is in the set.
    #[inline]
    pub fn contains(&self, d: usize) -> bool {
        if self.big.is_empty() {
            self.bits & (1u64 << d) != 0
        } else {
            self.big[d]
        }
    }
}

/// A failed shape check of `kind` with PyTorch's `message` (the caller
/// adds the dim, index and sizes it knows).
#[cold]
#[inline(never)]
pub(crate) fn shape_err(kind: ShapeErrorKind, message: impl Into<String>) -> ShapeError {
    ShapeError::new(kind, message)
}

/// The symbolic face of an in-place metadata op (`t_`, `transpose_`,
/// `squeeze_`, `unsqueeze_`): `rule` applied to `t`'s symbolic geometry,
/// installed in place, the version bumped only once the rule succeeded.
/// PyTorch runs these ops on fake tensors with the same rules (and guards)
/// as the out-of-place views.
#[cold]
#[inline(never)]
pub(crate) fn in_place_sym(
    t: &mut Tensor,
    rule: impl FnOnce(&Geometry<SymInt>) -> Result<Geometry<SymInt>>,
) -> Result<()> {
    t.check_inplace()?;
    let g = rule(&Geometry::of(t))?;
    t.bump_version()?;
    t.edit_metadata()
        .set_sym_sizes_and_strides(&g.sizes, &g.strides, &g.offset)
}

/// Installs derived geometry: unchecked when no arithmetic wrapped (it then
/// provably stays within the input's elements), through the checked
/// `as_strided` otherwise.
#[inline]
pub(crate) fn make_view(
    t: &Tensor,
    sizes: &[i64],
    strides: &[i64],
    offset: i64,
    wrapped: bool,
) -> Result<Tensor> {
    if wrapped {
        checked_view(t, sizes, strides, offset)
    } else {
        t.view_with_geometry(sizes, strides, offset)
    }
}

/// [`make_view`]'s path for geometry whose arithmetic wrapped: the checked
/// `as_strided`.
fn checked_view(t: &Tensor, sizes: &[i64], strides: &[i64], offset: i64) -> Result<Tensor> {
    // PyTorch passes the wrapped values to `as_strided` as SymInts,
    // which cannot hold values below -2^62.
    if let Some(&v) = sizes
        .iter()
        .chain(strides)
        .find(|&&v| v < c10_core::geometry::MIN_SYMINT)
    {
        return Err(TensorError::runtime(format!(
            "IntArrayRef contains an int that cannot be represented as a SymInt: {v}"
        )));
    }
    t.as_strided_concrete(sizes, strides, Some(offset))
}

/// Installs geometry built in place (see [`SizesAndStrides::from_fn`]) that
/// provably stays within the input's elements: the view's one allocation,
/// no intermediate copies, no storage check.
#[inline]
pub(crate) fn install(t: &Tensor, geometry: SizesAndStrides, offset: i64) -> Result<Tensor> {
    TensorImpl::view_tensor(t, geometry, offset)
}

/// A view of `t` whose geometry is `t`'s changed by `edit`, which works
/// on the sizes and strides already in place in the new `TensorImpl`
/// (no intermediate copy). Only for geometry that provably stays within
/// `t`'s elements (nothing wrapped).
#[inline]
pub(crate) fn install_edit(
    t: &Tensor,
    offset: i64,
    edit: impl FnOnce(&mut SizesAndStrides) -> Result<()>,
) -> Result<Tensor> {
    TensorImpl::view_tensor_edit(t, offset, edit)
}

/// [`install_edit`] for edits that only reorder dims or insert size-1 dims
/// (the density flag carries over from `t`).
///
/// # Safety
///
/// As [`TensorImpl::view_tensor_rearranged`]: `edit` only permutes `t`'s
/// dims and inserts or removes dims of size 1.
#[inline]
pub(crate) unsafe fn install_rearranged(
    t: &Tensor,
    offset: i64,
    edit: impl FnOnce(&mut SizesAndStrides) -> Result<()>,
) -> Result<Tensor> {
    // SAFETY: forwarded to the caller.
    unsafe { TensorImpl::view_tensor_rearranged(t, offset, edit) }
}

/// A copy of `t`'s sizes and strides to edit into a view's geometry (a
/// fixed-size copy up to five dims), for the paths that need it on the
/// stack (wrapped arithmetic).
#[inline]
pub(crate) fn geometry_of(t: &Tensor) -> SizesAndStrides {
    t.impl_ref().sizes_and_strides().clone()
}

/// [`make_view`] for geometry built in place: installed directly unless
/// some arithmetic wrapped.
#[inline]
pub(crate) fn make_view_in_place(
    t: &Tensor,
    geometry: SizesAndStrides,
    offset: i64,
    wrapped: bool,
) -> Result<Tensor> {
    install_unless_wrapped(t, geometry, offset, wrapped, checked_view)
}

/// A view's path for geometry whose arithmetic wrapped: given the sizes,
/// strides and offset, it checks them and installs them (`as_strided`'s
/// checks, or `view`'s, which repairs strides as c10 does).
pub(crate) type WrappedPath = fn(&Tensor, &[i64], &[i64], i64) -> Result<Tensor>;

/// Geometry built in place, installed directly when nothing wrapped,
/// else handed (as sizes and strides) to the op's checked path `on_wrap`.
#[inline]
pub(crate) fn install_unless_wrapped(
    t: &Tensor,
    geometry: SizesAndStrides,
    offset: i64,
    wrapped: bool,
    on_wrap: WrappedPath,
) -> Result<Tensor> {
    if wrapped {
        on_wrap(t, geometry.sizes(), geometry.strides(), offset)
    } else {
        install(t, geometry, offset)
    }
}

/// Free-function form of [`ViewOps::alias`](crate::views::ViewOps::alias).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let al = views::alias(&a)?;
/// assert!(al.is_alias_of(&a) && !al.is_same(&a));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn alias(t: &Tensor) -> Result<Tensor> {
    alias_ints(t).or_else(move |e| retry_symbolic(t, e, move |g| Ok(g.clone())))
}

/// The concrete face of [`alias`] (a symbolic tensor makes it fail in the
/// view constructor, before anything is built).
pub(crate) fn alias_ints(t: &Tensor) -> Result<Tensor> {
    // SAFETY: the edit changes nothing.
    unsafe { install_rearranged(t, t.storage_offset(), |_| Ok(())) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_wrap() -> Result<()> {
        assert_eq!(wrap(-1, 3)?, 2);
        assert_eq!(wrap(0, 0)?, 0);
        assert!(wrap(3, 3).is_err());
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_dimset() -> Result<()> {
        let mut s = DimSet::new(3);
        assert!(s.insert(1) && !s.insert(1));
        assert!(s.contains(1) && !s.contains(0));
        Ok(())
    }
}
