//! Metadata-only cases (ns/op): handle clone and every view op, B1-B6,
//! B9, B10 and B13 of the peer table (`shared/design/peers-and-style.md`
//! section 5).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use benches::{dims, M, P4};
use candle_core::{DType, Device, Tensor as CTensor};
use criterion::Criterion;
use ndarray::{s, ArcArray, ArrayViewD, Axis, IxDyn, ShapeBuilder};
use torchcore::prelude::*;

/// An f32 torchcore tensor of these dims (values `0..n`).
fn ours(d: &[usize]) -> Tensor {
    let n: usize = d.iter().product();
    Tensor::from_vec((0..n).map(|i| i as f32).collect::<Vec<f32>>(), &dims(d)).unwrap()
}

/// The same as a candle CPU tensor.
fn candle(d: &[usize]) -> CTensor {
    let n: usize = d.iter().product();
    CTensor::arange(0f32, n as f32, &Device::Cpu)
        .unwrap()
        .reshape(d)
        .unwrap()
}

/// The same as an ndarray `ArcArray` with dynamic rank.
fn nd(d: &[usize]) -> ArcArray<f32, IxDyn> {
    let n: usize = d.iter().product();
    ArcArray::from_shape_vec(IxDyn(d), (0..n).map(|i| i as f32).collect()).unwrap()
}

