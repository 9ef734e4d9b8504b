//! Complex views (`view_as_real`, `view_as_complex`, `real`, `imag`) and
//! the conjugate / negative bits (`conj`, `_neg_view`, `resolve_*`,
//! `conj_physical`, `adjoint` / `mH` / `H`, copies through the bits), with
//! the geometry, values, error texts and error kinds PyTorch 2.15 gives
//! (each expected value below was printed by torch 2.15.0).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use aten_shape::copy::{self, CopyOps};
use aten_shape::views::{self, ViewOps};
use c10_core::scalar_type::{Complex128, Complex64};
use c10_core::{ErrorKind, MemoryFormat, Result, ScalarType, Tensor, TensorError};

type Geom = (Vec<i64>, Vec<i64>, i64, ScalarType);

fn geom(t: &Tensor) -> Geom {
    (
        t.sizes().to_vec(),
        t.strides().to_vec(),
        t.storage_offset(),
        t.dtype(),
    )
}

fn g(sizes: &[i64], strides: &[i64], offset: i64, dtype: ScalarType) -> Geom {
    (sizes.to_vec(), strides.to_vec(), offset, dtype)
}

fn err(r: Result<Tensor>) -> (ErrorKind, String) {
    let e: TensorError = r.unwrap_err();
    (e.kind(), e.to_string())
}

fn z(re: f32, im: f32) -> Complex64 {
    Complex64::new(re, im)
}

/// torch.tensor([1+2j, 3-4j])
fn c2() -> Tensor {
    Tensor::from_slice_1d(&[z(1.0, 2.0), z(3.0, -4.0)]).unwrap()
}

/// torch.arange(8.)
fn x8() -> Tensor {
    Tensor::arange(0, 8, 1, ScalarType::Float).unwrap()
}

#[test]
fn view_as_real_geometry_and_errors() -> Result<()> {
    use ScalarType::*;
    let c = views::view_as_complex(&x8().view(&[4, 2])?)?;
    assert_eq!(geom(&c.view_as_real()?), g(&[4, 2], &[2, 1], 0, Float));
    let tail = c.slice(0, Some(1), None, 1)?;
    assert_eq!(geom(&tail.view_as_real()?), g(&[3, 2], &[2, 1], 2, Float));
    let every_other = c.slice(0, None, None, 2)?;
    assert_eq!(
        geom(&every_other.view_as_real()?),
        g(&[2, 2], &[4, 1], 0, Float)
    );
    assert_eq!(
        geom(&c.select(0, 0)?.view_as_real()?),
        g(&[2], &[1], 0, Float)
    );
    let half = Tensor::zeros(&[2], ComplexHalf)?;
    assert_eq!(geom(&half.view_as_real()?), g(&[2, 2], &[2, 1], 0, Half));
    let not_complex = (
        ErrorKind::Type,
        "view_as_real is only supported for complex tensors".to_string(),
    );
    assert_eq!(err(x8().view_as_real()), not_complex);
    assert_eq!(
        err(Tensor::arange(0, 4, 1, Long)?.view_as_real()),
        not_complex
    );
    assert_eq!(
        err(c.conj()?.view_as_real()),
        (ErrorKind::Runtime, "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so you can view it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT alias the original.".to_string())
    );
    // A negative view stays negative.
    let n = c2().neg_view()?.view_as_real()?;
    assert!(n.is_neg());
    assert_eq!(n.to_vec::<f32>()?, [-1.0, -2.0, -3.0, 4.0]);
    Ok(())
}

