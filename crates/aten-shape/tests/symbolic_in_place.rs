//! The in-place metadata ops (`t_`, `transpose_`, `squeeze_`,
//! `squeeze_dims_`, `unsqueeze_`) on fake tensors: each leaves exactly the
//! symbolic geometry its out-of-place view gives (PyTorch runs both with
//! the same rules on a FakeTensor), bumps the version once, and refuses
//! what the concrete op refuses.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use aten_shape::views::{self, ViewOps};
use c10_core::sym::ShapeEnv;
use c10_core::{Device, Tensor, TensorOptions};

fn fake() -> Tensor {
    let env = ShapeEnv::new();
    let sizes = [
        env.create_symbol(4, "a").unwrap(),
        env.create_symbol(1, "b").unwrap(),
        env.create_symbol(8, "c").unwrap(),
    ];
    Tensor::empty_symint(&sizes, TensorOptions::new().device(Device::META)).unwrap()
}

fn geometry(t: &Tensor) -> (Vec<String>, Vec<String>, String) {
    let s = |v: Vec<c10_core::sym::SymInt>| v.iter().map(|x| x.to_string()).collect();
    (
        s(t.sym_sizes()),
        s(t.sym_strides()),
        t.sym_storage_offset().to_string(),
    )
}

/// Runs `in_place` on a fresh fake tensor and `view` on another, and
/// compares the geometries (and the version bump).
fn same_as_view(
    in_place: impl FnOnce(&mut Tensor) -> c10_core::Result<()>,
    view: impl FnOnce(&Tensor) -> c10_core::Result<Tensor>,
) -> (Vec<String>, Vec<String>, String) {
    let mut t = fake();
    let before = t.version().unwrap();
    in_place(&mut t).unwrap();
    assert_eq!(t.version().unwrap(), before + 1);
    let v = view(&fake()).unwrap();
    assert_eq!(geometry(&t), geometry(&v));
    assert!(t.has_symbolic_sizes_strides());
    geometry(&t)
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn in_place_metadata_ops_match_their_views_on_fake_tensors() {
    let g = same_as_view(|t| views::transpose_(t, 0, 2), |t| t.transpose(0, 2));
    assert_eq!(g.0, ["s1", "1", "s0"]);
    assert_eq!(g.1, ["1", "s1", "s1"]);
    let g = same_as_view(|t| views::unsqueeze_(t, 1), |t| t.unsqueeze(1));
    assert_eq!(g.0, ["s0", "1", "1", "s1"]);
    let g = same_as_view(|t| views::squeeze_(t, None), |t| t.squeeze());
    assert_eq!(g.0, ["s0", "s1"]);
    let g = same_as_view(|t| views::squeeze_(t, Some(1)), |t| t.squeeze_dim(1));
    assert_eq!(g.0, ["s0", "s1"]);
    same_as_view(
        |t| views::squeeze_dims_(t, &[0, 1]),
        |t| t.squeeze_dims(&[0, 1]),
    );
    let g = same_as_view(
        |t| {
            *t = t.select(1, 0)?;
            views::t_(t)
        },
        |t| t.select(1, 0)?.t(),
    );
    assert_eq!(g.0, ["s1", "s0"]);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn in_place_refusals_on_fake_tensors_leave_the_tensor_alone() {
    let mut t = fake();
    let before = (geometry(&t), t.version().unwrap());
    let e = views::t_(&mut t).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t_() expects a tensor with <= 2 dimensions, but self is 3D"
    );
    assert!(views::transpose_(&mut t, 0, 3).is_err());
    assert!(views::unsqueeze_(&mut t, 5).is_err());
    assert_eq!((geometry(&t), t.version().unwrap()), before);
}
