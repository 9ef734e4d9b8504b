//! [`CudaDeviceOps`]: copies and fills for CUDA tensors, registered with
//! `c10_core::register_device_ops`, and [`to_device`].
//!
//! The stream discipline is documented on [`CudaDeviceOps`].

use c10_core::access::element_offset_range;
use c10_core::{DeviceOps, InferenceMode, Result, Tensor, TensorError, TensorOptions};
use c10_storage::{DataPtr, Device, DeviceType, Storage, WriteReadGuard};
use cudarc::driver::sys;

use super::allocator::DeviceAllocator;
use super::driver::call;
use super::error::CudaError;
use super::kernels::{kernels, note_fallback, Kernels};
use super::layout::{
    coalesce, host_copy, host_fill, is_dense, memset_for, row_major, span, Memset, Plan,
};
use super::runtime::{init, CudaRuntime};
use super::stream::{current_device, resolve, DeviceGuard};
use crate::device::StreamId;
use crate::stream::current_stream;

/// The CUDA implementation of `c10_core::DeviceOps`: host↔device and
/// device↔device copies for any layouts, and fills.
///
/// # Streams, events and synchronization
///
/// Every operation runs on the thread's current stream of the device
/// involved ([`current_stream`](crate::current_stream)):
///
/// * **device to device** is asynchronous: a `cuMemcpyDtoDAsync` for
///   copies that are one contiguous run on both sides, otherwise the strided
///   kernel. Temporaries come from the registered allocator on the same
///   stream and are freed right after the launch, which is safe because the
///   allocators reuse (or free) memory in stream order.
/// * **host to device** from the caller's memory, when it is one
///   contiguous run on both sides, is a `cuMemcpyHtoDAsync` followed by a
///   stream synchronization, so the caller's buffer is free again when the
///   call returns (even if it is page-locked memory). Other layouts are
///   gathered on the host into a page-locked staging block from the
///   [`PinnedHostAllocator`](crate::cuda::PinnedHostAllocator), copied
///   asynchronously, and the staging block is released with an event
///   recorded on the stream, so it is reused only after the copy has
///   completed; the call returns without waiting.
/// * **device to host** always synchronizes the stream before returning,
///   so the host sees the data; non-contiguous sources are gathered on the
///   device first (strided kernel into a temporary), or the covering byte
///   range is copied to a staging block and gathered on the host.
/// * **fills** use `cuMemsetD8/16/32Async` when the destination is dense
///   and the element's bytes repeat a 1-, 2- or 4-byte pattern, otherwise
///   the fill kernel; both are asynchronous.
/// * **between two devices** the data goes through a host staging buffer
///   (device to host, then host to device).
///
/// The strided kernels are compiled with NVRTC at first use (see
/// [`KERNEL_SOURCE`](crate::cuda::KERNEL_SOURCE)). Without NVRTC (or when
/// compilation fails, or the layout needs more than 12 dims after
/// coalescing) every path still works through host staging: the covering
/// byte range of a strided device tensor is read, rearranged on the host
/// and, for writes, written back (with a device synchronization first, as
/// that read-modify-write also rewrites the bytes between the elements).
#[derive(Debug, Clone, Copy)]
pub struct CudaDeviceOps {
    use_kernels: bool,
}

impl CudaDeviceOps {
    /// Device operations; `use_kernels: false` never compiles or launches
    /// the NVRTC kernels and takes the host-staging paths instead (what
    /// happens anyway without NVRTC). Initialises CUDA (see
    /// [`init`](crate::cuda::init)).
    pub fn new(use_kernels: bool) -> std::result::Result<CudaDeviceOps, CudaError> {
        init()?;
        Ok(CudaDeviceOps { use_kernels })
    }

    pub(crate) const fn unchecked(use_kernels: bool) -> CudaDeviceOps {
        CudaDeviceOps { use_kernels }
    }

    /// Whether the NVRTC kernels may be used.
    pub fn uses_kernels(&self) -> bool {
        self.use_kernels
    }
}

/// Where a tensor's memory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loc {
    Host,
    Cuda(i8),
}

