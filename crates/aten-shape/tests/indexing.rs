//! Basic indexing (`aten_shape::indexing`) and the `s!` macro.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use aten_shape::indexing::{self, TensorIndex};
use aten_shape::prelude::*;
use aten_shape::s;
use c10_core::{ScalarType, TensorError, TensorOptions};

fn arange(sizes: &[i64]) -> Tensor {
    let n: i64 = sizes.iter().product();
    Tensor::arange(0, n, 1, ScalarType::Long)
        .unwrap()
        .view(sizes)
        .unwrap()
}

fn geom(t: &Tensor) -> (Vec<i64>, Vec<i64>, i64) {
    (t.sizes().to_vec(), t.strides().to_vec(), t.storage_offset())
}

#[test]
fn macro_forms() {
    let n = 3usize;
    let got = s![0, .., 1.., ..2, 1..3, 1..=2, ..=-1, 2..;2, ..;3, None, ..., n, -1i64];
    let want = [
        TensorIndex::Int(0),
        TensorIndex::slice(None, None, 1),
        TensorIndex::slice(Some(1), None, 1),
        TensorIndex::slice(None, Some(2), 1),
        TensorIndex::slice(Some(1), Some(3), 1),
        TensorIndex::slice(Some(1), Some(3), 1),
        TensorIndex::slice(None, None, 1),
        TensorIndex::slice(Some(2), None, 2),
        TensorIndex::slice(None, None, 3),
        TensorIndex::None,
        TensorIndex::Ellipsis,
        TensorIndex::Int(3),
        TensorIndex::Int(-1),
    ];
    assert_eq!(got, want);
    assert!(s![].is_empty());
    assert_eq!(s![true], [TensorIndex::Bool(true)]);
}

#[test]
fn views_match_python() {
    let x = arange(&[2, 3, 4]);
    // x[1, ..., None, 1::2]
    assert_eq!(
        geom(&x.i(s![1, ..., None, 1..;2]).unwrap()),
        (vec![3, 1, 2], vec![4, 4, 2], 13)
    );
    // x[-1:10, -5:2] clamps
    assert_eq!(
        geom(&x.i(s![-1..10, -5..2]).unwrap()),
        (vec![1, 2, 4], vec![12, 4, 1], 12)
    );
    // x[5:] is empty with the clamped offset
    assert_eq!(
        geom(&x.i(s![5..]).unwrap()),
        (vec![0, 3, 4], vec![12, 4, 1], 24)
    );
    // x[...] is an alias, not the same handle
    let a = x.i(s![...]).unwrap();
    assert!(a.is_set_to(&x) && !a.is_same(&x));
    // x[()] too
    assert!(x.i(s![]).unwrap().is_set_to(&x));
    // 0-dim integer tensor indices select
    let i = Tensor::from_vec(vec![-1i64], &[]).unwrap();
    assert_eq!(x.i([TensorIndex::from(&i)]).unwrap().sizes(), &[3, 4]);
    // several ellipses: PyTorch's walk
    assert_eq!(x.i(s![0, ..., ...]).unwrap().sizes(), &[3, 4]);
}

#[test]
fn errors_match_python() {
    let x = arange(&[2, 3]);
    let msg = |r: c10_core::Result<Tensor>| r.unwrap_err().to_string();
    assert_eq!(
        msg(x.i(s![0, 3])),
        "index 3 is out of bounds for dimension 1 with size 3"
    );
    assert_eq!(
        msg(x.i(s![None, 0, 3])),
        "index 3 is out of bounds for dimension 2 with size 3"
    );
    assert_eq!(
        msg(x.i(s![0, 0, 0])),
        "too many indices for tensor of dimension 2"
    );
    assert_eq!(msg(x.i(s![..;0])), "slice step cannot be zero");
    assert_eq!(
        msg(x.i([TensorIndex::slice(None, None, -1)])),
        "step must be greater than zero"
    );
    let z = Tensor::from_vec(vec![5i64], &[]).unwrap();
    assert!(msg(z.i(s![0])).starts_with("invalid index of a 0-dim tensor."));
    assert_eq!(
        msg(z.index_ints(&[0])),
        "too many indices for tensor of dimension 0"
    );
    assert_eq!(
        msg(z.i(s![..])),
        "slice() cannot be applied to a 0-dim tensor."
    );
    assert!(x.i(s![0, 3]).unwrap_err().is_index_error());
    assert_eq!(
        x.i(s![..;0]).unwrap_err().kind(),
        c10_core::ErrorKind::Value
    );
    // advanced indexing is refused after the basic checks
    assert!(matches!(x.i(s![true]), Err(TensorError::NotImplemented(_))));
    let idx = Tensor::from_vec(vec![0i64, 1], &[2]).unwrap();
    assert!(matches!(
        x.i([TensorIndex::from(idx)]),
        Err(TensorError::NotImplemented(_))
    ));
    assert_eq!(
        msg(x.i(s![true, 0, 5])),
        "index 5 is out of bounds for dimension 2 with size 3"
    );
}

