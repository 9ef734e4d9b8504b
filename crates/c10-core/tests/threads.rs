//! Writes through views from many threads while others read.

use c10_core::{ScalarType, Tensor};

#[test]
fn writers_through_disjoint_views_and_readers_of_the_base() {
    let threads: i64 = if cfg!(miri) { 2 } else { 8 };
    let per: i64 = if cfg!(miri) { 4 } else { 256 };
    let base = Tensor::zeros(&[threads * per], ScalarType::Long).unwrap();
    std::thread::scope(|s| {
        for t in 0..threads {
            let row = base.as_strided(&[per], &[1], Some(t * per)).unwrap();
            s.spawn(move || {
                for i in 0..per {
                    row.set::<i64>(&[i], t * 1000 + i).unwrap();
                }
            });
        }
        for _ in 0..2 {
            let b = base.clone();
            s.spawn(move || {
                for _ in 0..per {
                    // Every element is either untouched or fully written.
                    for (k, v) in b.to_vec::<i64>().unwrap().into_iter().enumerate() {
                        let k = k as i64;
                        assert!(
                            v == 0 || v == (k / per) * 1000 + k % per,
                            "torn or misplaced write {v} at {k}"
                        );
                    }
                }
            });
        }
    });
    let all = base.to_vec::<i64>().unwrap();
    for (k, v) in all.into_iter().enumerate() {
        let k = k as i64;
        assert_eq!(v, (k / per) * 1000 + k % per);
    }
    assert_eq!(
        base.version().unwrap() as i64,
        threads * per,
        "one bump per write, shared by every view"
    );
}

#[test]
fn overlapping_views_serialise_their_writes() {
    let base = Tensor::zeros(&[1], ScalarType::Long).unwrap();
    let rounds = if cfg!(miri) { 5 } else { 1000 };
    std::thread::scope(|s| {
        for _ in 0..4 {
            // Stride 0: every element of this view is the same storage cell.
            let v = base.as_strided(&[3], &[0], Some(0)).unwrap();
            s.spawn(move || {
                for _ in 0..rounds {
                    let mut g = v.write::<i64>().unwrap();
                    g.map_inplace(|x| x + 1);
                }
            });
        }
    });
    assert_eq!(base.get::<i64>(&[0]).unwrap(), 4 * rounds * 3);
}

#[test]
fn handles_clone_and_drop_across_threads() {
    let t = Tensor::arange(0, 100, 1, ScalarType::Int).unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            let t = t.clone();
            s.spawn(move || {
                for _ in 0..100 {
                    let c = t.clone();
                    let v = c.as_strided(&[10, 10], &[10, 1], None).unwrap();
                    assert_eq!(v.get::<i32>(&[3, 4]).unwrap(), 34);
                }
            });
        }
    });
    assert_eq!(t.use_count(), 1);
    assert_eq!(t.storage().use_count(), 1);
}
