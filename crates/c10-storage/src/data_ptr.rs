//! `DataPtr`: a pointer to a buffer plus what it takes to free it.

use std::ffi::c_void;
use std::fmt;
use std::ptr;

use crate::device::Device;

/// A deleter: called once with the context pointer when the last owner of a
/// [`DataPtr`] lets go (c10's `DeleterFnPtr`).
///
/// It is an `unsafe fn` because it is only ever sound to call with the
/// context it was paired with, exactly once.
pub type DeleterFn = unsafe fn(ctx: *mut c_void);

/// The deleter used when there is nothing to free (c10's `deleteNothing`).
///
/// # Safety
///
/// Always safe to call; it is `unsafe` only to have the [`DeleterFn`] type.
#[inline(never)]
pub unsafe fn delete_nothing(_ctx: *mut c_void) {}

/// A pointer to a buffer, the context that owns it, the deleter that frees
/// that context, and the device the buffer lives on (c10's `DataPtr`,
/// 32 bytes).
///
/// * `DataPtr` is move-only: it is not `Clone`, and the deleter runs exactly
///   once, when it is dropped (sharing is done one level up, by
///   [`Storage`](crate::Storage), which reference-counts the `StorageImpl`
///   that owns the `DataPtr`).
/// * As in c10, the deleter is called on the **context**, not on the data
///   pointer, and it runs whenever the context is non-null, even if the data
///   pointer is null. For the common "simple" case the two are equal.
/// * A `DataPtr` does not know how many bytes it points to; the storage
///   records that.
///
/// ```
/// use c10_storage::{DataPtr, Device};
/// // Adopt a Vec: the Vec is freed when the DataPtr is dropped.
/// let v = vec![1u8, 2, 3];
/// let p = DataPtr::from_owner(v);
/// assert!(!p.is_null());
/// assert_eq!(p.device(), Device::CPU);
/// drop(p); // frees the Vec
/// ```
pub struct DataPtr {
    data: *mut u8,
    ctx: *mut c_void,
    deleter: DeleterFn,
    device: Device,
}

// SAFETY: a `DataPtr` is a unique owner of its context. The constructors
// require (`from_raw_parts`, `new_simple`) or guarantee (`from_owner`:
// `O: Send`) that the deleter may be run on any thread, and the data pointer
// is only ever dereferenced by code that synchronises through `Storage`'s
// lock. Sharing `&DataPtr` across threads only exposes the pointer values.
unsafe impl Send for DataPtr {}
// SAFETY: see the `Send` impl: `&DataPtr` gives read access to plain pointer
// values only; all mutation goes through `&mut DataPtr`.
unsafe impl Sync for DataPtr {}

impl DataPtr {
    /// A null pointer on `device` with nothing to free.
    ///
    /// ```
    /// use c10_storage::{DataPtr, Device};
    /// assert!(DataPtr::null(Device::CPU).is_null());
    /// ```
    pub const fn null(device: Device) -> DataPtr {
        DataPtr {
            data: ptr::null_mut(),
            ctx: ptr::null_mut(),
            deleter: delete_nothing,
            device,
        }
    }

    /// A pointer that owns nothing: dropping it frees nothing.
    ///
    /// Building one is safe; building a [`Storage`](crate::Storage) from it
    /// is not (see [`Storage::from_data_ptr`](crate::Storage::from_data_ptr)),
    /// because the memory's lifetime is not tied to it.
    pub const fn non_owning(data: *mut u8, device: Device) -> DataPtr {
        DataPtr {
            data,
            ctx: ptr::null_mut(),
            deleter: delete_nothing,
            device,
        }
    }

    /// The general constructor: `data`, the `ctx` that owns it, the deleter
    /// to call on `ctx`, and the device.
    ///
    /// This is how an [`Allocator`](crate::Allocator) or foreign memory
    /// (a plain function plus context, as in c10) becomes a `DataPtr`.
    ///
    /// # Safety
    ///
    /// 1. If `ctx` is non-null, calling `deleter(ctx)` exactly once, from
    ///    any thread, at any time after this call, must be sound.
    /// 2. Nothing else may call `deleter(ctx)` or otherwise free `ctx`
    ///    while the `DataPtr` owns it.
    ///
    /// (What `data` points to is not part of this contract; it becomes one
    /// when the pointer is turned into a storage.)
    ///
    /// ```
    /// use std::ffi::c_void;
    /// use c10_storage::{DataPtr, Device};
    ///
    /// unsafe fn free_box(ctx: *mut c_void) {
    ///     // SAFETY: ctx came from Box::into_raw below and is freed once.
    ///     drop(unsafe { Box::from_raw(ctx.cast::<[u8; 16]>()) });
    /// }
    /// let ctx = Box::into_raw(Box::new([0u8; 16]));
    /// // SAFETY: free_box(ctx) is sound exactly once, from any thread.
    /// let p = unsafe { DataPtr::from_raw_parts(ctx.cast(), ctx.cast(), free_box, Device::CPU) };
    /// assert_eq!(p.get(), ctx.cast::<u8>());
    /// ```
    pub const unsafe fn from_raw_parts(
        data: *mut u8,
        ctx: *mut c_void,
        deleter: DeleterFn,
        device: Device,
    ) -> DataPtr {
        DataPtr {
            data,
            ctx,
            deleter,
            device,
        }
    }

