//! `TensorImpl`: a tensor's metadata over a storage.

use c10_storage::{Device, DeviceType, Storage};

use crate::autograd::AutogradMetaInterface;
use crate::binding::BindingSlot;
use crate::dispatch_key::{backend_component_for_device_type, DispatchKeySet};
use crate::error::{Result, TensorError};
use crate::extra_meta::ExtraMeta;
use crate::geometry;
use crate::impl_arc::ImplArc;
use crate::options::MemoryFormat;
use crate::scalar_type::ScalarType;
use crate::sizes_and_strides::SizesAndStrides;
use crate::tensor::Tensor;
use crate::version::{InferenceMode, VersionCounter};

/// The device, key set and version counter of a new tensor over `storage`:
/// the key set of its device (inference mode respected); the storage's own
/// counter when nobody else holds the storage, else a fresh one (a tensor
/// built over someone else's storage does not share their counter, as in
/// c10); none in inference mode.
#[inline]
fn fresh_identity(storage: &Storage) -> (Device, DispatchKeySet, VersionCounter) {
    let device = storage.device();
    let key_set = key_set_for_device(device);
    let version = if key_set.is_inference() {
        VersionCounter::Disabled
    } else if storage.is_unique() {
        VersionCounter::Storage
    } else {
        VersionCounter::fresh(0)
    };
    (device, key_set, version)
}

/// Writes `sizes` and their row-major strides (c10's contiguous strides:
/// size-0 and size-1 dims count as 1) into `s` and `st`, and returns numel,
/// in one pass. Errors as `set_sizes_contiguous`: a stride overflow
/// (`Stride calculation overflowed`) is reported before a numel overflow.
fn fill_row_major(sizes: &[i64], s: &mut [i64], st: &mut [i64]) -> Result<i64> {
    let (mut stride_overflow, mut unusual) = (false, false);
    let (mut running, mut numel): (i64, i64) = (1, 1);
    for d in (0..sizes.len()).rev() {
        s[d] = sizes[d];
        st[d] = running;
        match running.checked_mul(sizes[d].max(1)) {
            Some(r) => running = r,
            None => stride_overflow = true,
        }
        match numel.checked_mul(sizes[d]) {
            Some(n) if sizes[d] >= 0 => numel = n,
            _ => unusual = true,
        }
    }
    if stride_overflow {
        Err(TensorError::runtime("Stride calculation overflowed"))
    } else if unusual {
        // Overflow or a negative size: exactly what
        // `geometry::compute_numel` says about these sizes.
        geometry::compute_numel(sizes)
    } else {
        Ok(numel)
    }
}

/// Cached layout flags (c10's bitfields), computed by c10's exact
/// algorithms on every size or stride change.
///
/// ```
/// use c10_core::{Tensor, TensorOptions};
/// let t = Tensor::zeros(&[2, 3], TensorOptions::new())?;
/// let flags = t.impl_ref().flags();
/// assert!(flags.is_contiguous() && flags.is_non_overlapping_and_dense());
/// assert!(!flags.is_channels_last());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayoutFlags(u8);

impl LayoutFlags {
    const CONTIGUOUS: u8 = 1;
    const CHANNELS_LAST: u8 = 1 << 1;
    const CHANNELS_LAST_CONTIGUOUS: u8 = 1 << 2;
    const CHANNELS_LAST_3D: u8 = 1 << 3;
    const CHANNELS_LAST_3D_CONTIGUOUS: u8 = 1 << 4;
    const NON_OVERLAPPING_AND_DENSE: u8 = 1 << 5;

    fn get(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    fn set(&mut self, bit: u8, v: bool) {
        if v {
            self.0 |= bit;
        } else {
            self.0 &= !bit;
        }
    }

    /// c10's `_refresh_contiguous` for the given layout; the evaluation
    /// order matters because later flags read earlier ones. Errors if
    /// `sizes` and `strides` differ in length.
    ///
    /// ```
    /// use c10_core::LayoutFlags;
    /// let f = LayoutFlags::compute(&[2, 3], &[1, 2], 6)?;
    /// assert!(!f.is_contiguous() && f.is_non_overlapping_and_dense());
    /// assert!(LayoutFlags::compute(&[2, 3], &[1], 6).is_err());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn compute(sizes: &[i64], strides: &[i64], numel: i64) -> Result<LayoutFlags> {
        geometry::check_same_rank(sizes, strides)?;
        Ok(LayoutFlags::compute_with(sizes, strides, numel, None))
    }

    /// [`compute`](Self::compute) for strides that are the row-major
    /// strides of `sizes` (a fresh contiguous tensor): contiguous and
    /// non-overlapping-and-dense by construction, so only 4-d and 5-d
    /// tensors have channels-last checks left to make.
    #[inline]
    fn row_major(sizes: &[i64], strides: &[i64], numel: i64) -> LayoutFlags {
        let f = match sizes.len() {
            4 | 5 => LayoutFlags::compute_with(sizes, strides, numel, Some(true)),
            _ => LayoutFlags(Self::CONTIGUOUS | Self::NON_OVERLAPPING_AND_DENSE),
        };
        debug_assert_eq!(f, LayoutFlags::compute_with(sizes, strides, numel, None));
        f
    }

    /// [`compute`](Self::compute), given the answer of c10's
    /// `compute_non_overlapping_and_dense` when the caller already knows it
    /// (it does not change when dims are permuted or size-1 dims inserted).
    /// `sizes` and `strides` must have the same length (every caller passes
    /// a `SizesAndStrides`' two halves or checked slices).
    #[inline(never)]
    fn compute_with(
        sizes: &[i64],
        strides: &[i64],
        numel: i64,
        non_overlapping_and_dense: Option<bool>,
    ) -> LayoutFlags {
        LayoutFlags::compute_with_inlined(sizes, strides, numel, non_overlapping_and_dense)
    }

