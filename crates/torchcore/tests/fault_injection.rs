//! Fault injection: a CPU allocator that fails the k-th allocation, for
//! every k along a long sequence of tensor operations (factories, reshape
//! copies, `contiguous`, `clone`, `resize_`, `copy_`, storage growth).
//!
//! For each k: the failure surfaces as an `Err` (never a panic) carrying
//! the allocator's out-of-memory message; every tensor made before the
//! failure still holds its values and stays usable; once everything is
//! dropped, a counting layer shows every allocation freed.
//!
//! The allocator registry is process-wide, so this file is its own test
//! binary with a single `#[test]`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicU64, Ordering};

use alloc_cpu::CpuAllocator;
use c10_storage::{set_allocator, AllocError, Allocator, DataPtr, DeviceType};
use torchcore::prelude::*;

/// The real allocator underneath, with statistics on (the counting layer).
static INNER: CpuAllocator = CpuAllocator::new();

/// Fails the `FAIL_AT`-th allocation (1-based; 0 = never), counts calls.
struct FailingAllocator;

static CALLS: AtomicU64 = AtomicU64::new(0);
static FAIL_AT: AtomicU64 = AtomicU64::new(0);
static FAULTS: AtomicU64 = AtomicU64::new(0);

const OOM: &str = "fault injection: allocation refused";

// SAFETY: every successful allocation is `INNER`'s, which upholds the
// contract; failures hand out nothing.
unsafe impl Allocator for FailingAllocator {
    fn allocate(&self, nbytes: usize) -> Result<DataPtr, AllocError> {
        let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        if n == FAIL_AT.load(Ordering::SeqCst) {
            FAULTS.fetch_add(1, Ordering::SeqCst);
            return Err(AllocError::OutOfMemory {
                nbytes,
                message: format!("{OOM} ({nbytes} bytes)"),
            });
        }
        INNER.allocate(nbytes)
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
        unsafe { INNER.copy_data(dst, src, count) }
    }
    fn zeroes_memory(&self) -> bool {
        INNER.zeroes_memory()
    }
}

static FAILING: FailingAllocator = FailingAllocator;

/// A tensor made by the sequence and the values it must hold.
type Survivors = Vec<(Tensor, Vec<f64>)>;

fn keep(s: &mut Survivors, t: Tensor) -> Result<(), TensorError> {
    let v = t.to_f64_vec()?;
    s.push((t, v));
    Ok(())
}

/// The operation sequence. Every tensor it makes is pushed, with its
/// values, onto `s` as soon as it exists; the first error ends it.
fn sequence(s: &mut Survivors) -> Result<(), TensorError> {
    let f = ScalarType::Float;
    keep(s, Tensor::empty(&[3, 4], f)?)?;
    keep(s, Tensor::zeros(&[2, 3, 4], ScalarType::Double)?)?;
    keep(s, Tensor::ones(&[5], ScalarType::Long)?)?;
    keep(s, Tensor::full(&[2, 2], 7.5, f)?)?;
    keep(s, Tensor::arange(0, 24, 1, ScalarType::Long)?)?;
    keep(s, Tensor::empty_strided(&[2, 3], &[1, 2], f)?)?;
    keep(
        s,
        Tensor::from_vec((0..12).map(|x| x as f32).collect(), &[3, 4])?,
    )?;
    keep(s, Tensor::scalar_tensor(3, ScalarType::Int)?)?;
    let a = Tensor::arange(0, 24, 1, f)?.view(&[2, 3, 4])?;
    keep(s, a.clone())?;
    // reshape of a non-viewable layout copies.
    let tr = a.transpose(0, 2)?;
    keep(s, tr.reshape(&[24])?)?;
    keep(s, tr.contiguous()?)?;
    keep(s, a.clone_in(MemoryFormat::Contiguous)?)?;
    keep(s, tr.clone_in(MemoryFormat::Preserve)?)?;
    keep(s, tr.empty_like(MemoryFormat::Preserve)?)?;
    keep(s, a.permute(&[2, 0, 1])?.flatten(0, -1)?)?;
    keep(s, a.unfold(2, 2, 1)?.contiguous()?)?;
    keep(
        s,
        Tensor::ones(&[1, 3, 2, 2], f)?.contiguous_in(MemoryFormat::ChannelsLast)?,
    )?;
    // copy_ with a dtype conversion and with an overlapping-ish source.
    let dst = Tensor::zeros(&[2, 3, 4], ScalarType::Double)?;
    dst.copy_(&a)?;
    keep(s, dst)?;
    let dst2 = Tensor::zeros(&[4, 3, 2], f)?;
    dst2.copy_(&tr)?;
    keep(s, dst2)?;
    // resize_: growth reallocates; a failed growth must leave the tensor
    // as it was.
    let mut r = Tensor::arange(0, 6, 1, f)?;
    let before = r.to_f64_vec()?;
    let grown = r.resize_(&[4, 8], MemoryFormat::Contiguous);
    if grown.is_err() {
        assert_eq!(r.sizes(), &[6], "failed resize_ changed the sizes");
        assert_eq!(r.to_f64_vec()?, before, "failed resize_ changed the values");
    }
    grown?;
    keep(s, r.narrow(0, 0, 1)?)?;
    keep(s, r)?;
    // A second growth of a shared storage: the view sees the new bytes.
    let base = Tensor::arange(0, 4, 1, ScalarType::Long)?;
    let view = base.view(&[2, 2])?;
    let mut grow = base.clone();
    grow.resize_(&[64], MemoryFormat::Contiguous)?;
    keep(s, view)?;
    keep(s, grow)?;
    // A set_ that has to grow the storage.
    let mut st = Tensor::empty(&[0], f)?;
    let storage = Tensor::arange(0, 4, 1, f)?.storage().clone();
    st.set_(&storage, 2, &[3, 3], &[3, 1])?;
    keep(s, st)?;
    // Many small factories in a row, then a large one.
    for n in 1..8 {
        keep(s, Tensor::full(&[n], n as f64, f)?)?;
    }
    keep(s, Tensor::zeros(&[256, 256], ScalarType::Byte)?)?;
    Ok(())
}

