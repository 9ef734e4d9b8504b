//! Complex views and the conjugate / negative bits: `view_as_real`,
//! `view_as_complex`, `real`, `imag`, the lazy `conj()` and `_neg_view()`
//! (views that only set c10's `Conjugate` / `Negative` key bit),
//! `resolve_conj`, `resolve_neg`, `conj_physical`, and the conjugate
//! transposes `adjoint` / `mH` / `H` (ATen's `TensorShape.cpp`,
//! `UnaryOps.cpp` and `ComplexHelper.h`).
//!
//! Every view here goes through [`Tensor::view_with_geometry`], so it
//! shares the storage and version counter, keeps the key set (a view of a
//! conjugated tensor is conjugated too) and records its base
//! ([`Tensor::view_base`]), as in PyTorch. Reads, writes and copies apply
//! the bits (see `c10_core::Tensor::is_conj`).

use super::prelude::*;
use crate::copy as copy_api;
use crate::views;

/// The message PyTorch gives when `view_as_real` meets a lazy conjugate.
const VIEW_AS_REAL_OF_CONJ: &str = "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so you can view it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT alias the original.";

/// `torch.view_as_real(t)`: a complex tensor's elements as pairs of real
/// numbers, a new last dim of size 2 (real, imaginary) with stride 1; the
/// other strides and the offset double. Refused for a non-complex tensor
/// (PyTorch's `TypeError`) and for a lazy conjugate (resolve it first).
///
/// ```
/// use aten_shape::views;
/// use c10_core::scalar_type::Complex64;
/// use c10_core::{ScalarType, Tensor};
/// let c = Tensor::from_slice_1d(&[Complex64::new(1.0, 2.0), Complex64::new(3.0, 4.0)])?;
/// let r = views::view_as_real(&c)?;
/// assert_eq!((r.sizes(), r.strides(), r.dtype()), (&[2i64, 2][..], &[2i64, 1][..], ScalarType::Float));
/// assert_eq!(r.to_vec::<f32>()?, [1.0, 2.0, 3.0, 4.0]);
/// assert!(r.view_base().is_some_and(|b| b.is_same(&c)));
/// assert_eq!(
///     views::view_as_real(&Tensor::zeros(&[2], ScalarType::Float)?).unwrap_err().to_string(),
///     "view_as_real is only supported for complex tensors"
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn view_as_real(t: &Tensor) -> Result<Tensor> {
    if !t.dtype().is_complex() {
        return Err(TensorError::Type(
            "view_as_real is only supported for complex tensors".into(),
        ));
    }
    if t.is_conj() {
        return Err(TensorError::runtime(VIEW_AS_REAL_OF_CONJ));
    }
    real_pairs(t)
}

/// `view_as_real` without the conjugate check (ATen's
/// `_view_as_real_physical`): the stored pairs.
fn real_pairs(t: &Tensor) -> Result<Tensor> {
    let n = t.dim();
    let mut sizes = DimVec::with_capacity(n + 1);
    let mut strides = DimVec::with_capacity(n + 1);
    for (&s, &st) in t.sizes().iter().zip(t.strides()) {
        sizes.push(s);
        strides.push(doubled(st)?);
    }
    sizes.push(2);
    strides.push(1);
    let offset = doubled(t.storage_offset())?;
    // The pairs cover exactly the bytes of the complex elements.
    let mut v = t.view_with_geometry(&sizes, &strides, offset)?;
    v.edit_metadata().set_dtype(t.dtype().to_real_value_type());
    Ok(v)
}

/// `x * 2` for a stride or offset of a complex tensor viewed as reals.
fn doubled(x: i64) -> Result<i64> {
    x.checked_mul(2)
        .ok_or_else(|| TensorError::runtime("view_as_real: stride or offset overflows int64"))
}

