//! `cat` and `stack`: joining tensors along a dimension, by copying, with
//! PyTorch 2.15's shape rules, dtype promotion and error messages.
//!
//! * The result has the common dtype of all inputs
//!   ([`promote::result_type`](crate::promote::result_type)); each input is
//!   converted while it is copied in.
//! * The legacy rule: a 1-d tensor with no elements (sizes `[0]`) is skipped
//!   by `cat` whatever the other tensors' shapes (it still takes part in
//!   dtype promotion), so `cat([zeros([0]), x], d)` is a copy of `x`. Other
//!   empty tensors (`[2, 0]`) follow the normal shape rules.
//! * The result is a new contiguous tensor, channels-last when every input
//!   suggests channels-last (PyTorch's `cat_compute_output_memory_format`).
//!
//! ```
//! use aten_shape::join::{cat, stack};
//! use c10_core::{ScalarType, Tensor};
//! let a = Tensor::from([[1i64, 2], [3, 4]]);
//! let b = Tensor::from([[5.5f32, 6.5]]);
//! let c = cat(&[&a, &b], 0)?; // int64 and float32 make float32
//! assert_eq!((c.sizes(), c.dtype()), (&[3i64, 2][..], ScalarType::Float));
//! assert_eq!(c.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0, 5.5, 6.5]);
//! let s = stack(&[&a, &a], -1)?;
//! assert_eq!(s.sizes(), &[2, 2, 2]);
//! assert_eq!(s.to_vec::<i64>()?, vec![1, 1, 2, 2, 3, 3, 4, 4]);
//! # Ok::<(), c10_core::TensorError>(())
//! ```

use std::borrow::Borrow;

use c10_core::geometry::{fmt_list, wrap_dim};
use c10_core::{MemoryFormat, Result, Tensor, TensorError, TensorOptions};

use crate::copy::copy_into;
use crate::promote::result_type;
use crate::views;

/// `cat`'s legacy skip rule: a 1-d tensor with no elements.
fn should_skip(t: &Tensor) -> bool {
    t.dim() == 1 && t.sizes()[0] == 0
}

/// PyTorch's `cat_compute_output_memory_format`: the inputs' common
/// suggested format, `Contiguous` as soon as one is contiguous or two
/// differ.
fn output_memory_format(tensors: &[&Tensor]) -> MemoryFormat {
    let mut format = None;
    for t in tensors {
        let f = t.suggest_memory_format();
        if f == MemoryFormat::Contiguous {
            return f;
        }
        if format.is_some_and(|g| g != f) {
            return MemoryFormat::Contiguous;
        }
        format = Some(f);
    }
    format.unwrap_or(MemoryFormat::Contiguous)
}

