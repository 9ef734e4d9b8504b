use super::*;
use ::ndarray::{array, s, Array2, Array3, Axis};
use aten_shape::prelude::*;
use c10_storage::Storage;

#[test]
fn read_view_matches_the_tensor_for_every_view_op() {
    let base = Tensor::arange(0, 60, 1, ScalarType::Long).unwrap();
    let t = base.view(&[3, 4, 5]).unwrap();
    let cases = [
        t.clone(),
        t.permute(&[2, 0, 1]).unwrap(),
        t.narrow(1, 1, 2).unwrap(),
        t.select(2, 3).unwrap(),
        t.slice(2, Some(0), Some(5), 2).unwrap(),
        t.unsqueeze(1).unwrap().expand(&[3, 6, 4, 5]).unwrap(),
        t.select(0, 1)
            .unwrap()
            .select(0, 2)
            .unwrap()
            .select(0, 4)
            .unwrap(), // 0-d
        t.narrow(1, 0, 0).unwrap(), // empty
    ];
    for v in &cases {
        let g = v.ndarray_read::<i64>().unwrap();
        let a = g.view();
        let sizes: Vec<usize> = v.sizes().iter().map(|&x| x as usize).collect();
        assert_eq!(a.shape(), sizes.as_slice());
        let expected = v.to_vec::<i64>().unwrap();
        assert_eq!(a.iter().copied().collect::<Vec<_>>(), expected, "{v:?}");
        if v.numel() > 1 {
            let strides: Vec<isize> = v.strides().iter().map(|&x| x as isize).collect();
            assert_eq!(a.strides(), strides.as_slice());
        }
    }
}

#[test]
fn write_view_writes_through_and_bumps_the_version() {
    let base = Tensor::zeros(&[4, 6], ScalarType::Float).unwrap();
    let v = base.slice(1, Some(1), Some(6), 2).unwrap().t().unwrap(); // [3, 4], strides [2, 6]
    let before = base.version().unwrap();
    {
        let mut g = v.ndarray_write::<f32>().unwrap();
        let mut a = g.view_mut();
        a[[2, 3]] = 7.0;
        a.index_axis_mut(Axis(0), 0).fill(1.0);
        assert_eq!(g.view()[[2, 3]], 7.0);
    }
    assert_eq!(base.version().unwrap(), before + 1);
    assert_eq!(base.get::<f32>(&[3, 5]).unwrap(), 7.0);
    assert_eq!(base.get::<f32>(&[2, 1]).unwrap(), 1.0);
    assert_eq!(base.get::<f32>(&[2, 2]).unwrap(), 0.0);
}

#[test]
fn overlapping_layouts_are_readable_but_not_writable() {
    let t = Tensor::arange(0, 3, 1, ScalarType::Int).unwrap();
    let e = t.unsqueeze(0).unwrap().expand(&[4, 3]).unwrap();
    {
        let g = e.ndarray_read::<i32>().unwrap();
        assert_eq!(g.view().strides(), &[0, 1]);
        assert_eq!(
            g.view()
                .sum_axis(Axis(0))
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            [0, 4, 8]
        );
    }
    let err = e.ndarray_write::<i32>().err().unwrap().to_string();
    assert!(err.contains("overlap"), "{err}");
    // A sliding window (unfold-like) overlaps too.
    let w = Tensor::arange(0, 8, 1, ScalarType::Int)
        .unwrap()
        .as_strided(&[3, 4], &[2, 1], Some(0))
        .unwrap();
    assert!(w.ndarray_write::<i32>().is_err());
    assert!(w.ndarray_read::<i32>().is_ok());
    // Size-1 dims with stride 0 and gapped slices do not overlap.
    let g = Tensor::zeros(&[10], ScalarType::Int)
        .unwrap()
        .as_strided(&[1, 3], &[0, 3], Some(0))
        .unwrap();
    assert!(g.ndarray_write::<i32>().is_ok());
    assert!(overlaps(&[2, 2], &[1, 1]));
    assert!(!overlaps(&[2, 2], &[1, 2]));
    assert!(!overlaps(&[0, 2], &[0, 0]));
}

#[test]
fn refusals_say_why() {
    let t = Tensor::arange(0.0, 4.0, 1.0, ScalarType::Double).unwrap();
    let e = t.ndarray_read::<f32>().err().unwrap().to_string();
    assert!(
        e.contains("dtype torch.float32 but this tensor has dtype torch.float64"),
        "{e}"
    );
    // Read-only storages refuse write views with the clone hint.
    static B: [u8; 3] = [1, 0, 1];
    let ro = Storage::from_read_only_owner(&B[..], "a static table");
    let b = Tensor::from_storage(ro, ScalarType::Bool, &[3], &[1], 0).unwrap();
    let e = b.ndarray_write::<bool>().err().unwrap().to_string();
    assert!(e.contains("clone the tensor"), "{e}");
    assert_eq!(
        b.ndarray_read::<bool>()
            .unwrap()
            .view()
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        [true, false, true]
    );
    // Bool bytes other than 0/1 are refused.
    static BAD: [u8; 2] = [1, 2];
    let ro = Storage::from_read_only_owner(&BAD[..], "bad bools");
    let b = Tensor::from_storage(ro, ScalarType::Bool, &[2], &[1], 0).unwrap();
    let e = b.ndarray_read::<bool>().err().unwrap().to_string();
    assert!(e.contains("not valid Rust bools"), "{e}");
}

