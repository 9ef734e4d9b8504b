//! `hsplit`/`vsplit`/`dsplit`, `atleast_1d/2d/3d` and `broadcast_tensors`:
//! geometry, aliasing and PyTorch 2.15's error texts (the expected values
//! were taken from torch 2.15 on the same inputs).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use aten_shape::views::{self, ViewOps};
use c10_core::{ScalarType, Tensor};

fn cube() -> Tensor {
    Tensor::arange(0, 64, 1, ScalarType::Long)
        .and_then(|t| views::view(&t, &[4, 4, 4]))
        .expect("a 4x4x4 tensor")
}

/// (sizes, strides, offset) of each piece.
fn geometry(parts: &[Tensor]) -> Vec<(Vec<i64>, Vec<i64>, i64)> {
    parts
        .iter()
        .map(|p| (p.sizes().to_vec(), p.strides().to_vec(), p.storage_offset()))
        .collect()
}

#[test]
fn directional_splits_match_torch() {
    let x = cube();
    assert_eq!(
        geometry(&x.hsplit(2).unwrap()),
        vec![
            (vec![4, 2, 4], vec![16, 4, 1], 0),
            (vec![4, 2, 4], vec![16, 4, 1], 8)
        ]
    );
    assert_eq!(
        geometry(&x.vsplit_indices(&[1]).unwrap()),
        vec![
            (vec![1, 4, 4], vec![16, 4, 1], 0),
            (vec![3, 4, 4], vec![16, 4, 1], 16)
        ]
    );
    assert_eq!(
        geometry(&x.dsplit_indices(&[1, 1]).unwrap()),
        vec![
            (vec![4, 4, 1], vec![16, 4, 1], 0),
            (vec![4, 4, 0], vec![16, 4, 1], 1),
            (vec![4, 4, 3], vec![16, 4, 1], 1)
        ]
    );
    // A 1-d tensor is split along dim 0 by hsplit.
    let row = views::select(&views::select(&x, 0, 0).unwrap(), 0, 0).unwrap();
    assert_eq!(
        geometry(&views::hsplit_indices(&row, &[1]).unwrap()),
        vec![(vec![1], vec![1], 0), (vec![3], vec![1], 1)]
    );
    // Every piece is a view of the input's storage.
    for p in views::vsplit(&x, 4).unwrap() {
        assert!(p.storage().is_alias_of(x.storage()));
    }
}

#[test]
fn directional_split_errors_match_torch() {
    let x = cube();
    let scalar = Tensor::zeros(&[], ScalarType::Float).unwrap();
    let cases: Vec<(c10_core::Result<Vec<Tensor>>, &str)> = vec![
        (
            views::hsplit(&scalar, 2),
            "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 dimensions!",
        ),
        (
            views::vsplit(&views::select(&x, 0, 0).unwrap().select(0, 0).unwrap(), 2),
            "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!",
        ),
        (
            views::dsplit_indices(&views::select(&x, 0, 0).unwrap(), &[1]),
            "torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with 2 dimensions!",
        ),
        (
            views::hsplit(&x, 3),
            "torch.hsplit attempted to split along dimension 1, but the size of the dimension 4 is not divisible by the split_size 3!",
        ),
        (
            views::dsplit(&x, 0),
            "torch.dsplit attempted to split along dimension 2, but the size of the dimension 4 is not divisible by the split_size 0!",
        ),
    ];
    for (result, expected) in cases {
        assert_eq!(result.unwrap_err().to_string(), expected);
    }
}

#[test]
fn atleast_views_match_torch() {
    let x = cube();
    let s = Tensor::zeros(&[], ScalarType::Float).unwrap();
    let v = views::select(&views::select(&x, 0, 1).unwrap(), 0, 2).unwrap(); // [4], offset 24
    let m = views::transpose(&views::select(&x, 0, 0).unwrap(), 0, 1).unwrap(); // [4, 4] (1, 4)
    let g = |t: &Tensor| (t.sizes().to_vec(), t.strides().to_vec(), t.storage_offset());
    assert_eq!(g(&views::atleast_1d(&s).unwrap()), (vec![1], vec![1], 0));
    assert_eq!(
        g(&views::atleast_2d(&s).unwrap()),
        (vec![1, 1], vec![1, 1], 0)
    );
    assert_eq!(
        g(&views::atleast_3d(&s).unwrap()),
        (vec![1, 1, 1], vec![1, 1, 1], 0)
    );
    assert_eq!(
        g(&views::atleast_2d(&v).unwrap()),
        (vec![1, 4], vec![4, 1], 24)
    );
    assert_eq!(
        g(&views::atleast_3d(&v).unwrap()),
        (vec![1, 4, 1], vec![4, 1, 1], 24)
    );
    assert_eq!(
        g(&views::atleast_3d(&m).unwrap()),
        (vec![4, 4, 1], vec![1, 4, 1], 0)
    );
    // Enough dims already: the same TensorImpl comes back.
    assert!(views::atleast_1d(&v).unwrap().is_same(&v));
    assert!(views::atleast_2d(&m).unwrap().is_same(&m));
    assert!(views::atleast_3d(&x).unwrap().is_same(&x));
}

#[test]
fn broadcast_tensors_match_torch() {
    let a = Tensor::zeros(&[2, 1, 3], ScalarType::Float).unwrap();
    let b = Tensor::zeros(&[3], ScalarType::Float).unwrap();
    let c = Tensor::zeros(&[3, 1], ScalarType::Float).unwrap();
    let out = views::broadcast_tensors(&[a.clone(), b, c]).unwrap();
    assert_eq!(
        geometry(&out),
        vec![
            (vec![2, 3, 3], vec![3, 0, 1], 0),
            (vec![2, 3, 3], vec![0, 0, 1], 0),
            (vec![2, 3, 3], vec![0, 1, 0], 0)
        ]
    );
    let same = views::broadcast_tensors(std::slice::from_ref(&a)).unwrap();
    assert!(same[0].is_same(&a));
    assert!(views::broadcast_tensors(&[]).unwrap().is_empty());
    let err = views::broadcast_tensors(&[
        Tensor::zeros(&[2, 3], ScalarType::Float).unwrap(),
        Tensor::zeros(&[4, 3], ScalarType::Float).unwrap(),
    ])
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0"
    );
}
