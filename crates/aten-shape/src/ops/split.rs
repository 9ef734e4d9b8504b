//! The split / chunk family: `split`, `split_with_sizes`, `chunk`, `tensor_split`, `unbind`,
//! `hsplit`, `vsplit`, `dsplit`.
//!
//! The rule is written once, generic over [`ShapeInt`] (`i64` on the
//! concrete path, `SymInt` on the symbolic one), and the faces of each
//! op sit next to it: the concrete free functions (re-exported by
//! [`crate::views`]), the in-place twins, and the symbolic
//! [`Geometry`] methods.

use super::prelude::*;
use super::slice::{narrow_at, select_at, slice_at};

// ---------------------------------------------------------------------------
// The rule
// ---------------------------------------------------------------------------

/// ATen's 0-dim check of `split` and `split_with_sizes` (`op` `"split"`),
/// `chunk` and `tensor_split`, with each one's message; the concrete and
/// symbolic faces share it.
fn needs_dims(op: &str, ndim: usize) -> Result<()> {
    if ndim > 0 {
        return Ok(());
    }
    let message = if op == "tensor_split" {
        format!(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with {ndim} dims"
        )
    } else {
        format!("{op} expects at least a 1-dimensional tensor")
    };
    Err(shape_err(ShapeErrorKind::ZeroDim, message).into())
}

/// Integers whose value can be forced to a plain `i64` (c10's
/// `guard_int`): the count of pieces `split` returns must be one.
pub trait GuardInt: ShapeInt {
    /// The value; on symbols decided from the hints and guarded with
    /// `Eq(self, value)`.
    fn guard_int(&self) -> Result<i64>;
}

impl GuardInt for i64 {
    #[inline]
    fn guard_int(&self) -> Result<i64> {
        Ok(*self)
    }
}

impl GuardInt for SymInt {
    fn guard_int(&self) -> Result<i64> {
        SymInt::guard_int(self)
    }
}

/// How `split(split_size, dim)` cuts: the wrapped dim, the number of
/// pieces and the last piece's length (every other piece has
/// `split_size`; the last may be shorter). See [`split_plan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SplitPlan<T> {
    /// The wrapped dim.
    pub dim: usize,
    /// The number of pieces (at least 1).
    pub num_splits: i64,
    /// The last piece's length.
    pub last: T,
}

/// `split(split_size, dim)`: ATen's checks and errors (a 0-dim tensor;
/// `split_size >= 0`; `split_size` 0 only for a dim of size 0, each a
/// `guard_bool` site on symbols), then `max(ceil(size / split_size), 1)`
/// pieces (`guard_int`'d) and the last piece's length `split_size -
/// (split_size * num_splits - size)`. Piece `i` is then `narrow(dim,
/// i * split_size, length)`.
#[inline]
pub(crate) fn split_plan<T: GuardInt>(
    sizes: &[T],
    split_size: &T,
    dim: i64,
) -> Result<SplitPlan<T>> {
    needs_dims("split", sizes.len())?;
    let zero = T::from_i64(0);
    // ATen's `TORCH_SYM_CHECK`s: guards on backed sizes, runtime asserts
    // on unbacked ones.
    if !split_size.sym_ge(&zero)?.expect_true()? {
        return Err(shape_err(
            ShapeErrorKind::InvalidSplit,
            format!("split expects split_size be non-negative, but got split_size={split_size}"),
        )
        .into());
    }
    let d = wrap(dim, sizes.len())?;
    let dim_size = &sizes[d];
    let nonzero_ok = split_size
        .sym_gt(&zero)?
        .sym_or(&dim_size.sym_eq(&zero)?)?
        .expect_true()?;
    if !nonzero_ok {
        return Err(shape_err(
            ShapeErrorKind::InvalidSplit,
            format!(
            "split_size can only be 0 if dimension size is 0, but got dimension size of {dim_size}"
        ),
        )
        .into());
    }
    let mut num_splits: i64 = 1;
    // `guard_or_true`: an unbacked split size passed the check above, so
    // it is taken to be non-zero (PyTorch 2.15 splits `x.split(u0 - 1)`).
    if split_size.sym_ne(&zero)?.guard_or_true()? {
        let n = dim_size
            .add(split_size)?
            .sub(&T::from_i64(1))?
            .div(split_size)?;
        num_splits = n.guard_int()?.max(1);
    }
    let last = split_size.sub(&split_size.mul(&T::from_i64(num_splits))?.sub(dim_size)?)?;
    Ok(SplitPlan {
        dim: d,
        num_splits,
        last,
    })
}

