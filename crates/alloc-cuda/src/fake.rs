//! [`FakeDevice`]: a [`RawDevice`] in plain Rust, for tests and fuzzing.
//!
//! It has a capacity in bytes, hands out fake addresses (monotonic, aligned
//! like the driver's), keeps no bytes, and checks every call the allocator
//! makes (freeing an unknown address, mapping twice, using a destroyed
//! event, ... are errors). Streams and events are simulated: an event
//! recorded on a stream stays pending until the test says the stream's work
//! is done ([`FakeDevice::complete_stream_work`]) or completes it directly
//! ([`FakeDevice::set_event_complete`]); synchronizing on it completes it.
//! Failures can be injected (fail the k-th `malloc`, fail the next n,
//! pretend another process uses memory), and every call is counted.
//!
//! ```
//! use alloc_cuda::{DevicePtr, FakeDevice, RawDevice};
//! let dev = FakeDevice::new(64 << 20); // 64 MiB
//! let p = dev.malloc(2 << 20)?;
//! assert_eq!(p.addr() % (2 << 20), 0); // 2 MiB aligned, like cudaMalloc
//! assert_eq!(dev.mem_get_info()?, (62 << 20, 64 << 20));
//! // SAFETY: `p` came from this device and nothing uses it.
//! unsafe { dev.free(p)? };
//! assert_eq!(dev.counters().free_calls, 1);
//! # Ok::<(), alloc_cuda::DeviceError>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::sync::Mutex;

use crate::device::{DeviceCopy, DeviceError, DevicePtr, EventId, PhysHandle, RawDevice, StreamId};

/// Where fake `malloc` addresses start.
const MALLOC_BASE: u64 = 0x7f00_0000_0000;
/// Where fake virtual address reservations start (far from `MALLOC_BASE`).
const VA_BASE: u64 = 0x0001_0000_0000_0000;

