//! The allocator conformance kit: a battery of checks any [`Allocator`]
//! implementation can run in its own tests (feature `testing`).
//!
//! ```
//! # #[cfg(feature = "testing")] {
//! use c10_storage::testing::{check_allocator, KitOptions};
//! # use c10_storage::{Allocator, AllocError, DataPtr, DeviceType};
//! # struct VecAlloc;
//! # // SAFETY: returns zeroed, exclusively owned heap bytes.
//! # unsafe impl Allocator for VecAlloc {
//! #     fn allocate(&self, n: usize) -> Result<DataPtr, AllocError> {
//! #         Ok(DataPtr::from_owner(vec![0u64; n.div_ceil(8)].into_iter().flat_map(u64::to_ne_bytes).collect::<Vec<u8>>()))
//! #     }
//! #     fn device_type(&self) -> DeviceType { DeviceType::Cpu }
//! #     unsafe fn copy_data(&self, d: *mut u8, s: *const u8, n: usize) -> Result<(), c10_storage::AllocError> {
//! #         // SAFETY: forwarded contract.
//! #         unsafe { c10_storage::default_copy_data(d, s, n) }
//! #     }
//! # }
//! let report = check_allocator(&VecAlloc, &KitOptions { alignment: 1, ..KitOptions::default() });
//! report.assert_ok();
//! # }
//! ```
//!
//! The checks only touch memory through raw pointers, so a broken
//! allocator (misaligned, overlapping, mislabelled, with lying statistics)
//! is reported as a failure rather than causing undefined behaviour in the
//! kit itself (the multi-threaded check is skipped once `no_overlap` has
//! failed, since concurrent writes into shared bytes would race); an allocator that hands out too few bytes cannot be detected
//! safely and remains the implementor's responsibility.

#![allow(
    clippy::panic,
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test kit: failing a check by panicking is its documented contract"
)]

use std::ffi::c_void;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::{Allocator, DataPtr, DeleterFn, Storage};

/// What the kit checks and how hard.
#[derive(Debug, Clone)]
pub struct KitOptions {
    /// The alignment every non-empty allocation must have.
    pub alignment: usize,
    /// Threads in the concurrency check.
    pub threads: usize,
    /// Allocations per thread in the concurrency check.
    pub iterations: usize,
    /// Largest allocation the kit makes.
    pub max_size: usize,
    /// Whether nobody else allocates from this allocator while the kit runs,
    /// so that statistics must change by exactly what the kit did. Set it to
    /// `false` for a shared (registered) allocator.
    pub exclusive_stats: bool,
}

impl Default for KitOptions {
    fn default() -> Self {
        KitOptions {
            alignment: 64,
            threads: if cfg!(miri) { 2 } else { 8 },
            iterations: if cfg!(miri) { 4 } else { 200 },
            max_size: if cfg!(miri) { 4096 } else { 1 << 20 },
            exclusive_stats: true,
        }
    }
}

/// One failed check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KitFailure {
    /// The check's name (see [`CHECKS`]).
    pub check: &'static str,
    /// What went wrong, with the values involved.
    pub message: String,
}

/// Names of the checks, in the order they run.
pub const CHECKS: [&str; 10] = [
    "device_type",
    "zero_size",
    "alignment",
    "read_write",
    "no_overlap",
    "deleter_runs_once",
    "threads",
    "copy_data",
    "raw_api",
    "stats",
];

/// The outcome of [`check_allocator`].
#[derive(Debug, Clone, Default)]
pub struct KitReport {
    /// The allocator's name.
    pub allocator: String,
    /// Checks that ran and passed.
    pub passed: Vec<&'static str>,
    /// Checks that were not applicable (for example host access on a
    /// device allocator, or statistics on an allocator without them).
    pub skipped: Vec<&'static str>,
    /// Failures.
    pub failures: Vec<KitFailure>,
}

impl KitReport {
    /// Whether every check passed or was skipped.
    pub fn is_ok(&self) -> bool {
        self.failures.is_empty()
    }

    /// Whether `check` failed.
    pub fn failed(&self, check: &str) -> bool {
        self.failures.iter().any(|f| f.check == check)
    }

    /// Panics with every failure listed, for use in tests.
    #[track_caller]
    pub fn assert_ok(&self) {
        if !self.is_ok() {
            panic!("{self}"); // proof: test-kit assertion, panicking is its documented contract
        }
    }
}

