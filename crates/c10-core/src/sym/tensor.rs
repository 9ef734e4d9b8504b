//! The symbolic `TensorImpl` path: tensors whose sizes, strides or
//! storage offset are [`SymInt`]s.
//!
//! Such a tensor lives on the meta device (no data), or is a *fake*
//! tensor: meta underneath, remembering the device it stands for
//! ([`Tensor::fake_device`]). Its real geometry is kept out of line, in
//! `ExtraMeta` (c10's `SymbolicShapeMeta`), so plain tensors keep their
//! layout, size and speed. The inline sizes, strides, offset and numel of
//! a symbolic tensor hold the *hints* (like 2.15's materialised sizes for
//! C++-only fake tensors): they size the meta storage and keep every
//! inline invariant true, but they are not the tensor's geometry.
//!
//! What PyTorch does with `sizes()` on such a tensor (throw "Cannot call
//! sizes() on tensor with symbolic sizes/strides") is what the checked
//! accessors ([`Tensor::checked_sizes`], ...) do. The infallible
//! `sizes()`/`strides()`/`numel()`/`storage_offset()` keep their
//! signatures (they are used everywhere) and return the hints; every
//! operation that would build new geometry from them refuses a symbolic
//! tensor instead (the concrete view constructors, `set_sizes_and_strides`,
//! `set_sizes_contiguous`), so no result silently specialises. Symbolic
//! tensors are viewed with `aten_shape::generic`, through
//! [`Tensor::symbolic_view`].

use c10_storage::{Device, DeviceType};

use super::rules::{compute_contiguous_sym, contiguous_strides_into, is_contiguous};
use super::{cannot_call_with_symbolic, SymBool, SymInt};
use crate::error::{Result, TensorError};
use crate::extra_meta::{self, SymbolicShapeMeta};
use crate::impl_arc::ImplArc;
use crate::options::TensorOptions;
use crate::tensor::Tensor;
use crate::tensor_impl::TensorImpl;

fn numel_of(sizes: &[SymInt]) -> Result<SymInt> {
    let mut n = SymInt::from(1);
    for s in sizes {
        n = n.mul(s)?;
    }
    Ok(n)
}

fn hints(v: &[SymInt]) -> Vec<i64> {
    // Unbacked values have no hint; 0 keeps the meta storage empty.
    v.iter().map(|s| s.hint().unwrap_or(0)).collect()
}

fn all_concrete(v: &[SymInt]) -> Option<Vec<i64>> {
    v.iter().map(SymInt::maybe_as_int).collect()
}

impl TensorImpl {
    /// Whether the geometry is symbolic (c10's
    /// `has_symbolic_sizes_strides_`).
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert!(!Tensor::empty(&[2], TensorOptions::new())?.impl_ref().has_symbolic_sizes_strides());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn has_symbolic_sizes_strides(&self) -> bool {
        extra_meta::symbolic(&self.extra).is_some()
    }

