//! Basic indexing, `t[1, ..., None, 2:8:2]` in Python, with PyTorch's exact
//! rules: the result is always a **view** (no copy), with the geometry of
//! PyTorch's `applySlicing` walk (select for integers, slice for slices,
//! unsqueeze for `None`, a dim jump for `...`) and its errors, and indexed
//! assignment (`t[idx] = value`) through that view. A key of integers,
//! slices, `None` and at most one `...` is computed in one pass and
//! installed as one view; other keys (and any key that fails) take the
//! walk itself, one intermediate tensor per entry.
//!
//! Build index lists with the [`s!`](crate::s) macro, which reads like
//! Python: integers select, Rust ranges slice (`..` is Python's `:`,
//! `a..b;k` is `a:b:k`), `None` inserts a dim and `...` is the ellipsis.
//!
//! ```
//! use aten_shape::prelude::*;
//! use aten_shape::s;
//! use c10_core::ScalarType;
//!
//! let x = Tensor::arange(0, 24, 1, ScalarType::Long)?.view(&[2, 3, 4])?;
//! let v = x.i(s![1, .., None, 1..;2])?; // x[1, :, None, 1::2]
//! assert_eq!((v.sizes(), v.strides(), v.storage_offset()), (&[3, 1, 2][..], &[4, 4, 2][..], 13));
//! assert!(v.is_alias_of(&x)); // a view
//! assert_eq!(x.i(s![..., -1])?.to_vec::<i64>()?, vec![3, 7, 11, 15, 19, 23]);
//! assert_eq!(
//!     x.i(s![0, 3]).unwrap_err().to_string(),
//!     "index 3 is out of bounds for dimension 1 with size 3"
//! );
//! x.index_put_scalar(s![.., 0], 100)?; // x[:, 0] = 100
//! assert_eq!(x.i(s![1, 0])?.to_vec::<i64>()?, vec![100, 100, 100, 100]);
//! # Ok::<(), c10_core::TensorError>(())
//! ```
//!
//! **Which Python form.** A list of one `Int`, `Slice`, `None` or
//! `Ellipsis` follows Python's `t[i]` (not `t[(i,)]`); the two differ only
//! on 0-dim tensors (`t[0]` is `invalid index of a 0-dim tensor`, `t[0,]`
//! is `too many indices`). Longer (and empty) lists are Python's tuples.
//!
//! **Several ellipses** are accepted as PyTorch accepts them: each one
//! skips `dim - (number of indexed dims)` dims. Where that walk then selects
//! past the last dim, PyTorch reads on past its size array into c10's
//! `SizesAndStrides` storage (sizes, then strides; five slots each for up
//! to five dims); that read is reproduced (0 for the unused size slots, the
//! strides in the stride slots), which gives PyTorch's observed errors:
//! `index 0 is out of bounds for dimension 2 with size 0` for
//! `zeros(3, 4, 5)[..., ..., 0]` and `Dimension out of range (expected to
//! be in range of [-4, 3], but got 6)` for `zeros(0, 2, 3, 2)[..., ..., 0]`.
//!
//! **Advanced indexing** (a `Bool`, or a tensor index other than a 0-dim
//! integer tensor) is not implemented: the walk runs (so every basic error
//! comes first, as in PyTorch) and then fails with
//! [`TensorError::NotImplemented`].

use c10_core::{DeviceType, Result, Scalar, ScalarType, Tensor, TensorError, TensorOptions};

use crate::copy as copy_api;
use crate::views;

/// One entry of an index list: what one item between the commas of a
/// Python subscript is.
///
/// ```
/// use aten_shape::indexing::TensorIndex;
/// let idx = [TensorIndex::Int(-1), TensorIndex::slice(Some(1), None, 2), TensorIndex::None];
/// assert_eq!(aten_shape::s![-1, 1..;2, None], idx);
/// ```
#[derive(Clone, Debug)]
pub enum TensorIndex {
    /// `t[i]`: selects index `i` (negative counts from the end) and removes
    /// the dim.
    Int(i64),
    /// `t[start:stop:step]`: Python's slice, clamped to the dim; `None`
    /// bounds are the dim's ends; `step` must be positive.
    Slice {
        /// First index (`None`: 0); negative counts from the end.
        start: Option<i64>,
        /// One past the last index (`None`: the end); negative counts from
        /// the end.
        stop: Option<i64>,
        /// The stride in elements; PyTorch refuses `0` and negative steps.
        step: i64,
    },
    /// `t[None]` (`np.newaxis`): inserts a dim of size 1.
    None,
    /// `t[...]`: stands for the dims the other entries do not index.
    Ellipsis,
    /// `t[True]` / `t[False]`: advanced indexing (not implemented).
    Bool(bool),
    /// A tensor index: a 0-dim integer tensor selects like an `Int`; any
    /// other tensor is advanced indexing (not implemented).
    Tensor(Tensor),
}

