//! Lazy initialisation (issue #13): an `empty` tensor that is overwritten in
//! full is never zero-filled, proved by counting the lazy fills
//! (`c10_storage::lazy_fill_count`, process-wide: this binary has one test
//! so nothing else fills meanwhile), not by timing.

use aten_shape::prelude::*;
use c10_core::{MemoryFormat, ScalarType, Tensor};
use c10_storage::lazy_fill_count;

/// 4 MiB of f32 (the case); smaller under Miri.
const N: i64 = if cfg!(miri) { 256 } else { 1 << 20 };

#[test]
fn full_overwrites_never_fill_and_partial_ones_fill_once() {
    let src = Tensor::arange(0.0, N as f64, 1.0, ScalarType::Float).unwrap();
    let before = lazy_fill_count();

    // `empty` + a full `copy_`: no fill.
    let dst = Tensor::empty(&[N], ScalarType::Float).unwrap();
    dst.copy_(&src).unwrap();
    assert_eq!(lazy_fill_count(), before, "empty + full copy_ zero-filled");
    assert_eq!(dst.get::<f32>(&[N - 1]).unwrap(), (N - 1) as f32);
    assert_eq!(lazy_fill_count(), before, "reading it afterwards filled");

    // A full copy with a dtype conversion and a transposed (but dense)
    // destination: no fill either.
    let m = src.view(&[N / 64, 64]).unwrap();
    let dst = Tensor::empty(&[64, N / 64], ScalarType::Double)
        .unwrap()
        .t()
        .unwrap();
    dst.copy_(&m).unwrap();
    assert_eq!(lazy_fill_count(), before, "dense transposed destination");
    assert_eq!(dst.get::<f64>(&[1, 3]).unwrap(), 67.0);

    // `full`, `ones`, `fill_` of a whole `empty`, `empty_like` + copy:
    // no fill.
    let f = Tensor::full(&[N], 3.5, ScalarType::Float).unwrap();
    let o = Tensor::ones(&[N / 2, 2], ScalarType::Int).unwrap();
    let e = Tensor::empty(&[N], ScalarType::Float).unwrap();
    e.fill_(1.0).unwrap();
    let like = src.empty_like(MemoryFormat::Preserve).unwrap();
    like.copy_(&src).unwrap();
    assert_eq!(lazy_fill_count(), before, "whole fills and empty_like");
    assert_eq!(f.get::<f32>(&[7]).unwrap(), 3.5);
    assert_eq!(o.get::<i32>(&[3, 1]).unwrap(), 1);
    assert_eq!(like.get::<f32>(&[9]).unwrap(), 9.0);

    // Partial writes fill exactly once, before the write.
    let p = Tensor::empty(&[N], ScalarType::Float).unwrap();
    p.narrow(0, 0, N / 2)
        .unwrap()
        .copy_(&src.narrow(0, 0, N / 2).unwrap())
        .unwrap();
    assert_eq!(lazy_fill_count(), before + 1, "a half copy fills once");
    p.narrow(0, N / 2, N / 2).unwrap().fill_(5.0).unwrap();
    assert_eq!(p.get::<f32>(&[N - 1]).unwrap(), 5.0);
    assert_eq!(
        lazy_fill_count(),
        before + 1,
        "the second half does not fill again"
    );

    // Reading an untouched `empty` fills once; a strided view that skips
    // bytes (every other element) is not a full overwrite.
    let r = Tensor::empty(&[N], ScalarType::Float).unwrap();
    assert_eq!(r.get::<f32>(&[0]).unwrap(), 0.0);
    assert_eq!(lazy_fill_count(), before + 2);
    let s = Tensor::empty(&[N], ScalarType::Float).unwrap();
    s.as_strided(&[N / 2], &[2], Some(0))
        .unwrap()
        .fill_(1.0)
        .unwrap();
    assert_eq!(lazy_fill_count(), before + 3);
    assert_eq!(s.get::<f32>(&[1]).unwrap(), 0.0);
}
