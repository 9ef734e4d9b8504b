//! Storage slices: a storage whose bytes are a sub-range of another's
//! (PyTorch's `UntypedStorage.__getitem__` with a slice).
//!
//! In PyTorch, `storage[2:5]` is a new `StorageImpl` whose `DataPtr` points
//! inside the parent's buffer and whose deleter context holds a reference
//! to the parent. Here too: [`Storage::slice`] computes the pointer from the
//! parent's own (after checking the range against the parent's size, under
//! its lock), and the `DataPtr`'s context is a boxed [`BufferPin`] of the
//! parent, so the parent lives as long as the slice and its buffer can be
//! neither freed nor replaced meanwhile (PyTorch lets the parent reallocate
//! and leaves the slice dangling; here [`Storage::resize`] of the parent is
//! refused with [`StorageError::Pinned`] while slices exist).
//!
//! # Locking
//!
//! Bytes are reached only through guards, and guards over the same bytes
//! must exclude each other, so a slice has no lock of its own for its
//! bytes: every guard of a slice locks its **root** (the storage that owns
//! the allocation; a slice of a slice has the same root), and the per-thread
//! re-entrancy record is kept under the root's id. A write guard through
//! one slice therefore excludes readers of the root and of every other
//! slice of it, exactly as if they were views of one storage.
//! [`Storage::lock_write_read`] of two storages with one root takes that
//! lock once (the destination's write guard); the source's guard then
//! holds no lock and gives raw pointers only (its `bytes()` refuses), so
//! safe code never holds a `&[u8]` and a `&mut [u8]` over the same bytes.
//!
//! A slice's range never changes: the operations that would free, replace
//! or re-size its buffer ([`Storage::reset`], [`Storage::set_data_ptr`],
//! [`Storage::set_nbytes`], [`Storage::set_resizable`]`(true)`) refuse with
//! [`StorageError::SliceOwnsNoMemory`], and [`Storage::resize`] with c10's
//! `Trying to resize storage that is not resizable`, as PyTorch does.

use std::ffi::c_void;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize};

use parking_lot::RwLock;

use crate::binding::BindingSlot;
use crate::data_ptr::DataPtr;
use crate::held::{self, GuardKind};
use crate::storage::{
    lock_read, lock_write, Buffer, BufferPin, Storage, StorageError, StorageImpl, StorageReadGuard,
    StorageWriteGuard, WriteReadGuard,
};

/// Where a slice's bytes lie: a pointer into the root's buffer and a size,
/// fixed when the slice is made.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ViewRange {
    pub(crate) ptr: *mut u8,
    pub(crate) nbytes: usize,
}

// SAFETY: plain values; the pointer is dereferenced only under the root's
// lock (or by `unsafe` code with its own contract), as `DataPtr`'s.
unsafe impl Send for ViewRange {}
// SAFETY: as above.
unsafe impl Sync for ViewRange {}

/// What a slice's `StorageImpl` records about its place.
#[derive(Debug)]
pub(crate) struct ViewOf {
    /// The storage owning the allocation, whose lock guards the bytes.
    pub(crate) root: Storage,
    /// The slice's first byte, counted from the root's.
    pub(crate) offset: usize,
    /// The slice's bytes.
    pub(crate) range: ViewRange,
}

/// The deleter of a slice's `DataPtr`: drops the boxed pin of its parent.
///
/// # Safety
///
/// `ctx` comes from `Box::<BufferPin>::into_raw` and was not freed.
#[inline(never)]
unsafe fn drop_parent_pin(ctx: *mut c_void) {
    // SAFETY: the caller's contract (only `Storage::slice` pairs this
    // deleter with such a context, and a `DataPtr` runs it once).
    drop(unsafe { Box::from_raw(ctx.cast::<BufferPin>()) });
}