    /// [`compute_with`](Self::compute_with) forced inline, for the shared
    /// view build: left to the inliner, it went out of line there when
    /// unrelated code changed (a call and spills: +27 instructions per
    /// `unfold`, +17 per `transpose`); forced inline everywhere, it cost
    /// the row-major `view` path 10 through code layout.
    #[inline(always)]
    fn compute_with_inlined(
        sizes: &[i64],
        strides: &[i64],
        numel: i64,
        non_overlapping_and_dense: Option<bool>,
    ) -> LayoutFlags {
        let nod = |sizes: &[i64], strides: &[i64]| {
            non_overlapping_and_dense
                .unwrap_or_else(|| geometry::is_non_overlapping_and_dense_same_rank(sizes, strides))
        };
        let mut f = LayoutFlags(0);
        let contiguous = geometry::is_contiguous_same_rank(sizes, strides, numel);
        f.set(Self::CONTIGUOUS, contiguous);
        match sizes.len() {
            4 => {
                let cl = geometry::is_channels_last_contiguous_2d_same_rank(sizes, strides);
                f.set(Self::CHANNELS_LAST_CONTIGUOUS, cl);
                f.set(
                    Self::CHANNELS_LAST,
                    geometry::is_channels_last_strides_2d_same_rank(sizes, strides),
                );
                f.set(
                    Self::NON_OVERLAPPING_AND_DENSE,
                    contiguous || cl || nod(sizes, strides),
                );
            }
            5 => {
                let cl = geometry::is_channels_last_contiguous_2d_same_rank(sizes, strides);
                let cl3 = !cl && geometry::is_channels_last_contiguous_3d_same_rank(sizes, strides);
                let is_cl = !cl3 && geometry::is_channels_last_strides_2d_same_rank(sizes, strides);
                let is_cl3 =
                    !is_cl && geometry::is_channels_last_strides_3d_same_rank(sizes, strides);
                f.set(Self::CHANNELS_LAST_CONTIGUOUS, cl);
                f.set(Self::CHANNELS_LAST_3D_CONTIGUOUS, cl3);
                f.set(Self::CHANNELS_LAST, is_cl);
                f.set(Self::CHANNELS_LAST_3D, is_cl3);
                f.set(
                    Self::NON_OVERLAPPING_AND_DENSE,
                    contiguous || cl || cl3 || nod(sizes, strides),
                );
            }
            _ => {
                f.set(
                    Self::NON_OVERLAPPING_AND_DENSE,
                    contiguous || nod(sizes, strides),
                );
            }
        }
        f
    }

    /// Row-major contiguous.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[2, 3], TensorOptions::new())?;
    /// assert!(t.impl_ref().flags().is_contiguous());
    /// let t = t.as_strided(&[3, 2], &[1, 3], None)?; // a transpose is no longer row-major
    /// assert!(!t.impl_ref().flags().is_contiguous());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn is_contiguous(self) -> bool {
        self.get(Self::CONTIGUOUS)
    }
    /// Strides look like NHWC (c10's `is_channels_last_`).
    ///
    /// ```
    /// use c10_core::{MemoryFormat, Tensor, TensorOptions};
    /// let o = TensorOptions::new().memory_format(MemoryFormat::ChannelsLast);
    /// let t = Tensor::empty(&[2, 3, 4, 5], o)?;
    /// assert!(t.impl_ref().flags().is_channels_last());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn is_channels_last(self) -> bool {
        self.get(Self::CHANNELS_LAST)
    }
    /// Exactly NHWC-dense.
    ///
    /// ```
    /// use c10_core::{MemoryFormat, Tensor, TensorOptions};
    /// let o = TensorOptions::new().memory_format(MemoryFormat::ChannelsLast);
    /// let flags = Tensor::empty(&[2, 3, 4, 5], o)?.impl_ref().flags();
    /// assert!(flags.is_channels_last_contiguous());
    /// assert!(!flags.is_contiguous());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn is_channels_last_contiguous(self) -> bool {
        self.get(Self::CHANNELS_LAST_CONTIGUOUS)
    }
    /// Strides look like NDHWC.
    ///
    /// ```
    /// use c10_core::{MemoryFormat, Tensor, TensorOptions};
    /// let o = TensorOptions::new().memory_format(MemoryFormat::ChannelsLast3d);
    /// let t = Tensor::empty(&[2, 3, 4, 5, 6], o)?;
    /// assert!(t.impl_ref().flags().is_channels_last_3d());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn is_channels_last_3d(self) -> bool {
        self.get(Self::CHANNELS_LAST_3D)
    }
    /// Exactly NDHWC-dense.
    ///
    /// ```
    /// use c10_core::{MemoryFormat, Tensor, TensorOptions};
    /// let o = TensorOptions::new().memory_format(MemoryFormat::ChannelsLast3d);
    /// let flags = Tensor::empty(&[2, 3, 4, 5, 6], o)?.impl_ref().flags();
    /// assert!(flags.is_channels_last_3d_contiguous());
    /// assert!(!flags.is_channels_last()); // the 2-d flag needs 4 dims
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn is_channels_last_3d_contiguous(self) -> bool {
        self.get(Self::CHANNELS_LAST_3D_CONTIGUOUS)
    }
    /// Some permutation of the dims is dense.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[2, 3], TensorOptions::new())?;
    /// let t = t.as_strided(&[3, 2], &[1, 3], None)?; // the transpose
    /// let flags = t.impl_ref().flags();
    /// assert!(flags.is_non_overlapping_and_dense() && !flags.is_contiguous());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn is_non_overlapping_and_dense(self) -> bool {
        self.get(Self::NON_OVERLAPPING_AND_DENSE)
    }
}

