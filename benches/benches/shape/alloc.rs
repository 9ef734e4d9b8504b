//! Allocation cases (ns/op): `empty` and `zeros`, small (`[3, 4]`) and
//! large (`[1024, 1024]`, B11). candle has no public uninitialised
//! constructor, so it only appears under `zeros`.

use std::hint::black_box;

use candle_core::{DType, Device, Tensor as CTensor};
use criterion::Criterion;
use ndarray::{ArcArray, IxDyn};
use torchcore::prelude::*;

/// Registers the allocation cases.
pub fn benches(c: &mut Criterion) {
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
