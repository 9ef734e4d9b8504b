//! The strided copy and fill kernels: CUDA C compiled with NVRTC at first
//! use (once per process, to PTX), loaded once per device, launched with
//! the layout passed by value.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

use cudarc::driver::sys;
use parking_lot::Mutex;

use super::driver::{call, context, Context};
use super::error::CudaError;
use super::layout::KernelLayout;
use super::nvrtc::{choose_arch, nvrtc};
use crate::device::DeviceError;

/// The CUDA C source of the kernels (`tc_copy_N`, `tc_fill_N` for element
/// sizes N = 1, 2, 4, 8, 16).
///
/// One thread per element in a grid-stride loop; the linear index is
/// unravelled over the (coalesced) sizes, innermost dim last, with 64-bit
/// arithmetic throughout, into a destination and a source element offset.
/// The layout struct is a kernel argument passed by value (304 bytes, far
/// below the 4 KiB parameter limit), so a launch needs no device memory for
/// metadata. Elements are moved as unsigned integers of their size (16-byte
/// elements as two 8-byte words), which copies any dtype bit for bit.
pub const KERNEL_SOURCE: &str = r#"
#define TC_MAX_DIMS 12
typedef long long tc_i64;
struct Layout {
    tc_i64 sizes[TC_MAX_DIMS];
    tc_i64 dst_strides[TC_MAX_DIMS];
    tc_i64 src_strides[TC_MAX_DIMS];
    tc_i64 ndim;
    tc_i64 numel;
};
struct __align__(8) tc_b16 { unsigned long long lo; unsigned long long hi; };

template <typename T>
__device__ __forceinline__ void tc_copy(T* dst, const T* src, const Layout& l) {
    const tc_i64 step = (tc_i64)blockDim.x * (tc_i64)gridDim.x;
    for (tc_i64 i = (tc_i64)blockIdx.x * (tc_i64)blockDim.x + (tc_i64)threadIdx.x;
         i < l.numel; i += step) {
        tc_i64 rem = i, d = 0, s = 0;
        for (int k = (int)l.ndim - 1; k >= 0; --k) {
            const tc_i64 n = l.sizes[k];
            const tc_i64 q = rem / n;
            const tc_i64 idx = rem - q * n;
            rem = q;
            d += idx * l.dst_strides[k];
            s += idx * l.src_strides[k];
        }
        dst[d] = src[s];
    }
}

template <typename T>
__device__ __forceinline__ void tc_fill(T* dst, const T v, const Layout& l) {
    const tc_i64 step = (tc_i64)blockDim.x * (tc_i64)gridDim.x;
    for (tc_i64 i = (tc_i64)blockIdx.x * (tc_i64)blockDim.x + (tc_i64)threadIdx.x;
         i < l.numel; i += step) {
        tc_i64 rem = i, d = 0;
        for (int k = (int)l.ndim - 1; k >= 0; --k) {
            const tc_i64 n = l.sizes[k];
            const tc_i64 q = rem / n;
            d += (rem - q * n) * l.dst_strides[k];
            rem = q;
        }
        dst[d] = v;
    }
}

#define TC_KERNELS(N, T) \
    extern "C" __global__ void tc_copy_##N(T* dst, const T* src, Layout l) { tc_copy<T>(dst, src, l); } \
    extern "C" __global__ void tc_fill_##N(T* dst, const T v, Layout l) { tc_fill<T>(dst, v, l); }

TC_KERNELS(1, unsigned char)
TC_KERNELS(2, unsigned short)
TC_KERNELS(4, unsigned int)
TC_KERNELS(8, unsigned long long)
TC_KERNELS(16, tc_b16)
"#;

/// Element sizes with a kernel, in the order of [`Kernels`]' arrays.
const SIZES: [usize; 5] = [1, 2, 4, 8, 16];

/// Threads per block.
const BLOCK: u32 = 256;
/// At most this many blocks; the grid-stride loop covers the rest.
const MAX_GRID: u64 = 1 << 20;

