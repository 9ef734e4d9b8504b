//! Streams and the current device.
//!
//! A [`StreamId`] is the address of a `CUstream` (0 is the legacy default
//! stream), so the caching allocator orders its pools by stream the way
//! PyTorch orders them by `cudaStream_t`. Because a `StreamId` is a plain
//! number that safe code can make up, every id is checked against the
//! streams this module created before it reaches the driver.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::OnceLock;

use cudarc::driver::sys;
use parking_lot::RwLock;

use super::driver::{call, context, cu_stream, error_of, guarded, stream_id};
use super::error::CudaError;
use crate::device::{DeviceError, StreamId};
use crate::stream::{current_stream, StreamGuard};

/// Streams created by [`CudaStream::new`]: address → device index.
fn registry() -> &'static RwLock<HashMap<u64, i8>> {
    static STREAMS: OnceLock<RwLock<HashMap<u64, i8>>> = OnceLock::new();
    STREAMS.get_or_init(|| RwLock::new(HashMap::new()))
}

/// The `CUstream` for `id` on `device`: the default stream, or a stream
/// created by [`CudaStream::new`] on that device.
pub(crate) fn resolve(device: i8, id: StreamId) -> Result<sys::CUstream, DeviceError> {
    if id == StreamId::DEFAULT {
        return Ok(std::ptr::null_mut());
    }
    match registry().read().get(&id.0) {
        Some(&d) if d == device => Ok(cu_stream(id)),
        Some(&d) => Err(DeviceError::InvalidValue(format!(
            "{id} belongs to cuda:{d}, not cuda:{device}"
        ))),
        None => Err(DeviceError::InvalidValue(format!(
            "{id} is not a stream created by alloc_cuda::cuda::CudaStream::new"
        ))),
    }
}

/// A CUDA stream on one device (c10's `CUDAStream`), a `Copy` handle.
///
/// Streams made by [`CudaStream::new`] are non-blocking
/// (`CU_STREAM_NON_BLOCKING`, as PyTorch's pool streams) and live until the
/// process exits, like PyTorch's stream pool: create a few and reuse them.
/// Work on different streams is unordered; use
/// [`wait_stream`](CudaStream::wait_stream) to order it, and
/// `record_stream` (see [`CudaAllocator::record_stream`](crate::cuda::CudaAllocator::record_stream))
/// when memory allocated on one stream is used on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CudaStream {
    device: i8,
    id: StreamId,
}