impl Storage {
    /// A new storage whose bytes **are** bytes `range` of this one (no
    /// copy): PyTorch's `untyped_storage[start:stop]`. Writes through either
    /// show in the other; the slice's data pointer is this storage's plus
    /// `range.start`; it keeps this storage alive, is not resizable, has the
    /// same device, allocator and read-only state, and is a storage of its
    /// own ([`Storage::is_alias_of`] is false; [`Storage::slice_of`] names
    /// the root). A slice of a slice has the same root. See the module
    /// documentation of `slice.rs` for the locking.
    ///
    /// The range is checked against this storage's size under its lock;
    /// nothing about the pointer comes from the caller.
    ///
    /// # Errors
    ///
    /// [`StorageError::SliceOutOfRange`] unless `range.start <= range.end
    /// <= self.nbytes()`; [`StorageError::Reentrant`] if this thread holds
    /// this storage's (or its root's) write guard.
    ///
    /// ```
    /// use c10_storage::{Storage, StorageError};
    /// let root = Storage::from_owner((0u8..10).collect::<Vec<_>>());
    /// let s = root.slice(2..5)?;
    /// assert_eq!(s.read()?.bytes()?, &[2, 3, 4]);
    /// assert_eq!(s.data_addr()?, root.data_addr()? + 2);
    /// s.write()?.bytes_mut()?[0] = 99;
    /// assert_eq!(root.read()?.bytes()?[2], 99);
    /// // A slice does not own its memory: it cannot grow, and its root
    /// // cannot reallocate under it.
    /// assert_eq!(s.resize(10), Err(StorageError::NotResizable));
    /// assert!(matches!(root.reset(), Err(StorageError::Pinned { .. })));
    /// let ss = s.slice(1..3)?; // a slice of a slice: the same root
    /// let (r, offset) = ss.slice_of().unwrap();
    /// assert!(r.is_alias_of(&root) && offset == 3);
    /// assert!(root.slice(4..11).is_err());
    /// # Ok::<(), StorageError>(())
    /// ```
    pub fn slice(&self, range: Range<usize>) -> Result<Storage, StorageError> {
        let guard = self.read()?;
        let nbytes = guard.nbytes();
        if range.start > range.end || range.end > nbytes {
            return Err(StorageError::SliceOutOfRange {
                start: range.start,
                end: range.end,
                nbytes,
            });
        }
        let len = range.end - range.start;
        let base = guard.as_ptr().cast_mut();
        // In bounds (`start <= nbytes`), so no wrap-around; a null buffer
        // (no data, as on the meta device) stays null.
        let ptr = if base.is_null() {
            base
        } else {
            base.wrapping_add(range.start)
        };
        let pin = guard.pin();
        drop(guard);
        let (root, offset) = match self.slice_of() {
            Some((root, at)) => (root.clone(), at + range.start),
            None => (self.clone(), range.start),
        };
        let ctx = Box::into_raw(Box::new(pin));
        // SAFETY: `drop_parent_pin(ctx)` frees exactly the box made above,
        // once, and `BufferPin` may be dropped on any thread.
        let data_ptr =
            unsafe { DataPtr::from_raw_parts(ptr, ctx.cast(), drop_parent_pin, self.device()) };
        let imp = self.imp();
        Ok(Storage::from_impl(StorageImpl {
            buffer: RwLock::new(Buffer::initialised(data_ptr, len)),
            nbytes: AtomicUsize::new(len),
            resizable: AtomicBool::new(false),
            allocator: imp.allocator,
            device: imp.device,
            read_only: imp.read_only.clone(),
            version: AtomicU32::new(0),
            pins: AtomicUsize::new(0),
            binding: BindingSlot::new(),
            view: Some(Box::new(ViewOf {
                root,
                offset,
                range: ViewRange { ptr, nbytes: len },
            })),
        }))
    }

    /// For a storage made by [`Storage::slice`]: the root storage (the one
    /// owning the allocation) and the slice's byte offset in it; `None` for
    /// any other storage.
    ///
    /// ```
    /// use c10_storage::Storage;
    /// let root = Storage::from_owner(vec![0u8; 8]);
    /// assert!(root.slice_of().is_none());
    /// let s = root.slice(3..8)?.slice(1..2)?;
    /// let (r, offset) = s.slice_of().unwrap();
    /// assert!(r.is_alias_of(&root));
    /// assert_eq!((offset, s.nbytes()), (4, 1));
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    pub fn slice_of(&self) -> Option<(&Storage, usize)> {
        self.imp().view.as_deref().map(|v| (&v.root, v.offset))
    }

