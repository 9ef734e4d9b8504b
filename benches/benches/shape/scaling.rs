//! Scaling cases: view-op cost against rank (1 to 8 dims; up to 5 are
//! stored inline, more on the heap), and copy throughput against size
//! (4 KiB to 256 MiB square f32 matrices).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use benches::{f32_bytes, SCALE_RANKS, SCALE_SIDES};
use criterion::{BenchmarkId, Criterion, Throughput};
use torchcore::prelude::*;
use torchcore::shape::copy::{set_copy_threads, PARALLEL_MIN_BYTES};

/// `narrow(0, 0, 1)` and a full reversal `permute` of a `[2; rank]` tensor.
pub fn views(c: &mut Criterion) {
    let mut narrow = c.benchmark_group("scale_narrow");
    for &r in &SCALE_RANKS {
        let t = Tensor::zeros(vec![2; r], ScalarType::Float).unwrap();
        narrow.bench_with_input(BenchmarkId::new("ours", r), &t, |b, t| {
            b.iter(|| black_box(t).narrow(0, 0, 1).unwrap())
        });
    }
    narrow.finish();
    let mut permute = c.benchmark_group("scale_permute");
    for &r in &SCALE_RANKS {
        let t = Tensor::zeros(vec![2; r], ScalarType::Float).unwrap();
        let order: Vec<i64> = (0..r as i64).rev().collect();
        permute.bench_with_input(BenchmarkId::new("ours", r), &t, |b, t| {
            b.iter(|| black_box(t).permute(&order).unwrap())
        });
    }
    permute.finish();
}

/// `contiguous()` of a transposed square matrix, `clone()` of a contiguous
/// one, and `memcpy` of the same bytes, from 4 KiB to 256 MiB; `ours` on
/// one thread, and `ours_mt` (torchcore's default, all cores) from the size
/// where copies are split across threads.
pub fn copies(c: &mut Criterion) {
    set_copy_threads(1);
    for &side in &SCALE_SIDES {
        let parallel = f32_bytes(&[side, side]) >= PARALLEL_MIN_BYTES as u64;
        let bytes = f32_bytes(&[side, side]);
        let n = side * side;
        let base = Tensor::from_vec(
            (0..n).map(|i| i as f32).collect::<Vec<f32>>(),
            &[side as i64, side as i64],
        )
        .unwrap();
        let tt = base.transpose(0, 1).unwrap();
        let id = bytes.to_string();

        let mut g = c.benchmark_group("scale_contig_t");
        g.throughput(Throughput::Bytes(bytes));
        g.bench_with_input(BenchmarkId::new("ours", &id), &tt, |b, t| {
            b.iter(|| black_box(t).contiguous().unwrap())
        });
        if parallel {
            g.bench_with_input(BenchmarkId::new("ours_mt", &id), &tt, |b, t| {
                set_copy_threads(0);
                b.iter(|| black_box(t).contiguous().unwrap());
                set_copy_threads(1);
            });
        }
        g.finish();

        let mut g = c.benchmark_group("scale_clone");
        g.throughput(Throughput::Bytes(bytes));
        g.bench_with_input(BenchmarkId::new("ours", &id), &base, |b, t| {
            b.iter(|| black_box(t).clone_in(MemoryFormat::Preserve).unwrap())
        });
        if parallel {
            g.bench_with_input(BenchmarkId::new("ours_mt", &id), &base, |b, t| {
                set_copy_threads(0);
                b.iter(|| black_box(t).clone_in(MemoryFormat::Preserve).unwrap());
                set_copy_threads(1);
            });
        }
        g.finish();

        let src: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut dst = vec![1.0f32; n];
        let mut g = c.benchmark_group("scale_memcpy");
        g.throughput(Throughput::Bytes(bytes));
        g.bench_function(BenchmarkId::new("memcpy", &id), |b| {
            b.iter(|| black_box(&mut dst[..]).copy_from_slice(black_box(&src)))
        });
        g.finish();
    }
}
