//! `contiguous`, `clone`, `copy_` and `empty_like`, on a strided copy
//! engine for CPU tensors.
//!
//! These follow ATen (torch 2.15) exactly:
//!
//! * [`contiguous`] returns the very same tensor (same `TensorImpl`) when it
//!   is already contiguous in the requested format, and otherwise a
//!   [`clone`] in that format;
//! * [`clone`] allocates with [`empty_like`] (keeping a non-overlapping and
//!   dense layout's exact strides under [`MemoryFormat::Preserve`], or
//!   inferring dense strides in the same dim order otherwise) and copies;
//! * [`copy_`] broadcasts the source to the destination, converts dtypes
//!   elementwise, and refuses destinations where several elements share
//!   memory and sources that partly overlap the destination, with
//!   PyTorch's messages.
//!
//! CPU copies run on an engine that works on raw byte pointers while the
//! storages' guards are held (one write guard for the destination, one
//! read guard for the source, or a single write guard when both views share
//! a storage; see `Storage::lock_write_read`). It simplifies every copy
//! first (drops size-1 dims, orders dims by destination stride and merges
//! dims that are contiguous on both sides), so dense blocks are copied with
//! `memcpy`, and transposes are copied in cache-sized tiles of
//! register-sized transposes. Tensors on other devices are handed to the
//! device's registered [`DeviceOps`](c10_core::DeviceOps).

mod bits;
mod convert;
mod kernel;

use c10_core::access::element_offset_range;
use c10_core::geometry::{
    channels_last_strides_2d, channels_last_strides_3d, contiguous_strides, fmt_list,
    infer_dense_strides, DimVec,
};
use c10_core::{
    device_ops, Device, DeviceType, InferenceMode, MemoryFormat, Result, ScalarType, Storage,
    Tensor, TensorError, TensorOptions,
};
use c10_storage::{StorageError, WriteReadGuard};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};

use self::convert::Converter;
use self::kernel::{copy_same_dtype, CopyPlan, Dims};

const INTERNAL_OVERLAP: &str = "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.";
const PARTIAL_OVERLAP: &str = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.";

/// Whether some permutation of the dims of `t` is dense (c10's cached
/// `is_non_overlapping_and_dense` flag; true for every tensor without
/// elements).
///
/// ```
/// use aten_shape::copy::is_non_overlapping_and_dense;
/// use c10_core::{Tensor, TensorOptions};
/// let t = Tensor::empty(&[2, 3], TensorOptions::new())?;
/// assert!(is_non_overlapping_and_dense(&t));
/// let expanded = t.as_strided(&[2, 3], &[0, 1], None)?;
/// assert!(!is_non_overlapping_and_dense(&expanded));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn is_non_overlapping_and_dense(t: &Tensor) -> bool {
    t.is_non_overlapping_and_dense()
}

/// ATen's `empty_like(t, memory_format)`: a new uninitialised tensor (zeros
/// on the CPU here) with the sizes, dtype and device of `t`, offset 0, and
/// no `requires_grad`.
///
/// * [`MemoryFormat::Preserve`]: a non-overlapping and dense `t` keeps its
///   exact strides; any other strided `t` gets `infer_dense_strides` (dense
///   strides in the same dim order); on devices without `as_strided`, the
///   suggested memory format.
/// * Any other format: those strides (`ChannelsLast` needs 4 dims,
///   `ChannelsLast3d` 5, with PyTorch's errors).
///
/// ```
/// use aten_shape::copy::empty_like;
/// use c10_core::{MemoryFormat, Tensor, TensorOptions};
/// let t = Tensor::empty(&[4, 6], TensorOptions::new())?;
/// let gapped = t.as_strided(&[4, 3], &[6, 2], None)?; // t[:, ::2]
/// assert_eq!(empty_like(&gapped, MemoryFormat::Preserve)?.strides(), &[3, 1]);
/// let e = empty_like(&t.as_strided(&[6, 4], &[1, 6], None)?, MemoryFormat::Preserve)?;
/// assert_eq!(e.strides(), &[1, 6]); // a transpose is dense: kept
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn empty_like(t: &Tensor, format: MemoryFormat) -> Result<Tensor> {
    // A symbolic tensor's inline sizes are hints: refuse, as c10's
    // sizes() does, rather than make a tensor of the hint's shape.
    t.checked_sizes()?;
    let options = TensorOptions::new().dtype(t.dtype()).device(t.device());
    match format {
        MemoryFormat::Preserve if t.is_non_overlapping_and_dense() => {
            Tensor::empty_strided(t.sizes(), t.strides(), options)
        }
        MemoryFormat::Preserve if t.device().device_type().supports_as_strided() => {
            let strides = infer_dense_strides(t.sizes(), t.strides())?;
            Tensor::empty_strided(t.sizes(), &strides, options)
        }
        MemoryFormat::Preserve => {
            Tensor::empty(t.sizes(), options.memory_format(t.suggest_memory_format()))
        }
        format => Tensor::empty(t.sizes(), options.memory_format(format)),
    }
}

/// [`empty_like`] for [`clone`]'s destination, which the copy overwrites
/// in full: on the CPU its bytes skip the allocator's zero fill (a
/// `memset` of the whole block whenever `malloc` recycles memory, which
/// made a 1 MiB `contiguous()` cost a fill plus a copy).
fn empty_like_for_overwrite(t: &Tensor, format: MemoryFormat) -> Result<Tensor> {
    // Sub-byte element types pack several elements per byte, and device
    // memory is never read by the host: both keep the ordinary path.
    if t.dtype().elements_per_byte() != 1 || !t.device().device_type().is_host_accessible() {
        return empty_like(t, format);
    }
    let sizes = t.sizes();
    let strides: DimVec = match format {
        MemoryFormat::Preserve if t.is_non_overlapping_and_dense() => {
            DimVec::from_slice(t.strides())
        }
        // (CPU tensors support `as_strided`, so `empty_like`'s other
        // `Preserve` branch is not reached here.)
        MemoryFormat::Preserve => infer_dense_strides(sizes, t.strides())?,
        MemoryFormat::Contiguous => contiguous_strides(sizes)?,
        MemoryFormat::ChannelsLast => channels_last_strides_2d(sizes)?,
        MemoryFormat::ChannelsLast3d => channels_last_strides_3d(sizes)?,
    };
    let options = TensorOptions::new().dtype(t.dtype()).device(t.device());
    // SAFETY: every branch gives non-overlapping and dense strides, so each
    // byte of the new storage belongs to exactly one element, and the only
    // caller, `clone`, hands the tensor to `copy_into` before anything else
    // sees it: a host-to-host copy of the same shape writes every element
    // (or fails, and the tensor is dropped unread).
    unsafe { Tensor::empty_strided_for_overwrite(sizes, &strides, options) }
}

