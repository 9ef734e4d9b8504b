//! The squeeze / unsqueeze family: `squeeze` (all, one dim, a list of dims), `unsqueeze`, and the in-place `squeeze_`, `squeeze_dims_`, `unsqueeze_`.
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

#[inline(always)]
fn is_one<T: ShapeInt>(s: &T) -> Result<bool> {
    // ATen: `guard_or_false(size == 1)` (a size-1 symbol not known to be 1
    // is kept).
    s.sym_eq(&T::from_i64(1))?.guard_or_false()
}

/// `squeeze()`: writes the dims whose size is 1 (`guard_or_false` on
/// symbols) left out into the front of `out_sizes`/`out_strides` (of at
/// least `sizes.len()` entries) and returns how many it wrote.
#[inline(always)]
pub(crate) fn squeeze_into<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    out_sizes: &mut [T],
    out_strides: &mut [T],
) -> Result<usize> {
    let mut k = 0;
    for (s, st) in sizes.iter().zip(strides) {
        if !is_one(s)? {
            out_sizes[k] = s.clone();
            out_strides[k] = st.clone();
            k += 1;
        }
    }
    Ok(k)
}

/// `squeeze(dim)`: the dim to remove (wrapped; `None` when its size is
/// not 1, or for a 0-dim tensor: the result is then an alias).
#[inline(always)]
pub(crate) fn squeeze_dim_index<T: ShapeInt>(sizes: &[T], dim: i64) -> Result<Option<usize>> {
    let d = wrap(dim, sizes.len())?;
    if sizes.is_empty() || !is_one(&sizes[d])? {
        return Ok(None);
    }
    Ok(Some(d))
}

/// `squeeze(dims)`: the listed dims (wrapped, each at most once: `dim 0
/// appears multiple times in the list of dims`) that have size 1 are
/// left out; writes the kept dims into the front of
/// `out_sizes`/`out_strides` (of at least `sizes.len()` entries) and
/// returns how many it wrote.
#[inline(always)]
pub(crate) fn squeeze_dims_into<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    dims: &[i64],
    out_sizes: &mut [T],
    out_strides: &mut [T],
) -> Result<usize> {
    let n = sizes.len();
    if n > 64 {
        return Err(TensorError::runtime(
            "only tensors with up to 64 dims are supported",
        ));
    }
    let mut mask: u64 = 0;
    for &dim in dims {
        let d = wrap(dim, n)?;
        if mask & (1u64 << d) != 0 {
            return Err(TensorError::runtime(format!(
                "dim {d} appears multiple times in the list of dims"
            )));
        }
        mask |= 1u64 << d;
    }
    let mut k = 0;
    for (d, (s, st)) in sizes.iter().zip(strides).enumerate() {
        if !(mask & (1u64 << d) != 0 && is_one(s)?) {
            out_sizes[k] = s.clone();
            out_strides[k] = st.clone();
            k += 1;
        }
    }
    Ok(k)
}

/// `unsqueeze(dim)`: where the new size-1 dim goes (`dim` wrapped
/// against `ndim + 1`) and its stride, c10's `sizes[d] * strides[d]` (1
/// for a new last dim), with whether that `i64` product wrapped (c10
/// computes it unchecked).
#[inline(always)]
pub(crate) fn unsqueeze_rule<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    dim: i64,
) -> Result<(usize, T, bool)> {
    let d = wrap(dim, sizes.len() + 1)?;
    let mut wrapped = false;
    let stride = match (sizes.get(d), strides.get(d)) {
        (Some(s), Some(st)) => s.mul_flagged(st, &mut wrapped)?,
        _ => T::from_i64(1),
    };
    Ok((d, stride, wrapped))
}

/// Geometry of `unsqueeze(dim)`: `dim` wraps against `ndim + 1`; the new
/// dim's stride is `size[dim] * stride[dim]` when `dim < ndim`, else 1.
pub(crate) fn unsqueeze_geometry(
    sizes: &[i64],
    strides: &[i64],
    dim: i64,
) -> Result<(DimVec, DimVec)> {
    check_same_rank(sizes, strides)?;
    let (d, new_stride, _) = unsqueeze_rule(sizes, strides, dim)?;
    let mut s = DimVec::from_slice(sizes);
    let mut st = DimVec::from_slice(strides);
    s.insert(d, 1);
    st.insert(d, new_stride);
    Ok((s, st))
}