/// `chunk(chunks, dim)`: ATen's checks and errors (a 0-dim tensor;
/// `chunks > 0`), then the wrapped dim and the `split` size
/// `ceil(size / chunks)`; the flag says every piece is empty (split size
/// and dim size both 0: `chunks` empty pieces, `split_with_sizes` of
/// zeros), else the result is `split(split_size, dim)`.
#[inline]
pub(crate) fn chunk_split_size<T: ShapeInt>(
    sizes: &[T],
    chunks: i64,
    dim: i64,
) -> Result<(usize, T, bool)> {
    needs_dims("chunk", sizes.len())?;
    if chunks <= 0 {
        return Err(shape_err(
            ShapeErrorKind::InvalidSplit,
            format!("chunk expects `chunks` to be greater than 0, got: {chunks}"),
        )
        .into());
    }
    let d = wrap(dim, sizes.len())?;
    let dim_size = &sizes[d];
    let split_size = dim_size
        .add(&T::from_i64(chunks.wrapping_sub(1)))?
        .div(&T::from_i64(chunks))?;
    let zero = T::from_i64(0);
    let all_empty =
        split_size.sym_eq(&zero)?.guard_bool()? && dim_size.sym_eq(&zero)?.guard_bool()?;
    Ok((d, split_size, all_empty))
}

// ---------------------------------------------------------------------------
// Concrete tensors
// ---------------------------------------------------------------------------

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

/// Free-function form of [`ViewOps::unbind`](crate::views::ViewOps::unbind).
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
    if t.has_symbolic_sizes_strides() {
        return sym_ops(t, |g| g.unbind(dim));
    }
    let d = wrap(dim, t.dim())?;
    if t.dim() == 0 {
        return Err(c10_core::ShapeError::new(
            c10_core::ShapeErrorKind::NoDims,
            format!("Dimension specified as {d} but tensor has no dimensions"),
        )
        .with_dim(d as i64)
        .into());
    }
    let size = t.sizes()[d];
    let mut out = pieces_vec(size)?;
    for i in 0..size {
        out.push(select_at(t, d, i)?);
    }
    Ok(out)
}

/// Free-function form of [`ViewOps::split`](crate::views::ViewOps::split).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let parts = views::split(&a, 5, 0)?;
/// assert_eq!(parts.iter().map(|p| p.numel()).collect::<Vec<_>>(), vec![5, 5, 2]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn split(t: &Tensor, split_size: impl IntoSymInt, dim: i64) -> Result<Vec<Tensor>> {
    match split_size.into_sym_int()? {
        SymInt::Int(s) if !t.has_symbolic_sizes_strides() => split_ints(t, s, dim),
        s => sym_ops(t, |g| g.split(&s, dim)),
    }
}

/// [`split`] with a concrete size on a concrete tensor.
pub(crate) fn split_ints(t: &Tensor, split_size: i64, dim: i64) -> Result<Vec<Tensor>> {
    let SplitPlan {
        dim: d,
        num_splits,
        last,
    } = split_plan(t.sizes(), &split_size, dim)?;
    let mut out = pieces_vec(num_splits)?;
    for i in 0..num_splits {
        let length = if i < num_splits - 1 { split_size } else { last };
        if length < 0 {
            return Err(shape_err(
                ShapeErrorKind::InvalidLength,
                "narrow(): length must be non-negative.",
            )
            .into());
        }
        out.push(narrow_at(t, d, i.wrapping_mul(split_size), length)?);
    }
    Ok(out)
}

