//! The in-place metadata ops (`t_`, `transpose_`, `swapaxes_`,
//! `swapdims_`, `squeeze_`, `unsqueeze_`, `as_strided_`, `resize_`,
//! `set_`, `view(dtype)`) against PyTorch's verified behaviour (checklist
//! items of pytorch-reference.md §8 cited where they apply). They live in
//! aten-shape's op families and edit c10-core's `TensorImpl` through its
//! copy-on-write hook.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use aten_shape::views::{self, ViewOps};
use c10_core::{InferenceMode, MemoryFormat, ScalarType, Tensor, TensorError};

/// Miri runs these too (the storage growth paths are unsafe underneath);
/// a smaller size keeps it quick there.
const N: i64 = if cfg!(miri) { 64 } else { 1 << 16 };

fn f32s(n: i64) -> Tensor {
    Tensor::arange(0, n, 1, ScalarType::Float).unwrap()
}

fn msg(e: TensorError) -> String {
    e.to_string()
}

#[test]
fn version_counters() {
    // 27-31
    let x = f32s(4);
    let v = x.as_strided(&[3], &[1], Some(1)).unwrap();
    assert_eq!((x.version().unwrap(), v.version().unwrap()), (0, 0));
    v.set::<f32>(&[0], 5.0).unwrap();
    assert_eq!((x.version().unwrap(), v.version().unwrap()), (1, 1));
    assert!(x.shares_version_counter_with(&v));
    let d = x.detach();
    assert!(d.shares_version_counter_with(&x) && !d.requires_grad() && d.is_alias_of(&x));
    let data = x.data();
    assert!(!data.shares_version_counter_with(&x));
    data.fill_(1.0).unwrap();
    assert_eq!(
        x.version().unwrap(),
        1,
        "writes through .data leave x._version alone"
    );
    assert_eq!(data.version().unwrap(), 1);
    let mut y = x.clone();
    y.unsqueeze_(0).unwrap();
    assert_eq!(x.version().unwrap(), 2, "in-place metadata ops bump");
    // A tensor built over someone else's storage gets its own counter.
    let other =
        Tensor::from_storage(x.storage().clone(), ScalarType::Float, &[4], &[1], 0).unwrap();
    assert!(!other.shares_version_counter_with(&x));
    // Inference tensors.
    let inf = {
        let _g = InferenceMode::new();
        Tensor::zeros(&[2], ScalarType::Float).unwrap()
    };
    assert_eq!(
        msg(inf.version().unwrap_err()),
        "Inference tensors do not track version counter."
    );
    assert!(msg(inf.fill_(1.0).unwrap_err())
        .starts_with("Inplace update to inference tensor outside InferenceMode is not allowed."));
    {
        let _g = InferenceMode::new();
        inf.fill_(2.0).unwrap();
    }
    assert_eq!(inf.to_vec::<f32>().unwrap(), vec![2.0, 2.0]);
    let mut inf2 = inf.clone();
    assert_eq!(
        msg(inf2.set_requires_grad(true).unwrap_err()),
        "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
    );
}

#[test]
fn as_strided_checks() {
    let x = f32s(6);
    // 103, 104
    assert_eq!(
        msg(x.as_strided(&[2, 4], &[3, 1], Some(0)).unwrap_err()),
        "setStorage: sizes [2, 4], strides [3, 1], storage offset 0, and itemsize 4 requiring a storage size of 28 are out of bounds for storage of size 24"
    );
    assert!(x.as_strided(&[2, 0], &[3, 1], Some(100)).is_ok());
    assert_eq!(
        msg(x.as_strided(&[2], &[1, 1], None).unwrap_err()),
        "mismatch in length of strides and shape"
    );
    assert_eq!(
        msg(x.as_strided(&[2, 2], &[-1, 1], None).unwrap_err()),
        "as_strided: Negative strides are not supported at the moment, got strides: [-1, 1]"
    );
    assert_eq!(
        msg(x.as_strided(&[2], &[1], Some(-1)).unwrap_err()),
        "Tensor: invalid storage offset -1"
    );
    assert!(msg(x.as_strided(&[-1], &[1], None).unwrap_err())
        .starts_with("Storage size calculation overflowed"));
    let v = x.as_strided(&[3], &[1], Some(3)).unwrap();
    assert_eq!(
        v.as_strided(&[2], &[1], None).unwrap().storage_offset(),
        3,
        "offset defaults to the input's"
    );
    let mut w = v.clone();
    w.as_strided_(&[2, 2], &[1, 2], Some(1)).unwrap();
    assert_eq!(
        (w.sizes(), w.strides(), w.storage_offset()),
        (&[2, 2][..], &[1, 2][..], 1)
    );
    assert_eq!(
        v.sizes(),
        &[3],
        "other handles keep their metadata (copy-on-write)"
    );
}