/// Whether an NVRTC library can be loaded (see [`nvrtc_info`] for which
/// one and where it is looked for). Never panics; does not need the
/// driver.
///
/// [`nvrtc_info`]: crate::cuda::nvrtc_info
pub fn nvrtc_available() -> bool {
    nvrtc().is_ok()
}

/// The names of every kernel in [`KERNEL_SOURCE`] (`tc_copy_N`, `tc_fill_N`).
///
/// ```
/// let names = alloc_cuda::cuda::kernel_names();
/// assert_eq!(names.len(), 10);
/// assert!(names.contains(&"tc_copy_16".to_string()));
/// ```
pub fn kernel_names() -> Vec<String> {
    SIZES
        .iter()
        .flat_map(|n| [format!("tc_copy_{n}"), format!("tc_fill_{n}")])
        .collect()
}

/// How many copies and fills that would have used the kernels went through
/// host staging instead because the kernels could not be compiled or
/// loaded (no NVRTC, PTX the driver rejects), or the layout had too many
/// dims. The first such fallback is also reported as a `tracing` warning.
///
/// ```
/// let n = alloc_cuda::cuda::host_staging_fallbacks();
/// # let _ = n;
/// ```
pub fn host_staging_fallbacks() -> u64 {
    FALLBACKS.load(Ordering::Relaxed)
}

static FALLBACKS: AtomicU64 = AtomicU64::new(0);
static FALLBACK_WARNED: AtomicBool = AtomicBool::new(false);

/// Counts a host-staging fallback; warns the first time.
pub(crate) fn note_fallback(why: &dyn std::fmt::Display) {
    FALLBACKS.fetch_add(1, Ordering::Relaxed);
    if !FALLBACK_WARNED.swap(true, Ordering::Relaxed) {
        tracing::warn!(target: "alloc_cuda", "strided CUDA copies fall back to host staging (slow; counted by host_staging_fallbacks()): {why}");
    }
}

/// The kernels as PTX for virtual architecture `arch` (`None`: NVRTC's
/// default), compiled once per architecture per process.
fn ptx(arch: Option<i32>) -> Result<&'static [u8], CudaError> {
    type Cache = Mutex<HashMap<Option<i32>, Result<&'static [u8], String>>>;
    static PTX: OnceLock<Cache> = OnceLock::new();
    let cache = PTX.get_or_init(Cache::default);
    let mut cache = cache.lock();
    let r = cache.entry(arch).or_insert_with(|| {
        let (nv, info) = nvrtc().map_err(|e| e.to_string())?;
        let bytes = nv
            .compile_ptx(KERNEL_SOURCE, "torchcore_copy_kernels.cu", arch)
            .map_err(|e| format!("compiling the copy kernels with {info} failed: {e}"))?;
        tracing::info!(target: "alloc_cuda", bytes = bytes.len(), arch = ?arch, "copy kernels compiled with {info}");
        // At most one image per architecture, kept for the process.
        Ok(&*Box::leak(bytes.into_boxed_slice()))
    });
    r.clone().map_err(CudaError::Nvrtc)
}

/// The architecture to compile for on device `index` (its compute
/// capability, capped to what NVRTC supports).
fn device_arch(ctx: &Context) -> Result<Option<i32>, CudaError> {
    let major =
        ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor =
        ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    let (nv, _) = nvrtc()?;
    Ok(choose_arch(Some(major * 10 + minor), &nv.supported_archs()))
}

/// Compiles [`KERNEL_SOURCE`] with NVRTC (once per process; later calls
/// return the cached outcome) and returns the size of the PTX in bytes:
/// for device 0's compute capability when a device is present
/// (`--gpu-architecture=compute_XY`), else for NVRTC's default
/// architecture. Needs only NVRTC, not a driver or a GPU, so it can check
/// the kernels on any machine with `libnvrtc`.
pub fn compile_kernels() -> Result<usize, CudaError> {
    let arch = match super::probe::is_available() {
        Ok(_) => {
            let ctx = context(0)?;
            device_arch(ctx)?
        }
        Err(_) => None,
    };
    ptx(arch).map(<[u8]>::len)
}