/// A tensor's metadata (c10's `TensorImpl`): the storage it views, sizes
/// and strides (5 dims inline), storage offset, cached numel, dtype,
/// device, dispatch key set, the autograd metadata slot, the version
/// counter, and the cached layout flags.
///
/// A `TensorImpl` shared by several handles never changes; in-place
/// metadata operations on a [`Tensor`] copy it first if it
/// is shared.
///
/// ```
/// use c10_core::{ScalarType, Tensor, TensorOptions};
/// let t = Tensor::zeros(&[2, 3], TensorOptions::new())?;
/// let imp = t.impl_ref();
/// assert_eq!((imp.sizes(), imp.strides()), (&[2, 3][..], &[3, 1][..]));
/// assert_eq!((imp.numel(), imp.dtype()), (6, ScalarType::Float));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Debug)]
pub struct TensorImpl {
    /// The bytes this tensor views; shared with every view of it.
    pub(crate) storage: Storage,
    /// Sizes and strides in elements, five dims inline (c10's layout).
    pub(crate) sizes_and_strides: SizesAndStrides,
    /// Offset of element 0 in the storage, in elements.
    pub(crate) storage_offset: i64,
    /// The product of the sizes, cached because nearly every operation
    /// asks for it; recomputed whenever the sizes change.
    pub(crate) numel: i64,
    /// The version counter, shared by a base and its views.
    pub(crate) version: VersionCounter,
    /// Out-of-line metadata (autograd today): `None`, one null word and no
    /// allocation, for a tensor that does not require grad (c10's null
    /// `autograd_meta_` and `extra_meta_`). A thin pointer, so the
    /// fields it moves out of line cost 8 bytes here, not 16 per field.
    pub(crate) extra: Option<Box<ExtraMeta>>,
    /// c10's dispatch key set of the tensor's device (inference included).
    pub(crate) key_set: DispatchKeySet,
    /// The element type.
    pub(crate) dtype: ScalarType,
    /// The device of the storage, copied here so a device check needs no
    /// indirection.
    pub(crate) device: Device,
    /// Contiguity and density, computed from the geometry on every change
    /// and trusted by `unsafe` code (the copy engine); never taken from a
    /// caller (see `docs/ARCHITECTURE.md`, "Soundness").
    pub(crate) flags: LayoutFlags,
    /// The binding object (c10's `pyobj_slot_`): an opaque pointer a
    /// language binding stores with `Tensor::bind_object`, or null. Never
    /// copied: every constructor, and `Clone` (copy-on-write), starts empty
    /// (see `binding.rs`).
    pub(crate) binding: BindingSlot,
    /// The tensor this one is a view of (PyTorch's `_base`, kept there in
    /// autograd's view metadata): set by the view constructors, always the
    /// root (a view of a view points to the first base), empty for every
    /// tensor that is not a view. Inline, so a plain tensor pays one null
    /// word and no allocation, and a view one reference-count increment.
    pub(crate) view_base: ViewBase,
}

/// The base a view keeps alive (see [`TensorImpl`]'s `view_base`): a handle
/// to the root tensor's `TensorImpl`, or nothing. Its `Debug` names the
/// base without printing its elements (printing reads the storage).
#[derive(Clone, Default)]
pub(crate) struct ViewBase(pub(crate) Option<Tensor>);

impl std::fmt::Debug for ViewBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => f.write_str("None"),
            Some(b) => write!(
                f,
                "Some(TensorImpl {:p} over storage {:#x})",
                b.impl_ref(),
                b.storage().id()
            ),
        }
    }
}

impl Drop for ViewBase {
    #[inline]
    fn drop(&mut self) {
        // The base's handle is released with the decrement inline: the
        // drop glue of the `Option<Tensor>` would call the whole
        // `TensorImpl` drop recursively, out of line, on every view drop.
        if let Some(base) = self.0.take() {
            crate::impl_arc::ImplArc::drop_nested(base.imp);
        }
    }
}

impl ViewBase {
    /// The base a view made now of `source` records: `source`'s own base
    /// when `source` is a view (so bases never chain), else `source`
    /// itself; nothing for an inference tensor, whose views PyTorch does
    /// not track (`as_view` returns early for them).
    #[inline]
    pub(crate) fn for_view_of(source: &Tensor) -> ViewBase {
        if source.imp.key_set.is_inference() {
            return ViewBase(None);
        }
        ViewBase(Some(match &source.imp.view_base.0 {
            Some(root) => root.clone(),
            None => source.clone(),
        }))
    }
}

/// The out-of-line metadata of a new view of `base`: its autograd view
/// metadata, if any. A base without out-of-line metadata (the common case)
/// has no autograd metadata, so neither has its view: no call is made.
#[inline(always)]
fn view_extra(base: &TensorImpl) -> Option<Box<ExtraMeta>> {
    match base.extra {
        None => None,
        Some(_) => ExtraMeta::with_autograd(crate::autograd::view_meta(base.autograd_meta())),
    }
}

// The in-place constructors (`build_view`, `new_contiguous_tensor`) write
// every field of a `TensorImpl` through raw field pointers before
// `assume_init`. This pattern names every field without `..`: adding a
// field makes it fail to compile until those constructors write it too
// (a forgotten field would be undefined behaviour).
#[allow(dead_code)] // Never called: it exists to be compiled.
fn every_field_is_written_by_the_in_place_constructors(t: TensorImpl) {
    let TensorImpl {
        storage: _,
        sizes_and_strides: _,
        storage_offset: _,
        numel: _,
        version: _,
        extra: _,
        binding: _,
        view_base: _,
        key_set: _,
        dtype: _,
        device: _,
        flags: _,
    } = t;
}

// c10 keeps its `TensorImpl` within a cache-line budget; so do we (a view's
// cost is this one allocation).
const _: () = assert!(std::mem::size_of::<TensorImpl>() <= 176);

impl Clone for TensorImpl {
    fn clone(&self) -> Self {
        // A copy of a view (copy-on-write by an in-place metadata op) is
        // still a view of the same base, as in PyTorch.
        self.clone_with(self.extra.clone(), self.view_base.clone())
    }
}

impl TensorImpl {
    /// A copy that is neither a view nor tracked by autograd (what
    /// `detach()` and `.data` start from): [`Clone`] without the base and
    /// without the autograd metadata. The base is never cloned only to be
    /// dropped again (two atomic operations on the base's count, and its
    /// binding edge when the base had one handle).
    pub(crate) fn clone_untracked(&self) -> TensorImpl {
        let mut extra = self.extra.clone();
        if extra.is_some() {
            crate::extra_meta::set_autograd(&mut extra, None);
        }
        self.clone_with(extra, ViewBase(None))
    }

    /// A copy of every field but the out-of-line metadata and the base,
    /// which the caller gives.
    #[inline(always)]
    fn clone_with(&self, extra: Option<Box<ExtraMeta>>, view_base: ViewBase) -> TensorImpl {
        TensorImpl {
            storage: self.storage.clone(),
            sizes_and_strides: self.sizes_and_strides.clone(),
            storage_offset: self.storage_offset,
            numel: self.numel,
            version: self.version.clone(),
            extra,
            key_set: self.key_set,
            dtype: self.dtype,
            device: self.device,
            flags: self.flags,
            // A copy is another TensorImpl: the binding object owns a
            // handle to the original only (see `binding.rs`).
            binding: BindingSlot::new(),
            view_base,
        }
    }
}

