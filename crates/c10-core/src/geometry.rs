//! Pure shape arithmetic shared by the tensor layer and the view ops:
//! dimension wrapping, numel, contiguous and channels-last strides, storage
//! sizes and bounds checks, all overflow-checked with c10's messages.
//!
//! Everything here works on plain `&[i64]` sizes and strides (elements, not
//! bytes), so it is easy to test and to reuse.

use crate::error::{Result, ShapeError, ShapeErrorKind, TensorError};

/// A small vector of sizes or strides: up to 8 dims on the stack, so shape
/// arithmetic on the view path never touches the heap.
pub type DimVec = smallvec::SmallVec<[i64; 8]>;

/// Formats a list as PyTorch prints `IntArrayRef`: `[2, 3]`.
///
/// ```
/// use c10_core::geometry::fmt_list;
/// assert_eq!(fmt_list(&[2, 3]), "[2, 3]");
/// assert_eq!(fmt_list::<i64>(&[]), "[]");
/// ```
pub fn fmt_list<T: std::fmt::Display>(v: &[T]) -> String {
    let mut s = String::from("[");
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&x.to_string());
    }
    s.push(']');
    s
}

/// Formats a shape as Python prints a tuple (`torch.Size` in messages and
/// reprs): `(4, 3)`, `(4,)`, `()`.
///
/// ```
/// use c10_core::geometry::fmt_tuple;
/// assert_eq!(fmt_tuple(&[4, 3]), "(4, 3)");
/// assert_eq!(fmt_tuple(&[4]), "(4,)");
/// assert_eq!(fmt_tuple(&[]), "()");
/// ```
pub fn fmt_tuple(v: &[i64]) -> String {
    match v {
        [x] => format!("({x},)"),
        _ => {
            let list = fmt_list(v);
            format!("({})", &list[1..list.len() - 1])
        }
    }
}

/// c10's `maybe_wrap_dim(dim, ndim, wrap_scalar)`: accepts `-ndim..ndim`,
/// and for `ndim == 0` with `wrap_scalar` accepts `0` and `-1`.
///
/// ```
/// use c10_core::geometry::wrap_dim;
/// assert_eq!(wrap_dim(-1, 3, true).unwrap(), 2);
/// assert_eq!(
///     wrap_dim(3, 3, true).unwrap_err().to_string(),
///     "Dimension out of range (expected to be in range of [-3, 2], but got 3)"
/// );
/// ```
pub fn wrap_dim(dim: i64, ndim: i64, wrap_scalar: bool) -> Result<usize> {
    if ndim < 0 {
        return Err(ShapeError::new(
            ShapeErrorKind::NegativeRank,
            format!("Rank cannot be negative but got {ndim}"),
        )
        .into());
    }
    if ndim == 0 {
        if !wrap_scalar {
            return Err(ShapeError::new(
                ShapeErrorKind::NoDims,
                format!("Dimension specified as {dim} but tensor has no dimensions"),
            )
            .with_dim(dim)
            .into());
        }
        return wrap_dim(dim, 1, false);
    }
    if dim < -ndim || dim >= ndim {
        return Err(ShapeError::new(
            ShapeErrorKind::DimOutOfRange,
            format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                -ndim,
                ndim - 1
            ),
        )
        .with_dim(dim)
        .into());
    }
    Ok(if dim < 0 {
        (dim + ndim) as usize
    } else {
        dim as usize
    })
}

/// c10's `safe_compute_numel`: the product of sizes as `u64`, failing when
/// it overflows or exceeds `i64::MAX` (a negative size, read as a huge
/// `u64`, fails too, as in c10).
///
/// ```
/// use c10_core::geometry::compute_numel;
/// assert_eq!(compute_numel(&[2, 3, 4])?, 24);
/// assert_eq!(compute_numel(&[])?, 1); // a scalar has one element
/// assert!(compute_numel(&[i64::MAX, 2]).is_err()); // overflow
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn compute_numel(sizes: &[i64]) -> Result<i64> {
    let mut n: u64 = 1;
    for &s in sizes {
        n = n
            .checked_mul(s as u64)
            .ok_or_else(|| TensorError::runtime("numel: integer multiplication overflow"))?;
    }
    if n > i64::MAX as u64 {
        return Err(TensorError::runtime(
            "numel: integer multiplication overflow",
        ));
    }
    Ok(n as i64)
}