#[test]
fn misaligned_data_is_refused() {
    // A storage whose bytes start at an odd address: a view one byte into
    // a Vec<u8>, seen as u16 elements through a storage built from a slice.
    static WORDS: [u16; 5] = [1, 2, 3, 4, 5];
    // SAFETY: plain integers; reading the u16 array's bytes is fine.
    let all: &'static [u8] = unsafe { std::slice::from_raw_parts(WORDS.as_ptr().cast(), 10) };
    let odd = Storage::from_read_only_owner(&all[1..9], "shifted bytes");
    let t = Tensor::from_storage(odd, ScalarType::UInt16, &[4], &[1], 0).unwrap();
    assert!(t.to_vec::<u16>().is_ok(), "element access reads unaligned");
    let e = t.ndarray_read::<u16>().err().unwrap().to_string();
    assert!(e.contains("not aligned"), "{e}");
}

#[test]
fn guards_hold_the_lock() {
    let t = Tensor::zeros(&[2], ScalarType::Float).unwrap();
    let g = t.ndarray_read::<f32>().unwrap();
    // Another thread is kept out; this thread is told it holds a guard.
    std::thread::scope(|s| {
        s.spawn(|| assert!(t.storage().try_write().unwrap().is_none()));
    });
    assert!(matches!(
        t.storage().try_write(),
        Err(c10_storage::StorageError::Reentrant { .. })
    ));
    drop(g);
    assert!(t.storage().try_write().unwrap().is_some());
}

#[test]
fn from_ndarray_adopts_without_copying() {
    let a: Array2<f32> = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let ptr = a.as_ptr();
    let t = from_ndarray(a).unwrap();
    assert_eq!(t.sizes(), &[2, 3]);
    assert_eq!(
        t.storage().read().unwrap().as_ptr(),
        ptr.cast::<u8>(),
        "same buffer"
    );
    assert_eq!(t.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);

    // Fortran order and sliced owned arrays keep their layout.
    let f = Array3::<i32>::from_shape_fn((2, 3, 4).f(), |(i, j, k)| (i * 100 + j * 10 + k) as i32);
    let expected: Vec<i32> = f.iter().copied().collect();
    let fp = f.as_ptr();
    let t = from_ndarray(f).unwrap();
    assert_eq!(t.strides(), &[1, 2, 6]);
    assert_eq!(t.storage().read().unwrap().as_ptr(), fp.cast::<u8>());
    assert_eq!(t.to_vec::<i32>().unwrap(), expected);

    let sliced =
        Array2::from_shape_fn((4, 5), |(i, j)| (i * 5 + j) as i64).slice_move(s![1..3, 2..;2]);
    let expected: Vec<i64> = sliced.iter().copied().collect();
    let t = from_ndarray(sliced).unwrap();
    assert_eq!(t.sizes(), &[2, 2]);
    assert_eq!(t.storage_offset(), 7);
    assert_eq!(t.to_vec::<i64>().unwrap(), expected);

    // Negative strides are copied.
    let rev = array![[1u8, 2], [3, 4]].slice_move(s![..;-1, ..]);
    let t = from_ndarray(rev).unwrap();
    assert_eq!(t.strides(), &[2, 1]);
    assert_eq!(t.to_vec::<u8>().unwrap(), [3, 4, 1, 2]);

    // 0-d and empty arrays.
    let z = from_ndarray(::ndarray::arr0(2.5f64)).unwrap();
    assert_eq!(z.dim(), 0);
    assert_eq!(z.item::<f64>().unwrap(), 2.5);
    let e = from_ndarray(Array2::<f32>::zeros((0, 3))).unwrap();
    assert_eq!(e.sizes(), &[0, 3]);
}

#[test]
fn views_and_copies_round_trip() {
    let a = Array2::from_shape_fn((3, 4), |(i, j)| half::f16::from_f32((i * 4 + j) as f32));
    let t = from_ndarray_view(&a.t()).unwrap();
    assert!(t.is_contiguous());
    assert_eq!(t.sizes(), &[4, 3]);
    let back = t.to_ndarray::<half::f16>().unwrap();
    assert_eq!(back, a.t().into_dyn());
    let g = t.ndarray_read::<half::f16>().unwrap();
    assert_eq!(g.view(), a.t().into_dyn());
}

#[test]
#[cfg_attr(miri, ignore = "spawns a child process")]
fn copies_of_huge_broadcasts_are_oom_errors_not_aborts() {
    // Issue #20: a stride-0 view with 2^60 elements over one value; both
    // directions of the copying conversion once aborted the process.
    let name = "ndarray::tests::copies_of_huge_broadcasts_are_oom_errors_not_aborts";
    c10_storage::testing::hostile::in_child_process(name, || {
        let one = ::ndarray::Array1::<f32>::zeros(1);
        let wide = one.broadcast((1 << 30, 1 << 30)).unwrap();
        let e = from_ndarray_view(&wide).unwrap_err().to_string();
        assert!(
            e.contains("you tried to allocate 4611686018427387904 bytes"),
            "{e}"
        );
        let t = Tensor::zeros(&[1], ScalarType::Float)
            .unwrap()
            .expand(&[1 << 30, 1 << 30])
            .unwrap();
        let e = t.to_ndarray::<f32>().unwrap_err().to_string();
        assert!(e.contains("can't allocate memory"), "{e}");
    });
}