    /// A "simple" pointer whose context is the data pointer itself (the
    /// shape of every c10 CPU allocation).
    ///
    /// # Safety
    ///
    /// As for [`DataPtr::from_raw_parts`] with `ctx = data`.
    pub const unsafe fn new_simple(data: *mut u8, deleter: DeleterFn, device: Device) -> DataPtr {
        DataPtr {
            data,
            ctx: data.cast(),
            deleter,
            device,
        }
    }

    /// Adopts any owner of writable CPU bytes (a `Vec<u8>`, a boxed array, a
    /// writable memory map, ...): the data pointer is the owner's bytes and
    /// the deleter drops the owner. This is the analogue of
    /// `bytes::Bytes::from_owner`.
    ///
    /// The owner is boxed first and its bytes are taken from the boxed value,
    /// so owners that hold their bytes inline (arrays) work too.
    ///
    /// ```
    /// use c10_storage::DataPtr;
    /// let p = DataPtr::from_owner([7u8; 4]); // bytes held inline in the owner
    /// assert!(!p.is_null());
    /// ```
    pub fn from_owner<O>(owner: O) -> DataPtr
    where
        O: AsMut<[u8]> + Send + 'static,
    {
        Self::from_owner_with_len(owner).0
    }

    /// Like [`DataPtr::from_owner`], also returning the byte length the
    /// owner exposed.
    pub fn from_owner_with_len<O>(owner: O) -> (DataPtr, usize)
    where
        O: AsMut<[u8]> + Send + 'static,
    {
        let boxed: *mut O = Box::into_raw(Box::new(owner));
        // SAFETY: `boxed` came from `Box::into_raw` just above, so it is
        // valid and unaliased; we take the bytes' address once, after the
        // owner reached its final (heap) place.
        let bytes: &mut [u8] = unsafe { (*boxed).as_mut() };
        let (data, len) = (bytes.as_mut_ptr(), bytes.len());
        // SAFETY: `drop_boxed::<O>` frees exactly the box created above, and
        // `O: Send` makes it sound to do so on any thread.
        let dp =
            unsafe { DataPtr::from_raw_parts(data, boxed.cast(), drop_boxed::<O>, Device::CPU) };
        (dp, len)
    }

    /// Like [`DataPtr::from_owner_with_len`] for owners that only give
    /// shared access to their bytes (a read-only memory map, a `&'static
    /// [u8]`, `bytes::Bytes`). Nothing may write through the result; use
    /// [`Storage::from_read_only_owner`](crate::Storage::from_read_only_owner)
    /// to get a storage that enforces that.
    pub fn from_read_only_owner_with_len<O>(owner: O) -> (DataPtr, usize)
    where
        O: AsRef<[u8]> + Send + 'static,
    {
        let boxed: *mut O = Box::into_raw(Box::new(owner));
        // SAFETY: as in `from_owner_with_len`.
        let bytes: &[u8] = unsafe { (*boxed).as_ref() };
        // The pointer is stored as `*mut u8` because c10's DataPtr is
        // untyped; the read-only storage flag keeps writers away.
        let (data, len) = (bytes.as_ptr().cast_mut(), bytes.len());
        // SAFETY: as in `from_owner_with_len`.
        let dp =
            unsafe { DataPtr::from_raw_parts(data, boxed.cast(), drop_boxed::<O>, Device::CPU) };
        (dp, len)
    }

    /// The data pointer (c10's `get()`).
    pub const fn get(&self) -> *mut u8 {
        self.data
    }

    /// The context pointer that the deleter receives.
    pub const fn context(&self) -> *mut c_void {
        self.ctx
    }

    /// The deleter.
    pub const fn deleter(&self) -> DeleterFn {
        self.deleter
    }