#[test]
fn view_as_complex_geometry_and_errors() -> Result<()> {
    use ScalarType::*;
    let x = x8();
    let rt = |m: &str| (ErrorKind::Runtime, m.to_string());
    let c = x
        .view(&[4, 2])?
        .slice(0, Some(1), None, 1)?
        .view_as_complex()?;
    assert_eq!(geom(&c), g(&[3], &[1], 1, ComplexFloat));
    assert_eq!(c.get::<Complex64>(&[0])?, z(2.0, 3.0));
    assert_eq!(
        geom(
            &x.view(&[2, 4])?
                .slice(1, None, Some(2), 1)?
                .view_as_complex()?
        ),
        g(&[2], &[2], 0, ComplexFloat)
    );
    assert_eq!(
        err(x.view_as_complex()),
        rt("Tensor must have a last dimension of size 2")
    );
    assert_eq!(
        err(x.narrow(0, 1, 6)?.view(&[3, 2])?.view_as_complex()),
        rt("Tensor must have a storage_offset divisible by 2")
    );
    assert_eq!(
        err(x.view(&[2, 4])?.t()?.view_as_complex()),
        rt("Tensor must have a last dimension with stride 1")
    );
    assert_eq!(
        err(x.as_strided(&[2, 2], &[3, 1], None)?.view_as_complex()),
        rt("Tensor must have a stride divisible by 2 for all but last dimension")
    );
    assert_eq!(
        err(Tensor::zeros(&[2, 1], Float)?
            .expand(&[2, 2])?
            .view_as_complex()),
        rt("Tensor must have a last dimension with stride 1")
    );
    assert_eq!(
        err(Tensor::zeros(&[], Double)?.view_as_complex()),
        rt("Input tensor must have one or more dimensions")
    );
    for (dtype, name) in [(Long, "Long"), (BFloat16, "BFloat16")] {
        assert_eq!(
            err(Tensor::zeros(&[4, 2], dtype)?.view_as_complex()),
            (ErrorKind::NotImplemented, format!("view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: {name}"))
        );
    }
    assert_eq!(
        geom(&Tensor::zeros(&[4, 2], Half)?.view_as_complex()?),
        g(&[4], &[1], 0, ComplexHalf)
    );
    assert_eq!(
        geom(&Tensor::zeros(&[4, 2], Double)?.view_as_complex()?),
        g(&[4], &[1], 0, ComplexDouble)
    );
    assert_eq!(
        geom(&Tensor::zeros(&[0, 2], Float)?.view_as_complex()?),
        g(&[0], &[1], 0, ComplexFloat)
    );
    assert_eq!(
        geom(
            &Tensor::zeros(&[2, 2], Float)?
                .expand(&[3, 2, 2])?
                .view_as_complex()?
        ),
        g(&[3, 2], &[0, 1], 0, ComplexFloat)
    );
    assert_eq!(
        geom(
            &Tensor::zeros(&[2, 2, 2], Float)?
                .transpose(0, 1)?
                .view_as_complex()?
        ),
        g(&[2, 2], &[1, 2], 0, ComplexFloat)
    );
    Ok(())
}

#[test]
fn complex_views_are_tracked_views_of_the_root() -> Result<()> {
    let x = x8();
    let c = x.view(&[4, 2])?.view_as_complex()?;
    assert!(c.view_base().is_some_and(|b| b.is_same(&x)));
    for v in [c.view_as_real()?, c.real()?, c.imag()?, c.conj()?] {
        assert!(v.view_base().is_some_and(|b| b.is_same(&x)));
    }
    // `real` of a real tensor is the tensor itself.
    assert!(x.real()?.is_same(&x));
    Ok(())
}

#[test]
fn real_and_imag_read_and_write_through() -> Result<()> {
    let c = c2();
    let (re, im) = (c.real()?, c.imag()?);
    assert_eq!(geom(&re), g(&[2], &[2], 0, ScalarType::Float));
    assert_eq!(geom(&im), g(&[2], &[2], 1, ScalarType::Float));
    assert_eq!(
        (re.to_vec::<f32>()?, im.to_vec::<f32>()?),
        (vec![1.0, 3.0], vec![2.0, -4.0])
    );
    // `c.real = [9, 9]`: a copy into the view.
    re.copy_(&Tensor::from_slice_1d(&[9.0f32, 9.0])?)?;
    im.fill_(5.0)?;
    assert_eq!(c.to_vec::<Complex64>()?, [z(9.0, 5.0), z(9.0, 5.0)]);
    assert_eq!(
        err(Tensor::zeros(&[3], ScalarType::Float)?.imag()),
        (
            ErrorKind::Type,
            "imag is not implemented for tensors with non-complex dtypes.".to_string()
        )
    );
    // Through a lazy conjugate: real is plain, imag is a negative view.
    let cc = c2().conj()?;
    let (re, im) = (cc.real()?, cc.imag()?);
    assert!(!re.is_conj() && !re.is_neg() && im.is_neg() && !im.is_conj());
    assert_eq!(
        (re.to_vec::<f32>()?, im.to_vec::<f32>()?),
        (vec![1.0, 3.0], vec![-2.0, 4.0])
    );
    // Writing through the negative view stores the negation.
    im.fill_(1.0)?;
    assert_eq!(cc.to_vec::<Complex64>()?, [z(1.0, 1.0), z(3.0, 1.0)]);
    // A conjugate of a negative view: imag loses the negative bit.
    let nc = c2().neg_view()?.conj()?;
    assert!(!nc.imag()?.is_neg());
    assert_eq!(nc.imag()?.to_vec::<f32>()?, [2.0, -4.0]);
    Ok(())
}