    /// Sizes as `SymInt`s (concrete tensors: their sizes).
    ///
    /// ```
    /// use c10_core::{sym::SymInt, Tensor, TensorOptions};
    /// let t = Tensor::empty(&[2, 3], TensorOptions::new())?;
    /// assert_eq!(t.impl_ref().sym_sizes(), vec![SymInt::from(2), SymInt::from(3)]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_sizes(&self) -> Vec<SymInt> {
        match extra_meta::symbolic(&self.extra) {
            Some(m) => m.sizes.clone(),
            None => self.sizes().iter().map(|&v| SymInt::Int(v)).collect(),
        }
    }

    /// Strides as `SymInt`s.
    ///
    /// ```
    /// use c10_core::{sym::SymInt, Tensor, TensorOptions};
    /// let t = Tensor::empty(&[2, 3], TensorOptions::new())?;
    /// assert_eq!(t.impl_ref().sym_strides(), vec![SymInt::from(3), SymInt::from(1)]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_strides(&self) -> Vec<SymInt> {
        match extra_meta::symbolic(&self.extra) {
            Some(m) => m.strides.clone(),
            None => self.strides().iter().map(|&v| SymInt::Int(v)).collect(),
        }
    }

    /// The element count as a `SymInt` (c10's `sym_numel`).
    ///
    /// ```
    /// use c10_core::{sym::SymInt, Tensor, TensorOptions};
    /// let t = Tensor::empty(&[2, 3], TensorOptions::new())?;
    /// assert_eq!(t.impl_ref().sym_numel(), SymInt::from(6));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_numel(&self) -> SymInt {
        match extra_meta::symbolic(&self.extra) {
            Some(m) => m.numel.clone(),
            None => SymInt::Int(self.numel()),
        }
    }

    /// The storage offset as a `SymInt`.
    ///
    /// ```
    /// use c10_core::{sym::SymInt, Tensor, TensorOptions};
    /// let t = Tensor::empty(&[2, 3], TensorOptions::new())?;
    /// assert_eq!(t.impl_ref().sym_storage_offset(), SymInt::from(0));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_storage_offset(&self) -> SymInt {
        match extra_meta::symbolic(&self.extra) {
            Some(m) => m.storage_offset.clone(),
            None => SymInt::Int(self.storage_offset()),
        }
    }

    /// The device a fake tensor stands for (`None` for other tensors).
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert!(Tensor::empty(&[2], TensorOptions::new())?.impl_ref().fake_device().is_none());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn fake_device(&self) -> Option<Device> {
        extra_meta::symbolic(&self.extra).and_then(|m| m.fake_device)
    }

    /// The sizes; an error on a symbolic tensor, with c10's message.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert_eq!(Tensor::empty(&[2], TensorOptions::new())?.impl_ref().checked_sizes()?, &[2]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn checked_sizes(&self) -> Result<&[i64]> {
        match self.has_symbolic_sizes_strides() {
            true => Err(cannot_call_with_symbolic("sizes")),
            false => Ok(self.sizes()),
        }
    }

    /// The strides; an error on a symbolic tensor.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert_eq!(Tensor::empty(&[2], TensorOptions::new())?.impl_ref().checked_strides()?, &[1]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn checked_strides(&self) -> Result<&[i64]> {
        match self.has_symbolic_sizes_strides() {
            true => Err(cannot_call_with_symbolic("strides")),
            false => Ok(self.strides()),
        }
    }

    /// The element count; an error on a symbolic tensor.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert_eq!(Tensor::empty(&[2], TensorOptions::new())?.impl_ref().checked_numel()?, 2);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn checked_numel(&self) -> Result<i64> {
        match self.has_symbolic_sizes_strides() {
            true => Err(cannot_call_with_symbolic("numel")),
            false => Ok(self.numel()),
        }
    }

    /// The storage offset; an error on a symbolic tensor.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert_eq!(Tensor::empty(&[2], TensorOptions::new())?.impl_ref().checked_storage_offset()?, 0);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn checked_storage_offset(&self) -> Result<i64> {
        match self.has_symbolic_sizes_strides() {
            true => Err(cannot_call_with_symbolic("storage_offset")),
            false => Ok(self.storage_offset()),
        }
    }
}