impl PartialEq for TensorIndex {
    fn eq(&self, other: &Self) -> bool {
        use TensorIndex as I;
        match (self, other) {
            (I::Int(a), I::Int(b)) => a == b,
            (
                I::Slice { start, stop, step },
                I::Slice {
                    start: s2,
                    stop: e2,
                    step: k2,
                },
            ) => (start, stop, step) == (s2, e2, k2),
            (I::None, I::None) | (I::Ellipsis, I::Ellipsis) => true,
            (I::Bool(a), I::Bool(b)) => a == b,
            (I::Tensor(a), I::Tensor(b)) => a.is_same(b),
            _ => false,
        }
    }
}

impl TensorIndex {
    /// Python's `start:stop:step`.
    ///
    /// ```
    /// use aten_shape::indexing::TensorIndex;
    /// assert_eq!(TensorIndex::slice(None, Some(-1), 1), aten_shape::s![..-1][0]);
    /// ```
    pub fn slice(start: Option<i64>, stop: Option<i64>, step: i64) -> TensorIndex {
        TensorIndex::Slice { start, stop, step }
    }

    /// A Rust range with a step (`a..b;k` in [`s!`](crate::s)).
    ///
    /// ```
    /// use aten_shape::indexing::TensorIndex;
    /// assert_eq!(TensorIndex::stepped(1..7, 3), TensorIndex::slice(Some(1), Some(7), 3));
    /// ```
    pub fn stepped<R: IndexRange>(range: R, step: i64) -> TensorIndex {
        let (start, stop) = range.bounds();
        TensorIndex::Slice { start, stop, step }
    }
}

/// Integer types usable in indices and ranges (converted to `i64`;
/// `u64`/`usize` values above `i64::MAX` saturate).
///
/// ```
/// use aten_shape::indexing::{IndexInt, TensorIndex};
/// let rows: usize = 2;
/// assert_eq!(TensorIndex::from(rows), TensorIndex::Int(2));
/// assert_eq!(u64::MAX.to_index(), i64::MAX);
/// ```
pub trait IndexInt: Copy {
    /// The value as `i64`.
    ///
    /// ```
    /// use aten_shape::indexing::IndexInt;
    /// assert_eq!(7usize.to_index(), 7i64);
    /// ```
    fn to_index(self) -> i64;
}

macro_rules! index_int {
    ($($t:ty),*) => {$(
        impl IndexInt for $t {
            #[allow(clippy::unnecessary_fallible_conversions)]
            fn to_index(self) -> i64 {
                i64::try_from(self).unwrap_or(i64::MAX)
            }
        }
        impl From<$t> for TensorIndex {
            fn from(v: $t) -> TensorIndex {
                TensorIndex::Int(v.to_index())
            }
        }
    )*};
}
index_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

/// Rust ranges as Python slice bounds: `a..b` is `a:b`, `a..` is `a:`,
/// `..b` is `:b`, `..` is `:`, and `a..=b` is `a:b+1` (`a:` when `b` is
/// `-1`, the last element).
///
/// ```
/// use aten_shape::indexing::IndexRange;
/// assert_eq!((2..=-1).bounds(), (Some(2), None));
/// assert_eq!((..3usize).bounds(), (None, Some(3)));
/// ```
pub trait IndexRange {
    /// `(start, stop)` as a Python slice's bounds.
    ///
    /// ```
    /// use aten_shape::indexing::IndexRange;
    /// assert_eq!((1..4).bounds(), (Some(1), Some(4)));
    /// assert_eq!((..).bounds(), (None, None));
    /// ```
    fn bounds(&self) -> (Option<i64>, Option<i64>);
}

fn inclusive_stop(end: i64) -> Option<i64> {
    if end == -1 {
        None
    } else {
        Some(end.saturating_add(1))
    }
}

impl<T: IndexInt> IndexRange for std::ops::Range<T> {
    fn bounds(&self) -> (Option<i64>, Option<i64>) {
        (Some(self.start.to_index()), Some(self.end.to_index()))
    }
}
impl<T: IndexInt> IndexRange for std::ops::RangeFrom<T> {
    fn bounds(&self) -> (Option<i64>, Option<i64>) {
        (Some(self.start.to_index()), None)
    }
}
impl<T: IndexInt> IndexRange for std::ops::RangeTo<T> {
    fn bounds(&self) -> (Option<i64>, Option<i64>) {
        (None, Some(self.end.to_index()))
    }
}
impl<T: IndexInt> IndexRange for std::ops::RangeInclusive<T> {
    fn bounds(&self) -> (Option<i64>, Option<i64>) {
        (
            Some(self.start().to_index()),
            inclusive_stop(self.end().to_index()),
        )
    }
}
impl<T: IndexInt> IndexRange for std::ops::RangeToInclusive<T> {
    fn bounds(&self) -> (Option<i64>, Option<i64>) {
        (None, inclusive_stop(self.end.to_index()))
    }
}
impl IndexRange for std::ops::RangeFull {
    fn bounds(&self) -> (Option<i64>, Option<i64>) {
        (None, None)
    }
}

