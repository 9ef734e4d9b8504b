//! The transpose / permute / movedim family: `transpose`, `swapaxes`/`swapdims`, `t`, `mT`, `T` (`numpy_t`), `permute`, `movedim`/`moveaxis`, and the in-place `t_`, `transpose_`, `swapaxes_`, `swapdims_`.
//!
//! The rule is written once, generic over [`ShapeInt`] (`i64` on the
//! concrete path, `SymInt` on the symbolic one), and the faces of each
//! op sit next to it: the concrete free functions (re-exported by
//! [`crate::views`]), the in-place twins, and the symbolic
//! [`Geometry`] methods.

use super::prelude::*;

// ---------------------------------------------------------------------------
// The rule
// ---------------------------------------------------------------------------

/// `transpose(dim0, dim1)`, part 1: the two dims, wrapped against `ndim`
/// (c10's errors). Equal dims make the result an alias.
#[inline(always)]
pub(crate) fn transpose_dims(ndim: usize, dim0: i64, dim1: i64) -> Result<(usize, usize)> {
    Ok((wrap(dim0, ndim)?, wrap(dim1, ndim)?))
}

/// `transpose`, part 2: swaps dims `a` and `b` (from [`transpose_dims`])
/// of a geometry in place.
#[inline(always)]
pub(crate) fn transpose_in_place<T>(sizes: &mut [T], strides: &mut [T], a: usize, b: usize) {
    sizes.swap(a, b);
    strides.swap(a, b);
}

/// `permute(dims)`, part 1: ATen's checks (as many dims as the tensor
/// has, each in range, none repeated), with ATen's errors. After it
/// succeeds, [`permute_into`] is a permutation.
#[inline(always)]
pub(crate) fn check_permute(dims: &[i64], ndim: usize) -> Result<()> {
    if dims.len() != ndim {
        return Err(shape_err(ShapeErrorKind::InvalidDimList, format!(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to len(dims) = {}",
            dims.len()
        )).with_sizes(dims).into());
    }
    let mut seen = DimSet::new(ndim);
    for &dim in dims {
        if !seen.insert(wrap(dim, ndim)?) {
            return Err(shape_err(
                ShapeErrorKind::InvalidDimList,
                "permute(): duplicate dims are not allowed.",
            )
            .with_sizes(dims)
            .into());
        }
    }
    Ok(())
}

/// `permute(dims)`, part 2: result dim `i` is input dim `dims[i]`. `dims`
/// must have passed [`check_permute`] against `sizes.len()`; the outputs
/// have `dims.len()` entries.
#[inline(always)]
pub(crate) fn permute_into<T: Clone>(
    sizes: &[T],
    strides: &[T],
    dims: &[i64],
    out_sizes: &mut [T],
    out_strides: &mut [T],
) {
    let n = sizes.len() as i64;
    for (i, &dim) in dims.iter().enumerate() {
        // Every dim was wrapped successfully by `check_permute`.
        let d = if dim < 0 { dim + n } else { dim } as usize;
        out_sizes[i] = sizes[d].clone();
        out_strides[i] = strides[d].clone();
    }
}

/// `movedim(source, destination)`: result dim `destination[i]` is input
/// dim `source[i]`; the other input dims, in order, fill the other result
/// dims, in order. ATen's checks and errors (lengths, then every source
/// and every destination wrapped, then repeats). The outputs have
/// `sizes.len()` entries; with no dims nothing is written (the result is
/// an alias).
#[inline(always)]
pub(crate) fn movedim_into<T: Clone>(
    sizes: &[T],
    strides: &[T],
    source: &[i64],
    destination: &[i64],
    out_sizes: &mut [T],
    out_strides: &mut [T],
) -> Result<()> {
    if source.len() != destination.len() {
        return Err(shape_err(ShapeErrorKind::InvalidDimList, format!(
            "movedim: Invalid source or destination dims: source ({} dims) should contain the same number of dims as destination ({} dims)",
            fmt_list(source),
            fmt_list(destination)
        )).into());
    }
    let n = sizes.len();
    // PyTorch wraps every source, then every destination, then checks for
    // repeats.
    let mut src_set = DimSet::new(n.max(1));
    let mut dst_set = DimSet::new(n.max(1));
    let src_repeated = wrap_into(source, n, &mut src_set)?;
    let dst_repeated = wrap_into(destination, n, &mut dst_set)?;
    if src_repeated {
        return Err(shape_err(
            ShapeErrorKind::InvalidDimList,
            format!("movedim: repeated dim in `source` ({})", fmt_list(source)),
        )
        .into());
    }
    if dst_repeated {
        return Err(shape_err(
            ShapeErrorKind::InvalidDimList,
            format!(
                "movedim: repeated dim in `destination` ({})",
                fmt_list(destination)
            ),
        )
        .into());
    }
    if n == 0 {
        return Ok(());
    }
    for (&s, &d) in source.iter().zip(destination) {
        let (s, d) = (wrap(s, n)?, wrap(d, n)?);
        out_sizes[d] = sizes[s].clone();
        out_strides[d] = strides[s].clone();
    }
    let mut next = 0;
    for slot in 0..n {
        if dst_set.contains(slot) {
            continue;
        }
        while src_set.contains(next) {
            next += 1;
        }
        out_sizes[slot] = sizes[next].clone();
        out_strides[slot] = strides[next].clone();
        next += 1;
    }
    Ok(())
}