impl Tensor {
    /// Whether the geometry is symbolic.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert!(!Tensor::empty(&[2], TensorOptions::new())?.has_symbolic_sizes_strides());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn has_symbolic_sizes_strides(&self) -> bool {
        self.imp.has_symbolic_sizes_strides()
    }

    /// See [`TensorImpl::sym_sizes`].
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert_eq!(Tensor::empty(&[2], TensorOptions::new())?.sym_sizes().len(), 1);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_sizes(&self) -> Vec<SymInt> {
        self.imp.sym_sizes()
    }

    /// See [`TensorImpl::sym_strides`].
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert_eq!(Tensor::empty(&[2], TensorOptions::new())?.sym_strides().len(), 1);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_strides(&self) -> Vec<SymInt> {
        self.imp.sym_strides()
    }

    /// See [`TensorImpl::sym_numel`].
    ///
    /// ```
    /// use c10_core::{sym::SymInt, Tensor, TensorOptions};
    /// assert_eq!(Tensor::empty(&[2], TensorOptions::new())?.sym_numel(), SymInt::from(2));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_numel(&self) -> SymInt {
        self.imp.sym_numel()
    }

    /// See [`TensorImpl::sym_storage_offset`].
    ///
    /// ```
    /// use c10_core::{sym::SymInt, Tensor, TensorOptions};
    /// assert_eq!(Tensor::empty(&[2], TensorOptions::new())?.sym_storage_offset(), SymInt::from(0));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_storage_offset(&self) -> SymInt {
        self.imp.sym_storage_offset()
    }

    /// Size of dim `dim` as a `SymInt` (c10's `sym_size`).
    ///
    /// ```
    /// use c10_core::{sym::SymInt, Tensor, TensorOptions};
    /// assert_eq!(Tensor::empty(&[2, 5], TensorOptions::new())?.sym_size(-1)?, SymInt::from(5));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_size(&self, dim: i64) -> Result<SymInt> {
        let d = crate::geometry::wrap_dim(dim, self.dim() as i64, false)?;
        Ok(self.sym_sizes().swap_remove(d))
    }

    /// See [`TensorImpl::fake_device`].
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert!(Tensor::empty(&[2], TensorOptions::new())?.fake_device().is_none());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn fake_device(&self) -> Option<Device> {
        self.imp.fake_device()
    }

    /// See [`TensorImpl::checked_sizes`].
    ///
    /// ```
    /// use c10_core::sym::{ShapeEnv, SymInt};
    /// use c10_core::{Tensor, TensorOptions, Device};
    /// let env = ShapeEnv::new();
    /// let n = env.create_symbol(4, "n")?;
    /// let t = Tensor::empty_symint(&[n, SymInt::from(3)], TensorOptions::new().device(Device::META))?;
    /// assert_eq!(t.checked_sizes().unwrap_err().to_string(),
    ///            "Cannot call sizes() on tensor with symbolic sizes/strides");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn checked_sizes(&self) -> Result<&[i64]> {
        self.imp.checked_sizes()
    }

    /// See [`TensorImpl::checked_strides`].
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert!(Tensor::empty(&[2], TensorOptions::new())?.checked_strides().is_ok());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn checked_strides(&self) -> Result<&[i64]> {
        self.imp.checked_strides()
    }

    /// See [`TensorImpl::checked_numel`].
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert!(Tensor::empty(&[2], TensorOptions::new())?.checked_numel().is_ok());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn checked_numel(&self) -> Result<i64> {
        self.imp.checked_numel()
    }

    /// See [`TensorImpl::checked_storage_offset`].
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert!(Tensor::empty(&[2], TensorOptions::new())?.checked_storage_offset().is_ok());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn checked_storage_offset(&self) -> Result<i64> {
        self.imp.checked_storage_offset()
    }

    /// Contiguity as a `SymBool` that never guards more than c10's fast
    /// try does (c10's `sym_is_contiguous`).
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert_eq!(Tensor::empty(&[2], TensorOptions::new())?.sym_is_contiguous()?.maybe_as_bool(), Some(true));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_is_contiguous(&self) -> Result<SymBool> {
        if !self.has_symbolic_sizes_strides() {
            return Ok(SymBool::Bool(self.is_contiguous()));
        }
        compute_contiguous_sym(&self.sym_sizes(), &self.sym_strides())
    }

    /// The contiguity already decided for a symbolic tensor (c10's cached
    /// `is_contiguous_`), without deciding anything: `None` when it was
    /// not asked yet, or the tensor is not symbolic. `empty` sets the flag
    /// as it creates the tensor; a view starts undecided.
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// use c10_core::{Device, Tensor, TensorOptions};
    /// let env = ShapeEnv::new();
    /// let (a, b) = (env.create_symbol(4, "a")?, env.create_symbol(6, "b")?);
    /// let t = Tensor::empty_symint(&[a.clone(), b.clone()], TensorOptions::new().device(Device::META))?;
    /// assert_eq!(t.cached_is_contiguous(), Some(true));
    /// let v = t.symbolic_view(&[b.clone(), a], &[1.into(), b], &0.into())?; // t.T
    /// assert_eq!(v.cached_is_contiguous(), None);
    /// assert!(!v.guard_is_contiguous()?);
    /// assert_eq!(v.cached_is_contiguous(), Some(false));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn cached_is_contiguous(&self) -> Option<bool> {
        extra_meta::symbolic(&self.imp.extra).and_then(|m| m.is_contiguous.get().copied())
    }

    /// `is_contiguous()` as c10's `TensorImpl` answers it on a symbolic
    /// tensor: decided, guarding where needed (concrete tensors: the
    /// cached flag).
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert!(Tensor::empty(&[2], TensorOptions::new())?.guard_is_contiguous()?);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn guard_is_contiguous(&self) -> Result<bool> {
        let Some(meta) = extra_meta::symbolic(&self.imp.extra) else {
            return Ok(self.is_contiguous());
        };
        // Decided once (the guards it needs are recorded then), like c10's
        // cached `is_contiguous_`.
        if let Some(&b) = meta.is_contiguous.get() {
            return Ok(b);
        }
        let b = is_contiguous(&meta.sizes, &meta.strides)?;
        let _ = meta.is_contiguous.set(b);
        Ok(b)
    }

    /// `empty_strided` with `SymInt` sizes and strides. All concrete: a
    /// plain [`Tensor::empty_strided`]. Otherwise a meta tensor with
    /// symbolic geometry; asked for another device, a *fake* tensor (meta,
    /// remembering the device: [`Tensor::fake_device`]).
    ///
    /// ```
    /// use c10_core::sym::{ShapeEnv, SymInt};
    /// use c10_core::{Device, Tensor, TensorOptions};
    /// let env = ShapeEnv::new();
    /// let n = env.create_symbol(4, "n")?;
    /// let t = Tensor::empty_strided_symint(&[n.clone(), 3.into()], &[1.into(), n.clone()], TensorOptions::new())?;
    /// assert!(t.has_symbolic_sizes_strides());
    /// assert_eq!(t.fake_device(), Some(Device::CPU));
    /// assert_eq!(t.sym_strides()[1].to_string(), "s0");
    /// assert_eq!(t.sym_numel().to_string(), "3*s0");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn empty_strided_symint(
        sizes: &[SymInt],
        strides: &[SymInt],
        options: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        Tensor::empty_symint_with(sizes, strides, options.into(), false)
    }

    /// [`Tensor::empty_strided_symint`]; `contiguous`: the storage size is
    /// c10's `computeStorageNbytesContiguous` (`empty`), which tests no
    /// size for 0, else `computeStorageNbytes` (`empty_strided`).
    fn empty_symint_with(
        sizes: &[SymInt],
        strides: &[SymInt],
        options: TensorOptions,
        contiguous: bool,
    ) -> Result<Tensor> {
        if sizes.len() != strides.len() {
            return Err(TensorError::runtime(format!(
                "mismatch in length of strides and shape: {} vs {}",
                strides.len(),
                sizes.len()
            )));
        }
        if let (Some(s), Some(st)) = (all_concrete(sizes), all_concrete(strides)) {
            return Tensor::empty_strided(&s, &st, options);
        }
        for s in sizes {
            if !s.sym_ge(&SymInt::from(0))?.expect_true()? {
                return Err(TensorError::runtime(format!(
                    "Trying to create tensor with negative dimension {s}: {}",
                    super::fmt_list(sizes)
                )));
            }
        }
        let fake_device = match options.device.device_type() {
            DeviceType::Meta => None,
            _ => Some(options.device),
        };
        let mut t =
            Tensor::empty_strided(hints(sizes), hints(strides), options.device(Device::META))?;
        let numel = numel_of(sizes)?;
        let itemsize = options.dtype_or_default().itemsize();
        let storage_nbytes = if contiguous {
            numel.mul(&SymInt::from(itemsize as i64))?
        } else {
            storage_nbytes_sym(sizes, strides, &SymInt::from(0), itemsize)?
        };
        let meta = SymbolicShapeMeta {
            sizes: sizes.to_vec(),
            strides: strides.to_vec(),
            storage_offset: SymInt::from(0),
            numel,
            fake_device,
            // `empty` sets c10's flag without asking (no guard).
            is_contiguous: if contiguous {
                std::sync::OnceLock::from(true)
            } else {
                std::sync::OnceLock::new()
            },
            storage_nbytes: Some(storage_nbytes),
        };
        let imp = ImplArc::make_mut(&mut t.imp);
        let autograd = imp.extra.take().and_then(|e| e.autograd);
        imp.extra = extra_meta::with_parts(autograd, Some(Box::new(meta)));
        Ok(t)
    }

    /// `empty` with `SymInt` sizes: contiguous strides (see
    /// [`Tensor::empty_strided_symint`]).
    ///
    /// ```
    /// use c10_core::sym::{ShapeEnv, SymInt};
    /// use c10_core::{Device, Tensor, TensorOptions};
    /// let env = ShapeEnv::new();
    /// let (a, b) = (env.create_symbol(4, "a")?, env.create_symbol(6, "b")?);
    /// let t = Tensor::empty_symint(&[a, b], TensorOptions::new().device(Device::META))?;
    /// assert_eq!(t.sym_strides()[0].to_string(), "s1");
    /// assert_eq!(t.sizes(), &[4, 6]); // the inline fields hold the hints
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn empty_symint(sizes: &[SymInt], options: impl Into<TensorOptions>) -> Result<Tensor> {
        let mut strides = sizes.to_vec();
        contiguous_strides_into(sizes, &mut strides)?;
        Tensor::empty_symint_with(sizes, &strides, options.into(), true)
    }

    /// `empty_like` for any tensor: same sizes, on the same (or fake)
    /// device; contiguous strides when the input is contiguous or symbolic
    /// (a symbolic input's permutation is not recovered; see
    /// `docs/pytorch-map.md`), the input's own strides' dense order
    /// otherwise (as [`Tensor::empty_strided`] with concrete sizes does).
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// use c10_core::{Device, Tensor, TensorOptions};
    /// let env = ShapeEnv::new();
    /// let a = env.create_symbol(4, "a")?;
    /// let t = Tensor::empty_symint(&[a, 3.into()], TensorOptions::new().device(Device::META))?;
    /// let u = t.empty_like_symint()?;
    /// assert_eq!(u.sym_sizes(), t.sym_sizes());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn empty_like_symint(&self) -> Result<Tensor> {
        let device = self.fake_device().unwrap_or(self.device());
        let options = TensorOptions::new().dtype(self.dtype()).device(device);
        if !self.has_symbolic_sizes_strides() {
            let strides = crate::geometry::infer_dense_strides(self.sizes(), self.strides())?;
            return Tensor::empty_strided(self.sizes(), &strides, options);
        }
        Tensor::empty_symint(&self.sym_sizes(), options)
    }

    /// A view of `self` with the given (symbolic) geometry: same storage,
    /// dtype, device, version counter and fake device; the symbolic path
    /// of every view op (`aten_shape::generic`) ends here. All-concrete
    /// geometry on a concrete tensor gives a plain, storage-checked
    /// [`Tensor::as_strided`] view.
    ///
    /// ```
    /// use c10_core::sym::{ShapeEnv, SymInt};
    /// use c10_core::{Device, Tensor, TensorOptions};
    /// let env = ShapeEnv::new();
    /// let (a, b) = (env.create_symbol(4, "a")?, env.create_symbol(6, "b")?);
    /// let t = Tensor::empty_symint(&[a.clone(), b.clone()], TensorOptions::new().device(Device::META))?;
    /// let v = t.symbolic_view(&[b.clone(), a.clone()], &[1.into(), b.clone()], &0.into())?; // t.T
    /// assert_eq!(v.sym_strides()[1].to_string(), "s1");
    /// assert!(v.shares_version_counter_with(&t));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn symbolic_view(
        &self,
        sizes: &[SymInt],
        strides: &[SymInt],
        storage_offset: &SymInt,
    ) -> Result<Tensor> {
        if sizes.len() != strides.len() {
            return Err(TensorError::runtime(format!(
                "mismatch in length of strides and shape: {} vs {}",
                strides.len(),
                sizes.len()
            )));
        }
        let concrete = (
            all_concrete(sizes),
            all_concrete(strides),
            storage_offset.maybe_as_int(),
        );
        if let (Some(s), Some(st), Some(o)) = &concrete {
            if !self.has_symbolic_sizes_strides() {
                return self.as_strided_ints(s, st, Some(*o));
            }
        }
        let base = self.impl_ref();
        let mut imp = TensorImpl::new(base.storage.clone(), base.dtype);
        imp.set_sizes_and_strides(&hints(sizes), &hints(strides), None)?;
        imp.storage_offset = storage_offset.hint().unwrap_or(0);
        imp.version = base.version.clone();
        imp.key_set = base.key_set;
        let autograd = crate::autograd::view_meta(base.autograd_meta());
        let fake_device = base.fake_device();
        let symbolic = match concrete {
            // A view of a symbolic tensor whose geometry became all
            // constants is a plain meta tensor again.
            (Some(_), Some(_), Some(_)) if fake_device.is_none() => None,
            _ => Some(Box::new(SymbolicShapeMeta {
                sizes: sizes.to_vec(),
                strides: strides.to_vec(),
                storage_offset: storage_offset.clone(),
                numel: numel_of(sizes)?,
                fake_device,
                is_contiguous: std::sync::OnceLock::new(),
                storage_nbytes: extra_meta::symbolic(&base.extra)
                    .and_then(|m| m.storage_nbytes.clone()),
            })),
        };
        imp.extra = extra_meta::with_parts(autograd, symbolic);
        imp.view_base = crate::tensor_impl::ViewBase::for_view_of(self);
        Ok(Tensor::from_impl(imp))
    }
}

