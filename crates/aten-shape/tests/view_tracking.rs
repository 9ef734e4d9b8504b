//! View tracking (`Tensor::view_base`, `Tensor::is_view`: PyTorch's `_base`
//! and `_is_view()`), op by op, with the answers PyTorch 2.15 gives: which
//! ops make a view, that the base of a view of a view is the first base,
//! and the tensors that are not views (`detach`, `view(dtype)`, a copy
//! made by `reshape`, views of inference tensors).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use aten_shape::copy::CopyOps;
use aten_shape::views::ViewOps;
use c10_core::{GradMode, InferenceMode, MemoryFormat, Result, ScalarType, Tensor, TensorOptions};

/// A [2, 3, 4] float tensor with values 0..24 that is not itself a view.
fn base() -> Tensor {
    Tensor::arange(0, 24, 1, ScalarType::Float)
        .and_then(|t| t.view(&[2, 3, 4]))
        .and_then(|t| t.clone_in(MemoryFormat::Contiguous))
        .unwrap()
}

type Op = fn(&Tensor) -> Result<Tensor>;

/// Every op PyTorch 2.15 answers `_is_view() == True` and `_base is x`
/// for (checked with torch 2.15.0 on a contiguous [2, 3, 4] `x`, and on
/// `x.view(2, 3, 4)`, whose result's `_base` is `x` too).
const VIEW_OPS: &[(&str, Op)] = &[
    ("view", |t| t.view(&[6, 4])),
    ("view_as", |t| t.view_as(t)),
    ("reshape (viewable)", |t| t.reshape(&[6, 4])),
    ("reshape (same shape)", |t| t.reshape(&[2, 3, 4])),
    ("reshape_as", |t| t.reshape_as(t)),
    ("slice", |t| t.slice(1, Some(1), None, 1)),
    ("slice (everything)", |t| t.slice(0, None, None, 1)),
    ("narrow", |t| t.narrow(0, 0, 2)),
    ("select", |t| t.select(0, 0)),
    ("unbind", |t| Ok(t.unbind(0)?.remove(0))),
    ("split", |t| Ok(t.split(2, 0)?.remove(0))),
    ("split into one piece", |t| Ok(t.split(5, 0)?.remove(0))),
    ("split_with_sizes", |t| {
        Ok(t.split_with_sizes(&[1, 1], 0)?.remove(0))
    }),
    ("chunk", |t| Ok(t.chunk(1, 0)?.remove(0))),
    ("tensor_split", |t| Ok(t.tensor_split(1, 0)?.remove(0))),
    ("tensor_split_indices", |t| {
        Ok(t.tensor_split_indices(&[1], 0)?.remove(0))
    }),
    ("transpose", |t| t.transpose(0, 1)),
    ("transpose (same dim)", |t| t.transpose(0, 0)),
    ("t of a matrix", |t| t.select(0, 0)?.t()),
    ("mT", |t| t.mt()),
    ("permute", |t| t.permute(&[0, 1, 2])),
    ("movedim", |t| t.movedim(&[0], &[0])),
    ("moveaxis", |t| t.moveaxis(&[0], &[1])),
    ("swapaxes", |t| t.swapaxes(0, 1)),
    ("expand", |t| t.expand(&[2, 3, 4])),
    ("expand_as", |t| t.expand_as(t)),
    ("broadcast_to", |t| t.broadcast_to(&[2, 3, 4])),
    ("squeeze (nothing to squeeze)", |t| t.squeeze()),
    ("squeeze_dim", |t| t.squeeze_dim(0)),
    ("squeeze_dims", |t| t.squeeze_dims(&[0, 1])),
    ("unsqueeze", |t| t.unsqueeze(0)),
    ("flatten", |t| t.flatten(0, -1)),
    ("unflatten", |t| t.unflatten(2, &[2, 2])),
    ("ravel", |t| t.ravel()),
    ("diagonal", |t| t.diagonal(0, 0, 1)),
    ("unfold", |t| t.unfold(2, 2, 1)),
    ("alias", |t| t.alias()),
    ("as_strided", |t| t.as_strided(&[2], &[1], None)),
    ("index_ints", |t| t.index_ints(&[0])),
];

