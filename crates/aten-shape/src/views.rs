//! View ops with PyTorch's exact semantics: every op here returns a tensor
//! over the same storage as its input (sharing its version counter), with
//! the sizes, strides and storage offset PyTorch 2.15 gives, and fails with
//! PyTorch's error texts (`IndexError`s as [`TensorError::Index`]).
//!
//! Each op exists twice: as a method of the [`ViewOps`] trait (implemented
//! for [`Tensor`]) and as a free function taking `&Tensor` first.
//! `as_strided` and `detach` are not here: they are inherent methods of
//! [`Tensor`] ([`Tensor::as_strided`], [`Tensor::detach`]), one name with
//! one behaviour.
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
//! **Cost.** Geometry is computed on the stack ([`DimVec`]); a view op makes
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

use c10_core::geometry::fmt_list;
use c10_core::sym::view_rules::{self, wrap};
use c10_core::{
    DeviceType, MemoryFormat, Result, ScalarType, SizesAndStrides, Tensor, TensorError, TensorImpl,
};

use crate::copy as copy_api;
use crate::infer::{
    compute_stride_flagged, compute_stride_into, infer_expand_geometry_into, infer_size,
    infer_size_into, DimVec,
};

const VIEW_INCOMPATIBLE: &str = "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.";

/// Installs derived geometry: unchecked when no arithmetic wrapped (it then
/// provably stays within the input's elements), through the checked
/// `as_strided` otherwise.
#[inline]
fn make_view(
    t: &Tensor,
    sizes: &[i64],
    strides: &[i64],
    offset: i64,
    wrapped: bool,
) -> Result<Tensor> {
    if wrapped {
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
        t.as_strided(sizes, strides, Some(offset))
    } else {
        t.view_with_geometry(sizes, strides, offset)
    }
}

/// Installs geometry built in place (see [`SizesAndStrides::from_fn`]) that
/// provably stays within the input's elements: the view's one allocation,
/// no intermediate copies, no storage check.
#[inline]
fn install(t: &Tensor, geometry: SizesAndStrides, offset: i64) -> Result<Tensor> {
    TensorImpl::view_tensor(t.impl_ref(), geometry, offset)
}

/// A view of `t` whose geometry is `t`'s changed by `edit`, which works
/// on the sizes and strides already in place in the new `TensorImpl`
/// (no intermediate copy). Only for geometry that provably stays within
/// `t`'s elements (nothing wrapped).
#[inline]
fn install_edit(
    t: &Tensor,
    offset: i64,
    edit: impl FnOnce(&mut SizesAndStrides) -> Result<()>,
) -> Result<Tensor> {
    TensorImpl::view_tensor_edit(t.impl_ref(), offset, edit)
}

/// [`install_edit`] for edits that only reorder dims or insert size-1 dims
/// (the density flag carries over from `t`).
///
/// # Safety
///
/// As [`TensorImpl::view_tensor_rearranged`]: `edit` only permutes `t`'s
/// dims and inserts or removes dims of size 1.
#[inline]
unsafe fn install_rearranged(
    t: &Tensor,
    offset: i64,
    edit: impl FnOnce(&mut SizesAndStrides) -> Result<()>,
) -> Result<Tensor> {
    // SAFETY: forwarded to the caller.
    unsafe { TensorImpl::view_tensor_rearranged(t.impl_ref(), offset, edit) }
}

/// A copy of `t`'s sizes and strides to edit into a view's geometry (a
/// fixed-size copy up to five dims), for the paths that need it on the
/// stack (wrapped arithmetic).
#[inline]
fn geometry_of(t: &Tensor) -> SizesAndStrides {
    t.impl_ref().sizes_and_strides().clone()
}

/// [`make_view`] for geometry built in place: installed directly unless
/// some arithmetic wrapped.
#[inline]
fn make_view_in_place(
    t: &Tensor,
    geometry: SizesAndStrides,
    offset: i64,
    wrapped: bool,
) -> Result<Tensor> {
    if wrapped {
        make_view(t, geometry.sizes(), geometry.strides(), offset, true)
    } else {
        install(t, geometry, offset)
    }
}

/// Installs the geometry of a `view`/`reshape` (PyTorch's
/// `alias_with_sizes_and_strides`, which does not go through `as_strided`).
/// When a stride product wrapped, c10's `set_sizes_and_strides` replaces
/// negative strides as it always does (last dim 1, else the next dim's
/// stride times `max(size, 1)`, failing with `Stride calculation
/// overflowed`), and the result is then checked against the storage.
fn make_alias_view(
    t: &Tensor,
    sizes: &[i64],
    mut strides: DimVec,
    offset: i64,
    wrapped: bool,
) -> Result<Tensor> {
    if !wrapped {
        return t.view_with_geometry(sizes, &strides, offset);
    }
    let n = strides.len();
    let mut overflowed = false;
    for d in (0..n).rev() {
        if strides[d] < 0 {
            strides[d] = if d + 1 == n {
                1
            } else {
                let (r, o) = strides[d + 1].overflowing_mul(sizes[d + 1].max(1));
                overflowed |= o;
                r
            };
        }
    }
    if overflowed {
        return Err(TensorError::runtime("Stride calculation overflowed"));
    }
    t.as_strided(sizes, &strides, Some(offset))
}