/// Call counters of a [`FakeDevice`] (see [`FakeDevice::counters`]).
///
/// ```
/// use alloc_cuda::{FakeCounters, FakeDevice, RawDevice};
/// let dev = FakeDevice::new(8 << 20);
/// assert_eq!(dev.counters(), FakeCounters::default());
/// let _ = dev.malloc(1 << 20)?;
/// let _ = dev.malloc(16 << 20); // more than the capacity: fails
/// let c = dev.counters();
/// assert_eq!((c.malloc_calls, c.malloc_failures, c.free_calls), (2, 1, 0));
/// # Ok::<(), alloc_cuda::DeviceError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FakeCounters {
    /// `malloc` calls, successful or not.
    pub malloc_calls: u64,
    /// `malloc` calls that failed (out of memory, injected or real).
    pub malloc_failures: u64,
    /// `free` calls.
    pub free_calls: u64,
    /// `create_event` calls.
    pub event_creates: u64,
    /// `record_event` calls.
    pub event_records: u64,
    /// `query_event` calls.
    pub event_queries: u64,
    /// `synchronize_event` calls.
    pub event_syncs: u64,
    /// `destroy_event` calls.
    pub event_destroys: u64,
    /// `synchronize_device` calls.
    pub device_syncs: u64,
    /// `synchronize_stream` calls.
    pub stream_syncs: u64,
    /// `mem_get_info` calls.
    pub mem_get_info_calls: u64,
    /// `reserve_address_range` calls.
    pub reserve_calls: u64,
    /// `free_address_range` calls.
    pub address_free_calls: u64,
    /// `create_physical` calls, successful or not.
    pub create_physical_calls: u64,
    /// `create_physical` calls that failed.
    pub create_physical_failures: u64,
    /// `release_physical` calls.
    pub release_physical_calls: u64,
    /// `map` calls.
    pub map_calls: u64,
    /// `unmap` calls.
    pub unmap_calls: u64,
    /// `set_access` calls.
    pub set_access_calls: u64,
    /// `copy_device_to_device` calls.
    pub copy_calls: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct FakeStream {
    /// Number of events recorded on the stream so far.
    recorded: u64,
    /// Recordings up to this number have completed.
    completed: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct FakeEvent {
    /// The stream and the stream's recording number, if recorded.
    recorded: Option<(StreamId, u64)>,
    /// Completed by the test or by a synchronize.
    forced: bool,
}

#[derive(Debug)]
struct FakeState {
    capacity: u64,
    external_usage: u64,
    alignment: u64,
    vmm: bool,
    granularity: u64,
    next_addr: u64,
    next_va: u64,
    allocations: BTreeMap<u64, u64>,
    reservations: BTreeMap<u64, u64>,
    handles: BTreeMap<u64, u64>,
    next_handle: u64,
    mappings: BTreeMap<u64, (u64, PhysHandle)>,
    accessible: BTreeSet<u64>,
    streams: BTreeMap<StreamId, FakeStream>,
    events: BTreeMap<EventId, FakeEvent>,
    next_event: u64,
    fail_malloc_calls: BTreeSet<u64>,
    fail_next_mallocs: u64,
    next_malloc_error: Option<DeviceError>,
    fail_create_physical_calls: BTreeSet<u64>,
    process_report: String,
    counters: FakeCounters,
}

impl FakeState {
    fn used(&self) -> u64 {
        let malloced: u64 = self.allocations.values().sum();
        let physical: u64 = self.handles.values().sum();
        // Saturating: `set_external_usage` takes any u64.
        malloced
            .saturating_add(physical)
            .saturating_add(self.external_usage)
    }

    fn free_bytes(&self) -> u64 {
        self.capacity.saturating_sub(self.used())
    }

    fn event_complete(&self, ev: &FakeEvent) -> bool {
        if ev.forced {
            return true;
        }
        match ev.recorded {
            None => true,
            Some((s, n)) => self.streams.get(&s).is_some_and(|st| st.completed >= n),
        }
    }

    fn overlaps_anything(&self, start: u64, size: u64) -> bool {
        let end = start.saturating_add(size);
        let hit = |m: &BTreeMap<u64, u64>| {
            m.range(..end)
                .next_back()
                .is_some_and(|(&p, &s)| p.saturating_add(s) > start)
        };
        hit(&self.allocations) || hit(&self.reservations)
    }
}

/// A simulated GPU implementing [`RawDevice`] (see the [module
/// docs](crate::fake)).
///
/// Defaults: addresses aligned to 2 MiB (set [`FakeDevice::with_alignment`]
/// to 512 for tightly packed fake addresses), VMM supported with a 2 MiB
/// granularity ([`FakeDevice::without_vmm`], [`FakeDevice::with_granularity`]).
///
/// ```
/// use alloc_cuda::{DeviceError, FakeDevice, RawDevice, StreamId};
/// let dev = FakeDevice::new(8 << 20).with_alignment(512);
/// // Failure injection: the 2nd malloc fails as if the device were full.
/// dev.fail_malloc_call(2);
/// assert!(dev.malloc(1024).is_ok());
/// assert_eq!(dev.malloc(1024), Err(DeviceError::OutOfMemory));
/// // Events stay pending until the test finishes the stream's work.
/// let ev = dev.create_event()?;
/// dev.record_event(ev, StreamId(1))?;
/// assert!(!dev.query_event(ev)?);
/// dev.complete_stream_work(StreamId(1));
/// assert!(dev.query_event(ev)?);
/// assert_eq!(dev.counters().malloc_calls, 2);
/// # Ok::<(), DeviceError>(())
/// ```
#[derive(Debug)]
pub struct FakeDevice {
    state: Mutex<FakeState>,
}

/// `x` rounded up to a multiple of `a` (> 0), or `None` past `u64::MAX`.
fn align_up(x: u64, a: u64) -> Option<u64> {
    x.div_ceil(a).checked_mul(a)
}

/// The end of the range `[ptr, ptr + size)`, or the driver's
/// invalid-value error when it wraps past the end of the address space
/// (a caller's bad size must be an error, never an overflow panic).
fn range_end(ptr: u64, size: u64, call: &str) -> Result<u64, DeviceError> {
    ptr.checked_add(size).ok_or_else(|| {
        DeviceError::InvalidValue(format!(
            "{call}: range of {size} bytes at {ptr:#x} wraps the address space"
        ))
    })
}

/// The largest alignment or granularity accepted (2^63, the largest power
/// of two in a `u64`); larger requests are capped to it.
const MAX_ALIGNMENT: u64 = 1 << 63;

impl FakeDevice {
    /// A device with `capacity` bytes of memory.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30); // a 1 GiB "GPU"
    /// assert_eq!(dev.capacity(), 1 << 30);
    /// assert_eq!(dev.mem_get_info()?, (1 << 30, 1 << 30)); // (free, total)
    /// assert!(dev.supports_vmm());
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn new(capacity: u64) -> FakeDevice {
        FakeDevice {
            state: Mutex::new(FakeState {
                capacity,
                external_usage: 0,
                alignment: 2 << 20,
                vmm: true,
                granularity: 2 << 20,
                next_addr: MALLOC_BASE,
                next_va: VA_BASE,
                allocations: BTreeMap::new(),
                reservations: BTreeMap::new(),
                handles: BTreeMap::new(),
                next_handle: 1,
                mappings: BTreeMap::new(),
                accessible: BTreeSet::new(),
                streams: BTreeMap::new(),
                events: BTreeMap::new(),
                next_event: 1,
                fail_malloc_calls: BTreeSet::new(),
                fail_next_mallocs: 0,
                next_malloc_error: None,
                fail_create_physical_calls: BTreeSet::new(),
                process_report: String::new(),
                counters: FakeCounters::default(),
            }),
        }
    }

    /// Aligns `malloc` addresses to `alignment` bytes, rounded up to a
    /// power of two and clamped to [512, 2^63] (the default is 2 MiB). With
    /// a huge alignment the fake address space runs out after a few
    /// allocations, which `malloc` reports as an error.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 20).with_alignment(512);
    /// let a = dev.malloc(1000)?;
    /// let b = dev.malloc(1000)?;
    /// assert_eq!(b.addr() - a.addr(), 1024); // 1000 rounded up to the alignment
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn with_alignment(self, alignment: u64) -> FakeDevice {
        {
            let mut s = self.state.lock();
            s.alignment = alignment.clamp(512, MAX_ALIGNMENT).next_power_of_two();
            // Past the end of the address space: every malloc then fails.
            s.next_addr = align_up(s.next_addr, s.alignment).unwrap_or(u64::MAX);
        }
        self
    }

    /// Turns the VMM calls (expandable segments) off.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30).without_vmm();
    /// assert!(!dev.supports_vmm());
    /// assert!(dev.reserve_address_range(2 << 20, 0).is_err());
    /// ```
    pub fn without_vmm(self) -> FakeDevice {
        self.state.lock().vmm = false;
        self
    }

    /// Sets the VMM granularity (rounded up to a power of two and clamped
    /// to [512, 2^63]; default 2 MiB).
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30).with_granularity(3 << 20);
    /// assert_eq!(dev.vmm_granularity(), 4 << 20); // rounded up to a power of two
    /// ```
    pub fn with_granularity(self, granularity: u64) -> FakeDevice {
        self.state.lock().granularity = granularity.clamp(512, MAX_ALIGNMENT).next_power_of_two();
        self
    }

    /// The capacity in bytes.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(64 << 20);
    /// let _p = dev.malloc(2 << 20)?;
    /// assert_eq!(dev.capacity(), 64 << 20); // allocations do not change it
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn capacity(&self) -> u64 {
        self.state.lock().capacity
    }

    /// Pretends another process uses `bytes` of the device's memory.
    ///
    /// ```
    /// use alloc_cuda::{DeviceError, FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(8 << 20);
    /// dev.set_external_usage(6 << 20);
    /// assert_eq!(dev.mem_get_info()?, (2 << 20, 8 << 20));
    /// assert_eq!(dev.malloc(4 << 20), Err(DeviceError::OutOfMemory));
    /// # Ok::<(), DeviceError>(())
    /// ```
    pub fn set_external_usage(&self, bytes: u64) {
        self.state.lock().external_usage = bytes;
    }

    /// Makes the `k`-th `malloc` call (1-based, counting every call since
    /// the device was created) fail with [`DeviceError::OutOfMemory`].
    ///
    /// ```
    /// use alloc_cuda::{DeviceError, FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30);
    /// dev.fail_malloc_call(2);
    /// assert!(dev.malloc(1024).is_ok());
    /// assert_eq!(dev.malloc(1024), Err(DeviceError::OutOfMemory));
    /// assert!(dev.malloc(1024).is_ok());
    /// ```
    pub fn fail_malloc_call(&self, k: u64) {
        self.state.lock().fail_malloc_calls.insert(k);
    }

    /// Makes the next `n` `malloc` calls fail with
    /// [`DeviceError::OutOfMemory`].
    ///
    /// ```
    /// use alloc_cuda::{DeviceError, FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30);
    /// dev.fail_next_mallocs(2);
    /// assert_eq!(dev.malloc(1024), Err(DeviceError::OutOfMemory));
    /// assert_eq!(dev.malloc(1024), Err(DeviceError::OutOfMemory));
    /// assert!(dev.malloc(1024).is_ok());
    /// ```
    pub fn fail_next_mallocs(&self, n: u64) {
        self.state.lock().fail_next_mallocs = n;
    }

    /// Makes the next `malloc` call fail with `error` (for example a
    /// non-out-of-memory error, which the allocator must not retry).
    ///
    /// ```
    /// use alloc_cuda::{DeviceError, FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30);
    /// let err = DeviceError::Other { code: 999, message: "unknown error".into() };
    /// dev.fail_next_malloc_with(err.clone());
    /// assert_eq!(dev.malloc(1024), Err(err));
    /// assert!(dev.malloc(1024).is_ok());
    /// ```
    pub fn fail_next_malloc_with(&self, error: DeviceError) {
        self.state.lock().next_malloc_error = Some(error);
    }

    /// Makes the `k`-th `create_physical` call (1-based) fail with
    /// [`DeviceError::OutOfMemory`].
    ///
    /// ```
    /// use alloc_cuda::{DeviceError, FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30);
    /// dev.fail_create_physical_call(1);
    /// assert_eq!(dev.create_physical(2 << 20), Err(DeviceError::OutOfMemory));
    /// assert!(dev.create_physical(2 << 20).is_ok());
    /// assert_eq!(dev.live_physical_handles(), 1);
    /// ```
    pub fn fail_create_physical_call(&self, k: u64) {
        self.state.lock().fail_create_physical_calls.insert(k);
    }

    /// Sets the text [`RawDevice::process_memory_report`] returns.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30);
    /// dev.set_process_memory_report("Process 1234 has 1.00 GiB memory in use.");
    /// assert_eq!(dev.process_memory_report(), "Process 1234 has 1.00 GiB memory in use.");
    /// ```
    pub fn set_process_memory_report(&self, report: impl Into<String>) {
        self.state.lock().process_report = report.into();
    }

    /// Marks all work submitted to `stream` so far as finished: every event
    /// recorded on it until now completes.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice, StreamId};
    /// let dev = FakeDevice::new(1 << 30);
    /// let ev = dev.create_event()?;
    /// dev.record_event(ev, StreamId(3))?;
    /// assert!(dev.is_event_pending(ev));
    /// dev.complete_stream_work(StreamId(3));
    /// assert!(!dev.is_event_pending(ev));
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn complete_stream_work(&self, stream: StreamId) {
        let mut s = self.state.lock();
        let st = s.streams.entry(stream).or_default();
        st.completed = st.recorded;
    }

    /// Marks all work on every stream as finished.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice, StreamId};
    /// let dev = FakeDevice::new(1 << 30);
    /// let (a, b) = (dev.create_event()?, dev.create_event()?);
    /// dev.record_event(a, StreamId(1))?;
    /// dev.record_event(b, StreamId(2))?;
    /// dev.complete_all_work();
    /// assert!(dev.query_event(a)? && dev.query_event(b)?);
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn complete_all_work(&self) {
        let mut s = self.state.lock();
        for st in s.streams.values_mut() {
            st.completed = st.recorded;
        }
    }

    /// Completes one event, whatever its stream is doing.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice, StreamId};
    /// let dev = FakeDevice::new(1 << 30);
    /// let (a, b) = (dev.create_event()?, dev.create_event()?);
    /// dev.record_event(a, StreamId(1))?;
    /// dev.record_event(b, StreamId(1))?;
    /// dev.set_event_complete(b); // `a`, recorded earlier, stays pending
    /// assert!(dev.is_event_pending(a) && !dev.is_event_pending(b));
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn set_event_complete(&self, event: EventId) {
        if let Some(ev) = self.state.lock().events.get_mut(&event) {
            ev.forced = true;
        }
    }

    /// Whether `event` exists and has not completed.
    ///
    /// ```
    /// use alloc_cuda::{EventId, FakeDevice, RawDevice, StreamId};
    /// let dev = FakeDevice::new(1 << 30);
    /// let ev = dev.create_event()?;
    /// dev.record_event(ev, StreamId(1))?;
    /// assert!(dev.is_event_pending(ev));
    /// dev.synchronize_event(ev)?; // waiting completes it
    /// assert!(!dev.is_event_pending(ev));
    /// assert!(!dev.is_event_pending(EventId(12345))); // unknown event
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn is_event_pending(&self, event: EventId) -> bool {
        let s = self.state.lock();
        s.events.get(&event).is_some_and(|ev| !s.event_complete(ev))
    }

    /// Events that exist (created and not destroyed), in creation order.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30);
    /// let (a, b) = (dev.create_event()?, dev.create_event()?);
    /// assert_eq!(dev.live_events(), vec![a, b]);
    /// dev.destroy_event(a)?;
    /// assert_eq!(dev.live_events(), vec![b]);
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn live_events(&self) -> Vec<EventId> {
        self.state.lock().events.keys().copied().collect()
    }

    /// The call counters.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice, StreamId};
    /// let dev = FakeDevice::new(1 << 30);
    /// dev.synchronize_stream(StreamId(1))?;
    /// dev.synchronize_device()?;
    /// let c = dev.counters();
    /// assert_eq!((c.stream_syncs, c.device_syncs, c.malloc_calls), (1, 1, 0));
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn counters(&self) -> FakeCounters {
        self.state.lock().counters
    }

    /// Live `malloc` allocations as `(address, size)`, by address.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30);
    /// let p = dev.malloc(4096)?;
    /// assert_eq!(dev.live_allocations(), vec![(p.addr(), 4096)]);
    /// // SAFETY: `p` came from this device and nothing uses it.
    /// unsafe { dev.free(p)? };
    /// assert!(dev.live_allocations().is_empty());
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn live_allocations(&self) -> Vec<(u64, u64)> {
        self.state
            .lock()
            .allocations
            .iter()
            .map(|(&p, &s)| (p, s))
            .collect()
    }

    /// Live mappings (expandable segments) as `(address, size)`.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30);
    /// let va = dev.reserve_address_range(8 << 20, 0)?;
    /// let h = dev.create_physical(2 << 20)?;
    /// dev.map(va, 2 << 20, h)?;
    /// assert_eq!(dev.live_mappings(), vec![(va.addr(), 2 << 20)]);
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn live_mappings(&self) -> Vec<(u64, u64)> {
        self.state
            .lock()
            .mappings
            .iter()
            .map(|(&p, &(s, _))| (p, s))
            .collect()
    }

    /// Live virtual address reservations as `(address, size)`.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30);
    /// let va = dev.reserve_address_range(8 << 20, 0)?;
    /// assert_eq!(dev.live_reservations(), vec![(va.addr(), 8 << 20)]);
    /// assert_eq!(dev.used_bytes(), 0); // reserving address space uses no memory
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn live_reservations(&self) -> Vec<(u64, u64)> {
        self.state
            .lock()
            .reservations
            .iter()
            .map(|(&p, &s)| (p, s))
            .collect()
    }

    /// Number of live physical handles.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30);
    /// let h = dev.create_physical(2 << 20)?;
    /// assert_eq!(dev.live_physical_handles(), 1);
    /// // SAFETY: `h` came from this device and is not mapped.
    /// unsafe { dev.release_physical(h)? };
    /// assert_eq!(dev.live_physical_handles(), 0);
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn live_physical_handles(&self) -> usize {
        self.state.lock().handles.len()
    }

    /// Bytes in use: `malloc`ed, physically created, and external.
    ///
    /// ```
    /// use alloc_cuda::{FakeDevice, RawDevice};
    /// let dev = FakeDevice::new(1 << 30);
    /// dev.set_external_usage(1 << 20);
    /// let _p = dev.malloc(4 << 20)?;
    /// let _h = dev.create_physical(2 << 20)?;
    /// assert_eq!(dev.used_bytes(), 7 << 20);
    /// # Ok::<(), alloc_cuda::DeviceError>(())
    /// ```
    pub fn used_bytes(&self) -> u64 {
        self.state.lock().used()
    }
}