/// ATen's `clone(t, memory_format)`: a copy of `t` in new storage, laid out
/// as [`empty_like`] lays it out, with offset 0 and a fresh version counter
/// (version 0). A tensor that requires grad gives a clone that requires
/// grad (the clone is part of the autograd graph in PyTorch), except in
/// inference mode, where PyTorch records no graph.
///
/// ```
/// use aten_shape::copy::clone;
/// use c10_core::{MemoryFormat, ScalarType, Tensor};
/// let t = Tensor::arange(0, 6, 1, ScalarType::Long)?.as_strided(&[3, 2], &[1, 3], None)?;
/// let c = clone(&t, MemoryFormat::Preserve)?; // dense layout kept
/// assert_eq!((c.strides(), c.to_vec::<i64>()?), (&[1i64, 3][..], vec![0, 3, 1, 4, 2, 5]));
/// let c = clone(&t, MemoryFormat::Contiguous)?;
/// assert_eq!((c.strides(), c.to_vec::<i64>()?), (&[2i64, 1][..], vec![0, 3, 1, 4, 2, 5]));
/// assert!(!c.is_alias_of(&t));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn clone(t: &Tensor, format: MemoryFormat) -> Result<Tensor> {
    if t.has_symbolic_sizes_strides() {
        return clone_sym(t, format);
    }
    let mut out = empty_like_for_overwrite(t, format)?;
    let host = |t: &Tensor| t.device().device_type().is_host_accessible();
    if host(t) && !t.is_conj() && !t.is_neg() {
        // A fresh destination of the same shape and dtype on the host:
        // none of `copy_`'s checks (aliasing, overlap, broadcasting, bits,
        // dtypes) can refuse it or change the copy, so the CPU copy runs
        // directly.
        if out.numel() > 0 {
            copy_cpu(&out, t, t.strides())?;
        }
    } else {
        copy_into(&out, t)?;
    }
    finish_copy(&mut out, t)?;
    Ok(out)
}

/// The symbolic face of [`clone`]: a fake tensor (no data) of the same
/// `SymInt` sizes on the same (fake) device, with the format's strides
/// (`Preserve`: contiguous, see `docs/symbolic-shapes.md`).
#[cold]
#[inline(never)]
fn clone_sym(t: &Tensor, format: MemoryFormat) -> Result<Tensor> {
    let sizes = t.sym_sizes();
    let device = t.fake_device().unwrap_or(t.device());
    let options = c10_core::TensorOptions::new()
        .dtype(t.dtype())
        .device(device);
    let mut out = match format {
        MemoryFormat::ChannelsLast | MemoryFormat::ChannelsLast3d => {
            let strides = crate::ops::storage::format_strides_sym(&sizes, format)?;
            Tensor::empty_strided_symint(&sizes, &strides, options)?
        }
        _ => Tensor::empty_symint(&sizes, options)?,
    };
    finish_copy(&mut out, t)?;
    Ok(out)
}

/// The symbolic face of [`contiguous`]: `t` itself where contiguity in
/// `format` holds (c10's cached flag, else `is_contiguous_or_false`: a
/// guard on backed sizes, false where unbacked ones leave it open),
/// else [`clone_sym`].
#[cold]
#[inline(never)]
fn contiguous_sym(t: &Tensor, format: MemoryFormat) -> Result<Tensor> {
    let (sizes, strides) = (t.sym_sizes(), t.sym_strides());
    let holds = match format {
        MemoryFormat::Contiguous => {
            t.cached_is_contiguous() == Some(true) || t.sym_is_contiguous()?.guard_or_false()?
        }
        MemoryFormat::ChannelsLast | MemoryFormat::ChannelsLast3d => {
            let want = if format == MemoryFormat::ChannelsLast {
                4
            } else {
                5
            };
            sizes.len() == want
                && c10_core::sym::rules::is_channels_last_contiguous(&sizes, &strides)?
        }
        MemoryFormat::Preserve => {
            return Err(TensorError::runtime(
                "preserve memory format is unsupported by the contiguous operator",
            ))
        }
    };
    if holds {
        return Ok(t.clone());
    }
    clone_sym(t, format)
}

/// What PyTorch's autograd layer leaves on a new tensor that an operation
/// filled by copying `input`: with grad mode on, it requires grad (not a
/// leaf) when `input` does; and when `input` is an inference tensor used
/// outside inference mode, the copy reached the new tensor through an
/// in-place `copy_` that autograd saw, so its version is 1.
fn finish_copy(out: &mut Tensor, input: &Tensor) -> Result<()> {
    out.record_output_of(&[input]);
    if input.is_inference() && !out.is_inference() {
        out.bump_version()?;
    }
    Ok(())
}

/// `t.to(dtype)`: `t` itself (the same `TensorImpl`) when it already has
/// `dtype`, else a copy converted to `dtype` (PyTorch's `_to_copy`: the
/// layout of [`empty_like`] with `Preserve`, offset 0, version 0; C++
/// conversion rules, see the `copy` module docs).
///
/// ```
/// use aten_shape::copy::to_dtype;
/// use c10_core::{ScalarType, Tensor};
/// let t = Tensor::from_vec(vec![1.9f32, -2.5, 300.0], &[3])?;
/// let u = to_dtype(&t, ScalarType::Byte)?;
/// assert_eq!(u.to_vec::<u8>()?, vec![1, 254, 44]);
/// assert!(to_dtype(&t, ScalarType::Float)?.is_same(&t));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn to_dtype(t: &Tensor, dtype: ScalarType) -> Result<Tensor> {
    if t.dtype() == dtype {
        return Ok(t.clone());
    }
    let like = empty_like(t, MemoryFormat::Preserve)?;
    let options = TensorOptions::new().dtype(dtype).device(t.device());
    let mut out = Tensor::empty_strided(like.sizes(), like.strides(), options)?;
    copy_into(&out, t)?;
    finish_copy(&mut out, t)?;
    Ok(out)
}