/// A `Vec` with room for `n` pieces, or an error instead of an abort when
/// `n` is absurd (zero-element tensors may have dims of 2^62).
fn pieces_vec(n: i64) -> Result<Vec<Tensor>> {
    let mut v = Vec::new();
    let ok = usize::try_from(n)
        .ok()
        .is_some_and(|n| v.try_reserve_exact(n).is_ok());
    if !ok {
        return Err(TensorError::runtime(format!(
            "cannot allocate a list of {n} tensors"
        )));
    }
    Ok(v)
}

/// PyTorch's `toString()` of a tensor's type as `expand`'s error prints it:
/// `torch.FloatTensor` for the classic CPU types, `CPUBFloat16Type` and the
/// like otherwise.
fn legacy_type_name(t: &Tensor) -> String {
    use ScalarType::*;
    let dt = t.dtype();
    let classic = matches!(dt, Byte | Char | Short | Int | Long | Half | Float | Double);
    let device = t.device().device_type();
    match device {
        DeviceType::Cpu if classic => format!("torch.{}Tensor", dt.name()),
        DeviceType::Cuda if classic => format!("torch.cuda.{}Tensor", dt.name()),
        _ => {
            let backend = match device {
                DeviceType::Cpu => "CPU".to_string(),
                DeviceType::Cuda => "CUDA".to_string(),
                DeviceType::Hip => "HIP".to_string(),
                DeviceType::Xla => "XLA".to_string(),
                DeviceType::Mps => "MPS".to_string(),
                DeviceType::Xpu => "XPU".to_string(),
                DeviceType::Ipu => "IPU".to_string(),
                DeviceType::Hpu => "HPU".to_string(),
                DeviceType::Ve => "VE".to_string(),
                DeviceType::Mtia => "MTIA".to_string(),
                DeviceType::Maia => "MAIA".to_string(),
                DeviceType::Meta => "Meta".to_string(),
                DeviceType::Lazy => "Lazy".to_string(),
                DeviceType::Vulkan => "Vulkan".to_string(),
                DeviceType::Metal => "Metal".to_string(),
                DeviceType::Fpga => "FPGA".to_string(),
                DeviceType::PrivateUse1 => "PrivateUse1".to_string(),
                other => format!("{other:?}"),
            };
            format!("{backend}{}Type", dt.name())
        }
    }
}

// ---------------------------------------------------------------------------
// as_strided / view / reshape
// ---------------------------------------------------------------------------

/// `view`'s geometry built in place: `Ok(Some((geometry, wrapped)))` when
/// `t` can be viewed as `shape`, `Ok(None)` when its strides do not allow
/// it, `Err` when `shape` is invalid for `t`'s number of elements.
#[inline]
fn view_geometry(t: &Tensor, shape: &[i64]) -> Result<Option<(SizesAndStrides, bool)>> {
    let (sizes, strides, numel) = (t.sizes(), t.strides(), t.numel());
    let mut outcome: Result<Option<bool>> = Ok(None);
    let geometry = SizesAndStrides::from_fn(shape.len(), |new_sizes, new_strides| {
        outcome = infer_size_into(shape, numel, new_sizes)
            .map(|()| compute_stride_into(sizes, strides, new_sizes, new_strides));
    })?;
    Ok(outcome?.map(|wrapped| (geometry, wrapped)))
}

/// Installs `view`'s geometry: directly when nothing wrapped, else through
/// [`make_alias_view`].
#[inline]
fn install_alias(
    t: &Tensor,
    geometry: SizesAndStrides,
    offset: i64,
    wrapped: bool,
) -> Result<Tensor> {
    if wrapped {
        let strides = DimVec::from_slice(geometry.strides());
        make_alias_view(t, geometry.sizes(), strides, offset, true)
    } else {
        install(t, geometry, offset)
    }
}

/// `view(shape)` built in place when `t` can be viewed as `shape` and no
/// arithmetic wrapped (`Ok(None)` otherwise; errors of `infer_size` are
/// returned).
#[inline]
fn try_view_in_place(t: &Tensor, shape: &[i64]) -> Result<Option<Tensor>> {
    let (sizes, strides, numel) = (t.sizes(), t.strides(), t.numel());
    TensorImpl::view_tensor_fill_or_abandon(
        t.impl_ref(),
        t.storage_offset(),
        shape.len(),
        |new_sizes, new_strides| {
            infer_size_into(shape, numel, new_sizes)?;
            Ok(compute_stride_into(sizes, strides, new_sizes, new_strides) == Some(false))
        },
    )
}

/// Free-function form of [`ViewOps::view`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let v = views::view(&a, &[3, -1])?;
/// assert_eq!((v.sizes(), v.strides()), (&[3i64, 4][..], &[4i64, 1][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn view(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    if let Some(v) = try_view_in_place(t, shape)? {
        return Ok(v);
    }
    match view_geometry(t, shape)? {
        Some((geometry, wrapped)) => install_alias(t, geometry, t.storage_offset(), wrapped),
        None => Err(TensorError::runtime(VIEW_INCOMPATIBLE)),
    }
}

/// Free-function form of [`ViewOps::view_as`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let like = Tensor::zeros(&[2, 6], ScalarType::Float)?;
/// assert_eq!(views::view_as(&a, &like)?.sizes(), &[2, 6]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn view_as(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    view(t, other.sizes())
}