// SAFETY: the fake never hands out overlapping ranges: `malloc` addresses
// come from a monotonic counter and reservations from another one in a
// disjoint region (both also checked against live ranges); mappings are
// checked to lie in a reservation and not to overlap; events complete only
// when the test completes them or a synchronize call waits for them. No
// memory is ever dereferenced.
unsafe impl RawDevice for FakeDevice {
    fn malloc(&self, nbytes: u64) -> Result<DevicePtr, DeviceError> {
        let mut s = self.state.lock();
        s.counters.malloc_calls += 1;
        let call = s.counters.malloc_calls;
        if let Some(e) = s.next_malloc_error.take() {
            s.counters.malloc_failures += 1;
            return Err(e);
        }
        let injected = s.fail_malloc_calls.remove(&call) || {
            let n = s.fail_next_mallocs;
            s.fail_next_mallocs = n.saturating_sub(1);
            n > 0
        };
        if injected || nbytes == 0 || nbytes > s.free_bytes() {
            s.counters.malloc_failures += 1;
            return Err(if nbytes == 0 {
                DeviceError::InvalidValue("cudaMalloc of 0 bytes".into())
            } else {
                DeviceError::OutOfMemory
            });
        }
        let exhausted = || DeviceError::Other {
            code: 999,
            message: "fake device address space exhausted".into(),
        };
        let ptr = align_up(s.next_addr, s.alignment).ok_or_else(exhausted)?;
        let end = ptr.checked_add(nbytes).ok_or_else(exhausted)?;
        if s.overlaps_anything(ptr, nbytes) {
            return Err(exhausted());
        }
        s.next_addr = end;
        s.allocations.insert(ptr, nbytes);
        Ok(DevicePtr(ptr))
    }

