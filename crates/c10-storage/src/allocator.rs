//! The `Allocator` trait and the process-wide registry of allocators per
//! device type.

use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

use parking_lot::Mutex;

use crate::data_ptr::{DataPtr, DeleterFn};
use crate::device::{DeviceType, COMPILE_TIME_MAX_DEVICE_TYPES};

/// Why an allocation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AllocError {
    /// The backend could not provide the memory. The message is the
    /// backend's own (for the CPU allocator, c10's
    /// `DefaultCPUAllocator: can't allocate memory: ...`).
    #[error("{message}")]
    OutOfMemory {
        /// How many bytes were requested.
        nbytes: usize,
        /// The backend's message.
        message: String,
    },
    /// Nothing is registered for this device type (c10's debug check in
    /// `GetAllocator`).
    #[error("Allocator for {0} is not set.")]
    NotRegistered(DeviceType),
    /// The allocator cannot do what was asked (for example the raw API on an
    /// allocator without a raw deleter).
    #[error("{0}")]
    Unsupported(String),
    /// An allocator was registered for another device type than the one it
    /// allocates on ([`Allocator::device_type`]).
    #[error("cannot register an allocator of {allocator} memory for device type {slot}: its Allocator::device_type() is {allocator}, so {slot} factories would make {allocator} storages")]
    WrongDeviceType {
        /// The device type it was registered for.
        slot: DeviceType,
        /// The device type it reports.
        allocator: DeviceType,
    },
    /// A copy between two buffers of the allocator's device failed
    /// ([`Allocator::copy_data`]): the device reported an error, or the
    /// allocator has no copy for memory the host cannot address.
    #[error("copying {count} bytes failed: {message}")]
    CopyFailed {
        /// How many bytes were to be copied.
        count: usize,
        /// What went wrong.
        message: String,
    },
}

/// Allocation statistics an allocator may report.
///
/// Byte counts are of requested bytes (not of what the system allocator
/// rounded them up to). `peak_bytes` is the highest `current_bytes` since
/// creation or the last [`Allocator::reset_peak_stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocatorStats {
    /// Bytes currently allocated.
    pub current_bytes: u64,
    /// Highest value `current_bytes` reached.
    pub peak_bytes: u64,
    /// Bytes allocated in total.
    pub allocated_bytes: u64,
    /// Bytes freed in total.
    pub freed_bytes: u64,
    /// Number of allocations made.
    pub allocations: u64,
    /// Number of allocations freed.
    pub frees: u64,
}

/// A source of memory for one device type (c10's `at::Allocator`).
///
/// Object-safe and `Send + Sync`, so one allocator serves every thread and
/// can be registered as a `&'static dyn Allocator`. Implement it in your own
/// crate and register it with [`set_allocator`]; see
/// `docs/custom-allocator.md` and the `examples/custom-allocator` crate of
/// the workspace (a size-class caching allocator that passes the
/// conformance kit).
///
/// # Safety
///
/// Storages hand out safe `&[u8]`/`&mut [u8]` views of what an allocator
/// returns, so implementors promise, for every `Ok(ptr)` returned by
/// `allocate(n)` with `n > 0`:
///
/// 1. `ptr.get()` is non-null and valid for reads and writes of `n` bytes
///    on a device of type [`Allocator::device_type`], until `ptr`'s deleter
///    runs;
/// 2. those bytes overlap no other live allocation;
/// 3. `ptr.device().device_type() == self.device_type()`;
/// 4. running `ptr`'s deleter once, from any thread, is sound;
/// 5. if the device type is host-accessible (CPU), the `n` bytes are
///    initialised (any values). Safe code reads storage bytes as `&[u8]`,
///    and reading uninitialised memory that way is undefined behaviour in
///    Rust; this is why the CPU allocator zero-fills (through `calloc`,
///    which is free for fresh pages) where c10 leaves memory uninitialised.
///
/// For `n == 0` the pointer may be null (c10 returns null).
///
/// [`Allocator::allocate_for_overwrite`] promises the same except 5: its
/// bytes may be uninitialised. Storages made from it keep track of that
/// ([`crate::Storage::new_uninit`] zero-fills lazily, before the first
/// access that could expose a byte, unless everything is overwritten
/// first; the `unsafe` [`crate::Storage::new_for_overwrite`] leaves it to
/// its caller), so safe code never sees those bytes.
///
/// Alignment is not part of the safety contract (typed access checks it at
/// run time), but [`crate::testing`] checks the alignment you document.
pub unsafe trait Allocator: Send + Sync {
    /// Allocates `nbytes` bytes.
    fn allocate(&self, nbytes: usize) -> Result<DataPtr, AllocError>;

