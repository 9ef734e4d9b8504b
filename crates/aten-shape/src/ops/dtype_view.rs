//! Dtype views: `view(dtype)`, the same bytes read as another dtype.

use super::prelude::*;

/// `view(dtype)`: the same bytes read as another dtype, a view. With
/// the same element size the geometry is unchanged; otherwise the last
/// dim is rescaled (it must have stride 1; for a wider dtype its size,
/// the storage offset and the other strides must divide by the ratio),
/// with PyTorch's errors (`t.size(-1) must be divisible by 2 to view
/// Float as Long (different element sizes), but got 3`, `t.dim()
/// cannot be 0 to view ...`).
///
/// ```
/// use aten_shape::views::ViewOps;
/// use c10_core::{ScalarType, Tensor};
/// let t = Tensor::zeros(&[2, 4], ScalarType::Float)?;
/// let v = t.view_dtype(ScalarType::Long)?;
/// assert_eq!((v.sizes(), v.strides()), (&[2i64, 2][..], &[2i64, 1][..]));
/// let b = t.view_dtype(ScalarType::Byte)?;
/// assert_eq!(b.sizes(), &[2, 16]);
/// assert!(b.is_alias_of(&t));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn view_dtype(t: &Tensor, dtype: ScalarType) -> Result<Tensor> {
    if t.is_conj() {
        return Err(TensorError::runtime("torch.Tensor.view is not supported for conjugate view tensors when converting to a different dtype."));
    }
    if t.is_neg() {
        return Err(TensorError::runtime("torch.Tensor.view is not supported for tensors with negative bit set when converting to a different dtype."));
    }
    let (old, new) = (t.element_size() as i64, dtype.itemsize() as i64);
    let n = t.dim();
    let what = || {
        format!(
            "to view {} as {} (different element sizes)",
            t.dtype().name(),
            dtype.name()
        )
    };
    if t.has_symbolic_sizes_strides() {
        return view_dtype_sym(t, dtype, old, new, &what);
    }
    let mut sizes = DimVec::from_slice(t.sizes());
    let mut strides = DimVec::from_slice(t.strides());
    let mut offset = t.storage_offset();
    if old != new {
        check_rescalable(t, dtype, old, new, n, &what)?;
        rescale_last_dim(&mut sizes, &mut strides, &mut offset, old, new, &what)?;
    }
    c10_core::geometry::check_in_bounds_for_storage(
        &sizes,
        &strides,
        offset,
        dtype.itemsize(),
        dtype.elements_per_byte(),
        t.storage().nbytes(),
    )?;
    // A view (same storage, version counter and autograd view rules) whose
    // bytes are then read as `dtype`; the geometry was checked against the
    // storage for that dtype just above.
    let mut v = t.view_with_geometry(&sizes, &strides, offset)?;
    let mut edit = v.edit_metadata();
    edit.set_dtype(dtype);
    // PyTorch 2.15's `view(dtype)` is not tracked: `_base is None`.
    edit.untrack_view();
    Ok(v)
}

/// Rescales the geometry of a `view(dtype)` from element size `old` to a
/// different `new` (both nonzero; at least one dim): the last dim grows
/// for a narrower dtype and shrinks for a wider one, checking what PyTorch
/// checks, with its messages (`what` names the conversion).
#[inline]
fn rescale_last_dim(
    sizes: &mut [i64],
    strides: &mut [i64],
    offset: &mut i64,
    old: i64,
    new: i64,
    what: &dyn Fn() -> String,
) -> Result<()> {
    let last = sizes.len() - 1;
    if old > new {
        let ratio = old / new;
        if strides[last] != 1 {
            return Err(TensorError::runtime(format!(
                "self.stride(-1) must be 1 {}, but got {}",
                what(),
                strides[last]
            )));
        }
        let overflow = || TensorError::runtime(format!("view(dtype): sizes overflow {}", what()));
        for st in &mut strides[..last] {
            *st = st.checked_mul(ratio).ok_or_else(overflow)?;
        }
        sizes[last] = sizes[last].checked_mul(ratio).ok_or_else(overflow)?;
        *offset = offset.checked_mul(ratio).ok_or_else(overflow)?;
    } else {
        let ratio = new / old;
        if sizes[last] % ratio != 0 {
            return Err(TensorError::runtime(format!(
                "self.size(-1) must be divisible by {ratio} {}, but got {}",
                what(),
                sizes[last]
            )));
        }
        if *offset % ratio != 0 {
            return Err(TensorError::runtime(format!(
                "self.storage_offset() must be divisible by {ratio} {}, but got {offset}",
                what()
            )));
        }
        if strides[last] != 1 {
            return Err(TensorError::runtime(format!(
                "self.stride(-1) must be 1 {}, but got {}",
                what(),
                strides[last]
            )));
        }
        for (i, st) in strides[..last].iter_mut().enumerate() {
            if *st % ratio != 0 {
                return Err(TensorError::runtime(format!(
                    "self.stride({i}) must be divisible by {ratio} {}, but got {st}",
                    what()
                )));
            }
            *st /= ratio;
        }
        sizes[last] /= ratio;
        *offset /= ratio;
    }
    Ok(())
}