impl crate::tensor::MetadataEdit<'_> {
    /// New `SymInt` sizes, strides and storage offset, in place (c10's
    /// `set_sizes_and_strides` on a symbolic tensor: what `as_strided_`,
    /// `resize_` and `set_` do on a fake tensor). The tensor becomes (or
    /// stays) symbolic: its inline fields hold the hints, its fake device
    /// is kept; all-concrete geometry on a tensor that is not symbolic is
    /// the concrete [`set_sizes_and_strides`](Self::set_sizes_and_strides),
    /// and a plain meta tensor whose geometry becomes all constants is
    /// plain again (as [`Tensor::symbolic_view`] does for views).
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// use c10_core::{Device, Tensor, TensorOptions};
    /// let env = ShapeEnv::new();
    /// let n = env.create_symbol(4, "n")?;
    /// let mut t = Tensor::empty(&[8], TensorOptions::new().device(Device::META))?;
    /// t.edit_metadata().set_sym_sizes_and_strides(&[n.clone(), 2.into()], &[2.into(), 1.into()], &0.into())?;
    /// assert_eq!(t.sym_sizes()[0], n);
    /// assert_eq!(t.sizes(), &[4, 2]); // the hints
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn set_sym_sizes_and_strides(
        &mut self,
        sizes: &[SymInt],
        strides: &[SymInt],
        storage_offset: &SymInt,
    ) -> Result<()> {
        if sizes.len() != strides.len() {
            return Err(TensorError::runtime(format!(
                "dimensionality of sizes ({}) must match dimensionality of strides ({})",
                sizes.len(),
                strides.len()
            )));
        }
        let concrete = (
            all_concrete(sizes),
            all_concrete(strides),
            storage_offset.maybe_as_int(),
        );
        let was_symbolic = self.imp.has_symbolic_sizes_strides();
        if let (Some(s), Some(st), Some(o)) = &concrete {
            if !was_symbolic {
                return self.imp.set_sizes_and_strides(s, st, Some(*o));
            }
        }
        let fake_device = self.imp.fake_device();
        let numel = numel_of(sizes)?;
        // The inline fields take the hints; the symbolic block is taken
        // off first (the concrete setter refuses a symbolic tensor) and
        // put back unchanged should the hints be refused.
        let old = self.imp.extra.take();
        let (autograd, old_symbolic) = match old {
            Some(e) => {
                let e = *e;
                (e.autograd, e.symbolic)
            }
            None => (None, None),
        };
        self.imp.extra = extra_meta::with_parts(autograd, None);
        let set = self.imp.set_sizes_and_strides(
            &hints(sizes),
            &hints(strides),
            Some(storage_offset.hint().unwrap_or(0)),
        );
        let symbolic = match (&set, concrete) {
            (Err(_), _) => old_symbolic,
            (Ok(()), (Some(_), Some(_), Some(_))) if fake_device.is_none() => None,
            (Ok(()), _) => Some(Box::new(SymbolicShapeMeta {
                sizes: sizes.to_vec(),
                strides: strides.to_vec(),
                storage_offset: storage_offset.clone(),
                numel,
                fake_device,
                is_contiguous: std::sync::OnceLock::new(),
                storage_nbytes: old_symbolic.and_then(|m| m.storage_nbytes),
            })),
        };
        let autograd = self.imp.extra.take().and_then(|e| e.autograd);
        self.imp.extra = extra_meta::with_parts(autograd, symbolic);
        set
    }

    /// Records a new symbolic byte size for a symbolic tensor's storage
    /// (what growing a fake tensor's storage changes: `resize_`, `set_`);
    /// nothing for a tensor that is not symbolic (its storage has a real
    /// size).
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// use c10_core::{Device, Tensor, TensorOptions};
    /// let env = ShapeEnv::new();
    /// let n = env.create_symbol(4, "n")?;
    /// let mut t = Tensor::empty([n.clone()], TensorOptions::new().device(Device::META))?;
    /// assert_eq!(t.sym_storage_nbytes().to_string(), "4*s0");
    /// t.edit_metadata().set_sym_storage_nbytes(n.mul(&8.into())?);
    /// assert_eq!(t.sym_storage_nbytes().to_string(), "8*s0");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn set_sym_storage_nbytes(&mut self, nbytes: SymInt) {
        if let Some(m) = self
            .imp
            .extra
            .as_deref_mut()
            .and_then(|e| e.symbolic.as_deref_mut())
        {
            m.storage_nbytes = Some(nbytes);
        }
    }
}