/// Geometry of `squeeze(dim)` (`Some`) or `squeeze()` (`None`).
pub(crate) fn squeeze_geometry(
    sizes: &[i64],
    strides: &[i64],
    dim: Option<i64>,
) -> Result<(DimVec, DimVec)> {
    let mut s = DimVec::from_slice(sizes);
    let mut st = DimVec::from_slice(strides);
    match dim {
        None => {
            let k = squeeze_into(sizes, strides, &mut s, &mut st)?;
            s.truncate(k);
            st.truncate(k);
        }
        Some(dim) => {
            if let Some(d) = squeeze_dim_index(sizes, dim)? {
                s.remove(d);
                st.remove(d);
            }
        }
    }
    Ok((s, st))
}

/// Geometry of `squeeze(dims)`: the listed dims (wrapped, each at most
/// once: `dim 0 appears multiple times in the list of dims`) that have size
/// 1 are removed; a 0-d tensor accepts dims `0` and `-1`.
pub(crate) fn squeeze_dims_geometry(
    sizes: &[i64],
    strides: &[i64],
    dims: &[i64],
) -> Result<(DimVec, DimVec)> {
    check_same_rank(sizes, strides)?;
    let mut s = DimVec::from_slice(sizes);
    let mut st = DimVec::from_slice(strides);
    let k = squeeze_dims_into(sizes, strides, dims, &mut s, &mut st)?;
    s.truncate(k);
    st.truncate(k);
    Ok((s, st))
}

// ---------------------------------------------------------------------------
// Concrete tensors
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// squeeze / unsqueeze / flatten / unflatten / ravel
// ---------------------------------------------------------------------------

/// Free-function form of [`ViewOps::squeeze`](crate::views::ViewOps::squeeze).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[1, 3, 1, 2], ScalarType::Float)?;
/// assert_eq!(views::squeeze(&b)?.sizes(), &[3, 2]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn squeeze(t: &Tensor) -> Result<Tensor> {
    squeeze_ints(t).or_else(move |e| retry_symbolic(t, e, move |g| g.squeeze()))
}

/// The concrete face of [`squeeze`] (a symbolic tensor makes it fail in the
/// view constructor, before anything is built).
fn squeeze_ints(t: &Tensor) -> Result<Tensor> {
    squeeze_view(t, squeeze_into)
}

/// Builds the view whose geometry `rule` writes (from `t`'s sizes and
/// strides into copies of them, returning how many dims it kept): the
/// shared step of [`squeeze_ints`] and [`squeeze_dims_ints`].
#[inline]
fn squeeze_view(
    t: &Tensor,
    rule: impl FnOnce(&[i64], &[i64], &mut [i64], &mut [i64]) -> Result<usize>,
) -> Result<Tensor> {
    let (sizes, strides) = (t.sizes(), t.strides());
    let mut new_sizes = DimVec::from_slice(sizes);
    let mut new_strides = DimVec::from_slice(strides);
    let k = rule(sizes, strides, &mut new_sizes, &mut new_strides)?;
    new_sizes.truncate(k);
    new_strides.truncate(k);
    t.view_with_geometry(&new_sizes, &new_strides, t.storage_offset())
}

/// Free-function form of [`ViewOps::squeeze_dim`](crate::views::ViewOps::squeeze_dim).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[1, 3, 1], ScalarType::Float)?;
/// assert_eq!(views::squeeze_dim(&b, -1)?.sizes(), &[1, 3]);
/// assert_eq!(views::squeeze_dim(&b, 1)?.sizes(), &[1, 3, 1]); // size 3: unchanged
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn squeeze_dim(t: &Tensor, dim: i64) -> Result<Tensor> {
    squeeze_dim_ints(t, dim).or_else(move |e| retry_symbolic(t, e, move |g| g.squeeze_dim(dim)))
}