/// Wraps every dim of `dims` against `n` (into a set of `max(n, 1)`
/// dims); returns whether one repeats.
#[inline(always)]
fn wrap_into(dims: &[i64], n: usize, set: &mut DimSet) -> Result<bool> {
    let mut repeated = false;
    for &d in dims {
        repeated |= !set.insert(wrap(d, n)?);
    }
    Ok(repeated)
}

// ---------------------------------------------------------------------------
// Concrete tensors
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// transpose / permute / movedim
// ---------------------------------------------------------------------------

/// Free-function form of [`ViewOps::transpose`](crate::views::ViewOps::transpose).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// let tr = views::transpose(&m, 0, -1)?;
/// assert_eq!((tr.sizes(), tr.strides()), (&[4i64, 3][..], &[1i64, 4][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn transpose(t: &Tensor, dim0: i64, dim1: i64) -> Result<Tensor> {
    transpose_ints(t, dim0, dim1)
        .or_else(move |e| retry_symbolic(t, e, move |g| g.transpose(dim0, dim1)))
}

/// The concrete face of [`transpose`] (a symbolic tensor makes it fail in the
/// view constructor, before anything is built).
fn transpose_ints(t: &Tensor, dim0: i64, dim1: i64) -> Result<Tensor> {
    let (a, b) = transpose_dims(t.dim(), dim0, dim1)?;
    if a == b {
        return alias(t);
    }
    // SAFETY: the edit swaps two dims (a permutation).
    unsafe {
        install_rearranged(t, t.storage_offset(), |geometry| {
            let (sizes, strides) = geometry.sizes_and_strides_mut();
            transpose_in_place(sizes, strides, a, b);
            Ok(())
        })
    }
}

/// Free-function form of [`ViewOps::swapaxes`](crate::views::ViewOps::swapaxes).
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

/// Free-function form of [`ViewOps::swapdims`](crate::views::ViewOps::swapdims).
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

/// Free-function form of [`ViewOps::t`](crate::views::ViewOps::t).
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
        return Err(shape_err(
            ShapeErrorKind::WrongRank,
            format!("t() expects a tensor with <= 2 dimensions, but self is {n}D"),
        )
        .into());
    }
    transpose(x, 0, if n < 2 { 0 } else { 1 })
}

/// Free-function form of [`ViewOps::mt`](crate::views::ViewOps::mt).
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
        return Err(shape_err(
            ShapeErrorKind::WrongRank,
            format!(
                "tensor.mT is only supported on matrices or batches of matrices. Got {n}-D tensor."
            ),
        )
        .into());
    }
    transpose(t, -2, -1)
}

/// Free-function form of [`ViewOps::numpy_t`](crate::views::ViewOps::numpy_t).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[5, 2, 3], ScalarType::Float)?;
/// assert_eq!(views::numpy_t(&b)?.sizes(), &[3, 2, 5]); // all dims reversed
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn numpy_t(t: &Tensor) -> Result<Tensor> {
    numpy_t_ints(t).or_else(move |e| {
        retry_symbolic(t, e, move |g| {
            let reversed: DimVec = (0..t.dim() as i64).rev().collect();
            g.permute(&reversed)
        })
    })
}

/// The concrete face of [`numpy_t`] (a symbolic tensor makes it fail in the
/// view constructor, before anything is built).
fn numpy_t_ints(t: &Tensor) -> Result<Tensor> {
    let mut sizes = DimVec::from_slice(t.sizes());
    let mut strides = DimVec::from_slice(t.strides());
    sizes.reverse();
    strides.reverse();
    t.view_with_geometry(&sizes, &strides, t.storage_offset())
}

/// Free-function form of [`ViewOps::permute`](crate::views::ViewOps::permute).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
/// let p = views::permute(&b, &[2, 0, 1])?;
/// assert_eq!((p.sizes(), p.strides()), (&[4i64, 2, 3][..], &[1i64, 12, 4][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn permute(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    permute_ints(t, dims).or_else(move |e| retry_symbolic(t, e, move |g| g.permute(dims)))
}

