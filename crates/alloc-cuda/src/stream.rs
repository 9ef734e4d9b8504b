//! The current stream per thread and device (c10's
//! `getCurrentCUDAStream`/`setCurrentCUDAStream`), which
//! [`CachingDeviceAllocator`](crate::CachingDeviceAllocator) allocates on.

use std::cell::RefCell;

use crate::device::StreamId;

thread_local! {
    static CURRENT: RefCell<Vec<(i8, StreamId)>> = const { RefCell::new(Vec::new()) };
}

/// This thread's current stream for CUDA device `device` (the default
/// stream unless [`set_current_stream`] changed it).
///
/// ```
/// use alloc_cuda::{current_stream, set_current_stream, StreamId};
/// assert_eq!(current_stream(0), StreamId::DEFAULT);
/// let old = set_current_stream(0, StreamId(7));
/// assert_eq!(current_stream(0), StreamId(7));
/// set_current_stream(0, old);
/// ```
pub fn current_stream(device: i8) -> StreamId {
    CURRENT.with(|c| {
        c.borrow()
            .iter()
            .find(|(d, _)| *d == device)
            .map_or(StreamId::DEFAULT, |&(_, s)| s)
    })
}

/// Makes `stream` this thread's current stream for `device`; returns the
/// previous one.
pub fn set_current_stream(device: i8, stream: StreamId) -> StreamId {
    CURRENT.with(|c| {
        let mut v = c.borrow_mut();
        match v.iter_mut().find(|(d, _)| *d == device) {
            Some(entry) => std::mem::replace(&mut entry.1, stream),
            None => {
                v.push((device, stream));
                StreamId::DEFAULT
            }
        }
    })
}

/// Sets the current stream for a scope and restores the previous one when
/// dropped (c10's `CUDAStreamGuard`).
///
/// ```
/// use alloc_cuda::{current_stream, StreamGuard, StreamId};
/// {
///     let _g = StreamGuard::new(1, StreamId(3));
///     assert_eq!(current_stream(1), StreamId(3));
/// }
/// assert_eq!(current_stream(1), StreamId::DEFAULT);
/// ```
#[derive(Debug)]
#[must_use = "the stream is restored when the guard is dropped"]
pub struct StreamGuard {
    device: i8,
    previous: StreamId,
}

impl StreamGuard {
    /// Makes `stream` current for `device` until the guard is dropped.
    pub fn new(device: i8, stream: StreamId) -> StreamGuard {
        StreamGuard {
            device,
            previous: set_current_stream(device, stream),
        }
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        set_current_stream(self.device, self.previous);
    }
}