macro_rules! range_index {
    ($($r:ident),*) => {$(
        impl<T: IndexInt> From<std::ops::$r<T>> for TensorIndex {
            fn from(r: std::ops::$r<T>) -> TensorIndex {
                TensorIndex::stepped(r, 1)
            }
        }
    )*};
}
range_index!(Range, RangeFrom, RangeTo, RangeInclusive, RangeToInclusive);

impl From<std::ops::RangeFull> for TensorIndex {
    fn from(_: std::ops::RangeFull) -> TensorIndex {
        TensorIndex::stepped(.., 1)
    }
}
impl From<bool> for TensorIndex {
    fn from(v: bool) -> TensorIndex {
        TensorIndex::Bool(v)
    }
}
impl From<Tensor> for TensorIndex {
    fn from(v: Tensor) -> TensorIndex {
        TensorIndex::Tensor(v)
    }
}
impl From<&Tensor> for TensorIndex {
    fn from(v: &Tensor) -> TensorIndex {
        TensorIndex::Tensor(v.clone())
    }
}

/// An index list written like a Python subscript, as an array of
/// [`TensorIndex`]: integers select, ranges slice (`..` is `:`, `a..b;k` is
/// `a:b:k`), `None` is a new axis and `...` the ellipsis; anything else
/// converts with `TensorIndex::from` (a `bool`, a `Tensor`).
///
/// ```
/// use aten_shape::prelude::*;
/// use aten_shape::s;
/// use c10_core::ScalarType;
/// let x = Tensor::arange(0, 60, 1, ScalarType::Long)?.view(&[3, 4, 5])?;
/// let n = 2;
/// // Python: x[-1, ..., None, 1:n+3:2]
/// let v = x.i(s![-1, ..., None, 1..n + 3;2])?;
/// assert_eq!(v.sizes(), &[4, 1, 2]);
/// assert_eq!(x.i(s![.., 1..=2, 4])?.to_vec::<i64>()?, vec![9, 14, 29, 34, 49, 54]);
/// assert_eq!(x.i(s![])?.sizes(), x.sizes()); // x[()]
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[macro_export]
macro_rules! s {
    (@acc []) => { [] as [$crate::indexing::TensorIndex; 0] };
    (@acc [$($acc:expr),*]) => { [$($acc),*] };
    (@acc [$($acc:expr),*] ... $(, $($rest:tt)*)?) => {
        $crate::s!(@acc [$($acc,)* $crate::indexing::TensorIndex::Ellipsis] $($($rest)*)?)
    };
    (@acc [$($acc:expr),*] None $(, $($rest:tt)*)?) => {
        $crate::s!(@acc [$($acc,)* $crate::indexing::TensorIndex::None] $($($rest)*)?)
    };
    (@acc [$($acc:expr),*] $e:expr ; $step:expr $(, $($rest:tt)*)?) => {
        $crate::s!(@acc [$($acc,)* $crate::indexing::TensorIndex::stepped($e, $step)] $($($rest)*)?)
    };
    (@acc [$($acc:expr),*] $e:expr $(, $($rest:tt)*)?) => {
        $crate::s!(@acc [$($acc,)* $crate::indexing::TensorIndex::from($e)] $($($rest)*)?)
    };
    ($($t:tt)*) => { $crate::s!(@acc [] $($t)*) };
}

// ---------------------------------------------------------------------------
// The walk
// ---------------------------------------------------------------------------

fn not_advanced() -> TensorError {
    TensorError::NotImplemented(
        "advanced indexing (a bool index, or a tensor index other than a 0-dim integer tensor) is not implemented; only basic indexing (integers, slices, None, ...) is".to_string(),
    )
}

/// PyTorch's `applySelect`: the bounds check with `real_dim` (the entry's
/// position in the index list), then `select`.
fn apply_select(t: &Tensor, dim: i64, index: i64, real_dim: usize) -> Result<Tensor> {
    let sizes = t.sizes();
    if index == 0 && dim == 0 && sizes.is_empty() {
        return Err(TensorError::index(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number",
        ));
    }
    let size = size_at(t, dim);
    // `!index` is `-1 - index` without overflow.
    if !(size > !index && size > index) {
        return Err(TensorError::index(format!(
            "index {index} is out of bounds for dimension {real_dim} with size {size}"
        )));
    }
    views::select(t, dim, index)
}