    /// The device type of the memory this allocator returns.
    fn device_type(&self) -> DeviceType;

    /// Copies `count` bytes between two buffers of this allocator's device
    /// (c10's `copy_data`).
    ///
    /// The default is a `memcpy` ([`default_copy_data`]) when
    /// [`device_type`](Allocator::device_type) is host-accessible (CPU), the
    /// only sensible body for host memory, so host allocators need not
    /// write it. Allocators for memory the host cannot address (CUDA, ...)
    /// override it with their device's copy: for them the default copies
    /// nothing and returns [`AllocError::CopyFailed`], since a host `memcpy`
    /// of device addresses would be undefined behaviour. A device error is
    /// returned the same way, so a failed copy reaches the caller (for
    /// example [`crate::Storage::resize`]) as an error, never as a panic or
    /// as silently stale bytes.
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads and `dst` for writes of `count` bytes on
    /// this allocator's device, and the two ranges must not overlap. (For the
    /// default on a host-accessible device, that is exactly
    /// [`std::ptr::copy_nonoverlapping`]'s contract; nothing is touched when
    /// `count == 0`.)
    ///
    /// ```
    /// use c10_storage::{AllocError, Allocator, DataPtr, Device, DeviceType};
    /// struct Nothing(DeviceType); // an allocator that only hands out empty buffers
    /// // SAFETY: it never returns memory.
    /// unsafe impl Allocator for Nothing {
    ///     fn allocate(&self, nbytes: usize) -> Result<DataPtr, AllocError> {
    ///         Err(AllocError::OutOfMemory { nbytes, message: "none".into() })
    ///     }
    ///     fn device_type(&self) -> DeviceType { self.0 }
    ///     // no copy_data: the default memcpy serves host memory
    /// }
    /// let (src, mut dst) = ([1u8, 2, 3], [0u8; 3]);
    /// // SAFETY: both arrays hold 3 bytes and do not overlap.
    /// unsafe { Nothing(DeviceType::Cpu).copy_data(dst.as_mut_ptr(), src.as_ptr(), 3)? };
    /// assert_eq!(dst, src);
    /// // For device memory the default refuses instead of guessing.
    /// // SAFETY: as above (and nothing is touched).
    /// let e = unsafe { Nothing(DeviceType::Fpga).copy_data(dst.as_mut_ptr(), src.as_ptr(), 3) };
    /// assert!(matches!(e, Err(AllocError::CopyFailed { count: 3, .. })));
    /// # Ok::<(), AllocError>(())
    /// ```
    unsafe fn copy_data(
        &self,
        dst: *mut u8,
        src: *const u8,
        count: usize,
    ) -> Result<(), AllocError> {
        let device = self.device_type();
        if device.is_host_accessible() {
            // SAFETY: the caller guarantees `src`/`dst` valid for `count`
            // bytes and disjoint, and host-accessible memory is addressable
            // from this thread: `copy_nonoverlapping`'s contract.
            unsafe { default_copy_data(dst, src, count) }
        } else if count > 0 {
            Err(AllocError::CopyFailed {
                count,
                message: format!(
                    "{} does not implement Allocator::copy_data for {device:?} memory (the default memcpy only serves host memory)",
                    self.name()
                ),
            })
        } else {
            Ok(())
        }
    }

    /// A deleter that frees the data pointer of a "simple" allocation when
    /// called on it, if this allocator supports the raw API (c10's
    /// `raw_deleter`; default: none).
    fn raw_deleter(&self) -> Option<DeleterFn> {
        None
    }

    /// Whether `ptr` is a simple pointer (context == data), c10's
    /// `is_simple_data_ptr`.
    fn is_simple_data_ptr(&self, ptr: &DataPtr) -> bool {
        ptr.is_simple()
    }

