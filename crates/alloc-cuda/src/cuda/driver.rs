//! The driver calls, wrapped: every call runs inside `catch_unwind` (cudarc
//! panics when the library or a symbol is missing) and every `CUresult` is
//! turned into a [`DeviceError`]. Contexts are the devices' primary
//! contexts, retained on first use and bound to the calling thread before
//! every call.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use cudarc::driver::result::DriverError;
use cudarc::driver::sys;

use super::error::CudaError;
use super::probe;
use crate::device::{DeviceError, EventId, StreamId};

/// The text of a caught panic.
pub(crate) fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

/// Runs `f` (a driver or NVRTC call), turning a panic into an error.
pub(crate) fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, DeviceError> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| DeviceError::Other {
        code: -1,
        message: format!(
            "{what}: the CUDA driver call panicked: {}",
            panic_message(p.as_ref())
        ),
    })
}

/// The driver's description of `r` (the variant name when the driver cannot
/// say more).
pub(crate) fn error_text(r: sys::CUresult) -> String {
    let name = format!("{r:?}");
    let e = DriverError(r);
    match guarded("cuGetErrorString", || {
        e.error_string().map(|c| c.to_string_lossy().into_owned())
    }) {
        Ok(Ok(s)) => format!("{name} ({s})"),
        _ => name,
    }
}

/// The [`DeviceError`] for a failed call (out of memory, invalid value and
/// not supported get their own variants).
pub(crate) fn error_of(what: &str, r: sys::CUresult) -> DeviceError {
    match r {
        sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => DeviceError::OutOfMemory,
        sys::CUresult::CUDA_ERROR_INVALID_VALUE => {
            DeviceError::InvalidValue(format!("{what}: {}", error_text(r)))
        }
        sys::CUresult::CUDA_ERROR_NOT_SUPPORTED => {
            DeviceError::NotSupported(format!("{what}: {}", error_text(r)))
        }
        _ => DeviceError::Other {
            code: r as i32,
            message: format!("{what}: {}", error_text(r)),
        },
    }
}

/// Turns a `CUresult` into `Ok(())` or its [`DeviceError`].
pub(crate) fn check(what: &str, r: sys::CUresult) -> Result<(), DeviceError> {
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        _ => Err(error_of(what, r)),
    }
}

/// A guarded driver call whose `CUresult` is checked.
pub(crate) fn call(what: &str, f: impl FnOnce() -> sys::CUresult) -> Result<(), DeviceError> {
    let r = guarded(what, f)?;
    check(what, r)
}

/// The `CUstream` behind a [`StreamId`] (0 is the legacy default stream).
pub(crate) fn cu_stream(s: StreamId) -> sys::CUstream {
    std::ptr::with_exposed_provenance_mut(s.0 as usize)
}

/// The [`StreamId`] of a `CUstream` (its address).
pub(crate) fn stream_id(s: sys::CUstream) -> StreamId {
    StreamId(s.expose_provenance() as u64)
}

/// The `CUevent` behind an [`EventId`].
pub(crate) fn cu_event(e: EventId) -> sys::CUevent {
    std::ptr::with_exposed_provenance_mut(e.0 as usize)
}

/// The [`EventId`] of a `CUevent` (its address).
pub(crate) fn event_id(e: sys::CUevent) -> EventId {
    EventId(e.expose_provenance() as u64)
}

/// One device's primary context.
#[derive(Debug)]
pub(crate) struct Context {
    pub(crate) device: sys::CUdevice,
    ctx: sys::CUcontext,
}

// SAFETY: a `CUcontext` is a driver handle that may be bound and used from
// any thread (the driver API is thread-safe); the value is never changed.
unsafe impl Send for Context {}
// SAFETY: as above; shared use only reads the handle.
unsafe impl Sync for Context {}

impl Context {
    fn retain(index: i8) -> Result<Context, CudaError> {
        let mut device: sys::CUdevice = 0;
        // SAFETY: `device` is a valid out-pointer; the probe ran `cuInit` and
        // `index` is below the device count.
        call("cuDeviceGet", || unsafe {
            sys::cuDeviceGet(&mut device, i32::from(index))
        })?;
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: valid out-pointer and device handle. The primary context
        // is retained for the life of the process (never released).
        call("cuDevicePrimaryCtxRetain", || unsafe {
            sys::cuDevicePrimaryCtxRetain(&mut ctx, device)
        })?;
        tracing::debug!(target: "alloc_cuda", device = index, "primary context retained");
        Ok(Context { device, ctx })
    }

    /// Makes this context current on the calling thread (if it is not).
    pub(crate) fn bind(&self) -> Result<(), DeviceError> {
        let mut cur: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        call("cuCtxGetCurrent", || unsafe {
            sys::cuCtxGetCurrent(&mut cur)
        })?;
        if cur != self.ctx {
            // SAFETY: `self.ctx` is a retained primary context.
            call("cuCtxSetCurrent", || unsafe {
                sys::cuCtxSetCurrent(self.ctx)
            })?;
        }
        Ok(())
    }

    /// An integer device attribute.
    pub(crate) fn attribute(&self, attr: sys::CUdevice_attribute) -> Result<i32, DeviceError> {
        let mut v = 0i32;
        // SAFETY: valid out-pointer and device handle.
        call("cuDeviceGetAttribute", || unsafe {
            sys::cuDeviceGetAttribute(&mut v, attr, self.device)
        })?;
        Ok(v)
    }
}

static CONTEXTS: OnceLock<Vec<OnceLock<Result<Context, CudaError>>>> = OnceLock::new();

/// The primary context of device `index`, retained on first use. Fails with
/// [`CudaError::Unavailable`] when the probe fails, without touching the
/// driver.
pub(crate) fn context(index: i8) -> Result<&'static Context, CudaError> {
    let count = probe::is_available()?.get();
    let slot =
        usize::try_from(index)
            .ok()
            .filter(|&i| i < count)
            .ok_or(CudaError::InvalidDevice {
                index: i32::from(index),
                count,
            })?;
    let slots = CONTEXTS.get_or_init(|| (0..count).map(|_| OnceLock::new()).collect());
    let cell = slots.get(slot).ok_or(CudaError::InvalidDevice {
        index: i32::from(index),
        count,
    })?;
    cell.get_or_init(|| Context::retain(index))
        .as_ref()
        .map_err(Clone::clone)
}

/// `(free, total)` bytes of the current context's device.
pub(crate) fn mem_get_info() -> Result<(u64, u64), DeviceError> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers; the caller bound a context.
    call("cuMemGetInfo", || unsafe {
        sys::cuMemGetInfo_v2(&mut free, &mut total)
    })?;
    Ok((free as u64, total as u64))
}
