//! The diagonal / unfold family: `diagonal` and `unfold`.
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

/// The plan of `diagonal` (see [`diagonal_plan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiagonalPlan<T> {
    /// The wrapped `dim1`.
    pub d1: usize,
    /// The wrapped `dim2`.
    pub d2: usize,
    /// The diagonal's length.
    pub size: T,
    /// The diagonal's stride.
    pub stride: T,
    /// The new storage offset.
    pub offset: T,
    /// Whether some `i64` arithmetic wrapped.
    pub wrapped: bool,
}

/// `diagonal(offset, dim1, dim2)`: ATen's checks (`dim1`, `dim2` wrapped,
/// not identical), the diagonal's length `max(min(size1, size2 -
/// offset), 0)` (or `max(min(size1 + offset, size2), 0)` for a negative
/// offset) and stride `stride1 + stride2`. An empty diagonal keeps the
/// input's storage offset (decided only when statically known, with no
/// guard: PyTorch's fake path records none here); otherwise the offset
/// moves by `offset * stride2` (or `-offset * stride1`). The result's
/// dims are then written by [`diagonal_fill`].
#[inline(always)]
pub(crate) fn diagonal_plan<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    storage_offset: &T,
    offset: i64,
    dim1: i64,
    dim2: i64,
) -> Result<DiagonalPlan<T>> {
    let n = sizes.len();
    let d1 = wrap(dim1, n)?;
    let d2 = wrap(dim2, n)?;
    if d1 == d2 {
        return Err(shape_err(
            ShapeErrorKind::IdenticalDims,
            format!("diagonal dimensions cannot be identical {dim1}, {dim2}"),
        )
        .with_dim(dim1)
        .into());
    }
    let mut wrapped = false;
    let zero = T::from_i64(0);
    let off: T = T::from_i64(offset);
    let (s1, s2) = (&sizes[d1], &sizes[d2]);
    let diag = if offset >= 0 {
        s1.min(&s2.sub_flagged(&off, &mut wrapped)?)?.max(&zero)?
    } else {
        s1.add_flagged(&off, &mut wrapped)?.min(s2)?.max(&zero)?
    };
    let mut storage = storage_offset.clone();
    if diag.sym_eq(&zero)?.statically_known_true()? {
    } else if offset >= 0 {
        let step = off.mul_flagged(&strides[d2], &mut wrapped)?;
        storage = storage.add_flagged(&step, &mut wrapped)?;
    } else {
        let step = off.mul_flagged(&strides[d1], &mut wrapped)?;
        storage = storage.sub_flagged(&step, &mut wrapped)?;
    }
    let stride = strides[d1].add_flagged(&strides[d2], &mut wrapped)?;
    Ok(DiagonalPlan {
        d1,
        d2,
        size: diag,
        stride,
        offset: storage,
        wrapped,
    })
}

/// `diagonal`, part 2: the dims other than `plan.d1`, `plan.d2`, in
/// order, then the diagonal, written into `out_sizes`/`out_strides` (of
/// `sizes.len() - 1` entries).
#[inline(always)]
pub(crate) fn diagonal_fill<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    plan: &DiagonalPlan<T>,
    out_sizes: &mut [T],
    out_strides: &mut [T],
) {
    let mut k = 0;
    for (i, (s, st)) in sizes.iter().zip(strides).enumerate() {
        if i != plan.d1 && i != plan.d2 {
            out_sizes[k] = s.clone();
            out_strides[k] = st.clone();
            k += 1;
        }
    }
    out_sizes[k] = plan.size.clone();
    out_strides[k] = plan.stride.clone();
}

/// The plan of `unfold` (see [`unfold_plan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnfoldPlan<T> {
    /// The wrapped dim (0 for a 0-dim tensor).
    pub dim: usize,
    /// The unfolded dim's new size and stride (`None` for a 0-dim
    /// tensor).
    pub folded: Option<(T, T)>,
    /// The new last dim: `size`, with the dim's old stride (1 for a 0-dim
    /// tensor).
    pub window: (T, T),
    /// Whether some `i64` arithmetic wrapped.
    pub wrapped: bool,
}

