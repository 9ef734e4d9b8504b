//! # c10-storage
//!
//! The bottom layer of the workspace: PyTorch's c10 storage model in Rust.
//! It knows nothing about shapes, strides or element types; it owns bytes.
//!
//! * [`Device`] and [`DeviceType`]: c10's numbering, names and device-string
//!   parsing (`"cpu"`, `"cuda:1"`) with PyTorch's error messages.
//! * [`DataPtr`]: a data pointer, the context that owns it, the deleter that
//!   frees the context, and the device. Move-only; the deleter runs exactly
//!   once. Build one from an allocator, from foreign memory with a plain
//!   function plus context ([`DataPtr::from_raw_parts`]), from any owner
//!   whose `Drop` frees the memory ([`DataPtr::from_owner`]), or as a
//!   non-owning pointer ([`DataPtr::non_owning`]).
//! * [`Allocator`]: the object-safe, `Send + Sync` allocator trait, and a
//!   process-wide registry per device type with c10's priority rule
//!   ([`set_allocator`], [`get_allocator`]). Backends such as `alloc-cpu`
//!   install themselves as defaults ([`install_default_allocator`]).
//! * [`Storage`]: the shared handle to a [`StorageImpl`] (one buffer, its
//!   size, resizability, allocator). Clone is one atomic increment.
//! * Storage slices ([`Storage::slice`], PyTorch's `untyped_storage[a:b]`):
//!   a storage whose bytes are a sub-range of another's, shared; its guards
//!   lock the root storage, so aliasing stays behind one lock.
//! * [`binding`]: the slot through which a language binding keeps one
//!   object per `StorageImpl` alive exactly as long as the storage is used
//!   (PyTorch 2.x's storage PyObject preservation), driven by the handle
//!   count's 1 → 2 and 2 → 1 edges at no cost to storages without one.
//! * [`block_cache`]: a bounded per-thread cache of freed blocks of one
//!   layout. `Storage` takes its `StorageImpl` blocks from one (and
//!   c10-core's `Tensor` its `TensorImpl` blocks), so a short-lived small
//!   tensor costs no `malloc`/`free` pair for its metadata.
//!
//! ## Soundness model
//!
//! PyTorch lets every view of a storage write to it. Here the bytes are
//! reached only through guards on the storage: [`Storage::read`] (shared)
//! and [`Storage::write`] (exclusive), one `parking_lot::RwLock` per storage,
//! shared by every view. Safe code therefore cannot race, and a buffer is
//! never freed or replaced (by [`Storage::resize`]) while a guard is alive.
//! Raw pointers from the guards are for kernels; dereferencing them is
//! `unsafe` and documented. The host never dereferences device memory: the
//! guards' byte accessors return [`StorageError::NotHostAccessible`] for it.
//!
//! A thread never waits for a guard it holds itself (that fails with
//! [`StorageError::Reentrant`]), and inside [`without_waiting`] it waits for
//! no other thread either: a lock held elsewhere fails with
//! [`StorageError::WouldBlock`]. Bindings that hold a lock of their own
//! (Python's GIL) run short work that way and retry it after letting go.
//!
//! [`Allocator`] is an `unsafe trait` because storages trust what it returns
//! (see its safety section); everything built on a storage is then safe.
//!
//! ## Crate features
//!
//! * `testing`: the allocator conformance kit, [`testing`], which checks any
//!   [`Allocator`] implementation.
//!
//! ```
//! use c10_storage::{Device, Storage};
//! let dev: Device = "cuda:1".parse()?;
//! assert_eq!(dev.index(), 1);
//! let s = Storage::from_owner(vec![0u8; 16]);
//! s.write()?.bytes_mut()?.fill(7);
//! assert!(s.read()?.bytes()?.iter().all(|&b| b == 7));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod allocator;
pub mod binding;
pub mod block_cache;
mod data_ptr;
mod device;
mod held;
pub mod history;
mod slice;
mod stats;
mod storage;
mod storage_arc;

#[cfg(feature = "serde")]
mod serde_impls;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

#[allow(deprecated)]
pub use allocator::ScopedAllocator;
pub use allocator::{
    allocator_priority, default_copy_data, get_allocator, install_default_allocator,
    register_allocator, set_allocator, set_allocator_scoped, AllocError, Allocator, AllocatorGuard,
    AllocatorStats,
};
pub use data_ptr::{delete_nothing, DataPtr, DeleterFn};
pub use device::{Device, DeviceParseError, DeviceType, COMPILE_TIME_MAX_DEVICE_TYPES};
pub use held::{is_waiting_allowed, without_waiting, GuardKind};
pub use stats::StatsCounter;
pub use storage::{
    lazy_fill_count, BufferPin, Storage, StorageError, StorageImpl, StorageReadGuard,
    StorageWriteGuard, WeakStorage, WriteReadGuard,
};

/// `docs/custom-allocator.md`: its Rust snippets are compiled and run as
/// doctests of this crate, so the guide cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/custom-allocator.md")]
pub struct CustomAllocatorGuide;

/// This crate's `README.md`: its example is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadme;