/// ATen's `contiguous(t, memory_format)`: `t` itself (the same
/// `TensorImpl`, so [`Tensor::is_same`] holds) when it is already
/// contiguous in `format`, otherwise [`clone`]`(t, format)`.
///
/// `Preserve` is refused for a non-contiguous tensor (`preserve memory
/// format is unsupported by the contiguous operator`); `ChannelsLast` needs
/// 4 dims (`required rank 4 tensor to use channels_last format`).
///
/// ```
/// use aten_shape::copy::contiguous;
/// use c10_core::{MemoryFormat, Tensor, TensorOptions};
/// let t = Tensor::empty(&[2, 3], TensorOptions::new())?;
/// assert!(contiguous(&t, MemoryFormat::Contiguous)?.is_same(&t));
/// let tt = t.as_strided(&[3, 2], &[1, 3], None)?;
/// let c = contiguous(&tt, MemoryFormat::Contiguous)?;
/// assert_eq!((c.strides(), c.storage_offset()), (&[2i64, 1][..], 0));
/// assert!(contiguous(&tt, MemoryFormat::Preserve).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn contiguous(t: &Tensor, format: MemoryFormat) -> Result<Tensor> {
    if t.has_symbolic_sizes_strides() {
        return contiguous_sym(t, format);
    }
    if t.is_contiguous_in(format) {
        return Ok(t.clone());
    }
    if format == MemoryFormat::Preserve {
        return Err(TensorError::runtime(
            "preserve memory format is unsupported by the contiguous operator",
        ));
    }
    clone(t, format)
}

/// ATen's `dst.copy_(src)`: writes `src`, broadcast to `dst`'s sizes and
/// converted to `dst`'s dtype, into `dst`'s elements, and bumps `dst`'s
/// version once.
///
/// Errors, in PyTorch's order and words:
/// * `dst` has a dim of size > 1 with stride 0 (and is not dense):
///   `unsupported operation: more than one element of the written-to
///   tensor refers to a single memory location. ...`;
/// * `dst` and `src` are dense views of one storage that overlap without
///   being the same layout: `unsupported operation: some elements of the
///   input tensor and the written-to tensor refer to a single memory
///   location. ...`;
/// * shapes that do not broadcast: `The size of tensor a (3) must match the
///   size of tensor b (4) at non-singleton dimension 1`, or that broadcast
///   to more than `dst`: `output with shape [3, 1] doesn't match the
///   broadcast shape [3, 4]`;
/// * a read-only destination storage: the storage's error.
///
/// Other overlaps between the two sides (possible only through layouts that
/// are not dense) are allowed as in PyTorch; the source is then read in
/// full before anything is written. Views of one storage lock it once, so
/// they never deadlock.
///
/// ```
/// use aten_shape::copy::copy_;
/// use c10_core::{ScalarType, Tensor, TensorOptions};
/// let dst = Tensor::zeros(&[2, 3], TensorOptions::new().dtype(ScalarType::Int))?;
/// let row = Tensor::from_vec(vec![1.9f64, -2.5, 7.0], &[3])?;
/// copy_(&dst, &row)?; // broadcast over dim 0, double -> int truncates
/// assert_eq!(dst.to_vec::<i32>()?, vec![1, -2, 7, 1, -2, 7]);
/// assert_eq!(dst.version()?, 1);
/// let bad = Tensor::zeros(&[4], TensorOptions::new())?;
/// assert_eq!(
///     copy_(&dst, &bad).unwrap_err().to_string(),
///     "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn copy_(dst: &Tensor, src: &Tensor) -> Result<()> {
    // Symbolic tensors have no concrete sizes to copy over.
    dst.checked_sizes()?;
    src.checked_sizes()?;
    dst.check_inplace()?;
    if dst.is_inference() && !InferenceMode::is_enabled() {
        // c10 refuses in-place updates of inference tensors up front; the
        // version counter reports that error.
        dst.bump_version()?;
    }
    copy_into(dst, src)?;
    dst.bump_version()
}

/// `copy_` without the version bump (used by `clone`, whose result is new).
pub(crate) fn copy_into(dst: &Tensor, src: &Tensor) -> Result<()> {
    if dst.is_same(src) {
        return Ok(());
    }
    let (dst_dev, src_dev) = (dst.device(), src.device());
    if dst_dev.is_meta() {
        // Copies into meta tensors only check shapes.
        broadcast_shape_check(dst.sizes(), src.sizes())?;
        return Ok(());
    }
    if src_dev.is_meta() {
        return Err(TensorError::runtime(
            "Cannot copy out of meta tensor; no data!",
        ));
    }
    if bits::bits_differ(dst, src) {
        // Conjugate or negate while copying (PyTorch's `copy_` does it in
        // its kernel); off the path of tensors without those bits.
        return bits::copy_with_bits(dst, src);
    }
    let same_data = dst.dtype() == src.dtype() && dst.is_set_to(src);
    if same_data {
        return Ok(());
    }
    if has_internal_overlap(dst) {
        return Err(TensorError::runtime(INTERNAL_OVERLAP));
    }
    if is_partial_overlap(dst, src) {
        return Err(TensorError::runtime(PARTIAL_OVERLAP));
    }
    let src_strides = broadcast_strides(dst.sizes(), src.sizes(), src.strides())?;
    if dst.numel() == 0 {
        return Ok(());
    }
    let host = |d: Device| d.device_type().is_host_accessible();
    if host(dst_dev) && host(src_dev) {
        copy_cpu(dst, src, &src_strides)
    } else {
        copy_device(dst, src, &src_strides)
    }
}

/// Checks that `src` broadcasts to exactly `dst` (TensorIterator with
/// `resize_outputs(false)`).
fn broadcast_shape_check(dst: &[i64], src: &[i64]) -> Result<()> {
    // ATen's two-shape broadcast, `dst` being tensor a of its message.
    let shape = crate::infer::infer_broadcast_size(dst, src)?;
    if shape.as_slice() != dst {
        return Err(TensorError::runtime(format!(
            "output with shape {} doesn't match the broadcast shape {}",
            fmt_list(dst),
            fmt_list(&shape)
        )));
    }
    Ok(())
}

/// The strides of `src` expanded to `dst_sizes` (right-aligned; missing and
/// broadcast size-1 dims get stride 0).
fn broadcast_strides(
    dst_sizes: &[i64],
    src_sizes: &[i64],
    src_strides: &[i64],
) -> Result<Dims<i64>> {
    if dst_sizes == src_sizes {
        // Nothing to broadcast (the common case: clones, equal shapes).
        return Ok(Dims::from_slice(src_strides));
    }
    broadcast_shape_check(dst_sizes, src_sizes)?;
    let lead = dst_sizes.len() - src_sizes.len();
    let mut out: Dims<i64> = smallvec::smallvec![0; dst_sizes.len()];
    for (j, (&n, &s)) in src_sizes.iter().zip(src_strides).enumerate() {
        out[lead + j] = if n == dst_sizes[lead + j] { s } else { 0 };
    }
    Ok(out)
}

/// ATen's `has_internal_overlap(t) == MemOverlap::Yes`: not dense, and some
/// dim of size > 1 has stride 0. (Other overlapping layouts are "too hard"
/// for ATen and allowed.)
fn has_internal_overlap(t: &Tensor) -> bool {
    !t.is_non_overlapping_and_dense()
        && t.sizes()
            .iter()
            .zip(t.strides())
            .any(|(&n, &s)| n > 1 && s == 0)
}