/// Checks factory sizes: `Trying to create tensor with negative dimension -3: [2, -3]`.
///
/// ```
/// use c10_core::geometry::check_non_negative;
/// assert!(check_non_negative(&[2, 0]).is_ok());
/// let err = check_non_negative(&[2, -3]).unwrap_err();
/// assert_eq!(err.to_string(), "Trying to create tensor with negative dimension -3: [2, -3]");
/// ```
pub fn check_non_negative(sizes: &[i64]) -> Result<()> {
    if let Some(&bad) = sizes.iter().find(|&&s| s < 0) {
        return Err(TensorError::runtime(format!(
            "Trying to create tensor with negative dimension {bad}: {}",
            fmt_list(sizes)
        )));
    }
    Ok(())
}

/// Row-major strides with c10's rule `stride[i] = stride[i+1] * max(size[i+1], 1)`.
///
/// ```
/// use c10_core::geometry::contiguous_strides;
/// assert_eq!(contiguous_strides(&[2, 0, 3]).unwrap().as_slice(), &[3, 3, 1]);
/// ```
pub fn contiguous_strides(sizes: &[i64]) -> Result<DimVec> {
    let mut strides: DimVec = smallvec::smallvec![0; sizes.len()];
    let mut running: i64 = 1;
    for d in (0..sizes.len()).rev() {
        strides[d] = running;
        running = running
            .checked_mul(sizes[d].max(1))
            .ok_or_else(|| TensorError::runtime("Stride calculation overflowed"))?;
    }
    Ok(strides)
}

/// c10's `get_channels_last_strides_2d` (rank 4: `s1 = 1, s3 = C, s2 = s3*W, s0 = s2*H`; no max-with-1).
///
/// ```
/// use c10_core::geometry::channels_last_strides_2d;
/// // N=2, C=3, H=4, W=5: C varies fastest.
/// assert_eq!(channels_last_strides_2d(&[2, 3, 4, 5])?.as_slice(), &[60, 1, 15, 3]);
/// assert!(channels_last_strides_2d(&[3, 4, 5]).is_err()); // rank 4 only
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn channels_last_strides_2d(sizes: &[i64]) -> Result<DimVec> {
    if sizes.len() != 4 {
        return Err(TensorError::runtime(
            "required rank 4 tensor to use channels_last format",
        ));
    }
    let ov = || TensorError::runtime("Stride calculation overflowed");
    let s1 = 1i64;
    let s3 = sizes[1];
    let s2 = s3.checked_mul(sizes[3]).ok_or_else(ov)?;
    let s0 = s2.checked_mul(sizes[2]).ok_or_else(ov)?;
    Ok(smallvec::smallvec![s0, s1, s2, s3])
}

/// c10's `get_channels_last_strides_3d` (rank 5).
///
/// ```
/// use c10_core::geometry::channels_last_strides_3d;
/// // N=1, C=2, D=3, H=4, W=5.
/// assert_eq!(channels_last_strides_3d(&[1, 2, 3, 4, 5])?.as_slice(), &[120, 1, 40, 10, 2]);
/// assert!(channels_last_strides_3d(&[2, 3, 4, 5]).is_err()); // rank 5 only
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn channels_last_strides_3d(sizes: &[i64]) -> Result<DimVec> {
    if sizes.len() != 5 {
        return Err(TensorError::runtime(
            "required rank 5 tensor to use channels_last_3d format",
        ));
    }
    let ov = || TensorError::runtime("Stride calculation overflowed");
    let s1 = 1i64;
    let s4 = sizes[1];
    let s3 = s4.checked_mul(sizes[4]).ok_or_else(ov)?;
    let s2 = s3.checked_mul(sizes[3]).ok_or_else(ov)?;
    let s0 = s2.checked_mul(sizes[2]).ok_or_else(ov)?;
    Ok(smallvec::smallvec![s0, s1, s2, s3, s4])
}

/// c10's `computeStorageNbytesContiguous(sizes, itemsize, offset)`:
/// `(prod(sizes) + offset) * itemsize`, overflow-checked.
///
/// ```
/// use c10_core::geometry::storage_nbytes_contiguous;
/// // Six `f32`s after an offset of one element.
/// assert_eq!(storage_nbytes_contiguous(&[2, 3], 4, 1)?, 28);
/// assert!(storage_nbytes_contiguous(&[i64::MAX, 2], 8, 0).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn storage_nbytes_contiguous(sizes: &[i64], itemsize: usize, offset: i64) -> Result<usize> {
    let err = || {
        TensorError::runtime(format!(
            "Storage size calculation overflowed with sizes={}",
            fmt_list(sizes)
        ))
    };
    let mut n: u64 = 1;
    for &s in sizes {
        n = n.checked_mul(s as u64).ok_or_else(err)?;
    }
    let n = n
        .checked_add(offset as u64)
        .and_then(|n| n.checked_mul(itemsize as u64))
        .ok_or_else(err)?;
    if n > max_bytes() {
        return Err(err());
    }
    Ok(n as usize)
}