/// The key set a new tensor on `device` gets (c10 §4.6), honouring this
/// thread's inference mode.
///
/// ```
/// use c10_core::dispatch_key::DispatchKey;
/// use c10_core::tensor_impl::key_set_for_device;
/// use c10_core::{Device, InferenceMode};
/// let ks = key_set_for_device(Device::CPU);
/// assert!(ks.has(DispatchKey::CPU) && ks.has(DispatchKey::AutogradCPU));
/// let _guard = InferenceMode::new();
/// assert!(key_set_for_device(Device::CPU).is_inference());
/// ```
pub fn key_set_for_device(device: Device) -> DispatchKeySet {
    let inference = InferenceMode::is_enabled();
    if device.device_type() == DeviceType::Cpu {
        // The common case, computed at compile time.
        return if inference {
            CPU_KEYS_INFERENCE
        } else {
            CPU_KEYS
        };
    }
    let backend = backend_component_for_device_type(device.device_type() as i8);
    DispatchKeySet::for_new_tensor(DispatchKeySet::dense_backend(backend), inference)
}

const CPU_KEYS: DispatchKeySet = DispatchKeySet::for_new_tensor(
    DispatchKeySet::dense_backend(backend_component_for_device_type(DeviceType::Cpu as i8)),
    false,
);
const CPU_KEYS_INFERENCE: DispatchKeySet = DispatchKeySet::for_new_tensor(
    DispatchKeySet::dense_backend(backend_component_for_device_type(DeviceType::Cpu as i8)),
    true,
);

impl TensorImpl {
    /// A new tensor over `storage`: 1-d with size `[0]` and stride `[1]`
    /// (c10's default), offset 0, the key set of its device (inference mode
    /// respected), no autograd metadata. Its version counter is the
    /// storage's own when nobody else holds the storage, else a fresh one
    /// (a tensor built over someone else's storage does not share their
    /// counter, as in c10).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor, TensorImpl, TensorOptions, VersionCounter};
    /// let t = Tensor::zeros(&[4], TensorOptions::new())?;
    /// let imp = TensorImpl::new(t.storage().clone(), ScalarType::Float);
    /// assert_eq!((imp.sizes(), imp.strides(), imp.storage_offset()), (&[0][..], &[1][..], 0));
    /// assert!(matches!(imp.version_counter(), VersionCounter::Own(_))); // `t` holds the storage too
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn new(storage: Storage, dtype: ScalarType) -> TensorImpl {
        let (device, key_set, version) = fresh_identity(&storage);
        TensorImpl {
            storage,
            // c10's default geometry: sizes [0], strides [1].
            sizes_and_strides: SizesAndStrides::default(),
            storage_offset: 0,
            numel: 0,
            version,
            extra: None,
            key_set,
            dtype,
            device,
            flags: LayoutFlags::compute_with(&[0], &[1], 0, None),
            binding: BindingSlot::new(),
            view_base: ViewBase(None),
        }
    }

    /// A view of `base` (c10's `TensorImpl(VIEW, ...)` plus
    /// `set_sizes_and_strides`: same storage, key set, dtype, device and
    /// version counter; `requires_grad` carries over) with the geometry
    /// already built (see [`SizesAndStrides::from_fn`]), straight into a new
    /// [`Tensor`] handle: the `TensorImpl` is written field by field into
    /// the handle's own allocation, never built on the stack and copied (a
    /// view op's cost is its one allocation). Numel and every layout flag
    /// are computed from the geometry. No bounds check against the storage:
    /// every access re-checks under the storage's lock, so a geometry
    /// outside the storage is an error there, never undefined behaviour.
    ///
    /// Internal machinery of the view ops (`aten-shape`); use those.
    #[doc(hidden)]
    #[inline]
    pub fn view_tensor(
        base: &Tensor,
        sizes_and_strides: SizesAndStrides,
        storage_offset: i64,
    ) -> Result<Tensor> {
        TensorImpl::view_tensor_edit(base, storage_offset, move |geometry| {
            *geometry = sizes_and_strides;
            Ok(())
        })
    }

    /// A view of `base` whose geometry is `base`'s, changed by `edit`, as a
    /// new [`Tensor`] handle. `edit` works on the sizes and strides already
    /// in place in the new `TensorImpl` (for `transpose`, `narrow`,
    /// `select`, `unsqueeze`: a swap or a few stores), so nothing is copied
    /// twice. Numel and the layout flags are computed from the result; no
    /// bounds check against the storage, as for
    /// [`view_tensor`](Self::view_tensor). Fails only when the product of
    /// the new sizes overflows (`numel: integer multiplication overflow`).
    #[doc(hidden)]
    #[inline]
    pub fn view_tensor_edit(
        base: &Tensor,
        storage_offset: i64,
        edit: impl FnOnce(&mut SizesAndStrides) -> Result<()>,
    ) -> Result<Tensor> {
        TensorImpl::edited_view(base, storage_offset, false, edit)
    }

    /// [`view_tensor_edit`](Self::view_tensor_edit) for an `edit` that only
    /// reorders `base`'s dims and inserts or removes dims of size 1
    /// (`transpose`, `permute`, `unsqueeze`, `alias`). Such views are
    /// non-overlapping and dense exactly when `base` is (c10 ignores size-1
    /// dims and sorts the others by stride; for tensors with elements no
    /// two dims of size 2 or more can then tie), so that flag is carried
    /// over instead of recomputed.
    ///
    /// # Safety
    ///
    /// `edit` must leave a geometry whose dims of size other than 1 are
    /// exactly `base`'s, as (size, stride) pairs, in any order: it may only
    /// permute dims and insert or remove dims of size 1. The carried-over
    /// non-overlapping-and-dense flag is trusted by `unsafe` code (the
    /// copy engine writes every byte of a dense `clone` destination through
    /// raw pointers and splits dense destinations across threads), so a
    /// geometry that breaks this rule can expose uninitialised memory or
    /// race. Use [`view_tensor_edit`](Self::view_tensor_edit), which
    /// computes the flag, for anything else.
    #[doc(hidden)]
    #[inline]
    pub unsafe fn view_tensor_rearranged(
        base: &Tensor,
        storage_offset: i64,
        edit: impl FnOnce(&mut SizesAndStrides) -> Result<()>,
    ) -> Result<Tensor> {
        TensorImpl::edited_view(base, storage_offset, true, edit)
    }