#[test]
fn every_view_op_records_the_root_base() -> Result<()> {
    for (name, op) in VIEW_OPS {
        let x = base();
        let v = op(&x)?;
        assert!(v.is_view(), "{name}: not a view");
        assert!(
            v.view_base().is_some_and(|b| b.is_same(&x)),
            "{name}: base is not x"
        );
        // Through a first view, the base is still x (never a view).
        let vv = op(&x.view(&[2, 3, 4])?)?;
        assert!(
            vv.view_base()
                .is_some_and(|b| b.is_same(&x) && !b.is_view()),
            "{name} of a view: base is not x"
        );
        assert!(!x.is_view(), "{name}: the base became a view");
    }
    Ok(())
}

#[test]
fn tensors_that_are_not_views() -> Result<()> {
    let x = base();
    assert!(!x.is_view() && x.view_base().is_none());
    // `detach()` and `.data` alias the storage without being views, also
    // when taken from a view.
    let v = x.view(&[24])?;
    for t in [x.detach(), v.detach(), x.data(), v.data()] {
        assert!(t.is_alias_of(&x) && !t.is_view());
    }
    // `view(dtype)` is not tracked (same element size or not).
    for dtype in [ScalarType::Int, ScalarType::Float, ScalarType::Short] {
        assert!(!x.view_dtype(dtype)?.is_view(), "{dtype:?}");
        assert!(!v.view_dtype(dtype)?.is_view(), "{dtype:?} of a view");
    }
    // `reshape` that must copy, `clone`, `contiguous` of a non-contiguous
    // tensor: new tensors.
    let tr = x.transpose(0, 1)?;
    assert!(!tr.reshape(&[-1])?.is_view());
    assert!(!x.clone_in(MemoryFormat::Preserve)?.is_view());
    assert!(!tr.contiguous()?.is_view());
    // Ops that return their input itself (PyTorch: `y is x`): `flatten`
    // of nothing and `contiguous` of a contiguous tensor.
    assert!(x.flatten(0, 0)?.is_same(&x));
    assert!(x.contiguous()?.is_same(&x));
    Ok(())
}

#[test]
fn a_view_keeps_its_base_alive_and_the_base_is_the_same_impl() -> Result<()> {
    let v = {
        let x = base();
        x.select(0, 1)?.slice(0, Some(1), None, 1)?
    };
    // x is gone as a name; the view still holds it.
    let b = v.view_base().expect("a view");
    assert_eq!(b.sizes(), &[2, 3, 4]);
    assert_eq!(b.to_vec::<f32>()?.len(), 24);
    assert!(b.view_base().is_none());
    // Two reads give the same TensorImpl (PyTorch's `v._base is v._base`).
    assert!(b.is_same(v.view_base().expect("a view")));
    Ok(())
}

#[test]
fn inference_tensors_make_untracked_views() -> Result<()> {
    let normal = base();
    let (inf, view_in_mode, inf_view_in_mode) = {
        let _guard = InferenceMode::new();
        let inf = Tensor::zeros(&[4], TensorOptions::new())?;
        // A view of a normal tensor made in inference mode is tracked.
        let view_in_mode = normal.view(&[24])?;
        let inf_view_in_mode = inf.view(&[2, 2])?;
        (inf, view_in_mode, inf_view_in_mode)
    };
    assert!(view_in_mode.view_base().is_some_and(|b| b.is_same(&normal)));
    // Views of an inference tensor, in the mode or outside it, are not.
    assert!(inf.is_inference());
    assert!(!inf_view_in_mode.is_view());
    assert!(!inf.view(&[2, 2])?.is_view());
    Ok(())
}

#[test]
fn grad_mode_and_requires_grad_do_not_change_tracking() -> Result<()> {
    let w = Tensor::zeros(&[3], TensorOptions::new().requires_grad(true))?;
    let v = w.view(&[3])?;
    assert!(v.view_base().is_some_and(|b| b.is_same(&w)));
    assert!(!v.detach().is_view());
    let x = base();
    let _no_grad = GradMode::disable();
    assert!(x.view(&[24])?.is_view());
    Ok(())
}