fn max_bytes() -> u64 {
    (i64::MAX as u64).min(usize::MAX as u64)
}

/// c10's `computeStorageNbytes(sizes, strides, itemsize, offset)`: the bytes
/// needed to hold element `offset + Σ stride·(size−1)`, or 0 when any size
/// is 0 (the offset is then ignored). Negative sizes or strides wrap to
/// huge unsigned values and fail the overflow check, as in c10.
///
/// ```
/// use c10_core::geometry::storage_nbytes;
/// assert_eq!(storage_nbytes(&[2, 3], &[1, 2], 4, 0).unwrap(), 24);
/// assert_eq!(storage_nbytes(&[2, 3], &[0, 0], 4, 0).unwrap(), 4);
/// ```
pub fn storage_nbytes(
    sizes: &[i64],
    strides: &[i64],
    itemsize: usize,
    offset: i64,
) -> Result<usize> {
    if sizes.len() != strides.len() {
        return Err(TensorError::runtime(format!(
            "dimensionality of sizes ({}) must match dimensionality of strides ({})",
            sizes.len(),
            strides.len()
        )));
    }
    let err = || {
        TensorError::runtime(format!(
            "Storage size calculation overflowed with sizes={} and strides={}",
            fmt_list(sizes),
            fmt_list(strides)
        ))
    };
    // c10 returns 0 at the first size-0 dim even if the arithmetic for the
    // dims before it overflowed, so a zero-element layout is never an error.
    if sizes.contains(&0) {
        return Ok(0);
    }
    let mut size: u64 = (offset as u64).checked_add(1).ok_or_else(err)?;
    for (&n, &st) in sizes.iter().zip(strides) {
        let t = (st as u64)
            .checked_mul((n as u64).wrapping_sub(1))
            .ok_or_else(err)?;
        size = size.checked_add(t).ok_or_else(err)?;
    }
    let size = size.checked_mul(itemsize as u64).ok_or_else(err)?;
    if size > max_bytes() {
        return Err(err());
    }
    Ok(size as usize)
}

/// c10's `checkInBoundsForStorage`: the layout must fit in `storage_nbytes`
/// (skipped when the layout has no elements). `elements_per_byte` is 2 or 4
/// for the packed quantized types and 1 otherwise.
///
/// ```
/// use c10_core::geometry::check_in_bounds_for_storage;
/// // A 2x3 `f32` layout needs 24 bytes, or 28 with an offset of one element.
/// assert!(check_in_bounds_for_storage(&[2, 3], &[3, 1], 0, 4, 1, 24).is_ok());
/// assert!(check_in_bounds_for_storage(&[2, 3], &[3, 1], 1, 4, 1, 24).is_err());
/// assert!(check_in_bounds_for_storage(&[0, 3], &[3, 1], 9, 4, 1, 0).is_ok()); // no elements
/// ```
pub fn check_in_bounds_for_storage(
    sizes: &[i64],
    strides: &[i64],
    offset: i64,
    itemsize: usize,
    elements_per_byte: usize,
    storage_nbytes_available: usize,
) -> Result<()> {
    let div = |b: usize| b.div_ceil(elements_per_byte.max(1));
    let bytes = div(storage_nbytes(sizes, strides, itemsize, 0)?);
    let with_offset = div(storage_nbytes(sizes, strides, itemsize, offset)?);
    if bytes == 0 || with_offset <= storage_nbytes_available {
        return Ok(());
    }
    Err(TensorError::runtime(format!(
        "setStorage: sizes {}, strides {}, storage offset {offset}, and itemsize {itemsize} requiring a storage size of {with_offset} are out of bounds for storage of size {storage_nbytes_available}",
        fmt_list(sizes),
        fmt_list(strides)
    )))
}

/// Checks that `sizes` and `strides` describe the same number of dims, the
/// precondition of every layout predicate below (c10's `set_sizes_and_strides`
/// message).
///
/// ```
/// use c10_core::geometry::check_same_rank;
/// assert!(check_same_rank(&[2, 3], &[3, 1]).is_ok());
/// assert_eq!(
///     check_same_rank(&[2, 3], &[1]).unwrap_err().to_string(),
///     "dimensionality of sizes (2) must match dimensionality of strides (1)"
/// );
/// ```
pub fn check_same_rank(sizes: &[i64], strides: &[i64]) -> Result<()> {
    if sizes.len() == strides.len() {
        return Ok(());
    }
    Err(TensorError::runtime(format!(
        "dimensionality of sizes ({}) must match dimensionality of strides ({})",
        sizes.len(),
        strides.len()
    )))
}

