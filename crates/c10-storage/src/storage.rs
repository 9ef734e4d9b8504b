//! `StorageImpl` and the shared `Storage` handle: one byte buffer, shared by
//! every tensor that views it, with guarded access.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::allocator::{get_allocator, AllocError, Allocator};
use crate::binding::BindingSlot;
use crate::data_ptr::DataPtr;
use crate::device::{Device, DeviceType};
use crate::held::{self, GuardKind, OnContention};
use crate::slice::{ViewOf, ViewRange};
use crate::storage_arc::{StorageArc, WeakArc};

/// Why a storage operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// Growing a storage that was created non-resizable (c10's message).
    #[error("Trying to resize storage that is not resizable")]
    NotResizable,
    /// A resizable storage needs an allocator to grow with (c10's message).
    #[error("For resizable storage, allocator must be provided")]
    NoAllocator,
    /// Writing to a read-only storage (for example a read-only memory map).
    #[error("cannot write to a read-only storage ({reason}); clone the tensor to get a writable copy first")]
    ReadOnly {
        /// Where the read-only bytes come from.
        reason: String,
    },
    /// Host access to device memory.
    #[error("cannot access {0} memory from the host; copy the tensor to the CPU first")]
    NotHostAccessible(Device),
    /// The buffer is null although the storage claims a non-zero size.
    #[error("storage has no data: its data pointer is null but its size is {0} bytes")]
    NullData(usize),
    /// A new data pointer on another device than the storage's.
    #[error("Attempted to set the data pointer of a storage on device \"{storage}\" to memory on device \"{data}\"; the devices must match")]
    DeviceMismatch {
        /// The storage's device.
        storage: Device,
        /// The new pointer's device.
        data: Device,
    },
    /// The allocator failed.
    #[error(transparent)]
    Alloc(#[from] AllocError),
    /// This thread already holds a guard of the storage that the asked-for
    /// lock would wait on: waiting would never end, so the call fails
    /// instead (see [`Storage`], "Re-entrancy").
    #[error("storage {storage:#x} is already locked by a {held} guard held on this thread, so taking a {wanted} lock on it here would deadlock; drop the guard (or finish the access that holds it) first")]
    Reentrant {
        /// The storage's [`Storage::id`].
        storage: usize,
        /// The kind of guard this thread holds.
        held: GuardKind,
        /// The kind of lock that was asked for.
        wanted: GuardKind,
    },
    /// Another thread holds a guard that this lock would wait for, and this
    /// thread is in no-wait mode ([`without_waiting`](crate::without_waiting)).
    #[error("storage {storage:#x} is locked by another thread, and this thread does not wait for storage locks here (no-wait mode, see c10_storage::without_waiting); try again outside that mode")]
    WouldBlock {
        /// The storage's [`Storage::id`] (its root's, for a slice).
        storage: usize,
    },
    /// The buffer would be freed or replaced while exported raw pointers
    /// into it are alive (see [`Storage::pin_count`]).
    #[error("cannot resize, replace or free the buffer of a storage while {pins} export(s) (for example DLPack) or storage slices hold raw pointers into it; release them first (the consumer calls the deleter; a slice when it is dropped), or resize a clone of the tensor")]
    Pinned {
        /// How many pins are alive.
        pins: usize,
    },
    /// A slice range outside the storage ([`Storage::slice`]).
    #[error("cannot slice bytes {start}..{end} of a storage of {nbytes} bytes: the range must lie inside the storage, start <= end")]
    SliceOutOfRange {
        /// The first byte asked for.
        start: usize,
        /// One past the last byte asked for.
        end: usize,
        /// The storage's size.
        nbytes: usize,
    },
    /// An operation that frees, replaces or re-sizes the buffer of a
    /// storage slice, whose bytes belong to another storage.
    #[error("cannot {what} a storage slice: its bytes belong to the storage it was sliced from (it owns no allocation); clone it to get a storage of its own")]
    SliceOwnsNoMemory {
        /// What was attempted.
        what: &'static str,
    },
}

/// The read lock of `buffer` (the storage `id`'s, or its root's), after
/// [`held::acquire`] recorded it: taken recursively, and on a lazily
/// initialised buffer's first read, filled under the write lock that then
/// becomes the read lock. On contention it waits, or (no-wait mode) undoes
/// the `acquire` and fails with [`StorageError::WouldBlock`].
///
/// The fill needs no re-entrancy care: this thread holds no guard of the
/// storage while the bytes still need their fill (a read guard exists only
/// once they are initialised, and nothing can make them uninitialised
/// again without the write lock), and a held write guard was refused by
/// `acquire`.
#[inline]
pub(crate) fn lock_read(
    buffer: &RwLock<Buffer>,
    id: usize,
    on_contention: OnContention,
) -> Result<RwLockReadGuard<'_, Buffer>, StorageError> {
    let read = match on_contention {
        OnContention::Wait => Some(buffer.read_recursive()),
        OnContention::Fail => buffer.try_read_recursive(),
    };
    let read = match read {
        Some(g) if g.needs_fill() => {
            drop(g);
            write_lock(buffer, on_contention).map(|w| {
                w.fill_uninit();
                RwLockWriteGuard::downgrade(w)
            })
        }
        other => other,
    };
    read.ok_or_else(|| gave_up(id, GuardKind::Read))
}

/// The write lock of `buffer` (the storage `id`'s, or its root's), after
/// [`held::acquire`] recorded it: on contention it waits, or (no-wait
/// mode) undoes the `acquire` and fails with [`StorageError::WouldBlock`].
#[inline]
pub(crate) fn lock_write(
    buffer: &RwLock<Buffer>,
    id: usize,
    on_contention: OnContention,
) -> Result<RwLockWriteGuard<'_, Buffer>, StorageError> {
    write_lock(buffer, on_contention).ok_or_else(|| gave_up(id, GuardKind::Write))
}

/// A lock given up in no-wait mode: undoes its `acquire` of `kind` and
/// says why.
#[cold]
fn gave_up(id: usize, kind: GuardKind) -> StorageError {
    held::release(id, kind);
    StorageError::WouldBlock { storage: id }
}

/// `buffer`'s write lock, waiting for it or not (`None` only when another
/// thread holds it and `on_contention` says not to wait).
#[inline]
fn write_lock(
    buffer: &RwLock<Buffer>,
    on_contention: OnContention,
) -> Option<RwLockWriteGuard<'_, Buffer>> {
    match on_contention {
        OnContention::Wait => Some(buffer.write()),
        OnContention::Fail => buffer.try_write(),
    }
}

/// The buffer itself; always accessed under the storage's lock.
pub(crate) struct Buffer {
    pub(crate) data_ptr: DataPtr,
    pub(crate) nbytes: usize,
    /// How many leading bytes are known to be initialised (`nbytes` once
    /// the whole buffer is). Host memory from
    /// [`Allocator::allocate_for_overwrite`] starts uninitialised
    /// ([`Storage::new_uninit`], the growth of [`Storage::resize`]); the
    /// first guard that could expose bytes zero-fills the rest, once (see
    /// [`Storage`], "Lazy initialisation"). Always `nbytes` for memory the
    /// host never dereferences. Written only under the write lock; an
    /// atomic so that a write guard can finish the fill from `&self`.
    init: AtomicUsize,
}

impl Buffer {
    /// A buffer whose `nbytes` bytes are all initialised.
    pub(crate) fn initialised(data_ptr: DataPtr, nbytes: usize) -> Buffer {
        Buffer {
            data_ptr,
            nbytes,
            init: AtomicUsize::new(nbytes),
        }
    }

    /// Whether bytes past the initialised prefix remain.
    #[inline]
    pub(crate) fn needs_fill(&self) -> bool {
        self.init.load(Ordering::Relaxed) < self.nbytes
    }

    /// Zero-fills the uninitialised tail, if any. Called with the write
    /// lock held (through `&mut` access or a write guard's `&self`), so no
    /// reference to the bytes exists meanwhile.
    #[inline]
    pub(crate) fn fill_uninit(&self) {
        if self.needs_fill() {
            self.fill_uninit_slow();
        }
    }

