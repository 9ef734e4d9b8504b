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
    let sizes = concrete_list(sizes.into_shape()?, "resize_")?;
    resize_ints(t, sizes.as_ref(), format.into())
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
    storage_offset: i64,
    sizes: impl IntoShape,
    strides: impl IntoShape,
) -> Result<()> {
    let sizes = concrete_list(sizes.into_shape()?, "set_")?;
    let strides = concrete_list(strides.into_shape()?, "set_")?;
    set_ints(t, storage, storage_offset, sizes.as_ref(), strides.as_ref())
}

/// [`set_`] with concrete sizes and strides.
fn set_ints(
    t: &mut Tensor,
    storage: &Storage,
    storage_offset: i64,
    sizes: &[i64],
    strides: &[i64],
) -> Result<()> {
    t.check_inplace()?;
    if sizes.len() != strides.len() {
        return Err(TensorError::runtime(format!(
            "unequal size length ({}) and stride length ({})",
            sizes.len(),
            strides.len()
        )));
    }
    if storage_offset < 0 {
        return Err(TensorError::runtime(format!(
            "Tensor: invalid storage offset {storage_offset}"
        )));
    }
    if storage.device() != t.device() && !storage.is_alias_of(t.storage()) {
        return Err(TensorError::runtime(format!(
            "Attempted to set the storage of a tensor on device \"{}\" to a storage on different device \"{}\".  This is no longer allowed; the devices must match.",
            t.device(),
            storage.device()
        )));
    }
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