/// The concrete face of [`squeeze_dim`] (a symbolic tensor makes it fail in the
/// view constructor, before anything is built).
fn squeeze_dim_ints(t: &Tensor, dim: i64) -> Result<Tensor> {
    let Some(d) = squeeze_dim_index(t.sizes(), dim)? else {
        // Nothing removed: PyTorch returns an alias. The concrete alias
        // (which refuses a symbolic tensor): the decision above read the
        // hints, so a symbolic tensor must go on to the symbolic face,
        // which decides (and guards) on its sizes.
        return super::alias_ints(t);
    };
    let mut sizes = DimVec::from_slice(t.sizes());
    let mut strides = DimVec::from_slice(t.strides());
    sizes.remove(d);
    strides.remove(d);
    t.view_with_geometry(&sizes, &strides, t.storage_offset())
}

/// Free-function form of [`ViewOps::squeeze_dims`](crate::views::ViewOps::squeeze_dims).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let b = Tensor::zeros(&[1, 3, 1], ScalarType::Float)?;
/// assert_eq!(views::squeeze_dims(&b, &[0, 2])?.sizes(), &[3]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn squeeze_dims(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    squeeze_dims_ints(t, dims).or_else(move |e| retry_symbolic(t, e, move |g| g.squeeze_dims(dims)))
}

/// The concrete face of [`squeeze_dims`] (a symbolic tensor makes it fail in the
/// view constructor, before anything is built).
fn squeeze_dims_ints(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    squeeze_view(t, |sizes, strides, new_sizes, new_strides| {
        squeeze_dims_into(sizes, strides, dims, new_sizes, new_strides)
    })
}

/// Free-function form of [`ViewOps::unsqueeze`](crate::views::ViewOps::unsqueeze).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let u = views::unsqueeze(&a, 0)?;
/// assert_eq!((u.sizes(), u.strides()), (&[1i64, 12][..], &[12i64, 1][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn unsqueeze(t: &Tensor, dim: i64) -> Result<Tensor> {
    unsqueeze_ints(t, dim).or_else(move |e| retry_symbolic(t, e, move |g| g.unsqueeze(dim)))
}

/// The concrete face of [`unsqueeze`] (a symbolic tensor makes it fail in the
/// view constructor, before anything is built).
fn unsqueeze_ints(t: &Tensor, dim: i64) -> Result<Tensor> {
    let (d, new_stride, wrapped) = unsqueeze_rule(t.sizes(), t.strides(), dim)?;
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

/// `torch.atleast_1d(t)`: a 0-d tensor as a 1-element 1-d view; any
/// other tensor itself (the same `TensorImpl`).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let s = Tensor::zeros(&[], ScalarType::Float)?;
/// assert_eq!(views::atleast_1d(&s)?.sizes(), &[1]);
/// let m = Tensor::zeros(&[2, 3], ScalarType::Float)?;
/// assert!(views::atleast_1d(&m)?.is_same(&m));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn atleast_1d(t: &Tensor) -> Result<Tensor> {
    match t.dim() {
        0 => unsqueeze(t, 0),
        _ => Ok(t.clone()),
    }
}

/// `torch.atleast_2d(t)`: 0-d becomes `[1, 1]`, 1-d `[n]` becomes
/// `[1, n]` (views); 2 dims or more: the tensor itself.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let v = Tensor::zeros(&[3], ScalarType::Float)?;
/// assert_eq!(views::atleast_2d(&v)?.sizes(), &[1, 3]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn atleast_2d(t: &Tensor) -> Result<Tensor> {
    match t.dim() {
        0 => unsqueeze(&unsqueeze(t, 0)?, 0),
        1 => unsqueeze(t, 0),
        _ => Ok(t.clone()),
    }
}

/// `torch.atleast_3d(t)`: 0-d becomes `[1, 1, 1]`, `[n]` becomes
/// `[1, n, 1]`, `[m, n]` becomes `[m, n, 1]` (views); 3 dims or more: the
/// tensor itself (NumPy's `atleast_3d` rule).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let v = Tensor::zeros(&[3], ScalarType::Float)?;
/// assert_eq!(views::atleast_3d(&v)?.sizes(), &[1, 3, 1]);
/// let m = Tensor::zeros(&[2, 3], ScalarType::Float)?;
/// assert_eq!(views::atleast_3d(&m)?.sizes(), &[2, 3, 1]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn atleast_3d(t: &Tensor) -> Result<Tensor> {
    match t.dim() {
        0 => unsqueeze(&unsqueeze(&unsqueeze(t, 0)?, 0)?, 0),
        1 => unsqueeze(&unsqueeze(t, 0)?, 2),
        2 => unsqueeze(t, 2),
        _ => Ok(t.clone()),
    }
}