    #[cold]
    fn fill_uninit_slow(&self) {
        let from = self.init.load(Ordering::Relaxed);
        let ptr = self.data_ptr.get();
        if !ptr.is_null() && from < self.nbytes {
            // SAFETY: the buffer is valid for writes of `nbytes` bytes
            // (storage invariant); the caller holds the write lock, so
            // nothing else reads or writes it, and no slice of the
            // uninitialised tail was ever made.
            unsafe { std::ptr::write_bytes(ptr.add(from), 0, self.nbytes - from) };
            LAZY_FILLS.fetch_add(1, Ordering::Relaxed);
        }
        self.init.store(self.nbytes, Ordering::Relaxed);
    }
}

/// Lazy zero fills performed so far (see [`lazy_fill_count`]).
static LAZY_FILLS: AtomicU64 = AtomicU64::new(0);

/// How many times, process-wide, a storage's uninitialised bytes were
/// zero-filled on first access (see [`Storage`], "Lazy initialisation").
/// A diagnostic for tests and profiling: an `empty` tensor that is
/// overwritten in full (a dense `copy_` or `fill_` of the whole storage)
/// never adds to it.
///
/// ```
/// use c10_storage::{lazy_fill_count, Storage};
/// # struct Heap;
/// # // SAFETY: boxed bytes (uninitialised capacity is never handed out).
/// # unsafe impl c10_storage::Allocator for Heap {
/// #     fn allocate(&self, n: usize) -> Result<c10_storage::DataPtr, c10_storage::AllocError> {
/// #         Ok(c10_storage::DataPtr::from_owner(vec![7u8; n]))
/// #     }
/// #     fn device_type(&self) -> c10_storage::DeviceType { c10_storage::DeviceType::Cpu }
/// #     unsafe fn copy_data(&self, d: *mut u8, s: *const u8, n: usize) -> Result<(), c10_storage::AllocError> {
/// #         // SAFETY: forwarded contract.
/// #         unsafe { c10_storage::default_copy_data(d, s, n) }
/// #     }
/// # }
/// # static HEAP: Heap = Heap;
/// let before = lazy_fill_count();
/// let s = Storage::new_uninit(16, &HEAP, true)?;
/// assert_eq!(s.read()?.bytes()?, &[0; 16]); // zero-filled on first read
/// assert!(lazy_fill_count() > before);
/// # Ok::<(), c10_storage::StorageError>(())
/// ```
pub fn lazy_fill_count() -> u64 {
    LAZY_FILLS.load(Ordering::Relaxed)
}

/// The shared state behind a [`Storage`] (c10's `StorageImpl`).
///
/// You normally use it through [`Storage`]; it is public so that its
/// documentation can describe the fields.
pub struct StorageImpl {
    /// The buffer and its size. A read guard is held while bytes are read,
    /// a write guard while they are written or the buffer is replaced, so
    /// no access ever sees a freed buffer.
    pub(crate) buffer: RwLock<Buffer>,
    /// Mirror of `buffer.nbytes`, written under the write lock, so that
    /// bounds checks (every `as_strided`) need no lock.
    pub(crate) nbytes: AtomicUsize,
    pub(crate) resizable: AtomicBool,
    pub(crate) allocator: Option<&'static dyn Allocator>,
    pub(crate) device: Device,
    /// `Some(reason)` when nothing may write the bytes.
    pub(crate) read_only: Option<Box<str>>,
    /// The version counter of the tensors using this storage's default
    /// counter (see [`Storage::version_counter`]).
    pub(crate) version: AtomicU32,
    /// Live [`BufferPin`]s: while non-zero, nothing may free or replace the
    /// buffer. Incremented only under a read guard and checked only under
    /// the write lock, so a replacement never misses a pin taken before it.
    pub(crate) pins: AtomicUsize,
    /// The binding object, if a language binding attached one (see
    /// [`crate::binding`]).
    pub(crate) binding: BindingSlot,
    /// `Some` for a storage slice ([`Storage::slice`]): the root storage
    /// whose lock guards its bytes, and where they lie in it.
    pub(crate) view: Option<Box<ViewOf>>,
}

/// A weak handle to a storage (see [`Storage::downgrade`]).
#[derive(Clone)]
pub struct WeakStorage(WeakArc);

impl WeakStorage {
    /// The storage, if any `Storage` handle to it is still alive, except
    /// one whose only handle belongs to its binding object (see
    /// [`crate::binding`]): that object may be being destroyed, so such a
    /// storage is reached through the object only.
    ///
    /// ```
    /// use c10_storage::Storage;
    /// let s = Storage::from_owner(vec![1u8]);
    /// assert_eq!(s.downgrade().upgrade().map(|u| u.use_count()), Some(2));
    /// ```
    pub fn upgrade(&self) -> Option<Storage> {
        self.0.upgrade().map(Storage)
    }

    /// The [`Storage::id`] of the storage this handle was made from.
    ///
    /// ```
    /// use c10_storage::Storage;
    /// let s = Storage::from_owner(vec![1u8]);
    /// assert_eq!(s.downgrade().id(), s.id());
    /// ```
    pub fn id(&self) -> usize {
        self.0.as_ptr() as usize
    }

    /// Whether the storage is gone (no `Storage` handle is left).
    ///
    /// ```
    /// use c10_storage::Storage;
    /// let w = Storage::from_owner(vec![1u8]).downgrade();
    /// assert!(w.is_dead());
    /// ```
    pub fn is_dead(&self) -> bool {
        self.0.strong_count() == 0
    }
}

impl fmt::Debug for WeakStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WeakStorage({:#x})", self.id())
    }
}

/// A shared handle to one byte buffer (c10's `Storage`, an
/// `intrusive_ptr<StorageImpl>`). Cloning is one atomic increment.
///
/// # Access model
///
/// Every tensor viewing this buffer shares this handle, and bytes are only
/// reached through guards: [`Storage::read`] (shared, many at once) and
/// [`Storage::write`] (exclusive). So writes through one view are visible
/// through every other view, and safe code cannot race. Operations on two
/// storages lock each distinct storage once, in address order
/// ([`Storage::lock_write_read`]), so aliasing inputs and outputs never
/// deadlock.
///
/// # Lazy initialisation
///
/// Safe code reads host bytes as `&[u8]`, so they must be initialised; but
/// filling a buffer that is about to be overwritten costs a pass over
/// memory (c10's `empty` touches nothing). A storage made by
/// [`Storage::new_uninit`] (`Tensor::empty` and friends), and the new tail
/// of a growing [`Storage::resize`], therefore start *uninitialised*: the
/// storage records how many leading bytes are initialised, and the first
/// guard that could expose the others ([`Storage::read`],
/// [`Storage::write`], a slice from any guard) zero-fills them under the
/// write lock, once. One predictable branch per guard; nothing per
/// element. A writer that overwrites every byte (a dense copy or fill of
/// the whole storage) takes [`Storage::write_uninit`] instead and marks the
/// bytes initialised with the `unsafe`
/// [`StorageWriteGuard::assume_init`], so such a buffer is never filled at
/// all ([`lazy_fill_count`] counts the fills). Before anything is written,
/// a lazily initialised storage reads as zeros. Memory the host never
/// dereferences (device storages) is never filled.
///
/// # Re-entrancy
///
/// A thread never waits for a guard it holds itself: asking to write while
/// this thread holds any guard of the same storage, or to read while it
/// holds the write guard, fails at once with [`StorageError::Reentrant`]
/// instead of deadlocking (as `RefCell::try_borrow_mut` does). Several read
/// guards on one thread are fine, and guards held by *other* threads are
/// waited for as usual. The same holds for every call that locks
/// internally ([`Storage::resize`], [`Storage::reset`],
/// [`Storage::set_data_ptr`], [`Storage::lock_write_read`]).
///
/// # Not waiting at all
///
/// A caller that must not wait for another thread's guard (one holding a
/// lock that the guard's holder may need, such as the Python GIL) runs its
/// work inside [`without_waiting`](crate::without_waiting): every lock
/// there that another thread holds fails with [`StorageError::WouldBlock`]
/// instead, leaving nothing locked, and the caller can retry where waiting
/// is safe. [`Storage::try_read`] and [`Storage::try_write`] are the same
/// for a single guard.
///
/// ```
/// use c10_storage::Storage;
/// let s = Storage::from_owner(vec![0u8; 8]);
/// let t = s.clone(); // another tensor's handle on the same buffer
/// s.write()?.bytes_mut()?[3] = 42;
/// assert_eq!(t.read()?.bytes()?[3], 42);
/// assert_eq!(s.use_count(), 2);
/// assert!(s.is_alias_of(&t));
/// # Ok::<(), c10_storage::StorageError>(())
/// ```
#[derive(Clone)]
pub struct Storage(StorageArc);