#[test]
fn in_place_metadata_ops() {
    let mut t = f32s(6).as_strided(&[2, 3], &[3, 1], None).unwrap();
    t.t_().unwrap();
    assert_eq!((t.sizes(), t.strides()), (&[3, 2][..], &[1, 3][..]));
    t.unsqueeze_(1).unwrap();
    assert_eq!((t.sizes(), t.strides()), (&[3, 1, 2][..], &[1, 6, 3][..]));
    t.squeeze_(None).unwrap();
    assert_eq!(t.sizes(), &[3, 2]);
    t.squeeze_(Some(0)).unwrap();
    assert_eq!(t.sizes(), &[3, 2], "squeeze of a non-1 dim keeps the shape");
    let mut three = f32s(8).as_strided(&[2, 2, 2], &[4, 2, 1], None).unwrap();
    assert_eq!(
        msg(three.t_().unwrap_err()),
        "t_() expects a tensor with <= 2 dimensions, but self is 3D"
    );
    assert!(
        msg(t.unsqueeze_(4).unwrap_err()).contains("expected to be in range of [-3, 2], but got 4")
    );
}

#[test]
fn resize_grows_never_shrinks_and_respects_resizability() {
    // 43-45
    let mut a = Tensor::empty(&[10], ScalarType::Float).unwrap();
    a.resize_(&[2], MemoryFormat::Contiguous).unwrap();
    assert_eq!(a.storage().nbytes(), 40);
    let mut b = Tensor::arange(0, 2, 1, ScalarType::Float).unwrap();
    let view = b.clone();
    b.resize_(&[10], MemoryFormat::Contiguous).unwrap();
    assert_eq!(b.storage().nbytes(), 40);
    assert_eq!(
        view.storage().nbytes(),
        40,
        "every view sees the grown storage"
    );
    assert_eq!(
        &b.to_vec::<f32>().unwrap()[..2],
        &[0.0, 1.0],
        "old bytes are kept"
    );
    assert_eq!(b.version().unwrap(), 1);
    // A storage made from data is resizable like one from the allocator
    // (PyTorch: `torch.tensor([1., 2., 3., 4.]).resize_(8)` works).
    let mut fixed = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    fixed.resize_(&[8], MemoryFormat::Contiguous).unwrap();
    assert_eq!(&fixed.to_vec::<f32>().unwrap()[..4], &[1.0, 2.0, 3.0, 4.0]);
    fixed.resize_(&[2], MemoryFormat::Contiguous).unwrap();
    assert_eq!(fixed.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    assert_eq!(
        msg(fixed.resize_(&[2], MemoryFormat::Preserve).unwrap_err()),
        "Unsupported memory formatPreserve"
    );
}

#[test]
fn set_storage_rules() {
    // 49 and §3.6
    let st16 = Tensor::empty(&[4], ScalarType::Float)
        .unwrap()
        .storage()
        .clone();
    let mut t = Tensor::empty(&[4], ScalarType::Float).unwrap();
    assert_eq!(
        msg(t.set_(&st16, 100, &[4], &[1]).unwrap_err()),
        "setStorage: sizes [4], strides [1], storage offset 100, and itemsize 4 requiring a storage size of 416 are out of bounds for storage of size 16"
    );
    let mut g = Tensor::empty(&[0], ScalarType::Float).unwrap();
    g.set_(&st16, 0, &[2, 3], &[3, 1]).unwrap();
    assert_eq!(st16.nbytes(), 24, "set_ grows a resizable storage");
    let st16b = Tensor::empty(&[4], ScalarType::Float)
        .unwrap()
        .storage()
        .clone();
    let mut h = Tensor::empty(&[2, 3], ScalarType::Float).unwrap();
    assert!(msg(h.set_(&st16b, 0, &[2, 3], &[3, 1]).unwrap_err())
        .contains("out of bounds for storage of size 16"));
    assert_eq!(
        msg(h.set_(&st16b, -1, &[1], &[1]).unwrap_err()),
        "Tensor: invalid storage offset -1"
    );
    assert_eq!(
        msg(h.set_(&st16b, 0, &[1], &[1, 1]).unwrap_err()),
        "unequal size length (1) and stride length (2)"
    );
    // set_ keeps the version counter shared with old views.
    let mut x = f32s(4);
    let old_view = x.as_strided(&[2], &[1], None).unwrap();
    let fresh = Tensor::zeros(&[8], ScalarType::Float).unwrap();
    x.set_(fresh.storage(), 0, &[8], &[1]).unwrap();
    assert!(x.shares_version_counter_with(&old_view));
    assert!(x.is_alias_of(&fresh));
}

/// Growth through `resize_` leaves the old bytes and reads the new tail as
/// zeros (the tail is initialised lazily, not by the allocator).
#[test]
fn resize_growth_reads_zeros_past_the_old_end() {
    let mut t = Tensor::arange(1, 5, 1, ScalarType::Int).unwrap();
    t.resize_(&[N], MemoryFormat::Contiguous).unwrap();
    let v = t.to_vec::<i32>().unwrap();
    assert_eq!(&v[..4], &[1, 2, 3, 4]);
    assert!(v[4..].iter().all(|&x| x == 0));
    // An `empty` that grows before anything is written: all zeros.
    let mut e = Tensor::empty(&[3], ScalarType::Int).unwrap();
    e.resize_(&[N], MemoryFormat::Contiguous).unwrap();
    assert!(e.to_vec::<i32>().unwrap().iter().all(|&x| x == 0));
    // Shrink then grow: the bytes past the shrunk end are not resurrected.
    let mut g = Tensor::full(&[8], 9, ScalarType::Int).unwrap();
    g.resize_(&[2], MemoryFormat::Contiguous).unwrap();
    g.storage().resize(8).unwrap();
    g.resize_(&[8], MemoryFormat::Contiguous).unwrap();
    assert_eq!(g.to_vec::<i32>().unwrap(), [9, 9, 0, 0, 0, 0, 0, 0]);
}

/// `resize_` to the sizes a tensor already has: PyTorch's default
/// (`memory_format=None`, our `Contiguous`) returns before restriding, so a
/// transposed tensor keeps its strides (the conformance corpus records
/// `zeros(2, 2).t().resize_(2, 2)` keeping `(1, 2)`, and ATen's
/// `resize_impl_cpu_` returns early when the sizes match); an explicit
/// channels-last format restrides; new sizes get the format's strides.
#[test]
fn resize_restrides_by_the_memory_format_rule() {
    let mut t = Tensor::zeros(&[3, 4], ScalarType::Float)
        .unwrap()
        .t()
        .unwrap();
    assert_eq!(t.strides(), &[1, 4]);
    t.resize_(&[4, 3], None).unwrap();
    assert_eq!((t.sizes(), t.strides()), (&[4i64, 3][..], &[1i64, 4][..]));
    assert_eq!(t.version().unwrap(), 0, "same sizes: no version bump");
    // An explicit memory format restrides even at the same sizes (issue
    // #25, item 8; PyTorch 2.15: `x.t().resize_(4, 3,
    // memory_format=torch.contiguous_format).stride() == (3, 1)`).
    t.resize_(&[4, 3], MemoryFormat::Contiguous).unwrap();
    assert_eq!((t.sizes(), t.strides()), (&[4i64, 3][..], &[3i64, 1][..]));
    assert_eq!(t.version().unwrap(), 0, "same sizes: no version bump");
    // New sizes: contiguous strides, whatever the old layout.
    t.resize_(&[3, 4], MemoryFormat::Contiguous).unwrap();
    assert_eq!(t.strides(), &[4, 1]);
    // Same sizes with channels-last: restrided.
    let mut n = Tensor::zeros(&[2, 3, 4, 5], ScalarType::Float).unwrap();
    n.resize_(&[2, 3, 4, 5], MemoryFormat::ChannelsLast)
        .unwrap();
    assert_eq!(n.strides(), &[60, 1, 15, 3]);
    assert!(n.is_contiguous_in(MemoryFormat::ChannelsLast));
    // And back to row-major strides when the sizes change.
    n.resize_(&[2, 3, 4, 4], MemoryFormat::Contiguous).unwrap();
    assert_eq!(n.strides(), &[48, 16, 4, 1]);
}

/// The proof ops of the layering issue: `moveaxis` is `movedim`,
/// `swapaxes_`/`swapdims_` are `transpose_`, as PyTorch's aliases.
#[test]
fn moveaxis_and_swap_aliases_match_their_ops() {
    let x = f32s(24).view(&[2, 3, 4]).unwrap();
    for (src, dst) in [(&[0i64][..], &[-1i64][..]), (&[0, 1], &[2, 0]), (&[], &[])] {
        let a = x.moveaxis(src, dst).unwrap();
        let b = x.movedim(src, dst).unwrap();
        assert_eq!((a.sizes(), a.strides()), (b.sizes(), b.strides()));
        assert!(a.is_alias_of(&x));
    }
    assert_eq!(
        msg(x.moveaxis(&[0, 0], &[1, 2]).unwrap_err()),
        msg(x.movedim(&[0, 0], &[1, 2]).unwrap_err())
    );
    for f in [views::swapaxes_, views::swapdims_, views::transpose_] {
        let x = f32s(24).view(&[2, 3, 4]).unwrap();
        let mut t = x.clone();
        f(&mut t, 0, -1).unwrap();
        assert_eq!(
            (t.sizes(), t.strides()),
            (&[4i64, 3, 2][..], &[1i64, 4, 12][..])
        );
        // One bump, seen by every handle on the storage's counter.
        assert_eq!((t.version().unwrap(), x.version().unwrap()), (1, 1));
        // The other handle still sees the old geometry (copy-on-write).
        assert_eq!(x.sizes(), &[2, 3, 4]);
        let mut u = x.clone();
        assert!(f(&mut u, 0, 3).unwrap_err().is_index_error());
        assert_eq!(u.version().unwrap(), 1, "a refused op bumps nothing");
    }
    // Swapping a dim with itself changes nothing but the version.
    let mut s = f32s(24).view(&[2, 3, 4]).unwrap();
    s.swapdims_(1, -2).unwrap();
    assert_eq!((s.sizes(), s.version().unwrap()), (&[2i64, 3, 4][..], 1));
}

/// An in-place op on a handle whose `TensorImpl` is shared changes only
/// that handle (the one documented difference from PyTorch): the
/// copy-on-write hook copies first.
#[test]
fn in_place_ops_copy_a_shared_impl_first() {
    let base = f32s(6).view(&[2, 3]).unwrap();
    let mut a = base.clone();
    a.t_().unwrap();
    a.unsqueeze_(0).unwrap();
    assert_eq!(a.sizes(), &[1, 3, 2]);
    assert_eq!(base.sizes(), &[2, 3]);
    assert!(a.is_alias_of(&base));
    let v = base.view_dtype(ScalarType::Int).unwrap();
    assert_eq!((v.dtype(), v.sizes()), (ScalarType::Int, &[2i64, 3][..]));
    assert_eq!(base.dtype(), ScalarType::Float);
    assert!(v.is_alias_of(&base) && v.shares_version_counter_with(&base));
}

/// A tensor with symbolic sizes runs the in-place ops on its symbolic
/// geometry (as PyTorch does on a FakeTensor), never on the hints, which
/// would silently specialise it.
#[test]
fn in_place_ops_keep_symbolic_tensors_symbolic() {
    use c10_core::sym::{ShapeEnv, SymInt};
    use c10_core::{Device, TensorOptions};
    let env = ShapeEnv::new();
    let a = env.create_symbol(4, "a").unwrap();
    let mut t = Tensor::empty_symint(
        &[a.clone(), SymInt::from(3)],
        TensorOptions::new().device(Device::META),
    )
    .unwrap();
    t.t_().unwrap();
    t.unsqueeze_(0).unwrap();
    t.swapdims_(0, 1).unwrap();
    assert_eq!(t.sym_sizes(), vec![SymInt::from(3), SymInt::from(1), a]);
    assert!(t.has_symbolic_sizes_strides());
}