fn loc(d: Device) -> std::result::Result<Loc, CudaError> {
    let t = d.device_type();
    if t.is_host_accessible() {
        Ok(Loc::Host)
    } else if t == DeviceType::Cuda {
        Ok(Loc::Cuda(if d.index() < 0 {
            current_device()
        } else {
            d.index()
        }))
    } else {
        Err(CudaError::Unsupported(format!(
            "the CUDA device operations cannot reach {d} memory"
        )))
    }
}

fn runtime_err(msg: impl Into<String>) -> TensorError {
    TensorError::Runtime(msg.into())
}

/// The element size of `t`, if the copy engine can move it.
fn itemsize(t: &Tensor) -> Result<usize> {
    let dtype = t.dtype();
    let e = dtype.itemsize();
    if dtype.elements_per_byte() != 1 || !matches!(e, 1 | 2 | 4 | 8 | 16) {
        return Err(runtime_err(format!(
            "copies of CUDA tensors of dtype {dtype} are not supported"
        )));
    }
    Ok(e)
}

/// Checks that `t`'s elements lie in its buffer of `nbytes` bytes; returns
/// the byte offset of its first element and its byte range.
fn checked(t: &Tensor, e: usize, nbytes: usize) -> Result<(i128, (i128, i128))> {
    let (sizes, strides, off) = (t.sizes(), t.strides(), t.storage_offset());
    let Some((lo, hi)) = element_offset_range(sizes, strides, off) else {
        return Ok((0, (0, 0)));
    };
    let e = e as i128;
    let (blo, bhi) = (lo * e, (hi + 1) * e);
    if blo < 0 || bhi > nbytes as i128 {
        return Err(runtime_err(format!(
            "tensor with sizes {:?}, strides {:?} and storage offset {} does not fit in its storage of {} bytes (was the storage shrunk?)",
            sizes, strides, off, nbytes
        )));
    }
    Ok((i128::from(off) * e, (blo, bhi)))
}

/// `base + elems · e` as a device address.
fn at(base: u64, elems: i64, e: usize) -> u64 {
    (i128::from(base) + i128::from(elems) * e as i128) as u64
}

/// The geometry of one strided copy: the common sizes, the element size
/// `e` in bytes and the destination's and source's strides (elements).
#[derive(Clone, Copy)]
struct Strided<'a> {
    sizes: &'a [i64],
    e: usize,
    ds: &'a [i64],
    ss: &'a [i64],
}

impl Strided<'_> {
    /// The coalesced plan of the copy and the bytes it moves.
    fn plan(&self) -> (Plan, usize) {
        let plan = coalesce(self.sizes, self.ds, self.ss);
        let bytes = plan.numel() as usize * self.e;
        (plan, bytes)
    }
}

/// The lowest element of the layout `sizes`/`strides` and the bytes from
/// it to the end of the highest: the range a staging copy must cover.
fn covering(sizes: &[i64], strides: &[i64], e: usize) -> (i64, usize) {
    let (lo, hi) = span(sizes, strides);
    (lo, (hi - lo + 1) as usize * e)
}

/// A host staging buffer: page-locked when the pinned allocator can
/// provide it, else ordinary heap memory.
enum Staging {
    Pinned(DataPtr),
    Heap(Vec<u64>),
}

impl Staging {
    fn new(rt: &CudaRuntime, nbytes: usize) -> Staging {
        match rt.pinned().allocate_pinned(nbytes.max(1)) {
            Ok(p) if !p.is_null() => Staging::Pinned(p),
            _ => Staging::Heap(vec![0u64; nbytes.div_ceil(8).max(1)]),
        }
    }

    fn ptr(&mut self) -> *mut u8 {
        match self {
            Staging::Pinned(p) => p.get(),
            Staging::Heap(v) => v.as_mut_ptr().cast(),
        }
    }

    /// The buffer's address shifted so that element `lo` (of `e` bytes)
    /// of a layout sits at its start: the base to index that layout from.
    fn base_for(&mut self, lo: i64, e: usize) -> *mut u8 {
        self.ptr().wrapping_offset(-(lo as isize) * e as isize)
    }
}