/// c10's `computeStorageNbytes` over `SymInt`s: `itemsize * (offset + 1 +
/// sum((size - 1) * stride))`, 0 when a size is 0: a `guard_or_false(size
/// == 0)` per size, a guard on backed symbols (`Eq(s1 - 2, 0)` where the
/// hint is 0), false on unbacked ones (also `u0 - 2`, which size-oblivious
/// reasoning cannot settle: PyTorch 2.15's fake path gives false there).
///
/// ```
/// use c10_core::sym::{storage_nbytes, SymInt};
/// let n = storage_nbytes(&[2.into(), 3.into()], &[3.into(), 1.into()], &1.into(), 4)?;
/// assert_eq!(n, SymInt::from(28));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn storage_nbytes_sym(
    sizes: &[SymInt],
    strides: &[SymInt],
    offset: &SymInt,
    itemsize: usize,
) -> Result<SymInt> {
    let zero = SymInt::from(0);
    for s in sizes {
        // `guard_or_false`: a guard on backed sizes (as a size-oblivious
        // test records); on an unbacked size, even one the size-oblivious
        // ranges cannot settle (`u0 - 2`), false with no error, as
        // PyTorch 2.15's fake `as_strided_` of such a size records nothing.
        if s.sym_eq(&zero)?.guard_or_false()? {
            return Ok(zero);
        }
    }
    let one = SymInt::from(1);
    let mut n = one.clone();
    for (s, st) in sizes.iter().zip(strides) {
        n = n.add(&s.sub(&one)?.mul(st)?)?;
    }
    n.add(offset)?.mul(&SymInt::from(itemsize as i64))
}