#[test]
fn conj_is_lazy_and_reads_honour_it() -> Result<()> {
    let c = c2();
    let cc = c.conj()?;
    assert!(cc.is_conj() && !cc.is_neg() && cc.is_alias_of(&c));
    assert!(cc.view_base().is_some_and(|b| b.is_same(&c)));
    assert_eq!(cc.to_vec::<Complex64>()?, [z(1.0, -2.0), z(3.0, 4.0)]);
    assert_eq!(cc.select(0, 0)?.item::<Complex64>()?, z(1.0, -2.0));
    assert_eq!(format!("{cc}"), "tensor([1.-2.j, 3.+4.j])");
    // Views of a conjugate are conjugates; conj of conj is a plain view.
    assert!(cc.slice(0, Some(1), None, 1)?.is_conj());
    let back = cc.conj()?;
    assert!(!back.is_conj() && back.view_base().is_some_and(|b| b.is_same(&c)));
    // Real tensors: conj is the tensor itself; `_conj` refuses.
    let x = x8();
    assert!(x.conj()?.is_same(&x));
    assert!(x.conj_view().is_err());
    // A conjugate's stored values are untouched.
    assert_eq!(c.to_vec::<Complex64>()?, [z(1.0, 2.0), z(3.0, -4.0)]);
    // The slice accessors refuse to show stored values as shown ones.
    assert!(cc.read::<Complex64>()?.as_slice().is_err());
    Ok(())
}

#[test]
fn neg_view_reads_wrap_and_refuse_bool() -> Result<()> {
    let u = Tensor::from_slice_1d(&[1u8, 2])?;
    let n = u.neg_view()?;
    assert!(n.is_neg() && n.view_base().is_some_and(|b| b.is_same(&u)));
    assert_eq!(n.to_vec::<u8>()?, [255, 254]);
    assert_eq!(
        format!("{}", x8().slice(0, None, Some(2), 1)?.neg_view()?),
        "tensor([-0., -1.])"
    );
    assert!(!n.neg_view()?.is_neg());
    assert_eq!(
        err(Tensor::zeros(&[1], ScalarType::Bool)?.neg_view()),
        (
            ErrorKind::NotImplemented,
            "\"neg_cpu\" not implemented for 'Bool'".to_string()
        )
    );
    Ok(())
}

#[test]
fn copies_apply_the_bits() -> Result<()> {
    let c = c2();
    let cc = c.conj()?;
    // clone resolves (not a conjugate, values conjugated).
    let cl = cc.clone_in(MemoryFormat::Preserve)?;
    assert!(!cl.is_conj() && !cl.is_view());
    assert_eq!(cl.to_vec::<Complex64>()?, [z(1.0, -2.0), z(3.0, 4.0)]);
    // contiguous of a contiguous conjugate is itself; to(dtype) resolves.
    assert!(cc.contiguous()?.is_same(&cc));
    let wide = copy::to_dtype(&cc, ScalarType::ComplexDouble)?;
    assert!(!wide.is_conj());
    assert_eq!(wide.get::<Complex128>(&[0])?, Complex128::new(1.0, -2.0));
    assert_eq!(
        copy::to_dtype(&cc, ScalarType::Float)?.to_vec::<f32>()?,
        [1.0, 3.0]
    );
    // copy_ into a plain tensor.
    let d = Tensor::zeros(&[2], ScalarType::ComplexFloat)?;
    d.copy_(&cc)?;
    assert_eq!(d.to_vec::<Complex64>()?, [z(1.0, -2.0), z(3.0, 4.0)]);
    // copy_ into a conjugate: shown values are the source's, stored ones
    // their conjugates.
    let store = Tensor::zeros(&[2], ScalarType::ComplexFloat)?;
    let dc = store.conj()?;
    dc.copy_(&c)?;
    assert_eq!(dc.to_vec::<Complex64>()?, c.to_vec::<Complex64>()?);
    assert_eq!(
        store.view_as_real()?.to_vec::<f32>()?,
        [1.0, -2.0, 3.0, 4.0]
    );
    assert_eq!(store.version()?, 1);
    // copy_ into a negative view; fill_ through one.
    let plain = Tensor::zeros(&[2], ScalarType::Float)?;
    plain
        .neg_view()?
        .copy_(&Tensor::from_slice_1d(&[1.0f32, 2.0])?)?;
    assert_eq!(plain.to_vec::<f32>()?, [-1.0, -2.0]);
    plain.neg_view()?.fill_(3.0)?;
    assert_eq!(plain.to_vec::<f32>()?, [-3.0, -3.0]);
    // In place through the same storage: c.copy_(c.conj()).
    let own = c2();
    own.copy_(&own.conj()?)?;
    assert_eq!(own.to_vec::<Complex64>()?, [z(1.0, -2.0), z(3.0, 4.0)]);
    // A broadcast source.
    let wide_dst = Tensor::zeros(&[2, 2], ScalarType::ComplexFloat)?;
    wide_dst.copy_(&c2().conj()?)?;
    assert_eq!(wide_dst.get::<Complex64>(&[1, 1])?, z(3.0, 4.0));
    Ok(())
}

