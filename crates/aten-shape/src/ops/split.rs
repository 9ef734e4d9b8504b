//! The split / chunk family: `split`, `split_with_sizes`, `chunk`, `tensor_split`, `unbind`.
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
    if sizes.is_empty() {
        return Err(TensorError::runtime(
            "split expects at least a 1-dimensional tensor",
        ));
    }
    let zero = T::from_i64(0);
    if !split_size.sym_ge(&zero)?.guard_bool()? {
        return Err(TensorError::runtime(format!(
            "split expects split_size be non-negative, but got split_size={split_size}"
        )));
    }
    let d = wrap(dim, sizes.len())?;
    let dim_size = &sizes[d];
    if !(split_size.sym_gt(&zero)?.guard_bool()? || dim_size.sym_eq(&zero)?.guard_bool()?) {
        return Err(TensorError::runtime(format!(
            "split_size can only be 0 if dimension size is 0, but got dimension size of {dim_size}"
        )));
    }
    let mut num_splits: i64 = 1;
    if split_size.sym_ne(&zero)?.guard_bool()? {
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
    if sizes.is_empty() {
        return Err(TensorError::runtime(
            "chunk expects at least a 1-dimensional tensor",
        ));
    }
    if chunks <= 0 {
        return Err(TensorError::runtime(format!(
            "chunk expects `chunks` to be greater than 0, got: {chunks}"
        )));
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
pub fn split(t: &Tensor, split_size: i64, dim: i64) -> Result<Vec<Tensor>> {
    let SplitPlan {
        dim: d,
        num_splits,
        last,
    } = split_plan(t.sizes(), &split_size, dim)?;
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
    let (d, split_size, all_empty) = chunk_split_size(t.sizes(), chunks, dim)?;
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
            return Err(TensorError::runtime(
                "narrow(): length must be non-negative.",
            ));
        }
        let cur = self.sizes[d].clone();
        if !start.sym_le(&cur.sub(length)?)?.expect_true()? {
            return Err(TensorError::runtime(format!(
                "start ({start}) + length ({length}) exceeds dimension size ({cur})."
            )));
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