    /// [`allocate`](Allocator::allocate) for a caller that writes every
    /// byte before anything reads one (the destination of a copy, through
    /// [`crate::Storage::new_for_overwrite`]): the bytes may be left
    /// uninitialised, which saves the CPU allocator its zero fill (a
    /// `memset` of the whole block whenever `malloc` recycles memory).
    /// The default calls `allocate`.
    ///
    /// ```
    /// use c10_storage::DeviceType;
    /// # struct Zeroed;
    /// # // SAFETY: zeroed heap bytes, freed by their owner.
    /// # unsafe impl c10_storage::Allocator for Zeroed {
    /// #     fn allocate(&self, n: usize) -> Result<c10_storage::DataPtr, c10_storage::AllocError> {
    /// #         Ok(c10_storage::DataPtr::from_owner(vec![0u8; n]))
    /// #     }
    /// #     fn device_type(&self) -> DeviceType { DeviceType::Cpu }
    /// #     unsafe fn copy_data(&self, d: *mut u8, s: *const u8, n: usize) -> Result<(), c10_storage::AllocError> {
    /// #         // SAFETY: forwarded contract.
    /// #         unsafe { c10_storage::default_copy_data(d, s, n) }
    /// #     }
    /// # }
    /// # let alloc: &dyn c10_storage::Allocator = &Zeroed;
    /// // Without an override it is `allocate`: here, zeroed bytes.
    /// let p = alloc.allocate_for_overwrite(16)?;
    /// assert!(!p.is_null());
    /// # Ok::<(), c10_storage::AllocError>(())
    /// ```
    fn allocate_for_overwrite(&self, nbytes: usize) -> Result<DataPtr, AllocError> {
        self.allocate(nbytes)
    }

    /// Whether every allocation comes back zero-filled, so that `zeros`
    /// can skip its fill (default: `false`).
    fn zeroes_memory(&self) -> bool {
        false
    }

    /// Current statistics, if this allocator keeps them.
    fn stats(&self) -> Option<AllocatorStats> {
        None
    }

    /// Resets `peak_bytes` to `current_bytes` (no-op without statistics).
    fn reset_peak_stats(&self) {}

    /// A short name for messages and reports.
    fn name(&self) -> &str {
        std::any::type_name::<Self>()
    }

    /// Allocates `count` bytes and copies them from `src` (c10's
    /// `Allocator::clone`).
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads of `count` bytes on this allocator's
    /// device.
    unsafe fn clone_data(&self, src: *const u8, count: usize) -> Result<DataPtr, AllocError> {
        let dst = self.allocate(count)?;
        if count > 0 {
            // SAFETY: `dst` holds `count` fresh bytes (the trait contract),
            // so it cannot overlap `src`, which the caller vouches for.
            unsafe { self.copy_data(dst.get(), src, count) }?;
        }
        Ok(dst)
    }

    /// Allocates and returns a bare pointer that must later be given to
    /// [`Allocator::raw_deallocate`] (c10's `raw_allocate`). Needs a
    /// [`raw_deleter`](Allocator::raw_deleter) and a simple pointer.
    fn raw_allocate(&self, nbytes: usize) -> Result<*mut u8, AllocError> {
        if self.raw_deleter().is_none() {
            return Err(AllocError::Unsupported(format!(
                "{} does not support the raw allocation API (no raw deleter)",
                self.name()
            )));
        }
        let mut ptr = self.allocate(nbytes)?;
        if !self.is_simple_data_ptr(&ptr) {
            return Err(AllocError::Unsupported(format!(
                "{} returned a non-simple data pointer, so it cannot be used through the raw API",
                self.name()
            )));
        }
        let data = ptr.get();
        let _ctx = ptr.release_context();
        Ok(data)
    }

    /// Frees a pointer from [`Allocator::raw_allocate`] (c10's
    /// `raw_deallocate`).
    ///
    /// # Safety
    ///
    /// `ptr` must come from `raw_allocate` on this allocator and not have
    /// been freed.
    unsafe fn raw_deallocate(&self, ptr: *mut u8) -> Result<(), AllocError> {
        match self.raw_deleter() {
            Some(deleter) => {
                // SAFETY: the caller guarantees `ptr` is a live simple
                // allocation of ours, which the raw deleter frees.
                unsafe { deleter(ptr.cast()) };
                Ok(())
            }
            None => Err(AllocError::Unsupported(format!(
                "{} does not support the raw allocation API (no raw deleter)",
                self.name()
            ))),
        }
    }
}