    /// Whether this storage and `other` reach the same allocation: the
    /// same storage, or slices of one root (or a root and its slice). Their
    /// byte ranges may still be disjoint.
    ///
    /// ```
    /// use c10_storage::Storage;
    /// let root = Storage::from_owner(vec![0u8; 8]);
    /// let (a, b) = (root.slice(0..4)?, root.slice(4..8)?);
    /// assert!(a.shares_root_with(&b) && a.shares_root_with(&root));
    /// assert!(!a.is_alias_of(&b));
    /// assert!(!a.shares_root_with(&Storage::from_owner(vec![0u8; 8])));
    /// # Ok::<(), c10_storage::StorageError>(())
    /// ```
    pub fn shares_root_with(&self, other: &Storage) -> bool {
        self.lock_id() == other.lock_id()
    }

    /// The id under which this storage's bytes are locked: its root's for a
    /// slice, its own otherwise.
    #[inline]
    pub(crate) fn lock_id(&self) -> usize {
        match &self.imp().view {
            Some(v) => v.root.id(),
            None => self.id(),
        }
    }

    /// [`StorageError::SliceOwnsNoMemory`] for a slice.
    pub(crate) fn refuse_if_slice(&self, what: &'static str) -> Result<(), StorageError> {
        match self.imp().view {
            Some(_) => Err(StorageError::SliceOwnsNoMemory { what }),
            None => Ok(()),
        }
    }

    /// [`Storage::read`] of a slice: the root's lock.
    #[cold]
    pub(crate) fn read_view<'a>(
        &'a self,
        v: &'a ViewOf,
    ) -> Result<StorageReadGuard<'a>, StorageError> {
        let root = &v.root;
        let on_contention = held::acquire(root.id(), GuardKind::Read)?;
        let buffer = lock_read(&root.imp().buffer, root.id(), on_contention)?;
        Ok(StorageReadGuard {
            buffer: Some(buffer),
            view: Some(v.range),
            storage: self,
        })
    }

    /// [`Storage::try_read`] of a slice.
    #[cold]
    pub(crate) fn try_read_view<'a>(
        &'a self,
        v: &'a ViewOf,
    ) -> Result<Option<StorageReadGuard<'a>>, StorageError> {
        let root = &v.root;
        held::acquire(root.id(), GuardKind::Read)?;
        match root.imp().buffer.try_read_recursive() {
            Some(buffer) if !buffer.needs_fill() => Ok(Some(StorageReadGuard {
                buffer: Some(buffer),
                view: Some(v.range),
                storage: self,
            })),
            _ => {
                held::release(root.id(), GuardKind::Read);
                Ok(None)
            }
        }
    }

    /// [`Storage::write`] of a slice (writability already checked): the
    /// root's lock, its bytes initialised.
    #[cold]
    pub(crate) fn write_view<'a>(
        &'a self,
        v: &'a ViewOf,
    ) -> Result<StorageWriteGuard<'a>, StorageError> {
        let root = &v.root;
        let on_contention = held::acquire(root.id(), GuardKind::Write)?;
        let buffer = lock_write(&root.imp().buffer, root.id(), on_contention)?;
        buffer.fill_uninit();
        Ok(StorageWriteGuard {
            buffer,
            view: Some(v.range),
            storage: self,
        })
    }

    /// [`Storage::try_write`] of a slice (writability already checked).
    #[cold]
    pub(crate) fn try_write_view<'a>(
        &'a self,
        v: &'a ViewOf,
    ) -> Result<Option<StorageWriteGuard<'a>>, StorageError> {
        let root = &v.root;
        held::acquire(root.id(), GuardKind::Write)?;
        match root.imp().buffer.try_write() {
            Some(buffer) => {
                buffer.fill_uninit();
                Ok(Some(StorageWriteGuard {
                    buffer,
                    view: Some(v.range),
                    storage: self,
                }))
            }
            None => {
                held::release(root.id(), GuardKind::Write);
                Ok(None)
            }
        }
    }

    /// [`Storage::lock_write_read`] of two distinct storages with one root:
    /// the destination's write guard locks the root; the source's guard
    /// holds no lock (its range is read while the root is locked).
    #[cold]
    pub(crate) fn lock_pair_same_root<'a>(
        dst: &'a Storage,
        src: &'a Storage,
        write: fn(&'a Storage) -> Result<StorageWriteGuard<'a>, StorageError>,
    ) -> Result<WriteReadGuard<'a>, StorageError> {
        let d = write(dst)?;
        let range = match &src.imp().view {
            Some(v) => v.range,
            // The source is the root itself, whose buffer `d` locks.
            None => ViewRange {
                ptr: d.buffer.data_ptr.get(),
                nbytes: d.buffer.nbytes,
            },
        };
        let s = StorageReadGuard {
            buffer: None,
            view: Some(range),
            storage: src,
        };
        Ok(WriteReadGuard::Distinct { dst: d, src: s })
    }
}