#[test]
fn a_plain_tensor_and_a_view_allocate_no_autograd_metadata() -> Result<()> {
    let x = base();
    let v = x.view(&[24])?.transpose(0, 0)?;
    assert!(!x.has_autograd_meta() && !v.has_autograd_meta());
    assert!(v.is_view());
    Ok(())
}

#[test]
fn in_place_metadata_ops_keep_a_view_a_view() -> Result<()> {
    let x = base();
    let mut v = x.view(&[6, 4])?;
    let other = v.clone(); // shared: `t_` copies the TensorImpl first
    v.t_()?;
    assert_eq!(v.sizes(), &[4, 6]);
    assert!(v.view_base().is_some_and(|b| b.is_same(&x)));
    assert!(other.view_base().is_some_and(|b| b.is_same(&x)));
    Ok(())
}

type InPlace = fn(&mut Tensor) -> Result<()>;

/// Every in-place metadata op, as PyTorch 2.15 runs them on a [2, 3] view
/// `v = b[:, :2]` (checked with torch 2.15.0 on tensors without
/// `requires_grad`): none of them changes `_base` or `_is_view()`, of the
/// view or of its base, including `resize_` (refused only under autograd)
/// and `set_` to another tensor or storage.
const IN_PLACE: &[(&str, InPlace)] = &[
    ("t_", |t| t.t_()),
    ("transpose_", |t| t.transpose_(0, 1)),
    ("unsqueeze_", |t| t.unsqueeze_(0)),
    ("squeeze_", |t| {
        t.unsqueeze_(0).and_then(|()| t.squeeze_(None))
    }),
    ("as_strided_", |t| t.as_strided_(&[2], &[1], None)),
    ("resize_ (same numel)", |t| t.resize_(&[2, 2], None)),
    ("resize_ (growing)", |t| t.resize_(&[4, 4], None)),
    ("set_to", |t| {
        let other = Tensor::zeros(&[3], ScalarType::Float)?;
        t.set_to(&other)
    }),
    ("set_storage", |t| {
        let other = Tensor::zeros(&[3], ScalarType::Float)?;
        t.set_storage(other.storage())
    }),
    ("set_", |t| {
        let other = Tensor::zeros(&[3], ScalarType::Float)?;
        t.set_(other.storage(), 1, &[2], &[1])
    }),
];

#[test]
fn in_place_metadata_ops_on_a_view_keep_its_base() -> Result<()> {
    for (name, op) in IN_PLACE {
        let b = Tensor::zeros(&[2, 3], ScalarType::Float)?;
        let mut v = b.narrow(1, 0, 2)?;
        let held = v.clone(); // a second handle: the op copies the TensorImpl
        op(&mut v)?;
        for (what, t) in [("the view", &v), ("the other handle", &held)] {
            assert!(t.is_view(), "{name}: {what} is no longer a view");
            assert!(
                t.view_base().is_some_and(|x| x.is_same(&b)),
                "{name}: {what}'s base changed"
            );
        }
        assert!(!b.is_view(), "{name}: the base became a view");
        // A view of the modified view still records the root base.
        let vv = v.alias()?;
        assert!(vv.view_base().is_some_and(|x| x.is_same(&b)), "{name}");
    }
    Ok(())
}

#[test]
fn in_place_metadata_ops_on_a_base_keep_it_a_base() -> Result<()> {
    for (name, op) in IN_PLACE {
        let mut b = Tensor::zeros(&[2, 3], ScalarType::Float)?;
        let v = b.select(0, 0)?;
        let before = v.view_base().cloned().unwrap();
        op(&mut b)?;
        assert!(!b.is_view() && b.view_base().is_none(), "{name}");
        // The view still names the TensorImpl it was made from (PyTorch's
        // `v._base is b` holds after `b.t_()`, `b.resize_`, `b.set_`).
        assert!(v.view_base().is_some_and(|x| x.is_same(&before)), "{name}");
    }
    Ok(())
}

#[test]
fn detach_of_a_view_is_not_a_view() -> Result<()> {
    let b = Tensor::zeros(&[2, 3], ScalarType::Float)?;
    let v = b.select(0, 0)?;
    let d = v.detach();
    assert!(!d.is_view() && d.view_base().is_none());
    assert!(d.is_alias_of(&b));
    assert!(v.view_base().is_some_and(|x| x.is_same(&b)));
    Ok(())
}
