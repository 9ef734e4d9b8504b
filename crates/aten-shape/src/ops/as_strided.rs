//! The as_strided family: the free function `as_strided` (the method is `Tensor::as_strided` in c10-core, the checked geometry constructor the data model is built on, which takes concrete and symbolic arguments alike) and the in-place `as_strided_`.
//!
//! The rule is written once, generic over [`ShapeInt`] (`i64` on the
//! concrete path, `SymInt` on the symbolic one), and the faces of each
//! op sit next to it: the concrete free functions (re-exported by
//! [`crate::views`]), the in-place twins, and the symbolic
//! [`Geometry`] methods.

use super::prelude::*;
use super::slice::int_bound;

// ---------------------------------------------------------------------------
// In place
// ---------------------------------------------------------------------------

/// `as_strided(size, stride, storage_offset)` for concrete and symbolic
/// tensors alike: on a concrete tensor with concrete arguments it is
/// [`Tensor::as_strided`] (checked against the storage); on a symbolic
/// tensor, or with symbolic arguments, a symbolic view (meta and fake
/// tensors have no storage to check against). `None` keeps the tensor's
/// storage offset. (A free function only: [`Tensor::as_strided`] is the
/// method.)
///
/// ```
/// use aten_shape::views;
/// use c10_core::sym::ShapeEnv;
/// use c10_core::{Device, ScalarType, Tensor, TensorOptions};
/// let t = Tensor::arange(0, 6, 1, ScalarType::Long)?;
/// let v = views::as_strided(&t, (2, 2), (1, 2), 1)?;
/// assert_eq!(v.to_vec::<i64>()?, vec![1, 3, 2, 4]);
/// let env = ShapeEnv::new();
/// let n = env.create_symbol(6, "n")?;
/// let x = Tensor::empty_symint(&[n.clone()], TensorOptions::new().device(Device::META))?;
/// let w = views::as_strided(&x, [n.clone()], [1], None)?;
/// assert_eq!(w.sym_sizes(), vec![n]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn as_strided(
    t: &Tensor,
    sizes: impl IntoShape,
    strides: impl IntoShape,
    storage_offset: impl IntoSliceBound,
) -> Result<Tensor> {
    t.as_strided(sizes, strides, storage_offset)
}

/// In-place `as_strided_(size, stride, storage_offset)`: this handle gets
/// the new geometry, checked against the storage as
/// [`Tensor::as_strided`] checks it; bumps the version.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let mut t = Tensor::arange(0, 6, 1, ScalarType::Long)?;
/// views::as_strided_(&mut t, &[2, 2], &[1, 2], Some(1))?;
/// assert_eq!(t.to_vec::<i64>()?, vec![1, 3, 2, 4]);
/// assert!(views::as_strided_(&mut t, &[4, 4], &[4, 1], None).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn as_strided_(
    t: &mut Tensor,
    sizes: impl IntoShape,
    strides: impl IntoShape,
    storage_offset: impl IntoSliceBound,
) -> Result<()> {
    let (sizes, strides) = (sizes.into_shape()?, strides.into_shape()?);
    let offset = storage_offset.into_slice_bound()?;
    if let (Some(s), Some(st), Some(o), false) = (
        sizes.ints(),
        strides.ints(),
        int_bound(&offset),
        t.has_symbolic_sizes_strides(),
    ) {
        return as_strided_ints(t, s, st, o);
    }
    as_strided_sym_(
        t,
        &sizes.to_sym_ints(),
        &strides.to_sym_ints(),
        offset.as_ref(),
    )
}