/// ATen's `get_overlap_status(a, b) == Partial`: both dense, same storage,
/// and their spans overlap without being the same span with the same
/// strides.
fn is_partial_overlap(a: &Tensor, b: &Tensor) -> bool {
    if a.numel() == 0 || b.numel() == 0 {
        return false;
    }
    if !a.is_non_overlapping_and_dense() || !b.is_non_overlapping_and_dense() || !a.is_alias_of(b) {
        return false;
    }
    let span = |t: &Tensor| {
        let begin = i128::from(t.storage_offset()) * t.element_size() as i128;
        (
            begin,
            begin + i128::from(t.numel()) * t.element_size() as i128,
        )
    };
    let ((a0, a1), (b0, b1)) = (span(a), span(b));
    if a0 == b0 && a1 == b1 {
        return a.strides() != b.strides();
    }
    a0 < b1 && b0 < a1
}

/// Byte range `[lo, hi)` touched by a layout, checked against `nbytes`.
fn checked_byte_range(
    sizes: &[i64],
    strides: &[i64],
    offset: i64,
    elem: usize,
    nbytes: usize,
) -> Result<Option<(usize, usize)>> {
    let Some((lo, hi)) = element_offset_range(sizes, strides, offset) else {
        return Ok(None);
    };
    let e = elem as i128;
    let (blo, bhi) = (lo * e, (hi + 1) * e);
    if blo < 0 || bhi > nbytes as i128 {
        return Err(TensorError::runtime(format!(
            "tensor with sizes {}, strides {} and storage offset {} does not fit in its storage of {} bytes (was the storage shrunk?)",
            fmt_list(sizes),
            fmt_list(strides),
            offset,
            nbytes
        )));
    }
    Ok(Some((blo as usize, bhi as usize)))
}

/// Whether a dtype can be copied byte for byte by the engine.
fn check_copyable(t: &Tensor) -> Result<()> {
    let dtype = t.dtype();
    if dtype.elements_per_byte() != 1 || !matches!(dtype.itemsize(), 1 | 2 | 4 | 8 | 16) {
        return Err(TensorError::runtime(format!(
            "copy_ is not supported for tensors of dtype {dtype}"
        )));
    }
    Ok(())
}

/// The CPU copy: plan, lock both storages, check bounds, run the kernel.
fn copy_cpu(dst: &Tensor, src: &Tensor, src_strides: &[i64]) -> Result<()> {
    check_copyable(dst)?;
    check_copyable(src)?;
    let converter = converter_for(dst, src)?;
    let bytes = usize::try_from(dst.numel())
        .unwrap_or(0)
        .saturating_mul(dst.element_size());
    // (Copies from `PARALLEL_MIN_BYTES` on are split across threads below.)
    if converter.is_none()
        && bytes < PARALLEL_MIN_BYTES
        && src_strides == dst.strides()
        && dst.is_non_overlapping_and_dense()
    {
        if copy_dense_span(dst, src)? {
            return Ok(());
        }
    }
    let (de, se) = (dst.element_size(), src.element_size());
    let plan = CopyPlan::new(dst.sizes(), dst.strides(), src_strides, de, se)
        .ok_or_else(|| TensorError::runtime("copy_: byte offsets of the layouts overflow"))?;
    let (mut guard, overwrite) = lock_for_copy(dst, src)?;
    let Some(sides) = locate_sides(dst, src, src_strides, &mut guard)? else {
        return Ok(()); // no elements
    };
    if sides.intersect {
        // The two sides may share bytes: read the source in full first
        // (and never read destination bytes that were not initialised).
        if let WriteReadGuard::Distinct { dst: g, .. } = &guard {
            g.initialize();
        }
        let layout = BufferedCopy {
            sizes: dst.sizes(),
            dst_strides: dst.strides(),
            src_strides,
            dst_elem: de,
            src_elem: se,
        };
        return layout.run(converter, sides.d0, sides.s0);
    }
    let threads = threads_for(dst, &plan);
    // SAFETY: both guards are held for the whole call; every element of
    // both layouts lies inside its buffer (checked_byte_range in
    // `locate_sides`, against the guarded sizes) and the plan visits
    // exactly those elements from `d0` and `s0`; the checked byte ranges of
    // the two sides do not intersect, so no destination byte is a source
    // byte; the element sizes match the plan (and the converter's dtypes).
    // `threads_for` only splits destinations that are non-overlapping and
    // dense, so the pieces' disjoint ranges of the outermost dim write
    // disjoint bytes; and `run_plan_threaded` returns (or unwinds) only
    // after every piece that any thread started has finished, so the
    // guards outlive all accesses.
    unsafe { run_plan_threaded(&plan, converter, sides.d0, sides.s0, threads) };
    if overwrite {
        if let WriteReadGuard::Distinct { dst: g, .. } = &mut guard {
            // SAFETY: the destination's elements are exactly the storage's
            // bytes (`is_dense_over`, checked under the lock in
            // `lock_for_copy`), and the plan just wrote every element.
            unsafe { g.assume_init() };
        }
    }
    Ok(())
}