    /// `build_view` with an `edit` that always keeps the geometry.
    #[inline(always)]
    fn edited_view(
        base: &Tensor,
        storage_offset: i64,
        rearranged: bool,
        edit: impl FnOnce(&mut SizesAndStrides) -> Result<()>,
    ) -> Result<Tensor> {
        let built =
            TensorImpl::build_view::<false>(base, storage_offset, None, rearranged, |geometry| {
                edit(geometry)?;
                Ok(true)
            })?;
        // `build_view` returns `None` only when the edit says so.
        built.ok_or_else(|| TensorError::runtime("view geometry was abandoned"))
    }

    /// A view of `base` with `ndim` dims whose sizes and strides `fill`
    /// writes in place in the new `TensorImpl` (they start as zeros), as a
    /// new [`Tensor`] handle; for view ops whose geometry is computed
    /// rather than edited (`view`, `expand`, `as_strided`). `fill` may give
    /// up: `Ok(true)` keeps what it wrote; `Ok(false)` abandons the view
    /// (the result is `Ok(None)`, for callers that then take a slower path,
    /// such as geometry whose arithmetic wrapped); `Err` abandons it and is
    /// returned. Numel and the layout flags are computed from what `fill`
    /// wrote; no bounds check against the storage, as for
    /// [`view_tensor`](Self::view_tensor).
    #[doc(hidden)]
    #[inline]
    pub fn view_tensor_fill_or_abandon(
        base: &Tensor,
        storage_offset: i64,
        ndim: usize,
        fill: impl FnOnce(&mut [i64], &mut [i64]) -> Result<bool>,
    ) -> Result<Option<Tensor>> {
        TensorImpl::build_view::<false>(base, storage_offset, Some(ndim), false, |geometry| {
            let (sizes, strides) = geometry.sizes_and_strides_mut();
            fill(sizes, strides)
        })
    }

    /// A row-major view of `base` (at `base`'s storage offset) with `ndim`
    /// dims whose sizes `fill` writes in place in the new `TensorImpl`
    /// (they start as zeros); the strides are then the row-major strides
    /// of those sizes, computed in the same pass as numel, and the layout
    /// flags are a row-major tensor's (no contiguity scan). This is
    /// `view`'s result when `base` is strictly row-major (every stride,
    /// size-1 dims included, is the product of the later sizes) and has
    /// elements, the common case. `fill` returns as for
    /// [`view_tensor_fill_or_abandon`](Self::view_tensor_fill_or_abandon);
    /// the view is also abandoned (`Ok(None)`) when a size is below 1 or
    /// the product of the sizes overflows, so that the caller's general
    /// path decides (and reports) those cases.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor, TensorImpl};
    /// let t = Tensor::zeros(&[4, 6], ScalarType::Float)?;
    /// let v = TensorImpl::view_tensor_row_major_or_abandon(&t, 3, |s| {
    ///     s.copy_from_slice(&[2, 3, 4]);
    ///     Ok(true)
    /// })?
    /// .unwrap();
    /// assert_eq!((v.sizes(), v.strides()), (&[2i64, 3, 4][..], &[12i64, 4, 1][..]));
    /// assert!(v.is_contiguous() && v.is_alias_of(&t));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[doc(hidden)]
    #[inline]
    pub fn view_tensor_row_major_or_abandon(
        base: &Tensor,
        ndim: usize,
        fill: impl FnOnce(&mut [i64]) -> Result<bool>,
    ) -> Result<Option<Tensor>> {
        let offset = base.storage_offset();
        TensorImpl::build_view::<true>(base, offset, Some(ndim), false, |geometry| {
            fill(geometry.sizes_and_strides_mut().0)
        })
    }