/// `unfold(dimension, size, step)`: ATen's checks and errors (`size >=
/// 0`; `size <= max_size`, a `guard_bool` site on symbols, asked first
/// as an `expect_true` by [`Geometry::unfold`]; `step > 0`),
/// then the dim's new size `(size_d - size) / step + 1` and stride
/// `stride_d * step`, and a new last dim of `size` with stride
/// `stride_d`. The result's dims are written by [`unfold_fill`].
#[inline(always)]
pub(crate) fn unfold_plan<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    dimension: i64,
    size: i64,
    step: i64,
) -> Result<UnfoldPlan<T>> {
    let n = sizes.len();
    let d = wrap(dimension, n)?;
    if size < 0 {
        return Err(shape_err(
            ShapeErrorKind::InvalidLength,
            format!("size is {size} but must be >= 0"),
        )
        .into());
    }
    let one = T::from_i64(1);
    let max_size: &T = if n == 0 { &one } else { &sizes[d] };
    if !T::from_i64(size).sym_le(max_size)?.guard_bool()? {
        return Err(shape_err(
            ShapeErrorKind::InvalidLength,
            format!("maximum size for tensor at dimension {d} is {max_size} but size is {size}"),
        )
        .into());
    }
    if step <= 0 {
        return Err(shape_err(
            ShapeErrorKind::InvalidStep,
            format!("step is {step} but must be > 0"),
        )
        .into());
    }
    let mut wrapped = false;
    let (folded, window_stride) = if n == 0 {
        (None, T::from_i64(1))
    } else {
        // `size <= sizes[d]` and `step >= 1`: no overflow, no division
        // trap.
        let new_size = sizes[d]
            .sub(&T::from_i64(size))?
            .div(&T::from_i64(step))?
            .add_flagged(&one, &mut wrapped)?;
        let new_stride = strides[d].mul_flagged(&T::from_i64(step), &mut wrapped)?;
        (Some((new_size, new_stride)), strides[d].clone())
    };
    Ok(UnfoldPlan {
        dim: d,
        folded,
        window: (T::from_i64(size), window_stride),
        wrapped,
    })
}

/// `unfold`'s `size <= max_size` as ATen's `TORCH_SYM_CHECK` asks it
/// (`expect_true`), before [`unfold_plan`] decides it.
#[cold]
#[inline(never)]
fn unfold_size_assert<T: ShapeInt>(sizes: &[T], dimension: i64, size: i64) -> Result<()> {
    if size >= 0 {
        if let Ok(d) = wrap(dimension, sizes.len()) {
            if let Some(max_size) = sizes.get(d) {
                T::from_i64(size).sym_le(max_size)?.expect_true()?;
            }
        }
    }
    Ok(())
}

/// `unfold`, part 2: the input's dims with the unfolded one changed, then
/// the window dim, written into `out_sizes`/`out_strides` (of
/// `sizes.len() + 1` entries).
#[inline(always)]
pub(crate) fn unfold_fill<T: ShapeInt>(
    sizes: &[T],
    strides: &[T],
    plan: &UnfoldPlan<T>,
    out_sizes: &mut [T],
    out_strides: &mut [T],
) {
    let n = sizes.len();
    out_sizes[..n].clone_from_slice(sizes);
    out_strides[..n].clone_from_slice(strides);
    if let Some((s, st)) = &plan.folded {
        out_sizes[plan.dim] = s.clone();
        out_strides[plan.dim] = st.clone();
    }
    out_sizes[n] = plan.window.0.clone();
    out_strides[n] = plan.window.1.clone();
}

// ---------------------------------------------------------------------------
// Concrete tensors
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// diagonal / unfold / alias / detach
// ---------------------------------------------------------------------------

/// Free-function form of [`ViewOps::diagonal`](crate::views::ViewOps::diagonal).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::arange(0, 12, 1, ScalarType::Long)?.as_strided(&[3, 4], &[4, 1], None)?;
/// let d = views::diagonal(&m, 1, 0, 1)?;
/// assert_eq!(d.to_vec::<i64>()?, vec![1, 6, 11]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn diagonal(t: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
    diagonal_ints(t, offset, dim1, dim2)
        .or_else(move |e| retry_symbolic(t, e, move |g| g.diagonal(offset, dim1, dim2)))
}

/// The concrete face of [`diagonal`] (a symbolic tensor makes it fail in the
/// view constructor, before anything is built).
#[inline]
fn diagonal_ints(t: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
    let (sizes, strides) = (t.sizes(), t.strides());
    let plan = diagonal_plan(sizes, strides, &t.storage_offset(), offset, dim1, dim2)?;
    // At least two dims (`dim1` and `dim2` differ).
    let m = sizes.len() - 1;
    filled_view(t, plan.offset, m, plan.wrapped, |new_sizes, new_strides| {
        diagonal_fill(sizes, strides, &plan, new_sizes, new_strides)
    })
}

/// Free-function form of [`ViewOps::unfold`](crate::views::ViewOps::unfold).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
/// let w = views::unfold(&a, 0, 4, 4)?; // windows of 4, step 4
/// assert_eq!((w.sizes(), w.to_vec::<i64>()?[4]), (&[3i64, 4][..], 4));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn unfold(t: &Tensor, dimension: i64, size: i64, step: i64) -> Result<Tensor> {
    unfold_ints(t, dimension, size, step)
        .or_else(move |e| retry_symbolic(t, e, move |g| g.unfold(dimension, size, step)))
}

