#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Shape errors carry their kind and data: callers branch on
//! `ShapeErrorKind`, the message stays PyTorch's text, and the Python
//! class (`ErrorKind`) is PyTorch's for each op.

use aten_shape::views::{self, ViewOps};
use c10_core::{ErrorKind, ScalarType, ShapeError, ShapeErrorKind, Tensor, TensorError};

fn shape(e: TensorError) -> ShapeError {
    e.shape_error()
        .cloned()
        .unwrap_or_else(|| panic!("not a shape error: {e:?}"))
}

fn m() -> Tensor {
    Tensor::zeros(&[2, 3], ScalarType::Float).unwrap()
}

#[test]
fn select_out_of_range_names_dim_index_and_sizes() {
    let e = m().select(1, 5).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index);
    assert_eq!(
        e.to_string(),
        "select(): index 5 out of range for tensor of size [2, 3] at dimension 1"
    );
    let s = shape(e);
    assert_eq!(s.kind(), ShapeErrorKind::IndexOutOfRange);
    assert_eq!(
        (s.dim(), s.index(), s.sizes()),
        (Some(1), Some(5), Some(&[2, 3][..]))
    );
}

#[test]
fn zero_dim_errors_keep_pytorchs_classes() {
    let s = Tensor::zeros(&[], ScalarType::Float).unwrap();
    // PyTorch: IndexError for slice and select, RuntimeError for narrow
    // and split.
    for (e, class) in [
        (s.slice(0, None, None, 1).unwrap_err(), ErrorKind::Index),
        (s.select(0, 0).unwrap_err(), ErrorKind::Index),
        (s.narrow(0, 0, 0).unwrap_err(), ErrorKind::Runtime),
        (views::split(&s, 1, 0).unwrap_err(), ErrorKind::Runtime),
    ] {
        assert_eq!(e.kind(), class, "{e}");
        assert_eq!(shape(e).kind(), ShapeErrorKind::ZeroDim);
    }
}

#[test]
fn narrow_bounds_are_structured() {
    let e = m().narrow(1, 4, 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index);
    assert_eq!(
        e.to_string(),
        "start out of range (expected to be in range of [-3, 3], but got 4)"
    );
    let s = shape(e);
    assert_eq!(
        (s.kind(), s.index()),
        (ShapeErrorKind::IndexOutOfRange, Some(4))
    );
    let e = m().narrow(1, 2, 2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Runtime);
    assert_eq!(
        e.to_string(),
        "start (2) + length (2) exceeds dimension size (3)."
    );
    assert_eq!(shape(e).kind(), ShapeErrorKind::InvalidLength);
}

#[test]
fn expand_errors_name_the_dim_and_target() {
    let e = m().expand(&[2, 4]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "The expanded size of the tensor (4) must match the existing size (3) at non-singleton \
         dimension 1.  Target sizes: [2, 4].  Tensor sizes: [2, 3]"
    );
    let s = shape(e);
    assert_eq!(s.kind(), ShapeErrorKind::ExpandMismatch);
    assert_eq!((s.dim(), s.sizes()), (Some(1), Some(&[2, 4][..])));
    let e = m().expand(&[3]).unwrap_err();
    assert_eq!(shape(e).kind(), ShapeErrorKind::ExpandTooFewSizes);
    let e = m().expand(&[-1, 2, 3]).unwrap_err();
    let s = shape(e);
    assert_eq!(
        (s.kind(), s.dim()),
        (ShapeErrorKind::ExpandInferredNewDim, Some(0))
    );
}

#[test]
fn view_of_incompatible_strides_is_its_own_kind() {
    let t = m().transpose(0, 1).unwrap();
    let e = t.view(&[6]).unwrap_err();
    assert!(
        e.to_string().starts_with("view size is not compatible"),
        "{e}"
    );
    let s = shape(e);
    assert_eq!(
        (s.kind(), s.sizes()),
        (ShapeErrorKind::ViewIncompatible, Some(&[6][..]))
    );
}

#[test]
fn dim_lists_ranks_splits_and_geometry_have_kinds() {
    let kind = |e: TensorError| shape(e).kind();
    assert_eq!(
        kind(m().permute(&[0, 0]).unwrap_err()),
        ShapeErrorKind::InvalidDimList
    );
    assert_eq!(
        kind(m().movedim(&[0, 0], &[0, 1]).unwrap_err()),
        ShapeErrorKind::InvalidDimList
    );
    let cube = Tensor::zeros(&[2, 2, 2], ScalarType::Float).unwrap();
    assert_eq!(kind(cube.t().unwrap_err()), ShapeErrorKind::WrongRank);
    assert_eq!(
        kind(views::split_with_sizes(&m(), &[1, 1], 1).unwrap_err()),
        ShapeErrorKind::InvalidSplit
    );
    assert_eq!(
        kind(views::chunk(&m(), 0, 0).unwrap_err()),
        ShapeErrorKind::InvalidSplit
    );
    assert_eq!(
        kind(m().diagonal(0, 1, 1).unwrap_err()),
        ShapeErrorKind::IdenticalDims
    );
    assert_eq!(
        kind(m().unfold(1, 2, 0).unwrap_err()),
        ShapeErrorKind::InvalidStep
    );
    assert_eq!(
        kind(m().unflatten(1, &[2, 2]).unwrap_err()),
        ShapeErrorKind::InvalidUnflatten
    );
    assert_eq!(
        kind(m().as_strided(&[2], &[-1], None).unwrap_err()),
        ShapeErrorKind::InvalidGeometry
    );
    assert_eq!(
        kind(views::broadcast_shapes(&[&[1], &[-1]]).unwrap_err()),
        ShapeErrorKind::BroadcastNegative
    );
}