    /// The one place a view's `TensorImpl` is built in place. The geometry
    /// starts as a copy of `base`'s, or as `zeroed_dims` dims of zeros, and
    /// `edit` finishes it (see `view_tensor_fill_or_abandon` for its result).
    /// `rearranged`: see `view_tensor_rearranged`. `ROW_MAJOR`: `edit`
    /// writes only the sizes, and the strides, numel and flags are those
    /// of a row-major tensor (see `view_tensor_row_major_or_abandon`).
    #[inline(always)]
    fn build_view<const ROW_MAJOR: bool>(
        base: &Tensor,
        storage_offset: i64,
        zeroed_dims: Option<usize>,
        rearranged: bool,
        edit: impl FnOnce(&mut SizesAndStrides) -> Result<bool>,
    ) -> Result<Option<Tensor>> {
        let source = base;
        let base: &TensorImpl = &source.imp;
        // Concrete geometry from a symbolic tensor's inline fields (its
        // hints) would silently specialise it: symbolic tensors take the
        // symbolic view path (`aten_shape::generic`), as c10's int
        // accessors throw on them.
        if crate::extra_meta::symbolic(&base.extra).is_some() {
            return Err(crate::sym::cannot_call_with_symbolic("sizes"));
        }
        // A block from this thread's cache of freed `TensorImpl`s (or the
        // allocator; see `impl_arc`). `as_mut_ptr` keeps the block's write
        // provenance, and the block was taken just above, so no handle or
        // reference to its contents exists: writing through `slot` is
        // exclusive.
        let imp = ImplArc::<TensorImpl>::new_uninit();
        let slot = imp.as_mut_ptr();
        // SAFETY: `slot` points to the new, uniquely owned, uninitialised
        // `TensorImpl` (see above). The geometry field is written first
        // (through a raw field pointer) and only then borrowed, so `edit`
        // and the numel and flag computations see an initialised
        // `SizesAndStrides` and nothing else of the value. An early return
        // (`?`) before that write leaves nothing initialised to drop.
        let geometry = unsafe {
            let field = std::ptr::addr_of_mut!((*slot).sizes_and_strides);
            match zeroed_dims {
                // A heap block of the base is not worth copying.
                Some(ndim) if !base.sizes_and_strides.is_inline() => {
                    field.write(SizesAndStrides::from_fn(ndim, |_, _| {})?)
                }
                // An inline copy is a fixed 88-byte move.
                _ => field.write(base.sizes_and_strides.clone()),
            }
            &mut (*slot).sizes_and_strides
        };
        if let Some(ndim) = zeroed_dims {
            if let Err(e) = geometry.reset_to_zeros(ndim) {
                // SAFETY: the geometry is the only initialised field; drop
                // it before the uninitialised block is given back with `imp`.
                unsafe { std::ptr::drop_in_place(geometry) };
                return Err(e.into());
            }
        }
        let outcome = edit(geometry).and_then(|keep| {
            if !keep {
                return Ok(None);
            }
            if ROW_MAJOR {
                let (sizes, strides) = geometry.sizes_and_strides_mut();
                return Ok(row_major_strides(sizes, strides));
            }
            match numel_of(geometry.sizes()) {
                Some(n) => Ok(Some(n)),
                None => Err(geometry::compute_numel(geometry.sizes())
                    .err()
                    .unwrap_or_else(|| {
                        TensorError::runtime("numel: integer multiplication overflow")
                    })),
            }
        });
        let numel = match outcome {
            Ok(Some(numel)) => numel,
            abandoned => {
                // SAFETY: the geometry is the only initialised field; drop
                // it (it may own a heap block) before the uninitialised
                // block is given back with `imp`.
                unsafe { std::ptr::drop_in_place(geometry) };
                return abandoned.map(|_| None);
            }
        };
        // Tensors without elements may tie on huge strides; recompute then.
        let known_density = (rearranged && numel > 0 && base.numel > 0)
            .then(|| base.flags.is_non_overlapping_and_dense());
        let flags = if ROW_MAJOR {
            LayoutFlags::row_major(geometry.sizes(), geometry.strides(), numel)
        } else {
            LayoutFlags::compute_with_inlined(
                geometry.sizes(),
                geometry.strides(),
                numel,
                known_density,
            )
        };
        let extra = view_extra(base);
        // SAFETY: every other field is written exactly once through raw
        // field pointers (never reading the uninitialised memory), so the
        // `TensorImpl` is fully initialised before `assume_init` (the list
        // of fields is pinned by
        // `every_field_is_written_by_the_in_place_constructors`).
        unsafe {
            std::ptr::addr_of_mut!((*slot).storage).write(base.storage.clone());
            std::ptr::addr_of_mut!((*slot).storage_offset).write(storage_offset);
            std::ptr::addr_of_mut!((*slot).numel).write(numel);
            std::ptr::addr_of_mut!((*slot).version).write(base.version.clone());
            std::ptr::addr_of_mut!((*slot).extra).write(extra);
            std::ptr::addr_of_mut!((*slot).key_set).write(base.key_set);
            std::ptr::addr_of_mut!((*slot).dtype).write(base.dtype);
            std::ptr::addr_of_mut!((*slot).device).write(base.device);
            std::ptr::addr_of_mut!((*slot).flags).write(flags);
            std::ptr::addr_of_mut!((*slot).binding).write(BindingSlot::new());
            std::ptr::addr_of_mut!((*slot).view_base).write(ViewBase::for_view_of(source));
            Ok(Some(Tensor {
                imp: imp.assume_init(),
            }))
        }
    }

    /// A new handle over a fresh `storage` with row-major `sizes` (what
    /// `empty` and the factories make): `new` followed by
    /// `set_sizes_contiguous(sizes, Contiguous)`, computed once and written
    /// straight into the handle's allocation. Errors as
    /// `set_sizes_contiguous` (stride or numel overflow).
    pub(crate) fn new_contiguous_tensor(
        storage: Storage,
        dtype: ScalarType,
        sizes: &[i64],
    ) -> Result<Tensor> {
        let (device, key_set, version) = fresh_identity(&storage);
        let imp = ImplArc::<TensorImpl>::new_uninit();
        let slot = imp.as_mut_ptr();
        // SAFETY: `imp` was created just above and has no handle yet, so
        // writing through `slot` (from `as_mut_ptr`, which keeps the
        // block's provenance; see `build_view`) is exclusive. The
        // geometry field is written first (as zeros of the right rank) and
        // only then borrowed and filled in place: building it on the stack
        // and moving it in re-read the fresh 8-byte stores with 16-byte
        // loads, a store-forwarding stall that was a visible part of
        // `empty`. An early return (`?`) before the write leaves nothing
        // initialised to drop.
        let geometry = unsafe {
            let field = std::ptr::addr_of_mut!((*slot).sizes_and_strides);
            field.write(SizesAndStrides::from_fn(sizes.len(), |_, _| {})?);
            &mut *field
        };
        let numel = {
            let (s, st) = geometry.sizes_and_strides_mut();
            fill_row_major(sizes, s, st)
        };
        let numel = match numel {
            Ok(n) => n,
            Err(e) => {
                // SAFETY: the geometry is the only initialised field; drop
                // it (it may own a heap block) before the uninitialised
                // block is given back with `imp`.
                unsafe { std::ptr::drop_in_place(geometry) };
                return Err(e);
            }
        };
        let flags = LayoutFlags::row_major(geometry.sizes(), geometry.strides(), numel);
        // SAFETY: every other field is written exactly once through raw
        // field pointers (never reading the uninitialised memory), so the
        // `TensorImpl` is fully initialised before `assume_init` (the list
        // of fields is pinned by
        // `every_field_is_written_by_the_in_place_constructors`).
        unsafe {
            std::ptr::addr_of_mut!((*slot).storage).write(storage);
            std::ptr::addr_of_mut!((*slot).storage_offset).write(0);
            std::ptr::addr_of_mut!((*slot).numel).write(numel);
            std::ptr::addr_of_mut!((*slot).version).write(version);
            std::ptr::addr_of_mut!((*slot).extra).write(None);
            std::ptr::addr_of_mut!((*slot).key_set).write(key_set);
            std::ptr::addr_of_mut!((*slot).dtype).write(dtype);
            std::ptr::addr_of_mut!((*slot).device).write(device);
            std::ptr::addr_of_mut!((*slot).flags).write(flags);
            std::ptr::addr_of_mut!((*slot).binding).write(BindingSlot::new());
            std::ptr::addr_of_mut!((*slot).view_base).write(ViewBase(None));
            Ok(Tensor {
                imp: imp.assume_init(),
            })
        }
    }