/// `t.sizes()[dim]` as PyTorch's `applySelect`/`applySlice` read it,
/// unchecked: past the last dim (a key with several ellipses) they read on
/// into c10's `SizesAndStrides` storage, which holds the sizes and then
/// the strides, five slots each inline (up to five dims), `n` each on the
/// heap. Inline size slots past the dims read 0 (what a fresh tensor holds
/// there), the stride slots read the strides, and anything further
/// (undefined in PyTorch) reads 0 here.
fn size_at(t: &Tensor, dim: i64) -> i64 {
    let (sizes, strides) = (t.sizes(), t.strides());
    let Ok(d) = usize::try_from(dim) else {
        return 0;
    };
    if let Some(&s) = sizes.get(d) {
        return s;
    }
    let slots = sizes.len().max(5);
    d.checked_sub(slots)
        .and_then(|k| strides.get(k).copied())
        .unwrap_or(0)
}

/// PyTorch's `applySlice` after Python's slice unpacking (`None` bounds are
/// `0` and `PY_SSIZE_T_MAX`; step `0` is Python's own `ValueError`, a
/// negative step PyTorch's; both are [`TensorError::Value`]).
fn apply_slice(
    t: &Tensor,
    dim: i64,
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
) -> Result<(Tensor, bool)> {
    if step == 0 {
        return Err(TensorError::Value("slice step cannot be zero".to_string()));
    }
    if step < 0 {
        return Err(TensorError::Value(
            "step must be greater than zero".to_string(),
        ));
    }
    let (start, stop) = (start.unwrap_or(0), stop.unwrap_or(i64::MAX));
    let sizes = t.sizes();
    if !sizes.is_empty() {
        let length = size_at(t, dim);
        if start == 0 && length <= stop && step == 1 {
            return Ok((t.clone(), false));
        }
    }
    Ok((views::slice(t, dim, Some(start), Some(stop), step)?, true))
}

/// PyTorch's `count_specified_dimensions`.
fn count_specified(indices: &[TensorIndex]) -> i64 {
    indices
        .iter()
        .map(|i| match i {
            TensorIndex::Tensor(x) if matches!(x.dtype(), ScalarType::Byte | ScalarType::Bool) => {
                x.dim() as i64
            }
            TensorIndex::None | TensorIndex::Ellipsis | TensorIndex::Bool(_) => 0,
            _ => 1,
        })
        .sum()
}

/// The index of a 0-dim integer tensor, or `None` for an advanced index.
fn scalar_tensor_index(x: &Tensor) -> Result<Option<i64>> {
    if x.dim() != 0 || !x.dtype().is_integral(false) || x.dtype() == ScalarType::Byte {
        return Ok(None);
    }
    Ok(Some(as_scalar(x, ScalarType::Long)?.to_i64()))
}

/// The walk below in one pass, for the keys Python code writes most
/// (`m[3, 1:5]`, `m[:, 1]`, `x[..., None, ::2]`): integers, slices, `None`
/// and at most one `...`, on a tensor with concrete sizes. The result's
/// geometry is computed on a copy of `t`'s and installed as **one** view,
/// where the walk builds a tensor per entry (each an allocation and its
/// reference counts). Only the success path is here: `None` whenever the
/// key is anything else (bools, tensor indices, several ellipses), an
/// entry would fail (an index out of range, too many indices, a bad step)
/// or an `i64` product or sum would wrap, and the general walk then runs
/// and gives PyTorch's exact result or error. Both paths compute every
/// entry with the same rules (`select_offset`, `slice_rule`,
/// `unsqueeze_rule`), so their views are identical; the test
/// `basic_keys_match_the_walk` checks it.
fn basic_view(t: &Tensor, indices: &[TensorIndex]) -> Option<Result<Tensor>> {
    use crate::ops::slice::{select_offset, slice_rule};
    use crate::ops::squeeze::unsqueeze_rule;

    if t.has_symbolic_sizes_strides() {
        return None;
    }
    let ndim = t.dim();
    let (mut specified, mut ellipses) = (0usize, 0usize);
    for index in indices {
        match index {
            TensorIndex::Int(_) | TensorIndex::Slice { .. } => specified += 1,
            TensorIndex::None => {}
            TensorIndex::Ellipsis => ellipses += 1,
            TensorIndex::Bool(_) | TensorIndex::Tensor(_) => return None,
        }
    }
    if specified > ndim || ellipses > 1 {
        return None;
    }
    let mut geometry = crate::ops::geometry_of(t);
    let mut offset = t.storage_offset();
    // The dim of `geometry` the next entry applies to.
    let mut dim = 0usize;
    for index in indices {
        match *index {
            TensorIndex::Int(i) => {
                let (sizes, strides) = (geometry.sizes(), geometry.strides());
                if dim >= sizes.len() {
                    return None;
                }
                let (o, wrapped) = select_offset(sizes, strides, &offset, dim, &i).ok()?;
                if wrapped {
                    return None;
                }
                offset = o;
                geometry.remove_dim(dim).ok()?;
            }
            TensorIndex::Slice { start, stop, step } => {
                let (sizes, strides) = (geometry.sizes(), geometry.strides());
                if dim >= sizes.len() || step <= 0 {
                    return None;
                }
                // Python's unpacked bounds, as `apply_slice` passes them.
                let (start, stop) = (start.unwrap_or(0), stop.unwrap_or(i64::MAX));
                let r = slice_rule(
                    &sizes[dim],
                    &strides[dim],
                    &offset,
                    Some(&start),
                    Some(&stop),
                    step,
                )
                .ok()?;
                if r.wrapped {
                    return None;
                }
                offset = r.offset;
                let (sizes, strides) = geometry.sizes_and_strides_mut();
                sizes[dim] = r.size;
                strides[dim] = r.stride;
                dim += 1;
            }
            TensorIndex::None => {
                let (d, stride, wrapped) =
                    unsqueeze_rule(geometry.sizes(), geometry.strides(), dim as i64).ok()?;
                if wrapped {
                    return None;
                }
                geometry.insert_dim(d, 1, stride).ok()?;
                dim += 1;
            }
            TensorIndex::Ellipsis => dim += ndim - specified,
            TensorIndex::Bool(_) | TensorIndex::Tensor(_) => return None,
        }
    }
    Some(crate::ops::install(t, geometry, offset))
}

