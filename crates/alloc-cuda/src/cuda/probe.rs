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
