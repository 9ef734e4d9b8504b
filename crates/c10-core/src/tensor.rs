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
/// several handles never changes. In-place *metadata* operations (`t_`,
/// `unsqueeze_`, `as_strided_`, `resize_`, `set_`, ..., in `aten-shape`)
/// take `&mut Tensor` and copy the `TensorImpl` first if another handle
/// shares it (through [`Tensor::edit_metadata`]), so other handles keep
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
/// destination of a copy) or to reallocate (a growing `resize_` or
/// `set_`). All views of a storage share its lock. While
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
    /// Sizes and strides are any [`IntoShape`](crate::shape_arg::IntoShape)
    /// (`&[i64]`, `(2, 3)`, `SymInt`s, ...), the offset any
    /// [`IntoSliceBound`](crate::shape_arg::IntoSliceBound) (`None`,
    /// `Some(1)`, `1`, a `SymInt`). On a symbolic (fake) tensor, or with
    /// symbolic arguments, the view is symbolic: ATen's `checkAsStridedArgs`
    /// on the `SymInt`s, no storage check (a fake tensor has no data), as
    /// PyTorch's `as_strided` on a fake tensor. The same method serves both
    /// worlds, like every `aten_shape::views::ViewOps` method.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let x = Tensor::arange(0, 10, 1, ScalarType::Long)?;
    /// let v = x.as_strided(&[2, 3], &[3, 1], Some(1))?;
    /// assert_eq!(v.to_vec::<i64>()?, vec![1, 2, 3, 4, 5, 6]);
    /// assert!(x.as_strided(&[4, 4], &[3, 1], None).is_err()); // needs 13 elements
    /// // Symbolic arguments on a fake (meta) tensor.
    /// use c10_core::sym::ShapeEnv;
    /// use c10_core::{Device, TensorOptions};
    /// let env = ShapeEnv::new();
    /// let n = env.create_symbol(6, "x.size(0)")?;
    /// let f = Tensor::empty_symint(&[n.clone()], TensorOptions::new().device(Device::META))?;
    /// use c10_core::sym::SymInt;
    /// let (len, off) = (n.sub(&SymInt::from(1))?, n.sub(&SymInt::from(5))?);
    /// let w = f.as_strided([len], [1], off)?;
    /// assert_eq!((w.sym_sizes()[0].to_string(), w.sym_storage_offset().to_string()),
    ///            ("s0 - 1".into(), "s0 - 5".into()));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn as_strided(
        &self,
        sizes: impl crate::shape_arg::IntoShape,
        strides: impl crate::shape_arg::IntoShape,
        storage_offset: impl crate::shape_arg::IntoSliceBound,
    ) -> Result<Tensor> {
        use crate::shape_arg::Shape;
        use crate::sym::SymInt;
        if let (Some(s), Some(st), Some(o)) = (
            sizes.int_slice(),
            strides.int_slice(),
            storage_offset.int_bound(),
        ) {
            // Slices and an `Option<i64>` (the concrete-only signature this
            // method had): no conversion, one out-of-line call.
            return self
                .as_strided_ints(s, st, o)
                .or_else(|e| self.as_strided_retry_symbolic(e, s, st, o));
        }
        let (sizes, strides) = (sizes.into_shape()?, strides.into_shape()?);
        let offset = storage_offset.into_slice_bound()?;
        if let (Shape::Ints(s), Shape::Ints(st)) = (&sizes, &strides) {
            // Concrete sizes and strides: one out-of-line call, as to the
            // concrete-only method this replaces.
            let o = match offset {
                None => None,
                Some(SymInt::Int(o)) => Some(o),
                Some(sym) => {
                    return self.as_strided_symint(
                        &sizes.to_sym_ints(),
                        &strides.to_sym_ints(),
                        Some(&sym),
                    );
                }
            };
            return self.as_strided_concrete(s.as_ref(), st.as_ref(), o);
        }
        self.as_strided_symint(
            &sizes.to_sym_ints(),
            &strides.to_sym_ints(),
            offset.as_ref(),
        )
    }

    /// [`Tensor::as_strided`] with concrete arguments: the concrete face
    /// first; a symbolic tensor makes it fail before anything is built,
    /// and only then is the symbolic face run (no test on the concrete
    /// path; the retry takes plain integers only). Not inlined: the
    /// caller makes one call, as it did to the concrete-only method.
    /// Hidden: the op crate's hook for geometry it computed (the view
    /// ops' checked path), not a user API (use [`Tensor::as_strided`]).
    #[doc(hidden)]
    #[inline(never)]
    pub fn as_strided_concrete(
        &self,
        sizes: &[i64],
        strides: &[i64],
        storage_offset: Option<i64>,
    ) -> Result<Tensor> {
        match self.as_strided_ints(sizes, strides, storage_offset) {
            Ok(t) => Ok(t),
            Err(e) => self.as_strided_retry_symbolic(e, sizes, strides, storage_offset),
        }
    }

    /// The retry of [`Tensor::as_strided_concrete`]: the symbolic face on a
    /// symbolic tensor, else the concrete error.
    #[cold]
    #[inline(never)]
    fn as_strided_retry_symbolic(
        &self,
        e: TensorError,
        sizes: &[i64],
        strides: &[i64],
        storage_offset: Option<i64>,
    ) -> Result<Tensor> {
        if !self.has_symbolic_sizes_strides() {
            return Err(e);
        }
        let sym = |v: &[i64]| {
            v.iter()
                .map(|&x| crate::sym::SymInt::Int(x))
                .collect::<Vec<_>>()
        };
        let offset = storage_offset.map(crate::sym::SymInt::Int);
        self.as_strided_symint(&sym(sizes), &sym(strides), offset.as_ref())
    }

    /// The symbolic face of [`Tensor::as_strided`]: ATen's
    /// `checkAsStridedArgs` over `SymInt`s, then a symbolic view.
    #[cold]
    #[inline(never)]
    fn as_strided_symint(
        &self,
        sizes: &[crate::sym::SymInt],
        strides: &[crate::sym::SymInt],
        offset: Option<&crate::sym::SymInt>,
    ) -> Result<Tensor> {
        let offset = offset.cloned().unwrap_or_else(|| self.sym_storage_offset());
        crate::sym::rules::check_as_strided_args(sizes, strides, &offset)?;
        self.symbolic_view(sizes, strides, &offset)
    }

    /// [`Tensor::as_strided`] with concrete arguments on a concrete
    /// tensor (the storage-checked constructor; a symbolic tensor is
    /// refused).
    #[inline(never)]
    pub(crate) fn as_strided_ints(
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
    /// undefined behaviour. Hidden from the documentation: the hook of the
    /// op crate, not a user API (use the view ops or `as_strided`).
    #[doc(hidden)]
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
            self,
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

    /// The op crate's hook for in-place metadata ops (`t_`, `resize_`,
    /// `set_`, ... in `aten-shape`): this handle's `TensorImpl` for
    /// modification, copied first when another handle shares it (see
    /// "Who owns a `TensorImpl`" in `docs/ARCHITECTURE.md`: a shared
    /// `TensorImpl` never changes). Every edit goes through
    /// [`MetadataEdit`]'s methods, which recompute numel and the layout
    /// flags themselves, so no flag or size that `unsafe` code trusts is
    /// taken from the caller. It neither checks autograd's in-place rules
    /// nor bumps the version: the op does both ([`Tensor::check_inplace`],
    /// [`Tensor::bump_version`]).
    ///
    /// Not an API for users: call the ops (`aten_shape::views::ViewOps`).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let mut t = Tensor::zeros(&[2, 3], ScalarType::Float)?;
    /// let other = t.clone(); // shares the TensorImpl
    /// t.edit_metadata().set_sizes_and_strides(&[3, 2], &[1, 3], None)?;
    /// assert_eq!((t.sizes(), other.sizes()), (&[3i64, 2][..], &[2i64, 3][..]));
    /// assert!(t.is_alias_of(&other));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[doc(hidden)]
    pub fn edit_metadata(&mut self) -> MetadataEdit<'_> {
        MetadataEdit {
            imp: self.impl_mut(),
        }
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
    /// set and version counter, and no autograd metadata. Not a view in
    /// PyTorch's sense: its [`view_base`](Tensor::view_base) is `None`,
    /// even when `self` is a view.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let x = Tensor::arange(0, 6, 1, ScalarType::Float)?;
    /// let v = x.as_strided(&[2, 3], &[3, 1], None)?;
    /// let d = v.detach();
    /// assert!(d.is_alias_of(&x) && !d.is_view());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn detach(&self) -> Tensor {
        Tensor::from_impl(self.imp.clone_untracked())
    }

    /// The tensor this one is a view of (PyTorch's `_base`): `Some` for
    /// the result of a view op (`view`, slicing, `transpose`, `expand`,
    /// `as_strided`, ...), and then always the root, never a view itself
    /// (the base of a view of a view is the first tensor); `None` for
    /// every other tensor, for `detach()`, `view(dtype)`, and for views of
    /// inference tensors, which PyTorch does not track. The base is kept
    /// alive by the view. An in-place metadata op on the base
    /// (`t_()`, `resize_()`, ...) copies the base's shared `TensorImpl`
    /// first (see `docs/pytorch-map.md`), so the handle returned here keeps
    /// the base's geometry from when the view was made.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let x = Tensor::arange(0, 6, 1, ScalarType::Float)?;
    /// assert!(x.view_base().is_none() && !x.is_view());
    /// let v = x.as_strided(&[2, 3], &[3, 1], None)?;
    /// let vv = v.as_strided(&[3], &[1], Some(3))?; // a view of a view
    /// assert!(v.view_base().is_some_and(|b| b.is_same(&x)));
    /// assert!(vv.view_base().is_some_and(|b| b.is_same(&x)));
    /// assert!(vv.is_view());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn view_base(&self) -> Option<&Tensor> {
        self.imp.view_base.0.as_ref()
    }

    /// Whether this tensor is a view of another (PyTorch's `_is_view()`):
    /// [`view_base`](Tensor::view_base) is `Some`.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let x = Tensor::zeros(&[4], ScalarType::Float)?;
    /// assert!(!x.is_view());
    /// assert!(x.as_strided(&[2], &[2], None)?.is_view());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn is_view(&self) -> bool {
        self.imp.view_base.0.is_some()
    }

    /// PyTorch's `.data`: like [`Tensor::detach`] but with a fresh version
    /// counter.
    pub fn data(&self) -> Tensor {
        let mut imp = self.imp.clone_untracked();
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
    crate::sym::rules::check_as_strided_args(sizes, strides, &offset)
}

