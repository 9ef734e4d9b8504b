//! `Display` against real torch output, and `explain()` contents.
//!
//! The expected strings in `EXPECTED` were printed by torch 2.15.0
//! (`repr(t)`, default print options) for the tensors that `case()` builds
//! here, e.g. `torch.arange(6.).reshape(2, 3)` for `float_2x3`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use c10_core::scalar_type::{Complex128, Complex64, Element, Float8E4M3fn, Float8E5M2};
use c10_core::{Device, ScalarType, Tensor, TensorOptions};
use half::{bf16, f16};

fn tv<T: Element>(v: Vec<T>, shape: &[i64]) -> Tensor {
    Tensor::from_vec(v, shape).unwrap()
}

fn f32s(v: &[f32]) -> Tensor {
    tv(v.to_vec(), &[v.len() as i64])
}

fn conv<T: Element>(v: &[f64]) -> Tensor {
    tv(
        v.iter().map(|&x| T::from_f64(x)).collect(),
        &[v.len() as i64],
    )
}

fn arange_f32(n: i64) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

fn arange_i64(n: i64) -> Vec<i64> {
    (0..n).collect()
}

fn grad(mut t: Tensor) -> Tensor {
    t.set_requires_grad(true).unwrap();
    t
}

fn meta(shape: &[i64], dtype: ScalarType) -> Tensor {
    Tensor::empty(
        shape,
        TensorOptions::new().dtype(dtype).device(Device::META),
    )
    .unwrap()
}

/// The tensor each case of `EXPECTED` was printed for, built the same way
/// as in the torch script (`torch.tensor([...], dtype=...)`, `arange`,
/// `reshape`, `t()`, `expand`).
fn case(name: &str) -> Tensor {
    const INF: f64 = f64::INFINITY;
    const NAN: f64 = f64::NAN;
    match name {
        "float_2x3" => tv(arange_f32(6), &[2, 3]),
        "float_2x3_big" => tv((0..6).map(|i| i as f32 * 4.0).collect(), &[2, 3]),
        "float_frac" => f32s(&[0.25, 1.5, -2.125]),
        "float_round" => conv::<f32>(&[0.12345, 2.00005, 1.0 / 3.0]),
        "sci_ratio" => f32s(&[1e5, 1.0]),
        "sci_big" => f32s(&[2e8, 3e8]),
        "sci_small" => conv::<f32>(&[1e-5, 0.5, 0.0]),
        "sci_frac" => conv::<f32>(&[123456.789, 0.001]),
        "ints" => tv(vec![1i64, -20, 300], &[3]),
        "ints_2x2" => tv(vec![1i64, -2, 30, 4], &[2, 2]),
        "bools" => tv(vec![true, false, true], &[3]),
        "nan_inf" => conv::<f32>(&[1.0, NAN, INF, -INF]),
        "nan_inf_frac" => conv::<f32>(&[1.5, NAN, -INF]),
        "nan_inf_sci" => conv::<f32>(&[1e-6, NAN, INF]),
        "all_nan" => conv::<f32>(&[NAN, NAN]),
        "zeros_f" => Tensor::zeros(&[3], ScalarType::Float).unwrap(),
        "neg_zero" => f32s(&[-0.0, 1.0]),
        "scalar_f" => tv(vec![5.0f32], &[]),
        "scalar_neg_frac" => tv(vec![-2.5f32], &[]),
        "scalar_i" => tv(vec![7i64], &[]),
        "scalar_b" => tv(vec![true], &[]),
        "scalar_i32" => tv(vec![7i32], &[]),
        "empty" => tv(Vec::<f32>::new(), &[0]),
        "empty_0x3" => Tensor::zeros(&[0, 3], ScalarType::Float).unwrap(),
        "empty_i64" => Tensor::zeros(&[0], ScalarType::Long).unwrap(),
        "empty_i32_2x0" => Tensor::zeros(&[2, 0], ScalarType::Int).unwrap(),
        "i32" => tv(vec![1i32, 2], &[2]),
        "f64" => tv(vec![1.0f64, 2.0], &[2]),
        "f16" => conv::<f16>(&[1.5, 2.25]),
        "bf16" => conv::<bf16>(&[1.5, 100.0]),
        "u8" => tv(vec![0u8, 255], &[2]),
        "i8" => tv(vec![-128i8, 5], &[2]),
        "u64" => tv(vec![(1u64 << 63) + 5, 1], &[2]),
        "u16" => tv(vec![65535u16, 1], &[2]),
        "i16" => tv(vec![-3i16, 1], &[2]),
        "u32" => tv(vec![4_000_000_000u32, 1], &[2]),
        "three_d" => tv(arange_i64(12), &[2, 2, 3]),
        "four_d" => tv(arange_f32(16), &[2, 2, 2, 2]),
        "six_d" => tv(arange_i64(64), &[2, 2, 2, 2, 2, 2]),
        "req_grad" => grad(f32s(&[1.0, 2.0])),
        "req_grad_f64" => grad(tv(vec![1.0f64, 2.0], &[2])),
        "complex" => tv(
            vec![Complex64::new(1.0, 2.0), Complex64::new(-3.5, -1.0)],
            &[2],
        ),
        "complex_int" => tv(
            vec![Complex64::new(1.0, 2.0), Complex64::new(3.0, -4.0)],
            &[2],
        ),
        "complex_scalar" => tv(vec![Complex64::new(1.0, 2.0)], &[]),
        "complex128" => tv(
            vec![Complex128::new(1.0, 2.0), Complex128::new(0.0, 0.5)],
            &[2],
        ),
        "complex_sci" => tv(
            vec![Complex64::new(1e6, 1.0), Complex64::new(1.0, -1e-6)],
            &[2],
        ),
        "meta" => meta(&[2, 3], ScalarType::Float),
        "meta_i64" => meta(&[2, 3], ScalarType::Long),
        "meta_scalar" => meta(&[], ScalarType::Float),
        "sum_1d" => tv(arange_i64(2000), &[2000]),
        "sum_1d_f" => tv(arange_f32(1001), &[1001]),
        "sum_2d" => tv(arange_f32(2000), &[40, 50]),
        "sum_3d" => tv(arange_i64(8000), &[20, 20, 20]),
        "sum_2d_narrow" => tv(arange_i64(1200), &[300, 4]),
        "sum_2d_wide" => tv(arange_f32(1200), &[4, 300]),
        "sum_sci" => tv(
            (0..2000).map(|i| (i as f64).powi(3) as f32).collect(),
            &[40, 50],
        ),
        "wrap_1d" => tv((0..30).map(|i| i as f32 * 1.5).collect(), &[30]),
        "wrap_1d_int" => tv(arange_i64(100), &[100]),
        "wrap_2d" => tv((0..60).map(|i| i as f32 / 7.0).collect(), &[2, 30]),
        "suffix_wrap" => tv((0..20).map(|i| i as f64 / 3.0).collect(), &[20]),
        "suffix_wrap2" => grad(tv((0..12).map(|i| i as f64 / 3.0).collect(), &[12])),
        "f8e4m3" => conv::<Float8E4M3fn>(&[0.5, 2.0, -448.0]),
        "f8e5m2" => conv::<Float8E5M2>(&[0.5, 2.0, 3.0]),
        "neg_align" => tv(vec![-1.5f32, 2.0, 3.25, -40.0], &[2, 2]),
        "float_ints_neg" => f32s(&[-1.0, 10.0, -100.0]),
        "big_int_mode" => f32s(&[1e7, 1.0]),
        "transposed" => tv(arange_i64(6), &[6])
            .as_strided(&[3, 2], &[1, 3], None)
            .unwrap(),
        "expanded" => f32s(&[1.0, 2.0, 3.0])
            .as_strided(&[2, 3], &[0, 1], None)
            .unwrap(),
        "one_elem_1d" => f32s(&[3.0]),
        "nested_empty_3d" => Tensor::zeros(&[2, 0, 3], ScalarType::Float).unwrap(),
        "half_sci" => conv::<f16>(&[1e-5, 60000.0]),
        "round_half" => tv(vec![0.00005f64, 0.00015, 1.00025], &[3]),
        "sci_round" => tv(vec![1.23455e10f64, 1.5], &[2]),
        "int_neg_sci" => f32s(&[-1e10, 1.0]),
        "meta_1d_f16" => meta(&[5], ScalarType::Half),
        "sum_bool" => tv((0..1500).map(|i| i % 3 == 0).collect(), &[30, 50]),
        "sum_complex" => tv(
            (0..1100)
                .map(|i| Complex64::new(i as f32, -(i as f32) / 4.0))
                .collect(),
            &[1100],
        ),
        "mixed_frac_zero" => tv(vec![0.0f32, 0.5, 100.25, -0.0], &[2, 2]),
        "u8_2d" => tv((0..12u8).collect(), &[3, 4]),
        "f64_scalar_sci" => tv(vec![1e-9f64], &[]),
        "sum_6d" => tv(arange_f32(4096), &[2, 2, 4, 8, 4, 8]),
        "sum_transposed" => tv(arange_i64(1200), &[1200])
            .as_strided(&[40, 30], &[1, 40], None)
            .unwrap(),
        "sum_expanded" => f32s(&[1.5, -2.0, 1e-3])
            .as_strided(&[400, 3], &[0, 1], None)
            .unwrap(),
        other => panic!("no tensor for case {other}"),
    }
}

