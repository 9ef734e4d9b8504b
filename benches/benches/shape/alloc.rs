//! Allocation cases (ns/op): `empty` and `zeros`, small (`[3, 4]`) and
//! large (`[1024, 1024]`, B11). candle has no public uninitialised
//! constructor, so it only appears under `zeros`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use candle_core::{DType, Device, Tensor as CTensor};
use criterion::Criterion;
use ndarray::{ArcArray, IxDyn};
use torchcore::prelude::*;

/// Registers the allocation cases.
pub fn benches(c: &mut Criterion) {
    // Reference: what any `empty` with c10's three layers pays before doing
    // anything else: the tensor impl (160 bytes in an `Arc`), the storage
    // impl (about 100 bytes in an `Arc`) and the zeroed data block (48 bytes
    // behind alloc-cpu's 64-byte header, zeroed), then their frees. The
    // data is `malloc` + `memset`, as alloc-cpu does for small blocks
    // (glibc's `calloc` skips its per-thread cache).
    {
        let mut g = c.benchmark_group("floor_empty");
        g.bench_function("three_allocs", |b| {
            b.iter(|| {
                let imp = std::sync::Arc::new(black_box([0u64; 20]));
                let storage = std::sync::Arc::new(black_box([0u64; 13]));
                let mut data = Vec::<u8>::with_capacity(black_box(48 + 128));
                data.resize(48 + 128, 0);
                (imp, storage, data)
            })
        });
        g.finish();
    }

    for (name, d) in [("small", [3usize, 4]), ("large", [1024, 1024])] {
        let sizes = [d[0] as i64, d[1] as i64];
        let mut g = c.benchmark_group(format!("empty_{name}"));
        g.bench_function("ours", |b| {
            b.iter(|| Tensor::empty(black_box(&sizes), ScalarType::Float).unwrap())
        });
        g.bench_function("ndarray_arc", |b| {
            b.iter(|| ArcArray::<f32, IxDyn>::uninit(IxDyn(black_box(&d))))
        });
        g.finish();

        let mut g = c.benchmark_group(format!("zeros_{name}"));
        g.bench_function("ours", |b| {
            b.iter(|| Tensor::zeros(black_box(&sizes), ScalarType::Float).unwrap())
        });
        g.bench_function("candle", |b| {
            b.iter(|| CTensor::zeros(black_box((d[0], d[1])), DType::F32, &Device::Cpu).unwrap())
        });
        g.bench_function("ndarray_arc", |b| {
            b.iter(|| ArcArray::<f32, IxDyn>::zeros(IxDyn(black_box(&d))))
        });
        g.finish();
    }
}

/// `empty` and `zeros` against size, 4 KiB to 256 MiB of f32 (issue #13:
/// `empty` must not pay a pass over its bytes).
pub fn scaling(c: &mut Criterion) {
    for (name, bytes) in [
        ("4KiB", 4usize << 10),
        ("1MiB", 1 << 20),
        ("4MiB", 4 << 20),
        ("64MiB", 64 << 20),
        ("256MiB", 256 << 20),
    ] {
        let sizes = [(bytes / 4) as i64];
        let mut g = c.benchmark_group(format!("scale_empty_{name}"));
        g.bench_function("ours", |b| {
            b.iter(|| Tensor::empty(black_box(&sizes), ScalarType::Float).unwrap())
        });
        g.finish();
        let mut g = c.benchmark_group(format!("scale_zeros_{name}"));
        g.bench_function("ours", |b| {
            b.iter(|| Tensor::zeros(black_box(&sizes), ScalarType::Float).unwrap())
        });
        g.finish();
    }
}