/// `memcpy` for host allocators' [`Allocator::copy_data`]. It cannot fail;
/// it returns `copy_data`'s `Result` so that a host allocator's whole body
/// is this one call.
///
/// # Safety
///
/// As [`std::ptr::copy_nonoverlapping`] when `count > 0`; nothing is read or
/// written when `count == 0` (so null pointers are fine then).
///
/// ```
/// let (src, mut dst) = ([7u8; 4], [0u8; 4]);
/// // SAFETY: both arrays hold 4 bytes and do not overlap.
/// unsafe { c10_storage::default_copy_data(dst.as_mut_ptr(), src.as_ptr(), 4)? };
/// assert_eq!(dst, src);
/// # Ok::<(), c10_storage::AllocError>(())
/// ```
pub unsafe fn default_copy_data(
    dst: *mut u8,
    src: *const u8,
    count: usize,
) -> Result<(), AllocError> {
    if count > 0 {
        // SAFETY: forwarded to the caller.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, count) }
    }
    Ok(())
}

/// One registry slot. The allocator is stored as a pointer to a leaked
/// `&'static dyn Allocator` so that a lookup is a single atomic load (the
/// fat `&dyn` cannot be stored in one atomic word).
struct Slot {
    current: AtomicPtr<&'static dyn Allocator>,
    priority: AtomicU8,
    fallback: AtomicPtr<&'static dyn Allocator>,
}

#[allow(clippy::declare_interior_mutable_const)] // Used only to initialise the array below.
const EMPTY_SLOT: Slot = Slot {
    current: AtomicPtr::new(std::ptr::null_mut()),
    priority: AtomicU8::new(0),
    fallback: AtomicPtr::new(std::ptr::null_mut()),
};

static SLOTS: [Slot; COMPILE_TIME_MAX_DEVICE_TYPES] = [EMPTY_SLOT; COMPILE_TIME_MAX_DEVICE_TYPES];
/// Serialises writers so the priority check and the store are one step.
static WRITE_LOCK: Mutex<()> = Mutex::new(());

#[inline]
fn slot(t: DeviceType) -> &'static Slot {
    // `DeviceType` discriminants are 0..COMPILE_TIME_MAX_DEVICE_TYPES by
    // construction (checked by a unit test), so this index is in bounds.
    &SLOTS[t as usize]
}

/// Every slot value ever stored. A replaced value cannot be freed (a reader
/// may have loaded its pointer a moment earlier), so it is kept here, which
/// also keeps it reachable for leak checkers.
static KEPT: Mutex<Vec<&'static &'static dyn Allocator>> = Mutex::new(Vec::new());