/// The CPU copy between two layouts that are the same and dense (equal
/// sizes, equal strides, one dtype, the destination non-overlapping and
/// dense): element `i` of both sides sits at the same byte distance from
/// its element 0, and together the elements fill exactly `numel` elements'
/// bytes from there (dense strides are positive, or on size-1 dims,
/// unused), so the copy is one `memmove` of that span on the calling
/// thread. Copies below [`PARALLEL_MIN_BYTES`] (small `clone()`s) take
/// this path: it skips the copy plan and the general bounds walk.
/// `Ok(false)` (nothing done) when a side's span is not inside its
/// storage: the general path then reports that.
fn copy_dense_span(dst: &Tensor, src: &Tensor) -> Result<bool> {
    let (mut guard, overwrite) = lock_for_copy(dst, src)?;
    let e = dst.element_size();
    let (dst_base, src_base, dst_nbytes, src_nbytes) = match &mut guard {
        WriteReadGuard::Same(g) => {
            let p = g.as_mut_ptr();
            (p, p.cast_const(), g.nbytes(), g.nbytes())
        }
        WriteReadGuard::Distinct { dst, src } => {
            (dst.as_mut_ptr(), src.as_ptr(), dst.nbytes(), src.nbytes())
        }
    };
    // The span of each side: its first byte and length, where it lies
    // inside the guarded buffer.
    let span = |t: &Tensor, nbytes: usize| -> Option<(usize, usize)> {
        let start = usize::try_from(t.storage_offset()).ok()?.checked_mul(e)?;
        let len = usize::try_from(t.numel()).ok()?.checked_mul(e)?;
        (start.checked_add(len)? <= nbytes).then_some((start, len))
    };
    let (Some((d_start, len)), Some((s_start, _))) = (span(dst, dst_nbytes), span(src, src_nbytes))
    else {
        // A layout outside its storage (one shrunk since): the general
        // path reports it with PyTorch's message.
        drop(guard);
        return Ok(false);
    };
    if dst_base.is_null() {
        return Err(StorageError::NullData(dst_nbytes).into());
    }
    if src_base.is_null() {
        return Err(StorageError::NullData(src_nbytes).into());
    }
    let d0 = dst_base.wrapping_add(d_start);
    let s0 = src_base.wrapping_add(s_start);
    let (d_addr, s_addr) = (d0.addr(), s0.addr());
    if d_addr < s_addr + len && s_addr < d_addr + len {
        // The spans share bytes (storages sliced from one root): the
        // `memmove` reads the source in full first, as the buffered path
        // does, and may read destination bytes, so those must be
        // initialised.
        if let WriteReadGuard::Distinct { dst: g, .. } = &guard {
            g.initialize();
        }
    }
    // SAFETY: both guards are held until the end of this function; the
    // destination span `[d_start, d_start + len)` lies inside the
    // destination buffer of `dst_nbytes` bytes and the source span inside
    // the source buffer (checked just above against the guarded sizes),
    // neither pointer is null; `copy` allows the spans to overlap, and any
    // destination byte it reads was initialised just above; the write
    // guard makes this thread the buffers' only writer.
    unsafe { std::ptr::copy(s0, d0, len) };
    if overwrite {
        if let WriteReadGuard::Distinct { dst: g, .. } = &mut guard {
            // SAFETY: the destination's elements are exactly the storage's
            // bytes (`is_dense_over`, checked under the lock in
            // `lock_for_copy`), and they are the span just written.
            unsafe { g.assume_init() };
        }
    }
    Ok(true)
}

/// The element converter a copy from `src` to `dst` needs: none for equal
/// dtypes; an error for a pair the engine cannot convert.
fn converter_for(dst: &Tensor, src: &Tensor) -> Result<Option<Converter>> {
    if dst.dtype() == src.dtype() {
        return Ok(None);
    }
    Converter::new(src.dtype(), dst.dtype())
        .map(Some)
        .ok_or_else(|| {
            TensorError::runtime(format!(
                "copy_ from dtype {} to dtype {} is not supported",
                src.dtype(),
                dst.dtype()
            ))
        })
}

/// Locks both storages for the copy (one guard when they are the same
/// storage), and says whether the copy overwrites the whole destination
/// storage. A destination whose elements are every byte of its storage
/// (and which is not also the source) is written in full: a lazily
/// initialised storage then skips its zero fill (`write_uninit`), and the
/// caller marks it initialised once the copy has written it.
fn lock_for_copy<'a>(dst: &'a Tensor, src: &'a Tensor) -> Result<(WriteReadGuard<'a>, bool)> {
    let overwrite =
        !dst.storage().is_alias_of(src.storage()) && dst.is_dense_over(dst.storage().nbytes());
    let guard = if overwrite {
        Storage::lock_write_uninit_read(dst.storage(), src.storage())?
    } else {
        Storage::lock_write_read(dst.storage(), src.storage())?
    };
    let overwrite = match &guard {
        // The size checked before locking may have changed since (another
        // handle resized the storage): decide again under the lock.
        WriteReadGuard::Distinct { dst: g, .. } if overwrite => {
            let still = dst.is_dense_over(g.nbytes());
            if !still {
                g.initialize();
            }
            still
        }
        _ => false,
    };
    Ok((guard, overwrite))
}

/// Element 0 of each side of a copy, under the guards, and whether the
/// byte ranges the two layouts reach intersect.
struct Sides {
    d0: *mut u8,
    s0: *const u8,
    intersect: bool,
}

/// [`Sides`] of a copy: the byte range each layout reaches is checked
/// against its guarded buffer (PyTorch's errors for a layout outside its
/// storage); `None` when there are no elements.
fn locate_sides(
    dst: &Tensor,
    src: &Tensor,
    src_strides: &[i64],
    guard: &mut WriteReadGuard<'_>,
) -> Result<Option<Sides>> {
    let (de, se) = (dst.element_size(), src.element_size());
    let (dst_base, src_base, dst_nbytes, src_nbytes) = match guard {
        WriteReadGuard::Same(g) => {
            let p = g.as_mut_ptr();
            (p, p.cast_const(), g.nbytes(), g.nbytes())
        }
        WriteReadGuard::Distinct { dst, src } => {
            (dst.as_mut_ptr(), src.as_ptr(), dst.nbytes(), src.nbytes())
        }
    };
    let dst_range = checked_byte_range(
        dst.sizes(),
        dst.strides(),
        dst.storage_offset(),
        de,
        dst_nbytes,
    )?;
    let src_range = checked_byte_range(
        dst.sizes(),
        src_strides,
        src.storage_offset(),
        se,
        src_nbytes,
    )?;
    let (Some(dst_range), Some(src_range)) = (dst_range, src_range) else {
        return Ok(None);
    };
    if dst_base.is_null() {
        return Err(StorageError::NullData(dst_nbytes).into());
    }
    if src_base.is_null() {
        return Err(StorageError::NullData(src_nbytes).into());
    }
    // Element 0 of each side; every element lies within the checked ranges.
    let d0 = dst_base.wrapping_add(usize::try_from(dst.storage_offset()).unwrap_or(0) * de);
    let s0 = src_base.wrapping_add(usize::try_from(src.storage_offset()).unwrap_or(0) * se);
    let intersect =
        |(a0, a1): (usize, usize), pa: *const u8, (b0, b1): (usize, usize), pb: *const u8| {
            let (a0, a1) = (pa.addr() + a0, pa.addr() + a1);
            let (b0, b1) = (pb.addr() + b0, pb.addr() + b1);
            a0 < b1 && b0 < a1
        };
    Ok(Some(Sides {
        d0,
        s0,
        intersect: intersect(dst_range, dst_base.cast_const(), src_range, src_base),
    }))
}

/// Copies whose destination has at least this many bytes are split into up
/// to [`copy_threads`] pieces that run on rayon's thread pool (see
/// [`set_copy_threads`]); smaller copies run on the calling thread.
/// Measured on the 2-core benchmark machine with the pool (`docs/benchmarks.md`,
/// "Copies from 1 MiB on all cores"): at 256 KiB two pieces tie on
/// transposes and lose on dense clones (13.6 µs against 9.6 µs); from
/// 1 MiB they win on both, about 2x (each core's cache then holds half the
/// copy). ATen splits earlier still (its grain is 32 768 elements). Each
/// thread's share is cut into a few pieces (see `SplitCopy`), so that a
/// helper that starts late costs nothing.
pub const PARALLEL_MIN_BYTES: usize = 1 << 20;

