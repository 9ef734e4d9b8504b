//! The conversions into tensors, the `tensor!` macro, serde, and the
//! dtype-mismatch message.

use c10_core::{tensor, Device, ScalarType, Tensor};

#[test]
fn from_slices_scalars_and_deep_arrays() {
    let v = vec![1u16, 2, 3, 4];
    let t = Tensor::from(&v[1..3]);
    assert_eq!((t.sizes(), t.dtype()), (&[2i64][..], ScalarType::UInt16));
    assert_eq!(t.to_vec::<u16>().unwrap(), vec![2, 3]);
    assert_eq!(Tensor::from(&v).to_vec::<u16>().unwrap(), v);

    for (t, dtype) in [
        (Tensor::from(1.5f32), ScalarType::Float),
        (Tensor::from(-3i8), ScalarType::Char),
        (Tensor::from(true), ScalarType::Bool),
        (
            Tensor::from(half::bf16::from_f32(2.0)),
            ScalarType::BFloat16,
        ),
    ] {
        assert_eq!((t.dim(), t.numel(), t.dtype()), (0, 1, dtype));
    }
    assert_eq!(Tensor::from(7u64).item::<u64>().unwrap(), 7);

    let t6 = Tensor::from([[[[[[1i32, 2], [3, 4]]]]]]);
    assert_eq!(t6.sizes(), &[1, 1, 1, 1, 2, 2]);
    assert_eq!(t6.to_vec::<i32>().unwrap(), vec![1, 2, 3, 4]);
    let mut a5 = [[[[[0i64; 3]; 2]; 1]; 2]; 1];
    a5[0][1][0][1][2] = 9;
    let t5 = Tensor::from(a5);
    assert_eq!(t5.get::<i64>(&[0, 1, 0, 1, 2]).unwrap(), 9);
    assert_eq!(t5.to_vec::<i64>().unwrap().iter().sum::<i64>(), 9);
}

#[test]
fn tensor_macro_matches_torch_tensor() {
    let t = tensor![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
    assert_eq!(t.sizes(), &[2, 3]);
    assert_eq!(
        t.to_vec::<f32>().unwrap(),
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
    assert_eq!(
        t,
        Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap()
    );
    assert_eq!(tensor![1, 2].dtype(), ScalarType::Int); // Rust's i32 default
    assert_eq!(tensor![[[[1u8]]]].sizes(), &[1, 1, 1, 1]);
}

#[test]
fn dtype_mismatch_says_how_to_convert() {
    let t = tensor![1.0f32, 2.0];
    let msg = t.to_vec::<f64>().unwrap_err().to_string();
    assert_eq!(
        msg,
        "expected a tensor of dtype torch.float64 but this tensor has dtype torch.float32; \
         convert it first with `t.to(ScalarType::Double)?` (the prelude's `DtypeOps`), \
         or read elements of any dtype as f64 with `to_f64_vec()`"
    );
    assert_eq!(t.to_f64_vec().unwrap(), vec![1.0, 2.0]);
}

#[test]
fn serde_round_trips() {
    for st in [
        ScalarType::Float,
        ScalarType::BFloat16,
        ScalarType::ComplexDouble,
        ScalarType::Bool,
    ] {
        let json = serde_json::to_string(&st).unwrap();
        assert_eq!(json, format!("\"{}\"", st.torch_name()));
        assert_eq!(serde_json::from_str::<ScalarType>(&json).unwrap(), st);
    }
    for d in [Device::CPU, Device::cuda(3), Device::META] {
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(serde_json::from_str::<Device>(&json).unwrap(), d);
    }
    let both: (ScalarType, Device) = serde_json::from_str(r#"["float16", "cuda:1"]"#).unwrap();
    assert_eq!(both, (ScalarType::Half, Device::cuda(1)));
    assert!(serde_json::from_str::<ScalarType>("\"float33\"").is_err());
    assert!(serde_json::from_str::<Device>("3").is_err());
}