/// Free-function form of [`ViewOps::reshape`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// let r = views::reshape(&views::t(&m)?, &[12])?; // not viewable: copies
/// assert!(!r.is_alias_of(&m));
/// assert_eq!(r.get::<i64>(&[1])?, 4);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn reshape(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    if let Some(v) = try_view_in_place(t, shape)? {
        return Ok(v);
    }
    if let Some((geometry, wrapped)) = view_geometry(t, shape)? {
        return install_alias(t, geometry, t.storage_offset(), wrapped);
    }
    let inferred = infer_size(shape, t.numel())?;
    // `_unsafe_view(self.clone(MemoryFormat::Contiguous), shape)`.
    let copy = copy_api::clone(t, MemoryFormat::Contiguous)?;
    match compute_stride_flagged(copy.sizes(), copy.strides(), &inferred) {
        Some((strides, wrapped)) => {
            make_alias_view(&copy, &inferred, strides, copy.storage_offset(), wrapped)
        }
        None => Err(TensorError::runtime(VIEW_INCOMPATIBLE)),
    }
}

/// Free-function form of [`ViewOps::reshape_as`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let like = Tensor::zeros(&[4, 3], ScalarType::Float)?;
/// assert_eq!(views::reshape_as(&a, &like)?.sizes(), &[4, 3]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn reshape_as(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    reshape(t, other.sizes())
}

// ---------------------------------------------------------------------------
// slice / narrow / select and the list-returning ops
// ---------------------------------------------------------------------------

/// `slice` on an already wrapped dim.
fn slice_at(
    t: &Tensor,
    d: usize,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
) -> Result<Tensor> {
    let r = view_rules::slice_rule(
        &t.sizes()[d],
        &t.strides()[d],
        &t.storage_offset(),
        start.as_ref(),
        end.as_ref(),
        step,
    )?;
    install_slice(t, d, r)
}

/// Installs the view of `t` whose dim `d` is sliced as `r` says.
#[inline(always)]
fn install_slice(t: &Tensor, d: usize, r: view_rules::DimSlice<i64>) -> Result<Tensor> {
    let edit = |geometry: &mut SizesAndStrides| {
        let (new_sizes, new_strides) = geometry.sizes_and_strides_mut();
        new_sizes[d] = r.size;
        new_strides[d] = r.stride;
        Ok(())
    };
    if !r.wrapped {
        return install_edit(t, r.offset, edit);
    }
    let mut geometry = geometry_of(t);
    edit(&mut geometry)?;
    make_view_in_place(t, geometry, r.offset, true)
}

/// Free-function form of [`ViewOps::slice`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let s = views::slice(&a, 0, Some(2), Some(100), 3)?; // a[2:100:3]
/// assert_eq!(s.to_vec::<i64>()?, vec![2, 5, 8, 11]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn slice(
    t: &Tensor,
    dim: i64,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
) -> Result<Tensor> {
    let d = view_rules::slice_dim(t.dim(), dim)?;
    slice_at(t, d, start, end, step)
}

/// Free-function form of [`ViewOps::narrow`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let n = views::narrow(&a, 0, 3, 2)?;
/// assert_eq!((n.storage_offset(), n.to_vec::<i64>()?), (3, vec![3, 4]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn narrow(t: &Tensor, dim: i64, start: i64, length: i64) -> Result<Tensor> {
    let d = view_rules::narrow_dim(t.dim(), dim, &length)?;
    narrow_at(t, d, start, length)
}

/// `narrow` on an already wrapped dim (of a tensor with at least one dim),
/// `length >= 0`.
fn narrow_at(t: &Tensor, d: usize, start: i64, length: i64) -> Result<Tensor> {
    let (start, end) = view_rules::narrow_bounds(&t.sizes()[d], start, &length)?;
    // The slice rule inlined here with step 1, its step arithmetic folded.
    let r = view_rules::slice_rule(
        &t.sizes()[d],
        &t.strides()[d],
        &t.storage_offset(),
        Some(&start),
        Some(&end),
        1,
    )?;
    install_slice(t, d, r)
}

/// Free-function form of [`ViewOps::select`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// let col = views::select(&m, 1, -1)?;
/// assert_eq!(col.to_vec::<i64>()?, vec![3, 7, 11]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn select(t: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
    let d = view_rules::select_dim(t.dim(), dim)?;
    select_at(t, d, index)
}

/// `select` on an already wrapped dim.
fn select_at(t: &Tensor, d: usize, index: i64) -> Result<Tensor> {
    let (offset, wrapped) =
        view_rules::select_offset(t.sizes(), t.strides(), &t.storage_offset(), d, index)?;
    if !wrapped {
        return install_edit(t, offset, |geometry| Ok(geometry.remove_dim(d)?));
    }
    let mut geometry = geometry_of(t);
    geometry.remove_dim(d)?;
    make_view_in_place(t, geometry, offset, true)
}

/// Free-function form of [`ViewOps::unbind`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// let rows = views::unbind(&m, 0)?;
/// assert_eq!((rows.len(), rows[2].to_vec::<i64>()?), (3, vec![8, 9, 10, 11]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn unbind(t: &Tensor, dim: i64) -> Result<Vec<Tensor>> {
    let d = wrap(dim, t.dim())?;
    if t.dim() == 0 {
        return Err(TensorError::index(format!(
            "Dimension specified as {d} but tensor has no dimensions"
        )));
    }
    let size = t.sizes()[d];
    let mut out = pieces_vec(size)?;
    for i in 0..size {
        out.push(select_at(t, d, i)?);
    }
    Ok(out)
}