/// The concrete face of [`permute`] (a symbolic tensor makes it fail in the
/// view constructor, before anything is built).
fn permute_ints(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    check_permute(dims, t.dim())?;
    let (sizes, strides) = (t.sizes(), t.strides());
    // SAFETY: `dims` names each of the dims exactly once (checked just
    // above: every dim wraps, none repeats, and there are as many as the
    // tensor has), so the edit is a permutation.
    unsafe {
        install_rearranged(t, t.storage_offset(), |geometry| {
            let (new_sizes, new_strides) = geometry.sizes_and_strides_mut();
            permute_into(sizes, strides, dims, new_sizes, new_strides);
            Ok(())
        })
    }
}

/// Free-function form of [`ViewOps::movedim`](crate::views::ViewOps::movedim).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
/// assert_eq!(views::movedim(&b, &[0], &[-1])?.sizes(), &[3, 4, 2]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn movedim(t: &Tensor, source: &[i64], destination: &[i64]) -> Result<Tensor> {
    movedim_ints(t, source, destination)
        .or_else(move |e| retry_symbolic(t, e, move |g| g.movedim_dims(source, destination)))
}

/// The concrete face of [`movedim`] (a symbolic tensor makes it fail in the
/// view constructor, before anything is built).
fn movedim_ints(t: &Tensor, source: &[i64], destination: &[i64]) -> Result<Tensor> {
    let (sizes, strides) = (t.sizes(), t.strides());
    let mut new_sizes = DimVec::from_slice(sizes);
    let mut new_strides = DimVec::from_slice(strides);
    movedim_into(
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

/// `moveaxis(source, destination)`: NumPy's name for [`movedim`], the same
/// op (PyTorch's `torch.moveaxis` is an alias).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
/// let m = views::moveaxis(&b, &[0], &[-1])?;
/// assert_eq!((m.sizes(), m.strides()), (&[3i64, 4, 2][..], &[4i64, 1, 12][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn moveaxis(t: &Tensor, source: &[i64], destination: &[i64]) -> Result<Tensor> {
    movedim(t, source, destination)
}

// ---------------------------------------------------------------------------
// In place
// ---------------------------------------------------------------------------

/// In-place `t_()` of a ≤2-d tensor; bumps the version.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let mut m = Tensor::zeros(&[2, 3], ScalarType::Float)?;
/// views::t_(&mut m)?;
/// assert_eq!((m.sizes(), m.strides()), (&[3i64, 2][..], &[1i64, 3][..]));
/// assert_eq!(m.version()?, 1);
/// let mut c = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
/// assert_eq!(
///     views::t_(&mut c).unwrap_err().to_string(),
///     "t_() expects a tensor with <= 2 dimensions, but self is 3D"
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn t_(t: &mut Tensor) -> Result<()> {
    t.check_inplace()?;
    let n = t.dim();
    if n > 2 {
        return Err(shape_err(
            ShapeErrorKind::WrongRank,
            format!("t_() expects a tensor with <= 2 dimensions, but self is {n}D"),
        )
        .into());
    }
    if t.has_symbolic_sizes_strides() {
        return in_place_sym(t, |g| match n {
            2 => g.transpose(0, 1),
            _ => Ok(g.clone()),
        });
    }
    t.bump_version()?;
    if n == 2 {
        transpose_inplace_at(t, 0, 1)?;
    }
    Ok(())
}

/// In-place `transpose_(dim0, dim1)`: swaps two dims' sizes and strides
/// (dims wrap as in PyTorch); bumps the version.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{Tensor, TensorOptions};
/// let mut t = Tensor::zeros(&[2, 3, 4], TensorOptions::new())?;
/// views::transpose_(&mut t, 0, -1)?;
/// assert_eq!((t.sizes(), t.strides()), (&[4i64, 3, 2][..], &[1i64, 4, 12][..]));
/// assert_eq!(t.version()?, 1);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn transpose_(t: &mut Tensor, dim0: i64, dim1: i64) -> Result<()> {
    if t.has_symbolic_sizes_strides() {
        return in_place_sym(t, |g| g.transpose(dim0, dim1));
    }
    t.check_inplace()?;
    let n = t.dim() as i64;
    let d0 = wrap_dim(dim0, n, true)?;
    let d1 = wrap_dim(dim1, n, true)?;
    t.bump_version()?;
    if d0 != d1 {
        transpose_inplace_at(t, d0, d1)?;
    }
    Ok(())
}

/// Swaps dims `a` and `b` of `t`'s own metadata (copy-on-write), with the
/// rule the out-of-place ops use.
fn transpose_inplace_at(t: &mut Tensor, a: usize, b: usize) -> Result<()> {
    let mut sizes = DimVec::from_slice(t.sizes());
    let mut strides = DimVec::from_slice(t.strides());
    transpose_in_place(&mut sizes, &mut strides, a, b);
    t.edit_metadata()
        .set_sizes_and_strides(&sizes, &strides, None)
}