fn leak(a: &'static dyn Allocator) -> *mut &'static dyn Allocator {
    // Registrations are rare (once per backend and process), so 16 bytes
    // per registration is the price of lock-free lookups.
    let boxed: &'static &'static dyn Allocator = Box::leak(Box::new(a));
    KEPT.lock().push(boxed);
    std::ptr::from_ref(boxed).cast_mut()
}

/// Registers `allocator` for `device_type` with `priority`, c10's
/// `SetAllocator`: the registration is ignored if a previous one has a
/// **higher** priority (equal priority replaces). Returns whether it took.
///
/// Fails with [`AllocError::WrongDeviceType`] (and registers nothing) when
/// `allocator.device_type()` is not `device_type`: factories of that device
/// type would otherwise make storages on another device.
///
/// ```
/// use c10_storage::{set_allocator, get_allocator, Allocator, AllocError, DataPtr, DeviceType};
/// struct Nothing;
/// // SAFETY: never hands out memory.
/// unsafe impl Allocator for Nothing {
///     fn allocate(&self, n: usize) -> Result<DataPtr, AllocError> {
///         Err(AllocError::OutOfMemory { nbytes: n, message: "nothing here".into() })
///     }
///     fn device_type(&self) -> DeviceType { DeviceType::Fpga }
///     unsafe fn copy_data(&self, _: *mut u8, _: *const u8, _: usize) -> Result<(), c10_storage::AllocError> { Ok(()) }
/// }
/// static NOTHING: Nothing = Nothing;
/// assert!(set_allocator(DeviceType::Fpga, &NOTHING, 3)?);
/// assert!(!set_allocator(DeviceType::Fpga, &NOTHING, 1)?); // lower priority: ignored
/// assert!(get_allocator(DeviceType::Fpga)?.allocate(8).is_err());
/// // An FPGA allocator cannot serve another device type.
/// assert!(matches!(
///     set_allocator(DeviceType::Ve, &NOTHING, 3),
///     Err(AllocError::WrongDeviceType { .. })
/// ));
/// # Ok::<(), AllocError>(())
/// ```
pub fn set_allocator(
    device_type: DeviceType,
    allocator: &'static dyn Allocator,
    priority: u8,
) -> Result<bool, AllocError> {
    check_device_type(device_type, allocator)?;
    let _guard = WRITE_LOCK.lock();
    let s = slot(device_type);
    let occupied = !s.current.load(Ordering::Acquire).is_null();
    if occupied && priority < s.priority.load(Ordering::Relaxed) {
        return Ok(false);
    }
    s.priority.store(priority, Ordering::Relaxed);
    s.current.store(leak(allocator), Ordering::Release);
    Ok(true)
}

/// Registers `allocator` for `device_type` like [`set_allocator`], until the
/// returned guard is dropped; then the slot gets back what it held before
/// (another allocator and its priority, or nothing, in which case the
/// backend default serves again). Meant for test suites and scoped
/// experiments; storages allocated meanwhile keep the allocator that made
/// them (it frees and resizes them), which is why the allocator must be
/// `'static`.
///
/// Priorities work as for [`set_allocator`]: if a registration with a
/// higher priority is in place, this one does not take
/// ([`AllocatorGuard::took`] is false) and the guard restores nothing. If
/// another registration replaces this one while the guard lives, dropping
/// the guard leaves that newer registration in place. Drop nested guards in
/// reverse order of creation (as scopes do).
///
/// ```
/// use c10_storage::{get_allocator, set_allocator_scoped, Allocator, AllocError, DataPtr, DeviceType};
/// struct Nothing;
/// // SAFETY: never hands out memory.
/// unsafe impl Allocator for Nothing {
///     fn allocate(&self, n: usize) -> Result<DataPtr, AllocError> {
///         Err(AllocError::OutOfMemory { nbytes: n, message: "nothing here".into() })
///     }
///     fn device_type(&self) -> DeviceType { DeviceType::Xla }
///     unsafe fn copy_data(&self, _: *mut u8, _: *const u8, _: usize) -> Result<(), c10_storage::AllocError> { Ok(()) }
///     fn name(&self) -> &str { "Nothing" }
/// }
/// static NOTHING: Nothing = Nothing;
/// assert!(get_allocator(DeviceType::Xla).is_err()); // nothing registered
/// {
///     let guard = set_allocator_scoped(DeviceType::Xla, &NOTHING, 5)?;
///     assert!(guard.took());
///     assert_eq!(get_allocator(DeviceType::Xla)?.name(), "Nothing");
/// }
/// assert!(get_allocator(DeviceType::Xla).is_err()); // restored
/// # Ok::<(), AllocError>(())
/// ```
pub fn set_allocator_scoped(
    device_type: DeviceType,
    allocator: &'static dyn Allocator,
    priority: u8,
) -> Result<AllocatorGuard, AllocError> {
    check_device_type(device_type, allocator)?;
    let _guard = WRITE_LOCK.lock();
    let s = slot(device_type);
    let prev = s.current.load(Ordering::Acquire);
    let prev_priority = s.priority.load(Ordering::Relaxed);
    if !prev.is_null() && priority < prev_priority {
        return Ok(AllocatorGuard {
            device_type,
            ours: None,
            prev: None,
            prev_priority,
        });
    }
    let ours = leak(allocator);
    s.priority.store(priority, Ordering::Relaxed);
    s.current.store(ours, Ordering::Release);
    // SAFETY: `ours` comes from `leak`, which never frees.
    let ours: &'static &'static dyn Allocator = unsafe { &*ours };
    let prev = if prev.is_null() {
        None
    } else {
        // SAFETY: a non-null slot pointer comes from `leak`, which never
        // frees.
        Some(unsafe { &*prev })
    };
    Ok(AllocatorGuard {
        device_type,
        ours: Some(ours),
        prev,
        prev_priority,
    })
}

/// The guard of [`set_allocator_scoped`]: dropping it ends the
/// registration. (Called `ScopedAllocator` before 0.2; that name is kept
/// as a deprecated alias.)
#[must_use = "the registration ends when the guard is dropped"]
pub struct AllocatorGuard {
    device_type: DeviceType,
    /// The slot value this guard stored (`None`: the registration did not
    /// take).
    ours: Option<&'static &'static dyn Allocator>,
    /// What the slot held before (`None`: nothing registered).
    prev: Option<&'static &'static dyn Allocator>,
    prev_priority: u8,
}

/// The old name of [`AllocatorGuard`].
#[deprecated(
    since = "0.2.0",
    note = "renamed `AllocatorGuard`: it is a guard, not an allocator"
)]
pub type ScopedAllocator = AllocatorGuard;

