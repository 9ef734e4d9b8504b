//! Copies between tensors whose conjugate or negative bits differ
//! (PyTorch's `copy_` conjugates and negates in its kernel when the bits of
//! source and destination disagree). The stored values of the destination
//! must be the source's shown values seen back through the destination's
//! bits; since both bits are involutions that commute with each other and
//! with dtype conversion, that is the source's stored values with the
//! differing bits applied once: `P = conj^(src.conj ^ dst.conj) ∘
//! neg^(src.neg ^ dst.neg)`.
//!
//! Done in three steps, off the fast path (only tensors with a bit set get
//! here): the source's stored values into a fresh contiguous tensor, `P`
//! applied to it in place, then a plain copy into the destination's stored
//! values.

use c10_core::scalar_type::Element;
use c10_core::{MemoryFormat, Result, Tensor, TensorError};

/// Whether a copy from `src` into `dst` must go through [`copy_with_bits`].
#[inline]
pub(crate) fn bits_differ(dst: &Tensor, src: &Tensor) -> bool {
    dst.is_conj() != src.is_conj() || dst.is_neg() != src.is_neg()
}

/// `t`'s stored values: an alias of `t` without either bit.
fn stored(t: &Tensor) -> Tensor {
    let mut raw = t.clone();
    if t.is_conj() || t.is_neg() {
        let mut e = raw.edit_metadata(); // copies the shared TensorImpl
        e.set_conj(false);
        e.set_neg(false);
    }
    raw
}

/// `copy_into(dst, src)` for tensors whose bits differ (see the module
/// documentation).
pub(crate) fn copy_with_bits(dst: &Tensor, src: &Tensor) -> Result<()> {
    if !src.device().device_type().is_host_accessible() {
        return Err(TensorError::runtime(format!(
            "copying a tensor with the conjugate or negative bit set is not supported on {}; resolve it first (resolve_conj(), resolve_neg())",
            src.device()
        )));
    }
    let conj = dst.is_conj() != src.is_conj();
    let neg = dst.is_neg() != src.is_neg();
    let tmp = super::clone(&stored(src), MemoryFormat::Contiguous)?;
    if tmp.dtype().is_complex() || neg {
        c10_core::dispatch_dtype!(tmp.dtype(), T => {
            tmp.write::<T>()?.map_inplace(|v: T| v.through_bits(conj, neg));
        }, {
            return Err(TensorError::runtime(format!(
                "cannot conjugate or negate elements of dtype {}",
                tmp.dtype()
            )));
        });
    }
    super::copy_into(&stored(dst), &tmp)
}
