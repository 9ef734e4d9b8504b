//! Copies large enough to be split into pieces (`PARALLEL_MIN_BYTES` and
//! up) give exactly the single-threaded result, for every kernel kind
//! (dense runs, transposes, strided rows, dtype conversion) and thread
//! count, including counts that do not divide the outer dim; and the
//! pieces run on rayon's pool: from inside a user's pool (`install`,
//! `par_iter`) copies neither deadlock nor touch the global pool.
//!
//! Not under Miri: the copies are tens of megabytes, and rayon's deques
//! (crossbeam-epoch) fail Miri's Stacked Borrows check (a retag in
//! `crossbeam_epoch::internal::Local::element_of`, on a pool thread).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Mutex, MutexGuard, PoisonError};

use aten_shape::copy::{copy_, copy_threads, set_copy_threads, PARALLEL_MIN_BYTES};
use aten_shape::prelude::*;
use c10_core::{ScalarType, TensorOptions};
use c10_storage::testing::hostile::{in_child_process, with_watchdog};
use rayon::prelude::*;

/// `set_copy_threads` is process-wide: the tests that set it take turns.
fn setting() -> MutexGuard<'static, ()> {
    static SETTING: Mutex<()> = Mutex::new(());
    SETTING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A user's own pool of `threads` workers.
fn user_pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

fn arange(n: i64, dtype: ScalarType) -> Tensor {
    Tensor::arange(0, n, 1, TensorOptions::new().dtype(dtype)).unwrap()
}

/// `[rows, cols]` of the f32 matrix the pool tests transpose (16.8 MB).
fn matrix() -> [i64; 2] {
    [2100, 2000]
}

/// The row-major `[cols, rows]` transpose of `arange(rows * cols)` viewed
/// as `[rows, cols]`, computed without the copy engine.
fn transposed_arange(rows: i64, cols: i64) -> Vec<f32> {
    (0..cols)
        .flat_map(|j| (0..rows).map(move |i| (i * cols + j) as f32))
        .collect()
}

/// `m.t().contiguous()` for `m = arange([rows, cols])`, checked in full.
fn check_transpose_copy(rows: i64, cols: i64) {
    let m = arange(rows * cols, ScalarType::Float)
        .view(&[rows, cols])
        .unwrap();
    let t = m.t().unwrap().contiguous().unwrap();
    assert!(t.nbytes() >= PARALLEL_MIN_BYTES, "{} bytes", t.nbytes());
    assert!(t.to_vec::<f32>().unwrap() == transposed_arange(rows, cols));
}

/// Every layout copied with `threads` pieces, as raw element bits.
fn run_all(threads: usize) -> Vec<Vec<u64>> {
    set_copy_threads(threads);
    let f = ScalarType::Float;
    let [r, c] = matrix();
    // A transpose, and a dense clone.
    let m = arange(r * c, f).view(&[r, c]).unwrap();
    let t = m.transpose(0, 1).unwrap().contiguous().unwrap();
    let k = m.clone_in(MemoryFormat::Contiguous).unwrap();
    // A permuted 4-d tensor (rows of 64 elements) and a strided one
    // (every other column).
    let d4 = [9, 16, 520, 64];
    let p4 = arange(d4.iter().product(), f).view(&d4).unwrap();
    let p = p4.permute(&[0, 2, 1, 3]).unwrap().contiguous().unwrap();
    let dw = [4100, 2048];
    let wide = arange(dw[0] * dw[1], f).view(&dw).unwrap();
    let s = wide
        .slice(1, Some(0), None, 2)
        .unwrap()
        .contiguous()
        .unwrap();
    // A dtype conversion through `copy_`.
    let dst = Tensor::zeros(&[r, c], ScalarType::Double).unwrap();
    copy_(&dst, &m.transpose(0, 1).unwrap().t().unwrap()).unwrap();
    [t, k, p, s, dst]
        .iter()
        .map(|x| {
            assert!(x.nbytes() >= PARALLEL_MIN_BYTES, "{} bytes", x.nbytes());
            if x.dtype() == ScalarType::Double {
                x.to_vec::<f64>()
                    .unwrap()
                    .iter()
                    .map(|v| v.to_bits())
                    .collect()
            } else {
                let v = x.to_vec::<f32>().unwrap();
                v.iter().map(|v| u64::from(v.to_bits())).collect()
            }
        })
        .collect()
}

