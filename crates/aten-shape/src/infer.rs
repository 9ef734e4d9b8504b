//! Shape arithmetic behind the view ops: ATen's `infer_size` (the `-1`
//! rule), `computeStride` (can a view be made?), `inferExpandGeometry`, and
//! broadcasting of shapes.
//!
//! Everything works on plain `&[i64]` sizes and strides (elements) and
//! returns [`DimVec`]s, which keep up to 8 dims on the stack.
//!
//! **Integer overflow.** PyTorch does this arithmetic in `int64_t` and, in
//! practice, wraps. The functions here wrap the same way (so they give the
//! same answers as PyTorch, even in absurd cases such as zero-element
//! tensors with dims of 2^62), and the `*_flagged` variants also report
//! whether any wrap happened, so that the view ops can send such geometry
//! through the storage-checked [`Tensor::as_strided`](c10_core::Tensor::as_strided)
//! instead of trusting it. No function here panics.

use c10_core::geometry::{fmt_list, fmt_tuple};
use c10_core::{Result, ShapeError, ShapeErrorKind};

use crate::ops::shape_err;

/// A small vector of sizes or strides: inline (no heap) up to 8 dims.
pub use c10_core::geometry::DimVec;

pub use crate::ops::reshape::infer_size;
// The view rules' concrete forms: crate-internal helpers, reachable here
// only for their doctests (hidden from the documentation).
#[doc(hidden)]
pub use crate::ops::expand::infer_expand_geometry;
#[doc(hidden)]
pub use crate::ops::reshape::compute_stride;

/// ATen's two-shape broadcast `infer_size(a, b)` (used by `copy_`):
/// right-aligned, sizes must be equal or one of them 1 (a 1 maps to the
/// other size, even 0). Examples in the unit tests below.
pub(crate) fn infer_broadcast_size(a: &[i64], b: &[i64]) -> Result<DimVec> {
    let ndim = a.len().max(b.len());
    let mut out: DimVec = smallvec::smallvec![0; ndim];
    for i in (0..ndim).rev() {
        let offset = ndim - 1 - i;
        let size_a = if offset < a.len() {
            a[a.len() - 1 - offset]
        } else {
            1
        };
        let size_b = if offset < b.len() {
            b[b.len() - 1 - offset]
        } else {
            1
        };
        if !(size_a == size_b || size_a == 1 || size_b == 1) {
            return Err(ShapeError::new(
                ShapeErrorKind::BroadcastMismatch,
                format!(
                    "The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) at non-singleton dimension {i}"
                ),
            )
            .with_dim(i as i64)
            .into());
        }
        out[i] = if size_a == 1 { size_b } else { size_a };
    }
    Ok(out)
}