/// c10's `compute_contiguous`: row-major, ignoring size-1 dims, true for
/// any layout with no elements. Errors if the ranks differ.
///
/// ```
/// use c10_core::geometry::is_contiguous;
/// assert!(is_contiguous(&[2, 3], &[3, 1], 6)?);
/// assert!(!is_contiguous(&[2, 3], &[1, 2], 6)?);
/// assert!(is_contiguous(&[2, 3], &[1], 6).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn is_contiguous(sizes: &[i64], strides: &[i64], numel: i64) -> Result<bool> {
    check_same_rank(sizes, strides)?;
    Ok(is_contiguous_same_rank(sizes, strides, numel))
}

/// [`is_contiguous`] for layouts known to have one stride per size.
#[inline]
pub(crate) fn is_contiguous_same_rank(sizes: &[i64], strides: &[i64], numel: i64) -> bool {
    // The one implementation of the rule, shared with symbolic shapes; at
    // `i64` it cannot fail and compiles to the plain loop.
    matches!(
        crate::sym::rules::compute_contiguous_numel(sizes, strides, &numel),
        Ok(true)
    )
}

fn channels_last_contiguous_in_order(sizes: &[i64], strides: &[i64], order: &[usize]) -> bool {
    let mut expected: i64 = 1;
    for &d in order {
        if sizes[d] == 1 {
            continue;
        }
        if strides[d] != expected {
            return false;
        }
        expected = expected.wrapping_mul(sizes[d]);
    }
    true
}

/// c10's `compute_channels_last_contiguous_2d` (rank 4 only; no numel-0 shortcut). Errors if the ranks differ.
///
/// ```
/// use c10_core::geometry::is_channels_last_contiguous_2d;
/// assert!(is_channels_last_contiguous_2d(&[2, 3, 4, 5], &[60, 1, 15, 3])?);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn is_channels_last_contiguous_2d(sizes: &[i64], strides: &[i64]) -> Result<bool> {
    check_same_rank(sizes, strides)?;
    Ok(is_channels_last_contiguous_2d_same_rank(sizes, strides))
}

/// [`is_channels_last_contiguous_2d`] for layouts known to have one stride per size.
pub(crate) fn is_channels_last_contiguous_2d_same_rank(sizes: &[i64], strides: &[i64]) -> bool {
    sizes.len() == 4 && channels_last_contiguous_in_order(sizes, strides, &[1, 3, 2, 0])
}

/// c10's `compute_channels_last_contiguous_3d` (rank 5 only). Errors if the ranks differ.
///
/// ```
/// use c10_core::geometry::is_channels_last_contiguous_3d;
/// assert!(is_channels_last_contiguous_3d(&[1, 2, 1, 1, 3], &[6, 1, 6, 6, 2])?);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn is_channels_last_contiguous_3d(sizes: &[i64], strides: &[i64]) -> Result<bool> {
    check_same_rank(sizes, strides)?;
    Ok(is_channels_last_contiguous_3d_same_rank(sizes, strides))
}

/// [`is_channels_last_contiguous_3d`] for layouts known to have one stride per size.
pub(crate) fn is_channels_last_contiguous_3d_same_rank(sizes: &[i64], strides: &[i64]) -> bool {
    sizes.len() == 5 && channels_last_contiguous_in_order(sizes, strides, &[1, 4, 3, 2, 0])
}

fn strides_look_like(sizes: &[i64], strides: &[i64], order: &[usize]) -> bool {
    let mut min: i64 = 0;
    if strides[1] == 0 {
        return false;
    }
    for &d in order {
        if sizes[d] == 0 {
            return false;
        }
        if strides[d] < min {
            return false;
        }
        // N111 and sliced tensors are ambiguous: prefer NCHW.
        if d == 0 && min == strides[1] {
            return false;
        }
        min = strides[d];
        if sizes[d] > 1 {
            min = min.wrapping_mul(sizes[d]);
        }
    }
    true
}