#[test]
#[cfg_attr(miri, ignore = "tens of megabytes; rayon fails Stacked Borrows")]
fn threaded_copies_match_the_single_threaded_ones() {
    let _turn = setting();
    let one = run_all(1);
    assert_eq!(copy_threads(), 1);
    // 2 and 3 pieces (3 does not divide the outer dims), and the default.
    for threads in [2, 3, 0] {
        let many = run_all(threads);
        for (k, (a, b)) in one.iter().zip(&many).enumerate() {
            assert!(a == b, "layout {k} differs with {threads} threads");
        }
    }
    assert!(copy_threads() >= 1);
    // The values themselves.
    let [r, c] = matrix();
    let expected = transposed_arange(r, c);
    assert!(
        one[0]
            == expected
                .iter()
                .map(|v| u64::from(v.to_bits()))
                .collect::<Vec<_>>()
    );
    let m = arange(12, ScalarType::Float).view(&[3, 4]).unwrap();
    let t = m.transpose(0, 1).unwrap().contiguous().unwrap();
    assert_eq!(
        t.to_f64_vec().unwrap(),
        vec![0., 4., 8., 1., 5., 9., 2., 6., 10., 3., 7., 11.]
    );
}

#[test]
#[cfg_attr(miri, ignore = "tens of megabytes; rayon fails Stacked Borrows")]
fn copies_inside_a_users_pool_install_are_exact() {
    let _turn = setting();
    set_copy_threads(0);
    let [r, c] = matrix();
    with_watchdog("a large copy inside ThreadPool::install", move || {
        let pool = user_pool(2);
        pool.install(|| check_transpose_copy(r, c));
        // Nested: a copy inside a join inside the user's pool.
        pool.install(|| rayon::join(|| check_transpose_copy(r, c), || check_transpose_copy(c, r)));
    });
}

#[test]
#[cfg_attr(miri, ignore = "tens of megabytes; rayon fails Stacked Borrows")]
fn copies_inside_a_users_par_iter_are_exact() {
    let _turn = setting();
    set_copy_threads(0);
    let [r, c] = matrix();
    with_watchdog("large copies inside par_iter", move || {
        let pool = user_pool(2);
        pool.install(|| {
            (0..4)
                .into_par_iter()
                .for_each(|_| check_transpose_copy(r, c))
        });
        // And on the global pool.
        (0..3)
            .into_par_iter()
            .for_each(|_| check_transpose_copy(r, c));
    });
}

/// A copy's calling thread waits for its pieces without running other
/// jobs of the pool (as `rayon::scope` would): otherwise a job that copies
/// into the same storage could run on the thread that holds that
/// storage's write guard, and fail with `StorageError::Reentrant`.
#[test]
#[cfg_attr(miri, ignore = "tens of megabytes; rayon fails Stacked Borrows")]
fn par_iter_copies_into_one_storage_all_succeed() {
    let _turn = setting();
    set_copy_threads(0);
    let [r, c] = matrix();
    let parts = 6;
    let out = Tensor::zeros(&[parts * c, r], ScalarType::Float).unwrap();
    let o = out.clone();
    with_watchdog("par_iter copies into one storage", move || {
        let pool = user_pool(3);
        let m = arange(r * c, ScalarType::Float).view(&[r, c]).unwrap();
        let src = m.t().unwrap();
        pool.install(|| {
            (0..parts).into_par_iter().for_each(|k| {
                let part = o.narrow(0, k * c, c).unwrap();
                copy_(&part, &src).unwrap();
            })
        });
    });
    let expected = transposed_arange(r, c);
    let got = out.to_vec::<f32>().unwrap();
    for part in got.chunks(expected.len()) {
        assert!(part == expected);
    }
}

/// A copy on a worker of the user's pool runs there: the global pool stays
/// unstarted (in a child process, whose global pool nothing else starts).
#[test]
#[cfg_attr(miri, ignore = "spawns a child process; rayon under Miri")]
fn copies_in_a_users_pool_leave_the_global_pool_alone() {
    in_child_process("copies_in_a_users_pool_leave_the_global_pool_alone", || {
        set_copy_threads(2);
        let [r, c] = matrix();
        with_watchdog("copies on the caller's pool", move || {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap();
            pool.install(|| check_transpose_copy(r, c));
            pool.install(|| {
                (0..2)
                    .into_par_iter()
                    .for_each(|_| check_transpose_copy(r, c))
            });
        });
        let global = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build_global();
        assert!(global.is_ok(), "the global pool was started: {global:?}");
        // A one-thread global pool: a copy outside any pool gets no helper.
        check_transpose_copy(r, c);
    });
}

/// A split copy outside any pool runs on rayon's global pool, starting it
/// (in a child process, whose global pool nothing else starts).
#[test]
#[cfg_attr(miri, ignore = "spawns a child process; rayon under Miri")]
fn copies_outside_any_pool_use_the_global_pool() {
    in_child_process("copies_outside_any_pool_use_the_global_pool", || {
        set_copy_threads(2);
        let [r, c] = matrix();
        check_transpose_copy(r, c);
        let global = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build_global();
        // (A one-core machine never splits a copy.)
        assert_eq!(global.is_err(), copy_threads() > 1, "{global:?}");
    });
}
