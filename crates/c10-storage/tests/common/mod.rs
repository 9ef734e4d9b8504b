//! A small, correct test allocator shared by the integration tests.

#![allow(dead_code)] // Each test file uses a different subset.

use std::alloc::Layout;
use std::sync::atomic::{AtomicU64, Ordering};

use c10_storage::{default_copy_data, AllocError, Allocator, AllocatorStats, DataPtr, DeviceType};

/// An owned, zeroed, 64-byte aligned heap block that frees itself on drop.
pub struct AlignedBlock {
    ptr: *mut u8,
    layout: Layout,
    stats: Option<&'static Counters>,
}

// SAFETY: the block is exclusively owned; freeing it from another thread is fine.
unsafe impl Send for AlignedBlock {}

impl AsMut<[u8]> for AlignedBlock {
    fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` is a live, zero-initialised allocation of `layout.size()` bytes.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBlock {
    fn drop(&mut self) {
        if let Some(c) = self.stats {
            c.current
                .fetch_sub(self.layout.size() as u64, Ordering::SeqCst);
            c.freed
                .fetch_add(self.layout.size() as u64, Ordering::SeqCst);
            c.frees.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: allocated with this layout in `TestAllocator::allocate`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

#[derive(Default)]
pub struct Counters {
    pub current: AtomicU64,
    pub peak: AtomicU64,
    pub allocated: AtomicU64,
    pub freed: AtomicU64,
    pub allocations: AtomicU64,
    pub frees: AtomicU64,
}

/// Zeroed, 64-byte aligned CPU memory; optional statistics.
pub struct TestAllocator {
    pub stats: Option<&'static Counters>,
}

// SAFETY: every allocation is a fresh, zeroed, exclusively owned block of at
// least the requested size, tagged CPU, freed by dropping its owner.
unsafe impl Allocator for TestAllocator {
    fn allocate(&self, nbytes: usize) -> Result<DataPtr, AllocError> {
        if nbytes == 0 {
            return Ok(DataPtr::null(c10_storage::Device::CPU));
        }
        let layout = Layout::from_size_align(nbytes, 64).map_err(|_| AllocError::OutOfMemory {
            nbytes,
            message: format!("cannot allocate {nbytes} bytes"),
        })?;
        // SAFETY: non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(AllocError::OutOfMemory {
                nbytes,
                message: format!("cannot allocate {nbytes} bytes"),
            });
        }
        if let Some(c) = self.stats {
            let now = c.current.fetch_add(nbytes as u64, Ordering::SeqCst) + nbytes as u64;
            c.peak.fetch_max(now, Ordering::SeqCst);
            c.allocated.fetch_add(nbytes as u64, Ordering::SeqCst);
            c.allocations.fetch_add(1, Ordering::SeqCst);
        }
        Ok(DataPtr::from_owner(AlignedBlock {
            ptr,
            layout,
            stats: self.stats,
        }))
    }

    fn device_type(&self) -> DeviceType {
        DeviceType::Cpu
    }

    unsafe fn copy_data(
        &self,
        dst: *mut u8,
        src: *const u8,
        count: usize,
    ) -> Result<(), c10_storage::AllocError> {
        // SAFETY: forwarded to the caller.
        unsafe { default_copy_data(dst, src, count) }
    }

    fn stats(&self) -> Option<AllocatorStats> {
        self.stats.map(|c| AllocatorStats {
            current_bytes: c.current.load(Ordering::SeqCst),
            peak_bytes: c.peak.load(Ordering::SeqCst),
            allocated_bytes: c.allocated.load(Ordering::SeqCst),
            freed_bytes: c.freed.load(Ordering::SeqCst),
            allocations: c.allocations.load(Ordering::SeqCst),
            frees: c.frees.load(Ordering::SeqCst),
        })
    }

    fn reset_peak_stats(&self) {
        if let Some(c) = self.stats {
            c.peak
                .store(c.current.load(Ordering::SeqCst), Ordering::SeqCst);
        }
    }

    fn name(&self) -> &str {
        "TestAllocator"
    }
}