/// The basic-indexing view and whether an advanced index was seen.
fn walk(t: &Tensor, indices: &[TensorIndex]) -> Result<(Tensor, bool, bool)> {
    walk_as(t, indices, false)
}

/// [`walk`], as Python's `t[(i,)]` when `tuple` (no single-index fast
/// paths).
fn walk_as(t: &Tensor, indices: &[TensorIndex], tuple: bool) -> Result<(Tensor, bool, bool)> {
    // Python's single-index fast paths (`t[i]`, `t[a:b]`, `t[None]`,
    // `t[...]`).
    if let (false, [one]) = (tuple, indices) {
        match one {
            TensorIndex::Int(i) => return Ok((apply_select(t, 0, *i, 0)?, true, false)),
            TensorIndex::Slice { start, stop, step } => {
                let (r, changed) = apply_slice(t, 0, *start, *stop, *step)?;
                return Ok((r, changed, false));
            }
            TensorIndex::None => return Ok((views::unsqueeze(t, 0)?, true, false)),
            TensorIndex::Ellipsis => return Ok((t.clone(), false, false)),
            _ => {}
        }
    }
    if let Some(view) = basic_view(t, indices) {
        return Ok((view?, true, false));
    }
    walk_entries(t, indices)
}

/// PyTorch's `applySlicing` walk: one intermediate tensor per entry.
fn walk_entries(t: &Tensor, indices: &[TensorIndex]) -> Result<(Tensor, bool, bool)> {
    let ndim = t.dim() as i64;
    let specified = count_specified(indices);
    if specified > ndim {
        return Err(TensorError::index(format!(
            "too many indices for tensor of dimension {ndim}"
        )));
    }
    let mut result = t.clone();
    let (mut changed, mut advanced) = (false, false);
    let mut dim: i64 = 0;
    for (real_dim, index) in indices.iter().enumerate() {
        match index {
            TensorIndex::Int(i) => {
                result = apply_select(&result, dim, *i, real_dim)?;
                changed = true;
            }
            TensorIndex::Slice { start, stop, step } => {
                let (r, c) = apply_slice(&result, dim, *start, *stop, *step)?;
                result = r;
                changed |= c;
                dim += 1;
            }
            TensorIndex::Ellipsis => dim += ndim - specified,
            TensorIndex::None => {
                result = views::unsqueeze(&result, dim)?;
                changed = true;
                dim += 1;
            }
            TensorIndex::Bool(_) => {
                result = views::unsqueeze(&result, dim)?;
                changed = true;
                advanced = true;
                dim += 1;
            }
            TensorIndex::Tensor(x) => {
                if let Some(i) = scalar_tensor_index(x)? {
                    result = apply_select(&result, dim, i, real_dim)?;
                    changed = true;
                } else {
                    if x.dim() == 0 && matches!(x.dtype(), ScalarType::Byte | ScalarType::Bool) {
                        result = views::unsqueeze(&result, dim)?;
                        changed = true;
                    }
                    advanced = true;
                    dim += 1;
                }
            }
        }
    }
    Ok((result, changed, advanced))
}

/// `t[indices]` with basic indexing: a view of `t` (never `t`'s own
/// handle, as PyTorch returns an alias for `t[...]`).
///
/// ```
/// use aten_shape::indexing::{index, TensorIndex};
/// use c10_core::{ScalarType, Tensor};
/// let x = Tensor::arange(0, 6, 1, ScalarType::Long)?;
/// let v = index(&x, &[TensorIndex::slice(Some(-2), None, 1)])?; // x[-2:]
/// assert_eq!(v.to_vec::<i64>()?, vec![4, 5]);
/// assert_eq!(
///     index(&x, &[TensorIndex::slice(None, None, -1)]).unwrap_err().to_string(),
///     "step must be greater than zero"
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn index(t: &Tensor, indices: &[TensorIndex]) -> Result<Tensor> {
    index_as(t, indices, false)
}