#[test]
fn resolve_and_conj_physical() -> Result<()> {
    let c = c2();
    let n = c.neg_view()?;
    // resolve_conj of a conjugated negative view resolves both (torch:
    // `[(-1+2j), (-3-4j)]`, neither bit).
    let r = n.conj()?.resolve_conj()?;
    assert!(!r.is_conj() && !r.is_neg() && !r.is_view());
    assert_eq!(r.to_vec::<Complex64>()?, [z(-1.0, 2.0), z(-3.0, -4.0)]);
    assert!(c.resolve_conj()?.is_same(&c) && c.resolve_neg()?.is_same(&c));
    let rn = n.resolve_neg()?;
    assert!(!rn.is_neg());
    assert_eq!(rn.to_vec::<Complex64>()?, [z(-1.0, -2.0), z(-3.0, 4.0)]);
    // conj_physical: a new tensor with conjugated values.
    let p = c.conj_physical()?;
    assert!(!p.is_conj() && !p.is_alias_of(&c));
    assert_eq!(p.to_vec::<Complex64>()?, [z(1.0, -2.0), z(3.0, 4.0)]);
    assert_eq!(
        c.conj()?.conj_physical()?.to_vec::<Complex64>()?,
        c.to_vec::<Complex64>()?
    );
    assert_eq!(
        n.conj_physical()?.to_vec::<Complex64>()?,
        [z(-1.0, 2.0), z(-3.0, -4.0)]
    );
    let x = x8();
    assert!(x.conj_physical()?.is_same(&x));
    Ok(())
}

#[test]
fn conjugate_transposes() -> Result<()> {
    let rt = |m: &str| (ErrorKind::Runtime, m.to_string());
    let row = c2().view(&[1, 2])?;
    for v in [row.h()?, row.mh()?, row.adjoint()?] {
        assert_eq!(geom(&v), g(&[2, 1], &[1, 2], 0, ScalarType::ComplexFloat));
        assert!(v.is_conj() && v.view_base().is_some_and(|b| b.view_base().is_none()));
        assert_eq!(v.get::<Complex64>(&[0, 0])?, z(1.0, -2.0));
    }
    assert!(!c2().conj()?.view(&[2, 1])?.h()?.is_conj());
    let real = x8().view(&[2, 4])?;
    assert!(!real.h()?.is_conj() && real.mh()?.sizes() == [4, 2]);
    let scalar = Tensor::zeros(&[], ScalarType::Float)?;
    assert!(scalar.h()?.is_same(&scalar) && scalar.mh()?.is_same(&scalar));
    let c = c2();
    assert_eq!(
        err(c.h()),
        rt("tensor.H is only supported on matrices (2-D tensors). Got 1-D tensor.")
    );
    assert_eq!(
        err(Tensor::zeros(&[2, 2, 2], ScalarType::Float)?.h()),
        rt("tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. For batches of matrices, consider using tensor.mH")
    );
    assert_eq!(
        err(c.mh()),
        rt("tensor.mH is only supported on matrices or batches of matrices. Got 1-D tensor.")
    );
    assert_eq!(
        err(c.adjoint()),
        rt("tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor.")
    );
    let batch = c2().view(&[1, 2, 1])?.mh()?;
    assert_eq!(
        geom(&batch),
        g(&[1, 1, 2], &[2, 1, 1], 0, ScalarType::ComplexFloat)
    );
    Ok(())
}

#[test]
fn view_dtype_refuses_the_bits() -> Result<()> {
    let rt = |m: &str| (ErrorKind::Runtime, m.to_string());
    assert_eq!(
        err(c2().conj()?.view_dtype(ScalarType::Float)),
        rt("torch.Tensor.view is not supported for conjugate view tensors when converting to a different dtype.")
    );
    assert_eq!(
        err(c2().conj()?.view_dtype(ScalarType::ComplexFloat)),
        rt("torch.Tensor.view is not supported for conjugate view tensors when converting to a different dtype.")
    );
    assert_eq!(
        err(x8().neg_view()?.view_dtype(ScalarType::Int)),
        rt("torch.Tensor.view is not supported for tensors with negative bit set when converting to a different dtype.")
    );
    Ok(())
}