#[test]
// 83 tensors, some with thousands of elements: too slow under Miri's
// interpreter, and the code it covers has no `unsafe` (reads go through the
// guards exercised by the other tests).
#[cfg_attr(miri, ignore)]
fn display_matches_torch() {
    let mut failures = Vec::new();
    for (name, expected) in EXPECTED {
        let got = case(name).to_string();
        if got != *expected {
            failures.push(format!(
                "case {name}:\n--- torch\n{expected}\n--- ours\n{got}\n"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        EXPECTED.len(),
        failures.join("\n")
    );
    assert!(EXPECTED.len() >= 15);
}

#[test]
fn display_precision_from_format_string() {
    let t = f32s(&[0.25, 1.5, -2.125]);
    assert_eq!(format!("{t:.2}"), "tensor([ 0.25,  1.50, -2.12])");
    assert_eq!(
        format!("{:.1}", f32s(&[1e5, 1.0])),
        "tensor([1.0e+05, 1.0e+00])"
    );
}

#[test]
fn display_unreadable_data_prints_metadata() {
    // A dtype without an element type.
    let q = Tensor::empty(&[2, 3], ScalarType::QInt8).unwrap();
    let s = q.to_string();
    assert!(s.starts_with("tensor(<data unavailable: "), "{s}");
    assert!(s.contains("size=(2, 3), dtype=torch.qint8)"), "{s}");
    // A view whose storage was shrunk under it.
    let base = Tensor::zeros(&[10], ScalarType::Float).unwrap();
    let view = base.as_strided(&[5], &[1], Some(5)).unwrap();
    base.storage().resize(8).unwrap();
    let s = view.to_string();
    assert!(s.starts_with("tensor(<data unavailable: "), "{s}");
    assert!(s.ends_with("size=(5,))"), "{s}");
    assert!(view.explain().contains("past the storage's 2 elements"));
}

#[test]
// Formats tensors of thousands of elements: minutes under Miri, and like
// `display_matches_torch` it covers no `unsafe` of its own.
#[cfg_attr(miri, ignore)]
fn display_and_explain_never_panic() {
    let mut tensors = vec![
        tv(Vec::<f32>::new(), &[0]),
        Tensor::zeros(&[3, 0, 2], ScalarType::Long).unwrap(),
        tv(vec![1.5f64], &[]),
        tv(vec![true], &[]),
        tv(arange_f32(64), &[2, 2, 2, 2, 2, 2]),
        tv(arange_f32(4096), &[2, 2, 4, 8, 4, 8]),
        meta(&[], ScalarType::Float),
        meta(&[2, 3, 4, 5, 6, 7], ScalarType::Int),
        meta(&[0, 3], ScalarType::Float),
        Tensor::empty(&[2], ScalarType::QUInt4x2).unwrap(),
        Tensor::arange(0, 5000, 1, ScalarType::Short)
            .unwrap()
            .as_strided(&[7, 9], &[500, 3], Some(17))
            .unwrap(),
        tv(vec![Complex128::new(1.0, -0.5)], &[]),
        conv::<f16>(&[f64::NAN, 1.0, -f64::INFINITY]),
    ];
    tensors.push(
        tensors[4]
            .as_strided(&[2, 3, 4], &[0, 0, 0], Some(63))
            .unwrap(),
    );
    // Geometry made without a bounds check: huge strides must not overflow.
    tensors.push(
        tensors[4]
            .view_with_geometry(&[3, 2], &[i64::MAX / 2, 1], 5)
            .unwrap(),
    );
    for t in &tensors {
        let shown = t.to_string();
        assert!(
            shown.starts_with("tensor(") && shown.ends_with(')'),
            "{shown}"
        );
        let explained = t.explain();
        assert!(explained.contains("Indexing: element"), "{explained}");
    }
    let six = tensors[4].to_string();
    assert!(six.starts_with("tensor([[[[[[ 0.,  1.],"), "{six}");
    assert_eq!(
        tensors[7].to_string(),
        "tensor(..., device='meta', size=(2, 3, 4, 5, 6, 7), dtype=torch.int32)"
    );
    assert_eq!(
        tensors[1].to_string(),
        "tensor([], size=(3, 0, 2), dtype=torch.int64)"
    );
}

#[test]
fn explain_offset_view() {
    let base = Tensor::arange(0, 10, 1, ScalarType::Long).unwrap();
    let v = base.as_strided(&[2, 2], &[3, 1], Some(2)).unwrap();
    let s = v.explain();
    assert!(
        s.contains("sizes [2, 2], strides [3, 1], storage offset 2"),
        "{s}"
    );
    assert!(
        s.contains("element (i, j) lives at storage[2 + i*3 + j*1]"),
        "{s}"
    );
    assert!(
        s.contains("(1, 0) -> storage[2 + 1*3 + 0*1] = storage[5] = 5"),
        "{s}"
    );
    assert!(
        s.contains("80 bytes = 10 elements of torch.int64, use_count 2"),
        "{s}"
    );
    assert!(
        s.contains(&format!("Storage {:#x}", base.storage().id())),
        "{s}"
    );
    assert!(
        s.contains("the view reads 4 elements from 4 distinct cells, storage[2..=6]"),
        "{s}"
    );
    assert!(
        s.contains("its first element (0, 0) is storage[2] (the storage offset)"),
        "{s}"
    );
    assert!(s.contains("(gaps)"), "{s}");
    // Cells 2, 3, 5, 6 are marked, in a strip drawn with every cell.
    let read_row = s
        .lines()
        .find(|l| l.trim_start().starts_with("read by view"))
        .unwrap();
    assert_eq!(read_row.matches('^').count(), 4, "{s}");
}

#[test]
fn explain_transposed_view() {
    let t = Tensor::arange(0, 6, 1, ScalarType::Long)
        .unwrap()
        .as_strided(&[3, 2], &[1, 3], None)
        .unwrap();
    let s = t.explain();
    assert!(s.contains("strides [1, 3]"), "{s}");
    assert!(s.contains("dense but permuted"), "{s}");
    assert!(s.contains("strides would be [2, 1]"), "{s}");
    assert!(
        s.contains("(0, 1) -> storage[0 + 0*1 + 1*3] = storage[3] = 3"),
        "{s}"
    );
    let order = s
        .lines()
        .find(|l| l.trim_start().starts_with("as element #"))
        .unwrap();
    let order: Vec<&str> = order.split_whitespace().skip(3).collect();
    assert_eq!(order, ["0", "2", "4", "1", "3", "5"]);
}

#[test]
fn explain_expanded_view_counts_overlap() {
    let e = f32s(&[1.0, 2.5, 3.0])
        .as_strided(&[4, 3], &[0, 1], None)
        .unwrap();
    let s = e.explain();
    assert!(s.contains("dim 0 (i, size 4) has stride 0"), "{s}");
    assert!(
        s.contains("the view reads 12 elements from 3 distinct cells"),
        "{s}"
    );
    assert!(
        s.contains("3 cells are read more than once (up to 4 times)"),
        "{s}"
    );
    let read_row = s
        .lines()
        .find(|l| l.trim_start().starts_with("read by view"))
        .unwrap();
    assert_eq!(read_row.matches("^x4").count(), 3, "{s}");
    assert!(
        s.contains("(3, 2) -> storage[0 + 3*0 + 2*1]") || s.contains("... and 4 more"),
        "{s}"
    );
}

#[test]
fn explain_large_storage_is_elided() {
    let big = Tensor::arange(0, 200, 1, ScalarType::Int).unwrap();
    let v = big.as_strided(&[3, 4], &[20, 2], Some(101)).unwrap();
    let s = v.explain();
    assert!(
        s.contains("cells not drawn; the storage has 200 elements"),
        "{s}"
    );
    assert!(s.contains("storage[101 + i*20 + j*2]"), "{s}");
    let marks: usize = s
        .lines()
        .filter(|l| l.trim_start().starts_with("read by view"))
        .map(|l| l.matches('^').count())
        .sum();
    // Drawn: 99..=122 around the first read cell and 138..=149 around the
    // last, so cells 101..=107, 121 and 141..=147 are marked.
    assert_eq!(marks, 9, "{s}");
    assert!(s.lines().all(|l| l.len() <= 110), "{s}");
}

/// (case name, `repr(t)` printed by torch 2.15.0 for the tensor `case(name)` builds).
const EXPECTED: &[(&str, &str)] = &[
    ("float_2x3", "tensor([[0., 1., 2.],\n        [3., 4., 5.]])"),
    ("float_2x3_big", "tensor([[ 0.,  4.,  8.],\n        [12., 16., 20.]])"),
    ("float_frac", "tensor([ 0.2500,  1.5000, -2.1250])"),
    ("float_round", "tensor([0.1235, 2.0001, 0.3333])"),
    ("sci_ratio", "tensor([1.0000e+05, 1.0000e+00])"),
    ("sci_big", "tensor([2.0000e+08, 3.0000e+08])"),
    ("sci_small", "tensor([1.0000e-05, 5.0000e-01, 0.0000e+00])"),
    ("sci_frac", "tensor([1.2346e+05, 1.0000e-03])"),
    ("ints", "tensor([  1, -20, 300])"),
    ("ints_2x2", "tensor([[ 1, -2],\n        [30,  4]])"),
    ("bools", "tensor([ True, False,  True])"),
    ("nan_inf", "tensor([1., nan, inf, -inf])"),
    ("nan_inf_frac", "tensor([1.5000,    nan,   -inf])"),
    ("nan_inf_sci", "tensor([1.0000e-06,        nan,        inf])"),
    ("all_nan", "tensor([nan, nan])"),
    ("zeros_f", "tensor([0., 0., 0.])"),
    ("neg_zero", "tensor([-0., 1.])"),
    ("scalar_f", "tensor(5.)"),
    ("scalar_neg_frac", "tensor(-2.5000)"),
    ("scalar_i", "tensor(7)"),
    ("scalar_b", "tensor(True)"),
    ("scalar_i32", "tensor(7, dtype=torch.int32)"),
    ("empty", "tensor([])"),
    ("empty_0x3", "tensor([], size=(0, 3))"),
    ("empty_i64", "tensor([], dtype=torch.int64)"),
    ("empty_i32_2x0", "tensor([], size=(2, 0), dtype=torch.int32)"),
    ("i32", "tensor([1, 2], dtype=torch.int32)"),
    ("f64", "tensor([1., 2.], dtype=torch.float64)"),
    ("f16", "tensor([1.5000, 2.2500], dtype=torch.float16)"),
    ("bf16", "tensor([  1.5000, 100.0000], dtype=torch.bfloat16)"),
    ("u8", "tensor([  0, 255], dtype=torch.uint8)"),
    ("i8", "tensor([-128,    5], dtype=torch.int8)"),
    ("u64", "tensor([9223372036854775813,                   1], dtype=torch.uint64)"),
    ("u16", "tensor([65535,     1], dtype=torch.uint16)"),
    ("i16", "tensor([-3,  1], dtype=torch.int16)"),
    ("u32", "tensor([4000000000,          1], dtype=torch.uint32)"),
    ("three_d", "tensor([[[ 0,  1,  2],\n         [ 3,  4,  5]],\n\n        [[ 6,  7,  8],\n         [ 9, 10, 11]]])"),
    ("four_d", "tensor([[[[ 0.,  1.],\n          [ 2.,  3.]],\n\n         [[ 4.,  5.],\n          [ 6.,  7.]]],\n\n\n        [[[ 8.,  9.],\n          [10., 11.]],\n\n         [[12., 13.],\n          [14., 15.]]]])"),
    ("six_d", "tensor([[[[[[ 0,  1],\n            [ 2,  3]],\n\n           [[ 4,  5],\n            [ 6,  7]]],\n\n\n          [[[ 8,  9],\n            [10, 11]],\n\n           [[12, 13],\n            [14, 15]]]],\n\n\n\n         [[[[16, 17],\n            [18, 19]],\n\n           [[20, 21],\n            [22, 23]]],\n\n\n          [[[24, 25],\n            [26, 27]],\n\n           [[28, 29],\n            [30, 31]]]]],\n\n\n\n\n        [[[[[32, 33],\n            [34, 35]],\n\n           [[36, 37],\n            [38, 39]]],\n\n\n          [[[40, 41],\n            [42, 43]],\n\n           [[44, 45],\n            [46, 47]]]],\n\n\n\n         [[[[48, 49],\n            [50, 51]],\n\n           [[52, 53],\n            [54, 55]]],\n\n\n          [[[56, 57],\n            [58, 59]],\n\n           [[60, 61],\n            [62, 63]]]]]])"),
    ("req_grad", "tensor([1., 2.], requires_grad=True)"),
    ("req_grad_f64", "tensor([1., 2.], dtype=torch.float64, requires_grad=True)"),
    ("complex", "tensor([ 1.0000+2.j, -3.5000-1.j])"),
    ("complex_int", "tensor([1.+2.j, 3.-4.j])"),
    ("complex_scalar", "tensor(1.+2.j)"),
    ("complex128", "tensor([1.+2.0000j, 0.+0.5000j], dtype=torch.complex128)"),
    ("complex_sci", "tensor([1.0000e+06+1.0000e+00j, 1.0000e+00-1.0000e-06j])"),
    ("meta", "tensor(..., device='meta', size=(2, 3))"),
    ("meta_i64", "tensor(..., device='meta', size=(2, 3), dtype=torch.int64)"),
    ("meta_scalar", "tensor(..., device='meta', size=())"),
    ("sum_1d", "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    ("sum_1d_f", "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.])"),
    ("sum_2d", "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n         4.9000e+01],\n        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n         9.9000e+01],\n        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n         1.4900e+02],\n        ...,\n        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n         1.8990e+03],\n        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n         1.9490e+03],\n        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n         1.9990e+03]])"),
    ("sum_3d", "tensor([[[   0,    1,    2,  ...,   17,   18,   19],\n         [  20,   21,   22,  ...,   37,   38,   39],\n         [  40,   41,   42,  ...,   57,   58,   59],\n         ...,\n         [ 340,  341,  342,  ...,  357,  358,  359],\n         [ 360,  361,  362,  ...,  377,  378,  379],\n         [ 380,  381,  382,  ...,  397,  398,  399]],\n\n        [[ 400,  401,  402,  ...,  417,  418,  419],\n         [ 420,  421,  422,  ...,  437,  438,  439],\n         [ 440,  441,  442,  ...,  457,  458,  459],\n         ...,\n         [ 740,  741,  742,  ...,  757,  758,  759],\n         [ 760,  761,  762,  ...,  777,  778,  779],\n         [ 780,  781,  782,  ...,  797,  798,  799]],\n\n        [[ 800,  801,  802,  ...,  817,  818,  819],\n         [ 820,  821,  822,  ...,  837,  838,  839],\n         [ 840,  841,  842,  ...,  857,  858,  859],\n         ...,\n         [1140, 1141, 1142,  ..., 1157, 1158, 1159],\n         [1160, 1161, 1162,  ..., 1177, 1178, 1179],\n         [1180, 1181, 1182,  ..., 1197, 1198, 1199]],\n\n        ...,\n\n        [[6800, 6801, 6802,  ..., 6817, 6818, 6819],\n         [6820, 6821, 6822,  ..., 6837, 6838, 6839],\n         [6840, 6841, 6842,  ..., 6857, 6858, 6859],\n         ...,\n         [7140, 7141, 7142,  ..., 7157, 7158, 7159],\n         [7160, 7161, 7162,  ..., 7177, 7178, 7179],\n         [7180, 7181, 7182,  ..., 7197, 7198, 7199]],\n\n        [[7200, 7201, 7202,  ..., 7217, 7218, 7219],\n         [7220, 7221, 7222,  ..., 7237, 7238, 7239],\n         [7240, 7241, 7242,  ..., 7257, 7258, 7259],\n         ...,\n         [7540, 7541, 7542,  ..., 7557, 7558, 7559],\n         [7560, 7561, 7562,  ..., 7577, 7578, 7579],\n         [7580, 7581, 7582,  ..., 7597, 7598, 7599]],\n\n        [[7600, 7601, 7602,  ..., 7617, 7618, 7619],\n         [7620, 7621, 7622,  ..., 7637, 7638, 7639],\n         [7640, 7641, 7642,  ..., 7657, 7658, 7659],\n         ...,\n         [7940, 7941, 7942,  ..., 7957, 7958, 7959],\n         [7960, 7961, 7962,  ..., 7977, 7978, 7979],\n         [7980, 7981, 7982,  ..., 7997, 7998, 7999]]])"),
    ("sum_2d_narrow", "tensor([[   0,    1,    2,    3],\n        [   4,    5,    6,    7],\n        [   8,    9,   10,   11],\n        ...,\n        [1188, 1189, 1190, 1191],\n        [1192, 1193, 1194, 1195],\n        [1196, 1197, 1198, 1199]])"),
    ("sum_2d_wide", "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 2.9700e+02, 2.9800e+02,\n         2.9900e+02],\n        [3.0000e+02, 3.0100e+02, 3.0200e+02,  ..., 5.9700e+02, 5.9800e+02,\n         5.9900e+02],\n        [6.0000e+02, 6.0100e+02, 6.0200e+02,  ..., 8.9700e+02, 8.9800e+02,\n         8.9900e+02],\n        [9.0000e+02, 9.0100e+02, 9.0200e+02,  ..., 1.1970e+03, 1.1980e+03,\n         1.1990e+03]])"),
    ("sum_sci", "tensor([[0.0000e+00, 1.0000e+00, 8.0000e+00,  ..., 1.0382e+05, 1.1059e+05,\n         1.1765e+05],\n        [1.2500e+05, 1.3265e+05, 1.4061e+05,  ..., 9.1267e+05, 9.4119e+05,\n         9.7030e+05],\n        [1.0000e+06, 1.0303e+06, 1.0612e+06,  ..., 3.1765e+06, 3.2418e+06,\n         3.3079e+06],\n        ...,\n        [6.3316e+09, 6.3419e+09, 6.3522e+09,  ..., 6.8266e+09, 6.8374e+09,\n         6.8482e+09],\n        [6.8590e+09, 6.8698e+09, 6.8807e+09,  ..., 7.3807e+09, 7.3921e+09,\n         7.4035e+09],\n        [7.4149e+09, 7.4263e+09, 7.4377e+09,  ..., 7.9641e+09, 7.9760e+09,\n         7.9880e+09]])"),
    ("wrap_1d", "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000])"),
    ("wrap_1d_int", "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n        36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,\n        54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n        72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,\n        90, 91, 92, 93, 94, 95, 96, 97, 98, 99])"),
    ("wrap_2d", "tensor([[0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n         1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n         2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n         3.8571, 4.0000, 4.1429],\n        [4.2857, 4.4286, 4.5714, 4.7143, 4.8571, 5.0000, 5.1429, 5.2857, 5.4286,\n         5.5714, 5.7143, 5.8571, 6.0000, 6.1429, 6.2857, 6.4286, 6.5714, 6.7143,\n         6.8571, 7.0000, 7.1429, 7.2857, 7.4286, 7.5714, 7.7143, 7.8571, 8.0000,\n         8.1429, 8.2857, 8.4286]])"),
    ("suffix_wrap", "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n        6.0000, 6.3333], dtype=torch.float64)"),
    ("suffix_wrap2", "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n        3.0000, 3.3333, 3.6667], dtype=torch.float64, requires_grad=True)"),
    ("f8e4m3", "tensor([   0.5000,    2.0000, -448.0000], dtype=torch.float8_e4m3fn)"),
    ("f8e5m2", "tensor([0.5000, 2.0000, 3.0000], dtype=torch.float8_e5m2)"),
    ("neg_align", "tensor([[ -1.5000,   2.0000],\n        [  3.2500, -40.0000]])"),
    ("float_ints_neg", "tensor([  -1.,   10., -100.])"),
    ("big_int_mode", "tensor([1.0000e+07, 1.0000e+00])"),
    ("transposed", "tensor([[0, 3],\n        [1, 4],\n        [2, 5]])"),
    ("expanded", "tensor([[1., 2., 3.],\n        [1., 2., 3.]])"),
    ("one_elem_1d", "tensor([3.])"),
    ("nested_empty_3d", "tensor([], size=(2, 0, 3))"),
    ("half_sci", "tensor([1.0014e-05, 6.0000e+04], dtype=torch.float16)"),
    ("round_half", "tensor([5.0000e-05, 1.5000e-04, 1.0003e+00], dtype=torch.float64)"),
    ("sci_round", "tensor([1.2346e+10, 1.5000e+00], dtype=torch.float64)"),
    ("int_neg_sci", "tensor([-1.0000e+10,  1.0000e+00])"),
    ("meta_1d_f16", "tensor(..., device='meta', size=(5,), dtype=torch.float16)"),
    ("sum_bool", "tensor([[ True, False, False,  ..., False,  True, False],\n        [False,  True, False,  ..., False, False,  True],\n        [False, False,  True,  ...,  True, False, False],\n        ...,\n        [ True, False, False,  ..., False,  True, False],\n        [False,  True, False,  ..., False, False,  True],\n        [False, False,  True,  ...,  True, False, False]])"),
    ("sum_complex", "tensor([0.0000e+00-0.0000e+00j, 1.0000e+00-2.5000e-01j, 2.0000e+00-5.0000e-01j,\n         ..., 1.0970e+03-2.7425e+02j, 1.0980e+03-2.7450e+02j,\n        1.0990e+03-2.7475e+02j])"),
    ("mixed_frac_zero", "tensor([[  0.0000,   0.5000],\n        [100.2500,  -0.0000]])"),
    ("u8_2d", "tensor([[ 0,  1,  2,  3],\n        [ 4,  5,  6,  7],\n        [ 8,  9, 10, 11]], dtype=torch.uint8)"),
    ("f64_scalar_sci", "tensor(1.0000e-09, dtype=torch.float64)"),
    ("sum_6d", "tensor([[[[[[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 5.0000e+00,\n             6.0000e+00, 7.0000e+00],\n            [8.0000e+00, 9.0000e+00, 1.0000e+01,  ..., 1.3000e+01,\n             1.4000e+01, 1.5000e+01],\n            [1.6000e+01, 1.7000e+01, 1.8000e+01,  ..., 2.1000e+01,\n             2.2000e+01, 2.3000e+01],\n            [2.4000e+01, 2.5000e+01, 2.6000e+01,  ..., 2.9000e+01,\n             3.0000e+01, 3.1000e+01]],\n\n           [[3.2000e+01, 3.3000e+01, 3.4000e+01,  ..., 3.7000e+01,\n             3.8000e+01, 3.9000e+01],\n            [4.0000e+01, 4.1000e+01, 4.2000e+01,  ..., 4.5000e+01,\n             4.6000e+01, 4.7000e+01],\n            [4.8000e+01, 4.9000e+01, 5.0000e+01,  ..., 5.3000e+01,\n             5.4000e+01, 5.5000e+01],\n            [5.6000e+01, 5.7000e+01, 5.8000e+01,  ..., 6.1000e+01,\n             6.2000e+01, 6.3000e+01]],\n\n           [[6.4000e+01, 6.5000e+01, 6.6000e+01,  ..., 6.9000e+01,\n             7.0000e+01, 7.1000e+01],\n            [7.2000e+01, 7.3000e+01, 7.4000e+01,  ..., 7.7000e+01,\n             7.8000e+01, 7.9000e+01],\n            [8.0000e+01, 8.1000e+01, 8.2000e+01,  ..., 8.5000e+01,\n             8.6000e+01, 8.7000e+01],\n            [8.8000e+01, 8.9000e+01, 9.0000e+01,  ..., 9.3000e+01,\n             9.4000e+01, 9.5000e+01]],\n\n           ...,\n\n           [[1.6000e+02, 1.6100e+02, 1.6200e+02,  ..., 1.6500e+02,\n             1.6600e+02, 1.6700e+02],\n            [1.6800e+02, 1.6900e+02, 1.7000e+02,  ..., 1.7300e+02,\n             1.7400e+02, 1.7500e+02],\n            [1.7600e+02, 1.7700e+02, 1.7800e+02,  ..., 1.8100e+02,\n             1.8200e+02, 1.8300e+02],\n            [1.8400e+02, 1.8500e+02, 1.8600e+02,  ..., 1.8900e+02,\n             1.9000e+02, 1.9100e+02]],\n\n           [[1.9200e+02, 1.9300e+02, 1.9400e+02,  ..., 1.9700e+02,\n             1.9800e+02, 1.9900e+02],\n            [2.0000e+02, 2.0100e+02, 2.0200e+02,  ..., 2.0500e+02,\n             2.0600e+02, 2.0700e+02],\n            [2.0800e+02, 2.0900e+02, 2.1000e+02,  ..., 2.1300e+02,\n             2.1400e+02, 2.1500e+02],\n            [2.1600e+02, 2.1700e+02, 2.1800e+02,  ..., 2.2100e+02,\n             2.2200e+02, 2.2300e+02]],\n\n           [[2.2400e+02, 2.2500e+02, 2.2600e+02,  ..., 2.2900e+02,\n             2.3000e+02, 2.3100e+02],\n            [2.3200e+02, 2.3300e+02, 2.3400e+02,  ..., 2.3700e+02,\n             2.3800e+02, 2.3900e+02],\n            [2.4000e+02, 2.4100e+02, 2.4200e+02,  ..., 2.4500e+02,\n             2.4600e+02, 2.4700e+02],\n            [2.4800e+02, 2.4900e+02, 2.5000e+02,  ..., 2.5300e+02,\n             2.5400e+02, 2.5500e+02]]],\n\n\n          [[[2.5600e+02, 2.5700e+02, 2.5800e+02,  ..., 2.6100e+02,\n             2.6200e+02, 2.6300e+02],\n            [2.6400e+02, 2.6500e+02, 2.6600e+02,  ..., 2.6900e+02,\n             2.7000e+02, 2.7100e+02],\n            [2.7200e+02, 2.7300e+02, 2.7400e+02,  ..., 2.7700e+02,\n             2.7800e+02, 2.7900e+02],\n            [2.8000e+02, 2.8100e+02, 2.8200e+02,  ..., 2.8500e+02,\n             2.8600e+02, 2.8700e+02]],\n\n           [[2.8800e+02, 2.8900e+02, 2.9000e+02,  ..., 2.9300e+02,\n             2.9400e+02, 2.9500e+02],\n            [2.9600e+02, 2.9700e+02, 2.9800e+02,  ..., 3.0100e+02,\n             3.0200e+02, 3.0300e+02],\n            [3.0400e+02, 3.0500e+02, 3.0600e+02,  ..., 3.0900e+02,\n             3.1000e+02, 3.1100e+02],\n            [3.1200e+02, 3.1300e+02, 3.1400e+02,  ..., 3.1700e+02,\n             3.1800e+02, 3.1900e+02]],\n\n           [[3.2000e+02, 3.2100e+02, 3.2200e+02,  ..., 3.2500e+02,\n             3.2600e+02, 3.2700e+02],\n            [3.2800e+02, 3.2900e+02, 3.3000e+02,  ..., 3.3300e+02,\n             3.3400e+02, 3.3500e+02],\n            [3.3600e+02, 3.3700e+02, 3.3800e+02,  ..., 3.4100e+02,\n             3.4200e+02, 3.4300e+02],\n            [3.4400e+02, 3.4500e+02, 3.4600e+02,  ..., 3.4900e+02,\n             3.5000e+02, 3.5100e+02]],\n\n           ...,\n\n           [[4.1600e+02, 4.1700e+02, 4.1800e+02,  ..., 4.2100e+02,\n             4.2200e+02, 4.2300e+02],\n            [4.2400e+02, 4.2500e+02, 4.2600e+02,  ..., 4.2900e+02,\n             4.3000e+02, 4.3100e+02],\n            [4.3200e+02, 4.3300e+02, 4.3400e+02,  ..., 4.3700e+02,\n             4.3800e+02, 4.3900e+02],\n            [4.4000e+02, 4.4100e+02, 4.4200e+02,  ..., 4.4500e+02,\n             4.4600e+02, 4.4700e+02]],\n\n           [[4.4800e+02, 4.4900e+02, 4.5000e+02,  ..., 4.5300e+02,\n             4.5400e+02, 4.5500e+02],\n            [4.5600e+02, 4.5700e+02, 4.5800e+02,  ..., 4.6100e+02,\n             4.6200e+02, 4.6300e+02],\n            [4.6400e+02, 4.6500e+02, 4.6600e+02,  ..., 4.6900e+02,\n             4.7000e+02, 4.7100e+02],\n            [4.7200e+02, 4.7300e+02, 4.7400e+02,  ..., 4.7700e+02,\n             4.7800e+02, 4.7900e+02]],\n\n           [[4.8000e+02, 4.8100e+02, 4.8200e+02,  ..., 4.8500e+02,\n             4.8600e+02, 4.8700e+02],\n            [4.8800e+02, 4.8900e+02, 4.9000e+02,  ..., 4.9300e+02,\n             4.9400e+02, 4.9500e+02],\n            [4.9600e+02, 4.9700e+02, 4.9800e+02,  ..., 5.0100e+02,\n             5.0200e+02, 5.0300e+02],\n            [5.0400e+02, 5.0500e+02, 5.0600e+02,  ..., 5.0900e+02,\n             5.1000e+02, 5.1100e+02]]],\n\n\n          [[[5.1200e+02, 5.1300e+02, 5.1400e+02,  ..., 5.1700e+02,\n             5.1800e+02, 5.1900e+02],\n            [5.2000e+02, 5.2100e+02, 5.2200e+02,  ..., 5.2500e+02,\n             5.2600e+02, 5.2700e+02],\n            [5.2800e+02, 5.2900e+02, 5.3000e+02,  ..., 5.3300e+02,\n             5.3400e+02, 5.3500e+02],\n            [5.3600e+02, 5.3700e+02, 5.3800e+02,  ..., 5.4100e+02,\n             5.4200e+02, 5.4300e+02]],\n\n           [[5.4400e+02, 5.4500e+02, 5.4600e+02,  ..., 5.4900e+02,\n             5.5000e+02, 5.5100e+02],\n            [5.5200e+02, 5.5300e+02, 5.5400e+02,  ..., 5.5700e+02,\n             5.5800e+02, 5.5900e+02],\n            [5.6000e+02, 5.6100e+02, 5.6200e+02,  ..., 5.6500e+02,\n             5.6600e+02, 5.6700e+02],\n            [5.6800e+02, 5.6900e+02, 5.7000e+02,  ..., 5.7300e+02,\n             5.7400e+02, 5.7500e+02]],\n\n           [[5.7600e+02, 5.7700e+02, 5.7800e+02,  ..., 5.8100e+02,\n             5.8200e+02, 5.8300e+02],\n            [5.8400e+02, 5.8500e+02, 5.8600e+02,  ..., 5.8900e+02,\n             5.9000e+02, 5.9100e+02],\n            [5.9200e+02, 5.9300e+02, 5.9400e+02,  ..., 5.9700e+02,\n             5.9800e+02, 5.9900e+02],\n            [6.0000e+02, 6.0100e+02, 6.0200e+02,  ..., 6.0500e+02,\n             6.0600e+02, 6.0700e+02]],\n\n           ...,\n\n           [[6.7200e+02, 6.7300e+02, 6.7400e+02,  ..., 6.7700e+02,\n             6.7800e+02, 6.7900e+02],\n            [6.8000e+02, 6.8100e+02, 6.8200e+02,  ..., 6.8500e+02,\n             6.8600e+02, 6.8700e+02],\n            [6.8800e+02, 6.8900e+02, 6.9000e+02,  ..., 6.9300e+02,\n             6.9400e+02, 6.9500e+02],\n            [6.9600e+02, 6.9700e+02, 6.9800e+02,  ..., 7.0100e+02,\n             7.0200e+02, 7.0300e+02]],\n\n           [[7.0400e+02, 7.0500e+02, 7.0600e+02,  ..., 7.0900e+02,\n             7.1000e+02, 7.1100e+02],\n            [7.1200e+02, 7.1300e+02, 7.1400e+02,  ..., 7.1700e+02,\n             7.1800e+02, 7.1900e+02],\n            [7.2000e+02, 7.2100e+02, 7.2200e+02,  ..., 7.2500e+02,\n             7.2600e+02, 7.2700e+02],\n            [7.2800e+02, 7.2900e+02, 7.3000e+02,  ..., 7.3300e+02,\n             7.3400e+02, 7.3500e+02]],\n\n           [[7.3600e+02, 7.3700e+02, 7.3800e+02,  ..., 7.4100e+02,\n             7.4200e+02, 7.4300e+02],\n            [7.4400e+02, 7.4500e+02, 7.4600e+02,  ..., 7.4900e+02,\n             7.5000e+02, 7.5100e+02],\n            [7.5200e+02, 7.5300e+02, 7.5400e+02,  ..., 7.5700e+02,\n             7.5800e+02, 7.5900e+02],\n            [7.6000e+02, 7.6100e+02, 7.6200e+02,  ..., 7.6500e+02,\n             7.6600e+02, 7.6700e+02]]],\n\n\n          [[[7.6800e+02, 7.6900e+02, 7.7000e+02,  ..., 7.7300e+02,\n             7.7400e+02, 7.7500e+02],\n            [7.7600e+02, 7.7700e+02, 7.7800e+02,  ..., 7.8100e+02,\n             7.8200e+02, 7.8300e+02],\n            [7.8400e+02, 7.8500e+02, 7.8600e+02,  ..., 7.8900e+02,\n             7.9000e+02, 7.9100e+02],\n            [7.9200e+02, 7.9300e+02, 7.9400e+02,  ..., 7.9700e+02,\n             7.9800e+02, 7.9900e+02]],\n\n           [[8.0000e+02, 8.0100e+02, 8.0200e+02,  ..., 8.0500e+02,\n             8.0600e+02, 8.0700e+02],\n            [8.0800e+02, 8.0900e+02, 8.1000e+02,  ..., 8.1300e+02,\n             8.1400e+02, 8.1500e+02],\n            [8.1600e+02, 8.1700e+02, 8.1800e+02,  ..., 8.2100e+02,\n             8.2200e+02, 8.2300e+02],\n            [8.2400e+02, 8.2500e+02, 8.2600e+02,  ..., 8.2900e+02,\n             8.3000e+02, 8.3100e+02]],\n\n           [[8.3200e+02, 8.3300e+02, 8.3400e+02,  ..., 8.3700e+02,\n             8.3800e+02, 8.3900e+02],\n            [8.4000e+02, 8.4100e+02, 8.4200e+02,  ..., 8.4500e+02,\n             8.4600e+02, 8.4700e+02],\n            [8.4800e+02, 8.4900e+02, 8.5000e+02,  ..., 8.5300e+02,\n             8.5400e+02, 8.5500e+02],\n            [8.5600e+02, 8.5700e+02, 8.5800e+02,  ..., 8.6100e+02,\n             8.6200e+02, 8.6300e+02]],\n\n           ...,\n\n           [[9.2800e+02, 9.2900e+02, 9.3000e+02,  ..., 9.3300e+02,\n             9.3400e+02, 9.3500e+02],\n            [9.3600e+02, 9.3700e+02, 9.3800e+02,  ..., 9.4100e+02,\n             9.4200e+02, 9.4300e+02],\n            [9.4400e+02, 9.4500e+02, 9.4600e+02,  ..., 9.4900e+02,\n             9.5000e+02, 9.5100e+02],\n            [9.5200e+02, 9.5300e+02, 9.5400e+02,  ..., 9.5700e+02,\n             9.5800e+02, 9.5900e+02]],\n\n           [[9.6000e+02, 9.6100e+02, 9.6200e+02,  ..., 9.6500e+02,\n             9.6600e+02, 9.6700e+02],\n            [9.6800e+02, 9.6900e+02, 9.7000e+02,  ..., 9.7300e+02,\n             9.7400e+02, 9.7500e+02],\n            [9.7600e+02, 9.7700e+02, 9.7800e+02,  ..., 9.8100e+02,\n             9.8200e+02, 9.8300e+02],\n            [9.8400e+02, 9.8500e+02, 9.8600e+02,  ..., 9.8900e+02,\n             9.9000e+02, 9.9100e+02]],\n\n           [[9.9200e+02, 9.9300e+02, 9.9400e+02,  ..., 9.9700e+02,\n             9.9800e+02, 9.9900e+02],\n            [1.0000e+03, 1.0010e+03, 1.0020e+03,  ..., 1.0050e+03,\n             1.0060e+03, 1.0070e+03],\n            [1.0080e+03, 1.0090e+03, 1.0100e+03,  ..., 1.0130e+03,\n             1.0140e+03, 1.0150e+03],\n            [1.0160e+03, 1.0170e+03, 1.0180e+03,  ..., 1.0210e+03,\n             1.0220e+03, 1.0230e+03]]]],\n\n\n\n         [[[[1.0240e+03, 1.0250e+03, 1.0260e+03,  ..., 1.0290e+03,\n             1.0300e+03, 1.0310e+03],\n            [1.0320e+03, 1.0330e+03, 1.0340e+03,  ..., 1.0370e+03,\n             1.0380e+03, 1.0390e+03],\n            [1.0400e+03, 1.0410e+03, 1.0420e+03,  ..., 1.0450e+03,\n             1.0460e+03, 1.0470e+03],\n            [1.0480e+03, 1.0490e+03, 1.0500e+03,  ..., 1.0530e+03,\n             1.0540e+03, 1.0550e+03]],\n\n           [[1.0560e+03, 1.0570e+03, 1.0580e+03,  ..., 1.0610e+03,\n             1.0620e+03, 1.0630e+03],\n            [1.0640e+03, 1.0650e+03, 1.0660e+03,  ..., 1.0690e+03,\n             1.0700e+03, 1.0710e+03],\n            [1.0720e+03, 1.0730e+03, 1.0740e+03,  ..., 1.0770e+03,\n             1.0780e+03, 1.0790e+03],\n            [1.0800e+03, 1.0810e+03, 1.0820e+03,  ..., 1.0850e+03,\n             1.0860e+03, 1.0870e+03]],\n\n           [[1.0880e+03, 1.0890e+03, 1.0900e+03,  ..., 1.0930e+03,\n             1.0940e+03, 1.0950e+03],\n            [1.0960e+03, 1.0970e+03, 1.0980e+03,  ..., 1.1010e+03,\n             1.1020e+03, 1.1030e+03],\n            [1.1040e+03, 1.1050e+03, 1.1060e+03,  ..., 1.1090e+03,\n             1.1100e+03, 1.1110e+03],\n            [1.1120e+03, 1.1130e+03, 1.1140e+03,  ..., 1.1170e+03,\n             1.1180e+03, 1.1190e+03]],\n\n           ...,\n\n           [[1.1840e+03, 1.1850e+03, 1.1860e+03,  ..., 1.1890e+03,\n             1.1900e+03, 1.1910e+03],\n            [1.1920e+03, 1.1930e+03, 1.1940e+03,  ..., 1.1970e+03,\n             1.1980e+03, 1.1990e+03],\n            [1.2000e+03, 1.2010e+03, 1.2020e+03,  ..., 1.2050e+03,\n             1.2060e+03, 1.2070e+03],\n            [1.2080e+03, 1.2090e+03, 1.2100e+03,  ..., 1.2130e+03,\n             1.2140e+03, 1.2150e+03]],\n\n           [[1.2160e+03, 1.2170e+03, 1.2180e+03,  ..., 1.2210e+03,\n             1.2220e+03, 1.2230e+03],\n            [1.2240e+03, 1.2250e+03, 1.2260e+03,  ..., 1.2290e+03,\n             1.2300e+03, 1.2310e+03],\n            [1.2320e+03, 1.2330e+03, 1.2340e+03,  ..., 1.2370e+03,\n             1.2380e+03, 1.2390e+03],\n            [1.2400e+03, 1.2410e+03, 1.2420e+03,  ..., 1.2450e+03,\n             1.2460e+03, 1.2470e+03]],\n\n           [[1.2480e+03, 1.2490e+03, 1.2500e+03,  ..., 1.2530e+03,\n             1.2540e+03, 1.2550e+03],\n            [1.2560e+03, 1.2570e+03, 1.2580e+03,  ..., 1.2610e+03,\n             1.2620e+03, 1.2630e+03],\n            [1.2640e+03, 1.2650e+03, 1.2660e+03,  ..., 1.2690e+03,\n             1.2700e+03, 1.2710e+03],\n            [1.2720e+03, 1.2730e+03, 1.2740e+03,  ..., 1.2770e+03,\n             1.2780e+03, 1.2790e+03]]],\n\n\n          [[[1.2800e+03, 1.2810e+03, 1.2820e+03,  ..., 1.2850e+03,\n             1.2860e+03, 1.2870e+03],\n            [1.2880e+03, 1.2890e+03, 1.2900e+03,  ..., 1.2930e+03,\n             1.2940e+03, 1.2950e+03],\n            [1.2960e+03, 1.2970e+03, 1.2980e+03,  ..., 1.3010e+03,\n             1.3020e+03, 1.3030e+03],\n            [1.3040e+03, 1.3050e+03, 1.3060e+03,  ..., 1.3090e+03,\n             1.3100e+03, 1.3110e+03]],\n\n           [[1.3120e+03, 1.3130e+03, 1.3140e+03,  ..., 1.3170e+03,\n             1.3180e+03, 1.3190e+03],\n            [1.3200e+03, 1.3210e+03, 1.3220e+03,  ..., 1.3250e+03,\n             1.3260e+03, 1.3270e+03],\n            [1.3280e+03, 1.3290e+03, 1.3300e+03,  ..., 1.3330e+03,\n             1.3340e+03, 1.3350e+03],\n            [1.3360e+03, 1.3370e+03, 1.3380e+03,  ..., 1.3410e+03,\n             1.3420e+03, 1.3430e+03]],\n\n           [[1.3440e+03, 1.3450e+03, 1.3460e+03,  ..., 1.3490e+03,\n             1.3500e+03, 1.3510e+03],\n            [1.3520e+03, 1.3530e+03, 1.3540e+03,  ..., 1.3570e+03,\n             1.3580e+03, 1.3590e+03],\n            [1.3600e+03, 1.3610e+03, 1.3620e+03,  ..., 1.3650e+03,\n             1.3660e+03, 1.3670e+03],\n            [1.3680e+03, 1.3690e+03, 1.3700e+03,  ..., 1.3730e+03,\n             1.3740e+03, 1.3750e+03]],\n\n           ...,\n\n           [[1.4400e+03, 1.4410e+03, 1.4420e+03,  ..., 1.4450e+03,\n             1.4460e+03, 1.4470e+03],\n            [1.4480e+03, 1.4490e+03, 1.4500e+03,  ..., 1.4530e+03,\n             1.4540e+03, 1.4550e+03],\n            [1.4560e+03, 1.4570e+03, 1.4580e+03,  ..., 1.4610e+03,\n             1.4620e+03, 1.4630e+03],\n            [1.4640e+03, 1.4650e+03, 1.4660e+03,  ..., 1.4690e+03,\n             1.4700e+03, 1.4710e+03]],\n\n           [[1.4720e+03, 1.4730e+03, 1.4740e+03,  ..., 1.4770e+03,\n             1.4780e+03, 1.4790e+03],\n            [1.4800e+03, 1.4810e+03, 1.4820e+03,  ..., 1.4850e+03,\n             1.4860e+03, 1.4870e+03],\n            [1.4880e+03, 1.4890e+03, 1.4900e+03,  ..., 1.4930e+03,\n             1.4940e+03, 1.4950e+03],\n            [1.4960e+03, 1.4970e+03, 1.4980e+03,  ..., 1.5010e+03,\n             1.5020e+03, 1.5030e+03]],\n\n           [[1.5040e+03, 1.5050e+03, 1.5060e+03,  ..., 1.5090e+03,\n             1.5100e+03, 1.5110e+03],\n            [1.5120e+03, 1.5130e+03, 1.5140e+03,  ..., 1.5170e+03,\n             1.5180e+03, 1.5190e+03],\n            [1.5200e+03, 1.5210e+03, 1.5220e+03,  ..., 1.5250e+03,\n             1.5260e+03, 1.5270e+03],\n            [1.5280e+03, 1.5290e+03, 1.5300e+03,  ..., 1.5330e+03,\n             1.5340e+03, 1.5350e+03]]],\n\n\n          [[[1.5360e+03, 1.5370e+03, 1.5380e+03,  ..., 1.5410e+03,\n             1.5420e+03, 1.5430e+03],\n            [1.5440e+03, 1.5450e+03, 1.5460e+03,  ..., 1.5490e+03,\n             1.5500e+03, 1.5510e+03],\n            [1.5520e+03, 1.5530e+03, 1.5540e+03,  ..., 1.5570e+03,\n             1.5580e+03, 1.5590e+03],\n            [1.5600e+03, 1.5610e+03, 1.5620e+03,  ..., 1.5650e+03,\n             1.5660e+03, 1.5670e+03]],\n\n           [[1.5680e+03, 1.5690e+03, 1.5700e+03,  ..., 1.5730e+03,\n             1.5740e+03, 1.5750e+03],\n            [1.5760e+03, 1.5770e+03, 1.5780e+03,  ..., 1.5810e+03,\n             1.5820e+03, 1.5830e+03],\n            [1.5840e+03, 1.5850e+03, 1.5860e+03,  ..., 1.5890e+03,\n             1.5900e+03, 1.5910e+03],\n            [1.5920e+03, 1.5930e+03, 1.5940e+03,  ..., 1.5970e+03,\n             1.5980e+03, 1.5990e+03]],\n\n           [[1.6000e+03, 1.6010e+03, 1.6020e+03,  ..., 1.6050e+03,\n             1.6060e+03, 1.6070e+03],\n            [1.6080e+03, 1.6090e+03, 1.6100e+03,  ..., 1.6130e+03,\n             1.6140e+03, 1.6150e+03],\n            [1.6160e+03, 1.6170e+03, 1.6180e+03,  ..., 1.6210e+03,\n             1.6220e+03, 1.6230e+03],\n            [1.6240e+03, 1.6250e+03, 1.6260e+03,  ..., 1.6290e+03,\n             1.6300e+03, 1.6310e+03]],\n\n           ...,\n\n           [[1.6960e+03, 1.6970e+03, 1.6980e+03,  ..., 1.7010e+03,\n             1.7020e+03, 1.7030e+03],\n            [1.7040e+03, 1.7050e+03, 1.7060e+03,  ..., 1.7090e+03,\n             1.7100e+03, 1.7110e+03],\n            [1.7120e+03, 1.7130e+03, 1.7140e+03,  ..., 1.7170e+03,\n             1.7180e+03, 1.7190e+03],\n            [1.7200e+03, 1.7210e+03, 1.7220e+03,  ..., 1.7250e+03,\n             1.7260e+03, 1.7270e+03]],\n\n           [[1.7280e+03, 1.7290e+03, 1.7300e+03,  ..., 1.7330e+03,\n             1.7340e+03, 1.7350e+03],\n            [1.7360e+03, 1.7370e+03, 1.7380e+03,  ..., 1.7410e+03,\n             1.7420e+03, 1.7430e+03],\n            [1.7440e+03, 1.7450e+03, 1.7460e+03,  ..., 1.7490e+03,\n             1.7500e+03, 1.7510e+03],\n            [1.7520e+03, 1.7530e+03, 1.7540e+03,  ..., 1.7570e+03,\n             1.7580e+03, 1.7590e+03]],\n\n           [[1.7600e+03, 1.7610e+03, 1.7620e+03,  ..., 1.7650e+03,\n             1.7660e+03, 1.7670e+03],\n            [1.7680e+03, 1.7690e+03, 1.7700e+03,  ..., 1.7730e+03,\n             1.7740e+03, 1.7750e+03],\n            [1.7760e+03, 1.7770e+03, 1.7780e+03,  ..., 1.7810e+03,\n             1.7820e+03, 1.7830e+03],\n            [1.7840e+03, 1.7850e+03, 1.7860e+03,  ..., 1.7890e+03,\n             1.7900e+03, 1.7910e+03]]],\n\n\n          [[[1.7920e+03, 1.7930e+03, 1.7940e+03,  ..., 1.7970e+03,\n             1.7980e+03, 1.7990e+03],\n            [1.8000e+03, 1.8010e+03, 1.8020e+03,  ..., 1.8050e+03,\n             1.8060e+03, 1.8070e+03],\n            [1.8080e+03, 1.8090e+03, 1.8100e+03,  ..., 1.8130e+03,\n             1.8140e+03, 1.8150e+03],\n            [1.8160e+03, 1.8170e+03, 1.8180e+03,  ..., 1.8210e+03,\n             1.8220e+03, 1.8230e+03]],\n\n           [[1.8240e+03, 1.8250e+03, 1.8260e+03,  ..., 1.8290e+03,\n             1.8300e+03, 1.8310e+03],\n            [1.8320e+03, 1.8330e+03, 1.8340e+03,  ..., 1.8370e+03,\n             1.8380e+03, 1.8390e+03],\n            [1.8400e+03, 1.8410e+03, 1.8420e+03,  ..., 1.8450e+03,\n             1.8460e+03, 1.8470e+03],\n            [1.8480e+03, 1.8490e+03, 1.8500e+03,  ..., 1.8530e+03,\n             1.8540e+03, 1.8550e+03]],\n\n           [[1.8560e+03, 1.8570e+03, 1.8580e+03,  ..., 1.8610e+03,\n             1.8620e+03, 1.8630e+03],\n            [1.8640e+03, 1.8650e+03, 1.8660e+03,  ..., 1.8690e+03,\n             1.8700e+03, 1.8710e+03],\n            [1.8720e+03, 1.8730e+03, 1.8740e+03,  ..., 1.8770e+03,\n             1.8780e+03, 1.8790e+03],\n            [1.8800e+03, 1.8810e+03, 1.8820e+03,  ..., 1.8850e+03,\n             1.8860e+03, 1.8870e+03]],\n\n           ...,\n\n           [[1.9520e+03, 1.9530e+03, 1.9540e+03,  ..., 1.9570e+03,\n             1.9580e+03, 1.9590e+03],\n            [1.9600e+03, 1.9610e+03, 1.9620e+03,  ..., 1.9650e+03,\n             1.9660e+03, 1.9670e+03],\n            [1.9680e+03, 1.9690e+03, 1.9700e+03,  ..., 1.9730e+03,\n             1.9740e+03, 1.9750e+03],\n            [1.9760e+03, 1.9770e+03, 1.9780e+03,  ..., 1.9810e+03,\n             1.9820e+03, 1.9830e+03]],\n\n           [[1.9840e+03, 1.9850e+03, 1.9860e+03,  ..., 1.9890e+03,\n             1.9900e+03, 1.9910e+03],\n            [1.9920e+03, 1.9930e+03, 1.9940e+03,  ..., 1.9970e+03,\n             1.9980e+03, 1.9990e+03],\n            [2.0000e+03, 2.0010e+03, 2.0020e+03,  ..., 2.0050e+03,\n             2.0060e+03, 2.0070e+03],\n            [2.0080e+03, 2.0090e+03, 2.0100e+03,  ..., 2.0130e+03,\n             2.0140e+03, 2.0150e+03]],\n\n           [[2.0160e+03, 2.0170e+03, 2.0180e+03,  ..., 2.0210e+03,\n             2.0220e+03, 2.0230e+03],\n            [2.0240e+03, 2.0250e+03, 2.0260e+03,  ..., 2.0290e+03,\n             2.0300e+03, 2.0310e+03],\n            [2.0320e+03, 2.0330e+03, 2.0340e+03,  ..., 2.0370e+03,\n             2.0380e+03, 2.0390e+03],\n            [2.0400e+03, 2.0410e+03, 2.0420e+03,  ..., 2.0450e+03,\n             2.0460e+03, 2.0470e+03]]]]],\n\n\n\n\n        [[[[[2.0480e+03, 2.0490e+03, 2.0500e+03,  ..., 2.0530e+03,\n             2.0540e+03, 2.0550e+03],\n            [2.0560e+03, 2.0570e+03, 2.0580e+03,  ..., 2.0610e+03,\n             2.0620e+03, 2.0630e+03],\n            [2.0640e+03, 2.0650e+03, 2.0660e+03,  ..., 2.0690e+03,\n             2.0700e+03, 2.0710e+03],\n            [2.0720e+03, 2.0730e+03, 2.0740e+03,  ..., 2.0770e+03,\n             2.0780e+03, 2.0790e+03]],\n\n           [[2.0800e+03, 2.0810e+03, 2.0820e+03,  ..., 2.0850e+03,\n             2.0860e+03, 2.0870e+03],\n            [2.0880e+03, 2.0890e+03, 2.0900e+03,  ..., 2.0930e+03,\n             2.0940e+03, 2.0950e+03],\n            [2.0960e+03, 2.0970e+03, 2.0980e+03,  ..., 2.1010e+03,\n             2.1020e+03, 2.1030e+03],\n            [2.1040e+03, 2.1050e+03, 2.1060e+03,  ..., 2.1090e+03,\n             2.1100e+03, 2.1110e+03]],\n\n           [[2.1120e+03, 2.1130e+03, 2.1140e+03,  ..., 2.1170e+03,\n             2.1180e+03, 2.1190e+03],\n            [2.1200e+03, 2.1210e+03, 2.1220e+03,  ..., 2.1250e+03,\n             2.1260e+03, 2.1270e+03],\n            [2.1280e+03, 2.1290e+03, 2.1300e+03,  ..., 2.1330e+03,\n             2.1340e+03, 2.1350e+03],\n            [2.1360e+03, 2.1370e+03, 2.1380e+03,  ..., 2.1410e+03,\n             2.1420e+03, 2.1430e+03]],\n\n           ...,\n\n           [[2.2080e+03, 2.2090e+03, 2.2100e+03,  ..., 2.2130e+03,\n             2.2140e+03, 2.2150e+03],\n            [2.2160e+03, 2.2170e+03, 2.2180e+03,  ..., 2.2210e+03,\n             2.2220e+03, 2.2230e+03],\n            [2.2240e+03, 2.2250e+03, 2.2260e+03,  ..., 2.2290e+03,\n             2.2300e+03, 2.2310e+03],\n            [2.2320e+03, 2.2330e+03, 2.2340e+03,  ..., 2.2370e+03,\n             2.2380e+03, 2.2390e+03]],\n\n           [[2.2400e+03, 2.2410e+03, 2.2420e+03,  ..., 2.2450e+03,\n             2.2460e+03, 2.2470e+03],\n            [2.2480e+03, 2.2490e+03, 2.2500e+03,  ..., 2.2530e+03,\n             2.2540e+03, 2.2550e+03],\n            [2.2560e+03, 2.2570e+03, 2.2580e+03,  ..., 2.2610e+03,\n             2.2620e+03, 2.2630e+03],\n            [2.2640e+03, 2.2650e+03, 2.2660e+03,  ..., 2.2690e+03,\n             2.2700e+03, 2.2710e+03]],\n\n           [[2.2720e+03, 2.2730e+03, 2.2740e+03,  ..., 2.2770e+03,\n             2.2780e+03, 2.2790e+03],\n            [2.2800e+03, 2.2810e+03, 2.2820e+03,  ..., 2.2850e+03,\n             2.2860e+03, 2.2870e+03],\n            [2.2880e+03, 2.2890e+03, 2.2900e+03,  ..., 2.2930e+03,\n             2.2940e+03, 2.2950e+03],\n            [2.2960e+03, 2.2970e+03, 2.2980e+03,  ..., 2.3010e+03,\n             2.3020e+03, 2.3030e+03]]],\n\n\n          [[[2.3040e+03, 2.3050e+03, 2.3060e+03,  ..., 2.3090e+03,\n             2.3100e+03, 2.3110e+03],\n            [2.3120e+03, 2.3130e+03, 2.3140e+03,  ..., 2.3170e+03,\n             2.3180e+03, 2.3190e+03],\n            [2.3200e+03, 2.3210e+03, 2.3220e+03,  ..., 2.3250e+03,\n             2.3260e+03, 2.3270e+03],\n            [2.3280e+03, 2.3290e+03, 2.3300e+03,  ..., 2.3330e+03,\n             2.3340e+03, 2.3350e+03]],\n\n           [[2.3360e+03, 2.3370e+03, 2.3380e+03,  ..., 2.3410e+03,\n             2.3420e+03, 2.3430e+03],\n            [2.3440e+03, 2.3450e+03, 2.3460e+03,  ..., 2.3490e+03,\n             2.3500e+03, 2.3510e+03],\n            [2.3520e+03, 2.3530e+03, 2.3540e+03,  ..., 2.3570e+03,\n             2.3580e+03, 2.3590e+03],\n            [2.3600e+03, 2.3610e+03, 2.3620e+03,  ..., 2.3650e+03,\n             2.3660e+03, 2.3670e+03]],\n\n           [[2.3680e+03, 2.3690e+03, 2.3700e+03,  ..., 2.3730e+03,\n             2.3740e+03, 2.3750e+03],\n            [2.3760e+03, 2.3770e+03, 2.3780e+03,  ..., 2.3810e+03,\n             2.3820e+03, 2.3830e+03],\n            [2.3840e+03, 2.3850e+03, 2.3860e+03,  ..., 2.3890e+03,\n             2.3900e+03, 2.3910e+03],\n            [2.3920e+03, 2.3930e+03, 2.3940e+03,  ..., 2.3970e+03,\n             2.3980e+03, 2.3990e+03]],\n\n           ...,\n\n           [[2.4640e+03, 2.4650e+03, 2.4660e+03,  ..., 2.4690e+03,\n             2.4700e+03, 2.4710e+03],\n            [2.4720e+03, 2.4730e+03, 2.4740e+03,  ..., 2.4770e+03,\n             2.4780e+03, 2.4790e+03],\n            [2.4800e+03, 2.4810e+03, 2.4820e+03,  ..., 2.4850e+03,\n             2.4860e+03, 2.4870e+03],\n            [2.4880e+03, 2.4890e+03, 2.4900e+03,  ..., 2.4930e+03,\n             2.4940e+03, 2.4950e+03]],\n\n           [[2.4960e+03, 2.4970e+03, 2.4980e+03,  ..., 2.5010e+03,\n             2.5020e+03, 2.5030e+03],\n            [2.5040e+03, 2.5050e+03, 2.5060e+03,  ..., 2.5090e+03,\n             2.5100e+03, 2.5110e+03],\n            [2.5120e+03, 2.5130e+03, 2.5140e+03,  ..., 2.5170e+03,\n             2.5180e+03, 2.5190e+03],\n            [2.5200e+03, 2.5210e+03, 2.5220e+03,  ..., 2.5250e+03,\n             2.5260e+03, 2.5270e+03]],\n\n           [[2.5280e+03, 2.5290e+03, 2.5300e+03,  ..., 2.5330e+03,\n             2.5340e+03, 2.5350e+03],\n            [2.5360e+03, 2.5370e+03, 2.5380e+03,  ..., 2.5410e+03,\n             2.5420e+03, 2.5430e+03],\n            [2.5440e+03, 2.5450e+03, 2.5460e+03,  ..., 2.5490e+03,\n             2.5500e+03, 2.5510e+03],\n            [2.5520e+03, 2.5530e+03, 2.5540e+03,  ..., 2.5570e+03,\n             2.5580e+03, 2.5590e+03]]],\n\n\n          [[[2.5600e+03, 2.5610e+03, 2.5620e+03,  ..., 2.5650e+03,\n             2.5660e+03, 2.5670e+03],\n            [2.5680e+03, 2.5690e+03, 2.5700e+03,  ..., 2.5730e+03,\n             2.5740e+03, 2.5750e+03],\n            [2.5760e+03, 2.5770e+03, 2.5780e+03,  ..., 2.5810e+03,\n             2.5820e+03, 2.5830e+03],\n            [2.5840e+03, 2.5850e+03, 2.5860e+03,  ..., 2.5890e+03,\n             2.5900e+03, 2.5910e+03]],\n\n           [[2.5920e+03, 2.5930e+03, 2.5940e+03,  ..., 2.5970e+03,\n             2.5980e+03, 2.5990e+03],\n            [2.6000e+03, 2.6010e+03, 2.6020e+03,  ..., 2.6050e+03,\n             2.6060e+03, 2.6070e+03],\n            [2.6080e+03, 2.6090e+03, 2.6100e+03,  ..., 2.6130e+03,\n             2.6140e+03, 2.6150e+03],\n            [2.6160e+03, 2.6170e+03, 2.6180e+03,  ..., 2.6210e+03,\n             2.6220e+03, 2.6230e+03]],\n\n           [[2.6240e+03, 2.6250e+03, 2.6260e+03,  ..., 2.6290e+03,\n             2.6300e+03, 2.6310e+03],\n            [2.6320e+03, 2.6330e+03, 2.6340e+03,  ..., 2.6370e+03,\n             2.6380e+03, 2.6390e+03],\n            [2.6400e+03, 2.6410e+03, 2.6420e+03,  ..., 2.6450e+03,\n             2.6460e+03, 2.6470e+03],\n            [2.6480e+03, 2.6490e+03, 2.6500e+03,  ..., 2.6530e+03,\n             2.6540e+03, 2.6550e+03]],\n\n           ...,\n\n           [[2.7200e+03, 2.7210e+03, 2.7220e+03,  ..., 2.7250e+03,\n             2.7260e+03, 2.7270e+03],\n            [2.7280e+03, 2.7290e+03, 2.7300e+03,  ..., 2.7330e+03,\n             2.7340e+03, 2.7350e+03],\n            [2.7360e+03, 2.7370e+03, 2.7380e+03,  ..., 2.7410e+03,\n             2.7420e+03, 2.7430e+03],\n            [2.7440e+03, 2.7450e+03, 2.7460e+03,  ..., 2.7490e+03,\n             2.7500e+03, 2.7510e+03]],\n\n           [[2.7520e+03, 2.7530e+03, 2.7540e+03,  ..., 2.7570e+03,\n             2.7580e+03, 2.7590e+03],\n            [2.7600e+03, 2.7610e+03, 2.7620e+03,  ..., 2.7650e+03,\n             2.7660e+03, 2.7670e+03],\n            [2.7680e+03, 2.7690e+03, 2.7700e+03,  ..., 2.7730e+03,\n             2.7740e+03, 2.7750e+03],\n            [2.7760e+03, 2.7770e+03, 2.7780e+03,  ..., 2.7810e+03,\n             2.7820e+03, 2.7830e+03]],\n\n           [[2.7840e+03, 2.7850e+03, 2.7860e+03,  ..., 2.7890e+03,\n             2.7900e+03, 2.7910e+03],\n            [2.7920e+03, 2.7930e+03, 2.7940e+03,  ..., 2.7970e+03,\n             2.7980e+03, 2.7990e+03],\n            [2.8000e+03, 2.8010e+03, 2.8020e+03,  ..., 2.8050e+03,\n             2.8060e+03, 2.8070e+03],\n            [2.8080e+03, 2.8090e+03, 2.8100e+03,  ..., 2.8130e+03,\n             2.8140e+03, 2.8150e+03]]],\n\n\n          [[[2.8160e+03, 2.8170e+03, 2.8180e+03,  ..., 2.8210e+03,\n             2.8220e+03, 2.8230e+03],\n            [2.8240e+03, 2.8250e+03, 2.8260e+03,  ..., 2.8290e+03,\n             2.8300e+03, 2.8310e+03],\n            [2.8320e+03, 2.8330e+03, 2.8340e+03,  ..., 2.8370e+03,\n             2.8380e+03, 2.8390e+03],\n            [2.8400e+03, 2.8410e+03, 2.8420e+03,  ..., 2.8450e+03,\n             2.8460e+03, 2.8470e+03]],\n\n           [[2.8480e+03, 2.8490e+03, 2.8500e+03,  ..., 2.8530e+03,\n             2.8540e+03, 2.8550e+03],\n            [2.8560e+03, 2.8570e+03, 2.8580e+03,  ..., 2.8610e+03,\n             2.8620e+03, 2.8630e+03],\n            [2.8640e+03, 2.8650e+03, 2.8660e+03,  ..., 2.8690e+03,\n             2.8700e+03, 2.8710e+03],\n            [2.8720e+03, 2.8730e+03, 2.8740e+03,  ..., 2.8770e+03,\n             2.8780e+03, 2.8790e+03]],\n\n           [[2.8800e+03, 2.8810e+03, 2.8820e+03,  ..., 2.8850e+03,\n             2.8860e+03, 2.8870e+03],\n            [2.8880e+03, 2.8890e+03, 2.8900e+03,  ..., 2.8930e+03,\n             2.8940e+03, 2.8950e+03],\n            [2.8960e+03, 2.8970e+03, 2.8980e+03,  ..., 2.9010e+03,\n             2.9020e+03, 2.9030e+03],\n            [2.9040e+03, 2.9050e+03, 2.9060e+03,  ..., 2.9090e+03,\n             2.9100e+03, 2.9110e+03]],\n\n           ...,\n\n           [[2.9760e+03, 2.9770e+03, 2.9780e+03,  ..., 2.9810e+03,\n             2.9820e+03, 2.9830e+03],\n            [2.9840e+03, 2.9850e+03, 2.9860e+03,  ..., 2.9890e+03,\n             2.9900e+03, 2.9910e+03],\n            [2.9920e+03, 2.9930e+03, 2.9940e+03,  ..., 2.9970e+03,\n             2.9980e+03, 2.9990e+03],\n            [3.0000e+03, 3.0010e+03, 3.0020e+03,  ..., 3.0050e+03,\n             3.0060e+03, 3.0070e+03]],\n\n           [[3.0080e+03, 3.0090e+03, 3.0100e+03,  ..., 3.0130e+03,\n             3.0140e+03, 3.0150e+03],\n            [3.0160e+03, 3.0170e+03, 3.0180e+03,  ..., 3.0210e+03,\n             3.0220e+03, 3.0230e+03],\n            [3.0240e+03, 3.0250e+03, 3.0260e+03,  ..., 3.0290e+03,\n             3.0300e+03, 3.0310e+03],\n            [3.0320e+03, 3.0330e+03, 3.0340e+03,  ..., 3.0370e+03,\n             3.0380e+03, 3.0390e+03]],\n\n           [[3.0400e+03, 3.0410e+03, 3.0420e+03,  ..., 3.0450e+03,\n             3.0460e+03, 3.0470e+03],\n            [3.0480e+03, 3.0490e+03, 3.0500e+03,  ..., 3.0530e+03,\n             3.0540e+03, 3.0550e+03],\n            [3.0560e+03, 3.0570e+03, 3.0580e+03,  ..., 3.0610e+03,\n             3.0620e+03, 3.0630e+03],\n            [3.0640e+03, 3.0650e+03, 3.0660e+03,  ..., 3.0690e+03,\n             3.0700e+03, 3.0710e+03]]]],\n\n\n\n         [[[[3.0720e+03, 3.0730e+03, 3.0740e+03,  ..., 3.0770e+03,\n             3.0780e+03, 3.0790e+03],\n            [3.0800e+03, 3.0810e+03, 3.0820e+03,  ..., 3.0850e+03,\n             3.0860e+03, 3.0870e+03],\n            [3.0880e+03, 3.0890e+03, 3.0900e+03,  ..., 3.0930e+03,\n             3.0940e+03, 3.0950e+03],\n            [3.0960e+03, 3.0970e+03, 3.0980e+03,  ..., 3.1010e+03,\n             3.1020e+03, 3.1030e+03]],\n\n           [[3.1040e+03, 3.1050e+03, 3.1060e+03,  ..., 3.1090e+03,\n             3.1100e+03, 3.1110e+03],\n            [3.1120e+03, 3.1130e+03, 3.1140e+03,  ..., 3.1170e+03,\n             3.1180e+03, 3.1190e+03],\n            [3.1200e+03, 3.1210e+03, 3.1220e+03,  ..., 3.1250e+03,\n             3.1260e+03, 3.1270e+03],\n            [3.1280e+03, 3.1290e+03, 3.1300e+03,  ..., 3.1330e+03,\n             3.1340e+03, 3.1350e+03]],\n\n           [[3.1360e+03, 3.1370e+03, 3.1380e+03,  ..., 3.1410e+03,\n             3.1420e+03, 3.1430e+03],\n            [3.1440e+03, 3.1450e+03, 3.1460e+03,  ..., 3.1490e+03,\n             3.1500e+03, 3.1510e+03],\n            [3.1520e+03, 3.1530e+03, 3.1540e+03,  ..., 3.1570e+03,\n             3.1580e+03, 3.1590e+03],\n            [3.1600e+03, 3.1610e+03, 3.1620e+03,  ..., 3.1650e+03,\n             3.1660e+03, 3.1670e+03]],\n\n           ...,\n\n           [[3.2320e+03, 3.2330e+03, 3.2340e+03,  ..., 3.2370e+03,\n             3.2380e+03, 3.2390e+03],\n            [3.2400e+03, 3.2410e+03, 3.2420e+03,  ..., 3.2450e+03,\n             3.2460e+03, 3.2470e+03],\n            [3.2480e+03, 3.2490e+03, 3.2500e+03,  ..., 3.2530e+03,\n             3.2540e+03, 3.2550e+03],\n            [3.2560e+03, 3.2570e+03, 3.2580e+03,  ..., 3.2610e+03,\n             3.2620e+03, 3.2630e+03]],\n\n           [[3.2640e+03, 3.2650e+03, 3.2660e+03,  ..., 3.2690e+03,\n             3.2700e+03, 3.2710e+03],\n            [3.2720e+03, 3.2730e+03, 3.2740e+03,  ..., 3.2770e+03,\n             3.2780e+03, 3.2790e+03],\n            [3.2800e+03, 3.2810e+03, 3.2820e+03,  ..., 3.2850e+03,\n             3.2860e+03, 3.2870e+03],\n            [3.2880e+03, 3.2890e+03, 3.2900e+03,  ..., 3.2930e+03,\n             3.2940e+03, 3.2950e+03]],\n\n           [[3.2960e+03, 3.2970e+03, 3.2980e+03,  ..., 3.3010e+03,\n             3.3020e+03, 3.3030e+03],\n            [3.3040e+03, 3.3050e+03, 3.3060e+03,  ..., 3.3090e+03,\n             3.3100e+03, 3.3110e+03],\n            [3.3120e+03, 3.3130e+03, 3.3140e+03,  ..., 3.3170e+03,\n             3.3180e+03, 3.3190e+03],\n            [3.3200e+03, 3.3210e+03, 3.3220e+03,  ..., 3.3250e+03,\n             3.3260e+03, 3.3270e+03]]],\n\n\n          [[[3.3280e+03, 3.3290e+03, 3.3300e+03,  ..., 3.3330e+03,\n             3.3340e+03, 3.3350e+03],\n            [3.3360e+03, 3.3370e+03, 3.3380e+03,  ..., 3.3410e+03,\n             3.3420e+03, 3.3430e+03],\n            [3.3440e+03, 3.3450e+03, 3.3460e+03,  ..., 3.3490e+03,\n             3.3500e+03, 3.3510e+03],\n            [3.3520e+03, 3.3530e+03, 3.3540e+03,  ..., 3.3570e+03,\n             3.3580e+03, 3.3590e+03]],\n\n           [[3.3600e+03, 3.3610e+03, 3.3620e+03,  ..., 3.3650e+03,\n             3.3660e+03, 3.3670e+03],\n            [3.3680e+03, 3.3690e+03, 3.3700e+03,  ..., 3.3730e+03,\n             3.3740e+03, 3.3750e+03],\n            [3.3760e+03, 3.3770e+03, 3.3780e+03,  ..., 3.3810e+03,\n             3.3820e+03, 3.3830e+03],\n            [3.3840e+03, 3.3850e+03, 3.3860e+03,  ..., 3.3890e+03,\n             3.3900e+03, 3.3910e+03]],\n\n           [[3.3920e+03, 3.3930e+03, 3.3940e+03,  ..., 3.3970e+03,\n             3.3980e+03, 3.3990e+03],\n            [3.4000e+03, 3.4010e+03, 3.4020e+03,  ..., 3.4050e+03,\n             3.4060e+03, 3.4070e+03],\n            [3.4080e+03, 3.4090e+03, 3.4100e+03,  ..., 3.4130e+03,\n             3.4140e+03, 3.4150e+03],\n            [3.4160e+03, 3.4170e+03, 3.4180e+03,  ..., 3.4210e+03,\n             3.4220e+03, 3.4230e+03]],\n\n           ...,\n\n           [[3.4880e+03, 3.4890e+03, 3.4900e+03,  ..., 3.4930e+03,\n             3.4940e+03, 3.4950e+03],\n            [3.4960e+03, 3.4970e+03, 3.4980e+03,  ..., 3.5010e+03,\n             3.5020e+03, 3.5030e+03],\n            [3.5040e+03, 3.5050e+03, 3.5060e+03,  ..., 3.5090e+03,\n             3.5100e+03, 3.5110e+03],\n            [3.5120e+03, 3.5130e+03, 3.5140e+03,  ..., 3.5170e+03,\n             3.5180e+03, 3.5190e+03]],\n\n           [[3.5200e+03, 3.5210e+03, 3.5220e+03,  ..., 3.5250e+03,\n             3.5260e+03, 3.5270e+03],\n            [3.5280e+03, 3.5290e+03, 3.5300e+03,  ..., 3.5330e+03,\n             3.5340e+03, 3.5350e+03],\n            [3.5360e+03, 3.5370e+03, 3.5380e+03,  ..., 3.5410e+03,\n             3.5420e+03, 3.5430e+03],\n            [3.5440e+03, 3.5450e+03, 3.5460e+03,  ..., 3.5490e+03,\n             3.5500e+03, 3.5510e+03]],\n\n           [[3.5520e+03, 3.5530e+03, 3.5540e+03,  ..., 3.5570e+03,\n             3.5580e+03, 3.5590e+03],\n            [3.5600e+03, 3.5610e+03, 3.5620e+03,  ..., 3.5650e+03,\n             3.5660e+03, 3.5670e+03],\n            [3.5680e+03, 3.5690e+03, 3.5700e+03,  ..., 3.5730e+03,\n             3.5740e+03, 3.5750e+03],\n            [3.5760e+03, 3.5770e+03, 3.5780e+03,  ..., 3.5810e+03,\n             3.5820e+03, 3.5830e+03]]],\n\n\n          [[[3.5840e+03, 3.5850e+03, 3.5860e+03,  ..., 3.5890e+03,\n             3.5900e+03, 3.5910e+03],\n            [3.5920e+03, 3.5930e+03, 3.5940e+03,  ..., 3.5970e+03,\n             3.5980e+03, 3.5990e+03],\n            [3.6000e+03, 3.6010e+03, 3.6020e+03,  ..., 3.6050e+03,\n             3.6060e+03, 3.6070e+03],\n            [3.6080e+03, 3.6090e+03, 3.6100e+03,  ..., 3.6130e+03,\n             3.6140e+03, 3.6150e+03]],\n\n           [[3.6160e+03, 3.6170e+03, 3.6180e+03,  ..., 3.6210e+03,\n             3.6220e+03, 3.6230e+03],\n            [3.6240e+03, 3.6250e+03, 3.6260e+03,  ..., 3.6290e+03,\n             3.6300e+03, 3.6310e+03],\n            [3.6320e+03, 3.6330e+03, 3.6340e+03,  ..., 3.6370e+03,\n             3.6380e+03, 3.6390e+03],\n            [3.6400e+03, 3.6410e+03, 3.6420e+03,  ..., 3.6450e+03,\n             3.6460e+03, 3.6470e+03]],\n\n           [[3.6480e+03, 3.6490e+03, 3.6500e+03,  ..., 3.6530e+03,\n             3.6540e+03, 3.6550e+03],\n            [3.6560e+03, 3.6570e+03, 3.6580e+03,  ..., 3.6610e+03,\n             3.6620e+03, 3.6630e+03],\n            [3.6640e+03, 3.6650e+03, 3.6660e+03,  ..., 3.6690e+03,\n             3.6700e+03, 3.6710e+03],\n            [3.6720e+03, 3.6730e+03, 3.6740e+03,  ..., 3.6770e+03,\n             3.6780e+03, 3.6790e+03]],\n\n           ...,\n\n           [[3.7440e+03, 3.7450e+03, 3.7460e+03,  ..., 3.7490e+03,\n             3.7500e+03, 3.7510e+03],\n            [3.7520e+03, 3.7530e+03, 3.7540e+03,  ..., 3.7570e+03,\n             3.7580e+03, 3.7590e+03],\n            [3.7600e+03, 3.7610e+03, 3.7620e+03,  ..., 3.7650e+03,\n             3.7660e+03, 3.7670e+03],\n            [3.7680e+03, 3.7690e+03, 3.7700e+03,  ..., 3.7730e+03,\n             3.7740e+03, 3.7750e+03]],\n\n           [[3.7760e+03, 3.7770e+03, 3.7780e+03,  ..., 3.7810e+03,\n             3.7820e+03, 3.7830e+03],\n            [3.7840e+03, 3.7850e+03, 3.7860e+03,  ..., 3.7890e+03,\n             3.7900e+03, 3.7910e+03],\n            [3.7920e+03, 3.7930e+03, 3.7940e+03,  ..., 3.7970e+03,\n             3.7980e+03, 3.7990e+03],\n            [3.8000e+03, 3.8010e+03, 3.8020e+03,  ..., 3.8050e+03,\n             3.8060e+03, 3.8070e+03]],\n\n           [[3.8080e+03, 3.8090e+03, 3.8100e+03,  ..., 3.8130e+03,\n             3.8140e+03, 3.8150e+03],\n            [3.8160e+03, 3.8170e+03, 3.8180e+03,  ..., 3.8210e+03,\n             3.8220e+03, 3.8230e+03],\n            [3.8240e+03, 3.8250e+03, 3.8260e+03,  ..., 3.8290e+03,\n             3.8300e+03, 3.8310e+03],\n            [3.8320e+03, 3.8330e+03, 3.8340e+03,  ..., 3.8370e+03,\n             3.8380e+03, 3.8390e+03]]],\n\n\n          [[[3.8400e+03, 3.8410e+03, 3.8420e+03,  ..., 3.8450e+03,\n             3.8460e+03, 3.8470e+03],\n            [3.8480e+03, 3.8490e+03, 3.8500e+03,  ..., 3.8530e+03,\n             3.8540e+03, 3.8550e+03],\n            [3.8560e+03, 3.8570e+03, 3.8580e+03,  ..., 3.8610e+03,\n             3.8620e+03, 3.8630e+03],\n            [3.8640e+03, 3.8650e+03, 3.8660e+03,  ..., 3.8690e+03,\n             3.8700e+03, 3.8710e+03]],\n\n           [[3.8720e+03, 3.8730e+03, 3.8740e+03,  ..., 3.8770e+03,\n             3.8780e+03, 3.8790e+03],\n            [3.8800e+03, 3.8810e+03, 3.8820e+03,  ..., 3.8850e+03,\n             3.8860e+03, 3.8870e+03],\n            [3.8880e+03, 3.8890e+03, 3.8900e+03,  ..., 3.8930e+03,\n             3.8940e+03, 3.8950e+03],\n            [3.8960e+03, 3.8970e+03, 3.8980e+03,  ..., 3.9010e+03,\n             3.9020e+03, 3.9030e+03]],\n\n           [[3.9040e+03, 3.9050e+03, 3.9060e+03,  ..., 3.9090e+03,\n             3.9100e+03, 3.9110e+03],\n            [3.9120e+03, 3.9130e+03, 3.9140e+03,  ..., 3.9170e+03,\n             3.9180e+03, 3.9190e+03],\n            [3.9200e+03, 3.9210e+03, 3.9220e+03,  ..., 3.9250e+03,\n             3.9260e+03, 3.9270e+03],\n            [3.9280e+03, 3.9290e+03, 3.9300e+03,  ..., 3.9330e+03,\n             3.9340e+03, 3.9350e+03]],\n\n           ...,\n\n           [[4.0000e+03, 4.0010e+03, 4.0020e+03,  ..., 4.0050e+03,\n             4.0060e+03, 4.0070e+03],\n            [4.0080e+03, 4.0090e+03, 4.0100e+03,  ..., 4.0130e+03,\n             4.0140e+03, 4.0150e+03],\n            [4.0160e+03, 4.0170e+03, 4.0180e+03,  ..., 4.0210e+03,\n             4.0220e+03, 4.0230e+03],\n            [4.0240e+03, 4.0250e+03, 4.0260e+03,  ..., 4.0290e+03,\n             4.0300e+03, 4.0310e+03]],\n\n           [[4.0320e+03, 4.0330e+03, 4.0340e+03,  ..., 4.0370e+03,\n             4.0380e+03, 4.0390e+03],\n            [4.0400e+03, 4.0410e+03, 4.0420e+03,  ..., 4.0450e+03,\n             4.0460e+03, 4.0470e+03],\n            [4.0480e+03, 4.0490e+03, 4.0500e+03,  ..., 4.0530e+03,\n             4.0540e+03, 4.0550e+03],\n            [4.0560e+03, 4.0570e+03, 4.0580e+03,  ..., 4.0610e+03,\n             4.0620e+03, 4.0630e+03]],\n\n           [[4.0640e+03, 4.0650e+03, 4.0660e+03,  ..., 4.0690e+03,\n             4.0700e+03, 4.0710e+03],\n            [4.0720e+03, 4.0730e+03, 4.0740e+03,  ..., 4.0770e+03,\n             4.0780e+03, 4.0790e+03],\n            [4.0800e+03, 4.0810e+03, 4.0820e+03,  ..., 4.0850e+03,\n             4.0860e+03, 4.0870e+03],\n            [4.0880e+03, 4.0890e+03, 4.0900e+03,  ..., 4.0930e+03,\n             4.0940e+03, 4.0950e+03]]]]]])"),
    ("sum_transposed", "tensor([[   0,   40,   80,  ..., 1080, 1120, 1160],\n        [   1,   41,   81,  ..., 1081, 1121, 1161],\n        [   2,   42,   82,  ..., 1082, 1122, 1162],\n        ...,\n        [  37,   77,  117,  ..., 1117, 1157, 1197],\n        [  38,   78,  118,  ..., 1118, 1158, 1198],\n        [  39,   79,  119,  ..., 1119, 1159, 1199]])"),
    ("sum_expanded", "tensor([[ 1.5000e+00, -2.0000e+00,  1.0000e-03],\n        [ 1.5000e+00, -2.0000e+00,  1.0000e-03],\n        [ 1.5000e+00, -2.0000e+00,  1.0000e-03],\n        ...,\n        [ 1.5000e+00, -2.0000e+00,  1.0000e-03],\n        [ 1.5000e+00, -2.0000e+00,  1.0000e-03],\n        [ 1.5000e+00, -2.0000e+00,  1.0000e-03]])"),
];

#[test]
fn debug_shows_values_and_layout() {
    let base = Tensor::arange(0.0, 6.0, 1.0, ScalarType::Float).unwrap();
    let t = base.as_strided(&[3, 2], &[1, 3], Some(0)).unwrap();
    let s = format!("{t:?}");
    let want = "Tensor { data: tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]]), \
                sizes: [3, 2], strides: [1, 3], storage_offset: 0, dtype: torch.float32, \
                device: cpu, requires_grad: false, storage: 0x";
    assert!(s.starts_with(want), "{s}");
    assert!(!s.contains("Device {"), "{s}");
    // Same storage, same id.
    let id = |t: &Tensor| {
        format!("{t:?}")
            .rsplit("storage: ")
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(id(&t), id(&base));

    // 0-dim tensor, pretty form: one field per line.
    let z = Tensor::from_vec(vec![7i64], &[]).unwrap();
    let p = format!("{z:#?}");
    assert!(p.starts_with("Tensor {\n    data: tensor(7),\n    sizes: [],\n    strides: [],\n    storage_offset: 0,\n    dtype: torch.int64,\n    device: cpu,\n"), "{p}");

    // Device-only metadata for meta tensors (PyTorch's `meta`).
    let m = meta(&[2, 3], ScalarType::Half);
    let s = format!("{m:?}");
    assert!(
        s.contains("device: meta") && s.contains("dtype: torch.float16"),
        "{s}"
    );
    assert!(
        s.contains("data: tensor(..., device='meta', size=(2, 3), dtype=torch.float16)"),
        "{s}"
    );

    // requires_grad shows.
    let w = Tensor::zeros(&[1], TensorOptions::new().requires_grad(true)).unwrap();
    assert!(format!("{w:?}").contains("requires_grad: true"));
}

/// Runs `f` on a thread with the default 2 MiB stack of `std::thread`
/// (set explicitly, so `RUST_MIN_STACK` cannot enlarge it): printing used
/// to recurse once per dim and overflowed that stack (an abort of the whole
/// process) at about 10,000 dims.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
#[cfg_attr(
    miri,
    ignore = "tens of thousands of dims: minutes when interpreted; printing is safe code"
)]
fn ten_thousand_size_one_dims_print_without_recursion() {
    const N: usize = 10_000;
    let (s, explained) = on_small_stack(|| {
        let t = Tensor::from_vec(vec![1.5f32], &[1; N]).unwrap();
        assert_eq!(t.dim(), N);
        (t.to_string(), t.explain())
    });
    // PyTorch's layout for size-1 dims: one bracket per dim, no breaks
    // (torch itself stops at Python's recursion limit, ~500 dims).
    let want = format!("tensor({}1.5000{})", "[".repeat(N), "]".repeat(N));
    assert_eq!(s, want);
    assert!(
        explained.starts_with("Tensor view: sizes ["),
        "{}",
        &explained[..80]
    );
}

#[test]
fn deep_tensors_with_long_dims_keep_torch_layout() {
    // Strings printed by torch 2.15.0: `torch.arange(4.).reshape(2, 1, 1,
    // 1, 2)` and `torch.arange(2000).reshape(10, 1, 1, 1, 200)` (a
    // summarized one: elision in the outer and the inner dim).
    let (a, b) = on_small_stack(|| {
        let a = tv((0..4).map(|i| i as f32).collect(), &[2, 1, 1, 1, 2]);
        let b = tv((0..2000i64).collect(), &[10, 1, 1, 1, 200]);
        (a.to_string(), b.to_string())
    });
    assert_eq!(a, "tensor([[[[[0., 1.]]]],\n\n\n\n        [[[[2., 3.]]]]])");
    let rows: Vec<String> = [0i64, 200, 400, -1, 1400, 1600, 1800]
        .iter()
        .map(|&r| {
            if r < 0 {
                return "...".to_owned();
            }
            let cell = |v: i64| format!("{v:4}");
            format!(
                "[[[[{}, {}, {},  ..., {}, {}, {}]]]]",
                cell(r),
                cell(r + 1),
                cell(r + 2),
                cell(r + 197),
                cell(r + 198),
                cell(r + 199)
            )
        })
        .collect();
    let want = format!("tensor([{}])", rows.join(",\n\n\n\n        "));
    assert_eq!(b, want);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "tens of thousands of dims: minutes when interpreted; printing is safe code"
)]
fn deep_tensor_with_two_elements_prints_in_linear_time() {
    // 50,000 dims with one of size 2: the separator between the two items
    // has 49,999 newlines (as PyTorch's layout would); the walk must not
    // be quadratic in the number of dims. `explain` too.
    const N: usize = 50_000;
    let s = on_small_stack(|| {
        let mut shape = vec![1i64; N];
        shape[0] = 2;
        let t = Tensor::from_vec(vec![true, false], &shape).unwrap();
        let start = std::time::Instant::now();
        let s = t.to_string();
        let e = t.explain();
        assert!(e.starts_with("Tensor view: sizes [2, 1, 1"), "{}", &e[..80]);
        assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
        s
    });
    let want = format!(
        "tensor([{open} True{close},{nl}{pad}{open}False{close}])",
        open = "[".repeat(N - 1),
        close = "]".repeat(N - 1),
        nl = "\n".repeat(N - 1),
        pad = " ".repeat(8),
    );
    assert_eq!(s.len(), want.len());
    assert!(s == want, "{}", &s[..200]);
}