/// `torch.view_as_complex(t)`: a tensor of half, float or double whose
/// last dim has size 2 and stride 1 read as complex numbers (the last dim
/// goes; the other strides and the offset halve). PyTorch's checks, in its
/// order and words: the dtype (`NotImplementedError`), at least one dim,
/// last dim of size 2, last stride 1, the other strides even, the storage
/// offset even.
///
/// ```
/// use aten_shape::views::{self, ViewOps};
/// use c10_core::scalar_type::Complex64;
/// use c10_core::{ScalarType, Tensor};
/// let x = Tensor::arange(0, 8, 1, ScalarType::Float)?;
/// let c = views::view_as_complex(&x.view(&[4, 2])?)?;
/// assert_eq!((c.sizes(), c.dtype()), (&[4i64][..], ScalarType::ComplexFloat));
/// assert_eq!(c.get::<Complex64>(&[1])?, Complex64::new(2.0, 3.0));
/// let odd = x.narrow(0, 1, 6)?.view(&[3, 2])?;
/// assert_eq!(
///     views::view_as_complex(&odd).unwrap_err().to_string(),
///     "Tensor must have a storage_offset divisible by 2"
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn view_as_complex(t: &Tensor) -> Result<Tensor> {
    let dtype = t.dtype();
    let complex = match dtype {
        ScalarType::Half | ScalarType::Float | ScalarType::Double => dtype.to_complex_type(),
        _ => None,
    };
    let Some(complex) = complex else {
        return Err(TensorError::NotImplemented(format!(
            "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: {}",
            dtype.name()
        )));
    };
    let n = t.dim();
    if n == 0 {
        return Err(TensorError::runtime(
            "Input tensor must have one or more dimensions",
        ));
    }
    let (sizes, strides) = (t.sizes(), t.strides());
    if sizes[n - 1] != 2 {
        return Err(TensorError::runtime(
            "Tensor must have a last dimension of size 2",
        ));
    }
    if strides[n - 1] != 1 {
        return Err(TensorError::runtime(
            "Tensor must have a last dimension with stride 1",
        ));
    }
    if strides[..n - 1].iter().any(|s| s % 2 != 0) {
        return Err(TensorError::runtime(
            "Tensor must have a stride divisible by 2 for all but last dimension",
        ));
    }
    if t.storage_offset() % 2 != 0 {
        return Err(TensorError::runtime(
            "Tensor must have a storage_offset divisible by 2",
        ));
    }
    let new_strides: DimVec = strides[..n - 1].iter().map(|s| s / 2).collect();
    // Each complex element is a (real, imaginary) pair the input reaches.
    let mut v = t.view_with_geometry(&sizes[..n - 1], &new_strides, t.storage_offset() / 2)?;
    v.edit_metadata().set_dtype(complex);
    Ok(v)
}

/// `t.real`: for a complex tensor, a view of the real parts (`select(-1,
/// 0)` of its pairs; a lazy conjugate has the same real parts); any other
/// tensor is its own real part (`t` itself, as PyTorch returns `self`).
///
/// ```
/// use aten_shape::views;
/// use c10_core::scalar_type::Complex64;
/// use c10_core::{ScalarType, Tensor};
/// let c = Tensor::from_slice_1d(&[Complex64::new(1.0, 2.0), Complex64::new(3.0, 4.0)])?;
/// let re = views::real(&c)?;
/// assert_eq!((re.to_vec::<f32>()?, re.strides()), (vec![1.0, 3.0], &[2i64][..]));
/// re.fill_(9.0)?; // writes through
/// assert_eq!(c.get::<Complex64>(&[1])?, Complex64::new(9.0, 4.0));
/// let x = Tensor::zeros(&[2], ScalarType::Float)?;
/// assert!(views::real(&x)?.is_same(&x));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn real(t: &Tensor) -> Result<Tensor> {
    if !t.dtype().is_complex() {
        return Ok(t.clone());
    }
    let pairs = real_pairs(t)?;
    let mut re = views::select(&pairs, -1, 0)?;
    // The real parts of a conjugate are the stored ones.
    re.edit_metadata().set_conj(false);
    Ok(re)
}

/// `t.imag`: a view of a complex tensor's imaginary parts. For a lazy
/// conjugate it is a negative view (`_neg_view`) of the stored imaginary
/// parts, as in PyTorch. Refused for other dtypes (PyTorch's `TypeError`).
///
/// ```
/// use aten_shape::views;
/// use c10_core::scalar_type::Complex64;
/// use c10_core::{ScalarType, Tensor};
/// let c = Tensor::from_slice_1d(&[Complex64::new(1.0, 2.0)])?;
/// assert_eq!(views::imag(&c)?.to_vec::<f32>()?, [2.0]);
/// let im = views::imag(&views::conj(&c)?)?;
/// assert!(im.is_neg() && im.to_vec::<f32>()? == [-2.0]);
/// assert_eq!(
///     views::imag(&Tensor::zeros(&[1], ScalarType::Float)?).unwrap_err().to_string(),
///     "imag is not implemented for tensors with non-complex dtypes."
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn imag(t: &Tensor) -> Result<Tensor> {
    if !t.dtype().is_complex() {
        return Err(TensorError::Type(
            "imag is not implemented for tensors with non-complex dtypes.".into(),
        ));
    }
    let pairs = real_pairs(t)?;
    let mut im = views::select(&pairs, -1, 1)?;
    if t.is_conj() {
        let neg = !im.is_neg();
        let mut e = im.edit_metadata();
        e.set_conj(false);
        e.set_neg(neg);
    }
    Ok(im)
}