#[cfg(test)]
mod tests {
    //! Run under Miri too: aliasing through guards, lifetimes, pins,
    //! threads.
    use super::*;
    use std::sync::Arc;

    fn root(n: u8) -> Storage {
        Storage::from_owner((0..n).collect::<Vec<u8>>())
    }

    #[test]
    fn writes_show_both_ways_and_pointers_are_offset() {
        let r = root(10);
        let s = r.slice(2..5).unwrap();
        assert_eq!(s.nbytes(), 3);
        assert_eq!(s.data_addr().unwrap(), r.data_addr().unwrap() + 2);
        s.write().unwrap().bytes_mut().unwrap()[0] = 99;
        assert_eq!(r.read().unwrap().bytes().unwrap()[2], 99);
        r.write().unwrap().bytes_mut().unwrap()[3] = 77;
        assert_eq!(s.read().unwrap().bytes().unwrap(), &[99, 77, 4]);
        assert!(!s.is_alias_of(&r));
        assert!(s.shares_root_with(&r));
        assert!(!s.resizable());
        assert_eq!(s.device(), r.device());
    }

    #[test]
    fn bounds_and_empty_slices() {
        let r = root(10);
        assert_eq!(
            r.slice(3..11).unwrap_err(),
            StorageError::SliceOutOfRange {
                start: 3,
                end: 11,
                nbytes: 10
            }
        );
        #[allow(clippy::reversed_empty_ranges)]
        let backwards = r.slice(5..4);
        assert!(backwards.is_err());
        let e = r.slice(7..7).unwrap();
        assert_eq!(e.nbytes(), 0);
        assert_eq!(e.data_addr().unwrap(), r.data_addr().unwrap() + 7);
        assert_eq!(e.read().unwrap().bytes().unwrap(), &[] as &[u8]);
        let end = r.slice(10..10).unwrap();
        assert_eq!(end.data_addr().unwrap(), r.data_addr().unwrap() + 10);
        let empty = Storage::from_owner(Vec::new());
        assert_eq!(empty.slice(0..0).unwrap().nbytes(), 0);
    }

    #[test]
    fn slices_of_slices_share_the_root_and_keep_parents_alive() {
        let r = root(10);
        let s = r.slice(2..8).unwrap();
        let ss = s.slice(1..3).unwrap();
        assert_eq!(ss.slice_of().map(|(_, o)| o), Some(3));
        assert!(ss.slice_of().is_some_and(|(x, _)| x.is_alias_of(&r)));
        let weak_parent = s.downgrade();
        drop(s);
        assert!(!weak_parent.is_dead(), "the slice keeps its parent alive");
        let weak_root = r.downgrade();
        drop(r);
        assert!(!weak_root.is_dead());
        assert_eq!(ss.read().unwrap().bytes().unwrap(), &[3, 4]);
        drop(ss);
        assert!(weak_parent.is_dead() && weak_root.is_dead());
    }

    #[test]
    fn a_slice_owns_no_memory() {
        let r = root(4);
        let s = r.slice(1..3).unwrap();
        assert_eq!(s.resize(2), Err(StorageError::NotResizable));
        assert!(matches!(
            s.reset(),
            Err(StorageError::SliceOwnsNoMemory { .. })
        ));
        assert!(s.set_resizable(true).is_err());
        s.set_resizable(false).unwrap();
        // SAFETY: refused before anything changes.
        let e = unsafe { s.set_nbytes(1) };
        assert!(matches!(e, Err(StorageError::SliceOwnsNoMemory { .. })));
        // SAFETY: refused before the pointer is used.
        let e = unsafe { s.set_data_ptr(DataPtr::from_owner(vec![0u8; 2])) };
        assert!(e.is_err());
        // The root cannot reallocate or free while the slice lives.
        assert!(matches!(r.reset(), Err(StorageError::Pinned { pins: 1 })));
        drop(s);
        r.reset().unwrap();
    }

