//! `Tensor`: the cheap, shareable handle.

use std::fmt;

use c10_storage::{Device, Storage};

use crate::autograd::{AutogradMeta, ViewOrigin};
use crate::dispatch_key::DispatchKeySet;
use crate::error::{Result, TensorError};
use crate::geometry;
use crate::impl_arc::ImplArc;
use crate::options::MemoryFormat;
use crate::scalar_type::ScalarType;
use crate::tensor_impl::TensorImpl;
use crate::version::{GradMode, InferenceMode, VersionCounter};

/// A tensor: a handle to a [`TensorImpl`] (c10's `at::Tensor`).
///
/// Cloning a `Tensor` is one atomic increment and gives another handle to
/// the same `TensorImpl` (like copying an `at::Tensor` in C++). Views are
/// new `TensorImpl`s over the same [`Storage`]: writes through any of them
/// are seen by all (see [`Tensor::write`]).
///
/// **One deliberate difference from PyTorch.** A `TensorImpl` shared by
/// several handles never changes. In-place *metadata* operations
/// ([`Tensor::t_`], [`Tensor::unsqueeze_`], [`Tensor::as_strided_`],
/// [`Tensor::resize_`], [`Tensor::set_`], ...) take `&mut self` and copy the
/// `TensorImpl` first if another handle shares it, so other handles keep
/// their old sizes and strides. In PyTorch every `at::Tensor` copy would see
/// the change. Data writes are shared exactly as in PyTorch.
///
/// ```
/// use c10_core::{Tensor, TensorOptions, ScalarType};
/// let a = Tensor::arange(0.0, 12.0, 1.0, ScalarType::Float)?;
/// let b = a.clone(); // same TensorImpl
/// assert!(b.is_same(&a));
/// let v = a.as_strided(&[3, 4], &[4, 1], Some(0))?; // a view: new TensorImpl, same storage
/// v.set::<f32>(&[1, 1], 99.0)?;
/// assert_eq!(a.get::<f32>(&[5])?, 99.0);
/// assert!(v.is_alias_of(&a));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
///
/// # Guards and re-entrancy
///
/// Every element access locks the tensor's storage for its duration: a
/// shared lock to read ([`Tensor::read`], [`Tensor::get`],
/// [`Tensor::to_vec`], printing, the source of a copy), an exclusive one to
/// write ([`Tensor::write`], [`Tensor::set`], [`Tensor::fill_`], the
/// destination of a copy) or to reallocate (a growing [`Tensor::resize_`]
/// or [`Tensor::set_`]). All views of a storage share its lock. While
/// **this thread** holds a guard ([`Tensor::read`] / [`Tensor::write`]),
/// an access through any view of the same storage that the guard excludes
/// fails with [`StorageError::Reentrant`](c10_storage::StorageError::Reentrant)
/// instead of deadlocking; other threads wait for the guard as usual.
///
/// ```
/// use c10_core::{Tensor, ScalarType, TensorError};
/// let t = Tensor::arange(0.0, 4.0, 1.0, ScalarType::Float)?;
/// let view = t.as_strided(&[2], &[2], Some(0))?;
/// let guard = t.read::<f32>()?;
/// assert_eq!(view.get::<f32>(&[1])?, 2.0); // reading alongside is fine
/// let err = view.fill_(1.0).unwrap_err(); // would wait for `guard`
/// assert!(err.to_string().contains("would deadlock"));
/// drop(guard);
/// view.fill_(1.0)?; // fine once the guard is gone
/// # Ok::<(), TensorError>(())
/// ```
#[derive(Clone)]
pub struct Tensor {
    pub(crate) imp: ImplArc<TensorImpl>,
}

impl Tensor {
    /// Wraps a `TensorImpl`.
    pub fn from_impl(imp: TensorImpl) -> Tensor {
        Tensor {
            imp: ImplArc::new(imp),
        }
    }

    /// The `TensorImpl`.
    #[inline]
    pub fn impl_ref(&self) -> &TensorImpl {
        &self.imp
    }

    /// The `TensorImpl` for modification, copied first if shared.
    fn impl_mut(&mut self) -> &mut TensorImpl {
        ImplArc::make_mut(&mut self.imp)
    }