/// One operation's device, stream and helpers.
struct Env {
    rt: &'static CudaRuntime,
    index: i8,
    alloc: &'static DeviceAllocator,
    sid: StreamId,
    stream: sys::CUstream,
    kernels: Option<&'static Kernels>,
    /// Why the kernels are missing although they were wanted.
    kernel_error: Option<CudaError>,
}

type R<T> = std::result::Result<T, CudaError>;

impl Env {
    fn new(rt: &'static CudaRuntime, index: i8, use_kernels: bool) -> R<Env> {
        let alloc = rt.allocator().device(index)?;
        alloc.device().bind()?;
        let sid = current_stream(index);
        let stream = resolve(index, sid)?;
        let (kernels, kernel_error) = if use_kernels {
            match kernels(index) {
                Ok(k) => (Some(k), None),
                Err(e) => (None, Some(e)),
            }
        } else {
            (None, None)
        };
        Ok(Env {
            rt,
            index,
            alloc,
            sid,
            stream,
            kernels,
            kernel_error,
        })
    }

    /// Whether the kernels are loaded; when they were wanted but are not,
    /// counts the host-staging fallback the caller is about to take.
    fn kernels_usable(&self) -> bool {
        if self.kernels.is_none() {
            if let Some(e) = &self.kernel_error {
                note_fallback(e);
            }
        }
        self.kernels.is_some()
    }

    fn sync(&self) -> R<()> {
        let s = self.stream;
        // SAFETY: a live stream of this device (context bound in `new`).
        call("cuStreamSynchronize", || unsafe {
            sys::cuStreamSynchronize(s)
        })?;
        Ok(())
    }

    fn device_sync(&self) -> R<()> {
        // SAFETY: the device's context is bound.
        call("cuCtxSynchronize", || unsafe { sys::cuCtxSynchronize() })?;
        Ok(())
    }

    /// A device temporary of `nbytes` on this stream.
    fn temp(&self, nbytes: usize) -> R<(DataPtr, u64)> {
        let p = self.alloc.allocate_on_stream(nbytes.max(1), self.sid)?;
        let a = p.get().addr() as u64;
        Ok((p, a))
    }

    /// Releases a staging buffer used by work queued on the stream.
    fn release_async(&self, st: Staging) -> R<()> {
        match st {
            Staging::Pinned(p) => {
                let r = self.rt.pinned().record_event(p.get(), self.index, self.sid);
                if r.is_err() {
                    // Without an event, wait for the copy instead.
                    self.sync()?;
                }
                drop(p);
                r.or(Ok(()))
            }
            Staging::Heap(v) => {
                self.sync()?;
                drop(v);
                Ok(())
            }
        }
    }

    /// # Safety
    ///
    /// `dst` valid device memory for `n` bytes, `src` valid host memory for
    /// `n` bytes until the copy completes.
    unsafe fn htod(&self, dst: u64, src: *const u8, n: usize) -> R<()> {
        let s = self.stream;
        // SAFETY: the caller's contract.
        call("cuMemcpyHtoDAsync", || unsafe {
            sys::cuMemcpyHtoDAsync_v2(dst, src.cast(), n, s)
        })?;
        Ok(())
    }

    /// # Safety
    ///
    /// `src` valid device memory for `n` bytes, `dst` valid host memory for
    /// `n` bytes until the copy completes.
    unsafe fn dtoh(&self, dst: *mut u8, src: u64, n: usize) -> R<()> {
        let s = self.stream;
        // SAFETY: the caller's contract.
        call("cuMemcpyDtoHAsync", || unsafe {
            sys::cuMemcpyDtoHAsync_v2(dst.cast(), src, n, s)
        })?;
        Ok(())
    }

    /// # Safety
    ///
    /// Both ranges valid device memory of `n` bytes, not overlapping.
    unsafe fn dtod(&self, dst: u64, src: u64, n: usize) -> R<()> {
        let s = self.stream;
        // SAFETY: the caller's contract.
        call("cuMemcpyDtoDAsync", || unsafe {
            sys::cuMemcpyDtoDAsync_v2(dst, src, n, s)
        })?;
        Ok(())
    }