/// c10's `is_channels_last_strides_2d` ("strides look like NHWC"; rank 4 only). Errors if the ranks differ.
///
/// ```
/// use c10_core::geometry::is_channels_last_strides_2d;
/// assert!(is_channels_last_strides_2d(&[2, 3, 4, 5], &[60, 1, 15, 3])?);
/// assert!(is_channels_last_strides_2d(&[2, 3, 4, 5], &[60]).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn is_channels_last_strides_2d(sizes: &[i64], strides: &[i64]) -> Result<bool> {
    check_same_rank(sizes, strides)?;
    Ok(is_channels_last_strides_2d_same_rank(sizes, strides))
}

/// [`is_channels_last_strides_2d`] for layouts known to have one stride per size.
pub(crate) fn is_channels_last_strides_2d_same_rank(sizes: &[i64], strides: &[i64]) -> bool {
    sizes.len() == 4 && strides_look_like(sizes, strides, &[1, 3, 2, 0])
}

/// c10's `is_channels_last_strides_3d` (rank 5 only). Errors if the ranks differ.
///
/// ```
/// use c10_core::geometry::is_channels_last_strides_3d;
/// assert!(!is_channels_last_strides_3d(&[2, 3], &[3, 1])?);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn is_channels_last_strides_3d(sizes: &[i64], strides: &[i64]) -> Result<bool> {
    check_same_rank(sizes, strides)?;
    Ok(is_channels_last_strides_3d_same_rank(sizes, strides))
}

/// [`is_channels_last_strides_3d`] for layouts known to have one stride per size.
pub(crate) fn is_channels_last_strides_3d_same_rank(sizes: &[i64], strides: &[i64]) -> bool {
    sizes.len() == 5 && strides_look_like(sizes, strides, &[1, 4, 3, 2, 0])
}

/// c10's `compute_non_overlapping_and_dense`: some permutation of the dims
/// is dense. Errors if the ranks differ.
///
/// ```
/// use c10_core::geometry::is_non_overlapping_and_dense;
/// assert!(is_non_overlapping_and_dense(&[2, 3], &[1, 2])?);
/// assert!(!is_non_overlapping_and_dense(&[2, 3], &[0, 1])?);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn is_non_overlapping_and_dense(sizes: &[i64], strides: &[i64]) -> Result<bool> {
    check_same_rank(sizes, strides)?;
    Ok(is_non_overlapping_and_dense_same_rank(sizes, strides))
}

/// [`is_non_overlapping_and_dense`] for layouts known to have one stride per size.
pub(crate) fn is_non_overlapping_and_dense_same_rank(sizes: &[i64], strides: &[i64]) -> bool {
    let n = sizes.len();
    if n == 1 {
        return sizes[0] < 2 || strides[0] == 1;
    }
    if n == 2 {
        // The walk below, unrolled for two dims (matrices, `as_strided`
        // of a matrix): the dim of smaller stride first, dim 0 on a tie.
        return match (sizes[0] >= 2, sizes[1] >= 2) {
            (false, false) => true,
            (true, false) => strides[0] == 1,
            (false, true) => strides[1] == 1,
            (true, true) => {
                let (a, b) = if strides[0] > strides[1] {
                    (1, 0)
                } else {
                    (0, 1)
                };
                strides[a] == 1 && strides[b] == sizes[a]
            }
        };
    }
    // c10 sorts the dims by (size < 2, stride) and walks them: every dim of
    // size >= 2 must have the stride the product of the sizes before it
    // requires, and the first dim of size 0 or 1 ends the walk with `true`.
    // So only the dims of size >= 2 matter, in ascending stride order; ties
    // keep their dim order, as c10's `std::sort` does for short arrays (an
    // insertion sort), which only matters for wrapped products.
    if n <= SMALL_RANK {
        // Insertion sort of dim indices on the stack (16 bytes of scratch):
        // for the ranks tensors have, far cheaper than a general sort.
        let mut order = [0u8; SMALL_RANK];
        let mut m = 0;
        for (d, &size) in sizes.iter().enumerate() {
            if size < 2 {
                continue;
            }
            let stride = strides[d];
            let mut j = m;
            while j > 0 && strides[order[j - 1] as usize] > stride {
                order[j] = order[j - 1];
                j -= 1;
            }
            order[j] = d as u8;
            m += 1;
        }
        return dense_chain(order[..m].iter().map(|&d| d as usize), sizes, strides);
    }
    let mut order: Vec<usize> = (0..n).filter(|&d| sizes[d] >= 2).collect();
    order.sort_by_key(|&d| strides[d]);
    dense_chain(order.into_iter(), sizes, strides)
}