/// The number of pieces large CPU copies may be split into; 0 means "not
/// set" (all available cores).
static COPY_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Sets into how many pieces, run in parallel, a CPU copy of at least
/// [`PARALLEL_MIN_BYTES`] destination bytes (`contiguous`, `clone`,
/// `copy_`) may be split, like `at::set_num_threads` for ATen's copies; `0`
/// restores the default (the number of available cores). Smaller copies,
/// and copies into destinations that are not non-overlapping and dense,
/// always run on the calling thread.
///
/// The pieces run on [rayon](https://docs.rs/rayon)'s thread pool, so a
/// copy starts no thread: on the pool the calling thread is a worker of
/// (inside a user's `ThreadPool::install`, `par_iter` or `join`), and
/// otherwise on rayon's global pool (started by the first large copy if
/// nothing started it before; a program that configures it with
/// `ThreadPoolBuilder::build_global` must do so earlier). The calling
/// thread takes pieces too, and waits only for pieces that other workers
/// have already begun, so a copy never uses more threads than that pool
/// has, and inside a busy pool (the user's own `par_iter`) the calling
/// thread simply does every piece: nothing is oversubscribed. The pool's
/// size is rayon's (`RAYON_NUM_THREADS`, the user's builder); this count
/// only limits how much of it one copy asks for. If rayon's global pool
/// cannot be started (the system refuses threads), copies run on the
/// calling thread (rayon reports that failure once, as a caught panic,
/// through the panic hook).
///
/// The count is capped at the number of available cores
/// (`std::thread::available_parallelism`, 1 if unknown): more pieces than
/// cores cannot make a memory-bound copy faster, and an unbounded count
/// (`usize::MAX`) once had a 16 MiB copy spawn about a million OS
/// threads. [`copy_threads`] reports the capped value.
///
/// ```
/// use aten_shape::copy::{copy_threads, set_copy_threads};
/// set_copy_threads(1);
/// assert_eq!(copy_threads(), 1);
/// set_copy_threads(usize::MAX);
/// assert_eq!(copy_threads(), std::thread::available_parallelism().map_or(1, |n| n.get()));
/// set_copy_threads(0);
/// assert!(copy_threads() >= 1);
/// ```
pub fn set_copy_threads(n: usize) {
    COPY_THREADS.store(n.min(available_cores()), Ordering::Relaxed);
}

/// The number of pieces a large CPU copy is split into at most (see
/// [`set_copy_threads`]): at least 1 and at most the number of available
/// cores.
///
/// ```
/// use aten_shape::copy::{copy_threads, set_copy_threads};
/// set_copy_threads(2);
/// assert_eq!(copy_threads(), 2);
/// ```
pub fn copy_threads() -> usize {
    match COPY_THREADS.load(Ordering::Relaxed) {
        0 => available_cores(),
        n => n,
    }
}

/// `std::thread::available_parallelism`, read once (it may read cgroup
/// files); 1 when it cannot be determined.
fn available_cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Into how many pieces to split `plan` (writing `dst`).
fn threads_for(dst: &Tensor, plan: &CopyPlan) -> usize {
    let bytes = usize::try_from(dst.numel())
        .unwrap_or(0)
        .saturating_mul(dst.element_size());
    if bytes < PARALLEL_MIN_BYTES || !dst.is_non_overlapping_and_dense() {
        return 1;
    }
    // At least a few outer indices per piece.
    copy_threads().min(plan.outer_len() / 4).max(1)
}

/// How many rayon workers, besides the calling thread, may help with a
/// copy: the other workers of the pool the calling thread belongs to, or
/// the workers of the global pool; 0 when the global pool cannot start.
fn pool_helpers() -> usize {
    if rayon::current_thread_index().is_some() {
        // A worker: `current_num_threads` is its own pool's size.
        return rayon::current_num_threads().saturating_sub(1);
    }
    // Outside any pool, rayon's entry points use the global pool, starting
    // it on first use, and panic if it cannot start (then they always
    // will): find out once, without letting the panic escape.
    static GLOBAL_THREADS: OnceLock<usize> = OnceLock::new();
    *GLOBAL_THREADS
        .get_or_init(|| std::panic::catch_unwind(rayon::current_num_threads).unwrap_or(0))
}

/// One copy split into pieces (ranges of the plan's outermost dim), shared
/// by the calling thread and the rayon jobs that help it.
///
/// Any thread claims the next piece with one atomic increment, so each
/// piece runs exactly once, on whichever thread claims it; the calling
/// thread claims until none is left, then waits for the pieces that helpers
/// claimed to finish: it spins on `finished_pieces` for up to
/// [`SPIN_WAIT`], then blocks on `finished` (a plain blocking wait that
/// runs no other rayon job). A helper job that starts after that finds
/// nothing to claim and never touches the pointers.
///
/// There are several pieces per thread ([`PIECES_PER_THREAD`]), so that a
/// helper that wakes up late takes what is left instead of the calling
/// thread waiting for a half it has not started: on a machine whose threads
/// take microseconds to wake (the 2-core VM of `docs/benchmarks.md`), a
/// copy split in halves was sometimes slower than one thread.
struct SplitCopy {
    plan: CopyPlan,
    converter: Option<Converter>,
    /// Element 0 of each side (valid only until the calling thread's
    /// [`SplitCopy::wait`] returns).
    dst: *mut u8,
    src: *const u8,
    /// Outer indices per piece (the last piece may have fewer).
    chunk: usize,
    /// Number of pieces, each non-empty.
    pieces: usize,
    /// The next piece to claim; a value of `pieces` or more claims nothing.
    next: AtomicUsize,
    /// Pieces finished, and the first panic of a piece.
    done: Mutex<Done>,
    /// `done.pieces`, readable without the lock: what [`SplitCopy::wait`]
    /// spins on (raised after `done`, so a piece's panic is recorded
    /// before it shows here).
    finished_pieces: AtomicUsize,
    /// Signalled when a piece finishes while the calling thread sleeps.
    finished: Condvar,
}

/// [`SplitCopy`]'s progress.
struct Done {
    pieces: usize,
    panic: Option<Box<dyn std::any::Any + Send>>,
    /// Whether the calling thread sleeps on `finished` (it spins first):
    /// only then does a finished piece pay for a wake-up.
    sleeping: bool,
}

/// Pieces per thread of a split copy (see [`SplitCopy`]).
const PIECES_PER_THREAD: usize = 4;

/// How long [`SplitCopy::wait`] spins for the helpers' pieces before it
/// sleeps. A piece is a fraction of a copy that was worth splitting (tens
/// of microseconds in all), so the wait is usually shorter than a sleep
/// and wake-up.
const SPIN_WAIT: std::time::Duration = std::time::Duration::from_micros(50);