    /// The kernel and the plan it runs for a device-to-device copy, if the
    /// kernels are loaded and the (possibly byte-wise) plan fits.
    fn kernel_plan(
        &self,
        sizes: &[i64],
        e: usize,
        dst: u64,
        ds: &[i64],
        src: u64,
        ss: &[i64],
    ) -> Option<(&'static Kernels, Plan, usize)> {
        if !self.kernels_usable() {
            return None;
        }
        let k = self.kernels?;
        let plan = coalesce(sizes, ds, ss);
        let align = e.min(8) as u64;
        let (plan, e) = if dst.is_multiple_of(align) && src.is_multiple_of(align) {
            (plan, e)
        } else {
            (plan.as_bytes(e), 1)
        };
        if plan.kernel_layout().is_none() {
            note_fallback(&"the layout has more dims than the kernels take after coalescing");
            return None;
        }
        Some((k, plan, e))
    }

    /// # Safety
    ///
    /// Every element of the plan lies in valid device memory on both sides,
    /// which do not overlap.
    unsafe fn launch(&self, k: &Kernels, plan: &Plan, e: usize, dst: u64, src: u64) -> R<()> {
        let l = plan
            .kernel_layout()
            .ok_or_else(|| CudaError::Unsupported("too many dims for the copy kernel".into()))?;
        // SAFETY: the caller's contract; the plan was checked for alignment
        // by `kernel_plan`.
        unsafe { k.copy(e, dst, src, &l, self.stream)? };
        Ok(())
    }

    /// Host → device: `dst[ds]` (device) ← `src[ss]` (host).
    ///
    /// # Safety
    ///
    /// Every element of both layouts lies in valid memory (device memory for
    /// `dst`, host memory for `src`). Returns once `src` is no longer read.
    unsafe fn h2d(&self, l: Strided<'_>, dst: u64, src: *const u8) -> R<()> {
        let Strided { sizes, e, ds, ss } = l;
        let (plan, bytes) = l.plan();
        if plan.is_memcpy() {
            // SAFETY: one contiguous run of `bytes` on both sides; the
            // synchronization keeps `src` alive for the copy.
            unsafe { self.htod(dst, src, bytes)? };
            return self.sync();
        }
        if is_dense(sizes, ds) {
            // Gather into the destination's physical order, then one copy.
            let (lo, _) = span(sizes, ds);
            let mut st = Staging::new(self.rt, bytes);
            let base = st.base_for(lo, e);
            // SAFETY: the staging buffer covers the destination layout's
            // span (dense: exactly `bytes`), shifted so element 0 is at
            // `base`; `src` is valid for its layout.
            unsafe {
                host_copy(&plan, e, base, src);
                self.htod(at(dst, lo, e), st.ptr(), bytes)?;
            }
            return self.release_async(st);
        }
        let rm = row_major(sizes);
        if self.kernels_usable() {
            let (tmp, taddr) = self.temp(bytes)?;
            if let Some((k, p, pe)) = self.kernel_plan(sizes, e, dst, ds, taddr, &rm) {
                let gather = coalesce(sizes, &rm, ss);
                let mut st = Staging::new(self.rt, bytes);
                // SAFETY: staging and `tmp` hold `bytes` in row-major order;
                // `src` and `dst` are valid for their layouts.
                unsafe {
                    host_copy(&gather, e, st.ptr(), src);
                    self.htod(taddr, st.ptr(), bytes)?;
                    self.launch(k, &p, pe, dst, taddr)?;
                }
                self.release_async(st)?;
                drop(tmp);
                return Ok(());
            }
            drop(tmp);
        }
        // Read-modify-write of the destination's covering range.
        let (lo, m) = covering(sizes, ds, e);
        let mut st = Staging::new(self.rt, m);
        self.device_sync()?;
        // SAFETY: the covering range lies in the destination's buffer
        // (bounds-checked by the caller); the staging buffer holds `m`.
        unsafe {
            self.dtoh(st.ptr(), at(dst, lo, e), m)?;
            self.sync()?;
            host_copy(&plan, e, st.base_for(lo, e), src);
            self.htod(at(dst, lo, e), st.ptr(), m)?;
        }
        self.release_async(st)
    }