/// `t.conj()`: for a complex tensor, a lazy conjugate (a view with the
/// conjugate bit flipped: the conjugate of a conjugate is a plain view);
/// any other tensor is returned itself, as PyTorch does.
///
/// ```
/// use aten_shape::views;
/// use c10_core::scalar_type::Complex64;
/// use c10_core::{ScalarType, Tensor};
/// let c = Tensor::from_slice_1d(&[Complex64::new(1.0, 2.0)])?;
/// let cc = views::conj(&c)?;
/// assert!(cc.is_conj() && cc.is_alias_of(&c));
/// assert_eq!(cc.get::<Complex64>(&[0])?, Complex64::new(1.0, -2.0));
/// assert!(!views::conj(&cc)?.is_conj());
/// let x = Tensor::zeros(&[2], ScalarType::Float)?;
/// assert!(views::conj(&x)?.is_same(&x));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn conj(t: &Tensor) -> Result<Tensor> {
    if !t.dtype().is_complex() {
        return Ok(t.clone());
    }
    conj_view(t)
}

/// ATen's `_conj(t)`: a view with the conjugate bit flipped, for complex
/// tensors only (PyTorch asserts on other dtypes; this is an error).
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let c = Tensor::zeros(&[2], ScalarType::ComplexDouble)?;
/// assert!(views::conj_view(&c)?.is_conj());
/// assert!(views::conj_view(&Tensor::zeros(&[2], ScalarType::Float)?).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn conj_view(t: &Tensor) -> Result<Tensor> {
    if !t.dtype().is_complex() {
        return Err(TensorError::runtime(format!(
            "_conj is only defined for complex tensors, but got a tensor of dtype {}",
            t.dtype()
        )));
    }
    let mut v = alias(t)?;
    let flipped = !t.is_conj();
    v.edit_metadata().set_conj(flipped);
    Ok(v)
}

/// ATen's `_neg_view(t)`: a view with the negative bit flipped (reads show
/// `-x`). Refused for `bool`, as PyTorch's negation is.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let x = Tensor::arange(1, 3, 1, ScalarType::Long)?;
/// let n = views::neg_view(&x)?;
/// assert!(n.is_neg() && n.to_vec::<i64>()? == [-1, -2]);
/// assert!(!views::neg_view(&n)?.is_neg());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn neg_view(t: &Tensor) -> Result<Tensor> {
    if t.dtype() == ScalarType::Bool {
        return Err(TensorError::NotImplemented(
            "\"neg_cpu\" not implemented for 'Bool'".into(),
        ));
    }
    let mut v = alias(t)?;
    let flipped = !t.is_neg();
    v.edit_metadata().set_neg(flipped);
    Ok(v)
}

/// `resolve_conj()`: `t` itself without the conjugate bit, else a new
/// tensor holding the conjugated values (not a view; a negative bit is
/// resolved too, as PyTorch's copy does).
///
/// ```
/// use aten_shape::views;
/// use c10_core::scalar_type::Complex64;
/// use c10_core::Tensor;
/// let c = Tensor::from_slice_1d(&[Complex64::new(1.0, 2.0)])?;
/// assert!(views::resolve_conj(&c)?.is_same(&c));
/// let r = views::resolve_conj(&views::conj(&c)?)?;
/// assert!(!r.is_conj() && !r.is_alias_of(&c) && !r.is_view());
/// assert_eq!(r.get::<Complex64>(&[0])?, Complex64::new(1.0, -2.0));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn resolve_conj(t: &Tensor) -> Result<Tensor> {
    if !t.is_conj() {
        return Ok(t.clone());
    }
    copy_api::clone(t, MemoryFormat::Preserve)
}

/// `resolve_neg()`: `t` itself without the negative bit, else a new tensor
/// holding the negated values.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let x = Tensor::arange(1, 3, 1, ScalarType::Float)?;
/// assert!(views::resolve_neg(&x)?.is_same(&x));
/// let r = views::resolve_neg(&views::neg_view(&x)?)?;
/// assert!(!r.is_neg() && r.to_vec::<f32>()? == [-1.0, -2.0]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn resolve_neg(t: &Tensor) -> Result<Tensor> {
    if !t.is_neg() {
        return Ok(t.clone());
    }
    copy_api::clone(t, MemoryFormat::Preserve)
}