/// The symbolic face of [`as_strided_`]: the geometry rule of
/// [`as_strided`] installed in place (a fake tensor's storage holds no
/// data to check the geometry against; see `docs/symbolic-shapes.md`).
#[cold]
#[inline(never)]
fn as_strided_sym_(
    t: &mut Tensor,
    sizes: &[SymInt],
    strides: &[SymInt],
    offset: Option<&SymInt>,
) -> Result<()> {
    t.check_inplace()?;
    if sizes
        .iter()
        .any(|s| s.maybe_as_int().is_some_and(|v| v < 0))
    {
        return Err(TensorError::runtime(
            "numel: integer multiplication overflow",
        ));
    }
    let g = Geometry::of(t).as_strided(sizes, strides, offset)?;
    check_in_bounds_sym(t, &g)?;
    t.bump_version()?;
    t.edit_metadata()
        .set_sym_sizes_and_strides(&g.sizes, &g.strides, &g.offset)
}

/// [`as_strided_`] with concrete arguments.
fn as_strided_ints(
    t: &mut Tensor,
    sizes: &[i64],
    strides: &[i64],
    storage_offset: Option<i64>,
) -> Result<()> {
    t.check_inplace()?;
    if sizes.iter().any(|&s| s < 0) {
        // c10's in-place path multiplies the sizes with overflow checks
        // first; a negative size reads as a huge unsigned factor there.
        return Err(TensorError::runtime(
            "numel: integer multiplication overflow",
        ));
    }
    let offset = storage_offset.unwrap_or(t.storage_offset());
    c10_core::sym::rules::check_as_strided_args(sizes, strides, &offset)?;
    c10_core::geometry::check_in_bounds_for_storage(
        sizes,
        strides,
        offset,
        t.element_size(),
        t.dtype().elements_per_byte(),
        t.storage().nbytes(),
    )?;
    t.bump_version()?;
    t.edit_metadata()
        .set_sizes_and_strides(sizes, strides, Some(offset))
}

/// c10's `checkInBoundsForStorage` on a fake tensor: geometry with bytes
/// (`computeStorageNbytes`, a `guard_or_false` test for none) must fit in
/// the storage's symbolic size, a guarding decision, with c10's message.
#[cold]
#[inline(never)]
fn check_in_bounds_sym(t: &Tensor, g: &Geometry<SymInt>) -> Result<()> {
    let itemsize = t.element_size();
    let zero = SymInt::from(0);
    let bytes = c10_core::sym::storage_nbytes(&g.sizes, &g.strides, &zero, itemsize)?;
    if bytes.sym_eq(&zero)?.guard_or_false()? {
        return Ok(());
    }
    let needed = bytes.add(&g.offset.mul(&SymInt::from(itemsize as i64))?)?;
    let have = t.sym_storage_nbytes();
    // `TORCH_SYM_CHECK(bytes == 0 || needed <= have)`: a guard on backed
    // symbols, a runtime assert on unbacked ones.
    let fits = bytes.sym_eq(&zero)?.sym_or(&needed.sym_le(&have)?)?;
    if !fits.expect_true()? {
        return Err(TensorError::runtime(format!(
            "setStorage: sizes {}, strides {}, storage offset {}, and itemsize {itemsize} requiring a storage size of {needed} are out of bounds for storage of size {have}",
            c10_core::sym::fmt_list(&g.sizes),
            c10_core::sym::fmt_list(&g.strides),
            g.offset,
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Symbolic geometry
// ---------------------------------------------------------------------------

impl<T: ShapeInt> Geometry<T> {
    /// `as_strided(sizes, strides, offset)`: the values as given (on meta
    /// and fake tensors there is no storage to check against).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let a = Geometry::<i64>::contiguous(&[6])?.as_strided(&[2, 3], &[1, 2], Some(&1))?;
    /// assert_eq!(a.offset, 1);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn as_strided(
        &self,
        sizes: &[T],
        strides: &[T],
        offset: Option<&T>,
    ) -> Result<Geometry<T>> {
        let offset = offset.cloned().unwrap_or_else(|| self.offset.clone());
        c10_core::sym::rules::check_as_strided_args(sizes, strides, &offset)?;
        Ok(Geometry {
            sizes: sizes.to_vec(),
            strides: strides.to_vec(),
            offset,
        })
    }
}
