//! The runtime probe: is there a driver, and how many devices?

use std::fmt;
use std::sync::OnceLock;

use cudarc::driver::sys;

use super::driver::{error_text, guarded};
use super::error::CudaUnavailable;

/// The environment variable that makes the probe report "no driver library
/// found" even where one exists (set it to anything but `0` or the empty
/// string). It exists to test the no-driver behaviour on GPU machines; it
/// is read once, by the first probe.
pub const FORCE_NO_DRIVER_ENV: &str = "ALLOC_CUDA_FORCE_NO_DRIVER";

/// The environment variable naming the driver library to load
/// (`/path/libcuda.so.1`), for a driver outside the library path. It is
/// loaded with `RTLD_GLOBAL` before cudarc looks for `libcuda.so.1`, which
/// the dynamic loader then resolves to it by its soname. cudarc tries the
/// bare name `libcuda.so` first, so where a `libcuda.so` is on the library
/// path that one wins; the override is for drivers outside it.
pub const DRIVER_ENV: &str = "TORCHCORE_CUDA_DRIVER";

/// Directories where distributions put the driver library, tried when
/// cudarc's names do not load from the library path.
const DRIVER_DIRS: [&str; 5] = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib/wsl/lib",
    "/usr/local/nvidia/lib64",
];

/// Loads `path` with `RTLD_NOW | RTLD_GLOBAL` and keeps it loaded for the
/// life of the process, so that later `dlopen`s by its soname find it.
fn preload_global(path: &std::path::Path) -> Result<(), String> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    // SAFETY: loading the CUDA driver runs only its initialisers, which
    // have no preconditions; it is never unloaded.
    let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }
        .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
    std::mem::forget(lib);
    Ok(())
}

/// Makes the driver library loadable by cudarc: the `TORCHCORE_CUDA_DRIVER`
/// override first, else, when cudarc's names do not load, the first
/// `libcuda.so.1` in [`DRIVER_DIRS`].
fn preload_driver() -> Result<(), String> {
    if let Some(p) = std::env::var_os(DRIVER_ENV).filter(|p| !p.is_empty()) {
        return preload_global(std::path::Path::new(&p)).map_err(|e| format!("{DRIVER_ENV}: {e}"));
    }
    // SAFETY: only tries to `dlopen` cudarc's candidate names.
    if guarded("is_culib_present", || unsafe { sys::is_culib_present() }).unwrap_or(false) {
        return Ok(());
    }
    for d in DRIVER_DIRS {
        let p = std::path::Path::new(d).join("libcuda.so.1");
        if p.is_file() && preload_global(&p).is_ok() {
            tracing::info!(target: "alloc_cuda", "CUDA driver preloaded from {}", p.display());
            return Ok(());
        }
    }
    Ok(())
}

/// The driver's CUDA version (`cuDriverGetVersion`: 1000·major + 10·minor,
/// e.g. 13020 for 13.2). Needs a driver, not a device.
///
/// ```
/// match alloc_cuda::cuda::driver_version() {
///     Ok(v) => println!("CUDA driver {}.{}", v / 1000, v % 1000 / 10),
///     Err(e) => println!("{e}"),
/// }
/// ```
pub fn driver_version() -> Result<i32, CudaUnavailable> {
    if let Err(e @ CudaUnavailable::NoDriver { .. }) = is_available() {
        return Err(e);
    }
    let mut v = 0i32;
    // SAFETY: valid out-pointer; the library is loaded (the probe found it).
    let r = guarded("cuDriverGetVersion", || unsafe {
        sys::cuDriverGetVersion(&mut v)
    })
    .map_err(|e| CudaUnavailable::Driver {
        code: -1,
        message: e.to_string(),
    })?;
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(v),
        other => Err(CudaUnavailable::Driver {
            code: other as i32,
            message: error_text(other),
        }),
    }
}

/// The driver library this process loaded (from `/proc/self/maps`), once
/// the probe has run and found one.
pub fn driver_library() -> Option<std::path::PathBuf> {
    is_available().ok()?;
    super::nvrtc::mapped_path("libcuda.so")
}

/// How many CUDA devices the driver reports (at least 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceCount(usize);

impl DeviceCount {
    /// The number of devices.
    pub fn get(self) -> usize {
        self.0
    }
}

impl fmt::Display for DeviceCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} CUDA device(s)", self.0)
    }
}

static PROBE: OnceLock<Result<DeviceCount, CudaUnavailable>> = OnceLock::new();