#[test]
fn indexed_assignment() {
    let x = Tensor::zeros(&[2, 3], TensorOptions::new().dtype(ScalarType::Long)).unwrap();
    let v = x.i(s![0]).unwrap();
    x.index_put_scalar(s![.., 1..], 4).unwrap();
    assert_eq!(x.to_vec::<i64>().unwrap(), vec![0, 4, 4, 0, 4, 4]);
    assert_eq!((x.version().unwrap(), v.version().unwrap()), (1, 1));
    // broadcast source without its leading 1s, one bump
    let src = Tensor::from_vec(vec![7i64, 8, 9], &[1, 1, 3]).unwrap();
    x.index_put_tensor(s![1], &src).unwrap();
    assert_eq!(x.to_vec::<i64>().unwrap(), vec![0, 4, 4, 7, 8, 9]);
    assert_eq!(x.version().unwrap(), 2);
    // a 0-dim source fills (converted), through a step
    let half = Tensor::from_vec(vec![2.7f64], &[]).unwrap();
    x.index_put_tensor(s![.., ..;2], &half).unwrap();
    assert_eq!(x.to_vec::<i64>().unwrap(), vec![2, 4, 2, 2, 8, 2]);
    // errors leave the tensor and its version alone
    let bad = Tensor::from_vec(vec![1i64, 2, 3, 4], &[4]).unwrap();
    assert_eq!(
        x.index_put_tensor(s![0], &bad).unwrap_err().to_string(),
        "The expanded size of the tensor (3) must match the existing size (4) at non-singleton dimension 0.  Target sizes: [3].  Tensor sizes: [4]"
    );
    assert_eq!(
        indexing::index_put_scalar(&x, &s![0, 0, 0], 1)
            .unwrap_err()
            .to_string(),
        "too many indices for tensor of dimension 2"
    );
    let u = Tensor::zeros(&[3], TensorOptions::new().dtype(ScalarType::Byte)).unwrap();
    assert_eq!(
        u.index_put_scalar(s![0], 300).unwrap_err().to_string(),
        "value cannot be converted to type uint8_t without overflow"
    );
    assert_eq!(x.version().unwrap(), 3);
    assert_eq!(u.version().unwrap(), 0);
}

#[test]
fn zero_dim_complex_value_fills_both_parts() {
    use c10_core::scalar_type::Complex64;
    let o = TensorOptions::new().dtype(ScalarType::ComplexFloat);
    let x = Tensor::zeros(&[3], o).unwrap();
    let v = Tensor::full(&[], c10_core::Scalar::Complex(1.0, 2.0), o).unwrap();
    let all = [TensorIndex::Slice {
        start: Some(1),
        stop: None,
        step: 1,
    }];
    indexing::index_put_tensor(&x, &all, &v).unwrap();
    let z = Complex64::new(1.0, 2.0);
    assert_eq!(
        x.to_vec::<Complex64>().unwrap(),
        [Complex64::new(0.0, 0.0), z, z]
    );
    // A real destination takes the real part, as PyTorch's copy does.
    let r = Tensor::zeros(&[2], ScalarType::Float).unwrap();
    indexing::index_put_tensor(&r, &all, &v).unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap(), [0.0, 1.0]);
}