/// Free-function form of [`ViewOps::split`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let parts = views::split(&a, 5, 0)?;
/// assert_eq!(parts.iter().map(|p| p.numel()).collect::<Vec<_>>(), vec![5, 5, 2]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn split(t: &Tensor, split_size: i64, dim: i64) -> Result<Vec<Tensor>> {
    let view_rules::SplitPlan {
        dim: d,
        num_splits,
        last,
    } = view_rules::split_plan(t.sizes(), &split_size, dim)?;
    let mut out = pieces_vec(num_splits)?;
    for i in 0..num_splits {
        let length = if i < num_splits - 1 { split_size } else { last };
        if length < 0 {
            return Err(TensorError::runtime(
                "narrow(): length must be non-negative.",
            ));
        }
        out.push(narrow_at(t, d, i.wrapping_mul(split_size), length)?);
    }
    Ok(out)
}

/// Free-function form of [`ViewOps::split_with_sizes`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let parts = views::split_with_sizes(&a, &[2, 10], 0)?;
/// assert_eq!(parts[1].storage_offset(), 2);
/// assert!(views::split_with_sizes(&a, &[2, 3], 0).is_err()); // must sum to 12
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn split_with_sizes(t: &Tensor, split_sizes: &[i64], dim: i64) -> Result<Vec<Tensor>> {
    if t.dim() == 0 {
        return Err(TensorError::runtime(
            "split expects at least a 1-dimensional tensor",
        ));
    }
    let d = wrap(dim, t.dim())?;
    let dim_size = t.sizes()[d];
    let mut out = pieces_vec(split_sizes.len() as i64)?;
    let mut start: i64 = 0;
    for &length in split_sizes {
        if length < 0 {
            return Err(TensorError::runtime(format!(
                "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={}",
                fmt_list(split_sizes)
            )));
        }
        out.push(slice_at(
            t,
            d,
            Some(start),
            Some(start.wrapping_add(length)),
            1,
        )?);
        start = start.wrapping_add(length);
    }
    if start != dim_size {
        return Err(TensorError::runtime(format!(
            "split_with_sizes expects split_sizes to sum exactly to {dim_size} (input tensor's size at dimension {dim}), but got split_sizes={}",
            fmt_list(split_sizes)
        )));
    }
    Ok(out)
}

/// Free-function form of [`ViewOps::chunk`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let parts = views::chunk(&a, 5, 0)?; // chunks of ceil(12/5) = 3
/// assert_eq!(parts.len(), 4);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn chunk(t: &Tensor, chunks: i64, dim: i64) -> Result<Vec<Tensor>> {
    let (d, split_size, all_empty) = view_rules::chunk_split_size(t.sizes(), chunks, dim)?;
    if all_empty {
        // `chunks` empty pieces (split_with_sizes of all zeros).
        let mut out = pieces_vec(chunks)?;
        for _ in 0..chunks {
            out.push(slice_at(t, d, Some(0), Some(0), 1)?);
        }
        return Ok(out);
    }
    split(t, split_size, d as i64)
}

/// Free-function form of [`ViewOps::tensor_split`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let parts = views::tensor_split(&a, 5, 0)?; // sizes 3, 3, 2, 2, 2
/// assert_eq!(parts.iter().map(|p| p.numel()).collect::<Vec<_>>(), vec![3, 3, 2, 2, 2]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn tensor_split(t: &Tensor, sections: i64, dim: i64) -> Result<Vec<Tensor>> {
    if t.dim() == 0 {
        return Err(TensorError::runtime(format!(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with {} dims",
            t.dim()
        )));
    }
    let d = wrap(dim, t.dim())?;
    if sections <= 0 {
        return Err(TensorError::runtime(format!(
            "number of sections must be larger than 0, got {sections}"
        )));
    }
    let dim_size = t.sizes()[d];
    let min_split = dim_size / sections;
    let extra = dim_size % sections;
    let mut out = pieces_vec(sections)?;
    let mut start: i64 = 0;
    for i in 0..sections {
        let len = if extra > i {
            min_split.wrapping_add(1)
        } else {
            min_split
        };
        out.push(slice_at(
            t,
            d,
            Some(start),
            Some(start.wrapping_add(len)),
            1,
        )?);
        start = start.wrapping_add(len);
    }
    Ok(out)
}

/// Free-function form of [`ViewOps::tensor_split_indices`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let parts = views::tensor_split_indices(&a, &[1, 5], 0)?;
/// assert_eq!(parts[1].to_vec::<i64>()?, vec![1, 2, 3, 4]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn tensor_split_indices(t: &Tensor, indices: &[i64], dim: i64) -> Result<Vec<Tensor>> {
    if t.dim() == 0 {
        return Err(TensorError::runtime(format!(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with {} dims",
            t.dim()
        )));
    }
    let d = wrap(dim, t.dim())?;
    let mut out = pieces_vec(indices.len() as i64 + 1)?;
    let mut start: i64 = 0;
    for &end in indices {
        out.push(slice_at(t, d, Some(start), Some(end), 1)?);
        start = end;
    }
    out.push(slice_at(t, d, Some(start), Some(t.sizes()[d]), 1)?);
    Ok(out)
}

// ---------------------------------------------------------------------------
// transpose / permute / movedim
// ---------------------------------------------------------------------------