/// How a new storage's bytes are initialised (see
/// `Storage::from_allocator`).
#[derive(Clone, Copy)]
enum Fill {
    /// The allocator's own `allocate` initialises every byte.
    Allocator,
    /// `allocate_for_overwrite`, zero-filled lazily on first exposure.
    Lazy,
    /// `allocate_for_overwrite`; the caller writes every byte first.
    Overwrite,
}

impl Storage {
    /// The shared state.
    #[inline]
    pub(crate) fn imp(&self) -> &StorageImpl {
        &self.0
    }

    /// The counted handle.
    #[inline]
    pub(crate) fn arc(&self) -> &StorageArc {
        &self.0
    }

    pub(crate) fn from_impl(imp: StorageImpl) -> Storage {
        Storage(StorageArc::new(imp))
    }

    /// Allocates `nbytes` from `allocator` (c10's
    /// `StorageImpl(use_byte_size_t, size, allocator, resizable)`).
    ///
    /// ```
    /// use c10_storage::{Storage, get_allocator, DeviceType};
    /// # struct Heap;
    /// # // SAFETY: returns boxed, zeroed, exclusively owned bytes.
    /// # unsafe impl c10_storage::Allocator for Heap {
    /// #     fn allocate(&self, n: usize) -> Result<c10_storage::DataPtr, c10_storage::AllocError> {
    /// #         Ok(c10_storage::DataPtr::from_owner(vec![0u8; n]))
    /// #     }
    /// #     fn device_type(&self) -> DeviceType { DeviceType::Cpu }
    /// #     unsafe fn copy_data(&self, d: *mut u8, s: *const u8, n: usize) -> Result<(), c10_storage::AllocError> {
    /// #         // SAFETY: forwarded contract.
    /// #         unsafe { c10_storage::default_copy_data(d, s, n) }
    /// #     }
    /// # }
    /// # static HEAP: Heap = Heap;
    /// let s = Storage::new(24, &HEAP, true)?;
    /// assert_eq!(s.nbytes(), 24);
    /// assert!(s.resizable());
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    pub fn new(
        nbytes: usize,
        allocator: &'static dyn Allocator,
        resizable: bool,
    ) -> Result<Storage, StorageError> {
        Storage::from_allocator(nbytes, allocator, resizable, Fill::Allocator)
    }

    /// A storage of `nbytes` from [`Allocator::allocate_for_overwrite`],
    /// initialised lazily: nothing is filled now (the cost is the
    /// allocation alone, as c10's `empty`), and the first access that could
    /// expose a byte zero-fills the bytes first, once; an access that
    /// overwrites the whole storage skips the fill (see [`Storage`], "Lazy
    /// initialisation"). So its bytes read as zero unless written first.
    ///
    /// ```
    /// use c10_storage::{DeviceType, Storage};
    /// # struct Heap;
    /// # // SAFETY: returns boxed, initialised, exclusively owned bytes.
    /// # unsafe impl c10_storage::Allocator for Heap {
    /// #     fn allocate(&self, n: usize) -> Result<c10_storage::DataPtr, c10_storage::AllocError> {
    /// #         Ok(c10_storage::DataPtr::from_owner(vec![0xAAu8; n]))
    /// #     }
    /// #     fn device_type(&self) -> DeviceType { DeviceType::Cpu }
    /// #     unsafe fn copy_data(&self, d: *mut u8, s: *const u8, n: usize) -> Result<(), c10_storage::AllocError> {
    /// #         // SAFETY: forwarded contract.
    /// #         unsafe { c10_storage::default_copy_data(d, s, n) }
    /// #     }
    /// # }
    /// # static HEAP: Heap = Heap;
    /// let s = Storage::new_uninit(4, &HEAP, true)?;
    /// assert_eq!(s.read()?.bytes()?, &[0, 0, 0, 0]); // whatever the allocator left
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    pub fn new_uninit(
        nbytes: usize,
        allocator: &'static dyn Allocator,
        resizable: bool,
    ) -> Result<Storage, StorageError> {
        Storage::from_allocator(nbytes, allocator, resizable, Fill::Lazy)
    }

    /// The storage around a fresh allocation of `nbytes` from `allocator`,
    /// its bytes initialised as `fill` says (the three constructors above
    /// and below differ only in that).
    fn from_allocator(
        nbytes: usize,
        allocator: &'static dyn Allocator,
        resizable: bool,
        fill: Fill,
    ) -> Result<Storage, StorageError> {
        let (data_ptr, init) = match fill {
            Fill::Allocator => (allocator.allocate(nbytes)?, nbytes),
            Fill::Lazy => {
                let data_ptr = allocator.allocate_for_overwrite(nbytes)?;
                // Memory the host never dereferences needs no fill.
                let host = data_ptr.device().device_type().is_host_accessible();
                (data_ptr, if host { 0 } else { nbytes })
            }
            Fill::Overwrite => (allocator.allocate_for_overwrite(nbytes)?, nbytes),
        };
        Ok(Storage::allocated(
            data_ptr, nbytes, allocator, resizable, init,
        ))
    }

    /// The storage around a fresh allocation of `nbytes` from `allocator`,
    /// whose first `init` bytes are initialised.
    fn allocated(
        data_ptr: DataPtr,
        nbytes: usize,
        allocator: &'static dyn Allocator,
        resizable: bool,
        init: usize,
    ) -> Storage {
        let device = data_ptr.device();
        // Built in the handle's own allocation rather than on the stack and
        // moved: the move re-read the freshly written fields with wider
        // loads, which stalled on store forwarding (measured in
        // `Tensor::empty`, the hottest caller).
        let imp = StorageArc::new_uninit();
        // `as_mut_ptr` keeps the allocation's write provenance, and the
        // block was created just above, so nothing else can reach its
        // contents: writing through `slot` is exclusive.
        let slot = imp.as_mut_ptr();
        // SAFETY: `slot` points to the new, uniquely owned, uninitialised
        // `StorageImpl`; the write initialises all of it before
        // `assume_init`.
        unsafe {
            slot.write(StorageImpl {
                buffer: RwLock::new(Buffer {
                    data_ptr,
                    nbytes,
                    init: AtomicUsize::new(init),
                }),
                nbytes: AtomicUsize::new(nbytes),
                resizable: AtomicBool::new(resizable),
                allocator: Some(allocator),
                device,
                read_only: None,
                version: AtomicU32::new(0),
                pins: AtomicUsize::new(0),
                binding: BindingSlot::new(),
                view: None,
            });
            Storage(imp.assume_init())
        }
    }

    /// [`Storage::new`] through [`Allocator::allocate_for_overwrite`]: the
    /// bytes may start uninitialised (no zero fill), for a caller that is
    /// about to overwrite all of them, such as the destination of a copy.
    ///
    /// ```
    /// use c10_storage::{DeviceType, Storage};
    /// # struct Heap;
    /// # // SAFETY: returns boxed, zeroed, exclusively owned bytes.
    /// # unsafe impl c10_storage::Allocator for Heap {
    /// #     fn allocate(&self, n: usize) -> Result<c10_storage::DataPtr, c10_storage::AllocError> {
    /// #         Ok(c10_storage::DataPtr::from_owner(vec![0u8; n]))
    /// #     }
    /// #     fn device_type(&self) -> DeviceType { DeviceType::Cpu }
    /// #     unsafe fn copy_data(&self, d: *mut u8, s: *const u8, n: usize) -> Result<(), c10_storage::AllocError> {
    /// #         // SAFETY: forwarded contract.
    /// #         unsafe { c10_storage::default_copy_data(d, s, n) }
    /// #     }
    /// # }
    /// # static HEAP: Heap = Heap;
    /// // SAFETY: all 4 bytes are written below before anything reads them.
    /// let s = unsafe { Storage::new_for_overwrite(4, &HEAP, true)? };
    /// {
    ///     let mut g = s.write()?;
    ///     // SAFETY: the guard's pointer is valid for 4 bytes of writes.
    ///     unsafe { std::ptr::copy_nonoverlapping([1u8, 2, 3, 4].as_ptr(), g.as_mut_ptr(), 4) };
    /// }
    /// assert_eq!(s.read()?.bytes()?, &[1, 2, 3, 4]);
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    ///
    /// # Safety
    ///
    /// On a host-accessible device, every one of the `nbytes` bytes must be
    /// written, through raw pointers (a write guard's
    /// [`as_mut_ptr`](crate::StorageWriteGuard::as_mut_ptr), never a slice
    /// of the uninitialised bytes), before anything reads any of them:
    /// before a slice is made of them, before the storage is resized,
    /// cloned into a new buffer, or handed to code that may do either.
    /// Dropping it unread is fine.
    pub unsafe fn new_for_overwrite(
        nbytes: usize,
        allocator: &'static dyn Allocator,
        resizable: bool,
    ) -> Result<Storage, StorageError> {
        // The caller writes every byte before any read: no fill is owed.
        Storage::from_allocator(nbytes, allocator, resizable, Fill::Overwrite)
    }

