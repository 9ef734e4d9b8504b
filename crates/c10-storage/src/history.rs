//! Allocation history: the trace entries that PyTorch's
//! `torch.cuda.memory._record_memory_history` keeps, shared by the CUDA
//! caching allocator (alloc-cuda) and the CPU allocator (alloc-cpu).
//!
//! An allocator holds an `Option<`[`HistoryRecorder`]`>`: `None` (the
//! default) costs its alloc and free paths one branch. When recording is
//! on, every event is a [`TraceEntry`] in a ring buffer of at most
//! `max_entries` (PyTorch's `alloc_trace`): once full, the oldest entry is
//! overwritten. With [`HistoryConfig::stacks`] the entry carries the Rust
//! call stack, captured with [`std::backtrace::Backtrace`] (the unwinding
//! happens at capture; symbol resolution only when a snapshot asks for the
//! frames, see [`CapturedStack::frames`]).
//!
//! ```
//! use c10_storage::history::{HistoryConfig, HistoryRecorder, TraceAction};
//! let mut rec = HistoryRecorder::new(HistoryConfig { max_entries: 2, ..HistoryConfig::default() });
//! rec.record(TraceAction::Alloc, 0x1000, 512, 0, None);
//! rec.record(TraceAction::FreeRequested, 0x1000, 512, 0, None);
//! rec.record(TraceAction::FreeCompleted, 0x1000, 512, 0, None);
//! let actions: Vec<&str> = rec.entries().iter().map(|e| e.action.as_str()).collect();
//! assert_eq!(actions, ["free_requested", "free_completed"]); // the oldest was overwritten
//! ```

use std::backtrace::Backtrace;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// What happened (PyTorch's `TraceEntry::Action`, with its strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceAction {
    /// A block was handed out (`size` is the requested size).
    Alloc,
    /// The user freed a block; it may still wait for other streams.
    FreeRequested,
    /// The block is free for reuse.
    FreeCompleted,
    /// A new segment came from the device (`cudaMalloc`).
    SegmentAlloc,
    /// A segment went back to the device (`cudaFree`).
    SegmentFree,
    /// Pages of an expandable segment were mapped.
    SegmentMap,
    /// Pages of an expandable segment were unmapped.
    SegmentUnmap,
    /// An out-of-memory error (`addr` holds the device's free bytes).
    Oom,
    /// A snapshot was taken.
    Snapshot,
}

impl TraceAction {
    /// PyTorch's string for the action.
    ///
    /// ```
    /// use c10_storage::history::TraceAction;
    /// assert_eq!(TraceAction::SegmentUnmap.as_str(), "segment_unmap");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            TraceAction::Alloc => "alloc",
            TraceAction::FreeRequested => "free_requested",
            TraceAction::FreeCompleted => "free_completed",
            TraceAction::SegmentAlloc => "segment_alloc",
            TraceAction::SegmentFree => "segment_free",
            TraceAction::SegmentMap => "segment_map",
            TraceAction::SegmentUnmap => "segment_unmap",
            TraceAction::Oom => "oom",
            TraceAction::Snapshot => "snapshot",
        }
    }
}

/// One resolved stack frame (PyTorch's `Frame` dict).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackFrame {
    /// Source file (empty when unknown).
    pub filename: String,
    /// Line number (0 when unknown).
    pub line: u32,
    /// Function name.
    pub name: String,
}

/// A call stack captured at an allocator event.
///
/// Capturing walks the stack (a few microseconds); turning addresses into
/// names, files and lines is deferred to the first [`frames`] call and
/// cached, so stacks that are never looked at are never resolved.
///
/// [`frames`]: CapturedStack::frames
pub struct CapturedStack {
    bt: Backtrace,
    resolved: OnceLock<Vec<StackFrame>>,
}

impl std::fmt::Debug for CapturedStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CapturedStack")
            .field("resolved", &self.resolved.get().is_some())
            .finish_non_exhaustive()
    }
}

impl CapturedStack {
    /// Captures the current thread's stack.
    ///
    /// ```
    /// use c10_storage::history::CapturedStack;
    /// let s = CapturedStack::capture();
    /// // In a debug build with symbols, this function is on the stack.
    /// # #[cfg(not(miri))]
    /// assert!(s.frames().iter().any(|f| f.name.contains("main")));
    /// ```
    pub fn capture() -> Arc<CapturedStack> {
        Arc::new(CapturedStack {
            bt: Backtrace::force_capture(),
            resolved: OnceLock::new(),
        })
    }

    /// The frames, innermost first, without the capturing machinery's own
    /// frames (those up to the last frame of a `history` module; resolved on
    /// first use).
    pub fn frames(&self) -> &[StackFrame] {
        self.resolved
            .get_or_init(|| parse_backtrace(&self.bt.to_string()))
    }
}