impl fmt::Display for KitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "allocator conformance kit for {}: {} passed, {} failed, {} skipped",
            self.allocator,
            self.passed.len(),
            self.failures.len(),
            self.skipped.len()
        )?;
        for fail in &self.failures {
            writeln!(f, "  FAILED {}: {}", fail.check, fail.message)?;
        }
        Ok(())
    }
}

type CheckResult = Result<bool, String>; // Ok(true) passed, Ok(false) skipped

/// Runs every check in [`CHECKS`] against `alloc`.
pub fn check_allocator(alloc: &dyn Allocator, opts: &KitOptions) -> KitReport {
    let mut report = KitReport {
        allocator: alloc.name().to_owned(),
        ..KitReport::default()
    };
    let checks: [(&'static str, &dyn Fn() -> CheckResult); 10] = [
        ("device_type", &|| device_type(alloc)),
        ("zero_size", &|| zero_size(alloc)),
        ("alignment", &|| alignment(alloc, opts)),
        ("read_write", &|| read_write(alloc, opts)),
        ("no_overlap", &|| no_overlap(alloc, opts)),
        ("deleter_runs_once", &|| deleter_runs_once(alloc)),
        ("threads", &|| threads(alloc, opts)),
        ("copy_data", &|| copy_data(alloc, opts)),
        ("raw_api", &|| raw_api(alloc)),
        ("stats", &|| stats(alloc, opts)),
    ];
    for (name, check) in checks {
        // Writing from several threads into blocks that overlap is a data
        // race, so once the allocator is known to hand out overlapping
        // blocks the concurrency check would itself be undefined behaviour.
        if name == "threads" && report.failed("no_overlap") {
            report.skipped.push(name);
            continue;
        }
        match check() {
            Ok(true) => report.passed.push(name),
            Ok(false) => report.skipped.push(name),
            Err(message) => report.failures.push(KitFailure {
                check: name,
                message,
            }),
        }
    }
    report
}

fn host(alloc: &dyn Allocator) -> bool {
    alloc.device_type().is_host_accessible()
}

fn sizes(opts: &KitOptions) -> Vec<usize> {
    let mut v = vec![
        1, 2, 3, 7, 8, 15, 16, 17, 63, 64, 65, 100, 255, 256, 1000, 4095, 4096, 4097,
    ];
    let mut s = 8192;
    while s <= opts.max_size {
        v.push(s);
        v.push(s + 1);
        s *= 4;
    }
    v.retain(|&s| s <= opts.max_size);
    v
}

fn alloc_checked(alloc: &dyn Allocator, n: usize) -> Result<DataPtr, String> {
    let p = alloc
        .allocate(n)
        .map_err(|e| format!("allocate({n}) failed: {e}"))?;
    if n > 0 && p.is_null() {
        return Err(format!("allocate({n}) returned a null pointer"));
    }
    Ok(p)
}

/// Fills `n` bytes at `p` with a pattern derived from `seed`.
///
/// # Safety
///
/// `p` must be valid for writes of `n` bytes.
unsafe fn fill(p: *mut u8, n: usize, seed: u8) {
    for i in 0..n {
        // SAFETY: in bounds by the caller's contract.
        unsafe {
            p.add(i)
                .write_volatile(seed.wrapping_add(i as u8).wrapping_mul(31))
        };
    }
}

/// The first index where the pattern from `fill(_, n, seed)` differs.
///
/// # Safety
///
/// `p` must be valid for reads of `n` bytes.
unsafe fn verify(p: *const u8, n: usize, seed: u8) -> Option<usize> {
    // SAFETY: in bounds by the caller's contract.
    (0..n).find(
        |&i| unsafe { p.add(i).read_volatile() } != seed.wrapping_add(i as u8).wrapping_mul(31),
    )
}

fn device_type(alloc: &dyn Allocator) -> CheckResult {
    let p = alloc_checked(alloc, 16)?;
    if p.device().device_type() != alloc.device_type() {
        return Err(format!(
            "allocation is on {} but the allocator says its device type is {}",
            p.device(),
            alloc.device_type()
        ));
    }
    Ok(true)
}

fn zero_size(alloc: &dyn Allocator) -> CheckResult {
    for _ in 0..3 {
        let p = alloc_checked(alloc, 0)?;
        drop(p);
    }
    Ok(true)
}

fn alignment(alloc: &dyn Allocator, opts: &KitOptions) -> CheckResult {
    for n in sizes(opts) {
        let p = alloc_checked(alloc, n)?;
        let addr = p.get() as usize;
        if opts.alignment > 1 && !addr.is_multiple_of(opts.alignment) {
            return Err(format!(
                "allocate({n}) returned {addr:#x}, not aligned to {} bytes",
                opts.alignment
            ));
        }
    }
    Ok(true)
}

fn read_write(alloc: &dyn Allocator, opts: &KitOptions) -> CheckResult {
    if !host(alloc) {
        return Ok(false);
    }
    for (k, n) in sizes(opts).into_iter().enumerate() {
        let p = alloc_checked(alloc, n)?;
        // SAFETY: the Allocator contract: `n` writable host bytes.
        unsafe { fill(p.get(), n, k as u8) };
        // SAFETY: as above.
        if let Some(i) = unsafe { verify(p.get(), n, k as u8) } {
            return Err(format!(
                "allocate({n}): byte {i} did not keep the value written to it"
            ));
        }
    }
    Ok(true)
}

fn no_overlap(alloc: &dyn Allocator, opts: &KitOptions) -> CheckResult {
    let ns: Vec<usize> = sizes(opts).into_iter().take(24).collect();
    let mut live = Vec::new();
    for &n in &ns {
        live.push((alloc_checked(alloc, n)?, n));
    }
    let mut ranges: Vec<(usize, usize)> = live
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(p, n)| (p.get() as usize, p.get() as usize + n))
        .collect();
    ranges.sort_unstable();
    for w in ranges.windows(2) {
        if w[0].1 > w[1].0 {
            return Err(format!(
                "live allocations overlap: [{:#x}, {:#x}) and [{:#x}, {:#x})",
                w[0].0, w[0].1, w[1].0, w[1].1
            ));
        }
    }
    if host(alloc) {
        for (k, (p, n)) in live.iter().enumerate() {
            // SAFETY: the Allocator contract: `n` writable host bytes.
            unsafe { fill(p.get(), *n, k as u8) };
        }
        for (k, (p, n)) in live.iter().enumerate() {
            // SAFETY: as above.
            if let Some(i) = unsafe { verify(p.get(), *n, k as u8) } {
                return Err(format!(
                    "writing one allocation changed byte {i} of another (size {n})"
                ));
            }
        }
    }
    Ok(true)
}