// ---------------------------------------------------------------------------
// In place
// ---------------------------------------------------------------------------

/// In-place `unsqueeze_(dim)` with c10's stride rule for the new dim;
/// bumps the version.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let mut t = Tensor::zeros(&[2, 3], ScalarType::Float)?;
/// views::unsqueeze_(&mut t, 1)?;
/// assert_eq!((t.sizes(), t.strides()), (&[2i64, 1, 3][..], &[3i64, 3, 1][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn unsqueeze_(t: &mut Tensor, dim: i64) -> Result<()> {
    if t.has_symbolic_sizes_strides() {
        return in_place_sym(t, |g| g.unsqueeze(dim));
    }
    t.check_inplace()?;
    let (sizes, strides) = unsqueeze_geometry(t.sizes(), t.strides(), dim)?;
    t.bump_version()?;
    t.edit_metadata()
        .set_sizes_and_strides(&sizes, &strides, None)
}

/// In-place `squeeze_` of one dim (`Some(d)`) or of every size-1 dim
/// (`None`); bumps the version.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let mut t = Tensor::zeros(&[1, 2, 1], ScalarType::Float)?;
/// views::squeeze_(&mut t, Some(0))?;
/// assert_eq!(t.sizes(), &[2, 1]);
/// views::squeeze_(&mut t, None)?;
/// assert_eq!(t.sizes(), &[2]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn squeeze_(t: &mut Tensor, dim: Option<i64>) -> Result<()> {
    if t.has_symbolic_sizes_strides() {
        return in_place_sym(t, |g| match dim {
            Some(d) => g.squeeze_dim(d),
            None => g.squeeze(),
        });
    }
    t.check_inplace()?;
    let (sizes, strides) = squeeze_geometry(t.sizes(), t.strides(), dim)?;
    t.bump_version()?;
    t.edit_metadata()
        .set_sizes_and_strides(&sizes, &strides, None)
}

/// In-place `squeeze_(dims)`: removes each listed dim that has size 1
/// (a dim listed twice: `dim 0 appears multiple times in the list of
/// dims`); bumps the version.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{Tensor, TensorOptions};
/// let mut t = Tensor::zeros(&[2, 1, 3, 1], TensorOptions::new())?;
/// views::squeeze_dims_(&mut t, &[1, 0, -1])?;
/// assert_eq!(t.sizes(), &[2, 3]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn squeeze_dims_(t: &mut Tensor, dims: &[i64]) -> Result<()> {
    if t.has_symbolic_sizes_strides() {
        return in_place_sym(t, |g| g.squeeze_dims(dims));
    }
    t.check_inplace()?;
    let (sizes, strides) = squeeze_dims_geometry(t.sizes(), t.strides(), dims)?;
    t.bump_version()?;
    t.edit_metadata()
        .set_sizes_and_strides(&sizes, &strides, None)
}

// ---------------------------------------------------------------------------
// Symbolic geometry
// ---------------------------------------------------------------------------