impl std::fmt::Debug for AllocatorGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllocatorGuard")
            .field("device_type", &self.device_type)
            .field("allocator", &self.ours.map(|a| a.name()))
            .field("restores", &self.prev.map(|a| a.name()))
            .field("restores_priority", &self.prev_priority)
            .finish()
    }
}

impl AllocatorGuard {
    /// Whether the registration took (no registration of higher priority
    /// was in place).
    ///
    /// ```
    /// # use c10_storage::{set_allocator_scoped, Allocator, AllocError, DataPtr, DeviceType};
    /// # struct Nothing;
    /// # // SAFETY: never hands out memory.
    /// # unsafe impl Allocator for Nothing {
    /// #     fn allocate(&self, n: usize) -> Result<DataPtr, AllocError> {
    /// #         Err(AllocError::OutOfMemory { nbytes: n, message: "none".into() })
    /// #     }
    /// #     fn device_type(&self) -> DeviceType { DeviceType::Hpu }
    /// #     unsafe fn copy_data(&self, _: *mut u8, _: *const u8, _: usize) -> Result<(), c10_storage::AllocError> { Ok(()) }
    /// # }
    /// # static A: Nothing = Nothing;
    /// let high = set_allocator_scoped(DeviceType::Hpu, &A, 9)?;
    /// let low = set_allocator_scoped(DeviceType::Hpu, &A, 1)?;
    /// assert!(high.took() && !low.took());
    /// # Ok::<(), AllocError>(())
    /// ```
    pub fn took(&self) -> bool {
        self.ours.is_some()
    }
}

impl Drop for AllocatorGuard {
    fn drop(&mut self) {
        let Some(ours) = self.ours else {
            return;
        };
        let _guard = WRITE_LOCK.lock();
        let s = slot(self.device_type);
        let ours = std::ptr::from_ref(ours).cast_mut();
        if s.current.load(Ordering::Acquire) != ours {
            // Replaced by a later registration: that one stays.
            return;
        }
        let prev = self
            .prev
            .map_or(std::ptr::null_mut(), |p| std::ptr::from_ref(p).cast_mut());
        s.priority.store(self.prev_priority, Ordering::Relaxed);
        s.current.store(prev, Ordering::Release);
    }
}

/// Refuses an allocator whose memory is not of the slot's device type.
fn check_device_type(slot: DeviceType, allocator: &dyn Allocator) -> Result<(), AllocError> {
    match allocator.device_type() {
        t if t == slot => Ok(()),
        t => Err(AllocError::WrongDeviceType { slot, allocator: t }),
    }
}

/// Like [`set_allocator`] for an allocator value: it is moved to the heap
/// and kept for the rest of the process (c10's `REGISTER_ALLOCATOR` keeps a
/// static too). Returns the `'static` reference (whether or not the
/// registration took) and whether it took; fails as [`set_allocator`] does
/// for an allocator of another device type (then nothing is leaked).
pub fn register_allocator<A: Allocator + 'static>(
    device_type: DeviceType,
    allocator: A,
    priority: u8,
) -> Result<(&'static A, bool), AllocError> {
    check_device_type(device_type, &allocator)?;
    let leaked: &'static A = Box::leak(Box::new(allocator));
    let took = set_allocator(device_type, leaked, priority)?;
    Ok((leaked, took))
}