    /// A tensor over an existing storage with the given geometry (checked
    /// against the storage's size).
    pub fn from_storage(
        storage: Storage,
        dtype: ScalarType,
        sizes: &[i64],
        strides: &[i64],
        storage_offset: i64,
    ) -> Result<Tensor> {
        check_as_strided_args(sizes, strides, storage_offset)?;
        geometry::check_in_bounds_for_storage(
            sizes,
            strides,
            storage_offset,
            dtype.itemsize(),
            dtype.elements_per_byte(),
            storage.nbytes(),
        )?;
        let mut imp = TensorImpl::new(storage, dtype);
        imp.set_sizes_and_strides(sizes, strides, Some(storage_offset))?;
        Ok(Tensor::from_impl(imp))
    }

    /// Sizes, in elements.
    #[inline]
    pub fn sizes(&self) -> &[i64] {
        self.imp.sizes()
    }
    /// Strides, in elements.
    #[inline]
    pub fn strides(&self) -> &[i64] {
        self.imp.strides()
    }
    /// Size of dim `dim` (negative counts from the end; c10's wrapping with
    /// `wrap_scalar = false`).
    pub fn size(&self, dim: i64) -> Result<i64> {
        let d = geometry::wrap_dim(dim, self.dim() as i64, false)?;
        Ok(self.sizes()[d])
    }
    /// Stride of dim `dim`.
    pub fn stride(&self, dim: i64) -> Result<i64> {
        let d = geometry::wrap_dim(dim, self.dim() as i64, false)?;
        Ok(self.strides()[d])
    }
    /// Offset into the storage, in elements.
    #[inline]
    pub fn storage_offset(&self) -> i64 {
        self.imp.storage_offset()
    }
    /// Number of elements.
    #[inline]
    pub fn numel(&self) -> i64 {
        self.imp.numel()
    }
    /// Number of dims.
    #[inline]
    pub fn dim(&self) -> usize {
        self.imp.dim()
    }
    /// Element type.
    #[inline]
    pub fn dtype(&self) -> ScalarType {
        self.imp.dtype()
    }
    /// Bytes per element.
    #[inline]
    pub fn element_size(&self) -> usize {
        self.dtype().itemsize()
    }
    /// `numel * element_size` (not the storage's size; see
    /// [`Storage::nbytes`]). Saturates at `usize::MAX`: a stride-0 view can
    /// have `i64::MAX` elements, whose byte count does not fit (this
    /// overflowed, a panic in debug builds).
    pub fn nbytes(&self) -> usize {
        (self.numel().max(0) as usize).saturating_mul(self.element_size())
    }
    /// Device.
    #[inline]
    pub fn device(&self) -> Device {
        self.imp.device()
    }
    /// The storage.
    #[inline]
    pub fn storage(&self) -> &Storage {
        self.imp.storage()
    }
    /// Dispatch key set.
    #[inline]
    pub fn key_set(&self) -> DispatchKeySet {
        self.imp.key_set()
    }
    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.numel() == 0
    }

    /// c10's `is_contiguous(memory_format)`: `ChannelsLast` and
    /// `ChannelsLast3d` read their flags; anything else (including
    /// `Preserve`) reads the row-major flag.
    pub fn is_contiguous_in(&self, format: MemoryFormat) -> bool {
        let f = self.imp.flags();
        match format {
            MemoryFormat::ChannelsLast => f.is_channels_last_contiguous(),
            MemoryFormat::ChannelsLast3d => f.is_channels_last_3d_contiguous(),
            MemoryFormat::Contiguous | MemoryFormat::Preserve => f.is_contiguous(),
        }
    }
    /// Row-major contiguous.
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.imp.flags().is_contiguous()
    }
    /// c10's `is_strides_like(format)`.
    pub fn is_strides_like(&self, format: MemoryFormat) -> bool {
        let f = self.imp.flags();
        match format {
            MemoryFormat::ChannelsLast => f.is_channels_last(),
            MemoryFormat::ChannelsLast3d => f.is_channels_last_3d(),
            _ => false,
        }
    }
    /// Some permutation of the dims is dense.
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        self.imp.flags().is_non_overlapping_and_dense()
    }
    /// ATen's `suggest_memory_format(exact = false)`.
    pub fn suggest_memory_format(&self) -> MemoryFormat {
        let f = self.imp.flags();
        if f.is_channels_last() {
            MemoryFormat::ChannelsLast
        } else if f.is_channels_last_3d() {
            MemoryFormat::ChannelsLast3d
        } else {
            MemoryFormat::Contiguous
        }
    }

    /// Whether both handles share one `TensorImpl` (C++ `a.is_same(b)`).
    pub fn is_same(&self, other: &Tensor) -> bool {
        ImplArc::ptr_eq(&self.imp, &other.imp)
    }
    /// Whether both tensors view the same storage (PyTorch's `is_alias_of`).
    pub fn is_alias_of(&self, other: &Tensor) -> bool {
        self.storage().is_alias_of(other.storage())
    }
    /// PyTorch's `is_set_to`: same storage, offset, sizes and strides.
    pub fn is_set_to(&self, other: &Tensor) -> bool {
        self.is_alias_of(other)
            && self.storage_offset() == other.storage_offset()
            && self.sizes() == other.sizes()
            && self.strides() == other.strides()
    }
    /// Number of handles sharing this `TensorImpl`.
    pub fn use_count(&self) -> usize {
        ImplArc::strong_count(&self.imp)
    }

    /// The version counter's value (`tensor._version`); inference tensors
    /// fail with `Inference tensors do not track version counter.`
    pub fn version(&self) -> Result<u32> {
        self.imp.version.current(&self.imp.storage)
    }
    /// Bumps the version counter once, as every in-place operation does.
    pub fn bump_version(&self) -> Result<()> {
        self.imp.version.bump(&self.imp.storage)
    }
    /// Whether `self` and `other` share a version counter (a base and its
    /// views do).
    pub fn shares_version_counter_with(&self, other: &Tensor) -> bool {
        self.imp
            .version
            .same_as(&self.imp.storage, &other.imp.version, &other.imp.storage)
    }
    /// Whether this is an inference tensor.
    pub fn is_inference(&self) -> bool {
        self.imp.is_inference()
    }

    /// Whether gradients are tracked (false without autograd metadata).
    pub fn requires_grad(&self) -> bool {
        self.imp.autograd_meta().is_some_and(|m| m.requires_grad())
    }
    /// Sets `requires_grad` as a factory's `requires_grad=True` does.
    /// Setting `false` on a tensor without metadata allocates nothing;
    /// `true` allocates the metadata (a leaf). Only floating-point and
    /// complex tensors can require gradients, and inference tensors only
    /// inside inference mode (PyTorch's errors).
    pub fn set_requires_grad(&mut self, requires_grad: bool) -> Result<()> {
        if requires_grad && !(self.dtype().is_floating_point() || self.dtype().is_complex()) {
            return Err(TensorError::runtime(
                "Only Tensors of floating point and complex dtype can require gradients",
            ));
        }
        self.set_requires_grad_flag(requires_grad)
    }

    /// `requires_grad_(flag)`, with PyTorch's rules for the method: only a
    /// leaf's flag can be turned off (`you can only change requires_grad
    /// flags of leaf variables. ...`), only floating-point and complex
    /// tensors can require gradients (`only Tensors of floating point dtype
    /// can require gradients`).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor, TensorOptions};
    /// let mut t = Tensor::zeros(&[2], TensorOptions::new())?;
    /// t.requires_grad_(true)?;
    /// assert!(t.requires_grad() && t.is_leaf());
    /// let mut i = Tensor::zeros(&[2], ScalarType::Long)?;
    /// assert_eq!(
    ///     i.requires_grad_(true).unwrap_err().to_string(),
    ///     "only Tensors of floating point dtype can require gradients"
    /// );
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn requires_grad_(&mut self, requires_grad: bool) -> Result<()> {
        if !self.is_leaf() {
            if requires_grad {
                return Ok(());
            }
            return Err(TensorError::runtime(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().",
            ));
        }
        if requires_grad && !(self.dtype().is_floating_point() || self.dtype().is_complex()) {
            return Err(TensorError::runtime(
                "only Tensors of floating point dtype can require gradients",
            ));
        }
        if self
            .imp
            .autograd_meta()
            .is_some_and(|m| m.view_origin() == ViewOrigin::NoGrad)
        {
            // A no_grad view reports its base's flag; PyTorch leaves it.
            return Ok(());
        }
        self.set_requires_grad_flag(requires_grad)
    }

    fn set_requires_grad_flag(&mut self, requires_grad: bool) -> Result<()> {
        if requires_grad && self.is_inference() && !InferenceMode::is_enabled() {
            return Err(TensorError::runtime(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
            ));
        }
        let imp = self.impl_mut();
        match (
            imp.extra.as_deref_mut().and_then(|e| e.autograd.as_mut()),
            requires_grad,
        ) {
            (None, false) => {}
            (None, true) => imp.set_autograd_meta(Some(Box::new(AutogradMeta::leaf()))),
            (Some(m), v) => m.set_requires_grad(v),
        }
        Ok(())
    }

    /// Whether this tensor is a leaf (`is_leaf`): every tensor that does not
    /// require grad, and those made by the user with `requires_grad`;
    /// views and copies made from a tensor that requires grad with grad mode
    /// on are not.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let w = Tensor::zeros(&[2, 2], TensorOptions::new().requires_grad(true))?;
    /// assert!(w.is_leaf());
    /// let v = w.as_strided(&[2, 2], &[1, 2], None)?;
    /// assert!(v.requires_grad() && !v.is_leaf());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn is_leaf(&self) -> bool {
        self.imp.autograd_meta().is_none_or(|m| m.is_leaf())
    }

    /// PyTorch's checks before an in-place operation changes this tensor
    /// (its data or its metadata), with grad mode on:
    /// * a view made with grad mode off of a tensor that requires grad:
    ///   `A view was created in no_grad mode and is being modified inplace
    ///   with grad mode enabled. ...`;
    /// * a leaf that requires grad: `a leaf Variable that requires grad is
    ///   being used in an in-place operation.`;
    /// * a view of one: `a view of a leaf Variable that requires grad is
    ///   being used in an in-place operation.`
    ///
    /// With grad mode off ([`GradMode::disable`], inference mode) all are
    /// allowed. Every in-place operation of this crate and of `aten-shape`
    /// runs this check first.
    ///
    /// ```
    /// use c10_core::{GradMode, Tensor, TensorOptions};
    /// let w = Tensor::zeros(&[2], TensorOptions::new().requires_grad(true))?;
    /// assert!(w.check_inplace().is_err());
    /// let _no_grad = GradMode::disable();
    /// assert!(w.check_inplace().is_ok());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn check_inplace(&self) -> Result<()> {
        let Some(m) = self.imp.autograd_meta() else {
            return Ok(());
        };
        if !GradMode::is_enabled() {
            return Ok(());
        }
        if m.view_origin() == ViewOrigin::NoGrad {
            return Err(TensorError::runtime(crate::autograd::NO_GRAD_VIEW_INPLACE));
        }
        if !m.requires_grad() {
            return Ok(());
        }
        if m.is_leaf() {
            return Err(TensorError::runtime(
                "a leaf Variable that requires grad is being used in an in-place operation.",
            ));
        }
        if m.view_origin() == ViewOrigin::OfLeaf {
            return Err(TensorError::runtime(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.",
            ));
        }
        Ok(())
    }

    /// Whether autograd metadata has been allocated for this tensor.
    pub fn has_autograd_meta(&self) -> bool {
        self.imp.autograd_meta().is_some()
    }

    /// `as_strided(size, stride, storage_offset)`: a view with exactly this
    /// geometry, checked against the storage (PyTorch's errors, after the
    /// dispatcher's check that the lists hold SymInt-representable values,
    /// `>= -2^62`). The offset defaults to this tensor's. One allocation
    /// (the view's `TensorImpl`).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let x = Tensor::arange(0, 10, 1, ScalarType::Long)?;
    /// let v = x.as_strided(&[2, 3], &[3, 1], Some(1))?;
    /// assert_eq!(v.to_vec::<i64>()?, vec![1, 2, 3, 4, 5, 6]);
    /// assert!(x.as_strided(&[4, 4], &[3, 1], None).is_err()); // needs 13 elements
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn as_strided(
        &self,
        sizes: &[i64],
        strides: &[i64],
        storage_offset: Option<i64>,
    ) -> Result<Tensor> {
        geometry::check_symint_list(sizes)?;
        geometry::check_symint_list(strides)?;
        let offset = storage_offset.unwrap_or(self.storage_offset());
        check_as_strided_args(sizes, strides, offset)?;
        let (itemsize, per_byte, available) = (
            self.element_size(),
            self.dtype().elements_per_byte(),
            self.storage().nbytes(),
        );
        // The storage check is skipped when a quick computation shows it
        // passes.
        if !surely_in_bounds(sizes, strides, offset, itemsize, per_byte, available) {
            geometry::check_in_bounds_for_storage(
                sizes, strides, offset, itemsize, per_byte, available,
            )?;
        }
        self.view_with_geometry(sizes, strides, offset)
    }

    /// A view with new geometry that the caller has proven to stay within
    /// the elements this tensor can reach (the view ops of `aten-shape`).
    /// Unlike [`Tensor::as_strided`] it does no bounds check against the
    /// storage, which keeps view ops at one allocation and no lock. Element
    /// access re-checks bounds, so a wrong geometry is an error there, never
    /// undefined behaviour.
    pub fn view_with_geometry(
        &self,
        sizes: &[i64],
        strides: &[i64],
        storage_offset: i64,
    ) -> Result<Tensor> {
        if sizes.len() != strides.len() {
            return Err(TensorError::runtime(format!(
                "dimensionality of sizes ({}) must match dimensionality of strides ({})",
                sizes.len(),
                strides.len()
            )));
        }
        // Built in place in the new handle's allocation (no 160-byte
        // `TensorImpl` on the stack to copy).
        let built = TensorImpl::view_tensor_fill_or_abandon(
            &self.imp,
            storage_offset,
            sizes.len(),
            |new_sizes, new_strides| {
                new_sizes.copy_from_slice(sizes);
                new_strides.copy_from_slice(strides);
                Ok(true)
            },
        )?;
        // `None` only when the fill gives up, which this one never does.
        built.ok_or_else(|| TensorError::runtime("view geometry was abandoned"))
    }

    /// In-place `as_strided_`: this handle gets the new geometry (checked
    /// against the storage); bumps the version.
    pub fn as_strided_(
        &mut self,
        sizes: &[i64],
        strides: &[i64],
        storage_offset: Option<i64>,
    ) -> Result<()> {
        self.check_inplace()?;
        if sizes.iter().any(|&s| s < 0) {
            // c10's in-place path multiplies the sizes with overflow checks
            // first; a negative size reads as a huge unsigned factor there.
            return Err(TensorError::runtime(
                "numel: integer multiplication overflow",
            ));
        }
        let offset = storage_offset.unwrap_or(self.storage_offset());
        check_as_strided_args(sizes, strides, offset)?;
        geometry::check_in_bounds_for_storage(
            sizes,
            strides,
            offset,
            self.element_size(),
            self.dtype().elements_per_byte(),
            self.storage().nbytes(),
        )?;
        self.bump_version()?;
        self.impl_mut()
            .set_sizes_and_strides(sizes, strides, Some(offset))
    }

    /// In-place transpose of a ≤2-d tensor (`t_`); bumps the version.
    pub fn t_(&mut self) -> Result<()> {
        self.check_inplace()?;
        let n = self.dim();
        if n > 2 {
            return Err(TensorError::runtime(format!(
                "t_() expects a tensor with <= 2 dimensions, but self is {n}D"
            )));
        }
        self.bump_version()?;
        if n == 2 {
            let (sizes, strides) = (self.sizes(), self.strides());
            let (s, st) = ([sizes[1], sizes[0]], [strides[1], strides[0]]);
            self.impl_mut().set_sizes_and_strides(&s, &st, None)?;
        }
        Ok(())
    }

    /// In-place `unsqueeze_(dim)` with c10's stride rule for the new dim;
    /// bumps the version.
    pub fn unsqueeze_(&mut self, dim: i64) -> Result<()> {
        self.check_inplace()?;
        let (sizes, strides) = geometry::unsqueeze_geometry(self.sizes(), self.strides(), dim)?;
        self.bump_version()?;
        self.impl_mut()
            .set_sizes_and_strides(&sizes, &strides, None)
    }

    /// In-place `squeeze_` of one dim (`Some(d)`) or of every size-1 dim
    /// (`None`); bumps the version.
    pub fn squeeze_(&mut self, dim: Option<i64>) -> Result<()> {
        self.check_inplace()?;
        let (sizes, strides) = geometry::squeeze_geometry(self.sizes(), self.strides(), dim)?;
        self.bump_version()?;
        self.impl_mut()
            .set_sizes_and_strides(&sizes, &strides, None)
    }

    /// In-place `squeeze_(dims)`: removes each listed dim that has size 1
    /// (a dim listed twice: `dim 0 appears multiple times in the list of
    /// dims`); bumps the version.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let mut t = Tensor::zeros(&[2, 1, 3, 1], TensorOptions::new())?;
    /// t.squeeze_dims_(&[1, 0, -1])?;
    /// assert_eq!(t.sizes(), &[2, 3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn squeeze_dims_(&mut self, dims: &[i64]) -> Result<()> {
        self.check_inplace()?;
        let (sizes, strides) = geometry::squeeze_dims_geometry(self.sizes(), self.strides(), dims)?;
        self.bump_version()?;
        self.impl_mut()
            .set_sizes_and_strides(&sizes, &strides, None)
    }

    /// In-place `transpose_(dim0, dim1)`: swaps two dims' sizes and
    /// strides (dims wrap as in PyTorch); bumps the version.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let mut t = Tensor::zeros(&[2, 3, 4], TensorOptions::new())?;
    /// t.transpose_(0, -1)?;
    /// assert_eq!((t.sizes(), t.strides()), (&[4i64, 3, 2][..], &[1i64, 4, 12][..]));
    /// assert_eq!(t.version()?, 1);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn transpose_(&mut self, dim0: i64, dim1: i64) -> Result<()> {
        self.check_inplace()?;
        let n = self.dim() as i64;
        let d0 = geometry::wrap_dim(dim0, n, true)?;
        let d1 = geometry::wrap_dim(dim1, n, true)?;
        self.bump_version()?;
        if d0 != d1 {
            let mut sizes = geometry::DimVec::from_slice(self.sizes());
            let mut strides = geometry::DimVec::from_slice(self.strides());
            sizes.swap(d0, d1);
            strides.swap(d0, d1);
            self.impl_mut()
                .set_sizes_and_strides(&sizes, &strides, None)?;
        }
        Ok(())
    }

    /// `resize_(sizes, memory_format)`: contiguous strides for the new sizes;
    /// grows the storage (never shrinks it) when it is too small, which every
    /// view of that storage sees; a non-resizable storage refuses to grow
    /// with PyTorch's `Trying to resize storage that is not resizable`.
    /// Bumps the version.
    pub fn resize_(&mut self, sizes: &[i64], format: MemoryFormat) -> Result<()> {
        if self.requires_grad() && !InferenceMode::is_enabled() {
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
            MemoryFormat::ChannelsLast => geometry::channels_last_strides_2d(sizes)?,
            MemoryFormat::ChannelsLast3d => geometry::channels_last_strides_3d(sizes)?,
            _ => geometry::contiguous_strides(sizes)?,
        };
        let numel = geometry::compute_numel(sizes)?;
        if numel > 0 {
            let needed = geometry::storage_nbytes_contiguous(
                sizes,
                self.element_size(),
                self.storage_offset(),
            )?;
            if needed > self.storage().nbytes() {
                self.storage().resize(needed)?;
            }
        }
        // PyTorch bumps the version only when the sizes change.
        if self.sizes() != sizes {
            self.bump_version()?;
        }
        // Same sizes: PyTorch's `resize_` (without a memory format) keeps
        // the strides as they are.
        let unchanged = self.sizes() == sizes
            && (format == MemoryFormat::Contiguous || self.strides() == strides.as_slice());
        if !unchanged {
            self.impl_mut()
                .set_sizes_and_strides(sizes, &strides, None)?;
        }
        Ok(())
    }

    /// `set_(storage, storage_offset, sizes, strides)`: this handle now views
    /// `storage` (same device required, PyTorch's message), growing it when
    /// needed and resizable; keeps its version counter; bumps the version.
    pub fn set_(
        &mut self,
        storage: &Storage,
        storage_offset: i64,
        sizes: &[i64],
        strides: &[i64],
    ) -> Result<()> {
        self.check_inplace()?;
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
        if storage.device() != self.device() && !storage.is_alias_of(self.storage()) {
            return Err(TensorError::runtime(format!(
                "Attempted to set the storage of a tensor on device \"{}\" to a storage on different device \"{}\".  This is no longer allowed; the devices must match.",
                self.device(),
                storage.device()
            )));
        }
        let itemsize = self.element_size();
        let needed = geometry::storage_nbytes(sizes, strides, itemsize, storage_offset)?;
        let unchanged = self.sizes() == sizes && self.strides() == strides;
        if needed > storage.nbytes() {
            if unchanged || !storage.resizable() {
                // c10 bounds-checks when resize would be skipped; a
                // non-resizable storage cannot grow either.
                geometry::check_in_bounds_for_storage(
                    sizes,
                    strides,
                    storage_offset,
                    itemsize,
                    self.dtype().elements_per_byte(),
                    storage.nbytes(),
                )?;
            }
            storage.resize(needed)?;
        }
        self.bump_version()?;
        let old_storage = self.storage().clone();
        let imp = self.impl_mut();
        if !old_storage.is_alias_of(storage) {
            // Keep sharing the counter with old views (c10: set_ keeps the
            // tensor's VariableVersion).
            if matches!(imp.version, VersionCounter::Storage) {
                imp.version = VersionCounter::OfStorage(old_storage);
            }
            imp.storage = storage.clone();
        }
        imp.set_sizes_and_strides(sizes, strides, Some(storage_offset))
    }

    /// `view(dtype)`: the same bytes read as another dtype, a view. With
    /// the same element size the geometry is unchanged; otherwise the last
    /// dim is rescaled (it must have stride 1; for a wider dtype its size,
    /// the storage offset and the other strides must divide by the ratio),
    /// with PyTorch's errors (`self.size(-1) must be divisible by 2 to view
    /// Float as Long (different element sizes), but got 3`, `self.dim()
    /// cannot be 0 to view ...`).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2, 4], ScalarType::Float)?;
    /// let v = t.view_dtype(ScalarType::Long)?;
    /// assert_eq!((v.sizes(), v.strides()), (&[2i64, 2][..], &[2i64, 1][..]));
    /// let b = t.view_dtype(ScalarType::Byte)?;
    /// assert_eq!(b.sizes(), &[2, 16]);
    /// assert!(b.is_alias_of(&t));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn view_dtype(&self, dtype: ScalarType) -> Result<Tensor> {
        let (old, new) = (self.element_size() as i64, dtype.itemsize() as i64);
        let n = self.dim();
        let what = || {
            format!(
                "to view {} as {} (different element sizes)",
                self.dtype().name(),
                dtype.name()
            )
        };
        let mut sizes = geometry::DimVec::from_slice(self.sizes());
        let mut strides = geometry::DimVec::from_slice(self.strides());
        let mut offset = self.storage_offset();
        if old != new {
            if n == 0 {
                return Err(TensorError::runtime(format!(
                    "self.dim() cannot be 0 {}",
                    what()
                )));
            }
            if old == 0
                || new == 0
                || self.dtype().elements_per_byte() != 1
                || dtype.elements_per_byte() != 1
            {
                return Err(TensorError::runtime(format!(
                    "cannot view {} as {}",
                    self.dtype(),
                    dtype
                )));
            }
            let last = n - 1;
            if old > new {
                let ratio = old / new;
                if strides[last] != 1 {
                    return Err(TensorError::runtime(format!(
                        "self.stride(-1) must be 1 {}, but got {}",
                        what(),
                        strides[last]
                    )));
                }
                let overflow =
                    || TensorError::runtime(format!("view(dtype): sizes overflow {}", what()));
                for st in &mut strides[..last] {
                    *st = st.checked_mul(ratio).ok_or_else(overflow)?;
                }
                sizes[last] = sizes[last].checked_mul(ratio).ok_or_else(overflow)?;
                offset = offset.checked_mul(ratio).ok_or_else(overflow)?;
            } else {
                let ratio = new / old;
                if sizes[last] % ratio != 0 {
                    return Err(TensorError::runtime(format!(
                        "self.size(-1) must be divisible by {ratio} {}, but got {}",
                        what(),
                        sizes[last]
                    )));
                }
                if offset % ratio != 0 {
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
                offset /= ratio;
            }
        }
        geometry::check_in_bounds_for_storage(
            &sizes,
            &strides,
            offset,
            dtype.itemsize(),
            dtype.elements_per_byte(),
            self.storage().nbytes(),
        )?;
        let mut imp = (*self.imp).clone();
        imp.set_autograd_meta(crate::autograd::view_meta(self.imp.autograd_meta()));
        imp.dtype = dtype;
        imp.set_sizes_and_strides(&sizes, &strides, Some(offset))?;
        Ok(Tensor::from_impl(imp))
    }

    /// `set_(source)`: this handle views `source`'s storage with
    /// `source`'s geometry. The dtypes must match (PyTorch: `Could not set
    /// tensor of type float to a tensor of type long int`).
    ///
    /// ```
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
    pub fn set_to(&mut self, source: &Tensor) -> Result<()> {
        self.check_set_dtype(source.dtype())?;
        let (sizes, strides) = (
            geometry::DimVec::from_slice(source.sizes()),
            geometry::DimVec::from_slice(source.strides()),
        );
        self.set_(source.storage(), source.storage_offset(), &sizes, &strides)
    }

    /// `set_(storage)`: this handle views the whole of `storage` as a 1-d
    /// tensor of its own dtype (`nbytes / itemsize` elements, offset 0).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let src = Tensor::arange(0, 6, 1, ScalarType::Int)?;
    /// let mut t = Tensor::zeros(&[0], ScalarType::Long)?;
    /// t.set_storage(src.storage())?; // 24 bytes as int64: 3 elements
    /// assert_eq!(t.sizes(), &[3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn set_storage(&mut self, storage: &Storage) -> Result<()> {
        let n = (storage.nbytes() / self.element_size().max(1)) as i64;
        self.set_(storage, 0, &[n], &[1])
    }

    fn check_set_dtype(&self, source: ScalarType) -> Result<()> {
        if source != self.dtype() {
            return Err(TensorError::runtime(format!(
                "Could not set tensor of type {} to a tensor of type {}",
                crate::scalar::c10_type_name_long(source),
                crate::scalar::c10_type_name_long(self.dtype())
            )));
        }
        Ok(())
    }

    /// Marks this new tensor as the output of a recorded operation on
    /// `inputs` (a copy, a conversion): with grad mode on and any input
    /// requiring grad, it requires grad and is not a leaf.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let w = Tensor::zeros(&[2], TensorOptions::new().requires_grad(true))?;
    /// let mut out = Tensor::zeros(&[2], TensorOptions::new())?;
    /// out.record_output_of(&[&w]);
    /// assert!(out.requires_grad() && !out.is_leaf());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn record_output_of(&mut self, inputs: &[&Tensor]) {
        if GradMode::is_enabled() && inputs.iter().any(|t| t.requires_grad()) {
            self.impl_mut()
                .set_autograd_meta(Some(Box::new(AutogradMeta::computed(ViewOrigin::NotAView))));
        }
    }

    /// `detach()`: a new `TensorImpl` with the same storage, geometry, key
    /// set and version counter, and no autograd metadata.
    pub fn detach(&self) -> Tensor {
        let mut imp = (*self.imp).clone();
        imp.set_autograd_meta(None);
        Tensor::from_impl(imp)
    }

    /// PyTorch's `.data`: like [`Tensor::detach`] but with a fresh version
    /// counter.
    pub fn data(&self) -> Tensor {
        let mut imp = (*self.imp).clone();
        imp.set_autograd_meta(None);
        if imp.version.enabled() {
            imp.version = VersionCounter::fresh(0);
        }
        Tensor::from_impl(imp)
    }
}