/// Free-function form of [`ViewOps::transpose`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// let tr = views::transpose(&m, 0, -1)?;
/// assert_eq!((tr.sizes(), tr.strides()), (&[4i64, 3][..], &[1i64, 4][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn transpose(t: &Tensor, dim0: i64, dim1: i64) -> Result<Tensor> {
    let (a, b) = view_rules::transpose_dims(t.dim(), dim0, dim1)?;
    if a == b {
        return alias(t);
    }
    // SAFETY: the edit swaps two dims (a permutation).
    unsafe {
        install_rearranged(t, t.storage_offset(), |geometry| {
            let (sizes, strides) = geometry.sizes_and_strides_mut();
            view_rules::transpose_in_place(sizes, strides, a, b);
            Ok(())
        })
    }
}

/// Free-function form of [`ViewOps::swapaxes`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// assert_eq!(views::swapaxes(&m, 0, 1)?.sizes(), &[4, 3]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn swapaxes(t: &Tensor, axis0: i64, axis1: i64) -> Result<Tensor> {
    transpose(t, axis0, axis1)
}

/// Free-function form of [`ViewOps::swapdims`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// assert_eq!(views::swapdims(&m, 1, 0)?.strides(), &[1, 4]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn swapdims(t: &Tensor, dim0: i64, dim1: i64) -> Result<Tensor> {
    transpose(t, dim0, dim1)
}

/// Free-function form of [`ViewOps::t`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// assert_eq!(views::t(&m)?.sizes(), &[4, 3]);
/// assert!(views::t(&Tensor::zeros(&[2, 2, 2], ScalarType::Float)?).is_err()); // <= 2 dims
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn t(x: &Tensor) -> Result<Tensor> {
    let n = x.dim();
    if n > 2 {
        return Err(TensorError::runtime(format!(
            "t() expects a tensor with <= 2 dimensions, but self is {n}D"
        )));
    }
    transpose(x, 0, if n < 2 { 0 } else { 1 })
}

/// Free-function form of [`ViewOps::mt`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[5, 2, 3], ScalarType::Float)?;
/// assert_eq!(views::mt(&b)?.sizes(), &[5, 3, 2]); // last two dims swapped
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn mt(t: &Tensor) -> Result<Tensor> {
    let n = t.dim();
    if n == 0 {
        // PyTorch returns `self` (deprecated, with a warning).
        return Ok(t.clone());
    }
    if n < 2 {
        return Err(TensorError::runtime(format!(
            "tensor.mT is only supported on matrices or batches of matrices. Got {n}-D tensor."
        )));
    }
    transpose(t, -2, -1)
}

/// Free-function form of [`ViewOps::numpy_t`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[5, 2, 3], ScalarType::Float)?;
/// assert_eq!(views::numpy_t(&b)?.sizes(), &[3, 2, 5]); // all dims reversed
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn numpy_t(t: &Tensor) -> Result<Tensor> {
    let mut sizes = DimVec::from_slice(t.sizes());
    let mut strides = DimVec::from_slice(t.strides());
    sizes.reverse();
    strides.reverse();
    t.view_with_geometry(&sizes, &strides, t.storage_offset())
}

/// Free-function form of [`ViewOps::permute`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
/// let p = views::permute(&b, &[2, 0, 1])?;
/// assert_eq!((p.sizes(), p.strides()), (&[4i64, 2, 3][..], &[1i64, 12, 4][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn permute(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    view_rules::check_permute(dims, t.dim())?;
    let (sizes, strides) = (t.sizes(), t.strides());
    // SAFETY: `dims` names each of the dims exactly once (checked just
    // above: every dim wraps, none repeats, and there are as many as the
    // tensor has), so the edit is a permutation.
    unsafe {
        install_rearranged(t, t.storage_offset(), |geometry| {
            let (new_sizes, new_strides) = geometry.sizes_and_strides_mut();
            view_rules::permute_into(sizes, strides, dims, new_sizes, new_strides);
            Ok(())
        })
    }
}

/// Free-function form of [`ViewOps::movedim`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
/// assert_eq!(views::movedim(&b, &[0], &[-1])?.sizes(), &[3, 4, 2]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn movedim(t: &Tensor, source: &[i64], destination: &[i64]) -> Result<Tensor> {
    let (sizes, strides) = (t.sizes(), t.strides());
    let mut new_sizes = DimVec::from_slice(sizes);
    let mut new_strides = DimVec::from_slice(strides);
    view_rules::movedim_into(
        sizes,
        strides,
        source,
        destination,
        &mut new_sizes,
        &mut new_strides,
    )?;
    if sizes.is_empty() {
        return alias(t);
    }
    t.view_with_geometry(&new_sizes, &new_strides, t.storage_offset())
}

// ---------------------------------------------------------------------------
// expand
// ---------------------------------------------------------------------------