struct Counted {
    ctx: *mut c_void,
    deleter: DeleterFn,
    runs: Arc<AtomicUsize>,
}

/// # Safety
///
/// `ctx` must be a `Box<Counted>` from [`deleter_runs_once`].
unsafe fn counted_deleter(ctx: *mut c_void) {
    // SAFETY: guaranteed by the caller.
    let c = unsafe { Box::from_raw(ctx.cast::<Counted>()) };
    c.runs.fetch_add(1, Ordering::SeqCst);
    if !c.ctx.is_null() {
        // SAFETY: the original pair, run once (this box is consumed).
        unsafe { (c.deleter)(c.ctx) };
    }
}

fn deleter_runs_once(alloc: &dyn Allocator) -> CheckResult {
    let runs = Arc::new(AtomicUsize::new(0));
    let n = 256;
    let original = alloc_checked(alloc, n)?;
    let (data, ctx, deleter, device) = original.into_raw_parts();
    let boxed = Box::into_raw(Box::new(Counted {
        ctx,
        deleter,
        runs: runs.clone(),
    }));
    // SAFETY: `counted_deleter` frees the box once and runs the allocator's
    // deleter once on its own context, which the box now owns.
    let wrapped = unsafe { DataPtr::from_raw_parts(data, boxed.cast(), counted_deleter, device) };
    // SAFETY: the Allocator contract makes `data` valid for `n` bytes until
    // the deleter runs, which now happens when the storage goes.
    let storage =
        unsafe { Storage::from_data_ptr(wrapped, n, None, false) }.map_err(|e| e.to_string())?;
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let s = storage.clone();
            std::thread::spawn(move || {
                let c = s.clone();
                drop(s);
                c.use_count()
            })
        })
        .collect();
    for h in handles {
        h.join()
            .map_err(|_| "a thread holding a storage handle panicked".to_owned())?;
    }
    if runs.load(Ordering::SeqCst) != 0 {
        return Err("deleter ran while a storage handle was still alive".into());
    }
    drop(storage);
    match runs.load(Ordering::SeqCst) {
        1 => Ok(true),
        k => Err(format!(
            "deleter ran {k} times after the last handle was dropped"
        )),
    }
}

