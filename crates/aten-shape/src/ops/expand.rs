//! The expand / broadcast family: `expand`, `expand_as`, `broadcast_to`, with ATen's `inferExpandGeometry`.
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

/// ATen's `inferExpandGeometry(tensor_sizes, tensor_strides, sizes)`,
/// writing into `out_sizes`/`out_strides` (of `sizes.len()` entries);
/// returns whether a stride product wrapped. A size-1 dim takes the
/// target with stride 0; any other dim must equal the target (a guard
/// on symbols); `-1` keeps the size.
#[inline(always)]
pub(crate) fn expand_geometry_into<T: ShapeInt>(
    tensor_sizes: &[T],
    tensor_strides: &[T],
    sizes: &[T],
    out_sizes: &mut [T],
    out_strides: &mut [T],
) -> Result<bool> {
    let ndim = sizes.len();
    let tensor_dim = tensor_sizes.len();
    if tensor_dim == 0 {
        out_sizes.clone_from_slice(sizes);
        out_strides.iter_mut().for_each(|x| *x = c(0));
        return Ok(false);
    }
    if ndim < tensor_dim || tensor_strides.len() != tensor_dim {
        return Err(shape_err(ShapeErrorKind::ExpandTooFewSizes, format!(
            "expand: the number of sizes provided ({ndim}) must be greater or equal to the number of dimensions in the tensor ({tensor_dim})"
        )).with_sizes_of(sizes).into());
    }
    let mut wrapped = false;
    let lead = ndim - tensor_dim;
    for i in (0..ndim).rev() {
        let existing = i >= lead;
        let is_keep = |t: &T| -> Result<bool> {
            Ok(t.sym_eq(&c(1))?.guard_or_false()? || t.sym_eq(&c(-1))?.guard_or_false()?)
        };
        let (mut size, mut stride) = if existing {
            (
                tensor_sizes[i - lead].clone(),
                tensor_strides[i - lead].clone(),
            )
        } else {
            // New dims are leading, so dim i + 1 is already computed
            // (and exists: tensor_dim >= 1). The product only matters
            // (and only counts as wrapped) if the stride is kept below.
            let mut w = false;
            let p = out_sizes[i + 1].mul_flagged(&out_strides[i + 1], &mut w)?;
            if w && is_keep(&sizes[i])? {
                wrapped = true;
            }
            (c(1), p)
        };
        let mut target = sizes[i].clone();
        if target.sym_eq(&c(-1))?.guard_or_false()? {
            if !existing {
                return Err(shape_err(ShapeErrorKind::ExpandInferredNewDim, format!(
                    "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                )).with_dim(i as i64).with_sizes_of(sizes).into());
            }
            target = size.clone();
        }
        // Size-oblivious, as PyTorch's fake path decides it (its
        // `expand` decomposition and `broadcast_in_dim`): an unbacked
        // target of a new or size-1 dim is taken to differ from 1
        // (stride 0, no data-dependent error); on backed sizes and at
        // `i64` it is `guard_bool`.
        if size.sym_ne(&target)?.guard_size_oblivious()? {
            if size.sym_ne(&c(1))?.guard_bool()? {
                return Err(shape_err(ShapeErrorKind::ExpandMismatch, format!(
                    "The expanded size of the tensor ({target}) must match the existing size ({size}) at non-singleton dimension {i}.  Target sizes: {}.  Tensor sizes: {}",
                    fmt_list(sizes),
                    fmt_list(tensor_sizes)
                )).with_dim(i as i64).with_sizes_of(sizes).into());
            }
            size = target;
            stride = c(0);
        }
        out_sizes[i] = size;
        out_strides[i] = stride;
    }
    Ok(wrapped)
}

// ---------------------------------------------------------------------------
// Concrete tensors
// ---------------------------------------------------------------------------

/// ATen's `inferExpandGeometry(tensor_sizes, tensor_strides, sizes)`: the
/// sizes and strides of `expand(sizes)`, plus whether any stride product
/// wrapped. A 0-dim tensor takes `sizes` verbatim (even `-1`), with all
/// strides 0, as in PyTorch.
///
/// ```
/// use aten_shape::infer::infer_expand_geometry;
/// let (sizes, strides) = infer_expand_geometry(&[3, 1], &[1, 1], &[2, 3, 4]).unwrap();
/// assert_eq!((sizes.as_slice(), strides.as_slice()), (&[2, 3, 4][..], &[0, 1, 0][..]));
/// ```
pub fn infer_expand_geometry(
    tensor_sizes: &[i64],
    tensor_strides: &[i64],
    sizes: &[i64],
) -> Result<(DimVec, DimVec)> {
    infer_expand_geometry_flagged(tensor_sizes, tensor_strides, sizes).map(|(a, b, _)| (a, b))
}

/// [`infer_expand_geometry`], also reporting whether a stride product wrapped.
#[inline]
pub(crate) fn infer_expand_geometry_flagged(
    tensor_sizes: &[i64],
    tensor_strides: &[i64],
    sizes: &[i64],
) -> Result<(DimVec, DimVec, bool)> {
    // (every entry is overwritten below)
    let mut out_sizes = DimVec::from_slice(sizes);
    let mut out_strides = DimVec::from_slice(sizes);
    let wrapped = expand_geometry_into(
        tensor_sizes,
        tensor_strides,
        sizes,
        &mut out_sizes,
        &mut out_strides,
    )?;
    Ok((out_sizes, out_strides, wrapped))
}

// ---------------------------------------------------------------------------
// expand
// ---------------------------------------------------------------------------

/// Free-function form of [`ViewOps::expand`](crate::views::ViewOps::expand).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let row = Tensor::arange(0, 3, 1, ScalarType::Long)?;
/// let e = views::expand(&row, &[2, -1])?;
/// assert_eq!((e.sizes(), e.strides()), (&[2i64, 3][..], &[0i64, 1][..]));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn expand(t: &Tensor, size: impl IntoShape) -> Result<Tensor> {
    match size.into_shape()? {
        Shape::Ints(s) => expand_ints(t, s.as_ref())
            .or_else(|e| on_symbolic(t, e, || expand_sym(t, &sym_ints(s.as_ref())))),
        Shape::Sym(s) => expand_sym(t, &s),
    }
}

/// The symbolic face of [`expand`].
#[cold]
#[inline(never)]
fn expand_sym(t: &Tensor, size: &[SymInt]) -> Result<Tensor> {
    sym_op(t, |g| g.expand(size))
}

/// [`expand`] with concrete sizes on a concrete tensor.
pub(crate) fn expand_ints(t: &Tensor, size: &[i64]) -> Result<Tensor> {
    if size.len() < t.dim() {
        return Err(shape_err(ShapeErrorKind::ExpandTooFewSizes, format!(
            "expand({}{{{}}}, size={}): the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
            t.legacy_type_name(),
            fmt_list(t.sizes()),
            fmt_list(size),
            size.len(),
            t.dim()
        )).with_sizes(size).into());
    }
    c10_core::geometry::check_symint_list(size)?;
    let (sizes, strides) = (t.sizes(), t.strides());
    let built = TensorImpl::view_tensor_fill_or_abandon(
        t,
        t.storage_offset(),
        size.len(),
        |new_sizes, new_strides| {
            let wrapped = expand_geometry_into(sizes, strides, size, new_sizes, new_strides)?;
            Ok(!wrapped)
        },
    )?;
    if let Some(view) = built {
        return Ok(view);
    }
    // A stride product wrapped: the checked path.
    let mut outcome: Result<bool> = Ok(false);
    let geometry = SizesAndStrides::from_fn(size.len(), |new_sizes, new_strides| {
        outcome = expand_geometry_into(sizes, strides, size, new_sizes, new_strides);
    })?;
    make_view_in_place(t, geometry, t.storage_offset(), outcome?)
}

/// Free-function form of [`ViewOps::expand_as`](crate::views::ViewOps::expand_as).
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
    if t.has_symbolic_sizes_strides() || other.has_symbolic_sizes_strides() {
        return expand_sym(t, &other.sym_sizes());
    }
    expand_ints(t, other.sizes())
}

/// Free-function form of [`ViewOps::broadcast_to`](crate::views::ViewOps::broadcast_to).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let col = Tensor::zeros(&[3, 1], ScalarType::Float)?;
/// assert_eq!(views::broadcast_to(&col, &[2, 3, 5])?.strides(), &[0, 1, 0]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn broadcast_to(t: &Tensor, size: impl IntoShape) -> Result<Tensor> {
    expand(t, size)
}