    /// The device the buffer lives on.
    pub const fn device(&self) -> Device {
        self.device
    }

    /// Whether the data pointer is null (c10's `== nullptr`, which looks
    /// at the data pointer only).
    pub fn is_null(&self) -> bool {
        self.data.is_null()
    }

    /// Whether this is a "simple" pointer (context == data).
    pub fn is_simple(&self) -> bool {
        self.data.cast::<c_void>() == self.ctx
    }

    /// The context cast to `T`, if and only if the deleter is `expected`
    /// (c10's `cast_context`). This is how an allocator recognises its own
    /// allocations.
    ///
    /// Rust only promises that a function has one address when it cannot be
    /// instantiated more than once, so a deleter meant to be compared must
    /// be a non-generic function marked `#[inline(never)]` (Miri checks
    /// this: it gives other functions a fresh address now and then).
    ///
    /// ```
    /// use c10_storage::{DataPtr, delete_nothing};
    /// let p = DataPtr::from_owner(vec![0u8; 8]);
    /// assert!(p.cast_context::<u8>(delete_nothing).is_none());
    /// ```
    pub fn cast_context<T>(&self, expected: DeleterFn) -> Option<*mut T> {
        if std::ptr::fn_addr_eq(self.deleter, expected) {
            Some(self.ctx.cast())
        } else {
            None
        }
    }

    /// Replaces the deleter with `new` if it currently is `expected`;
    /// returns whether it did (c10's `compare_exchange_deleter`). The same
    /// rule as for [`DataPtr::cast_context`] applies to `expected`.
    ///
    /// # Safety
    ///
    /// `new(ctx)` must be a correct way to free this pointer's context, under
    /// the same conditions as [`DataPtr::from_raw_parts`].
    pub unsafe fn compare_exchange_deleter(&mut self, expected: DeleterFn, new: DeleterFn) -> bool {
        if std::ptr::fn_addr_eq(self.deleter, expected) {
            self.deleter = new;
            true
        } else {
            false
        }
    }

    /// Gives up ownership of the context and returns it; the deleter will
    /// not run (c10's `release_context`). The data pointer stays readable
    /// via [`DataPtr::get`]. The caller is now responsible for freeing the
    /// context, for example by calling the deleter it read beforehand.
    #[must_use = "the returned context must be freed by the caller"]
    pub fn release_context(&mut self) -> *mut c_void {
        std::mem::replace(&mut self.ctx, ptr::null_mut())
    }

    /// Decomposes into `(data, ctx, deleter, device)` without running the
    /// deleter. [`DataPtr::from_raw_parts`] puts them back together.
    #[must_use = "the returned context must be freed by the caller"]
    pub fn into_raw_parts(self) -> (*mut u8, *mut c_void, DeleterFn, Device) {
        let me = std::mem::ManuallyDrop::new(self);
        (me.data, me.ctx, me.deleter, me.device)
    }

    /// Runs the deleter now (if there is a context) and leaves a null
    /// pointer behind (c10's `clear()`).
    pub fn clear(&mut self) {
        let device = self.device;
        drop(std::mem::replace(self, DataPtr::null(device)));
    }

    /// Changes the recorded device without touching the memory (c10's
    /// `unsafe_set_device`).
    ///
    /// # Safety
    ///
    /// The buffer must really live on `device`: the host dereferences
    /// CPU-tagged memory, so tagging device memory as CPU is undefined
    /// behaviour waiting to happen.
    pub unsafe fn set_device(&mut self, device: Device) {
        self.device = device;
    }
}

impl Drop for DataPtr {
    fn drop(&mut self) {
        if !self.ctx.is_null() {
            // SAFETY: the constructors' contract: calling the deleter once on
            // the context, from any thread, is sound; `Drop` runs once and
            // `release_context`/`into_raw_parts` null the context when the
            // caller takes it over.
            unsafe { (self.deleter)(self.ctx) }
        }
    }
}

impl fmt::Debug for DataPtr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DataPtr")
            .field("data", &self.data)
            .field("ctx", &self.ctx)
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