impl CudaStream {
    /// Creates a new non-blocking stream on `device`.
    pub fn new(device: i8) -> Result<CudaStream, CudaError> {
        let ctx = context(device)?;
        ctx.bind()?;
        let mut s: sys::CUstream = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the context is bound.
        call("cuStreamCreate", || unsafe {
            sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)
        })?;
        let id = stream_id(s);
        registry().write().insert(id.0, device);
        tracing::debug!(target: "alloc_cuda", device, stream = id.0, "stream created");
        Ok(CudaStream { device, id })
    }

    /// The legacy default stream of `device` (`StreamId::DEFAULT`).
    pub fn default_stream(device: i8) -> Result<CudaStream, CudaError> {
        context(device)?;
        Ok(CudaStream {
            device,
            id: StreamId::DEFAULT,
        })
    }

    /// This thread's current stream on `device` (see
    /// [`set_current_stream`](crate::set_current_stream)), checked.
    pub fn current(device: i8) -> Result<CudaStream, CudaError> {
        context(device)?;
        let id = current_stream(device);
        resolve(device, id)?;
        Ok(CudaStream { device, id })
    }

    /// The stream's id, for the allocator APIs and
    /// [`set_current_stream`](crate::set_current_stream).
    pub fn id(self) -> StreamId {
        self.id
    }

    /// The device index.
    pub fn device(self) -> i8 {
        self.device
    }

    /// Makes this stream current for its device until the guard drops.
    pub fn make_current(self) -> StreamGuard {
        StreamGuard::new(self.device, self.id)
    }

    /// Blocks until all work submitted to the stream has finished.
    pub fn synchronize(self) -> Result<(), CudaError> {
        let ctx = context(self.device)?;
        ctx.bind()?;
        let s = resolve(self.device, self.id)?;
        // SAFETY: `s` is the default stream or a live stream of this device.
        call("cuStreamSynchronize", || unsafe {
            sys::cuStreamSynchronize(s)
        })?;
        Ok(())
    }

    /// Whether all work submitted to the stream has finished
    /// (`cuStreamQuery`).
    pub fn query(self) -> Result<bool, CudaError> {
        let ctx = context(self.device)?;
        ctx.bind()?;
        let s = resolve(self.device, self.id)?;
        // SAFETY: as in `synchronize`.
        let r = guarded("cuStreamQuery", || unsafe { sys::cuStreamQuery(s) })?;
        match r {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            other => Err(error_of("cuStreamQuery", other).into()),
        }
    }

    /// Makes future work on this stream wait for the work submitted to
    /// `other` so far (c10's `stream.wait_stream(other)`: an event recorded
    /// on `other` and waited for here).
    pub fn wait_stream(self, other: CudaStream) -> Result<(), CudaError> {
        if other.device != self.device {
            return Err(CudaError::Unsupported(format!(
                "wait_stream across devices (cuda:{} waits for cuda:{}) is not supported",
                self.device, other.device
            )));
        }
        let ctx = context(self.device)?;
        ctx.bind()?;
        let s = resolve(self.device, self.id)?;
        let o = resolve(other.device, other.id)?;
        let mut ev: sys::CUevent = std::ptr::null_mut();
        // SAFETY: valid out-pointer; context bound.
        call("cuEventCreate", || unsafe {
            sys::cuEventCreate(&mut ev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)
        })?;
        // SAFETY: `ev` was just created; `o` and `s` are live streams of
        // this device. Destroying an event that a stream still waits for is
        // allowed (its resources are released when the wait completes).
        let r = call("cuEventRecord", || unsafe { sys::cuEventRecord(ev, o) }).and_then(|()| {
            // SAFETY: as above.
            call("cuStreamWaitEvent", || unsafe {
                sys::cuStreamWaitEvent(s, ev, 0)
            })
        });
        // SAFETY: as above.
        let d = call("cuEventDestroy", || unsafe { sys::cuEventDestroy_v2(ev) });
        r?;
        d?;
        Ok(())
    }
}

/// Blocks until all work on `device` has finished (`cuCtxSynchronize`,
/// `torch.cuda.synchronize(device)`).
pub fn synchronize(device: i8) -> Result<(), CudaError> {
    let ctx = context(device)?;
    ctx.bind()?;
    // SAFETY: the context is bound.
    call("cuCtxSynchronize", || unsafe { sys::cuCtxSynchronize() })?;
    Ok(())
}

thread_local! {
    static CURRENT_DEVICE: Cell<i8> = const { Cell::new(0) };
}

/// This thread's current CUDA device (c10's `current_device()`, 0 unless
/// [`set_device`] or a [`DeviceGuard`] changed it). The registered
/// allocator allocates on it.
pub fn current_device() -> i8 {
    CURRENT_DEVICE.with(Cell::get)
}

/// Makes `device` this thread's current CUDA device (`torch.cuda.set_device`);
/// fails when CUDA is unavailable or the index is out of range.
pub fn set_device(device: i8) -> Result<(), CudaError> {
    context(device)?;
    CURRENT_DEVICE.with(|c| c.set(device));
    Ok(())
}

/// Sets the current device for a scope (c10's `CUDAGuard`).
#[derive(Debug)]
#[must_use = "the device is restored when the guard is dropped"]
pub struct DeviceGuard {
    previous: i8,
}

impl DeviceGuard {
    /// Makes `device` current until the guard drops.
    pub fn new(device: i8) -> Result<DeviceGuard, CudaError> {
        let previous = current_device();
        set_device(device)?;
        Ok(DeviceGuard { previous })
    }
}

impl Drop for DeviceGuard {
    fn drop(&mut self) {
        CURRENT_DEVICE.with(|c| c.set(self.previous));
    }
}