/// [`index`] as Python's tuple form `t[(i,)]` when `tuple` (used by
/// [`ViewOps::index`](crate::views::ViewOps::index), whose list is always
/// a tuple).
pub(crate) fn index_as(t: &Tensor, indices: &[TensorIndex], tuple: bool) -> Result<Tensor> {
    let (result, changed, advanced) = walk_as(t, indices, tuple)?;
    if advanced {
        return Err(not_advanced());
    }
    if changed {
        Ok(result)
    } else {
        views::alias(&result)
    }
}

/// The only element of a one-element tensor as a [`Scalar`], read through
/// a copy into `as_dtype` (`Long`, `Double`, `ComplexDouble` or `Bool`).
fn as_scalar(x: &Tensor, as_dtype: ScalarType) -> Result<Scalar> {
    let tmp = Tensor::empty(&[], TensorOptions::new().dtype(as_dtype))?;
    copy_api::copy_(&tmp, &views::view(x, &[])?)?;
    Ok(match as_dtype {
        ScalarType::Bool => Scalar::Bool(tmp.item::<bool>()?),
        ScalarType::Long => Scalar::Int(tmp.item::<i64>()?),
        ScalarType::ComplexDouble => {
            let z = tmp.item::<c10_core::scalar_type::Complex128>()?;
            Scalar::Complex(z.re, z.im)
        }
        _ => Scalar::Float(tmp.item::<f64>()?),
    })
}

/// `t[indices] = value` for a number: the view is filled (`fill_`: the
/// value must fit the dtype, `value cannot be converted to type uint8_t
/// without overflow`, checked after the index errors as in PyTorch; one
/// version bump shared by `t` and its views).
///
/// ```
/// use aten_shape::indexing::{index_put_scalar, TensorIndex};
/// use c10_core::{ScalarType, Tensor, TensorOptions};
/// let x = Tensor::zeros(&[2, 3], TensorOptions::new().dtype(ScalarType::Long))?;
/// index_put_scalar(&x, &[TensorIndex::Int(1), TensorIndex::slice(Some(1), None, 1)], 7)?;
/// assert_eq!(x.to_vec::<i64>()?, vec![0, 0, 0, 0, 7, 7]);
/// assert_eq!(x.version()?, 1);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn index_put_scalar(
    t: &Tensor,
    indices: &[TensorIndex],
    value: impl Into<Scalar>,
) -> Result<()> {
    let value = value.into();
    let (view, _, advanced) = walk(t, indices)?;
    if advanced {
        return Err(not_advanced());
    }
    view.fill_(value)
}

/// `t[indices] = src` for a tensor, as PyTorch's `copy_to`: `copy_` when
/// the shapes are equal, `fill_` with a 0-dim CPU `src`'s value, and
/// otherwise `src` without its leading size-1 dims, expanded to the view's
/// shape (`expand`'s errors) and copied (`copy_`'s dtype conversion and
/// overlap rules). One version bump.
///
/// ```
/// use aten_shape::indexing::{index_put_tensor, TensorIndex};
/// use c10_core::{ScalarType, Tensor, TensorOptions};
/// let x = Tensor::zeros(&[2, 3], TensorOptions::new().dtype(ScalarType::Float))?;
/// let row = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[1, 1, 3])?; // leading 1s are dropped
/// index_put_tensor(&x, &[TensorIndex::Ellipsis], &row)?; // x[...] = row
/// assert_eq!(x.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
/// let bad = Tensor::zeros(&[4], TensorOptions::new())?;
/// assert!(index_put_tensor(&x, &[TensorIndex::Int(0)], &bad).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn index_put_tensor(t: &Tensor, indices: &[TensorIndex], src: &Tensor) -> Result<()> {
    let (dst, _, advanced) = walk(t, indices)?;
    if advanced {
        return Err(not_advanced());
    }
    if dst.sizes() == src.sizes() {
        return copy_api::copy_(&dst, src);
    }
    if src.dim() == 0 && src.device().device_type() == DeviceType::Cpu {
        let dt = src.dtype();
        let as_dtype = if dt == ScalarType::Bool {
            ScalarType::Bool
        } else if dt.is_integral(false) {
            ScalarType::Long
        } else if dt.is_complex() && dst.dtype().is_complex() {
            // Both parts (a real destination takes the real part, as
            // PyTorch's copy does).
            ScalarType::ComplexDouble
        } else {
            ScalarType::Double
        };
        return dst.fill_(as_scalar(src, as_dtype)?);
    }
    let first_non1 = src
        .sizes()
        .iter()
        .position(|&s| s != 1)
        .unwrap_or(src.dim());
    let src_view = views::view(src, &src.sizes()[first_non1..])?;
    let expanded = if src_view.sizes() == dst.sizes() {
        src_view
    } else {
        views::expand(&src_view, dst.sizes())?
    };
    copy_api::copy_(&dst, &expanded)
}