/// `torch.broadcast_shapes(*shapes)`: the shape every input broadcasts to
/// (right-aligned; each dim equal or 1), with PyTorch's error texts. No
/// shapes at all gives `[]`.
///
/// ```
/// use aten_shape::infer::broadcast_shapes;
/// assert_eq!(broadcast_shapes(&[&[2], &[3, 1], &[1, 1, 1]]).unwrap(), vec![1, 3, 2]);
/// assert_eq!(
///     broadcast_shapes(&[&[2, 3], &[4, 3]]).unwrap_err().to_string(),
///     "Attempting to broadcast a dimension of length 4 at -2! Mismatching argument at index 1 \
///      had (4, 3); but expected shape should be broadcastable to [2, 3]"
/// );
/// ```
pub fn broadcast_shapes(shapes: &[&[i64]]) -> Result<Vec<i64>> {
    let max_len = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut common = vec![1i64; max_len];
    for (arg_idx, shape) in shapes.iter().enumerate() {
        for k in 1..=shape.len() {
            let s = shape[shape.len() - k];
            let c = &mut common[max_len - k];
            if s == *c {
                continue;
            }
            if *c == 1 {
                if s < 0 {
                    return Err(shape_err(
                        ShapeErrorKind::BroadcastNegative,
                        "Attempting to broadcast a dimension with negative length!",
                    )
                    .into());
                }
                *c = s;
            }
            if s == 1 {
                continue;
            }
            if *c != s {
                return Err(shape_err(ShapeErrorKind::BroadcastMismatch, format!(
                    "Attempting to broadcast a dimension of length {s} at -{k}! Mismatching argument at index {arg_idx} had {}; but expected shape should be broadcastable to {}",
                    fmt_tuple(shape),
                    fmt_list(&common)
                )).with_dim(-(k as i64)).with_sizes(shape).into());
            }
        }
    }
    Ok(common)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infer_size_rules() {
        assert_eq!(infer_size(&[-1, 3], 0).unwrap().as_slice(), &[0, 3]);
        assert_eq!(infer_size(&[], 1).unwrap().as_slice(), &[] as &[i64]);
        assert_eq!(
            infer_size(&[-1, -1], 4).unwrap_err().to_string(),
            "only one dimension can be inferred"
        );
        assert_eq!(
            infer_size(&[-2, 12], 24).unwrap_err().to_string(),
            "invalid shape dimension -2 at index 0 of shape [-2, 12]"
        );
        assert_eq!(
            infer_size(&[-1, 0], 24).unwrap_err().to_string(),
            "shape '[-1, 0]' is invalid for input of size 24"
        );
        // Wrapped products never make a wrong shape succeed here.
        assert!(infer_size(&[1 << 62, 4, -1], 3).is_err());
    }

    #[test]
    fn broadcast_size_examples() {
        assert_eq!(
            infer_broadcast_size(&[3, 1], &[4]).unwrap().as_slice(),
            &[3, 4]
        );
        assert_eq!(
            infer_broadcast_size(&[0, 1], &[1, 5]).unwrap().as_slice(),
            &[0, 5]
        );
        assert_eq!(infer_broadcast_size(&[], &[2]).unwrap().as_slice(), &[2]);
        assert_eq!(
            infer_broadcast_size(&[2, 3], &[4, 3]).unwrap_err().to_string(),
            "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0"
        );
    }

    #[test]
    fn shape_errors_carry_kind_and_values() {
        use c10_core::ShapeErrorKind as K;
        let e = infer_size(&[5, 5], 24).unwrap_err();
        let s = e.shape_error().unwrap();
        assert_eq!(s.kind(), K::NumelMismatch);
        assert_eq!((s.sizes(), s.numel()), (Some(&[5, 5][..]), Some(24)));
        assert_eq!(
            e.to_string(),
            "shape '[5, 5]' is invalid for input of size 24"
        );
        let e = infer_size(&[-1, -1], 4).unwrap_err();
        assert_eq!(e.shape_error().map(|s| s.kind()), Some(K::MultipleInferred));
        let e = infer_size(&[3, -2], 4).unwrap_err();
        let s = e.shape_error().unwrap();
        assert_eq!((s.kind(), s.dim()), (K::InvalidSize, Some(1)));
        let e = infer_size(&[-1, 0], 0).unwrap_err();
        assert_eq!(
            e.shape_error().map(|s| (s.kind(), s.dim())),
            Some((K::AmbiguousInferred, Some(0)))
        );
        let e = infer_broadcast_size(&[2, 3], &[4]).unwrap_err();
        let s = e.shape_error().unwrap();
        assert_eq!((s.kind(), s.dim()), (K::BroadcastMismatch, Some(1)));
        assert_eq!(
            e.to_string(),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
        );
        assert_eq!(e.kind(), c10_core::ErrorKind::Runtime);
    }

    #[test]
    fn compute_stride_examples() {
        let s = |o: &[i64], st: &[i64], n: &[i64]| compute_stride(o, st, n).map(|v| v.to_vec());
        assert_eq!(s(&[3, 4], &[1, 0], &[3, 2, 2]), Some(vec![1, 0, 0]));
        assert_eq!(s(&[3, 4], &[1, 0], &[12]), None);
        assert_eq!(s(&[4, 3], &[6, 2], &[4, 3, 1]), Some(vec![6, 2, 2]));
        assert_eq!(s(&[4, 1, 3], &[3, 100, 1], &[12]), Some(vec![1]));
        assert_eq!(
            s(&[2, 0, 3], &[7, 11, 13], &[2, 0, 3]),
            Some(vec![7, 11, 13])
        );
        assert_eq!(s(&[2, 0, 3], &[7, 11, 13], &[3, 0, 2]), Some(vec![2, 2, 1]));
        assert_eq!(s(&[0, 5], &[5, 1], &[5, 0]), Some(vec![1, 1]));
        assert_eq!(s(&[], &[], &[1, 1]), Some(vec![1, 1]));
        // Resize-style strides wrap like PyTorch's (and say so).
        let (st, wrapped) =
            crate::ops::reshape::compute_stride_flagged(&[3, 0], &[1, 1], &[0, 1 << 40, 1 << 40])
                .unwrap();
        assert_eq!(st.as_slice(), &[0, 1 << 40, 1]);
        assert!(wrapped);
    }

    #[test]
    fn broadcast() {
        assert_eq!(broadcast_shapes(&[]).unwrap(), Vec::<i64>::new());
        assert_eq!(broadcast_shapes(&[&[1, 3], &[0, 3]]).unwrap(), vec![0, 3]);
        assert_eq!(
            broadcast_shapes(&[&[2, 3], &[-1, 3]]).unwrap_err().to_string(),
            "Attempting to broadcast a dimension of length -1 at -2! Mismatching argument at index 1 had (-1, 3); but expected shape should be broadcastable to [2, 3]"
        );
        assert_eq!(
            broadcast_shapes(&[&[3], &[-1]]).unwrap_err().to_string(),
            "Attempting to broadcast a dimension of length -1 at -1! Mismatching argument at index 1 had (-1,); but expected shape should be broadcastable to [3]"
        );
        assert_eq!(
            broadcast_shapes(&[&[1], &[-1]]).unwrap_err().to_string(),
            "Attempting to broadcast a dimension with negative length!"
        );
        assert_eq!(
            infer_broadcast_size(&[1, 0], &[3, 1]).unwrap().as_slice(),
            &[3, 0]
        );
    }
}