/// Registers every metadata case.
pub fn benches(c: &mut Criterion) {
    let (t_m, c_m, a_m) = (ours(&M), candle(&M), nd(&M));
    let v_m: ArrayViewD<'_, f32> = a_m.view();
    let (t_p, c_p, a_p) = (ours(&P4), candle(&P4), nd(&P4));
    let v_p = a_p.view();
    let (t_r, c_r, a_r) = (ours(&[64, 1024]), candle(&[64, 1024]), nd(&[64, 1024]));
    let v_r = a_r.view();
    let (t_e, c_e, a_e) = (ours(&[1, 64]), candle(&[1, 64]), nd(&[1, 64]));
    let v_e = a_e.view();
    let v_e = &v_e;
    assert_eq!(c_m.dtype(), DType::F32);

    // Reference: the unavoidable part of any view op here: one `Arc::new`
    // of a TensorImpl-sized (144-byte) value holding one more reference to
    // a shared handle (the storage), then the drop of both.
    {
        let shared = std::sync::Arc::new(0u64);
        let mut g = c.benchmark_group("floor");
        g.bench_function("arc_new", |b| {
            b.iter(|| {
                let s = black_box(&shared).clone();
                std::sync::Arc::new((s, black_box([0u64; 17])))
            })
        });
        g.finish();
    }

    // B10: a shallow handle clone (one atomic increment and decrement).
    let mut g = c.benchmark_group("clone");
    g.bench_function("ours", |b| b.iter(|| black_box(&t_m).clone()));
    g.bench_function("candle", |b| b.iter(|| black_box(&c_m).clone()));
    g.bench_function("ndarray_arc", |b| b.iter(|| black_box(&a_m).clone()));
    g.finish();

    // B5: a contiguous [64, 1024] viewed as [64, 32, 32].
    // Inference tensors (made under `InferenceMode`), as the libtorch
    // harness's inference-mode inputs are: their views record no base and
    // share no version counter, which is what that mode skips.
    let (t_r_inf, t_m_inf) = {
        let _inference = InferenceMode::new();
        (ours(&[64, 1024]), ours(&M))
    };
    assert!(t_r_inf.is_inference() && t_m_inf.is_inference());
    let mut g = c.benchmark_group("view");
    g.bench_function("ours", |b| {
        b.iter(|| black_box(&t_r).view(&[64, 32, 32]).unwrap())
    });
    g.bench_function("ours_inference", |b| {
        b.iter(|| black_box(&t_r_inf).view(&[64, 32, 32]).unwrap())
    });
    g.bench_function("candle", |b| {
        b.iter(|| black_box(&c_r).reshape((64, 32, 32)).unwrap())
    });
    g.bench_function("ndarray_arc", |b| {
        b.iter(|| {
            black_box(&a_r)
                .clone()
                .into_shape_with_order(IxDyn(&[64, 32, 32]))
                .unwrap()
        })
    });
    g.bench_function("ndarray_view", |b| {
        b.iter(|| {
            black_box(&v_r)
                .view()
                .into_shape_with_order(IxDyn(&[64, 32, 32]))
                .unwrap()
        })
    });
    g.finish();

    // B5 through `reshape`, which views here.
    let mut g = c.benchmark_group("reshape");
    g.bench_function("ours", |b| {
        b.iter(|| black_box(&t_r).reshape(&[64, 32, 32]).unwrap())
    });
    g.bench_function("candle", |b| {
        b.iter(|| black_box(&c_r).reshape((64, 32, 32)).unwrap())
    });
    g.bench_function("ndarray_view", |b| {
        b.iter(|| black_box(&v_r).to_shape(IxDyn(&[64, 32, 32])).unwrap())
    });
    g.finish();

    // B6: reshape of a non-contiguous but viewable tensor. torchcore and
    // ndarray view; candle copies (not apples to apples).
    {
        let t6 = ours(&[8, 16, 64]).transpose(0, 1).unwrap();
        let c6 = candle(&[8, 16, 64]).transpose(0, 1).unwrap();
        let a6 = nd(&[8, 16, 64]);
        let v6 = a6.view().permuted_axes(IxDyn(&[1, 0, 2]));
        let mut g = c.benchmark_group("reshape_nc");
        g.bench_function("ours", |b| {
            b.iter(|| black_box(&t6).reshape(&[16, 8, 8, 8]).unwrap())
        });
        g.bench_function("candle", |b| {
            b.iter(|| black_box(&c6).reshape((16, 8, 8, 8)).unwrap())
        });
        g.bench_function("ndarray_view", |b| {
            b.iter(|| black_box(&v6).to_shape(IxDyn(&[16, 8, 8, 8])).unwrap())
        });
        g.finish();
    }

    // B2: rows 16..528 of M.
    let mut g = c.benchmark_group("narrow");
    g.bench_function("ours", |b| {
        b.iter(|| black_box(&t_m).narrow(0, 16, 512).unwrap())
    });
    g.bench_function("candle", |b| {
        b.iter(|| black_box(&c_m).narrow(0, 16, 512).unwrap())
    });
    g.bench_function("ndarray_arc", |b| {
        b.iter(|| black_box(&a_m).clone().slice_move(s![16..528, ..]))
    });
    g.bench_function("ndarray_view", |b| {
        b.iter(|| black_box(&v_m).slice(s![16..528, ..]))
    });
    g.finish();

    // Row 5 of M (candle's `get` is narrow + reshape).
    let mut g = c.benchmark_group("select");
    g.bench_function("ours", |b| b.iter(|| black_box(&t_m).select(0, 5).unwrap()));
    g.bench_function("candle", |b| b.iter(|| black_box(&c_m).get(5).unwrap()));
    g.bench_function("ndarray_arc", |b| {
        b.iter(|| black_box(&a_m).clone().index_axis_move(Axis(0), 5))
    });
    g.bench_function("ndarray_view", |b| {
        b.iter(|| black_box(&v_m).index_axis(Axis(0), 5))
    });
    g.finish();

    // B1: transposed view of M.
    let mut g = c.benchmark_group("transpose");
    g.bench_function("ours", |b| {
        b.iter(|| black_box(&t_m).transpose(0, 1).unwrap())
    });
    g.bench_function("candle", |b| b.iter(|| black_box(&c_m).t().unwrap()));
    g.bench_function("ndarray_arc", |b| {
        b.iter(|| black_box(&a_m).clone().reversed_axes())
    });
    g.bench_function("ndarray_view", |b| b.iter(|| black_box(&v_m).t()));
    g.finish();

    // B3: P4 permuted (0, 2, 1, 3).
    let mut g = c.benchmark_group("permute");
    g.bench_function("ours", |b| {
        b.iter(|| black_box(&t_p).permute(&[0, 2, 1, 3]).unwrap())
    });
    g.bench_function("candle", |b| {
        b.iter(|| black_box(&c_p).permute((0, 2, 1, 3)).unwrap())
    });
    g.bench_function("ndarray_arc", |b| {
        b.iter(|| black_box(&a_p).clone().permuted_axes(IxDyn(&[0, 2, 1, 3])))
    });
    g.bench_function("ndarray_view", |b| {
        b.iter(|| black_box(&v_p).view().permuted_axes(IxDyn(&[0, 2, 1, 3])))
    });
    g.finish();

    // B4: [1, 64] broadcast to [512, 64] (ndarray only has a borrowed form).
    let mut g = c.benchmark_group("expand");
    g.bench_function("ours", |b| {
        b.iter(|| black_box(&t_e).expand(&[512, 64]).unwrap())
    });
    g.bench_function("candle", |b| {
        b.iter(|| black_box(&c_e).broadcast_as((512, 64)).unwrap())
    });
    g.bench_function("ndarray_view", |b| {
        b.iter(|| black_box(v_e).broadcast(IxDyn(&[512, 64])).unwrap())
    });
    g.finish();

    // A leading unit dim on M.
    let mut g = c.benchmark_group("unsqueeze");
    g.bench_function("ours", |b| b.iter(|| black_box(&t_m).unsqueeze(0).unwrap()));
    g.bench_function("candle", |b| {
        b.iter(|| black_box(&c_m).unsqueeze(0).unwrap())
    });
    g.bench_function("ndarray_arc", |b| {
        b.iter(|| black_box(&a_m).clone().insert_axis(Axis(0)))
    });
    g.bench_function("ndarray_view", |b| {
        b.iter(|| black_box(&v_m).view().insert_axis(Axis(0)))
    });
    g.finish();

    // M read as its transpose through explicit geometry (checked against
    // the storage). candle has no `as_strided`; ndarray's closest is
    // building a view over the slice with explicit strides.
    let mut g = c.benchmark_group("as_strided");
    g.bench_function("ours", |b| {
        b.iter(|| {
            black_box(&t_m)
                .as_strided(&[1024, 1024], &[1, 1024], Some(0))
                .unwrap()
        })
    });
    g.bench_function("ours_inference", |b| {
        b.iter(|| {
            black_box(&t_m_inf)
                .as_strided(&[1024, 1024], &[1, 1024], Some(0))
                .unwrap()
        })
    });
    let flat = a_m.as_slice().unwrap();
    g.bench_function("ndarray_view", |b| {
        b.iter(|| {
            ArrayViewD::from_shape(
                IxDyn(&[1024, 1024]).strides(IxDyn(&[1, 1024])),
                black_box(flat),
            )
            .unwrap()
        })
    });
    g.finish();

    // B13: narrow -> transpose -> unsqueeze(0) -> expand (four views, the
    // intermediates dropped inside the timed region).
    let mut g = c.benchmark_group("chain4");
    g.bench_function("ours", |b| {
        b.iter(|| {
            black_box(&t_m)
                .narrow(0, 0, 512)
                .unwrap()
                .transpose(0, 1)
                .unwrap()
                .unsqueeze(0)
                .unwrap()
                .expand(&[4, 1024, 512])
                .unwrap()
        })
    });
    g.bench_function("candle", |b| {
        b.iter(|| {
            black_box(&c_m)
                .narrow(0, 0, 512)
                .unwrap()
                .t()
                .unwrap()
                .unsqueeze(0)
                .unwrap()
                .broadcast_as((4, 1024, 512))
                .unwrap()
        })
    });
    g.bench_function("ndarray_view", |b| {
        b.iter(|| {
            // `broadcast` borrows, so the chain ends in a borrowed view of
            // the (owned) inserted-axis view; return a view of the result's
            // shape to keep the whole chain inside the timed region.
            let v = black_box(&v_m)
                .slice(s![0..512, ..])
                .reversed_axes()
                .insert_axis(Axis(0));
            let e = v.broadcast(IxDyn(&[4, 1024, 512])).unwrap();
            black_box(e.shape().len())
        })
    });
    g.finish();

    // B9: fill a strided view in place (columns 1..3 of M). Data, not
    // metadata, but it is the write-through-view path.
    // The guard path: what every element access pays to lock the storage
    // (the re-entrancy check of the thread's held guards included), without
    // element work: a read guard, a write guard, and one element read and
    // written through the typed accessors.
    let mut g = c.benchmark_group("guard_path");
    g.bench_function("read_guard", |b| {
        b.iter(|| black_box(&t_m).read::<f32>().is_ok())
    });
    g.bench_function("write_guard", |b| {
        b.iter(|| black_box(&t_m).write::<f32>().is_ok())
    });
    g.bench_function("get", |b| {
        b.iter(|| black_box(&t_m).get::<f32>(black_box(&[3, 5])).unwrap())
    });
    g.bench_function("set", |b| {
        b.iter(|| black_box(&t_m).set::<f32>(black_box(&[3, 5]), 1.0).unwrap())
    });
    g.finish();

    let mut g = c.benchmark_group("fill_view");
    g.bench_function("ours", |b| {
        b.iter(|| {
            black_box(&t_m)
                .narrow(1, 1, 2)
                .unwrap()
                .fill_(0.0f32)
                .unwrap()
        })
    });
    g.bench_function("candle", |b| {
        b.iter(|| black_box(&c_m).narrow(1, 1, 2).unwrap().zero_set().unwrap())
    });
    let mut a9 = nd(&M);
    g.bench_function("ndarray_view", |b| {
        b.iter(|| black_box(&mut a9).slice_mut(s![.., 1..3]).fill(0.0))
    });
    g.finish();
}
