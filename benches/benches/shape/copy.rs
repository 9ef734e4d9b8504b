//! Copy cases (GB/s of output bytes): `contiguous()` of a transposed
//! 4096 x 4096 (and of `M`, B7), of `P4` permuted `(0, 2, 1, 3)`, of the
//! narrowed KV cache (B8); a contiguous 64 MiB `clone`; and a plain
//! `memcpy` of the same 64 MiB into a preallocated buffer, the bandwidth
//! ceiling of the machine. `ours_prealloc` is the same copy through `copy_`
//! into a destination allocated once, outside the timed loop: the copy
//! engine alone, without allocating the result.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use benches::{dims, f32_bytes, BIG, CLONE_ELEMS, K3, M, P4};
use candle_core::{Device, Tensor as CTensor};
use criterion::{Criterion, Throughput};
use ndarray::{s, ArcArray, IxDyn};
use torchcore::prelude::*;
use torchcore::shape::copy::set_copy_threads;

fn ours(d: &[usize]) -> Tensor {
    let n: usize = d.iter().product();
    Tensor::from_vec((0..n).map(|i| i as f32).collect::<Vec<f32>>(), &dims(d)).unwrap()
}

fn candle(d: &[usize]) -> CTensor {
    let n: usize = d.iter().product();
    CTensor::arange(0f32, n as f32, &Device::Cpu)
        .unwrap()
        .reshape(d)
        .unwrap()
}

fn nd(d: &[usize]) -> ArcArray<f32, IxDyn> {
    let n: usize = d.iter().product();
    ArcArray::from_shape_vec(IxDyn(d), (0..n).map(|i| i as f32).collect()).unwrap()
}