    /// Allocates `nbytes` from the allocator registered for `device_type`
    /// (resizable, as tensors' storages are).
    pub fn with_device_type(
        nbytes: usize,
        device_type: DeviceType,
    ) -> Result<Storage, StorageError> {
        Storage::new(nbytes, get_allocator(device_type)?, true)
    }

    /// Wraps an existing `DataPtr` of `nbytes` bytes (c10's
    /// `StorageImpl(use_byte_size_t, size, DataPtr, allocator, resizable)`).
    /// A resizable storage needs an allocator to grow with.
    ///
    /// # Safety
    ///
    /// `data_ptr.get()` must be valid for reads and writes of `nbytes`
    /// bytes on `data_ptr.device()` for as long as `data_ptr` lives, not be
    /// accessed by anything else meanwhile except through this storage, and
    /// hold initialised bytes if the device is the CPU. (If nothing may
    /// write to it, call [`Storage::into_read_only`] before sharing it.)
    pub unsafe fn from_data_ptr(
        data_ptr: DataPtr,
        nbytes: usize,
        allocator: Option<&'static dyn Allocator>,
        resizable: bool,
    ) -> Result<Storage, StorageError> {
        if resizable && allocator.is_none() {
            return Err(StorageError::NoAllocator);
        }
        let device = data_ptr.device();
        Ok(Storage::from_impl(StorageImpl {
            buffer: RwLock::new(Buffer::initialised(data_ptr, nbytes)),
            nbytes: AtomicUsize::new(nbytes),
            resizable: AtomicBool::new(resizable),
            allocator,
            device,
            read_only: None,
            version: AtomicU32::new(0),
            pins: AtomicUsize::new(0),
            binding: BindingSlot::new(),
            view: None,
        }))
    }

    /// Adopts any owner of writable CPU bytes without copying (a `Vec<u8>`,
    /// `Box<[u8]>`, a writable memory map, ...). The storage is not
    /// resizable and the owner is dropped when the last handle goes.
    ///
    /// ```
    /// use c10_storage::Storage;
    /// let s = Storage::from_owner(vec![1u8, 2, 3]);
    /// assert_eq!(s.read()?.bytes()?, &[1, 2, 3]);
    /// assert!(s.resize(10).is_err()); // not resizable
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    pub fn from_owner<O>(owner: O) -> Storage
    where
        O: AsMut<[u8]> + Send + 'static,
    {
        let (data_ptr, nbytes) = DataPtr::from_owner_with_len(owner);
        Storage::from_impl(StorageImpl {
            buffer: RwLock::new(Buffer::initialised(data_ptr, nbytes)),
            nbytes: AtomicUsize::new(nbytes),
            resizable: AtomicBool::new(false),
            allocator: None,
            device: Device::CPU,
            read_only: None,
            version: AtomicU32::new(0),
            pins: AtomicUsize::new(0),
            binding: BindingSlot::new(),
            view: None,
        })
    }

    /// Adopts any owner of writable CPU bytes without copying, like
    /// [`Storage::from_owner`], but resizable: a growing
    /// [`resize`](Storage::resize) reallocates through `allocator` (which
    /// must allocate CPU memory), copies the bytes over and drops the owner,
    /// as for a storage the allocator made. This is how a tensor made from
    /// user data behaves like one from the allocator (PyTorch's
    /// `torch.tensor(data).resize_(n)`).
    ///
    /// ```
    /// use c10_storage::{DeviceType, Storage};
    /// # struct Heap;
    /// # // SAFETY: returns boxed, zeroed, exclusively owned bytes.
    /// # unsafe impl c10_storage::Allocator for Heap {
    /// #     fn allocate(&self, n: usize) -> Result<c10_storage::DataPtr, c10_storage::AllocError> {
    /// #         Ok(c10_storage::DataPtr::from_owner(vec![0u8; n]))
    /// #     }
    /// #     fn device_type(&self) -> DeviceType { DeviceType::Cpu }
    /// #     unsafe fn copy_data(&self, d: *mut u8, s: *const u8, n: usize) -> Result<(), c10_storage::AllocError> {
    /// #         // SAFETY: forwarded contract.
    /// #         unsafe { c10_storage::default_copy_data(d, s, n) }
    /// #     }
    /// # }
    /// # static HEAP: Heap = Heap;
    /// let s = Storage::from_owner_resizable(vec![1u8, 2, 3], &HEAP)?;
    /// s.resize(5)?;
    /// assert_eq!(s.read()?.bytes()?, &[1, 2, 3, 0, 0]);
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    pub fn from_owner_resizable<O>(
        owner: O,
        allocator: &'static dyn Allocator,
    ) -> Result<Storage, StorageError>
    where
        O: AsMut<[u8]> + Send + 'static,
    {
        if allocator.device_type() != DeviceType::Cpu {
            return Err(StorageError::Alloc(AllocError::WrongDeviceType {
                slot: DeviceType::Cpu,
                allocator: allocator.device_type(),
            }));
        }
        let (data_ptr, nbytes) = DataPtr::from_owner_with_len(owner);
        Ok(Storage::from_impl(StorageImpl {
            buffer: RwLock::new(Buffer::initialised(data_ptr, nbytes)),
            nbytes: AtomicUsize::new(nbytes),
            resizable: AtomicBool::new(true),
            allocator: Some(allocator),
            device: Device::CPU,
            read_only: None,
            version: AtomicU32::new(0),
            pins: AtomicUsize::new(0),
            binding: BindingSlot::new(),
            view: None,
        }))
    }

    /// Adopts an owner that only gives shared access to its bytes (a
    /// read-only memory map, `&'static [u8]`, ...). Writes are refused with
    /// [`StorageError::ReadOnly`], whose message includes `reason`.
    ///
    /// ```
    /// use c10_storage::Storage;
    /// static BYTES: [u8; 4] = [1, 2, 3, 4];
    /// let s = Storage::from_read_only_owner(&BYTES[..], "a static table");
    /// assert_eq!(s.read()?.bytes()?[3], 4);
    /// let err = s.write().err().unwrap();
    /// assert!(err.to_string().contains("read-only storage (a static table)"));
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    pub fn from_read_only_owner<O>(owner: O, reason: &str) -> Storage
    where
        O: AsRef<[u8]> + Send + 'static,
    {
        let (data_ptr, nbytes) = DataPtr::from_read_only_owner_with_len(owner);
        Storage::from_impl(StorageImpl {
            buffer: RwLock::new(Buffer::initialised(data_ptr, nbytes)),
            nbytes: AtomicUsize::new(nbytes),
            resizable: AtomicBool::new(false),
            allocator: None,
            device: Device::CPU,
            read_only: Some(reason.into()),
            version: AtomicU32::new(0),
            pins: AtomicUsize::new(0),
            binding: BindingSlot::new(),
            view: None,
        })
    }

    /// Marks a storage that nobody else holds yet as read-only. Returns the
    /// storage unchanged (as `Err`) if it is shared.
    pub fn into_read_only(self, reason: &str) -> Result<Storage, Storage> {
        match StorageArc::try_unwrap(self.0) {
            Ok(mut imp) => {
                imp.read_only = Some(reason.into());
                imp.resizable = AtomicBool::new(false);
                Ok(Storage::from_impl(imp))
            }
            Err(arc) => Err(Storage(arc)),
        }
    }

