//! The storage-swapping ops: `resize_` (new sizes, contiguous strides,
//! a storage that grows when too small) and `set_` (another storage, or
//! another tensor's storage and geometry). They change what a tensor
//! views, never the bytes.

use super::prelude::*;
use c10_core::InferenceMode;

/// `resize_(sizes, memory_format)`: strides of `memory_format` for the new
/// sizes; grows the storage (never shrinks it) when it is too small, which
/// every view of that storage sees; a non-resizable storage refuses to
/// grow with PyTorch's `Trying to resize storage that is not resizable`.
/// Bumps the version when the sizes change.
///
/// `format` is PyTorch's optional `memory_format`. Without one (`None`), a
/// tensor resized to the sizes it already has keeps its strides (ATen's
/// `resize_impl_cpu_` returns early), and new sizes get contiguous
/// strides. With one (`Some(format)`, a `MemoryFormat` converts), the
/// tensor is always restrided to that format, same sizes included:
/// `x.t().resize_(4, 3, memory_format=torch.contiguous_format)` gives
/// strides `(3, 1)` in PyTorch, `x.t().resize_(4, 3)` keeps `(1, 4)`.
///
/// ```
/// use aten_shape::views::ViewOps;
/// use c10_core::{MemoryFormat, ScalarType, Tensor};
/// let mut t = Tensor::zeros(&[3, 4], ScalarType::Float)?.t()?;
/// t.resize_(&[4, 3], None)?; // same sizes, no format: unchanged
/// assert_eq!(t.strides(), &[1, 4]);
/// t.resize_(&[4, 3], MemoryFormat::Contiguous)?; // an explicit format restrides
/// assert_eq!(t.strides(), &[3, 1]);
/// let mut u = Tensor::zeros(&[3, 4], ScalarType::Float)?.t()?;
/// u.resize_(&[2, 3], None)?; // new sizes: contiguous
/// assert_eq!(u.strides(), &[3, 1]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn resize_(
    t: &mut Tensor,
    sizes: impl IntoShape,
    format: impl Into<Option<MemoryFormat>>,
) -> Result<()> {
    match sizes.into_shape()? {
        Shape::Ints(s) if !t.has_symbolic_sizes_strides() => {
            resize_ints(t, s.as_ref(), format.into())
        }
        other => resize_sym(t, &other.to_sym_ints(), format.into()),
    }
}

/// The symbolic face of [`resize_`] (a symbolic tensor, or symbolic
/// sizes): as ATen's `resize_` on a fake tensor. The sizes are compared
/// with the current ones as c10 compares `SymInt` lists (each equality a
/// guarding decision); new sizes get the format's strides over `SymInt`s.
/// The storage of a fake tensor holds no data, so it is not grown (see
/// `docs/symbolic-shapes.md`: PyTorch's guard on its symbolic byte size
/// is not recorded).
#[cold]
#[inline(never)]
fn resize_sym(t: &mut Tensor, sizes: &[SymInt], explicit: Option<MemoryFormat>) -> Result<()> {
    let format = explicit.unwrap_or(MemoryFormat::Contiguous);
    if t.requires_grad() && !InferenceMode::is_enabled() {
        return Err(TensorError::runtime(
            "cannot resize variables that require grad",
        ));
    }
    if sizes
        .iter()
        .any(|s| s.maybe_as_int().is_some_and(|v| v < 0))
    {
        return Err(TensorError::runtime(
            "numel: integer multiplication overflow",
        ));
    }
    if format == MemoryFormat::Preserve {
        return Err(TensorError::runtime("Unsupported memory formatPreserve"));
    }
    let old = t.sym_sizes();
    let same = old.len() == sizes.len() && sym_all_equal(&old, sizes)?;
    if same && explicit.is_none() {
        return Ok(());
    }
    let strides = match format {
        MemoryFormat::ChannelsLast | MemoryFormat::ChannelsLast3d => {
            let want = if format == MemoryFormat::ChannelsLast {
                4
            } else {
                5
            };
            if sizes.len() != want {
                return Err(TensorError::runtime(format!(
                    "required rank {want} tensor to use {} format",
                    if want == 4 {
                        "channels_last"
                    } else {
                        "channels_last_3d"
                    }
                )));
            }
            channels_last_strides_sym(sizes)?
        }
        _ => {
            let mut st = sizes.to_vec();
            c10_core::sym::rules::contiguous_strides_into(sizes, &mut st)?;
            st
        }
    };
    let offset = t.sym_storage_offset();
    if !same {
        // ATen's `_resize_impl_` returns before the storage test when the
        // sizes are the current ones; only the restride follows.
        grow_sym_storage(t, sizes, &strides, &offset, true)?;
        t.bump_version()?;
    }
    t.edit_metadata()
        .set_sym_sizes_and_strides(sizes, &strides, &offset)
}