/// Free-function form of [`ViewOps::split_with_sizes`](crate::views::ViewOps::split_with_sizes).
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
#[inline]
pub fn split_with_sizes(t: &Tensor, split_sizes: impl IntoShape, dim: i64) -> Result<Vec<Tensor>> {
    match split_sizes.into_shape()? {
        Shape::Ints(s) if !t.has_symbolic_sizes_strides() => {
            split_with_sizes_ints(t, s.as_ref(), dim)
        }
        s => {
            let s = s.to_sym_ints();
            sym_ops(t, |g| g.split_with_sizes(&s, dim))
        }
    }
}

/// [`split_with_sizes`] with concrete sizes on a concrete tensor.
fn split_with_sizes_ints(t: &Tensor, split_sizes: &[i64], dim: i64) -> Result<Vec<Tensor>> {
    needs_dims("split", t.dim())?;
    let d = wrap(dim, t.dim())?;
    let dim_size = t.sizes()[d];
    let mut out = pieces_vec(split_sizes.len() as i64)?;
    let mut start: i64 = 0;
    for &length in split_sizes {
        if length < 0 {
            return Err(shape_err(ShapeErrorKind::InvalidSplit, format!(
                "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={}",
                fmt_list(split_sizes)
            )).with_sizes(split_sizes).into());
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
        return Err(shape_err(ShapeErrorKind::InvalidSplit, format!(
            "split_with_sizes expects split_sizes to sum exactly to {dim_size} (input tensor's size at dimension {dim}), but got split_sizes={}",
            fmt_list(split_sizes)
        )).with_dim(dim).with_sizes(split_sizes).into());
    }
    Ok(out)
}

/// Free-function form of [`ViewOps::chunk`](crate::views::ViewOps::chunk).
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
    if t.has_symbolic_sizes_strides() {
        return sym_ops(t, |g| g.chunk(chunks, dim));
    }
    let (d, split_size, all_empty) = chunk_split_size(t.sizes(), chunks, dim)?;
    if all_empty {
        // `chunks` empty pieces (split_with_sizes of all zeros).
        let mut out = pieces_vec(chunks)?;
        for _ in 0..chunks {
            out.push(slice_at(t, d, Some(0), Some(0), 1)?);
        }
        return Ok(out);
    }
    split_ints(t, split_size, d as i64)
}

/// Free-function form of [`ViewOps::tensor_split`](crate::views::ViewOps::tensor_split).
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
    if t.has_symbolic_sizes_strides() {
        return sym_ops(t, |g| g.tensor_split(sections, dim));
    }
    needs_dims("tensor_split", t.dim())?;
    let d = wrap(dim, t.dim())?;
    if sections <= 0 {
        return Err(shape_err(
            ShapeErrorKind::InvalidSplit,
            format!("number of sections must be larger than 0, got {sections}"),
        )
        .into());
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

/// Free-function form of [`ViewOps::tensor_split_indices`](crate::views::ViewOps::tensor_split_indices).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let parts = views::tensor_split_indices(&a, &[1, 5], 0)?;
/// assert_eq!(parts[1].to_vec::<i64>()?, vec![1, 2, 3, 4]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn tensor_split_indices(t: &Tensor, indices: impl IntoShape, dim: i64) -> Result<Vec<Tensor>> {
    match indices.into_shape()? {
        Shape::Ints(i) if !t.has_symbolic_sizes_strides() => {
            tensor_split_indices_ints(t, i.as_ref(), dim)
        }
        i => {
            let i = i.to_sym_ints();
            sym_ops(t, |g| g.tensor_split_indices(&i, dim))
        }
    }
}