    /// The version counter that tensors on this storage share by default.
    ///
    /// In c10 every tensor holds a `VariableVersion`, shared by a base and
    /// its views. Creating a view must cost as few atomic operations as
    /// possible, so c10-core keeps the common counter here: a tensor and its
    /// views reach it through the storage handle they already share, and a
    /// view op increments one reference count instead of two. Tensors that
    /// need a counter of their own (`.data`-style aliases) carry one
    /// separately. The storage itself never reads or bumps it.
    pub fn version_counter(&self) -> &AtomicU32 {
        &self.0.version
    }

    /// Size of the buffer in bytes (c10's `nbytes()`).
    pub fn nbytes(&self) -> usize {
        self.0.nbytes.load(Ordering::Acquire)
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> Device {
        self.0.device
    }

    /// Whether [`Storage::resize`] may reallocate the buffer.
    pub fn resizable(&self) -> bool {
        self.0.resizable.load(Ordering::Relaxed)
    }

    /// Changes resizability; making a storage resizable needs an allocator
    /// (c10's `set_resizable`).
    pub fn set_resizable(&self, resizable: bool) -> Result<(), StorageError> {
        if resizable {
            self.refuse_if_slice("make resizable")?;
        }
        if resizable && (self.0.allocator.is_none() || self.0.read_only.is_some()) {
            return Err(StorageError::NoAllocator);
        }
        self.0.resizable.store(resizable, Ordering::Relaxed);
        Ok(())
    }

    /// The allocator the storage grows with, if any.
    pub fn allocator(&self) -> Option<&'static dyn Allocator> {
        self.0.allocator
    }

    /// Whether writes are refused.
    pub fn is_read_only(&self) -> bool {
        self.0.read_only.is_some()
    }

    /// Number of handles sharing this storage (c10's `use_count`).
    pub fn use_count(&self) -> usize {
        StorageArc::strong_count(&self.0)
    }

    /// Whether this is the only handle.
    pub fn is_unique(&self) -> bool {
        self.use_count() == 1
    }

    /// Whether both handles share one `StorageImpl` (c10's `is_alias_of`).
    pub fn is_alias_of(&self, other: &Storage) -> bool {
        StorageArc::ptr_eq(&self.0, &other.0)
    }

    /// A stable identity for this storage (the address of its
    /// `StorageImpl`), for printing and for ordering locks.
    pub fn id(&self) -> usize {
        StorageArc::as_ptr(&self.0) as usize
    }

    /// A weak handle (c10's `weak_intrusive_ptr<StorageImpl>`): it does not
    /// count in [`Storage::use_count`] and does not keep the buffer alive
    /// (the buffer is freed with the last `Storage`), but while it exists
    /// the `StorageImpl`'s address, [`Storage::id`], is not reused, so
    /// `id` identifies this storage for as long as the weak handle lives.
    /// A language binding uses it to find a storage again from its id.
    ///
    /// ```
    /// use c10_storage::Storage;
    /// let s = Storage::from_owner(vec![0u8; 4]);
    /// let w = s.downgrade();
    /// assert_eq!(s.use_count(), 1);
    /// assert_eq!(w.id(), s.id());
    /// assert!(w.upgrade().is_some_and(|u| u.is_alias_of(&s)));
    /// drop(s);
    /// assert!(w.upgrade().is_none());
    /// ```
    pub fn downgrade(&self) -> WeakStorage {
        WeakStorage(StorageArc::downgrade(&self.0))
    }

    /// The current data address, for display only (it may change after the
    /// call returns if another thread resizes the storage). Fails as
    /// [`Storage::read`] does when this thread holds the write guard.
    pub fn data_addr(&self) -> Result<usize, StorageError> {
        Ok(self.read()?.as_ptr() as usize)
    }