fn threads(alloc: &dyn Allocator, opts: &KitOptions) -> CheckResult {
    let check_bytes = host(alloc);
    let max = opts.max_size.clamp(1, 1 << 16);
    let errors: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..opts.threads)
            .map(|t| {
                scope.spawn(move || -> Result<(), String> {
                    let mut held: Vec<(DataPtr, usize)> = Vec::new();
                    let mut x = (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    for i in 0..opts.iterations {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let n = (x as usize % max) + 1;
                        let p = alloc_checked(alloc, n)?;
                        if check_bytes {
                            // SAFETY: the Allocator contract: `n` writable bytes.
                            unsafe { fill(p.get(), n, t as u8) };
                        }
                        held.push((p, n));
                        if i % 3 == 2 {
                            held.swap_remove(x as usize % held.len());
                        }
                        std::thread::yield_now();
                    }
                    if check_bytes {
                        for (p, n) in &held {
                            // SAFETY: as above.
                            if let Some(b) = unsafe { verify(p.get(), *n, t as u8) } {
                                return Err(format!(
                                    "thread {t}: byte {b} of a live {n}-byte block was changed by another thread"
                                ));
                            }
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| match h.join() {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e),
                Err(_) => Some("a worker thread panicked".to_owned()),
            })
            .collect()
    });
    match errors.first() {
        None => Ok(true),
        Some(e) => Err(e.clone()),
    }
}

fn copy_data(alloc: &dyn Allocator, opts: &KitOptions) -> CheckResult {
    if !host(alloc) {
        return Ok(false);
    }
    let n = opts.max_size.min(4096);
    let src = alloc_checked(alloc, n)?;
    let dst = alloc_checked(alloc, n)?;
    // SAFETY: the Allocator contract: `n` writable bytes each, no overlap.
    unsafe {
        fill(src.get(), n, 9);
        alloc
            .copy_data(dst.get(), src.get(), n)
            .map_err(|e| format!("copy_data of {n} bytes: {e}"))?;
    }
    // SAFETY: as above.
    if let Some(i) = unsafe { verify(dst.get(), n, 9) } {
        return Err(format!("copy_data of {n} bytes: byte {i} differs"));
    }
    // SAFETY: `src` is valid for `n` reads.
    let cloned = unsafe { alloc.clone_data(src.get(), n) }.map_err(|e| e.to_string())?;
    // SAFETY: `cloned` holds `n` bytes.
    if let Some(i) = unsafe { verify(cloned.get(), n, 9) } {
        return Err(format!("clone_data of {n} bytes: byte {i} differs"));
    }
    Ok(true)
}

fn raw_api(alloc: &dyn Allocator) -> CheckResult {
    if alloc.raw_deleter().is_none() {
        return Ok(false);
    }
    let p = alloc
        .raw_allocate(128)
        .map_err(|e| format!("raw_allocate(128): {e}"))?;
    if host(alloc) {
        // SAFETY: 128 bytes from the allocator.
        unsafe { fill(p, 128, 3) };
        // SAFETY: as above.
        if unsafe { verify(p, 128, 3) }.is_some() {
            return Err("raw_allocate(128): memory did not keep its contents".into());
        }
    }
    // SAFETY: `p` came from raw_allocate on this allocator.
    unsafe { alloc.raw_deallocate(p) }.map_err(|e| format!("raw_deallocate: {e}"))?;
    Ok(true)
}

fn stats(alloc: &dyn Allocator, opts: &KitOptions) -> CheckResult {
    let Some(before) = alloc.stats() else {
        return Ok(false);
    };
    let consistent = |s: &crate::AllocatorStats, when: &str| -> Result<(), String> {
        if s.peak_bytes < s.current_bytes {
            return Err(format!(
                "{when}: peak_bytes {} < current_bytes {}",
                s.peak_bytes, s.current_bytes
            ));
        }
        if s.allocated_bytes < s.freed_bytes || s.allocations < s.frees {
            return Err(format!("{when}: more freed than allocated: {s:?}"));
        }
        if opts.exclusive_stats && s.allocated_bytes - s.freed_bytes != s.current_bytes {
            return Err(format!("{when}: allocated - freed != current: {s:?}"));
        }
        Ok(())
    };
    consistent(&before, "before")?;
    let ns: Vec<usize> = sizes(opts).into_iter().take(12).collect();
    let total: u64 = ns.iter().map(|&n| n as u64).sum();
    let live: Vec<DataPtr> = ns
        .iter()
        .map(|&n| alloc_checked(alloc, n))
        .collect::<Result<_, _>>()?;
    let during = alloc
        .stats()
        .ok_or("stats() stopped returning statistics")?;
    consistent(&during, "while allocated")?;
    if opts.exclusive_stats {
        let grew = during.current_bytes.wrapping_sub(before.current_bytes);
        if grew != total {
            return Err(format!(
                "allocating {total} bytes in {} blocks changed current_bytes by {grew}",
                ns.len()
            ));
        }
        let count = during.allocations - before.allocations;
        if count != ns.len() as u64 {
            return Err(format!("{} allocations were counted as {count}", ns.len()));
        }
        if during.peak_bytes < during.current_bytes {
            return Err("peak below current".into());
        }
    }
    drop(live);
    let after = alloc
        .stats()
        .ok_or("stats() stopped returning statistics")?;
    consistent(&after, "after freeing")?;
    if opts.exclusive_stats {
        if after.current_bytes != before.current_bytes {
            return Err(format!(
                "after freeing everything, current_bytes is {} (was {} before): a deleter did not run or was not counted",
                after.current_bytes, before.current_bytes
            ));
        }
        if after.frees - before.frees != ns.len() as u64 {
            return Err(format!(
                "{} frees were counted as {}",
                ns.len(),
                after.frees - before.frees
            ));
        }
        alloc.reset_peak_stats();
        let reset = alloc
            .stats()
            .ok_or("stats() stopped returning statistics")?;
        if reset.peak_bytes != reset.current_bytes {
            return Err(format!(
                "after reset_peak_stats, peak_bytes {} != current_bytes {}",
                reset.peak_bytes, reset.current_bytes
            ));
        }
    }
    Ok(true)
}

/// Harnesses for hostile-input tests (issue #20), shared by every crate's
/// tests: a case that could abort the process runs in a child process, and
/// one that could hang runs under a watchdog, so that either fails its test
/// instead of killing or stalling the test run.
pub mod hostile {
    use std::process::Command;
    use std::sync::mpsc;
    use std::time::Duration;

    /// The environment variable that tells a re-invoked test binary which
    /// test is its child case.
    pub const CHILD_ENV: &str = "C10_HOSTILE_CHILD";

    /// How long [`with_watchdog`] waits: generous, because it only exists to
    /// turn a hang into a failure (no timing is asserted).
    pub const WATCHDOG: Duration = Duration::from_secs(60);

    /// Runs `body` in a child process: when this process is the child for
    /// `test_name` (the test's full path, as `--exact` wants it), runs it
    /// here; otherwise re-runs this test binary with `--exact test_name`
    /// and [`CHILD_ENV`] set, and panics (failing the test) unless the child
    /// exited successfully having run exactly that test. An abort (SIGABRT
    /// from a failed allocation) shows in the panic as the child's signal.
    pub fn in_child_process(test_name: &str, body: impl FnOnce()) {
        if std::env::var(CHILD_ENV).as_deref() == Ok(test_name) {
            body();
            return;
        }
        let exe = std::env::current_exe().expect("the test binary's path"); // proof: test harness, failing is its contract
        let out = Command::new(exe)
            .args([test_name, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, test_name)
            .output()
            .expect("re-running the test binary"); // proof: test harness, failing is its contract
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "child process for {test_name} failed with {:?}\nstdout:\n{stdout}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        // Otherwise a misspelt name would pass by running nothing.
        assert!(
            stdout.contains("1 passed"),
            "the child did not run {test_name}:\n{stdout}"
        );
    }

    /// Runs `f` on a spawned thread and returns its result, or panics
    /// (failing the test) if it has not finished within [`WATCHDOG`] or
    /// panicked. A hung thread is left behind; the test binary exits
    /// anyway.
    pub fn with_watchdog<T: Send + 'static>(
        what: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        match rx.recv_timeout(WATCHDOG) {
            Ok(v) => v,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("{what} did not finish within {} s", WATCHDOG.as_secs()) // proof: test harness, failing is its contract
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"), // proof: test harness, failing is its contract
        }
    }
}