/// [`tensor_split_indices`] with concrete indices on a concrete tensor.
fn tensor_split_indices_ints(t: &Tensor, indices: &[i64], dim: i64) -> Result<Vec<Tensor>> {
    needs_dims("tensor_split", t.dim())?;
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

/// Which of `hsplit`/`vsplit`/`dsplit`: its name, the fewest dims it
/// accepts and the dim it splits (`hsplit` splits dim 1, or dim 0 of a
/// 1-d tensor).
fn directional_dim(t: &Tensor, name: &str, min_dims: usize) -> Result<i64> {
    if t.dim() < min_dims {
        return Err(shape_err(ShapeErrorKind::WrongRank, format!(
            "torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor with {} dimensions!",
            t.dim()
        )).into());
    }
    Ok(match name {
        "hsplit" if t.dim() == 1 => 0,
        "hsplit" => 1,
        "vsplit" => 0,
        _ => 2,
    })
}

/// `tensor_split(sections, dim)` after `hsplit`'s check that `sections`
/// divides the dim evenly (PyTorch's message).
fn directional_sections(
    t: &Tensor,
    name: &str,
    min_dims: usize,
    sections: i64,
) -> Result<Vec<Tensor>> {
    let dim = directional_dim(t, name, min_dims)?;
    let size = t.sizes()[dim as usize];
    if sections == 0 || size % sections != 0 {
        return Err(shape_err(ShapeErrorKind::InvalidSplit, format!(
            "torch.{name} attempted to split along dimension {dim}, but the size of the dimension {size} is not divisible by the split_size {sections}!"
        )).into());
    }
    tensor_split(t, sections, dim)
}

/// `torch.hsplit(t, sections)`: `sections` equal pieces along dim 1 (dim
/// 0 of a 1-d tensor); the dim must divide evenly. Views.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::zeros(&[4, 6], ScalarType::Float)?;
/// let parts = views::hsplit(&a, 3)?;
/// assert_eq!(parts.iter().map(|p| p.sizes().to_vec()).collect::<Vec<_>>(), vec![vec![4, 2]; 3]);
/// assert!(views::hsplit(&a, 4).is_err()); // 6 is not divisible by 4
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn hsplit(t: &Tensor, sections: i64) -> Result<Vec<Tensor>> {
    directional_sections(t, "hsplit", 1, sections)
}

/// `torch.vsplit(t, sections)`: `sections` equal pieces along dim 0 of a
/// tensor of at least 2 dims. Views.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::zeros(&[4, 6], ScalarType::Float)?;
/// assert_eq!(views::vsplit(&a, 2)?[1].sizes(), &[2, 6]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn vsplit(t: &Tensor, sections: i64) -> Result<Vec<Tensor>> {
    directional_sections(t, "vsplit", 2, sections)
}

/// `torch.dsplit(t, sections)`: `sections` equal pieces along dim 2 of a
/// tensor of at least 3 dims. Views.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::zeros(&[2, 2, 4], ScalarType::Float)?;
/// assert_eq!(views::dsplit(&a, 2)?[0].sizes(), &[2, 2, 2]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn dsplit(t: &Tensor, sections: i64) -> Result<Vec<Tensor>> {
    directional_sections(t, "dsplit", 3, sections)
}

/// `torch.hsplit(t, indices)`: `tensor_split(indices)` along `hsplit`'s dim.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::zeros(&[4, 6], ScalarType::Float)?;
/// let lens: Vec<i64> = views::hsplit_indices(&a, &[1, 2])?.iter().map(|p| p.sizes()[1]).collect();
/// assert_eq!(lens, vec![1, 1, 4]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn hsplit_indices(t: &Tensor, indices: &[i64]) -> Result<Vec<Tensor>> {
    let dim = directional_dim(t, "hsplit", 1)?;
    tensor_split_indices(t, indices, dim)
}

/// `torch.vsplit(t, indices)`: `tensor_split(indices)` along dim 0.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::zeros(&[4, 6], ScalarType::Float)?;
/// assert_eq!(views::vsplit_indices(&a, &[3])?[0].sizes(), &[3, 6]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn vsplit_indices(t: &Tensor, indices: &[i64]) -> Result<Vec<Tensor>> {
    let dim = directional_dim(t, "vsplit", 2)?;
    tensor_split_indices(t, indices, dim)
}

/// `torch.dsplit(t, indices)`: `tensor_split(indices)` along dim 2.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::zeros(&[1, 1, 5], ScalarType::Float)?;
/// assert_eq!(views::dsplit_indices(&a, &[4])?[1].sizes(), &[1, 1, 1]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn dsplit_indices(t: &Tensor, indices: &[i64]) -> Result<Vec<Tensor>> {
    let dim = directional_dim(t, "dsplit", 3)?;
    tensor_split_indices(t, indices, dim)
}