/// Installs the allocator used for `device_type` when nothing has been
/// registered with [`set_allocator`]. Backend crates call this once to
/// become the default without outranking anything a user registers, before
/// or after. Only the first default for a device type is kept; returns
/// whether this call installed it. Fails as [`set_allocator`] does for an
/// allocator of another device type.
pub fn install_default_allocator(
    device_type: DeviceType,
    allocator: &'static dyn Allocator,
) -> Result<bool, AllocError> {
    check_device_type(device_type, allocator)?;
    let _guard = WRITE_LOCK.lock();
    let s = slot(device_type);
    if !s.fallback.load(Ordering::Acquire).is_null() {
        return Ok(false);
    }
    s.fallback.store(leak(allocator), Ordering::Release);
    Ok(true)
}

/// The allocator for `device_type` (c10's `GetAllocator`): the registered
/// one, else the backend default, else an error.
#[inline]
pub fn get_allocator(device_type: DeviceType) -> Result<&'static dyn Allocator, AllocError> {
    let s = slot(device_type);
    let mut p = s.current.load(Ordering::Acquire);
    if p.is_null() {
        p = s.fallback.load(Ordering::Acquire);
    }
    if p.is_null() {
        return Err(AllocError::NotRegistered(device_type));
    }
    // SAFETY: non-null slot pointers come from `leak`, which never frees.
    Ok(unsafe { *p })
}