/// Free-function form of [`ViewOps::expand`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let row = Tensor::arange(0, 3, 1, ScalarType::Long)?;
/// let e = views::expand(&row, &[2, -1])?;
/// assert_eq!((e.sizes(), e.strides()), (&[2i64, 3][..], &[0i64, 1][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn expand(t: &Tensor, size: &[i64]) -> Result<Tensor> {
    if size.len() < t.dim() {
        return Err(TensorError::runtime(format!(
            "expand({}{{{}}}, size={}): the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
            legacy_type_name(t),
            fmt_list(t.sizes()),
            fmt_list(size),
            size.len(),
            t.dim()
        )));
    }
    c10_core::geometry::check_symint_list(size)?;
    let (sizes, strides) = (t.sizes(), t.strides());
    let built = TensorImpl::view_tensor_fill_or_abandon(
        t.impl_ref(),
        t.storage_offset(),
        size.len(),
        |new_sizes, new_strides| {
            let wrapped = infer_expand_geometry_into(sizes, strides, size, new_sizes, new_strides)?;
            Ok(!wrapped)
        },
    )?;
    if let Some(view) = built {
        return Ok(view);
    }
    // A stride product wrapped: the checked path.
    let mut outcome: Result<bool> = Ok(false);
    let geometry = SizesAndStrides::from_fn(size.len(), |new_sizes, new_strides| {
        outcome = infer_expand_geometry_into(sizes, strides, size, new_sizes, new_strides);
    })?;
    make_view_in_place(t, geometry, t.storage_offset(), outcome?)
}

/// Free-function form of [`ViewOps::expand_as`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let row = Tensor::arange(0, 3, 1, ScalarType::Long)?;
/// let like = Tensor::zeros(&[4, 3], ScalarType::Float)?;
/// assert_eq!(views::expand_as(&row, &like)?.sizes(), &[4, 3]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn expand_as(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    expand(t, other.sizes())
}

/// Free-function form of [`ViewOps::broadcast_to`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let col = Tensor::zeros(&[3, 1], ScalarType::Float)?;
/// assert_eq!(views::broadcast_to(&col, &[2, 3, 5])?.strides(), &[0, 1, 0]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn broadcast_to(t: &Tensor, size: &[i64]) -> Result<Tensor> {
    expand(t, size)
}

pub use crate::infer::broadcast_shapes;

// ---------------------------------------------------------------------------
// squeeze / unsqueeze / flatten / unflatten / ravel
// ---------------------------------------------------------------------------

/// Free-function form of [`ViewOps::squeeze`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[1, 3, 1, 2], ScalarType::Float)?;
/// assert_eq!(views::squeeze(&b)?.sizes(), &[3, 2]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn squeeze(t: &Tensor) -> Result<Tensor> {
    let (sizes, strides) = (t.sizes(), t.strides());
    let mut new_sizes = DimVec::from_slice(sizes);
    let mut new_strides = DimVec::from_slice(strides);
    let k = view_rules::squeeze_into(sizes, strides, &mut new_sizes, &mut new_strides)?;
    new_sizes.truncate(k);
    new_strides.truncate(k);
    t.view_with_geometry(&new_sizes, &new_strides, t.storage_offset())
}

/// Free-function form of [`ViewOps::squeeze_dim`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[1, 3, 1], ScalarType::Float)?;
/// assert_eq!(views::squeeze_dim(&b, -1)?.sizes(), &[1, 3]);
/// assert_eq!(views::squeeze_dim(&b, 1)?.sizes(), &[1, 3, 1]); // size 3: unchanged
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn squeeze_dim(t: &Tensor, dim: i64) -> Result<Tensor> {
    let Some(d) = view_rules::squeeze_dim_index(t.sizes(), dim)? else {
        // Nothing removed: PyTorch returns an alias.
        return alias(t);
    };
    let mut sizes = DimVec::from_slice(t.sizes());
    let mut strides = DimVec::from_slice(t.strides());
    sizes.remove(d);
    strides.remove(d);
    t.view_with_geometry(&sizes, &strides, t.storage_offset())
}

/// Free-function form of [`ViewOps::index`]: [`crate::indexing::index`]
/// with integer entries, as Python's tuple `t[(i, j)]` (so `t[(0,)]` of a
/// 0-dim tensor is `too many indices for tensor of dimension 0`).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// assert_eq!(views::index(&m, &[2, -1])?.item::<i64>()?, 11);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn index(t: &Tensor, indices: &[i64]) -> Result<Tensor> {
    let list: Vec<crate::indexing::TensorIndex> = indices
        .iter()
        .map(|&i| crate::indexing::TensorIndex::Int(i))
        .collect();
    crate::indexing::index_as(t, &list, true)
}

/// Free-function form of [`ViewOps::squeeze_dims`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[1, 3, 1], ScalarType::Float)?;
/// assert_eq!(views::squeeze_dims(&b, &[0, 2])?.sizes(), &[3]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn squeeze_dims(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let (sizes, strides) = (t.sizes(), t.strides());
    let mut new_sizes = DimVec::from_slice(sizes);
    let mut new_strides = DimVec::from_slice(strides);
    let k = view_rules::squeeze_dims_into(sizes, strides, dims, &mut new_sizes, &mut new_strides)?;
    new_sizes.truncate(k);
    new_strides.truncate(k);
    t.view_with_geometry(&new_sizes, &new_strides, t.storage_offset())
}

/// Free-function form of [`ViewOps::unsqueeze`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let u = views::unsqueeze(&a, 0)?;
/// assert_eq!((u.sizes(), u.strides()), (&[1i64, 12][..], &[12i64, 1][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn unsqueeze(t: &Tensor, dim: i64) -> Result<Tensor> {
    let (d, new_stride, wrapped) = view_rules::unsqueeze_rule(t.sizes(), t.strides(), dim)?;
    if !wrapped {
        // SAFETY: the edit inserts one dim of size 1.
        return unsafe {
            install_rearranged(t, t.storage_offset(), |geometry| {
                Ok(geometry.insert_dim(d, 1, new_stride)?)
            })
        };
    }
    let mut geometry = geometry_of(t);
    geometry.insert_dim(d, 1, new_stride)?;
    make_view_in_place(t, geometry, t.storage_offset(), true)
}