// ---------------------------------------------------------------------------
// Symbolic geometry
// ---------------------------------------------------------------------------

impl<T: ShapeInt> Geometry<T> {
    /// `split(split_size, dim)`: the number of pieces is a plain integer,
    /// so on symbols it is `guard_int`'ed (it specialises that count).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let p = Geometry::<i64>::contiguous(&[5])?.split(&2, 0)?;
    /// assert_eq!(p.iter().map(|g| g.sizes[0]).collect::<Vec<_>>(), vec![2, 2, 1]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn split(&self, split_size: &T, dim: i64) -> Result<Vec<Geometry<T>>>
    where
        T: GuardInt,
    {
        let SplitPlan {
            dim: d,
            num_splits,
            last,
        } = split_plan(&self.sizes, split_size, dim)?;
        let mut out = Vec::new();
        for i in 0..num_splits {
            let length = if i < num_splits - 1 {
                split_size.clone()
            } else {
                last.clone()
            };
            let start = split_size.mul(&c(i))?;
            out.push(self.narrow_sym(d, &start, &length)?);
        }
        Ok(out)
    }

    /// `narrow` with a symbolic start (what `split` needs).
    fn narrow_sym(&self, d: usize, start: &T, length: &T) -> Result<Geometry<T>> {
        if !length.sym_ge(&c(0))?.expect_true()? {
            return Err(shape_err(
                ShapeErrorKind::InvalidLength,
                "narrow(): length must be non-negative.",
            )
            .into());
        }
        let cur = self.sizes[d].clone();
        if !start.sym_le(&cur.sub(length)?)?.expect_true()? {
            return Err(shape_err(
                ShapeErrorKind::InvalidLength,
                format!("start ({start}) + length ({length}) exceeds dimension size ({cur})."),
            )
            .into());
        }
        let end = start.add(length)?;
        self.slice_at(d, Some(start), Some(&end), 1)
    }

    /// `chunk(chunks, dim)`: `split` by `ceil(size / chunks)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// assert_eq!(Geometry::<i64>::contiguous(&[5])?.chunk(2, 0)?.len(), 2);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn chunk(&self, chunks: i64, dim: i64) -> Result<Vec<Geometry<T>>>
    where
        T: GuardInt,
    {
        let (d, split_size, all_empty) = chunk_split_size(&self.sizes, chunks, dim)?;
        if all_empty {
            // Every piece is empty.
            let mut out = Vec::new();
            for _ in 0..chunks {
                out.push(self.narrow_sym(d, &c(0), &c(0))?);
            }
            return Ok(out);
        }
        self.split(&split_size, d as i64)
    }

    /// `unbind(dim)`: every `select(dim, i)`; the number of pieces is a
    /// plain integer, so on symbols the dim's size is `guard_int`'ed.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let rows = Geometry::<i64>::contiguous(&[3, 4])?.unbind(0)?;
    /// assert_eq!((rows.len(), rows[2].offset), (3, 8));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn unbind(&self, dim: i64) -> Result<Vec<Geometry<T>>>
    where
        T: GuardInt,
    {
        let d = wrap(dim, self.dim())?;
        if self.dim() == 0 {
            return Err(shape_err(
                ShapeErrorKind::NoDims,
                format!("Dimension specified as {d} but tensor has no dimensions"),
            )
            .into());
        }
        let n = self.sizes[d].guard_int()?;
        (0..n).map(|i| self.select(d as i64, &c(i))).collect()
    }

