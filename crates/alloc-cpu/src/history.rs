//! Allocation history for the CPU allocator
//! ([`CpuAllocator::record_memory_history`](crate::CpuAllocator::record_memory_history)).
//!
//! The CPU allocator has no segments or cache, so its snapshot is one
//! block per live recorded allocation, and its trace holds `alloc`,
//! `free_requested` and `free_completed` entries (a CPU free completes at
//! once), on stream 0.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use c10_storage::history::{CapturedStack, HistoryConfig, HistoryRecorder, TraceEntry};

/// The recording state shared by a [`CpuAllocator`](crate::CpuAllocator)
/// and the allocations it recorded (their headers hold a reference, so
/// their frees reach it after the allocator is gone).
#[derive(Debug)]
pub(crate) struct CpuHistory {
    /// Whether frees are recorded now.
    recording: AtomicBool,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    rec: HistoryRecorder,
    /// Live recorded allocations: address → size.
    live: BTreeMap<u64, u64>,
}

/// One live allocation in a [`CpuMemorySnapshot`].
#[derive(Debug, Clone)]
pub struct CpuBlock {
    /// Data address.
    pub addr: u64,
    /// Requested bytes.
    pub size: u64,
    /// Where it was allocated, if stacks are recorded.
    pub stack: Option<Arc<CapturedStack>>,
}

/// What [`CpuAllocator::memory_snapshot`](crate::CpuAllocator::memory_snapshot)
/// returns: the live allocations made while recording, and the trace.
#[derive(Debug, Clone, Default)]
pub struct CpuMemorySnapshot {
    /// Live recorded allocations by address.
    pub blocks: Vec<CpuBlock>,
    /// Recorded events, oldest first.
    pub trace: Vec<TraceEntry>,
}

impl CpuHistory {
    pub(crate) fn new(config: HistoryConfig) -> CpuHistory {
        CpuHistory {
            recording: AtomicBool::new(true),
            state: Mutex::new(State {
                rec: HistoryRecorder::new(config),
                live: BTreeMap::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while recording cannot leave the state inconsistent in a
        // way that matters (at worst an entry is missing): keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn set(&self, config: Option<HistoryConfig>) {
        let mut g = self.lock();
        match config {
            Some(c) => {
                if self.recording.load(Ordering::Relaxed) {
                    g.rec.reconfigure(c);
                } else {
                    g.rec = HistoryRecorder::new(c);
                    g.live.clear();
                }
                self.recording.store(true, Ordering::Relaxed);
            }
            None => {
                self.recording.store(false, Ordering::Relaxed);
                g.rec = HistoryRecorder::new(HistoryConfig {
                    max_entries: 1,
                    ..HistoryConfig::default()
                });
                g.live.clear();
            }
        }
    }

    pub(crate) fn is_recording(&self) -> bool {
        self.recording.load(Ordering::Relaxed)
    }

    pub(crate) fn config(&self) -> HistoryConfig {
        self.lock().rec.config()
    }

    pub(crate) fn on_alloc(&self, addr: u64, size: u64) {
        let mut g = self.lock();
        g.live.insert(addr, size);
        g.rec.record_alloc(addr, size, 0);
    }

    pub(crate) fn on_free(&self, addr: u64, size: u64) {
        if !self.recording.load(Ordering::Relaxed) {
            return;
        }
        let mut g = self.lock();
        if g.live.remove(&addr).is_none() {
            // Allocated in an earlier recording session.
            return;
        }
        g.rec.record_free_requested(addr, size, 0);
        g.rec.record_free_completed(addr, size, 0);
    }

    pub(crate) fn snapshot(&self) -> CpuMemorySnapshot {
        let mut g = self.lock();
        if self.recording.load(Ordering::Relaxed) {
            let active: u64 = g.live.values().sum();
            g.rec.record(
                c10_storage::history::TraceAction::Snapshot,
                0,
                active,
                0,
                None,
            );
        }
        CpuMemorySnapshot {
            blocks: g
                .live
                .iter()
                .map(|(&addr, &size)| CpuBlock {
                    addr,
                    size,
                    stack: g.rec.block_stack(addr),
                })
                .collect(),
            trace: g.rec.entries(),
        }
    }
}