/// Indexing as methods on [`Tensor`] (in the [`prelude`](crate::prelude));
/// index lists come from [`s!`](crate::s) or are built from
/// [`TensorIndex`] values.
///
/// ```
/// use aten_shape::{prelude::*, s};
/// use c10_core::ScalarType;
/// let img = Tensor::zeros(&[3, 4, 4], ScalarType::Float)?; // C, H, W
/// let top_left = img.i(s![.., ..2, ..2])?; // a view
/// top_left.fill_(1.0)?;
/// img.index_put_scalar(s![0, -1], 5.0)?; // last row of channel 0
/// assert_eq!(img.i(s![0, ..., 0])?.to_vec::<f32>()?, vec![1.0, 1.0, 0.0, 5.0]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait IndexOps: crate::sealed::Sealed {
    /// `self[indices]` (basic indexing, a view); see [`index`].
    ///
    /// ```
    /// use aten_shape::{prelude::*, s};
    /// use c10_core::ScalarType;
    /// let x = Tensor::arange(0, 12, 1, ScalarType::Long)?.view(&[3, 4])?;
    /// assert_eq!(x.i(s![1..;1, ..;2])?.to_vec::<i64>()?, vec![4, 6, 8, 10]);
    /// assert_eq!(x.i(s![5]).unwrap_err().to_string(), "index 5 is out of bounds for dimension 0 with size 3");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    fn i(&self, indices: impl AsRef<[TensorIndex]>) -> Result<Tensor>;

    /// `self[indices] = value` for a number; see [`index_put_scalar`].
    ///
    /// ```
    /// use aten_shape::{prelude::*, s};
    /// use c10_core::ScalarType;
    /// let x = Tensor::arange(0, 4, 1, ScalarType::Long)?;
    /// x.index_put_scalar(s![..;2], -1)?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![-1, 1, -1, 3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    fn index_put_scalar(
        &self,
        indices: impl AsRef<[TensorIndex]>,
        value: impl Into<Scalar>,
    ) -> Result<()>;

    /// `self[indices] = src` for a tensor (broadcast to the view); see
    /// [`index_put_tensor`].
    ///
    /// ```
    /// use aten_shape::{prelude::*, s};
    /// use c10_core::ScalarType;
    /// let x = Tensor::zeros(&[2, 2], c10_core::TensorOptions::new().dtype(ScalarType::Long))?;
    /// x.index_put_tensor(s![.., 1], &Tensor::from_vec(vec![5i64, 6], &[2])?)?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![0, 5, 0, 6]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    fn index_put_tensor(&self, indices: impl AsRef<[TensorIndex]>, src: &Tensor) -> Result<()>;
}

