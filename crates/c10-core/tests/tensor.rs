//! TensorImpl and Tensor semantics against PyTorch's verified behaviour
//! (checklist items of pytorch-reference.md §8 cited where they apply).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use c10_core::{
    Device, DispatchKey, InferenceMode, MemoryFormat, ScalarType, Storage, Tensor, TensorError,
    TensorOptions,
};

fn f32s(n: i64) -> Tensor {
    Tensor::arange(0, n, 1, ScalarType::Float).unwrap()
}

fn msg(e: TensorError) -> String {
    e.to_string()
}

#[test]
fn default_and_zero_dim_layouts() {
    // 1, 2, 3
    let e = Tensor::empty(&[0], ScalarType::Float).unwrap();
    assert_eq!((e.sizes(), e.strides(), e.numel()), (&[0][..], &[1][..], 0));
    assert!(e.is_contiguous() && e.is_non_overlapping_and_dense());
    let s = Tensor::empty(&[], ScalarType::Float).unwrap();
    assert_eq!((s.dim(), s.numel()), (0, 1));
    assert!(s.is_contiguous());
    assert_eq!(
        Tensor::empty(&[2, 0, 3], ScalarType::Float)
            .unwrap()
            .strides(),
        &[3, 3, 1]
    );
    assert_eq!(
        Tensor::empty(&[2, 3, 4], ScalarType::Float)
            .unwrap()
            .strides(),
        &[12, 4, 1]
    );
    // 39, 40
    let t = Tensor::empty(&[2, 3], ScalarType::Float).unwrap();
    assert_eq!(t.storage().nbytes(), 24);
    assert_eq!(
        Tensor::empty(&[0], ScalarType::Float)
            .unwrap()
            .storage()
            .nbytes(),
        0
    );
    let v = Tensor::empty(&[10], ScalarType::Float)
        .unwrap()
        .as_strided(&[3], &[1], Some(2))
        .unwrap();
    assert_eq!((v.storage().nbytes(), v.nbytes()), (40, 12));
}

#[test]
fn factory_errors_use_pytorch_messages() {
    // 109, 110, 111, 112
    assert_eq!(
        msg(Tensor::empty(&[2, -3], ScalarType::Float).unwrap_err()),
        "Trying to create tensor with negative dimension -3: [2, -3]"
    );
    assert_eq!(
        msg(Tensor::empty(&[1 << 62, 4], ScalarType::Float).unwrap_err()),
        "Storage size calculation overflowed with sizes=[4611686018427387904, 4]"
    );
    assert!(
        msg(Tensor::empty(&[1 << 31, 1 << 31, 8], ScalarType::Float).unwrap_err())
            .starts_with("Storage size calculation overflowed")
    );
    assert_eq!(
        msg(Tensor::empty_strided(&[1 << 40, 1 << 40], &[1 << 40, 1], ScalarType::Float).unwrap_err()),
        "Storage size calculation overflowed with sizes=[1099511627776, 1099511627776] and strides=[1099511627776, 1]"
    );
    assert!(
        msg(Tensor::empty_strided(&[2, 3], &[-1, 1], ScalarType::Float).unwrap_err())
            .starts_with("Storage size calculation overflowed")
    );
    assert_eq!(
        msg(Tensor::empty(&[-1], ScalarType::Float).unwrap_err()),
        "Trying to create tensor with negative dimension -1: [-1]"
    );
    // 105
    assert_eq!(
        Tensor::empty_strided(&[2, 3], &[1, 2], ScalarType::Float)
            .unwrap()
            .storage()
            .nbytes(),
        24
    );
    assert_eq!(
        Tensor::empty_strided(&[2, 3], &[0, 0], ScalarType::Float)
            .unwrap()
            .storage()
            .nbytes(),
        4
    );
    assert_eq!(
        Tensor::empty_strided(&[2, 0, 3], &[100, 1, 1], ScalarType::Float)
            .unwrap()
            .storage()
            .nbytes(),
        0
    );
}