impl<T: ShapeInt> Geometry<T> {
    /// `squeeze()`: drops every dim whose size is 1 (`guard_or_false`, so
    /// an unbacked size is kept without a guard).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// assert_eq!(Geometry::<i64>::contiguous(&[1, 3, 1])?.squeeze()?.sizes, vec![3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn squeeze(&self) -> Result<Geometry<T>> {
        let mut g = self.clone();
        let k = squeeze_into(&self.sizes, &self.strides, &mut g.sizes, &mut g.strides)?;
        g.sizes.truncate(k);
        g.strides.truncate(k);
        Ok(g)
    }

    /// `squeeze(dim)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// assert_eq!(Geometry::<i64>::contiguous(&[1, 3])?.squeeze_dim(0)?.sizes, vec![3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn squeeze_dim(&self, dim: i64) -> Result<Geometry<T>> {
        let mut g = self.clone();
        if let Some(d) = squeeze_dim_index(&self.sizes, dim)? {
            g.sizes.remove(d);
            g.strides.remove(d);
        }
        Ok(g)
    }

    /// `squeeze(dims)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let g = Geometry::<i64>::contiguous(&[1, 3, 1])?.squeeze_dims(&[0, -1])?;
    /// assert_eq!(g.sizes, vec![3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn squeeze_dims(&self, dims: &[i64]) -> Result<Geometry<T>> {
        let mut g = self.clone();
        let k = squeeze_dims_into(
            &self.sizes,
            &self.strides,
            dims,
            &mut g.sizes,
            &mut g.strides,
        )?;
        g.sizes.truncate(k);
        g.strides.truncate(k);
        Ok(g)
    }

    /// `unsqueeze(dim)`: size 1, stride `size[d]*stride[d]` (1 at the end).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let u = Geometry::<i64>::contiguous(&[2, 3])?.unsqueeze(1)?;
    /// assert_eq!((u.sizes, u.strides), (vec![2, 1, 3], vec![3, 3, 1]));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn unsqueeze(&self, dim: i64) -> Result<Geometry<T>> {
        let (d, stride, _) = unsqueeze_rule(&self.sizes, &self.strides, dim)?;
        let mut g = self.clone();
        g.sizes.insert(d, c(1));
        g.strides.insert(d, stride);
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_squeeze_into() -> Result<()> {
        let (mut sz, mut st) = ([0i64; 3], [0i64; 3]);
        let k = squeeze_into(&[1, 3, 1], &[3, 1, 1], &mut sz, &mut st)?;
        assert_eq!((k, sz[0], st[0]), (1, 3, 1));
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_squeeze_dim_index() -> Result<()> {
        assert_eq!(squeeze_dim_index(&[1i64, 3], -2)?, Some(0));
        assert_eq!(squeeze_dim_index(&[1i64, 3], 1)?, None);
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_squeeze_dims_into() -> Result<()> {
        let (mut sz, mut st) = ([0i64; 4], [0i64; 4]);
        let k = squeeze_dims_into(&[2, 1, 3, 1], &[3, 3, 1, 1], &[1, -1, 0], &mut sz, &mut st)?;
        assert_eq!((&sz[..k], &st[..k]), (&[2i64, 3][..], &[3i64, 1][..]));
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_unsqueeze_rule() -> Result<()> {
        assert_eq!(unsqueeze_rule(&[2i64, 3], &[3, 1], 0)?, (0, 6, false));
        assert_eq!(unsqueeze_rule(&[2i64, 3], &[3, 1], -1)?, (2, 1, false));
        assert!(unsqueeze_rule(&[1i64 << 40], &[1 << 40], 0)?.2);
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_unsqueeze_geometry() -> Result<()> {
        let (s, st) = unsqueeze_geometry(&[2, 3], &[3, 1], 1)?;
        assert_eq!((&s[..], &st[..]), (&[2i64, 1, 3][..], &[3i64, 3, 1][..]));
        let (s, st) = unsqueeze_geometry(&[2, 3], &[3, 1], -1)?; // a new last dim
        assert_eq!((&s[..], &st[..]), (&[2i64, 3, 1][..], &[3i64, 1, 1][..]));
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_squeeze_geometry() -> Result<()> {
        let (s, st) = squeeze_geometry(&[1, 3, 1], &[3, 1, 1], None)?;
        assert_eq!((&s[..], &st[..]), (&[3i64][..], &[1i64][..]));
        let (s, _) = squeeze_geometry(&[1, 3, 1], &[3, 1, 1], Some(1))?; // size 3: kept
        assert_eq!(&s[..], &[1i64, 3, 1][..]);
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_squeeze_dims_geometry() -> Result<()> {
        let (s, st) = squeeze_dims_geometry(&[2, 1, 3, 1], &[3, 3, 1, 1], &[1, -1, 0])?;
        assert_eq!((&s[..], &st[..]), (&[2i64, 3][..], &[3i64, 1][..]));
        assert!(squeeze_dims_geometry(&[1, 1], &[1, 1], &[0, -2]).is_err());
        Ok::<(), c10_core::TensorError>(())
    }
}