    /// `split_with_sizes(split_sizes, dim)`: consecutive slices of the
    /// given lengths, which must add up to the dim's size (the same
    /// checks and errors as the concrete op).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let p = Geometry::<i64>::contiguous(&[5])?.split_with_sizes(&[1, 4], 0)?;
    /// assert_eq!((p[1].sizes.clone(), p[1].offset), (vec![4], 1));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn split_with_sizes(&self, split_sizes: &[T], dim: i64) -> Result<Vec<Geometry<T>>> {
        needs_dims("split", self.dim())?;
        let d = wrap(dim, self.dim())?;
        let mut out = Vec::with_capacity(split_sizes.len());
        let mut start: T = c(0);
        for length in split_sizes {
            // ATen's `TORCH_SYM_CHECK(length >= 0)`: a runtime assert on
            // unbacked sizes.
            if !length.sym_ge(&c(0))?.expect_true()? {
                return Err(shape_err(ShapeErrorKind::InvalidSplit, format!(
                    "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={}",
                    fmt_list(split_sizes)
                )).with_sizes_of(split_sizes).into());
            }
            let end = start.add(length)?;
            out.push(self.slice_at(d, Some(&start), Some(&end), 1)?);
            start = end;
        }
        if !start.sym_eq(&self.sizes[d])?.expect_true()? {
            return Err(shape_err(ShapeErrorKind::InvalidSplit, format!(
                "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension {dim}), but got split_sizes={}",
                self.sizes[d],
                fmt_list(split_sizes)
            )).with_dim(dim).with_sizes_of(split_sizes).into());
        }
        Ok(out)
    }

    /// `tensor_split(sections, dim)`: exactly `sections` pieces, the first
    /// `size % sections` one longer (each comparison a guard on symbols).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let p = Geometry::<i64>::contiguous(&[5])?.tensor_split(3, 0)?;
    /// assert_eq!(p.iter().map(|g| g.sizes[0]).collect::<Vec<_>>(), vec![2, 2, 1]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn tensor_split(&self, sections: i64, dim: i64) -> Result<Vec<Geometry<T>>> {
        needs_dims("tensor_split", self.dim())?;
        let d = wrap(dim, self.dim())?;
        if sections <= 0 {
            return Err(shape_err(
                ShapeErrorKind::InvalidSplit,
                format!("number of sections must be larger than 0, got {sections}"),
            )
            .into());
        }
        let size = &self.sizes[d];
        let min_split = size.div(&c(sections))?;
        let extra = size.rem(&c(sections))?;
        let mut out = Vec::with_capacity(sections as usize);
        let mut start: T = c(0);
        for i in 0..sections {
            let len = if extra.sym_gt(&c(i))?.guard_bool()? {
                min_split.add(&c(1))?
            } else {
                min_split.clone()
            };
            let end = start.add(&len)?;
            out.push(self.slice_at(d, Some(&start), Some(&end), 1)?);
            start = end;
        }
        Ok(out)
    }

    /// `tensor_split(indices, dim)`: pieces `[0:i0]`, `[i0:i1]`, ...,
    /// `[ik:]`, each sliced with `slice`'s clamping.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let p = Geometry::<i64>::contiguous(&[5])?.tensor_split_indices(&[1, 4], 0)?;
    /// assert_eq!(p.iter().map(|g| g.sizes[0]).collect::<Vec<_>>(), vec![1, 3, 1]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn tensor_split_indices(&self, indices: &[T], dim: i64) -> Result<Vec<Geometry<T>>> {
        needs_dims("tensor_split", self.dim())?;
        let d = wrap(dim, self.dim())?;
        let mut out = Vec::with_capacity(indices.len() + 1);
        let mut start: T = c(0);
        for end in indices {
            out.push(self.slice_at(d, Some(&start), Some(end), 1)?);
            start = end.clone();
        }
        let size = self.sizes[d].clone();
        out.push(self.slice_at(d, Some(&start), Some(&size), 1)?);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_guardint() -> Result<()> {
        assert_eq!(5i64.guard_int()?, 5);
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_split_plan() -> Result<()> {
        let p = split_plan(&[5i64, 2], &2, 0)?;
        assert_eq!((p.dim, p.num_splits, p.last), (0, 3, 1));
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_chunk_split_size() -> Result<()> {
        assert_eq!(chunk_split_size(&[5i64], 2, 0)?, (0, 3, false));
        assert_eq!(chunk_split_size(&[0i64], 3, -1)?, (0, 0, true));
        Ok::<(), c10_core::TensorError>(())
    }
}
