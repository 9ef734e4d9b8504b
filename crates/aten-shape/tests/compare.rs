//! `equal`, `allclose`, `iter_dim` and c10-core's `PartialEq`/`iter`,
//! against the values PyTorch 2.x gives for the same calls.

use aten_shape::prelude::*;
use c10_core::{tensor, Device, ScalarType, TensorOptions};

#[test]
fn equal_follows_torch_equal() {
    // torch.equal(torch.tensor([1, 2]), torch.tensor([1., 2.])) -> True
    assert!(tensor![1i64, 2].equal(&tensor![1.0f32, 2.0]).unwrap());
    // different sizes -> False, even with the same elements
    assert!(!tensor![1i64, 2].equal(&tensor![[1i64, 2]]).unwrap());
    // NaN is not equal to itself
    let nan = tensor![f64::NAN];
    assert!(!nan.equal(&nan).unwrap());
    // a layout difference does not matter
    let m = Tensor::arange(0, 6, 1, ScalarType::Int)
        .unwrap()
        .view(&[2, 3])
        .unwrap();
    assert!(m
        .t()
        .unwrap()
        .contiguous()
        .unwrap()
        .equal(&m.t().unwrap())
        .unwrap());
    assert!(!m.t().unwrap().equal(&m.view(&[3, 2]).unwrap()).unwrap());
    // devices must match
    let meta = Tensor::empty(&[2], TensorOptions::new().device(Device::META)).unwrap();
    let err = tensor![1.0f32, 2.0].equal(&meta).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Cannot compare two tensors on different devices. Got: cpu and meta"
    );
}

#[test]
fn partial_eq_needs_the_same_dtype() {
    let a = tensor![[1i32, 2], [3, 4]];
    assert_eq!(a, tensor![[1i32, 2], [3, 4]]);
    assert_ne!(a, tensor![[1i64, 2], [3, 4]]);
    assert_ne!(a, tensor![[1i32, 2], [3, 5]]);
    // a tensor against a view of its own storage (one lock, taken twice
    // would deadlock under a waiting writer): the transpose differs, a
    // full-size view does not
    assert_ne!(a, a.t().unwrap());
    assert_eq!(a, a.view(&[2, 2]).unwrap());
    assert_eq!(tensor![0.0f32], tensor![-0.0f32]);
    let meta = Tensor::empty(&[2], TensorOptions::new().device(Device::META)).unwrap();
    assert_ne!(meta, meta.clone()); // unreadable: unequal, no panic
}

#[test]
fn allclose_uses_torch_formula() {
    // |a - b| <= atol + rtol * |b|, with b the second argument
    let a = tensor![100.0f64];
    let b = tensor![100.1f64];
    assert!(a.allclose(&b, 1e-3, 0.0, false).unwrap()); // 0.1 <= 0.1001
    assert!(!a.allclose(&b, 1e-4, 0.0, false).unwrap());
    assert!(a.allclose(&b, 0.0, 0.11, false).unwrap());
    // infinities: equal ones are close, others are not
    let inf = tensor![f32::INFINITY, 1.0];
    assert!(inf.allclose(&inf, 1e-5, 1e-8, false).unwrap());
    assert!(!inf
        .allclose(&tensor![f32::NEG_INFINITY, 1.0], 1e-5, 1e-8, false)
        .unwrap());
    assert!(!inf
        .allclose(&tensor![1e30f32, 1.0], 1e-5, 1e-8, false)
        .unwrap());
    // equal_nan
    let nan = tensor![f32::NAN, 1.0];
    assert!(!nan.allclose(&nan, 1e-5, 1e-8, false).unwrap());
    assert!(nan.allclose(&nan, 1e-5, 1e-8, true).unwrap());
    assert!(!nan
        .allclose(&tensor![1.0f32, 1.0], 1e-5, 1e-8, true)
        .unwrap());
    // broadcasting: torch.allclose(torch.ones(2, 3), torch.ones(3)) -> True
    let ones = Tensor::ones(&[2, 3], ScalarType::Float).unwrap();
    assert!(ones
        .allclose(
            &Tensor::ones(&[3], ScalarType::Float).unwrap(),
            1e-5,
            1e-8,
            false
        )
        .unwrap());
    assert!(ones
        .allclose(
            &Tensor::ones(&[2], ScalarType::Float).unwrap(),
            1e-5,
            1e-8,
            false
        )
        .is_err());
    // integers
    assert!(tensor![10i64, 20]
        .allclose(&tensor![10i64, 20], 0.0, 0.0, false)
        .unwrap());
    assert!(!tensor![10i64, 20]
        .allclose(&tensor![10i64, 21], 0.0, 0.5, false)
        .unwrap());
}

#[test]
fn allclose_errors_are_torch_s() {
    let f = tensor![1.0f32];
    assert_eq!(
        f.allclose(&tensor![1.0f64], 1e-5, 1e-8, false)
            .unwrap_err()
            .to_string(),
        "Float did not match Double"
    );
    assert_eq!(
        f.allclose(&f, -1.0, 1e-8, false).unwrap_err().to_string(),
        "rtol must be greater than or equal to zero, but got -1"
    );
    assert_eq!(
        f.allclose(&f, 1e-5, -0.5, false).unwrap_err().to_string(),
        "atol must be greater than or equal to zero, but got -0.5"
    );
}

#[test]
fn iter_dim_yields_select_views() {
    let t = Tensor::arange(0, 24, 1, ScalarType::Long)
        .unwrap()
        .view(&[2, 3, 4])
        .unwrap();
    let mids: Vec<Tensor> = t.iter_dim(1).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(mids.len(), 3);
    for (i, m) in mids.iter().enumerate() {
        assert_eq!(m.sizes(), &[2, 4]);
        assert!(m.is_alias_of(&t));
        assert!(m.equal(&t.select(1, i as i64).unwrap()).unwrap());
    }
    assert_eq!(t.iter_dim(-1).unwrap().count(), 4);
    assert!(t.iter_dim(3).is_err());
    let err = aten_shape::compare::iter_dim(&tensor![1i64].select(0, 0).unwrap(), 0)
        .err()
        .unwrap();
    assert_eq!(err.to_string(), "iteration over a 0-d tensor");
}

#[test]
fn element_iterator_walks_logical_order() {
    let t = Tensor::arange(0, 6, 1, ScalarType::Short)
        .unwrap()
        .view(&[2, 3])
        .unwrap();
    let tt = t.t().unwrap();
    assert_eq!(
        tt.iter::<i16>().unwrap().collect::<Vec<_>>(),
        vec![0, 3, 1, 4, 2, 5]
    );
    let e = tensor![1.5f32].expand(&[3]).unwrap();
    assert_eq!(e.iter::<f32>().unwrap().len(), 3);
    let err = t.iter::<f64>().unwrap_err().to_string();
    assert!(err.contains("t.to(ScalarType::Double)?"), "{err}");
    // while the iterator holds the read lock, writing from this thread is
    // refused rather than deadlocking
    let it = t.iter::<i16>().unwrap();
    assert!(t.fill_(1).is_err());
    drop(it);
    t.fill_(1).unwrap();
}