/// Whether CUDA can be used: the number of devices, or why not.
///
/// The first call probes, later calls return the cached answer. The probe
/// never panics and never aborts:
///
/// 1. `cudarc::driver::sys::is_culib_present()` checks that a driver
///    library can be loaded; when it cannot, no other cudarc function is
///    touched (they would panic) and the answer is
///    `CUDA is not available: no driver library found`;
/// 2. `cuInit(0)` and `cuDeviceGetCount`, through their `CUresult`s:
///    `CUDA_ERROR_NO_DEVICE` or a count of 0 gives
///    `CUDA is not available: no CUDA device`, the toolkit's link stub
///    (`CUDA_ERROR_STUB_LIBRARY`) counts as no driver, any other error is
///    reported with the driver's message.
///
/// Each step runs inside `catch_unwind`, so a cudarc panic (a missing
/// symbol in an old driver) becomes an error too, as long as the program is
/// built with `panic = "unwind"` (the default).
///
/// ```
/// match alloc_cuda::cuda::is_available() {
///     Ok(n) => println!("{n}"),
///     Err(e) => assert!(e.to_string().starts_with("CUDA is not available: ")),
/// }
/// ```
pub fn is_available() -> Result<DeviceCount, CudaUnavailable> {
    PROBE.get_or_init(probe).clone()
}

/// [`is_available`] as a plain count.
pub fn device_count() -> Result<usize, CudaUnavailable> {
    is_available().map(DeviceCount::get)
}

fn forced_off() -> bool {
    std::env::var_os(FORCE_NO_DRIVER_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

fn probe() -> Result<DeviceCount, CudaUnavailable> {
    let result = probe_uncached();
    match &result {
        Ok(n) => tracing::info!(target: "alloc_cuda", devices = n.get(), "CUDA probe: available"),
        Err(e) => tracing::info!(target: "alloc_cuda", "CUDA probe: {e}"),
    }
    result
}

fn probe_uncached() -> Result<DeviceCount, CudaUnavailable> {
    if forced_off() {
        return Err(CudaUnavailable::NoDriver {
            detail: format!("disabled by {FORCE_NO_DRIVER_ENV}"),
        });
    }
    if let Err(detail) = preload_driver() {
        return Err(CudaUnavailable::NoDriver { detail });
    }
    // SAFETY: `is_culib_present` only tries to open the candidate library
    // names with `dlopen` and closes them again; it calls no CUDA function.
    let present = guarded("is_culib_present", || unsafe { sys::is_culib_present() });
    match present {
        Ok(true) => {}
        Ok(false) => {
            return Err(CudaUnavailable::NoDriver {
                detail: String::new(),
            })
        }
        Err(e) => {
            return Err(CudaUnavailable::NoDriver {
                detail: e.to_string(),
            })
        }
    }
    let panicked = |e: crate::DeviceError| CudaUnavailable::Driver {
        code: -1,
        message: e.to_string(),
    };
    // SAFETY: `cuInit` with flags 0 is always valid to call; the library
    // is present (checked above).
    let r = guarded("cuInit", || unsafe { sys::cuInit(0) }).map_err(panicked)?;
    match r {
        sys::CUresult::CUDA_SUCCESS => {}
        sys::CUresult::CUDA_ERROR_NO_DEVICE => return Err(CudaUnavailable::NoDevice),
        sys::CUresult::CUDA_ERROR_STUB_LIBRARY => {
            return Err(CudaUnavailable::NoDriver {
                detail: "only the CUDA toolkit's stub libcuda was found".into(),
            })
        }
        other => {
            return Err(CudaUnavailable::Driver {
                code: other as i32,
                message: error_text(other),
            })
        }
    }
    let mut count = 0i32;
    // SAFETY: valid out-pointer; `cuInit` succeeded.
    let r = guarded("cuDeviceGetCount", || unsafe {
        sys::cuDeviceGetCount(&mut count)
    })
    .map_err(panicked)?;
    match r {
        sys::CUresult::CUDA_SUCCESS => {}
        sys::CUresult::CUDA_ERROR_NO_DEVICE => return Err(CudaUnavailable::NoDevice),
        other => {
            return Err(CudaUnavailable::Driver {
                code: other as i32,
                message: error_text(other),
            })
        }
    }
    match usize::try_from(count) {
        Ok(0) | Err(_) => Err(CudaUnavailable::NoDevice),
        // Device indices are `i8` in c10.
        Ok(n) => Ok(DeviceCount(n.min(i8::MAX as usize))),
    }
}