fn check_survivors(survivors: &Survivors, expected: &[Vec<f64>]) {
    assert!(survivors.len() <= expected.len());
    for (i, ((t, vals), want)) in survivors.iter().zip(expected).enumerate() {
        assert_eq!(vals, want, "survivor {i} was made with other values");
        // Still readable, still holding its values, still usable.
        assert_eq!(
            &t.to_f64_vec().expect("readable"),
            want,
            "survivor {i} changed"
        );
        // A copy (survivors may alias each other, so no writes through `t`).
        let c = t.clone_in(MemoryFormat::Contiguous).expect("usable");
        assert_eq!(&c.to_f64_vec().expect("readable"), want);
        if t.numel() > 0 {
            let flat = c.reshape(&[-1]).expect("reshape");
            flat.fill_(1.0).expect("writable");
        }
    }
}

#[test]
fn every_allocation_failure_is_an_error_and_nothing_leaks() {
    INNER.set_track_stats(true);
    assert!(set_allocator(DeviceType::Cpu, &FAILING, u8::MAX).unwrap());
    let stats = || INNER.stats().expect("statistics are on");

    // The fault-free run: how many allocations, and what each tensor holds.
    let base = stats();
    CALLS.store(0, Ordering::SeqCst);
    let mut clean = Survivors::new();
    sequence(&mut clean).expect("fault-free run");
    let total = CALLS.load(Ordering::SeqCst);
    let expected: Vec<Vec<f64>> = clean.iter().map(|(_, v)| v.clone()).collect();
    drop(clean);
    let after = stats();
    assert_eq!(
        after.current_bytes, base.current_bytes,
        "fault-free run leaked"
    );
    assert!(total >= 30, "sequence too short: {total} allocations");

    for k in 1..=total {
        CALLS.store(0, Ordering::SeqCst);
        FAIL_AT.store(k, Ordering::SeqCst);
        let mut survivors = Survivors::new();
        let result =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sequence(&mut survivors)));
        FAIL_AT.store(0, Ordering::SeqCst);
        let result = result.unwrap_or_else(|_| panic!("allocation {k} of {total}: panicked"));
        let err = result.expect_err("an injected failure must surface as an error");
        assert!(
            err.to_string().contains(OOM),
            "allocation {k}: error without the allocator's message: {err}"
        );
        check_survivors(&survivors, &expected);
        drop(survivors);
        let now = stats();
        assert_eq!(
            now.current_bytes, base.current_bytes,
            "allocation {k}: bytes leaked"
        );
        assert_eq!(
            now.allocations - base.allocations,
            now.frees - base.frees,
            "allocation {k}: allocations leaked"
        );
    }
    assert_eq!(FAULTS.load(Ordering::SeqCst), total);
    eprintln!("fault injection: {total} allocation sites, {total} faults injected, 0 leaks");
}