/// The concrete face of [`unfold`] (a symbolic tensor makes it fail in the
/// view constructor, before anything is built).
fn unfold_ints(t: &Tensor, dimension: i64, size: i64, step: i64) -> Result<Tensor> {
    let (sizes, strides) = (t.sizes(), t.strides());
    let plan = unfold_plan(sizes, strides, dimension, size, step)?;
    let m = sizes.len() + 1;
    filled_view(
        t,
        t.storage_offset(),
        m,
        plan.wrapped,
        |new_sizes, new_strides| unfold_fill(sizes, strides, &plan, new_sizes, new_strides),
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
        let built =
            TensorImpl::view_tensor_fill_or_abandon(t, offset, ndim, |new_sizes, new_strides| {
                fill(new_sizes, new_strides);
                Ok(true)
            })?;
        if let Some(view) = built {
            return Ok(view);
        }
    }
    let mut new_sizes = DimVec::from_elem(0, ndim);
    let mut new_strides = DimVec::from_elem(0, ndim);
    fill(&mut new_sizes, &mut new_strides);
    make_view(t, &new_sizes, &new_strides, offset, wrapped)
}

// ---------------------------------------------------------------------------
// Symbolic geometry
// ---------------------------------------------------------------------------

impl<T: ShapeInt> Geometry<T> {
    /// `diagonal(offset, dim1, dim2)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let g = Geometry::<i64>::contiguous(&[3, 4])?.diagonal(1, 0, 1)?;
    /// assert_eq!((g.sizes, g.strides, g.offset), (vec![3], vec![5], 1));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Geometry<T>> {
        let plan = diagonal_plan(&self.sizes, &self.strides, &self.offset, offset, dim1, dim2)?;
        let m = self.dim() - 1;
        let mut sizes = self.sizes[..m].to_vec();
        let mut strides = self.strides[..m].to_vec();
        diagonal_fill(&self.sizes, &self.strides, &plan, &mut sizes, &mut strides);
        Ok(Geometry {
            sizes,
            strides,
            offset: plan.offset,
        })
    }

    /// `unfold(dimension, size, step)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let u = Geometry::<i64>::contiguous(&[7])?.unfold(0, 3, 2)?;
    /// assert_eq!((u.sizes, u.strides), (vec![3, 3], vec![2, 1]));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn unfold(&self, dimension: i64, size: i64, step: i64) -> Result<Geometry<T>> {
        // ATen's `size <= max_size` is a `TORCH_SYM_CHECK`: a runtime
        // assert on unbacked sizes (a guard on backed ones, which the
        // plan's `guard_bool` then finds static). Asked here, off the
        // concrete path.
        unfold_size_assert(&self.sizes, dimension, size)?;
        let plan = unfold_plan(&self.sizes, &self.strides, dimension, size, step)?;
        let mut g = self.clone();
        g.sizes.push(c(0));
        g.strides.push(c(0));
        unfold_fill(
            &self.sizes,
            &self.strides,
            &plan,
            &mut g.sizes,
            &mut g.strides,
        );
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_diagonal_plan() -> Result<()> {
        let p = diagonal_plan(&[3i64, 4], &[4, 1], &0, 1, 0, 1)?;
        assert_eq!((p.size, p.stride, p.offset), (3, 5, 1));
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_diagonal_fill() -> Result<()> {
        let p = diagonal_plan(&[2i64, 3, 4], &[12, 4, 1], &0, 0, 0, 2)?;
        let (mut sz, mut st) = ([0i64; 2], [0i64; 2]);
        diagonal_fill(&[2, 3, 4], &[12, 4, 1], &p, &mut sz, &mut st);
        assert_eq!((sz, st), ([3, 2], [4, 13]));
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_unfold_plan() -> Result<()> {
        let p = unfold_plan(&[8i64], &[1], 0, 3, 2)?;
        assert_eq!((p.folded, p.window), (Some((3, 2)), (3, 1)));
        Ok::<(), c10_core::TensorError>(())
    }

    #[test]
    fn doc_unfold_fill() -> Result<()> {
        let p = unfold_plan(&[8i64], &[1], 0, 3, 2)?;
        let (mut sz, mut st) = ([0i64; 2], [0i64; 2]);
        unfold_fill(&[8], &[1], &p, &mut sz, &mut st);
        assert_eq!((sz, st), ([3, 3], [2, 1]));
        Ok::<(), c10_core::TensorError>(())
    }
}