/// The values as `Display` prints them (PyTorch's `repr`, summarised for
/// big tensors) plus the layout: sizes, strides, storage offset, dtype and
/// device as PyTorch writes them (`torch.float32`, `cpu`, `cuda:0`),
/// `requires_grad` and the storage's id (equal ids share memory). `{:#?}`
/// puts one field per line.
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// let t = Tensor::arange(0, 6, 1, ScalarType::Long)?.as_strided(&[2, 2], &[1, 3], Some(1))?;
/// let s = format!("{t:?}");
/// assert!(s.starts_with(
///     "Tensor { data: tensor([[1, 4],\n        [2, 5]]), sizes: [2, 2], strides: [1, 3], \
///      storage_offset: 1, dtype: torch.int64, device: cpu, requires_grad: false, storage: 0x"
/// ), "{s}");
/// # Ok::<(), c10_core::TensorError>(())
/// ```
impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("data", &format_args!("{self}"))
            .field("sizes", &self.sizes())
            .field("strides", &self.strides())
            .field("storage_offset", &self.storage_offset())
            .field("dtype", &format_args!("{}", self.dtype()))
            .field("device", &format_args!("{}", self.device()))
            .field("requires_grad", &self.requires_grad())
            .field("storage", &format_args!("{:#x}", self.storage().id()))
            .finish()
    }
}