#[test]
fn contiguity_flags() {
    let base = f32s(1000);
    let st = |sizes: &[i64], strides: &[i64]| base.as_strided(sizes, strides, Some(0)).unwrap();
    // 10-13
    assert!(st(&[0, 3], &[7, 9]).is_contiguous());
    assert!(st(&[1, 3], &[100, 1]).is_contiguous());
    assert!(st(&[3, 1], &[1, 7]).is_contiguous());
    assert!(!st(&[3], &[0]).is_contiguous());
    assert!(!st(&[3], &[2]).is_contiguous());
    assert!(st(&[1], &[5]).is_contiguous());
    // 15, 16
    assert!(!st(&[2, 2], &[1, 1]).is_non_overlapping_and_dense());
    assert!(!st(&[4, 3], &[6, 2]).is_non_overlapping_and_dense());
    assert!(st(&[4, 2, 3], &[1, 12, 4]).is_non_overlapping_and_dense());
    assert!(st(&[2, 0, 3], &[7, 11, 13]).is_non_overlapping_and_dense());
    // 18-21
    let cl = Tensor::empty(
        &[2, 3, 4, 5],
        TensorOptions::new().memory_format(MemoryFormat::ChannelsLast),
    )
    .unwrap();
    assert_eq!(cl.strides(), &[60, 1, 15, 3]);
    assert!(!cl.is_contiguous() && cl.is_contiguous_in(MemoryFormat::ChannelsLast));
    assert_eq!(cl.suggest_memory_format(), MemoryFormat::ChannelsLast);
    let cl3 = Tensor::empty(
        &[2, 3, 4, 5, 6],
        TensorOptions::new().memory_format(MemoryFormat::ChannelsLast3d),
    )
    .unwrap();
    assert_eq!(cl3.strides(), &[360, 1, 90, 18, 3]);
    assert!(cl3.is_contiguous_in(MemoryFormat::ChannelsLast3d));
    assert!(!cl3.is_contiguous_in(MemoryFormat::ChannelsLast));
    let t = Tensor::empty(
        &[2, 1, 4, 5],
        TensorOptions::new().memory_format(MemoryFormat::ChannelsLast),
    )
    .unwrap();
    assert_eq!(t.strides(), &[20, 1, 5, 1]);
    assert!(t.is_contiguous() && t.is_contiguous_in(MemoryFormat::ChannelsLast));
    let n111 = st(&[4, 1, 1, 1], &[1, 1, 1, 1]);
    assert!(n111.is_contiguous() && n111.is_contiguous_in(MemoryFormat::ChannelsLast));
    assert_eq!(n111.suggest_memory_format(), MemoryFormat::Contiguous);
    // 24, 25
    let tr = st(&[3, 2], &[1, 3]);
    assert!(!tr.is_contiguous_in(MemoryFormat::Preserve));
    assert_eq!(
        msg(Tensor::empty(
            &[2, 3],
            TensorOptions::new().memory_format(MemoryFormat::ChannelsLast)
        )
        .unwrap_err()),
        "required rank 4 tensor to use channels_last format"
    );
    assert_eq!(
        msg(Tensor::empty(
            &[2, 3],
            TensorOptions::new().memory_format(MemoryFormat::ChannelsLast3d)
        )
        .unwrap_err()),
        "required rank 5 tensor to use channels_last_3d format"
    );
}

#[test]
fn dispatch_keys_of_new_tensors() {
    // 51-53
    let t = Tensor::empty(&[2], ScalarType::Float).unwrap();
    assert_eq!(t.key_set().raw(), 0x9400010001);
    assert_eq!(
        t.key_set().highest_priority_type_id(),
        DispatchKey::AutocastCPU
    );
    assert_eq!(
        t.key_set().to_string(),
        "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
    );
    let m = Tensor::empty(&[2, 3], TensorOptions::new().device(Device::META)).unwrap();
    assert_eq!(
        m.key_set().to_string(),
        "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)"
    );
    assert_eq!(m.storage().nbytes(), 24);
    assert!(m.get::<f32>(&[0, 0]).is_err(), "meta tensors have no data");
    // 30
    let _g = InferenceMode::new();
    let i = Tensor::empty(&[2], ScalarType::Float).unwrap();
    assert_eq!(i.key_set().raw(), 0x8000010001);
    assert!(i.is_inference());
    // 58: a view carries the base's key set.
    assert_eq!(
        t.as_strided(&[1], &[1], None).unwrap().key_set(),
        t.key_set()
    );
}