    /// A shared guard: the bytes cannot be replaced or written while it
    /// lives. Recursive: one thread may hold several.
    ///
    /// Fails with [`StorageError::Reentrant`] if this thread holds the write
    /// guard of this storage (waiting for it would never end); other
    /// threads' write guards are waited for.
    ///
    /// ```
    /// use c10_storage::{Storage, StorageError};
    /// let s = Storage::from_owner(vec![1u8, 2, 3]);
    /// let a = s.read()?;
    /// let b = s.read()?; // several readers on one thread are fine
    /// assert_eq!(a.bytes()?, b.bytes()?);
    /// drop((a, b));
    /// let w = s.write()?;
    /// assert!(matches!(s.read(), Err(StorageError::Reentrant { .. })));
    /// drop(w);
    /// assert!(s.read().is_ok());
    /// # Ok::<(), StorageError>(())
    /// ```
    #[inline]
    pub fn read(&self) -> Result<StorageReadGuard<'_>, StorageError> {
        if let Some(v) = &self.0.view {
            return self.read_view(v);
        }
        let on_contention = held::acquire(self.id(), GuardKind::Read)?;
        let buffer = lock_read(&self.0.buffer, self.id(), on_contention)?;
        Ok(StorageReadGuard {
            buffer: Some(buffer),
            view: None,
            storage: self,
        })
    }

    /// An exclusive guard for writing. Fails on read-only storages, and with
    /// [`StorageError::Reentrant`] if this thread holds any guard of this
    /// storage; other threads' guards are waited for.
    ///
    /// ```
    /// use c10_storage::{Storage, StorageError};
    /// let s = Storage::from_owner(vec![0u8; 4]);
    /// s.write()?.bytes_mut()?[0] = 7;
    /// let r = s.read()?;
    /// let err = s.write().err().unwrap();
    /// assert!(matches!(err, StorageError::Reentrant { .. }));
    /// assert!(err.to_string().contains("would deadlock"));
    /// drop(r);
    /// assert_eq!(s.write()?.bytes()?[0], 7);
    /// # Ok::<(), StorageError>(())
    /// ```
    #[inline]
    pub fn write(&self) -> Result<StorageWriteGuard<'_>, StorageError> {
        self.check_writable()?;
        if let Some(v) = &self.0.view {
            return self.write_view(v);
        }
        let guard = self.lock_exclusive()?;
        guard.buffer.fill_uninit();
        Ok(guard)
    }

    /// [`Storage::write`] for a caller about to overwrite **every** byte:
    /// a lazily initialised storage is not zero-filled first. The guard
    /// keeps the storage's state honest by itself: its
    /// [`bytes`](StorageWriteGuard::bytes) and
    /// [`bytes_mut`](StorageWriteGuard::bytes_mut) fill first, and only
    /// [`assume_init`](StorageWriteGuard::assume_init) (`unsafe`: every byte
    /// was written) marks the bytes initialised without a fill; a guard
    /// dropped without it leaves them to be zero-filled on the next access
    /// (which overwrites what was written through raw pointers meanwhile).
    ///
    /// ```
    /// use c10_storage::{DeviceType, Storage};
    /// # struct Heap;
    /// # // SAFETY: returns boxed, initialised, exclusively owned bytes.
    /// # unsafe impl c10_storage::Allocator for Heap {
    /// #     fn allocate(&self, n: usize) -> Result<c10_storage::DataPtr, c10_storage::AllocError> {
    /// #         Ok(c10_storage::DataPtr::from_owner(vec![0u8; n]))
    /// #     }
    /// #     fn device_type(&self) -> DeviceType { DeviceType::Cpu }
    /// #     unsafe fn copy_data(&self, d: *mut u8, s: *const u8, n: usize) -> Result<(), c10_storage::AllocError> {
    /// #         // SAFETY: forwarded contract.
    /// #         unsafe { c10_storage::default_copy_data(d, s, n) }
    /// #     }
    /// # }
    /// # static HEAP: Heap = Heap;
    /// let s = Storage::new_uninit(4, &HEAP, true)?;
    /// {
    ///     let mut g = s.write_uninit()?;
    ///     // SAFETY: the guard's pointer is valid for 4 bytes of writes.
    ///     unsafe { std::ptr::copy_nonoverlapping([1u8, 2, 3, 4].as_ptr(), g.as_mut_ptr(), 4) };
    ///     // SAFETY: all 4 bytes were written just above.
    ///     unsafe { g.assume_init() };
    /// }
    /// assert_eq!(s.read()?.bytes()?, &[1, 2, 3, 4]);
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    #[inline]
    pub fn write_uninit(&self) -> Result<StorageWriteGuard<'_>, StorageError> {
        self.check_writable()?;
        if let Some(v) = &self.0.view {
            // A slice's root is initialised (slicing read it), and a
            // slice's write covers only part of it: the plain write guard.
            return self.write_view(v);
        }
        self.lock_exclusive()
    }

    /// Like [`Storage::read`] but gives up instead of blocking when another
    /// thread holds the write guard, or when the bytes still need their
    /// first fill (`Ok(None)`): for a caller that must not wait here (one
    /// holding the Python GIL, which the writer may need to finish). A write
    /// guard held by this thread is still an error
    /// ([`StorageError::Reentrant`]).
    ///
    /// ```
    /// use c10_storage::Storage;
    /// let s = Storage::from_owner(vec![1u8, 2, 3]);
    /// if let Some(g) = s.try_read()? {
    ///     assert_eq!(g.bytes()?, &[1, 2, 3]); // nobody else writes: always here
    /// }
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    #[inline]
    pub fn try_read(&self) -> Result<Option<StorageReadGuard<'_>>, StorageError> {
        if let Some(v) = &self.0.view {
            return self.try_read_view(v);
        }
        held::acquire(self.id(), GuardKind::Read)?;
        match self.0.buffer.try_read_recursive() {
            Some(buffer) if !buffer.needs_fill() => Ok(Some(StorageReadGuard {
                buffer: Some(buffer),
                view: None,
                storage: self,
            })),
            _ => {
                held::release(self.id(), GuardKind::Read);
                Ok(None)
            }
        }
    }

    /// Like [`Storage::write`] but gives up instead of blocking when
    /// another thread holds a guard (`Ok(None)`). A guard held by this
    /// thread is still an error ([`StorageError::Reentrant`]), so that a
    /// retry loop cannot spin for ever.
    pub fn try_write(&self) -> Result<Option<StorageWriteGuard<'_>>, StorageError> {
        self.check_writable()?;
        if let Some(v) = &self.0.view {
            return self.try_write_view(v);
        }
        held::acquire(self.id(), GuardKind::Write)?;
        match self.0.buffer.try_write() {
            Some(buffer) => {
                buffer.fill_uninit();
                Ok(Some(StorageWriteGuard {
                    buffer,
                    view: None,
                    storage: self,
                }))
            }
            None => {
                held::release(self.id(), GuardKind::Write);
                Ok(None)
            }
        }
    }

    /// The exclusive lock, whether or not the storage is read-only (for
    /// replacing the buffer, which read-only storages allow as c10 does).
    #[inline]
    fn lock_exclusive(&self) -> Result<StorageWriteGuard<'_>, StorageError> {
        let on_contention = held::acquire(self.id(), GuardKind::Write)?;
        Ok(StorageWriteGuard {
            buffer: lock_write(&self.0.buffer, self.id(), on_contention)?,
            view: None,
            storage: self,
        })
    }

    /// The exclusive lock for freeing or replacing the buffer: refused
    /// while [`BufferPin`]s are alive. The pin count is read under the lock
    /// (pins are only taken under a read guard), so no pin can appear
    /// between the check and the replacement.
    fn lock_for_replacement(&self) -> Result<StorageWriteGuard<'_>, StorageError> {
        let guard = self.lock_exclusive()?;
        match self.0.pins.load(Ordering::Acquire) {
            0 => Ok(guard),
            pins => Err(StorageError::Pinned { pins }),
        }
    }

    pub(crate) fn check_writable(&self) -> Result<(), StorageError> {
        match &self.0.read_only {
            Some(reason) => Err(StorageError::ReadOnly {
                reason: reason.to_string(),
            }),
            None => Ok(()),
        }
    }

    /// Locks `dst` for writing and `src` for reading, as one storage when
    /// they are the same and in address order otherwise, so that two threads
    /// copying between the same pair in opposite directions cannot deadlock.
    /// Fails with [`StorageError::Reentrant`] when this thread already holds
    /// a guard that either lock would wait for.
    ///
    /// ```
    /// use c10_storage::{Storage, WriteReadGuard};
    /// let (a, b) = (Storage::from_owner(vec![1u8; 4]), Storage::from_owner(vec![0u8; 4]));
    /// let mut g = Storage::lock_write_read(&b, &a)?;
    /// assert!(!g.is_same());
    /// // SAFETY: both buffers hold 4 bytes and are locked; they do not overlap.
    /// unsafe { std::ptr::copy_nonoverlapping(g.src_ptr(), g.dst_ptr(), 4) };
    /// drop(g);
    /// assert_eq!(b.read()?.bytes()?, &[1, 1, 1, 1]);
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    pub fn lock_write_read<'a>(
        dst: &'a Storage,
        src: &'a Storage,
    ) -> Result<WriteReadGuard<'a>, StorageError> {
        Storage::lock_pair(dst, src, Storage::write)
    }

    /// [`Storage::lock_write_read`] for a copy that overwrites every byte of
    /// `dst`: `dst`'s guard comes from [`Storage::write_uninit`] (no lazy
    /// fill; see its documentation for what the caller then owes) unless
    /// `dst` and `src` are the same storage, whose bytes are read too and
    /// are therefore initialised first.
    pub fn lock_write_uninit_read<'a>(
        dst: &'a Storage,
        src: &'a Storage,
    ) -> Result<WriteReadGuard<'a>, StorageError> {
        Storage::lock_pair(dst, src, Storage::write_uninit)
    }

    /// The two locks of a copy, in address order (one lock for one storage).
    fn lock_pair<'a>(
        dst: &'a Storage,
        src: &'a Storage,
        write: fn(&'a Storage) -> Result<StorageWriteGuard<'a>, StorageError>,
    ) -> Result<WriteReadGuard<'a>, StorageError> {
        if dst.is_alias_of(src) {
            return Ok(WriteReadGuard::Same(dst.write()?));
        }
        dst.check_writable()?;
        if dst.lock_id() == src.lock_id() {
            // Two storages over one root's bytes (a slice and its root, or
            // two slices): one lock for both.
            return Storage::lock_pair_same_root(dst, src, write);
        }
        if dst.lock_id() < src.lock_id() {
            let d = write(dst)?;
            let s = src.read()?;
            Ok(WriteReadGuard::Distinct { dst: d, src: s })
        } else {
            let s = src.read()?;
            let d = write(dst)?;
            Ok(WriteReadGuard::Distinct { dst: d, src: s })
        }
    }

    /// How many [`BufferPin`]s are alive: while any is, [`Storage::resize`],
    /// [`Storage::reset`] and [`Storage::set_data_ptr`] refuse with
    /// [`StorageError::Pinned`]. DLPack export pins the buffer until the
    /// consumer releases it.
    pub fn pin_count(&self) -> usize {
        self.0.pins.load(Ordering::Acquire)
    }

    /// Reallocates the buffer to exactly `nbytes`, keeping the first
    /// `min(old, new)` bytes (c10's `resize_bytes_cpu`). Every handle, and so
    /// every view, sees the new buffer. New bytes are whatever the allocator
    /// returns (zeros for the CPU allocator).
    ///
    /// Errors with c10's `Trying to resize storage that is not resizable`
    /// unless the storage is resizable, with [`StorageError::Pinned`] while
    /// the buffer is exported, and with [`StorageError::Reentrant`] while
    /// this thread holds a guard of it.
    ///
    /// ```
    /// use c10_storage::{get_allocator, DeviceType, Storage};
    /// # struct Heap;
    /// # // SAFETY: returns boxed, zeroed, exclusively owned bytes.
    /// # unsafe impl c10_storage::Allocator for Heap {
    /// #     fn allocate(&self, n: usize) -> Result<c10_storage::DataPtr, c10_storage::AllocError> {
    /// #         Ok(c10_storage::DataPtr::from_owner(vec![0u8; n]))
    /// #     }
    /// #     fn device_type(&self) -> DeviceType { DeviceType::Cpu }
    /// #     unsafe fn copy_data(&self, d: *mut u8, s: *const u8, n: usize) -> Result<(), c10_storage::AllocError> {
    /// #         // SAFETY: forwarded contract.
    /// #         unsafe { c10_storage::default_copy_data(d, s, n) }
    /// #     }
    /// # }
    /// # static HEAP: Heap = Heap;
    /// let s = Storage::new(2, &HEAP, true)?;
    /// s.write()?.bytes_mut()?.copy_from_slice(&[1, 2]);
    /// s.resize(4)?;
    /// assert_eq!(s.read()?.bytes()?, &[1, 2, 0, 0]);
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    pub fn resize(&self, nbytes: usize) -> Result<(), StorageError> {
        if !self.resizable() {
            return Err(StorageError::NotResizable);
        }
        self.refuse_if_slice("resize")?;
        let allocator = self.0.allocator.ok_or(StorageError::NoAllocator)?;
        // Refuse before allocating (cheap checks), and again under the lock
        // (a pin or a guard may have appeared meanwhile).
        if let Some(held) = held::held_by_this_thread(self.id()) {
            return Err(StorageError::Reentrant {
                storage: self.id(),
                held,
                wanted: GuardKind::Write,
            });
        }
        if let pins @ 1.. = self.pin_count() {
            return Err(StorageError::Pinned { pins });
        }
        // The new tail is left uninitialised and filled lazily (the first
        // access that could expose it zero-fills it, once), so growing
        // costs the copy of the kept bytes and no fill.
        let new = allocator.allocate_for_overwrite(nbytes)?;
        let host = new.device().device_type().is_host_accessible();
        let mut guard = self.lock_for_replacement()?;
        let buf = &mut *guard.buffer;
        let keep = buf.nbytes.min(nbytes);
        if keep > 0 && !buf.data_ptr.is_null() {
            // SAFETY: the old buffer holds `buf.nbytes >= keep` bytes (storage
            // invariant), the new one `nbytes >= keep` (allocator contract);
            // the new allocation cannot overlap the live old one; both are on
            // the allocator's device; the write lock excludes other access.
            // Bytes of the old buffer past its initialised prefix are copied
            // as they are (an untyped copy) and stay past the new prefix.
            // A failed copy (a device error) leaves the storage as it was;
            // `new` is freed on return.
            unsafe { allocator.copy_data(new.get(), buf.data_ptr.get(), keep) }?;
        }
        let old = std::mem::replace(&mut buf.data_ptr, new);
        let init = if host {
            buf.init.load(Ordering::Relaxed).min(keep)
        } else {
            nbytes
        };
        buf.init.store(init, Ordering::Relaxed);
        buf.nbytes = nbytes;
        self.0.nbytes.store(nbytes, Ordering::Release);
        drop(guard);
        // Free the old buffer after releasing the lock.
        drop(old);
        Ok(())
    }

    /// Sets the recorded size without touching the buffer (c10's
    /// `set_nbytes`). Fails only with [`StorageError::Reentrant`] (this
    /// thread holds a guard of the storage).
    ///
    /// # Safety
    ///
    /// The buffer must be valid (and initialised, on the CPU) for `nbytes`
    /// bytes: shrinking is always fine, growing only if the buffer really is
    /// that large.
    pub unsafe fn set_nbytes(&self, nbytes: usize) -> Result<(), StorageError> {
        self.refuse_if_slice("set the size of")?;
        let mut guard = self.lock_exclusive()?;
        // Growing: the contract says the new bytes are initialised, so a
        // fully initialised buffer stays so; a lazily initialised one keeps
        // its prefix (its tail is zero-filled on first access).
        let init = guard.buffer.init.load(Ordering::Relaxed);
        let init = if init >= guard.buffer.nbytes {
            nbytes
        } else {
            init.min(nbytes)
        };
        guard.buffer.init.store(init, Ordering::Relaxed);
        guard.buffer.nbytes = nbytes;
        self.0.nbytes.store(nbytes, Ordering::Release);
        Ok(())
    }

    /// Replaces the buffer, keeping the recorded size, and returns the old
    /// `DataPtr` so the caller decides when it is freed (c10's
    /// `set_data_ptr`). Refused while the buffer is pinned
    /// ([`StorageError::Pinned`]) or this thread holds a guard of it
    /// ([`StorageError::Reentrant`]).
    ///
    /// # Safety
    ///
    /// `data_ptr` must satisfy [`Storage::from_data_ptr`]'s contract for
    /// [`Storage::nbytes`] bytes.
    pub unsafe fn set_data_ptr(&self, data_ptr: DataPtr) -> Result<DataPtr, StorageError> {
        self.refuse_if_slice("replace the data pointer of")?;
        if data_ptr.device().device_type() != self.0.device.device_type() {
            return Err(StorageError::DeviceMismatch {
                storage: self.0.device,
                data: data_ptr.device(),
            });
        }
        let mut guard = self.lock_for_replacement()?;
        // The contract: the new buffer is initialised for `nbytes` bytes.
        let nbytes = guard.buffer.nbytes;
        guard.buffer.init.store(nbytes, Ordering::Relaxed);
        Ok(std::mem::replace(&mut guard.buffer.data_ptr, data_ptr))
    }

    /// Like [`Storage::set_data_ptr`] but frees the old buffer at once
    /// (c10's `set_data_ptr_noswap`).
    ///
    /// # Safety
    ///
    /// As [`Storage::set_data_ptr`].
    pub unsafe fn set_data_ptr_noswap(&self, data_ptr: DataPtr) -> Result<(), StorageError> {
        // SAFETY: forwarded to the caller.
        let old = unsafe { self.set_data_ptr(data_ptr) }?;
        drop(old);
        Ok(())
    }

    /// Frees the buffer and sets the size to zero (c10's `reset()`).
    /// Refused while the buffer is pinned ([`StorageError::Pinned`]) or
    /// this thread holds a guard of it ([`StorageError::Reentrant`]).
    ///
    /// ```
    /// use c10_storage::Storage;
    /// let s = Storage::from_owner(vec![1u8; 8]);
    /// s.reset()?;
    /// assert_eq!(s.nbytes(), 0);
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    pub fn reset(&self) -> Result<(), StorageError> {
        self.refuse_if_slice("reset")?;
        let mut guard = self.lock_for_replacement()?;
        let old = std::mem::replace(&mut guard.buffer.data_ptr, DataPtr::null(self.0.device));
        guard.buffer.nbytes = 0;
        guard.buffer.init.store(0, Ordering::Relaxed);
        self.0.nbytes.store(0, Ordering::Release);
        drop(guard);
        drop(old);
        Ok(())
    }
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Storage");
        d.field("id", &format_args!("{:#x}", self.id()))
            .field("nbytes", &self.nbytes())
            .field("device", &self.device())
            .field("resizable", &self.resizable())
            .field("read_only", &self.is_read_only())
            .field("use_count", &self.use_count());
        if let Some((root, offset)) = self.slice_of() {
            d.field("slice_of", &format_args!("{:#x}+{offset}", root.id()));
        }
        // Never block in Debug: skip the address if a writer holds the lock.
        if let Some(buf) = self.0.buffer.try_read_recursive() {
            d.field("data", &buf.data_ptr.get());
        }
        d.finish()
    }
}