// SAFETY: the raw pointers are the only fields that are not `Send` and
// `Sync`. They are dereferenced only by `SplitCopy::help`, for a claimed
// piece: pieces are disjoint ranges of the plan's outermost dim, which
// write disjoint destination bytes (only non-overlapping and dense
// destinations are split), and the source is only read; and every claimed
// piece finishes before the calling thread's `wait` returns, while the
// calling thread still holds both storages' guards. Other threads may hold
// (and drop) the `Arc` later, but then no piece is left to claim.
unsafe impl Send for SplitCopy {}
// SAFETY: as for `Send`: shared access only claims pieces (atomically),
// reads the plan, and runs disjoint pieces.
unsafe impl Sync for SplitCopy {}

impl SplitCopy {
    /// The next unclaimed piece's range of outer indices, if any.
    fn claim(&self) -> Option<std::ops::Range<usize>> {
        // At most `pieces` plus one per helper and the caller increments:
        // it cannot wrap.
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if i >= self.pieces {
            return None;
        }
        let start = i * self.chunk; // < outer_len, as i < pieces
        Some(start..start.saturating_add(self.chunk).min(self.plan.outer_len()))
    }

    /// Claims and runs pieces until none is left, catching (and recording)
    /// a panic of a piece so that every claimed piece is counted as
    /// finished.
    fn help(&self) {
        while let Some(range) = self.claim() {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // SAFETY: a claimed piece runs before the calling thread's
                // `wait` returns, so the guards it holds keep both buffers
                // alive and locked; the ranges of distinct pieces are
                // disjoint, so they write disjoint destination bytes; the
                // rest of `run_plan`'s contract holds for the whole plan
                // (see `run_plan_threaded`).
                unsafe { run_range(&self.plan, self.converter, self.dst, self.src, range) }
            }));
            let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
            done.pieces += 1;
            if let Err(payload) = result {
                done.panic.get_or_insert(payload);
            }
            self.finished_pieces.store(done.pieces, Ordering::Release);
            let wake = done.sleeping;
            drop(done);
            if wake {
                self.finished.notify_all();
            }
        }
    }

    /// Stops further claims and waits until every claimed piece has
    /// finished; returns the first panic of a piece.
    fn wait(&self) -> Option<Box<dyn std::any::Any + Send>> {
        let claimed = self
            .next
            .swap(self.pieces, Ordering::Relaxed)
            .min(self.pieces);
        if self.finished_pieces.load(Ordering::Acquire) < claimed {
            let start = std::time::Instant::now();
            'spin: loop {
                for _ in 0..64 {
                    if self.finished_pieces.load(Ordering::Acquire) >= claimed {
                        break 'spin;
                    }
                    std::hint::spin_loop();
                }
                if start.elapsed() >= SPIN_WAIT {
                    break;
                }
            }
        }
        // `sleeping` is set and read under the lock, so a piece that
        // finishes after this thread's last look at `pieces` sees it and
        // wakes it.
        let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        while done.pieces < claimed {
            done.sleeping = true;
            done = self
                .finished
                .wait(done)
                .unwrap_or_else(PoisonError::into_inner);
        }
        done.panic.take()
    }
}

/// Waits for a [`SplitCopy`]'s claimed pieces when dropped, so that even
/// an unwinding calling thread keeps its guards until no helper writes.
struct WaitOnDrop<'a>(&'a SplitCopy);

impl Drop for WaitOnDrop<'_> {
    fn drop(&mut self) {
        // A panic of a piece is dropped here only when the calling thread
        // is already unwinding; otherwise `run_plan_threaded` has taken it.
        drop(self.0.wait());
    }
}

/// [`run_plan`], with the outermost dim split into `threads` contiguous
/// ranges that the calling thread and helper jobs on rayon's pool run in
/// parallel (see [`SplitCopy`] and [`set_copy_threads`]). With no pool
/// workers to help (the global pool cannot start, or the pool has a single
/// thread) the calling thread runs every range.
///
/// Not `rayon::scope` or `rayon::join`: a worker blocked in those runs
/// other jobs of its pool while it waits (the user's, too), and those jobs
/// would run while this thread holds the copy's storage guards: one that
/// locks the same storage would fail with `StorageError::Reentrant`, and
/// one that waits for another thread's guard could deadlock with it.
///
/// # Safety
///
/// As for [`run_plan`]; moreover, when `threads > 1`, distinct indices of
/// the plan's outermost dim must write distinct destination bytes.
unsafe fn run_plan_threaded(
    plan: &CopyPlan,
    converter: Option<Converter>,
    dst: *mut u8,
    src: *const u8,
    threads: usize,
) {
    let outer = plan.outer_len();
    let helpers = if threads <= 1 || outer < 2 {
        0
    } else {
        pool_helpers().min(threads - 1)
    };
    if helpers == 0 {
        // SAFETY: forwarded from the caller.
        unsafe { run_plan(plan, converter, dst, src) };
        return;
    }
    let chunk = outer.div_ceil(threads.saturating_mul(PIECES_PER_THREAD).min(outer));
    let split = Arc::new(SplitCopy {
        plan: plan.clone(),
        converter,
        dst,
        src,
        chunk,
        pieces: outer.div_ceil(chunk),
        next: AtomicUsize::new(0),
        done: Mutex::new(Done {
            pieces: 0,
            panic: None,
            sleeping: false,
        }),
        finished_pieces: AtomicUsize::new(0),
        finished: Condvar::new(),
    });
    let waiter = WaitOnDrop(&split);
    for _ in 0..helpers {
        let job = Arc::clone(&split);
        // `rayon::spawn` queues the job on the calling worker's own pool
        // (or the global pool, known to have started); it cannot fail
        // after that, but a panic here must not escape while pieces may be
        // running: the calling thread then does the remaining pieces.
        let spawned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rayon::spawn(move || job.help())
        }));
        if spawned.is_err() {
            break;
        }
    }
    split.help();
    let panic = split.wait();
    drop(waiter);
    if let Some(payload) = panic {
        // A bug in a kernel: surface it as the single-threaded copy would.
        std::panic::resume_unwind(payload);
    }
}

/// Runs the outer indices `range` of a plan with the same-dtype kernel or
/// the converter.
///
/// # Safety
///
/// As for `kernel::copy_same_dtype` (same dtype) or `Converter::run`.
unsafe fn run_range(
    plan: &CopyPlan,
    converter: Option<Converter>,
    dst: *mut u8,
    src: *const u8,
    range: std::ops::Range<usize>,
) {
    // SAFETY: forwarded from the caller.
    unsafe {
        match converter {
            None => copy_same_dtype(plan, dst, src, range),
            Some(c) => c.run(plan, dst, src, range),
        }
    }
}