    /// Device → host: `dst[ds]` (host) ← `src[ss]` (device). Returns after
    /// synchronizing, with the data in `dst`.
    ///
    /// # Safety
    ///
    /// Every element of both layouts lies in valid memory.
    unsafe fn d2h(&self, l: Strided<'_>, dst: *mut u8, src: u64) -> R<()> {
        let Strided { sizes, e, ds, ss } = l;
        let (plan, bytes) = l.plan();
        if plan.is_memcpy() {
            // SAFETY: one contiguous run on both sides.
            unsafe { self.dtoh(dst, src, bytes)? };
            return self.sync();
        }
        if is_dense(sizes, ss) {
            let (lo, _) = span(sizes, ss);
            let mut st = Staging::new(self.rt, bytes);
            // SAFETY: the source's span is `bytes` long from `lo`; the
            // staging buffer holds it; `dst` is valid for its layout.
            unsafe {
                self.dtoh(st.ptr(), at(src, lo, e), bytes)?;
                self.sync()?;
                host_copy(&plan, e, dst, st.base_for(lo, e));
            }
            return Ok(());
        }
        if self.kernels_usable() {
            let (tmp, taddr) = self.temp(bytes)?;
            if is_dense(sizes, ds) {
                // Gather on the device straight into the host's order.
                let (dlo, _) = span(sizes, ds);
                let tbase = at(taddr, -dlo, e);
                if let Some((k, p, pe)) = self.kernel_plan(sizes, e, tbase, ds, src, ss) {
                    // SAFETY: `tmp` holds the destination layout's span.
                    unsafe {
                        self.launch(k, &p, pe, tbase, src)?;
                        self.dtoh(dst.wrapping_offset(dlo as isize * e as isize), taddr, bytes)?;
                    }
                    self.sync()?;
                    drop(tmp);
                    return Ok(());
                }
            } else {
                let rm = row_major(sizes);
                if let Some((k, p, pe)) = self.kernel_plan(sizes, e, taddr, &rm, src, ss) {
                    let mut st = Staging::new(self.rt, bytes);
                    // SAFETY: `tmp` and the staging buffer hold `bytes`.
                    unsafe {
                        self.launch(k, &p, pe, taddr, src)?;
                        self.dtoh(st.ptr(), taddr, bytes)?;
                        self.sync()?;
                        host_copy(&coalesce(sizes, ds, &rm), e, dst, st.ptr());
                    }
                    drop(tmp);
                    return Ok(());
                }
            }
            drop(tmp);
        }
        // Copy the covering range and gather on the host.
        let (lo, m) = covering(sizes, ss, e);
        let mut st = Staging::new(self.rt, m);
        // SAFETY: the covering range lies in the source's buffer.
        unsafe {
            self.dtoh(st.ptr(), at(src, lo, e), m)?;
            self.sync()?;
            host_copy(&plan, e, dst, st.base_for(lo, e));
        }
        Ok(())
    }