/// Builds a host slice of `len` bytes at `ptr`, mapping the empty and null
/// cases.
fn host_slice<'a>(ptr: *mut u8, len: usize, device: Device) -> Result<&'a [u8], StorageError> {
    if !device.device_type().is_host_accessible() {
        return Err(StorageError::NotHostAccessible(device));
    }
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(StorageError::NullData(len));
    }
    // SAFETY: the storage invariant (from the allocator contract or the
    // `from_data_ptr` contract): a non-null host buffer is valid and
    // initialised for `len` bytes while the guard that called us keeps the
    // buffer alive and excludes writers.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Shared access to a storage's bytes; see [`Storage::read`].
///
/// Not `Send`: it is released on the thread that took it, which is what
/// lets that thread's later accesses know it is held.
///
/// ```compile_fail
/// fn send<T: Send>(_: T) {}
/// let s = c10_storage::Storage::from_owner(vec![0u8; 4]);
/// send(s.read().unwrap()); // error: the guard cannot move to another thread
/// ```
pub struct StorageReadGuard<'a> {
    /// The lock of the buffer (the root's, for a slice); `None` only for
    /// the source guard of [`Storage::lock_write_read`] over a storage
    /// sharing the destination's root, which the destination's write guard
    /// locks (such a guard gives raw pointers only).
    pub(crate) buffer: Option<RwLockReadGuard<'a, Buffer>>,
    /// For a slice (or a lock-less guard): where its bytes lie.
    pub(crate) view: Option<ViewRange>,
    pub(crate) storage: &'a Storage,
}

impl Drop for StorageReadGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // Forget the record before the lock itself is released (the field
        // drops after this); both happen on this thread. A lock-less guard
        // recorded nothing.
        if self.buffer.is_some() {
            held::release(self.storage.lock_id(), GuardKind::Read);
        }
    }
}