#[test]
fn requires_grad_rules() {
    let mut i = Tensor::zeros(&[2], ScalarType::Long).unwrap();
    assert_eq!(
        msg(i.set_requires_grad(true).unwrap_err()),
        "Only Tensors of floating point and complex dtype can require gradients"
    );
    let mut f = Tensor::zeros(&[2, 2], TensorOptions::new().requires_grad(true)).unwrap();
    assert!(f.requires_grad());
    let before = f.key_set();
    f.set_requires_grad(true).unwrap();
    assert_eq!(
        f.key_set(),
        before,
        "requires_grad does not change the key set (35)"
    );
    assert!(
        f.as_strided(&[2], &[1], None).unwrap().requires_grad(),
        "views of a tensor requiring grad do too"
    );
}

#[test]
fn element_access() {
    let t = f32s(6).as_strided(&[2, 3], &[3, 1], None).unwrap();
    assert_eq!(t.get::<f32>(&[1, 2]).unwrap(), 5.0);
    assert_eq!(t.get::<f32>(&[-1, -3]).unwrap(), 3.0);
    assert_eq!(
        msg(t.get::<f32>(&[2, 0]).unwrap_err()),
        "index 2 is out of bounds for dimension 0 with size 2"
    );
    assert!(t.get::<f32>(&[0]).is_err());
    assert_eq!(
        msg(t.get::<i64>(&[0, 0]).unwrap_err()),
        "expected a tensor of dtype torch.int64 but this tensor has dtype torch.float32; \
         convert it first with `t.to(ScalarType::Long)?` (the prelude's `DtypeOps`), \
         or read elements of any dtype as f64 with `to_f64_vec()`"
    );
    let tr = t.as_strided(&[3, 2], &[1, 3], None).unwrap();
    assert_eq!(
        tr.to_vec::<f32>().unwrap(),
        vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    );
    assert!(
        tr.read::<f32>().unwrap().as_slice().is_err(),
        "no slice of a transposed layout"
    );
    assert_eq!(
        t.read::<f32>().unwrap().as_slice().unwrap(),
        &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    {
        let mut g = t.write::<f32>().unwrap();
        g.as_mut_slice().unwrap()[0] = -1.0;
    }
    assert_eq!(tr.get::<f32>(&[0, 0]).unwrap(), -1.0);
    assert_eq!(
        Tensor::scalar_tensor(2.5, ScalarType::Double)
            .unwrap()
            .item::<f64>()
            .unwrap(),
        2.5
    );
    assert!(t.item::<f32>().is_err());
    // Bool: bytes other than 0/1 never become invalid Rust bools.
    let b = Tensor::zeros(&[3], ScalarType::Bool).unwrap();
    b.storage().write().unwrap().bytes_mut().unwrap()[1] = 7;
    assert_eq!(b.to_vec::<bool>().unwrap(), vec![false, true, false]);
    assert!(b.read::<bool>().unwrap().as_slice().is_err());
}

#[test]
fn factories() {
    assert_eq!(
        Tensor::ones(&[2], ScalarType::Int)
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        vec![1, 1]
    );
    assert_eq!(
        Tensor::zeros(&[2], ScalarType::Half)
            .unwrap()
            .to_f64_vec()
            .unwrap(),
        vec![0.0, 0.0]
    );
    assert_eq!(
        Tensor::full(&[2], true, ScalarType::Bool)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![true, true]
    );
    assert_eq!(
        Tensor::full(&[1], i64::MAX, ScalarType::Long)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![i64::MAX],
        "integers stay exact"
    );
    assert_eq!(
        Tensor::arange(10, 0, -3, ScalarType::Long)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![10, 7, 4, 1]
    );
    assert_eq!(
        Tensor::arange(0.0, 1.0, 0.3, ScalarType::Double)
            .unwrap()
            .numel(),
        4
    );
    assert_eq!(
        msg(Tensor::arange(0, 10, -1, ScalarType::Long).unwrap_err()),
        "upper bound and lower bound inconsistent with step sign"
    );
    assert_eq!(
        Tensor::arange(0, 10, 1, ScalarType::Long)
            .unwrap()
            .version()
            .unwrap(),
        0
    );
    // from_vec adopts the buffer without copying.
    let v = vec![1u16, 2, 3, 4, 5, 6];
    let addr = v.as_ptr() as usize;
    let t = Tensor::from_vec(v, &[2, 3]).unwrap();
    assert_eq!(t.storage().data_addr().unwrap(), addr);
    assert_eq!(t.get::<u16>(&[1, 0]).unwrap(), 4);
    assert_eq!(
        msg(Tensor::from_vec(vec![1.0f32; 5], &[2, 3]).unwrap_err()),
        "shape '[2, 3]' is invalid for input of size 5"
    );
    let cuda = Tensor::empty(&[2], TensorOptions::new().device(Device::cuda(0)));
    assert!(msg(cuda.unwrap_err()).contains("no allocator is registered for cuda"));
}

#[test]
fn from_blob_runs_its_deleter_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let runs = Arc::new(AtomicUsize::new(0));
    let buf: &'static mut [f32] = Box::leak(vec![1.0f32, 2.0, 3.0, 4.0].into_boxed_slice());
    let ptr = buf.as_mut_ptr();
    let addr = ptr.expose_provenance(); // raw pointers are not Send; the address is
    let r = runs.clone();
    let deleter = Box::new(move || {
        let p = std::ptr::with_exposed_provenance_mut::<f32>(addr);
        // SAFETY: the buffer was leaked above and is freed exactly once here.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, 4)) });
        r.fetch_add(1, Ordering::SeqCst);
    });
    // SAFETY: 4 initialised f32s, owned by the deleter from now on.
    let t =
        unsafe { Tensor::from_blob(ptr.cast(), &[2, 2], None, Some(deleter), ScalarType::Float) }
            .unwrap();
    let views: Vec<Tensor> = (0..3)
        .map(|_| t.as_strided(&[4], &[1], None).unwrap())
        .collect();
    assert_eq!(views[2].get::<f32>(&[3]).unwrap(), 4.0);
    drop(t);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    drop(views);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[test]
fn shrunk_storage_is_an_error_not_ub() {
    let t = f32s(8);
    let v = t.as_strided(&[4], &[1], Some(4)).unwrap();
    t.storage().reset().unwrap();
    assert!(msg(v.get::<f32>(&[0]).unwrap_err()).contains("does not fit in its storage"));
    let _ = Storage::from_owner(vec![0u8; 1]);
}

#[test]
fn empty_strided_for_overwrite_matches_empty_strided() {
    let f = ScalarType::Float;
    for (sizes, strides) in [
        (vec![2i64, 3], vec![3i64, 1]),
        (vec![2, 3], vec![1, 2]),
        (vec![2, 3, 4, 5], vec![60, 1, 15, 3]),
        (vec![0, 3], vec![3, 1]),
        (vec![], vec![]),
    ] {
        let want = Tensor::empty_strided(&sizes, &strides, f).unwrap();
        // The same geometry through the generic path (`as_strided` of a
        // flat storage): the factories' in-place constructor agrees.
        let flat = Tensor::zeros(&[want.storage().nbytes() as i64 / 4], f).unwrap();
        let generic = flat.as_strided(&sizes, &strides, Some(0)).unwrap();
        assert_eq!(
            (want.sizes(), want.strides(), want.numel()),
            (generic.sizes(), generic.strides(), generic.numel())
        );
        for format in [
            MemoryFormat::Contiguous,
            MemoryFormat::ChannelsLast,
            MemoryFormat::ChannelsLast3d,
        ] {
            assert_eq!(
                want.is_contiguous_in(format),
                generic.is_contiguous_in(format),
                "{sizes:?} {strides:?} {format:?}"
            );
        }
        assert_eq!(
            want.is_non_overlapping_and_dense(),
            generic.is_non_overlapping_and_dense()
        );
        // SAFETY: every byte is written below before anything reads it.
        let got = unsafe { Tensor::empty_strided_for_overwrite(&sizes, &strides, f) }.unwrap();
        assert_eq!(
            (got.sizes(), got.strides(), got.storage_offset()),
            (want.sizes(), want.strides(), want.storage_offset())
        );
        assert_eq!(got.storage().nbytes(), want.storage().nbytes());
        assert_eq!(got.is_contiguous(), want.is_contiguous());
        assert_eq!(
            got.is_non_overlapping_and_dense(),
            want.is_non_overlapping_and_dense()
        );
        let n = got.storage().nbytes();
        {
            let mut g = got.storage().write().unwrap();
            // SAFETY: the guard's pointer is valid for `n` bytes of writes.
            unsafe { std::ptr::write_bytes(g.as_mut_ptr(), 0, n) };
        }
        assert!(got.to_vec::<f32>().unwrap().iter().all(|&v| v == 0.0));
    }
    // SAFETY: fails before allocating.
    let err = unsafe { Tensor::empty_strided_for_overwrite(&[-1], &[1], f) }.unwrap_err();
    assert_eq!(
        err.to_string(),
        Tensor::empty_strided(&[-1], &[1], f)
            .unwrap_err()
            .to_string()
    );
}

#[test]
fn fill_writes_exactly_the_elements_of_any_layout() {
    // (sizes, strides, offset) over a 64-element base.
    let layouts: &[(&[i64], &[i64], i64)] = &[
        (&[4, 4], &[4, 1], 0),
        (&[4, 2], &[8, 1], 3),
        (&[3, 4], &[1, 5], 2),
        (&[2, 3, 2], &[20, 1, 7], 1),
        (&[5, 3], &[0, 2], 4),
        (&[2, 1, 3], &[30, 99, 3], 0),
        (&[], &[], 63),
        (&[0, 3], &[3, 1], 0),
        (&[4, 0], &[1, 4], 0),
        (&[2, 2, 2, 2, 2, 2], &[32, 16, 8, 4, 2, 1], 0),
        (&[2, 2, 2, 2, 2, 2], &[1, 2, 4, 8, 16, 32], 0),
    ];
    for &(sizes, strides, offset) in layouts {
        let base = Tensor::zeros(&[64], ScalarType::Int).unwrap();
        let view = base.as_strided(sizes, strides, Some(offset)).unwrap();
        view.fill_(7).unwrap();
        let touched: std::collections::BTreeSet<i64> = view.offsets().collect();
        let got = base.to_vec::<i32>().unwrap();
        for (i, v) in got.iter().enumerate() {
            let want = if touched.contains(&(i as i64)) { 7 } else { 0 };
            assert_eq!(*v, want, "{sizes:?} {strides:?} +{offset}: element {i}");
        }
    }
}

/// `detach()` and `.data` of a view: not a view, no autograd metadata, the
/// same storage and geometry; `detach` shares the version counter and
/// `.data` gets a fresh one; and the base's handle count is exactly what
/// the live views hold (nothing is cloned and left behind).
#[test]
fn detach_and_data_of_a_view() {
    let base = Tensor::zeros(&[2, 3], TensorOptions::new().requires_grad(true)).unwrap();
    let v = base.as_strided(&[3], &[1], Some(3)).unwrap();
    assert!(v.is_view() && v.requires_grad());
    assert_eq!(base.use_count(), 2); // `base` and `v`'s base handle
    let d = v.detach();
    let data = v.data();
    assert_eq!(base.use_count(), 2, "detach/data must not hold the base");
    for t in [&d, &data] {
        assert!(!t.is_view() && t.view_base().is_none());
        assert!(!t.requires_grad());
        assert!(t.is_alias_of(&base));
        assert_eq!(
            (t.sizes(), t.strides(), t.storage_offset()),
            (v.sizes(), v.strides(), v.storage_offset())
        );
        assert_eq!(t.key_set(), v.key_set());
    }
    let before = v.version().unwrap();
    d.fill_(1.0).unwrap();
    assert_eq!(
        v.version().unwrap(),
        before + 1,
        "detach shares the counter"
    );
    // (An in-place write through `v` itself is refused, as in PyTorch: a
    // view of a leaf that requires grad.)
    let shared = v.version().unwrap();
    data.fill_(2.0).unwrap();
    assert_eq!(v.version().unwrap(), shared, ".data has its own counter");
    drop(v);
    assert_eq!(base.use_count(), 1);
}