/// Deleter for [`DataPtr::from_owner`]: drops the boxed owner.
///
/// # Safety
///
/// `ctx` must come from `Box::<O>::into_raw` and not have been freed.
unsafe fn drop_boxed<O>(ctx: *mut c_void) {
    // SAFETY: guaranteed by the caller (only `from_owner*` pair this deleter
    // with such a context).
    drop(unsafe { Box::from_raw(ctx.cast::<O>()) });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct CountOnDrop(Arc<AtomicUsize>, Vec<u8>);
    impl AsMut<[u8]> for CountOnDrop {
        fn as_mut(&mut self) -> &mut [u8] {
            &mut self.1
        }
    }
    impl Drop for CountOnDrop {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn owner_dropped_exactly_once() {
        let n = Arc::new(AtomicUsize::new(0));
        let p = DataPtr::from_owner(CountOnDrop(n.clone(), vec![1, 2, 3]));
        // SAFETY: the pointer is valid for 3 bytes while `p` lives.
        assert_eq!(unsafe { *p.get().add(2) }, 3);
        assert_eq!(n.load(Ordering::SeqCst), 0);
        let p2 = std::thread::spawn(move || p).join().unwrap();
        drop(p2);
        assert_eq!(n.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn inline_owner_points_into_the_box() {
        let (p, len) = DataPtr::from_owner_with_len([5u8; 32]);
        assert_eq!(len, 32);
        // SAFETY: 32 valid bytes.
        let s = unsafe { std::slice::from_raw_parts(p.get(), len) };
        assert!(s.iter().all(|&b| b == 5));
    }

    static FREED: AtomicUsize = AtomicUsize::new(0);
    #[inline(never)]
    unsafe fn count_free(ctx: *mut c_void) {
        // SAFETY: contexts in these tests come from Box::into_raw.
        drop(unsafe { Box::from_raw(ctx.cast::<u64>()) });
        FREED.fetch_add(1, Ordering::SeqCst);
    }
    #[inline(never)]
    unsafe fn other_free(ctx: *mut c_void) {
        // SAFETY: as above.
        drop(unsafe { Box::from_raw(ctx.cast::<u64>()) });
        FREED.fetch_add(100, Ordering::SeqCst);
    }

    #[test]
    fn raw_parts_release_and_exchange() {
        let ctx = Box::into_raw(Box::new(7u64));
        // SAFETY: count_free frees the box once.
        let mut p = unsafe { DataPtr::new_simple(ctx.cast(), count_free, Device::CPU) };
        assert!(p.is_simple());
        assert_eq!(p.cast_context::<u64>(count_free), Some(ctx));
        assert_eq!(p.cast_context::<u64>(other_free), None);
        // SAFETY: other_free also frees the box correctly.
        assert!(!unsafe { p.compare_exchange_deleter(other_free, count_free) });
        // SAFETY: as above.
        assert!(unsafe { p.compare_exchange_deleter(count_free, other_free) });
        drop(p);
        assert_eq!(FREED.load(Ordering::SeqCst), 100);

        let ctx = Box::into_raw(Box::new(8u64));
        // SAFETY: as above.
        let mut p = unsafe { DataPtr::new_simple(ctx.cast(), count_free, Device::CPU) };
        let released = p.release_context();
        assert_eq!(released, ctx.cast());
        drop(p); // nothing freed
        assert_eq!(FREED.load(Ordering::SeqCst), 100);
        // SAFETY: we own the released context.
        unsafe { count_free(released) };
        assert_eq!(FREED.load(Ordering::SeqCst), 101);

        let ctx = Box::into_raw(Box::new(9u64));
        // SAFETY: as above.
        let p = unsafe { DataPtr::new_simple(ctx.cast(), count_free, Device::CPU) };
        let (d, c, del, dev) = p.into_raw_parts();
        assert_eq!(FREED.load(Ordering::SeqCst), 101);
        // SAFETY: reassembling the parts we just took apart.
        let mut p = unsafe { DataPtr::from_raw_parts(d, c, del, dev) };
        p.clear();
        assert!(p.is_null());
        assert_eq!(FREED.load(Ordering::SeqCst), 102);
        drop(p);
        assert_eq!(FREED.load(Ordering::SeqCst), 102);
    }

    static FREED_NULL: AtomicUsize = AtomicUsize::new(0);
    unsafe fn count_free_null(ctx: *mut c_void) {
        // SAFETY: the context comes from Box::into_raw.
        drop(unsafe { Box::from_raw(ctx.cast::<u64>()) });
        FREED_NULL.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn deleter_runs_with_null_data_but_context() {
        let ctx = Box::into_raw(Box::new(1u64));
        // SAFETY: count_free_null frees the box once.
        let p = unsafe {
            DataPtr::from_raw_parts(ptr::null_mut(), ctx.cast(), count_free_null, Device::CPU)
        };
        assert!(p.is_null());
        drop(p);
        assert_eq!(FREED_NULL.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn layout_is_c10_sized() {
        assert_eq!(std::mem::size_of::<DataPtr>(), 32);
    }
}