/// ATen's `maybe_resize_storage` on a fake tensor: when the geometry has
/// elements and needs more bytes than the storage's (symbolic) size, the
/// storage grows to that size. Each test is a decision: `resize_` guards
/// (`guard_bool`), `set_` asks size-obliviously. Contiguous geometry
/// (`resize_`) needs `itemsize * (offset + numel)` bytes, other geometry
/// c10's `computeStorageNbytes`.
#[cold]
#[inline(never)]
fn grow_sym_storage(
    t: &mut Tensor,
    sizes: &[SymInt],
    strides: &[SymInt],
    offset: &SymInt,
    contiguous: bool,
) -> Result<()> {
    let itemsize = SymInt::from(t.element_size() as i64);
    let mut numel = SymInt::from(1);
    for s in sizes {
        numel = numel.mul(s)?;
    }
    let zero = SymInt::from(0);
    let needed = if contiguous {
        // `maybe_resize_storage_meta`'s `sym_numel() == 0`: a guard (a
        // data-dependent error on unbacked sizes, as in PyTorch).
        if numel.sym_eq(&zero)?.guard_bool()? {
            return Ok(());
        }
        numel.add(offset)?.mul(&itemsize)?
    } else {
        if !numel.sym_ne(&zero)?.guard_or_true()? {
            return Ok(());
        }
        // ATen's `set_storage_meta__symint` picks the formula by
        // contiguity (a guard on backed sizes, false where unbacked ones
        // leave it open).
        if t.sym_is_contiguous()?.guard_or_false()? {
            numel.add(offset)?.mul(&itemsize)?
        } else {
            c10_core::sym::storage_nbytes(sizes, strides, offset, t.element_size())?
        }
    };
    let have = t.sym_storage_nbytes();
    let hinted = needed.has_hint() && have.has_hint();
    if !contiguous && !hinted {
        // ATen's `set_` skips the resize where unbacked sizes would have
        // to decide it (a fake storage holds no data either way);
        // `resize_` asks, a data-dependent error there.
        return Ok(());
    }
    let grows = needed.sym_gt(&have)?;
    let grows = if contiguous {
        grows.guard_bool()?
    } else {
        grows.guard_size_oblivious()?
    };
    if grows {
        t.edit_metadata().set_sym_storage_nbytes(needed);
    }
    Ok(())
}

/// The strides of `format` (channels-last ones; any other format:
/// contiguous) for `SymInt` sizes, checking the rank as `resize_` does.
#[cold]
#[inline(never)]
pub(crate) fn format_strides_sym(sizes: &[SymInt], format: MemoryFormat) -> Result<Vec<SymInt>> {
    let want = match format {
        MemoryFormat::ChannelsLast => 4,
        MemoryFormat::ChannelsLast3d => 5,
        _ => {
            let mut st = sizes.to_vec();
            c10_core::sym::rules::contiguous_strides_into(sizes, &mut st)?;
            return Ok(st);
        }
    };
    if sizes.len() != want {
        return Err(TensorError::runtime(format!(
            "required rank {want} tensor to use {} format",
            if want == 4 {
                "channels_last"
            } else {
                "channels_last_3d"
            }
        )));
    }
    channels_last_strides_sym(sizes)
}

/// c10's `get_channels_last_strides_2d`/`_3d` over `SymInt`s: the channel
/// dim innermost, then the spatial dims from the last, the batch dim
/// outermost (no `max(size, 1)`, as c10 writes them).
#[cold]
#[inline(never)]
fn channels_last_strides_sym(sizes: &[SymInt]) -> Result<Vec<SymInt>> {
    let n = sizes.len();
    let mut st = vec![SymInt::from(1); n];
    // Order from innermost: 1, n-1, ..., 2, 0.
    let mut order = vec![1];
    order.extend((2..n).rev());
    order.push(0);
    for w in 1..order.len() {
        let (prev, d) = (order[w - 1], order[w]);
        st[d] = st[prev].mul(&sizes[prev])?;
    }
    Ok(st)
}