/// Free-function form of [`ViewOps::flatten`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
/// assert_eq!(views::flatten(&b, 1, -1)?.sizes(), &[2, 12]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn flatten(t: &Tensor, start_dim: i64, end_dim: i64) -> Result<Tensor> {
    match view_rules::flatten_plan(t.sizes(), start_dim, end_dim)? {
        view_rules::FlattenPlan::Scalar => reshape(t, &[1]),
        view_rules::FlattenPlan::Unchanged => Ok(t.clone()),
        view_rules::FlattenPlan::Reshape(shape) => reshape(t, &shape),
    }
}

/// Free-function form of [`ViewOps::unflatten`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// assert_eq!(views::unflatten(&a, 0, &[2, -1, 3])?.sizes(), &[2, 2, 3]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn unflatten(t: &Tensor, dim: i64, sizes: &[i64]) -> Result<Tensor> {
    view(t, &view_rules::unflatten_shape(t.sizes(), dim, sizes)?)
}

/// Free-function form of [`ViewOps::ravel`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// let r = views::ravel(&m)?; // contiguous: a view
/// assert!(r.is_alias_of(&m) && r.sizes() == [12]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn ravel(t: &Tensor) -> Result<Tensor> {
    let c = copy_api::contiguous(t, MemoryFormat::Contiguous)?;
    view(&c, &[-1])
}

// ---------------------------------------------------------------------------
// diagonal / unfold / alias / detach
// ---------------------------------------------------------------------------

/// Free-function form of [`ViewOps::diagonal`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// let d = views::diagonal(&m, 1, 0, 1)?;
/// assert_eq!(d.to_vec::<i64>()?, vec![1, 6, 11]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn diagonal(t: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
    let (sizes, strides) = (t.sizes(), t.strides());
    let plan = view_rules::diagonal_plan(sizes, strides, &t.storage_offset(), offset, dim1, dim2)?;
    // At least two dims (`dim1` and `dim2` differ).
    let m = sizes.len() - 1;
    filled_view(t, plan.offset, m, plan.wrapped, |new_sizes, new_strides| {
        view_rules::diagonal_fill(sizes, strides, &plan, new_sizes, new_strides)
    })
}

/// Free-function form of [`ViewOps::unfold`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let w = views::unfold(&a, 0, 4, 4)?; // windows of 4, step 4
/// assert_eq!((w.sizes(), w.to_vec::<i64>()?[4]), (&[3i64, 4][..], 4));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn unfold(t: &Tensor, dimension: i64, size: i64, step: i64) -> Result<Tensor> {
    let (sizes, strides) = (t.sizes(), t.strides());
    let plan = view_rules::unfold_plan(sizes, strides, dimension, size, step)?;
    let m = sizes.len() + 1;
    filled_view(
        t,
        t.storage_offset(),
        m,
        plan.wrapped,
        |new_sizes, new_strides| {
            view_rules::unfold_fill(sizes, strides, &plan, new_sizes, new_strides)
        },
    )
}

/// A view of `t` with `ndim` dims whose geometry `fill` writes: in place in
/// the new `TensorImpl` when the rule's arithmetic did not wrap (the fast
/// path), else into buffers checked by [`make_view`] like any other
/// geometry that wrapped.
fn filled_view(
    t: &Tensor,
    offset: i64,
    ndim: usize,
    wrapped: bool,
    fill: impl Fn(&mut [i64], &mut [i64]),
) -> Result<Tensor> {
    if !wrapped {
        let built = TensorImpl::view_tensor_fill_or_abandon(
            t.impl_ref(),
            offset,
            ndim,
            |new_sizes, new_strides| {
                fill(new_sizes, new_strides);
                Ok(true)
            },
        )?;
        if let Some(view) = built {
            return Ok(view);
        }
    }
    let mut new_sizes = DimVec::from_elem(0, ndim);
    let mut new_strides = DimVec::from_elem(0, ndim);
    fill(&mut new_sizes, &mut new_strides);
    make_view(t, &new_sizes, &new_strides, offset, wrapped)
}

/// Free-function form of [`ViewOps::alias`].
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let al = views::alias(&a)?;
/// assert!(al.is_alias_of(&a) && !al.is_same(&a));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn alias(t: &Tensor) -> Result<Tensor> {
    // SAFETY: the edit changes nothing.
    unsafe { install_rearranged(t, t.storage_offset(), |_| Ok(())) }
}

// ---------------------------------------------------------------------------
// The trait
// ---------------------------------------------------------------------------