    /// Device → device on this device.
    ///
    /// # Safety
    ///
    /// Every element of both layouts lies in valid device memory; `overlap`
    /// tells whether the two byte ranges may intersect.
    unsafe fn d2d(&self, l: Strided<'_>, dst: u64, src: u64, overlap: bool) -> R<()> {
        let Strided { sizes, e, ds, ss } = l;
        let (plan, bytes) = l.plan();
        if plan.is_memcpy() {
            if overlap {
                let (tmp, taddr) = self.temp(bytes)?;
                // SAFETY: `tmp` is fresh; both copies are one run.
                unsafe {
                    self.dtod(taddr, src, bytes)?;
                    self.dtod(dst, taddr, bytes)?;
                }
                drop(tmp);
            } else {
                // SAFETY: one run on both sides, disjoint.
                unsafe { self.dtod(dst, src, bytes)? };
            }
            return Ok(());
        }
        if overlap {
            if self.kernels_usable() {
                let rm = row_major(sizes);
                let (tmp, taddr) = self.temp(bytes)?;
                let a = self.kernel_plan(sizes, e, taddr, &rm, src, ss);
                let b = self.kernel_plan(sizes, e, dst, ds, taddr, &rm);
                if let (Some((k, pa, ea)), Some((_, pb, eb))) = (a, b) {
                    // SAFETY: `tmp` is fresh and holds the row-major copy.
                    unsafe {
                        self.launch(k, &pa, ea, taddr, src)?;
                        self.launch(k, &pb, eb, dst, taddr)?;
                    }
                    drop(tmp);
                    return Ok(());
                }
                drop(tmp);
            }
        } else if let Some((k, p, pe)) = self.kernel_plan(sizes, e, dst, ds, src, ss) {
            // SAFETY: the caller's contract; disjoint sides.
            return unsafe { self.launch(k, &p, pe, dst, src) };
        }
        // Through the host.
        let rm = row_major(sizes);
        let mut st = Staging::new(self.rt, bytes);
        // SAFETY: the staging buffer holds `bytes` in row-major order;
        // `d2h` returns synchronized and `h2d` returns once it no longer
        // reads the staging buffer.
        unsafe {
            self.d2h(Strided { ds: &rm, ..l }, st.ptr(), src)?;
            self.h2d(Strided { ss: &rm, ..l }, dst, st.ptr())?;
        }
        drop(st);
        Ok(())
    }

    /// Fills every element of `dst[ds]` with `value`.
    ///
    /// # Safety
    ///
    /// Every element lies in valid device memory.
    unsafe fn fill(&self, sizes: &[i64], dst: u64, ds: &[i64], value: &[u8]) -> R<()> {
        let e = value.len();
        let plan = coalesce(sizes, ds, ds);
        let n = plan.numel() as usize;
        let dense = is_dense(sizes, ds);
        if dense {
            let (lo, _) = span(sizes, ds);
            let start = at(dst, lo, e);
            let s = self.stream;
            // The dense span of `n` elements from `start` is valid device
            // memory, aligned as `memset_for` checked.
            match memset_for(value, n, start) {
                Some(Memset::D8(v, count)) => {
                    // SAFETY: see above.
                    call("cuMemsetD8Async", || unsafe {
                        sys::cuMemsetD8Async(start, v, count, s)
                    })?;
                    return Ok(());
                }
                Some(Memset::D16(v, count)) => {
                    // SAFETY: see above.
                    call("cuMemsetD16Async", || unsafe {
                        sys::cuMemsetD16Async(start, v, count, s)
                    })?;
                    return Ok(());
                }
                Some(Memset::D32(v, count)) => {
                    // SAFETY: see above.
                    call("cuMemsetD32Async", || unsafe {
                        sys::cuMemsetD32Async(start, v, count, s)
                    })?;
                    return Ok(());
                }
                None => {}
            }
        }
        self.kernels_usable();
        if let Some(k) = self.kernels {
            if dst.is_multiple_of(e.min(8) as u64) {
                if let Some(l) = plan.kernel_layout() {
                    // SAFETY: the caller's contract; aligned (checked).
                    unsafe { k.fill(value, dst, &l, self.stream)? };
                    return Ok(());
                }
            }
        }
        let (lo, m) = covering(sizes, ds, e);
        let mut st = Staging::new(self.rt, m);
        let base = st.base_for(lo, e);
        if dense {
            // SAFETY: the staging buffer holds the dense span.
            unsafe {
                host_fill(&plan, value, base);
                self.htod(at(dst, lo, e), st.ptr(), m)?;
            }
        } else {
            self.device_sync()?;
            // SAFETY: the covering range lies in the buffer (caller).
            unsafe {
                self.dtoh(st.ptr(), at(dst, lo, e), m)?;
                self.sync()?;
                host_fill(&plan, value, base);
                self.htod(at(dst, lo, e), st.ptr(), m)?;
            }
        }
        self.release_async(st)
    }
}