/// In-place `swapaxes_(axis0, axis1)`: NumPy's name for [`transpose_`]
/// (PyTorch's `Tensor.swapaxes_` is an alias).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let mut t = Tensor::zeros(&[2, 3], ScalarType::Float)?;
/// views::swapaxes_(&mut t, 0, 1)?;
/// assert_eq!((t.sizes(), t.strides()), (&[3i64, 2][..], &[1i64, 3][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn swapaxes_(t: &mut Tensor, axis0: i64, axis1: i64) -> Result<()> {
    transpose_(t, axis0, axis1)
}

/// In-place `swapdims_(dim0, dim1)`: an alias of [`transpose_`], as in
/// PyTorch.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let mut t = Tensor::zeros(&[2, 3, 4], ScalarType::Float)?;
/// views::swapdims_(&mut t, -1, 0)?;
/// assert_eq!((t.sizes(), t.strides()), (&[4i64, 3, 2][..], &[1i64, 4, 12][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn swapdims_(t: &mut Tensor, dim0: i64, dim1: i64) -> Result<()> {
    transpose_(t, dim0, dim1)
}

// ---------------------------------------------------------------------------
// Symbolic geometry
// ---------------------------------------------------------------------------

impl<T: ShapeInt> Geometry<T> {
    /// `transpose(dim0, dim1)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// assert_eq!(Geometry::<i64>::contiguous(&[2, 3])?.transpose(0, 1)?.strides, vec![1, 3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn transpose(&self, dim0: i64, dim1: i64) -> Result<Geometry<T>> {
        let (a, b) = transpose_dims(self.dim(), dim0, dim1)?;
        let mut g = self.clone();
        transpose_in_place(&mut g.sizes, &mut g.strides, a, b);
        Ok(g)
    }

    /// `permute(dims)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let p = Geometry::<i64>::contiguous(&[2, 3, 4])?.permute(&[2, 0, 1])?;
    /// assert_eq!((p.sizes, p.strides), (vec![4, 2, 3], vec![1, 12, 4]));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn permute(&self, dims: &[i64]) -> Result<Geometry<T>> {
        check_permute(dims, self.dim())?;
        let mut g = self.clone();
        permute_into(
            &self.sizes,
            &self.strides,
            dims,
            &mut g.sizes,
            &mut g.strides,
        );
        Ok(g)
    }

    /// `movedim(source, destination)` for single dims.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let m = Geometry::<i64>::contiguous(&[2, 3, 4])?.movedim(0, -1)?;
    /// assert_eq!(m.sizes, vec![3, 4, 2]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn movedim(&self, source: i64, destination: i64) -> Result<Geometry<T>> {
        self.movedim_dims(&[source], &[destination])
    }

    /// `movedim(source, destination)` for lists of dims.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let m = Geometry::<i64>::contiguous(&[2, 3, 4])?.movedim_dims(&[0, 1], &[2, 0])?;
    /// assert_eq!(m.sizes, vec![3, 4, 2]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn movedim_dims(&self, source: &[i64], destination: &[i64]) -> Result<Geometry<T>> {
        let mut g = self.clone();
        movedim_into(
            &self.sizes,
            &self.strides,
            source,
            destination,
            &mut g.sizes,
            &mut g.strides,
        )?;
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_transpose_dims() -> Result<()> {
        assert_eq!(transpose_dims(3, 0, -1)?, (0, 2));
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_transpose_in_place() -> Result<()> {
        let (mut sizes, mut strides) = ([2i64, 3, 4], [12i64, 4, 1]);
        transpose_in_place(&mut sizes, &mut strides, 0, 2);
        assert_eq!((sizes, strides), ([4, 3, 2], [1, 4, 12]));
        Ok(())
    }

    #[test]
    fn doc_check_permute() -> Result<()> {
        assert!(check_permute(&[2, 0, 1], 3).is_ok());
        assert_eq!(
            check_permute(&[0, 0], 2).unwrap_err().to_string(),
            "permute(): duplicate dims are not allowed."
        );
        Ok(())
    }

    #[test]
    fn doc_permute_into() -> Result<()> {
        let (mut sz, mut st) = ([0i64; 3], [0i64; 3]);
        permute_into(&[2, 3, 4], &[12, 4, 1], &[2, 0, -2], &mut sz, &mut st);
        assert_eq!((sz, st), ([4, 2, 3], [1, 12, 4]));
        Ok(())
    }

    #[test]
    fn doc_movedim_into() -> Result<()> {
        let (mut sz, mut st) = ([0i64; 3], [0i64; 3]);
        movedim_into(&[2, 3, 4], &[12, 4, 1], &[0], &[-1], &mut sz, &mut st)?;
        assert_eq!((sz, st), ([3, 4, 2], [4, 1, 12]));
        Ok::<(), c10_core::TensorError>(())
    }
}