/// What a dtype view to a different element size needs before the last
/// dim is rescaled, with PyTorch's texts: at least one dim, and whole-byte
/// element sizes on both sides.
fn check_rescalable(
    t: &Tensor,
    dtype: ScalarType,
    old: i64,
    new: i64,
    ndim: usize,
    what: &dyn Fn() -> String,
) -> Result<()> {
    if ndim == 0 {
        return Err(TensorError::runtime(format!(
            "self.dim() cannot be 0 {}",
            what()
        )));
    }
    if old == 0 || new == 0 || t.dtype().elements_per_byte() != 1 || dtype.elements_per_byte() != 1
    {
        return Err(TensorError::runtime(format!(
            "cannot view {} as {}",
            t.dtype(),
            dtype
        )));
    }
    Ok(())
}

/// The symbolic face of [`view_dtype`] (a fake tensor): the same checks
/// and rescaling over `SymInt`s, each check a guarding decision as ATen's
/// `SymInt` comparisons make it (`Eq(Mod(s2, 2), 0)` for a last size that
/// must be even); no storage to check against.
#[cold]
#[inline(never)]
fn view_dtype_sym(
    t: &Tensor,
    dtype: ScalarType,
    old: i64,
    new: i64,
    what: &dyn Fn() -> String,
) -> Result<Tensor> {
    let mut g = Geometry::of(t);
    if old != new {
        check_rescalable(t, dtype, old, new, g.sizes.len(), what)?;
        rescale_last_dim_sym(&mut g, old, new, what)?;
    }
    let mut v = g.view_of(t)?;
    let mut edit = v.edit_metadata();
    edit.set_dtype(dtype);
    edit.untrack_view();
    Ok(v)
}

/// [`rescale_last_dim`] over `SymInt`s.
fn rescale_last_dim_sym(
    g: &mut Geometry<SymInt>,
    old: i64,
    new: i64,
    what: &dyn Fn() -> String,
) -> Result<()> {
    let last = g.sizes.len() - 1;
    let one = SymInt::from(1);
    let stride_one = |g: &Geometry<SymInt>| -> Result<()> {
        if !g.strides[last].sym_eq(&one)?.guard_bool()? {
            return Err(TensorError::runtime(format!(
                "self.stride(-1) must be 1 {}, but got {}",
                what(),
                g.strides[last]
            )));
        }
        Ok(())
    };
    let divisible = |v: &SymInt, k: &SymInt| -> Result<bool> {
        v.modulo(k)?.sym_eq(&SymInt::from(0))?.guard_bool()
    };
    if old > new {
        let ratio = SymInt::from(old / new);
        stride_one(g)?;
        for st in &mut g.strides[..last] {
            *st = st.mul(&ratio)?;
        }
        g.sizes[last] = g.sizes[last].mul(&ratio)?;
        g.offset = g.offset.mul(&ratio)?;
        return Ok(());
    }
    let r = new / old;
    let ratio = SymInt::from(r);
    if !divisible(&g.sizes[last], &ratio)? {
        return Err(TensorError::runtime(format!(
            "self.size(-1) must be divisible by {r} {}, but got {}",
            what(),
            g.sizes[last]
        )));
    }
    if !divisible(&g.offset, &ratio)? {
        return Err(TensorError::runtime(format!(
            "self.storage_offset() must be divisible by {r} {}, but got {}",
            what(),
            g.offset
        )));
    }
    stride_one(g)?;
    for i in 0..last {
        if !divisible(&g.strides[i], &ratio)? {
            return Err(TensorError::runtime(format!(
                "self.stride({i}) must be divisible by {r} {}, but got {}",
                what(),
                g.strides[i]
            )));
        }
        g.strides[i] = g.strides[i].floordiv(&ratio)?;
    }
    g.sizes[last] = g.sizes[last].floordiv(&ratio)?;
    g.offset = g.offset.floordiv(&ratio)?;
    Ok(())
}