/// c10's `SymIntArrayRef ==` on lists of one length: each `SymInt ==` a
/// guarding decision, stopping at the first difference.
#[cold]
#[inline(never)]
fn sym_all_equal(a: &[SymInt], b: &[SymInt]) -> Result<bool> {
    for (x, y) in a.iter().zip(b) {
        if !x.sym_eq(y)?.guard_bool()? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// [`resize_`] with concrete sizes.
fn resize_ints(t: &mut Tensor, sizes: &[i64], explicit: Option<MemoryFormat>) -> Result<()> {
    let format = explicit.unwrap_or(MemoryFormat::Contiguous);
    if t.requires_grad() && !InferenceMode::is_enabled() {
        return Err(TensorError::runtime(
            "cannot resize variables that require grad",
        ));
    }
    if sizes.iter().any(|&s| s < 0) {
        // c10 multiplies the sizes with overflow checks first, and a
        // negative size reads as a huge unsigned factor there.
        return Err(TensorError::runtime(
            "numel: integer multiplication overflow",
        ));
    }
    if format == MemoryFormat::Preserve {
        return Err(TensorError::runtime("Unsupported memory formatPreserve"));
    }
    let strides = match format {
        MemoryFormat::ChannelsLast => c10_core::geometry::channels_last_strides_2d(sizes)?,
        MemoryFormat::ChannelsLast3d => c10_core::geometry::channels_last_strides_3d(sizes)?,
        _ => c10_core::geometry::contiguous_strides(sizes)?,
    };
    let numel = c10_core::geometry::compute_numel(sizes)?;
    if numel > 0 {
        let needed = c10_core::geometry::storage_nbytes_contiguous(
            sizes,
            t.element_size(),
            t.storage_offset(),
        )?;
        if needed > t.storage().nbytes() {
            t.storage().resize(needed)?;
        }
    }
    // PyTorch bumps the version only when the sizes change.
    if t.sizes() != sizes {
        t.bump_version()?;
    }
    // Same sizes and no memory format: PyTorch keeps the strides as they
    // are; an explicit format always restrides.
    let unchanged = t.sizes() == sizes && (explicit.is_none() || t.strides() == strides.as_slice());
    if !unchanged {
        t.edit_metadata()
            .set_sizes_and_strides(sizes, &strides, None)?;
    }
    Ok(())
}

/// `set_(storage, storage_offset, sizes, strides)`: this handle now views
/// `storage` (same device required, PyTorch's message), growing it when
/// needed and resizable; keeps its version counter; bumps the version.
pub fn set_(
    t: &mut Tensor,
    storage: &Storage,
    storage_offset: impl IntoSymInt,
    sizes: impl IntoShape,
    strides: impl IntoShape,
) -> Result<()> {
    let (sizes, strides) = (sizes.into_shape()?, strides.into_shape()?);
    let offset = storage_offset.into_sym_int()?;
    if let (Some(s), Some(st), Some(o), false) = (
        sizes.ints(),
        strides.ints(),
        offset.maybe_as_int(),
        t.has_symbolic_sizes_strides(),
    ) {
        return set_ints(t, storage, o, s, st);
    }
    // The tensor's own storage keeps its symbolic size; another storage
    // has its real one.
    let nbytes = if storage.is_alias_of(t.storage()) {
        t.sym_storage_nbytes()
    } else {
        SymInt::from(storage.nbytes() as i64)
    };
    set_sym(
        t,
        storage,
        nbytes,
        &offset,
        &sizes.to_sym_ints(),
        &strides.to_sym_ints(),
    )
}

/// The symbolic face of [`set_`]: PyTorch's `set_` on a fake tensor. The
/// checks that concrete values decide are the concrete ones; the storage
/// of a fake tensor holds no data and is not grown.
#[cold]
#[inline(never)]
fn set_sym(
    t: &mut Tensor,
    storage: &Storage,
    storage_nbytes: SymInt,
    storage_offset: &SymInt,
    sizes: &[SymInt],
    strides: &[SymInt],
) -> Result<()> {
    check_set(
        t,
        storage,
        storage_offset.maybe_as_int(),
        sizes.len(),
        strides.len(),
    )?;
    t.bump_version()?;
    let mut edit = t.edit_metadata();
    edit.set_storage(storage);
    edit.set_sym_sizes_and_strides(sizes, strides, storage_offset)?;
    edit.set_sym_storage_nbytes(storage_nbytes);
    grow_sym_storage(t, sizes, strides, storage_offset, false)
}

/// The checks `set_` makes before touching the tensor, in PyTorch's order
/// and with its texts: in-place allowed, as many strides as sizes, a
/// non-negative offset (`None`: a symbolic offset, not checked here) and
/// the storage on the tensor's device.
fn check_set(
    t: &Tensor,
    storage: &Storage,
    storage_offset: Option<i64>,
    ndim: usize,
    nstrides: usize,
) -> Result<()> {
    t.check_inplace()?;
    if ndim != nstrides {
        return Err(TensorError::runtime(format!(
            "unequal size length ({ndim}) and stride length ({nstrides})"
        )));
    }
    if let Some(o) = storage_offset.filter(|&o| o < 0) {
        return Err(TensorError::runtime(format!(
            "Tensor: invalid storage offset {o}"
        )));
    }
    if storage.device() != t.device() && !storage.is_alias_of(t.storage()) {
        return Err(TensorError::runtime(format!(
            "Attempted to set the storage of a tensor on device \"{}\" to a storage on different device \"{}\".  This is no longer allowed; the devices must match.",
            t.device(),
            storage.device()
        )));
    }
    Ok(())
}

/// [`set_`] with concrete sizes and strides.
fn set_ints(
    t: &mut Tensor,
    storage: &Storage,
    storage_offset: i64,
    sizes: &[i64],
    strides: &[i64],
) -> Result<()> {
    check_set(t, storage, Some(storage_offset), sizes.len(), strides.len())?;
    let itemsize = t.element_size();
    let needed = c10_core::geometry::storage_nbytes(sizes, strides, itemsize, storage_offset)?;
    let unchanged = t.sizes() == sizes && t.strides() == strides;
    if needed > storage.nbytes() {
        if unchanged || !storage.resizable() {
            // c10 bounds-checks when resize would be skipped; a
            // non-resizable storage cannot grow either.
            c10_core::geometry::check_in_bounds_for_storage(
                sizes,
                strides,
                storage_offset,
                itemsize,
                t.dtype().elements_per_byte(),
                storage.nbytes(),
            )?;
        }
        storage.resize(needed)?;
    }
    t.bump_version()?;
    let mut edit = t.edit_metadata();
    // Keeps the version counter shared with the old views (c10: `set_`
    // keeps the tensor's `VariableVersion`).
    edit.set_storage(storage);
    edit.set_sizes_and_strides(sizes, strides, Some(storage_offset))
}

/// `set_(source)`: this handle views `source`'s storage with
/// `source`'s geometry. The dtypes must match (PyTorch: `Could not set
/// tensor of type float to a tensor of type long int`).
///
/// ```
/// use aten_shape::views::ViewOps;
/// use c10_core::{ScalarType, Tensor};
/// let src = Tensor::arange(0, 6, 1, ScalarType::Long)?;
/// let mut t = Tensor::zeros(&[2], ScalarType::Long)?;
/// t.set_to(&src)?;
/// assert!(t.is_set_to(&src));
/// let mut f = Tensor::zeros(&[2], ScalarType::Float)?;
/// assert_eq!(
///     f.set_to(&src).unwrap_err().to_string(),
///     "Could not set tensor of type long int to a tensor of type float"
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn set_to(t: &mut Tensor, source: &Tensor) -> Result<()> {
    check_set_dtype(t, source.dtype())?;
    if source.has_symbolic_sizes_strides() {
        return set_sym(
            t,
            source.storage(),
            source.sym_storage_nbytes(),
            &source.sym_storage_offset(),
            &source.sym_sizes(),
            &source.sym_strides(),
        );
    }
    let (sizes, strides) = (
        DimVec::from_slice(source.sizes()),
        DimVec::from_slice(source.strides()),
    );
    set_(
        t,
        source.storage(),
        source.storage_offset(),
        &sizes,
        &strides,
    )
}

/// `set_(storage)`: this handle views the whole of `storage` as a 1-d
/// tensor of its own dtype (`nbytes / itemsize` elements, offset 0).
///
/// ```
/// use aten_shape::views::ViewOps;
/// use c10_core::{ScalarType, Tensor};
/// let src = Tensor::arange(0, 6, 1, ScalarType::Int)?;
/// let mut t = Tensor::zeros(&[0], ScalarType::Long)?;
/// t.set_storage(src.storage())?; // 24 bytes as int64: 3 elements
/// assert_eq!(t.sizes(), &[3]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn set_storage(t: &mut Tensor, storage: &Storage) -> Result<()> {
    let n = (storage.nbytes() / t.element_size().max(1)) as i64;
    set_(t, storage, 0, &[n], &[1])
}

fn check_set_dtype(t: &Tensor, source: ScalarType) -> Result<()> {
    if source != t.dtype() {
        return Err(TensorError::runtime(format!(
            "Could not set tensor of type {} to a tensor of type {}",
            c10_core::scalar::c10_type_name_long(source),
            c10_core::scalar::c10_type_name_long(t.dtype())
        )));
    }
    Ok(())
}