    /// Sets sizes and strides (c10's `set_sizes_and_strides`): numel and
    /// flags are refreshed; no bounds check against the storage. A negative
    /// stride is replaced as c10 does (last dim 1, else the next dim's
    /// stride times `max(size, 1)`).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor, TensorImpl, TensorOptions};
    /// let t = Tensor::zeros(&[6], TensorOptions::new())?;
    /// let mut imp = TensorImpl::new(t.storage().clone(), ScalarType::Float);
    /// imp.set_sizes_and_strides(&[2, 3], &[1, 2], Some(0))?;
    /// assert_eq!(imp.numel(), 6);
    /// assert!(!imp.flags().is_contiguous());
    /// imp.set_sizes_and_strides(&[2, 3], &[-1, -1], None)?; // negative strides are repaired
    /// assert_eq!(imp.strides(), &[3, 1]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn set_sizes_and_strides(
        &mut self,
        sizes: &[i64],
        strides: &[i64],
        storage_offset: Option<i64>,
    ) -> Result<()> {
        if crate::extra_meta::symbolic(&self.extra).is_some() {
            return Err(TensorError::runtime(
                "set_sizes_and_strides() called on tensor with symbolic shape",
            ));
        }
        if sizes.len() != strides.len() {
            return Err(TensorError::runtime(format!(
                "dimensionality of sizes ({}) must match dimensionality of strides ({})",
                sizes.len(),
                strides.len()
            )));
        }
        let numel = geometry::compute_numel(sizes)?;
        let mut fixed: smallvec::SmallVec<[i64; 8]> = strides.into();
        for d in (0..sizes.len()).rev() {
            if fixed[d] < 0 {
                fixed[d] = if d + 1 == sizes.len() {
                    1
                } else {
                    fixed[d + 1]
                        .checked_mul(sizes[d + 1].max(1))
                        .ok_or_else(|| TensorError::runtime("Stride calculation overflowed"))?
                };
            }
        }
        self.sizes_and_strides = SizesAndStrides::from_sizes_strides(sizes, &fixed)?;
        self.numel = numel;
        self.flags = LayoutFlags::compute_with_inlined(sizes, &fixed, numel, None);
        if let Some(o) = storage_offset {
            self.storage_offset = o;
        }
        Ok(())
    }

    /// Sets sizes with contiguous strides in `format` (c10's
    /// `set_sizes_contiguous` + `empty_tensor_restride`).
    ///
    /// ```
    /// use c10_core::{MemoryFormat, ScalarType, Tensor, TensorImpl, TensorOptions};
    /// let t = Tensor::zeros(&[8], TensorOptions::new())?;
    /// let mut imp = TensorImpl::new(t.storage().clone(), ScalarType::Float);
    /// imp.set_sizes_contiguous(&[1, 2, 2, 2], MemoryFormat::ChannelsLast)?;
    /// assert_eq!(imp.strides(), &[8, 1, 4, 2]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn set_sizes_contiguous(&mut self, sizes: &[i64], format: MemoryFormat) -> Result<()> {
        if crate::extra_meta::symbolic(&self.extra).is_some() {
            return Err(TensorError::runtime(
                "set_sizes_contiguous() called on tensor with symbolic shape",
            ));
        }
        if format == MemoryFormat::Contiguous {
            // Row-major strides written in place (no intermediate vector,
            // none of them negative, so `set_sizes_and_strides`'s stride
            // repair has nothing to do).
            let mut numel = Ok(0);
            let geometry = SizesAndStrides::from_fn(sizes.len(), |s, st| {
                numel = fill_row_major(sizes, s, st);
            })?;
            let numel = numel?;
            self.flags = LayoutFlags::compute_with_inlined(
                geometry.sizes(),
                geometry.strides(),
                numel,
                None,
            );
            self.sizes_and_strides = geometry;
            self.numel = numel;
            return Ok(());
        }
        let strides = match format {
            MemoryFormat::Contiguous => geometry::contiguous_strides(sizes)?,
            MemoryFormat::ChannelsLast => geometry::channels_last_strides_2d(sizes)?,
            MemoryFormat::ChannelsLast3d => geometry::channels_last_strides_3d(sizes)?,
            MemoryFormat::Preserve => {
                return Err(TensorError::runtime("unsupported memory format Preserve"));
            }
        };
        self.set_sizes_and_strides(sizes, &strides, None)
    }

    /// The storage.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[3], TensorOptions::new())?;
    /// assert_eq!(t.impl_ref().storage().nbytes(), 12); // three `f32`s
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn storage(&self) -> &Storage {
        &self.storage
    }
    /// Sizes, in elements.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[2, 5], TensorOptions::new())?;
    /// assert_eq!(t.impl_ref().sizes(), &[2, 5]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn sizes(&self) -> &[i64] {
        self.sizes_and_strides.sizes()
    }
    /// Strides, in elements.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[2, 5], TensorOptions::new())?;
    /// assert_eq!(t.impl_ref().strides(), &[5, 1]);
    /// let t = t.as_strided(&[5, 2], &[1, 5], None)?; // the transpose
    /// assert_eq!(t.impl_ref().strides(), &[1, 5]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn strides(&self) -> &[i64] {
        self.sizes_and_strides.strides()
    }
    /// The sizes-and-strides container (inline up to 5 dims).
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[2, 5], TensorOptions::new())?;
    /// let ss = t.impl_ref().sizes_and_strides();
    /// assert!(ss.is_inline());
    /// assert_eq!(ss.get_stride(0), Some(5));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn sizes_and_strides(&self) -> &SizesAndStrides {
        &self.sizes_and_strides
    }
    /// Offset into the storage, in elements.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor, TensorImpl, TensorOptions};
    /// let t = Tensor::zeros(&[6], TensorOptions::new())?;
    /// let mut imp = TensorImpl::new(t.storage().clone(), ScalarType::Float);
    /// imp.set_sizes_and_strides(&[2], &[1], Some(4))?; // the last two elements
    /// assert_eq!(imp.storage_offset(), 4);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn storage_offset(&self) -> i64 {
        self.storage_offset
    }
    /// Number of elements (cached).
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert_eq!(Tensor::zeros(&[2, 3, 4], TensorOptions::new())?.impl_ref().numel(), 24);
    /// assert_eq!(Tensor::zeros(&[0, 3], TensorOptions::new())?.impl_ref().numel(), 0);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn numel(&self) -> i64 {
        self.numel
    }
    /// Number of dims.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// assert_eq!(Tensor::zeros(&[2, 3, 4], TensorOptions::new())?.impl_ref().dim(), 3);
    /// assert_eq!(Tensor::zeros(&[], TensorOptions::new())?.impl_ref().dim(), 0); // a scalar
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn dim(&self) -> usize {
        self.sizes_and_strides.len()
    }
    /// Element type.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[1], TensorOptions::new().dtype(ScalarType::Double))?;
    /// assert_eq!(t.impl_ref().dtype(), ScalarType::Double);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn dtype(&self) -> ScalarType {
        self.dtype
    }
    /// Device.
    ///
    /// ```
    /// use c10_core::{Device, Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[1], TensorOptions::new())?;
    /// assert_eq!(t.impl_ref().device(), Device::CPU);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn device(&self) -> Device {
        self.device
    }
    /// Dispatch key set.
    ///
    /// ```
    /// use c10_core::dispatch_key::DispatchKey;
    /// use c10_core::{Tensor, TensorOptions};
    /// let ks = Tensor::zeros(&[1], TensorOptions::new())?.impl_ref().key_set();
    /// assert!(ks.has(DispatchKey::CPU));
    /// assert_eq!(ks.legacy_extract_dispatch_key(), DispatchKey::CPU);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn key_set(&self) -> DispatchKeySet {
        self.key_set
    }
    /// Cached layout flags.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[4], TensorOptions::new())?;
    /// assert!(t.impl_ref().flags().is_contiguous());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn flags(&self) -> LayoutFlags {
        self.flags
    }
    /// The version counter.
    ///
    /// ```
    /// use c10_core::{InferenceMode, Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[1], TensorOptions::new())?;
    /// assert!(t.impl_ref().version_counter().enabled());
    /// let _guard = InferenceMode::new();
    /// let inference = Tensor::zeros(&[1], TensorOptions::new())?;
    /// assert!(!inference.impl_ref().version_counter().enabled());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn version_counter(&self) -> &VersionCounter {
        &self.version
    }
    /// The autograd metadata, if any was allocated.
    ///
    /// ```
    /// use c10_core::{AutogradMetaInterface, Tensor, TensorOptions};
    /// let plain = Tensor::zeros(&[2], TensorOptions::new())?;
    /// assert!(plain.impl_ref().autograd_meta().is_none()); // nothing allocated
    /// let w = Tensor::zeros(&[2], TensorOptions::new().requires_grad(true))?;
    /// assert!(w.impl_ref().autograd_meta().is_some_and(|m| m.requires_grad()));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn autograd_meta(&self) -> Option<&dyn AutogradMetaInterface> {
        crate::extra_meta::autograd(&self.extra)
    }

    /// Replaces the autograd metadata (allocating the out-of-line block
    /// only when there is something to hold).
    pub(crate) fn set_autograd_meta(&mut self, meta: Option<Box<dyn AutogradMetaInterface>>) {
        crate::extra_meta::set_autograd(&mut self.extra, meta);
    }
    /// c10's `is_inference()`.
    ///
    /// ```
    /// use c10_core::{InferenceMode, Tensor, TensorOptions};
    /// let t = {
    ///     let _guard = InferenceMode::new();
    ///     Tensor::zeros(&[1], TensorOptions::new())?
    /// };
    /// assert!(t.impl_ref().is_inference());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn is_inference(&self) -> bool {
        self.key_set.is_inference()
    }
}