impl IndexOps for Tensor {
    fn i(&self, indices: impl AsRef<[TensorIndex]>) -> Result<Tensor> {
        index(self, indices.as_ref())
    }
    fn index_put_scalar(
        &self,
        indices: impl AsRef<[TensorIndex]>,
        value: impl Into<Scalar>,
    ) -> Result<()> {
        index_put_scalar(self, indices.as_ref(), value)
    }
    fn index_put_tensor(&self, indices: impl AsRef<[TensorIndex]>, src: &Tensor) -> Result<()> {
        index_put_tensor(self, indices.as_ref(), src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tensors of every kind the one-pass path sees: 0-d, row-major up to
    /// six dims (the sizes on the heap), transposed, stepped, offset, and
    /// with a size-0 dim and huge strides.
    fn inputs() -> Result<Vec<Tensor>> {
        let x = Tensor::arange(0, 120, 1, ScalarType::Long)?;
        let shaped = |sizes: &[i64]| {
            let n = sizes.iter().product::<i64>();
            views::view(&Tensor::arange(0, n, 1, ScalarType::Long)?, sizes)
        };
        let mut v = vec![
            Tensor::zeros(&[], ScalarType::Float)?,
            shaped(&[5])?,
            shaped(&[4, 6])?,
            views::transpose(&shaped(&[4, 6])?, 0, 1)?,
            views::as_strided(&x, &[3, 4], &[1, 7], Some(2))?,
            shaped(&[0, 3])?,
            views::as_strided(&x, &[0, 2], &[i64::MAX / 2, 3], Some(0))?,
        ];
        if !cfg!(miri) {
            v.push(shaped(&[2, 3, 4])?);
            v.push(shaped(&[2, 1, 3, 1, 2, 2])?);
        }
        Ok(v)
    }

    /// The entries keys are built of, the last two with steps and starts
    /// whose products wrap for most strides.
    fn entries() -> Vec<TensorIndex> {
        let mut e = vec![
            TensorIndex::Int(0),
            TensorIndex::Int(-1),
            TensorIndex::slice(None, None, 1),
            TensorIndex::slice(Some(1), None, 1),
            TensorIndex::slice(None, Some(-1), 2),
            TensorIndex::None,
            TensorIndex::Ellipsis,
            TensorIndex::slice(None, None, 0),
        ];
        // Under Miri (about 70 s with these too) the eight above only.
        if !cfg!(miri) {
            e.push(TensorIndex::Int(2));
            e.push(TensorIndex::Int(5));
            e.push(TensorIndex::slice(Some(5), Some(2), 1));
            e.push(TensorIndex::slice(Some(-100), Some(100), 3));
            e.push(TensorIndex::slice(Some(1), None, i64::MAX));
            e.push(TensorIndex::slice(Some(i64::MIN), Some(i64::MAX), 1));
        }
        e
    }

    /// Keys with several ellipses select past the last dim; PyTorch 2.15
    /// reads on into its sizes-then-strides storage (observed messages).
    #[test]
    fn several_ellipses_read_past_the_sizes() -> Result<()> {
        let e = TensorIndex::Ellipsis;
        let x = Tensor::zeros(&[3, 4, 5], ScalarType::Float)?;
        assert_eq!(
            index(&x, &[e.clone(), e.clone(), TensorIndex::Int(0)])
                .unwrap_err()
                .to_string(),
            "index 0 is out of bounds for dimension 2 with size 0"
        );
        // dim 6 of a 4-d tensor is the second stride slot: 6 for these
        // strides (12, 6, 2, 1), so -2 is in bounds and the select's dim
        // check fails.
        let y = Tensor::zeros(&[0, 2, 3, 2], ScalarType::Float)?;
        let key = [e.clone(), e.clone(), TensorIndex::Int(-2), e.clone()];
        let err = index(&y, &key).unwrap_err().to_string();
        assert!(
            err.contains("Dimension out of range (expected to be in range of [-4, 3], but got 6)"),
            "{err}"
        );
        assert_eq!(size_at(&y, 5), 12);
        assert_eq!(size_at(&y, 4), 0);
        assert_eq!(size_at(&y, 9), 0);
        assert_eq!(size_at(&y, -1), 0);
        // Six dims live on the heap: the strides follow the six sizes.
        let z = Tensor::zeros(&[1, 2, 1, 2, 1, 3], ScalarType::Float)?;
        assert_eq!(
            (size_at(&z, 6), size_at(&z, 11), size_at(&z, 12)),
            (12, 1, 0)
        );
        Ok(())
    }

    /// Every key of up to three entries (two under Miri): where the one-pass
    /// path answers, the walk gives the same view; where the walk succeeds
    /// on a key of plain entries, the one-pass path answers.
    #[test]
    fn basic_keys_match_the_walk() -> Result<()> {
        let entries = entries();
        let mut keys: Vec<Vec<TensorIndex>> = vec![vec![]];
        let longest = if cfg!(miri) { 2 } else { 3 };
        let mut last = keys.clone();
        for _ in 0..longest {
            last = last
                .iter()
                .flat_map(|k| {
                    entries.iter().map(move |e| {
                        let mut k = k.clone();
                        k.push(e.clone());
                        k
                    })
                })
                .collect();
            keys.extend(last.iter().cloned());
        }
        let (mut answered, mut walked) = (0usize, 0usize);
        for t in inputs()? {
            for key in &keys {
                let walk = walk_entries(&t, key);
                let fast = basic_view(&t, key);
                if let Ok((w, _, false)) = &walk {
                    walked += 1;
                    let ellipses = key
                        .iter()
                        .filter(|i| matches!(i, TensorIndex::Ellipsis))
                        .count();
                    let huge = key.iter().any(|i| {
                        matches!(i, TensorIndex::Slice { step, start, .. }
                            if *step == i64::MAX || *start == Some(i64::MIN))
                    });
                    if ellipses <= 1 && !huge {
                        assert!(
                            fast.is_some(),
                            "{key:?} on {:?}: the walk succeeded",
                            t.sizes()
                        );
                    }
                    if let Some(v) = fast {
                        let v = v?;
                        answered += 1;
                        assert_eq!(
                            (v.sizes(), v.strides(), v.storage_offset()),
                            (w.sizes(), w.strides(), w.storage_offset()),
                            "{key:?} on {:?} {:?}",
                            t.sizes(),
                            t.strides()
                        );
                        assert!(v.is_view() && v.is_alias_of(&t));
                        assert!(v
                            .view_base()
                            .is_some_and(|b| b.is_same(t.view_base().unwrap_or(&t))));
                        assert!(!v.is_same(&t));
                    }
                } else {
                    assert!(
                        fast.is_none(),
                        "{key:?} on {:?}: the walk failed",
                        t.sizes()
                    );
                }
            }
        }
        assert!(answered > walked / 2, "{answered} of {walked}");
        Ok(())
    }
}