/// A sufficient condition for `check_in_bounds_for_storage` to pass, for
/// the common case (every size at least 1, non-negative strides and offset,
/// whole-byte elements): the last element's byte end is within the storage.
fn surely_in_bounds(
    sizes: &[i64],
    strides: &[i64],
    offset: i64,
    itemsize: usize,
    elements_per_byte: usize,
    available: usize,
) -> bool {
    if elements_per_byte != 1 || offset < 0 {
        return false;
    }
    let mut last = offset as u128;
    for (&n, &st) in sizes.iter().zip(strides) {
        if n < 1 || st < 0 {
            return false;
        }
        // Each product is below 2^126; a sum that overflows is not "sure".
        match last.checked_add(st as u128 * (n - 1) as u128) {
            Some(l) => last = l,
            None => return false,
        }
    }
    match last
        .checked_add(1)
        .and_then(|end| end.checked_mul(itemsize as u128))
    {
        Some(bytes) => bytes <= available as u128 && bytes <= i64::MAX as u128,
        None => false,
    }
}

/// ATen's `checkAsStridedArgs` (sizes are checked later by the bounds check).
pub(crate) fn check_as_strided_args(sizes: &[i64], strides: &[i64], offset: i64) -> Result<()> {
    // One rule for concrete and symbolic geometry.
    crate::sym::view_rules::check_as_strided_args(sizes, strides, &offset)
}