/// Compiles [`KERNEL_SOURCE`] for `--gpu-architecture=compute_<arch>`
/// (`10·major + minor`; `None`: NVRTC's default) and returns the PTX
/// (NUL-terminated). Needs only NVRTC.
///
/// ```no_run
/// let ptx = alloc_cuda::cuda::compile_kernels_for(Some(90))?;
/// assert!(String::from_utf8_lossy(ptx).contains(".target sm_90"));
/// # Ok::<(), alloc_cuda::cuda::CudaError>(())
/// ```
pub fn compile_kernels_for(arch: Option<i32>) -> Result<&'static [u8], CudaError> {
    ptx(arch)
}

/// One device's loaded kernels.
#[derive(Debug)]
pub(crate) struct Kernels {
    ctx: &'static Context,
    copy: [sys::CUfunction; 5],
    fill: [sys::CUfunction; 5],
}

// SAFETY: module and function handles are driver objects usable from any
// thread once their context is bound (every launch binds it); they are
// never changed or unloaded.
unsafe impl Send for Kernels {}
// SAFETY: as above.
unsafe impl Sync for Kernels {}

fn load(index: i8) -> Result<Kernels, CudaError> {
    let ctx = context(index)?;
    ctx.bind()?;
    let image = ptx(device_arch(ctx)?)?;
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: `image` is a NUL-terminated PTX text; the context is bound.
    // The module is never unloaded (it lives as long as the process).
    call("cuModuleLoadData", || unsafe {
        sys::cuModuleLoadData(&mut module, image.as_ptr().cast())
    })?;
    let get = |name: String| -> Result<sys::CUfunction, DeviceError> {
        let c = std::ffi::CString::new(name.clone())
            .map_err(|_| DeviceError::InvalidValue(name.clone()))?;
        let mut f: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: valid out-pointer, live module, NUL-terminated name.
        call("cuModuleGetFunction", || unsafe {
            sys::cuModuleGetFunction(&mut f, module, c.as_ptr())
        })?;
        Ok(f)
    };
    let mut copy = [std::ptr::null_mut(); 5];
    let mut fill = [std::ptr::null_mut(); 5];
    for (k, n) in SIZES.iter().enumerate() {
        copy[k] = get(format!("tc_copy_{n}"))?;
        fill[k] = get(format!("tc_fill_{n}"))?;
    }
    tracing::debug!(target: "alloc_cuda", device = index, "copy kernels loaded");
    Ok(Kernels { ctx, copy, fill })
}

/// Device `index`'s kernels, compiled and loaded at first use.
pub(crate) fn kernels(index: i8) -> Result<&'static Kernels, CudaError> {
    static MODULES: OnceLock<Vec<OnceLock<Result<Kernels, CudaError>>>> = OnceLock::new();
    let count = super::probe::device_count()?;
    let slots = MODULES.get_or_init(|| (0..count).map(|_| OnceLock::new()).collect());
    let slot = usize::try_from(index)
        .ok()
        .and_then(|i| slots.get(i))
        .ok_or(CudaError::InvalidDevice {
            index: i32::from(index),
            count,
        })?;
    slot.get_or_init(|| load(index))
        .as_ref()
        .map_err(Clone::clone)
}

/// Compiles (if needed) and loads the kernels on `device` now, so that
/// errors show up early. Fails without a driver, without NVRTC, or when
/// compilation fails.
pub fn load_kernels(device: i8) -> Result<(), CudaError> {
    kernels(device).map(|_| ())
}

fn slot(itemsize: usize) -> Result<usize, DeviceError> {
    SIZES
        .iter()
        .position(|&s| s == itemsize)
        .ok_or_else(|| DeviceError::InvalidValue(format!("no kernel for {itemsize}-byte elements")))
}

fn grid(numel: i64) -> u32 {
    let blocks = (numel.max(1) as u64)
        .div_ceil(u64::from(BLOCK))
        .min(MAX_GRID);
    blocks as u32
}

