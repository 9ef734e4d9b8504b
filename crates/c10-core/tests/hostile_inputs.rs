//! Hostile inputs (issue #20): a public call on a tiny storage viewed as an
//! astronomically large tensor must neither abort the process (a result
//! sized by the logical size is reserved fallibly and refused with an
//! out-of-memory error) nor do work proportional to the logical size when
//! the memory it touches is small (`fill_` writes each distinct location).
//!
//! An abort cannot be caught in-process, so the reader cases run in a child
//! process (this test binary, re-invoked with `--exact` and an env var) and
//! the parent checks its exit status. A hang would stall CI, so the write
//! cases run on a spawned thread under a generous watchdog.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use c10_core::{ScalarType, Tensor, TensorError};
use c10_storage::testing::hostile::{in_child_process, with_watchdog};
use c10_storage::{AllocError, StorageError};

/// `arange(1)` seen as `[2^30, 2^30]` through stride 0: 2^60 elements over
/// one 4-byte storage.
fn huge_broadcast(dtype: ScalarType) -> Tensor {
    Tensor::arange(0, 1, 1, dtype)
        .unwrap()
        .as_strided(&[1 << 30, 1 << 30], &[0, 0], None)
        .unwrap()
}

/// The error must be an out-of-memory error naming the byte count.
fn assert_oom(e: TensorError, nbytes: u128) {
    let msg = e.to_string();
    assert!(
        matches!(
            e,
            TensorError::Storage(StorageError::Alloc(AllocError::OutOfMemory { .. }))
        ),
        "{e:?}"
    );
    assert!(
        msg.contains(&format!("you tried to allocate {nbytes} bytes")),
        "{msg}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "spawns a child process")]
fn to_vec_of_a_huge_broadcast_is_an_oom_error() {
    in_child_process("to_vec_of_a_huge_broadcast_is_an_oom_error", || {
        let t = huge_broadcast(ScalarType::Float);
        assert_oom(t.to_vec::<f32>().unwrap_err(), 4 << 60);
        let l = huge_broadcast(ScalarType::Long);
        assert_oom(l.to_vec::<i64>().unwrap_err(), 8 << 60);
    });
}

#[test]
#[cfg_attr(miri, ignore = "spawns a child process")]
fn to_f64_vec_of_a_huge_broadcast_is_an_oom_error() {
    in_child_process("to_f64_vec_of_a_huge_broadcast_is_an_oom_error", || {
        let t = huge_broadcast(ScalarType::Float);
        assert_oom(t.to_f64_vec().unwrap_err(), 8 << 60);
        // Beyond the address space: 2^63 - 1 elements of 8 bytes.
        let b = Tensor::arange(0, 1, 1, ScalarType::Byte)
            .unwrap()
            .as_strided(&[i64::MAX], &[0], None)
            .unwrap();
        assert_oom(b.to_f64_vec().unwrap_err(), (i64::MAX as u128) * 8);
        assert_oom(b.to_vec::<u8>().unwrap_err(), i64::MAX as u128);
    });
}

#[test]
#[cfg_attr(miri, ignore = "spawns a child process")]
fn printing_a_huge_unsummarized_broadcast_is_an_error() {
    // Printing summarizes only dims longer than 6, so 60 dims of 2 print
    // every one of their 2^60 elements.
    in_child_process("printing_a_huge_unsummarized_broadcast_is_an_error", || {
        let t = Tensor::arange(0, 1, 1, ScalarType::Float)
            .unwrap()
            .as_strided(&[2; 60], &[0; 60], None)
            .unwrap();
        let shown = format!("{t}");
        assert!(shown.contains("can't allocate memory"), "{shown}");
    });
}

#[test]
fn to_vec_of_small_views_is_unchanged() {
    let t = Tensor::arange(0, 6, 1, ScalarType::Long)
        .unwrap()
        .as_strided(&[3, 2], &[1, 3], None)
        .unwrap();
    assert_eq!(t.to_vec::<i64>().unwrap(), vec![0, 3, 1, 4, 2, 5]);
    assert_eq!(t.to_f64_vec().unwrap(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    let e = Tensor::zeros(&[0, 4], ScalarType::Float).unwrap();
    assert!(e.to_vec::<f32>().unwrap().is_empty());
}

#[test]
fn fill_of_a_huge_broadcast_touches_only_the_storage() {
    let t = huge_broadcast(ScalarType::Float);
    let base = with_watchdog("fill_ of a [2^30, 2^30] stride-0 view", move || {
        t.fill_(2.0).unwrap();
        t
    });
    assert_eq!(base.get::<f32>(&[12345, 1 << 29]).unwrap(), 2.0);
    assert_eq!(base.version().unwrap(), 1);
}

#[test]
fn fill_through_views_of_views_touches_only_the_storage() {
    // A [4, 3] base; a column broadcast to [2^29, 4, 2^29]; its transpose;
    // then an offset slice of it: every layer keeps the stride-0 dims.
    let base = Tensor::zeros(&[4, 3], ScalarType::Long).unwrap();
    let col = base
        .as_strided(&[1 << 29, 4, 1 << 29], &[0, 3, 0], Some(1))
        .unwrap();
    let twisted = col
        .as_strided(&[1 << 29, 1 << 29, 4], &[0, 0, 3], Some(1))
        .unwrap();
    let b = base.clone();
    with_watchdog("fill_ through views of stride-0 views", move || {
        twisted.fill_(7i64).unwrap();
    });
    assert_eq!(
        b.to_vec::<i64>().unwrap(),
        vec![0, 7, 0, 0, 7, 0, 0, 7, 0, 0, 7, 0]
    );
    // Negative values, bool and a zero fill take the same path.
    let flags = Tensor::zeros(&[5], ScalarType::Bool).unwrap();
    let wide = flags.as_strided(&[1 << 40, 5], &[0, 1], None).unwrap();
    let f = flags.clone();
    with_watchdog("fill_ of a bool stride-0 view", move || {
        wide.fill_(true).unwrap();
        wide.fill_(false).unwrap();
        wide.fill_(1).unwrap();
    });
    assert_eq!(f.to_vec::<bool>().unwrap(), vec![true; 5]);
}

#[test]
fn fill_of_ordinary_layouts_is_unchanged() {
    // Transposed, offset, sliced with a step: every element written once.
    let base = Tensor::zeros(&[24], ScalarType::Int).unwrap();
    let v = base.as_strided(&[3, 2, 2], &[2, 12, 1], Some(1)).unwrap();
    v.fill_(5).unwrap();
    let got = base.to_vec::<i32>().unwrap();
    let mut want = vec![0; 24];
    for i in 0..3 {
        for j in 0..2 {
            for k in 0..2 {
                want[1 + 2 * i + 12 * j + k] = 5;
            }
        }
    }
    assert_eq!(got, want);
    // Overlapping without stride 0 (each location reached several times).
    let o = base.as_strided(&[4, 4], &[1, 1], None).unwrap();
    o.fill_(9).unwrap();
    assert_eq!(
        &base.to_vec::<i32>().unwrap()[..8],
        &[9, 9, 9, 9, 9, 9, 9, 0]
    );
    // Empty and 0-dim tensors.
    base.as_strided(&[0, 1 << 40], &[0, 0], None)
        .unwrap()
        .fill_(1)
        .unwrap();
    base.as_strided(&[], &[], Some(23))
        .unwrap()
        .fill_(3)
        .unwrap();
    assert_eq!(base.get::<i32>(&[23]).unwrap(), 3);
}

#[test]
fn nbytes_of_a_huge_broadcast_saturates() {
    let t = Tensor::arange(0, 1, 1, ScalarType::Long)
        .unwrap()
        .as_strided(&[i64::MAX], &[0], None)
        .unwrap();
    assert_eq!(t.nbytes(), usize::MAX);
    assert_eq!(huge_broadcast(ScalarType::Float).nbytes(), 4 << 60);
}
