//! The copy engine's short-run kernel (innermost rows of 32 to 512 bytes
//! that are contiguous on both sides, copied with inline 16-byte moves:
//! 4-d permutes that keep the innermost dim, narrowed rows) against a
//! naive reference that reads every element on its own, for random shapes,
//! permutations, offsets and element sizes, including run lengths that
//! are not multiples of 16 bytes. Small enough for Miri
//! (`cargo +nightly miri test -p aten-shape --test copy_short_runs`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use aten_shape::copy::{copy_, CopyOps};
use aten_shape::views::ViewOps;
use c10_core::scalar_type::{Complex128, Element};
use c10_core::Tensor;
use proptest::prelude::*;

/// Every index of `sizes`, row-major.
fn indices(sizes: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &n in sizes {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..n).map(move |i| {
                    let mut p = prefix.clone();
                    p.push(i);
                    p
                })
            })
            .collect();
    }
    out
}

/// `src.contiguous()` and `copy_` into a fresh contiguous tensor, both
/// checked element by element against a reference that reads the whole
/// storage once and then follows `src`'s strides by hand, one index at a
/// time. (Reading through `Tensor::get` per element would be just as
/// independent of the copy kernels, but costs milliseconds per element
/// under Miri.)
fn check<T: Element + PartialEq + std::fmt::Debug + Copy>(src: &Tensor) {
    let got = src.contiguous().unwrap();
    assert!(got.is_contiguous());
    let into = Tensor::zeros(src.sizes(), src.dtype()).unwrap();
    copy_(&into, src).unwrap();
    let len = src.storage().nbytes() / std::mem::size_of::<T>();
    let storage = Tensor::from_storage(src.storage().clone(), src.dtype(), &[len as i64], &[1], 0)
        .unwrap()
        .to_vec::<T>()
        .unwrap();
    let want: Vec<T> = indices(src.sizes())
        .iter()
        .map(|index| {
            let at: i64 = index.iter().zip(src.strides()).map(|(i, s)| i * s).sum();
            storage[(src.storage_offset() + at) as usize]
        })
        .collect();
    assert_eq!(got.to_vec::<T>().unwrap(), want, "contiguous() of {src:?}");
    assert_eq!(into.to_vec::<T>().unwrap(), want, "copy_ from {src:?}");
}

/// A `[a, b, c, d]` tensor of `make(i)` (its storage padded by `pad`
/// elements before the view, so the source starts at an offset that is
/// not a multiple of 16 bytes), permuted by `perm` and, when `narrow` is
/// set, narrowed along its last dim to drop the first element (which makes
/// the innermost runs one element shorter and misaligned).
fn source<T: Element>(
    dims: [i64; 4],
    perm: &[i64],
    pad: i64,
    narrow: bool,
    make: fn(usize) -> T,
) -> Tensor {
    let n: i64 = dims.iter().product();
    let data: Vec<T> = (0..(n + pad) as usize).map(make).collect();
    let flat = Tensor::from_vec(data, &[n + pad]).unwrap();
    let t = flat.narrow(0, pad, n).unwrap().view(&dims).unwrap();
    let t = t.permute(perm).unwrap();
    if narrow {
        let last = t.sizes().len() - 1;
        let len = t.sizes()[last];
        if len > 1 {
            return t.narrow(last as i64, 1, len - 1).unwrap();
        }
    }
    t
}

/// All 24 permutations of four dims.
fn perms() -> Vec<[i64; 4]> {
    let mut out = Vec::new();
    for a in 0..4 {
        for b in 0..4 {
            for c in 0..4 {
                for d in 0..4 {
                    let p = [a, b, c, d];
                    if (0..4).all(|k| p.contains(&k)) {
                        out.push(p);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn the_benchmarks_permute_shape_scaled_down() {
    // P4 of the benchmarks is [8, 16, 32, 64] permuted (0, 2, 1, 3): runs
    // of 64 floats. The same pattern, smaller (runs of 64 floats = 256
    // bytes, and of 63 floats after the narrow).
    let (a, b, c) = if cfg!(miri) { (2, 2, 3) } else { (3, 5, 7) };
    for narrow in [false, true] {
        // Under Miri one padding per narrowing (the two misalignments).
        for pad in if cfg!(miri) {
            vec![i64::from(narrow)]
        } else {
            vec![0, 1]
        } {
            check::<f32>(&source([a, b, c, 64], &[0, 2, 1, 3], pad, narrow, |i| {
                i as f32
            }));
        }
    }
}

#[test]
fn run_lengths_around_the_kernel_bounds() {
    // Bytes per run from below 32 (element by element) through 512 (the
    // short-run kernel's limit) to past it (memcpy), for 1- to 16-byte
    // elements.
    let lens: &[i64] = if cfg!(miri) {
        // Element by element (3 bytes of u8) to past the short-run limit
        // (33 complex128 = 528 bytes), through the short-run kernel.
        &[3, 33]
    } else {
        &[
            1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 513,
        ]
    };
    for &len in lens {
        check::<u8>(&source([2, 3, 2, len], &[1, 0, 2, 3], 1, false, |i| {
            i as u8
        }));
        check::<i16>(&source([2, 3, 2, len], &[2, 1, 0, 3], 3, true, |i| {
            i as i16
        }));
        check::<f64>(&source([2, 2, 3, len], &[0, 2, 1, 3], 1, false, |i| {
            i as f64
        }));
        check::<Complex128>(&source([3, 2, 1, len], &[1, 0, 2, 3], 1, true, |i| {
            Complex128::new(i as f64, -(i as f64))
        }));
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 200 },
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_4d_permutes_match_the_reference(
        // Under Miri the outer dims stay small (each element costs
        // milliseconds there); the run lengths still span the kernels.
        a in 1i64..4, b in 1i64..(if cfg!(miri) { 3 } else { 5 }),
        c in 1i64..(if cfg!(miri) { 3 } else { 5 }), d in 1i64..80,
        p in 0usize..24, pad in 0i64..5, narrow in any::<bool>(), elem in 0usize..4,
    ) {
        let perm = perms()[p];
        let dims = [a, b, c, d];
        match elem {
            0 => check::<u8>(&source(dims, &perm, pad, narrow, |i| i as u8)),
            1 => check::<i16>(&source(dims, &perm, pad, narrow, |i| i as i16)),
            2 => check::<f32>(&source(dims, &perm, pad, narrow, |i| i as f32)),
            _ => check::<i64>(&source(dims, &perm, pad, narrow, |i| i as i64)),
        }
    }
}
