//! Hostile inputs (issue #20) through the real view ops: the issue's
//! `arange(1).view([1,1]).expand([2^30, 2^30])` must not abort a reader,
//! `fill_` through views of such views must touch only the storage, and
//! the copy thread count is capped at the machine's cores (a setting of
//! `usize::MAX` once spawned one thread per four rows of a copy).
//!
//! Abort cases run in a child process (this binary re-invoked with
//! `--exact`); cases that used to hang run under a 60 s watchdog.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use aten_shape::copy::{copy_, copy_threads, set_copy_threads};
use aten_shape::prelude::*;
use c10_core::{ScalarType, TensorOptions};
use c10_storage::testing::hostile::{in_child_process, with_watchdog};

fn arange(n: i64, dtype: ScalarType) -> Tensor {
    Tensor::arange(0, n, 1, TensorOptions::new().dtype(dtype)).unwrap()
}

/// The issue's tensor: one element expanded to `[2^30, 2^30]`.
fn issue_view() -> Tensor {
    arange(1, ScalarType::Float)
        .view(&[1, 1])
        .unwrap()
        .expand(&[1 << 30, 1 << 30])
        .unwrap()
}

#[test]
#[cfg_attr(miri, ignore = "spawns a child process")]
fn readers_of_the_issue_view_return_oom_errors() {
    in_child_process("readers_of_the_issue_view_return_oom_errors", || {
        let t = issue_view();
        for e in [
            t.to_vec::<f32>().unwrap_err(),
            t.to_f64_vec().unwrap_err(),
            t.clone_in(MemoryFormat::Contiguous).unwrap_err(),
        ] {
            let msg = e.to_string();
            assert!(msg.contains("can't allocate memory"), "{msg}");
        }
        assert!(t
            .to_vec::<f32>()
            .unwrap_err()
            .to_string()
            .contains("you tried to allocate 4611686018427387904 bytes"));
    });
}

#[test]
fn fill_through_views_of_views_touches_only_the_storage() {
    let base = arange(6, ScalarType::Long);
    // A row of the base, broadcast, transposed, narrowed, unsqueezed and
    // expanded again: 2^30 * 2^29 * 2 elements, 2 locations.
    let v = base
        .view(&[2, 3])
        .unwrap()
        .select(1, 1)
        .unwrap()
        .unsqueeze(0)
        .unwrap()
        .expand(&[1 << 30, 2])
        .unwrap()
        .t()
        .unwrap()
        .narrow(1, 5, 1 << 29)
        .unwrap()
        .unsqueeze(2)
        .unwrap()
        .expand(&[2, 1 << 29, 1 << 30])
        .unwrap();
    let b = base.clone();
    with_watchdog("fill_ through views of stride-0 views", move || {
        v.fill_(-7i64).unwrap();
    });
    assert_eq!(b.to_vec::<i64>().unwrap(), vec![0, -7, 2, 3, -7, 5]);
    let t = issue_view();
    let again = t.clone();
    with_watchdog("fill_ of the issue's view", move || t.fill_(2.0).unwrap());
    assert_eq!(again.get::<f32>(&[1 << 29, 7]).unwrap(), 2.0);
}

#[test]
fn copy_into_an_overlapping_destination_is_refused_like_pytorch() {
    // PyTorch refuses copy_ into an expanded (internally overlapping)
    // destination before any work, whatever its logical size.
    let dst = issue_view();
    let src = arange(1, ScalarType::Float).view(&[]).unwrap();
    let e = with_watchdog("copy_ into an overlapping destination", move || {
        copy_(&dst, &src).unwrap_err()
    });
    assert!(e.to_string().starts_with("unsupported operation"), "{e}");
}

#[test]
#[cfg_attr(miri, ignore = "a 16 MiB threaded copy")]
fn copy_threads_are_capped_at_the_cores() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    set_copy_threads(usize::MAX);
    // 4096 rows of 1024 f32 (16 MiB): uncapped, one thread per 4 rows.
    let m = arange(4096 * 1024, ScalarType::Float)
        .view(&[4096, 1024])
        .unwrap();
    let t = with_watchdog("a 16 MiB copy with usize::MAX threads", move || {
        m.t().unwrap().contiguous().unwrap()
    });
    assert_eq!(
        t.get::<f32>(&[1023, 4095]).unwrap(),
        (4095 * 1024 + 1023) as f32
    );
    assert_eq!(
        copy_threads(),
        cores,
        "set_copy_threads(usize::MAX) is capped"
    );
    set_copy_threads(cores + 1);
    assert_eq!(copy_threads(), cores);
    set_copy_threads(1);
    assert_eq!(copy_threads(), 1);
    set_copy_threads(0);
    assert_eq!(copy_threads(), cores);
}

/// A refused in-place write changes nothing, the version counter included
/// (issue #25, item 9, as a class): every element or bulk write whose
/// arguments are checked and rejected leaves the version where it was.
#[test]
fn refused_writes_bump_no_version() {
    use aten_shape::indexing::{index_put_scalar, index_put_tensor, TensorIndex};
    let t = arange(6, ScalarType::Long).view(&[2, 3]).unwrap();
    let row = t.select(0, 1).unwrap();
    let v0 = t.version().unwrap();
    let refused: Vec<(&str, c10_core::Result<()>)> = vec![
        ("set out of range", t.set(&[2, 0], 1i64)),
        ("set negative out of range", t.set(&[0, -4], 1i64)),
        ("set wrong rank", t.set(&[0], 1i64)),
        ("set wrong type", t.set(&[0, 0], 1.0f32)),
        ("set through a view", row.set(&[3], 1i64)),
        ("fill_ overflow", t.fill_(1e300f64)),
        ("fill_ overflow through a view", row.fill_(f64::INFINITY)),
        (
            "copy_ shape mismatch",
            copy_(&t, &arange(4, ScalarType::Long)),
        ),
        (
            "index_put out of range",
            index_put_scalar(&t, &[TensorIndex::Int(5)], 1i64),
        ),
        (
            "index_put tensor of the wrong shape",
            index_put_tensor(&t, &[TensorIndex::Int(0)], &arange(4, ScalarType::Long)),
        ),
    ];
    for (what, r) in refused {
        assert!(r.is_err(), "{what} was accepted");
        assert_eq!(t.version().unwrap(), v0, "{what} bumped the version");
    }
    assert_eq!(t.to_vec::<i64>().unwrap(), [0, 1, 2, 3, 4, 5]);
    // A write that is accepted bumps once.
    t.set(&[1, 2], 9i64).unwrap();
    assert_eq!(t.version().unwrap(), v0 + 1);
}