impl CudaDeviceOps {
    fn rt(&self) -> R<&'static CudaRuntime> {
        init()
    }

    fn copy_impl(&self, dst: &Tensor, src: &Tensor) -> Result<()> {
        if dst.sizes() != src.sizes() || dst.dtype() != src.dtype() {
            return Err(runtime_err(format!(
                "CUDA copy: sizes {:?} ({}) and {:?} ({}) differ",
                dst.sizes(),
                dst.dtype(),
                src.sizes(),
                src.dtype()
            )));
        }
        let e = itemsize(dst)?;
        if dst.numel() == 0 {
            return Ok(());
        }
        let (dl, sl) = (loc(dst.device())?, loc(src.device())?);
        let rt = self.rt()?;
        let sizes = dst.sizes();
        match (dl, sl) {
            (Loc::Host, Loc::Host) => Err(runtime_err(
                "the CUDA device operations were asked to copy between two host tensors",
            )),
            (Loc::Cuda(a), Loc::Cuda(b)) if a != b => {
                self.copy_between_devices(rt, dst, src, (a, b), e)
            }
            _ => {
                let mut g = Storage::lock_write_read(dst.storage(), src.storage())?;
                let (dn, sn) = match &g {
                    WriteReadGuard::Same(w) => (w.nbytes(), w.nbytes()),
                    WriteReadGuard::Distinct { dst, src } => (dst.nbytes(), src.nbytes()),
                };
                let (doff, drange) = checked(dst, e, dn)?;
                let (soff, srange) = checked(src, e, sn)?;
                let same = g.is_same();
                let dptr = g.dst_ptr();
                let sptr = g.src_ptr();
                let both = Strided {
                    sizes,
                    e,
                    ds: dst.strides(),
                    ss: src.strides(),
                };
                match (dl, sl) {
                    (Loc::Cuda(i), Loc::Host) => {
                        let env = Env::new(rt, i, self.use_kernels)?;
                        let dbase = (dptr.addr() as i128 + doff) as u64;
                        let sbase = sptr.wrapping_offset(soff as isize);
                        // SAFETY: both layouts are bounds-checked against
                        // their buffers, held by the guards.
                        unsafe { env.h2d(both, dbase, sbase)? };
                    }
                    (Loc::Host, Loc::Cuda(i)) => {
                        let env = Env::new(rt, i, self.use_kernels)?;
                        let dbase = dptr.wrapping_offset(doff as isize);
                        let sbase = (sptr.addr() as i128 + soff) as u64;
                        // SAFETY: as above; `d2h` synchronizes before
                        // returning, while the guards are held.
                        unsafe { env.d2h(both, dbase, sbase)? };
                    }
                    (Loc::Cuda(i), Loc::Cuda(_)) => {
                        let env = Env::new(rt, i, self.use_kernels)?;
                        let dbase = (dptr.addr() as i128 + doff) as u64;
                        let sbase = (sptr.addr() as i128 + soff) as u64;
                        let overlap = same && drange.0 < srange.1 && srange.0 < drange.1;
                        // SAFETY: as above.
                        unsafe { env.d2d(both, dbase, sbase, overlap)? };
                    }
                    (Loc::Host, Loc::Host) => {}
                }
                Ok(())
            }
        }
    }

    /// A copy from device `b` to device `a` (`devices == (a, b)`), through
    /// a host buffer, one device at a time.
    fn copy_between_devices(
        &self,
        rt: &'static CudaRuntime,
        dst: &Tensor,
        src: &Tensor,
        (a, b): (i8, i8),
        e: usize,
    ) -> Result<()> {
        let sizes = dst.sizes();
        let rm = row_major(sizes);
        let bytes = dst.numel() as usize * e;
        let mut st = Staging::new(rt, bytes);
        {
            let g = src.storage().read()?;
            let (off, _) = checked(src, e, g.nbytes())?;
            let env = Env::new(rt, b, self.use_kernels)?;
            let base = g.as_ptr().addr() as i128 + off;
            // SAFETY: bounds checked under the read guard; the
            // staging buffer holds `bytes` in row-major order.
            unsafe {
                env.d2h(
                    Strided {
                        sizes,
                        e,
                        ds: &rm,
                        ss: src.strides(),
                    },
                    st.ptr(),
                    base as u64,
                )?
            };
        }
        let mut g = dst.storage().write()?;
        let (off, _) = checked(dst, e, g.nbytes())?;
        let env = Env::new(rt, a, self.use_kernels)?;
        let base = (g.as_mut_ptr().addr() as i128 + off) as u64;
        // SAFETY: bounds checked under the write guard; `h2d`
        // returns once it no longer reads the staging buffer.
        unsafe {
            env.h2d(
                Strided {
                    sizes,
                    e,
                    ds: dst.strides(),
                    ss: &rm,
                },
                base,
                st.ptr(),
            )?
        };
        drop(st);
        Ok(())
    }

    fn fill_impl(&self, dst: &Tensor, value: &[u8]) -> Result<()> {
        let e = itemsize(dst)?;
        if value.len() != e {
            return Err(runtime_err(format!(
                "fill: {} value bytes for {e}-byte elements",
                value.len()
            )));
        }
        if dst.numel() == 0 {
            return Ok(());
        }
        let Loc::Cuda(i) = loc(dst.device())? else {
            return Err(runtime_err(
                "the CUDA device operations were asked to fill a host tensor",
            ));
        };
        let rt = self.rt()?;
        let mut g = dst.storage().write()?;
        let (off, _) = checked(dst, e, g.nbytes())?;
        let env = Env::new(rt, i, self.use_kernels)?;
        let base = (g.as_mut_ptr().addr() as i128 + off) as u64;
        // SAFETY: bounds checked under the write guard.
        unsafe { env.fill(dst.sizes(), base, dst.strides(), value)? };
        Ok(())
    }
}

