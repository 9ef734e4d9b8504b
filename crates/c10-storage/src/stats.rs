//! [`StatsCounter`]: the bookkeeping behind [`Allocator::stats`] for
//! allocators of your own, so that they need not hand-roll six atomic
//! counters and a peak.

use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(doc)]
use crate::allocator::Allocator;
use crate::allocator::AllocatorStats;

/// Thread-safe allocation statistics: call [`record_alloc`] when an
/// allocation is handed out and [`record_free`] when its deleter runs,
/// then answer [`Allocator::stats`] with [`snapshot`] and
/// [`Allocator::reset_peak_stats`] with [`reset_peak`].
///
/// Each counter is updated atomically (relaxed), but a snapshot reads them
/// one after another: while other threads allocate, its fields may be from
/// slightly different moments, as with the CPU allocator's statistics.
/// Zero-byte requests are counted as allocations of 0 bytes if recorded;
/// whether to record them is the allocator's choice.
///
/// [`record_alloc`]: StatsCounter::record_alloc
/// [`record_free`]: StatsCounter::record_free
/// [`snapshot`]: StatsCounter::snapshot
/// [`reset_peak`]: StatsCounter::reset_peak
///
/// ```
/// use c10_storage::StatsCounter;
/// let stats = StatsCounter::new();
/// stats.record_alloc(1000);
/// stats.record_alloc(24);
/// stats.record_free(1000);
/// let s = stats.snapshot();
/// assert_eq!((s.current_bytes, s.peak_bytes), (24, 1024));
/// assert_eq!((s.allocated_bytes, s.freed_bytes), (1024, 1000));
/// assert_eq!((s.allocations, s.frees), (2, 1));
/// stats.reset_peak();
/// assert_eq!(stats.snapshot().peak_bytes, 24);
/// ```
#[derive(Debug, Default)]
pub struct StatsCounter {
    current: AtomicU64,
    peak: AtomicU64,
    allocated: AtomicU64,
    freed: AtomicU64,
    allocations: AtomicU64,
    frees: AtomicU64,
}

impl StatsCounter {
    /// All counters at zero; `const`, so a `static` can hold one.
    ///
    /// ```
    /// use c10_storage::StatsCounter;
    /// static STATS: StatsCounter = StatsCounter::new();
    /// STATS.record_alloc(64);
    /// assert_eq!(STATS.snapshot().current_bytes, 64);
    /// ```
    pub const fn new() -> StatsCounter {
        StatsCounter {
            current: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            allocated: AtomicU64::new(0),
            freed: AtomicU64::new(0),
            allocations: AtomicU64::new(0),
            frees: AtomicU64::new(0),
        }
    }

    /// Counts one allocation of `nbytes` (raising the peak if needed).
    ///
    /// ```
    /// use c10_storage::StatsCounter;
    /// let s = StatsCounter::new();
    /// s.record_alloc(10);
    /// assert_eq!(s.snapshot().peak_bytes, 10);
    /// ```
    pub fn record_alloc(&self, nbytes: usize) {
        let n = nbytes as u64;
        let now = self.current.fetch_add(n, Ordering::Relaxed).wrapping_add(n);
        self.peak.fetch_max(now, Ordering::Relaxed);
        self.allocated.fetch_add(n, Ordering::Relaxed);
        self.allocations.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one free of an allocation of `nbytes` (as recorded by
    /// [`record_alloc`](StatsCounter::record_alloc)).
    ///
    /// ```
    /// use c10_storage::StatsCounter;
    /// let s = StatsCounter::new();
    /// s.record_alloc(10);
    /// s.record_free(10);
    /// assert_eq!((s.snapshot().current_bytes, s.snapshot().frees), (0, 1));
    /// ```
    pub fn record_free(&self, nbytes: usize) {
        let n = nbytes as u64;
        // Saturating: a free recorded without its allocation (a bug in the
        // caller) must not wrap the live count around.
        let _ = self
            .current
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                Some(c.saturating_sub(n))
            });
        self.freed.fetch_add(n, Ordering::Relaxed);
        self.frees.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters as [`AllocatorStats`], for [`Allocator::stats`].
    ///
    /// ```
    /// use c10_storage::{AllocatorStats, StatsCounter};
    /// assert_eq!(StatsCounter::new().snapshot(), AllocatorStats::default());
    /// ```
    pub fn snapshot(&self) -> AllocatorStats {
        AllocatorStats {
            current_bytes: self.current.load(Ordering::Relaxed),
            peak_bytes: self.peak.load(Ordering::Relaxed),
            allocated_bytes: self.allocated.load(Ordering::Relaxed),
            freed_bytes: self.freed.load(Ordering::Relaxed),
            allocations: self.allocations.load(Ordering::Relaxed),
            frees: self.frees.load(Ordering::Relaxed),
        }
    }

    /// Sets the peak to the bytes live now, for
    /// [`Allocator::reset_peak_stats`].
    ///
    /// ```
    /// use c10_storage::StatsCounter;
    /// let s = StatsCounter::new();
    /// s.record_alloc(100);
    /// s.record_free(100);
    /// s.reset_peak();
    /// assert_eq!(s.snapshot().peak_bytes, 0);
    /// ```
    pub fn reset_peak(&self) {
        self.peak
            .store(self.current.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_many_threads() {
        let stats = StatsCounter::new();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for i in 0..1000 {
                        stats.record_alloc(i);
                        stats.record_free(i);
                    }
                });
            }
        });
        let snap = stats.snapshot();
        let total: u64 = 4 * (0..1000u64).sum::<u64>();
        assert_eq!(snap.current_bytes, 0);
        assert_eq!((snap.allocated_bytes, snap.freed_bytes), (total, total));
        assert_eq!((snap.allocations, snap.frees), (4000, 4000));
        assert!(snap.peak_bytes >= 999 && snap.peak_bytes <= 4 * 999);
    }

    #[test]
    fn unmatched_free_saturates() {
        let stats = StatsCounter::new();
        stats.record_alloc(8);
        stats.record_free(100);
        assert_eq!(stats.snapshot().current_bytes, 0);
    }
}