/// Runs a whole plan with the same-dtype kernel or the converter.
///
/// # Safety
///
/// As for `kernel::copy_same_dtype` (same dtype) or `Converter::run`.
unsafe fn run_plan(plan: &CopyPlan, converter: Option<Converter>, dst: *mut u8, src: *const u8) {
    // SAFETY: forwarded from the caller.
    unsafe { run_range(plan, converter, dst, src, 0..plan.outer_len()) }
}

/// A copy whose source may share bytes with its destination: the source
/// is gathered into a private row-major buffer first, then copied from
/// there.
struct BufferedCopy<'a> {
    sizes: &'a [i64],
    dst_strides: &'a [i64],
    src_strides: &'a [i64],
    dst_elem: usize,
    src_elem: usize,
}

impl BufferedCopy<'_> {
    /// Runs the copy from element 0 of each side (`dst`, `src`).
    ///
    /// The caller holds the guards and has checked both layouts against
    /// the guarded buffers, relative to `dst` and `src`.
    fn run(&self, converter: Option<Converter>, dst: *mut u8, src: *const u8) -> Result<()> {
        let overflow = || TensorError::runtime("copy_: byte offsets of the layouts overflow");
        let numel = usize::try_from(c10_core::geometry::compute_numel(self.sizes)?)
            .map_err(|_| overflow())?;
        let bytes = numel.checked_mul(self.src_elem).ok_or_else(overflow)?;
        // Reserved fallibly: a failed reservation is an out-of-memory error,
        // not the global allocator's abort.
        let mut buf = c10_core::access::try_vec_with_capacity::<u8>(bytes as u64, "copy_")?;
        buf.resize(bytes, 0);
        let row_major = c10_core::geometry::contiguous_strides(self.sizes)?;
        let (se, de) = (self.src_elem, self.dst_elem);
        let gather =
            CopyPlan::new(self.sizes, &row_major, self.src_strides, se, se).ok_or_else(overflow)?;
        // SAFETY: the source layout lies inside its guarded buffer (caller);
        // `buf` holds exactly the `numel` row-major elements the plan
        // writes, and is a fresh allocation, so disjoint from the source.
        unsafe { copy_same_dtype(&gather, buf.as_mut_ptr(), src, 0..gather.outer_len()) };
        let scatter =
            CopyPlan::new(self.sizes, self.dst_strides, &row_major, de, se).ok_or_else(overflow)?;
        // SAFETY: the destination layout lies inside its guarded buffer
        // (caller); the source is `buf` in row-major order, disjoint from
        // the destination; element sizes match the plan and converter.
        unsafe { run_plan(&scatter, converter, dst, buf.as_ptr()) };
        Ok(())
    }
}

/// Copies involving a tensor that is not in host memory, through the
/// registered device operations (staging dtype conversions on the CPU).
fn copy_device(dst: &Tensor, src: &Tensor, src_strides: &[i64]) -> Result<()> {
    let src_b = src.view_with_geometry(dst.sizes(), src_strides, src.storage_offset())?;
    let (dt, st) = (dst.device().device_type(), src.device().device_type());
    let host = |t: DeviceType| t.is_host_accessible();
    if dst.dtype() == src.dtype() && (host(dt) || host(st) || dt == st) {
        let ty = if host(dt) { st } else { dt };
        return device_ops(ty)?.copy(dst, &src_b);
    }
    // Bring the source to the CPU in its own dtype.
    let on_cpu = if host(st) {
        src_b
    } else {
        let tmp = Tensor::empty(
            dst.sizes(),
            TensorOptions::new().dtype(src.dtype()).device(Device::CPU),
        )?;
        device_ops(st)?.copy(&tmp, &src_b)?;
        tmp
    };
    if host(dt) {
        return copy_into(dst, &on_cpu);
    }
    let converted = if on_cpu.dtype() == dst.dtype() {
        on_cpu
    } else {
        let tmp = Tensor::empty(
            dst.sizes(),
            TensorOptions::new().dtype(dst.dtype()).device(Device::CPU),
        )?;
        copy_into(&tmp, &on_cpu)?;
        tmp
    };
    device_ops(dt)?.copy(dst, &converted)
}

/// The copy ops as methods on [`Tensor`] (`use aten_shape::prelude::*`).
///
/// ```
/// use aten_shape::copy::CopyOps;
/// use c10_core::{MemoryFormat, ScalarType, Tensor};
/// let t = Tensor::arange(0, 6, 1, ScalarType::Float)?.as_strided(&[2, 3], &[1, 2], None)?;
/// let c = t.contiguous()?;
/// assert_eq!((c.strides(), c.to_vec::<f32>()?), (&[3i64, 1][..], vec![0.0, 2.0, 4.0, 1.0, 3.0, 5.0]));
/// let k = t.clone_in(MemoryFormat::Preserve)?;
/// assert_eq!(k.strides(), t.strides());
/// k.copy_(&c)?;
/// assert_eq!(k.to_vec::<f32>()?, c.to_vec::<f32>()?);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait CopyOps: crate::sealed::Sealed {
    /// [`clone`] in `format` (PyTorch's `clone(memory_format=format)`).
    /// The suffix `_in` always means "in this memory format"
    /// (`clone_in`, `contiguous_in`, `Tensor::is_contiguous_in`); `_as`
    /// always means "shaped like that tensor" (`view_as`, `reshape_as`,
    /// `expand_as`), as in PyTorch. Plain `clone` is not a method here so
    /// it does not clash with `Clone::clone`, which copies the handle.
    fn clone_in(&self, format: MemoryFormat) -> Result<Tensor>;
    /// [`contiguous`] in row-major format.
    fn contiguous(&self) -> Result<Tensor>;
    /// [`contiguous`] in `format` (PyTorch's
    /// `contiguous(memory_format=format)`).
    fn contiguous_in(&self, format: MemoryFormat) -> Result<Tensor>;
    /// [`copy_`]`(self, src)`.
    fn copy_(&self, src: &Tensor) -> Result<()>;
    /// [`empty_like`] in `format`.
    fn empty_like(&self, format: MemoryFormat) -> Result<Tensor>;
}

impl CopyOps for Tensor {
    fn clone_in(&self, format: MemoryFormat) -> Result<Tensor> {
        clone(self, format)
    }
    fn contiguous(&self) -> Result<Tensor> {
        contiguous(self, MemoryFormat::Contiguous)
    }
    fn contiguous_in(&self, format: MemoryFormat) -> Result<Tensor> {
        contiguous(self, format)
    }
    fn copy_(&self, src: &Tensor) -> Result<()> {
        copy_(self, src)
    }
    fn empty_like(&self, format: MemoryFormat) -> Result<Tensor> {
        empty_like(self, format)
    }
}