/// Registers the copy cases. `ours` runs on one thread, like every peer
/// (and libtorch with `at::set_num_threads(1)`); `ours_mt` is torchcore's
/// default, which splits copies of at least `PARALLEL_MIN_BYTES` across
/// the machine's cores.
pub fn benches(c: &mut Criterion) {
    set_copy_threads(1);
    // Transposes: 4096^2 (the target) and M (B7).
    for (name, side) in [("contig_t4096", BIG), ("contig_t1024", M[0])] {
        let d = [side, side];
        let t = ours(&d).transpose(0, 1).unwrap();
        let ct = candle(&d).t().unwrap();
        let a = nd(&d);
        let at = a.view().reversed_axes();
        let mut g = c.benchmark_group(name);
        g.throughput(Throughput::Bytes(f32_bytes(&d)));
        g.bench_function("ours", |b| b.iter(|| black_box(&t).contiguous().unwrap()));
        let into = Tensor::zeros(dims(&d), ScalarType::Float).unwrap();
        g.bench_function("ours_prealloc", |b| {
            b.iter(|| into.copy_(black_box(&t)).unwrap())
        });
        if name == "contig_t4096" {
            // The same transpose from a source that torchcore allocated
            // (huge-page backed, as alloc-cpu advises for large blocks)
            // rather than a `Vec` handed over with `from_vec`.
            let own = Tensor::empty(dims(&d), ScalarType::Float).unwrap();
            own.copy_(&ours(&d)).unwrap();
            let own_t = own.transpose(0, 1).unwrap();
            g.bench_function("ours_own_src", |b| {
                b.iter(|| black_box(&own_t).contiguous().unwrap())
            });
            g.bench_function("ours_mt", |b| {
                set_copy_threads(0);
                b.iter(|| black_box(&t).contiguous().unwrap());
                set_copy_threads(1);
            });
        }
        g.bench_function("candle", |b| {
            b.iter(|| black_box(&ct).contiguous().unwrap())
        });
        g.bench_function("ndarray_view", |b| {
            b.iter(|| black_box(&at).as_standard_layout().into_owned())
        });
        g.finish();
    }

    // P4 permuted (0, 2, 1, 3): runs of 64 contiguous floats.
    {
        let t = ours(&P4).permute(&[0, 2, 1, 3]).unwrap();
        let ct = candle(&P4).permute((0, 2, 1, 3)).unwrap();
        let a = nd(&P4);
        let at = a.view().permuted_axes(IxDyn(&[0, 2, 1, 3]));
        let mut g = c.benchmark_group("contig_perm4d");
        g.throughput(Throughput::Bytes(f32_bytes(&P4)));
        g.bench_function("ours", |b| b.iter(|| black_box(&t).contiguous().unwrap()));
        g.bench_function("ours_mt", |b| {
            set_copy_threads(0);
            b.iter(|| black_box(&t).contiguous().unwrap());
            set_copy_threads(1);
        });
        let into = Tensor::zeros(&[8, 32, 16, 64], ScalarType::Float).unwrap();
        g.bench_function("ours_prealloc", |b| {
            b.iter(|| into.copy_(black_box(&t)).unwrap())
        });
        g.bench_function("candle", |b| {
            b.iter(|| black_box(&ct).contiguous().unwrap())
        });
        g.bench_function("ndarray_view", |b| {
            b.iter(|| black_box(&at).as_standard_layout().into_owned())
        });
        g.finish();
    }

    // B8: the KV cache [8, 528, 64] narrowed to 512 positions: 8 runs of
    // 128 KiB.
    {
        let t = ours(&K3).narrow(1, 0, 512).unwrap();
        let ct = candle(&K3).narrow(1, 0, 512).unwrap();
        let a = nd(&K3);
        let at = a.slice(s![.., 0..512, ..]).into_dyn();
        let mut g = c.benchmark_group("contig_kv");
        g.throughput(Throughput::Bytes(f32_bytes(&[8, 512, 64])));
        g.bench_function("ours", |b| b.iter(|| black_box(&t).contiguous().unwrap()));
        let into = Tensor::zeros(&[8, 512, 64], ScalarType::Float).unwrap();
        g.bench_function("ours_prealloc", |b| {
            b.iter(|| into.copy_(black_box(&t)).unwrap())
        });
        g.bench_function("candle", |b| {
            b.iter(|| black_box(&ct).contiguous().unwrap())
        });
        g.bench_function("ndarray_view", |b| {
            b.iter(|| black_box(&at).as_standard_layout().into_owned())
        });
        g.finish();
    }

    // A contiguous 64 MiB clone, and memcpy of the same bytes.
    {
        let d = [CLONE_ELEMS];
        let t = ours(&d);
        let ct = candle(&d);
        let a = nd(&d);
        let mut g = c.benchmark_group("clone_64mib");
        g.throughput(Throughput::Bytes(f32_bytes(&d)));
        g.bench_function("ours", |b| {
            b.iter(|| black_box(&t).clone_in(MemoryFormat::Preserve).unwrap())
        });
        g.bench_function("ours_mt", |b| {
            set_copy_threads(0);
            b.iter(|| black_box(&t).clone_in(MemoryFormat::Preserve).unwrap());
            set_copy_threads(1);
        });
        g.bench_function("candle", |b| b.iter(|| black_box(&ct).copy().unwrap()));
        g.bench_function("ndarray_arc", |b| b.iter(|| black_box(&a).to_owned()));
        g.finish();

        let src: Vec<f32> = (0..CLONE_ELEMS).map(|i| i as f32).collect();
        let mut dst = vec![1.0f32; CLONE_ELEMS];
        let mut g = c.benchmark_group("memcpy_64mib");
        g.throughput(Throughput::Bytes(f32_bytes(&d)));
        g.bench_function("memcpy", |b| {
            b.iter(|| black_box(&mut dst[..]).copy_from_slice(black_box(&src)))
        });
        // The same into a fresh allocation each time (what any clone pays
        // on top: page faults of a new mapping, or a zero fill).
        g.bench_function("memcpy_fresh", |b| b.iter(|| black_box(&src).to_vec()));
        g.finish();
    }
}