/// `conj_physical()`: a new tensor holding the conjugated values (for a
/// lazy conjugate, the stored ones); any non-complex tensor is returned
/// itself, as in PyTorch.
///
/// ```
/// use aten_shape::views;
/// use c10_core::scalar_type::Complex64;
/// use c10_core::{ScalarType, Tensor};
/// let c = Tensor::from_slice_1d(&[Complex64::new(1.0, 2.0)])?;
/// let p = views::conj_physical(&c)?;
/// assert!(!p.is_conj() && !p.is_alias_of(&c));
/// assert_eq!(p.get::<Complex64>(&[0])?, Complex64::new(1.0, -2.0));
/// let x = Tensor::zeros(&[2], ScalarType::Float)?;
/// assert!(views::conj_physical(&x)?.is_same(&x));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn conj_physical(t: &Tensor) -> Result<Tensor> {
    if !t.dtype().is_complex() {
        return Ok(t.clone());
    }
    copy_api::clone(&conj_view(t)?, MemoryFormat::Preserve)
}

/// `adjoint()` / `mH`: the conjugate transpose of the last two dims
/// (`transpose(-2, -1).conj()`, a view; for a real tensor just the
/// transpose). A 0-dim tensor is returned itself (PyTorch warns that this
/// is deprecated); a 1-dim one is refused.
///
/// ```
/// use aten_shape::views::{self, ViewOps};
/// use c10_core::scalar_type::Complex64;
/// use c10_core::Tensor;
/// let c = Tensor::from_slice(&[Complex64::new(1.0, 2.0), Complex64::new(3.0, 4.0)], &[1, 2])?;
/// let h = views::adjoint(&c)?;
/// assert!(h.is_conj() && h.sizes() == [2, 1]);
/// assert_eq!(h.get::<Complex64>(&[1, 0])?, Complex64::new(3.0, -4.0));
/// assert_eq!(
///     views::adjoint(&c.view(&[2])?).unwrap_err().to_string(),
///     "tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor."
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn adjoint(t: &Tensor) -> Result<Tensor> {
    conj_transpose_last(t, "tensor.adjoint()")
}

/// `mH`: the same as [`adjoint`], with `mH`'s error text.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::zeros(&[5, 2, 3], ScalarType::ComplexFloat)?;
/// assert_eq!(views::mh(&m)?.sizes(), &[5, 3, 2]);
/// assert!(views::mh(&Tensor::zeros(&[2], ScalarType::Float)?).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn mh(t: &Tensor) -> Result<Tensor> {
    conj_transpose_last(t, "tensor.mH")
}

/// `transpose(-2, -1).conj()` with `what`'s error for 1-dim tensors.
fn conj_transpose_last(t: &Tensor, what: &str) -> Result<Tensor> {
    match t.dim() {
        // PyTorch 2.15 (deprecated): a 0-dim tensor gives `self.conj()`.
        0 => conj(t),
        1 => Err(TensorError::runtime(format!(
            "{what} is only supported on matrices or batches of matrices. Got 1-D tensor."
        ))),
        _ => conj(&views::transpose(t, -2, -1)?),
    }
}

/// `H`: the conjugate transpose of a matrix (`t().conj()`); a 0-dim tensor
/// gives its `conj()` (deprecated in PyTorch), other ranks are refused.
///
/// ```
/// use aten_shape::views;
/// use c10_core::{ScalarType, Tensor};
/// let m = Tensor::zeros(&[2, 3], ScalarType::ComplexFloat)?;
/// assert!(views::h(&m)?.is_conj());
/// assert_eq!(
///     views::h(&Tensor::zeros(&[2, 2, 2], ScalarType::Float)?).unwrap_err().to_string(),
///     "tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. For batches of matrices, consider using tensor.mH"
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn h(t: &Tensor) -> Result<Tensor> {
    match t.dim() {
        // PyTorch 2.15 (deprecated): a 0-dim tensor gives `self.conj()`.
        0 => conj(t),
        2 => conj(&views::t(t)?),
        n => Err(TensorError::runtime(format!(
            "tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{}",
            if n > 2 {
                " For batches of matrices, consider using tensor.mH"
            } else {
                ""
            }
        ))),
    }
}