impl Tensor {
    /// The byte size of the storage as a `SymInt` (c10's
    /// `storage().sym_nbytes()`): symbolic for a tensor made with symbolic
    /// sizes (and its views), else the storage's size.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// assert_eq!(Tensor::zeros(&[3], ScalarType::Float)?.sym_storage_nbytes(), 12.into());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_storage_nbytes(&self) -> SymInt {
        extra_meta::symbolic(&self.impl_ref().extra)
            .and_then(|m| m.storage_nbytes.clone())
            .unwrap_or_else(|| SymInt::from(self.storage().nbytes() as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::super::ShapeEnv;
    use super::*;

    #[test]
    fn symbolic_tensors_refuse_concrete_geometry_ops() {
        let env = ShapeEnv::new();
        let a = env.create_symbol(4, "a").unwrap();
        let mut t = Tensor::empty_symint(
            &[a.clone(), SymInt::from(3)],
            TensorOptions::new().device(Device::META),
        )
        .unwrap();
        assert!(t.has_symbolic_sizes_strides());
        assert_eq!(
            t.checked_strides().unwrap_err().to_string(),
            "Cannot call strides() on tensor with symbolic sizes/strides"
        );
        assert!(t.checked_numel().is_err() && t.checked_storage_offset().is_err());
        // Concrete view constructors refuse it rather than use the hints.
        let e = t.as_strided_ints(&[2], &[1], None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Cannot call sizes() on tensor with symbolic sizes/strides"
        );
        assert!(t
            .edit_metadata()
            .set_sizes_and_strides(&[3, 4], &[1, 3], None)
            .is_err());
        assert_eq!(t.sym_numel().to_string(), "3*s0");
        assert_eq!(t.sym_size(0).unwrap(), a);
        assert!(t.guard_is_contiguous().unwrap());
        assert!(env.guards().is_empty());
        // A clone of the handle shares the symbolic geometry.
        let u = t.clone();
        assert!(u.has_symbolic_sizes_strides());
        let like = u.empty_like_symint().unwrap();
        assert_eq!(like.sym_sizes(), u.sym_sizes());
    }

    #[test]
    fn concrete_symints_make_plain_tensors() {
        let t = Tensor::empty_strided_symint(
            &[SymInt::from(2), SymInt::from(3)],
            &[SymInt::from(1), SymInt::from(2)],
            TensorOptions::new(),
        )
        .unwrap();
        assert!(!t.has_symbolic_sizes_strides());
        assert_eq!(t.strides(), &[1, 2]);
    }

    #[test]
    fn plain_tensors_stay_small() {
        // The symbolic path lives behind the one ExtraMeta pointer.
        assert!(std::mem::size_of::<TensorImpl>() <= 176);
    }
}
