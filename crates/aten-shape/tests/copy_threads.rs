//! Copies large enough to be split across threads (`PARALLEL_MIN_BYTES`
//! and up) give exactly the single-threaded result, for every kernel kind
//! (dense runs, transposes, strided rows, dtype conversion) and thread
//! count, including counts that do not divide the outer dim.

use aten_shape::copy::{copy_, copy_threads, set_copy_threads, PARALLEL_MIN_BYTES};
use aten_shape::prelude::*;
use c10_core::{ScalarType, TensorOptions};

fn arange(n: i64, dtype: ScalarType) -> Tensor {
    Tensor::arange(0, n, 1, TensorOptions::new().dtype(dtype)).unwrap()
}

/// Every layout copied with `threads` threads, as raw element bits.
fn run_all(threads: usize) -> Vec<Vec<u64>> {
    set_copy_threads(threads);
    let f = ScalarType::Float;
    // 2100 x 2000 f32 (16.8 MB): a transpose, and a dense clone.
    let m = arange(2100 * 2000, f).view(&[2100, 2000]).unwrap();
    let t = m.transpose(0, 1).unwrap().contiguous().unwrap();
    let c = m.clone_as(MemoryFormat::Contiguous).unwrap();
    // A permuted 4-d tensor (rows of 64 elements) and a strided one
    // (every other column).
    let p4 = arange(9 * 16 * 520 * 64, f)
        .view(&[9, 16, 520, 64])
        .unwrap();
    let p = p4.permute(&[0, 2, 1, 3]).unwrap().contiguous().unwrap();
    let wide = arange(4100 * 2048, f).view(&[4100, 2048]).unwrap();
    let s = wide
        .slice(1, Some(0), None, 2)
        .unwrap()
        .contiguous()
        .unwrap();
    // A dtype conversion through `copy_`.
    let dst = Tensor::zeros(&[2100, 2000], ScalarType::Double).unwrap();
    copy_(&dst, &m.transpose(0, 1).unwrap().t().unwrap()).unwrap();
    [t, c, p, s, dst]
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
#[cfg_attr(miri, ignore = "tens of megabytes of copies")]
fn threaded_copies_match_the_single_threaded_ones() {
    let one = run_all(1);
    assert_eq!(copy_threads(), 1);
    for threads in [2, 3] {
        let many = run_all(threads);
        for (k, (a, b)) in one.iter().zip(&many).enumerate() {
            assert!(a == b, "layout {k} differs with {threads} threads");
        }
    }
    set_copy_threads(0);
    assert!(copy_threads() >= 1);
    // Spot check of the values themselves.
    let m = arange(12, ScalarType::Float).view(&[3, 4]).unwrap();
    let t = m.transpose(0, 1).unwrap().contiguous().unwrap();
    assert_eq!(
        t.to_f64_vec().unwrap(),
        vec![0., 4., 8., 1., 5., 9., 2., 6., 10., 3., 7., 11.]
    );
}