/// `torch.broadcast_tensors(*tensors)`: every tensor expanded to the
/// shape they all broadcast to (PyTorch's pairwise `infer_size` rule and
/// message). A tensor that already has that shape comes back itself (the
/// same `TensorImpl`), as ATen's `expand_outplace` returns it.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let a = Tensor::zeros(&[2, 1, 3], ScalarType::Float)?;
/// let b = Tensor::zeros(&[3, 1], ScalarType::Float)?;
/// let out = views::broadcast_tensors(&[a.clone(), b])?;
/// assert_eq!(out[0].sizes(), &[2, 3, 3]);
/// assert_eq!(out[1].strides(), &[0, 1, 0]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn broadcast_tensors(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
    let mut shape: Vec<i64> = match tensors.first() {
        Some(t) => t.sizes().to_vec(),
        None => return Ok(Vec::new()),
    };
    for t in &tensors[1..] {
        shape = crate::infer::infer_broadcast_size(&shape, t.sizes())?.to_vec();
    }
    tensors
        .iter()
        .map(|t| {
            if t.sizes() == shape.as_slice() {
                Ok(t.clone())
            } else {
                expand(t, &shape)
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Symbolic geometry
// ---------------------------------------------------------------------------

impl<T: ShapeInt> Geometry<T> {
    /// `expand(sizes)` (`-1` keeps a size).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let e = Geometry::<i64>::contiguous(&[3, 1])?.expand(&[2, 3, 4])?;
    /// assert_eq!(e.strides, vec![0, 1, 0]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn expand(&self, sizes: &[T]) -> Result<Geometry<T>> {
        if sizes.len() < self.dim() {
            return Err(shape_err(ShapeErrorKind::ExpandTooFewSizes, format!(
                "expand(torch.FloatTensor{{{}}}, size=[{}]): the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
                fmt_list(&self.sizes).trim_matches(|c| c == '[' || c == ']'),
                fmt_list(sizes).trim_matches(|c| c == '[' || c == ']'),
                sizes.len(),
                self.dim()
            )).with_sizes_of(sizes).into());
        }
        let mut out_sizes = sizes.to_vec();
        let mut out_strides = sizes.to_vec();
        expand_geometry_into(
            &self.sizes,
            &self.strides,
            sizes,
            &mut out_sizes,
            &mut out_strides,
        )?;
        // PyTorch's fake path (`_refs.expand` -> `prims.broadcast_in_dim`)
        // gives a new leading dim that stays of size 1 the stride
        // `stride(0) * size(0)` of the input, where ATen's C++ rule (the
        // concrete path) uses the next output dim's product, 0 after
        // another new or broadcast dim. Only the stride of a size-1 dim
        // differs (it addresses nothing else).
        let lead = sizes.len() - self.dim();
        if lead > 0 && self.dim() > 0 {
            let inner = self.strides[0].mul(&self.sizes[0])?;
            for i in 0..lead {
                // Decided already by the rule (no second guard).
                if !out_sizes[i].sym_ne(&c(1))?.guard_size_oblivious()? {
                    out_strides[i] = inner.clone();
                }
            }
        }
        Ok(Geometry {
            sizes: out_sizes,
            strides: out_strides,
            offset: self.offset.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_expand_geometry_into() -> Result<()> {
        let (mut sz, mut st) = ([0i64; 3], [0i64; 3]);
        expand_geometry_into(&[3, 1], &[1, 1], &[2, 3, 4], &mut sz, &mut st)?;
        assert_eq!((sz, st), ([2, 3, 4], [0, 1, 0]));
        Ok::<(), c10_core::TensorError>(())
    }
}