    unsafe fn free(&self, ptr: DevicePtr) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.counters.free_calls += 1;
        match s.allocations.remove(&ptr.0) {
            Some(_) => Ok(()),
            None => Err(DeviceError::InvalidValue(format!(
                "cudaFree of {ptr}, which is not a live allocation"
            ))),
        }
    }

    fn mem_get_info(&self) -> Result<(u64, u64), DeviceError> {
        let mut s = self.state.lock();
        s.counters.mem_get_info_calls += 1;
        Ok((s.free_bytes(), s.capacity))
    }

    fn create_event(&self) -> Result<EventId, DeviceError> {
        let mut s = self.state.lock();
        s.counters.event_creates += 1;
        let id = EventId(s.next_event);
        s.next_event += 1;
        s.events.insert(id, FakeEvent::default());
        Ok(id)
    }

    fn record_event(&self, event: EventId, stream: StreamId) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.counters.event_records += 1;
        if !s.events.contains_key(&event) {
            return Err(DeviceError::InvalidValue(format!(
                "record of unknown event {}",
                event.0
            )));
        }
        let st = s.streams.entry(stream).or_default();
        st.recorded += 1;
        let n = st.recorded;
        s.events.insert(
            event,
            FakeEvent {
                recorded: Some((stream, n)),
                forced: false,
            },
        );
        Ok(())
    }

    fn query_event(&self, event: EventId) -> Result<bool, DeviceError> {
        let mut s = self.state.lock();
        s.counters.event_queries += 1;
        match s.events.get(&event) {
            Some(ev) => Ok(s.event_complete(ev)),
            None => Err(DeviceError::InvalidValue(format!(
                "query of unknown event {}",
                event.0
            ))),
        }
    }

    fn synchronize_event(&self, event: EventId) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.counters.event_syncs += 1;
        let Some(ev) = s.events.get(&event).copied() else {
            return Err(DeviceError::InvalidValue(format!(
                "synchronize of unknown event {}",
                event.0
            )));
        };
        // Waiting for the event means the stream's work up to it is done.
        if let Some((stream, n)) = ev.recorded {
            let st = s.streams.entry(stream).or_default();
            st.completed = st.completed.max(n);
        }
        Ok(())
    }

    fn destroy_event(&self, event: EventId) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.counters.event_destroys += 1;
        match s.events.remove(&event) {
            Some(_) => Ok(()),
            None => Err(DeviceError::InvalidValue(format!(
                "destroy of unknown event {}",
                event.0
            ))),
        }
    }

    fn synchronize_device(&self) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.counters.device_syncs += 1;
        for st in s.streams.values_mut() {
            st.completed = st.recorded;
        }
        Ok(())
    }

    fn synchronize_stream(&self, stream: StreamId) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.counters.stream_syncs += 1;
        let st = s.streams.entry(stream).or_default();
        st.completed = st.recorded;
        Ok(())
    }

    fn process_memory_report(&self) -> String {
        self.state.lock().process_report.clone()
    }

    unsafe fn copy_device_to_device(&self, copy: DeviceCopy) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.counters.copy_calls += 1;
        let _ = copy;
        Ok(())
    }

    fn supports_vmm(&self) -> bool {
        self.state.lock().vmm
    }

    fn vmm_granularity(&self) -> u64 {
        self.state.lock().granularity
    }

    fn reserve_address_range(&self, size: u64, alignment: u64) -> Result<DevicePtr, DeviceError> {
        let mut s = self.state.lock();
        s.counters.reserve_calls += 1;
        if !s.vmm {
            return Err(DeviceError::NotSupported("cuMemAddressReserve".into()));
        }
        if size == 0 || !size.is_multiple_of(s.granularity) {
            return Err(DeviceError::InvalidValue(format!(
                "reservation of {size} bytes is not a multiple of the granularity"
            )));
        }
        // An alignment or size past the end of the address space is out
        // of (virtual) memory, like an overlapping one.
        let ptr =
            align_up(s.next_va, alignment.max(s.granularity)).ok_or(DeviceError::OutOfMemory)?;
        let end = ptr.checked_add(size).ok_or(DeviceError::OutOfMemory)?;
        if s.overlaps_anything(ptr, size) {
            return Err(DeviceError::OutOfMemory);
        }
        s.next_va = end;
        s.reservations.insert(ptr, size);
        Ok(DevicePtr(ptr))
    }

    unsafe fn free_address_range(&self, ptr: DevicePtr, size: u64) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.counters.address_free_calls += 1;
        if s.reservations.get(&ptr.0) != Some(&size) {
            return Err(DeviceError::InvalidValue(format!(
                "cuMemAddressFree({ptr}, {size}) does not match a reservation"
            )));
        }
        if s.mappings
            .range(ptr.0..ptr.0.saturating_add(size))
            .next()
            .is_some()
        {
            return Err(DeviceError::InvalidValue(format!(
                "cuMemAddressFree({ptr}) while pages are still mapped"
            )));
        }
        s.reservations.remove(&ptr.0);
        Ok(())
    }

    fn create_physical(&self, size: u64) -> Result<PhysHandle, DeviceError> {
        let mut s = self.state.lock();
        s.counters.create_physical_calls += 1;
        let call = s.counters.create_physical_calls;
        if !s.vmm {
            return Err(DeviceError::NotSupported("cuMemCreate".into()));
        }
        if size == 0 || !size.is_multiple_of(s.granularity) {
            return Err(DeviceError::InvalidValue(format!(
                "cuMemCreate of {size} bytes is not a multiple of the granularity"
            )));
        }
        if s.fail_create_physical_calls.remove(&call) || size > s.free_bytes() {
            s.counters.create_physical_failures += 1;
            return Err(DeviceError::OutOfMemory);
        }
        let h = s.next_handle;
        s.next_handle += 1;
        s.handles.insert(h, size);
        Ok(PhysHandle(h))
    }

    unsafe fn release_physical(&self, handle: PhysHandle) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.counters.release_physical_calls += 1;
        if s.mappings.values().any(|&(_, h)| h == handle) {
            return Err(DeviceError::InvalidValue(format!(
                "cuMemRelease of handle {} while it is mapped",
                handle.0
            )));
        }
        match s.handles.remove(&handle.0) {
            Some(_) => Ok(()),
            None => Err(DeviceError::InvalidValue(format!(
                "cuMemRelease of unknown handle {}",
                handle.0
            ))),
        }
    }

    fn map(&self, ptr: DevicePtr, size: u64, handle: PhysHandle) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.counters.map_calls += 1;
        if s.handles.get(&handle.0) != Some(&size) {
            return Err(DeviceError::InvalidValue(format!(
                "cuMemMap: handle {} is not a live {size}-byte allocation",
                handle.0
            )));
        }
        if s.mappings.values().any(|&(_, h)| h == handle) {
            return Err(DeviceError::InvalidValue(format!(
                "cuMemMap: handle {} is already mapped",
                handle.0
            )));
        }
        if !ptr.0.is_multiple_of(s.granularity) {
            return Err(DeviceError::InvalidValue(format!(
                "cuMemMap at unaligned address {ptr}"
            )));
        }
        let end = range_end(ptr.0, size, "cuMemMap")?;
        let inside = s
            .reservations
            .range(..=ptr.0)
            .next_back()
            .is_some_and(|(&p, &sz)| end <= p.saturating_add(sz));
        if !inside {
            return Err(DeviceError::InvalidValue(format!(
                "cuMemMap at {ptr} outside any reservation"
            )));
        }
        let overlaps = s
            .mappings
            .range(..end)
            .next_back()
            .is_some_and(|(&p, &(sz, _))| p.saturating_add(sz) > ptr.0);
        if overlaps {
            return Err(DeviceError::InvalidValue(format!(
                "cuMemMap at {ptr} overlaps an existing mapping"
            )));
        }
        s.mappings.insert(ptr.0, (size, handle));
        Ok(())
    }

    fn set_access(&self, ptr: DevicePtr, size: u64) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.counters.set_access_calls += 1;
        // Every byte must be mapped.
        let mut at = ptr.0;
        let end = range_end(ptr.0, size, "cuMemSetAccess")?;
        while at < end {
            let Some((&p, &(sz, _))) = s.mappings.range(..=at).next_back() else {
                return Err(DeviceError::InvalidValue(format!(
                    "cuMemSetAccess over unmapped address {at:#x}"
                )));
            };
            if p.saturating_add(sz) <= at {
                return Err(DeviceError::InvalidValue(format!(
                    "cuMemSetAccess over unmapped address {at:#x}"
                )));
            }
            s.accessible.insert(p);
            at = p.saturating_add(sz);
        }
        Ok(())
    }

    unsafe fn unmap(&self, ptr: DevicePtr, size: u64) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.counters.unmap_calls += 1;
        match s.mappings.get(&ptr.0) {
            Some(&(sz, _)) if sz == size => {
                s.mappings.remove(&ptr.0);
                s.accessible.remove(&ptr.0);
                Ok(())
            }
            _ => Err(DeviceError::InvalidValue(format!(
                "cuMemUnmap({ptr}, {size}) does not match a mapping"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malloc_free_and_capacity() {
        let d = FakeDevice::new(10 << 20).with_alignment(512);
        let a = d.malloc(1000).unwrap();
        let b = d.malloc(1000).unwrap();
        assert_eq!(a.0 % 512, 0);
        assert_eq!(b.0, a.0 + 1024);
        assert_eq!(d.mem_get_info().unwrap(), ((10 << 20) - 2000, 10 << 20));
        assert_eq!(d.malloc(11 << 20), Err(DeviceError::OutOfMemory));
        // SAFETY: fake memory, never used.
        unsafe {
            d.free(a).unwrap();
            assert!(d.free(a).is_err());
        }
        let c = d.counters();
        assert_eq!((c.malloc_calls, c.malloc_failures, c.free_calls), (3, 1, 2));
    }

    #[test]
    fn injected_failures() {
        let d = FakeDevice::new(1 << 30);
        d.fail_malloc_call(2);
        assert!(d.malloc(512).is_ok());
        assert_eq!(d.malloc(512), Err(DeviceError::OutOfMemory));
        assert!(d.malloc(512).is_ok());
        d.fail_next_mallocs(2);
        assert!(d.malloc(512).is_err());
        assert!(d.malloc(512).is_err());
        assert!(d.malloc(512).is_ok());
        d.set_external_usage((1 << 30) - 1000);
        assert_eq!(d.malloc(2000), Err(DeviceError::OutOfMemory));
    }

    #[test]
    fn events_follow_streams() {
        let d = FakeDevice::new(1 << 20);
        let s1 = StreamId(1);
        let e = d.create_event().unwrap();
        assert!(d.query_event(e).unwrap(), "unrecorded events are complete");
        d.record_event(e, s1).unwrap();
        assert!(!d.query_event(e).unwrap());
        d.complete_stream_work(s1);
        assert!(d.query_event(e).unwrap());
        d.record_event(e, s1).unwrap();
        assert!(d.is_event_pending(e));
        d.set_event_complete(e);
        assert!(d.query_event(e).unwrap());
        d.record_event(e, s1).unwrap();
        d.synchronize_event(e).unwrap();
        assert!(d.query_event(e).unwrap());
        d.destroy_event(e).unwrap();
        assert!(d.query_event(e).is_err());
    }

    #[test]
    fn vmm_checks() {
        let d = FakeDevice::new(64 << 20);
        let g = 2 << 20;
        let va = d.reserve_address_range(8 * g, g).unwrap();
        let h = d.create_physical(g).unwrap();
        assert!(d.map(DevicePtr(va.0 + 1), g, h).is_err());
        d.map(va, g, h).unwrap();
        assert!(d.map(va, g, h).is_err());
        d.set_access(va, g).unwrap();
        assert!(d.set_access(va, 2 * g).is_err());
        // SAFETY: fake memory.
        unsafe {
            assert!(d.release_physical(h).is_err(), "still mapped");
            assert!(d.free_address_range(va, 8 * g).is_err(), "still mapped");
            d.unmap(va, g).unwrap();
            d.release_physical(h).unwrap();
            d.free_address_range(va, 8 * g).unwrap();
        }
        assert_eq!(d.used_bytes(), 0);
        assert!(FakeDevice::new(1).without_vmm().create_physical(g).is_err());
    }
}
