//! Throughput of the copy engine against `memcpy` of the same bytes, in the
//! same run (single thread). Ignored by default; run in release mode:
//!
//! ```text
//! cargo test --release -p aten-shape --test copy_perf -- --ignored --nocapture
//! ```
//!
//! Bandwidth counts bytes read plus bytes written (2 × tensor bytes).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Instant;

use aten_shape::copy::{clone, contiguous, copy_};
use c10_core::{MemoryFormat, ScalarType, Tensor, TensorOptions};

fn gbs(bytes: usize, secs: f64) -> f64 {
    2.0 * bytes as f64 / secs / 1e9
}

struct Case {
    name: &'static str,
    src: Tensor,
}

fn cases() -> Vec<Case> {
    let f = TensorOptions::new().dtype(ScalarType::Float);
    let big = Tensor::arange(0, 4096 * 4096, 1, f).unwrap();
    let transposed = big.as_strided(&[4096, 4096], &[1, 4096], Some(0)).unwrap();
    let p = Tensor::arange(0, 8 * 16 * 32 * 64, 1, f).unwrap();
    // [8,16,32,64].permute(0,2,1,3)
    let permuted = p
        .as_strided(&[8, 32, 16, 64], &[32768, 64, 2048, 1], Some(0))
        .unwrap();
    let n = Tensor::arange(0, 8 * 528 * 64, 1, f).unwrap();
    // [8,528,64].narrow(1,0,512)
    let narrowed = n
        .as_strided(&[8, 512, 64], &[528 * 64, 64, 1], Some(0))
        .unwrap();
    let dense = Tensor::arange(0, 4096 * 4096, 1, f)
        .unwrap()
        .as_strided(&[4096, 4096], &[4096, 1], Some(0))
        .unwrap();
    vec![
        Case {
            name: "transpose 4096x4096 f32",
            src: transposed,
        },
        Case {
            name: "permute [8,16,32,64] (0,2,1,3)",
            src: permuted,
        },
        Case {
            name: "narrow [8,528,64] -> 512",
            src: narrowed,
        },
        Case {
            name: "clone contiguous 4096x4096",
            src: dense,
        },
    ]
}

#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn throughput_vs_memcpy() {
    for case in cases() {
        let src = &case.src;
        let bytes = src.nbytes();
        let rounds = if bytes > (1 << 24) { 20 } else { 400 };
        let a = vec![1u8; bytes];
        let mut b = vec![0u8; bytes];
        let out = Tensor::empty(src.sizes(), TensorOptions::new().dtype(src.dtype())).unwrap();
        let is_clone = case.name.starts_with("clone");
        // Round-robin, best of each: the machine is shared, so interleaving
        // keeps the comparison fair.
        let mut best = [f64::MAX; 4];
        for _ in 0..rounds {
            let mut time = |i: usize, f: &mut dyn FnMut()| {
                let t = Instant::now();
                f();
                best[i] = best[i].min(t.elapsed().as_secs_f64());
            };
            time(0, &mut || {
                b.copy_from_slice(black_box(&a));
                black_box(&mut b);
            });
            time(1, &mut || copy_(&out, src).unwrap());
            time(2, &mut || {
                let r = if is_clone {
                    clone(src, MemoryFormat::Preserve)
                } else {
                    contiguous(src, MemoryFormat::Contiguous)
                };
                drop(black_box(r.unwrap()));
            });
            time(3, &mut || {
                drop(black_box(
                    Tensor::empty(src.sizes(), TensorOptions::new().dtype(src.dtype())).unwrap(),
                ))
            });
        }
        let [t_memcpy, t_copy, t_op, t_alloc] = best;
        println!(
            "{:32} {:>9} B | memcpy {:6.2} GB/s {:8.1} us | engine (copy_ into existing) {:6.2} GB/s {:8.1} us = {:3.0}% of memcpy | {} {:6.2} GB/s {:8.1} us = {:3.0}% of memcpy | Tensor::empty alone {:8.1} us",
            case.name,
            bytes,
            gbs(bytes, t_memcpy),
            t_memcpy * 1e6,
            gbs(bytes, t_copy),
            t_copy * 1e6,
            100.0 * t_memcpy / t_copy,
            if is_clone { "clone()" } else { "contiguous()" },
            gbs(bytes, t_op),
            t_op * 1e6,
            100.0 * t_memcpy / t_op,
            t_alloc * 1e6,
        );
    }
}