/// PyTorch's view ops as methods on [`Tensor`]. Every method is also a free
/// function of this module with the tensor as first argument.
pub trait ViewOps: crate::sealed::Sealed {
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
    fn view(&self, shape: &[i64]) -> Result<Tensor>;

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
    fn reshape(&self, shape: &[i64]) -> Result<Tensor>;

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
    fn slice(&self, dim: i64, start: Option<i64>, end: Option<i64>, step: i64) -> Result<Tensor>;

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
    fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Tensor>;

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
    fn select(&self, dim: i64, index: i64) -> Result<Tensor>;

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
    fn split(&self, split_size: i64, dim: i64) -> Result<Vec<Tensor>>;

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
    fn split_with_sizes(&self, split_sizes: &[i64], dim: i64) -> Result<Vec<Tensor>>;

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
    fn tensor_split_indices(&self, indices: &[i64], dim: i64) -> Result<Vec<Tensor>>;

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
    fn expand(&self, size: &[i64]) -> Result<Tensor>;

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
    fn broadcast_to(&self, size: &[i64]) -> Result<Tensor>;

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
    /// slices, `None` and `...` see [`crate::indexing`].
    ///
    /// ```
    /// use aten_shape::views::ViewOps;
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::arange(0, 6, 1, ScalarType::Long)?.view(&[2, 3])?;
    /// assert_eq!(t.index(&[1, -1])?.item::<i64>()?, 5);
    /// assert_eq!(t.index(&[1])?.to_vec::<i64>()?, vec![3, 4, 5]);
    /// let e = t.index(&[0, 0, 0]).unwrap_err();
    /// assert_eq!(e.to_string(), "too many indices for tensor of dimension 2");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    fn index(&self, indices: &[i64]) -> Result<Tensor>;

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
    fn unflatten(&self, dim: i64, sizes: &[i64]) -> Result<Tensor>;

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
}

impl ViewOps for Tensor {
    fn view(&self, shape: &[i64]) -> Result<Tensor> {
        view(self, shape)
    }
    fn view_as(&self, other: &Tensor) -> Result<Tensor> {
        view_as(self, other)
    }
    fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        reshape(self, shape)
    }
    fn reshape_as(&self, other: &Tensor) -> Result<Tensor> {
        reshape_as(self, other)
    }
    fn slice(&self, dim: i64, start: Option<i64>, end: Option<i64>, step: i64) -> Result<Tensor> {
        slice(self, dim, start, end, step)
    }
    fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Tensor> {
        narrow(self, dim, start, length)
    }
    fn select(&self, dim: i64, index: i64) -> Result<Tensor> {
        select(self, dim, index)
    }
    fn unbind(&self, dim: i64) -> Result<Vec<Tensor>> {
        unbind(self, dim)
    }
    fn split(&self, split_size: i64, dim: i64) -> Result<Vec<Tensor>> {
        split(self, split_size, dim)
    }
    fn split_with_sizes(&self, split_sizes: &[i64], dim: i64) -> Result<Vec<Tensor>> {
        split_with_sizes(self, split_sizes, dim)
    }
    fn chunk(&self, chunks: i64, dim: i64) -> Result<Vec<Tensor>> {
        chunk(self, chunks, dim)
    }
    fn tensor_split(&self, sections: i64, dim: i64) -> Result<Vec<Tensor>> {
        tensor_split(self, sections, dim)
    }
    fn tensor_split_indices(&self, indices: &[i64], dim: i64) -> Result<Vec<Tensor>> {
        tensor_split_indices(self, indices, dim)
    }
    fn transpose(&self, dim0: i64, dim1: i64) -> Result<Tensor> {
        transpose(self, dim0, dim1)
    }
    fn swapaxes(&self, axis0: i64, axis1: i64) -> Result<Tensor> {
        swapaxes(self, axis0, axis1)
    }
    fn swapdims(&self, dim0: i64, dim1: i64) -> Result<Tensor> {
        swapdims(self, dim0, dim1)
    }
    fn t(&self) -> Result<Tensor> {
        t(self)
    }
    fn mt(&self) -> Result<Tensor> {
        mt(self)
    }
    fn numpy_t(&self) -> Result<Tensor> {
        numpy_t(self)
    }
    fn permute(&self, dims: &[i64]) -> Result<Tensor> {
        permute(self, dims)
    }
    fn movedim(&self, source: &[i64], destination: &[i64]) -> Result<Tensor> {
        movedim(self, source, destination)
    }
    fn expand(&self, size: &[i64]) -> Result<Tensor> {
        expand(self, size)
    }
    fn expand_as(&self, other: &Tensor) -> Result<Tensor> {
        expand_as(self, other)
    }
    fn broadcast_to(&self, size: &[i64]) -> Result<Tensor> {
        broadcast_to(self, size)
    }
    fn squeeze(&self) -> Result<Tensor> {
        squeeze(self)
    }
    fn squeeze_dim(&self, dim: i64) -> Result<Tensor> {
        squeeze_dim(self, dim)
    }
    fn index(&self, indices: &[i64]) -> Result<Tensor> {
        index(self, indices)
    }
    fn squeeze_dims(&self, dims: &[i64]) -> Result<Tensor> {
        squeeze_dims(self, dims)
    }
    fn unsqueeze(&self, dim: i64) -> Result<Tensor> {
        unsqueeze(self, dim)
    }
    fn flatten(&self, start_dim: i64, end_dim: i64) -> Result<Tensor> {
        flatten(self, start_dim, end_dim)
    }
    fn unflatten(&self, dim: i64, sizes: &[i64]) -> Result<Tensor> {
        unflatten(self, dim, sizes)
    }
    fn ravel(&self) -> Result<Tensor> {
        ravel(self)
    }
    fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
        diagonal(self, offset, dim1, dim2)
    }
    fn unfold(&self, dimension: i64, size: i64, step: i64) -> Result<Tensor> {
        unfold(self, dimension, size, step)
    }
    fn alias(&self) -> Result<Tensor> {
        alias(self)
    }
}