/// Parses std's `Backtrace` display form (`  N: name` lines, each
/// optionally followed by `at file:line:col`), dropping the frames of the
/// backtrace machinery and of the recorders (every frame up to the last
/// one in a module path containing `::history::`).
fn parse_backtrace(text: &str) -> Vec<StackFrame> {
    let mut frames: Vec<StackFrame> = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(loc) = t.strip_prefix("at ") {
            if let Some(last) = frames.last_mut() {
                let mut parts = loc.rsplitn(3, ':');
                let _col = parts.next();
                let line_no = parts.next().and_then(|l| l.parse().ok());
                match (line_no, parts.next()) {
                    (Some(l), Some(file)) => {
                        last.line = l;
                        last.filename = file.to_string();
                    }
                    _ => last.filename = loc.to_string(),
                }
            }
            continue;
        }
        let Some((idx, name)) = t.split_once(": ") else {
            continue;
        };
        if idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        frames.push(StackFrame {
            filename: String::new(),
            line: 0,
            name: name.trim().to_string(),
        });
    }
    // Drop the capture machinery at the top of the stack.
    let skip = frames
        .iter()
        .rposition(|f| {
            f.name.starts_with("std::backtrace")
                || f.name.starts_with("<std::backtrace")
                || f.name.contains("::history::")
        })
        .map_or(0, |i| i + 1);
    frames.drain(..skip.min(frames.len()));
    frames
}

/// What [`HistoryRecorder`] keeps (PyTorch's `_record_memory_history`
/// arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryConfig {
    /// Keep the trace of events (`enabled="all"`); `false` keeps only the
    /// allocation stacks of live blocks (`enabled="state"`).
    pub trace: bool,
    /// The ring buffer's capacity in entries (at least 1).
    pub max_entries: usize,
    /// Capture Rust call stacks (`stacks="all"`) for allocations (and, with
    /// [`HistoryConfig::stacks_on_free`], frees).
    pub stacks: bool,
    /// Also capture stacks for free events (`context="all"`).
    pub stacks_on_free: bool,
}

impl Default for HistoryConfig {
    /// PyTorch's defaults: everything, an unbounded buffer.
    fn default() -> HistoryConfig {
        HistoryConfig {
            trace: true,
            max_entries: usize::MAX,
            stacks: true,
            stacks_on_free: true,
        }
    }
}

/// One recorded event (PyTorch's `TraceEntry`).
#[derive(Debug, Clone)]
pub struct TraceEntry {
    /// The kind of event.
    pub action: TraceAction,
    /// The address (for [`TraceAction::Oom`], the device's free bytes).
    pub addr: u64,
    /// Bytes (requested size for allocations, segment size for segments).
    pub size: u64,
    /// The stream (0 on the CPU).
    pub stream: u64,
    /// Microseconds since the Unix epoch.
    pub time_us: i64,
    /// The call stack, if stacks are recorded.
    pub stack: Option<Arc<CapturedStack>>,
}

/// The recording state of one allocator: the configuration, the trace ring
/// buffer, and the allocation stacks of live blocks and segments.
#[derive(Debug)]
pub struct HistoryRecorder {
    config: HistoryConfig,
    entries: Vec<TraceEntry>,
    /// Where the next entry goes once the buffer is full.
    next: usize,
    /// Allocation stacks of live blocks, by address.
    live: HashMap<u64, Arc<CapturedStack>>,
    /// Allocation stacks of live segments, by base address.
    segments: HashMap<u64, Arc<CapturedStack>>,
}

/// Microseconds since the Unix epoch (0 if the clock is before it).
///
/// ```
/// assert!(c10_storage::history::now_us() > 1_600_000_000_000_000);
/// ```
pub fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