/// A `TensorImpl` being edited in place by an op of the op crate (see
/// [`Tensor::edit_metadata`]). Each method keeps the `TensorImpl`'s
/// invariants: numel and the layout flags are recomputed from the new
/// geometry, never accepted from the caller.
#[doc(hidden)]
pub struct MetadataEdit<'a> {
    pub(crate) imp: &'a mut TensorImpl,
}

impl MetadataEdit<'_> {
    /// New sizes, strides and (when given) storage offset: c10's
    /// `set_sizes_and_strides` (see [`TensorImpl::set_sizes_and_strides`]).
    pub fn set_sizes_and_strides(
        &mut self,
        sizes: &[i64],
        strides: &[i64],
        storage_offset: Option<i64>,
    ) -> Result<()> {
        self.imp
            .set_sizes_and_strides(sizes, strides, storage_offset)
    }

    /// A new storage (`set_`). The tensor keeps its version counter, as
    /// c10's `set_` keeps the `VariableVersion`: a counter that lived in
    /// the old storage stays with that storage, so the views that share it
    /// still do (a counter nobody else shares is moved into one of the
    /// tensor's own, so the old storage is not kept alive for it). Element
    /// access checks the geometry against the new storage.
    pub fn set_storage(&mut self, storage: &Storage) {
        if self.imp.storage.is_alias_of(storage) {
            return;
        }
        if matches!(self.imp.version, VersionCounter::Storage) {
            let old = &self.imp.storage;
            // Handles other than this tensor's and the storage's binding
            // object's (which shares no counter): if there are none, nobody
            // else shares the counter, so it moves into a counter of the
            // tensor's own and the old storage (its bytes and binding
            // object) is freed now, as c10 frees it.
            let bound = usize::from(old.binding_object().is_some());
            self.imp.version = if old.use_count() <= 1 + bound {
                let v = old
                    .version_counter()
                    .load(std::sync::atomic::Ordering::Acquire);
                VersionCounter::fresh(v)
            } else {
                VersionCounter::OfStorage(old.clone())
            };
        }
        self.imp.storage = storage.clone();
    }

    /// Stops tracking this tensor as a view ([`Tensor::view_base`] becomes
    /// `None`), for ops whose result aliases a tensor without being a view
    /// in PyTorch's sense: `reshape` of a tensor it must copy returns
    /// ATen's `_unsafe_view` of the copy, which has `_base is None`.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let x = Tensor::zeros(&[4], ScalarType::Float)?;
    /// let mut v = x.as_strided(&[2, 2], &[2, 1], None)?;
    /// v.edit_metadata().untrack_view();
    /// assert!(!v.is_view() && v.is_alias_of(&x));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn untrack_view(&mut self) {
        self.imp.view_base = crate::tensor_impl::ViewBase(None);
    }

    /// A new dtype (`view(dtype)`, `view_as_real`, `view_as_complex` on
    /// their fresh view). Element access checks the geometry against the
    /// storage with the new element size.
    pub fn set_dtype(&mut self, dtype: ScalarType) {
        self.imp.dtype = dtype;
    }
}