impl StorageReadGuard<'_> {
    /// Pins the buffer: until the returned [`BufferPin`] is dropped, nothing
    /// may free or replace it ([`Storage::resize`], [`Storage::reset`] and
    /// [`Storage::set_data_ptr`] fail with [`StorageError::Pinned`]), so a
    /// raw pointer taken from this guard stays valid for as long as the pin
    /// lives (for example while foreign code holds an export). Writes
    /// through other guards are still possible.
    ///
    /// ```
    /// use c10_storage::{Storage, StorageError};
    /// let s = Storage::from_owner(vec![1u8; 8]);
    /// let pin = s.read()?.pin();
    /// assert_eq!(s.pin_count(), 1);
    /// assert!(matches!(s.reset(), Err(StorageError::Pinned { pins: 1 })));
    /// drop(pin);
    /// s.reset()?;
    /// # Ok::<(), StorageError>(())
    /// ```
    pub fn pin(&self) -> BufferPin {
        // Taken under this read guard: a replacement, which checks the count
        // under the write lock, is ordered after this increment.
        self.storage.0.pins.fetch_add(1, Ordering::AcqRel);
        BufferPin {
            imp: self.storage.0.clone(),
        }
    }

    /// The data pointer (on the storage's device; may be null when empty).
    /// Valid while the guard lives (for the source guard of
    /// [`Storage::lock_write_read`] over a storage that shares the
    /// destination's root: while the destination's guard lives).
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr_len().0
    }

    /// The size in bytes.
    pub fn nbytes(&self) -> usize {
        self.ptr_len().1
    }

    /// The device.
    pub fn device(&self) -> Device {
        self.storage.0.device
    }

    /// The bytes, if they are host memory. The source guard of
    /// [`Storage::lock_write_read`] over a storage sharing the
    /// destination's root refuses ([`StorageError::Reentrant`]): the
    /// destination's write guard could hand out the same bytes mutably.
    pub fn bytes(&self) -> Result<&[u8], StorageError> {
        if self.buffer.is_none() {
            return Err(StorageError::Reentrant {
                storage: self.storage.lock_id(),
                held: GuardKind::Write,
                wanted: GuardKind::Read,
            });
        }
        let (ptr, len) = self.ptr_len();
        host_slice(ptr, len, self.storage.0.device)
    }

    /// The pointer and size: the slice's range, else the buffer's.
    #[inline]
    fn ptr_len(&self) -> (*mut u8, usize) {
        match (&self.view, &self.buffer) {
            (Some(v), _) => (v.ptr, v.nbytes),
            (None, Some(b)) => (b.data_ptr.get(), b.nbytes),
            (None, None) => (std::ptr::null_mut(), 0),
        }
    }
}

/// Exclusive access to a storage's bytes; see [`Storage::write`].
///
/// Not `Send`, for the same reason as [`StorageReadGuard`].
pub struct StorageWriteGuard<'a> {
    /// The lock of the buffer (the root's, for a slice).
    pub(crate) buffer: RwLockWriteGuard<'a, Buffer>,
    /// For a slice: where its bytes lie in the root's buffer.
    pub(crate) view: Option<ViewRange>,
    pub(crate) storage: &'a Storage,
}

impl StorageWriteGuard<'_> {
    /// Whether every byte is initialised (always, except for a guard from
    /// [`Storage::write_uninit`] on a lazily initialised storage before
    /// [`assume_init`](Self::assume_init) or a fill).
    pub fn is_initialized(&self) -> bool {
        !self.buffer.needs_fill()
    }

    /// Zero-fills the bytes that are not initialised yet (a no-op for
    /// guards from [`Storage::write`], which did it already).
    pub fn initialize(&self) {
        self.buffer.fill_uninit();
    }

    /// Marks every byte initialised without filling: for a guard from
    /// [`Storage::write_uninit`] after the caller wrote all of them through
    /// [`as_mut_ptr`](Self::as_mut_ptr) (a kernel, a copy, a foreign
    /// producer). See [`Storage::write_uninit`] for an example.
    ///
    /// # Safety
    ///
    /// Every one of the [`nbytes`](Self::nbytes) bytes must have been
    /// written since the guard was made (or been initialised before).
    pub unsafe fn assume_init(&mut self) {
        if self.view.is_some() {
            // A slice's guard filled its root when it was made.
            return;
        }
        let n = self.buffer.nbytes;
        self.buffer.init.store(n, Ordering::Relaxed);
    }
}

impl Drop for StorageWriteGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        held::release(self.storage.lock_id(), GuardKind::Write);
    }
}

/// Keeps a storage's buffer in place: while any pin of it is alive, the
/// buffer is not freed, reallocated or replaced (see
/// [`StorageReadGuard::pin`]). Holds a handle of the storage, so the
/// storage lives at least as long.
pub struct BufferPin {
    imp: StorageArc,
}

impl BufferPin {
    /// The pinned storage.
    pub fn storage(&self) -> Storage {
        Storage(self.imp.clone())
    }
}

impl Drop for BufferPin {
    fn drop(&mut self) {
        self.imp.pins.fetch_sub(1, Ordering::AcqRel);
    }
}

impl fmt::Debug for BufferPin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferPin")
            .field(
                "storage",
                &format_args!("{:#x}", StorageArc::as_ptr(&self.imp) as usize),
            )
            .finish()
    }
}

impl StorageWriteGuard<'_> {
    /// The data pointer (on the storage's device; may be null when empty).
    /// Valid for writes while the guard lives.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr_len().0
    }

    /// The data pointer for reading.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr_len().0
    }

    /// The size in bytes.
    pub fn nbytes(&self) -> usize {
        self.ptr_len().1
    }

    /// The pointer and size: the slice's range, else the buffer's.
    #[inline]
    fn ptr_len(&self) -> (*mut u8, usize) {
        match &self.view {
            Some(v) => (v.ptr, v.nbytes),
            None => (self.buffer.data_ptr.get(), self.buffer.nbytes),
        }
    }

    /// The device.
    pub fn device(&self) -> Device {
        self.storage.0.device
    }

    /// The bytes, if they are host memory (zero-filled first if this guard
    /// came from [`Storage::write_uninit`] and they are not initialised).
    pub fn bytes(&self) -> Result<&[u8], StorageError> {
        self.buffer.fill_uninit();
        let (ptr, len) = self.ptr_len();
        host_slice(ptr, len, self.storage.0.device)
    }

    /// The bytes for writing, if they are host memory (zero-filled first,
    /// as for [`bytes`](Self::bytes)).
    pub fn bytes_mut(&mut self) -> Result<&mut [u8], StorageError> {
        self.buffer.fill_uninit();
        let (ptr, len) = self.ptr_len();
        let shared = host_slice(ptr, len, self.storage.0.device)?;
        if shared.is_empty() {
            return Ok(&mut []);
        }
        // SAFETY: `host_slice` checked that `ptr` is a valid non-null host
        // buffer of `len` bytes; the write guard (borrowed mutably for the
        // result's lifetime) gives exclusive access, and the storage is not
        // read-only (checked when the guard was made).
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
    }
}

/// Guards from [`Storage::lock_write_read`].
pub enum WriteReadGuard<'a> {
    /// Source and destination are the same storage, locked once.
    Same(StorageWriteGuard<'a>),
    /// Two storages, each locked once.
    Distinct {
        /// The destination, locked for writing.
        dst: StorageWriteGuard<'a>,
        /// The source, locked for reading.
        src: StorageReadGuard<'a>,
    },
}

impl WriteReadGuard<'_> {
    /// The destination's data pointer.
    pub fn dst_ptr(&mut self) -> *mut u8 {
        match self {
            WriteReadGuard::Same(g) => g.as_mut_ptr(),
            WriteReadGuard::Distinct { dst, .. } => dst.as_mut_ptr(),
        }
    }

    /// The source's data pointer.
    pub fn src_ptr(&self) -> *const u8 {
        match self {
            WriteReadGuard::Same(g) => g.as_ptr(),
            WriteReadGuard::Distinct { src, .. } => src.as_ptr(),
        }
    }

    /// Whether source and destination are the same storage.
    pub fn is_same(&self) -> bool {
        matches!(self, WriteReadGuard::Same(_))
    }
}