/// The priority of the registered allocator for `device_type`, if one was
/// registered with [`set_allocator`].
pub fn allocator_priority(device_type: DeviceType) -> Option<u8> {
    let s = slot(device_type);
    if s.current.load(Ordering::Acquire).is_null() {
        None
    } else {
        Some(s.priority.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;

    struct Tagged(u8, DeviceType);
    // SAFETY: never returns memory.
    unsafe impl Allocator for Tagged {
        fn allocate(&self, nbytes: usize) -> Result<DataPtr, AllocError> {
            Err(AllocError::OutOfMemory {
                nbytes,
                message: format!("tag {}", self.0),
            })
        }
        fn device_type(&self) -> DeviceType {
            self.1
        }
        unsafe fn copy_data(&self, _: *mut u8, _: *const u8, _: usize) -> Result<(), AllocError> {
            Ok(())
        }
    }

    fn tag_of(t: DeviceType) -> String {
        get_allocator(t)
            .unwrap()
            .allocate(1)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn scoped_registrations_restore_what_was_there() {
        // Own device types: the registry is process-wide.
        static A: Tagged = Tagged(1, DeviceType::Ipu);
        static B: Tagged = Tagged(2, DeviceType::Ipu);
        static C: Tagged = Tagged(3, DeviceType::Ipu);
        let t = DeviceType::Ipu;
        assert!(set_allocator(t, &A, 4).unwrap());
        {
            let b = set_allocator_scoped(t, &B, 5).unwrap();
            assert!(b.took());
            assert_eq!(tag_of(t), "tag 2");
            {
                // Lower priority: does not take, restores nothing.
                let c = set_allocator_scoped(t, &C, 1).unwrap();
                assert!(!c.took());
                assert_eq!(tag_of(t), "tag 2");
            }
            assert_eq!(tag_of(t), "tag 2");
            assert_eq!(allocator_priority(t), Some(5));
        }
        // Back to A with its priority.
        assert_eq!(tag_of(t), "tag 1");
        assert_eq!(allocator_priority(t), Some(4));

        // A registration made while a guard lives outlives the guard.
        static D: Tagged = Tagged(4, DeviceType::Metal);
        static E: Tagged = Tagged(5, DeviceType::Metal);
        let m = DeviceType::Metal;
        let d = set_allocator_scoped(m, &D, 1).unwrap();
        assert!(set_allocator(m, &E, 7).unwrap());
        drop(d);
        assert_eq!(tag_of(m), "tag 5");
        // A guard on an empty slot leaves it empty again.
        static F: Tagged = Tagged(6, DeviceType::Lazy);
        drop(set_allocator_scoped(DeviceType::Lazy, &F, 0).unwrap());
        assert!(get_allocator(DeviceType::Lazy).is_err());
        // The device type is checked.
        assert!(matches!(
            set_allocator_scoped(DeviceType::Lazy, &A, 0),
            Err(AllocError::WrongDeviceType { .. })
        ));
    }

    #[test]
    fn priority_rules_match_set_allocator() {
        // Each test uses its own device type: the registry is process-wide.
        let t = DeviceType::Vulkan;
        assert!(matches!(
            get_allocator(t),
            Err(AllocError::NotRegistered(DeviceType::Vulkan))
        ));
        assert_eq!(
            get_allocator(t).err().unwrap().to_string(),
            "Allocator for vulkan is not set."
        );
        static A: Tagged = Tagged(1, DeviceType::Vulkan);
        static B: Tagged = Tagged(2, DeviceType::Vulkan);
        static C: Tagged = Tagged(3, DeviceType::Vulkan);
        static D: Tagged = Tagged(4, DeviceType::Vulkan);
        assert!(set_allocator(t, &A, 0).unwrap());
        assert_eq!(tag_of(t), "tag 1");
        assert!(set_allocator(t, &B, 5).unwrap());
        assert_eq!(allocator_priority(t), Some(5));
        assert!(
            !set_allocator(t, &C, 4).unwrap(),
            "lower priority must be ignored"
        );
        assert_eq!(tag_of(t), "tag 2");
        assert!(
            set_allocator(t, &D, 5).unwrap(),
            "equal priority overwrites"
        );
        assert_eq!(tag_of(t), "tag 4");
    }

    #[test]
    fn defaults_never_outrank_registrations() {
        let t = DeviceType::Hpu;
        static DEF: Tagged = Tagged(10, DeviceType::Hpu);
        static DEF2: Tagged = Tagged(11, DeviceType::Hpu);
        static USER: Tagged = Tagged(12, DeviceType::Hpu);
        assert!(install_default_allocator(t, &DEF).unwrap());
        assert!(!install_default_allocator(t, &DEF2).unwrap());
        assert_eq!(tag_of(t), "tag 10");
        assert_eq!(allocator_priority(t), None);
        assert!(set_allocator(t, &USER, 0).unwrap());
        assert_eq!(tag_of(t), "tag 12");
    }

    #[test]
    fn register_by_value() {
        let (a, took) = register_allocator(DeviceType::Ve, Tagged(20, DeviceType::Ve), 1).unwrap();
        assert!(took);
        assert_eq!(a.0, 20);
        assert_eq!(tag_of(DeviceType::Ve), "tag 20");
    }

    /// Soundness review, class 7: an allocator of another device type is
    /// refused at registration, by every registration call, and the slot
    /// keeps what it had.
    #[test]
    fn registration_checks_the_device_type() {
        static MTIA: Tagged = Tagged(30, DeviceType::Mtia);
        static CUDA_LIKE: Tagged = Tagged(31, DeviceType::Cuda);
        assert!(set_allocator(DeviceType::Mtia, &MTIA, 0).unwrap());
        let err = set_allocator(DeviceType::Mtia, &CUDA_LIKE, u8::MAX).unwrap_err();
        assert_eq!(
            err,
            AllocError::WrongDeviceType {
                slot: DeviceType::Mtia,
                allocator: DeviceType::Cuda
            }
        );
        assert_eq!(
            err.to_string(),
            "cannot register an allocator of cuda memory for device type mtia: its Allocator::device_type() is cuda, so mtia factories would make cuda storages"
        );
        assert_eq!(tag_of(DeviceType::Mtia), "tag 30");
        assert!(install_default_allocator(DeviceType::Mtia, &CUDA_LIKE).is_err());
        assert!(register_allocator(DeviceType::Mtia, Tagged(32, DeviceType::Cpu), 9).is_err());
        assert_eq!(tag_of(DeviceType::Mtia), "tag 30");
    }

    #[test]
    fn raw_api_needs_a_raw_deleter() {
        let a = Tagged(0, DeviceType::Cpu);
        let e = a.raw_allocate(4).unwrap_err();
        assert!(e
            .to_string()
            .contains("does not support the raw allocation API"));
        let _ = Device::CPU;
    }
}
