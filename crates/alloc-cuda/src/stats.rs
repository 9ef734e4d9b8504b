//! Allocator statistics with PyTorch's names (`torch.cuda.memory_stats()`).

use std::collections::BTreeMap;

#[cfg(feature = "snapshot-json")]
use serde::{Deserialize, Serialize};

/// One statistic: its current value, the peak since the last
/// [`reset_peak_stats`](crate::CachingAllocator::reset_peak_stats), and the
/// cumulative increases (`allocated`) and decreases (`freed`) since the last
/// [`reset_accumulated_stats`](crate::CachingAllocator::reset_accumulated_stats)
/// (c10's `Stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "snapshot-json", derive(Serialize, Deserialize))]
pub struct Stat {
    /// Current value.
    pub current: i64,
    /// Highest `current` seen.
    pub peak: i64,
    /// Sum of all increases.
    pub allocated: i64,
    /// Sum of all decreases.
    pub freed: i64,
}

impl Stat {
    pub(crate) fn increase(&mut self, amount: u64) {
        let a = i64::try_from(amount).unwrap_or(i64::MAX);
        self.current = self.current.saturating_add(a);
        self.peak = self.peak.max(self.current);
        self.allocated = self.allocated.saturating_add(a);
    }

    pub(crate) fn decrease(&mut self, amount: u64) {
        let a = i64::try_from(amount).unwrap_or(i64::MAX);
        self.current = self.current.saturating_sub(a);
        self.freed = self.freed.saturating_add(a);
    }

    pub(crate) fn reset_peak(&mut self) {
        self.peak = self.current;
    }

    pub(crate) fn reset_accumulated(&mut self) {
        self.allocated = 0;
        self.freed = 0;
    }
}

/// Index into a [`StatArray`] (c10's `StatType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatType {
    /// Both pools (`all`).
    Aggregate = 0,
    /// The small pool (blocks ≤ 1 MiB).
    SmallPool = 1,
    /// The large pool.
    LargePool = 2,
}

impl StatType {
    /// The three types in order, with their Python names.
    pub const ALL: [(StatType, &'static str); 3] = [
        (StatType::Aggregate, "all"),
        (StatType::SmallPool, "small_pool"),
        (StatType::LargePool, "large_pool"),
    ];
}

/// One [`Stat`] per [`StatType`]: `[all, small_pool, large_pool]`.
pub type StatArray = [Stat; 3];

/// The statistics of one device's caching allocator (c10's `DeviceStats`).
///
/// See [`DeviceStats::to_flat_map`] for the `memory_stats()` keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "snapshot-json", derive(Serialize, Deserialize))]
pub struct DeviceStats {
    /// Live user allocations.
    pub allocation: StatArray,
    /// Device allocations (`cudaMalloc` segments; expandable segments are
    /// not counted, as in PyTorch).
    pub segment: StatArray,
    /// Blocks that are allocated or waiting for stream events.
    pub active: StatArray,
    /// Free blocks in split segments (which cannot be released).
    pub inactive_split: StatArray,
    /// Bytes of live allocations (block sizes, after rounding).
    pub allocated_bytes: StatArray,
    /// Bytes obtained from the device.
    pub reserved_bytes: StatArray,
    /// Bytes of active blocks.
    pub active_bytes: StatArray,
    /// Bytes of inactive split blocks.
    pub inactive_split_bytes: StatArray,
    /// Bytes requested by users (before rounding) of active blocks.
    pub requested_bytes: StatArray,
    /// Device allocations retried after freeing every cached block.
    pub num_alloc_retries: i64,
    /// Out-of-memory errors reported.
    pub num_ooms: i64,
    /// Times all outstanding events were synchronized.
    pub num_sync_all_streams: i64,
    /// Device allocation calls that succeeded (including mappings).
    pub num_device_alloc: i64,
    /// Device free calls (including unmappings).
    pub num_device_free: i64,
    /// Live allocations of at least `max_split_size` bytes.
    pub oversize_allocations: Stat,
    /// Segments of at least `max_split_size` bytes.
    pub oversize_segments: Stat,
    /// The configured `max_split_size` (-1 = unlimited, as PyTorch prints it).
    pub max_split_size: i64,
}

impl DeviceStats {
    /// The statistics as `torch.cuda.memory_stats()` reports them: keys
    /// `"<stat>.<all|small_pool|large_pool>.<current|peak|allocated|freed>"`
    /// for the pool statistics, `"oversize_allocations.<current|...>"` and
    /// `"oversize_segments.<...>"`, and the scalars `num_alloc_retries`,
    /// `num_ooms`, `num_sync_all_streams`, `num_device_alloc`,
    /// `num_device_free`, `max_split_size`.
    ///
    /// ```
    /// use alloc_cuda::DeviceStats;
    /// let m = DeviceStats::default().to_flat_map();
    /// assert_eq!(m["allocated_bytes.all.current"], 0);
    /// assert!(m.contains_key("inactive_split_bytes.large_pool.peak"));
    /// assert_eq!(m.len(), 9 * 3 * 4 + 2 * 4 + 6);
    /// ```
    pub fn to_flat_map(&self) -> BTreeMap<String, i64> {
        let mut m = BTreeMap::new();
        let arrays: [(&str, &StatArray); 9] = [
            ("allocation", &self.allocation),
            ("segment", &self.segment),
            ("active", &self.active),
            ("inactive_split", &self.inactive_split),
            ("allocated_bytes", &self.allocated_bytes),
            ("reserved_bytes", &self.reserved_bytes),
            ("active_bytes", &self.active_bytes),
            ("inactive_split_bytes", &self.inactive_split_bytes),
            ("requested_bytes", &self.requested_bytes),
        ];
        let mut put = |prefix: String, s: &Stat| {
            m.insert(format!("{prefix}.current"), s.current);
            m.insert(format!("{prefix}.peak"), s.peak);
            m.insert(format!("{prefix}.allocated"), s.allocated);
            m.insert(format!("{prefix}.freed"), s.freed);
        };
        for (name, arr) in arrays {
            for (t, tname) in StatType::ALL {
                put(format!("{name}.{tname}"), &arr[t as usize]);
            }
        }
        put("oversize_allocations".into(), &self.oversize_allocations);
        put("oversize_segments".into(), &self.oversize_segments);
        m.insert("num_alloc_retries".into(), self.num_alloc_retries);
        m.insert("num_ooms".into(), self.num_ooms);
        m.insert("num_sync_all_streams".into(), self.num_sync_all_streams);
        m.insert("num_device_alloc".into(), self.num_device_alloc);
        m.insert("num_device_free".into(), self.num_device_free);
        m.insert("max_split_size".into(), self.max_split_size);
        m
    }

    pub(crate) fn arrays_mut(&mut self) -> [&mut StatArray; 9] {
        [
            &mut self.allocation,
            &mut self.segment,
            &mut self.active,
            &mut self.inactive_split,
            &mut self.allocated_bytes,
            &mut self.reserved_bytes,
            &mut self.active_bytes,
            &mut self.inactive_split_bytes,
            &mut self.requested_bytes,
        ]
    }
}