/// Ranks up to which layout checks keep their scratch space on the stack.
const SMALL_RANK: usize = 16;

/// Whether the dims in `order` (ascending stride) are dense.
#[inline]
fn dense_chain(order: impl Iterator<Item = usize>, sizes: &[i64], strides: &[i64]) -> bool {
    let mut require: i64 = 1;
    for d in order {
        if strides[d] != require {
            return false;
        }
        require = require.wrapping_mul(sizes[d]);
    }
    true
}

/// ATen's `infer_dense_strides`: dense strides that keep the order of the
/// input's strides (used by `empty_like`/`clone` for layouts that are not
/// non-overlapping and dense). Errors if the ranks differ.
///
/// ```
/// use c10_core::geometry::infer_dense_strides;
/// assert_eq!(infer_dense_strides(&[2, 3], &[1, 4])?.as_slice(), &[1, 2]);
/// assert!(infer_dense_strides(&[2, 3], &[1]).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn infer_dense_strides(sizes: &[i64], strides: &[i64]) -> Result<DimVec> {
    check_same_rank(sizes, strides)?;
    let n = sizes.len();
    if n == 0 {
        return Ok(DimVec::new());
    }
    if n == 1 {
        return Ok(smallvec::smallvec![1]);
    }
    let mut perm: smallvec::SmallVec<[usize; 8]> = (0..n).rev().collect();
    let should_swap = |a: usize, b: usize| -> i32 {
        if strides[a] == 0 || strides[b] == 0 {
            0
        } else if strides[a] < strides[b] {
            -1
        } else if strides[a] > strides[b] || sizes[a] > sizes[b] {
            1
        } else {
            0
        }
    };
    for i in 1..n {
        let mut dim1 = i;
        for j in 1..=i {
            let dim0 = i - j;
            let c = should_swap(perm[dim0], perm[dim1]);
            if c > 0 {
                perm.swap(dim0, dim1);
                dim1 = dim0;
            } else if c < 0 {
                break;
            }
        }
    }
    let mut out: DimVec = smallvec::smallvec![0i64; n];
    let mut running: i64 = 1;
    for &k in &perm {
        out[k] = running;
        if sizes[k] > 1 {
            running = running.wrapping_mul(sizes[k]);
        }
    }
    Ok(out)
}

/// The smallest `int64` a c10 `SymInt` stores inline (`-2^62`); PyTorch
/// rejects smaller values in `SymInt[]` arguments.
///
/// ```
/// assert_eq!(c10_core::geometry::MIN_SYMINT, -(1i64 << 62));
/// ```
pub const MIN_SYMINT: i64 = -(1 << 62);

/// PyTorch's dispatcher check that a `SymInt[]` argument (sizes, strides)
/// holds only inline (`>= -2^62`) integers, with its message.
///
/// ```
/// use c10_core::geometry::check_symint_list;
/// assert!(check_symint_list(&[2, -1]).is_ok());
/// assert!(check_symint_list(&[2, i64::MIN]).unwrap_err().to_string().contains("at index 1"));
/// ```
pub fn check_symint_list(values: &[i64]) -> Result<()> {
    if let Some((i, &v)) = values.iter().enumerate().find(|&(_, &v)| v < MIN_SYMINT) {
        return Err(TensorError::runtime(format!(
            "SymIntArrayRef expected to contain only concrete integers that are stored inline and can be viewed as an IntArrayRef. Found heap-allocated concrete SymInt at index {i}: {v} in SymIntArrayRef {}",
            fmt_list(values)
        )));
    }
    Ok(())
}