/// `torch.cat(tensors, dim)`: the tensors joined along `dim`, in a new
/// tensor of their common dtype.
///
/// All non-skipped inputs must have the same number of dimensions and the
/// same sizes except at `dim`; `dim` may be negative and is wrapped against
/// the first input that is not a skipped `[0]` tensor. Errors, in the order
/// PyTorch checks them:
///
/// * `torch.cat(): expected a non-empty list of Tensors` (a `ValueError`,
///   [`TensorError::Value`]);
/// * `zero-dimensional tensor (at position 1) cannot be concatenated`;
/// * `Dimension out of range (expected to be in range of [-2, 1], but got
///   5)` (an index error);
/// * dtype promotion errors (`Promotion for uint16, uint32, uint64 types is
///   not supported, ...`);
/// * `Tensors must have same number of dimensions: got 2 and 3`;
/// * `Sizes of tensors must match except in dimension 1. Expected size 2
///   but got size 3 for tensor number 1 in the list.`
///
/// All inputs must be on one device. Works on `&[Tensor]` and
/// `&[&Tensor]`.
///
/// ```
/// use aten_shape::join::cat;
/// use c10_core::Tensor;
/// let a = Tensor::from([[1i64, 2], [3, 4]]);
/// let b = Tensor::from([[5i64, 6, 7], [8, 9, 10]]);
/// let c = cat(&[&a, &b], 1)?;
/// assert_eq!(c.sizes(), &[2, 5]);
/// assert_eq!(c.to_vec::<i64>()?, vec![1, 2, 5, 6, 7, 3, 4, 8, 9, 10]);
/// assert_eq!(
///     cat(&[&a, &b], 0).unwrap_err().to_string(),
///     "Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 for tensor number 1 in the list."
/// );
/// // The legacy rule: `[0]` tensors are skipped whatever the shapes.
/// let empty = Tensor::from(Vec::<i64>::new());
/// assert_eq!(cat(&[&empty, &a], 1)?.to_vec::<i64>()?, vec![1, 2, 3, 4]);
/// assert_eq!(
///     cat::<Tensor>(&[], 0).unwrap_err().to_string(),
///     "torch.cat(): expected a non-empty list of Tensors"
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn cat<T: Borrow<Tensor>>(tensors: &[T], dim: i64) -> Result<Tensor> {
    // Symbolic tensors have no concrete sizes to join (c10's sizes() throws).
    for t in tensors {
        t.borrow().checked_sizes()?;
    }
    let tensors: Vec<&Tensor> = tensors.iter().map(Borrow::borrow).collect();
    if tensors.is_empty() {
        return Err(TensorError::Value(
            "torch.cat(): expected a non-empty list of Tensors".into(),
        ));
    }
    for (i, t) in tensors.iter().enumerate() {
        if t.dim() == 0 {
            return Err(TensorError::runtime(format!(
                "zero-dimensional tensor (at position {i}) cannot be concatenated"
            )));
        }
    }
    // legacy_cat_wrap_dim: against the first tensor that is not skipped.
    let valid = tensors.iter().position(|t| !should_skip(t));
    let dim = match valid {
        Some(v) => wrap_dim(dim, tensors[v].dim() as i64, true)?,
        None => 0,
    };
    let dtype = result_type(tensors.iter().map(|t| t.dtype()))?;
    let device = tensors[0].device();
    if let Some(other) = tensors.iter().find(|t| t.device() != device) {
        return Err(TensorError::runtime(format!(
            "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
            device,
            other.device()
        )));
    }
    let sizes = match valid {
        None => vec![0],
        Some(v) => {
            let first = tensors[v];
            let mut size_at_dim: i64 = 0;
            for (i, t) in tensors.iter().enumerate() {
                if should_skip(t) {
                    continue;
                }
                if t.dim() != first.dim() {
                    return Err(TensorError::runtime(format!(
                        "Tensors must have same number of dimensions: got {} and {}",
                        first.dim(),
                        t.dim()
                    )));
                }
                for (d, (&a, &b)) in first.sizes().iter().zip(t.sizes()).enumerate() {
                    if d != dim && a != b {
                        return Err(TensorError::runtime(format!(
                            "Sizes of tensors must match except in dimension {dim}. Expected size {a} but got size {b} for tensor number {i} in the list."
                        )));
                    }
                }
                size_at_dim = size_at_dim.checked_add(t.sizes()[dim]).ok_or_else(|| {
                    TensorError::runtime("cat: the size of the result overflows int64")
                })?;
            }
            let mut sizes = first.sizes().to_vec();
            sizes[dim] = size_at_dim;
            sizes
        }
    };
    let options = TensorOptions::new()
        .dtype(dtype)
        .device(device)
        .memory_format(output_memory_format(&tensors));
    let mut out = Tensor::empty(&sizes, options)?;
    let mut offset = 0;
    for t in &tensors {
        if should_skip(t) {
            continue;
        }
        let len = t.sizes()[dim];
        if len > 0 {
            let part = views::narrow(&out, dim as i64, offset, len)?;
            copy_into(&part, t)?;
        }
        offset += len;
    }
    // With grad mode on, the result requires grad when any input does. (Unlike
    // `clone`, PyTorch's cat of inference tensors leaves version 0.)
    out.record_output_of(&tensors);
    Ok(out)
}