impl HistoryRecorder {
    /// An empty recorder.
    pub fn new(config: HistoryConfig) -> HistoryRecorder {
        HistoryRecorder {
            config: HistoryConfig {
                max_entries: config.max_entries.max(1),
                ..config
            },
            entries: Vec::new(),
            next: 0,
            live: HashMap::new(),
            segments: HashMap::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> HistoryConfig {
        self.config
    }

    /// Changes the configuration, keeping what was recorded (a smaller
    /// capacity drops the oldest entries).
    pub fn reconfigure(&mut self, config: HistoryConfig) {
        let mut entries = self.entries();
        let cap = config.max_entries.max(1);
        if entries.len() > cap {
            entries.drain(..entries.len() - cap);
        }
        self.entries = entries;
        self.next = 0;
        self.config = HistoryConfig {
            max_entries: cap,
            ..config
        };
    }

    /// A stack for an allocation event, if stacks are on.
    pub fn capture_alloc(&self) -> Option<Arc<CapturedStack>> {
        self.config.stacks.then(CapturedStack::capture)
    }

    /// A stack for a free event, if stacks on free are on.
    pub fn capture_free(&self) -> Option<Arc<CapturedStack>> {
        (self.config.stacks && self.config.stacks_on_free).then(CapturedStack::capture)
    }

    /// Appends an entry (if the trace is kept), overwriting the oldest one
    /// when the buffer is full.
    pub fn record(
        &mut self,
        action: TraceAction,
        addr: u64,
        size: u64,
        stream: u64,
        stack: Option<Arc<CapturedStack>>,
    ) {
        if !self.config.trace {
            return;
        }
        let e = TraceEntry {
            action,
            addr,
            size,
            stream,
            time_us: now_us(),
            stack,
        };
        if self.entries.len() < self.config.max_entries {
            self.entries.push(e);
        } else if let Some(slot) = self.entries.get_mut(self.next) {
            *slot = e;
            self.next += 1;
            if self.next == self.config.max_entries {
                self.next = 0;
            }
        }
    }

    /// Records an allocation: the trace entry, and the block's stack for
    /// snapshots.
    pub fn record_alloc(&mut self, addr: u64, requested: u64, stream: u64) {
        let stack = self.capture_alloc();
        if let Some(s) = &stack {
            self.live.insert(addr, Arc::clone(s));
        }
        self.record(TraceAction::Alloc, addr, requested, stream, stack);
    }

    /// Records a free request (the block's stack is kept until the free
    /// completes).
    pub fn record_free_requested(&mut self, addr: u64, size: u64, stream: u64) {
        let stack = self.capture_free();
        self.record(TraceAction::FreeRequested, addr, size, stream, stack);
    }

    /// Records a completed free and forgets the block's stack.
    pub fn record_free_completed(&mut self, addr: u64, size: u64, stream: u64) {
        self.live.remove(&addr);
        let stack = self.capture_free();
        self.record(TraceAction::FreeCompleted, addr, size, stream, stack);
    }

    /// Records a new segment (or a mapping) with its stack.
    pub fn record_segment(&mut self, action: TraceAction, addr: u64, size: u64, stream: u64) {
        let stack = self.capture_alloc();
        match action {
            TraceAction::SegmentAlloc => {
                if let Some(s) = &stack {
                    self.segments.insert(addr, Arc::clone(s));
                }
            }
            TraceAction::SegmentFree => {
                self.segments.remove(&addr);
            }
            _ => {}
        }
        self.record(action, addr, size, stream, stack);
    }

    /// The allocation stack of the live block at `addr`, if recorded.
    pub fn block_stack(&self, addr: u64) -> Option<Arc<CapturedStack>> {
        self.live.get(&addr).cloned()
    }

    /// The allocation stack of the segment based at `addr`, if recorded.
    pub fn segment_stack(&self, addr: u64) -> Option<Arc<CapturedStack>> {
        self.segments.get(&addr).cloned()
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> Vec<TraceEntry> {
        let mut out = Vec::with_capacity(self.entries.len());
        out.extend_from_slice(&self.entries[self.next.min(self.entries.len())..]);
        out.extend_from_slice(&self.entries[..self.next.min(self.entries.len())]);
        out
    }

    /// Forgets the trace (keeps the stacks of live blocks).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.next = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_std_backtrace_text() {
        let text = "   0: std::backtrace::Backtrace::create\n             at /rustc/x/library/std/src/backtrace.rs:331:13\n   1: c10_storage::history::CapturedStack::capture\n   2: my_crate::work\n             at ./src/lib.rs:10:5\n   3: main\n";
        let f = parse_backtrace(text);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].name, "my_crate::work");
        assert_eq!((f[0].filename.as_str(), f[0].line), ("./src/lib.rs", 10));
        assert_eq!((f[1].name.as_str(), f[1].line), ("main", 0));
    }

    #[test]
    fn ring_buffer_keeps_the_newest_in_order() {
        let mut r = HistoryRecorder::new(HistoryConfig {
            max_entries: 3,
            stacks: false,
            ..HistoryConfig::default()
        });
        for i in 0..7 {
            r.record(TraceAction::Alloc, i, 1, 0, None);
        }
        let addrs: Vec<u64> = r.entries().iter().map(|e| e.addr).collect();
        assert_eq!(addrs, [4, 5, 6]);
        r.reconfigure(HistoryConfig {
            max_entries: 2,
            stacks: false,
            ..HistoryConfig::default()
        });
        let addrs: Vec<u64> = r.entries().iter().map(|e| e.addr).collect();
        assert_eq!(addrs, [5, 6]);
        r.record(TraceAction::Alloc, 7, 1, 0, None);
        let addrs: Vec<u64> = r.entries().iter().map(|e| e.addr).collect();
        assert_eq!(addrs, [6, 7]);
    }

    #[test]
    fn state_mode_keeps_stacks_but_no_trace() {
        let mut r = HistoryRecorder::new(HistoryConfig {
            trace: false,
            ..HistoryConfig::default()
        });
        r.record_alloc(0x40, 8, 0);
        assert!(r.entries().is_empty());
        assert!(r.block_stack(0x40).is_some());
        r.record_free_completed(0x40, 8, 0);
        assert!(r.block_stack(0x40).is_none());
    }
}