/// The dims of a two-sided elementwise loop (a copy `dst[i] = src[i]`),
/// simplified: `(size, dst_stride, src_stride)` triples, outermost first.
///
/// Size-1 dims are dropped; the rest are ordered by destination stride,
/// then source stride (largest first, stable, so ties keep their logical
/// order); a dim merges into its outer neighbour where the outer one steps
/// exactly over the whole inner one on both sides. Every order visits the
/// same `(dst, src)` offset pairs, so the loop's result is unchanged. Merges
/// whose products overflow are skipped. Callers handle empty (size-0) and
/// negative sizes themselves; one copy engine per backend builds on this
/// (the CPU kernels in aten-shape, the CUDA copies in alloc-cuda).
///
/// ```
/// use c10_core::geometry::coalesce_copy_dims;
/// // Both sides contiguous: one run of 24 elements.
/// assert_eq!(coalesce_copy_dims(&[2, 3, 4], &[12, 4, 1], &[12, 4, 1]).as_slice(), &[(24, 1, 1)]);
/// // A transpose keeps both dims, destination-major.
/// assert_eq!(
///     coalesce_copy_dims(&[3, 4], &[4, 1], &[1, 3]).as_slice(),
///     &[(3, 4, 1), (4, 1, 3)]
/// );
/// // Size-1 dims vanish; a broadcast source keeps its zero stride.
/// assert_eq!(
///     coalesce_copy_dims(&[1, 5, 3], &[15, 3, 1], &[7, 0, 1]).as_slice(),
///     &[(5, 3, 0), (3, 1, 1)]
/// );
/// ```
pub fn coalesce_copy_dims(
    sizes: &[i64],
    dst_strides: &[i64],
    src_strides: &[i64],
) -> smallvec::SmallVec<[(i64, i64, i64); 8]> {
    let mut dims: smallvec::SmallVec<[(i64, i64, i64); 8]> = sizes
        .iter()
        .zip(dst_strides)
        .zip(src_strides)
        .filter(|&((&n, _), _)| n != 1)
        .map(|((&n, &d), &s)| (n, d, s))
        .collect();
    dims.sort_by(|a, b| {
        b.1.unsigned_abs()
            .cmp(&a.1.unsigned_abs())
            .then(b.2.unsigned_abs().cmp(&a.2.unsigned_abs()))
    });
    let mut merged: smallvec::SmallVec<[(i64, i64, i64); 8]> =
        smallvec::SmallVec::with_capacity(dims.len());
    for d in dims {
        if let Some(outer) = merged.last_mut() {
            let fits =
                d.1.checked_mul(d.0) == Some(outer.1) && d.2.checked_mul(d.0) == Some(outer.2);
            if let (true, Some(n)) = (fits, outer.0.checked_mul(d.0)) {
                *outer = (n, d.1, d.2);
                continue;
            }
        }
        merged.push(d);
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_dim_rules() {
        assert_eq!(wrap_dim(0, 0, true).unwrap(), 0);
        assert_eq!(wrap_dim(-1, 0, true).unwrap(), 0);
        assert_eq!(
            wrap_dim(1, 0, true).unwrap_err().to_string(),
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
        );
        assert_eq!(
            wrap_dim(0, 0, false).unwrap_err().to_string(),
            "Dimension specified as 0 but tensor has no dimensions"
        );
        assert!(wrap_dim(-4, 3, true).unwrap_err().is_index_error());
        let e = wrap_dim(-4, 3, true).unwrap_err();
        let s = e.shape_error().unwrap();
        assert_eq!(
            (s.kind(), s.dim()),
            (ShapeErrorKind::DimOutOfRange, Some(-4))
        );
        let e = wrap_dim(2, 0, false).unwrap_err();
        assert_eq!(
            e.shape_error().map(|s| s.kind()),
            Some(ShapeErrorKind::NoDims)
        );
        assert!(e.is_index_error());
    }

    #[test]
    fn two_dim_density_matches_the_general_walk() {
        // The unrolled 2-d case of `is_non_overlapping_and_dense_same_rank`
        // against c10's algorithm written out (stable sort by stride of the
        // dims of size >= 2, then the dense chain).
        let reference = |sizes: &[i64], strides: &[i64]| {
            let mut order: Vec<usize> = (0..sizes.len()).filter(|&d| sizes[d] >= 2).collect();
            order.sort_by_key(|&d| strides[d]);
            dense_chain(order.into_iter(), sizes, strides)
        };
        for s0 in 0..4 {
            for s1 in 0..4 {
                for t0 in -2..8 {
                    for t1 in -2..8 {
                        let (sizes, strides) = ([s0, s1], [t0, t1]);
                        assert_eq!(
                            is_non_overlapping_and_dense_same_rank(&sizes, &strides),
                            reference(&sizes, &strides),
                            "{sizes:?} {strides:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn contiguity_examples_from_the_reference() {
        assert!(is_contiguous_same_rank(&[1, 3], &[100, 1], 3));
        assert!(is_contiguous_same_rank(&[3, 1], &[1, 7], 3));
        assert!(is_contiguous_same_rank(&[0, 3], &[7, 9], 0));
        assert!(!is_contiguous_same_rank(&[3], &[0], 3));
        assert!(!is_contiguous_same_rank(&[3], &[2], 3));
        assert!(is_contiguous_same_rank(&[1], &[5], 1));
        assert!(!is_contiguous_same_rank(&[2, 2], &[1, 1], 4));
        assert!(!is_non_overlapping_and_dense_same_rank(&[2, 2], &[1, 1]));
        assert!(is_contiguous_same_rank(&[2, 1, 3], &[3, 99, 1], 6));
        assert!(is_contiguous_same_rank(&[4, 1, 1, 1], &[1, 1, 1, 1], 4));
        assert!(is_channels_last_contiguous_2d_same_rank(
            &[4, 1, 1, 1],
            &[1, 1, 1, 1]
        ));
        assert!(!is_channels_last_strides_2d_same_rank(
            &[4, 1, 1, 1],
            &[1, 1, 1, 1]
        ));
        assert!(is_channels_last_contiguous_2d_same_rank(
            &[2, 1, 3, 4],
            &[12, 12, 4, 1]
        ));
        assert!(is_non_overlapping_and_dense_same_rank(
            &[4, 2, 3],
            &[1, 12, 4]
        ));
        assert!(!is_non_overlapping_and_dense_same_rank(&[4, 3], &[6, 2]));
        assert!(!is_non_overlapping_and_dense_same_rank(&[3, 4], &[1, 0]));
    }

    #[test]
    fn strides_and_nbytes() {
        assert_eq!(
            contiguous_strides(&[2, 3, 4]).unwrap().as_slice(),
            &[12, 4, 1]
        );
        assert_eq!(
            channels_last_strides_2d(&[2, 3, 4, 5]).unwrap().as_slice(),
            &[60, 1, 15, 3]
        );
        assert_eq!(
            channels_last_strides_2d(&[1, 3, 1, 1]).unwrap().as_slice(),
            &[3, 1, 3, 3]
        );
        assert_eq!(
            channels_last_strides_2d(&[2, 1, 4, 5]).unwrap().as_slice(),
            &[20, 1, 5, 1]
        );
        assert_eq!(
            channels_last_strides_3d(&[2, 3, 4, 5, 6])
                .unwrap()
                .as_slice(),
            &[360, 1, 90, 18, 3]
        );
        assert_eq!(storage_nbytes(&[2, 0, 3], &[100, 1, 1], 4, 0).unwrap(), 0);
        assert_eq!(
            storage_nbytes(&[1 << 62, 4, 0], &[1 << 62, 1, 1], 4, i64::MAX).unwrap(),
            0
        );
        assert_eq!(
            storage_nbytes_contiguous(&[1 << 62, 4], 4, 0)
                .unwrap_err()
                .to_string(),
            "Storage size calculation overflowed with sizes=[4611686018427387904, 4]"
        );
        assert_eq!(
            storage_nbytes(&[1 << 40, 1 << 40], &[1 << 40, 1], 4, 0).unwrap_err().to_string(),
            "Storage size calculation overflowed with sizes=[1099511627776, 1099511627776] and strides=[1099511627776, 1]"
        );
        assert!(storage_nbytes(&[2, 3], &[-1, 1], 4, 0)
            .unwrap_err()
            .to_string()
            .starts_with("Storage size calculation overflowed"));
        assert_eq!(
            compute_numel(&[-1]).unwrap_err().to_string(),
            "numel: integer multiplication overflow"
        );
        assert_eq!(
            check_in_bounds_for_storage(&[2, 4], &[3, 1], 0, 4, 1, 24).unwrap_err().to_string(),
            "setStorage: sizes [2, 4], strides [3, 1], storage offset 0, and itemsize 4 requiring a storage size of 28 are out of bounds for storage of size 24"
        );
        assert!(check_in_bounds_for_storage(&[2, 0], &[3, 1], 100, 4, 1, 0).is_ok());
    }

    #[test]
    fn dense_strides_inference() {
        assert_eq!(
            infer_dense_strides(&[4, 3], &[6, 2]).unwrap().as_slice(),
            &[3, 1]
        );
        assert_eq!(
            infer_dense_strides(&[3, 4], &[2, 6]).unwrap().as_slice(),
            &[1, 3]
        );
        assert_eq!(
            infer_dense_strides(&[3, 4], &[1, 0]).unwrap().as_slice(),
            &[4, 1]
        );
        assert_eq!(
            infer_dense_strides(&[2, 3], &[4, 4]).unwrap().as_slice(),
            &[1, 2]
        );
        assert_eq!(
            infer_dense_strides(&[3, 2], &[4, 4]).unwrap().as_slice(),
            &[2, 1]
        );
        assert_eq!(
            infer_dense_strides(&[2, 3, 4], &[1, 2, 8])
                .unwrap()
                .as_slice(),
            &[1, 2, 6]
        );
    }
}