impl DeviceOps for CudaDeviceOps {
    fn device_type(&self) -> DeviceType {
        DeviceType::Cuda
    }

    fn copy(&self, dst: &Tensor, src: &Tensor) -> Result<()> {
        self.copy_impl(dst, src)
    }

    fn fill(&self, dst: &Tensor, value: &[u8]) -> Result<()> {
        self.fill_impl(dst, value)
    }
}

/// `tensor.to(device)`: `t` itself when it is already on `device`,
/// otherwise a copy there with the same sizes and dtype (keeping `t`'s
/// strides when they are non-overlapping and dense, row-major otherwise,
/// as PyTorch's `to` with `memory_format=preserve`). Moves between the CPU
/// and CUDA devices and between CUDA devices; initialises CUDA on first
/// use (and fails with `CUDA is not available: ...` without a driver or
/// device). A tensor that requires grad gives a result that requires grad,
/// outside inference mode.
///
/// ```no_run
/// use alloc_cuda::cuda::to_device;
/// use c10_core::{Device, ScalarType, Tensor};
/// let t = Tensor::arange(0, 6, 1, ScalarType::Float)?;
/// let g = to_device(&t, Device::cuda(0))?;
/// let back = to_device(&g, Device::CPU)?;
/// assert_eq!(back.to_vec::<f32>()?, t.to_vec::<f32>()?);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn to_device(t: &Tensor, device: Device) -> Result<Tensor> {
    if t.device() == device {
        return Ok(t.clone());
    }
    let (from, to) = (loc(t.device())?, loc(device)?);
    let rt = init()?;
    let target = match to {
        Loc::Cuda(i) => Device::cuda(i),
        Loc::Host => device,
    };
    if from == to && target == t.device() {
        return Ok(t.clone());
    }
    let _guard = match to {
        Loc::Cuda(i) => Some(DeviceGuard::new(i)?),
        Loc::Host => None,
    };
    let options = TensorOptions::new().dtype(t.dtype()).device(target);
    let mut out = if is_dense(t.sizes(), t.strides()) {
        Tensor::empty_strided(t.sizes(), t.strides(), options)?
    } else {
        Tensor::empty(t.sizes(), options)?
    };
    rt.ops().copy(&out, t)?;
    if t.requires_grad() && !InferenceMode::is_enabled() {
        out.set_requires_grad(true)?;
    }
    Ok(out)
}