/// `torch.stack(tensors, dim)`: the tensors, which must all have the same
/// sizes, joined along a new dimension inserted at `dim` (which ranges
/// over `ndim + 1` positions, so `-1` appends one), in a new tensor of
/// their common dtype.
///
/// Errors are PyTorch's: `stack expects a non-empty TensorList`, the dim
/// range error (`Dimension out of range (expected to be in range of [-3,
/// 2], but got 3)` for 2-d inputs), `stack expects each tensor to be equal
/// size, but got [2, 3] at entry 0 and [2, 4] at entry 1`, then `cat`'s
/// dtype promotion errors.
///
/// ```
/// use aten_shape::join::stack;
/// use c10_core::Tensor;
/// let a = Tensor::from([1i32, 2, 3]);
/// let b = Tensor::from([4i32, 5, 6]);
/// let s = stack(&[&a, &b], 0)?;
/// assert_eq!(s.sizes(), &[2, 3]);
/// let s = stack(&[&a, &b], 1)?;
/// assert_eq!((s.sizes(), s.to_vec::<i32>()?), (&[3i64, 2][..], vec![1, 4, 2, 5, 3, 6]));
/// let c = Tensor::from([7i32, 8]);
/// assert_eq!(
///     stack(&[&a, &c], 0).unwrap_err().to_string(),
///     "stack expects each tensor to be equal size, but got [3] at entry 0 and [2] at entry 1"
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn stack<T: Borrow<Tensor>>(tensors: &[T], dim: i64) -> Result<Tensor> {
    // Symbolic tensors have no concrete sizes to join (c10's sizes() throws).
    for t in tensors {
        t.borrow().checked_sizes()?;
    }
    let tensors: Vec<&Tensor> = tensors.iter().map(Borrow::borrow).collect();
    let Some(first) = tensors.first() else {
        return Err(TensorError::runtime("stack expects a non-empty TensorList"));
    };
    let ndim = first.dim() as i64;
    let d = wrap_dim(dim, ndim + 1, true)? as i64;
    for (i, t) in tensors.iter().enumerate().skip(1) {
        if t.sizes() != first.sizes() {
            return Err(TensorError::runtime(format!(
                "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {i}",
                fmt_list(first.sizes()),
                fmt_list(t.sizes())
            )));
        }
    }
    let mut sizes = first.sizes().to_vec();
    sizes.insert(d as usize, tensors.len() as i64);
    if d < ndim {
        // As PyTorch: cat along `d`, then split that dim with a view.
        let out = cat(&tensors, d)?;
        views::view(&out, &sizes)
    } else {
        let parts = tensors
            .iter()
            .map(|t| views::unsqueeze(t, d))
            .collect::<Result<Vec<_>>>()?;
        cat(&parts, d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use c10_core::ScalarType;

    #[test]
    fn all_skipped_gives_an_empty_vector() {
        let e = Tensor::from(Vec::<f64>::new());
        let i = Tensor::from(Vec::<i32>::new());
        let c = cat(&[&e, &i], 3).unwrap();
        assert_eq!((c.sizes(), c.dtype()), (&[0i64][..], ScalarType::Double));
        let s = stack(&[&e, &e], 0).unwrap();
        assert_eq!(s.sizes(), &[2, 0]);
    }

    #[test]
    fn result_is_fresh() {
        let a = Tensor::from([1u8, 2]);
        let c = cat(&[&a], 0).unwrap();
        assert!(!c.is_alias_of(&a));
        assert_eq!(c.version().unwrap(), 0);
    }

    #[test]
    fn autograd_and_inference_bookkeeping() {
        let mut w = Tensor::from([1.0f32, 2.0]);
        w.set_requires_grad(true).unwrap();
        let plain = Tensor::from([3.0f32]);
        let c = cat(&[&plain, &w], 0).unwrap();
        assert!(c.requires_grad() && !c.is_leaf());
        let s = stack(&[&w, &w], 1).unwrap();
        assert!(s.requires_grad());
        let x = {
            let _guard = c10_core::InferenceMode::new();
            Tensor::from([1i64, 2])
        };
        // As PyTorch: cat of inference tensors outside inference mode has
        // version 0 (clone's would be 1).
        assert_eq!(cat(&[&x, &x], 0).unwrap().version().unwrap(), 0);
    }
}