impl Kernels {
    /// Queues `dst[d] = src[s]` for every element of `layout` on `stream`.
    ///
    /// # Safety
    ///
    /// `dst + d·itemsize` must be valid device memory for writes and
    /// `src + s·itemsize` for reads, for every `(d, s)` of the layout, both
    /// aligned to `min(itemsize, 8)`, until the kernel has run; the sides
    /// must not overlap; `stream` is a live stream of this device.
    pub(crate) unsafe fn copy(
        &self,
        itemsize: usize,
        dst: u64,
        src: u64,
        layout: &KernelLayout,
        stream: sys::CUstream,
    ) -> Result<(), DeviceError> {
        let f = self.copy[slot(itemsize)?];
        let (mut d, mut s, mut l) = (dst, src, *layout);
        let mut params: [*mut c_void; 3] = [
            (&mut d as *mut u64).cast(),
            (&mut s as *mut u64).cast(),
            (&mut l as *mut KernelLayout).cast(),
        ];
        // SAFETY: `f` takes (T*, const T*, Layout); the parameters point to
        // values of those sizes and layouts (`KernelLayout` is `repr(C)`
        // and matches `struct Layout`); memory validity is the caller's.
        unsafe { self.launch(f, layout.numel, &mut params, stream) }
    }

    /// Queues `dst[d] = value` for every element of `layout` on `stream`.
    ///
    /// # Safety
    ///
    /// As for [`Kernels::copy`] for the destination; `value.len()` is the
    /// element size.
    pub(crate) unsafe fn fill(
        &self,
        value: &[u8],
        dst: u64,
        layout: &KernelLayout,
        stream: sys::CUstream,
    ) -> Result<(), DeviceError> {
        let f = self.fill[slot(value.len())?];
        let mut v = [0u64; 2];
        // SAFETY: `value` has at most 16 bytes (checked by `slot`), `v` 16.
        unsafe {
            std::ptr::copy_nonoverlapping(value.as_ptr(), v.as_mut_ptr().cast::<u8>(), value.len())
        };
        let (mut d, mut l) = (dst, *layout);
        let mut params: [*mut c_void; 3] = [
            (&mut d as *mut u64).cast(),
            v.as_mut_ptr().cast(),
            (&mut l as *mut KernelLayout).cast(),
        ];
        // SAFETY: `f` takes (T*, T, Layout); the value parameter points to
        // 16 bytes, 8-aligned, of which the kernel reads `sizeof(T)`; the
        // destination's validity is the caller's.
        unsafe { self.launch(f, layout.numel, &mut params, stream) }
    }

    /// Binds the context and queues `f` over `numel` elements (one thread
    /// an element, [`BLOCK`] threads a block) on `stream`.
    ///
    /// # Safety
    ///
    /// `params` must point to values of the sizes and layouts `f` takes,
    /// and the memory they name must be valid for the kernel until it has
    /// run; `stream` is a live stream of this device.
    unsafe fn launch(
        &self,
        f: sys::CUfunction,
        numel: i64,
        params: &mut [*mut c_void; 3],
        stream: sys::CUstream,
    ) -> Result<(), DeviceError> {
        self.ctx.bind()?;
        // SAFETY: the parameters and memory are the caller's contract; the
        // grid covers `numel` threads within the driver's limits (`grid`).
        call("cuLaunchKernel", || unsafe {
            sys::cuLaunchKernel(
                f,
                grid(numel),
                1,
                1,
                BLOCK,
                1,
                1,
                0,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_declares_every_kernel() {
        for n in SIZES {
            assert!(KERNEL_SOURCE.contains(&format!("TC_KERNELS({n},")));
        }
        assert!(KERNEL_SOURCE.contains("#define TC_MAX_DIMS 12"));
        assert_eq!(super::super::layout::MAX_KERNEL_DIMS, 12);
        assert_eq!(grid(1), 1);
        assert_eq!(grid(257), 2);
        assert_eq!(grid(i64::MAX), MAX_GRID as u32);
    }
}