/// Writes the row-major strides of `sizes` (all at least 1) into
/// `strides` and returns numel; `None` if a size is below 1 or the product
/// overflows (the strides are then partly written).
#[inline(always)]
fn row_major_strides(sizes: &[i64], strides: &mut [i64]) -> Option<i64> {
    let mut running: i64 = 1;
    for (&n, st) in sizes.iter().zip(strides.iter_mut()).rev() {
        if n < 1 {
            return None;
        }
        *st = running;
        running = running.checked_mul(n)?;
    }
    Some(running)
}

/// c10's `safe_compute_numel` without the error: `None` exactly when
/// [`geometry::compute_numel`] fails (the `u64` product overflows or exceeds
/// `i64::MAX`).
#[inline]
fn numel_of(sizes: &[i64]) -> Option<i64> {
    let mut n: u64 = 1;
    for &s in sizes {
        n = n.checked_mul(s as u64)?;
    }
    i64::try_from(n).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fill_row_major` must agree with c10's contiguous strides and with
    /// `geometry::compute_numel` (value or error), stride overflow first.
    #[test]
    fn fill_row_major_matches_strides_and_compute_numel() {
        let cases: &[&[i64]] = &[
            &[],
            &[3, 4],
            &[2, 0, 5],
            &[1, 1, 7],
            &[0, -1],
            &[-2, 3],
            &[1 << 32, 1 << 31],
            &[1 << 62, 3],
        ];
        for &sizes in cases {
            let (mut s, mut st) = (vec![0; sizes.len()], vec![0; sizes.len()]);
            let got = fill_row_major(sizes, &mut s, &mut st);
            assert_eq!(s, sizes);
            let mut want_st = vec![0i64; sizes.len()];
            let mut running: Option<i64> = Some(1);
            for d in (0..sizes.len()).rev() {
                want_st[d] = running.unwrap_or(0);
                running = running.and_then(|r| r.checked_mul(sizes[d].max(1)));
            }
            if running.is_none() {
                let e = got.expect_err("stride overflow must be an error");
                assert!(
                    e.to_string().contains("Stride calculation overflowed"),
                    "{e}"
                );
                continue;
            }
            assert_eq!(st, want_st, "{sizes:?}");
            match (got, geometry::compute_numel(sizes)) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{sizes:?}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("{sizes:?}: {a:?} vs {b:?}"),
            }
        }
    }

    #[test]
    fn set_sizes_contiguous_reports_stride_overflow() {
        let t = Tensor::empty(&[2], ScalarType::Float).unwrap();
        let mut imp = TensorImpl::new(t.storage().clone(), ScalarType::Float);
        let err = imp
            .set_sizes_contiguous(&[1 << 62, 4, 2], MemoryFormat::Contiguous)
            .unwrap_err();
        assert!(
            err.to_string().contains("Stride calculation overflowed"),
            "{err}"
        );
        imp.set_sizes_contiguous(&[2, 3], MemoryFormat::Contiguous)
            .unwrap();
        assert_eq!(
            (imp.sizes(), imp.strides(), imp.numel()),
            (&[2, 3][..], &[3, 1][..], 6)
        );
    }
}