    #[test]
    fn guards_exclude_each_other_across_root_and_slices() {
        let r = root(8);
        let (a, b) = (r.slice(0..4).unwrap(), r.slice(2..6).unwrap());
        let w = a.write().unwrap();
        for other in [&r, &b, &a] {
            assert!(matches!(other.read(), Err(StorageError::Reentrant { .. })));
            assert!(matches!(other.write(), Err(StorageError::Reentrant { .. })));
            assert!(matches!(
                other.try_read(),
                Err(StorageError::Reentrant { .. })
            ));
        }
        drop(w);
        let (g1, g2, g3) = (r.read().unwrap(), a.read().unwrap(), b.read().unwrap());
        assert_eq!(g2.bytes().unwrap()[2..], g3.bytes().unwrap()[..2]);
        assert!(matches!(b.write(), Err(StorageError::Reentrant { .. })));
        drop((g1, g2, g3));
        assert!(b.try_write().unwrap().is_some());
    }

    #[test]
    fn lock_write_read_over_one_root() {
        let r = root(8);
        let a = r.slice(0..4).unwrap();
        let b = r.slice(4..8).unwrap();
        for (dst, src, from) in [(&a, &b, 4u8), (&b, &r, 0), (&r, &a, 0)] {
            let mut g = Storage::lock_write_read(dst, src).unwrap();
            assert!(!g.is_same());
            let (d, s) = (g.dst_ptr(), g.src_ptr());
            if let WriteReadGuard::Distinct { src: sg, .. } = &g {
                assert!(matches!(sg.bytes(), Err(StorageError::Reentrant { .. })));
                assert_eq!(sg.as_ptr(), s);
            }
            // SAFETY: both ranges hold at least 4 bytes; the root is
            // write-locked by `g`; `copy` allows overlap.
            unsafe { std::ptr::copy(s, d, 4) };
            drop(g);
            let _ = from;
        }
        // a <- b: [4,5,6,7,4,5,6,7]; b <- r[0..4]: same; r[0..4] <- a: same.
        assert_eq!(
            r.read().unwrap().bytes().unwrap(),
            &[4, 5, 6, 7, 4, 5, 6, 7]
        );
        assert!(Storage::lock_write_uninit_read(&a, &b).is_ok());
        assert!(Storage::lock_write_read(&a, &a).unwrap().is_same());
    }

    #[test]
    fn read_only_and_lazily_filled_parents() {
        static BYTES: [u8; 4] = [1, 2, 3, 4];
        let ro = Storage::from_read_only_owner(&BYTES[..], "static");
        let s = ro.slice(1..3).unwrap();
        assert!(s.is_read_only());
        assert!(matches!(s.write(), Err(StorageError::ReadOnly { .. })));
        assert_eq!(s.read().unwrap().bytes().unwrap(), &[2, 3]);
    }

    #[test]
    fn threads_write_through_slices() {
        let r = root(64);
        let parts: Vec<Storage> = (0..4)
            .map(|i| r.slice(i * 16..i * 16 + 16).unwrap())
            .collect();
        let parts = Arc::new(parts);
        let hs: Vec<_> = (0..4)
            .map(|i| {
                let parts = Arc::clone(&parts);
                std::thread::spawn(move || {
                    for _ in 0..3 {
                        parts[i]
                            .write()
                            .unwrap()
                            .bytes_mut()
                            .unwrap()
                            .fill(i as u8 + 100);
                        let all: u32 = parts
                            .iter()
                            .map(|p| {
                                p.read()
                                    .unwrap()
                                    .bytes()
                                    .unwrap()
                                    .iter()
                                    .map(|&b| u32::from(b))
                                    .sum::<u32>()
                            })
                            .sum();
                        assert!(all > 0);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let b = r.read().unwrap().bytes().unwrap().to_vec();
        for (i, chunk) in b.chunks(16).enumerate() {
            assert!(chunk.iter().all(|&x| x == i as u8 + 100));
        }
    }
}
